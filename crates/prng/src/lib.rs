//! Small seeded pseudo-random generators, one copy for every program that
//! needs one: the fuzzer (`user/tests`, whose printed seed must replay the
//! same invocations), the UNIX keeper (`AT_RANDOM`, `getrandom`) and
//! `/dev/urandom` in `unixd`, the crash tests' kill moments in the harness,
//! and the store tests' data patterns (`stet-storecheck`). None is for
//! cryptography.
//!
//! * [`XorShift64Star`]: Marsaglia's xorshift with Vigna's shifts
//!   (12, 25, 27) and an output multiply; one word of state, fast.
//! * [`SplitMix64`]: a counter advanced by the golden ratio and passed
//!   through [`mix`]; its outputs are published, so the harness can pin
//!   them.
#![no_std]

#[cfg(test)]
extern crate std;

/// 2^64 / φ, odd: the golden-ratio increment of SplitMix64, also used to
/// spread small seeds over the whole word.
pub const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// The SplitMix64 finalizer: a bijection on `u64` that spreads every input
/// bit over the whole word, with `mix(0) == 0`. Distinct inputs give
/// distinct words, so patterns built on it never repeat.
pub const fn mix(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// xorshift64*: 64 bits of state, never zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct XorShift64Star(u64);

impl XorShift64Star {
    /// A generator whose whole future is fixed by `seed`. Any seed will
    /// do (a small counter or the time-stamp counter): it is multiplied by
    /// [`GOLDEN`] so that nearby seeds start far apart, and made odd so
    /// the state is never zero.
    pub const fn new(seed: u64) -> Self {
        XorShift64Star(seed.wrapping_mul(GOLDEN) | 1)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// In `0..n` (`n > 0`), by remainder: slightly favours small results
    /// when `n` is not a power of two, which a fuzzer does not mind (and
    /// a recorded seed's sequence depends on it).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Fills `out` with random bytes, eight from each word.
    pub fn fill(&mut self, out: &mut [u8]) {
        for chunk in out.chunks_mut(8) {
            let w = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
    }
}

/// SplitMix64 (Steele, Lea and Flood, 2014): a 64-bit counter advanced by
/// [`GOLDEN`] and passed through [`mix`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator whose whole future is fixed by `seed` (any value).
    pub const fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix(self.0)
    }
}

#[cfg(test)]
mod tests;
