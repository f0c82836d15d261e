//! inotify instances: a watch list (a watch descriptor per inode, its
//! mask of events) and the queue of events `read` returns as Linux's
//! `struct inotify_event` records. Pure bookkeeping: unixd says which
//! inode an event happened to (and, for an event in a directory, the
//! entry's name); this module decides which watches see it, coalesces an
//! event identical to the one at the queue's tail (as Linux does), queues
//! one `IN_Q_OVERFLOW` past the instance's `max_queued_events`, drops an
//! `IN_ONESHOT` watch after its event and queues `IN_IGNORED` whenever a
//! watch goes (`inotify_rm_watch`, the inode freed). The per-user limits
//! (instances, watches) are the caller's: it counts over its instances.
//! Everything grows with `try_reserve` (`ENOMEM`/`ENOSPC`, never a panic).

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use stet_unix::sys::errno::*;

/// Linux's `IN_*` bits.
pub mod mask {
    /// File was read.
    pub const ACCESS: u32 = 0x1;
    /// File was written.
    pub const MODIFY: u32 = 0x2;
    /// Metadata changed (mode, owner, times, links, extended attributes).
    pub const ATTRIB: u32 = 0x4;
    /// A file opened for writing was closed.
    pub const CLOSE_WRITE: u32 = 0x8;
    /// A file not opened for writing was closed.
    pub const CLOSE_NOWRITE: u32 = 0x10;
    /// File was opened.
    pub const OPEN: u32 = 0x20;
    /// An entry was moved out of the directory.
    pub const MOVED_FROM: u32 = 0x40;
    /// An entry was moved into the directory.
    pub const MOVED_TO: u32 = 0x80;
    /// An entry was made in the directory.
    pub const CREATE: u32 = 0x100;
    /// An entry was removed from the directory.
    pub const DELETE: u32 = 0x200;
    /// The watched inode itself was deleted.
    pub const DELETE_SELF: u32 = 0x400;
    /// The watched inode itself was moved.
    pub const MOVE_SELF: u32 = 0x800;
    /// Every event above.
    pub const ALL_EVENTS: u32 = 0xfff;
    /// The file system was unmounted (never on Stet).
    pub const UNMOUNT: u32 = 0x2000;
    /// The queue overflowed.
    pub const Q_OVERFLOW: u32 = 0x4000;
    /// The watch went.
    pub const IGNORED: u32 = 0x8000;
    /// Watch only a directory (`ENOTDIR`).
    pub const ONLYDIR: u32 = 0x0100_0000;
    /// Do not follow a final symbolic link.
    pub const DONT_FOLLOW: u32 = 0x0200_0000;
    /// No events for a directory's children once unlinked.
    pub const EXCL_UNLINK: u32 = 0x0400_0000;
    /// Fail (`EEXIST`) if the inode is watched already.
    pub const MASK_CREATE: u32 = 0x1000_0000;
    /// Add to an existing watch's mask instead of replacing it.
    pub const MASK_ADD: u32 = 0x2000_0000;
    /// The subject is a directory.
    pub const ISDIR: u32 = 0x4000_0000;
    /// One event, then the watch goes.
    pub const ONESHOT: u32 = 0x8000_0000;
    /// Every bit `inotify_add_watch` knows (a mask with none: `EINVAL`).
    pub const ALL_BITS: u32 = ALL_EVENTS
        | UNMOUNT
        | Q_OVERFLOW
        | IGNORED
        | ONLYDIR
        | DONT_FOLLOW
        | EXCL_UNLINK
        | MASK_CREATE
        | MASK_ADD
        | ISDIR
        | ONESHOT;
    /// What a watch keeps of the mask it was given.
    pub const KEPT: u32 = ALL_EVENTS | ONESHOT | EXCL_UNLINK;
}

/// `sizeof(struct inotify_event)` without the name.
pub const EVENT_SIZE: usize = 16;

/// The bytes a name takes in a record: none, or the name and at least one
/// NUL rounded up to a multiple of [`EVENT_SIZE`] (Linux's padding).
pub const fn name_len(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        (n + 1).next_multiple_of(EVENT_SIZE)
    }
}

