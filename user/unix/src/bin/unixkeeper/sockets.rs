//! The socket calls: `socket`, `socketpair`, `bind`, `listen`, `accept`,
//! `accept4`, `connect`, `sendto`, `recvfrom`, `sendmsg`, `recvmsg`,
//! `shutdown`, `getsockname`, `getpeername`, `getsockopt`, `setsockopt`.
//! AF_UNIX sockets live in unixd (`proto::SOCKET` … `SOCKOPT`); the
//! keeper checks what Linux checks in the caller's arguments (families,
//! types, flags, address lengths, pointers: `EAFNOSUPPORT`, `EINVAL`,
//! `EFAULT`) in Linux's order, moves the bytes, and raises `SIGPIPE` on
//! `EPIPE` unless `MSG_NOSIGNAL`. Other families (`AF_INET`, `AF_INET6`,
//! `AF_NETLINK`, …) answer `EAFNOSUPPORT` until there is a network.

use crate::fds::CLOSED;
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::key::{Answer, Msg};
use stet_unix::proto as p;
use stet_unix::proto::o;
use stet_unix::sys::errno::*;
use stet_unix::sys::nr;
use stet_unix::sys::sock::*;

/// `ENOBUFS`.
const ENOBUFS: i64 = 105;

type R = Result<u64, i64>;

/// A message's bytes (the rest of it is a name).
const CHUNK: usize = 4096 - 128;
/// `struct sockaddr_un`'s size.
const SOCKADDR_UN: usize = 2 + SUN_PATH;
/// The most iovecs (`UIO_MAXIOV`).
const MAX_IOV: u64 = 1024;

/// Whether call `n` is a socket call.
pub fn handles(n: u64) -> bool {
    matches!(
        n,
        nr::SOCKET
            | nr::SOCKETPAIR
            | nr::BIND
            | nr::LISTEN
            | nr::ACCEPT
            | nr::ACCEPT4
            | nr::CONNECT
            | nr::SENDTO
            | nr::RECVFROM
            | nr::SENDMSG
            | nr::RECVMSG
            | nr::SHUTDOWN
            | nr::GETSOCKNAME
            | nr::GETPEERNAME
            | nr::GETSOCKOPT
            | nr::SETSOCKOPT
    )
}

/// A C `int` argument.
fn int(v: u64) -> i64 {
    v as u32 as i32 as i64
}

/// A `struct sockaddr` the caller gave: its bytes and length.
struct Addr {
    b: [u8; 128],
    len: usize,
}

impl Addr {
    /// `sun_path`'s bytes of an AF_UNIX name: `EINVAL` unless the family
    /// is AF_UNIX and the length is between a family and a whole
    /// `sockaddr_un` (`min`: the shortest allowed).
    fn unix_name(&self, min: usize) -> Result<&[u8], i64> {
        if self.len < min || self.len > SOCKADDR_UN {
            return Err(EINVAL);
        }
        if u16::from_le_bytes([self.b[0], self.b[1]]) as u64 != AF_UNIX {
            return Err(EINVAL);
        }
        Ok(&self.b[2..self.len])
    }
}

/// Descriptions that came with a message (`SCM_RIGHTS`): unixd's fids,
/// each a reference of this process's until a descriptor names it or it
/// is closed.
struct Fids {
    v: [u32; p::SCM_MAX_FD],
    n: usize,
}

impl Fids {
    fn new() -> Fids {
        Fids {
            v: [0; p::SCM_MAX_FD],
            n: 0,
        }
    }

    /// The first `k` `u32`s of `b`.
    fn take(&mut self, b: &[u8], k: usize) {
        for c in b.chunks_exact(4).take(k) {
            let fid = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if self.n < self.v.len() {
                self.v[self.n] = fid;
                self.n += 1;
            } else {
                let _ = crate::fds::ux(p::CLOSE, [fid as u64, 0, 0, 0], &[]);
            }
        }
    }

    /// Closes those from `from` on.
    fn drop_from(&mut self, from: usize) {
        for &fid in &self.v[from.min(self.n)..self.n] {
            let _ = crate::fds::ux(p::CLOSE, [fid as u64, 0, 0, 0], &[]);
        }
        self.n = self.n.min(from);
    }

    fn drop_all(&mut self) {
        self.drop_from(0)
    }
}

/// A name as `sun_path` bytes to send: a path up to its first NUL, an
/// abstract name whole.
fn send_name(n: &[u8]) -> &[u8] {
    if n.first() == Some(&0) {
        n
    } else {
        &n[..n.iter().position(|&b| b == 0).unwrap_or(n.len())]
    }
}

