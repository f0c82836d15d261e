//! inotify: each instance is an open file description of its own kind
//! (`Kind::Inotify`) naming an entry of `Unixd::inotifies`, whose watch
//! list and event queue are `stet_unixfs::inotify::Instance`. The file
//! operations here call [`Unixd::inotify_inode`] (an event of an inode:
//! its own watches and those of the directories that name it),
//! [`Unixd::inotify_entry`] (an entry made, removed or moved) and
//! [`Unixd::inotify_self`] (`IN_MOVE_SELF`); a freed inode's watches end
//! with `IN_DELETE_SELF` and `IN_IGNORED` (`inotify_gone`, from
//! `maybe_free`). A file unlinked while open remembers its last directory
//! and name (`orphans`), so that directory's watches still see it, as on
//! Linux, unless they asked `IN_EXCL_UNLINK`. Reads wait (park) as pipe
//! reads do; an event wakes them and epolls. The per-user limits
//! (`/proc/sys/fs/inotify/*`) are counted over the instances when one is
//! made or a watch added.

use crate::open::Kind;
use crate::wait::Wait;
use crate::{word, Reply, Unixd};
use alloc::vec::Vec;
use stet_rt::key::Answer;
use stet_unix::cred;
use stet_unix::fs::mode;
use stet_unix::proto as p;
use stet_unix::proto::o;
use stet_unix::sys::errno::*;
use stet_unixfs::inotify::{check_mask, mask, Instance, What};

/// `/proc/sys/fs/inotify`'s settings.
#[derive(Clone, Copy)]
pub(crate) struct Limits {
    /// Instances one real user may have.
    pub(crate) instances: u64,
    /// Watches one real user may have in all its instances.
    pub(crate) watches: u64,
    /// Events an instance made from now on queues before overflowing.
    pub(crate) queued: u64,
}

impl Limits {
    /// Linux's defaults; the watches as Linux sizes them, by memory (1 %
    /// of unixd's file pages at about 1 KiB a watch, 8,192 to 1,048,576).
    pub(crate) fn new(files_pages: u64) -> Limits {
        Limits {
            instances: 128,
            watches: (files_pages.saturating_mul(4096) / 100 / 1024).clamp(8192, 1 << 20),
            queued: 16384,
        }
    }
}

/// Text formatted onto the end of a string.
struct Line<'a>(&'a mut alloc::string::String);

impl Line<'_> {
    fn put(&mut self, args: core::fmt::Arguments<'_>) {
        let _ = core::fmt::Write::write_fmt(self.0, args);
    }
}

/// An inode unlinked while open: its last directory and name.
pub(crate) struct Orphan {
    ino: u32,
    dir: u32,
    name: Vec<u8>,
}

