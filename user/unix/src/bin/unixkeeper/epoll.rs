//! `epoll_*` and `signalfd`, and the signal masks of the waits that take
//! one (`epoll_pwait`, `epoll_pwait2`, `ppoll`, `pselect6`). An epoll's
//! interest list lives in unixd (`EPOLL_CTL`); a wait asks unixd for the
//! ready entries (`EPOLL_WAIT`, straight into the caller's array) and,
//! while none is and time is left, is parked in unixd until one of its
//! files may have changed (then looks again), the deadline, or a signal
//! (`EINTR`). A signalfd's mask is in unixd; its reads take the process's
//! own pending signals, which this keeper keeps.

use crate::calls::now_ns;
use crate::signals::{PENDING, UNBLOCKABLE};
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use core::sync::atomic::Ordering;
use stet_rt::key::Msg;
use stet_unix::proto::{self, o};
use stet_unix::sys::errno::*;

type R = Result<u64, i64>;

/// The bytes of a `struct epoll_event` (packed on x86_64).
const EVENT: u64 = 12;
/// The most events one look answers (unixd's string).
const LOOK: u64 = 4096 / EVENT;
/// `EPOLL_CTL_DEL`, the one operation without an event to read.
const CTL_DEL: u64 = 2;
/// The bytes of a `struct signalfd_siginfo`.
const SIGINFO: u64 = 128;

impl Keeper {
    /// `epoll_create(size)` (`size` > 0, else `EINVAL`) and
    /// `epoll_create1(flags)` (only `EPOLL_CLOEXEC`).
    pub(crate) fn epoll_create(&mut self, size: Option<u64>, flags: u64) -> R {
        if size.is_some_and(|s| s as u32 as i32 <= 0) || flags & !o::CLOEXEC != 0 {
            return Err(EINVAL);
        }
        let fid = crate::fds::ux(proto::EPOLL_CREATE, [0; 4], &[]).0?;
        self.install_fid(fid, flags & o::CLOEXEC != 0)
    }

    /// `epoll_ctl(epfd, op, fd, event)`: the checks in Linux's order —
    /// the event (`EFAULT`; not for `DEL`), the descriptors (`EBADF`),
    /// the rest in unixd.
    pub(crate) fn epoll_ctl(&mut self, epfd: u64, op: u64, fd: u64, event: u64) -> R {
        let op = op as u32 as u64;
        let mut e = [0u8; EVENT as usize];
        if op != CTL_DEL {
            self.space.read(event, &mut e).map_err(Touch::errno)?;
        }
        let ef = self.fid(epfd)?;
        let tf = self.fid(fd)?;
        let op = if op <= 3 { op } else { 0 };
        let w1 = op | (fd as u32 as u64) << 32;
        crate::fds::ux(proto::EPOLL_CTL, [ef, w1, tf, 0], &e).0
    }

    /// `epoll_wait` (`timeout_ms` < 0: none), `epoll_pwait` (with `mask`)
    /// and, with `deadline` ns since boot, `epoll_pwait2`.
    pub(crate) fn epoll_wait(
        &mut self,
        epfd: u64,
        events: u64,
        max: u64,
        deadline: u64,
        mask: Option<u64>,
    ) -> R {
        let max = max as u32 as i32;
        if max <= 0 || max as u64 > i32::MAX as u64 / EVENT {
            return Err(EINVAL);
        }
        let max = max as u64;
        self.space
            .touch(events, EVENT * max.min(LOOK), true)
            .map_err(Touch::errno)?;
        let ef = self.fid(epfd)?;
        let n = max.min(LOOK);
        self.with_sigmask(mask, |k| {
            let deadline = k.keep_deadline(deadline);
            // The first look never waits (a pending signal does not hide
            // ready events); then unixd parks the call until a file
            // changes (BUSY: look again), the deadline, or a signal.
            let mut wait = false;
            loop {
                if wait && k.interrupted() {
                    return Err(EINTR);
                }
                let pending = PENDING.load(Ordering::Relaxed) | k.tpending;
                let order = if wait {
                    k.tagged(proto::EPOLL_WAIT)
                } else {
                    proto::EPOLL_WAIT
                };
                let until = deadline.to_le_bytes();
                let a = Msg::new(UNIXD, order)
                    .words([ef, n, pending, k.interrupting()])
                    .string(if wait { &until[..] } else { &[] })
                    .call_to(k.space.win.recv(events, EVENT * n));
                if a.code == stet_rt::abi::code::Code::Busy {
                    continue;
                }
                match crate::calls::result(&a) {
                    Ok(0) if !wait && now_ns() < deadline => wait = true,
                    // A signal that a signalfd in the list reads ended the
                    // wait: look again.
                    Err(EINTR) if !k.interrupted() => {}
                    r => return r,
                }
            }
        })
    }

    /// The deadline of a wait `timeout_ms` long (< 0: none).
    pub(crate) fn deadline_ms(timeout_ms: u64) -> u64 {
        let ms = timeout_ms as u32 as i32;
        if ms < 0 {
            u64::MAX
        } else {
            now_ns().saturating_add(ms as u64 * 1_000_000)
        }
    }