impl Keeper {
    /// Carries out socket call `n`.
    pub fn socket_call(&mut self, n: u64, a: &[u64; 6]) -> R {
        match n {
            nr::SOCKET => self.socket(a[0], a[1], a[2]),
            nr::SOCKETPAIR => self.socketpair(a[0], a[1], a[2], a[3]),
            nr::BIND => self.bind(a[0], a[1], a[2]),
            nr::LISTEN => {
                let fid = self.fid(a[0])?;
                self.sock(p::LISTEN, [fid, a[1] as u32 as u64, 0], &[], &mut [])
                    .map(|_| 0)
            }
            nr::ACCEPT => self.accept(a[0], a[1], a[2], 0),
            nr::ACCEPT4 => self.accept(a[0], a[1], a[2], a[3]),
            nr::CONNECT => self.connect(a[0], a[1], a[2]),
            nr::SENDTO => self.sendto(a[0], a[1], a[2], a[3], a[4], a[5]),
            nr::RECVFROM => self.recvfrom(a[0], a[1], a[2], a[3], a[4], a[5]),
            nr::SENDMSG => self.sendmsg(a[0], a[1], a[2]),
            nr::RECVMSG => self.recvmsg(a[0], a[1], a[2]),
            nr::SHUTDOWN => {
                let fid = self.fid(a[0])?;
                self.sock(p::SHUTDOWN, [fid, int(a[1]) as u64, 0], &[], &mut [])
                    .map(|_| 0)
            }
            nr::GETSOCKNAME => self.sockname(a[0], a[1], a[2], 0),
            nr::GETPEERNAME => self.sockname(a[0], a[1], a[2], 1),
            nr::GETSOCKOPT => self.getsockopt(a[0], a[1], a[2], a[3], a[4]),
            nr::SETSOCKOPT => self.setsockopt(a[0], a[1], a[2], a[3], a[4]),
            _ => Err(ENOSYS),
        }
    }

    /// One socket order to unixd, asked again while it answers `BUSY`
    /// (the socket changed: look again); a signal here ends a wait.
    fn sock(&mut self, order: u64, w: [u64; 3], s: &[u8], out: &mut [u8]) -> Result<Answer, i64> {
        self.sock_raw(order, w, s.as_ptr() as u64, s.len() as u64, out)
    }

    /// [`Keeper::sock`] with the string at keeper address `at`.
    fn sock_raw(
        &mut self,
        order: u64,
        w: [u64; 3],
        at: u64,
        len: u64,
        out: &mut [u8],
    ) -> Result<Answer, i64> {
        loop {
            let intr = self.interrupting();
            let a = Msg::new(UNIXD, self.tagged(order))
                .words([w[0], w[1], w[2], intr])
                .raw_string(at, len)
                .call_into(out);
            match crate::fds::result(&a) {
                None if self.interrupted() => return Err(EINTR),
                None => continue,
                Some(Ok(_)) => return Ok(a),
                Some(Err(e)) => return Err(e),
            }
        }
    }

    /// Fid of socket descriptor `fd` (`EBADF`, `ENOTSOCK`), asked of
    /// unixd before the caller's other arguments are looked at.
    fn sock_fid(&mut self, fd: u64) -> R {
        let fid = self.fid(fd)?;
        self.sock(p::SOCKOPT, [fid, 0, SO_TYPE], &[], &mut [])?;
        Ok(fid)
    }

    /// The caller's `struct sockaddr` at `addr`, `len` bytes (`EINVAL`
    /// past 128, `EFAULT`).
    fn addr_in(&mut self, addr: u64, len: u64) -> Result<Addr, i64> {
        let l = int(len);
        if !(0..=128).contains(&l) {
            return Err(EINVAL);
        }
        let mut b = [0u8; 128];
        self.space
            .read(addr, &mut b[..l as usize])
            .map_err(Touch::errno)?;
        Ok(Addr { b, len: l as usize })
    }

