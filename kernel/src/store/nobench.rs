//! What a user's kernel has in place of `bench.rs` (the store's benchmark
//! measurements, which only the test kernel, built with the `testing`
//! feature, has): the same names, measuring nothing. `bench_restart` and
//! `bench_raw` on the command line are reported and ignored at boot
//! (`main.rs`), and the checkpoint key's `RAW_WRITE` is `NO_SUCH_ORDER`,
//! as it is in the test kernel without `bench_raw`. Each is empty or
//! constant, so the hooks in the store and the scheduler compile to nothing.

use crate::invoke::message::Msg;
use crate::kernel::Kernel;
use crate::kobj::{After, Reply};
use stet_abi::code::Code;

/// Disk tags of raw writes (above the journal's); none is ever issued.
pub const TAG: u64 = 2 << 32;

/// Nothing to measure from.
#[inline(always)]
pub fn mark(_: &mut Kernel) -> (u64, u64) {
    (0, 0)
}

/// No restart measurement.
#[inline(always)]
pub fn restarted(_: &mut Kernel, _: (u64, u64)) {}

/// No restart measurement.
#[inline(always)]
pub fn resuming(_: &mut Kernel) {}

/// No raw write uses the log.
#[inline(always)]
pub fn busy(_: &Kernel) -> bool {
    false
}

/// No raw request is ever issued, so none completes.
#[inline(always)]
pub fn completed(_: &mut Kernel, _: bool) {}

/// The checkpoint key's `RAW_WRITE`: not in this kernel.
pub fn raw_write(_: &mut Kernel, _: usize, _: &Msg, r: &mut Reply) -> After {
    r.fail(Code::NoSuchOrder);
    After::Continue
}
