//! Parked calls and time. A call that must wait (a pipe, a child, a
//! sleep, a futex, the terminal) is parked: its resume key stays where it
//! arrived if one of the `RESUME_SLOTS` is free for the next message (no
//! invocation at all), else goes in unixd's key directory (`keys`). The table of parked calls grows
//! from the heap (`table`): a process has one call at a time, so there are
//! never more than there are processes (and the clock helpers). The two
//! clock helpers (`unixtick`) call `TICK` to time sleeps, futex timeouts
//! and alarms (`kick` says why two).

use crate::signals::SIGALRM;
use crate::slots::{ARCHIVE, RESUME, STORE, T};
use crate::{now_ns, word, Reply, Unixd};
use stet_rt::abi::code::Code;
use stet_rt::key::{Answer, Msg, Slot};
use stet_unix::proto as p;
use stet_unix::sys::errno::*;
use stet_unix::sys::sig::{SIGPROF, SIGVTALRM};
use stet_unix_personality::keydir::KeyDir;

/// What a parked call waits for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Nothing: a free entry.
    Free,
    /// A change of this pipe.
    Pipe(u16),
    /// The end of a child of this process.
    Child(u32),
    /// A time (ns since boot).
    Sleep(u64),
    /// Only a signal.
    Pause,
    /// The clock helper, until there is something to time.
    Ticker,
    /// Terminal input.
    Tty,
    /// Something new in the kernel log (`SYSLOG_ACTION_READ`).
    Log,
    /// A futex: (inode, or `u32::MAX` for the caller's private one;
    /// offset or address; deadline, ns since boot, `u64::MAX`: none).
    Futex(u32, u64, u64),
    /// A change of this eventfd.
    Event(u16),
    /// An expiration of this timerfd.
    Timer(u16),
    /// A change of this inode's description locks (`flocks`).
    Flock(u32),
    /// A System V IPC call (`sysv`): its ticket and deadline (ns since
    /// boot, `u64::MAX`: none).
    Ipc(u32, u64),
    /// An `F_SETLKW`: a change of this file's locks (`locks`); what it asks
    /// (for deadlock checks).
    Lock(u32, stet_unixfs::locks::Request),
    /// `vfork`: this child's `execve` or end (`vfork`).
    Vfork(u32),
    /// A change of this socket (`sockets`).
    Sock(u32),
    /// `epoll_wait`: a change of any file's readiness, until the deadline
    /// (ns since boot, `u64::MAX`: none; `epoll`).
    Epoll(u64),
    /// An event of this inotify instance.
    Inotify(u16),
    /// A tracee's keeper in a trace stop (`ptrace`).
    Traced,
    /// A tracer's memory request relayed to this stopped tracee.
    TraceReq(u32),
}

/// A parked call.
#[derive(Clone, Copy)]
pub(crate) struct Waiter {
    pub(crate) on: Wait,
    /// The process whose call it is.
    pub(crate) pid: u32,
    /// The signals that end it (`-EINTR`).
    pub(crate) intr: u64,
    /// A pipe read's most bytes (0: not a read): it is answered with the
    /// bytes when they come, not woken to ask again.
    pub(crate) read_len: u32,
    /// The general slot holding its resume key (one of `RESUME_SLOTS`), or
    /// 0: the key is in the key directory (`keys::waiter(i)`), or
    /// [`NOTIFY`]: no key, a thread of a threaded process whose keeper is
    /// told (`proto::READY`) instead of answered.
    pub(crate) slot: Slot,
    /// With [`NOTIFY`]: the thread (its keeper's slot number).
    pub(crate) thread: u16,
}

/// [`Waiter::slot`] of a thread's call whose keeper went on serving its
/// other threads (`proto::NOTIFY_SHIFT`): nothing to answer; the keeper
/// learns the thread may go on (`proto::READY`) and asks again.
pub(crate) const NOTIFY: Slot = 0xff;

pub(crate) const NO_WAITER: Waiter = Waiter {
    on: Wait::Free,
    pid: 0,
    intr: 0,
    read_len: 0,
    slot: 0,
    thread: 0,
};

