//! POSIX record locks (`fcntl`'s `F_SETLK`, `F_SETLKW`, `F_GETLK`): byte
//! ranges of a file held for reading (shared) or for writing (exclusive)
//! by a process, with fcntl(2)'s rules as Linux applies them:
//!
//! * A range is `l_start` from the start, the current offset or the end
//!   (`l_whence`), `l_len` bytes long; 0 is "to the end of the file,
//!   however far it grows" (here: to [`OFFSET_MAX`]), a negative length
//!   the bytes before the start. A start before 0 is `EINVAL`; one past
//!   [`OFFSET_MAX`] `EOVERFLOW`.
//! * Two locks conflict when they are of different processes, their
//!   ranges overlap and one of them is a write lock. A process's own
//!   locks never conflict with each other: a new lock replaces its
//!   locks in the range (splitting one that sticks out on both sides),
//!   and joins those of the same type it overlaps or touches.
//! * Unlocking a range removes it from the caller's locks; a process's
//!   locks on a file all go when it closes any descriptor of the file,
//!   and all of them when it ends ([`Locks::release`]). `fork` does not
//!   pass them on; `execve` keeps them (they belong to the pid).
//! * A request that would wait for a process that itself waits, directly
//!   or through others, for a lock of the caller's is a deadlock
//!   ([`Locks::deadlock`]: `EDEADLK`), followed at most
//!   [`MAX_DEADLOCK_STEPS`] steps as Linux does.
//!
//! The locks of every file are one list, grown from the heap
//! (`try_reserve`: no room is `ENOLCK`, never a panic).

use alloc::vec::Vec;
use stet_unix::sys::errno::*;
use stet_unix::sys::flock as fl;

#[cfg(test)]
mod tests;

/// The largest offset (Linux's `OFFSET_MAX`): where a lock "to the end of
/// the file" ends.
pub const OFFSET_MAX: u64 = i64::MAX as u64;

/// How many waits a deadlock check follows (Linux's
/// `MAX_DEADLK_ITERATIONS`).
pub const MAX_DEADLOCK_STEPS: usize = 10;

/// What a request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A read (shared) lock: `F_RDLCK`.
    Read,
    /// A write (exclusive) lock: `F_WRLCK`.
    Write,
    /// No lock: `F_UNLCK`.
    Unlock,
}

/// A request, from a `struct flock`: what, and the bytes `start..=end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The lock type.
    pub kind: Kind,
    /// The first byte.
    pub start: u64,
    /// The last byte ([`OFFSET_MAX`]: to the end, however far).
    pub end: u64,
}

/// A lock held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lock {
    /// The file (unixd's name for it: an inode number, or a pipe's or a
    /// device's).
    pub file: u32,
    /// The process holding it.
    pub pid: u32,
    /// The first byte.
    pub start: u64,
    /// The last byte ([`OFFSET_MAX`]: to the end, however far).
    pub end: u64,
    /// A write lock (else a read lock).
    pub write: bool,
}

impl Lock {
    /// Whether it and `o` are of different processes on the same file,
    /// overlap, and one of them writes.
    pub fn conflicts(&self, o: &Lock) -> bool {
        self.file == o.file
            && self.pid != o.pid
            && (self.write || o.write)
            && self.start <= o.end
            && o.start <= self.end
    }

    /// The lock as a `struct flock` (`l_whence` `SEEK_SET`), as `F_GETLK`
    /// reports a conflicting one.
    pub fn flock(&self) -> [u8; fl::SIZE] {
        let mut b = [0u8; fl::SIZE];
        let t = if self.write { fl::F_WRLCK } else { fl::F_RDLCK };
        b[fl::L_TYPE..fl::L_TYPE + 2].copy_from_slice(&(t as u16).to_le_bytes());
        b[fl::L_START..fl::L_START + 8].copy_from_slice(&self.start.to_le_bytes());
        let len = if self.end == OFFSET_MAX {
            0
        } else {
            self.end - self.start + 1
        };
        b[fl::L_LEN..fl::L_LEN + 8].copy_from_slice(&len.to_le_bytes());
        b[fl::L_PID..fl::L_PID + 4].copy_from_slice(&self.pid.to_le_bytes());
        b
    }
}

fn field(b: &[u8], off: usize, len: usize) -> i64 {
    let mut w = [0u8; 8];
    w[..len].copy_from_slice(&b[off..off + len]);
    match len {
        2 => i16::from_le_bytes([w[0], w[1]]) as i64,
        _ => i64::from_le_bytes(w),
    }
}

/// Reads a `struct flock` (`b`, at least [`fl::SIZE`] bytes: else
/// `EINVAL`), its range relative to `offset` (`SEEK_CUR`) or `size`
/// (`SEEK_END`) → the request, or Linux's errno: `EINVAL` for a bad type
/// or whence, or a range starting before 0; `EOVERFLOW` for one past
/// [`OFFSET_MAX`].
pub fn parse(b: &[u8], offset: u64, size: u64) -> Result<Request, i64> {
    if b.len() < fl::SIZE {
        return Err(EINVAL);
    }
    let kind = match field(b, fl::L_TYPE, 2) {
        t if t == fl::F_RDLCK as i64 => Kind::Read,
        t if t == fl::F_WRLCK as i64 => Kind::Write,
        t if t == fl::F_UNLCK as i64 => Kind::Unlock,
        _ => return Err(EINVAL),
    };
    let base = match field(b, fl::L_WHENCE, 2) {
        0 => 0,
        1 => offset,
        2 => size,
        _ => return Err(EINVAL),
    }
    .min(OFFSET_MAX) as i64;
    let (l_start, l_len) = (field(b, fl::L_START, 8), field(b, fl::L_LEN, 8));
    // base is 0..=OFFSET_MAX, so neither sum below can wrap.
    if l_start > i64::MAX - base {
        return Err(EOVERFLOW);
    }
    let start = base + l_start;
    if start < 0 {
        return Err(EINVAL);
    }
    let (start, end) = match l_len {
        0 => (start, i64::MAX),
        n if n > 0 => {
            if n - 1 > i64::MAX - start {
                return Err(EOVERFLOW);
            }
            (start, start + (n - 1))
        }
        n => {
            // The `-n` bytes before `start`.
            if start + n < 0 {
                return Err(EINVAL);
            }
            (start + n, start - 1)
        }
    };
    Ok(Request {
        kind,
        start: start as u64,
        end: end as u64,
    })
}

