//! The policy's rules, exactly, and properties over random failure times.

use super::*;
use proptest::prelude::*;

const MS: u64 = 1_000_000;

#[test]
fn back_off_doubles_to_the_cap_and_resets_after_a_stable_run() {
    let p = Policy {
        rate_max: 16,
        ..Policy::DEFAULT
    };
    let mut r = Record::new(0);
    let mut now = 10 * MS;
    let mut delays = std::vec::Vec::new();
    for _ in 0..12 {
        match r.on_failure(now, &p, Failure::Crash) {
            Decision::RestartAt(t) => {
                delays.push((t - now) / MS);
                r.on_restarted(t);
                now = t + MS;
            }
            d => panic!("{d:?}"),
        }
    }
    // 1, 2, 4, … ms, capped at 1000 ms; the rate cap (16 in 1 s) never
    // bites because the delays spread the restarts out.
    assert_eq!(delays, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000]);
    // Up for a second: healthy again.
    let later = now + 1000 * MS;
    assert_eq!(
        r.on_failure(later, &p, Failure::Hang),
        Decision::RestartAt(later + MS)
    );
    assert_eq!(r.restarts, 12);
}

#[test]
fn a_service_that_crashes_at_start_up_is_held_by_the_rate_cap() {
    let p = Policy {
        backoff_base_ns: 0,
        ..Policy::DEFAULT
    };
    let mut r = Record::new(0);
    let mut now = 0;
    let mut restarts = 0;
    let held = loop {
        match r.on_failure(now, &p, Failure::Crash) {
            Decision::RestartAt(t) => {
                r.on_restarted(t);
                restarts += 1;
                now = t + 100_000;
            }
            d => break d,
        }
    };
    assert_eq!(held, Decision::HoldRateCap);
    assert_eq!(restarts, 8);
    // Once the window has passed it may be restarted again.
    assert!(matches!(
        r.on_failure(now + 1000 * MS, &p, Failure::Crash),
        Decision::RestartAt(_)
    ));
}

#[test]
fn rate_max_zero_is_no_rate_cap() {
    let p = Policy {
        backoff_base_ns: 0,
        rate_max: 0,
        ..Policy::DEFAULT
    };
    let mut r = Record::new(0);
    // A thousand restarts at the same instant (a coarse clock): none held.
    for _ in 0..1000 {
        assert_eq!(r.on_failure(7, &p, Failure::Crash), Decision::RestartAt(7));
        r.on_restarted(7);
    }
    assert_eq!(r.restarts, 1000);
}

#[test]
fn hold_policy_never_restarts() {
    let p = Policy {
        restart: false,
        ..Policy::DEFAULT
    };
    let mut r = Record::new(5);
    assert_eq!(r.on_failure(6, &p, Failure::Exit), Decision::HoldByPolicy);
    assert_eq!(r.restarts, 0);
}

proptest! {
    #[test]
    fn restarts_respect_the_rate_cap_and_the_back_off(
        gaps in proptest::collection::vec(0u64..400 * MS, 1..60),
        base in 0u64..20 * MS,
        cap in 0u64..500 * MS,
        rate_max in 1u32..=16,
    ) {
        let p = Policy { restart: true, backoff_base_ns: base, backoff_cap_ns: cap,
            stable_ns: 300 * MS, rate_max, rate_window_ns: 1000 * MS };
        let mut r = Record::new(0);
        let mut now = 0u64;
        let mut starts: std::vec::Vec<u64> = std::vec::Vec::new();
        for g in gaps {
            now += g;
            match r.on_failure(now, &p, Failure::Crash) {
                Decision::RestartAt(t) => {
                    prop_assert!(t >= now && t - now <= cap);
                    let in_window = starts.iter().filter(|&&s| t.saturating_sub(s) < 1000 * MS).count();
                    // The decision was made at `now` <= t, so at most
                    // rate_max restarts lie within the window before it.
                    prop_assert!(in_window <= rate_max as usize);
                    r.on_restarted(t);
                    starts.push(t);
                    now = t;
                }
                Decision::HoldRateCap => {
                    let in_window = starts.iter().filter(|&&s| now - s < 1000 * MS).count();
                    prop_assert!(in_window >= rate_max as usize);
                }
                Decision::HoldByPolicy => prop_assert!(false),
            }
        }
        prop_assert_eq!(r.restarts as usize, starts.len());
    }
}
