//! Named pipes, device nodes, pipes' sizes, `splice` and leases — orders
//! 130–139 (`proto::FIFO_WAIT` on).
//!
//! A FIFO is an inode of type `S_IFIFO`; while any end is open it has a
//! pipe (`Pipe::fifo` its inode), found again by each `open` and freed
//! with its last end, as on Linux (what is left in it goes). Opening one
//! end waits for the other (`FIFO_WAIT`, which the keeper sends after an
//! `open` that must wait), `O_NONBLOCK` never waits (a writer with no
//! reader gets `ENXIO`), `O_RDWR` is both ends at once.
//!
//! Per open file description unixd also keeps, beside `Open`, what few
//! files have: a lease (`F_SETLEASE`), an owner and a signal
//! (`F_SETOWN*`, `F_SETSIG`), in a small table (`Extra`) dropped with the
//! description's last reference.

use crate::open::{Kind, NO_PIPE};
use crate::wait::Wait;
use crate::{word, Reply, Unixd};
use stet_rt::key::Answer;
use stet_unix::fs::mode;
use stet_unix::proto as p;
use stet_unix::proto::o;
use stet_unix::sys::errno::*;
use stet_unixfs::pipe;

/// `F_RDLCK`, `F_WRLCK`, `F_UNLCK` (leases' types too).
const RDLCK: u64 = 0;
const WRLCK: u64 = 1;
const UNLCK: u64 = 2;
/// `SIGIO`, the default signal of a lease break.
const SIGIO: u64 = 29;

/// What an open file description has beyond `Open`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extra {
    /// The file id (`u32::MAX`: a free entry).
    pub fid: u32,
    /// Its lease: `F_RDLCK`, `F_WRLCK` or `F_UNLCK`.
    pub lease: u64,
    /// Its owner: `F_OWNER_*` type | pid << 32 (0: none).
    pub owner: u64,
    /// `F_SETSIG`'s signal (0: `SIGIO`).
    pub sig: u64,
}

/// A free entry.
pub const NO_EXTRA: Extra = Extra {
    fid: u32::MAX,
    lease: UNLCK,
    owner: 0,
    sig: 0,
};