    /// The deadline of a wait a `struct timespec` at `ts` long (0: none):
    /// `EINVAL` for a negative or malformed one.
    pub(crate) fn deadline_ts(&mut self, ts: u64) -> R {
        if ts == 0 {
            return Ok(u64::MAX);
        }
        let mut b = [0u8; 16];
        self.space.read(ts, &mut b).map_err(Touch::errno)?;
        let s = i64::from_le_bytes(b[..8].try_into().unwrap_or_default());
        let ns = i64::from_le_bytes(b[8..].try_into().unwrap_or_default());
        if s < 0 || !(0..1_000_000_000).contains(&ns) {
            return Err(EINVAL);
        }
        Ok(now_ns().saturating_add(
            (s as u64)
                .saturating_mul(1_000_000_000)
                .saturating_add(ns as u64),
        ))
    }

    /// A wait's signal mask argument: `sigset` (0: none) of `size` bytes
    /// (8, else `EINVAL`).
    pub(crate) fn sigmask_arg(&mut self, sigset: u64, size: u64) -> Result<Option<u64>, i64> {
        if sigset == 0 {
            return Ok(None);
        }
        if size != 8 {
            return Err(EINVAL);
        }
        let mut b = [0u8; 8];
        self.space.read(sigset, &mut b).map_err(Touch::errno)?;
        Ok(Some(u64::from_le_bytes(b)))
    }

    /// Runs wait `f` with the signal mask `mask` in place of the process's
    /// (as `sigsuspend` does): after `EINTR` the old mask comes back when
    /// the handler returns (its frame keeps it), otherwise at once.
    pub(crate) fn with_sigmask(&mut self, mask: Option<u64>, f: impl FnOnce(&mut Self) -> R) -> R {
        let Some(m) = mask else {
            return f(self);
        };
        let old = self.sigmask;
        self.suspend_mask = Some(old);
        self.sigmask = m & !UNBLOCKABLE;
        let r = f(self);
        // A signal to deliver under the wait's mask takes the old one into
        // its frame; with none (or one ignored) it comes back now.
        if r != Err(EINTR) || !self.interrupted() {
            self.sigmask = old;
            self.suspend_mask = None;
        }
        r
    }

    /// `signalfd4(fd, mask, size, flags)` (and `signalfd`, flags 0): a new
    /// signalfd when `fd` is -1, else the new mask of signalfd `fd`.
    pub(crate) fn signalfd(&mut self, fd: u64, mask: u64, size: u64, flags: u64) -> R {
        if flags & !(o::CLOEXEC | o::NONBLOCK) != 0 || size != 8 {
            return Err(EINVAL);
        }
        let mut b = [0u8; 8];
        self.space.read(mask, &mut b).map_err(Touch::errno)?;
        let mask = u64::from_le_bytes(b) & !UNBLOCKABLE;
        if fd as u32 as i32 == -1 {
            let w = [proto::signalfd::CREATE, mask, flags & o::NONBLOCK, 0];
            let fid = crate::fds::ux(proto::SIGNALFD, w, &[]).0?;
            self.install_fid(fid, flags & o::CLOEXEC != 0)
        } else {
            let fid = self.fid(fd)?;
            let w = [proto::signalfd::SET, fid, mask, 0];
            crate::fds::ux(proto::SIGNALFD, w, &[]).0?;
            Ok(fd as u32 as u64)
        }
    }

    /// A read of `len` bytes at `buf` from a signalfd of `mask`: a `struct
    /// signalfd_siginfo` for each pending signal of the mask that fits,
    /// which is no longer pending; waits for one unless `nonblock`.
    pub(crate) fn signalfd_read(&mut self, buf: u64, len: u64, mask: u64, nonblock: bool) -> R {
        if len < SIGINFO {
            return Err(EINVAL);
        }
        loop {
            let mut n = 0;
            while n < len / SIGINFO {
                let avail = (PENDING.load(Ordering::Relaxed) | self.tpending) & mask;
                if avail == 0 {
                    break;
                }
                let sig = avail.trailing_zeros() as u64 + 1;
                let bit = 1u64 << (sig - 1);
                let mut info = [0u8; SIGINFO as usize];
                info[..4].copy_from_slice(&(sig as u32).to_le_bytes());
                // ssi_code SI_USER (0); the sender is not known here.
                self.space
                    .write(buf + n * SIGINFO, &info)
                    .map_err(Touch::errno)?;
                if self.tpending & bit != 0 {
                    self.tpending &= !bit;
                } else {
                    PENDING.fetch_and(!bit, Ordering::Relaxed);
                }
                n += 1;
            }
            if n > 0 {
                return Ok(n * SIGINFO);
            }
            if nonblock {
                return Err(EAGAIN);
            }
            // Parked until a signal: of the mask (read it), or one that
            // interrupts (EINTR).
            self.wait_for_signals(mask)?;
        }
    }
}
