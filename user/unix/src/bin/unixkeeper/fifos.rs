//! Named pipes and the calls around pipes: `mknod`/`mknodat`, the wait of
//! a FIFO's `open` for its other end, `splice`, `tee`, `vmsplice`, the
//! `fcntl`s of pipes' sizes, leases, owners and signals, and
//! `/proc/self/fd` (unixd's orders 130–139, `unixd/fifos.rs`).
//!
//! `splice` between a pipe and a file moves the bytes through the keeper
//! 4 KiB at a time, as `sendfile` does: the file's side by offset (so a
//! pipe with no room takes nothing and the file's offset moves only by
//! what went), the pipe's side with `SPLICE_IO`; pipe to pipe and `tee`
//! are unixd's alone (`PIPE_MOVE`). Only the first piece may wait, as on
//! Linux a `splice` waits for some bytes or room, not for all of `len`.

use crate::fds::{result, ux};
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::key::Msg;
use stet_unix::fs::mode;
use stet_unix::proto::{self as p, o};
use stet_unix::sys::errno::*;
use stet_unix::sys::splice as sp;

type R = Result<u64, i64>;

/// Bytes per message.
const CHUNK: u64 = 4096;
/// `UIO_MAXIOV`.
const MAX_IOV: u64 = 1024;

/// What a descriptor is, for `splice`: its fid, status flags and whether
/// it is a pipe (or FIFO).
#[derive(Clone, Copy)]
struct End {
    fid: u64,
    flags: u64,
    pipe: bool,
}

impl End {
    fn reads(&self) -> bool {
        self.flags & o::ACCMODE != o::WRONLY && self.flags & o::PATH == 0
    }
    fn writes(&self) -> bool {
        self.flags & o::ACCMODE != o::RDONLY && self.flags & o::PATH == 0
    }
}

impl Keeper {
    /// `mknodat` (and `mknod`): a regular file, FIFO or socket; device
    /// nodes for root.
    pub fn mknodat(&mut self, dirfd: u64, path: u64, m: u64, dev: u64) -> R {
        let m = m as u32 as u64;
        match m as u32 & mode::FMT {
            0 | mode::REG | mode::FIFO | mode::SOCK | mode::CHR | mode::BLK => {}
            mode::DIR => return Err(EPERM),
            _ => return Err(EINVAL),
        }
        let m = (m & mode::FMT as u64) | (m & 0o7777 & !self.umask);
        self.path_call(p::MKNOD, dirfd, path, m, dev as u32 as u64)
    }

    /// A FIFO end just opened (`fid`, `flags` as asked) waits for the other
    /// end unless `O_NONBLOCK` or `O_RDWR`; a signal ends the wait (and
    /// the open) with `EINTR`.
    pub fn fifo_opened(&mut self, fid: u64, m: u64, flags: u64) -> R {
        if m as u32 & mode::FMT != mode::FIFO
            || flags & (o::NONBLOCK | o::PATH) != 0
            || flags & o::ACCMODE == o::RDWR
        {
            return Ok(0);
        }
        let intr = self.interrupting();
        let r = loop {
            if self.interrupted() {
                break Err(EINTR);
            }
            // Not tagged: a threaded process's keeper waits here too.
            let a = Msg::new(UNIXD, p::FIFO_WAIT)
                .words([fid, 0, 0, intr])
                .call();
            if let Some(r) = result(&a) {
                break r;
            }
        };
        if r.is_err() {
            let _ = ux(p::CLOSE, [fid, 0, 0, 0], &[]);
        }
        r
    }

