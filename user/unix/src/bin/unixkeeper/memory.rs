//! The memory calls: `brk`, `mmap` (anonymous or of a file, private or
//! shared), `munmap`, `mprotect`, `msync` and `futex`.
//!
//! A file mapping holds its own reference to the file's open description
//! (a `DUP` of the descriptor's fid, so closing the descriptor does not end
//! it), kept in the space's table of mapped files; its pages are the
//! file's own page keys from unixd (`MAP_PAGE`), so a `MAP_SHARED` mapping
//! is the file. Shared anonymous memory is a file with no name (`MEMFD`).
//! `fork` gives the child a reference to each mapped file and the same
//! page keys, so shared mappings stay shared.

use crate::space::Touch;
use crate::Keeper;
use stet_rt::abi::code::Code;
use stet_rt::key::Msg;
use stet_unix::elf::prot;
use stet_unix::fs;
use stet_unix::layout::PAGE;
use stet_unix::proto;
use stet_unix::sys::errno::*;
use stet_unix::sys::futex;
use stet_unix::sys::stat::{ST_MODE, ST_RDEV};
use stet_unix::sys::{map, nr};
use stet_unix::vm::{self, Backing, Vma};

type R = Result<u64, i64>;

/// `/dev/zero`'s device number (1, 5 as on Linux): mapping it is
/// anonymous memory.
const DEV_ZERO: u64 = 0x105;

impl Keeper {
    pub(crate) fn brk(&mut self, new: u64) -> u64 {
        let old_end = self.space.map.brk.next_multiple_of(PAGE);
        let r = self.space.map.set_brk(new, |_| {});
        let new_end = r.next_multiple_of(PAGE);
        if new_end < old_end {
            self.space.drop_pages(new_end, old_end);
        }
        r
    }

    /// What a file descriptor maps as: `Some(fid)` for a regular file,
    /// `None` for `/dev/zero` (anonymous memory).
    fn mappable(&mut self, fd: u64, shared: bool, p: u8) -> Result<Option<u64>, i64> {
        let fid = self.fid(fd)?;
        let mut st = [0u8; 144];
        let a = Msg::new(crate::slots::UNIXD, proto::FSTAT)
            .w0(fid)
            .call_into(&mut st);
        crate::signals::note(a.w[proto::INTR_WORD]);
        if a.code != Code::Ok || (a.w[0] as i64) < 0 {
            return Err(EBADF);
        }
        let mode = u32::from_le_bytes(st[ST_MODE..ST_MODE + 4].try_into().unwrap_or_default());
        let rdev = u64::from_le_bytes(st[ST_RDEV..ST_RDEV + 8].try_into().unwrap_or_default());
        match mode & fs::mode::FMT {
            fs::mode::REG => {}
            fs::mode::CHR if rdev == DEV_ZERO => return Ok(None),
            _ => return Err(ENODEV),
        }
        let flags = self.unixd(proto::FLAGS, [fid, 0, 0, 0])?;
        let acc = flags & proto::o::ACCMODE;
        if acc == proto::o::WRONLY || (shared && p & prot::WRITE != 0 && acc != proto::o::RDWR) {
            return Err(EACCES);
        }
        // A memfd sealed against writes maps shared only read-only
        // (F_SEAL_WRITE 8, F_SEAL_FUTURE_WRITE 0x10).
        if shared && p & prot::WRITE != 0 {
            let seals = self.unixd(proto::SEALS, [fid, 0, 0, 0]).unwrap_or(0);
            if seals & 0x18 != 0 {
                return Err(EPERM);
            }
        }
        Ok(Some(fid))
    }

