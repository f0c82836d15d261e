//! Waiting on descriptors: `poll`, `ppoll`, `select` and `pselect6`. Each
//! descriptor's readiness comes from unixd (`POLL`); while none is ready
//! and time is left, the call is parked in unixd until some file may have
//! changed since the look (`POLL_WAIT`: then the keeper looks again), the
//! deadline, or a signal (`EINTR`). `ppoll` and
//! `pselect6` wait with their signal mask (`Keeper::with_sigmask`).

use crate::calls::now_ns;
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::key::Msg;
use stet_unix::proto;
use stet_unix::sys::errno::*;
use stet_unix::sys::poll::{FD_SETSIZE, POLLERR, POLLHUP, POLLIN, POLLNVAL, POLLOUT};

type R = Result<u64, i64>;

impl Keeper {
    /// `poll`: every descriptor's readiness from unixd; while none is
    /// ready and time is left, parked until a file may have changed.
    pub(crate) fn poll(&mut self, fds: u64, n: u64, timeout_ms: i64) -> R {
        if n > 1024 {
            return Err(EINVAL);
        }
        let deadline = if timeout_ms < 0 {
            u64::MAX
        } else {
            now_ns().saturating_add(timeout_ms as u64 * 1_000_000)
        };
        self.space.touch(fds, 8 * n, true).map_err(Touch::errno)?;
        loop {
            let mut ready = 0;
            let (mut seen, mut signalfd) = (None, false);
            for i in 0..n {
                let mut e = [0u8; 8];
                self.space.win.read(fds + 8 * i, &mut e);
                let fd = i32::from_le_bytes([e[0], e[1], e[2], e[3]]);
                let want = u16::from_le_bytes([e[4], e[5]]) as u64;
                let got = if fd < 0 {
                    0
                } else {
                    match self.fid(fd as u64) {
                        Ok(f) => {
                            let (r, changes, s) = self.poll_one(f);
                            seen.get_or_insert(changes);
                            signalfd |= s;
                            r & (want | POLLERR | POLLHUP)
                        }
                        Err(_) => POLLNVAL,
                    }
                };
                self.space
                    .win
                    .write(fds + 8 * i + 6, &(got as u16).to_le_bytes());
                ready += (got != 0) as u64;
            }
            if ready > 0 || now_ns() >= deadline {
                return Ok(ready);
            }
            self.wait_change(deadline, seen, signalfd)?;
        }
    }

    /// One descriptor's readiness (fid `f`) → the `poll` events, unixd's
    /// count of changes before it, and whether it is a signalfd.
    fn poll_one(&mut self, f: u64) -> (u64, u64, bool) {
        let pending = self.pending_signals();
        let a = Msg::new(UNIXD, proto::POLL)
            .words([f, pending, 0, 0])
            .call();
        let r = crate::calls::result(&a).unwrap_or(0);
        (r, a.w[1], a.w[2] == 1)
    }

    /// Parked in unixd until some file may have changed since the look that
    /// saw `seen` changes (`POLL_WAIT`; `None`: no file, only time), the
    /// deadline, or a signal (`EINTR`) → `Ok` to look again. With a
    /// signalfd among the files, any signal ends the park (and, if it does
    /// not interrupt, the keeper looks again).
    fn wait_change(&mut self, deadline: u64, seen: Option<u64>, signalfd: bool) -> R {
        let Some(seen) = seen else {
            return self.wait_until(deadline);
        };
        // A look at least every second all the same: a file whose change
        // no order reports (a bug) then costs latency, never a hang.
        let deadline = self.keep_deadline(deadline.min(now_ns().saturating_add(1_000_000_000)));
        if self.interrupted() {
            return Err(EINTR);
        }
        let intr = if signalfd {
            u64::MAX
        } else {
            self.interrupting()
        };
        let a = Msg::new(UNIXD, self.tagged(proto::POLL_WAIT))
            .words([deadline, seen, 0, intr])
            .call();
        if a.code == stet_rt::abi::code::Code::Busy {
            return Ok(0);
        }
        match crate::calls::result(&a) {
            Err(EINTR) if !self.interrupted() => Ok(0),
            r => r.map(|_| 0),
        }
    }

    /// The process's pending signals (a signalfd is readable on them).
    pub(crate) fn pending_signals(&self) -> u64 {
        crate::signals::PENDING.load(core::sync::atomic::Ordering::Relaxed) | self.tpending
    }

