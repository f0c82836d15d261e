//! POSIX message queues (man 7 mq_overview; `proto::ipc_more` 2–7): a
//! queue is a regular file of `/dev/mqueue` (made at the first
//! `mq_open`, mode 1777 like Linux's mqueue file system), so its name,
//! owner, mode and permission checks, its descriptors (`dup`, `fork`,
//! `close`, close-on-exec) and `mq_unlink` are the file system's; the
//! queue itself (`stet_unixfs::ipc::mq`) lives while its file does. Its
//! waits park like System V's (`sysv`): a signal ends one with `EINTR`,
//! the deadline with `ETIMEDOUT`.

use crate::open::Kind;
use crate::sysv::{live_in, waiter_of, PIECE};
use crate::{word, Reply, Unixd};
use stet_unix::cred::{self, EFF};
use stet_unix::fs::{mode, ROOT};
use stet_unix::proto::{ipc_more as more, o};
use stet_unix::sys::errno::*;
use stet_unixfs::ipc::mq::MqSent;
use stet_unixfs::ipc::{Ipc, Wants};

/// A queue's name (without its `/`), as Linux checks it: none is
/// `ENOENT`, `.`, `..` or one with a `/` `EACCES`, past 255 bytes
/// `ENAMETOOLONG`.
fn check_name(name: &[u8]) -> Result<(), i64> {
    if name.is_empty() {
        return Err(ENOENT);
    }
    if name.len() > 255 {
        return Err(ENAMETOOLONG);
    }
    if name == b"." || name == b".." || name.iter().any(|&c| c == b'/' || c == 0) {
        return Err(EACCES);
    }
    Ok(())
}

