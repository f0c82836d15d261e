//! Scheduling policies and their parameters (`sched_setscheduler`,
//! `sched_setparam`, `sched_setattr` and the calls that read them back):
//! Linux's rules for what a request may be and who may make it, apart
//! from where the values live (unixd's process table), so the host tests
//! them. The kernel schedules every domain alike; a policy is what the
//! process and others are told, as Linux would tell them.

use crate::sys::errno::{EINVAL, EPERM};

/// `SCHED_OTHER` (`SCHED_NORMAL`).
pub const OTHER: u32 = 0;
/// `SCHED_FIFO`.
pub const FIFO: u32 = 1;
/// `SCHED_RR`.
pub const RR: u32 = 2;
/// `SCHED_BATCH`.
pub const BATCH: u32 = 3;
/// `SCHED_IDLE`.
pub const IDLE: u32 = 5;
/// `SCHED_DEADLINE`.
pub const DEADLINE: u32 = 6;
/// `SCHED_RESET_ON_FORK`, or'ed into `sched_setscheduler`'s policy.
pub const RESET_ON_FORK: u32 = 0x4000_0000;

/// `struct sched_attr`'s `sched_flags`.
pub mod flag {
    /// `SCHED_FLAG_RESET_ON_FORK`.
    pub const RESET_ON_FORK: u64 = 0x01;
    /// `SCHED_FLAG_RECLAIM`.
    pub const RECLAIM: u64 = 0x02;
    /// `SCHED_FLAG_DL_OVERRUN`.
    pub const DL_OVERRUN: u64 = 0x04;
    /// `SCHED_FLAG_KEEP_POLICY`.
    pub const KEEP_POLICY: u64 = 0x08;
    /// `SCHED_FLAG_KEEP_PARAMS`.
    pub const KEEP_PARAMS: u64 = 0x10;
    /// `SCHED_FLAG_UTIL_CLAMP_MIN`.
    pub const UTIL_CLAMP_MIN: u64 = 0x20;
    /// `SCHED_FLAG_UTIL_CLAMP_MAX`.
    pub const UTIL_CLAMP_MAX: u64 = 0x40;
    /// Every flag Linux knows.
    pub const ALL: u64 = 0x7f;
}

/// `SCHED_ATTR_SIZE_VER0`: the first `struct sched_attr` (48 bytes).
pub const ATTR_SIZE_VER0: u32 = 48;
/// `SCHED_ATTR_SIZE_VER1`: with the utilization clamps (56 bytes), the
/// size this system reads and writes.
pub const ATTR_SIZE_VER1: u32 = 56;
/// `sched_rr_get_interval`'s quantum of `SCHED_RR` (Linux's
/// `RR_TIMESLICE`, 100 ms).
pub const RR_INTERVAL_NS: u64 = 100_000_000;
/// The least `SCHED_DEADLINE` runtime Linux takes (`1 << DL_SCALE` ns).
pub const DL_MIN_RUNTIME: u64 = 1 << 10;

/// A process's policy and parameters.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Sched {
    /// One of [`OTHER`] … [`DEADLINE`].
    pub policy: u8,
    /// The static priority: 1–99 for [`FIFO`] and [`RR`], else 0.
    pub prio: u8,
    /// `SCHED_RESET_ON_FORK`: a child starts as [`OTHER`].
    pub reset_on_fork: bool,
    /// [`DEADLINE`]'s runtime, deadline and period (ns).
    pub dl: [u64; 3],
}

/// Whether `policy` is one Linux knows.
pub fn known(policy: u32) -> bool {
    matches!(policy, OTHER | FIFO | RR | BATCH | IDLE | DEADLINE)
}

/// Whether `policy` is a real-time one (priorities 1–99).
pub fn realtime(policy: u32) -> bool {
    matches!(policy, FIFO | RR)
}