    /// The `fcntl`s of this module → `None` for another command.
    pub fn fcntl_pipe(&mut self, fid: u64, cmd: u64, arg: u64) -> Option<R> {
        use stet_unix::sys::fcntl::*;
        const TID: u64 = 0;
        const PID: u64 = 1;
        const PGRP: u64 = 2;
        Some(match cmd {
            F_GETPIPE_SZ => ux(p::PIPE_SIZE, [fid, 0, 0, 0], &[]).0,
            F_SETPIPE_SZ => ux(p::PIPE_SIZE, [fid, 1, arg as u32 as u64, 0], &[]).0,
            F_GETLEASE => ux(p::LEASE, [fid, 0, 0, 0], &[]).0,
            F_SETLEASE => ux(p::LEASE, [fid, 1, arg as u32 as u64, 0], &[]).0,
            F_GETSIG => ux(p::OWNER, [fid, p::owner::GETSIG, 0, 0], &[]).0,
            F_SETSIG => ux(p::OWNER, [fid, p::owner::SETSIG, arg as u32 as u64, 0], &[]).0,
            F_GETOWN => ux(p::OWNER, [fid, p::owner::GET, 0, 0], &[]).0.map(|v| {
                let id = v >> 32;
                if v as u32 as u64 == PGRP {
                    (id as i64).wrapping_neg() as u64
                } else {
                    id
                }
            }),
            F_SETOWN => {
                let who = arg as u32 as i32 as i64;
                let v = if who < 0 {
                    PGRP | (who.unsigned_abs() & 0xffff_ffff) << 32
                } else {
                    PID | (who as u64) << 32
                };
                ux(p::OWNER, [fid, p::owner::SET, v, 0], &[]).0
            }
            F_GETOWN_EX => (|| {
                let v = ux(p::OWNER, [fid, p::owner::GET, 0, 0], &[]).0?;
                let mut b = [0u8; 8];
                b[..4].copy_from_slice(&(v as u32).to_le_bytes());
                b[4..].copy_from_slice(&((v >> 32) as u32).to_le_bytes());
                self.space.write(arg, &b).map_err(Touch::errno)?;
                Ok(0)
            })(),
            F_SETOWN_EX => (|| {
                let mut b = [0u8; 8];
                self.space.read(arg, &mut b).map_err(Touch::errno)?;
                let ty = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
                let pid = i32::from_le_bytes([b[4], b[5], b[6], b[7]]);
                if !matches!(ty, TID | PID | PGRP) || pid < 0 {
                    return Err(EINVAL);
                }
                ux(
                    p::OWNER,
                    [fid, p::owner::SET, ty | (pid as u64) << 32, 0],
                    &[],
                )
                .0
            })(),
            _ => return None,
        })
    }

    /// A descriptor as `splice` sees it.
    fn splice_end(&mut self, fd: u64) -> Result<End, i64> {
        let fid = self.fid(fd)?;
        let flags = ux(p::FLAGS, [fid, 0, 0, 0], &[]).0?;
        let mut st = [0u8; 144];
        let a = Msg::new(UNIXD, p::FSTAT)
            .words([fid, 0, 0, 0])
            .call_into(&mut st);
        result(&a).unwrap_or(Err(EIO))?;
        let m = u32::from_le_bytes([st[24], st[25], st[26], st[27]]);
        Ok(End {
            fid,
            flags,
            pipe: m & mode::FMT == mode::FIFO,
        })
    }

    /// Reads an `loff_t` argument (null: none).
    fn offset_arg(&mut self, a: u64) -> Result<Option<u64>, i64> {
        if a == 0 {
            return Ok(None);
        }
        let mut b = [0u8; 8];
        self.space.read(a, &mut b).map_err(Touch::errno)?;
        let v = u64::from_le_bytes(b);
        if (v as i64) < 0 {
            return Err(EINVAL);
        }
        Ok(Some(v))
    }

    /// One piece through a pipe's end: read up to `n` bytes into `buf`,
    /// or write `buf`'s → how many.
    fn pipe_piece(&mut self, fid: u64, buf: &mut [u8], write: bool, nowait: bool) -> R {
        let intr = self.interrupting();
        let how = (buf.len() as u64)
            | if write { p::SPLICE_WRITE } else { 0 }
            | if nowait { p::SPLICE_NOWAIT } else { 0 };
        loop {
            if self.interrupted() {
                return Err(EINTR);
            }
            let m = Msg::new(UNIXD, p::SPLICE_IO).words([fid, buf.len() as u64, how, intr]);
            let a = if write {
                m.string(buf).call()
            } else {
                m.call_into(buf)
            };
            self.carried_ready(&a);
            if let Some(r) = result(&a) {
                return r;
            }
        }
    }

