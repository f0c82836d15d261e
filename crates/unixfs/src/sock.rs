//! AF_UNIX sockets: unixd's table of sockets and their state machine, as
//! Linux's `af_unix` behaves — stream, datagram and sequenced-packet
//! sockets, names (a file's inode, or an abstract name beginning with a
//! NUL), `listen` queues, connections made at `connect` (the accepted end
//! exists from then on, as Linux's), buffers, `shutdown`, the peer's
//! credentials and `poll` readiness. Nothing here waits: an operation that
//! would wait answers `EAGAIN` and unixd parks the call (or answers it,
//! for a non-blocking one). Everything grows from the heap with
//! `try_reserve` (`ENOBUFS`/`ENFILE`, never a panic); the bounds are the
//! sockets' own buffer sizes (`SO_SNDBUF`), as on Linux.

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use stet_unix::sys::errno::*;
use stet_unix::sys::poll::{POLLERR, POLLHUP, POLLIN, POLLOUT};

/// `ENOBUFS`: no memory for a buffer.
pub const ENOBUFS: i64 = 105;

/// A socket's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// `SOCK_STREAM`: bytes, connected.
    Stream,
    /// `SOCK_DGRAM`: messages, addressed.
    Dgram,
    /// `SOCK_SEQPACKET`: messages, connected.
    Seqpacket,
}

impl Type {
    /// The type from `socket`'s `type & SOCK_TYPE_MASK` (`SOCK_RAW` is a
    /// datagram socket, as Linux's AF_UNIX makes it).
    pub fn from_linux(t: u64) -> Option<Type> {
        match t {
            1 => Some(Type::Stream),
            2 | 3 => Some(Type::Dgram),
            5 => Some(Type::Seqpacket),
            _ => None,
        }
    }

    /// Linux's number (`SO_TYPE`).
    pub fn linux(self) -> u64 {
        match self {
            Type::Stream => 1,
            Type::Dgram => 2,
            Type::Seqpacket => 5,
        }
    }

    /// Connection-oriented.
    pub fn connected(self) -> bool {
        self != Type::Dgram
    }
}

/// Credentials as `SO_PEERCRED` gives them (`struct ucred`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ucred {
    /// Process id.
    pub pid: u32,
    /// Effective user id.
    pub uid: u32,
    /// Effective group id.
    pub gid: u32,
}

/// No peer: Linux's answer (pid 0, ids -1).
pub const NO_CRED: Ucred = Ucred {
    pid: 0,
    uid: u32::MAX,
    gid: u32::MAX,
};

/// What a socket is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Neither listening nor connected (a datagram socket may still have
    /// a default peer).
    Open,
    /// `listen` was called.
    Listening,
    /// Connected (a stream or sequenced-packet socket).
    Connected,
}

/// Linux's default and largest `SO_SNDBUF`/`SO_RCVBUF`
/// (`net.core.wmem_default`, `wmem_max`).
pub const BUF_DEFAULT: u32 = 212_992;
/// The smallest `SO_RCVBUF` (Linux's `SOCK_MIN_RCVBUF` on x86_64).
pub const MIN_RCVBUF: u32 = 2304;
/// The smallest `SO_SNDBUF` (`SOCK_MIN_SNDBUF`).
pub const MIN_SNDBUF: u32 = 4608;
/// Datagrams a socket's queue holds beyond which senders wait (Linux's
/// `net.unix.max_dgram_qlen`; the queue is full past it).
pub const DGRAM_QLEN: usize = 10;
/// `listen`'s largest backlog (`net.core.somaxconn`).
pub const SOMAXCONN: u32 = 4096;
/// The longest name in bytes (`sun_path`).
pub const MAX_NAME: usize = 108;

/// One message of a datagram or sequenced-packet socket: its bytes and
/// its sender's name.
#[derive(Clone, Debug, Default)]
struct Record {
    data: Vec<u8>,
    from: Vec<u8>,
    /// The sending socket, while it is open (its memory is charged).
    sender: Option<u32>,
    /// Descriptions in flight with it (`SCM_RIGHTS`): the caller's ids,
    /// each holding a reference.
    fds: Vec<u32>,
}

/// What a message costs its sender's `SO_SNDBUF`, as Linux's socket
/// buffer's true size (the data in a power-of-two allocation with its
/// shared info, and the buffer head).
fn truesize(len: usize) -> usize {
    (len.div_ceil(64) * 64 + 320).next_power_of_two().max(512) + 256
}