    pub(crate) fn mmap(&mut self, addr: u64, len: u64, p: u64, flags: u64, fd: u64, off: u64) -> R {
        // A file mapping's descriptor is looked at first (Linux's
        // `ksys_mmap_pgoff`): a closed one is `EBADF` whatever else is wrong.
        if flags & map::ANONYMOUS == 0 {
            self.fid(fd)?;
        }
        if len == 0 || p & !7 != 0 || !off.is_multiple_of(PAGE) {
            return Err(EINVAL);
        }
        let shared = match flags & 3 {
            map::SHARED => true,
            map::PRIVATE => false,
            // `MAP_SHARED_VALIDATE`: shared, and a file mapping with a
            // flag Linux does not know is `EOPNOTSUPP` (`MAP_SHARED`
            // ignores those).
            map::SHARED_VALIDATE => {
                if flags & map::ANONYMOUS == 0 && flags & !map::KNOWN != 0 {
                    return Err(EOPNOTSUPP);
                }
                true
            }
            _ => return Err(EINVAL),
        };
        let file = if flags & map::ANONYMOUS == 0 {
            self.mappable(fd, shared, p as u8)?
        } else {
            None
        };
        let len = len.checked_next_multiple_of(PAGE).ok_or(ENOMEM)?;
        let start = if flags & (map::FIXED | map::FIXED_NOREPLACE) != 0 {
            let (a, b) = vm::range(addr, len)?;
            if a < stet_unix::layout::USER_MIN {
                return Err(EPERM);
            }
            if flags & map::FIXED_NOREPLACE != 0 {
                if self.space.map.place(a, len) != Ok(a) {
                    return Err(EEXIST);
                }
            } else {
                self.unmap(a, b)?;
            }
            a
        } else {
            self.space.map.place(addr & !(PAGE - 1), len)?
        };
        // The mapping's own reference to its file: the descriptor's
        // description, or a new nameless file for shared anonymous memory.
        let fid = match file {
            Some(fid) => {
                self.unixd(proto::DUP, [fid, 0, 0, 0])?;
                Some(fid)
            }
            None if shared => Some(self.unixd(proto::MEMFD, [len, 0, 0, 0])?),
            None => None,
        };
        let backing = match fid {
            None => Backing::Anon,
            Some(fid) => match self.space.add_file(fid as u32) {
                Some(i) => Backing::File {
                    file: i,
                    offset: if file.is_some() { off } else { 0 },
                    zero_from: u64::MAX,
                },
                None => {
                    let _ = Msg::new(crate::slots::UNIXD, proto::CLOSE).w0(fid).call();
                    return Err(ENOMEM);
                }
            },
        };
        let r = self.space.map.insert(Vma {
            start,
            end: start + len,
            prot: p as u8,
            shared,
            grows_down: flags & map::GROWSDOWN != 0,
            locked: flags & map::LOCKED != 0,
            backing,
        });
        if let Err(e) = r {
            self.space.release_files();
            return Err(e);
        }
        // `MAP_LOCKED` and `MAP_POPULATE` make the pages now (a file's past
        // its end stay missing, as Linux's).
        if flags & (map::LOCKED | map::POPULATE) != 0 {
            self.populate(start, start + len);
        }
        Ok(start)
    }

    /// Makes the pages of the mappings in `[a, b)` that may be read exist
    /// (`mlock`, `MAP_LOCKED`, `MAP_POPULATE`): what the process will find
    /// resident (`mincore`). A page that cannot be made (a file's past its
    /// end, memory short) is left to its first touch.
    pub(crate) fn populate(&mut self, a: u64, b: u64) {
        let mut at = a;
        while at < b {
            let Some(v) = self.space.map.find(at).copied() else {
                at += PAGE;
                continue;
            };
            let stop = v.end.min(b);
            if v.prot & prot::READ != 0 {
                while at < stop {
                    if self.space.touch(at, PAGE, false).is_err() {
                        break;
                    }
                    at += PAGE;
                }
            }
            at = stop;
        }
    }

