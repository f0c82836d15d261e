//! POSIX message queues' system calls (man 7 mq_overview): `mq_open` makes
//! a descriptor (close-on-exec, as Linux's) of a queue unixd keeps as a
//! file of `/dev/mqueue` (`proto::ipc_more`); sends and receives move the
//! process's bytes in 4,096-byte pieces and wait in unixd until their
//! absolute `CLOCK_REALTIME` deadline (`ETIMEDOUT`) or a signal (`EINTR`;
//! restarted with `SA_RESTART`, as Linux).

use crate::calls::result;
use crate::fds::{Fd, NONE};
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::abi::code::Code;
use stet_rt::key::Msg;
use stet_unix::proto::{self, ipc_more as more, o};
use stet_unix::sys::errno::*;
use stet_unix::sysv::errno::EMSGSIZE;
use stet_unix::sysv::{mq, nr};

type R = Result<u64, i64>;

/// The most bytes one message to unixd carries.
const PIECE: usize = 4096;
/// The longest text a queue holds (`stet_unixfs::ipc::mq::HARD_MSGSIZE`).
const MAX_TEXT: usize = 65536;

impl Keeper {
    /// POSIX message queue call `n` with arguments `a`.
    pub(crate) fn mq(&mut self, n: u64, a: &[u64; 6]) -> R {
        match n {
            nr::MQ_OPEN => self.mq_open(a[0], a[1] as u32 as u64, a[2] as u32 as u64, a[3]),
            nr::MQ_UNLINK => {
                let mut name = [0u8; 256];
                let n = self.mq_name(a[0], &mut name)?;
                self.mq_call(more::MQ_UNLINK, [0, 0], &name[..n], &mut [])
                    .map(|(r, _)| r)
            }
            nr::MQ_TIMEDSEND => self.mq_send(a[0], a[1], a[2], a[3], a[4]),
            nr::MQ_TIMEDRECEIVE => self.mq_receive(a[0], a[1], a[2], a[3], a[4]),
            nr::MQ_NOTIFY => self.mq_notify(a[0], a[1]),
            nr::MQ_GETSETATTR => self.mq_getsetattr(a[0], a[1], a[2]),
            _ => Err(ENOSYS),
        }
    }

    /// An `IPC_MORE` order `what` (its argument in `w0`'s upper bits):
    /// asked again while unixd answers `BUSY`; `EINTR` first when a
    /// signal is here and it may wait → its result and the answer's `w1`.
    fn mq_call(
        &mut self,
        what: u64,
        w: [u64; 2],
        s: &[u8],
        out: &mut [u8],
    ) -> Result<(u64, u64), i64> {
        self.mq_call_arg(what, 0, w, s, out, false)
    }

    fn mq_call_arg(
        &mut self,
        what: u64,
        arg: u64,
        w: [u64; 2],
        s: &[u8],
        out: &mut [u8],
        wait: bool,
    ) -> Result<(u64, u64), i64> {
        loop {
            if wait && self.interrupted() {
                return Err(EINTR);
            }
            let intr = self.interrupting();
            let a = Msg::new(UNIXD, self.tagged(proto::IPC_MORE))
                .words([what | arg << 8, w[0], w[1], intr])
                .string(s)
                .call_into(out);
            if a.code != Code::Busy {
                return result(&a).map(|r| (r, a.w[1]));
            }
        }
    }

    /// A queue's name (its leading `/` already gone, as libc passes it) →
    /// its length; `ENAMETOOLONG` past 255 bytes.
    fn mq_name(&mut self, at: u64, buf: &mut [u8; 256]) -> Result<usize, i64> {
        match self.space.read_cstr(at, buf) {
            Ok(n) => Ok(n),
            Err(Some(t)) => Err(t.errno()),
            Err(None) => Err(ENAMETOOLONG),
        }
    }

    /// An absolute `CLOCK_REALTIME` timeout → the deadline in ns since
    /// boot (`u64::MAX`: none).
    fn mq_deadline(&mut self, ts: u64) -> R {
        if ts == 0 {
            return Ok(u64::MAX);
        }
        let t = self.timespec(ts)?;
        // The wall clock at boot is the battery clock's when there is one,
        // not `EPOCH` (a deadline from it was years away).
        Ok(t.saturating_sub(crate::calls::boot_wall_ns()))
    }

    fn mq_open(&mut self, name: u64, flags: u64, perm: u64, attr: u64) -> R {
        let mut buf = [0u8; 256];
        let n = self.mq_name(name, &mut buf)?;
        let mut s = [0u8; 256 + 1 + 16];
        s[..n].copy_from_slice(&buf[..n]);
        let mut len = n;
        let mut with_attr = 0;
        if flags & o::CREAT != 0 && attr != 0 {
            let mut b = [0u8; mq::ATTR_SIZE];
            self.space.read(attr, &mut b).map_err(Touch::errno)?;
            s[n] = 0;
            s[n + 1..n + 17].copy_from_slice(&b[8..24]);
            len = n + 17;
            with_attr = 1;
        }
        let fd = (0..self.fd_limit())
            .find(|&i| self.fds[i].fid == NONE)
            .ok_or(EMFILE)?;
        let keep = o::ACCMODE | o::CREAT | o::EXCL | o::NONBLOCK;
        let perm = perm & 0o777 & !self.umask;
        let (fid, _) = self.mq_call_arg(
            more::MQ_OPEN,
            flags & keep,
            [perm, with_attr],
            &s[..len],
            &mut [],
            false,
        )?;
        self.fds[fd] = Fd {
            fid: fid as u32,
            cloexec: true,
            regular: false,
        };
        Ok(fd as u64)
    }

