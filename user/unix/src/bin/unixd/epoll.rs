//! epoll instances and signalfds: each an open file description of its
//! own kind (`Kind::Epoll`, `Kind::Signal`) naming an entry of a table here
//! that grows from the heap and is freed with the description's last
//! reference. An epoll's interest list is `stet_unixfs::epoll::Interest`;
//! every file's readiness is [`Unixd::readiness`], the same answer `poll`
//! gets (`proto::POLL`), so whatever `poll` knows epoll knows. A watched
//! description that is closed for the last time leaves every list
//! ([`Unixd::epoll_forget`]). The entries one user may have in all its
//! epolls are bounded (`max_user_watches`: `ENOSPC`). An `EPOLLEXCLUSIVE`
//! entry's file gives each change (generation) to one epoll, the first to
//! look after it (`Unixd::claims`). A signalfd holds its
//! mask; the pending signals are the reading process's own, which only
//! its keeper knows: it passes them with `POLL` and `EPOLL_WAIT`, and a
//! `READ` of a signalfd is answered [`p::SIGNALFD_READ`] so the keeper
//! reads it.

use crate::open::Kind;
use crate::wait::Wait;
use crate::{word, Reply, Unixd};
use stet_rt::key::Answer;
use stet_unix::fs::mode;
use stet_unix::proto as p;
use stet_unix::proto::o;
use stet_unix::sys::errno::*;
use stet_unixfs::epoll::{ev, op, Interest, MAX_CHAIN};

/// An epoll instance.
#[derive(Clone, Default)]
pub(crate) struct Epoll {
    pub(crate) used: bool,
    /// Its own description (for the loop check).
    pub(crate) fid: u32,
    /// The real user id of its maker: whose watches it counts against.
    pub(crate) owner: u32,
    pub(crate) list: Interest,
}

/// The bytes of one `struct epoll_event` (packed on x86_64).
pub(crate) const EVENT_BYTES: usize = 12;

/// A chain that reaches the epoll being added to.
const LOOP: usize = usize::MAX;

