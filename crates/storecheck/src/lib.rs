//! The store tests' workloads as pure logic, shared by the user programs
//! that run them (`ckptload`, `ckptcheck`, `bigmem`) and testable on the
//! host: the power-cut workload's memory layout, data patterns and
//! invariant ([`load`]), its argument word ([`args`]), the larger-than-RAM
//! pattern ([`big`]), and the promises the workload's console lines make
//! across power cuts ([`promise`]).
#![cfg_attr(not(test), no_std)]

pub mod args;
pub mod big;
pub mod load;
pub mod promise;

/// 64-bit words in a 4 KiB page.
pub const WORDS: usize = 512;

/// The patterns' word function: the SplitMix64 finalizer, a bijection
/// (distinct inputs give distinct words, so patterns never repeat).
pub use stet_prng::mix;