/// One socket.
#[derive(Clone, Debug)]
pub struct Sock {
    /// In use.
    pub used: bool,
    /// Its type.
    pub ty: Type,
    /// Listening, connected or neither.
    pub state: State,
    /// Its name's `sun_path` bytes (a path without its NUL, or an
    /// abstract name from its leading NUL); empty: unbound.
    pub name: Vec<u8>,
    /// The inode of a name in the file system (0: none, or gone).
    pub ino: u32,
    /// The connected peer (a datagram socket's default destination).
    pub peer: Option<u32>,
    /// A stream's bytes to read.
    bytes: VecDeque<u8>,
    /// A datagram or sequenced-packet socket's messages to read.
    records: VecDeque<Record>,
    /// Connections waiting for `accept` (a listener).
    pending: VecDeque<u32>,
    /// `listen`'s backlog.
    pub backlog: u32,
    /// Nothing more will come to read (the peer shut down writing, or
    /// closed; or `shutdown(SHUT_RD)`).
    pub rd_shut: bool,
    /// Nothing more may be sent (`SHUT_WR`, or the peer gone).
    pub wr_shut: bool,
    /// A connection-oriented socket's peer has closed: sending is `EPIPE`.
    pub peer_closed: bool,
    /// `SO_ERROR`'s pending error (0: none).
    pub error: i64,
    /// `SO_RCVBUF`, `SO_SNDBUF` (as Linux reports them: doubled).
    pub rcvbuf: u32,
    /// `SO_SNDBUF`.
    pub sndbuf: u32,
    /// `SO_REUSEADDR` (kept and reported; AF_UNIX names ignore it).
    pub reuseaddr: bool,
    /// `SO_PASSCRED` (kept and reported).
    pub passcred: bool,
    /// Other boolean options kept and reported (bit `SO_*`).
    pub flags: u64,
    /// Whose it is: at `socket`, `socketpair` or `listen` (what a
    /// connecting peer's `SO_PEERCRED` gives).
    pub cred: Ucred,
    /// The peer's credentials (`SO_PEERCRED`).
    pub peer_cred: Ucred,
    /// Made by a `connect` and waiting in a listener's queue.
    pub embryo: bool,
    /// Bytes of its messages not yet received (their true sizes).
    wmem: usize,
    /// A stream's descriptions in flight, each with the position (bytes
    /// ever queued) of the first byte sent with them.
    marks: VecDeque<(u64, Vec<u32>)>,
    /// Bytes ever queued to, and taken from, a stream.
    wpos: u64,
    rpos: u64,
}

impl Sock {
    fn new(ty: Type, cred: Ucred) -> Sock {
        Sock {
            used: true,
            ty,
            state: State::Open,
            name: Vec::new(),
            ino: 0,
            peer: None,
            bytes: VecDeque::new(),
            records: VecDeque::new(),
            pending: VecDeque::new(),
            backlog: 0,
            rd_shut: false,
            wr_shut: false,
            peer_closed: false,
            error: 0,
            rcvbuf: BUF_DEFAULT,
            sndbuf: BUF_DEFAULT,
            reuseaddr: false,
            passcred: false,
            flags: 0,
            cred,
            peer_cred: NO_CRED,
            embryo: false,
            wmem: 0,
            marks: VecDeque::new(),
            wpos: 0,
            rpos: 0,
        }
    }

    /// Bytes (a stream) or messages waiting to be read.
    pub fn readable(&self) -> usize {
        match self.ty {
            Type::Stream => self.bytes.len(),
            _ => self.records.len(),
        }
    }

    /// Connections waiting for `accept`.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

/// What `recv` got: bytes copied, the message's whole length (a stream:
/// the same), and the sender's name.
#[derive(Debug, PartialEq, Eq)]
pub struct Got {
    /// Bytes copied out.
    pub copied: usize,
    /// The message's length (more than `copied`: truncated).
    pub len: usize,
    /// The sender's name (empty: unbound).
    pub from: Vec<u8>,
    /// Descriptions passed with the bytes (`SCM_RIGHTS`), now the
    /// receiver's: each holds a reference.
    pub fds: Vec<u32>,
}

/// Every socket, by index.
#[derive(Default, Debug)]
pub struct Socks {
    v: Vec<Sock>,
    /// Descriptions in flight whose socket went (their references are to
    /// be dropped: `take_orphans`).
    orphans: Vec<u32>,
}

impl Socks {
    /// No sockets.
    pub fn new() -> Socks {
        Socks {
            v: Vec::new(),
            orphans: Vec::new(),
        }
    }

    /// The descriptions that were in flight to sockets that have gone:
    /// their references are the caller's to drop.
    pub fn take_orphans(&mut self) -> Vec<u32> {
        core::mem::take(&mut self.orphans)
    }

    /// Socket `i`, if in use.
    pub fn get(&self, i: u32) -> Option<&Sock> {
        self.v.get(i as usize).filter(|s| s.used)
    }

    fn at(&mut self, i: u32) -> Result<&mut Sock, i64> {
        self.v
            .get_mut(i as usize)
            .filter(|s| s.used)
            .ok_or(ENOTSOCK)
    }

    /// A new socket of type `ty` → its index.
    pub fn create(&mut self, ty: Type, cred: Ucred) -> Result<u32, i64> {
        let s = Sock::new(ty, cred);
        if let Some(i) = self.v.iter().position(|s| !s.used) {
            self.v[i] = s;
            return Ok(i as u32);
        }
        if self.v.len() >= u32::MAX as usize {
            return Err(ENFILE);
        }
        self.v.try_reserve(1).map_err(|_| ENFILE)?;
        self.v.push(s);
        Ok(self.v.len() as u32 - 1)
    }