    /// `remap_file_pages(start, size, prot, pgoff, flags)`: deprecated,
    /// and emulated as Linux does — the pages of a shared file mapping
    /// from `start` show the file from page `pgoff` on, as a new
    /// `MAP_SHARED | MAP_FIXED` mapping of the same file and protection
    /// there. `prot` must be 0; the range must lie in one shared file
    /// mapping (`EINVAL`).
    pub(crate) fn remap_file_pages(&mut self, start: u64, size: u64, p: u64, pgoff: u64) -> R {
        if p != 0 {
            return Err(EINVAL);
        }
        let (start, size) = (start & !(PAGE - 1), size & !(PAGE - 1));
        let end = start
            .checked_add(size)
            .filter(|&e| e > start)
            .ok_or(EINVAL)?;
        let offset = pgoff
            .checked_add(size / PAGE)
            .and_then(|_| pgoff.checked_mul(PAGE))
            .filter(|&o| o <= i64::MAX as u64)
            .ok_or(EINVAL)?;
        let v = *self.space.map.find(start).ok_or(EINVAL)?;
        let Backing::File { file, .. } = v.backing else {
            return Err(EINVAL);
        };
        if !v.shared || end > v.end {
            return Err(EINVAL);
        }
        let fid = self.space.file_fid(file).ok_or(EINVAL)? as u64;
        // A reference of its own while the old range goes (it may have
        // been the file's last mapping).
        self.unixd(proto::DUP, [fid, 0, 0, 0])?;
        if let Err(e) = self.unmap(start, end) {
            let _ = Msg::new(crate::slots::UNIXD, proto::CLOSE).w0(fid).call();
            return Err(e);
        }
        let Some(i) = self.space.add_file(fid as u32) else {
            let _ = Msg::new(crate::slots::UNIXD, proto::CLOSE).w0(fid).call();
            return Err(ENOMEM);
        };
        let r = self.space.map.insert(Vma {
            start,
            end,
            prot: v.prot,
            shared: true,
            grows_down: false,
            locked: false,
            backing: Backing::File {
                file: i,
                offset,
                zero_from: u64::MAX,
            },
        });
        if let Err(e) = r {
            self.space.release_files();
            return Err(e);
        }
        Ok(0)
    }

    pub(crate) fn unmap(&mut self, a: u64, b: u64) -> Result<(), i64> {
        self.space.map.unmap(a, b, |_| {})?;
        self.space.drop_pages(a, b);
        self.space.release_files();
        Ok(())
    }

    pub(crate) fn munmap(&mut self, addr: u64, len: u64) -> R {
        let (a, b) = vm::range(addr, len)?;
        self.unmap(a, b)?;
        Ok(0)
    }

    pub(crate) fn mprotect(&mut self, addr: u64, len: u64, p: u64) -> R {
        if p & !7 != 0 {
            return Err(EINVAL);
        }
        if !addr.is_multiple_of(PAGE) {
            return Err(EINVAL);
        }
        if len == 0 {
            return Ok(0);
        }
        let (a, b) = vm::range(addr, len)?;
        if p as u8 & prot::WRITE != 0 {
            self.may_write_shared(a, b)?;
        }
        self.space.map.protect(a, b, p as u8)?;
        if p == 0 {
            // No access: the pages that exist leave the tree.
            return self.space.park(a, b).map(|_| 0);
        }
        self.space.unpark(a, b);
        if p as u8 & prot::WRITE == 0 {
            self.space.write_protect(a, b);
        }
        Ok(0)
    }

    /// `msync`: a shared mapping is the file itself, so there is nothing
    /// to write back; only the range is checked.
    pub(crate) fn msync(&mut self, addr: u64, len: u64, flags: u64) -> R {
        use stet_unix::sys::msync::{MS_ASYNC, MS_INVALIDATE, MS_SYNC};
        if !addr.is_multiple_of(PAGE)
            || flags & !(MS_ASYNC | MS_INVALIDATE | MS_SYNC) != 0
            || flags & (MS_ASYNC | MS_SYNC) == MS_ASYNC | MS_SYNC
        {
            return Err(EINVAL);
        }
        let (a, b) = vm::range(addr, len.max(1))?;
        let mut at = a;
        while at < b {
            let v = self.space.map.find(at).ok_or(ENOMEM)?;
            at = v.end;
        }
        // Linux: pages locked in memory cannot be invalidated.
        if flags & MS_INVALIDATE != 0 && self.space.map.any_locked(a, b) {
            return Err(EBUSY);
        }
        Ok(0)
    }

