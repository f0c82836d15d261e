//! The store tests' workloads as pure logic, shared by the user programs
//! that run them (`ckptload`, `ckptcheck`, `bigmem`) and testable on the
//! host: the power-cut workload's memory layout, data patterns and
//! invariant ([`load`]), its argument word ([`args`]), the larger-than-RAM
//! pattern ([`big`]), and the promises the workload's console lines make
//! across power cuts ([`promise`]).
#![cfg_attr(not(test), no_std)]
#![deny(unsafe_code)]

pub mod args;
pub mod big;
pub mod load;
pub mod promise;

/// 64-bit words in a 4 KiB page.
pub const WORDS: usize = 512;

/// The splitmix64 finalizer: a bijection on `u64` that spreads every input
/// bit over the whole word, with `mix(0) == 0`. Distinct inputs give
/// distinct words, so patterns built on it never repeat.
pub fn mix(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn mix_known_values() {
        assert_eq!(mix(0), 0);
        // splitmix64's published first output for seed 0 is
        // mix(0x9e3779b97f4a7c15).
        assert_eq!(mix(0x9e37_79b9_7f4a_7c15), 0xe220_a839_7b1d_cdaf);
    }

    proptest! {
        #[test]
        fn mix_is_injective_on_samples(a: u64, b: u64) {
            prop_assume!(a != b);
            prop_assert_ne!(mix(a), mix(b));
        }
    }
}
