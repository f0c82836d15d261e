//! Deliberate misbehaviour for the kernel self-tests (`selftest=` on the
//! command line). Each function must fault; the fault report and QEMU's
//! exit status are what the system tests check. The test kernel's only
//! (the `testing` feature).

use super::paging::{UserPerm, UserRoot};
use super::phys::FramePool;

/// Reads an unmapped kernel address (a kernel page fault).
pub fn touch_unmapped_kernel() -> u8 {
    // SAFETY: deliberately unsound-looking but harmless: the address is
    // unmapped, so the read faults and the kernel reports it and stops.
    unsafe { core::ptr::read_volatile(0xffff_ffff_ffff_f000 as *const u8) }
}

/// Address of the user page the SMEP/SMAP tests use.
pub const USER_PAGE: u64 = 0x40_0000;

/// An address space whose page at [`USER_PAGE`] holds a single `ret`.
pub struct RetPage(UserRoot);

/// Maps a user page holding `ret` at [`USER_PAGE`] and activates it.
pub fn map_user_ret_page(pool: &mut FramePool<'_>) -> Option<RetPage> {
    let root = UserRoot::new(pool)?;
    let f = pool.alloc()?;
    super::phys::zero_frame(f);
    super::phys::write_frame(f, 0, &[0xc3]);
    root.map(
        USER_PAGE,
        f,
        UserPerm {
            write: false,
            exec: true,
        },
        pool,
    )
    .ok()?;
    root.activate();
    Some(RetPage(root))
}

/// Calls the user page of `page` from ring 0. With SMEP this faults.
pub fn call_user_page(page: &RetPage) {
    page.0.activate();
    // SAFETY: the active space is `page`'s, whose page at USER_PAGE holds a
    // single `ret` (nothing else can map a `RetPage`), so even without SMEP
    // the call returns harmlessly; with SMEP the fetch faults first.
    unsafe {
        let f: extern "C" fn() = core::mem::transmute(USER_PAGE as usize);
        f();
    }
}

/// Reads the user page of `page` from ring 0 without STAC. With SMAP this
/// faults.
pub fn read_user_page(page: &RetPage) -> u8 {
    page.0.activate();
    // SAFETY: the page is mapped (`page`'s space is active) and readable;
    // only SMAP forbids this.
    unsafe { core::ptr::read_volatile(USER_PAGE as *const u8) }
}

/// The kernel stack's guard page.
pub fn stack_guard() -> u64 {
    super::boot::layout().stack_guard
}

/// Recurses until the kernel stack runs into its guard page.
#[inline(never)]
pub fn overflow_stack(depth: u64) -> u64 {
    let frame = core::hint::black_box([depth; 32]);
    if frame[7] == u64::MAX {
        return 0;
    }
    overflow_stack(frame[3] + 1).wrapping_add(frame[5])
}

/// Spins forever with interrupts disabled.
pub fn hang() -> ! {
    x86_64::instructions::interrupts::disable();
    loop {
        core::hint::spin_loop();
    }
}