    /// Writes name `name` (`sun_path`'s bytes) as a `sockaddr_un` to
    /// `addr`, at most `*alen` bytes, and its whole length to `*alen`.
    fn addr_out(&mut self, addr: u64, alen: u64, name: &[u8]) -> Result<(), i64> {
        let mut b = [0u8; 4];
        self.space.read(alen, &mut b).map_err(Touch::errno)?;
        let room = i32::from_le_bytes(b);
        if room < 0 {
            return Err(EINVAL);
        }
        let mut sa = [0u8; SOCKADDR_UN + 1];
        sa[..2].copy_from_slice(&(AF_UNIX as u16).to_le_bytes());
        let name = &name[..name.len().min(SUN_PATH)];
        sa[2..2 + name.len()].copy_from_slice(name);
        // A path's length counts its NUL, as Linux's.
        let full = 2 + name.len() + (!name.is_empty() && name[0] != 0) as usize;
        let full = full.min(SOCKADDR_UN);
        let k = (room as usize).min(full);
        if k > 0 {
            self.space.write(addr, &sa[..k]).map_err(Touch::errno)?;
        }
        self.space
            .write(alen, &(full as u32).to_le_bytes())
            .map_err(Touch::errno)?;
        Ok(())
    }

    /// `socket`'s checks (Linux's order) → the type and the flags.
    fn sock_type(domain: u64, ty: u64, proto: u64) -> Result<(u64, u64), i64> {
        let d = int(domain);
        let t = ty as u32 as u64;
        if t & !SOCK_TYPE_MASK & !(SOCK_NONBLOCK | SOCK_CLOEXEC) != 0 {
            return Err(EINVAL);
        }
        if !(0..AF_MAX as i64).contains(&d) {
            return Err(EAFNOSUPPORT);
        }
        let base = t & SOCK_TYPE_MASK;
        if base >= SOCK_MAX {
            return Err(EINVAL);
        }
        if d as u64 != AF_UNIX {
            return Err(EAFNOSUPPORT);
        }
        let pr = int(proto);
        if pr != 0 && pr != AF_UNIX as i64 {
            return Err(EPROTONOSUPPORT);
        }
        if !matches!(base, SOCK_STREAM | SOCK_DGRAM | SOCK_RAW | SOCK_SEQPACKET) {
            return Err(ESOCKTNOSUPPORT);
        }
        Ok((base, t & (SOCK_NONBLOCK | SOCK_CLOEXEC)))
    }

    /// `socket(domain, type, protocol)`.
    fn socket(&mut self, domain: u64, ty: u64, proto: u64) -> R {
        let (base, fl) = Self::sock_type(domain, ty, proto)?;
        let fd = self.lowest_free_fd()?;
        let a = self.sock(p::SOCKET, [base, fl & o::NONBLOCK, 0], &[], &mut [])?;
        self.set_fd(fd, a.w[0] as u32, fl & SOCK_CLOEXEC != 0);
        Ok(fd as u64)
    }

