//! `KCell`: a global that the kernel hands out as `&mut` once per trap.
//!
//! The kernel is single-threaded per CPU and runs with interrupts disabled
//! (the interrupt model: every entry starts on an empty kernel stack and
//! leaves by returning to user mode, never to a half-finished kernel call).
//! So at any moment at most one trap handler is active, and it is the only
//! holder of the `&mut`. The one exception, a fault *inside* the kernel, is
//! handled by code that never calls [`KCell::get`].

use core::cell::UnsafeCell;

/// Holder for a kernel-global value.
pub struct KCell<T>(UnsafeCell<T>);

// SAFETY: Stet runs one CPU today, with interrupts disabled in the kernel;
// access is serialised by the trap discipline described above. (SMP will
// give each CPU its own cells or a lock; this type is where that changes.)
unsafe impl<T> Sync for KCell<T> {}

impl<T> KCell<T> {
    /// A cell holding `v`.
    pub const fn new(v: T) -> Self {
        KCell(UnsafeCell::new(v))
    }

    /// The value, mutably.
    ///
    /// # Safety
    /// The caller must be a trap entry point (or boot, before the first
    /// trap) and must not call this again while the returned reference lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn get(&self) -> &mut T {
        // SAFETY: exclusivity is the caller's contract (see the module doc).
        unsafe { &mut *self.0.get() }
    }

    /// A raw pointer to the value (for the fault path, which only reads).
    pub const fn as_ptr(&self) -> *mut T {
        self.0.get()
    }
}