    /// `socketpair`: two sockets connected to each other.
    pub fn pair(&mut self, ty: Type, cred: Ucred) -> Result<(u32, u32), i64> {
        let a = self.create(ty, cred)?;
        let b = match self.create(ty, cred) {
            Ok(b) => b,
            Err(e) => {
                self.v[a as usize].used = false;
                return Err(e);
            }
        };
        for (x, y) in [(a, b), (b, a)] {
            let s = &mut self.v[x as usize];
            s.peer = Some(y);
            s.peer_cred = cred;
            if ty.connected() {
                s.state = State::Connected;
            }
        }
        Ok((a, b))
    }

    /// The socket bound to inode `ino`, or (`ino` 0) to abstract name
    /// `name` among sockets of type `ty` (Linux keeps one abstract
    /// namespace per type).
    pub fn find(&self, name: &[u8], ino: u32, ty: Type) -> Option<u32> {
        self.v
            .iter()
            .position(|s| {
                s.used
                    && !s.embryo
                    && if ino != 0 {
                        s.ino == ino
                    } else {
                        !name.is_empty() && s.ino == 0 && s.ty == ty && s.name == name
                    }
            })
            .map(|i| i as u32)
    }

    /// Whether socket `i` has a name.
    pub fn bound(&self, i: u32) -> bool {
        self.get(i).is_some_and(|s| !s.name.is_empty())
    }

    /// `bind` of socket `i` to `name` (`ino` its file's inode, or 0 for an
    /// abstract name): `EINVAL` if it has one, `EADDRINUSE` if an abstract
    /// name is taken.
    pub fn bind(&mut self, i: u32, name: &[u8], ino: u32) -> Result<(), i64> {
        if self.bound(i) {
            return Err(EINVAL);
        }
        if name.is_empty() || name.len() > MAX_NAME {
            return Err(EINVAL);
        }
        let ty = self.get(i).ok_or(ENOTSOCK)?.ty;
        if ino == 0 && self.find(name, 0, ty).is_some() {
            return Err(EADDRINUSE);
        }
        let mut n = Vec::new();
        n.try_reserve(name.len()).map_err(|_| ENOBUFS)?;
        n.extend_from_slice(name);
        let s = self.at(i)?;
        s.name = n;
        s.ino = ino;
        Ok(())
    }

    /// The file named `ino` is gone: no socket is reached through it.
    pub fn forget_ino(&mut self, ino: u32) {
        for s in self.v.iter_mut().filter(|s| s.used && s.ino == ino) {
            s.ino = u32::MAX;
        }
    }

    /// `listen(backlog)` (a negative or too large backlog is `SOMAXCONN`).
    pub fn listen(&mut self, i: u32, backlog: i64, cred: Ucred) -> Result<(), i64> {
        let bound = self.bound(i);
        let s = self.at(i)?;
        if !s.ty.connected() {
            return Err(EOPNOTSUPP);
        }
        if s.state == State::Connected || !bound {
            return Err(EINVAL);
        }
        s.backlog = if backlog < 0 || backlog > SOMAXCONN as i64 {
            SOMAXCONN
        } else {
            backlog as u32
        };
        s.state = State::Listening;
        s.cred = cred;
        Ok(())
    }

    /// `connect` of socket `i` to socket `to` by `cred`'s process. A
    /// stream or sequenced-packet socket queues a new socket, its
    /// accepted end, on the listener (`EAGAIN` while the queue is full:
    /// wait, or say so); a datagram socket takes `to` as its peer.
    pub fn connect(&mut self, i: u32, to: u32, cred: Ucred) -> Result<(), i64> {
        let me = self.get(i).ok_or(ENOTSOCK)?;
        let other = self.get(to).ok_or(ECONNREFUSED)?;
        if me.ty != other.ty {
            return Err(EPROTOTYPE);
        }
        if !me.ty.connected() {
            if other.peer.is_some_and(|p| p != i) {
                return Err(EPERM);
            }
            self.at(i)?.peer = Some(to);
            self.v[i as usize].peer_closed = false;
            return Ok(());
        }
        match me.state {
            State::Listening => return Err(EINVAL),
            State::Connected => return Err(EISCONN),
            State::Open => {}
        }
        if other.state != State::Listening {
            return Err(ECONNREFUSED);
        }
        if other.pending.len() > other.backlog as usize {
            return Err(EAGAIN);
        }
        let (ty, lname, lcred) = (other.ty, other.name.clone(), other.cred);
        self.v[to as usize]
            .pending
            .try_reserve(1)
            .map_err(|_| ENOBUFS)?;
        let n = self.create(ty, lcred)?;
        let new = &mut self.v[n as usize];
        new.name = lname;
        new.state = State::Connected;
        new.peer = Some(i);
        new.peer_cred = cred;
        new.embryo = true;
        self.v[to as usize].pending.push_back(n);
        let me = &mut self.v[i as usize];
        me.state = State::Connected;
        me.peer = Some(n);
        me.peer_cred = lcred;
        Ok(())
    }

