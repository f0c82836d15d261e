//! Memory the image builder put at a fixed place in the domain's address
//! space, as Rust values: the heap (`heap_pages` in the domain spec, from
//! `layout::HEAP_START`) as a slice of atomic words.
//!
//! Atomic words because others see this memory while the program runs: a
//! checkpoint copies it at any instruction, a checker reads it through a
//! segment key, a restart or the journal may put older or newer contents
//! back. Relaxed loads and stores compile to plain moves; the orderings
//! the programs need are explicit.
#![allow(unsafe_code)]

use core::sync::atomic::AtomicU64;
use stet_abi::layout::HEAP_START;

/// Words in a page.
pub const PAGE_WORDS: usize = 512;

/// The first `pages` pages of the heap, as words.
pub fn heap_words(pages: u64) -> &'static [AtomicU64] {
    let len = pages as usize * PAGE_WORDS;
    // The heap area holds no Rust object (programs are linked at
    // 0x400000, the stack is below layout::STACK_TOP, both far from
    // HEAP_START), is 8-aligned, and its pages read as zero until written:
    // every bit pattern is a valid AtomicU64. Shared references to atomics
    // may alias, so handing out several is sound. The caller asks for
    // pages its image (or segment keeper) provides; a missing page faults
    // at the first touch and the domain stops there, so no code runs on
    // with an invalid reference.
    // SAFETY: memory no Rust object uses, aligned, any bits valid (above).
    unsafe { core::slice::from_raw_parts(HEAP_START as *const AtomicU64, len) }
}
