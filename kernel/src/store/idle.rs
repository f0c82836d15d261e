//! The checkpoint key's `WAIT_IDLE`: park the invoker until the checkpoint
//! writer is idle (the last checkpoint has migrated home, none is asked
//! for, no raw write runs). Benchmarks use it to start from a quiet disk;
//! it is part of the ABI of every kernel, so it is not in `bench.rs`
//! (which only the test kernel has).

use crate::kernel::Kernel;
use crate::kobj::{After, Reply};
use stet_abi::code::Code;

/// `wake_at` of a domain waiting for the writer to be idle or for its raw
/// write (below `WAKE_ON_COMMIT`: the system does not count as idle while
/// one waits).
pub const WAKE_ON_IDLE: u64 = u64::MAX - 3;

/// Whether the checkpoint writer is idle and no checkpoint is asked for.
pub fn writer_idle(k: &Kernel) -> bool {
    k.store.w.is_idle() && !k.store.requested && !super::bench::busy(k)
}

/// The writer went idle, or a raw write ended: waiters ask again.
pub fn wake(k: &mut Kernel) {
    super::wake(k, WAKE_ON_IDLE);
}

/// Parks `ci` to re-execute its invocation with data words `w0`, `w1`
/// once the writer is idle.
pub fn park(k: &mut Kernel, ci: usize, w0: u64, w1: u64) -> After {
    crate::kobj::park(k, ci, w0, w1, WAKE_ON_IDLE)
}

/// The checkpoint key's `WAIT_IDLE`.
pub fn wait(k: &mut Kernel, ci: usize, r: &mut Reply) -> After {
    if !k.store.persistent() {
        r.fail(Code::IoError);
        return After::Continue;
    }
    if writer_idle(k) {
        return After::Continue;
    }
    park(k, ci, 0, 0)
}
