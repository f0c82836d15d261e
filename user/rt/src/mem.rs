//! The heap: the memory the image builder (or a segment keeper) puts in
//! root slot 1 of the domain's address space, from `layout::HEAP_START`.
//! No Rust object of the program lives there (its image is in slot 0, its
//! stack in slot 7), so the runtime hands the heap out whole, to one user:
//!
//! * as **shared words** ([`Heap`], [`heap_words`]): a slice of atomic
//!   words, and single-byte loads and stores for tests and benchmarks of
//!   demand-zero memory. Atomic words because others see this memory
//!   while the program runs: a checkpoint copies it at any instruction, a
//!   checker reads it through a segment key, a restart or the journal may
//!   put older or newer contents back. Relaxed loads and stores compile to
//!   plain moves; the orderings the programs need are explicit.
//! * or as **one value carried to a copy of the domain** (`crate::carry`),
//!   to which the runtime hands out a `&mut`;
//! * or as **a growing heap** (`crate::alloc`), the global allocator of a
//!   server whose tables grow from its bank.
//!
//! Any two would alias, so whichever is claimed first is the heap's use
//! for the rest of the domain's life, and a claim of the other panics: a
//! program bug found at its first run, never a silent alias.
#![allow(unsafe_code)]

use core::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use stet_abi::layout::HEAP_START;

/// Words in a page.
pub const PAGE_WORDS: usize = 512;

/// Bytes of the heap's root slot (2^44): every heap address is
/// `HEAP_START + offset` with `offset` below this.
pub const HEAP_SPAN: u64 = 1 << 44;

/// What the heap is used as (`claim`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub(crate) enum Use {
    /// Shared words ([`Heap`]).
    Words = 1,
    /// A value carried to a copy (`crate::carry`).
    Carry = 2,
    /// A growing heap (`crate::alloc`).
    Alloc = 3,
}

static CLAIM: AtomicU8 = AtomicU8::new(0);

/// Claims the heap for `u`: panics if it is already claimed for another
/// use. (Each domain runs one thread, so a relaxed swap is enough.)
pub(crate) fn claim(u: Use) {
    let old = CLAIM.swap(u as u8, Ordering::Relaxed);
    assert!(
        old == 0 || old == u as u8,
        "heap: claimed as {:?}, then as another use",
        u
    );
}

/// Whether `crate::carry` keeps a value in the heap.
pub(crate) fn carried() -> bool {
    CLAIM.load(Ordering::Relaxed) == Use::Carry as u8
}

/// The heap as shared words: proof that `claim` made it so ([`Heap::claim`]).
#[derive(Clone, Copy, Debug)]
pub struct Heap(());

impl Heap {
    /// Claims the heap as shared words (panics if `carry` has it).
    pub fn claim() -> Heap {
        claim(Use::Words);
        Heap(())
    }

    /// The first `pages` pages, as words. Pages the image (or segment
    /// keeper) does not provide fault at the first touch, which stops the
    /// domain there.
    pub fn words(self, pages: u64) -> &'static [AtomicU64] {
        let len = (pages.min(HEAP_SPAN / 4096) as usize) * PAGE_WORDS;
        // The range lies in root slot 1 (clamped above), which holds no
        // Rust object (module doc) and is claimed as shared words, so no
        // `&mut` to it exists; it is 8-aligned, and every bit pattern is a
        // valid AtomicU64. Shared references to atomics may alias, so
        // handing out several is sound. A missing page faults at the first
        // touch, so no code runs on with an invalid reference.
        // SAFETY: unaliased-by-&mut, aligned memory where any bits are valid.
        unsafe { core::slice::from_raw_parts(HEAP_START as *const AtomicU64, len) }
    }

    /// Stores `v` at heap byte `offset` with one `mov` (the page-fault
    /// benchmark times exactly that instruction and its fault). An
    /// `offset` past the heap's slot panics; one with no page behind it
    /// faults, and the domain's keeper decides.
    #[inline(always)]
    pub fn store_byte(self, offset: u64, v: u8) {
        assert!(offset < HEAP_SPAN, "heap: byte {offset:#x} past the heap");
        let a = HEAP_START + offset;
        // SAFETY: a byte of the heap's slot (checked), which no Rust object
        // uses and which is claimed as shared memory: others reach it only
        // through atomics (`words`) or these single-byte accesses.
        unsafe {
            core::arch::asm!("mov byte ptr [{a}], {v}", a = in(reg) a, v = in(reg_byte) v, options(nostack))
        };
    }

    /// Loads heap byte `offset` with one `mov` (see [`Heap::store_byte`]).
    #[inline(always)]
    pub fn load_byte(self, offset: u64) -> u8 {
        assert!(offset < HEAP_SPAN, "heap: byte {offset:#x} past the heap");
        let a = HEAP_START + offset;
        let v: u8;
        // SAFETY: as in `store_byte`; a load.
        unsafe {
            core::arch::asm!("mov {v}, byte ptr [{a}]", a = in(reg) a, v = out(reg_byte) v, options(nostack, readonly))
        };
        v
    }
}

/// The first `pages` pages of the heap, as words (claims it: [`Heap`]).
pub fn heap_words(pages: u64) -> &'static [AtomicU64] {
    Heap::claim().words(pages)
}