    /// Which futex `uaddr` is: (fid, offset in the file) in a shared file
    /// mapping, else (`u64::MAX`, the address) — private to this process.
    /// `by_page`: the word must be readable (`EFAULT` if not), as Linux
    /// finds a shared futex through its page.
    fn futex_key(&self, uaddr: u64, by_page: bool) -> Result<(u64, u64), i64> {
        let v = self.space.map.find(uaddr).ok_or(EFAULT)?;
        if by_page && v.prot & stet_unix::elf::prot::READ == 0 {
            return Err(EFAULT);
        }
        match v.backing {
            Backing::File { file, offset, .. } if v.shared && file != 0 => {
                let fid = self.space.file_fid(file).ok_or(EFAULT)?;
                Ok((fid as u64, offset + (uaddr - v.start)))
            }
            _ => Ok((u64::MAX, uaddr)),
        }
    }

    /// `futex(uaddr, op, val, timeout, uaddr2, val3)`: `WAIT`, `WAKE` and
    /// their `_BITSET` forms (every wait matches every wake: there are no
    /// threads to tell apart). The wait parks in unixd.
    pub(crate) fn futex(
        &mut self,
        uaddr: u64,
        op: u64,
        val: u64,
        timeout: u64,
        uaddr2: u64,
        val3: u64,
    ) -> R {
        if !uaddr.is_multiple_of(4) {
            return Err(EINVAL);
        }
        let cmd = op & !(futex::PRIVATE_FLAG | futex::CLOCK_REALTIME);
        // A futex named without `FUTEX_PRIVATE_FLAG` is found through its
        // page, as Linux's `get_futex_key`: a word the process cannot
        // read is `EFAULT` even for a wake.
        let by_page = op & futex::PRIVATE_FLAG == 0;
        let (fid, off) = self.futex_key(uaddr, by_page)?;
        // A threaded process's private futexes are the keeper's own
        // (`threads`); so are the operations only threads use.
        let private = fid == u64::MAX;
        match cmd {
            futex::REQUEUE | futex::CMP_REQUEUE => {
                let (nwake, nmove) = (int_arg(val)?, int_arg(timeout)?);
                if !uaddr2.is_multiple_of(4) {
                    return Err(EINVAL);
                }
                let (fid2, off2) = self.futex_key(uaddr2, by_page)?;
                if cmd == futex::CMP_REQUEUE {
                    let mut w = [0u8; 4];
                    self.space.read(uaddr, &mut w).map_err(Touch::errno)?;
                    if u32::from_le_bytes(w) != val3 as u32 {
                        return Err(EAGAIN);
                    }
                }
                return match (private, fid2 == u64::MAX) {
                    (true, true) => Ok(self.futex_requeue(uaddr, uaddr2, nwake, nmove) as u64),
                    // Both in shared mappings: unixd's waiters.
                    (false, false) => {
                        let n = nwake as u64 | (nmove as u64) << 32;
                        let a = Msg::new(crate::slots::UNIXD, proto::FUTEX_REQUEUE)
                            .words([fid, off, fid2, n])
                            .string(&off2.to_le_bytes())
                            .call();
                        crate::calls::result(&a)
                    }
                    // A private word and a shared one never share a
                    // waiter; those to be moved are woken instead (a
                    // waiter woken early sees its word and waits again).
                    _ => self.futex_wake_at(uaddr, nwake.saturating_add(nmove)),
                };
            }
            futex::WAKE_OP => {
                let n1 = int_arg(val)?;
                let n2 = int_arg(timeout)?;
                let wop = stet_unix::futexq::WakeOp::decode(val3 as u32)?;
                if !uaddr2.is_multiple_of(4) {
                    return Err(EINVAL);
                }
                let mut w = [0u8; 4];
                self.space.read(uaddr2, &mut w).map_err(Touch::errno)?;
                let old = u32::from_le_bytes(w);
                self.space
                    .write(uaddr2, &wop.apply(old).to_le_bytes())
                    .map_err(Touch::errno)?;
                let mut woke = self.futex_wake_at(uaddr, n1)?;
                if wop.passes(old) {
                    woke += self.futex_wake_at(uaddr2, n2)?;
                }
                return Ok(woke);
            }
            futex::WAKE | futex::WAKE_BITSET if private => {
                let bits = if cmd == futex::WAKE {
                    u32::MAX
                } else {
                    val3 as u32
                };
                let n = int_arg(val)?;
                return self.futex_wake(uaddr, n, bits).map(u64::from);
            }
            _ => {}
        }
        match cmd {
            futex::WAIT | futex::WAIT_BITSET => {
                if cmd == futex::WAIT_BITSET && val3 as u32 == 0 {
                    return Err(EINVAL);
                }
                // Run again (a threaded process's waiting thread): it
                // waits on, its word not compared again.
                let waiting = self.th.retrying && self.th.futex.of(self.th.cur as u16).is_some();
                if !waiting {
                    let mut w = [0u8; 4];
                    self.space.read(uaddr, &mut w).map_err(Touch::errno)?;
                    if u32::from_le_bytes(w) != val as u32 {
                        return Err(EAGAIN);
                    }
                }
                let deadline = if timeout == 0 {
                    u64::MAX
                } else {
                    let t = self.timespec(timeout)?;
                    if cmd == futex::WAIT {
                        crate::calls::now_ns().saturating_add(t)
                    } else if op & futex::CLOCK_REALTIME != 0 {
                        t.saturating_sub(crate::calls::boot_wall_ns())
                    } else {
                        t
                    }
                };
                let deadline = self.keep_deadline(deadline);
                if private && self.threaded() {
                    let bits = if cmd == futex::WAIT {
                        u32::MAX
                    } else {
                        val3 as u32
                    };
                    return self.futex_wait_private(uaddr, bits, deadline);
                }
                let d = deadline.to_le_bytes();
                loop {
                    if self.interrupted() {
                        return Err(EINTR);
                    }
                    let intr = self.interrupting();
                    let m = Msg::new(crate::slots::UNIXD, self.tagged(proto::FUTEX_WAIT)).words([
                        fid,
                        off,
                        val as u32 as u64,
                        intr,
                    ]);
                    let m = if deadline == u64::MAX {
                        m
                    } else {
                        m.string(&d)
                    };
                    let a = m.call();
                    if a.code == Code::Busy {
                        continue;
                    }
                    return crate::calls::result(&a).map(|_| 0);
                }
            }
            futex::WAKE | futex::WAKE_BITSET => {
                let a = Msg::new(crate::slots::UNIXD, self.tagged(proto::FUTEX_WAKE))
                    .words([fid, off, val as u32 as u64, 0])
                    .call();
                self.carried_ready(&a);
                crate::calls::result(&a)
            }
            _ => {
                self.count_enosys(nr::FUTEX);
                Err(ENOSYS)
            }
        }
    }

