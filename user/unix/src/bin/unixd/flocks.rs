//! Locks of open file descriptions (`fcntl`'s `F_OFD_*`, `flock`; and, until
//! POSIX record locks have their own, those too): the rules are
//! `stet_unixfs::flocks`'; here they meet open files, the
//! caller, and parked waits (`F_SETLKW` and a blocking `flock` wait for
//! any change of the file's locks, then ask again).

use crate::open::Kind;
use crate::wait::Wait;
use crate::{Reply, Unixd};
use stet_rt::key::Answer;
use stet_unix::proto::{flock as op, o};
use stet_unix::sys::errno::*;
use stet_unixfs::flocks::{Lock, Owner};

impl Unixd<'_> {
    /// `FLOCK`.
    pub(crate) fn flock_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let w = a.w;
        let f = self.fid(w[0])?;
        let Kind::Inode(ino) = self.open[f].kind else {
            return Err(EINVAL);
        };
        let (flags, off) = (self.open[f].flags, self.open[f].off);
        let ty = w[2] & 0xff;
        let whence = (w[2] >> 8) & 0xff;
        let (write, unlock) = match ty {
            0 => (false, false),
            1 => (true, false),
            2 => (false, true),
            _ => return Err(EINVAL),
        };
        let cmd = w[1];
        if cmd == op::FLOCK {
            let want = Lock {
                ino,
                owner: Owner::Flock(f as u32),
                start: 0,
                end: u64::MAX,
                write,
            };
            return self.lock_set(want, unlock, w[2] & op::NONBLOCK == 0);
        }
        let get = |k: usize| {
            s.get(k * 8..k * 8 + 8)
                .map_or(0, |b| i64::from_le_bytes(b.try_into().unwrap_or_default()))
        };
        let (start, len) = (get(0), get(1));
        let size = self.fs.inode(ino).map_or(0, |i| i.size) as i64;
        let base = match whence {
            0 => 0,
            1 => off as i64,
            2 => size,
            _ => return Err(EINVAL),
        };
        let from = base.checked_add(start).ok_or(EOVERFLOW)?;
        let (lo, hi) = match len {
            0 => (from, i64::MAX),
            l if l > 0 => (from, from.checked_add(l).ok_or(EOVERFLOW)?),
            l => (from.checked_add(l).ok_or(EINVAL)?, from),
        };
        if lo < 0 {
            return Err(EINVAL);
        }
        let end = if hi == i64::MAX { u64::MAX } else { hi as u64 };
        let ofd = matches!(cmd, op::OFD_GETLK | op::OFD_SETLK | op::OFD_SETLKW);
        let owner = if ofd {
            Owner::Description(f as u32)
        } else {
            Owner::Process(a.label)
        };
        let want = Lock {
            ino,
            owner,
            start: lo as u64,
            end,
            write,
        };
        match cmd {
            op::GETLK | op::OFD_GETLK => {
                if unlock {
                    return Err(EINVAL);
                }
                let c = self.flocks.conflict(&want);
                let mut put =
                    |k: usize, v: i64| out[k * 8..k * 8 + 8].copy_from_slice(&v.to_le_bytes());
                match c {
                    None => {
                        put(0, 2);
                        put(1, lo);
                        put(2, len);
                        put(3, 0);
                    }
                    Some(l) => {
                        put(0, l.write as i64);
                        put(1, l.start as i64);
                        put(
                            2,
                            if l.end == u64::MAX {
                                0
                            } else {
                                (l.end - l.start) as i64
                            },
                        );
                        put(
                            3,
                            match l.owner {
                                Owner::Process(p) => p as i64,
                                _ => -1,
                            },
                        );
                    }
                }
                Ok(Reply::Now([0, 0, 0], 32, false))
            }
            op::SETLK | op::SETLKW | op::OFD_SETLK | op::OFD_SETLKW => {
                let acc = flags & o::ACCMODE;
                if !unlock && ((write && acc == o::RDONLY) || (!write && acc == o::WRONLY)) {
                    return Err(EBADF);
                }
                self.lock_set(want, unlock, matches!(cmd, op::SETLKW | op::OFD_SETLKW))
            }
            _ => Err(EINVAL),
        }
    }

    /// Sets or removes `want`; a conflict waits (`wait`) or is `EAGAIN`.
    fn lock_set(&mut self, want: Lock, unlock: bool, wait: bool) -> Result<Reply, i64> {
        match self.flocks.set(want, unlock) {
            Ok(()) => {
                self.flocks_changed(want.ino);
                Ok(Reply::Now([0, 0, 0], 0, false))
            }
            Err(None) if wait => self.park(Wait::Flock(want.ino)),
            Err(None) => Err(EAGAIN),
            Err(Some(e)) => Err(e),
        }
    }

    /// The locks of `ino` changed: waiters ask again.
    pub(crate) fn flocks_changed(&mut self, ino: u32) {
        for i in 0..self.waiters.len() {
            if self.waiters[i].on == Wait::Flock(ino) {
                self.wake(i);
            }
        }
    }

    /// A descriptor of inode `ino` (fid `f`) is closed by the caller: its
    /// POSIX locks on the file go (Linux: any close does that), and with
    /// the description's last reference its OFD locks and `flock`.
    pub(crate) fn flocks_on_close(&mut self, f: u32, ino: u32, last: bool) {
        let mut any = false;
        if self.caller != 0 {
            any |= self.flocks.release(Owner::Process(self.caller), Some(ino));
        }
        if last {
            any |= self.flocks.release(Owner::Description(f), Some(ino));
            any |= self.flocks.release(Owner::Flock(f), Some(ino));
        }
        if any {
            self.flocks_changed(ino);
        }
    }
}
