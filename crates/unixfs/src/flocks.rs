//! File locks owned by an open file description (and, for the rules' sake,
//! by a process): open-file-description record locks (`F_OFD_*`: byte
//! ranges) and `flock` (whole file, never in conflict with record locks).
//! (POSIX record locks, owned by a process, are `stet_unixfs::locks`'.) A table that grows from the heap (`try_reserve`: a full
//! heap is `ENOLCK`).

use alloc::vec::Vec;
use stet_unix::sys::errno::{EINVAL, ENOLCK};

/// Who holds a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    /// A process's POSIX record lock.
    Process(u32),
    /// An open file description's OFD record lock.
    Description(u32),
    /// An open file description's `flock`.
    Flock(u32),
}

impl Owner {
    fn flock(self) -> bool {
        matches!(self, Owner::Flock(_))
    }
}

/// A lock: `[start, end)` of inode `ino` (`end` `u64::MAX`: to the end of
/// the file, however long).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lock {
    /// The file.
    pub ino: u32,
    /// Its holder.
    pub owner: Owner,
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
    /// A write (exclusive) lock; else a read (shared) one.
    pub write: bool,
}

impl Lock {
    fn overlaps(&self, start: u64, end: u64) -> bool {
        self.start < end && start < self.end
    }
}

/// Every lock of the system.
#[derive(Clone, Debug, Default)]
pub struct Locks {
    held: Vec<Lock>,
}

impl Locks {
    /// No locks.
    pub const fn new() -> Locks {
        Locks { held: Vec::new() }
    }

    /// The first lock of another owner that a lock `want` would conflict
    /// with (`F_GETLK`'s answer), if any.
    pub fn conflict(&self, want: &Lock) -> Option<Lock> {
        self.held
            .iter()
            .find(|l| {
                l.ino == want.ino
                    && l.owner != want.owner
                    && l.owner.flock() == want.owner.flock()
                    && (l.write || want.write)
                    && l.overlaps(want.start, want.end)
                // A process's POSIX locks and its OFD locks conflict
                // too, but two of one process's POSIX locks never.
            })
            .copied()
    }

    /// Sets `want` (or, `unlock`, removes the owner's locks over its
    /// range): the owner's locks there are replaced, split where the range
    /// cuts them. `Err(None)`: a conflict (`EAGAIN`, or a wait);
    /// `Err(Some(errno))`: no room (`ENOLCK`) or a bad range.
    pub fn set(&mut self, want: Lock, unlock: bool) -> Result<(), Option<i64>> {
        if want.start >= want.end {
            return Err(Some(EINVAL));
        }
        if !unlock && self.conflict(&want).is_some() {
            return Err(None);
        }
        // Each of the owner's locks over the range leaves at most two
        // pieces outside it; plus the new one.
        self.held.try_reserve(2).map_err(|_| Some(ENOLCK))?;
        let mut i = 0;
        while i < self.held.len() {
            let l = self.held[i];
            if l.ino != want.ino || l.owner != want.owner || !l.overlaps(want.start, want.end) {
                i += 1;
                continue;
            }
            self.held.swap_remove(i);
            if l.start < want.start {
                self.held.push(Lock {
                    end: want.start,
                    ..l
                });
            }
            if l.end > want.end {
                if self.held.try_reserve(1).is_err() {
                    return Err(Some(ENOLCK));
                }
                self.held.push(Lock {
                    start: want.end,
                    ..l
                });
            }
        }
        if !unlock {
            self.held.push(want);
        }
        Ok(())
    }

    /// Removes every lock of `owner` on `ino` (`None`: on every file) →
    /// whether any went (waiters on those files may go on).
    pub fn release(&mut self, owner: Owner, ino: Option<u32>) -> bool {
        let before = self.held.len();
        self.held
            .retain(|l| !(l.owner == owner && ino.is_none_or(|i| l.ino == i)));
        self.held.len() != before
    }

    /// How many locks are held.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// Whether none are.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lk(owner: Owner, start: u64, end: u64, write: bool) -> Lock {
        Lock {
            ino: 7,
            owner,
            start,
            end,
            write,
        }
    }

    const P1: Owner = Owner::Process(1);
    const P2: Owner = Owner::Process(2);

    #[test]
    fn readers_share_writers_exclude() {
        let mut t = Locks::new();
        t.set(lk(P1, 0, 100, false), false).unwrap();
        t.set(lk(P2, 50, 150, false), false).unwrap();
        assert_eq!(t.set(lk(P2, 0, 10, true), false), Err(None));
        assert_eq!(t.conflict(&lk(P2, 0, 10, true)).map(|l| l.owner), Some(P1));
        // Beyond the reader's range: fine.
        t.set(lk(P2, 200, u64::MAX, true), false).unwrap();
        assert_eq!(t.set(lk(P1, 300, 301, false), false), Err(None));
    }

    #[test]
    fn own_locks_are_replaced_and_split() {
        let mut t = Locks::new();
        t.set(lk(P1, 0, 100, true), false).unwrap();
        // Unlock the middle: two pieces stay.
        t.set(lk(P1, 40, 60, false), true).unwrap();
        assert_eq!(t.len(), 2);
        assert!(t.conflict(&lk(P2, 45, 55, true)).is_none());
        assert!(t.conflict(&lk(P2, 10, 11, false)).is_some());
        // A read lock over a write lock of the same owner downgrades it.
        t.set(lk(P1, 0, 100, false), false).unwrap();
        assert!(t.conflict(&lk(P2, 0, 100, false)).is_none());
        assert!(t.conflict(&lk(P2, 0, 100, true)).is_some());
        assert!(t.release(P1, Some(7)));
        assert!(t.is_empty());
    }

    #[test]
    fn flock_and_record_locks_do_not_meet() {
        let mut t = Locks::new();
        t.set(lk(Owner::Flock(3), 0, u64::MAX, true), false)
            .unwrap();
        t.set(lk(P2, 0, u64::MAX, true), false).unwrap();
        assert_eq!(
            t.set(lk(Owner::Flock(4), 0, u64::MAX, false), false),
            Err(None)
        );
        assert!(t.release(Owner::Flock(3), None));
        t.set(lk(Owner::Flock(4), 0, u64::MAX, false), false)
            .unwrap();
        assert_eq!(
            t.set(lk(P1, 5, 6, false), false),
            Err(None),
            "P2 still holds it"
        );
    }

    #[test]
    fn empty_range_is_invalid() {
        let mut t = Locks::new();
        assert_eq!(t.set(lk(P1, 5, 5, true), false), Err(Some(EINVAL)));
    }
}