    /// `ppoll` with its timespec and, for the wait, its signal mask.
    pub(crate) fn ppoll(&mut self, fds: u64, n: u64, tsp: u64, set: u64, size: u64) -> R {
        let ms = if tsp == 0 {
            -1
        } else {
            let mut b = [0u8; 16];
            self.space.read(tsp, &mut b).map_err(Touch::errno)?;
            let s = i64::from_le_bytes(b[..8].try_into().unwrap_or_default());
            let ns = i64::from_le_bytes(b[8..].try_into().unwrap_or_default());
            if s < 0 || !(0..1_000_000_000).contains(&ns) {
                return Err(EINVAL);
            }
            ((s as u64).saturating_mul(1000) + ns as u64 / 1_000_000).min(i64::MAX as u64) as i64
        };
        let mask = self.sigmask_arg(set, size)?;
        self.with_sigmask(mask, |k| k.poll(fds, n, ms))
    }

    /// `pselect6`: `sig` points at the signal mask's address and size (0:
    /// none).
    pub(crate) fn pselect6(&mut self, nfds: u64, sets: [u64; 3], t: u64, sig: u64) -> R {
        let mask = if sig == 0 {
            None
        } else {
            let mut b = [0u8; 16];
            self.space.read(sig, &mut b).map_err(Touch::errno)?;
            let set = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
            let size = u64::from_le_bytes(b[8..].try_into().unwrap_or_default());
            self.sigmask_arg(set, size)?
        };
        self.with_sigmask(mask, |k| k.select(nfds, sets, t, true))
    }

    /// `select` / `pselect6`: `sets` are the read, write and except
    /// `fd_set`s (0: none), `t` a `timeval` (`select`) or `timespec`
    /// (`pselect6`, which applies its signal mask).
    pub(crate) fn select(&mut self, nfds: u64, sets: [u64; 3], t: u64, spec: bool) -> R {
        if nfds as i64 > FD_SETSIZE as i64 || (nfds as i64) < 0 {
            return Err(EINVAL);
        }
        let bytes = nfds.div_ceil(64) * 8;
        let mut want = [[0u64; 16]; 3];
        for (w, &at) in want.iter_mut().zip(&sets) {
            if at != 0 && bytes > 0 {
                let mut b = [0u8; 128];
                self.space
                    .read(at, &mut b[..bytes as usize])
                    .map_err(Touch::errno)?;
                for (x, c) in w.iter_mut().zip(b.chunks_exact(8)) {
                    *x = u64::from_le_bytes(c.try_into().unwrap_or_default());
                }
            }
        }
        let deadline = if t == 0 {
            u64::MAX
        } else {
            let mut b = [0u8; 16];
            self.space.read(t, &mut b).map_err(Touch::errno)?;
            let s = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
            let frac = u64::from_le_bytes(b[8..].try_into().unwrap_or_default());
            let ns = if spec {
                frac
            } else {
                frac.saturating_mul(1000)
            };
            if s as i64 <= -1 || ns >= 1_000_000_000 {
                return Err(EINVAL);
            }
            now_ns().saturating_add(s.saturating_mul(1_000_000_000).saturating_add(ns))
        };
        loop {
            let mut got = [[0u64; 16]; 3];
            let mut n = 0;
            let (mut seen, mut signalfd) = (None, false);
            for fd in 0..nfds {
                let (word, bit) = ((fd / 64) as usize, 1u64 << (fd % 64));
                if (want[0][word] | want[1][word] | want[2][word]) & bit == 0 {
                    continue;
                }
                let f = self.fid(fd)?;
                let (ev, changes, s) = self.poll_one(f);
                seen.get_or_insert(changes);
                signalfd |= s;
                let ready = [
                    ev & (POLLIN | POLLHUP | POLLERR) != 0,
                    ev & (POLLOUT | POLLERR) != 0,
                    false,
                ];
                for s in 0..3 {
                    if want[s][word] & bit != 0 && ready[s] {
                        got[s][word] |= bit;
                        n += 1;
                    }
                }
            }
            if n > 0 || now_ns() >= deadline {
                for (g, &at) in got.iter().zip(&sets) {
                    if at != 0 && bytes > 0 {
                        let mut b = [0u8; 128];
                        for (c, x) in b.chunks_exact_mut(8).zip(g) {
                            c.copy_from_slice(&x.to_le_bytes());
                        }
                        self.space
                            .write(at, &b[..bytes as usize])
                            .map_err(Touch::errno)?;
                    }
                }
                return Ok(n);
            }
            self.wait_change(deadline, seen, signalfd)?;
        }
    }
}