/// A watch: its descriptor, the inode and what it asks for
/// ([`mask::KEPT`] bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watch {
    /// The watch descriptor (from 1).
    pub wd: i32,
    /// The watched inode.
    pub ino: u32,
    /// Its mask.
    pub mask: u32,
}

/// A queued event.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Event {
    wd: i32,
    mask: u32,
    cookie: u32,
    name: Vec<u8>,
}

impl Event {
    fn size(&self) -> usize {
        EVENT_SIZE + name_len(self.name.len())
    }
}

/// What happened, as [`Instance::notify`] is told it.
#[derive(Clone, Copy, Debug)]
pub struct What<'a> {
    /// The inode the watches are looked for on.
    pub ino: u32,
    /// One event bit (or several, as `IN_CLOSE_*` never are).
    pub event: u32,
    /// The subject is a directory (`IN_ISDIR` in the record).
    pub isdir: bool,
    /// `IN_MOVED_*`'s cookie (0 otherwise).
    pub cookie: u32,
    /// The entry's name, for an event a directory sees of its child.
    pub name: Option<&'a [u8]>,
    /// The child has no name left in the directory (`IN_EXCL_UNLINK`).
    pub unlinked: bool,
}

/// An inotify instance.
#[derive(Clone, Debug)]
pub struct Instance {
    watches: Vec<Watch>,
    queue: VecDeque<Event>,
    /// The last descriptor given (they are given cyclically from 1, as
    /// Linux's `idr_alloc_cyclic`).
    last_wd: i32,
    /// Bytes of the records queued (`FIONREAD`).
    bytes: usize,
    /// Events queued at most before `IN_Q_OVERFLOW`
    /// (`max_queued_events` when it was made).
    pub max_events: u32,
    /// The real user who made it (the per-user limits count it).
    pub uid: u32,
    /// Bumped by each event queued (edge-triggered epolls).
    pub gen: u32,
}

impl Instance {
    /// A new instance of user `uid`, queueing at most `max_events`.
    pub fn new(uid: u32, max_events: u32) -> Instance {
        Instance {
            watches: Vec::new(),
            queue: VecDeque::new(),
            last_wd: 0,
            bytes: 0,
            max_events,
            uid,
            gen: 0,
        }
    }

    /// Its watches.
    pub fn watches(&self) -> &[Watch] {
        &self.watches
    }

    /// Whether an event waits.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Bytes `read` could return now (`FIONREAD`).
    pub fn pending(&self) -> usize {
        self.bytes
    }

    /// Events queued.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// `inotify_add_watch` of inode `ino` with mask `m`; the caller has
    /// checked `IN_ONLYDIR` and the path. `room`: whether its user may
    /// have one more watch (`ENOSPC` if a new one is needed and it may
    /// not) → the watch descriptor and whether it is new.
    pub fn add_watch(&mut self, ino: u32, m: u32, room: bool) -> Result<(i32, bool), i64> {
        check_mask(m)?;
        let keep = m & mask::KEPT;
        if let Some(w) = self.watches.iter_mut().find(|w| w.ino == ino) {
            if m & mask::MASK_CREATE != 0 {
                return Err(EEXIST);
            }
            if m & mask::MASK_ADD != 0 {
                w.mask |= keep;
            } else {
                w.mask = keep;
            }
            return Ok((w.wd, false));
        }
        if !room {
            return Err(ENOSPC);
        }
        self.watches.try_reserve(1).map_err(|_| ENOSPC)?;
        let mut wd = self.last_wd;
        loop {
            wd = if wd == i32::MAX { 1 } else { wd + 1 };
            if !self.watches.iter().any(|w| w.wd == wd) {
                break;
            }
        }
        self.last_wd = wd;
        self.watches.push(Watch {
            wd,
            ino,
            mask: keep,
        });
        Ok((wd, true))
    }

