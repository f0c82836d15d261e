//! A value a domain carries to a copy of itself. A UNIX keeper forks by
//! building a new domain that shares its text and gets a copy of its heap
//! pages; the copy starts at `_start` with a fresh stack and finds the
//! keeper's whole state here, at `layout::HEAP_START`, as the original
//! left it.
//!
//! [`place`] writes the value (with a header naming its type's size and a
//! tag the program chooses) and hands out the only reference to it;
//! [`resume`] hands it out again in the copy, after checking the header.
//! Either may be called once per domain life.
#![allow(unsafe_code)]

use core::sync::atomic::{AtomicBool, Ordering};
use stet_abi::layout::HEAP_START;

/// The header before the value.
#[repr(C)]
struct Header {
    tag: u64,
    size: u64,
}

/// Where the value starts (the header is 16 bytes; 64 keeps any alignment
/// a value of a kernel-free program needs).
const VALUE: u64 = HEAP_START + 64;

static TAKEN: AtomicBool = AtomicBool::new(false);

/// The address of the guard (a byte of this program's data): a copy of the
/// data pages made for a new domain clears it, so the copy may `resume`.
pub fn guard_addr() -> u64 {
    core::ptr::addr_of!(TAKEN) as u64
}

fn take() {
    // The heap is this value's alone (`mem` hands it out once, to one use),
    // and a second reference would alias the first.
    crate::mem::claim(crate::mem::Use::Carry);
    assert!(!TAKEN.swap(true, Ordering::Relaxed), "carry: taken twice");
}

/// Writes `v` at the heap's start (the heap pages must exist: the image's
/// `heap_pages`, or the pages a forking parent copied) → the only
/// reference to it.
pub fn place<T>(tag: u64, v: T) -> &'static mut T {
    take();
    assert!(core::mem::align_of::<T>() <= 64);
    // HEAP_START..+64+size is heap memory no Rust object uses
    // (programs live at 0x400000, stacks below STACK_TOP) and that `take`
    // claimed for this value alone (`mem`); it is aligned
    // (HEAP_START is page-aligned, VALUE 64-aligned); `take` makes this
    // the only reference ever handed out in this domain. A missing page
    // faults the domain at the first write instead of letting it run on.
    // SAFETY: unused, aligned memory; the only reference (above).
    unsafe {
        (HEAP_START as *mut Header).write(Header {
            tag,
            size: core::mem::size_of::<T>() as u64,
        });
        let p = VALUE as *mut T;
        p.write(v);
        &mut *p
    }
}

/// The value this domain itself placed or resumed, once more, after a
/// failure started it again at `_start` (a panic: `start::restart_on_panic`;
/// a fault its keeper answered so: `start::fault_restarted`): the frames
/// that held the first reference were abandoned with the old stack, so
/// this is again the only one. `None` if the domain has not failed, or the
/// header does not match.
pub fn reclaim_after_failure<T>(tag: u64) -> Option<&'static mut T> {
    if crate::start::failures() == 0 || !crate::mem::carried() {
        return None;
    }
    TAKEN.store(false, Ordering::Relaxed);
    resume(tag)
}

/// The value a parent placed with the same `tag` and type, in a domain
/// whose heap pages are a copy of the parent's → the only reference to
/// it; `None` if the header does not match.
pub fn resume<T>(tag: u64) -> Option<&'static mut T> {
    take();
    // SAFETY: reading the header's two words: any bits are valid u64s.
    let h = unsafe { (HEAP_START as *const Header).read() };
    if h.tag != tag || h.size != core::mem::size_of::<T>() as u64 {
        return None;
    }
    // The header says this program's `place::<T>` (same binary, same
    // layout: the tag names the program and its version) wrote a valid T
    // here, and the copy has the parent's bytes exactly.
    // SAFETY: a valid T written by `place`; the only reference (`take`).
    Some(unsafe { &mut *(VALUE as *mut T) })
}