    /// A shared mapping of the space's mapped file `file` from `off`
    /// (`mremap` moving one) → its address.
    pub(crate) fn mmap_file_index(
        &mut self,
        addr: u64,
        len: u64,
        p: u64,
        flags: u64,
        file: u16,
        off: u64,
    ) -> R {
        let fid = self.space.file_fid(file).ok_or(EFAULT)? as u64;
        let start = if flags & map::FIXED != 0 {
            addr
        } else {
            self.space.map.place(0, len)?
        };
        self.unixd(proto::DUP, [fid, 0, 0, 0])?;
        let i = self.space.add_file(fid as u32).ok_or(ENOMEM)?;
        self.space.map.insert(Vma {
            start,
            end: start + len,
            prot: p as u8,
            shared: true,
            grows_down: false,
            locked: false,
            backing: Backing::File {
                file: i,
                offset: off,
                zero_from: u64::MAX,
            },
        })?;
        Ok(start)
    }

    /// `futex_waitv(waiters, n, flags, timeout, clockid)`: waits until one
    /// of `n` futexes (`struct futex_waitv`: value, address, flags) is
    /// woken → its index. Linux's checks and order; every word is
    /// compared first (`EAGAIN`). One futex waits as `FUTEX_WAIT_BITSET`
    /// does (private or shared, threads or not); several private ones of
    /// a single-threaded process can be woken by no one, so that is a
    /// wait for the time or a signal. Several in other cases would need
    /// one wait on many words, which neither the keeper's queue nor
    /// unixd's has (`ENOSYS`, counted).
    pub(crate) fn futex_waitv(
        &mut self,
        waiters: u64,
        n: u64,
        flags: u64,
        timeout: u64,
        clock: u64,
    ) -> R {
        const FUTEX_32: u32 = 2;
        const MAX: u64 = 128;
        if flags as u32 != 0 || waiters == 0 || n as u32 == 0 || n as u32 as u64 > MAX {
            return Err(EINVAL);
        }
        let n = n as u32 as usize;
        let realtime = match clock as u32 as u64 {
            stet_unix::sys::clock::REALTIME => true,
            stet_unix::sys::clock::MONOTONIC => false,
            _ if timeout == 0 => false,
            _ => return Err(EINVAL),
        };
        let deadline = if timeout == 0 {
            u64::MAX
        } else {
            let t = self.timespec(timeout)?;
            if realtime {
                t.saturating_sub(crate::calls::boot_wall_ns())
            } else {
                t
            }
        };
        let mut v = [(0u64, 0u64, 0u32); MAX as usize];
        for (i, e) in v.iter_mut().enumerate().take(n) {
            let mut b = [0u8; 24];
            let at = waiters.checked_add(24 * i as u64).ok_or(EFAULT)?;
            self.space.read(at, &mut b).map_err(Touch::errno)?;
            let word = |r: core::ops::Range<usize>| {
                u64::from_le_bytes(b[r].try_into().unwrap_or_default())
            };
            let f = word(16..24);
            let (fl, reserved) = (f as u32, (f >> 32) as u32);
            if fl & !(FUTEX_32 | futex::PRIVATE_FLAG as u32) != 0
                || reserved != 0
                || fl & FUTEX_32 == 0
            {
                return Err(EINVAL);
            }
            *e = (word(0..8), word(8..16), fl);
        }
        let mut all_private = true;
        for &(_, addr, fl) in &v[..n] {
            if !addr.is_multiple_of(4) {
                return Err(EINVAL);
            }
            let by_page = fl & futex::PRIVATE_FLAG as u32 == 0;
            let (fid, _) = self.futex_key(addr, by_page)?;
            all_private &= fid == u64::MAX;
        }
        let retry = self.th.retrying;
        if !retry {
            for &(val, addr, _) in &v[..n] {
                let mut w = [0u8; 4];
                self.space.read(addr, &mut w).map_err(Touch::errno)?;
                if u32::from_le_bytes(w) != val as u32 {
                    return Err(EAGAIN);
                }
            }
        }
        if n == 1 {
            let (val, addr, fl) = v[0];
            let op = futex::WAIT_BITSET
                | (fl & futex::PRIVATE_FLAG as u32) as u64
                | if realtime { futex::CLOCK_REALTIME } else { 0 };
            return self
                .futex(addr, op, val as u32 as u64, timeout, 0, u32::MAX as u64)
                .map(|_| 0);
        }
        if all_private && !self.threaded() {
            return match self.wait_until(deadline) {
                Ok(_) => Err(ETIMEDOUT),
                Err(e) => Err(e),
            };
        }
        self.count_enosys(nr::FUTEX_WAITV);
        Err(ENOSYS)
    }