impl Unixd<'_> {
    /// `/dev/mqueue`, made (root's, 1777) the first time.
    fn mq_dir(&mut self, make: bool) -> Result<u32, i64> {
        let dev = self.fs.lookup(ROOT, b"dev").ok_or(ENOENT)?;
        if let Some(d) = self.fs.lookup(dev, b"mqueue") {
            return Ok(d);
        }
        if !make {
            return Err(ENOENT);
        }
        let who = self.fs.who;
        self.fs.who = cred::Cred::ROOT;
        let now = self.time();
        let d = self.fs.create(dev, b"mqueue", mode::DIR | 0o1777, now);
        self.fs.who = who;
        d
    }

    /// The queue fid `fid` holds, open for `want` (`o::RDONLY` to read,
    /// `o::WRONLY` to write): `EBADF` otherwise.
    fn mq_fid(&self, fid: u64, want: Option<u64>) -> Result<(u32, u64), i64> {
        let f = self.fid(fid)?;
        let ino = self.inode_of(f).ok_or(EBADF)?;
        self.ipc.mq_of(ino).ok_or(EBADF)?;
        let flags = self.open[f].flags;
        let acc = flags & o::ACCMODE;
        let ok = match want {
            Some(o::RDONLY) => acc == o::RDONLY || acc == o::RDWR,
            Some(_) => acc == o::WRONLY || acc == o::RDWR,
            None => true,
        };
        if !ok {
            return Err(EBADF);
        }
        Ok((ino, flags))
    }

    /// `mq_open`.
    fn mq_open(
        &mut self,
        flags: u64,
        perm: u64,
        attr: Option<(i64, i64)>,
        name: &[u8],
    ) -> Result<u64, i64> {
        check_name(name)?;
        let dir = self.mq_dir(flags & o::CREAT != 0)?;
        self.act_as_caller();
        let c = self.caller_cred();
        let acc = flags & o::ACCMODE;
        let ino = match self.fs.lookup(dir, name) {
            Some(ino) => {
                if flags & (o::CREAT | o::EXCL) == o::CREAT | o::EXCL {
                    return Err(EEXIST);
                }
                // (Linux: only an existing queue; a new one opens so, for
                // neither reading nor writing.)
                if acc == o::ACCMODE {
                    return Err(EINVAL);
                }
                let i = *self.fs.inode(ino).ok_or(ENOENT)?;
                if i.mode & mode::FMT != mode::REG {
                    return Err(EACCES);
                }
                let want = match acc {
                    o::RDONLY => cred::want::R,
                    o::WRONLY => cred::want::W,
                    _ => cred::want::R | cred::want::W,
                };
                self.fs.who.check(i.owner(), want)?;
                // A file put there some other way is a queue with the
                // defaults now.
                if self.ipc.mq_of(ino).is_none() {
                    let (m, s) = Ipc::mq_attr(None, false)?;
                    self.ipc.mq_create(ino, m, s, i.uid)?;
                }
                ino
            }
            None if flags & o::CREAT == 0 => return Err(ENOENT),
            None => {
                let (maxmsg, msgsize) = Ipc::mq_attr(attr, c.capable(cred::cap::SYS_RESOURCE))?;
                self.ipc.mq_may_make(c.uid[EFF], maxmsg, msgsize)?;
                let now = self.time();
                let ino = self
                    .fs
                    .create(dir, name, mode::REG | (perm as u32 & 0o777), now)?;
                if let Err(e) = self.ipc.mq_create(ino, maxmsg, msgsize, c.uid[EFF]) {
                    if let Ok((i, true)) = self.fs.unlink(dir, name, now) {
                        self.maybe_free(i);
                    }
                    return Err(e);
                }
                ino
            }
        };
        self.new_fid(Kind::Inode(ino), acc | (flags & o::NONBLOCK))
    }

    /// A message went into the queue of `ino`: the receivers waiting,
    /// else the notification.
    fn mq_arrived(&mut self, ino: u32) {
        let given = self.ipc.mq_handoff(ino, |t| live_in(&self.waiters, t));
        let mut took = false;
        for (t, m) in given {
            let Some(i) = waiter_of(&self.waiters, t) else {
                continue;
            };
            match m {
                Some((prio, text)) => {
                    took = true;
                    self.answer_text(i, prio as u64, text);
                }
                None => self.wake(i),
            }
        }
        if took {
            self.mq_room(ino);
        }
        if let Some((pid, sig)) = self.ipc.mq_notice(ino) {
            if let Some(i) = self.procs.iter().position(|p| p.pid == pid && pid != 0) {
                self.signal(i, sig as u64);
            }
        }
    }

    /// A message left the queue of `ino`: its parked senders ask again.
    fn mq_room(&mut self, ino: u32) {
        for t in self.ipc.mq_senders(ino) {
            if let Some(i) = waiter_of(&self.waiters, t) {
                self.wake(i);
            }
        }
    }

    /// The POSIX message queue orders (`proto::ipc_more` 2–7).
    pub(crate) fn mq_order(
        &mut self,
        w: [u64; 4],
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let (pid, arg) = (self.caller, w[0] >> 8);
        match w[0] & 0xff {
            more::MQ_OPEN => {
                let (name, attr) = match s.iter().position(|&b| b == 0) {
                    Some(z) if w[2] == 1 => {
                        let a = &s[z + 1..];
                        let at = |i: usize| {
                            a.get(i..i + 8)
                                .map_or(0, |b| i64::from_le_bytes(b.try_into().unwrap_or_default()))
                        };
                        (&s[..z], Some((at(0), at(8))))
                    }
                    Some(z) => (&s[..z], None),
                    None => (s, None),
                };
                word(self.mq_open(arg, w[1], attr, name))
            }
            more::MQ_UNLINK => {
                check_name(s)?;
                let dir = self.mq_dir(false)?;
                self.act_as_caller();
                // Linux answers `EACCES` to all but the queue's owner and
                // root (not the sticky directory's `EPERM`).
                let ino = self.fs.lookup(dir, s).ok_or(ENOENT)?;
                let owner = self.fs.inode(ino).map_or(0, |i| i.uid);
                let c = self.caller_cred();
                if !c.capable(cred::cap::FOWNER) && c.uid[cred::FS] != owner {
                    return Err(EACCES);
                }
                let now = self.time();
                let (ino, gone) = self.fs.unlink(dir, s, now)?;
                if gone {
                    self.maybe_free(ino);
                }
                word(Ok(0))
            }
            more::MQ_SEND => {
                let (fid, prio) = (w[1] & 0xffff_ffff, w[1] >> 32);
                let whole = arg == s.len() as u64;
                let staged = self
                    .ipc
                    .staged(pid, self.notify, if whole { &[] } else { s })?;
                let text = if whole { s } else { &staged[..] };
                if text.len() as u64 != arg {
                    return Err(EINVAL);
                }
                if prio >= stet_unixfs::ipc::mq::PRIO_MAX {
                    return Err(EINVAL);
                }
                let (ino, flags) = self.mq_fid(fid, Some(o::WRONLY))?;
                match self
                    .ipc
                    .mq_send(ino, prio, text, flags & o::NONBLOCK != 0)?
                {
                    MqSent::Done => {
                        self.mq_arrived(ino);
                        word(Ok(0))
                    }
                    MqSent::Full => self.park_ipc(Wants::MqSend { ino }, w[2]),
                }
            }
            more::MQ_RECV => {
                let (ino, flags) = self.mq_fid(w[1], Some(o::RDONLY))?;
                match self.ipc.mq_receive(ino, arg, flags & o::NONBLOCK != 0)? {
                    Some((prio, text)) => {
                        self.mq_room(ino);
                        let n = text.len();
                        out[..n.min(PIECE)].copy_from_slice(&text[..n.min(PIECE)]);
                        if n > PIECE {
                            self.ipc.keep_rest(pid, self.notify, text)?;
                        }
                        Ok(Reply::Now([n as u64, prio as u64, 0], n.min(PIECE), false))
                    }
                    None => self.park_ipc(Wants::MqRecv { ino }, w[2]),
                }
            }
            more::MQ_NOTIFY => {
                let (ino, _) = self.mq_fid(w[1], None)?;
                let how = match w[2] {
                    0 => None,
                    1 => Some(0),
                    n => Some((n - 2).min(64) as u32),
                };
                word(self.ipc.mq_set_notify(ino, pid, how).map(|_| 0))
            }
            more::MQ_ATTR => {
                let (ino, flags) = self.mq_fid(w[1], None)?;
                let q = self.ipc.mq_of(ino).ok_or(EBADF)?;
                let old = [
                    flags & o::NONBLOCK,
                    q.maxmsg,
                    q.msgsize,
                    q.msgs.len() as u64,
                ];
                for (i, v) in old.into_iter().enumerate() {
                    out[8 * i..8 * i + 8].copy_from_slice(&v.to_le_bytes());
                }
                if w[2] != 0 {
                    let f = self.fid(w[1])?;
                    let nb = (w[2] - 1) & o::NONBLOCK;
                    self.open[f].flags = (self.open[f].flags & !o::NONBLOCK) | nb;
                }
                Ok(Reply::Now([0, 0, 0], 32, false))
            }
            _ => Err(EINVAL),
        }
    }
}
