//! Memory the file system serves: the pages of files mapped into
//! processes (`MAP_PAGE`), shared anonymous memory as files with no name
//! (`MEMFD`), and futexes (`FUTEX_WAIT`, `FUTEX_WAKE`, `FUTEX_REQUEUE`).
//!
//! A mapped file's pages are the file's own page keys, so a `MAP_SHARED`
//! mapping, `read` and `write` all see the same bytes, and a mapping
//! stays shared across `fork` by the child's keeper installing the same
//! keys. A shared futex is named by (inode, offset), so processes that
//! map the file at different addresses still meet; its word is compared
//! here, where the wait is queued, so no wake-up can slip between the
//! compare and the wait (Linux's hash-bucket lock does the same).

use crate::wait::Wait;
use crate::{word, Reply, Unixd};
use stet_rt::key::Answer;
use stet_unix::fs::mode;
use stet_unix::proto as p;
use stet_unix::sys::errno::*;
use stet_unix::sys::errno::{EAGAIN, ENODEV, ENXIO};
const PAGE: u64 = 4096;

/// The fid that names a private futex (the caller's address space).
const PRIVATE: u64 = u64::MAX;

impl Unixd<'_> {
    /// The regular file fid `fid` holds.
    fn regular(&self, fid: u64) -> Result<u32, i64> {
        let f = self.fid(fid)?;
        let ino = self.inode_of(f).ok_or(ENODEV)?;
        match self.fs.inode(ino) {
            Some(i) if i.mode & mode::FMT == mode::REG => Ok(ino),
            _ => Err(ENODEV),
        }
    }

    /// `MAP_PAGE`: page `p` of the file → its key in `T`.
    pub(crate) fn map_page(&mut self, fid: u64, p: u64) -> Result<Reply, i64> {
        let ino = self.regular(fid)?;
        let size = self.fs.inode(ino).map_or(0, |i| i.size);
        if p >= size.div_ceil(PAGE) {
            return Err(ENXIO);
        }
        self.content.make_page(ino, p)?;
        Ok(Reply::Now([0, 0, 0], 0, true))
    }

    /// (processes, pages in all, pages free): the space bank's, whose
    /// pages every process, file and domain takes from.
    pub(crate) fn sysinfo(&self) -> (u64, u64, u64) {
        let procs = self
            .procs
            .iter()
            .filter(|p| p.pid != 0 && !p.zombie)
            .count() as u64;
        let [total, _, used, _] = stet_rt::bank::capacity(crate::slots::BANK).unwrap_or([0; 4]);
        (procs, total.max(used), total.max(used) - used)
    }

    /// `MEMFD`: a nameless file of `len` bytes → a fid open read-write.
    pub(crate) fn memfd(&mut self, len: u64) -> Result<u64, i64> {
        let now = self.time();
        let ino = self.fs.create_unnamed(len, now)?;
        match self.new_fid(crate::Kind::Inode(ino), stet_unix::proto::o::RDWR) {
            Ok(fid) => Ok(fid),
            Err(e) => {
                self.fs.free(ino);
                Err(e)
            }
        }
    }

    /// The wait key of a futex: (inode, offset), or (`u32::MAX`, address)
    /// for a private one (matched with the caller's pid).
    fn futex_key(&self, fid: u64, off: u64) -> Result<(u32, u64), i64> {
        if fid == PRIVATE {
            Ok((u32::MAX, off))
        } else {
            Ok((self.regular(fid)?, off))
        }
    }

    /// `FUTEX_WAIT`.
    pub(crate) fn futex_wait(
        &mut self,
        fid: u64,
        off: u64,
        val: u64,
        deadline: u64,
    ) -> Result<Reply, i64> {
        let (ino, off) = self.futex_key(fid, off)?;
        // A thread of a threaded process runs its call again once woken
        // (`park_notify`): that run ends here, not compared again (the
        // word may still hold the value: a wake needs no change).
        if self.notify != 0 {
            if let Some(i) = self.procs.iter().position(|p| p.pid == self.caller) {
                let bit = 1u64 << (self.notify.wrapping_sub(1) as u64 & 63);
                if self.procs[i].futex_woken & bit != 0 {
                    self.procs[i].futex_woken &= !bit;
                    return Ok(Reply::Now([0, 0, 0], 0, false));
                }
            }
        }
        if ino != u32::MAX {
            let size = self.fs.inode(ino).map_or(0, |i| i.size);
            if off.checked_add(4).is_none_or(|e| e > size) {
                return Err(ENXIO);
            }
            let mut w = [0u8; 4];
            self.content.read(ino, off, &mut w)?;
            if u32::from_le_bytes(w) as u64 != val & 0xffff_ffff {
                return Err(EAGAIN);
            }
        }
        if deadline <= crate::now_ns() {
            return Err(stet_unix::sys::errno::ETIMEDOUT);
        }
        let parked = self.park(Wait::Futex(ino, off, deadline));
        if deadline != u64::MAX {
            self.kick();
        }
        parked
    }

    /// The key of a word to wake or requeue: `EFAULT` for one past the
    /// end of its file (Linux: the page cannot be had).
    fn futex_word(&self, fid: u64, off: u64) -> Result<(u32, u64), i64> {
        let (ino, off) = self.futex_key(fid, off)?;
        if ino != u32::MAX {
            let size = self.fs.inode(ino).map_or(0, |i| i.size);
            if off.checked_add(4).is_none_or(|e| e > size) {
                return Err(EFAULT);
            }
        }
        Ok((ino, off))
    }

    /// Whether waiter `w` waits on the word (`ino`, `off`).
    fn waits_on(&self, w: usize, ino: u32, off: u64) -> bool {
        matches!(self.waiters[w].on, Wait::Futex(i, o, _) if i == ino && o == off)
            && (ino != u32::MAX || self.waiters[w].pid == self.caller)
    }

    /// `FUTEX_REQUEUE`: wakes at most `nwake` waiters of the first word
    /// and moves at most `nmove` of the others to the second → how many
    /// woke and moved (Linux's `futex_requeue`).
    pub(crate) fn futex_requeue(
        &mut self,
        from: (u64, u64),
        to: (u64, u64),
        nwake: u64,
        nmove: u64,
    ) -> Result<u64, i64> {
        let (ino, off) = self.futex_word(from.0, from.1)?;
        let (ino2, off2) = self.futex_word(to.0, to.1)?;
        let (mut woke, mut moved) = (0, 0);
        for w in 0..self.waiters.len() {
            if woke >= nwake && moved >= nmove {
                break;
            }
            if !self.waits_on(w, ino, off) {
                continue;
            }
            if woke < nwake {
                self.answer(w, 0);
                woke += 1;
            } else if let Wait::Futex(_, _, deadline) = self.waiters[w].on {
                self.waiters[w].on = Wait::Futex(ino2, off2, deadline);
                moved += 1;
            }
        }
        Ok(woke + moved)
    }

    /// `FUTEX_WAKE` → how many woke.
    pub(crate) fn futex_wake(&mut self, fid: u64, off: u64, n: u64) -> Result<u64, i64> {
        let (ino, off) = self.futex_word(fid, off)?;
        let mut woke = 0;
        for w in 0..self.waiters.len() {
            if woke >= n {
                break;
            }
            let hit = matches!(self.waiters[w].on, Wait::Futex(i, o, _) if i == ino && o == off)
                && (ino != u32::MAX || self.waiters[w].pid == self.caller);
            if hit {
                let (pid, thread) = (self.waiters[w].pid, self.waiters[w].thread);
                if self.waiters[w].slot == crate::wait::NOTIFY {
                    if let Some(i) = self.procs.iter().position(|p| p.pid == pid && pid != 0) {
                        self.procs[i].futex_woken |= 1 << (thread.wrapping_sub(1) as u64 & 63);
                    }
                }
                self.answer(w, 0);
                woke += 1;
            }
        }
        Ok(woke)
    }

    /// The orders on memory: file pages, `memfd`, pages shared after fork, futexes.
    pub(crate) fn memory_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let w = a.w;
        match a.code {
            p::MAP_PAGE => self.map_page(w[0], w[1]),
            p::MEMFD => word(self.memfd(w[0])),
            p::PAGES => {
                let ino = self.regular(w[0])?;
                let n = (w[2] as usize).min(out.len());
                out[..n].fill(0);
                let first = w[1];
                let end = first.saturating_add(n as u64);
                self.content.pages_of(ino, first, end, |p| {
                    if let Some(b) = out.get_mut((p - first) as usize) {
                        *b = 1;
                    }
                });
                Ok(Reply::Now([n as u64, 0, 0], n, false))
            }
            p::SHARE | p::UNSHARE => {
                let mut n = 0;
                let mut counted = 0;
                for c in s.chunks_exact(4).take(out.len()) {
                    let page = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    let b = if a.code == p::SHARE {
                        self.shares.add(page).is_some()
                    } else if w[0] == 1 {
                        // Only a question: is the caller its only holder?
                        self.shares.holders(page) == 1
                    } else {
                        self.shares.release(page)
                    };
                    out[n] = b as u8;
                    counted += b as u64;
                    n += 1;
                }
                Ok(Reply::Now([counted, 0, 0], n, false))
            }
            p::FUTEX_WAIT => {
                let deadline = s.get(..8).map_or(u64::MAX, |d| {
                    u64::from_le_bytes(d.try_into().unwrap_or_default())
                });
                self.futex_wait(w[0], w[1], w[2], deadline)
            }
            p::FUTEX_WAKE => word(self.futex_wake(w[0], w[1], w[2])),
            p::FUTEX_REQUEUE => {
                let off2 = s.get(..8).ok_or(EINVAL)?;
                let off2 = u64::from_le_bytes(off2.try_into().map_err(|_| EINVAL)?);
                let (nwake, nmove) = (w[3] & 0xffff_ffff, w[3] >> 32);
                word(self.futex_requeue((w[0], w[1]), (w[2], off2), nwake, nmove))
            }
            _ => Err(ENOSYS),
        }
    }
}
