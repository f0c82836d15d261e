//! POSIX per-process timers (`timer_create` and friends): each a time and
//! an interval that sends its process a signal when it expires, counting
//! overruns while that signal is still pending. They live here beside the
//! alarms, timed by the clock helpers (`wait::tick`); a process's timers
//! go at its `execve` and its end.

use crate::{now_ns, word, Reply, Unixd};
use stet_rt::key::Answer;
use stet_unix::proto::ptimer as op;
use stet_unix::sys::errno::*;

/// One timer.
#[derive(Clone, Copy, Default)]
pub(crate) struct PTimer {
    /// Its process (0: a free entry).
    pub(crate) pid: u32,
    /// Its id in that process.
    pub(crate) id: u32,
    /// The signal it sends (0: none, `SIGEV_NONE`).
    pub(crate) sig: u8,
    /// Its clock is the realtime one (absolute times are since 1970).
    pub(crate) realtime: bool,
    /// When it next expires (ns since boot; 0: disarmed), and its interval.
    pub(crate) next: u64,
    pub(crate) interval: u64,
    /// Expirations no signal stood for, since `timer_getoverrun` last
    /// read them.
    pub(crate) overrun: u64,
    /// Set to an absolute time of the wall clock: that time (ns since
    /// 1970), so a change of the clock (`clock_settime`) moves `next`.
    pub(crate) wall: u64,
    /// Whole intervals already past when it was set (an absolute time
    /// before the boot): overruns of its first expiry.
    pub(crate) behind: u64,
}

/// `DELAYTIMER_MAX`: an overrun count saturates at `INT_MAX`.
const DELAYTIMER_MAX: u64 = i32::MAX as u64;

/// Most timers one process may have (Linux bounds them by
/// `RLIMIT_SIGPENDING`, 7,000-odd by default).
const PER_PROCESS: usize = 256;