    /// `socketpair(domain, type, protocol, sv)`.
    fn socketpair(&mut self, domain: u64, ty: u64, proto: u64, sv: u64) -> R {
        let (base, fl) = Self::sock_type(domain, ty, proto)?;
        self.space.touch(sv, 8, true).map_err(Touch::errno)?;
        let x = self.lowest_free_fd()?;
        let a = self.sock(p::SOCKETPAIR, [base, fl & o::NONBLOCK, 0], &[], &mut [])?;
        let cloexec = fl & SOCK_CLOEXEC != 0;
        self.set_fd(x, a.w[1] as u32, cloexec);
        let y = match self.lowest_free_fd() {
            Ok(y) => y,
            Err(e) => {
                let _ = self.close(x as u64);
                let _ = crate::fds::ux(p::CLOSE, [a.w[2], 0, 0, 0], &[]);
                return Err(e);
            }
        };
        self.set_fd(y, a.w[2] as u32, cloexec);
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&(x as u32).to_le_bytes());
        b[4..].copy_from_slice(&(y as u32).to_le_bytes());
        self.space.write(sv, &b).map_err(Touch::errno)?;
        Ok(0)
    }

    /// `bind(fd, addr, len)`.
    fn bind(&mut self, fd: u64, addr: u64, len: u64) -> R {
        let fid = self.sock_fid(fd)?;
        let ad = self.addr_in(addr, len)?;
        if ad.len == 2 && u16::from_le_bytes([ad.b[0], ad.b[1]]) as u64 == AF_UNIX {
            // Only a family: a name of the domain's choosing.
            return self.sock(p::BIND, [fid, 0, 0], &[], &mut []).map(|_| 0);
        }
        let name = send_name(ad.unix_name(3)?);
        if name.is_empty() {
            return Err(ENOENT);
        }
        let m = 0o777 & !self.umask;
        let cwd = self.cwd as u64;
        self.sock(p::BIND, [fid, m, cwd], name, &mut []).map(|_| 0)
    }

    /// `accept4(fd, addr, addrlen, flags)`.
    fn accept(&mut self, fd: u64, addr: u64, alen: u64, flags: u64) -> R {
        if flags & !(SOCK_NONBLOCK | SOCK_CLOEXEC) != 0 {
            return Err(EINVAL);
        }
        let fid = self.fid(fd)?;
        if addr != 0 {
            let mut b = [0u8; 4];
            self.space.read(alen, &mut b).map_err(Touch::errno)?;
            if i32::from_le_bytes(b) < 0 {
                return Err(EINVAL);
            }
        }
        let new = self.lowest_free_fd()?;
        let mut name = [0u8; 4096];
        let a = self.sock(p::ACCEPT, [fid, flags & o::NONBLOCK, 0], &[], &mut name)?;
        self.set_fd(new, a.w[0] as u32, flags & SOCK_CLOEXEC != 0);
        if addr != 0 {
            let n = a.len.min(SUN_PATH);
            if let Err(e) = self.addr_out(addr, alen, &name[..n]) {
                let _ = self.close(new as u64);
                self.fds[new] = CLOSED;
                return Err(e);
            }
        }
        Ok(new as u64)
    }

    /// `connect(fd, addr, len)`.
    fn connect(&mut self, fd: u64, addr: u64, len: u64) -> R {
        let fid = self.sock_fid(fd)?;
        let ad = self.addr_in(addr, len)?;
        let name = send_name(ad.unix_name(3)?);
        if name.is_empty() {
            return Err(ENOENT);
        }
        let cwd = self.cwd as u64;
        self.sock(p::CONNECT, [fid, cwd, 0], name, &mut [])
            .map(|_| 0)
    }

    /// `sendto(fd, buf, len, flags, addr, addrlen)`.
    fn sendto(&mut self, fd: u64, buf: u64, len: u64, flags: u64, addr: u64, alen: u64) -> R {
        let fid = self.fid(fd)?;
        let ad = if addr != 0 && alen != 0 {
            self.sock_fid(fd)?;
            Some(self.addr_in(addr, alen)?)
        } else {
            None
        };
        let name = match &ad {
            Some(a) => send_name(a.unix_name(3)?),
            None => &[][..],
        };
        let mut nb = [0u8; SUN_PATH];
        nb[..name.len()].copy_from_slice(name);
        let nl = name.len();
        let len = len.min(i32::MAX as u64);
        self.send_parts(fid, flags, &nb[..nl], &[(buf, len)], 1)
    }

    /// Sends the bytes of `n` iovecs (`iov`'s first `n`, or the caller's
    /// `struct iovec`s at `iov_at` when `iov` is empty) from socket fid
    /// `fid`, to `name` when not empty.
    fn send_parts(&mut self, fid: u64, flags: u64, name: &[u8], iov: &[(u64, u64)], n: u64) -> R {
        self.send_iov(fid, flags, name, iov, (0, n), &[])
    }

    /// The bytes of `n` iovecs (`iov`, or the caller's at `iov_at`:
    /// `from` is `(iov_at, n)`) with descriptions `fids`.
    fn send_iov(
        &mut self,
        fid: u64,
        flags: u64,
        name: &[u8],
        iov: &[(u64, u64)],
        from: (u64, u64),
        fids: &[u32],
    ) -> R {
        let (iov_at, n) = from;
        if flags & MSG_OOB != 0 {
            return Err(EOPNOTSUPP);
        }
        let nosig = flags & MSG_NOSIGNAL != 0;
        let fl = flags & MSG_DONTWAIT;
        let w2 = name.len() as u64 | (self.cwd as u64) << 32;
        // The descriptions go with the first bytes.
        let mut fb = [0u8; 4 * p::SCM_MAX_FD];
        for (k, f) in fids.iter().enumerate() {
            fb[4 * k..4 * k + 4].copy_from_slice(&f.to_le_bytes());
        }
        let fb = &fb[..4 * fids.len()];
        let with_fds = (fids.len() as u64) << 16;
        let ty = self.sock(p::SOCKOPT, [fid, 0, SO_TYPE], &[], &mut [])?.w[0];
        let r = if ty == SOCK_STREAM {
            // Bytes: each piece in messages, until one would wait past the
            // first bytes sent.
            let mut done = 0u64;
            let mut err = None;
            'all: for k in 0..n {
                let (base, len) = self.iov_entry(iov, iov_at, k)?;
                if len == 0 {
                    continue;
                }
                self.space.touch(base, len, false).map_err(Touch::errno)?;
                let mut off = 0;
                while off < len {
                    let first = done == 0 && !fb.is_empty();
                    let room = CHUNK - if first { fb.len() } else { 0 };
                    let c = (len - off).min(room as u64);
                    let mut s = [0u8; 4096];
                    let mut sl = c as usize;
                    self.space.win.read(base + off, &mut s[..sl]);
                    if !name.is_empty() {
                        s[sl..sl + name.len()].copy_from_slice(name);
                        sl += name.len();
                    }
                    let mut w = w2;
                    if first {
                        s[sl..sl + fb.len()].copy_from_slice(fb);
                        sl += fb.len();
                        w |= with_fds;
                    }
                    match self.sock(p::SEND, [fid, fl, w], &s[..sl], &mut []) {
                        Ok(a) => {
                            done += a.w[0];
                            off += a.w[0];
                        }
                        Err(e) => {
                            err = Some(e);
                            break 'all;
                        }
                    }
                }
            }
            match err {
                Some(e) if done == 0 => Err(e),
                _ => Ok(done),
            }
        } else {
            // One message: its pieces gathered.
            let mut s = [0u8; 4096];
            let mut total = 0usize;
            for k in 0..n {
                let (base, len) = self.iov_entry(iov, iov_at, k)?;
                if len > (CHUNK - total) as u64 {
                    return Err(EMSGSIZE);
                }
                self.space
                    .read(base, &mut s[total..total + len as usize])
                    .map_err(Touch::errno)?;
                total += len as usize;
            }
            if total + fb.len() > CHUNK {
                return Err(EMSGSIZE);
            }
            s[total..total + name.len()].copy_from_slice(name);
            let mut sl = total + name.len();
            s[sl..sl + fb.len()].copy_from_slice(fb);
            sl += fb.len();
            self.sock(p::SEND, [fid, fl, w2 | with_fds], &s[..sl], &mut [])
                .map(|a| a.w[0])
        };
        if r == Err(EPIPE) && !nosig {
            crate::signals::raise(stet_unix::sys::sig::SIGPIPE);
        }
        r
    }

    /// Iovec `k`: `iov[k]`, or the caller's at `iov_at` when `iov` is
    /// empty → base and length (`EFAULT`, `EINVAL` for a negative one).
    fn iov_entry(&mut self, iov: &[(u64, u64)], iov_at: u64, k: u64) -> Result<(u64, u64), i64> {
        if let Some(&e) = iov.get(k as usize) {
            return Ok(e);
        }
        let mut v = [0u8; 16];
        self.space
            .read(iov_at + 16 * k, &mut v)
            .map_err(Touch::errno)?;
        let base = u64::from_le_bytes(v[..8].try_into().unwrap_or_default());
        let len = u64::from_le_bytes(v[8..].try_into().unwrap_or_default());
        if len > isize::MAX as u64 {
            return Err(EINVAL);
        }
        Ok((base, len))
    }

    /// `recvfrom(fd, buf, len, flags, addr, addrlen)`.
    fn recvfrom(&mut self, fd: u64, buf: u64, len: u64, flags: u64, addr: u64, alen: u64) -> R {
        let fid = self.fid(fd)?;
        if addr != 0 {
            let mut b = [0u8; 4];
            self.space.read(alen, &mut b).map_err(Touch::errno)?;
            if i32::from_le_bytes(b) < 0 {
                return Err(EINVAL);
            }
        }
        let len = len.min(i32::MAX as u64);
        let mut fids = Fids::new();
        let r = self.recv_iov(fid, flags, &[(buf, len)], 0, 1, &mut fids);
        // No room for descriptions: they are closed (Linux discards them).
        fids.drop_all();
        let (n, _, name) = r?;
        if addr != 0 {
            self.addr_out(addr, alen, &name.b[..name.len])?;
        }
        Ok(n)
    }

    /// Receives into `n` iovecs (as [`Keeper::send_iov`]'s) → the result,
    /// whether the message was truncated, and the sender's name.
    fn recv_iov(
        &mut self,
        fid: u64,
        flags: u64,
        iov: &[(u64, u64)],
        iov_at: u64,
        n: u64,
        fids: &mut Fids,
    ) -> Result<(u64, bool, Addr), i64> {
        if flags & MSG_OOB != 0 {
            return Err(EOPNOTSUPP);
        }
        let ty = self.sock(p::SOCKOPT, [fid, 0, SO_TYPE], &[], &mut [])?.w[0];
        let mut name = Addr {
            b: [0; 128],
            len: 0,
        };
        let mut fl = flags & (MSG_PEEK | MSG_DONTWAIT);
        let mut want = 0u64;
        for k in 0..n {
            let (base, len) = self.iov_entry(iov, iov_at, k)?;
            self.space.touch(base, len, true).map_err(Touch::errno)?;
            want = want.saturating_add(len);
        }
        let mut buf = [0u8; 4096];
        if ty != SOCK_STREAM {
            let a = self.sock(p::RECV, [fid, want.min(CHUNK as u64), fl], &[], &mut buf)?;
            let got = a.w[0] as usize;
            self.scatter(iov, iov_at, n, &buf[..got])?;
            let nl = (a.w[2] as usize & 0xffff).min(SUN_PATH);
            name.b[..nl].copy_from_slice(&buf[got..got + nl]);
            name.len = nl;
            fids.take(&buf[got + nl..], (a.w[2] >> 16 & 0xffff) as usize);
            let truncated = a.w[1] > a.w[0];
            let r = if flags & MSG_TRUNC != 0 {
                a.w[1]
            } else {
                a.w[0]
            };
            return Ok((r, truncated, name));
        }
        // Bytes: as many as there are (all `want` with `MSG_WAITALL`),
        // waiting only for the first.
        let mut done = 0u64;
        while done < want {
            let ask = (want - done).min(CHUNK as u64);
            // Bytes that came with descriptions begin the next recvmsg.
            let nofds = if done > 0 { p::RECV_NO_FDS } else { 0 };
            let a = match self.sock(p::RECV, [fid, ask, fl | nofds], &[], &mut buf) {
                Ok(a) => a,
                Err(EAGAIN) if done > 0 => break,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            };
            let got = a.w[0] as usize;
            let nl = (a.w[2] as usize & 0xffff).min(SUN_PATH);
            if done == 0 {
                name.b[..nl].copy_from_slice(&buf[got..got + nl]);
                name.len = nl;
            }
            fids.take(&buf[got + nl..], (a.w[2] >> 16 & 0xffff) as usize);
            self.scatter_at(iov, iov_at, n, done, &buf[..got])?;
            done += got as u64;
            if got == 0 || flags & MSG_PEEK != 0 {
                break;
            }
            if flags & MSG_WAITALL == 0 {
                fl |= MSG_DONTWAIT;
            }
        }
        Ok((done, false, name))
    }

    /// Copies `data` into the iovecs from their first byte.
    fn scatter(&mut self, iov: &[(u64, u64)], iov_at: u64, n: u64, data: &[u8]) -> R {
        self.scatter_at(iov, iov_at, n, 0, data)
    }

    /// Copies `data` into the iovecs from byte `skip` of them.
    fn scatter_at(
        &mut self,
        iov: &[(u64, u64)],
        iov_at: u64,
        n: u64,
        mut skip: u64,
        mut data: &[u8],
    ) -> R {
        for k in 0..n {
            if data.is_empty() {
                break;
            }
            let (base, len) = self.iov_entry(iov, iov_at, k)?;
            if skip >= len {
                skip -= len;
                continue;
            }
            let c = ((len - skip) as usize).min(data.len());
            self.space
                .write(base + skip, &data[..c])
                .map_err(Touch::errno)?;
            data = &data[c..];
            skip = 0;
        }
        Ok(0)
    }

    /// The caller's `struct msghdr` at `msg`: name, name length, iovecs,
    /// their count, control, control length.
    fn msghdr(&mut self, msg: u64) -> Result<[u64; 6], i64> {
        let mut b = [0u8; 56];
        self.space.read(msg, &mut b).map_err(Touch::errno)?;
        let g = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or_default());
        let h = [g(0), g(8) & 0xffff_ffff, g(16), g(24), g(32), g(40)];
        if h[3] > MAX_IOV {
            return Err(EMSGSIZE);
        }
        Ok(h)
    }

    /// `sendmsg(fd, msg, flags)`: no control messages yet (`SCM_RIGHTS`
    /// is `EOPNOTSUPP`).
    fn sendmsg(&mut self, fd: u64, msg: u64, flags: u64) -> R {
        let fid = self.fid(fd)?;
        let h = self.msghdr(msg)?;
        let mut fids = [0u32; p::SCM_MAX_FD];
        let nf = self.control_in(h[4], h[5], &mut fids)?;
        let mut nb = [0u8; SUN_PATH];
        let mut nl = 0;
        if h[0] != 0 && h[1] != 0 {
            let ad = self.addr_in(h[0], h[1])?;
            let name = send_name(ad.unix_name(3)?);
            nb[..name.len()].copy_from_slice(name);
            nl = name.len();
        }
        self.send_iov(fid, flags, &nb[..nl], &[], (h[2], h[3]), &fids[..nf])
    }

    /// `sendmsg`'s control messages at `ctl`, `len` bytes: the fids of
    /// `SCM_RIGHTS`' descriptors into `fids` → how many. Other levels are
    /// skipped (as Linux); `SCM_CREDENTIALS` is not done (`EOPNOTSUPP`).
    fn control_in(&mut self, ctl: u64, len: u64, fids: &mut [u32]) -> Result<usize, i64> {
        if len == 0 {
            return Ok(0);
        }
        if len > 4096 {
            return Err(ENOBUFS);
        }
        let mut b = [0u8; 4096];
        let b = &mut b[..len as usize];
        self.space.read(ctl, b).map_err(Touch::errno)?;
        let (mut off, mut nf) = (0usize, 0usize);
        while off + 16 <= b.len() {
            let cl = u64::from_le_bytes(b[off..off + 8].try_into().unwrap_or_default());
            let level = i32::from_le_bytes(b[off + 8..off + 12].try_into().unwrap_or_default());
            let ty = i32::from_le_bytes(b[off + 12..off + 16].try_into().unwrap_or_default());
            if cl < 16 || cl > (b.len() - off) as u64 {
                return Err(EINVAL);
            }
            if level as u64 == SOL_SOCKET {
                match ty as u64 {
                    SCM_RIGHTS => {
                        let k = (cl as usize - 16) / 4;
                        if nf + k > fids.len() {
                            return Err(EINVAL);
                        }
                        for j in 0..k {
                            let at = off + 16 + 4 * j;
                            let fd =
                                i32::from_le_bytes(b[at..at + 4].try_into().unwrap_or_default());
                            fids[nf] = self.fid(fd as u32 as u64)? as u32;
                            nf += 1;
                        }
                    }
                    2 => return Err(EOPNOTSUPP),
                    _ => return Err(EINVAL),
                }
            }
            off += (cl as usize).div_ceil(8) * 8;
        }
        Ok(nf)
    }

    /// `recvmsg(fd, msg, flags)`: the name, the bytes, `msg_flags`
    /// (`MSG_TRUNC`); no control messages (`msg_controllen` 0).
    fn recvmsg(&mut self, fd: u64, msg: u64, flags: u64) -> R {
        let fid = self.fid(fd)?;
        let h = self.msghdr(msg)?;
        let mut fids = Fids::new();
        let r = self.recv_iov(fid, flags, &[], h[2], h[3], &mut fids);
        let (n, truncated, name) = match r {
            Ok(v) => v,
            Err(e) => {
                fids.drop_all();
                return Err(e);
            }
        };
        let (used, ctrunc) = self.control_out(&mut fids, h[4], h[5], flags);
        if h[0] != 0 {
            let room = (h[1] as u32 as i32).max(0) as usize;
            let mut sa = [0u8; SOCKADDR_UN + 1];
            sa[..2].copy_from_slice(&(AF_UNIX as u16).to_le_bytes());
            sa[2..2 + name.len].copy_from_slice(&name.b[..name.len]);
            let full = 2 + name.len + (name.len > 0 && name.b[0] != 0) as usize;
            let full = full.min(SOCKADDR_UN);
            let k = room.min(full);
            self.space.write(h[0], &sa[..k]).map_err(Touch::errno)?;
            self.space
                .write(msg + 8, &(full as u32).to_le_bytes())
                .map_err(Touch::errno)?;
        }
        self.space
            .write(msg + 40, &used.to_le_bytes())
            .map_err(Touch::errno)?;
        let mf = if truncated { MSG_TRUNC as u32 } else { 0 }
            | if ctrunc { MSG_CTRUNC as u32 } else { 0 };
        self.space
            .write(msg + 48, &mf.to_le_bytes())
            .map_err(Touch::errno)?;
        Ok(n)
    }

    /// Gives the descriptions that came descriptors and writes their
    /// `SCM_RIGHTS` to `ctl` (`len` bytes) → the control bytes used, and
    /// whether some did not fit (`MSG_CTRUNC`: those are closed).
    fn control_out(&mut self, fids: &mut Fids, ctl: u64, len: u64, flags: u64) -> (u64, bool) {
        if fids.n == 0 {
            return (0, false);
        }
        let fit = if ctl == 0 || len < 20 {
            0
        } else {
            (((len - 16) / 4) as usize).min(fids.n)
        };
        let cloexec = flags & MSG_CMSG_CLOEXEC != 0;
        let mut b = [0u8; 16 + 4 * p::SCM_MAX_FD];
        let mut k = 0;
        while k < fit {
            let Ok(fd) = self.lowest_free_fd() else {
                break;
            };
            self.set_fd(fd, fids.v[k], cloexec);
            b[16 + 4 * k..20 + 4 * k].copy_from_slice(&(fd as u32).to_le_bytes());
            k += 1;
        }
        let ctrunc = k < fids.n;
        // The installed ones are the descriptors' now; the rest go.
        fids.drop_from(k);
        if k == 0 {
            return (0, ctrunc);
        }
        let cl = 16 + 4 * k;
        b[..8].copy_from_slice(&(cl as u64).to_le_bytes());
        b[8..12].copy_from_slice(&(SOL_SOCKET as u32).to_le_bytes());
        b[12..16].copy_from_slice(&(SCM_RIGHTS as u32).to_le_bytes());
        if self.space.write(ctl, &b[..cl]).is_err() {
            // Linux: the descriptors stay, unnamed to the caller; here
            // they are closed again.
            for c in b[16..16 + 4 * k].chunks_exact(4) {
                let fd = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                let _ = self.close(fd as u64);
            }
            return (0, true);
        }
        ((cl.div_ceil(8) * 8).min(len as usize) as u64, ctrunc)
    }

    /// `getsockname` (`which` 0) and `getpeername` (1).
    fn sockname(&mut self, fd: u64, addr: u64, alen: u64, which: u64) -> R {
        let fid = self.fid(fd)?;
        let mut name = [0u8; 4096];
        let a = self.sock(p::SOCKNAME, [fid, which, 0], &[], &mut name)?;
        let n = (a.w[0] as usize).min(SUN_PATH);
        self.addr_out(addr, alen, &name[..n])?;
        Ok(0)
    }

    /// `getsockopt(fd, level, name, val, len)`: `SOL_SOCKET`'s.
    fn getsockopt(&mut self, fd: u64, level: u64, opt: u64, val: u64, lenp: u64) -> R {
        let fid = self.sock_fid(fd)?;
        if int(level) != SOL_SOCKET as i64 {
            return Err(EOPNOTSUPP);
        }
        let mut b = [0u8; 4];
        self.space.read(lenp, &mut b).map_err(Touch::errno)?;
        let room = i32::from_le_bytes(b);
        if room < 0 {
            return Err(EINVAL);
        }
        let a = self.sock(p::SOCKOPT, [fid, 0, opt as u32 as u64], &[], &mut [])?;
        let mut v = [0u8; 12];
        let lv = if opt as u32 as u64 == SO_PEERCRED {
            v[..4].copy_from_slice(&(a.w[0] as u32).to_le_bytes());
            v[4..8].copy_from_slice(&(a.w[1] as u32).to_le_bytes());
            v[8..].copy_from_slice(&(a.w[2] as u32).to_le_bytes());
            12
        } else {
            v[..4].copy_from_slice(&(a.w[0] as u32).to_le_bytes());
            4
        };
        let k = (room as usize).min(lv);
        if k > 0 {
            self.space.write(val, &v[..k]).map_err(Touch::errno)?;
        }
        self.space
            .write(lenp, &(k as u32).to_le_bytes())
            .map_err(Touch::errno)?;
        Ok(0)
    }

    /// `setsockopt(fd, level, name, val, len)`: `SOL_SOCKET`'s.
    fn setsockopt(&mut self, fd: u64, level: u64, opt: u64, val: u64, len: u64) -> R {
        let fid = self.sock_fid(fd)?;
        if int(len) < 0 {
            return Err(EINVAL);
        }
        if int(level) != SOL_SOCKET as i64 {
            return Err(EOPNOTSUPP);
        }
        if (int(len) as u64) < 4 {
            return Err(EINVAL);
        }
        let mut b = [0u8; 4];
        self.space.read(val, &mut b).map_err(Touch::errno)?;
        self.sock(p::SOCKOPT, [fid, 1, opt as u32 as u64], &b, &mut [])
            .map(|_| 0)
    }
}
