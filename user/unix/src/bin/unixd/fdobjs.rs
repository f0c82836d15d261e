//! File descriptors that are not files: `eventfd` (a counter) and
//! `timerfd` (a timer whose expirations are read). Each is an open file
//! description of its own kind (`Kind::Event`, `Kind::Timer`) naming an
//! entry of a table here, which grows from the heap and is freed with the
//! description's last reference. Reads wait (park) as pipe reads do; the
//! clock helpers time the timers (`wait::tick`).

use crate::open::Kind;
use crate::wait::Wait;
use crate::{now_ns, word, Reply, Unixd};
use stet_rt::key::Answer;
use stet_unix::proto as p;
use stet_unix::proto::o;
use stet_unix::sys::errno::*;

/// An eventfd: its counter and mode.
#[derive(Clone, Copy, Default)]
pub(crate) struct Event {
    pub(crate) used: bool,
    pub(crate) count: u64,
    pub(crate) semaphore: bool,
    /// Bumped by each change (edge-triggered epolls).
    pub(crate) gen: u32,
}

/// A timerfd: when it next expires (ns since boot, 0: disarmed), its
/// interval, the expirations not yet read.
#[derive(Clone, Copy, Default)]
pub(crate) struct Timer {
    pub(crate) used: bool,
    /// Its clock is the realtime one (absolute times are since 1970).
    pub(crate) realtime: bool,
    pub(crate) next: u64,
    pub(crate) interval: u64,
    pub(crate) ticks: u64,
    /// Bumped by each expiry (edge-triggered epolls).
    pub(crate) gen: u32,
}

/// The largest value an eventfd counter holds.
const EVENT_MAX: u64 = u64::MAX - 1;
/// `EFD_SEMAPHORE`.
const EFD_SEMAPHORE: u64 = 1;