    fn mq_send(&mut self, fd: u64, msg: u64, len: u64, prio: u64, ts: u64) -> R {
        let deadline = self.mq_deadline(ts)?;
        if prio >= 32768 {
            return Err(EINVAL);
        }
        let fid = self.fid(fd)?;
        if len > MAX_TEXT as u64 {
            return Err(EMSGSIZE);
        }
        // A piece at a time (all but the last staged), read again each
        // time it is asked.
        let len_ = len as usize;
        let last = len_.saturating_sub(1) / PIECE * PIECE;
        let mut piece = [0u8; PIECE];
        loop {
            if self.interrupted() {
                return Err(EINTR);
            }
            for at in (0..last).step_by(PIECE) {
                let src = msg.checked_add(at as u64).ok_or(EFAULT)?;
                self.space.read(src, &mut piece).map_err(Touch::errno)?;
                let a = Msg::new(UNIXD, self.tagged(proto::IPC_MORE))
                    .words([more::STAGE, at as u64, 0, 0])
                    .string(&piece)
                    .call();
                result(&a)?;
            }
            let tail = &mut piece[..len_ - last];
            let src = msg.checked_add(last as u64).ok_or(EFAULT)?;
            self.space.read(src, tail).map_err(Touch::errno)?;
            let intr = self.interrupting();
            let a = Msg::new(UNIXD, self.tagged(proto::IPC_MORE))
                .words([more::MQ_SEND | len << 8, fid | prio << 32, deadline, intr])
                .string(tail)
                .call();
            if a.code != Code::Busy {
                return result(&a);
            }
        }
    }

    fn mq_receive(&mut self, fd: u64, msg: u64, len: u64, prio: u64, ts: u64) -> R {
        let deadline = self.mq_deadline(ts)?;
        let fid = self.fid(fd)?;
        let mut buf = [0u8; PIECE];
        let max = len.min(u32::MAX as u64);
        let (n, p) = self.mq_call_arg(more::MQ_RECV, max, [fid, deadline], &[], &mut buf, true)?;
        let n = n as usize;
        let first = n.min(PIECE);
        self.space.write(msg, &buf[..first]).map_err(Touch::errno)?;
        let mut at = first;
        while at < n {
            let a = Msg::new(UNIXD, self.tagged(proto::IPC_MORE))
                .words([more::REST, at as u64, 0, 0])
                .call_into(&mut buf);
            let got = (result(&a)? as usize).min(a.len).min(n - at);
            if got == 0 {
                return Err(EIO);
            }
            self.space
                .write(msg.saturating_add(at as u64), &buf[..got])
                .map_err(Touch::errno)?;
            at += got;
        }
        if prio != 0 {
            self.space
                .write(prio, &(p as u32).to_le_bytes())
                .map_err(Touch::errno)?;
        }
        Ok(n as u64)
    }

    fn mq_notify(&mut self, fd: u64, sev: u64) -> R {
        let how = if sev == 0 {
            0
        } else {
            let mut b = [0u8; mq::SIGEVENT_SIZE];
            self.space.read(sev, &mut b).map_err(Touch::errno)?;
            let at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            let (signo, notify) = (at(mq::SIGEV_SIGNO), at(mq::SIGEV_NOTIFY));
            match notify {
                mq::SIGEV_NONE => 1,
                // (Signal 0 registers and sends nothing, as Linux.)
                mq::SIGEV_SIGNAL if signo <= 64 => 2 + signo as u64,
                // (A thread told through a netlink socket: no sockets yet.)
                mq::SIGEV_THREAD => return Err(ENOSYS),
                _ => return Err(EINVAL),
            }
        };
        let fid = self.fid(fd)?;
        self.mq_call(more::MQ_NOTIFY, [fid, how], &[], &mut [])
            .map(|(r, _)| r)
    }

    fn mq_getsetattr(&mut self, fd: u64, new: u64, old: u64) -> R {
        let mut set = 0;
        if new != 0 {
            let mut b = [0u8; mq::ATTR_SIZE];
            self.space.read(new, &mut b).map_err(Touch::errno)?;
            let flags = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
            if flags & !o::NONBLOCK != 0 {
                return Err(EINVAL);
            }
            set = 1 + flags;
        }
        let fid = self.fid(fd)?;
        let mut b = [0u8; mq::ATTR_SIZE];
        self.mq_call(more::MQ_ATTR, [fid, set], &[], &mut b[..32])?;
        if old != 0 {
            b[32..].fill(0);
            self.space.write(old, &b).map_err(Touch::errno)?;
        }
        Ok(0)
    }
}
