//! Signals: pending sets per process, handed to a process's keeper (a
//! try-send; a busy keeper gets them with its next answer or at the next
//! tick) or ending its parked call with `EINTR`; `kill` and `alarm`.

use crate::slots::T;
use crate::wait::Wait;
use crate::{now_ns, word, Reply, Unixd};
use stet_rt::key::{Answer, Msg};
use stet_unix::proto as p;
use stet_unix::sys::errno::*;

/// Signals unixd sends itself.
pub(crate) use stet_unix::sys::sig::{SIGALRM, SIGCHLD, SIGCONT, SIGKILL};

/// Who sent signal `sig` to process `to` by `kill` (a signal's
/// `si_pid`, `si_uid`), kept until the target's keeper asks
/// (`proto::SIG_SENDER`). At most [`MAX_SENDERS`]: the oldest goes first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sender {
    to: u32,
    sig: u8,
    pid: u32,
    uid: u32,
}

/// Most sender records kept: two for each process the system holds.
const MAX_SENDERS: usize = 2 * crate::keys::MAX_PROCS;

fn bit(sig: u64) -> u64 {
    1 << (sig - 1)
}

impl Unixd<'_> {
    /// The signals sent to `pid` since it last heard, now handed over.
    /// `SIGKILL` stays pending until the process is gone (`exit` clears
    /// it): handed over again with every answer and retried by the clock,
    /// so a keeper that misses it once (an answer it did not read) is told
    /// again, and a killed process cannot park for good.
    pub(crate) fn take_pending(&mut self, pid: u32) -> u64 {
        match (0..self.procs.len()).find(|&i| pid != 0 && self.procs[i].pid == pid) {
            Some(i) => {
                let p = &mut self.procs[i].pending;
                let taken = *p;
                *p &= bit(SIGKILL);
                taken
            }
            None => 0,
        }
    }

    /// Hands process `i`'s pending signals to it: through its parked
    /// call if one of them ends it (`-EINTR`), else to its keeper (a
    /// try-send: a busy keeper gets them with its next answer, or at the
    /// next tick).
    pub(crate) fn deliver(&mut self, i: usize) {
        let p = self.procs[i];
        if p.pending == 0 || p.zombie {
            return;
        }
        if let Some(w) = (0..self.waiters.len()).find(|&w| {
            self.waiters[w].on != Wait::Free
                && self.waiters[w].pid == p.pid
                && self.waiters[w].intr & p.pending != 0
        }) {
            self.answer(w, (-EINTR) as u64);
            return;
        }
        // A tracee in a stop gets them when its tracer resumes it.
        if self.trace_parked(p.pid) {
            return;
        }
        if !p.keeper || self.keys.get(crate::keys::keeper(i), T).is_err() {
            // Its keeper has not said where it is yet: the clock retries.
            self.kick();
            return;
        }
        let a = Msg::new(T, p::SIGNAL).w0(p.pending).try_send();
        if a.ok() {
            // (SIGKILL stays: `take_pending`.)
            self.procs[i].pending &= bit(SIGKILL);
        } else {
            // Its keeper is busy: the clock retries.
            self.kick();
        }
    }

    /// Sends `sig` to process `i`.
    pub(crate) fn signal(&mut self, i: usize, sig: u64) {
        if self.procs[i].zombie {
            return;
        }
        // SIGCONT continues a stopped process, blocked or not (its keeper
        // waits for it); its parent is told.
        if sig == SIGCONT && self.procs[i].stopped {
            self.procs[i].stopped = false;
            self.procs[i].stop_report = 0;
            self.procs[i].cont_report = true;
            self.tell_parent(i);
        }
        self.procs[i].pending |= bit(sig);
        self.deliver(i);
    }

    /// `KILL`: Linux's targets.
    fn kill(&mut self, from: u32, which: i64, sig: u64) -> Result<u64, i64> {
        if sig > 64 {
            return Err(EINVAL);
        }
        let me = self.proc_of(from)?;
        let my_pgid = self.procs[me].pgid;
        let (my_cred, my_sid) = (self.procs[me].cred, self.procs[me].sid);
        let mut found = false;
        let mut refused = false;
        for i in 0..self.procs.len() {
            let p = self.procs[i];
            if p.pid == 0 {
                continue;
            }
            // Linux: `-1` is every process but pid 1 and the caller; a
            // zombie is there to be found (`kill(zombie, 0)` is 0) but
            // takes no signal.
            let hit = match which {
                -1 => p.pid != 1 && p.pid != from,
                0 => p.pgid == my_pgid,
                w if w < -1 => p.pgid as i64 == -w,
                w => p.pid as i64 == w,
            };
            if !hit {
                continue;
            }
            // Linux: a user signals its own processes (SIGCONT: any in
            // its session); root signals all.
            let allowed = my_cred.may_signal(&p.cred) || (sig == SIGCONT && p.sid == my_sid);
            if !allowed {
                refused = true;
                continue;
            }
            found = true;
            if sig != 0 && !p.zombie {
                let uid = my_cred.uid[stet_unix::cred::REAL];
                self.note_sender(p.pid, sig, from, uid);
                self.signal(i, sig);
            }
        }
        if found {
            Ok(0)
        } else if refused {
            Err(EPERM)
        } else {
            Err(ESRCH)
        }
    }

    /// Keeps who sent `sig` to `to` (the latest sender).
    fn note_sender(&mut self, to: u32, sig: u64, pid: u32, uid: u32) {
        let sig = sig as u8;
        self.senders.retain(|s| s.to != to || s.sig != sig);
        if self.senders.len() >= MAX_SENDERS {
            self.senders.remove(0);
        }
        self.senders.push(Sender { to, sig, pid, uid });
    }

    /// `SIG_SENDER`: who sent `sig` to `to` → (pid, uid), the record taken.
    fn take_sender(&mut self, to: u32, sig: u64) -> (u64, u64) {
        let i = self
            .senders
            .iter()
            .position(|s| s.to == to && s.sig as u64 == sig);
        match i {
            Some(i) => {
                let s = self.senders.remove(i);
                (s.pid as u64, s.uid as u64)
            }
            None => (0, 0),
        }
    }

    /// The orders that signal: `kill` and `alarm`.
    pub(crate) fn signal_order(&mut self, a: &Answer) -> Result<Reply, i64> {
        let w = a.w;
        match a.code {
            p::KILL => word(self.kill(a.label, w[0] as i64, w[1])),
            p::SIG_SENDER => {
                let (pid, uid) = self.take_sender(a.label, w[0]);
                Ok(Reply::Now([pid, uid, 0], 0, false))
            }
            p::ALARM => {
                let i = self.proc_of(a.label)?;
                let which = (w[1] & 3) as usize;
                if which > 2 || w[1] & !7 != 0 {
                    return Err(EINVAL);
                }
                let now = now_ns();
                let [old, old_interval] = self.procs[i].itimer[which];
                // w1 bit 2: read only.
                if w[1] & 4 == 0 {
                    self.procs[i].itimer[which] = if w[0] == 0 {
                        [0, 0]
                    } else {
                        [now.saturating_add(w[0]), w[2]]
                    };
                    self.kick();
                }
                let left = if old == 0 {
                    0
                } else {
                    old.saturating_sub(now).max(1)
                };
                Ok(Reply::Now([left, old_interval, 0], 0, false))
            }
            _ => Err(ENOSYS),
        }
    }
}