impl Unixd<'_> {
    /// `EVENTFD`, `TIMERFD`, `TIMERFD_SET`, `TIMERFD_GET`.
    pub(crate) fn fdobj_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let w = a.w;
        match a.code {
            p::EVENTFD => {
                let i = crate::table::take(&mut self.events, |e| !e.used, Event::default())
                    .filter(|&i| i <= u16::MAX as usize)
                    .ok_or(ENFILE)?;
                let fid = self.new_fid(Kind::Event(i as u16), o::RDWR | (w[1] & o::NONBLOCK))?;
                self.events[i] = Event {
                    used: true,
                    count: w[0] as u32 as u64,
                    semaphore: w[1] & EFD_SEMAPHORE != 0,
                    gen: 0,
                };
                word(Ok(fid))
            }
            p::TIMERFD => {
                let i = crate::table::take(&mut self.timers, |t| !t.used, Timer::default())
                    .filter(|&i| i <= u16::MAX as usize)
                    .ok_or(ENFILE)?;
                let fid = self.new_fid(Kind::Timer(i as u16), o::RDONLY | (w[0] & o::NONBLOCK))?;
                self.timers[i] = Timer {
                    used: true,
                    realtime: w[1] == 0 || w[1] == 8,
                    ..Timer::default()
                };
                word(Ok(fid))
            }
            p::TIMERFD_SET | p::TIMERFD_GET => {
                let f = self.fid(w[0])?;
                let Kind::Timer(t) = self.open[f].kind else {
                    return Err(EINVAL);
                };
                let now = now_ns();
                let epoch = self.boot_wall();
                let tm = &mut self.timers[t as usize];
                let left = if tm.next == 0 {
                    0
                } else {
                    tm.next.saturating_sub(now).max(1)
                };
                out[..8].copy_from_slice(&left.to_le_bytes());
                out[8..16].copy_from_slice(&tm.interval.to_le_bytes());
                if a.code == p::TIMERFD_SET {
                    // w1: when it first expires (0 disarms), from now or
                    // (w2 TFD_TIMER_ABSTIME) on its clock; the string: the
                    // interval.
                    let interval = s
                        .get(..8)
                        .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or_default()));
                    tm.next = match (w[1], w[2] & 1 != 0) {
                        (0, _) => 0,
                        (v, false) => now.saturating_add(v),
                        (v, true) if tm.realtime => v.saturating_sub(epoch).max(1),
                        (v, true) => v.max(1),
                    };
                    tm.interval = if tm.next == 0 { 0 } else { interval };
                    tm.ticks = 0;
                    self.kick();
                }
                Ok(Reply::Now([0, 0, 0], 16, false))
            }
            _ => Err(ENOSYS),
        }
    }

    /// A read of eventfd or timerfd `kind` through fid `f` into `out`.
    pub(crate) fn fdobj_read(
        &mut self,
        f: usize,
        kind: Kind,
        len: usize,
        out: &mut [u8],
    ) -> Result<Reply, i64> {
        if len < 8 {
            return Err(EINVAL);
        }
        let nonblock = self.open[f].flags & o::NONBLOCK != 0;
        let v = match kind {
            Kind::Event(e) => {
                let ev = &mut self.events[e as usize];
                if ev.count == 0 {
                    return if nonblock {
                        Err(EAGAIN)
                    } else {
                        self.park(Wait::Event(e))
                    };
                }
                let v = if ev.semaphore { 1 } else { ev.count };
                ev.count -= v;
                self.event_changed(e);
                v
            }
            Kind::Timer(t) => {
                self.timer_due(t as usize, now_ns());
                let tm = &mut self.timers[t as usize];
                if tm.ticks == 0 {
                    return if nonblock {
                        Err(EAGAIN)
                    } else {
                        self.park(Wait::Timer(t))
                    };
                }
                core::mem::take(&mut tm.ticks)
            }
            _ => return Err(EBADF),
        };
        out[..8].copy_from_slice(&v.to_le_bytes());
        Ok(Reply::Now([8, 0, 0], 8, false))
    }

    /// A write to eventfd `e` of the 8-byte value in `data`.
    pub(crate) fn event_write(&mut self, f: usize, e: u16, data: &[u8]) -> Result<Reply, i64> {
        let v = data
            .get(..8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
            .ok_or(EINVAL)?;
        if v == u64::MAX {
            return Err(EINVAL);
        }
        let ev = &mut self.events[e as usize];
        if EVENT_MAX - ev.count < v {
            return if self.open[f].flags & o::NONBLOCK != 0 {
                Err(EAGAIN)
            } else {
                self.park(Wait::Event(e))
            };
        }
        ev.count += v;
        self.event_changed(e);
        Ok(Reply::Now([8, 0, 0], 0, false))
    }

    /// Eventfd `e` changed: its parked readers and writers ask again.
    fn event_changed(&mut self, e: u16) {
        self.epoll_wake();
        let ev = &mut self.events[e as usize];
        ev.gen = ev.gen.wrapping_add(1);
        for i in 0..self.waiters.len() {
            if self.waiters[i].on == Wait::Event(e) {
                self.wake(i);
            }
        }
    }

    /// Counts timer `t`'s expirations up to `now`, waking its readers.
    pub(crate) fn timer_due(&mut self, t: usize, now: u64) {
        let tm = &mut self.timers[t];
        if !tm.used || tm.next == 0 || tm.next > now {
            return;
        }
        match (now - tm.next).checked_div(tm.interval) {
            None => {
                tm.ticks += 1;
                tm.next = 0;
            }
            Some(k) => {
                let n = k + 1;
                tm.ticks = tm.ticks.saturating_add(n);
                tm.next += n * tm.interval;
            }
        }
        tm.gen = tm.gen.wrapping_add(1);
        self.epoll_wake();
        for i in 0..self.waiters.len() {
            if self.waiters[i].on == Wait::Timer(t as u16) {
                self.wake(i);
            }
        }
    }

    /// The `poll` events of an eventfd or timerfd, and its generation.
    pub(crate) fn fdobj_poll(&mut self, kind: Kind) -> (u64, u32) {
        use stet_unix::sys::poll::{POLLIN, POLLOUT};
        match kind {
            Kind::Event(e) => {
                let ev = &self.events[e as usize];
                let c = ev.count;
                let r =
                    (if c > 0 { POLLIN } else { 0 }) | (if c < EVENT_MAX { POLLOUT } else { 0 });
                (r, ev.gen)
            }
            Kind::Timer(t) => {
                self.timer_due(t as usize, now_ns());
                let tm = &self.timers[t as usize];
                (if tm.ticks > 0 { POLLIN } else { 0 }, tm.gen)
            }
            _ => (0, 0),
        }
    }

    /// The description of an eventfd or timerfd lost its last reference.
    pub(crate) fn fdobj_free(&mut self, kind: Kind) {
        match kind {
            Kind::Event(e) => self.events[e as usize] = Event::default(),
            Kind::Timer(t) => self.timers[t as usize] = Timer::default(),
            _ => {}
        }
    }
}
