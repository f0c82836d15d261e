//! Per-CPU data, reached through the GS base while in the kernel.
//!
//! The entry paths read three fields with `gs:[offset]`: the kernel stack
//! top, the top of the current program's register frame (where the entry
//! path saves user registers), and a scratch slot for the user stack pointer.
//! The offsets are taken with `offset_of!` so the assembly cannot drift from
//! the struct.

use super::kcell::KCell;
use core::mem::offset_of;

/// Per-CPU state. `repr(C)` because assembly reads it.
#[repr(C)]
pub struct PerCpu {
    /// This structure's own address (for `gs:[0]` tricks later).
    pub self_ptr: u64,
    /// Top of this CPU's kernel stack: every trap starts here, empty.
    pub kstack_top: u64,
    /// One past the end of the current program's saved-register frame.
    pub frame_top: u64,
    /// Scratch: the user `rsp` during `syscall` entry.
    pub user_rsp: u64,
    /// Current program's index (for fault reports), or `u64::MAX`.
    pub current: u64,
    /// Current domain's root-node identity, for fault reports.
    pub current_oid: u64,
}

/// `gs` offset of [`PerCpu::kstack_top`].
pub const KSTACK_TOP: usize = offset_of!(PerCpu, kstack_top);
/// `gs` offset of [`PerCpu::frame_top`].
pub const FRAME_TOP: usize = offset_of!(PerCpu, frame_top);
/// `gs` offset of [`PerCpu::user_rsp`].
pub const USER_RSP: usize = offset_of!(PerCpu, user_rsp);

/// The boot CPU's data. (SMP: one per CPU.)
pub static BSP: KCell<PerCpu> = KCell::new(PerCpu {
    self_ptr: 0,
    kstack_top: 0,
    frame_top: 0,
    user_rsp: 0,
    current: u64::MAX,
    current_oid: 0,
});

/// Installs `BSP` as this CPU's GS base (kernel side) and records the stack.
///
/// # Safety
/// Boot, once, before any trap; `kstack_top` is the top of the kernel
/// stack (the entry paths switch to it).
pub(in crate::arch) unsafe fn init(kstack_top: u64) {
    let p = BSP.as_ptr();
    // SAFETY: boot, single CPU, no trap can run yet; we write plain fields.
    unsafe {
        (*p).self_ptr = p as u64;
        (*p).kstack_top = kstack_top;
    }
    // SAFETY: `BSP` is a static: it lives as long as the kernel.
    unsafe { super::cpu::set_gs_bases(p as u64, 0) };
}

/// Records which domain runs next: its frame (for the entry paths) and
/// identity (context index and root oid, for fault reports).
///
/// # Safety
/// As for [`gdt::set_rsp0`](super::gdt::set_rsp0): `frame_top` is one past
/// a `TrapFrame` that stays put until the next call (`syscall` saves the
/// user registers below it).
pub(in crate::arch) unsafe fn set_current(index: usize, frame_top: u64, oid: u64) {
    let p = BSP.as_ptr();
    // SAFETY: the kernel is single-threaded with interrupts off; the entry
    // paths read these fields only after the next trap, by which time the
    // writes are complete.
    unsafe {
        (*p).frame_top = frame_top;
        (*p).current = index as u64;
        (*p).current_oid = oid;
    }
}

/// One past the end of the current domain's frame.
pub fn frame_top() -> u64 {
    // SAFETY: a plain read of a field written by `set_current`.
    unsafe { (*BSP.as_ptr()).frame_top }
}

/// The current domain (context index, root oid) for a fault report, if any.
pub fn current() -> Option<(u64, u64)> {
    let p = BSP.as_ptr();
    // SAFETY: plain reads of fields written by `set_current`.
    unsafe {
        let idx = (*p).current;
        (idx != u64::MAX).then(|| (idx, (*p).current_oid))
    }
}