    /// `accept` on listener `i` → the accepted socket (`EAGAIN`: none yet).
    pub fn accept(&mut self, i: u32) -> Result<u32, i64> {
        let s = self.at(i)?;
        if !s.ty.connected() {
            return Err(EOPNOTSUPP);
        }
        if s.state != State::Listening {
            return Err(EINVAL);
        }
        let n = s.pending.pop_front().ok_or(EAGAIN)?;
        self.v[n as usize].embryo = false;
        Ok(n)
    }

    /// Room in socket `to` for a message or bytes from `from`.
    fn room(&self, from: u32, to: u32, len: usize) -> usize {
        let (f, t) = (&self.v[from as usize], &self.v[to as usize]);
        match t.ty {
            Type::Stream => (f.sndbuf as usize).saturating_sub(t.bytes.len()),
            _ => {
                // Linux: the sender's buffer, and a receiver not
                // connected back holds at most `DGRAM_QLEN` more.
                let full = f.wmem >= f.sndbuf as usize
                    || (t.peer != Some(from) && t.records.len() > DGRAM_QLEN);
                if full {
                    0
                } else {
                    len.max(1)
                }
            }
        }
    }

    /// Sends `data` from socket `i` — to `to` (a datagram socket's
    /// destination by name), else to its peer → bytes taken. `EAGAIN`
    /// when there is no room (wait, or say so); `EPIPE` when it may not
    /// send any more (the caller raises `SIGPIPE` unless `MSG_NOSIGNAL`).
    pub fn send(&mut self, i: u32, to: Option<u32>, data: &[u8]) -> Result<usize, i64> {
        self.send_fds(i, to, data, &mut Vec::new())
    }

    /// [`Socks::send`] with descriptions in flight (`SCM_RIGHTS`): `fds`
    /// is taken (emptied) when the first byte (or the message) goes with
    /// them, and left to the caller otherwise.
    pub fn send_fds(
        &mut self,
        i: u32,
        to: Option<u32>,
        data: &[u8],
        fds: &mut Vec<u32>,
    ) -> Result<usize, i64> {
        let s = self.get(i).ok_or(ENOTSOCK)?;
        let ty = s.ty;
        if ty.connected() {
            // Linux's order: an address first, then the connection, then
            // the shutdown.
            if to.is_some() {
                return Err(if s.state == State::Connected {
                    EISCONN
                } else {
                    EOPNOTSUPP
                });
            }
            if s.state != State::Connected {
                return Err(ENOTCONN);
            }
            if s.wr_shut || s.peer_closed {
                return Err(EPIPE);
            }
        }
        if ty == Type::Dgram && s.wr_shut {
            return Err(EPIPE);
        }
        if ty != Type::Stream && data.len() as u64 > s.sndbuf as u64 - 32 {
            return Err(EMSGSIZE);
        }
        let dest = match (to, s.peer) {
            (Some(t), _) => t,
            (None, Some(p)) => p,
            (None, None) if s.peer_closed => return Err(ECONNREFUSED),
            (None, None) => return Err(ENOTCONN),
        };
        let d = self.get(dest).ok_or(ECONNREFUSED)?;
        if ty == Type::Dgram {
            if d.ty != Type::Dgram {
                return Err(EPROTOTYPE);
            }
            // A connected datagram socket hears only its peer.
            if d.peer.is_some_and(|p| p != i) {
                return Err(EPERM);
            }
            if d.rd_shut {
                return Err(EPIPE);
            }
        }
        let room = self.room(i, dest, data.len());
        if room == 0 {
            return Err(EAGAIN);
        }
        if ty == Type::Stream {
            let n = data.len().min(room);
            let d = &mut self.v[dest as usize];
            d.bytes.try_reserve(n).map_err(|_| ENOBUFS)?;
            if !fds.is_empty() && n > 0 {
                d.marks.try_reserve(1).map_err(|_| ENOBUFS)?;
                d.marks.push_back((d.wpos, core::mem::take(fds)));
            }
            d.bytes.extend(&data[..n]);
            d.wpos += n as u64;
            Ok(n)
        } else {
            let mut r = Record::default();
            r.data.try_reserve(data.len()).map_err(|_| ENOBUFS)?;
            r.data.extend_from_slice(data);
            let from = &self.v[i as usize].name;
            r.from.try_reserve(from.len()).map_err(|_| ENOBUFS)?;
            r.from.extend_from_slice(from);
            r.sender = Some(i);
            let q = &mut self.v[dest as usize].records;
            q.try_reserve(1).map_err(|_| ENOBUFS)?;
            r.fds = core::mem::take(fds);
            q.push_back(r);
            self.v[i as usize].wmem += truesize(data.len());
            Ok(data.len())
        }
    }

    /// Receives into `out` from socket `i` (`peek`: leaving it there) →
    /// what came; 0 bytes at the end (`EAGAIN`: nothing yet).
    pub fn recv(&mut self, i: u32, out: &mut [u8], peek: bool) -> Result<Got, i64> {
        self.recv_fds(i, out, peek, false, usize::MAX)
    }