    /// `splice`.
    pub fn splice(&mut self, fdi: u64, offi: u64, fdo: u64, offo: u64, len: u64, fl: u64) -> R {
        if len == 0 {
            return Ok(0);
        }
        if fl & !sp::ALL != 0 {
            return Err(EINVAL);
        }
        let (i, out) = (self.splice_end(fdi)?, self.splice_end(fdo)?);
        if !i.reads() || !out.writes() {
            return Err(EBADF);
        }
        let nowait = fl & sp::SPLICE_F_NONBLOCK != 0;
        let len = len.min(0x7fff_f000);
        match (i.pipe, out.pipe) {
            (true, true) => {
                if offi != 0 || offo != 0 {
                    return Err(ESPIPE);
                }
                self.pipe_move(i.fid, out.fid, len, nowait, false)
            }
            (true, false) => {
                if offi != 0 {
                    return Err(ESPIPE);
                }
                let at = self.offset_arg(offo)?;
                if out.flags & o::APPEND != 0 {
                    return Err(EINVAL);
                }
                let mut done = 0;
                let mut buf = [0u8; CHUNK as usize];
                while done < len {
                    let n = (len - done).min(CHUNK) as usize;
                    let got = match self.pipe_piece(i.fid, &mut buf[..n], false, nowait || done > 0)
                    {
                        Ok(0) => break,
                        Ok(g) => g as usize,
                        Err(e) if done == 0 => return Err(e),
                        Err(_) => break,
                    };
                    let data = &buf[..got];
                    let put = match at {
                        Some(o) => ux(p::PWRITE, [out.fid, o + done, 0, 0], data).0,
                        None => ux(p::WRITE, [out.fid, 0, 0, 0], data).0,
                    };
                    match put {
                        Ok(k) => done += k,
                        Err(e) if done == 0 => return Err(e),
                        Err(_) => break,
                    }
                }
                if let Some(o) = at {
                    self.space
                        .write(offo, &(o + done).to_le_bytes())
                        .map_err(Touch::errno)?;
                }
                Ok(done)
            }
            (false, true) => {
                if offo != 0 {
                    return Err(ESPIPE);
                }
                let given = self.offset_arg(offi)?;
                // A file without offsets (a terminal, a device) is read
                // one piece at a time.
                let at = match given {
                    Some(o) => Some(o),
                    None => ux(p::LSEEK, [i.fid, 0, 1, 0], &[]).0.ok(),
                };
                let mut done = 0;
                let mut buf = [0u8; CHUNK as usize];
                while done < len {
                    let n = (len - done).min(CHUNK);
                    let a = match at {
                        Some(o) => Msg::new(UNIXD, p::PREAD)
                            .words([i.fid, n, o + done, 0])
                            .call_into(&mut buf),
                        None => Msg::new(UNIXD, p::READ)
                            .words([i.fid, n, 0, 0])
                            .call_into(&mut buf),
                    };
                    let got = match result(&a).unwrap_or(Err(EAGAIN)) {
                        Ok(0) => break,
                        Ok(g) => g as usize,
                        Err(e) if done == 0 => return Err(e),
                        Err(_) => break,
                    };
                    let first = done == 0;
                    match self.pipe_piece(out.fid, &mut buf[..got], true, nowait || !first) {
                        Ok(k) => done += k,
                        Err(e) if first => return Err(e),
                        Err(_) => break,
                    }
                    if at.is_none() {
                        break;
                    }
                }
                match (given, at) {
                    (Some(o), _) => self
                        .space
                        .write(offi, &(o + done).to_le_bytes())
                        .map_err(Touch::errno)?,
                    (None, Some(o)) => {
                        ux(p::LSEEK, [i.fid, o + done, 0, 0], &[]).0?;
                    }
                    _ => {}
                }
                Ok(done)
            }
            (false, false) => Err(EINVAL),
        }
    }

    /// Pipe to pipe: moved (or with `tee` copied) by unixd.
    fn pipe_move(&mut self, from: u64, to: u64, len: u64, nowait: bool, tee: bool) -> R {
        let intr = self.interrupting();
        let how = len.min(u32::MAX as u64)
            | if nowait { p::SPLICE_NOWAIT } else { 0 }
            | if tee { p::SPLICE_TEE } else { 0 };
        loop {
            if self.interrupted() {
                return Err(EINTR);
            }
            let a = Msg::new(UNIXD, p::PIPE_MOVE)
                .words([from, to, how, intr])
                .call();
            self.carried_ready(&a);
            if let Some(r) = result(&a) {
                return r;
            }
        }
    }

    /// `tee`.
    pub fn tee(&mut self, fdi: u64, fdo: u64, len: u64, fl: u64) -> R {
        if fl & !sp::ALL != 0 {
            return Err(EINVAL);
        }
        if len == 0 {
            return Ok(0);
        }
        let (i, out) = (self.splice_end(fdi)?, self.splice_end(fdo)?);
        if !i.reads() || !out.writes() {
            return Err(EBADF);
        }
        if !i.pipe || !out.pipe || i.fid == out.fid {
            return Err(EINVAL);
        }
        // The same pipe by two descriptions: unixd says so (`EINVAL`).
        self.pipe_move(i.fid, out.fid, len, fl & sp::SPLICE_F_NONBLOCK != 0, true)
    }

