//! Message queues (man 2 msgget, msgsnd, msgrcv, msgctl): messages kept
//! in the order sent, chosen by type as `msgrcv`'s `msgtyp` says (0 the
//! first, > 0 the first of that type or, with `MSG_EXCEPT`, of another,
//! < 0 the first of the lowest type up to its magnitude; `MSG_COPY` the
//! one at that index, left in the queue); a full queue (`msg_qbytes`
//! bytes or messages) holds senders back. A message sent while receivers
//! wait goes to the first of them it suits, as Linux's pipelined send.

use super::{Found, Ipc, Live, Wants};
use alloc::vec::Vec;
use stet_unix::cred::{Cred, EFF};
use stet_unix::sys::errno::*;
use stet_unix::sysv::errno::ENOMSG;
use stet_unix::sysv::{self, limit, Perm, IPC_NOWAIT, MSG_COPY, MSG_EXCEPT, MSG_NOERROR};

/// Heap a message takes besides its text, counted against its queue
/// creator's [`super::Caps::msg_bytes`].
pub const OVERHEAD: u64 = 48;

/// One message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// Its type (≥ 1).
    pub mtype: i64,
    /// Its text.
    pub text: Vec<u8>,
}

/// A queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queue {
    /// The messages, oldest first.
    pub msgs: Vec<Message>,
    /// Their text bytes.
    pub cbytes: u64,
    /// The most bytes (and messages) it holds.
    pub qbytes: u64,
    /// Last send, receive, change (s since 1970).
    pub stime: u64,
    #[allow(missing_docs)]
    pub rtime: u64,
    #[allow(missing_docs)]
    pub ctime: u64,
    /// Last sender's and receiver's pids.
    pub lspid: u32,
    #[allow(missing_docs)]
    pub lrpid: u32,
}

/// What a `msgsnd` came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sent {
    /// Queued.
    Done,
    /// No room: wait.
    Full,
}

/// What a `msgrcv` came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Received {
    /// A message (its text cut to the buffer with `MSG_NOERROR`).
    Msg(Message),
    /// None there: wait.
    Empty,
}

/// The index of the message `typ` and `flags` choose in `msgs`.
pub fn choose(msgs: &[Message], typ: i64, flags: u32) -> Option<usize> {
    if flags & MSG_COPY != 0 {
        return usize::try_from(typ).ok().filter(|&i| i < msgs.len());
    }
    match typ {
        0 => (!msgs.is_empty()).then_some(0),
        t if t > 0 => msgs
            .iter()
            .position(|m| (m.mtype == t) != (flags & MSG_EXCEPT != 0)),
        t => {
            let most = t.checked_neg().unwrap_or(i64::MAX);
            let mut best: Option<usize> = None;
            for (i, m) in msgs.iter().enumerate() {
                if m.mtype <= most && best.is_none_or(|b| m.mtype < msgs[b].mtype) {
                    best = Some(i);
                }
            }
            best
        }
    }
}

impl Queue {
    fn new(now: u64) -> Queue {
        Queue {
            msgs: Vec::new(),
            cbytes: 0,
            qbytes: limit::MSGMNB as u64,
            stime: 0,
            rtime: 0,
            ctime: now,
            lspid: 0,
            lrpid: 0,
        }
    }

    /// Heap its messages take.
    fn heap(&self) -> u64 {
        self.cbytes + OVERHEAD * self.msgs.len() as u64
    }

    /// Takes message `i` out for `pid`.
    fn take(&mut self, i: usize, pid: u32, now: u64) -> Message {
        let m = self.msgs.remove(i);
        self.cbytes -= m.text.len() as u64;
        self.rtime = now;
        self.lrpid = pid;
        m
    }
}

/// The message `max` bytes of text may receive of `m`: `E2BIG` if longer,
/// unless `MSG_NOERROR` cuts it.
fn fit(m: &Message, max: u64, flags: u32) -> Result<Message, i64> {
    if m.text.len() as u64 <= max {
        return Ok(m.clone());
    }
    if flags & MSG_NOERROR == 0 {
        return Err(E2BIG);
    }
    let mut text = Vec::new();
    text.try_reserve_exact(max as usize).map_err(|_| ENOMEM)?;
    text.extend_from_slice(&m.text[..max as usize]);
    Ok(Message {
        mtype: m.mtype,
        text,
    })
}