/// `sched_get_priority_max(policy)`.
pub fn priority_max(policy: u64) -> Result<u64, i64> {
    match u32::try_from(policy) {
        Ok(p) if realtime(p) => Ok(99),
        Ok(p) if known(p) => Ok(0),
        _ => Err(EINVAL),
    }
}

/// `sched_get_priority_min(policy)`.
pub fn priority_min(policy: u64) -> Result<u64, i64> {
    match u32::try_from(policy) {
        Ok(p) if realtime(p) => Ok(1),
        Ok(p) if known(p) => Ok(0),
        _ => Err(EINVAL),
    }
}

/// Whether `policy` with priority `prio` (and, for [`DEADLINE`], the
/// times `dl`) is a valid request (`EINVAL` if not).
pub fn check(policy: u32, prio: u32, dl: [u64; 3]) -> Result<(), i64> {
    if !known(policy) {
        return Err(EINVAL);
    }
    let (lo, hi) = if realtime(policy) { (1, 99) } else { (0, 0) };
    if prio < lo || prio > hi {
        return Err(EINVAL);
    }
    if policy == DEADLINE {
        let [runtime, deadline, period] = dl;
        let period = if period == 0 { deadline } else { period };
        if deadline == 0
            || runtime < DL_MIN_RUNTIME
            || deadline & (1 << 63) != 0
            || period & (1 << 63) != 0
            || runtime > deadline
            || deadline > period
        {
            return Err(EINVAL);
        }
    }
    Ok(())
}

/// May an unprivileged caller (the target's owner) move a process from
/// `old` (nice `old_nice`) to `new` (nice `new_nice`) with
/// `RLIMIT_RTPRIO` `rtprio`? Linux's `user_check_sched_setscheduler`:
/// no deadline policy, real-time only within the limit (or lower than it
/// was), no lower nice value, not out of `SCHED_IDLE`, and
/// `SCHED_RESET_ON_FORK` not given up.
pub fn unprivileged_ok(old: &Sched, old_nice: i8, new: &Sched, new_nice: i8, rtprio: u64) -> bool {
    let (op, np) = (old.policy as u32, new.policy as u32);
    if np == DEADLINE {
        return false;
    }
    if !realtime(np) && new_nice < old_nice {
        return false;
    }
    if realtime(np) {
        if np != op && rtprio == 0 {
            return false;
        }
        if new.prio > old.prio && new.prio as u64 > rtprio {
            return false;
        }
    }
    if op == IDLE && np != IDLE {
        return false;
    }
    !old.reset_on_fork || new.reset_on_fork
}

/// Whether the caller may change `target` at all: Linux's
/// `check_same_owner` (the effective user is the target's real or
/// effective one), or privilege.
pub fn may_change(caller_euid: u32, privileged: bool, target_uid: [u32; 2]) -> Result<(), i64> {
    if privileged || caller_euid == target_uid[0] || caller_euid == target_uid[1] {
        Ok(())
    } else {
        Err(EPERM)
    }
}

impl Sched {
    /// What a child created by `fork` starts with, and whether its nice
    /// value, if below 0, goes back to 0 (`SCHED_RESET_ON_FORK`).
    pub fn at_fork(self) -> (Sched, bool) {
        if !self.reset_on_fork {
            return (self, false);
        }
        let policy = if realtime(self.policy as u32) || self.policy as u32 == DEADLINE {
            OTHER as u8
        } else {
            self.policy
        };
        (
            Sched {
                policy,
                prio: if realtime(policy as u32) {
                    self.prio
                } else {
                    0
                },
                reset_on_fork: false,
                dl: if policy as u32 == DEADLINE {
                    self.dl
                } else {
                    [0; 3]
                },
            },
            true,
        )
    }

