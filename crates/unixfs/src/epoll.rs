//! An epoll instance's interest list (`epoll_ctl`) and what `epoll_wait`
//! reports from it: level-triggered entries while their file is ready,
//! edge-triggered ones (`EPOLLET`) when it becomes ready or changes again
//! (a *generation* the file's kind bumps: a pipe's writes for its reader,
//! its reads for its writer), one-shot ones (`EPOLLONESHOT`) once until
//! `EPOLL_CTL_MOD` arms them again. The files' readiness comes from the
//! caller (unixd asks each file's kind, as for `poll`), so this is pure
//! bookkeeping. Entries are named as Linux names them: by the open file
//! description (unixd's fid) and the descriptor number given to
//! `epoll_ctl`; when the description is closed its entries go
//! ([`Interest::forget`]). The list grows from the heap (`try_reserve`:
//! `ENOMEM`, never a panic).

use alloc::vec::Vec;

/// `epoll_event.events` bits (Linux's `EPOLL*`).
pub mod ev {
    /// Readable.
    pub const IN: u32 = 1;
    /// Urgent data.
    pub const PRI: u32 = 2;
    /// Writable.
    pub const OUT: u32 = 4;
    /// An error (always reported).
    pub const ERR: u32 = 8;
    /// Hang-up (always reported).
    pub const HUP: u32 = 0x10;
    /// As `IN`.
    pub const RDNORM: u32 = 0x40;
    /// Priority band data.
    pub const RDBAND: u32 = 0x80;
    /// As `OUT`.
    pub const WRNORM: u32 = 0x100;
    /// Priority band writable.
    pub const WRBAND: u32 = 0x200;
    /// Unused by Linux.
    pub const MSG: u32 = 0x400;
    /// The peer shut its writing half (sockets).
    pub const RDHUP: u32 = 0x2000;
    /// Wake one of several epolls waiting on the file (accepted).
    pub const EXCLUSIVE: u32 = 1 << 28;
    /// Keep the system awake (needs a capability; dropped).
    pub const WAKEUP: u32 = 1 << 29;
    /// Report once, then disarm until `EPOLL_CTL_MOD`.
    pub const ONESHOT: u32 = 1 << 30;
    /// Edge-triggered.
    pub const ET: u32 = 1 << 31;
    /// What `EPOLLEXCLUSIVE` may be combined with.
    pub const EXCLUSIVE_OK: u32 =
        IN | OUT | RDNORM | WRNORM | RDBAND | WRBAND | ERR | HUP | WAKEUP | ET | EXCLUSIVE;
    /// The readiness bits (not the flags).
    pub const READINESS: u32 = !(EXCLUSIVE | WAKEUP | ONESHOT | ET);
}

/// `epoll_ctl`'s operations.
pub mod op {
    /// Add an entry.
    pub const ADD: u64 = 1;
    /// Remove one.
    pub const DEL: u64 = 2;
    /// Change one's events and data.
    pub const MOD: u64 = 3;
}

/// How deep epolls may nest (Linux's `EPOLL_MAX_NESTS` + 1: the longest
/// chain of epolls, each watching the next).
pub const MAX_CHAIN: usize = 5;

/// One watched file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The open file description (unixd's fid).
    pub fid: u32,
    /// The descriptor number `epoll_ctl` named it by.
    pub fd: i32,
    /// The events asked for and the flags (`ev`).
    pub events: u32,
    /// The caller's `epoll_data`.
    pub data: u64,
    /// The file is an epoll (for the loop check).
    pub nested: bool,
    /// The readiness seen at the last look (edge-triggered entries).
    last: u32,
    /// The file's generation at the last look.
    gen: u32,
    /// A one-shot entry that has reported: silent until `MOD`.
    spent: bool,
}

/// A file's readiness now: its `ev` bits and its generation.
pub type Readiness = (u32, u32);

/// An interest list.
#[derive(Clone, Debug, Default)]
pub struct Interest {
    /// The entries, in the order added.
    pub entries: Vec<Entry>,
    /// Where the next look starts (entries reported go to the back, as
    /// Linux's ready list does, so a small `maxevents` still sees all).
    next: usize,
}

