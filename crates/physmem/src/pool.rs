//! The frame pool: a fixed-capacity stack of free 4 KiB frames.
//!
//! Its storage is a slice the kernel carves from boot memory before sealing
//! the boot allocator, one `u32` frame number per frame it will ever manage,
//! so pushing a freed frame can never fail for lack of space.

use crate::range::Range;
use crate::FRAME_SIZE;

/// A physical frame number (physical address / 4096).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct FrameNumber(pub u32);

impl FrameNumber {
    /// The frame's physical address.
    pub const fn addr(self) -> u64 {
        self.0 as u64 * FRAME_SIZE
    }
}

/// Errors from [`FramePool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolError {
    /// The storage slice cannot hold every frame of the given ranges.
    StorageTooSmall,
    /// A frame lies above the 16 TiB that a `u32` frame number can name.
    AddressTooHigh,
    /// A frame returned to the pool was never part of it, or is already free.
    NotOwned,
}

/// Free-frame stack over caller-provided storage.
#[derive(Debug)]
pub struct FramePool<'a> {
    stack: &'a mut [u32],
    free: usize,
    capacity: usize,
    low: u32,
    high: u32,
}

impl<'a> FramePool<'a> {
    /// Number of frames in `ranges` (the storage a pool over them needs).
    pub fn frames_in(ranges: &[Range]) -> usize {
        ranges.iter().map(|r| (r.len() / FRAME_SIZE) as usize).sum()
    }

    /// A pool holding every whole frame in `ranges`, all free. Frames are
    /// handed out lowest first.
    pub fn new(storage: &'a mut [u32], ranges: &[Range]) -> Result<Self, PoolError> {
        let n = Self::frames_in(ranges);
        if storage.len() < n {
            return Err(PoolError::StorageTooSmall);
        }
        let mut i = 0;
        let (mut low, mut high) = (u32::MAX, 0u32);
        // Push highest first so that pops return low frames first.
        for r in ranges.iter().rev() {
            let first = r.start.div_ceil(FRAME_SIZE);
            let last = r.end / FRAME_SIZE;
            for f in (first..last).rev() {
                let f = u32::try_from(f).map_err(|_| PoolError::AddressTooHigh)?;
                storage[i] = f;
                low = low.min(f);
                high = high.max(f);
                i += 1;
            }
        }
        Ok(FramePool {
            stack: storage,
            free: i,
            capacity: i,
            low,
            high,
        })
    }

    /// Takes a free frame, or `None` when every frame is in use.
    pub fn alloc(&mut self) -> Option<FrameNumber> {
        if self.free == 0 {
            return None;
        }
        self.free -= 1;
        Some(FrameNumber(self.stack[self.free]))
    }

    /// Returns a frame to the pool. Rejects a frame outside the pool's span
    /// or a push past capacity (a double free); the check is cheap, and a
    /// double free would otherwise hand one frame to two owners.
    pub fn free(&mut self, f: FrameNumber) -> Result<(), PoolError> {
        if self.free >= self.capacity || f.0 < self.low || f.0 > self.high {
            return Err(PoolError::NotOwned);
        }
        self.stack[self.free] = f.0;
        self.free += 1;
        Ok(())
    }

    /// Free frames.
    pub fn free_count(&self) -> usize {
        self.free
    }

    /// Frames the pool manages.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn hands_out_each_frame_once() {
        let ranges = [Range::new(0x1000, 0x4000), Range::new(0x10000, 0x12000)];
        let mut st = [0u32; 5];
        let mut p = FramePool::new(&mut st, &ranges).unwrap();
        assert_eq!(p.capacity(), 5);
        let got: Vec<u32> = (0..5).map(|_| p.alloc().unwrap().0).collect();
        assert_eq!(got, vec![1, 2, 3, 0x10, 0x11]);
        assert_eq!(p.alloc(), None);
        p.free(FrameNumber(2)).unwrap();
        assert_eq!(p.alloc(), Some(FrameNumber(2)));
    }

    #[test]
    fn rejects_foreign_frames_and_overflow() {
        let mut st = [0u32; 2];
        let mut p = FramePool::new(&mut st, &[Range::new(0x2000, 0x4000)]).unwrap();
        assert_eq!(p.free(FrameNumber(9)), Err(PoolError::NotOwned));
        assert_eq!(p.free(FrameNumber(2)), Err(PoolError::NotOwned)); // already free: pool full
        let mut small = [0u32; 1];
        assert_eq!(
            FramePool::new(&mut small, &[Range::new(0, 0x2000)]).unwrap_err(),
            PoolError::StorageTooSmall
        );
    }

    proptest! {
        #[test]
        fn alloc_free_never_duplicates(ops in proptest::collection::vec(any::<bool>(), 0..200)) {
            let mut st = [0u32; 16];
            let mut p = FramePool::new(&mut st, &[Range::new(0, 16 * 4096)]).unwrap();
            let mut held: Vec<FrameNumber> = Vec::new();
            for op in ops {
                if op {
                    if let Some(f) = p.alloc() {
                        prop_assert!(!held.contains(&f));
                        held.push(f);
                    } else {
                        prop_assert_eq!(held.len(), 16);
                    }
                } else if let Some(f) = held.pop() {
                    p.free(f).unwrap();
                }
                prop_assert_eq!(p.free_count() + held.len(), 16);
            }
        }
    }
}
