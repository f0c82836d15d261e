//! The one system call: invoke a key (docs/ABI.md lists every register).
//!
//! Every invocation is atomic (Fluke): it either completes — the message
//! is delivered and the invoker's state changes — or nothing changes and
//! the invoker either gets an error code or is parked with its `rip` back on
//! the `syscall`, to re-execute it when it is woken. Nothing about an
//! invocation in progress is kept anywhere but in the invoker's registers.
//!
//! * `fast.rs` — the short paths: invoking the void key, and a words-only
//!   call or return between two prepared domains.
//! * `message.rs` — the general path: decoding, delivering strings and
//!   keys, resume keys, stalling.
//! * `kobj/` (one file per object type) — what kernel objects do with the
//!   orders they receive.

mod fast;
pub mod message;

use crate::fault;
use crate::kernel::Kernel;
use stet_abi::domain::state;

/// Entered from `syscall`: the invoker's registers are in its frame.
pub fn on_syscall(k: &mut Kernel) -> ! {
    let Some(ci) = k.current else {
        crate::fatal(format_args!("syscall with no current domain"));
    };
    if k.ctxs[ci].flags & state::FOREIGN != 0 {
        // A foreign (Linux ABI) domain's `syscall` belongs to its keeper,
        // unless the keeper left the answer with the kernel.
        fast::try_answer(k, ci);
        fast::try_syscall_fault(k, ci);
        fault::syscall_fault(k, ci)
    }
    fast::try_fast(k, ci);
    crate::store::memory::check_pressure(k);
    if crate::store::memory::low(k) && !crate::store::memory::make_room(k, ci) {
        // Only dirty objects left: wait for the checkpoint that makes
        // them evictable, then invoke again.
        k.ctxs[ci].frame.rip -= 2;
        crate::sched::schedule(k)
    }
    message::invoke(k, ci)
}
