//! Clock ids (`clock_gettime`, `clock_getres`, `clock_nanosleep`,
//! `timer_create`): which clock an id names, including Linux's encoding
//! of the CPU-time clocks of a process or thread (`clock_getcpuclockid`,
//! `pthread_getcpuclockid`): a negative id `~pid << 3 | perthread << 2 |
//! which`, pid 0 the caller, `which` 0 (profiling), 1 (virtual) or 2
//! (scheduler); 3 is no clock. Also `struct itimerspec`, as timers
//! (`timerfd`, POSIX timers) report their interval and time left.

use crate::sys::errno::EINVAL;

/// `CLOCK_REALTIME_ALARM`.
pub const REALTIME_ALARM: u64 = 8;
/// `CLOCK_BOOTTIME_ALARM`.
pub const BOOTTIME_ALARM: u64 = 9;
/// `CLOCK_TAI`.
pub const TAI: u64 = 11;

/// What a clock id names.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Clock {
    /// The wall clock (`REALTIME`, its coarse and alarm forms, `TAI`).
    Wall,
    /// Time since boot (`MONOTONIC`, `_RAW`, `_COARSE`, `BOOTTIME`, its
    /// alarm form).
    Boot,
    /// A process's CPU time: 0 the caller's.
    Process(u32),
    /// A thread's CPU time: 0 the calling thread's.
    Thread(u32),
}

/// The clock `id` names (`EINVAL`: none).
pub fn decode(id: u64) -> Result<Clock, i64> {
    let id = id as u32 as i32;
    if id < 0 {
        let which = id & 3;
        let pid = (!id >> 3) as u32;
        if which == 3 {
            return Err(EINVAL);
        }
        return Ok(if id & 4 != 0 {
            Clock::Thread(pid)
        } else {
            Clock::Process(pid)
        });
    }
    match id as u64 {
        0 | 5 | REALTIME_ALARM | TAI => Ok(Clock::Wall),
        1 | 4 | 6 | 7 | BOOTTIME_ALARM => Ok(Clock::Boot),
        2 => Ok(Clock::Process(0)),
        3 => Ok(Clock::Thread(0)),
        _ => Err(EINVAL),
    }
}

/// Whether `id` is one of the coarse clocks (read at a tick's grain).
pub fn coarse(id: u64) -> bool {
    matches!(id, 5 | 6)
}

/// The id of process `pid`'s CPU-time clock (`clock_getcpuclockid`'s
/// encoding, `which` 2).
pub const fn process_clock(pid: u32) -> u64 {
    (((!pid) << 3) | 2) as i32 as i64 as u64
}

/// `struct itimerspec` (`it_interval`, then `it_value`, each seconds and
/// nanoseconds) for an interval and a time left, both in nanoseconds.
pub fn itimerspec(interval_ns: u64, left_ns: u64) -> [u8; 32] {
    let mut b = [0u8; 32];
    let words = [
        interval_ns / 1_000_000_000,
        interval_ns % 1_000_000_000,
        left_ns / 1_000_000_000,
        left_ns % 1_000_000_000,
    ];
    for (k, v) in words.into_iter().enumerate() {
        b[k * 8..k * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert_eq!(decode(0), Ok(Clock::Wall));
        assert_eq!(decode(7), Ok(Clock::Boot));
        assert_eq!(decode(10), Err(EINVAL));
        assert_eq!(decode(12), Err(EINVAL));
        assert_eq!(decode(-1i64 as u64), Err(EINVAL));
        assert_eq!(decode(2), Ok(Clock::Process(0)));
        assert_eq!(decode(3), Ok(Clock::Thread(0)));
        assert_eq!(decode(process_clock(42)), Ok(Clock::Process(42)));
        // pthread_getcpuclockid of thread 7: ~7 << 3 | 4 | 2.
        let t = ((!7u32 << 3) | 6) as i32 as i64 as u64;
        assert_eq!(decode(t), Ok(Clock::Thread(7)));
        // Only the low 32 bits are the id (a C int).
        assert_eq!(decode(1 << 32), Ok(Clock::Wall));
    }

    #[test]
    fn itimerspec_is_interval_then_value() {
        let b = itimerspec(2_500_000_000, 7);
        let mut w = [0u64; 4];
        for (k, c) in b.chunks_exact(8).enumerate() {
            w[k] = u64::from_le_bytes(c.try_into().unwrap());
        }
        assert_eq!(w, [2, 500_000_000, 0, 7]);
    }
}
