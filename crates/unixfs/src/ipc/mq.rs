//! POSIX message queues (man 7 mq_overview): each queue is a file of
//! unixd's `/dev/mqueue` (by inode: its name, owner, mode and descriptors
//! are the file system's), and this module keeps its attributes and
//! messages — highest priority first, in the order sent within one
//! priority —, the process to notify when a message comes to an empty
//! queue, and what each user's queues may hold (Linux's
//! `RLIMIT_MSGQUEUE` default, counted the way Linux counts it).

use super::{Ipc, Live, Wants};
use alloc::vec::Vec;
use stet_unix::sys::errno::*;
use stet_unix::sysv::errno::EMSGSIZE;

/// Priorities are below this (`MQ_PRIO_MAX`).
pub const PRIO_MAX: u64 = 32768;
/// A queue's messages and size when `mq_open` gives no attributes, and
/// the most another user may ask (Linux's `msg_max`, `msgsize_max`).
pub const DEFAULT_MAXMSG: u64 = 10;
#[allow(missing_docs)]
pub const DEFAULT_MSGSIZE: u64 = 8192;
/// The most the superuser may ask (Linux's `HARD_MSGMAX`; the message
/// size is bounded here at 64 KiB, where Linux allows 16 MiB).
pub const HARD_MAXMSG: u64 = 65536;
#[allow(missing_docs)]
pub const HARD_MSGSIZE: u64 = 65536;
/// What one user's queues may reserve (Linux's default
/// `RLIMIT_MSGQUEUE`): `EMFILE` past it.
pub const USER_BYTES: u64 = 819_200;
/// Reserved per message besides its text (Linux: a `struct msg_msg` and a
/// priority tree node, 48 bytes each).
pub const PER_MSG: u64 = 96;

/// Who hears of a message that comes to an empty queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notify {
    /// The process that asked.
    pub pid: u32,
    /// The signal (`SIGEV_SIGNAL`), or 0 (`SIGEV_NONE`: nothing sent).
    pub signo: u32,
}

/// One queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MqQueue {
    /// Its file.
    pub ino: u32,
    /// `mq_maxmsg`, `mq_msgsize`.
    pub maxmsg: u64,
    #[allow(missing_docs)]
    pub msgsize: u64,
    /// (priority, text), highest priority first.
    pub msgs: Vec<MqMessage>,
    /// The user who made it (its reservation is that user's).
    pub cuid: u32,
    /// The registered notification.
    pub notify: Option<Notify>,
}

impl MqQueue {
    /// What it reserves of its maker's [`USER_BYTES`].
    pub fn reserved(&self) -> u64 {
        reserve(self.maxmsg, self.msgsize)
    }
}

fn reserve(maxmsg: u64, msgsize: u64) -> u64 {
    maxmsg
        .saturating_mul(msgsize)
        .saturating_add(maxmsg.saturating_mul(PER_MSG))
}

/// A message: its priority and text.
pub type MqMessage = (u32, Vec<u8>);

/// What an `mq_timedsend` came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MqSent {
    /// Queued (waiting receivers take it: [`Ipc::mq_handoff`]; else
    /// [`Ipc::mq_notice`]).
    Done,
    /// No room: wait.
    Full,
}

impl Ipc {
    /// The attributes of a new queue: Linux's defaults without any; else
    /// both at least 1 and at most the defaults, or for the superuser the
    /// hard limits (`EINVAL`).
    pub fn mq_attr(attr: Option<(i64, i64)>, privileged: bool) -> Result<(u64, u64), i64> {
        let Some((maxmsg, msgsize)) = attr else {
            return Ok((DEFAULT_MAXMSG, DEFAULT_MSGSIZE));
        };
        let (mm, ms) = if privileged {
            (HARD_MAXMSG, HARD_MSGSIZE)
        } else {
            (DEFAULT_MAXMSG, DEFAULT_MSGSIZE)
        };
        if maxmsg <= 0 || msgsize <= 0 || maxmsg as u64 > mm || msgsize as u64 > ms {
            return Err(EINVAL);
        }
        Ok((maxmsg as u64, msgsize as u64))
    }

    /// May user `uid` make a queue of these attributes (`EMFILE`: its
    /// queues would reserve more than [`USER_BYTES`])?
    pub fn mq_may_make(&self, uid: u32, maxmsg: u64, msgsize: u64) -> Result<(), i64> {
        let mine: u64 = self
            .mq
            .iter()
            .filter(|q| q.cuid == uid)
            .map(MqQueue::reserved)
            .fold(0, u64::saturating_add);
        if mine.saturating_add(reserve(maxmsg, msgsize)) > USER_BYTES {
            return Err(EMFILE);
        }
        Ok(())
    }

    /// Enters the queue of file `ino`.
    pub fn mq_create(&mut self, ino: u32, maxmsg: u64, msgsize: u64, uid: u32) -> Result<(), i64> {
        self.mq.try_reserve(1).map_err(|_| ENOMEM)?;
        self.mq.push(MqQueue {
            ino,
            maxmsg,
            msgsize,
            msgs: Vec::new(),
            cuid: uid,
            notify: None,
        });
        Ok(())
    }