    /// [`Socks::recv`]; a stream's bytes stop before the next bytes sent
    /// with descriptions, which come with the first of them — or, with
    /// `no_fds`, not at all (`EAGAIN`: a reader that already has bytes).
    /// The bytes and the descriptions (4 bytes each) fit in `cap` bytes.
    pub fn recv_fds(
        &mut self,
        i: u32,
        out: &mut [u8],
        peek: bool,
        no_fds: bool,
        cap: usize,
    ) -> Result<Got, i64> {
        let s = self.get(i).ok_or(ENOTSOCK)?;
        if s.ty.connected() && s.state != State::Connected {
            return Err(EINVAL);
        }
        let peer_name = s
            .peer
            .and_then(|p| self.get(p))
            .map(|p| p.name.clone())
            .unwrap_or_default();
        let s = self.at(i)?;
        if s.error != 0 && s.readable() == 0 {
            return Err(core::mem::take(&mut s.error));
        }
        match s.ty {
            Type::Stream => {
                if s.bytes.is_empty() {
                    return if s.rd_shut || out.is_empty() {
                        Ok(Got {
                            copied: 0,
                            len: 0,
                            from: peer_name,
                            fds: Vec::new(),
                        })
                    } else {
                        Err(EAGAIN)
                    };
                }
                let mut n = out.len().min(s.bytes.len());
                let here = s.marks.front().is_some_and(|m| m.0 == s.rpos);
                if here && no_fds {
                    return Err(EAGAIN);
                }
                if let Some(m) = s.marks.front().filter(|_| here) {
                    n = n.min(cap.saturating_sub(4 * m.1.len()).max(1));
                }
                // Up to the next bytes that carry descriptions.
                if let Some(m) = s.marks.iter().find(|m| m.0 > s.rpos) {
                    n = n.min((m.0 - s.rpos) as usize);
                }
                let (a, b) = s.bytes.as_slices();
                let first = n.min(a.len());
                out[..first].copy_from_slice(&a[..first]);
                out[first..n].copy_from_slice(&b[..n - first]);
                let mut fds = Vec::new();
                if !peek {
                    s.bytes.drain(..n);
                    if here {
                        fds = s.marks.pop_front().map(|m| m.1).unwrap_or_default();
                    }
                    s.rpos += n as u64;
                }
                Ok(Got {
                    copied: n,
                    len: n,
                    from: peer_name,
                    fds,
                })
            }
            _ => {
                let Some(r) = s.records.front() else {
                    return if s.rd_shut || (s.ty == Type::Seqpacket && s.peer_closed) {
                        Ok(Got {
                            copied: 0,
                            len: 0,
                            from: Vec::new(),
                            fds: Vec::new(),
                        })
                    } else {
                        Err(EAGAIN)
                    };
                };
                let n = out.len().min(r.data.len());
                out[..n].copy_from_slice(&r.data[..n]);
                let len = r.data.len();
                let (from, fds) = if peek {
                    (r.from.clone(), Vec::new())
                } else {
                    let r = s.records.pop_front().unwrap_or_default();
                    if let Some(w) = r.sender.and_then(|k| self.v.get_mut(k as usize)) {
                        w.wmem = w.wmem.saturating_sub(truesize(r.data.len()));
                    }
                    (r.from, r.fds)
                };
                Ok(Got {
                    copied: n,
                    len,
                    from,
                    fds,
                })
            }
        }
    }

    /// `shutdown(how)`: `SHUT_RD` 0, `SHUT_WR` 1, `SHUT_RDWR` 2; the peer
    /// of a connected socket sees the other side. (Linux's AF_UNIX shuts
    /// down an unconnected socket too.)
    pub fn shutdown(&mut self, i: u32, how: u64) -> Result<(), i64> {
        if how > 2 {
            return Err(EINVAL);
        }
        let s = self.get(i).ok_or(ENOTSOCK)?;
        let (rd, wr) = (how != 1, how != 0);
        let peer = s.peer;
        let s = self.at(i)?;
        s.rd_shut |= rd;
        s.wr_shut |= wr;
        if let Some(p) = peer.filter(|_| s.ty.connected()) {
            let p = self.at(p)?;
            p.rd_shut |= wr;
            p.wr_shut |= rd;
        }
        Ok(())
    }

