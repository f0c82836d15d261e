//! System V IPC (`proto::SHMGET` … `proto::IPC_MORE`): the objects and
//! their rules are `stet_unixfs::ipc`'s; this file gives them what lives
//! in unixd's other tables. A segment's bytes are a nameless regular file
//! (as `MEMFD`'s shared anonymous memory), held open by the segment's
//! entry; an attach is a fid of it that the keeper maps shared, so its
//! references are the attaches (`shm_nattch`: `fork` adds one, the last
//! `CLOSE` of an attach detaches, `shm_closed`). A call that must wait
//! (`semop`, a full queue's `msgsnd`, `msgrcv`) is parked like every
//! other (`Wait::Ipc` with a ticket and a deadline): a signal ends it
//! with `EINTR`, a timeout with `EAGAIN`, removal with `EIDRM`; a change
//! does the parked `semop`s that can go on and hands a message to the
//! receivers waiting for it (their answers carry the result; a thread's
//! call whose keeper went on is told `READY` and asks again instead).
//! Parked senders ask again when room may have come. `SEM_UNDO`
//! adjustments are applied when the process's `EXIT` comes.

use crate::open::{Kind, FREE};
use crate::wait::{resume_key, Wait, Waiter, NOTIFY, NO_WAITER};
use crate::{now_ns, Reply, Unixd};
use alloc::vec::Vec;
use stet_rt::abi::code::Code;
use stet_rt::abi::invoke::Source;
use stet_rt::key::{Answer, Msg};
use stet_unix::proto::{self as p, ipc_kind, ipc_more as more, o};
use stet_unix::sys::errno::*;
use stet_unix::sysv::{self, errno::EIDRM, SemBuf};
use stet_unixfs::ipc::msg::{Received, Sent};
use stet_unixfs::ipc::sem::{Outcome, Woken};
use stet_unixfs::ipc::{Found, Live, Wants};

/// The most bytes of a message's text one answer carries.
pub(crate) const PIECE: usize = 4096;

/// What parked call `ticket` is now.
pub(crate) fn live_in(waiters: &[Waiter], ticket: u32) -> Live {
    match waiters
        .iter()
        .find(|w| matches!(w.on, Wait::Ipc(t, _) if t == ticket))
    {
        None => Live::Gone,
        Some(w) if w.slot == NOTIFY => Live::Retry,
        Some(_) => Live::Answer,
    }
}

/// The index of parked call `ticket`.
pub(crate) fn waiter_of(waiters: &[Waiter], ticket: u32) -> Option<usize> {
    waiters
        .iter()
        .position(|w| matches!(w.on, Wait::Ipc(t, _) if t == ticket))
}

