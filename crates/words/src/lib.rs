//! Storage as an array of 64-bit words. The servers built from keys (the
//! space bank, the factory) keep their books in their own heap, which the
//! single-level store makes persistent; their pure logic (`stet-bank`,
//! `stet-factory`) is written against [`Words`] so the host tests can run
//! it on a vector and the servers on the heap ([`Atomic`]).
#![no_std]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicU64, Ordering};

#[cfg(any(test, feature = "alloc"))]
extern crate alloc;

/// Storage for bookkeeping: an array of words.
pub trait Words {
    /// Word `i`.
    fn get(&self, i: usize) -> u64;
    /// Sets word `i`.
    fn set(&mut self, i: usize, v: u64);
    /// How many words there are.
    fn len(&self) -> usize;
    /// Whether there are none.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Words that others may see while the program runs (a heap a checkpoint
/// copies at any instruction: `stet_rt::mem::heap_words`). Relaxed
/// accesses compile to plain moves; the books need no ordering beyond the
/// program's own.
pub struct Atomic<'a>(pub &'a [AtomicU64]);

// Inline across crates: the books call these in every step, and a call
// each cost the space bank's alloc+free round trip 159 instructions.
impl Words for Atomic<'_> {
    #[inline]
    fn get(&self, i: usize) -> u64 {
        self.0[i].load(Ordering::Relaxed)
    }
    #[inline]
    fn set(&mut self, i: usize, v: u64) {
        self.0[i].store(v, Ordering::Relaxed)
    }
    #[inline]
    fn len(&self) -> usize {
        self.0.len()
    }
}

/// A vector of words: the books in a host test.
#[cfg(any(test, feature = "alloc"))]
impl Words for alloc::vec::Vec<u64> {
    fn get(&self, i: usize) -> u64 {
        self[i]
    }
    fn set(&mut self, i: usize, v: u64) {
        self[i] = v;
    }
    fn len(&self) -> usize {
        alloc::vec::Vec::len(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_words_read_back_what_was_set() {
        let cells = [const { AtomicU64::new(0) }; 4];
        let mut w = Atomic(&cells);
        assert_eq!((w.len(), w.is_empty()), (4, false));
        w.set(2, u64::MAX);
        w.set(0, 7);
        assert_eq!(
            [w.get(0), w.get(1), w.get(2), w.get(3)],
            [7, 0, u64::MAX, 0]
        );
        assert!(Atomic(&[]).is_empty());
    }
}