impl Entry {
    /// What this entry would report given its file's readiness `r`, and
    /// nothing changed.
    fn due(&self, r: Readiness) -> u32 {
        if self.spent {
            return 0;
        }
        let ready = r.0 & (self.events | ev::ERR | ev::HUP) & ev::READINESS;
        if self.events & ev::ET == 0 || ready == 0 {
            return ready;
        }
        if ready & !self.last != 0 || r.1 != self.gen {
            ready
        } else {
            0
        }
    }
}

impl Interest {
    /// An empty list.
    pub const fn new() -> Self {
        Interest {
            entries: Vec::new(),
            next: 0,
        }
    }

    fn find(&self, fid: u32, fd: i32) -> Option<usize> {
        self.entries.iter().position(|e| e.fid == fid && e.fd == fd)
    }

    /// `EPOLL_CTL_ADD` of file `fid` (descriptor `fd`; `nested`: an epoll)
    /// with `events` and `data`: `EEXIST`, `EINVAL` for `EPOLLEXCLUSIVE`
    /// with what it excludes, `ENOMEM`.
    pub fn add(
        &mut self,
        fid: u32,
        fd: i32,
        events: u32,
        data: u64,
        nested: bool,
    ) -> Result<(), i64> {
        use stet_unix::sys::errno::*;
        if events & ev::EXCLUSIVE != 0 && (nested || events & !ev::EXCLUSIVE_OK != 0) {
            return Err(EINVAL);
        }
        if self.find(fid, fd).is_some() {
            return Err(EEXIST);
        }
        self.entries.try_reserve(1).map_err(|_| ENOMEM)?;
        self.entries.push(Entry {
            fid,
            fd,
            events: events & !ev::WAKEUP,
            data,
            nested,
            last: 0,
            gen: 0,
            spent: false,
        });
        Ok(())
    }

    /// `EPOLL_CTL_MOD`: new events and data, armed again (`ENOENT`;
    /// `EINVAL` for an `EPOLLEXCLUSIVE` entry or to ask for it).
    pub fn modify(&mut self, fid: u32, fd: i32, events: u32, data: u64) -> Result<(), i64> {
        use stet_unix::sys::errno::*;
        if events & ev::EXCLUSIVE != 0 {
            return Err(EINVAL);
        }
        let i = self.find(fid, fd).ok_or(ENOENT)?;
        let e = &mut self.entries[i];
        if e.events & ev::EXCLUSIVE != 0 {
            return Err(EINVAL);
        }
        e.events = events & !ev::WAKEUP;
        e.data = data;
        e.spent = false;
        // A new interest is looked at afresh (Linux polls the file at MOD).
        e.last = 0;
        Ok(())
    }

    /// `EPOLL_CTL_DEL` (`ENOENT`).
    pub fn delete(&mut self, fid: u32, fd: i32) -> Result<(), i64> {
        let i = self.find(fid, fd).ok_or(stet_unix::sys::errno::ENOENT)?;
        self.entries.remove(i);
        if self.next > i {
            self.next -= 1;
        }
        Ok(())
    }

    /// File description `fid` was closed: its entries go → how many.
    pub fn forget(&mut self, fid: u32) -> usize {
        let before = self.entries.len();
        self.entries.retain(|e| e.fid != fid);
        self.next = 0;
        before - self.entries.len()
    }

    /// Whether some entry would report now (`poll` on the epoll itself),
    /// changing nothing.
    pub fn any_ready(&self, mut ready: impl FnMut(&Entry) -> Readiness) -> bool {
        self.entries.iter().any(|e| e.due(ready(e)) != 0)
    }