impl Unixd<'_> {
    /// Seconds since 1970, for the objects' times.
    fn secs(&self) -> u64 {
        self.time() / 1_000_000_000
    }

    /// Attaches of the segment whose file is `ino`: the references to its
    /// fids but the segment's own.
    pub(crate) fn nattch(open: &[crate::open::Open], ino: u32) -> u64 {
        let refs: u64 = open
            .iter()
            .filter(|o| o.kind == Kind::Inode(ino))
            .map(|o| o.refs as u64)
            .sum();
        refs.saturating_sub(1)
    }

    /// Drops a reference to fid `fid` that unixd holds itself.
    fn drop_fid(&mut self, fid: u32) {
        let Some(o) = self.open.get_mut(fid as usize) else {
            return;
        };
        o.refs = o.refs.saturating_sub(1);
        if o.refs == 0 {
            let k = o.kind;
            *o = FREE;
            if let Kind::Inode(ino) = k {
                self.maybe_free(ino);
            }
        }
    }

    /// A reference to a fid of file `ino` was closed: if it attached a
    /// segment, that is a detach (and a removed segment's last goes).
    pub(crate) fn shm_closed(&mut self, ino: u32) {
        if self.ipc.shm_of_inode(ino).is_none() {
            return;
        }
        let n = Self::nattch(&self.open, ino);
        let secs = self.secs();
        if let Some(fid) = self.ipc.shm_detached(ino, n, self.caller, secs) {
            self.drop_fid(fid);
        }
    }

    /// Process `pid`'s `EXIT`: its `SEM_UNDO` adjustments, and whatever
    /// they let go on (and its POSIX queues' notifications go).
    pub(crate) fn sysv_exit(&mut self, pid: u32) {
        let secs = self.secs();
        for id in self.ipc.exit(pid, secs) {
            self.sem_changed(id);
        }
    }

    /// Answers the parked calls of `tickets` `-errno`.
    fn answer_all(&mut self, tickets: Vec<u32>, errno: i64) {
        for t in tickets {
            if let Some(i) = waiter_of(&self.waiters, t) {
                self.answer(i, (-errno) as u64);
            }
        }
    }

    /// Set `id` changed: the parked operations that can go on now.
    fn sem_changed(&mut self, id: i32) {
        let secs = self.secs();
        let woken = self.ipc.sem_update(id, secs, |t| live_in(&self.waiters, t));
        for (t, w) in woken {
            let Some(i) = waiter_of(&self.waiters, t) else {
                continue;
            };
            match w {
                Woken::Done => self.answer(i, 0),
                Woken::Failed(e) => self.answer(i, (-e) as u64),
                Woken::Retry => self.wake(i),
            }
        }
    }

    /// A message came to queue `id`: the receivers waiting for it.
    fn msg_arrived(&mut self, id: i32) {
        let secs = self.secs();
        let given = self
            .ipc
            .msg_handoff(id, secs, |t| live_in(&self.waiters, t));
        let mut took = false;
        for (t, r) in given {
            let Some(i) = waiter_of(&self.waiters, t) else {
                continue;
            };
            match r {
                None => self.wake(i),
                Some(Err(e)) => self.answer(i, (-e) as u64),
                Some(Ok(m)) => {
                    took = true;
                    self.answer_text(i, m.mtype as u64, m.text);
                }
            }
        }
        if took {
            self.msg_left();
        }
    }

    /// Room may have come in a queue: every parked sender asks again.
    fn msg_left(&mut self) {
        for t in self.ipc.msg_senders() {
            if let Some(i) = waiter_of(&self.waiters, t) {
                self.wake(i);
            }
        }
    }

    /// Answers parked receive `i` with a message's `text`: its length,
    /// `w1` (the type, or the priority) and first piece; the rest is kept
    /// for `IPC_MORE`.
    pub(crate) fn answer_text(&mut self, i: usize, w1: u64, text: Vec<u8>) {
        let w = self.waiters[i];
        if w.slot == NOTIFY {
            return self.wake(i);
        }
        self.waiters[i] = NO_WAITER;
        let sigs = self.take_pending(w.pid);
        let n = text.len();
        if let Some(r) = resume_key(&self.keys, i, w.slot) {
            Msg::new(r, Code::Ok.into())
                .words([n as u64, w1, 0, sigs])
                .string(&text[..n.min(PIECE)])
                .send();
        }
        if n > PIECE {
            let _ = self.ipc.keep_rest(w.pid, 0, text);
        }
    }

    /// Parks the caller's call on `wants` until `deadline` (`EAGAIN`
    /// when it has passed; a POSIX queue's `ETIMEDOUT`).
    pub(crate) fn park_ipc(&mut self, wants: Wants, deadline: u64) -> Result<Reply, i64> {
        if deadline <= now_ns() {
            return Err(Self::timeout_errno(&wants));
        }
        let t = self.ipc.ticket();
        self.ipc.wait(t, self.caller, wants)?;
        let r = self.park(Wait::Ipc(t, deadline));
        if r.is_err() {
            self.ipc.forget(t);
        }
        if deadline != u64::MAX {
            self.kick();
        }
        r
    }

    /// What a wait that reached its deadline answers: `semtimedop`'s
    /// `EAGAIN`, a POSIX queue's `ETIMEDOUT`.
    fn timeout_errno(w: &Wants) -> i64 {
        match w {
            Wants::MqRecv { .. } | Wants::MqSend { .. } => ETIMEDOUT,
            _ => EAGAIN,
        }
    }

    /// The errno parked call `ticket` answers at its deadline.
    pub(crate) fn ipc_timeout(&self, ticket: u32) -> i64 {
        self.ipc
            .pending
            .iter()
            .find(|p| p.ticket == ticket)
            .map_or(EAGAIN, |p| Self::timeout_errno(&p.wants))
    }

    /// The System V IPC orders (only from a process).
    pub(crate) fn sysv_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        if a.source != Source::Forwarded || self.caller == 0 {
            return Err(EPERM);
        }
        self.proc_of(self.caller)?;
        // Waits a signal, a timeout or the caller's end answered.
        self.ipc.prune(|t| live_in(&self.waiters, t));
        self.ipc.caps.shm_bytes = self.files_limit.saturating_mul(4096);
        let (c, pid, secs) = (self.caller_cred(), self.caller, self.secs());
        let w = a.w;
        let now = |r: Result<u64, i64>| crate::word(r);
        match a.code {
            p::SHMGET => now(self.shmget(w[0] as i32, w[1], w[2] as u32)),
            p::SHMAT => {
                let flags = w[1] as u32;
                let seg = self.ipc.shm_attach(w[0] as i64, flags, &c, pid, secs)?;
                let acc = if flags & sysv::SHM_RDONLY != 0 {
                    o::RDONLY
                } else {
                    o::RDWR
                };
                let fid = self.new_fid(Kind::Inode(seg.ino), acc)?;
                Ok(Reply::Now([fid, seg.segsz, 0], 0, false))
            }
            p::SHMDT => {
                let f = self.fid(w[0])?;
                let ino = self.inode_of(f).ok_or(EINVAL)?;
                let id = self.ipc.shm_of_inode(ino).ok_or(EINVAL)?;
                let seg = self.ipc.shm.get(id as i64)?.obj;
                if seg.fid as usize == f {
                    return Err(EINVAL);
                }
                now(Ok(seg.segsz))
            }
            p::SEMGET => {
                let (key, flags) = (w[0] as i32, w[2] as u32);
                now(match self.ipc.sem_lookup(key, w[1] as i64, flags, &c)? {
                    Found::Existing(id) => Ok(id as u64),
                    Found::Create => self
                        .ipc
                        .sem_create(key, w[1] as i64, flags, &c, secs)
                        .map(|id| id as u64),
                })
            }
            p::SEMOP => self.semop(w[0] as i64, w[1], s),
            p::MSGGET => {
                let (key, flags) = (w[0] as i32, w[1] as u32);
                now(match self.ipc.msg_lookup(key, flags, &c)? {
                    Found::Existing(id) => Ok(id as u64),
                    Found::Create => self
                        .ipc
                        .msg_create(key, flags, &c, secs)
                        .map(|id| id as u64),
                })
            }
            p::MSGSND => {
                // The text's first pieces were staged unless the string
                // is all of it.
                let len = w[2] & 0xffff_ffff;
                let whole = len == s.len() as u64;
                let staged = self
                    .ipc
                    .staged(pid, self.notify, if whole { &[] } else { s })?;
                let text = if whole { s } else { &staged[..] };
                if text.len() as u64 != len {
                    return Err(EINVAL);
                }
                let (id, flags) = (w[0] as i64, (w[2] >> 32) as u32);
                match self
                    .ipc
                    .msg_send(id, w[1] as i64, text, flags, &c, pid, secs)?
                {
                    Sent::Done => {
                        self.msg_arrived(id as i32);
                        now(Ok(0))
                    }
                    Sent::Full => self.park_ipc(Wants::Send { id: id as i32 }, u64::MAX),
                }
            }
            p::MSGRCV => {
                let (id, typ) = (w[0] as i64, w[1] as i64);
                let (max, flags) = (w[2] & 0xffff_ffff, (w[2] >> 32) as u32);
                match self.ipc.msg_receive(id, typ, max, flags, &c, pid, secs)? {
                    Received::Msg(m) => {
                        if flags & sysv::MSG_COPY == 0 {
                            self.msg_left();
                        }
                        let n = m.text.len();
                        out[..n.min(PIECE)].copy_from_slice(&m.text[..n.min(PIECE)]);
                        let mtype = m.mtype as u64;
                        if n > PIECE {
                            self.ipc.keep_rest(pid, self.notify, m.text)?;
                        }
                        Ok(Reply::Now([n as u64, mtype, 0], n.min(PIECE), false))
                    }
                    Received::Empty => {
                        let wants = Wants::Recv {
                            id: id as i32,
                            typ,
                            flags,
                            max,
                        };
                        self.park_ipc(wants, u64::MAX)
                    }
                }
            }
            p::IPCCTL => self.ipcctl(w, s, out),
            p::IPC_MORE => match w[0] & 0xff {
                more::STAGE => now(self.ipc.stage(pid, self.notify, w[1], s).map(|_| 0)),
                more::REST => {
                    let n = self.ipc.rest(pid, self.notify, w[1], out);
                    Ok(Reply::Now([n as u64, 0, 0], n, false))
                }
                _ => self.mq_order(w, s, out),
            },
            _ => Err(ENOSYS),
        }
    }

    /// `shmget`: the key's segment, or a new one (a nameless file held
    /// open by its entry).
    fn shmget(&mut self, key: i32, size: u64, flags: u32) -> Result<u64, i64> {
        let c = self.caller_cred();
        match self.ipc.shm_lookup(key, size, flags, &c)? {
            Found::Existing(id) => Ok(id as u64),
            Found::Create => {
                let now = self.time();
                let ino = self.fs.create_unnamed(size, now)?;
                let fid = match self.new_fid(Kind::Inode(ino), o::RDWR) {
                    Ok(f) => f as u32,
                    Err(e) => {
                        self.fs.free(ino);
                        return Err(e);
                    }
                };
                let (pid, secs) = (self.caller, self.secs());
                match self
                    .ipc
                    .shm_create(key, size, flags, &c, ino, fid, pid, secs)
                {
                    Ok(id) => Ok(id as u64),
                    Err(e) => {
                        self.drop_fid(fid);
                        Err(e)
                    }
                }
            }
        }
    }

    /// `semtimedop` of the `struct sembuf`s in `s` until `deadline`.
    fn semop(&mut self, id: i64, deadline: u64, s: &[u8]) -> Result<Reply, i64> {
        if !s.len().is_multiple_of(sysv::size::SEMBUF) {
            return Err(EINVAL);
        }
        let mut sops = Vec::new();
        sops.try_reserve_exact(s.len() / sysv::size::SEMBUF)
            .map_err(|_| ENOMEM)?;
        sops.extend(SemBuf::parse(s));
        let (c, pid, secs) = (self.caller_cred(), self.caller, self.secs());
        match self.ipc.semop(id, &sops, &c, pid, secs)? {
            Outcome::Done => {
                if sops.iter().any(|o| o.op != 0) {
                    self.sem_changed(id as i32);
                }
                crate::word(Ok(0))
            }
            Outcome::Block(blocking) => {
                let wants = Wants::Sem {
                    id: id as i32,
                    sops,
                    blocking,
                };
                self.park_ipc(wants, deadline)
            }
        }
    }

    /// `shmctl`, `semctl`, `msgctl` (`proto::IPCCTL`).
    fn ipcctl(&mut self, w: [u64; 4], s: &[u8], out: &mut [u8; 4096]) -> Result<Reply, i64> {
        use sysv::*;
        let kind = w[0] & 0xff;
        let cmd = ((w[0] >> 8) & 0xff_ffff) as u32;
        let (id, arg) = (w[1] as i64, w[2]);
        let (c, pid, secs) = (self.caller_cred(), self.caller, self.secs());
        let done = |ret: u64, len: usize| Ok(Reply::Now([ret, 0, 0], len, false));
        match kind {
            ipc_kind::SHM => match cmd {
                IPC_INFO => {
                    write_shminfo(out, &self.ipc.shm_limits);
                    done(self.ipc.shm.max_index(), size::SHMINFO)
                }
                SHM_INFO => {
                    let (used, pages) = self.ipc.shm_usage();
                    write_shm_info(out, used, pages, 0);
                    done(self.ipc.shm.max_index(), size::SHM_INFO)
                }
                _ => {
                    let n = s.len().min(size::SHMID_DS);
                    out[..n].copy_from_slice(&s[..n]);
                    let (ret, fid) = self
                        .ipc
                        .shm_ctl(id, cmd, out, &c, secs, |ino| Self::nattch(&self.open, ino))?;
                    if let Some(fid) = fid {
                        self.drop_fid(fid);
                    }
                    let stat = matches!(cmd, IPC_STAT | SHM_STAT | SHM_STAT_ANY);
                    done(ret, if stat { size::SHMID_DS } else { 0 })
                }
            },
            ipc_kind::SEM => match cmd {
                IPC_INFO | SEM_INFO => {
                    let usage = (cmd == SEM_INFO).then(|| self.ipc.sem_usage());
                    write_seminfo(out, usage);
                    done(self.ipc.sem.max_index(), size::SEMINFO)
                }
                _ => {
                    // `SETALL`'s values: `w2` is 1 + their bytes, of which
                    // those before the string's were staged.
                    let staged;
                    let (inp, arg): (&[u8], u64) = if cmd == SETALL && arg > 0 {
                        let whole = arg - 1 == s.len() as u64;
                        staged = self
                            .ipc
                            .staged(pid, self.notify, if whole { &[] } else { s })?;
                        (if whole { s } else { &staged[..] }, 1)
                    } else {
                        (s, arg)
                    };
                    let num = (w[0] >> 32) as u32 as i32 as i64;
                    let r = self
                        .ipc
                        .sem_ctl(id, num, cmd, arg, inp, out, &c, pid, secs)?;
                    if r.changed {
                        self.sem_changed(id as i32);
                    }
                    if cmd == IPC_RMID {
                        let t = self.ipc.take_waits(
                            |x| matches!(x, Wants::Sem { id: s, .. } if *s as i64 == id),
                        );
                        self.answer_all(t, EIDRM);
                    }
                    Ok(Reply::Now([r.ret, r.nsems, 0], r.len, false))
                }
            },
            ipc_kind::MSG => match cmd {
                IPC_INFO | MSG_INFO => {
                    let usage = (cmd == MSG_INFO).then(|| self.ipc.msg_usage());
                    write_msginfo(out, usage);
                    done(self.ipc.msg.max_index(), size::MSGINFO)
                }
                _ => {
                    let (ret, len) = self.ipc.msg_ctl(id, cmd, s, out, &c, secs)?;
                    if cmd == IPC_RMID {
                        let t = self.ipc.take_waits(|x| match x {
                            Wants::Recv { id: q, .. } | Wants::Send { id: q } => *q as i64 == id,
                            _ => false,
                        });
                        self.answer_all(t, EIDRM);
                    }
                    if cmd == IPC_SET {
                        self.msg_left();
                    }
                    done(ret, len)
                }
            },
            _ => Err(EINVAL),
        }
    }
}