    /// `inotify_rm_watch`: the watch goes and `IN_IGNORED` is queued
    /// (`EINVAL` for no such descriptor) → the inode it watched.
    pub fn rm_watch(&mut self, wd: i32) -> Result<u32, i64> {
        let i = self.watches.iter().position(|w| w.wd == wd).ok_or(EINVAL)?;
        let w = self.watches.remove(i);
        self.push(w.wd, mask::IGNORED, 0, &[]);
        Ok(w.ino)
    }

    /// Inode `ino` is gone: its watch goes with `IN_IGNORED`.
    pub fn inode_gone(&mut self, ino: u32) {
        if let Some(i) = self.watches.iter().position(|w| w.ino == ino) {
            let w = self.watches.remove(i);
            self.push(w.wd, mask::IGNORED, 0, &[]);
        }
    }

    /// Whether inode `ino` is watched for one of `events`.
    pub fn watches_for(&self, ino: u32, events: u32) -> bool {
        self.watches
            .iter()
            .any(|w| w.ino == ino && w.mask & events != 0)
    }

    /// Something happened: the watch on `w.ino` (if it asks for it) gets
    /// the event → whether anything was queued.
    pub fn notify(&mut self, w: What<'_>) -> bool {
        let Some(i) = self.watches.iter().position(|x| x.ino == w.ino) else {
            return false;
        };
        let x = self.watches[i];
        if x.mask & w.event == 0 {
            return false;
        }
        if w.name.is_some() && w.unlinked && x.mask & mask::EXCL_UNLINK != 0 {
            return false;
        }
        let isdir = if w.isdir { mask::ISDIR } else { 0 };
        self.push(
            x.wd,
            (w.event & x.mask) | isdir,
            w.cookie,
            w.name.unwrap_or(&[]),
        );
        if x.mask & mask::ONESHOT != 0 {
            self.watches.remove(i);
            self.push(x.wd, mask::IGNORED, 0, &[]);
        }
        true
    }

    /// Queues one event: none if it is the tail's twin, `IN_Q_OVERFLOW`
    /// (once) if the queue is full, or nothing if memory is short (the
    /// overflow event then too, if it fits).
    fn push(&mut self, wd: i32, m: u32, cookie: u32, name: &[u8]) {
        if let Some(last) = self.queue.back() {
            if last.wd == wd && last.mask == m && last.cookie == cookie && last.name == name {
                return;
            }
        }
        let full = self.queue.len() >= self.max_events as usize;
        let mut n = Vec::new();
        if full || n.try_reserve_exact(name.len()).is_err() || self.queue.try_reserve(1).is_err() {
            self.overflow();
            return;
        }
        n.extend_from_slice(name);
        let e = Event {
            wd,
            mask: m,
            cookie,
            name: n,
        };
        self.bytes += e.size();
        self.queue.push_back(e);
        self.gen = self.gen.wrapping_add(1);
    }

    /// Queues `IN_Q_OVERFLOW` unless it is the tail already.
    fn overflow(&mut self) {
        if self
            .queue
            .back()
            .is_some_and(|e| e.mask == mask::Q_OVERFLOW)
        {
            return;
        }
        if self.queue.try_reserve(1).is_err() {
            return;
        }
        let e = Event {
            wd: -1,
            mask: mask::Q_OVERFLOW,
            cookie: 0,
            name: Vec::new(),
        };
        self.bytes += e.size();
        self.queue.push_back(e);
        self.gen = self.gen.wrapping_add(1);
    }

    /// `read` into `out`: as many whole records as fit → their bytes (0
    /// with nothing queued); `EINVAL` if the first does not fit.
    pub fn read(&mut self, out: &mut [u8]) -> Result<usize, i64> {
        let mut n = 0;
        while let Some(e) = self.queue.front() {
            let size = e.size();
            if n + size > out.len() {
                if n == 0 {
                    return Err(EINVAL);
                }
                break;
            }
            let r = &mut out[n..n + size];
            r.fill(0);
            r[0..4].copy_from_slice(&e.wd.to_le_bytes());
            r[4..8].copy_from_slice(&e.mask.to_le_bytes());
            r[8..12].copy_from_slice(&e.cookie.to_le_bytes());
            r[12..16].copy_from_slice(&((size - EVENT_SIZE) as u32).to_le_bytes());
            r[16..16 + e.name.len()].copy_from_slice(&e.name);
            n += size;
            self.bytes -= size;
            self.queue.pop_front();
        }
        Ok(n)
    }
}

