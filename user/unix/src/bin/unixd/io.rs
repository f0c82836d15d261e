//! Moving bytes: `read` and `write` on every kind of open file (regular
//! files, `/dev` devices, pipes, the terminal), pipes (a parked read is
//! answered with its bytes when they come), `poll`, and the terminal's
//! input, `ioctl`s and `isatty`.

use crate::open::{Kind, FREE, NO_PIPE};
use crate::slots::CONSOLE;
use crate::wait::{resume_key, Wait, NO_WAITER};
use crate::{now_ns, word, Reply, Unixd};
use stet_prng::XorShift64Star;
use stet_rt::abi::{code::Code, order};
use stet_rt::key::{Answer, Msg};
use stet_unix::fs::mode;
use stet_unix::proto as p;
use stet_unix::proto::o;
use stet_unix::sys::errno::*;
use stet_unixfs::pipe::PIPE_BUF;

impl Unixd<'_> {
    pub(crate) fn read(
        &mut self,
        fid: u64,
        len: u64,
        out: &mut [u8],
        at: Option<u64>,
    ) -> Result<Reply, i64> {
        let f = self.fid(fid)?;
        let o = self.open[f];
        if at.is_some() && o.flags & o::PATH == 0 && !o.kind.seekable() {
            return Err(ESPIPE);
        }
        if o.flags & o::ACCMODE == o::WRONLY || o.flags & o::PATH != 0 {
            return Err(EBADF);
        }
        let len = (len as usize).min(out.len());
        let n = match o.kind {
            Kind::Inode(ino) => {
                let i = *self.fs.inode(ino).ok_or(EBADF)?;
                if i.mode & mode::FMT == mode::DIR {
                    return Err(EISDIR);
                }
                let off = at.unwrap_or(o.off);
                let n = (len as u64).min(i.size.saturating_sub(off)) as usize;
                self.content.read(ino, off, &mut out[..n])?;
                if at.is_none() {
                    self.open[f].off = off + n as u64;
                }
                if n > 0 {
                    self.inotify_inode(ino, stet_unixfs::inotify::mask::ACCESS);
                }
                n
            }
            Kind::Null => 0,
            Kind::Tty => match self.tty.read(&mut out[..len]) {
                Some(n) => n,
                None if o.flags & o::NONBLOCK != 0 => return Err(EAGAIN),
                None => return self.park(Wait::Tty),
            },
            Kind::Zero => {
                out[..len].fill(0);
                len
            }
            Kind::Random => {
                // Seeded from the clock at each read; not for cryptography.
                XorShift64Star::new(now_ns()).fill(&mut out[..len]);
                len
            }
            Kind::PipeRead(n) | Kind::PipeBoth(n) => {
                if at.is_some() {
                    return Err(ESPIPE);
                }
                let pi = &mut self.pipes[n as usize];
                if pi.buf.is_empty() {
                    if pi.writers == 0 || len == 0 {
                        0
                    } else if o.flags & o::NONBLOCK != 0 {
                        return Err(EAGAIN);
                    } else {
                        return self.park_read(Wait::Pipe(n), len);
                    }
                } else {
                    let got = pi.buf.take(&mut out[..len]);
                    pi.rgen = pi.rgen.wrapping_add(1);
                    self.pipe_changed(n);
                    got
                }
            }
            Kind::Event(_) | Kind::Timer(_) => return self.fdobj_read(f, o.kind, len, out),
            Kind::Socket(_) if at.is_some() => return Err(ESPIPE),
            Kind::Socket(s) => return self.sock_read(f, s, len, out),
            Kind::Signal(_) if at.is_some() => return Err(ESPIPE),
            Kind::Signal(i) => return self.signalfd_read(f, i),
            Kind::Epoll(_) => return Err(EINVAL),
            Kind::PipeWrite(_) | Kind::Free => return Err(EBADF),
            Kind::Pidfd(_) => return Err(EINVAL),
            Kind::Inotify(_) if at.is_some() => return Err(ESPIPE),
            Kind::Inotify(i) => return self.inotify_read(f, i, len, out),
        };
        Ok(Reply::Now([n as u64, 0, 0], n, false))
    }

    /// `write` (`at` `None`) or `pwrite` of `data` to `fid`; `fsize` is
    /// the caller's file-size limit as [`p::fsize_word`] gives it.
    pub(crate) fn write(
        &mut self,
        fid: u64,
        data: &[u8],
        at: Option<u64>,
        fsize: u64,
    ) -> Result<Reply, i64> {
        let f = self.fid(fid)?;
        let o = self.open[f];
        // A file without offsets refuses `pwrite` before anything else.
        if at.is_some() && o.flags & o::PATH == 0 && !o.kind.seekable() {
            return Err(ESPIPE);
        }
        if o.flags & o::ACCMODE == o::RDONLY || o.flags & o::PATH != 0 {
            return Err(EBADF);
        }
        let limit = !fsize;
        let n = match o.kind {
            Kind::Inode(ino) => {
                let i = *self.fs.inode(ino).ok_or(EBADF)?;
                if i.mode & mode::FMT != mode::REG {
                    return Err(EISDIR);
                }
                // `O_APPEND` puts even a `pwrite` at the end (Linux's
                // documented bug).
                let off = match at {
                    _ if o.flags & o::APPEND != 0 => i.size,
                    Some(a) => a,
                    None => o.off,
                };
                // No file grows past `RLIMIT_FSIZE` (a write reaching it
                // is cut there; one wholly past it fails) or 2^63 - 1.
                let max = limit.min(i64::MAX as u64);
                if !data.is_empty() && off >= max {
                    return Err(EFBIG);
                }
                // A sealed memfd (`memfds`).
                let seals = self.seals_of(ino);
                if seals != 0 && !data.is_empty() {
                    use crate::memfds::{SEAL_FUTURE_WRITE, SEAL_GROW, SEAL_WRITE};
                    if seals & (SEAL_WRITE | SEAL_FUTURE_WRITE) != 0
                        || (seals & SEAL_GROW != 0 && off + data.len() as u64 > i.size)
                    {
                        return Err(EPERM);
                    }
                }
                let data = &data[..data.len().min((max - off.min(max)) as usize)];
                // A setting of `/proc/sys` (`sysmisc`): the file is made
                // again from it at the next open.
                if let Some(crate::procfs::Gen::System(g)) = self.gen_of(ino) {
                    if !g.writable() {
                        // Read-only for root too, as Linux's 0444 files
                        // of `/proc/sys`.
                        return Err(EACCES);
                    }
                    let n = self.sysctl_write(g, data, off)?;
                    if at.is_none() {
                        self.open[f].off = off + n;
                    }
                    return Ok(Reply::Now([n, 0, 0], 0, false));
                }
                self.content.write(ino, off, data)?;
                let now = self.time();
                // A writer without privilege clears set-user-ID (Linux's
                // `file_remove_privs`); only a file with those bits asks.
                let m = if i.mode & (mode::SUID | mode::SGID) != 0 {
                    self.caller_cred().after_write(i.owner())
                } else {
                    i.mode
                };
                if let Some(n) = self.fs.inode_mut(ino) {
                    n.size = n.size.max(off + data.len() as u64);
                    n.mtime = now;
                    n.mode = m;
                }
                if at.is_none() {
                    self.open[f].off = off + data.len() as u64;
                }
                if !data.is_empty() {
                    self.inotify_inode(ino, stet_unixfs::inotify::mask::MODIFY);
                }
                data.len()
            }
            Kind::Null | Kind::Zero | Kind::Random => data.len(),
            Kind::Tty => {
                for c in data.chunks(4096) {
                    Msg::new(CONSOLE, order::console::WRITE).string(c).call();
                }
                data.len()
            }
            Kind::PipeWrite(n) | Kind::PipeBoth(n) => {
                if at.is_some() {
                    return Err(ESPIPE);
                }
                let pi = &mut self.pipes[n as usize];
                if pi.readers == 0 {
                    return Err(EPIPE);
                }
                // Writes of at most PIPE_BUF bytes are all or nothing; an
                // `O_DIRECT` write end writes packets.
                let packet = o.flags & o::DIRECT != 0;
                let fits = pi.buf.fits(data.len(), packet);
                if fits == 0 || (data.len() <= PIPE_BUF && fits < data.len()) {
                    if o.flags & o::NONBLOCK != 0 {
                        return Err(EAGAIN);
                    }
                    return self.park(Wait::Pipe(n));
                }
                let put = pi.buf.put(data, packet);
                pi.wgen = pi.wgen.wrapping_add(1);
                if put == 0 {
                    return Err(ENOMEM);
                }
                self.pipe_changed(n);
                self.pipe_async(n);
                put
            }
            Kind::Event(e) => return self.event_write(f, e, data),
            Kind::Socket(_) if at.is_some() => return Err(ESPIPE),
            Kind::Socket(s) => return self.sock_write(f, s, data),
            Kind::Epoll(_) | Kind::Signal(_) => return Err(EINVAL),
            Kind::PipeRead(_) | Kind::Timer(_) | Kind::Free => return Err(EBADF),
            Kind::Pidfd(_) | Kind::Inotify(_) => return Err(EINVAL),
        };
        Ok(Reply::Now([n as u64, 0, 0], 0, false))
    }

    /// A pipe changed: its parked callers ask again; a pipe with no ends
    /// left is freed.
    pub(crate) fn pipe_changed(&mut self, n: u16) {
        self.epoll_wake();
        for i in 0..self.waiters.len() {
            if self.waiters[i].on != Wait::Pipe(n) {
                continue;
            }
            let len = self.waiters[i].read_len as usize;
            let pi = &mut self.pipes[n as usize];
            if len == 0 || self.waiters[i].slot == crate::wait::NOTIFY {
                self.wake(i);
            } else if !pi.buf.is_empty() {
                // A parked read gets its bytes now: one message, where
                // waking it to read again took a second call. The bytes go
                // straight from the ring (as far as it wraps: a pipe read
                // may return fewer bytes than asked).
                let (pid, to) = (self.waiters[i].pid, self.waiters[i].slot);
                self.waiters[i] = NO_WAITER;
                let sigs = self.take_pending(pid);
                let pi = &mut self.pipes[n as usize];
                let s = pi.buf.front(len);
                if let Some(r) = resume_key(&self.keys, i, to) {
                    Msg::new(r, Code::Ok.into())
                        .words([s.len() as u64, 0, 0, sigs])
                        .string(s)
                        .send();
                }
                let got = s.len();
                pi.buf.consume(got);
                pi.rgen = pi.rgen.wrapping_add(1);
            } else if pi.writers == 0 {
                self.answer(i, 0); // end of file
            }
        }
        let pi = &mut self.pipes[n as usize];
        if pi.used && pi.readers == 0 && pi.writers == 0 {
            let fifo = pi.fifo;
            *pi = NO_PIPE;
            // A FIFO whose names are gone goes with its last open end.
            if fifo != 0 {
                self.maybe_free(fifo);
            }
        }
    }

    /// The orders that move bytes: `read`, `write`, pipes, `poll`, and the terminal (its input, `ioctl`s, `isatty`).
    pub(crate) fn io_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let w = a.w;
        match a.code {
            p::READ => self.read(w[0], w[1], out, None),
            p::PREAD => self.read(w[0], w[1], out, Some(w[2])),
            p::WRITE => self.write(w[0], s, None, w[2]),
            p::PWRITE => self.write(w[0], s, Some(w[1]), w[2]),
            p::PIPE => {
                let n = crate::table::take(&mut self.pipes, |p| !p.used, NO_PIPE)
                    .filter(|&n| n <= u16::MAX as usize)
                    .ok_or(ENFILE)?;
                let fl = w[0] & (o::NONBLOCK | o::DIRECT);
                let rd = self.new_fid(Kind::PipeRead(n as u16), o::RDONLY | fl)?;
                let wr = match self.new_fid(Kind::PipeWrite(n as u16), o::WRONLY | fl) {
                    Ok(f) => f,
                    Err(e) => {
                        self.open[rd as usize] = FREE;
                        return Err(e);
                    }
                };
                self.pipes[n] = NO_PIPE;
                self.pipes[n].used = true;
                self.pipe_owner(n);
                self.pipes[n].readers = 1;
                self.pipes[n].writers = 1;
                Ok(Reply::Now([0, rd, wr], 0, false))
            }
            p::POLL => {
                // The same readiness epoll sees (`epoll`); w1: the caller's
                // pending signals, for a signalfd.
                let f = self.fid(w[0])?;
                let r = self.readiness(f, w[1], 0).0 as u64;
                let signalfd = matches!(self.open[f].kind, Kind::Signal(_)) as u64;
                Ok(Reply::Now([r, self.changes, signalfd], 0, false))
            }
            p::INPUT => {
                let mut sigs = [0u64; 8];
                let mut ns = 0;
                let woke = self.tty.input(
                    s,
                    &mut |e| {
                        Msg::new(CONSOLE, order::console::WRITE).string(e).call();
                    },
                    &mut |sig| {
                        if ns < sigs.len() {
                            sigs[ns] = sig;
                            ns += 1;
                        }
                    },
                );
                let fg = self.tty.fg;
                for &sig in &sigs[..ns] {
                    for i in 0..self.procs.len() {
                        if self.procs[i].pid != 0 && self.procs[i].pgid == fg {
                            self.signal(i, sig);
                        }
                    }
                }
                if woke || ns > 0 {
                    for w in 0..self.waiters.len() {
                        if self.waiters[w].on == Wait::Tty {
                            self.wake(w);
                        }
                    }
                    self.epoll_wake();
                }
                word(Ok(0))
            }
            p::TTY => {
                let f = self.fid(w[0])?;
                // `FIONREAD` of a pipe: the bytes waiting in it.
                if let Some((n, _, _)) = self.open[f].kind.pipe() {
                    if w[1] == stet_unix::sys::ioctl::FIONREAD {
                        return word(Ok(self.pipes[n as usize].buf.len() as u64));
                    }
                }
                // `FIONREAD` of an inotify instance: the bytes of its
                // queued records.
                if let Kind::Inotify(n) = self.open[f].kind {
                    if w[1] == stet_unix::sys::ioctl::FIONREAD {
                        return word(Ok(self.inotify_pending(n)));
                    }
                }
                if self.open[f].kind != Kind::Tty {
                    return Err(ENOTTY);
                }
                use stet_unix::sys::ioctl as io;
                match w[1] {
                    io::TCGETS => {
                        out[..36].copy_from_slice(&self.tty.termios.to_bytes());
                        Ok(Reply::Now([0, 0, 0], 36, false))
                    }
                    io::TCSETS | io::TCSETSW | io::TCSETSF => {
                        let b: [u8; 36] =
                            s.get(..36).and_then(|b| b.try_into().ok()).ok_or(EFAULT)?;
                        self.tty.set(stet_unix::tty::Termios::from_bytes(&b));
                        for x in 0..self.waiters.len() {
                            if self.waiters[x].on == Wait::Tty {
                                self.wake(x);
                            }
                        }
                        word(Ok(0))
                    }
                    io::TIOCGPGRP => word(Ok(self.tty.fg as u64)),
                    io::TIOCSPGRP => {
                        self.tty.fg = w[2] as u32;
                        word(Ok(0))
                    }
                    io::TIOCGWINSZ => word(Ok(24 << 16 | 80)),
                    io::TIOCSWINSZ => word(Ok(0)),
                    io::FIONREAD => word(Ok(self.tty.readable() as u64)),
                    _ => Err(EINVAL),
                }
            }
            p::ISATTY => {
                let f = self.fid(w[0])?;
                word(if self.open[f].kind == Kind::Tty {
                    Ok(0)
                } else {
                    Err(ENOTTY)
                })
            }
            _ => Err(ENOSYS),
        }
    }
}