impl Ipc {
    /// `msgget`'s checks before a queue is made: `ENOSPC` past the
    /// caller's caps or `MSGMNI` queues in all.
    pub fn msg_lookup(&self, key: i32, flags: u32, c: &Cred) -> Result<Found, i64> {
        let f = Self::lookup(&self.msg, key, flags, c, |_| Ok(()))?;
        let all = self.msg.in_use();
        if f == Found::Create
            && (all >= limit::MSGMNI as usize
                || (all >= self.caps.objects
                    && Self::count(&self.msg, c.uid[EFF]) >= self.caps.objects))
        {
            return Err(ENOSPC);
        }
        Ok(f)
    }

    /// `msgget`: a new queue → its id.
    pub fn msg_create(&mut self, key: i32, flags: u32, c: &Cred, now: u64) -> Result<i32, i64> {
        self.msg
            .insert(Perm::new(key, c, flags, 0), Queue::new(now))
    }

    /// Heap the queues of user `uid` take.
    fn msg_heap(&self, uid: u32) -> u64 {
        self.msg
            .iter()
            .filter(|(_, e)| e.perm.cuid == uid)
            .map(|(_, e)| e.obj.heap())
            .sum()
    }

    /// `msgsnd` of `text` with type `mtype` to queue `id` by `pid`:
    /// `EINVAL` for a text past `MSGMAX`, a type below 1 or a bad id,
    /// `EACCES` without write; `Full` when it does not fit (the queue's
    /// `msg_qbytes` in bytes and in messages, and the creator's cap),
    /// `EAGAIN` then with `IPC_NOWAIT`.
    #[allow(clippy::too_many_arguments)]
    pub fn msg_send(
        &mut self,
        id: i64,
        mtype: i64,
        text: &[u8],
        flags: u32,
        c: &Cred,
        pid: u32,
        now: u64,
    ) -> Result<Sent, i64> {
        if text.len() > limit::MSGMAX as usize || id < 0 || mtype < 1 {
            return Err(EINVAL);
        }
        let e = self.msg.get(id)?;
        e.perm.check(c, 0o222)?;
        let q = &e.obj;
        let len = text.len() as u64;
        let fits = q.cbytes + len <= q.qbytes
            && (q.msgs.len() as u64) < q.qbytes
            && self.msg_heap(e.perm.cuid) + len + OVERHEAD <= self.caps.msg_bytes;
        if !fits {
            return if flags & IPC_NOWAIT != 0 {
                Err(EAGAIN)
            } else {
                Ok(Sent::Full)
            };
        }
        let mut t = Vec::new();
        t.try_reserve_exact(text.len()).map_err(|_| ENOMEM)?;
        t.extend_from_slice(text);
        let q = &mut self.msg.get_mut(id)?.obj;
        q.msgs.try_reserve(1).map_err(|_| ENOMEM)?;
        q.msgs.push(Message { mtype, text: t });
        q.cbytes += len;
        q.lspid = pid;
        q.stime = now;
        Ok(Sent::Done)
    }

    /// `msgrcv` from queue `id` into `max` bytes of text by `pid`:
    /// `EINVAL` for a bad id, or `MSG_COPY` without `IPC_NOWAIT` or with
    /// `MSG_EXCEPT`; `EACCES` without read; `E2BIG` for a longer message
    /// without `MSG_NOERROR` (it stays); `Empty` when none suits, `ENOMSG`
    /// then with `IPC_NOWAIT`.
    #[allow(clippy::too_many_arguments)]
    pub fn msg_receive(
        &mut self,
        id: i64,
        typ: i64,
        max: u64,
        flags: u32,
        c: &Cred,
        pid: u32,
        now: u64,
    ) -> Result<Received, i64> {
        if id < 0 || max > i64::MAX as u64 {
            return Err(EINVAL);
        }
        if flags & MSG_COPY != 0 && (flags & MSG_EXCEPT != 0 || flags & IPC_NOWAIT == 0) {
            return Err(EINVAL);
        }
        let e = self.msg.get_mut(id)?;
        e.perm.check(c, 0o444)?;
        let q = &mut e.obj;
        let Some(i) = choose(&q.msgs, typ, flags) else {
            return if flags & IPC_NOWAIT != 0 {
                Err(ENOMSG)
            } else {
                Ok(Received::Empty)
            };
        };
        let m = fit(&q.msgs[i], max, flags)?;
        if flags & MSG_COPY == 0 {
            q.take(i, pid, now);
        }
        Ok(Received::Msg(m))
    }