/// `inotify_add_watch`'s check of a mask: `EINVAL` for none of the bits
/// it knows, or `IN_MASK_ADD` with `IN_MASK_CREATE`.
pub fn check_mask(m: u32) -> Result<(), i64> {
    if m & mask::MASK_ADD != 0 && m & mask::MASK_CREATE != 0 {
        return Err(EINVAL);
    }
    if m & mask::ALL_BITS == 0 {
        return Err(EINVAL);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::mask::*;
    use super::*;
    use proptest::prelude::*;

    fn what(ino: u32, event: u32, name: Option<&[u8]>) -> What<'_> {
        What {
            ino,
            event,
            isdir: false,
            cookie: 0,
            name,
            unlinked: false,
        }
    }

    /// The records in `b`: (wd, mask, cookie, len, name).
    fn records(b: &[u8]) -> Vec<(i32, u32, u32, u32, Vec<u8>)> {
        let mut v = Vec::new();
        let mut i = 0;
        while i < b.len() {
            let wd = i32::from_le_bytes(b[i..i + 4].try_into().unwrap());
            let m = u32::from_le_bytes(b[i + 4..i + 8].try_into().unwrap());
            let c = u32::from_le_bytes(b[i + 8..i + 12].try_into().unwrap());
            let l = u32::from_le_bytes(b[i + 12..i + 16].try_into().unwrap());
            let name: Vec<u8> = b[i + 16..i + 16 + l as usize]
                .iter()
                .copied()
                .take_while(|&c| c != 0)
                .collect();
            v.push((wd, m, c, l, name));
            i += 16 + l as usize;
        }
        v
    }

    #[test]
    fn watches_and_descriptors() {
        let mut i = Instance::new(0, 100);
        assert_eq!(i.add_watch(5, MODIFY, true), Ok((1, true)));
        assert_eq!(i.add_watch(6, MODIFY, true), Ok((2, true)));
        // The same inode: the same descriptor, the mask replaced or added.
        assert_eq!(i.add_watch(5, ACCESS, true), Ok((1, false)));
        assert_eq!(i.watches()[0].mask, ACCESS);
        assert_eq!(i.add_watch(5, MODIFY | MASK_ADD, true), Ok((1, false)));
        assert_eq!(i.watches()[0].mask, ACCESS | MODIFY);
        assert_eq!(i.add_watch(5, MODIFY | MASK_CREATE, true), Err(EEXIST));
        assert_eq!(
            i.add_watch(7, MODIFY | MASK_CREATE | MASK_ADD, true),
            Err(EINVAL)
        );
        assert_eq!(i.add_watch(7, 0, true), Err(EINVAL));
        assert_eq!(i.add_watch(7, MODIFY, false), Err(ENOSPC));
        // Removed descriptors are not given again at once.
        assert_eq!(i.rm_watch(2), Ok(6));
        assert_eq!(i.rm_watch(2), Err(EINVAL));
        assert_eq!(i.add_watch(6, MODIFY, true), Ok((3, true)));
        let mut b = [0u8; 64];
        let n = i.read(&mut b).unwrap();
        assert_eq!(records(&b[..n]), [(2, IGNORED, 0, 0, Vec::new())]);
    }

    #[test]
    fn records_padded_and_too_small_buffers() {
        let mut i = Instance::new(0, 100);
        i.add_watch(1, CREATE, true).unwrap();
        assert!(i.notify(what(1, CREATE, Some(b"abc"))));
        assert!(!i.notify(what(1, DELETE, Some(b"abc"))));
        assert!(!i.notify(what(2, CREATE, Some(b"abc"))));
        assert_eq!(i.pending(), 32);
        let mut small = [0u8; 31];
        assert_eq!(i.read(&mut small), Err(EINVAL));
        i.notify(what(1, CREATE, Some(b"0123456789abcdef")));
        assert_eq!(i.pending(), 32 + 48);
        let mut b = [0u8; 40];
        assert_eq!(i.read(&mut b), Ok(32));
        assert_eq!(records(&b[..32]), [(1, CREATE, 0, 16, b"abc".to_vec())]);
        let mut b = [0u8; 100];
        assert_eq!(i.read(&mut b), Ok(48));
        assert_eq!(i.read(&mut b), Ok(0));
        assert!(i.is_empty());
    }

    #[test]
    fn coalescing_overflow_oneshot() {
        let mut i = Instance::new(0, 3);
        i.add_watch(1, ALL_EVENTS, true).unwrap();
        i.notify(what(1, MODIFY, None));
        i.notify(what(1, MODIFY, None));
        assert_eq!(i.queued(), 1);
        i.notify(what(1, ACCESS, None));
        i.notify(what(1, MODIFY, None));
        i.notify(what(1, ACCESS, None));
        i.notify(what(1, MODIFY, None));
        let mut b = [0u8; 200];
        let n = i.read(&mut b).unwrap();
        let r = records(&b[..n]);
        assert_eq!(r.len(), 4);
        assert_eq!(r[3], (-1, Q_OVERFLOW, 0, 0, Vec::new()));
        let mut o = Instance::new(0, 10);
        o.add_watch(4, MODIFY | ONESHOT, true).unwrap();
        assert!(o.notify(what(4, MODIFY, None)));
        assert!(!o.notify(what(4, MODIFY, None)));
        assert!(o.watches().is_empty());
        let n = o.read(&mut b).unwrap();
        assert_eq!(
            records(&b[..n]),
            [
                (1, MODIFY, 0, 0, Vec::new()),
                (1, IGNORED, 0, 0, Vec::new())
            ]
        );
        // IN_EXCL_UNLINK: no events of an unlinked child.
        let mut x = Instance::new(0, 10);
        x.add_watch(9, MODIFY | EXCL_UNLINK, true).unwrap();
        let mut w = what(9, MODIFY, Some(b"f"));
        w.unlinked = true;
        assert!(!x.notify(w));
        w.unlinked = false;
        w.isdir = true;
        assert!(x.notify(w));
        let n = x.read(&mut b).unwrap();
        assert_eq!(
            records(&b[..n]),
            [(1, MODIFY | ISDIR, 0, 16, b"f".to_vec())]
        );
        x.inode_gone(9);
        let n = x.read(&mut b).unwrap();
        assert_eq!(records(&b[..n]), [(1, IGNORED, 0, 0, Vec::new())]);
    }

    proptest! {
        /// Whatever happens, `pending` is what reads return, no queue
        /// holds more than `max + 1` events, and no two adjacent records
        /// are equal.
        #[test]
        fn queue_accounting(ops in proptest::collection::vec((0u32..4, 0u32..12, 0usize..20), 1..200), max in 1u32..20) {
            let mut i = Instance::new(0, max);
            for ino in 0..4 {
                i.add_watch(ino, ALL_EVENTS, true).unwrap();
            }
            let names: [&[u8]; 3] = [b"a", b"0123456789abcdef", b""];
            let mut got = Vec::new();
            for (ino, bit, k) in ops {
                let name = names[k % 3];
                i.notify(what(ino, 1 << bit, if name.is_empty() { None } else { Some(name) }));
                prop_assert!(i.queued() <= max as usize + 1);
                if k > 15 {
                    let before = i.pending();
                    let mut b = [0u8; 100];
                    let n = i.read(&mut b).unwrap();
                    prop_assert_eq!(before - i.pending(), n);
                    got.extend(records(&b[..n]));
                }
            }
            let mut b = alloc::vec![0u8; i.pending()];
            let n = i.read(&mut b).unwrap();
            prop_assert_eq!(n, b.len());
            prop_assert_eq!(i.pending(), 0);
            let rest = records(&b[..n]);
            for w in rest.windows(2) {
                prop_assert!(w[0] != w[1]);
            }
        }
    }
}
