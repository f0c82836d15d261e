//! Descriptors and the calls on files: the keeper maps each descriptor to
//! a file id of the file-system domain (`unixd`, protocol
//! `stet_unix::proto`) and moves the bytes between the process's memory
//! and the domain's messages — straight from and into the process's pages
//! through the keeper's window, so a read or write copies once.

use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::abi::code::Code;
use stet_rt::key::{Answer, Msg};
use stet_unix::proto;
use stet_unix::proto::{self as p, at, o};
use stet_unix::sys::errno::*;
use stet_unix::sys::ioctl;

/// Most descriptors a process may have open.
pub const MAX_FDS: usize = 256;
/// No file id.
pub const NONE: u32 = u32::MAX;
/// The domain's name for "the root, whatever the base".
const ROOT_BASE: u64 = u64::MAX;
/// Bytes per message.
const CHUNK: u64 = 4096;

type R = Result<u64, i64>;

/// One descriptor.
#[derive(Clone, Copy, Debug)]
pub struct Fd {
    /// The file id (`NONE`: closed).
    pub fid: u32,
    /// `FD_CLOEXEC`.
    pub cloexec: bool,
    /// A regular file (reads and writes loop until done).
    pub regular: bool,
}

/// A closed descriptor.
pub const CLOSED: Fd = Fd {
    fid: NONE,
    cloexec: false,
    regular: false,
};

/// The domain's answer as a system call result; `None` for `BUSY` (ask
/// again).
pub(crate) fn result(a: &Answer) -> Option<R> {
    if a.code == Code::Ok {
        crate::signals::note(a.w[proto::INTR_WORD]);
    }
    if a.code == Code::Busy {
        return None;
    }
    if a.code != Code::Ok {
        return Some(Err(EIO));
    }
    let v = a.w[0] as i64;
    Some(if (-4095..0).contains(&v) {
        Err(-v)
    } else {
        Ok(a.w[0])
    })
}

/// Calls the domain with words and a string of this domain's memory.
pub(crate) fn ux(order: u64, w: [u64; 4], s: &[u8]) -> (R, Answer) {
    loop {
        let a = Msg::new(UNIXD, order).words(w).string(s).call();
        if let Some(r) = result(&a) {
            return (r, a);
        }
    }
}

impl Keeper {
    /// The file id of descriptor `fd`.
    pub fn fid(&self, fd: u64) -> Result<u64, i64> {
        // A descriptor is a C `int`: the register's upper half is not part
        // of it.
        match self.fds.get(fd as u32 as usize) {
            Some(f) if f.fid != NONE => Ok(f.fid as u64),
            _ => Err(EBADF),
        }
    }

    /// The base directory of an `*at` call for `path`: an absolute path
    /// ignores `dirfd` (any value, even a closed descriptor or a file's:
    /// Linux's `openat(2)`), a relative one needs a directory there.
    fn base_for(&self, dirfd: u64, path: &[u8]) -> Result<u64, i64> {
        if path.first() == Some(&b'/') {
            Ok(self.cwd as u64)
        } else {
            self.dirfd(dirfd)
        }
    }

    /// The base directory of an `*at` call.
    fn dirfd(&self, dirfd: u64) -> Result<u64, i64> {
        if dirfd as u32 as i32 as i64 == at::FDCWD {
            Ok(self.cwd as u64)
        } else {
            self.fid(dirfd)
        }
    }

    /// The lowest free descriptor (`EMFILE` at the limit).
    pub fn lowest_free_fd(&self) -> Result<usize, i64> {
        self.free_fd(0)
    }

    /// Descriptor `fd` names file id `fid` (not a regular file).
    pub fn set_fd(&mut self, fd: usize, fid: u32, cloexec: bool) {
        self.fds[fd] = Fd {
            fid,
            cloexec,
            regular: false,
        };
    }

    /// The lowest free descriptor at or above `from`.
    fn free_fd(&self, from: u64) -> Result<usize, i64> {
        (from.min(MAX_FDS as u64) as usize..self.fd_limit())
            .find(|&i| self.fds[i].fid == NONE)
            .ok_or(EMFILE)
    }

    /// Opens `path` (this domain's bytes) relative to base fid `base`.
    pub fn open_fid(
        &mut self,
        base: u64,
        path: &[u8],
        flags: u64,
        mode: u64,
    ) -> Result<(u64, u64), i64> {
        let (r, a) = ux(p::OPEN, [base, flags, mode, 0], path);
        r.map(|fid| (fid, a.w[2]))
    }