impl Unixd<'_> {
    /// The orders 130–139.
    pub(crate) fn fifo_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let w = a.w;
        self.act_as_caller();
        match a.code {
            p::FIFO_WAIT => self.fifo_wait(w[0]),
            p::MKNOD => word(self.mknod(w[0], w[1], w[2], s)),
            p::PIPE_SIZE => word(self.pipe_size(w[0], w[1], w[2])),
            p::SPLICE_IO => {
                let f = self.fid(w[0])?;
                if self.open[f].kind.pipe().is_none() {
                    return Err(EINVAL);
                }
                // The caller's `SPLICE_F_NONBLOCK` as the file's own
                // `O_NONBLOCK`, for this call only.
                let saved = self.open[f].flags;
                if w[2] & p::SPLICE_NOWAIT != 0 {
                    self.open[f].flags |= o::NONBLOCK;
                }
                let r = if w[2] & p::SPLICE_WRITE != 0 {
                    self.write(w[0], s, None, 0)
                } else {
                    self.read(w[0], w[1], out, None)
                };
                if let Some(x) = self.open.get_mut(f) {
                    x.flags = (x.flags & !o::NONBLOCK) | (saved & o::NONBLOCK);
                }
                r
            }
            p::PIPE_MOVE => self.pipe_move(w[0], w[1], w[2], out),
            p::LEASE => word(self.lease(w[0], w[1], w[2])),
            p::OWNER => word(self.owner(w[0], w[1], w[2])),
            p::FD_DIR => word(self.fd_dir(a.label, s)),
            _ => Err(ENOSYS),
        }
    }

    /// One more reference to an open file `kind` (`dup`, `fork`): a pipe
    /// counts its ends.
    pub(crate) fn pipe_ref(&mut self, kind: Kind) {
        if let Some((n, r, w)) = kind.pipe() {
            let pi = &mut self.pipes[n as usize];
            pi.readers += r as u32;
            pi.writers += w as u32;
        }
    }

    /// Opens FIFO `ino` (its mode `m`) with `flags` → fid, inode, mode.
    pub(crate) fn open_fifo(&mut self, ino: u32, flags: u64, m: u32) -> Result<[u64; 3], i64> {
        let acc = flags & o::ACCMODE;
        if acc == o::ACCMODE {
            return Err(EINVAL);
        }
        let n = match self.pipes.iter().position(|p| p.used && p.fifo == ino) {
            Some(n) => n,
            None => {
                let n = crate::table::take(&mut self.pipes, |p| !p.used, NO_PIPE)
                    .filter(|&n| n <= u16::MAX as usize)
                    .ok_or(ENFILE)?;
                self.pipes[n] = NO_PIPE;
                self.pipes[n].used = true;
                self.pipes[n].fifo = ino;
                self.pipe_owner(n);
                n
            }
        };
        let pi = &mut self.pipes[n];
        if acc == o::WRONLY && pi.readers == 0 && flags & o::NONBLOCK != 0 {
            self.pipe_changed(n as u16); // freed if no end is open
            return Err(ENXIO);
        }
        let n16 = n as u16;
        let (kind, seen) = match acc {
            o::RDONLY => {
                pi.readers += 1;
                pi.ropens = pi.ropens.wrapping_add(1);
                (Kind::PipeRead(n16), pi.wopens)
            }
            o::WRONLY => {
                pi.writers += 1;
                pi.wopens = pi.wopens.wrapping_add(1);
                (Kind::PipeWrite(n16), pi.ropens)
            }
            _ => {
                pi.readers += 1;
                pi.writers += 1;
                pi.ropens = pi.ropens.wrapping_add(1);
                pi.wopens = pi.wopens.wrapping_add(1);
                (Kind::PipeBoth(n16), 0)
            }
        };
        let keep = !(o::CREAT | o::EXCL | o::TRUNC | o::CLOEXEC);
        let fid = match self.new_fid(kind, flags & keep) {
            Ok(f) => f,
            Err(e) => {
                let (_, r, w) = kind.pipe().unwrap_or((n16, false, false));
                let pi = &mut self.pipes[n];
                pi.readers -= r as u32;
                pi.writers -= w as u32;
                self.pipe_changed(n16);
                return Err(e);
            }
        };
        // What `FIFO_WAIT` compares: the other end's opens so far.
        self.open[fid as usize].off = seen as u64;
        // Openers waiting for this end may go on.
        self.pipe_changed(n16);
        Ok([fid, ino as u64, m as u64])
    }

    /// Pages of capacity the pipes of real user `uid` hold.
    fn user_pipe_pages(&self, uid: u32) -> usize {
        self.pipes
            .iter()
            .filter(|p| p.used && p.uid == uid)
            .map(|p| p.buf.cap() / pipe::PAGE)
            .sum()
    }

    /// New pipe `n` is the caller's: charged to its real user, with the
    /// default capacity, or two pages once that user's pipes hold more
    /// than `pipe-user-pages-soft` (not root's: Linux's
    /// `CAP_SYS_RESOURCE`).
    pub(crate) fn pipe_owner(&mut self, n: usize) {
        let c = self.caller_cred();
        let uid = c.uid[stet_unix::cred::REAL];
        let over =
            self.user_pipe_pages(uid) + pipe::DEFAULT_CAP / pipe::PAGE > pipe::USER_PAGES_SOFT;
        let cap = if over && !c.capable(stet_unix::cred::cap::SYS_RESOURCE) {
            pipe::MIN_CAP
        } else {
            pipe::DEFAULT_CAP
        };
        self.pipes[n].uid = uid;
        let _ = self.pipes[n].buf.set_cap(cap);
    }

    /// `FIFO_WAIT`: done once the other end is open or has been opened
    /// since this one was.
    fn fifo_wait(&mut self, fid: u64) -> Result<Reply, i64> {
        let f = self.fid(fid)?;
        let seen = self.open[f].off as u32;
        let (n, ready) = match self.open[f].kind {
            // Only a FIFO's end waits (an anonymous pipe has both ends).
            Kind::PipeRead(n) | Kind::PipeWrite(n) if self.pipes[n as usize].fifo == 0 => {
                return word(Ok(0))
            }
            Kind::PipeRead(n) => {
                let pi = &self.pipes[n as usize];
                (n, pi.writers > 0 || pi.wopens != seen)
            }
            Kind::PipeWrite(n) => {
                let pi = &self.pipes[n as usize];
                (n, pi.readers > 0 || pi.ropens != seen)
            }
            _ => return word(Ok(0)),
        };
        if ready {
            word(Ok(0))
        } else {
            self.park(Wait::Pipe(n))
        }
    }

    /// `MKNOD`: a regular file, FIFO, socket or (root only) device node.
    fn mknod(&mut self, base: u64, m: u64, dev: u64, path: &[u8]) -> Result<u64, i64> {
        let m = m as u32;
        let fmt = match m & mode::FMT {
            0 => mode::REG,
            f @ (mode::REG | mode::FIFO | mode::SOCK | mode::CHR | mode::BLK) => f,
            mode::DIR => return Err(EPERM),
            _ => return Err(EINVAL),
        };
        let now = self.time();
        let par = self.fs.parent(self.base(base)?, path)?;
        if matches!(par.name, b"" | b"." | b"..") || self.fs.lookup(par.dir, par.name).is_some() {
            return Err(EEXIST);
        }
        let device = fmt == mode::CHR || fmt == mode::BLK;
        if device {
            // The directory's permission first, then the privilege
            // (Linux: `may_create`, then `CAP_MKNOD`).
            let d = *self.fs.inode(par.dir).ok_or(ENOENT)?;
            if d.mode & mode::FMT != mode::DIR {
                return Err(ENOTDIR);
            }
            self.fs.who.check(
                d.owner(),
                stet_unix::cred::want::W | stet_unix::cred::want::X,
            )?;
            if !self.fs.who.capable(stet_unix::cred::cap::MKNOD) {
                return Err(EPERM);
            }
        }
        let ino = self.fs.create(par.dir, par.name, fmt | (m & 0o7777), now)?;
        if device {
            if let Some(i) = self.fs.inode_mut(ino) {
                i.rdev = dev as u32;
            }
        }
        self.inotify_entry(
            par.dir,
            par.name,
            ino,
            stet_unixfs::inotify::mask::CREATE,
            0,
        );
        Ok(0)
    }

    /// `PIPE_SIZE`: `F_GETPIPE_SZ` and `F_SETPIPE_SZ`.
    fn pipe_size(&mut self, fid: u64, set: u64, size: u64) -> Result<u64, i64> {
        let f = self.fid(fid)?;
        let (n, _, _) = self.open[f].kind.pipe().ok_or(EBADF)?;
        let pi = &mut self.pipes[n as usize];
        if set == 0 {
            return Ok(pi.buf.cap() as u64);
        }
        // `F_SETPIPE_SZ` takes an `unsigned int`.
        let want = pipe::round_size(size as u32 as u64)?;
        let (cap, uid) = (pi.buf.cap(), pi.uid);
        if want > cap && !self.fs.who.capable(stet_unix::cred::cap::SYS_RESOURCE) {
            // Over `pipe-max-size`, or growing past the user's soft limit.
            let after = self
                .user_pipe_pages(uid)
                .saturating_sub(cap / pipe::PAGE)
                .saturating_add(want / pipe::PAGE);
            if want > pipe::MAX_SIZE || after > pipe::USER_PAGES_SOFT {
                return Err(EPERM);
            }
        }
        let pi = &mut self.pipes[n as usize];
        pi.buf.set_cap(want)?;
        // More room: writers waiting may go on.
        self.pipe_changed(n);
        Ok(want as u64)
    }

    /// `PIPE_MOVE`: `splice` between two pipes, or `tee`.
    fn pipe_move(
        &mut self,
        from: u64,
        to: u64,
        how: u64,
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let (fi, fo) = (self.fid(from)?, self.fid(to)?);
        let tee = how & p::SPLICE_TEE != 0;
        let (a, ar, _) = self.open[fi].kind.pipe().ok_or(EINVAL)?;
        let (b, _, bw) = self.open[fo].kind.pipe().ok_or(EINVAL)?;
        if !ar || !bw || self.open[fi].flags & o::ACCMODE == o::WRONLY {
            return Err(EBADF);
        }
        if a == b {
            return Err(EINVAL);
        }
        let len = how as u32 as usize;
        if len == 0 {
            return word(Ok(0));
        }
        let nowait = how & p::SPLICE_NOWAIT != 0
            || self.open[fi].flags & o::NONBLOCK != 0
            || self.open[fo].flags & o::NONBLOCK != 0;
        let (pa, pb) = (&self.pipes[a as usize], &self.pipes[b as usize]);
        if pb.readers == 0 {
            return Err(EPIPE);
        }
        if pa.buf.is_empty() {
            if pa.writers == 0 {
                return word(Ok(0));
            }
            return if nowait {
                Err(EAGAIN)
            } else {
                self.park(Wait::Pipe(a))
            };
        }
        if pb.buf.room() == 0 {
            return if nowait {
                Err(EAGAIN)
            } else {
                self.park(Wait::Pipe(b))
            };
        }
        let mut done = 0;
        while done < len {
            let room = self.pipes[b as usize].buf.room();
            let want = (len - done).min(room).min(out.len());
            if want == 0 {
                break;
            }
            let got = if tee {
                self.pipes[a as usize].buf.peek(done, &mut out[..want])
            } else {
                self.pipes[a as usize].buf.take(&mut out[..want])
            };
            if got == 0 {
                break;
            }
            let put = self.pipes[b as usize].buf.put(&out[..got], false);
            done += put;
            if put < got {
                break;
            }
        }
        self.pipe_changed(a);
        self.pipe_changed(b);
        word(Ok(done as u64))
    }

    /// The extra state of fid `f`, made if `make`.
    fn extra(&mut self, f: usize, make: bool) -> Option<usize> {
        if let Some(i) = self.extras.iter().position(|e| e.fid == f as u32) {
            return Some(i);
        }
        if !make {
            return None;
        }
        let i = crate::table::take(&mut self.extras, |e| e.fid == u32::MAX, NO_EXTRA)?;
        self.extras[i] = Extra {
            fid: f as u32,
            ..NO_EXTRA
        };
        Some(i)
    }

    /// An open file description's last reference went.
    pub(crate) fn extra_gone(&mut self, fid: u64) {
        for e in self.extras.iter_mut() {
            if e.fid == fid as u32 {
                *e = NO_EXTRA;
            }
        }
    }

    /// `LEASE`: `F_GETLEASE` and `F_SETLEASE` (a lease of one open file
    /// description; a read lease needs no writer of the file anywhere, a
    /// write lease no other open description of it at all).
    fn lease(&mut self, fid: u64, set: u64, ty: u64) -> Result<u64, i64> {
        let f = self.fid(fid)?;
        if set == 0 {
            return Ok(self.extra(f, false).map_or(UNLCK, |i| self.extras[i].lease));
        }
        let ino = self.inode_of(f).ok_or(EINVAL)?;
        let i = *self.fs.inode(ino).ok_or(EBADF)?;
        if i.mode & mode::FMT != mode::REG {
            return Err(EINVAL);
        }
        if ty != UNLCK && !self.fs.who.owns(i.owner()) {
            return Err(EACCES);
        }
        let others = |w: bool| {
            self.open.iter().enumerate().any(|(k, x)| {
                x.kind == Kind::Inode(ino)
                    && (if w {
                        x.flags & o::ACCMODE != o::RDONLY
                    } else {
                        k != f
                    })
            })
        };
        match ty {
            RDLCK => {
                if others(true) {
                    return Err(EAGAIN);
                }
            }
            WRLCK => {
                if others(false) {
                    return Err(EAGAIN);
                }
            }
            UNLCK => {}
            _ => return Err(EINVAL),
        }
        let e = self.extra(f, true).ok_or(ENOMEM)?;
        self.extras[e].lease = ty;
        if ty != UNLCK && self.extras[e].owner == 0 {
            // The lease's breaks are signalled to its taker.
            self.extras[e].owner = 1 | (self.caller as u64) << 32;
        }
        Ok(0)
    }

    /// An open of inode `ino` (for writing when `write`) breaks the
    /// leases it conflicts with: their holders are signalled (`F_SETSIG`'s
    /// signal, else `SIGIO`) and the leases end at once (Linux lets the
    /// opener wait up to `lease-break-time` for the holder to give it up).
    pub(crate) fn break_leases(&mut self, ino: u32, write: bool) {
        for k in 0..self.extras.len() {
            let e = self.extras[k];
            if e.fid == u32::MAX || e.lease == UNLCK {
                continue;
            }
            if self.open.get(e.fid as usize).map(|x| x.kind) != Some(Kind::Inode(ino)) {
                continue;
            }
            if e.lease == RDLCK && !write {
                continue;
            }
            self.extras[k].lease = UNLCK;
            let sig = if e.sig == 0 { SIGIO } else { e.sig };
            self.signal_owner(e.owner, sig);
        }
    }

    /// Sends `sig` to an owner (`F_OWNER_TID`/`PID` a process, `PGRP` its
    /// members).
    fn signal_owner(&mut self, owner: u64, sig: u64) {
        let (ty, id) = (owner as u32, (owner >> 32) as u32);
        if id == 0 {
            return;
        }
        for i in 0..self.procs.len() {
            let pr = self.procs[i];
            if pr.pid == 0 {
                continue;
            }
            let hit = match ty {
                2 => pr.pgid == id,
                _ => pr.pid == id,
            };
            if hit {
                self.signal(i, sig);
            }
        }
    }

    /// `OWNER`.
    fn owner(&mut self, fid: u64, op: u64, v: u64) -> Result<u64, i64> {
        let f = self.fid(fid)?;
        match op {
            p::owner::GET => Ok(self.extra(f, false).map_or(0, |i| self.extras[i].owner)),
            p::owner::GETSIG => Ok(self.extra(f, false).map_or(0, |i| self.extras[i].sig)),
            p::owner::SET => {
                let (ty, id) = (v as u32, (v >> 32) as u32);
                if ty > 2 {
                    return Err(EINVAL);
                }
                if id != 0 {
                    let found = self.procs.iter().any(|pr| {
                        pr.pid != 0 && if ty == 2 { pr.pgid == id } else { pr.pid == id }
                    });
                    if !found {
                        return Err(ESRCH);
                    }
                }
                let e = self.extra(f, true).ok_or(ENOMEM)?;
                self.extras[e].owner = if id == 0 { 0 } else { v };
                Ok(0)
            }
            p::owner::SETSIG => {
                if v > 64 {
                    return Err(EINVAL);
                }
                let e = self.extra(f, true).ok_or(ENOMEM)?;
                self.extras[e].sig = v;
                Ok(0)
            }
            _ => Err(EINVAL),
        }
    }

    /// Data came into pipe `n`: its read ends with `O_ASYNC` signal their
    /// owners (`F_SETSIG`'s signal, else `SIGIO`).
    pub(crate) fn pipe_async(&mut self, n: u16) {
        if self.extras.iter().all(|e| e.fid == u32::MAX) {
            return;
        }
        for k in 0..self.extras.len() {
            let e = self.extras[k];
            let Some(x) = self.open.get(e.fid as usize) else {
                continue;
            };
            let reads = matches!(x.kind, Kind::PipeRead(m) | Kind::PipeBoth(m) if m == n);
            if reads && x.flags & o::ASYNC != 0 {
                let sig = if e.sig == 0 { SIGIO } else { e.sig };
                self.signal_owner(e.owner, sig);
            }
        }
    }

    /// `FD_DIR`: `/proc/<pid>/fd` holds a symbolic link per descriptor of
    /// the caller's, named by its number, to what it has open (and
    /// `/proc/<pid>/fdinfo` a file per descriptor: `inotify`).
    fn fd_dir(&mut self, pid: u32, s: &[u8]) -> Result<u64, i64> {
        let root = self.proc_root().ok_or(ENOENT)?;
        let mut nb = [0u8; 10];
        let dir = self
            .fs
            .lookup(root, crate::procfs::name_of(pid, &mut nb))
            .ok_or(ENOENT)?;
        let now = self.time();
        let fd = match self.fs.lookup(dir, b"fd") {
            Some(d) => {
                self.fd_dir_clear(d);
                d
            }
            None => self.fs.create(dir, b"fd", mode::DIR | 0o500, now)?,
        };
        let mut target = [0u8; 4096];
        for c in s.chunks_exact(8) {
            let n = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            let fid = u32::from_le_bytes([c[4], c[5], c[6], c[7]]) as usize;
            let Some(x) = self.open.get(fid).copied() else {
                continue;
            };
            let t: &[u8] = match x.kind {
                Kind::Inode(ino) => match self.fs.any_path(ino, &mut target) {
                    Ok(k) => &target[..k],
                    Err(_) => b"(deleted)",
                },
                Kind::PipeRead(p) | Kind::PipeWrite(p) | Kind::PipeBoth(p) => {
                    let fifo = self.pipes[p as usize].fifo;
                    match self.fs.any_path(fifo, &mut target) {
                        Ok(k) if fifo != 0 => &target[..k],
                        _ => {
                            let k = fmt_id(b"pipe:[", 0x1000_0000 + p as u64, &mut target);
                            &target[..k]
                        }
                    }
                }
                Kind::Null => b"/dev/null",
                Kind::Zero => b"/dev/zero",
                Kind::Random => b"/dev/urandom",
                Kind::Tty => b"/dev/console",
                Kind::Event(_) => b"anon_inode:[eventfd]",
                Kind::Timer(_) => b"anon_inode:[timerfd]",
                Kind::Epoll(_) => b"anon_inode:[eventpoll]",
                Kind::Signal(_) => b"anon_inode:[signalfd]",
                Kind::Pidfd(_) => b"anon_inode:[pidfd]",
                Kind::Inotify(_) => b"anon_inode:inotify",
                Kind::Socket(n) => {
                    let k = fmt_id(b"socket:[", 0x2000_0000 + n as u64, &mut target);
                    &target[..k]
                }
                Kind::Free => continue,
            };
            let mut name = [0u8; 10];
            let name = crate::procfs::name_of(n, &mut name);
            // A name that cannot be made (a full heap) is left out.
            let _ = self.fs.symlink(fd, name, t, now);
        }
        self.fdinfo_dir(dir, s);
        Ok(0)
    }

    /// Empties a `/proc/<pid>/fd` directory.
    pub(crate) fn fd_dir_clear(&mut self, d: u32) {
        let now = self.time();
        while let Some(name) = self.first_name(d) {
            let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            match self.fs.unlink(d, &name[..len], now) {
                Ok((ino, true)) => self.maybe_free(ino),
                Ok(_) => {}
                Err(_) => break,
            }
        }
    }
}

/// `prefix`, the number `v` and `]` into `out` → the length.
fn fmt_id(prefix: &[u8], v: u64, out: &mut [u8]) -> usize {
    let mut d = [0u8; 20];
    let mut k = 0;
    let mut x = v;
    loop {
        d[19 - k] = b'0' + (x % 10) as u8;
        k += 1;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    let n = prefix.len();
    out[..n].copy_from_slice(prefix);
    out[n..n + k].copy_from_slice(&d[20 - k..]);
    out[n + k] = b']';
    n + k + 1
}
