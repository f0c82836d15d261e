//! Load averages as Linux keeps them: fixed point with 11 fraction bits,
//! decayed every 5 seconds toward the figure of that step by e^(-5/60),
//! e^(-5/300) and e^(-5/900) (the 1, 5 and 15 minute averages).
//!
//! What Stet averages is the processor's busy fraction: the ticks charged
//! to the meter the processes run under against the ticks elapsed, taken
//! whenever the averages are read. Every whole 5-second step since the
//! last reading gets the fraction of the whole span (so on one processor
//! the averages never pass 1.00, where Linux counts runnable tasks).

/// Fraction bits.
pub const FSHIFT: u32 = 11;
/// 1.0.
pub const FIXED_1: u64 = 1 << FSHIFT;
/// e^(-5/60), e^(-5/300), e^(-5/900) in fixed point.
const EXP: [u64; 3] = [1884, 2014, 2037];
/// A step.
pub const STEP_NS: u64 = 5_000_000_000;

/// The three averages and where the last reading left them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Load {
    /// The 1, 5 and 15 minute averages (fixed point).
    pub avgs: [u64; 3],
    /// The start of the first step not yet counted (ns since boot).
    at: u64,
    /// The busy and elapsed ticks at the last reading.
    used_at: u64,
    ticks_at: u64,
}

/// `x^n` in fixed point (squaring, rounding at each product).
fn power(mut x: u64, mut n: u64) -> u64 {
    let mut r = FIXED_1;
    while n > 0 {
        if n & 1 != 0 {
            r = (r * x + FIXED_1 / 2) >> FSHIFT;
        }
        n >>= 1;
        x = (x * x + FIXED_1 / 2) >> FSHIFT;
    }
    r
}

/// One decay by `exp` toward `active`: rounded up while rising, so a
/// steady figure is reached rather than approached forever.
fn decay(load: u64, exp: u64, active: u64) -> u64 {
    let mut l = load * exp + active * (FIXED_1 - exp);
    if active >= load {
        l += FIXED_1 - 1;
    }
    l / FIXED_1
}

impl Load {
    /// Averages at 0.00, from boot.
    pub const fn new() -> Load {
        Load {
            avgs: [0; 3],
            at: 0,
            used_at: 0,
            ticks_at: 0,
        }
    }

    /// A reading at `now` (ns since boot), with `used` ticks charged to
    /// the processes' meter and `ticks` elapsed, both since boot: each
    /// whole step since the last one counted decays toward the busy
    /// fraction of the span.
    pub fn update(&mut self, now: u64, used: u64, ticks: u64) {
        if now < self.at.saturating_add(STEP_NS) {
            return;
        }
        let steps = (now - self.at) / STEP_NS;
        let dt = ticks.saturating_sub(self.ticks_at);
        let du = used.saturating_sub(self.used_at).min(dt);
        let active = if dt == 0 {
            0
        } else {
            (du as u128 * FIXED_1 as u128 / dt as u128) as u64
        };
        for (a, e) in self.avgs.iter_mut().zip(EXP) {
            *a = decay(*a, power(e, steps), active);
        }
        self.at += steps * STEP_NS;
        self.used_at = used;
        self.ticks_at = ticks;
    }

    /// An average as `/proc/loadavg` shows it: whole part and hundredths
    /// (rounded to the nearest).
    pub fn figures(a: u64) -> (u64, u64) {
        let a = a + FIXED_1 / 200;
        (a >> FSHIFT, ((a & (FIXED_1 - 1)) * 100) >> FSHIFT)
    }

    /// An average as `sysinfo` gives it (16 fraction bits).
    pub fn si_load(a: u64) -> u64 {
        a << (16 - FSHIFT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn power_is_repeated_decay() {
        assert_eq!(power(EXP[0], 0), FIXED_1);
        assert_eq!(power(EXP[0], 1), EXP[0]);
        // e^(-5/60 * 12) = e^-1 = 0.3679 → 753 of 2048.
        let p = power(EXP[0], 12);
        assert!((750..=756).contains(&p), "{p}");
        assert_eq!(power(EXP[0], 10_000), 0);
    }

    #[test]
    fn nothing_changes_within_a_step() {
        let mut l = Load::new();
        l.update(STEP_NS - 1, 100, 100);
        assert_eq!(l, Load::new());
    }

    #[test]
    fn a_busy_processor_goes_to_one_and_an_idle_one_to_zero() {
        let mut l = Load::new();
        // One minute fully busy, 5 s at a time.
        for i in 1..=12 {
            l.update(i * STEP_NS, i * 500, i * 500);
        }
        let (i, f) = Load::figures(l.avgs[0]);
        // 1 - e^-1 = 0.63.
        assert_eq!((i, f), (0, 63));
        // An hour busy at once: the 1 minute average is 1.00.
        l.update(732 * STEP_NS, 732 * 500, 732 * 500);
        assert_eq!(Load::figures(l.avgs[0]), (1, 0));
        assert_eq!(Load::figures(l.avgs[2]), (0, 98));
        assert_eq!(Load::si_load(l.avgs[0]), 65536);
        // Then an idle hour.
        l.update(1452 * STEP_NS, 732 * 500, 1452 * 500);
        assert_eq!(Load::figures(l.avgs[0]), (0, 0));
    }

    #[test]
    fn half_busy_is_one_half() {
        let mut l = Load::new();
        l.update(720 * STEP_NS, 360 * 500, 720 * 500);
        assert_eq!(Load::figures(l.avgs[0]), (0, 50));
        // A partial step waits for the next reading.
        l.update(720 * STEP_NS + 1, 720 * 500, 720 * 500);
        assert_eq!(Load::figures(l.avgs[0]), (0, 50));
    }

    #[test]
    fn readings_out_of_order_do_not_panic() {
        let mut l = Load::new();
        l.update(10 * STEP_NS, 100, 50);
        l.update(20 * STEP_NS, 0, 0);
        l.update(u64::MAX, u64::MAX, u64::MAX);
        assert!(l.avgs.iter().all(|&a| a <= FIXED_1));
    }
}