    /// The last reference to socket `i` went: it goes, and so do the
    /// connections a listener had not accepted; a peer sees the end.
    /// → the sockets that changed (their waiters should look again).
    pub fn close(&mut self, i: u32) -> Vec<u32> {
        let mut changed = Vec::new();
        let Some(s) = self.get(i) else {
            return changed;
        };
        let pending: Vec<u32> = s.pending.iter().copied().collect();
        let connected = s.ty.connected();
        let unread = s.readable() > 0;
        // Descriptions in flight to it are dropped with it.
        let s = &mut self.v[i as usize];
        let mut gone: Vec<u32> = Vec::new();
        for r in s.records.iter_mut() {
            gone.append(&mut r.fds);
        }
        for m in s.marks.iter_mut() {
            gone.append(&mut m.1);
        }
        if self.orphans.try_reserve(gone.len()).is_ok() {
            self.orphans.append(&mut gone);
        }
        self.v[i as usize] = Sock {
            used: false,
            ..Sock::new(Type::Stream, NO_CRED)
        };
        for (j, o) in self.v.iter_mut().enumerate() {
            if !o.used {
                continue;
            }
            if o.peer == Some(i) {
                o.peer = None;
                if connected {
                    o.rd_shut = true;
                    o.wr_shut = true;
                    o.peer_closed = true;
                    if unread {
                        o.error = ECONNRESET;
                    }
                } else {
                    // A datagram socket whose peer went: its next send
                    // is ECONNREFUSED, as Linux's.
                    o.peer_closed = true;
                }
                if changed.try_reserve(1).is_ok() {
                    changed.push(j as u32);
                }
            }
            o.pending.retain(|&p| p != i);
            for r in o.records.iter_mut() {
                if r.sender == Some(i) {
                    r.sender = None;
                }
            }
        }
        for p in pending {
            for c in self.close(p) {
                if changed.try_reserve(1).is_ok() {
                    changed.push(c);
                }
            }
        }
        changed
    }

    /// The `poll` events of socket `i`.
    pub fn poll(&self, i: u32) -> u64 {
        let Some(s) = self.get(i) else {
            return POLLERR;
        };
        let mut ev = 0;
        if s.error != 0 {
            ev |= POLLERR;
        }
        if s.state == State::Listening {
            return ev | if s.pending.is_empty() { 0 } else { POLLIN };
        }
        if s.rd_shut && s.wr_shut {
            ev |= POLLHUP;
        }
        if s.readable() > 0 || s.rd_shut {
            ev |= POLLIN;
        }
        if s.ty.connected() && s.state == State::Open {
            // Linux: an unconnected stream socket is hung up, and
            // writable.
            return ev | POLLHUP | POLLOUT;
        }
        let writable = match s.peer {
            _ if s.wr_shut || s.peer_closed => true,
            Some(p) => self.get(p).is_some_and(|_| self.room(i, p, 1) > 0),
            None => true,
        };
        if writable {
            ev |= POLLOUT;
        }
        ev
    }

    /// Sets `SO_SNDBUF` (`snd`) or `SO_RCVBUF` as Linux does: doubled,
    /// within its bounds.
    pub fn set_buf(&mut self, i: u32, snd: bool, v: u32) -> Result<(), i64> {
        let s = self.at(i)?;
        let v = v.min(BUF_DEFAULT).saturating_mul(2);
        if snd {
            s.sndbuf = v.max(MIN_SNDBUF);
        } else {
            s.rcvbuf = v.max(MIN_RCVBUF);
        }
        Ok(())
    }