    /// `sched_rr_get_interval`'s quantum (ns): [`RR_INTERVAL_NS`] for
    /// `SCHED_RR`, 0 (none: it runs until it yields) for `SCHED_FIFO`,
    /// and for the fair policies the 4 ms slice of a lone task.
    pub fn interval_ns(&self) -> u64 {
        match self.policy as u32 {
            RR => RR_INTERVAL_NS,
            FIFO | DEADLINE => 0,
            _ => 4_000_000,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_ranges() {
        assert_eq!(priority_max(FIFO as u64), Ok(99));
        assert_eq!(priority_min(RR as u64), Ok(1));
        assert_eq!(priority_max(OTHER as u64), Ok(0));
        assert_eq!(priority_min(DEADLINE as u64), Ok(0));
        assert_eq!(priority_max(4), Err(EINVAL));
        assert_eq!(priority_min(1000), Err(EINVAL));
        assert_eq!(priority_max(1 << 32 | 1), Err(EINVAL));
    }

    #[test]
    fn checks() {
        assert_eq!(check(FIFO, 0, [0; 3]), Err(EINVAL));
        assert_eq!(check(FIFO, 100, [0; 3]), Err(EINVAL));
        assert_eq!(check(RR, 99, [0; 3]), Ok(()));
        assert_eq!(check(OTHER, 1, [0; 3]), Err(EINVAL));
        assert_eq!(check(4, 0, [0; 3]), Err(EINVAL));
        let ms = 1_000_000;
        assert_eq!(check(DEADLINE, 0, [10 * ms, 30 * ms, 30 * ms]), Ok(()));
        assert_eq!(check(DEADLINE, 0, [10 * ms, 30 * ms, 0]), Ok(()));
        assert_eq!(check(DEADLINE, 0, [40 * ms, 30 * ms, 30 * ms]), Err(EINVAL));
        assert_eq!(check(DEADLINE, 0, [10 * ms, 30 * ms, 20 * ms]), Err(EINVAL));
        assert_eq!(check(DEADLINE, 0, [100, 30 * ms, 30 * ms]), Err(EINVAL));
        assert_eq!(check(DEADLINE, 0, [ms, 0, 0]), Err(EINVAL));
    }

    #[test]
    fn unprivileged() {
        let other = Sched::default();
        let fifo = Sched {
            policy: FIFO as u8,
            prio: 10,
            ..Sched::default()
        };
        assert!(!unprivileged_ok(&other, 0, &fifo, 0, 0));
        assert!(unprivileged_ok(&other, 0, &fifo, 0, 10));
        assert!(!unprivileged_ok(&other, 0, &fifo, 0, 9));
        assert!(unprivileged_ok(&fifo, 0, &other, 0, 0));
        assert!(!unprivileged_ok(&other, 0, &other, -1, 0));
        assert!(unprivileged_ok(&other, 0, &other, 5, 0));
        let dl = Sched {
            policy: DEADLINE as u8,
            ..Sched::default()
        };
        assert!(!unprivileged_ok(&other, 0, &dl, 0, 99));
        let idle = Sched {
            policy: IDLE as u8,
            ..Sched::default()
        };
        assert!(!unprivileged_ok(&idle, 0, &other, 0, 0));
        let reset = Sched {
            reset_on_fork: true,
            ..Sched::default()
        };
        assert!(!unprivileged_ok(&reset, 0, &other, 0, 0));
        assert_eq!(may_change(5, false, [5, 6]), Ok(()));
        assert_eq!(may_change(7, false, [5, 6]), Err(EPERM));
        assert_eq!(may_change(7, true, [5, 6]), Ok(()));
    }

    #[test]
    fn fork() {
        let fifo = Sched {
            policy: FIFO as u8,
            prio: 10,
            reset_on_fork: true,
            ..Sched::default()
        };
        assert_eq!(fifo.at_fork(), (Sched::default(), true));
        let kept = Sched {
            reset_on_fork: false,
            ..fifo
        };
        assert_eq!(kept.at_fork(), (kept, false));
        assert_eq!(kept.interval_ns(), 0);
        assert_eq!(
            Sched {
                policy: RR as u8,
                ..kept
            }
            .interval_ns(),
            RR_INTERVAL_NS
        );
    }
}