    /// The queue of file `ino`.
    pub fn mq_of(&self, ino: u32) -> Option<&MqQueue> {
        self.mq.iter().find(|q| q.ino == ino)
    }

    fn mq_mut(&mut self, ino: u32) -> Result<&mut MqQueue, i64> {
        self.mq.iter_mut().find(|q| q.ino == ino).ok_or(EBADF)
    }

    /// File `ino` is gone: its queue too.
    pub fn mq_gone(&mut self, ino: u32) {
        self.mq.retain(|q| q.ino != ino);
    }

    /// `mq_timedsend` of `text` with priority `prio` to the queue of
    /// `ino`: `EINVAL` for a priority past `MQ_PRIO_MAX`, `EMSGSIZE` for a
    /// text past `mq_msgsize`; `Full` when it holds `mq_maxmsg`
    /// (`EAGAIN` then with `nonblock`).
    pub fn mq_send(
        &mut self,
        ino: u32,
        prio: u64,
        text: &[u8],
        nonblock: bool,
    ) -> Result<MqSent, i64> {
        if prio >= PRIO_MAX {
            return Err(EINVAL);
        }
        let q = self.mq_mut(ino)?;
        if text.len() as u64 > q.msgsize {
            return Err(EMSGSIZE);
        }
        if q.msgs.len() as u64 >= q.maxmsg {
            return if nonblock {
                Err(EAGAIN)
            } else {
                Ok(MqSent::Full)
            };
        }
        let mut t = Vec::new();
        t.try_reserve_exact(text.len()).map_err(|_| ENOMEM)?;
        t.extend_from_slice(text);
        q.msgs.try_reserve(1).map_err(|_| ENOMEM)?;
        let at = q.msgs.partition_point(|&(p, _)| p as u64 >= prio);
        q.msgs.insert(at, (prio as u32, t));
        Ok(MqSent::Done)
    }

    /// After a message went into the queue of `ino` (and none of its
    /// waiting receivers took it): a notification, if the queue was
    /// empty and someone asked (it is used up).
    pub fn mq_notice(&mut self, ino: u32) -> Option<(u32, u32)> {
        let q = self.mq_mut(ino).ok()?;
        if q.msgs.len() != 1 {
            return None;
        }
        let n = q.notify.take()?;
        (n.signo != 0).then_some((n.pid, n.signo))
    }

    /// `mq_timedreceive` from the queue of `ino` into `max` bytes:
    /// `EMSGSIZE` for a buffer below `mq_msgsize`; the first message
    /// (priority, text), or `None` to wait (`EAGAIN` with `nonblock`).
    pub fn mq_receive(
        &mut self,
        ino: u32,
        max: u64,
        nonblock: bool,
    ) -> Result<Option<MqMessage>, i64> {
        let q = self.mq_mut(ino)?;
        if max < q.msgsize {
            return Err(EMSGSIZE);
        }
        if q.msgs.is_empty() {
            return if nonblock { Err(EAGAIN) } else { Ok(None) };
        }
        Ok(Some(q.msgs.remove(0)))
    }

    /// A message came to the queue of `ino`: the waiting receivers take
    /// what there is, in the order they began → each one's ticket and its
    /// message, or `None` for one whose caller will ask again.
    pub fn mq_handoff(
        &mut self,
        ino: u32,
        live: impl Fn(u32) -> Live,
    ) -> Vec<(u32, Option<MqMessage>)> {
        let mut out = Vec::new();
        let mut k = 0;
        while k < self.pending.len() {
            let p = &self.pending[k];
            if p.wants != (Wants::MqRecv { ino }) {
                k += 1;
                continue;
            }
            let ticket = p.ticket;
            let l = live(ticket);
            if l == Live::Gone {
                self.pending.remove(k);
                continue;
            }
            let Ok(q) = self.mq_mut(ino) else {
                break;
            };
            if q.msgs.is_empty() {
                break;
            }
            let m = (l == Live::Answer).then(|| q.msgs.remove(0));
            self.pending.remove(k);
            if out.try_reserve(1).is_ok() {
                out.push((ticket, m));
            }
        }
        out
    }

    /// The parked senders to the queue of `ino` → their tickets, taken
    /// (each asks again).
    pub fn mq_senders(&mut self, ino: u32) -> Vec<u32> {
        self.take_waits(|w| *w == Wants::MqSend { ino })
    }

    /// `mq_notify` on the queue of `ino` by `pid`: `Some(signo)` registers
    /// (0: `SIGEV_NONE`), `EBUSY` if another process has; `None` removes
    /// the caller's registration.
    pub fn mq_set_notify(&mut self, ino: u32, pid: u32, signo: Option<u32>) -> Result<(), i64> {
        let q = self.mq_mut(ino)?;
        match signo {
            None => {
                if q.notify.is_some_and(|n| n.pid == pid) {
                    q.notify = None;
                }
                Ok(())
            }
            Some(_) if q.notify.is_some() => Err(EBUSY),
            Some(signo) => {
                q.notify = Some(Notify { pid, signo });
                Ok(())
            }
        }
    }

    /// Process `pid` has ended: its notifications go.
    pub fn mq_exit(&mut self, pid: u32) {
        for q in &mut self.mq {
            if q.notify.is_some_and(|n| n.pid == pid) {
                q.notify = None;
            }
        }
    }
}