/// The longest a clock helper sleeps while the other one sleeps too
/// (`kick`): the most a time can be late when three come in ever earlier.
const SHORT_NAP: u64 = 10_000_000;

/// The longest a clock helper sleeps at all: the time it was sleeping
/// for may go (an alarm cancelled, a process killed), and a helper asleep
/// for nothing keeps the system from idling. A far alarm costs one `TICK`
/// a second.
const LONG_NAP: u64 = 1_000_000_000;

/// General slots a resume key can wait in: `RESUME`, and two used only at
/// boot (the archive, and the data store publisher) and free after.
pub(crate) const RESUME_SLOTS: [Slot; 3] = [RESUME, ARCHIVE, STORE];

/// Where parked call `i`'s resume key is: general slot `slot`, or (0)
/// fetched from the key directory into `T`.
pub(crate) fn resume_key(waits: &KeyDir, i: usize, slot: Slot) -> Option<Slot> {
    if slot != 0 {
        return Some(slot);
    }
    waits.get(crate::keys::waiter(i), T).ok().map(|_| T)
}

impl Unixd<'_> {
    pub(crate) fn park(&mut self, on: Wait) -> Result<Reply, i64> {
        // A signal that ends the wait is already here: no wait at all.
        if let Some(p) = self
            .procs
            .iter()
            .find(|p| self.caller != 0 && p.pid == self.caller)
        {
            if p.pending & self.intr != 0 {
                return Err(EINTR);
            }
        }
        if self.notify != 0 && self.caller != 0 {
            return self.park_notify(on);
        }
        let i = crate::table::take(&mut self.waiters, |w| w.on == Wait::Free, NO_WAITER)
            .filter(|&i| i < crate::keys::MAX_WAITERS)
            .ok_or(EAGAIN)?;
        // The key stays in its slot if another is free for the next
        // message's; else it goes to the node.
        let cur = self.resume;
        let free = RESUME_SLOTS.into_iter().find(|&s| {
            s != cur
                && !self
                    .waiters
                    .iter()
                    .any(|w| w.on != Wait::Free && w.slot == s)
        });
        let slot = match free {
            Some(next) => {
                self.resume = next;
                cur
            }
            None => {
                self.put_key(crate::keys::waiter(i), cur).map_err(|_| EIO)?;
                0
            }
        };
        self.waiters[i] = Waiter {
            on,
            pid: self.caller,
            intr: self.intr,
            read_len: 0,
            slot,
            thread: 0,
        };
        Ok(Reply::Parked)
    }

    /// A thread's call parked without its resume key (the keeper serves
    /// its other threads meanwhile): answered at once `-ERESTARTSYS` (the
    /// kernel-internal errno Linux never returns), and its keeper is told
    /// with `READY` when it may ask again. One wait per thread: a new one
    /// replaces the last.
    fn park_notify(&mut self, on: Wait) -> Result<Reply, i64> {
        let (pid, thread) = (self.caller, self.notify);
        for w in self.waiters.iter_mut() {
            if w.on != Wait::Free && w.slot == NOTIFY && w.pid == pid && w.thread == thread {
                *w = NO_WAITER;
            }
        }
        let i = crate::table::take(&mut self.waiters, |w| w.on == Wait::Free, NO_WAITER)
            .filter(|&i| i < crate::keys::MAX_WAITERS)
            .ok_or(EAGAIN)?;
        self.waiters[i] = Waiter {
            on,
            pid,
            intr: self.intr,
            read_len: 0,
            slot: NOTIFY,
            thread,
        };
        word(Err(p::ERESTARTSYS))
    }

    /// Thread `thread` of process `pid` may go on: its keeper is told
    /// (`READY`, a try-send), or — busy — with its next answer that can
    /// carry it (`take_ready`), or at the next tick.
    pub(crate) fn ready(&mut self, pid: u32, thread: u16) {
        let Some(i) = self.procs.iter().position(|p| p.pid == pid && pid != 0) else {
            return;
        };
        // `thread` is the keeper's slot + 1 (`proto::NOTIFY_SHIFT`).
        self.procs[i].ready |= 1 << (thread.wrapping_sub(1) as u64 & 63);
        self.send_ready(i);
    }

    /// Tries to hand process `i`'s ready threads to its keeper.
    pub(crate) fn send_ready(&mut self, i: usize) {
        let p = self.procs[i];
        if p.ready == 0 || p.zombie || !p.keeper {
            return;
        }
        if self.keys.get(crate::keys::keeper(i), T).is_err() {
            return;
        }
        let a = Msg::new(T, p::READY).w0(p.ready).try_send();
        if a.ok() {
            self.procs[i].ready = 0;
        } else {
            self.kick();
        }
    }

    /// The ready threads of `pid`, taken (for an answer that carries them).
    pub(crate) fn take_ready(&mut self, pid: u32) -> u64 {
        match self.procs.iter_mut().find(|p| p.pid == pid && pid != 0) {
            Some(p) => core::mem::take(&mut p.ready),
            None => 0,
        }
    }

    /// Parks a pipe read of at most `len` bytes (answered with its bytes,
    /// `pipe_changed`).
    pub(crate) fn park_read(&mut self, on: Wait, len: usize) -> Result<Reply, i64> {
        let r = self.park(on)?;
        if let Some(w) = self
            .waiters
            .iter_mut()
            .find(|w| w.on == on && w.pid == self.caller && self.caller != 0)
        {
            // A process has one call at a time: this is the one parked.
            w.read_len = len as u32;
        }
        Ok(r)
    }

    /// Answers parked call `i` `BUSY`: its keeper asks again.
    pub(crate) fn wake(&mut self, i: usize) {
        let to = self.waiters[i].slot;
        if to == NOTIFY {
            let (pid, t) = (self.waiters[i].pid, self.waiters[i].thread);
            self.waiters[i] = NO_WAITER;
            return self.ready(pid, t);
        }
        self.waiters[i] = NO_WAITER;
        if let Some(r) = resume_key(&self.keys, i, to) {
            Msg::new(r, Code::Busy.into()).send();
        }
    }

    /// Answers parked call `i` with `w0` (and the process's signals).
    pub(crate) fn answer(&mut self, i: usize, w0: u64) {
        if self.waiters[i].slot == NOTIFY {
            return self.wake(i);
        }
        let (pid, to) = (self.waiters[i].pid, self.waiters[i].slot);
        self.waiters[i] = NO_WAITER;
        let sigs = self.take_pending(pid);
        if let Some(r) = resume_key(&self.keys, i, to) {
            Msg::new(r, Code::Ok.into()).words([w0, 0, 0, sigs]).send();
        }
    }

    /// Something new may need timing sooner (a sleep, an alarm, a futex
    /// timeout, a signal for a busy keeper): unless a clock helper already
    /// sleeps until that time or earlier, wake a parked one.
    ///
    /// The kernel cannot cut a sleep short, so one helper asleep until a
    /// far alarm would otherwise hold every shorter sleep behind it (one
    /// process's `alarm(290)` stalled every `nanosleep` in the system).
    /// There are two helpers: while one sleeps long, the other times what
    /// comes sooner; and while both sleep, the second never sleeps longer
    /// than [`SHORT_NAP`], so a third, still earlier time waits at most
    /// that long. Neither sleeps longer than [`LONG_NAP`].
    pub(crate) fn kick(&mut self) {
        let next = self.next_tick();
        if next == 0 || self.tick_at.iter().any(|&t| t != 0 && t <= next) {
            return;
        }
        if let Some(w) = (0..self.waiters.len()).find(|&w| self.waiters[w].on == Wait::Ticker) {
            self.answer(w, 0);
        }
    }

    /// When the clock helper should tick next (0: nothing to time).
    fn next_tick(&self) -> u64 {
        let mut next = u64::MAX;
        for w in &self.waiters {
            match w.on {
                Wait::Sleep(t) => next = next.min(t),
                Wait::Futex(_, _, t) if t != u64::MAX => next = next.min(t),
                Wait::Ipc(_, t) if t != u64::MAX => next = next.min(t),
                Wait::Epoll(t) if t != u64::MAX => next = next.min(t),
                _ => {}
            }
        }
        for t in self.timers.iter() {
            if t.used && t.next != 0 {
                next = next.min(t.next);
            }
        }
        next = next.min(self.ptimers_next());
        for p in &self.procs {
            for t in p.itimer.iter() {
                if p.pid != 0 && t[0] != 0 {
                    next = next.min(t[0]);
                }
            }
            // (A tracee parked in a stop takes its signals when resumed.)
            if p.pid != 0
                && (p.pending != 0 || p.ready != 0)
                && !p.zombie
                && !self
                    .waiters
                    .iter()
                    .any(|w| w.on == Wait::Traced && w.pid == p.pid)
            {
                next = next.min(now_ns() + 10_000_000);
            }
        }
        if next == u64::MAX {
            0
        } else {
            next
        }
    }

    /// `TICK`: alarms, sleeps and signals a busy keeper could not take.
    fn tick(&mut self) {
        let now = now_ns();
        for t in 0..self.timers.len() {
            self.timer_due(t, now);
        }
        self.ptimers_due(now);
        for w in 0..self.waiters.len() {
            match self.waiters[w].on {
                Wait::Sleep(t) | Wait::Epoll(t) if t <= now => self.answer(w, 0),
                Wait::Futex(_, _, t) if t <= now => self.answer(w, (-ETIMEDOUT) as u64),
                // semtimedop's timeout (a POSIX queue's: ETIMEDOUT).
                Wait::Ipc(k, t) if t <= now => {
                    let e = self.ipc_timeout(k);
                    self.answer(w, (-e) as u64)
                }
                _ => {}
            }
        }
        for i in 0..self.procs.len() {
            if self.procs[i].pid == 0 {
                continue;
            }
            let mut rang = false;
            for (k, sig) in [SIGALRM, SIGVTALRM, SIGPROF].into_iter().enumerate() {
                let [at, interval] = self.procs[i].itimer[k];
                if at != 0 && at <= now {
                    // Again after its interval (the missed ones are one).
                    self.procs[i].itimer[k][0] = match interval {
                        0 => 0,
                        v => at.saturating_add(((now - at) / v + 1).saturating_mul(v)),
                    };
                    self.signal(i, sig);
                    rang = true;
                }
            }
            if !rang && self.procs[i].pending != 0 {
                self.deliver(i);
            }
            self.send_ready(i);
        }
    }

    /// The orders that wait for time: the clock helper's `TICK`, `SLEEP`, `PAUSE`.
    pub(crate) fn wait_order(&mut self, a: &Answer) -> Result<Reply, i64> {
        let w = a.w;
        match a.code {
            p::TICK => {
                let me = (w[1] & 1) as usize;
                self.tick_at[me] = 0;
                self.tick();
                let next = self.next_tick();
                let other = self.tick_at[1 - me];
                if next == 0 || (other != 0 && other <= next) {
                    // Nothing to time, or the other helper wakes first.
                    if w[0] == 1 {
                        self.park(Wait::Ticker)
                    } else {
                        word(Ok(0))
                    }
                } else {
                    // With the other helper asleep too, this one naps
                    // short so that a still earlier time is not missed.
                    let nap = if other != 0 { SHORT_NAP } else { LONG_NAP };
                    let at = next.min(now_ns().saturating_add(nap));
                    self.tick_at[me] = at;
                    word(Ok(at))
                }
            }
            p::SLEEP => {
                if w[0] <= now_ns() {
                    word(Ok(0))
                } else {
                    let parked = self.park(Wait::Sleep(w[0]));
                    self.kick();
                    parked
                }
            }
            p::PAUSE => self.park(Wait::Pause),
            _ => Err(ENOSYS),
        }
    }
}