    /// `epoll_wait`'s look: up to `max` entries that report, each given
    /// to `out` (events, data) → how many. Edge-triggered entries remember
    /// what they saw, one-shot ones that reported fall silent.
    pub fn collect(
        &mut self,
        max: usize,
        mut ready: impl FnMut(&Entry) -> Readiness,
        mut out: impl FnMut(u32, u64),
    ) -> usize {
        let n = self.entries.len();
        let start = if self.next < n { self.next } else { 0 };
        let mut got = 0;
        let mut after = start;
        for k in 0..n {
            if got == max {
                break;
            }
            let i = (start + k) % n;
            let e = &mut self.entries[i];
            let r = ready(e);
            let due = e.due(r);
            e.last = r.0;
            e.gen = r.1;
            after = i + 1;
            if due != 0 {
                out(due, e.data);
                got += 1;
                if e.events & ev::ONESHOT != 0 {
                    e.spent = true;
                }
            }
        }
        self.next = after;
        got
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;
    use stet_unix::sys::errno::*;

    fn look(i: &mut Interest, max: usize, r: &[(u32, Readiness)]) -> std::vec::Vec<(u32, u64)> {
        let mut v = vec![];
        i.collect(
            max,
            |e| r.iter().find(|x| x.0 == e.fid).map_or((0, 0), |x| x.1),
            |evs, d| v.push((evs, d)),
        );
        v
    }

    #[test]
    fn ctl_errors() {
        let mut i = Interest::new();
        assert_eq!(i.add(1, 3, ev::IN, 7, false), Ok(()));
        assert_eq!(i.add(1, 3, ev::IN, 7, false), Err(EEXIST));
        // The same description under another number is another entry.
        assert_eq!(i.add(1, 4, ev::IN, 8, false), Ok(()));
        assert_eq!(i.modify(2, 3, ev::IN, 0), Err(ENOENT));
        assert_eq!(i.delete(2, 3), Err(ENOENT));
        assert_eq!(i.add(5, 5, ev::IN | ev::EXCLUSIVE, 0, true), Err(EINVAL));
        assert_eq!(
            i.add(5, 5, ev::IN | ev::EXCLUSIVE | ev::ONESHOT, 0, false),
            Err(EINVAL)
        );
        assert_eq!(i.add(5, 5, ev::IN | ev::EXCLUSIVE, 0, false), Ok(()));
        assert_eq!(i.modify(5, 5, ev::IN, 0), Err(EINVAL));
        assert_eq!(i.modify(1, 3, ev::IN | ev::EXCLUSIVE, 0), Err(EINVAL));
        assert_eq!(i.delete(1, 3), Ok(()));
        assert_eq!(i.forget(1), 1);
        assert_eq!(i.entries.len(), 1);
    }

    #[test]
    fn level_and_edge() {
        let mut i = Interest::new();
        i.add(1, 3, ev::IN, 10, false).unwrap();
        i.add(2, 4, ev::IN | ev::ET, 20, false).unwrap();
        let ready = [(1, (ev::IN, 1)), (2, (ev::IN, 1))];
        assert_eq!(look(&mut i, 8, &ready), vec![(ev::IN, 10), (ev::IN, 20)]);
        // Level-triggered again; edge-triggered not until something changes.
        assert_eq!(look(&mut i, 8, &ready), vec![(ev::IN, 10)]);
        let more = [(1, (ev::IN, 2)), (2, (ev::IN, 2))];
        assert_eq!(look(&mut i, 8, &more), vec![(ev::IN, 10), (ev::IN, 20)]);
        // Not ready, then ready with the same generation: an edge.
        look(&mut i, 8, &[]);
        assert_eq!(look(&mut i, 8, &more), vec![(ev::IN, 10), (ev::IN, 20)]);
        // Only what was asked for, and ERR/HUP always.
        let out = [(1, (ev::OUT | ev::HUP, 2))];
        assert_eq!(look(&mut i, 8, &out), vec![(ev::HUP, 10)]);
    }

    #[test]
    fn oneshot_and_rotation() {
        let mut i = Interest::new();
        i.add(1, 3, ev::IN | ev::ONESHOT, 1, false).unwrap();
        let r = [(1, (ev::IN, 0))];
        assert_eq!(look(&mut i, 8, &r), vec![(ev::IN, 1)]);
        assert_eq!(look(&mut i, 8, &r), vec![]);
        assert!(!i.any_ready(|_| (ev::IN, 0)));
        i.modify(1, 3, ev::IN, 2).unwrap();
        assert!(i.any_ready(|_| (ev::IN, 0)));
        assert_eq!(look(&mut i, 8, &r), vec![(ev::IN, 2)]);

        let mut j = Interest::new();
        for f in 0..3 {
            j.add(f, f as i32, ev::OUT, f as u64, false).unwrap();
        }
        let all = [(0, (ev::OUT, 0)), (1, (ev::OUT, 0)), (2, (ev::OUT, 0))];
        assert_eq!(look(&mut j, 2, &all), vec![(ev::OUT, 0), (ev::OUT, 1)]);
        assert_eq!(look(&mut j, 2, &all), vec![(ev::OUT, 2), (ev::OUT, 0)]);
        j.delete(1, 1).unwrap();
        assert_eq!(look(&mut j, 1, &all).len(), 1);
    }
}