    /// Socket `i`, to change its options.
    pub fn opts(&mut self, i: u32) -> Result<&mut Sock, i64> {
        self.at(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;
    use proptest::prelude::*;

    const ME: Ucred = Ucred {
        pid: 7,
        uid: 1000,
        gid: 100,
    };

    fn listener(t: &mut Socks, ty: Type, name: &[u8], backlog: i64) -> u32 {
        let l = t.create(ty, ME).unwrap();
        t.bind(l, name, 0).unwrap();
        t.listen(l, backlog, ME).unwrap();
        l
    }

    #[test]
    fn stream_connect_accept_talk() {
        let mut t = Socks::new();
        let l = listener(&mut t, Type::Stream, b"\0srv", 5);
        let c = t.create(Type::Stream, NO_CRED).unwrap();
        assert_eq!(t.poll(l), 0);
        t.connect(c, l, Ucred { pid: 9, ..ME }).unwrap();
        assert_eq!(t.poll(l), POLLIN);
        let a = t.accept(l).unwrap();
        assert_eq!(t.accept(l), Err(EAGAIN));
        assert_eq!(t.get(a).unwrap().peer_cred.pid, 9);
        assert_eq!(t.get(c).unwrap().peer_cred, ME);
        assert_eq!(t.get(a).unwrap().name, b"\0srv");
        assert_eq!(t.send(c, None, b"ping"), Ok(4));
        let mut b = [0u8; 8];
        assert_eq!(t.recv(a, &mut b, true).unwrap().copied, 4);
        let g = t.recv(a, &mut b, false).unwrap();
        assert_eq!((&b[..g.copied], g.len), (&b"ping"[..], 4));
        assert_eq!(t.recv(a, &mut b, false), Err(EAGAIN));
        assert_eq!(t.connect(c, l, ME), Err(EISCONN));
        // The end: the reader sees 0, the writer EPIPE.
        t.close(c);
        assert_eq!(t.recv(a, &mut b, false).unwrap().copied, 0);
        assert_eq!(t.send(a, None, b"x"), Err(EPIPE));
        assert_eq!(t.poll(a) & (POLLIN | POLLHUP), POLLIN | POLLHUP);
    }

    #[test]
    fn refusals() {
        let mut t = Socks::new();
        let s = t.create(Type::Stream, ME).unwrap();
        let c = t.create(Type::Stream, ME).unwrap();
        assert_eq!(t.listen(s, 1, ME), Err(EINVAL)); // unbound
        t.bind(s, b"\0x", 0).unwrap();
        assert_eq!(t.bind(s, b"\0y", 0), Err(EINVAL));
        assert_eq!(t.bind(c, b"\0x", 0), Err(EADDRINUSE));
        // Another type's abstract names are apart.
        let d0 = t.create(Type::Dgram, ME).unwrap();
        assert_eq!(t.bind(d0, b"\0x", 0), Ok(()));
        assert_eq!(t.find(b"\0x", 0, Type::Stream), Some(s));
        assert_eq!(t.connect(c, s, ME), Err(ECONNREFUSED)); // not listening
        let d = t.create(Type::Dgram, ME).unwrap();
        assert_eq!(t.listen(d, 1, ME), Err(EOPNOTSUPP));
        assert_eq!(t.connect(d, s, ME), Err(EPROTOTYPE));
        assert_eq!(t.send(c, None, b"x"), Err(ENOTCONN));
        let mut b = [0u8; 4];
        assert_eq!(t.recv(c, &mut b, false), Err(EINVAL));
        assert_eq!(t.shutdown(c, 3), Err(EINVAL));
        assert_eq!(t.poll(c), POLLOUT | POLLHUP);
        assert_eq!(t.shutdown(c, 2), Ok(()));
        assert_eq!(t.poll(c), POLLIN | POLLOUT | POLLHUP);
    }

    #[test]
    fn backlog_fills() {
        let mut t = Socks::new();
        let l = listener(&mut t, Type::Stream, b"\0q", 1);
        let cs: Vec<u32> = (0..3)
            .map(|_| t.create(Type::Stream, ME).unwrap())
            .collect();
        assert_eq!(t.connect(cs[0], l, ME), Ok(()));
        assert_eq!(t.connect(cs[1], l, ME), Ok(()));
        assert_eq!(t.connect(cs[2], l, ME), Err(EAGAIN));
        // The listener goes: its unaccepted connections end.
        t.close(l);
        let mut b = [0u8; 4];
        assert_eq!(t.recv(cs[0], &mut b, false).unwrap().copied, 0);
        assert_eq!(t.send(cs[1], None, b"x"), Err(EPIPE));
    }

    #[test]
    fn dgrams_keep_boundaries_and_senders() {
        let mut t = Socks::new();
        let r = t.create(Type::Dgram, ME).unwrap();
        t.bind(r, b"/tmp/r", 42).unwrap();
        assert_eq!(t.find(b"", 42, Type::Dgram), Some(r));
        let s = t.create(Type::Dgram, ME).unwrap();
        t.bind(s, b"\0s", 0).unwrap();
        assert_eq!(t.send(s, None, b"x"), Err(ENOTCONN));
        t.send(s, Some(r), b"one").unwrap();
        t.send(s, Some(r), b"three").unwrap();
        let mut b = [0u8; 2];
        let g = t.recv(r, &mut b, false).unwrap();
        assert_eq!((g.copied, g.len, &g.from[..]), (2, 3, &b"\0s"[..]));
        let mut b = [0u8; 8];
        assert_eq!(t.recv(r, &mut b, false).unwrap().len, 5);
        assert_eq!(t.recv(r, &mut b, false), Err(EAGAIN));
        for _ in 0..=DGRAM_QLEN {
            t.send(s, Some(r), b"q").unwrap();
        }
        assert_eq!(t.send(s, Some(r), b"q"), Err(EAGAIN));
        // Connected back: only the sender's buffer bounds it (as Linux:
        // 278 one-byte messages in 212,992 bytes).
        let (a, b) = t.pair(Type::Dgram, ME).unwrap();
        let mut n = 0;
        while t.send(a, None, b"q").is_ok() {
            n += 1;
        }
        assert_eq!(n, 278);
        let mut one = [0u8; 1];
        t.recv(b, &mut one, false).unwrap();
        assert_eq!(t.send(a, None, b"q"), Ok(1));
        // Connected to another: EPERM for others.
        let o = t.create(Type::Dgram, ME).unwrap();
        t.connect(r, o, ME).unwrap();
        assert_eq!(t.send(s, Some(r), b"q"), Err(EPERM));
        t.close(o);
        assert_eq!(t.send(r, None, b"q"), Err(ECONNREFUSED));
        t.forget_ino(42);
        assert_eq!(t.find(b"", 42, Type::Dgram), None);
    }

    #[test]
    fn shutdown_sides() {
        let mut t = Socks::new();
        let (a, b) = t.pair(Type::Stream, ME).unwrap();
        t.send(a, None, b"hi").unwrap();
        t.shutdown(a, 1).unwrap();
        assert_eq!(t.send(a, None, b"x"), Err(EPIPE));
        let mut buf = [0u8; 4];
        assert_eq!(t.recv(b, &mut buf, false).unwrap().copied, 2);
        assert_eq!(t.recv(b, &mut buf, false).unwrap().copied, 0);
        t.shutdown(a, 0).unwrap();
        assert_eq!(t.send(b, None, b"x"), Err(EPIPE));
        assert_eq!(t.poll(b) & POLLHUP, POLLHUP);
        let (c, d) = t.pair(Type::Seqpacket, ME).unwrap();
        t.send(c, None, b"ab").unwrap();
        t.send(c, None, b"cde").unwrap();
        assert_eq!(t.recv(d, &mut buf, false).unwrap().copied, 2);
        assert_eq!(t.recv(d, &mut buf, false).unwrap().copied, 3);
        t.close(c);
        assert_eq!(t.recv(d, &mut buf, false).unwrap().copied, 0);
    }

    #[test]
    fn buffer_sizes() {
        let mut t = Socks::new();
        let (a, b) = t.pair(Type::Stream, ME).unwrap();
        t.set_buf(a, true, 1).unwrap();
        assert_eq!(t.get(a).unwrap().sndbuf, MIN_SNDBUF);
        t.set_buf(a, false, 10_000).unwrap();
        assert_eq!(t.get(a).unwrap().rcvbuf, 20_000);
        let big = [7u8; 10_000];
        assert_eq!(t.send(a, None, &big), Ok(MIN_SNDBUF as usize));
        assert_eq!(t.send(a, None, &big), Err(EAGAIN));
        assert_eq!(t.poll(a) & POLLOUT, 0);
        let mut buf = [0u8; 100];
        t.recv(b, &mut buf, false).unwrap();
        assert_eq!(t.poll(a) & POLLOUT, POLLOUT);
    }

    #[test]
    fn descriptors_in_flight() {
        let mut t = Socks::new();
        let (a, b) = t.pair(Type::Stream, ME).unwrap();
        t.send(a, None, b"abc").unwrap();
        let mut fds = vec![40, 41];
        assert_eq!(t.send_fds(a, None, b"def", &mut fds), Ok(3));
        assert!(fds.is_empty());
        t.send(a, None, b"gh").unwrap();
        let mut buf = [0u8; 16];
        // The bytes before stop at the descriptions' bytes.
        let g = t.recv(b, &mut buf, false).unwrap();
        assert_eq!((g.copied, g.fds.len()), (3, 0));
        assert_eq!(
            t.recv_fds(b, &mut buf, false, true, usize::MAX),
            Err(EAGAIN)
        );
        let g = t.recv(b, &mut buf, false).unwrap();
        assert_eq!((&buf[..g.copied], g.fds), (&b"defgh"[..], vec![40, 41]));
        // A message's go with it; a closed socket's are orphans.
        let (c, d) = t.pair(Type::Dgram, ME).unwrap();
        let mut fds = vec![7];
        t.send_fds(c, None, b"m", &mut fds).unwrap();
        let mut fds = vec![8, 9];
        t.send_fds(c, None, b"n", &mut fds).unwrap();
        assert_eq!(t.recv(d, &mut buf, false).unwrap().fds, vec![7]);
        t.close(d);
        assert_eq!(t.take_orphans(), vec![8, 9]);
        assert!(t.take_orphans().is_empty());
    }

    proptest! {
        /// Bytes come out of a stream in the order they went in, whatever
        /// the sizes of the sends and receives.
        #[test]
        fn stream_keeps_order(ops in proptest::collection::vec((any::<bool>(), 1usize..9000), 1..60)) {
            let mut t = Socks::new();
            let (a, b) = t.pair(Type::Stream, ME).unwrap();
            let (mut next_in, mut next_out) = (0u32, 0u32);
            for (send, n) in ops {
                if send {
                    let data: Vec<u8> = (0..n as u32).map(|k| (next_in + k) as u8).collect();
                    match t.send(a, None, &data) {
                        Ok(k) => next_in += k as u32,
                        Err(e) => prop_assert_eq!(e, EAGAIN),
                    }
                } else {
                    let mut buf = vec![0u8; n];
                    match t.recv(b, &mut buf, false) {
                        Ok(g) => {
                            for &x in &buf[..g.copied] {
                                prop_assert_eq!(x, next_out as u8);
                                next_out += 1;
                            }
                        }
                        Err(e) => prop_assert_eq!(e, EAGAIN),
                    }
                }
                prop_assert!(next_in - next_out <= BUF_DEFAULT);
            }
        }

        /// Datagrams come out whole and in order (truncated to the
        /// buffer, the rest dropped).
        #[test]
        fn dgrams_whole(sizes in proptest::collection::vec(0usize..3000, 1..30)) {
            let mut t = Socks::new();
            let (a, b) = t.pair(Type::Dgram, ME).unwrap();
            let mut sent = std::collections::VecDeque::new();
            for (k, n) in sizes.iter().enumerate() {
                let d = vec![k as u8; *n];
                match t.send(a, None, &d) {
                    Ok(m) => { prop_assert_eq!(m, *n); sent.push_back(d) }
                    Err(e) => {
                        prop_assert_eq!(e, EAGAIN);
                        let mut buf = [0u8; 1000];
                        let g = t.recv(b, &mut buf, false).unwrap();
                        let want = sent.pop_front().unwrap();
                        prop_assert_eq!(g.len, want.len());
                        prop_assert_eq!(&buf[..g.copied], &want[..g.copied]);
                    }
                }
            }
        }
    }
}