    /// Wakes up to `n` waiters of the futex at `addr`, private or shared.
    fn futex_wake_at(&mut self, addr: u64, n: u32) -> Result<u64, i64> {
        let (fid, off) = self.futex_key(addr, false)?;
        if fid == u64::MAX {
            Ok(self.futex_wake(addr, n, u32::MAX)? as u64)
        } else {
            self.unixd(proto::FUTEX_WAKE, [fid, off, n as u64, 0])
        }
    }

    /// A `struct timespec` at `a` → ns.
    pub(crate) fn timespec(&mut self, a: u64) -> Result<u64, i64> {
        let mut b = [0u8; 16];
        self.space.read(a, &mut b).map_err(Touch::errno)?;
        let s = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
        let ns = u64::from_le_bytes(b[8..].try_into().unwrap_or_default());
        if ns >= 1_000_000_000 || s > i64::MAX as u64 {
            return Err(EINVAL);
        }
        Ok(s.saturating_mul(1_000_000_000).saturating_add(ns))
    }
}

/// A futex count argument: a C `int`, negative is `EINVAL`.
fn int_arg(v: u64) -> Result<u32, i64> {
    let i = v as u32 as i32;
    if i < 0 {
        Err(EINVAL)
    } else {
        Ok(i as u32)
    }
}