    /// A message came to queue `id`: the parked receivers it suits get
    /// theirs, in the order they began → each one's ticket and message
    /// (or `E2BIG`, the message left for another); `None` for one whose
    /// caller will ask again (`Live::Retry`: nothing taken for it).
    pub fn msg_handoff(
        &mut self,
        id: i32,
        now: u64,
        live: impl Fn(u32) -> Live,
    ) -> Vec<(u32, Option<Result<Message, i64>>)> {
        let mut out = Vec::new();
        let mut k = 0;
        while k < self.pending.len() {
            let p = &self.pending[k];
            let Wants::Recv {
                id: q,
                typ,
                flags,
                max,
            } = p.wants
            else {
                k += 1;
                continue;
            };
            if q != id {
                k += 1;
                continue;
            }
            let (ticket, pid) = (p.ticket, p.pid);
            let l = live(ticket);
            if l == Live::Gone {
                self.pending.remove(k);
                continue;
            }
            let Ok(e) = self.msg.get_mut(id as i64) else {
                break;
            };
            let Some(i) = choose(&e.obj.msgs, typ, flags) else {
                k += 1;
                continue;
            };
            let r = if l == Live::Retry {
                None
            } else {
                let m = fit(&e.obj.msgs[i], max, flags);
                if m.is_ok() {
                    e.obj.take(i, pid, now);
                }
                Some(m)
            };
            self.pending.remove(k);
            if out.try_reserve(1).is_ok() {
                out.push((ticket, r));
            }
        }
        out
    }

    /// The parked senders (to any queue: a receive frees room in its
    /// queue and under its creator's cap) → their tickets, taken: each
    /// asks again.
    pub fn msg_senders(&mut self) -> Vec<u32> {
        self.take_waits(|w| matches!(w, Wants::Send { .. }))
    }

    /// `msgctl(id, cmd)` for every command but the information ones:
    /// `inp` is `IPC_SET`'s structure, `out` takes the stat ones' → the
    /// call's result and the bytes of `out`. Raising `msg_qbytes` past
    /// `MSGMNB` is the superuser's (`EPERM`).
    #[allow(clippy::too_many_arguments)]
    pub fn msg_ctl(
        &mut self,
        id: i64,
        cmd: u32,
        inp: &[u8],
        out: &mut [u8],
        c: &Cred,
        now: u64,
    ) -> Result<(u64, usize), i64> {
        use sysv::*;
        let (ret, e) = match cmd {
            MSG_STAT | MSG_STAT_ANY => {
                let (i, e) = self.msg.at(id)?;
                (i as u64, e)
            }
            IPC_STAT => (0, self.msg.get(id)?),
            _ => (0, self.msg.get(id)?),
        };
        match cmd {
            IPC_STAT | MSG_STAT | MSG_STAT_ANY => {
                if cmd != MSG_STAT_ANY {
                    e.perm.check(c, 0o444)?;
                }
                let q = &e.obj;
                let s = MsqStat {
                    stime: q.stime,
                    rtime: q.rtime,
                    ctime: q.ctime,
                    cbytes: q.cbytes,
                    qnum: q.msgs.len() as u64,
                    qbytes: q.qbytes,
                    lspid: q.lspid,
                    lrpid: q.lrpid,
                };
                write_msqid_ds(out, &e.perm, &s);
                Ok((ret, size::MSQID_DS))
            }
            IPC_SET => {
                let qbytes = qbytes_of(inp);
                let e = self.msg.get_mut(id)?;
                e.perm.owner(c)?;
                if qbytes > limit::MSGMNB as u64 && !c.capable(stet_unix::cred::cap::SYS_RESOURCE) {
                    return Err(EPERM);
                }
                e.obj.qbytes = qbytes;
                e.perm.set_from(inp);
                e.obj.ctime = now;
                Ok((0, 0))
            }
            IPC_RMID => {
                e.perm.owner(c)?;
                self.msg.remove(id);
                Ok((0, 0))
            }
            _ => Err(EINVAL),
        }
    }

    /// `MSG_INFO`'s figures: queues, messages, their bytes.
    pub fn msg_usage(&self) -> (u32, u32, u32) {
        let (n, b) = self.msg.iter().fold((0, 0), |(n, b), (_, e)| {
            (n + e.obj.msgs.len(), b + e.obj.cbytes)
        });
        (self.msg.in_use() as u32, n as u32, b as u32)
    }
}
