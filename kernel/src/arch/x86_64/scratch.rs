//! Two 4 KiB buffers per CPU for the kernel's own copies of message
//! strings (a kernel object's input and its answer). They live here, not
//! on the kernel stack, because a zeroed 4 KiB stack array costs about
//! 1,500 instructions to clear on every invocation of a kernel object.
//!
//! Handed out at most once per trap: every kernel entry calls [`reset`],
//! and the interrupt model guarantees that nothing from an earlier trap is
//! still running (its kernel stack was abandoned), so no earlier borrow can
//! be live.

use super::kcell::KCell;
use core::sync::atomic::{AtomicBool, Ordering};

/// The buffers.
pub struct Scratch {
    /// The string sent to a kernel object.
    pub input: [u8; 4096],
    /// The kernel object's answer string.
    pub output: [u8; 4096],
}

static SCRATCH: KCell<Scratch> = KCell::new(Scratch {
    input: [0; 4096],
    output: [0; 4096],
});
static TAKEN: AtomicBool = AtomicBool::new(false);

/// A new trap has begun: the buffers are free.
///
/// # Safety
/// Only at a trap entry (`entry.rs`), before anything else of the trap
/// runs: every reference `take` gave out before lives on an abandoned
/// kernel stack.
pub(in crate::arch) unsafe fn reset() {
    TAKEN.store(false, Ordering::Relaxed);
}

/// The buffers, once per trap (a second request in the same trap is a
/// kernel bug and panics).
pub fn take() -> &'static mut Scratch {
    assert!(
        !TAKEN.swap(true, Ordering::Relaxed),
        "scratch buffers taken twice in one trap"
    );
    // SAFETY: handed out once per trap (checked above) and every earlier
    // trap's borrows died with its abandoned stack (module doc).
    unsafe { SCRATCH.get() }
}