/// Every lock held, of every file.
#[derive(Clone, Debug, Default)]
pub struct Locks {
    held: Vec<Lock>,
}

impl Locks {
    /// No locks.
    pub const fn new() -> Locks {
        Locks { held: Vec::new() }
    }

    /// The locks held, in the order they were taken.
    pub fn held(&self) -> &[Lock] {
        &self.held
    }

    /// The first lock that keeps `pid` from taking `r` on `file` (`F_GETLK`;
    /// an unlock conflicts with nothing): as Linux, whose list of a file's
    /// locks keeps each holder's together in the order of their starts,
    /// the lowest-starting conflicting lock of the first holder that has
    /// one.
    pub fn conflict(&self, file: u32, pid: u32, r: &Request) -> Option<Lock> {
        let want = Lock {
            file,
            pid,
            start: r.start,
            end: r.end,
            write: match r.kind {
                Kind::Read => false,
                Kind::Write => true,
                Kind::Unlock => return None,
            },
        };
        let first = self.held.iter().find(|l| l.conflicts(&want))?;
        self.held
            .iter()
            .filter(|l| l.pid == first.pid && l.conflicts(&want))
            .min_by_key(|l| l.start)
            .copied()
    }

    /// `F_SETLK`: takes (or, `Unlock`, gives back) range `r` of `file` for
    /// `pid` → whether any lock changed; `EAGAIN` when another process's
    /// lock conflicts (nothing changes), `ENOLCK` when the table cannot
    /// grow.
    pub fn set(&mut self, file: u32, pid: u32, r: &Request) -> Result<bool, i64> {
        if self.conflict(file, pid, r).is_some() {
            return Err(EAGAIN);
        }
        let write = r.kind == Kind::Write;
        let lock = r.kind != Kind::Unlock;
        // At most two entries more: the new lock and the far piece of one
        // that sticks out on both sides (own locks never overlap).
        self.held.try_reserve(2).map_err(|_| ENOLCK)?;
        let (mut start, mut end) = (r.start, r.end);
        let mut changed = false;
        let mut far = None;
        let mut i = 0;
        while i < self.held.len() {
            let l = self.held[i];
            if l.file != file || l.pid != pid {
                i += 1;
                continue;
            }
            let touches = l.start <= r.end.saturating_add(1) && r.start <= l.end.saturating_add(1);
            if lock && l.write == write && touches {
                // The same type, overlapping or adjacent: joined.
                start = start.min(l.start);
                end = end.max(l.end);
                self.held.remove(i);
                changed = true;
                continue;
            }
            if l.start > r.end || r.start > l.end {
                i += 1;
                continue;
            }
            // Overlapping: the range is cut out of it.
            changed = true;
            match (l.start < r.start, l.end > r.end) {
                (false, false) => {
                    self.held.remove(i);
                    continue;
                }
                (true, false) => self.held[i].end = r.start - 1,
                (false, true) => self.held[i].start = r.end + 1,
                (true, true) => {
                    self.held[i].end = r.start - 1;
                    far = Some(Lock {
                        start: r.end + 1,
                        ..l
                    });
                }
            }
            i += 1;
        }
        if let Some(f) = far {
            self.held.push(f);
        }
        if lock {
            self.held.push(Lock {
                file,
                pid,
                start,
                end,
                write,
            });
            changed = true;
        }
        Ok(changed)
    }

    /// Drops `pid`'s locks on `file` (a descriptor of it closed), or on
    /// every file (`None`: the process ended) → whether there were any.
    pub fn release(&mut self, pid: u32, file: Option<u32>) -> bool {
        let before = self.held.len();
        self.held
            .retain(|l| l.pid != pid || file.is_some_and(|f| f != l.file));
        self.held.len() != before
    }

    /// Whether `pid` waiting for `blocker` would wait for itself: the
    /// holder of `blocker` waits (`waiting`: what a process's parked
    /// `F_SETLKW` asks, as file and request) for a lock whose holder waits
    /// … for a lock of `pid`'s, within [`MAX_DEADLOCK_STEPS`] steps.
    pub fn deadlock(
        &self,
        pid: u32,
        blocker: &Lock,
        waiting: impl Fn(u32) -> Option<(u32, Request)>,
    ) -> bool {
        let mut holder = blocker.pid;
        for _ in 0..MAX_DEADLOCK_STEPS {
            let Some((file, r)) = waiting(holder) else {
                return false;
            };
            let Some(next) = self.conflict(file, holder, &r) else {
                return false;
            };
            if next.pid == pid {
                return true;
            }
            holder = next.pid;
        }
        false
    }
}