    /// `vmsplice`: the caller's memory into a pipe (its write end) or out
    /// of it (its read end), as `writev` and `readv` would, waiting only
    /// for the first piece.
    pub fn vmsplice(&mut self, fd: u64, iov: u64, cnt: u64, fl: u64) -> R {
        if fl & !sp::ALL != 0 {
            return Err(EINVAL);
        }
        let e = self.splice_end(fd)?;
        if !e.reads() && !e.writes() {
            return Err(EBADF);
        }
        if cnt > MAX_IOV {
            return Err(EINVAL);
        }
        let write = e.writes();
        let mut segs = [(0u64, 0u64); 16];
        let mut total = 0u64;
        let nowait = fl & sp::SPLICE_F_NONBLOCK != 0;
        let mut buf = [0u8; CHUNK as usize];
        let mut checked = false;
        let mut k = 0;
        while k < cnt {
            let m = (cnt - k).min(segs.len() as u64) as usize;
            let mut raw = [0u8; 256];
            self.space
                .read(iov.wrapping_add(16 * k), &mut raw[..16 * m])
                .map_err(Touch::errno)?;
            for (j, s) in segs.iter_mut().take(m).enumerate() {
                let b = &raw[16 * j..16 * j + 16];
                *s = (
                    u64::from_le_bytes(b[..8].try_into().unwrap_or_default()),
                    u64::from_le_bytes(b[8..].try_into().unwrap_or_default()),
                );
                if s.1 > isize::MAX as u64 {
                    return Err(EINVAL);
                }
            }
            if !checked {
                // Linux: only a pipe's descriptor (`EBADF`).
                if !e.pipe {
                    return Err(EBADF);
                }
                checked = true;
            }
            for &(base, len) in &segs[..m] {
                let mut off = 0;
                while off < len {
                    let n = (len - off).min(CHUNK) as usize;
                    let first = total == 0;
                    let r = if write {
                        self.space
                            .read(base.wrapping_add(off), &mut buf[..n])
                            .map_err(Touch::errno)
                            .and_then(|_| {
                                self.pipe_piece(e.fid, &mut buf[..n], true, nowait || !first)
                            })
                    } else {
                        self.pipe_piece(e.fid, &mut buf[..n], false, nowait || !first)
                            .and_then(|g| {
                                self.space
                                    .write(base.wrapping_add(off), &buf[..g as usize])
                                    .map_err(Touch::errno)
                                    .map(|_| g)
                            })
                    };
                    match r {
                        Ok(0) => return Ok(total),
                        Ok(g) => {
                            total += g;
                            off += g;
                            if g < n as u64 {
                                return Ok(total);
                            }
                        }
                        Err(e) if total == 0 => return Err(e),
                        Err(_) => return Ok(total),
                    }
                }
            }
            k += m as u64;
        }
        if !checked && !e.pipe {
            return Err(EBADF);
        }
        Ok(total)
    }

    /// Access checks of `sendfile`: the input readable, the output
    /// writable (`EBADF`) and not appending (`EINVAL`).
    pub fn sendfile_check(&mut self, out: u64, inp: u64) -> R {
        let (i, o_) = (self.splice_end(inp)?, self.splice_end(out)?);
        if !i.reads() || !o_.writes() {
            return Err(EBADF);
        }
        if o_.flags & o::APPEND != 0 {
            return Err(EINVAL);
        }
        Ok(0)
    }

    /// `/proc/self/fd` or `fdinfo` (or `/proc/<own pid>/…`) in `path`:
    /// unixd makes the directories of this process's descriptors again
    /// first.
    pub fn fd_dir_for(&mut self, path: &[u8]) {
        let Some(rest) = path.strip_prefix(b"/proc/") else {
            return;
        };
        let mut pid = [0u8; 20];
        let mut d = 0;
        let mut v = self.pid;
        loop {
            pid[19 - d] = b'0' + (v % 10) as u8;
            d += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        let rest = rest
            .strip_prefix(b"self")
            .or_else(|| rest.strip_prefix(&pid[20 - d..]));
        let Some(rest) = rest else {
            return;
        };
        let under = |d: &[u8]| {
            rest.strip_prefix(d)
                .is_some_and(|r| r.is_empty() || r[0] == b'/')
        };
        if !(under(b"/fd") || under(b"/fdinfo")) {
            return;
        }
        let mut s = [0u8; 8 * crate::fds::MAX_FDS];
        let mut n = 0;
        for (fd, f) in self.fds.iter().enumerate() {
            if f.fid != crate::fds::NONE {
                s[n..n + 4].copy_from_slice(&(fd as u32).to_le_bytes());
                s[n + 4..n + 8].copy_from_slice(&f.fid.to_le_bytes());
                n += 8;
            }
        }
        let _ = ux(p::FD_DIR, [0; 4], &s[..n]);
    }
}