    /// Opens the terminal as descriptors 0, 1, 2 and `/` as the working
    /// directory (a process started by the image, not forked).
    pub fn open_terminal(&mut self) -> Result<(), i64> {
        let (root, _) = self.open_fid(ROOT_BASE, b"/", o::PATH | o::DIRECTORY, 0)?;
        self.cwd = root as u32;
        let (tty, _) = self.open_fid(ROOT_BASE, b"/dev/console", o::RDWR, 0)?;
        for fd in 0..3 {
            if fd > 0 {
                ux(p::DUP, [tty, 0, 0, 0], &[]).0?;
            }
            self.fds[fd] = Fd {
                fid: tty as u32,
                cloexec: false,
                regular: false,
            };
        }
        Ok(())
    }

    /// Reads a path argument from the process into `buf` → its length.
    /// A path through `/proc/self/` names `/proc/<pid>/` (unixd's
    /// directory of this process) at once, but `/proc/self/fd/N`, which
    /// `openat` answers itself; `/proc/self` alone is unixd's symbolic
    /// link (`readlink` gives the pid).
    pub fn path<'b>(&mut self, a: u64, buf: &'b mut [u8; 4096]) -> Result<&'b [u8], i64> {
        let n = match self.space.read_cstr(a, &mut buf[..]) {
            Ok(n) => n,
            Err(Some(t)) => return Err(t.errno()),
            Err(None) => return Err(ENAMETOOLONG),
        };
        const SELF: &[u8] = b"/proc/self";
        let is_self = buf[..n].starts_with(SELF)
            && n > SELF.len()
            && buf[SELF.len()] == b'/'
            && !buf[..n].starts_with(b"/proc/self/fd/");
        if !is_self {
            return Ok(&buf[..n]);
        }
        let mut digits = [0u8; 20];
        let mut d = 0;
        let mut v = self.pid;
        loop {
            digits[19 - d] = b'0' + (v % 10) as u8;
            d += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        let rest = n - SELF.len();
        let new_len = 6 + d + rest;
        if new_len >= buf.len() {
            return Err(ENAMETOOLONG);
        }
        buf.copy_within(SELF.len()..n, 6 + d);
        buf[6..6 + d].copy_from_slice(&digits[20 - d..]);
        Ok(&buf[..new_len])
    }

    /// `openat`.
    pub fn openat(&mut self, dirfd: u64, path: u64, flags: u64, mode: u64) -> R {
        self.open_at(dirfd, path, flags, mode, 0)
    }

    /// `openat`, or `openat2` with its `RESOLVE_*` flags `resolve`
    /// (`RESOLVE_BENEATH` and `RESOLVE_IN_ROOT` make even an absolute path
    /// relative to `dirfd`).
    pub fn open_at(&mut self, dirfd: u64, path: u64, flags: u64, mode: u64, resolve: u64) -> R {
        let mut b = [0u8; 4096];
        let path = self.path(path, &mut b)?;
        let base = if resolve & (p::resolve::BENEATH | p::resolve::IN_ROOT) != 0 {
            self.dirfd(dirfd)?
        } else {
            self.base_for(dirfd, path)?
        };
        // The process's own descriptors by name (Linux: symlinks into
        // /proc/self/fd): opening one is `dup`.
        let own = match path {
            b"/dev/stdin" => Some(0),
            b"/dev/stdout" => Some(1),
            b"/dev/stderr" => Some(2),
            _ => path
                .strip_prefix(b"/proc/self/fd/")
                .or_else(|| path.strip_prefix(b"/dev/fd/"))
                .and_then(|n| core::str::from_utf8(n).ok())
                .and_then(|n| n.parse::<u64>().ok()),
        };
        if let Some(fd) = own {
            // (A magic link on Linux.)
            if resolve & (p::resolve::NO_MAGICLINKS | p::resolve::NO_SYMLINKS) != 0 {
                return Err(ELOOP);
            }
            let new = self.dup(fd, None, 0, flags & o::CLOEXEC != 0)?;
            // `O_TRUNC` empties the file as opening it again would (its
            // seals hold: `F_SEAL_SHRINK` is `EPERM`).
            if flags & o::TRUNC != 0 && self.fds[new as usize].regular {
                let r = self
                    .fid(new)
                    .and_then(|f| self.unixd(p::TRUNCATE, [f, 0, self.fsize(), 0]));
                if let Err(e) = r {
                    let _ = self.close(new);
                    return Err(e);
                }
            }
            return Ok(new);
        }
        if self.is_own_maps(path) {
            return self.open_maps(flags);
        }
        if self.is_own_file(path, "status") {
            self.send_vm_stats();
        }
        let fd = self.free_fd(0)?;
        self.fd_dir_for(path);
        // A file this call makes has the mode asked less the umask.
        let mode = mode & 0o7777 & !self.umask;
        let flags = (flags & p::OPEN_FLAGS) | resolve << p::RESOLVE_SHIFT;
        let (fid, m) = self.open_fid(base, path, flags, mode)?;
        self.fifo_opened(fid, m, flags)?;
        self.fds[fd] = Fd {
            fid: fid as u32,
            cloexec: flags & o::CLOEXEC != 0,
            regular: m as u32 & stet_unix::fs::mode::FMT == stet_unix::fs::mode::REG,
        };
        // `/proc/self/fd` opened: made again with this descriptor's link.
        self.fd_dir_for(path);
        Ok(fd as u64)
    }

    /// `close`.
    pub fn close(&mut self, fd: u64) -> R {
        let fid = self.fid(fd)?;
        self.fds[fd as u32 as usize] = CLOSED;
        let (r, a) = ux(self.tagged(p::CLOSE), [fid, p::CLOSE_FD, 0, 0], &[]);
        self.carried_ready(&a);
        r
    }

    /// Closes every descriptor (exit), or those with `FD_CLOEXEC` (exec).
    pub fn close_all(&mut self, only_cloexec: bool) {
        for fd in 0..MAX_FDS {
            if self.fds[fd].fid != NONE && (!only_cloexec || self.fds[fd].cloexec) {
                let _ = self.close(fd as u64);
            }
        }
    }

    /// `read`, or `pread64` when `at` is given.
    pub fn read(&mut self, fd: u64, buf: u64, len: u64, at: Option<u64>) -> R {
        let fid = self.fid(fd)?;
        let regular = self.fds[fd as u32 as usize].regular;
        if len > isize::MAX as u64 {
            return Err(EINVAL);
        }
        self.space.touch(buf, len, true).map_err(Touch::errno)?;
        let mut done = 0;
        while done < len {
            let n = (len - done).min(CHUNK);
            let intr = self.interrupting();
            let (order, w) = match at {
                Some(off) => (p::PREAD, [fid, n, off + done, intr]),
                None => (self.tagged(p::READ), [fid, n, 0, intr]),
            };
            let (got, w1, w2) = loop {
                // A wait that a signal here already ends (files never wait).
                if !regular && self.interrupted() {
                    break (Err(EINTR), 0, 0);
                }
                let a = Msg::new(UNIXD, order)
                    .words(w)
                    .call_to(self.space.win.recv(buf + done, n));
                if let Some(r) = result(&a) {
                    break (r, a.w[1], a.w[2]);
                }
            };
            let got = match got {
                Ok(g) => g,
                // A signalfd: its mask and O_NONBLOCK; this keeper has the
                // signals.
                Err(p::SIGNALFD_READ) => return self.signalfd_read(buf, len, w1, w2 != 0),
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            };
            done += got;
            // Only a regular file is read on to fill the buffer; a pipe or
            // a terminal answers with what it has.
            if got < n || !regular {
                break;
            }
        }
        Ok(done)
    }

    /// `write`, or `pwrite64` when `at` is given.
    pub fn write(&mut self, fd: u64, buf: u64, len: u64, at: Option<u64>) -> R {
        let fid = self.fid(fd)?;
        let regular = self.fds[fd as u32 as usize].regular;
        if len > isize::MAX as u64 {
            return Err(EINVAL);
        }
        self.space.touch(buf, len, false).map_err(Touch::errno)?;
        let mut done = 0;
        while done < len {
            let n = (len - done).min(CHUNK);
            let intr = self.interrupting();
            let fsize = self.fsize();
            let (order, w) = match at {
                Some(off) => (self.tagged(p::PWRITE), [fid, off + done, fsize, intr]),
                None => (self.tagged(p::WRITE), [fid, 0, fsize, intr]),
            };
            let put = loop {
                // A wait that a signal here already ends (files never wait).
                if !regular && self.interrupted() {
                    break Err(EINTR);
                }
                let a = Msg::new(UNIXD, order)
                    .words(w)
                    .raw_string(self.space.win.addr(buf + done), n)
                    .call();
                self.carried_ready(&a);
                if let Some(r) = result(&a) {
                    break r;
                }
            };
            match put {
                Ok(k) => done += k,
                Err(e) if done == 0 => {
                    if e == EPIPE {
                        crate::signals::raise(stet_unix::sys::sig::SIGPIPE);
                    }
                    return self.over_fsize(Err(e));
                }
                Err(_) => break,
            }
        }
        Ok(done)
    }

    /// `readv` / `writev`.
    pub fn vector(&mut self, fd: u64, iov: u64, cnt: u64, write: bool) -> R {
        self.vector_at(fd, iov, cnt, write, None)
    }

    /// `preadv`/`pwritev` (and their `*2` forms with offset -1: the file's
    /// own offset, as `readv`/`writev`): at `at`, the file offset unchanged.
    pub fn vector_at(&mut self, fd: u64, iov: u64, cnt: u64, write: bool, at: Option<u64>) -> R {
        self.fid(fd)?;
        if at.is_some_and(|o| (o as i64) < 0) {
            return Err(EINVAL);
        }
        if cnt > 1024 {
            return Err(EINVAL);
        }
        let mut total = 0u64;
        for i in 0..cnt {
            let mut v = [0u8; 16];
            self.space
                .read(iov + 16 * i, &mut v)
                .map_err(Touch::errno)?;
            let base = u64::from_le_bytes(v[..8].try_into().unwrap_or_default());
            let len = u64::from_le_bytes(v[8..].try_into().unwrap_or_default());
            if len > isize::MAX as u64 - total {
                return Err(EINVAL);
            }
            if len == 0 {
                continue;
            }
            let here = at.map(|o| o + total);
            let r = if write {
                self.write(fd, base, len, here)
            } else {
                self.read(fd, base, len, here)
            };
            match r {
                Ok(n) => {
                    total += n;
                    if n < len {
                        break;
                    }
                }
                Err(e) if total == 0 => return Err(e),
                Err(_) => break,
            }
        }
        Ok(total)
    }

    /// `lseek`.
    pub fn lseek(&mut self, fd: u64, off: u64, whence: u64) -> R {
        let fid = self.fid(fd)?;
        ux(p::LSEEK, [fid, off, whence, 0], &[]).0
    }

    /// A `struct stat` from the domain into the process at `st`.
    fn stat_out(&mut self, order: u64, w: [u64; 4], path: &[u8], st: u64) -> R {
        let mut b = [0u8; 144];
        let a = Msg::new(UNIXD, order)
            .words(w)
            .string(path)
            .call_into(&mut b);
        result(&a).unwrap_or(Err(EIO))?;
        self.space.write(st, &b).map_err(Touch::errno)?;
        Ok(0)
    }

    /// `fstat`.
    pub fn fstat(&mut self, fd: u64, st: u64) -> R {
        let fid = self.fid(fd)?;
        self.stat_out(p::FSTAT, [fid, 0, 0, 0], &[], st)
    }

    /// The `struct stat` of an `*at` call's path (`AT_EMPTY_PATH`: the
    /// descriptor itself).
    pub fn stat_at(&mut self, dirfd: u64, path: u64, flags: u64) -> Result<[u8; 144], i64> {
        let mut pb = [0u8; 4096];
        let path = self.path(path, &mut pb)?;
        self.fd_dir_for(path);
        let base = match (path.is_empty(), flags & at::EMPTY_PATH != 0) {
            // The descriptor, or with `AT_FDCWD` the working directory.
            (true, true) => self.dirfd(dirfd)?,
            (true, false) => return Err(ENOENT),
            (false, _) => self.base_for(dirfd, path)?,
        };
        let mut st = [0u8; 144];
        let a = Msg::new(UNIXD, p::STAT)
            .words([base, flags, 0, 0])
            .string(path)
            .call_into(&mut st);
        result(&a).unwrap_or(Err(EIO))?;
        Ok(st)
    }

    /// `newfstatat` (and `stat`, `lstat`).
    pub fn fstatat(&mut self, dirfd: u64, path: u64, st: u64, flags: u64) -> R {
        let b = self.stat_at(dirfd, path, flags)?;
        self.space.write(st, &b).map_err(Touch::errno)?;
        Ok(0)
    }

    /// `statx`, from the `struct stat` the domain gives.
    pub fn statx(&mut self, dirfd: u64, path: u64, flags: u64, buf: u64) -> R {
        let st = self.stat_at(dirfd, path, flags)?;
        let g = |o: usize, n: usize| {
            let mut v = [0u8; 8];
            v[..n].copy_from_slice(&st[o..o + n]);
            u64::from_le_bytes(v)
        };
        let mut x = [0u8; 256];
        let mut put =
            |o: usize, v: u64, n: usize| x[o..o + n].copy_from_slice(&v.to_le_bytes()[..n]);
        put(0, 0x7ff, 4); // stx_mask: the basic stats
        put(4, g(56, 8), 4); // blksize
        put(16, g(16, 8), 4); // nlink
        put(28, g(24, 4), 2); // mode
        put(32, g(8, 8), 8); // ino
        put(40, g(48, 8), 8); // size
        put(48, g(64, 8), 8); // blocks
        for (to, from) in [(64, 72), (80, 104), (96, 104), (112, 88)] {
            put(to, g(from, 8), 8);
            put(to + 8, g(from + 8, 8), 4);
        }
        let rdev = g(40, 8);
        put(128, rdev >> 8, 4);
        put(132, rdev & 0xff, 4);
        self.space.write(buf, &x).map_err(Touch::errno)?;
        Ok(0)
    }

    /// `getdents64`.
    pub fn getdents(&mut self, fd: u64, buf: u64, len: u64) -> R {
        let fid = self.fid(fd)?;
        let n = len.min(CHUNK);
        self.space.touch(buf, n, true).map_err(Touch::errno)?;
        let a = Msg::new(UNIXD, p::GETDENTS)
            .words([fid, n, 0, 0])
            .call_to(self.space.win.recv(buf, n));
        result(&a).unwrap_or(Err(EIO))
    }

    /// Calls taking one path and words: mkdir, unlink, readlink targets,
    /// chmod, truncate, access (`w0` is set to the base).
    pub fn path_call(&mut self, order: u64, dirfd: u64, path: u64, w1: u64, w2: u64) -> R {
        let mut b = [0u8; 4096];
        let path = self.path(path, &mut b)?;
        let base = self.base_for(dirfd, path)?;
        if path.is_empty() {
            return Err(ENOENT);
        }
        ux(order, [base, w1, w2, 0], path).0
    }

    /// `fchownat` of a path (`ids`: owner | group << 32); an empty path
    /// with `AT_EMPTY_PATH` is the descriptor itself.
    pub fn chown_path(&mut self, dirfd: u64, path: u64, ids: u64, flags: u64) -> R {
        let mut b = [0u8; 4096];
        let path = self.path(path, &mut b)?;
        let base = match path.is_empty() {
            true => self.dirfd(dirfd)?,
            false => self.base_for(dirfd, path)?,
        };
        if path.is_empty() && flags & at::EMPTY_PATH == 0 {
            return Err(ENOENT);
        }
        ux(p::CHOWN, [base, ids, flags, 0], path).0
    }

    /// Calls taking two paths: rename and link (`old\0new`).
    pub fn two_paths(&mut self, order: u64, d1: u64, p1: u64, d2: u64, p2: u64, flags: u64) -> R {
        let mut a = [0u8; 4096];
        let mut b = [0u8; 4096];
        let x = self.path(p1, &mut a)?;
        let y = self.path(p2, &mut b)?;
        let (b1, b2) = (self.base_for(d1, x)?, self.base_for(d2, y)?);
        if x.is_empty() || y.is_empty() {
            return Err(ENOENT);
        }
        let mut s = [0u8; 8192];
        s[..x.len()].copy_from_slice(x);
        s[x.len() + 1..x.len() + 1 + y.len()].copy_from_slice(y);
        let n = x.len() + 1 + y.len();
        if n > 4096 {
            return Err(ENAMETOOLONG);
        }
        ux(order, [b1, b2, flags, 0], &s[..n]).0
    }

    /// `symlinkat`.
    pub fn symlink(&mut self, target: u64, dirfd: u64, path: u64) -> R {
        let mut a = [0u8; 4096];
        let mut b = [0u8; 4096];
        let t = self.path(target, &mut a)?;
        let l = self.path(path, &mut b)?;
        let base = self.base_for(dirfd, l)?;
        let mut s = [0u8; 8192];
        s[..t.len()].copy_from_slice(t);
        s[t.len() + 1..t.len() + 1 + l.len()].copy_from_slice(l);
        let n = t.len() + 1 + l.len();
        if n > 4096 {
            return Err(ENAMETOOLONG);
        }
        ux(p::SYMLINK, [base, 0, 0, 0], &s[..n]).0
    }

    /// `readlinkat`.
    pub fn readlink(&mut self, dirfd: u64, path: u64, buf: u64, size: u64) -> R {
        if size as i32 <= 0 {
            return Err(EINVAL);
        }
        let mut pb = [0u8; 4096];
        let path = self.path(path, &mut pb)?;
        self.fd_dir_for(path);
        // An empty path is the descriptor's own link (not the working
        // directory's: `ENOENT`).
        let base = match path.is_empty() {
            true if dirfd as u32 as i32 as i64 == at::FDCWD => return Err(ENOENT),
            true => self.fid(dirfd)?,
            false => self.base_for(dirfd, path)?,
        };
        let mut out = [0u8; 4096];
        let a = Msg::new(UNIXD, p::READLINK)
            .words([base, 0, 0, 0])
            .string(path)
            .call_into(&mut out);
        let n = result(&a).unwrap_or(Err(EIO))?.min(size);
        self.space
            .write(buf, out.get(..n as usize).ok_or(EIO)?)
            .map_err(Touch::errno)?;
        Ok(n)
    }

    /// `getcwd`.
    pub fn getcwd(&mut self, buf: u64, size: u64) -> R {
        let mut out = [0u8; 4096];
        let a = Msg::new(UNIXD, p::GETCWD)
            .words([self.cwd as u64, 0, 0, 0])
            .call_into(&mut out);
        let n = result(&a).unwrap_or(Err(EIO))?;
        if n > size {
            return Err(ERANGE);
        }
        self.space
            .write(buf, out.get(..n as usize).ok_or(EIO)?)
            .map_err(Touch::errno)?;
        Ok(n)
    }

    /// `chdir` (a path) or `fchdir` (a descriptor): a directory the
    /// caller may search (`ENOTDIR`, `EACCES`).
    pub fn chdir(&mut self, path: Option<u64>, fd: u64) -> R {
        let fid = match path {
            Some(pa) => {
                let mut b = [0u8; 4096];
                let path = self.path(pa, &mut b)?;
                let cwd = self.cwd as u64;
                let fid = self.open_fid(cwd, path, o::PATH | o::DIRECTORY, 0)?.0;
                if let Err(e) = ux(p::ACCESS, [fid, 1, at::EACCESS, 0], b".").0 {
                    let _ = ux(p::CLOSE, [fid, 0, 0, 0], &[]);
                    return Err(e);
                }
                fid
            }
            None => {
                let fid = self.fid(fd)?;
                // A new reference, checked to be a directory the caller
                // may search (as its effective user: `AT_EACCESS`).
                ux(p::ACCESS, [fid, 1, at::EACCESS, 0], b".").0?;
                ux(p::DUP, [fid, 0, 0, 0], &[]).0?;
                fid
            }
        };
        let old = self.cwd as u64;
        self.cwd = fid as u32;
        ux(p::CLOSE, [old, 0, 0, 0], &[]).0?;
        Ok(0)
    }

    /// `dup`, `dup2`, `dup3` and `fcntl(F_DUPFD*)`: `new` a fixed target or
    /// `None` for the lowest free at or above `from`.
    pub fn dup(&mut self, old: u64, new: Option<u64>, from: u64, cloexec: bool) -> R {
        // Descriptors are C `unsigned int`s: a register's upper half is not
        // part of them.
        let (old, new, from) = (
            old as u32 as u64,
            new.map(|n| n as u32 as u64),
            from as u32 as u64,
        );
        let fid = self.fid(old)?;
        let fd = match new {
            Some(n) if n >= self.fd_limit() as u64 => return Err(EBADF),
            Some(n) if n == old => return Ok(n),
            Some(n) => {
                if self.fds[n as usize].fid != NONE {
                    self.close(n)?;
                }
                n as usize
            }
            None => {
                if from >= self.fd_limit() as u64 {
                    return Err(EINVAL);
                }
                self.free_fd(from)?
            }
        };
        ux(p::DUP, [fid, 0, 0, 0], &[]).0?;
        self.fds[fd] = Fd {
            cloexec,
            ..self.fds[old as usize]
        };
        Ok(fd as u64)
    }

    /// `fcntl`.
    pub fn fcntl(&mut self, fd: u64, cmd: u64, arg: u64) -> R {
        use stet_unix::sys::fcntl::*;
        let fid = self.fid(fd)?;
        match cmd {
            F_GETLK | F_SETLK | F_SETLKW => self.record_lock(fd, cmd, arg),
            F_DUPFD => self.dup(fd, None, arg, false),
            F_DUPFD_CLOEXEC => self.dup(fd, None, arg, true),
            F_GETFD => Ok(self.fds[fd as u32 as usize].cloexec as u64),
            F_SETFD => {
                self.fds[fd as u32 as usize].cloexec = arg & 1 != 0;
                Ok(0)
            }
            F_GETFL => ux(p::FLAGS, [fid, 0, 0, 0], &[]).0,
            // F_ADD_SEALS, F_GET_SEALS (`memfd_create`'s files).
            // Adding `F_SEAL_WRITE` (8) while a shared writable mapping
            // exists is `EBUSY` (after `EPERM` for a sealed file: unixd's).
            // Only this process's mappings are seen here; another
            // process's are not.
            1033 if arg & 8 != 0
                && ux(p::SEALS, [fid, 0, 0, 0], &[])
                    .0
                    .is_ok_and(|s| s & 1 == 0)
                && self.maps_shared_writable(fid) =>
            {
                Err(EBUSY)
            }
            1033 => ux(p::SEALS, [fid, 1, arg, 0], &[]).0,
            1034 => ux(p::SEALS, [fid, 0, 0, 0], &[]).0,
            F_SETFL => ux(p::FLAGS, [fid, 1, arg, 0], &[]).0,
            crate::flocks::F_OFD_GETLK
            | crate::flocks::F_OFD_SETLK
            | crate::flocks::F_OFD_SETLKW => self.ofd_lock(fid, cmd, arg),
            _ => self.fcntl_pipe(fid, cmd, arg).unwrap_or(Err(EINVAL)),
        }
    }

    /// `pipe2`.
    pub fn pipe(&mut self, fds: u64, flags: u64) -> R {
        if flags & !(o::CLOEXEC | o::NONBLOCK | o::DIRECT) != 0 {
            return Err(EINVAL);
        }
        self.space.touch(fds, 8, true).map_err(Touch::errno)?;
        let r = self.free_fd(0)?;
        let (res, a) = ux(p::PIPE, [flags, 0, 0, 0], &[]);
        res?;
        let (rf, wf) = (a.w[1], a.w[2]);
        let cloexec = flags & o::CLOEXEC != 0;
        self.fds[r] = Fd {
            fid: rf as u32,
            cloexec,
            regular: false,
        };
        let w = match self.free_fd(0) {
            Ok(w) => w,
            Err(e) => {
                let _ = self.close(r as u64);
                let _ = ux(p::CLOSE, [wf, 0, 0, 0], &[]);
                return Err(e);
            }
        };
        self.fds[w] = Fd {
            fid: wf as u32,
            cloexec,
            regular: false,
        };
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&(r as u32).to_le_bytes());
        b[4..].copy_from_slice(&(w as u32).to_le_bytes());
        self.space.write(fds, &b).map_err(Touch::errno)?;
        Ok(0)
    }

    /// `utimensat`: `times` null (now), or two timespecs with `UTIME_NOW`
    /// and `UTIME_OMIT`.
    pub fn utimensat(&mut self, dirfd: u64, path: u64, times: u64) -> R {
        use stet_unix::sys::utime::{UTIME_NOW, UTIME_OMIT};
        let (mut a, mut m) = (u64::MAX, u64::MAX);
        if times != 0 {
            let mut b = [0u8; 32];
            self.space.read(times, &mut b).map_err(Touch::errno)?;
            let conv = |s: &[u8]| {
                let sec = u64::from_le_bytes(s[..8].try_into().unwrap_or_default());
                let ns = u64::from_le_bytes(s[8..16].try_into().unwrap_or_default());
                match ns {
                    UTIME_NOW => Ok(u64::MAX),
                    UTIME_OMIT => Ok(u64::MAX - 1),
                    n if n < 1_000_000_000 => Ok(sec * 1_000_000_000 + n),
                    _ => Err(EINVAL),
                }
            };
            a = conv(&b[..16])?;
            m = conv(&b[16..])?;
        }
        if path == 0 {
            let fid = self.fid(dirfd)?;
            return ux(p::UTIMENS, [fid, a, m, 0], &[]).0;
        }
        self.path_call(p::UTIMENS, dirfd, path, a, m)
    }

    /// `sendfile`: reads and writes through the keeper, 4 KiB at a time.
    pub fn sendfile(&mut self, out: u64, inp: u64, offp: u64, count: u64) -> R {
        let (fo, fi) = (self.fid(out)?, self.fid(inp)?);
        self.sendfile_check(out, inp)?;
        let mut off = if offp != 0 {
            let mut b = [0u8; 8];
            self.space.read(offp, &mut b).map_err(Touch::errno)?;
            Some(u64::from_le_bytes(b))
        } else {
            None
        };
        let mut done = 0;
        let mut buf = [0u8; 4096];
        while done < count {
            let n = (count - done).min(CHUNK);
            let (order, w) = match off {
                Some(o) => (p::PREAD, [fi, n, o, 0]),
                None => (p::READ, [fi, n, 0, 0]),
            };
            let a = loop {
                let a = Msg::new(UNIXD, order).words(w).call_into(&mut buf);
                if a.code != Code::Busy {
                    break a;
                }
            };
            let got = match result(&a).unwrap_or(Err(EIO)) {
                Ok(0) => break,
                Ok(g) => g,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            };
            let put = ux(p::WRITE, [fo, 0, 0, 0], buf.get(..got as usize).ok_or(EIO)?).0;
            match put {
                Ok(k) => {
                    done += k;
                    if let Some(o) = off.as_mut() {
                        *o += k;
                    }
                    if k < got {
                        break;
                    }
                }
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            }
        }
        if let (Some(o), true) = (off, offp != 0) {
            self.space
                .write(offp, &o.to_le_bytes())
                .map_err(Touch::errno)?;
        }
        Ok(done)
    }

    /// Terminal ioctls: unixd's terminal answers them; anything else says
    /// `ENOTTY`.
    pub fn ioctl(&mut self, fd: u64, req: u64, arg: u64) -> R {
        let fid = self.fid(fd)?;
        let req = req as u32 as u64;
        match req {
            crate::procctl::NS_GET_USERNS..=crate::procctl::NS_GET_OWNER_UID => {
                self.ns_ioctl(fid, req, arg)
            }
            ioctl::TCGETS => {
                let mut t = [0u8; 36];
                let a = Msg::new(UNIXD, p::TTY)
                    .words([fid, req, 0, 0])
                    .call_into(&mut t);
                result(&a).unwrap_or(Err(EIO))?;
                self.space.write(arg, &t).map_err(Touch::errno)?;
                Ok(0)
            }
            ioctl::TCSETS | ioctl::TCSETSW | ioctl::TCSETSF => {
                let mut t = [0u8; 36];
                self.space.read(arg, &mut t).map_err(Touch::errno)?;
                ux(p::TTY, [fid, req, 0, 0], &t).0
            }
            ioctl::TIOCGPGRP | ioctl::FIONREAD => {
                let v = ux(p::TTY, [fid, req, 0, 0], &[]).0?;
                self.space
                    .write(arg, &(v as u32).to_le_bytes())
                    .map_err(Touch::errno)?;
                Ok(0)
            }
            ioctl::TIOCSPGRP => {
                let mut g = [0u8; 4];
                self.space.read(arg, &mut g).map_err(Touch::errno)?;
                ux(p::TTY, [fid, req, u32::from_le_bytes(g) as u64, 0], &[]).0
            }
            ioctl::TIOCGWINSZ => {
                let v = ux(p::TTY, [fid, req, 0, 0], &[]).0?;
                let ws = [(v >> 16) as u16, v as u16, 0, 0];
                let mut b = [0u8; 8];
                for (c, x) in b.chunks_exact_mut(2).zip(ws) {
                    c.copy_from_slice(&x.to_le_bytes());
                }
                self.space.write(arg, &b).map_err(Touch::errno)?;
                Ok(0)
            }
            ioctl::TIOCSWINSZ => ux(p::TTY, [fid, req, 0, 0], &[]).0,
            // `/dev/random`'s and `/dev/urandom`'s (unixd: `sysmisc`).
            0x8004_5200 => {
                let v = ux(p::SYSMISC, [p::sysmisc::RANDOM, fid, req, 0], &[]).0?;
                self.space
                    .write(arg, &(v as u32).to_le_bytes())
                    .map_err(Touch::errno)?;
                Ok(0)
            }
            0x4004_5201 | 0x4008_5203 | 0x5204 | 0x5206 | 0x5207 => {
                ux(p::SYSMISC, [p::sysmisc::RANDOM, fid, req, 0], &[]).0
            }
            _ => {
                ux(p::ISATTY, [fid, 0, 0, 0], &[]).0?;
                Err(EINVAL)
            }
        }
    }
}