impl Unixd<'_> {
    /// `EPOLL_CREATE`, `EPOLL_CTL`, `EPOLL_WAIT`, `SIGNALFD`, `POLL_WAIT`.
    pub(crate) fn epoll_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let w = a.w;
        match a.code {
            p::EPOLL_CREATE => {
                let i = crate::table::take(&mut self.epolls, |e| !e.used, Epoll::default())
                    .filter(|&i| i <= u16::MAX as usize)
                    .ok_or(ENFILE)?;
                let fid = self.new_fid(Kind::Epoll(i as u16), o::RDWR)?;
                self.epolls[i] = Epoll {
                    used: true,
                    fid: fid as u32,
                    owner: self.caller_cred().uid[0],
                    list: Interest::new(),
                };
                word(Ok(fid))
            }
            p::EPOLL_CTL => word(self.epoll_ctl(w, s)),
            p::EPOLL_WAIT => {
                let f = self.fid(w[0])?;
                let Kind::Epoll(e) = self.open[f].kind else {
                    return Err(EINVAL);
                };
                let max = (w[1] as usize).clamp(1, out.len() / EVENT_BYTES);
                let pending = w[2];
                let mut list = core::mem::take(&mut self.epolls[e as usize].list);
                let mut n = 0;
                list.collect(
                    max,
                    |en| {
                        let (r, gen) = self.readiness(en.fid as usize, pending, 1);
                        if en.events & ev::EXCLUSIVE == 0 || r & en.events == 0 {
                            return (r, gen);
                        }
                        // EPOLLEXCLUSIVE: each change of the file goes to
                        // one epoll, the first to look.
                        match self.claims.iter_mut().find(|c| c.0 == en.fid) {
                            Some(c) if c.1 == gen && c.2 != e => (0, gen),
                            Some(c) => {
                                *c = (en.fid, gen, e);
                                (r, gen)
                            }
                            None => {
                                if self.claims.try_reserve(1).is_ok() {
                                    self.claims.push((en.fid, gen, e));
                                }
                                (r, gen)
                            }
                        }
                    },
                    |evs, data| {
                        let at = n * EVENT_BYTES;
                        out[at..at + 4].copy_from_slice(&evs.to_le_bytes());
                        out[at + 4..at + 12].copy_from_slice(&data.to_le_bytes());
                        n += 1;
                    },
                );
                self.epolls[e as usize].list = list;
                // With a deadline (the string), none ready parks until a
                // file changes (answered BUSY: look again), the deadline
                // (0 events) or a signal — also one a signalfd in the list
                // reads, which the keeper then looks for.
                let deadline = s
                    .get(..8)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()));
                if let (0, Some(d)) = (n, deadline) {
                    if d > crate::now_ns() {
                        self.intr |= self.signalfd_masks(e, 0);
                        let parked = self.park(Wait::Epoll(d));
                        // The clock helpers time the deadline.
                        self.kick();
                        return parked;
                    }
                }
                Ok(Reply::Now([n as u64, 0, 0], n * EVENT_BYTES, false))
            }
            p::POLL_WAIT => {
                if w[1] != self.changes || w[0] <= crate::now_ns() {
                    return word(Ok(0));
                }
                let parked = self.park(Wait::Epoll(w[0]));
                self.kick();
                parked
            }
            p::SIGNALFD => match w[0] {
                p::signalfd::CREATE => {
                    let i = crate::table::take(&mut self.sigfds, |m| m.is_none(), None)
                        .filter(|&i| i <= u16::MAX as usize)
                        .ok_or(ENFILE)?;
                    let fid =
                        self.new_fid(Kind::Signal(i as u16), o::RDWR | (w[2] & o::NONBLOCK))?;
                    self.sigfds[i] = Some(w[1]);
                    word(Ok(fid))
                }
                p::signalfd::SET => {
                    let f = self.fid(w[1])?;
                    let Kind::Signal(i) = self.open[f].kind else {
                        return Err(EINVAL);
                    };
                    self.sigfds[i as usize] = Some(w[2]);
                    word(Ok(0))
                }
                _ => Err(EINVAL),
            },
            _ => Err(ENOSYS),
        }
    }

    /// `EPOLL_CTL`: `w0` the epoll's fid, `w1` the operation and the
    /// descriptor number, `w2` the target's fid, the string the event.
    fn epoll_ctl(&mut self, w: [u64; 4], s: &[u8]) -> Result<u64, i64> {
        let f = self.fid(w[0])?;
        let t = self.fid(w[2])?;
        let (operation, fd) = (w[1] & 0xff, (w[1] >> 32) as u32 as i32);
        let events = s
            .get(..4)
            .map_or(0, |b| u32::from_le_bytes(b.try_into().unwrap_or_default()));
        let data = s
            .get(4..12)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()));
        // Files that are always ready: Linux has no poll for them.
        if let Kind::Inode(ino) = self.open[t].kind {
            let fmt = self.fs.inode(ino).map_or(0, |i| i.mode & mode::FMT);
            if fmt == mode::REG || fmt == mode::DIR || fmt == mode::LNK {
                return Err(EPERM);
            }
        }
        let Kind::Epoll(e) = self.open[f].kind else {
            return Err(EINVAL);
        };
        if f == t {
            return Err(EINVAL);
        }
        let nested = matches!(self.open[t].kind, Kind::Epoll(_));
        if operation == op::ADD && nested && events & ev::EXCLUSIVE == 0 {
            let below = self.chain_below(t, f, 0);
            if below == LOOP || self.chain_above(f, 0).saturating_add(below) > MAX_CHAIN {
                return Err(ELOOP);
            }
        }
        match operation {
            op::ADD => {
                let owner = self.epolls[e as usize].owner;
                let watches: usize = self
                    .epolls
                    .iter()
                    .filter(|x| x.used && x.owner == owner)
                    .map(|x| x.list.entries.len())
                    .sum();
                if watches as u64 >= self.max_user_watches {
                    return Err(ENOSPC);
                }
                let list = &mut self.epolls[e as usize].list;
                list.add(t as u32, fd, events, data, nested)?;
            }
            op::MOD => self.epolls[e as usize]
                .list
                .modify(t as u32, fd, events, data)?,
            op::DEL => self.epolls[e as usize].list.delete(t as u32, fd)?,
            _ => return Err(EINVAL),
        }
        // A waiter on this epoll may have something to report now.
        self.epoll_wake();
        Ok(0)
    }

    /// The epolls in the longest chain from epoll fid `f` down (itself
    /// counted); [`LOOP`] if one of them watches `target`.
    fn chain_below(&self, f: usize, target: usize, depth: usize) -> usize {
        let Some(Kind::Epoll(e)) = self.open.get(f).map(|o| o.kind) else {
            return 0;
        };
        if depth > MAX_CHAIN {
            return depth;
        }
        let mut most = 0;
        for en in self.epolls[e as usize]
            .list
            .entries
            .iter()
            .filter(|x| x.nested)
        {
            if en.fid as usize == target {
                return LOOP;
            }
            let b = self.chain_below(en.fid as usize, target, depth + 1);
            if b == LOOP {
                return LOOP;
            }
            most = most.max(b);
        }
        most + 1
    }

    /// The epolls in the longest chain from epoll fid `f` up (itself
    /// counted): those watching it, those watching them...
    fn chain_above(&self, f: usize, depth: usize) -> usize {
        if depth > MAX_CHAIN {
            return depth;
        }
        let mut most = 0;
        for x in self.epolls.iter().filter(|x| x.used) {
            if x.list.entries.iter().any(|en| en.fid as usize == f) {
                most = most.max(self.chain_above(x.fid as usize, depth + 1));
            }
        }
        most + 1
    }

    /// The `poll`/`epoll` events file `f` is ready for now, and its
    /// generation (what edge-triggered entries see change). `pending`: the
    /// caller's pending signals (signalfds); `depth`: how deep in nested
    /// epolls the question is.
    pub(crate) fn readiness(&mut self, f: usize, pending: u64, depth: usize) -> (u32, u32) {
        const IN: u32 = ev::IN | ev::RDNORM;
        const OUT: u32 = ev::OUT | ev::WRNORM;
        let Some(kind) = self.open.get(f).map(|o| o.kind) else {
            return (0, 0);
        };
        match kind {
            Kind::Free => (0, 0),
            Kind::PipeRead(n) | Kind::PipeWrite(n) | Kind::PipeBoth(n) => {
                let pi = &self.pipes[n as usize];
                let (_, rd, wr) = kind.pipe().unwrap_or((n, false, false));
                let (mut r, mut gen) = (0, 0u32);
                if rd {
                    r |= (if pi.buf.is_empty() { 0 } else { IN })
                        | (if pi.writers == 0 { ev::HUP } else { 0 });
                    gen = pi.wgen;
                }
                if wr {
                    // As Linux: writable while a whole page of the pipe is
                    // free (its buffers are pages: one read from only in
                    // part is still taken), an error once no reader is left.
                    let page = stet_unixfs::pipe::PAGE.min(pi.buf.cap());
                    r |= (if pi.buf.room() >= page.max(1) { OUT } else { 0 })
                        | (if pi.readers == 0 { ev::ERR } else { 0 });
                    gen = gen.wrapping_add(pi.rgen);
                }
                (r, gen)
            }
            Kind::Tty => (OUT | if self.tty.readable() { IN } else { 0 }, 0),
            k @ (Kind::Event(_) | Kind::Timer(_)) => {
                let (r, gen) = self.fdobj_poll(k);
                let mut m = 0;
                if r & stet_unix::sys::poll::POLLIN != 0 {
                    m |= IN;
                }
                if r & stet_unix::sys::poll::POLLOUT != 0 {
                    m |= OUT;
                }
                (m, gen)
            }
            Kind::Epoll(e) => {
                if depth > MAX_CHAIN {
                    return (0, 0);
                }
                let list = core::mem::take(&mut self.epolls[e as usize].list);
                let ready =
                    list.any_ready(|en| self.readiness(en.fid as usize, pending, depth + 1));
                self.epolls[e as usize].list = list;
                (if ready { IN } else { 0 }, 0)
            }
            Kind::Signal(i) => {
                let mask = self.sigfds[i as usize].unwrap_or(0);
                (if pending & mask != 0 { IN } else { 0 }, 0)
            }
            Kind::Socket(n) => {
                // poll's bits are epoll's; a socket keeps no change count,
                // so an edge-triggered entry fires on its transitions.
                use stet_unix::sys::poll::{POLLIN, POLLOUT};
                let r = self.sock_poll(n);
                let mut m = r as u32 & (ev::ERR | ev::HUP);
                if r & POLLIN != 0 {
                    m |= IN;
                }
                if r & POLLOUT != 0 {
                    m |= OUT;
                }
                (m, 0)
            }
            Kind::Pidfd(pid) => (if self.pid_ended(pid) { IN } else { 0 }, 0),
            Kind::Inotify(n) => {
                let (ready, gen) = self.inotify_poll(n);
                (if ready { IN } else { 0 }, gen)
            }
            Kind::Inode(_) | Kind::Null | Kind::Zero | Kind::Random => (IN | OUT, 0),
        }
    }

    /// The signals the signalfds in epoll `e` (and the epolls in it) read.
    fn signalfd_masks(&self, e: u16, depth: usize) -> u64 {
        if depth > MAX_CHAIN {
            return 0;
        }
        let mut m = 0;
        for en in &self.epolls[e as usize].list.entries {
            match self.open.get(en.fid as usize).map(|o| o.kind) {
                Some(Kind::Signal(i)) => m |= self.sigfds[i as usize].unwrap_or(0),
                Some(Kind::Epoll(x)) => m |= self.signalfd_masks(x, depth + 1),
                _ => {}
            }
        }
        m
    }

    /// Something's readiness may have changed: parked `epoll_wait`s look
    /// again.
    pub(crate) fn epoll_wake(&mut self) {
        self.changes = self.changes.wrapping_add(1);
        for i in 0..self.waiters.len() {
            if matches!(self.waiters[i].on, Wait::Epoll(_)) {
                self.wake(i);
            }
        }
    }

    /// Fid `fid` lost its last reference: it leaves every interest list,
    /// and an epoll or signalfd it was is freed.
    pub(crate) fn epoll_forget(&mut self, fid: u32, kind: Kind) {
        for x in self.epolls.iter_mut().filter(|x| x.used) {
            x.list.forget(fid);
        }
        self.claims.retain(|c| c.0 != fid);
        match kind {
            Kind::Epoll(e) => self.epolls[e as usize] = Epoll::default(),
            Kind::Signal(i) => self.sigfds[i as usize] = None,
            _ => {}
        }
    }

    /// A `READ` of signalfd `i`: the keeper reads it (`SIGNALFD_READ`,
    /// `w1` the mask, `w2` 1 if non-blocking).
    pub(crate) fn signalfd_read(&self, f: usize, i: u16) -> Result<Reply, i64> {
        let mask = self.sigfds[i as usize].unwrap_or(0);
        let nonblock = (self.open[f].flags & o::NONBLOCK != 0) as u64;
        Ok(Reply::Now(
            [(-p::SIGNALFD_READ) as u64, mask, nonblock],
            0,
            false,
        ))
    }
}
