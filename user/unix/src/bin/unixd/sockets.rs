//! AF_UNIX sockets: the orders `SOCKET` … `SOCKOPT` (`proto`, 100–110)
//! over the table of `stet_unixfs::sock`, which holds every socket's
//! state and buffers. A socket is an open file description of its own
//! kind (`Kind::Socket`), so `dup`, `fork`, `close`, `read`, `write`,
//! `fstat` (`S_IFSOCK`) and `poll` treat it like any other; its last
//! reference closes it. A name in the file system is a socket inode made
//! by `bind` (connecting needs write permission on it, as Linux); the
//! table finds the socket by that inode, and forgets it when the inode
//! goes. A call that must wait (nothing to read or accept, no room, a full
//! listen queue) parks on the socket (`Wait::Sock`) and is answered `BUSY`
//! when the socket changes, as a pipe's.

use crate::open::Kind;
use crate::wait::Wait;
use crate::{word, Reply, Unixd};
use alloc::vec::Vec;
use stet_rt::key::Answer;
use stet_unix::cred::{EFF, FS};
use stet_unix::fs::mode;
use stet_unix::proto as p;
use stet_unix::proto::o;
use stet_unix::sys::errno::*;
use stet_unix::sys::sock::*;
use stet_unixfs::sock::{State, Type, Ucred};

/// `SO_*` options kept as plain flags (set, and reported back).
const FLAG_OPTS: [u64; 4] = [SO_KEEPALIVE, SO_BROADCAST, SO_DONTROUTE, SO_OOBINLINE];

