//! Names and open files: the table of open file descriptions (what a
//! file id names), `open`, `close`, `lseek`, `stat`, and every order on
//! names — directories, links, symlinks, modes and times, truncation,
//! `access`, `getcwd`, descriptor references and flags, and the lookup of
//! a program for `execve`.

use crate::open::{Kind, Open, FREE};
use crate::slots::T;
use crate::{word, Reply, Unixd};
use stet_rt::key::Answer;
use stet_unix::cred;
use stet_unix::fs;
use stet_unix::fs::{mode, ROOT};
use stet_unix::proto as p;
use stet_unix::proto::{at, o};
use stet_unix::sys::errno::*;
use stet_unixfs::inotify::mask as ev;

impl Unixd<'_> {
    pub(crate) fn fid(&self, fid: u64) -> Result<usize, i64> {
        match self.open.get(fid as usize) {
            Some(o) if o.kind != Kind::Free => Ok(fid as usize),
            _ => Err(EBADF),
        }
    }

    pub(crate) fn new_fid(&mut self, kind: Kind, flags: u64) -> Result<u64, i64> {
        let i = crate::table::take(&mut self.open, |o| o.kind == Kind::Free, FREE).ok_or(ENFILE)?;
        self.open[i] = Open {
            kind,
            refs: 1,
            flags,
            off: 0,
        };
        Ok(i as u64)
    }

    /// The directory a path is relative to (`u64::MAX`: the root, for a
    /// process that has no working directory yet).
    pub(crate) fn base(&self, fid: u64) -> Result<u32, i64> {
        if fid == u64::MAX {
            return Ok(ROOT);
        }
        match self.open.get(fid as usize).map(|o| o.kind) {
            // A directory removed while open holds no names (Linux: ENOENT).
            Some(Kind::Inode(ino)) if self.fs.inode(ino).is_none_or(|i| i.nlink == 0) => {
                Err(ENOENT)
            }
            Some(Kind::Inode(ino)) if self.fs.is_dir(ino) => Ok(ino),
            Some(Kind::Free) | None => Err(EBADF),
            Some(_) => Err(ENOTDIR),
        }
    }

    /// Puts `openat2`'s `RESOLVE_*` limits (`resolve`) on this order's
    /// walks from `dir` (`handle` lifts them before the next order).
    fn limit_walk(&mut self, dir: u32, resolve: u64) {
        use stet_unixfs::fs::Resolve;
        let proc_dir = self.proc_root().unwrap_or(u32::MAX);
        let mut r = Resolve::NONE;
        if resolve & p::resolve::BENEATH != 0 {
            r.beneath = dir;
        }
        r.no_symlinks = resolve & p::resolve::NO_SYMLINKS != 0;
        if resolve & p::resolve::NO_MAGICLINKS != 0 {
            r.magic = proc_dir;
        }
        if resolve & p::resolve::NO_XDEV != 0 {
            r.mount = proc_dir;
        }
        if resolve & p::resolve::IN_ROOT != 0 {
            self.fs.root = dir;
        }
        self.fs.resolve = r;
    }

    pub(crate) fn inode_of(&self, fid: usize) -> Option<u32> {
        match self.open[fid].kind {
            Kind::Inode(i) => Some(i),
            _ => None,
        }
    }

    /// Frees an inode that has no names once no open file holds it.
    pub(crate) fn maybe_free(&mut self, ino: u32) {
        let held = self.open.iter().any(|o| o.kind == Kind::Inode(ino))
            || self.pipes.iter().any(|p| p.used && p.fifo == ino);
        let named = self.fs.inode(ino).is_some_and(|i| i.nlink > 0);
        if !held && !named {
            self.inotify_gone(ino);
            self.forget_generated(ino);
            self.ipc.mq_gone(ino);
            self.sock_inode_gone(ino);
            self.seals_gone(ino);
            if self
                .fs
                .inode(ino)
                .is_some_and(|i| i.mode & mode::FMT == mode::REG)
            {
                self.content.free(ino);
            }
            self.fs.free(ino);
        }
    }

    fn open_path(
        &mut self,
        base: u64,
        flags: u64,
        perm: u64,
        path: &[u8],
    ) -> Result<[u64; 3], i64> {
        let dir = self.base(base)?;
        // `openat2`'s RESOLVE_* flags ride above the open flags.
        let (flags, resolve) = (flags & p::OPEN_FLAGS, flags >> p::RESOLVE_SHIFT);
        if resolve != 0 {
            self.limit_walk(dir, resolve);
        }
        let follow = flags & o::NOFOLLOW == 0;
        let now = self.time();
        let mut made = false;
        let ino = match self.resolve_seeing_proc(dir, path, follow) {
            Ok(ino) => {
                if flags & o::CREAT != 0 && flags & o::EXCL != 0 {
                    return Err(EEXIST);
                }
                ino
            }
            Err(ENOENT) if flags & o::CREAT != 0 => {
                let par = self.fs.parent(dir, path)?;
                made = true;
                let ino =
                    self.fs
                        .create(par.dir, par.name, mode::REG | (perm as u32 & 0o7777), now)?;
                self.inotify_entry(par.dir, par.name, ino, ev::CREATE, 0);
                ino
            }
            Err(e) => return Err(e),
        };
        self.open_inode(ino, flags, made)
    }

    /// `OPEN_HANDLE`: opens inode `w0` (`name_to_handle_at`'s handle) with
    /// flags `w1`; `w2` the mount descriptor's fid (`u64::MAX`: the working
    /// directory) must be of the root file system and the inode alive
    /// (`ESTALE`).
    pub(crate) fn open_handle(&mut self, w: [u64; 4]) -> Result<[u64; 3], i64> {
        if w[2] != u64::MAX {
            let f = self.fid(w[2])?;
            match self.open[f].kind {
                Kind::Inode(i) if !self.in_proc(i, None) => {}
                _ => return Err(ESTALE),
            }
        }
        let ino = u32::try_from(w[0]).map_err(|_| ESTALE)?;
        let alive = self.fs.inode(ino).is_some_and(|i| i.nlink > 0);
        if ino == 0 || !alive || self.in_proc(ino, None) {
            return Err(ESTALE);
        }
        let flags = w[1] & p::OPEN_FLAGS & !(o::CREAT | o::EXCL);
        self.open_inode(ino, flags, false)
    }

    /// Opens inode `ino` (found, or `made` by this call) with `flags`.
    fn open_inode(&mut self, ino: u32, flags: u64, made: bool) -> Result<[u64; 3], i64> {
        let now = self.time();
        self.refresh(ino);
        let i = *self.fs.inode(ino).ok_or(ENOENT)?;
        let fmt = i.mode & mode::FMT;
        let acc = flags & o::ACCMODE;
        if flags & o::PATH == 0 {
            if fmt == mode::LNK {
                return Err(ELOOP);
            }
            // A socket's name is not opened (Linux: ENXIO).
            if fmt == mode::SOCK {
                return Err(ENXIO);
            }
            // A directory opens only to read, and `O_CREAT` makes none.
            if fmt == mode::DIR && (acc != o::RDONLY || flags & o::CREAT != 0) {
                return Err(EISDIR);
            }
        }
        if flags & o::DIRECTORY != 0 && fmt != mode::DIR {
            return Err(ENOTDIR);
        }
        // `O_NOATIME` is the owner's (or a privileged caller's).
        if flags & o::NOATIME != 0 && flags & o::PATH == 0 && !self.fs.who.owns(i.owner()) {
            return Err(EPERM);
        }
        // The file's mode bits (a file this call made opens as asked).
        if flags & o::PATH == 0 && !made {
            let mut want = match acc {
                o::RDONLY => cred::want::R,
                o::WRONLY => cred::want::W,
                _ => cred::want::R | cred::want::W,
            };
            if flags & o::TRUNC != 0 {
                want |= cred::want::W;
            }
            self.fs.who.check(i.owner(), want)?;
        }
        // Device nodes by number: the memory devices (1:3 null, 1:5
        // zero, 1:8 random, 1:9 urandom) and the terminals (majors 4 and
        // 5); any other device, a block device or a socket is `ENXIO`.
        let kind = match fmt {
            _ if flags & o::PATH != 0 => Kind::Inode(ino),
            mode::CHR => match i.rdev {
                0x103 => Kind::Null,
                0x105 => Kind::Zero,
                0x108 | 0x109 => Kind::Random,
                r if matches!(r >> 8, 4 | 5) => Kind::Tty,
                _ => return Err(ENXIO),
            },
            mode::BLK | mode::SOCK => return Err(ENXIO),
            mode::FIFO => return self.open_fifo(ino, flags, i.mode),
            _ => Kind::Inode(ino),
        };
        if fmt == mode::REG {
            self.break_leases(ino, acc != o::RDONLY);
        }
        let trunc = fmt == mode::REG && flags & o::TRUNC != 0 && acc != o::RDONLY;
        // (A file this call made is empty: no `IN_MODIFY`, as on Linux.)
        if trunc {
            self.content.truncate(ino, i.size, 0)?;
            if let Some(m) = self.fs.inode_mut(ino) {
                m.size = 0;
                m.mtime = now;
            }
        }
        let fid = self.new_fid(kind, flags & !(o::CREAT | o::EXCL | o::TRUNC | o::CLOEXEC))?;
        if flags & o::PATH == 0 {
            if trunc && !made {
                self.inotify_inode(ino, ev::MODIFY);
            }
            self.inotify_inode(ino, ev::OPEN);
        }
        Ok([fid, ino as u64, i.mode as u64])
    }

    pub(crate) fn close(&mut self, fid: u64) -> Result<u64, i64> {
        let f = self.fid(fid)?;
        let o = &mut self.open[f];
        o.refs -= 1;
        let (kind, last, flags) = (o.kind, o.refs == 0, o.flags);
        if last {
            *o = FREE;
            self.extra_gone(fid);
        }
        if let (Kind::Inode(ino), true) = (kind, last && flags & o::PATH == 0) {
            let wrote = flags & o::ACCMODE != o::RDONLY;
            let e = if wrote {
                ev::CLOSE_WRITE
            } else {
                ev::CLOSE_NOWRITE
            };
            self.inotify_inode(ino, e);
        }
        // A pipe counts its ends by references: a reader sees end of file
        // when the last reference to a write end is gone.
        if let Kind::Inode(ino) = kind {
            self.flocks_on_close(fid as u32, ino, last);
        }
        // Its entries in epolls go with the description.
        if last {
            self.epoll_forget(fid as u32, kind);
        }
        match kind {
            Kind::Inode(ino) if last => {
                self.maybe_free(ino);
                self.shm_closed(ino);
            }
            Kind::Inode(ino) => self.shm_closed(ino),
            Kind::Event(_) | Kind::Timer(_) if last => self.fdobj_free(kind),
            Kind::Inotify(n) if last => self.inotify_free(n),
            Kind::Socket(n) if last => self.sock_close(n),
            Kind::Epoll(_) | Kind::Signal(_) if last => {}
            Kind::PipeRead(n) | Kind::PipeWrite(n) | Kind::PipeBoth(n) => {
                let (_, r, w) = kind.pipe().unwrap_or((n, false, false));
                let pi = &mut self.pipes[n as usize];
                pi.readers -= r as u32;
                pi.writers -= w as u32;
                self.pipe_changed(n);
            }
            _ => {}
        }
        Ok(0)
    }

    fn lseek(&mut self, fid: u64, off: u64, whence: u64) -> Result<u64, i64> {
        let f = self.fid(fid)?;
        let size = match self.open[f].kind {
            Kind::Inode(ino) => self.fs.inode(ino).map_or(0, |i| i.size),
            Kind::PipeRead(_)
            | Kind::PipeWrite(_)
            | Kind::PipeBoth(_)
            | Kind::Tty
            | Kind::Event(_)
            | Kind::Socket(_)
            | Kind::Timer(_)
            | Kind::Epoll(_)
            | Kind::Signal(_)
            | Kind::Pidfd(_) => return Err(ESPIPE),
            // inotify's `noop_llseek`: the offset stays 0.
            Kind::Inotify(_) => return Ok(0),
            _ => 0,
        };
        let base = match whence {
            0 => 0,
            1 => self.open[f].off,
            2 => size,
            // SEEK_DATA, SEEK_HOLE: a page the file has is data, a page it
            // does not is a hole (it reads as zeros), and the end is a
            // hole; at or past the end (or before the start) there is
            // neither (`ENXIO`).
            3 | 4 => {
                if off >= size {
                    return Err(ENXIO);
                }
                let to = self.seek_data_hole(f, off, size, whence == 3)?;
                self.open[f].off = to;
                return Ok(to);
            }
            _ => return Err(EINVAL),
        };
        let new = (base as i64).checked_add(off as i64).ok_or(EINVAL)?;
        if new < 0 {
            return Err(EINVAL);
        }
        self.open[f].off = new as u64;
        Ok(new as u64)
    }

    /// The first data (`data`) or hole at or after `off` (below `size`) of
    /// fid index `f`'s file, by pages; `ENXIO` for no data before the end.
    fn seek_data_hole(&self, f: usize, off: u64, size: u64, data: bool) -> Result<u64, i64> {
        const PAGE: u64 = 4096;
        let Kind::Inode(ino) = self.open[f].kind else {
            return if data { Ok(off) } else { Ok(size) };
        };
        if self
            .fs
            .inode(ino)
            .is_none_or(|i| i.mode & mode::FMT != mode::REG)
        {
            return if data { Ok(off) } else { Ok(size) };
        }
        let (first, end) = (off / PAGE, size.div_ceil(PAGE));
        let mut found_data = None;
        let mut next = first;
        let mut hole = None;
        self.content.pages_of(ino, first, end, |p| {
            found_data.get_or_insert(p);
            if hole.is_none() {
                if p != next {
                    hole = Some(next);
                } else {
                    next = p + 1;
                }
            }
        });
        if data {
            match found_data {
                Some(p) if p == first => Ok(off),
                Some(p) => Ok(p * PAGE),
                None => Err(ENXIO),
            }
        } else {
            let h = hole.unwrap_or(next);
            Ok(if h == first {
                off
            } else {
                (h * PAGE).min(size)
            })
        }
    }

    fn stat_of(&self, kind: Kind) -> Result<[u8; 144], i64> {
        match kind {
            // Linux's anonymous inodes: no type bits, 0600.
            Kind::Event(n)
            | Kind::Timer(n)
            | Kind::Epoll(n)
            | Kind::Signal(n)
            | Kind::Inotify(n) => {
                let mut i = *self.fs.inode(ROOT).ok_or(EIO)?;
                i.mode = 0o600;
                i.nlink = 1;
                i.size = 0;
                i.rdev = 0;
                Ok(fs::stat_bytes(0x3000_0000 + n as u32, &i))
            }
            Kind::Pidfd(pid) => {
                let mut i = *self.fs.inode(ROOT).ok_or(EIO)?;
                i.mode = 0o600;
                i.nlink = 1;
                i.size = 0;
                i.rdev = 0;
                Ok(fs::stat_bytes(0x4000_0000 + pid, &i))
            }
            Kind::Inode(ino) => self.fs.stat(ino),
            Kind::Socket(n) => self.sock_stat(n),
            Kind::PipeRead(n) | Kind::PipeWrite(n) | Kind::PipeBoth(n)
                if self.pipes[n as usize].fifo != 0 =>
            {
                self.fs.stat(self.pipes[n as usize].fifo)
            }
            Kind::PipeRead(n) | Kind::PipeWrite(n) | Kind::PipeBoth(n) => {
                let mut i = *self.fs.inode(ROOT).ok_or(EIO)?;
                i.mode = mode::FIFO | 0o600;
                i.nlink = 1;
                i.size = 0;
                Ok(fs::stat_bytes(0x1000_0000 + n as u32, &i))
            }
            _ => {
                let rdev = match kind {
                    Kind::Null => 0x103,
                    Kind::Zero => 0x105,
                    Kind::Random => 0x109,
                    _ => 0x500,
                };
                let mut i = *self.fs.inode(ROOT).ok_or(EIO)?;
                i.mode = mode::CHR | 0o666;
                i.nlink = 1;
                i.size = 0;
                i.rdev = rdev;
                Ok(fs::stat_bytes(0x2000_0000 + rdev, &i))
            }
        }
    }

    /// The orders on names and open files: open, stat, directories, links, modes, times, descriptors, `execve`'s lookup.
    pub(crate) fn file_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let w = a.w;
        self.act_as_caller();
        match a.code {
            p::CHOWN => word(self.chown(a, s)),
            p::XATTR => self.xattr(a, s, out),
            p::OPEN => match self.open_path(w[0], w[1], w[2], s) {
                Ok(v) => Ok(Reply::Now(v, 0, false)),
                Err(e) => word(Err(e)),
            },
            p::OPEN_HANDLE => match self.open_handle(w) {
                Ok(v) => Ok(Reply::Now(v, 0, false)),
                Err(e) => word(Err(e)),
            },
            p::CLOSE => {
                if w[1] & p::CLOSE_FD != 0 {
                    self.fd_closed(w[0]);
                }
                word(self.close(w[0]))
            }
            p::LSEEK => word(self.lseek(w[0], w[1], w[2])),
            p::FSTAT => {
                let f = self.fid(w[0])?;
                let st = self.stat_of(self.open[f].kind)?;
                out[..144].copy_from_slice(&st);
                Ok(Reply::Now([0, 0, 0], 144, false))
            }
            p::STAT => {
                let kind = if s.is_empty() && w[1] & at::EMPTY_PATH != 0 {
                    self.open[self.fid(w[0])?].kind
                } else {
                    let dir = self.base(w[0])?;
                    Kind::Inode(self.resolve_seeing_proc(
                        dir,
                        s,
                        w[1] & at::SYMLINK_NOFOLLOW == 0,
                    )?)
                };
                let st = self.stat_of(kind)?;
                out[..144].copy_from_slice(&st);
                Ok(Reply::Now([0, 0, 0], 144, false))
            }
            p::GETDENTS => {
                let f = self.fid(w[0])?;
                let ino = self.inode_of(f).ok_or(ENOTDIR)?;
                let len = (w[1] as usize).min(out.len());
                let (n, next) = self.fs.getdents(ino, self.open[f].off, &mut out[..len])?;
                self.open[f].off = next;
                // Each listing of a directory is an access (Linux's
                // `iterate_dir`).
                self.inotify_inode(ino, ev::ACCESS);
                Ok(Reply::Now([n as u64, 0, 0], n, false))
            }
            p::MKDIR => {
                let now = self.time();
                let par = self.fs.parent(self.base(w[0])?, s)?;
                // `/` (no last name), `.` and `..` name directories that
                // exist (Linux: EEXIST, which `mkdir -p` relies on).
                if matches!(par.name, b"" | b"." | b"..") {
                    return Err(EEXIST);
                }
                let ino =
                    self.fs
                        .create(par.dir, par.name, mode::DIR | (w[1] as u32 & 0o7777), now)?;
                self.inotify_entry(par.dir, par.name, ino, ev::CREATE, 0);
                word(Ok(0))
            }
            p::UNLINK => {
                let now = self.time();
                let par = self.fs.parent(self.base(w[0])?, s)?;
                if w[1] & at::REMOVEDIR != 0 {
                    let ino = self.fs.rmdir_keep(par.dir, par.name, now)?;
                    self.inotify_entry(par.dir, par.name, ino, ev::DELETE, 0);
                    self.maybe_free(ino);
                } else {
                    let (ino, gone) = self.fs.unlink(par.dir, par.name, now)?;
                    // The link count changed, then the name went.
                    self.inotify_self(ino, ev::ATTRIB);
                    self.inotify_entry(par.dir, par.name, ino, ev::DELETE, 0);
                    if gone {
                        self.maybe_free(ino);
                        self.inotify_orphan(ino, par.dir, par.name);
                    }
                }
                word(Ok(0))
            }
            p::RENAME | p::LINK => {
                let now = self.time();
                let z = s.iter().position(|&b| b == 0).ok_or(EINVAL)?;
                let (from, to) = (&s[..z], &s[z + 1..]);
                let p1 = self.fs.parent(self.base(w[0])?, from)?;
                let p2 = self.fs.parent(self.base(w[1])?, to)?;
                if a.code == p::RENAME {
                    // RENAME_NOREPLACE 1, RENAME_EXCHANGE 2 (not both);
                    // RENAME_WHITEOUT (4, for overlay file systems) and
                    // anything else are refused.
                    if w[2] & !3 != 0 || w[2] == 3 {
                        return Err(EINVAL);
                    }
                    let moved = self.fs.lookup(p1.dir, p1.name);
                    let target = self.fs.lookup(p2.dir, p2.name);
                    if w[2] & 2 != 0 {
                        self.fs.exchange(p1.dir, p1.name, p2.dir, p2.name, now)?;
                        if let (Some(a), Some(b)) = (moved, target) {
                            self.inotify_moved(p1.dir, p1.name, p2.dir, p2.name, a);
                            self.inotify_moved(p2.dir, p2.name, p1.dir, p1.name, b);
                        }
                        return word(Ok(0));
                    }
                    if w[2] & 1 != 0 && target.is_some() {
                        return Err(EEXIST);
                    }
                    let freed = self.fs.rename(p1.dir, p1.name, p2.dir, p2.name, now)?;
                    // Renaming a file to a name of itself does nothing.
                    if let Some(m) = moved.filter(|&m| Some(m) != target) {
                        self.inotify_moved(p1.dir, p1.name, p2.dir, p2.name, m);
                        if let Some(t) = target {
                            self.inotify_self(t, ev::ATTRIB);
                        }
                        self.inotify_self(m, ev::MOVE_SELF);
                    }
                    if let Some((ino, true)) = freed {
                        self.maybe_free(ino);
                    }
                } else {
                    let follow = w[2] & at::SYMLINK_FOLLOW != 0;
                    let ino = self.fs.resolve(self.base(w[0])?, from, follow)?;
                    // `/proc` is another file system: no link into or
                    // out of it (Linux's `EXDEV` across mounts).
                    if self.in_proc(ino, Some(p1.dir)) != self.in_proc(p2.dir, None) {
                        return Err(EXDEV);
                    }
                    self.fs.link(p2.dir, p2.name, ino, now)?;
                    self.inotify_self(ino, ev::ATTRIB);
                    self.inotify_entry(p2.dir, p2.name, ino, ev::CREATE, 0);
                }
                word(Ok(0))
            }
            p::SYMLINK => {
                let now = self.time();
                let z = s.iter().position(|&b| b == 0).ok_or(EINVAL)?;
                let par = self.fs.parent(self.base(w[0])?, &s[z + 1..])?;
                let ino = self.fs.symlink(par.dir, par.name, &s[..z], now)?;
                self.inotify_entry(par.dir, par.name, ino, ev::CREATE, 0);
                word(Ok(0))
            }
            p::READLINK => {
                // An empty path reads the link fid `w0` itself names (an
                // `O_PATH | O_NOFOLLOW` descriptor of a symbolic link).
                let ino = if s.is_empty() {
                    let f = self.fid(w[0])?;
                    self.inode_of(f).ok_or(EINVAL)?
                } else {
                    self.resolve_seeing_proc(self.base(w[0])?, s, false)?
                };
                let t = self.fs.link_target(ino).ok_or(EINVAL)?;
                out[..t.len()].copy_from_slice(t);
                Ok(Reply::Now([t.len() as u64, 0, 0], t.len(), false))
            }
            p::CHMOD | p::UTIMENS => {
                let now = self.time();
                let ino = if s.is_empty() {
                    let f = self.fid(w[0])?;
                    self.inode_of(f).ok_or(EPERM)?
                } else {
                    self.fs.resolve(self.base(w[0])?, s, true)?
                };
                let who = self.fs.who;
                let i = self.fs.inode_mut(ino).ok_or(ENOENT)?;
                // What inotify sees: a mode or both times `IN_ATTRIB`, the
                // access time alone `IN_ACCESS`, the other alone
                // `IN_MODIFY` (Linux's `fsnotify_change`).
                let event = match (w[1] == u64::MAX - 1, w[2] == u64::MAX - 1) {
                    _ if a.code == p::CHMOD => ev::ATTRIB,
                    (false, true) => ev::ACCESS,
                    (true, false) => ev::MODIFY,
                    _ => ev::ATTRIB,
                };
                if a.code == p::CHMOD {
                    i.mode = who.chmod(i.owner(), w[1] as u32)?;
                } else {
                    let explicit = |v: u64| v < u64::MAX - 1;
                    if w[1] == u64::MAX - 1 && w[2] == u64::MAX - 1 {
                        return word(Ok(0));
                    }
                    who.may_touch(i.owner(), explicit(w[1]) || explicit(w[2]))?;
                    let pick = |v: u64, old: u64| match v {
                        u64::MAX => now,
                        x if x == u64::MAX - 1 => old,
                        x => x,
                    };
                    i.atime = pick(w[1], i.atime);
                    i.mtime = pick(w[2], i.mtime);
                }
                i.ctime = now;
                self.inotify_inode(ino, event);
                word(Ok(0))
            }
            p::TRUNCATE => {
                let now = self.time();
                let ino = if s.is_empty() {
                    let f = self.fid(w[0])?;
                    if self.open[f].flags & o::ACCMODE == o::RDONLY {
                        return Err(EINVAL);
                    }
                    self.inode_of(f).ok_or(EINVAL)?
                } else {
                    self.fs.resolve(self.base(w[0])?, s, true)?
                };
                let i = *self.fs.inode(ino).ok_or(ENOENT)?;
                if i.mode & mode::FMT == mode::DIR {
                    return Err(EISDIR);
                }
                if i.mode & mode::FMT != mode::REG {
                    return Err(EINVAL);
                }
                if !s.is_empty() {
                    self.fs.who.check(i.owner(), cred::want::W)?;
                }
                // Not past the caller's `RLIMIT_FSIZE` (`w2`, as `WRITE`'s).
                if w[1] > !w[2] {
                    return Err(EFBIG);
                }
                if w[1] > i64::MAX as u64 {
                    return Err(EINVAL);
                }
                // A sealed memfd may not shrink or grow (`memfds`).
                let seals = self.seals_of(ino);
                if (w[1] < i.size && seals & crate::memfds::SEAL_SHRINK != 0)
                    || (w[1] > i.size && seals & crate::memfds::SEAL_GROW != 0)
                {
                    return Err(EPERM);
                }
                self.content.truncate(ino, i.size, w[1])?;
                let m = self.fs.who.after_write(i.owner());
                if let Some(n) = self.fs.inode_mut(ino) {
                    n.size = w[1];
                    n.mtime = now;
                    n.ctime = now;
                    n.mode = m;
                }
                self.inotify_inode(ino, ev::MODIFY);
                word(Ok(0))
            }
            p::ACCESS => {
                // `access` asks as the real user (`AT_EACCESS`: as the
                // effective one), from the walk on.
                if w[2] & at::EACCESS == 0 {
                    self.fs.who = self.fs.who.as_real();
                }
                if w[1] & !7 != 0 {
                    return Err(EINVAL);
                }
                let follow = w[2] & at::SYMLINK_NOFOLLOW == 0;
                let ino = self.resolve_seeing_proc(self.base(w[0])?, s, follow)?;
                let i = self.fs.inode(ino).ok_or(ENOENT)?;
                self.fs.who.check(i.owner(), w[1] as u32)?;
                word(Ok(0))
            }
            p::GETCWD => {
                let dir = self.base(w[0])?;
                let n = self.fs.path_of(dir, &mut out[..4095])?;
                out[n] = 0;
                Ok(Reply::Now([n as u64 + 1, 0, 0], n + 1, false))
            }
            p::DUP => {
                let f = self.fid(w[0])?;
                self.open[f].refs += 1;
                self.pipe_ref(self.open[f].kind);
                word(Ok(0))
            }
            p::FLAGS => {
                let f = self.fid(w[0])?;
                if w[1] == 0 {
                    word(Ok(self.open[f].flags))
                } else {
                    let keep = o::APPEND | o::NONBLOCK | o::DIRECT | o::ASYNC;
                    let fl = &mut self.open[f].flags;
                    *fl = (*fl & !keep) | (w[2] & keep);
                    word(Ok(0))
                }
            }
            p::EXEC => {
                let ino = self.resolve_seeing_proc(self.base(w[0])?, s, true)?;
                let i = *self.fs.inode(ino).ok_or(ENOENT)?;
                if i.mode & mode::FMT == mode::DIR {
                    return Err(EACCES);
                }
                if i.mode & mode::FMT != mode::REG {
                    return Err(EACCES);
                }
                self.fs.who.check(i.owner(), cred::want::X)?;
                self.content.segment(ino, T)?;
                // w0 1: set-user-ID or set-group-ID (the keeper asks `CRED`
                // `EXEC` only then, or when its ids need it).
                let setid =
                    i.mode & mode::SUID != 0 || i.mode & (mode::SGID | 0o010) == mode::SGID | 0o010;
                Ok(Reply::Now([setid as u64, i.size, ino as u64], 0, true))
            }
            _ => Err(ENOSYS),
        }
    }
}
