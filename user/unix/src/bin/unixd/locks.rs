//! `fcntl`'s record locks (`LOCK`: `F_GETLK`, `F_SETLK`, `F_SETLKW`), kept
//! in one table for every file (`stet_unixfs::locks`, which has the
//! rules). A lock belongs to the calling process; its locks on a file go
//! when it closes any descriptor of the file (`CLOSE` with `CLOSE_FD`) and
//! all of them when it ends (`exit`). An `F_SETLKW` that must wait parks
//! until a lock of that file changes, then asks again (`BUSY`); a signal
//! ends the wait (`EINTR`) as any other.

use crate::open::Kind;
use crate::wait::Wait;
use crate::{word, Reply, Unixd};
use stet_rt::key::Answer;
use stet_unix::proto::o;
use stet_unix::sys::errno::*;
use stet_unix::sys::fcntl::{F_GETLK, F_SETLK, F_SETLKW};
use stet_unix::sys::flock as fl;
use stet_unixfs::locks::{self, Kind as Type};

/// What the lock table calls an open file: its inode, or for a pipe or a
/// device (no inode of the tree) a number above every inode's.
fn lock_file(kind: Kind) -> Option<u32> {
    Some(match kind {
        Kind::Inode(ino) => ino,
        Kind::PipeRead(n) | Kind::PipeWrite(n) | Kind::PipeBoth(n) => 0xfff0_0000 | n as u32,
        Kind::Null => u32::MAX - 3,
        Kind::Zero => u32::MAX - 2,
        Kind::Random => u32::MAX - 1,
        Kind::Tty => u32::MAX,
        Kind::Event(n) => 0xffe0_0000 | n as u32,
        Kind::Timer(n) => 0xffd0_0000 | n as u32,
        Kind::Socket(n) => 0xffa0_0000 | (n & 0xf_ffff),
        Kind::Epoll(n) => 0xffc0_0000 | n as u32,
        Kind::Signal(n) => 0xffb0_0000 | n as u32,
        Kind::Pidfd(pid) => 0xff90_0000 | (pid & 0xffff),
        Kind::Inotify(n) => 0xff80_0000 | n as u32,
        Kind::Free => return None,
    })
}

impl Unixd<'_> {
    /// `LOCK`: `w0` the fid, `w1` the command, the string the caller's
    /// `struct flock`.
    pub(crate) fn lock_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let (pid, cmd) = (self.caller, a.w[1]);
        let f = self.fid(a.w[0])?;
        let open = self.open[f];
        // An `O_PATH` descriptor opens no file to lock (fcntl(2)).
        if open.flags & o::PATH != 0 {
            return Err(EBADF);
        }
        let file = lock_file(open.kind).ok_or(EBADF)?;
        let size = match open.kind {
            Kind::Inode(ino) => self.fs.inode(ino).map_or(0, |i| i.size),
            _ => 0,
        };
        if !matches!(cmd, F_GETLK | F_SETLK | F_SETLKW) {
            return Err(EINVAL);
        }
        let r = locks::parse(s, open.off, size)?;
        if cmd == F_GETLK {
            if r.kind == Type::Unlock {
                return Err(EINVAL);
            }
            // No conflict: the caller's struct back with `F_UNLCK`.
            let b = match self.locks.conflict(file, pid, &r) {
                Some(l) => l.flock(),
                None => {
                    let mut b = [0u8; fl::SIZE];
                    b.copy_from_slice(&s[..fl::SIZE]);
                    b[fl::L_TYPE..fl::L_TYPE + 2]
                        .copy_from_slice(&(fl::F_UNLCK as u16).to_le_bytes());
                    b
                }
            };
            out[..fl::SIZE].copy_from_slice(&b);
            return Ok(Reply::Now([0, 0, 0], fl::SIZE, false));
        }
        // A read lock needs the file open for reading, a write lock for
        // writing (`EBADF`).
        let access = open.flags & o::ACCMODE;
        let allowed = match r.kind {
            Type::Read => access == o::RDONLY || access == o::RDWR,
            Type::Write => access == o::WRONLY || access == o::RDWR,
            Type::Unlock => true,
        };
        if !allowed {
            return Err(EBADF);
        }
        match self.locks.set(file, pid, &r) {
            Ok(changed) => {
                if changed {
                    self.locks_changed(Some(file));
                }
                word(Ok(0))
            }
            Err(EAGAIN) if cmd == F_SETLKW => {
                let Some(blocker) = self.locks.conflict(file, pid, &r) else {
                    return Err(EAGAIN);
                };
                let waiters = &self.waiters;
                let waiting = |q: u32| {
                    waiters.iter().find_map(|w| match w.on {
                        Wait::Lock(f, r) if w.pid == q => Some((f, r)),
                        _ => None,
                    })
                };
                if self.locks.deadlock(pid, &blocker, waiting) {
                    return Err(EDEADLK);
                }
                self.park(Wait::Lock(file, r))
            }
            Err(e) => Err(e),
        }
    }

    /// Locks of `file` (`None`: of any file) were given back or shrunk:
    /// every `F_SETLKW` parked on one asks again.
    fn locks_changed(&mut self, file: Option<u32>) {
        for w in 0..self.waiters.len() {
            if let Wait::Lock(f, _) = self.waiters[w].on {
                if file.is_none_or(|x| x == f) {
                    self.wake(w);
                }
            }
        }
    }

    /// The caller closed a descriptor of fid `fid`: its locks on the file
    /// go, whichever descriptor took them (POSIX).
    pub(crate) fn fd_closed(&mut self, fid: u64) {
        let Ok(f) = self.fid(fid) else {
            return;
        };
        if let Some(file) = lock_file(self.open[f].kind) {
            if self.caller != 0 && self.locks.release(self.caller, Some(file)) {
                self.locks_changed(Some(file));
            }
        }
    }

    /// Process `pid` ended: all its locks go.
    pub(crate) fn locks_exit(&mut self, pid: u32) {
        if self.locks.release(pid, None) {
            self.locks_changed(None);
        }
    }
}