impl Unixd<'_> {
    /// `INOTIFY_INIT`, `INOTIFY_ADD`, `INOTIFY_RM`.
    pub(crate) fn inotify_order(&mut self, a: &Answer, s: &[u8]) -> Result<Reply, i64> {
        let w = a.w;
        self.act_as_caller();
        match a.code {
            p::INOTIFY_INIT => {
                let uid = self.fs.who.uid[0];
                let mine = self.inotifies.iter().flatten().filter(|i| i.uid == uid);
                if mine.count() as u64 >= self.inotify_limits.instances {
                    return Err(EMFILE);
                }
                let i = crate::table::take(&mut self.inotifies, |i| i.is_none(), None)
                    .filter(|&i| i <= u16::MAX as usize)
                    .ok_or(ENFILE)?;
                let fid =
                    self.new_fid(Kind::Inotify(i as u16), o::RDONLY | (w[0] & o::NONBLOCK))?;
                let max = self.inotify_limits.queued.min(i32::MAX as u64) as u32;
                self.inotifies[i] = Some(Instance::new(uid, max));
                word(Ok(fid))
            }
            p::INOTIFY_ADD => {
                let m = w[2] as u32;
                check_mask(m)?;
                let f = self.fid(w[0])?;
                let Kind::Inotify(n) = self.open[f].kind else {
                    return Err(EINVAL);
                };
                let follow = m & mask::DONT_FOLLOW == 0;
                let ino = self.resolve_seeing_proc(self.base(w[1])?, s, follow)?;
                let i = *self.fs.inode(ino).ok_or(ENOENT)?;
                if m & mask::ONLYDIR != 0 && i.mode & mode::FMT != mode::DIR {
                    return Err(ENOTDIR);
                }
                self.fs.who.check(i.owner(), cred::want::R)?;
                let uid = self.fs.who.uid[0];
                let watches: usize = self
                    .inotifies
                    .iter()
                    .flatten()
                    .filter(|i| i.uid == uid)
                    .map(|i| i.watches().len())
                    .sum();
                let room = (watches as u64) < self.inotify_limits.watches;
                let inst = self.inotifies[n as usize].as_mut().ok_or(EINVAL)?;
                let (wd, _) = inst.add_watch(ino, m, room)?;
                word(Ok(wd as u64))
            }
            p::INOTIFY_RM => {
                let f = self.fid(w[0])?;
                let Kind::Inotify(n) = self.open[f].kind else {
                    return Err(EINVAL);
                };
                let inst = self.inotifies[n as usize].as_mut().ok_or(EINVAL)?;
                inst.rm_watch(w[1] as i32)?;
                self.inotify_wake();
                word(Ok(0))
            }
            _ => Err(ENOSYS),
        }
    }

    /// A read of instance `n` through fid `f`: whole records, or a wait.
    pub(crate) fn inotify_read(
        &mut self,
        f: usize,
        n: u16,
        len: usize,
        out: &mut [u8],
    ) -> Result<Reply, i64> {
        let nonblock = self.open[f].flags & o::NONBLOCK != 0;
        let inst = self.inotifies[n as usize].as_mut().ok_or(EBADF)?;
        if inst.is_empty() {
            return if nonblock {
                Err(EAGAIN)
            } else {
                self.park(Wait::Inotify(n))
            };
        }
        let got = inst.read(&mut out[..len])?;
        Ok(Reply::Now([got as u64, 0, 0], got, false))
    }

    /// The `poll` readiness of instance `n` (`POLLIN` with events queued)
    /// and its generation.
    pub(crate) fn inotify_poll(&self, n: u16) -> (bool, u32) {
        match self.inotifies.get(n as usize) {
            Some(Some(i)) => (!i.is_empty(), i.gen),
            _ => (false, 0),
        }
    }

    /// `FIONREAD` of instance `n`.
    pub(crate) fn inotify_pending(&self, n: u16) -> u64 {
        match self.inotifies.get(n as usize) {
            Some(Some(i)) => i.pending() as u64,
            _ => 0,
        }
    }

    /// The description of instance `n` lost its last reference.
    pub(crate) fn inotify_free(&mut self, n: u16) {
        if let Some(i) = self.inotifies.get_mut(n as usize) {
            *i = None;
        }
    }

    /// Whether any instance watches anything (else events cost nothing).
    fn watching(&self) -> bool {
        self.inotifies
            .iter()
            .flatten()
            .any(|i| !i.watches().is_empty())
    }

    /// Events were queued: parked reads and epolls look again.
    fn inotify_wake(&mut self) {
        self.epoll_wake();
        for i in 0..self.waiters.len() {
            if matches!(self.waiters[i].on, Wait::Inotify(_)) {
                self.wake(i);
            }
        }
    }

    /// Tells every instance; wakes readers if one queued something.
    fn tell(&mut self, w: What<'_>) -> bool {
        let mut any = false;
        for i in self.inotifies.iter_mut().flatten() {
            any |= i.notify(w);
        }
        any
    }

    /// `event` (`IN_ACCESS`, `IN_MODIFY`, `IN_ATTRIB`, `IN_OPEN`,
    /// `IN_CLOSE_*`) happened to inode `ino`: first the watched
    /// directories that name it see it with the name, then its own
    /// watches.
    pub(crate) fn inotify_inode(&mut self, ino: u32, event: u32) {
        if !self.watching() {
            return;
        }
        let isdir = self.fs.is_dir(ino);
        let mut any = false;
        // The directories watched for this event.
        let mut dirs: Vec<u32> = Vec::new();
        for i in self.inotifies.iter().flatten() {
            for w in i.watches() {
                if w.mask & event != 0 && w.ino != ino && !dirs.contains(&w.ino) {
                    if dirs.try_reserve(1).is_err() {
                        break;
                    }
                    dirs.push(w.ino);
                }
            }
        }
        let mut name = [0u8; 256];
        for d in dirs {
            let named = if isdir {
                // A directory's one name is in its parent.
                match self.fs.inode(ino) {
                    Some(i) if i.aux == d => self.fs.name_in(d, ino),
                    _ => None,
                }
            } else {
                self.fs.name_in(d, ino)
            };
            let (len, unlinked) = match named {
                Some(nm) => {
                    let l = nm.len().min(name.len());
                    name[..l].copy_from_slice(&nm[..l]);
                    (l, false)
                }
                None => match self.orphans.iter().find(|o| o.ino == ino && o.dir == d) {
                    Some(o) => {
                        let l = o.name.len().min(name.len());
                        name[..l].copy_from_slice(&o.name[..l]);
                        (l, true)
                    }
                    None => continue,
                },
            };
            any |= self.tell(What {
                ino: d,
                event,
                isdir,
                cookie: 0,
                name: Some(&name[..len]),
                unlinked,
            });
        }
        any |= self.tell(What {
            ino,
            event,
            isdir,
            cookie: 0,
            name: None,
            unlinked: false,
        });
        if any {
            self.inotify_wake();
        }
    }

    /// `event` happened to inode `ino` alone (`IN_MOVE_SELF`, and
    /// `IN_ATTRIB` of a link count): its own watches see it.
    pub(crate) fn inotify_self(&mut self, ino: u32, event: u32) {
        if !self.watching() {
            return;
        }
        // inotify never reports `IN_ISDIR` with the `*_SELF` events.
        let isdir = event & (mask::MOVE_SELF | mask::DELETE_SELF) == 0 && self.fs.is_dir(ino);
        if self.tell(What {
            ino,
            event,
            isdir,
            cookie: 0,
            name: None,
            unlinked: false,
        }) {
            self.inotify_wake();
        }
    }

    /// Entry `name` of directory `dir`, inode `child`, was made
    /// (`IN_CREATE`), removed (`IN_DELETE`) or moved (`IN_MOVED_*`, with
    /// `cookie`).
    pub(crate) fn inotify_entry(
        &mut self,
        dir: u32,
        name: &[u8],
        child: u32,
        event: u32,
        cookie: u32,
    ) {
        if !self.watching() {
            return;
        }
        let isdir = self.fs.is_dir(child);
        if self.tell(What {
            ino: dir,
            event,
            isdir,
            cookie,
            name: Some(name),
            unlinked: false,
        }) {
            self.inotify_wake();
        }
    }

    /// Inode `ino` moved from `name1` in `dir1` to `name2` in `dir2`:
    /// `IN_MOVED_FROM` and `IN_MOVED_TO` with one cookie.
    pub(crate) fn inotify_moved(
        &mut self,
        dir1: u32,
        name1: &[u8],
        dir2: u32,
        name2: &[u8],
        ino: u32,
    ) {
        if !self.watching() {
            return;
        }
        let c = self.inotify_cookie();
        self.inotify_entry(dir1, name1, ino, mask::MOVED_FROM, c);
        self.inotify_entry(dir2, name2, ino, mask::MOVED_TO, c);
    }

    /// `/proc/<pid>/fdinfo` of the descriptors in `s` (a `u32` number and
    /// a `u32` fid each) under `/proc/<pid>` directory `dir`: a file per
    /// descriptor with Linux's `pos`, `flags`, `mnt_id` and `ino` lines
    /// and, for an inotify instance, a line per watch (`inotify wd:`…).
    pub(crate) fn fdinfo_dir(&mut self, dir: u32, s: &[u8]) {
        let now = self.time();
        let info = match self.fs.lookup(dir, b"fdinfo") {
            Some(d) => {
                self.fd_dir_clear(d);
                d
            }
            None => match self.fs.create(dir, b"fdinfo", mode::DIR | 0o500, now) {
                Ok(d) => d,
                Err(_) => return,
            },
        };
        for c in s.chunks_exact(8) {
            let n = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            let fid = u32::from_le_bytes([c[4], c[5], c[6], c[7]]) as usize;
            let Some(x) = self.open.get(fid).copied() else {
                continue;
            };
            let ino = match x.kind {
                Kind::Inode(i) => i,
                _ => 0,
            };
            let mut text = alloc::string::String::new();
            let mut t = Line(&mut text);
            t.put(format_args!(
                "pos:\t{}\nflags:\t0{:o}\nmnt_id:\t1\nino:\t{}\n",
                x.off, x.flags, ino
            ));
            if let Kind::Inotify(k) = x.kind {
                if let Some(Some(i)) = self.inotifies.get(k as usize) {
                    for w in i.watches() {
                        t.put(format_args!(
                            "inotify wd:{:x} ino:{:x} sdev:{:x} mask:{:x} ignored_mask:0\n",
                            w.wd, w.ino, 1, w.mask
                        ));
                    }
                }
            }
            let mut name = [0u8; 10];
            let name = crate::procfs::name_of(n, &mut name);
            if let Ok(f) = self.fs.create(info, name, mode::REG | 0o444, now) {
                self.set_content(f, text.as_bytes());
            }
        }
    }

    /// A cookie that ties an `IN_MOVED_FROM` to its `IN_MOVED_TO`.
    pub(crate) fn inotify_cookie(&mut self) -> u32 {
        self.cookie = self.cookie.wrapping_add(1).max(1);
        self.cookie
    }

    /// Regular file `ino` lost its last name, `name` in `dir`, but stays
    /// open: remembered while watches might see it.
    pub(crate) fn inotify_orphan(&mut self, ino: u32, dir: u32, name: &[u8]) {
        if !self.watching() || self.fs.inode(ino).is_none() {
            return;
        }
        let mut n = Vec::new();
        if n.try_reserve_exact(name.len()).is_err() || self.orphans.try_reserve(1).is_err() {
            return;
        }
        n.extend_from_slice(name);
        self.orphans.retain(|o| o.ino != ino);
        self.orphans.push(Orphan { ino, dir, name: n });
    }

    /// Inode `ino` is freed: `IN_DELETE_SELF`, then its watches end
    /// (`IN_IGNORED`).
    pub(crate) fn inotify_gone(&mut self, ino: u32) {
        self.orphans.retain(|o| o.ino != ino);
        if !self.watching() {
            return;
        }
        let mut any = false;
        for i in self.inotifies.iter_mut().flatten() {
            if i.watches().iter().any(|w| w.ino == ino) {
                i.notify(What {
                    ino,
                    event: mask::DELETE_SELF,
                    isdir: false,
                    cookie: 0,
                    name: None,
                    unlinked: false,
                });
                i.inode_gone(ino);
                any = true;
            }
        }
        if any {
            self.inotify_wake();
        }
    }
}