impl Unixd<'_> {
    /// Fid `fid`'s socket: `EBADF` for no fid (or an `O_PATH` one),
    /// `ENOTSOCK` for another kind.
    pub(crate) fn sock_of(&self, fid: u64) -> Result<(usize, u32), i64> {
        let f = self.fid(fid)?;
        if self.open[f].flags & o::PATH != 0 {
            return Err(EBADF);
        }
        match self.open[f].kind {
            Kind::Socket(n) => Ok((f, n)),
            _ => Err(ENOTSOCK),
        }
    }

    /// The caller as `SO_PEERCRED` names it.
    fn ucred(&self) -> Ucred {
        let c = self.caller_cred();
        Ucred {
            pid: self.caller,
            uid: c.uid[EFF],
            gid: c.gid[EFF],
        }
    }

    /// Socket `n` changed: its parked calls ask again, and so do parked
    /// `poll`s, `select`s and `epoll_wait`s (which may be watching it).
    pub(crate) fn sock_changed(&mut self, n: u32) {
        self.epoll_wake();
        for i in 0..self.waiters.len() {
            if self.waiters[i].on == Wait::Sock(n) {
                self.wake(i);
            }
        }
    }

    /// Waits for socket `n` unless the call must not (`O_NONBLOCK` on
    /// fid `f`, or `MSG_DONTWAIT`): `EAGAIN` then.
    fn sock_wait(&mut self, f: usize, n: u32, dontwait: bool) -> Result<Reply, i64> {
        if dontwait || self.open[f].flags & o::NONBLOCK != 0 {
            return Err(EAGAIN);
        }
        self.park(Wait::Sock(n))
    }

    /// The socket a name reaches (`name` as `sun_path`'s bytes, a path
    /// relative to directory fid `base`).
    fn sock_lookup(&mut self, base: u64, name: &[u8], ty: Type) -> Result<u32, i64> {
        if name.first() == Some(&0) {
            return self.socks.find(name, 0, ty).ok_or(ECONNREFUSED);
        }
        let path = path_part(name);
        if path.is_empty() {
            return Err(ENOENT);
        }
        let dir = self.base(base)?;
        self.act_as_caller();
        let ino = self.fs.resolve(dir, path, true)?;
        let i = *self.fs.inode(ino).ok_or(ENOENT)?;
        self.fs.who.check(i.owner(), stet_unix::cred::want::W)?;
        if i.mode & mode::FMT != mode::SOCK {
            return Err(ECONNREFUSED);
        }
        self.socks.find(b"", ino, ty).ok_or(ECONNREFUSED)
    }

    /// The inode `ino` has gone: sockets named by it are no longer found.
    pub(crate) fn sock_inode_gone(&mut self, ino: u32) {
        self.socks.forget_ino(ino);
    }

    /// The last reference to socket `n`'s description went.
    pub(crate) fn sock_close(&mut self, n: u32) {
        let changed = self.socks.close(n);
        self.sock_changed(n);
        for c in changed {
            self.sock_changed(c);
        }
        // Descriptions that were in flight to it lose their references.
        loop {
            let gone = self.socks.take_orphans();
            if gone.is_empty() {
                break;
            }
            for fid in gone {
                let _ = self.close(fid as u64);
            }
        }
    }

    /// One more reference to fid `f` (a description in flight), as `DUP`.
    fn fid_hold(&mut self, f: usize) {
        self.open[f].refs += 1;
        match self.open[f].kind {
            Kind::PipeRead(n) => self.pipes[n as usize].readers += 1,
            Kind::PipeWrite(n) => self.pipes[n as usize].writers += 1,
            _ => {}
        }
    }

    /// Drops the references of descriptions that did not go.
    fn fids_drop(&mut self, fids: &[u32]) {
        for &fid in fids {
            let _ = self.close(fid as u64);
        }
    }

    /// A read of socket `n` (`recv` with no flags) into `out`.
    pub(crate) fn sock_read(
        &mut self,
        f: usize,
        n: u32,
        len: usize,
        out: &mut [u8],
    ) -> Result<Reply, i64> {
        let (r, _) = self.sock_recv(f, n, len, 0, out, false)?;
        Ok(r)
    }

    /// Receives at most `len` bytes of socket `n` into `out` (and the
    /// sender's name after them when `name`).
    fn sock_recv(
        &mut self,
        f: usize,
        n: u32,
        len: usize,
        flags: u64,
        out: &mut [u8],
        name: bool,
    ) -> Result<(Reply, usize), i64> {
        let room = if name {
            out.len() - MAX_NAME_OUT
        } else {
            out.len()
        };
        let len = len.min(room);
        let no_fds = flags & p::RECV_NO_FDS != 0;
        // The bytes and the descriptions share what the name leaves.
        match self
            .socks
            .recv_fds(n, &mut out[..len], flags & MSG_PEEK != 0, no_fds, room)
        {
            Ok(g) => {
                let peer = self.socks.get(n).and_then(|s| s.peer);
                if flags & MSG_PEEK == 0 {
                    // Room for a sender.
                    self.sock_changed(n);
                    if let Some(p) = peer {
                        self.sock_changed(p);
                    }
                }
                let mut total = g.copied;
                let nl = if name {
                    g.from.len().min(MAX_NAME_OUT)
                } else {
                    0
                };
                let mut nf = 0;
                if name {
                    out[total..total + nl].copy_from_slice(&g.from[..nl]);
                    total += nl;
                    for &fid in g.fds.iter() {
                        if total + 4 > out.len() {
                            break;
                        }
                        out[total..total + 4].copy_from_slice(&fid.to_le_bytes());
                        total += 4;
                        nf += 1;
                    }
                }
                // A plain read (or what an answer cannot hold): the
                // descriptions are closed, as Linux's read discards them.
                self.fids_drop(&g.fds[nf..]);
                Ok((
                    Reply::Now(
                        [g.copied as u64, g.len as u64, nl as u64 | (nf as u64) << 16],
                        total,
                        false,
                    ),
                    g.copied,
                ))
            }
            // Bytes with descriptions wait for the next call, not here.
            Err(EAGAIN) if no_fds && self.socks.get(n).is_some_and(|s| s.readable() > 0) => {
                Err(EAGAIN)
            }
            Err(EAGAIN) => Ok((self.sock_wait(f, n, flags & MSG_DONTWAIT != 0)?, 0)),
            Err(e) => Err(e),
        }
    }

    /// A write to socket `n` (`send` with no flags).
    pub(crate) fn sock_write(&mut self, f: usize, n: u32, data: &[u8]) -> Result<Reply, i64> {
        self.sock_send(f, n, data, 0, None, &[])
    }

    /// Sends `data` from socket `n` (to the socket `to` names), with
    /// the descriptions `fids` (each given one more reference while in
    /// flight).
    fn sock_send(
        &mut self,
        f: usize,
        n: u32,
        data: &[u8],
        flags: u64,
        to: Option<u32>,
        fids: &[u32],
    ) -> Result<Reply, i64> {
        let ty = self.socks.get(n).ok_or(ENOTSOCK)?.ty;
        // A message and its descriptions come back in one answer.
        if ty != Type::Stream && data.len() + 4 * fids.len() > p::MAX_DGRAM {
            return Err(EMSGSIZE);
        }
        for &fid in fids {
            let g = self.fid(fid as u64)?;
            if self.open[g].flags & o::PATH != 0 {
                return Err(EBADF);
            }
        }
        let mut held = Vec::new();
        held.try_reserve(fids.len()).map_err(|_| ENOMEM)?;
        for &fid in fids {
            self.fid_hold(fid as usize);
            held.push(fid);
        }
        let r = self.socks.send_fds(n, to, data, &mut held);
        // What did not go gives its references back.
        self.fids_drop(&held);
        match r {
            Ok(k) => {
                let dest = to.or(self.socks.get(n).and_then(|s| s.peer));
                if let Some(d) = dest {
                    self.sock_changed(d);
                }
                word(Ok(k as u64))
            }
            Err(EAGAIN) => {
                let dest = to.or(self.socks.get(n).and_then(|s| s.peer));
                let on = dest.unwrap_or(n);
                self.sock_wait(f, on, flags & MSG_DONTWAIT != 0)
            }
            Err(e) => Err(e),
        }
    }

    /// `SOCKET` … `SOCKOPT`.
    pub(crate) fn sock_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let w = a.w;
        match a.code {
            p::SOCKET | p::SOCKETPAIR => {
                let ty = Type::from_linux(w[0]).ok_or(ESOCKTNOSUPPORT)?;
                let flags = o::RDWR | (w[1] & o::NONBLOCK);
                let cred = self.ucred();
                if a.code == p::SOCKET {
                    let n = self.socks.create(ty, cred)?;
                    return match self.new_fid(Kind::Socket(n), flags) {
                        Ok(fid) => word(Ok(fid)),
                        Err(e) => {
                            self.socks.close(n);
                            Err(e)
                        }
                    };
                }
                let (x, y) = self.socks.pair(ty, cred)?;
                let fx = match self.new_fid(Kind::Socket(x), flags) {
                    Ok(fx) => fx,
                    Err(e) => {
                        self.socks.close(x);
                        self.socks.close(y);
                        return Err(e);
                    }
                };
                match self.new_fid(Kind::Socket(y), flags) {
                    Ok(fy) => Ok(Reply::Now([0, fx, fy], 0, false)),
                    Err(e) => {
                        self.open[fx as usize] = crate::open::FREE;
                        self.socks.close(x);
                        self.socks.close(y);
                        Err(e)
                    }
                }
            }
            p::BIND => {
                let (_, n) = self.sock_of(w[0])?;
                // (A path: Linux makes the file first, so a taken name is
                // EADDRINUSE even for a named socket.)
                if self.socks.bound(n) && s.first().is_none_or(|&b| b == 0) {
                    return Err(EINVAL);
                }
                if s.is_empty() {
                    return word(self.autobind(n).map(|_| 0));
                }
                if s[0] == 0 {
                    return word(self.socks.bind(n, s, 0).map(|_| 0));
                }
                let path = path_part(s);
                let dir = self.base(w[2])?;
                self.act_as_caller();
                let now = self.time();
                let par = self.fs.parent(dir, path)?;
                let m = mode::SOCK | (w[1] as u32 & 0o7777);
                let ino = match self.fs.create(par.dir, par.name, m, now) {
                    Ok(ino) => ino,
                    Err(EEXIST) => return Err(EADDRINUSE),
                    Err(e) => return Err(e),
                };
                if let Err(e) = self.socks.bind(n, path, ino) {
                    if let Ok((ino, true)) = self.fs.unlink(par.dir, par.name, now) {
                        self.maybe_free(ino);
                    }
                    return Err(e);
                }
                word(Ok(0))
            }
            p::LISTEN => {
                let (_, n) = self.sock_of(w[0])?;
                let cred = self.ucred();
                self.socks.listen(n, w[1] as u32 as i32 as i64, cred)?;
                self.sock_changed(n);
                word(Ok(0))
            }
            p::ACCEPT => {
                let (f, n) = self.sock_of(w[0])?;
                match self.socks.accept(n) {
                    Ok(c) => {
                        self.sock_changed(n);
                        let fid =
                            match self.new_fid(Kind::Socket(c), o::RDWR | (w[1] & o::NONBLOCK)) {
                                Ok(fid) => fid,
                                Err(e) => {
                                    self.sock_close(c);
                                    return Err(e);
                                }
                            };
                        let peer = self.socks.get(c).and_then(|s| s.peer);
                        let name = peer
                            .and_then(|p| self.socks.get(p))
                            .map(|s| s.name.as_slice())
                            .unwrap_or(&[]);
                        let k = name.len().min(out.len());
                        out[..k].copy_from_slice(&name[..k]);
                        Ok(Reply::Now([fid, 0, 0], k, false))
                    }
                    Err(EAGAIN) => self.sock_wait(f, n, false),
                    Err(e) => Err(e),
                }
            }
            p::CONNECT => {
                let (f, n) = self.sock_of(w[0])?;
                if s.is_empty() {
                    return Err(EINVAL);
                }
                let st = self.socks.get(n).ok_or(ENOTSOCK)?;
                if st.ty.connected() && st.state == State::Connected {
                    return Err(EISCONN);
                }
                let ty = st.ty;
                let to = self.sock_lookup(w[1], s, ty)?;
                let cred = self.ucred();
                match self.socks.connect(n, to, cred) {
                    Ok(()) => {
                        self.sock_changed(to);
                        word(Ok(0))
                    }
                    // A full queue: wait for an accept (Linux's
                    // non-blocking connect says EAGAIN).
                    Err(EAGAIN) => self.sock_wait(f, to, false),
                    Err(e) => Err(e),
                }
            }
            p::SEND => {
                let (f, n) = self.sock_of(w[0])?;
                let nl = (w[2] & 0xffff) as usize;
                let nf = (w[2] >> 16 & 0xffff) as usize;
                if nl + 4 * nf > s.len() || nf > MAX_FDS {
                    return Err(EINVAL);
                }
                let (rest, fb) = s.split_at(s.len() - 4 * nf);
                let (data, name) = rest.split_at(rest.len() - nl);
                let mut fids = [0u32; MAX_FDS];
                for (k, c) in fb.chunks_exact(4).enumerate() {
                    fids[k] = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                }
                let fids = &fids[..nf];
                let connected = self.socks.get(n).is_some_and(|s| s.ty.connected());
                let to = if nl == 0 {
                    None
                } else if connected {
                    // Checked by the table before any lookup.
                    Some(u32::MAX)
                } else {
                    let ty = self.socks.get(n).ok_or(ENOTSOCK)?.ty;
                    Some(self.sock_lookup(w[2] >> 32, name, ty)?)
                };
                self.sock_send(f, n, data, w[1], to, fids)
            }
            p::RECV => {
                let (f, n) = self.sock_of(w[0])?;
                Ok(self
                    .sock_recv(f, n, w[1] as usize, w[2], &mut out[..], true)?
                    .0)
            }
            p::SHUTDOWN => {
                let (_, n) = self.sock_of(w[0])?;
                self.socks.shutdown(n, w[1])?;
                self.sock_changed(n);
                if let Some(p) = self.socks.get(n).and_then(|s| s.peer) {
                    self.sock_changed(p);
                }
                word(Ok(0))
            }
            p::SOCKNAME => {
                let (_, n) = self.sock_of(w[0])?;
                let s = self.socks.get(n).ok_or(ENOTSOCK)?;
                let who = if w[1] == 0 {
                    s
                } else {
                    if s.ty.connected() && s.state != State::Connected {
                        return Err(ENOTCONN);
                    }
                    s.peer.and_then(|p| self.socks.get(p)).ok_or(ENOTCONN)?
                };
                let k = who.name.len().min(out.len());
                out[..k].copy_from_slice(&who.name[..k]);
                Ok(Reply::Now([k as u64, 0, 0], k, false))
            }
            p::SOCKOPT => {
                let (_, n) = self.sock_of(w[0])?;
                if w[1] == 0 {
                    self.sock_getopt(n, w[2])
                } else {
                    let v = s
                        .get(..4)
                        .map(|b| i32::from_le_bytes(b.try_into().unwrap_or_default()))
                        .ok_or(EINVAL)?;
                    word(self.sock_setopt(n, w[2], v).map(|_| 0))
                }
            }
            _ => Err(ENOSYS),
        }
    }

    /// Names socket `n` with an abstract name of five hex digits, as
    /// Linux's autobind.
    fn autobind(&mut self, n: u32) -> Result<(), i64> {
        for k in 0..0x10_0000u32 {
            let v = (n.wrapping_mul(2_654_435_761).wrapping_add(k)) & 0xf_ffff;
            let mut name = [0u8; 6];
            for (d, b) in name[1..].iter_mut().enumerate() {
                *b = b"0123456789abcdef"[(v >> (16 - 4 * d)) as usize & 0xf];
            }
            match self.socks.bind(n, &name, 0) {
                Err(EADDRINUSE) => continue,
                r => return r,
            }
        }
        Err(EADDRINUSE)
    }

    fn sock_getopt(&mut self, n: u32, opt: u64) -> Result<Reply, i64> {
        let s = self.socks.opts(n)?;
        let v = match opt {
            SO_TYPE => s.ty.linux(),
            SO_DOMAIN => AF_UNIX,
            SO_PROTOCOL => 0,
            SO_ERROR => core::mem::take(&mut s.error) as u64,
            SO_RCVBUF => s.rcvbuf as u64,
            SO_SNDBUF => s.sndbuf as u64,
            SO_REUSEADDR => s.reuseaddr as u64,
            SO_PASSCRED => s.passcred as u64,
            SO_ACCEPTCONN => (s.state == State::Listening) as u64,
            SO_RCVLOWAT | SO_SNDLOWAT => 1,
            SO_PEERCRED => {
                let c = s.peer_cred;
                return Ok(Reply::Now(
                    [c.pid as u64, c.uid as u64, c.gid as u64],
                    0,
                    false,
                ));
            }
            o if FLAG_OPTS.contains(&o) => (s.flags >> o) & 1,
            _ => return Err(ENOPROTOOPT),
        };
        word(Ok(v))
    }

    fn sock_setopt(&mut self, n: u32, opt: u64, v: i32) -> Result<(), i64> {
        if opt == SO_RCVBUF || opt == SO_SNDBUF {
            // A negative size is a huge one (Linux compares unsigned).
            let v = if v < 0 { u32::MAX } else { v as u32 };
            self.socks.set_buf(n, opt == SO_SNDBUF, v)?;
            // More room may let a sender go on.
            self.sock_changed(n);
            return Ok(());
        }
        let s = self.socks.opts(n)?;
        match opt {
            SO_REUSEADDR => s.reuseaddr = v != 0,
            SO_PASSCRED => s.passcred = v != 0,
            SO_RCVLOWAT => {}
            o if FLAG_OPTS.contains(&o) => {
                s.flags = (s.flags & !(1 << o)) | ((v != 0) as u64) << o;
            }
            // Read-only options (Linux: ENOPROTOOPT).
            _ => return Err(ENOPROTOOPT),
        }
        Ok(())
    }

    /// The `poll` events of socket `n`.
    pub(crate) fn sock_poll(&self, n: u32) -> u64 {
        self.socks.poll(n)
    }

    /// `FSTAT` of socket `n`: Linux's sockfs inode (`S_IFSOCK`, 0777).
    pub(crate) fn sock_stat(&self, n: u32) -> Result<[u8; 144], i64> {
        let mut i = *self.fs.inode(stet_unix::fs::ROOT).ok_or(EIO)?;
        let c = self.caller_cred();
        i.mode = mode::SOCK | 0o777;
        i.nlink = 1;
        i.size = 0;
        i.rdev = 0;
        i.uid = c.uid[FS];
        i.gid = c.gid[FS];
        Ok(stet_unix::fs::stat_bytes(
            0x4000_0000u32.wrapping_add(n),
            &i,
        ))
    }
}

/// The most bytes of a sender's name an answer carries.
const MAX_NAME_OUT: usize = SUN_PATH;
/// The most descriptions one message passes (Linux's `SCM_MAX_FD`).
const MAX_FDS: usize = p::SCM_MAX_FD;

/// A `sun_path`'s path: its bytes up to the first NUL.
fn path_part(name: &[u8]) -> &[u8] {
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    &name[..end]
}