impl Unixd<'_> {
    /// `PTIMER`.
    pub(crate) fn ptimer_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let pid = a.label;
        self.proc_of(pid)?;
        let w = a.w;
        if w[0] == op::CREATE {
            if self.ptimers.iter().filter(|t| t.pid == pid).count() >= PER_PROCESS {
                return Err(EAGAIN);
            }
            let id = (0..)
                .find(|&i| !self.ptimers.iter().any(|t| t.pid == pid && t.id == i))
                .unwrap_or(0);
            let i = crate::table::take(&mut self.ptimers, |t| t.pid == 0, PTimer::default())
                .ok_or(EAGAIN)?;
            self.ptimers[i] = PTimer {
                pid,
                id,
                sig: (w[1] & 0xff) as u8,
                // REALTIME, REALTIME_ALARM, TAI: absolute times are the
                // wall clock's.
                realtime: matches!((w[1] >> 32) as u32, 0 | 8 | 11),
                ..PTimer::default()
            };
            return word(Ok(id as u64));
        }
        if w[0] == op::DELETE_ALL {
            self.ptimers_gone(pid);
            return word(Ok(0));
        }
        let i = self
            .ptimers
            .iter()
            .position(|t| t.pid == pid && t.id as u64 == w[1] && w[1] <= u32::MAX as u64)
            .ok_or(EINVAL)?;
        let now = now_ns();
        let boot_wall = self.boot_wall();
        let t = &mut self.ptimers[i];
        match w[0] {
            op::SET | op::GET => {
                let left = if t.next == 0 {
                    0
                } else {
                    t.next.saturating_sub(now).max(1)
                };
                out[..8].copy_from_slice(&left.to_le_bytes());
                out[8..16].copy_from_slice(&t.interval.to_le_bytes());
                if w[0] == op::SET {
                    // w2: the first expiry in ns (0 disarms), from now or
                    // (w3... in the string's second word) absolute.
                    let get = |k: usize| {
                        s.get(k * 8..k * 8 + 8)
                            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
                    };
                    let (interval, abs) = (get(0), get(1) != 0);
                    t.wall = 0;
                    t.behind = 0;
                    t.next = match (w[2], abs) {
                        (0, _) => 0,
                        (v, false) => now.saturating_add(v),
                        (v, true) if t.realtime => {
                            t.wall = v;
                            // Before the boot: the intervals already gone
                            // are overruns (since-boot times start at 1).
                            if v < boot_wall.saturating_add(1) && interval != 0 {
                                let k = (boot_wall + 1 - v).div_ceil(interval);
                                t.behind = k;
                                t.wall = v.saturating_add(k.saturating_mul(interval));
                            }
                            t.wall.saturating_sub(boot_wall).max(1)
                        }
                        (v, true) => v.max(1),
                    };
                    t.interval = if t.next == 0 { 0 } else { interval };
                    t.overrun = 0;
                    self.kick();
                }
                Ok(Reply::Now([0, 0, 0], 16, false))
            }
            op::OVERRUN => word(Ok(core::mem::take(&mut t.overrun).min(DELAYTIMER_MAX))),
            op::DELETE => {
                *t = PTimer::default();
                word(Ok(0))
            }
            _ => Err(EINVAL),
        }
    }

    /// Every timer of `pid` goes (`execve`, its end).
    pub(crate) fn ptimers_gone(&mut self, pid: u32) {
        for t in self.ptimers.iter_mut().filter(|t| t.pid == pid) {
            *t = PTimer::default();
        }
    }

    /// Timers set to an absolute time of the wall clock follow a change
    /// of the clock (Linux: `clock_settime` makes them expire then).
    fn ptimers_follow_wall(&mut self) {
        if !self.ptimers.iter().any(|t| t.wall != 0 && t.next != 0) {
            return;
        }
        let boot_wall = self.boot_wall();
        for t in self.ptimers.iter_mut() {
            if t.pid != 0 && t.wall != 0 && t.next != 0 {
                t.next = t.wall.saturating_sub(boot_wall).max(1);
            }
        }
    }

    /// Timers due at `now` send their signals.
    pub(crate) fn ptimers_due(&mut self, now: u64) {
        self.ptimers_follow_wall();
        for k in 0..self.ptimers.len() {
            let t = self.ptimers[k];
            if t.pid == 0 || t.next == 0 || t.next > now {
                continue;
            }
            let n = match (now - t.next).checked_div(t.interval) {
                Some(x) => x + 1,
                None => 1,
            };
            self.ptimers[k].next = if t.interval == 0 {
                0
            } else {
                t.next.saturating_add(n.saturating_mul(t.interval))
            };
            self.ptimers[k].wall = if t.interval == 0 || t.wall == 0 {
                0
            } else {
                t.wall.saturating_add(n.saturating_mul(t.interval))
            };
            self.ptimers[k].behind = 0;
            if t.sig == 0 {
                continue;
            }
            let Some(i) = self.procs.iter().position(|p| p.pid == t.pid) else {
                continue;
            };
            let bit = 1u64 << (t.sig - 1);
            // The signal covers one expiration (none if the last one's is
            // still pending here); the rest are overruns, added to those
            // the process has not read yet (`timer_getoverrun` reads and
            // clears: the keeper takes a signal before its handler runs,
            // so unixd cannot tell one delivery from the next).
            let covered = (self.procs[i].pending & bit == 0) as u64;
            let missed = t
                .overrun
                .saturating_add(n - covered)
                .saturating_add(t.behind);
            self.ptimers[k].overrun = missed.min(DELAYTIMER_MAX);
            self.signal(i, t.sig as u64);
        }
    }

    /// The earliest armed timer (ns since boot), `u64::MAX` if none.
    pub(crate) fn ptimers_next(&self) -> u64 {
        self.ptimers
            .iter()
            .filter(|t| t.pid != 0 && t.next != 0)
            .map(|t| t.next)
            .min()
            .unwrap_or(u64::MAX)
    }
}
