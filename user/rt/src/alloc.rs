//! A growing heap for servers whose tables grow with their clients (the
//! UNIX file-system domain's open files, pipes, parked calls, processes):
//! a global allocator over the heap's area, `HEAP_START` to
//! `HEAP_START + HEAP_SIZE`. No page is there at first; the domain's
//! segment keeper (`heapkeeper`) puts fresh zero pages from the server's
//! space bank wherever the allocator first touches, so memory is bought
//! from the bank as the tables grow, and the bank's limit is the
//! server's. Past `HEAP_SIZE` an allocation fails (`try_reserve` gives the
//! caller an error to answer with, never a fault).
//!
//! A program installs it with [`global_heap!`](crate::global_heap); the first allocation
//! claims the heap (`mem::claim`), so it can never also be used as shared
//! words or to carry a value. The allocator is `linked_list_allocator`'s
//! first-fit list, which touches the area from the bottom up: the pages a
//! table has never reached are never bought.
#![allow(unsafe_code)]

use core::alloc::{GlobalAlloc, Layout};
use core::sync::atomic::{AtomicBool, Ordering};
use linked_list_allocator::LockedHeap;
use stet_abi::layout::{HEAP_SIZE, HEAP_START};

/// The allocator [`global_heap!`](crate::global_heap) installs.
pub struct GrowingHeap {
    heap: LockedHeap,
    started: AtomicBool,
}

impl GrowingHeap {
    /// An allocator that has not touched the heap yet.
    pub const fn new() -> GrowingHeap {
        GrowingHeap {
            heap: LockedHeap::empty(),
            started: AtomicBool::new(false),
        }
    }

    fn start(&self) {
        if self.started.load(Ordering::Relaxed) {
            return;
        }
        crate::mem::claim(crate::mem::Use::Alloc);
        self.started.store(true, Ordering::Relaxed);
        // SAFETY: the area is the heap's root slot, which holds no Rust
        // object of this program (`mem`'s module doc) and is now claimed
        // for this allocator alone, so nothing else reads or writes it; its
        // pages appear on first touch through the segment keeper (without
        // one, the first touch stops the domain: no code runs on with an
        // invalid reference). Each domain runs one thread, so `init` runs
        // once, before any allocation.
        unsafe {
            self.heap
                .lock()
                .init(HEAP_START as *mut u8, HEAP_SIZE as usize)
        };
    }

    /// Bytes handed out now.
    pub fn used(&self) -> usize {
        self.heap.lock().used()
    }
}

impl Default for GrowingHeap {
    fn default() -> Self {
        Self::new()
    }
}

// SAFETY: delegates to `LockedHeap`, whose `GlobalAlloc` is sound once it
// is initialised over memory nobody else uses (`start`, before every
// allocation and deallocation: a pointer to free was allocated after it).
unsafe impl GlobalAlloc for GrowingHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.start();
        // SAFETY: the caller's contract for `alloc` is passed on.
        unsafe { self.heap.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc` is passed on.
        unsafe { self.heap.dealloc(ptr, layout) }
    }
}

/// Installs [`GrowingHeap`] as the program's global allocator, named
/// `HEAP` (its `used` says how much of it is in use).
#[macro_export]
macro_rules! global_heap {
    () => {
        #[global_allocator]
        static HEAP: $crate::alloc::GrowingHeap = $crate::alloc::GrowingHeap::new();
    };
}
