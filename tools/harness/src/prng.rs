//! Seeded pseudo-random numbers for the crash tests: SplitMix64, so the
//! same seed gives the same kill moments and the same flush-point sample on
//! every machine and every version of every crate.

use std::collections::BTreeSet;
use stet_prng::SplitMix64;

/// The environment variable that overrides a spec's seed.
pub const SEED_ENV: &str = "STET_SEED";

/// `stet_prng`'s SplitMix64 with exact uniform draws: its outputs are
/// published and pinned there, so a seed means the same on every machine.
#[derive(Clone, Debug)]
pub struct Rng(SplitMix64);

impl Rng {
    /// A generator whose whole future is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(SplitMix64::new(seed))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `0..n` (`n > 0`), exactly: draws below the largest
    /// multiple of `n` are rejected.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "below(0)");
        // 2^64 mod n: the draws under it would favour small results.
        let reject = n.wrapping_neg() % n;
        loop {
            let x = self.next_u64();
            if x >= reject {
                return x % n;
            }
        }
    }

    /// Uniform in `0..=max`.
    pub fn up_to(&mut self, max: u64) -> u64 {
        match max.checked_add(1) {
            Some(n) => self.below(n),
            None => self.next_u64(),
        }
    }
}

/// `k` distinct indices of `0..n`, sorted: all of them if `n <= k`, else the
/// first, the last and `k - 2` others chosen uniformly by `seed` (with
/// `k == 1`, only the first).
pub fn sample(n: u64, k: u64, seed: u64) -> Vec<u64> {
    if n <= k {
        return (0..n).collect();
    }
    match k {
        0 => return Vec::new(),
        1 => return vec![0],
        _ => {}
    }
    // Floyd's algorithm: a uniform (k-2)-subset of the n-2 inner indices.
    let (m, t) = (n - 2, k - 2);
    let mut rng = Rng::new(seed);
    let mut chosen = BTreeSet::new();
    for j in m - t..m {
        let r = rng.below(j + 1);
        if !chosen.insert(r) {
            chosen.insert(j);
        }
    }
    let mut out = Vec::with_capacity(k as usize);
    out.push(0);
    out.extend(chosen.into_iter().map(|i| i + 1));
    out.push(n - 1);
    out
}

/// The seed to use: `env` (the value of `STET_SEED`, if set and not empty)
/// wins over the spec's `default`.
pub fn seed(env: Option<&str>, default: u64) -> Result<u64, String> {
    match env.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(default),
        Some(s) => {
            let parsed = match s.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => s.parse(),
            };
            parsed.map_err(|_| format!("{SEED_ENV}={s:?} is not a number"))
        }
    }
}

/// [`seed`] with the process environment.
pub fn seed_from_env(default: u64) -> Result<u64, String> {
    seed(std::env::var(SEED_ENV).ok().as_deref(), default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // The published outputs of SplitMix64 from seed 0.
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn same_seed_same_numbers() {
        let draw = |seed| {
            let mut r = Rng::new(seed);
            (0..100).map(|_| r.up_to(300)).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
        assert!(draw(7).iter().all(|&x| x <= 300));
    }

    #[test]
    fn below_is_in_range_and_covers_it() {
        let mut r = Rng::new(42);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            seen[r.below(7) as usize] += 1;
        }
        // Each of 7 values about 1000 times.
        assert!(seen.iter().all(|&c| (850..1150).contains(&c)), "{seen:?}");
        assert_eq!(Rng::new(1).below(1), 0);
        assert_eq!(Rng::new(3).up_to(0), 0);
        let mut a = Rng::new(5);
        let mut b = Rng::new(5);
        assert_eq!(a.up_to(u64::MAX), b.next_u64());
    }

    #[test]
    fn sample_takes_all_when_few() {
        assert_eq!(sample(5, 200, 1), [0, 1, 2, 3, 4]);
        assert_eq!(sample(200, 200, 1).len(), 200);
        assert!(sample(0, 200, 1).is_empty());
        assert!(sample(10, 0, 1).is_empty());
        assert_eq!(sample(10, 1, 1), [0]);
        assert_eq!(sample(10, 2, 1), [0, 9]);
    }

    #[test]
    fn sample_includes_first_and_last_and_is_seeded() {
        for seed in 0..50 {
            for (n, k) in [(201, 200), (1000, 200), (3, 2), (50, 3), (10_000, 17)] {
                let s = sample(n, k, seed);
                assert_eq!(s.len() as u64, k, "n={n} k={k} seed={seed}");
                assert_eq!(s[0], 0);
                assert_eq!(*s.last().unwrap(), n - 1);
                assert!(s.windows(2).all(|w| w[0] < w[1]), "sorted and distinct");
                assert_eq!(s, sample(n, k, seed));
            }
        }
        assert_ne!(sample(1000, 20, 1), sample(1000, 20, 2));
    }

    #[test]
    fn sample_exact_values() {
        // Pinned so a change in the algorithm (which would change what a
        // printed seed replays) is noticed.
        assert_eq!(sample(100, 6, 1), [0, 8, 19, 78, 86, 99]);
        assert_eq!(sample(1000, 5, 7), [0, 211, 406, 904, 999]);
    }

    #[test]
    fn seed_from_the_environment_wins() {
        assert_eq!(seed(None, 1), Ok(1));
        assert_eq!(seed(Some(""), 1), Ok(1));
        assert_eq!(seed(Some("42"), 1), Ok(42));
        assert_eq!(seed(Some(" 0x10 "), 1), Ok(16));
        assert_eq!(
            seed(Some("abc"), 1),
            Err("STET_SEED=\"abc\" is not a number".into())
        );
    }
}
