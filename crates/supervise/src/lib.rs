//! The reincarnation service's restart policy (MINIX 3's reincarnation
//! server, as pure logic).
//!
//! For each supervised service the reincarnation service keeps a
//! [`Record`]; when it hears that the service crashed (its keeper got a
//! fault), hung (no answer to a heartbeat in time) or exited, it asks the
//! record what to do: restart it at some time, or hold it (leave it down
//! until someone asks). The policy:
//!
//! * **restart or hold** — a service may be marked never to restart;
//! * **exponential back-off** — the n-th consecutive failure waits
//!   `base · 2^(n-1)`, capped at `cap`; a service that stays up for
//!   `stable` is healthy again and its next failure restarts at once
//!   after `base`;
//! * **restart-rate cap** — more than `rate_max` restarts within
//!   `rate_window` holds the service (a service that crashes at start-up
//!   cannot keep the system busy restarting it).
//!
//! Times are nanoseconds on one monotonic clock (the sleep key's).
#![no_std]

#[cfg(test)]
extern crate std;

#[cfg(test)]
mod tests;

/// Most restarts the rate cap can count.
pub const MAX_RATE: usize = 16;

/// How a service is restarted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Restart after a failure (else hold it at the first one).
    pub restart: bool,
    /// Delay before the first restart of a run of failures.
    pub backoff_base_ns: u64,
    /// Longest delay.
    pub backoff_cap_ns: u64,
    /// Up this long, a service is healthy again (back-off starts over).
    pub stable_ns: u64,
    /// Most restarts within `rate_window_ns` (at most [`MAX_RATE`]; 0: no
    /// rate cap, for a benchmark that restarts as fast as it can).
    pub rate_max: u32,
    /// The window of the rate cap.
    pub rate_window_ns: u64,
}

impl Policy {
    /// Restart with back-off from 1 ms to 1 s, healthy after 1 s up, at
    /// most 8 restarts in 1 s.
    pub const DEFAULT: Policy = Policy {
        restart: true,
        backoff_base_ns: 1_000_000,
        backoff_cap_ns: 1_000_000_000,
        stable_ns: 1_000_000_000,
        rate_max: 8,
        rate_window_ns: 1_000_000_000,
    };
}

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Its keeper heard a fault.
    Crash,
    /// It did not answer a heartbeat in time.
    Hang,
    /// It ended (or its objects were destroyed).
    Exit,
}

/// What to do about a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Start a replacement at this time.
    RestartAt(u64),
    /// Leave it down: the policy says hold.
    HoldByPolicy,
    /// Leave it down: too many restarts too fast.
    HoldRateCap,
}

/// One service's history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Restarts so far (all time).
    pub restarts: u64,
    /// Failures in a row without a stable run between.
    pub consecutive: u32,
    /// When the current incarnation started.
    pub started_at: u64,
    /// Start times of recent restarts (a ring).
    recent: [u64; MAX_RATE],
    next: usize,
    filled: usize,
}

impl Record {
    /// A service first started at `now`.
    pub const fn new(now: u64) -> Record {
        Record {
            restarts: 0,
            consecutive: 0,
            started_at: now,
            recent: [0; MAX_RATE],
            next: 0,
            filled: 0,
        }
    }

    /// Restarts within the window ending at `now`.
    pub fn recent_restarts(&self, now: u64, window: u64) -> u32 {
        self.recent[..self.filled]
            .iter()
            .filter(|&&t| now.saturating_sub(t) < window)
            .count() as u32
    }

    /// The service failed at `now`: what to do.
    pub fn on_failure(&mut self, now: u64, p: &Policy, _why: Failure) -> Decision {
        if !p.restart {
            return Decision::HoldByPolicy;
        }
        if now.saturating_sub(self.started_at) >= p.stable_ns {
            self.consecutive = 0;
        }
        let rate_max = p.rate_max.min(MAX_RATE as u32);
        if rate_max > 0 && self.recent_restarts(now, p.rate_window_ns) >= rate_max {
            return Decision::HoldRateCap;
        }
        let shift = self.consecutive.min(63);
        let delay = p
            .backoff_base_ns
            .checked_shl(shift)
            .filter(|d| d >> shift == p.backoff_base_ns)
            .unwrap_or(u64::MAX)
            .min(p.backoff_cap_ns);
        self.consecutive = self.consecutive.saturating_add(1);
        Decision::RestartAt(now.saturating_add(delay))
    }

    /// A replacement started at `now`.
    pub fn on_restarted(&mut self, now: u64) {
        self.restarts += 1;
        self.started_at = now;
        self.recent[self.next] = now;
        self.next = (self.next + 1) % MAX_RATE;
        self.filled = (self.filled + 1).min(MAX_RATE);
    }
}
