//! The frame pool: a fixed-capacity stack of free 4 KiB frames, and the
//! frame numbers it hands out.
//!
//! Its storage is carved by the kernel from boot memory before it seals the
//! boot allocator: a stack of one `u32` frame number per frame it will ever
//! manage, so pushing a freed frame can never fail for lack of space, and a
//! map of one byte per frame of its span saying whether the frame is free,
//! handed out, or not the pool's, so that a frame freed twice (or never the
//! pool's) is refused.
//!
//! **Frame numbers are minted, not built.** A [`FrameNumber`] can come only
//! from a pool's [`alloc`](FramePool::alloc) or from [`FrameNumber::new`],
//! and both need a `&K`: the *brand* `K` stands for the authority to name
//! physical memory. The kernel's brand is a type only its hardware layer can
//! make, so no other kernel code can turn an integer into a frame of its
//! memory (and so into a write to any physical page); host tests brand their
//! frames with a type of their own. Frame 0 is never a frame number (the
//! first MiB is firmware's), which makes `Option<FrameNumber<K>>` a `u32`.

use crate::range::Range;
use crate::FRAME_SIZE;
use core::fmt;
use core::marker::PhantomData;
use core::num::NonZeroU32;

/// A physical frame number (physical address / 4096) of brand `K`; never 0.
///
/// Only the holder of a `K` names frames. A brand whose constructor is
/// private keeps everyone else out:
///
/// ```
/// use stet_physmem::pool::FrameNumber;
/// mod hw {
///     pub struct Ram(());
///     pub fn frame(n: u32) -> Option<stet_physmem::pool::FrameNumber<Ram>> {
///         stet_physmem::pool::FrameNumber::new(n, &Ram(()))
///     }
/// }
/// assert_eq!(hw::frame(5).unwrap().addr(), 5 * 4096);
/// assert!(hw::frame(0).is_none());
/// ```
///
/// Outside `hw` there is no key to show:
///
/// ```compile_fail,E0603
/// mod hw { pub struct Ram(()); }
/// let f = stet_physmem::pool::FrameNumber::new(5, &hw::Ram(()));
/// ```
///
/// nor a way around it (the number is private):
///
/// ```compile_fail,E0603
/// mod hw { pub struct Ram(()); }
/// let f: stet_physmem::pool::FrameNumber<hw::Ram> =
///     stet_physmem::pool::FrameNumber(core::num::NonZeroU32::new(5).unwrap(), core::marker::PhantomData);
/// ```
///
/// and a pool of that brand cannot be made without one either:
///
/// ```compile_fail,E0603
/// use stet_physmem::{pool::FramePool, range::Range};
/// mod hw { pub struct Ram(()); }
/// let (mut st, mut map) = ([0u32; 8], [0u8; 8]);
/// let p = FramePool::<hw::Ram>::new(&mut st, &mut map, &[Range::new(4096, 8192)], &hw::Ram(()));
/// ```
pub struct FrameNumber<K>(NonZeroU32, PhantomData<fn() -> K>);

impl<K> FrameNumber<K> {
    /// Frame `n`, for whoever holds a `K` (the authority to name frames):
    /// `None` for 0, which is never a frame.
    pub const fn new(n: u32, _key: &K) -> Option<Self> {
        match NonZeroU32::new(n) {
            Some(n) => Some(FrameNumber(n, PhantomData)),
            None => None,
        }
    }

    /// The frame number.
    pub const fn number(self) -> u32 {
        self.0.get()
    }

    /// The frame's physical address.
    pub const fn addr(self) -> u64 {
        self.0.get() as u64 * FRAME_SIZE
    }
}

// Written out rather than derived: a derive would ask `K` for each trait,
// and a brand is only a name.
impl<K> Clone for FrameNumber<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for FrameNumber<K> {}
impl<K> PartialEq for FrameNumber<K> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<K> Eq for FrameNumber<K> {}
impl<K> PartialOrd for FrameNumber<K> {
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<K> Ord for FrameNumber<K> {
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}
impl<K> fmt::Debug for FrameNumber<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FrameNumber({:#x})", self.0)
    }
}

/// Errors from [`FramePool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PoolError {
    /// The stack cannot hold every frame of the given ranges, or the map
    /// every frame of their span ([`FramePool::frames_in`],
    /// [`FramePool::span_of`]).
    StorageTooSmall,
    /// A frame lies above the 16 TiB that a `u32` frame number can name.
    AddressTooHigh,
    /// A frame returned to the pool was never part of it, or is already free.
    NotOwned,
}

/// A frame's state in the pool's map.
const OUTSIDE: u8 = 0;
const HANDED_OUT: u8 = 1;
const FREE: u8 = 2;

/// Free-frame stack over caller-provided storage, handing out frames of
/// brand `K`.
pub struct FramePool<'a, K> {
    stack: &'a mut [u32],
    /// One byte per frame from the lowest to the highest: outside the
    /// pool (a hole between ranges), handed out, or free.
    map: &'a mut [u8],
    free: usize,
    low: u32,
    brand: PhantomData<fn() -> K>,
}

impl<K> fmt::Debug for FramePool<'_, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FramePool")
            .field("free", &self.free)
            .field("capacity", &self.stack.len())
            .field("low", &self.low)
            .finish()
    }
}

/// The frames of `r` that a pool manages (frame 0 never).
fn frames_of(r: &Range) -> core::ops::Range<u64> {
    r.start.div_ceil(FRAME_SIZE).max(1)..(r.end / FRAME_SIZE).max(1)
}

/// The lowest and highest frame of `ranges`, if any.
fn bounds(ranges: &[Range]) -> Option<(u64, u64)> {
    ranges
        .iter()
        .map(frames_of)
        .filter(|f| f.start < f.end)
        .fold(None, |b, f| match b {
            None => Some((f.start, f.end - 1)),
            Some((lo, hi)) => Some((lo.min(f.start), hi.max(f.end - 1))),
        })
}

impl<'a, K> FramePool<'a, K> {
    /// Number of frames in `ranges` that a pool over them manages (the
    /// length its stack needs).
    pub fn frames_in(ranges: &[Range]) -> usize {
        ranges
            .iter()
            .map(|r| {
                let f = frames_of(r);
                f.end.saturating_sub(f.start) as usize
            })
            .sum()
    }

    /// Frames from the lowest to the highest of `ranges` (the length its
    /// map needs).
    pub fn span_of(ranges: &[Range]) -> usize {
        bounds(ranges).map_or(0, |(lo, hi)| (hi - lo + 1) as usize)
    }

    /// A pool holding every whole frame in `ranges` (but frame 0), all
    /// free, handed out lowest first, over `stack` (`frames_in` long) and
    /// `map` (`span_of` long). Its creator holds the brand's key: it
    /// vouches that the frames are RAM that nothing else uses.
    pub fn new(
        stack: &'a mut [u32],
        map: &'a mut [u8],
        ranges: &[Range],
        _key: &K,
    ) -> Result<Self, PoolError> {
        let n = Self::frames_in(ranges);
        let span = Self::span_of(ranges);
        if stack.len() < n || map.len() < span {
            return Err(PoolError::StorageTooSmall);
        }
        let (stack, map) = (&mut stack[..n], &mut map[..span]);
        let low = bounds(ranges).map_or(0, |(lo, _)| lo);
        let low = u32::try_from(low).map_err(|_| PoolError::AddressTooHigh)?;
        map.fill(OUTSIDE);
        let mut i = 0;
        // Push highest first so that pops return low frames first.
        for r in ranges.iter().rev() {
            for f in frames_of(r).rev() {
                let f = u32::try_from(f).map_err(|_| PoolError::AddressTooHigh)?;
                stack[i] = f;
                map[(f - low) as usize] = FREE;
                i += 1;
            }
        }
        Ok(FramePool {
            stack,
            map,
            free: i,
            low,
            brand: PhantomData,
        })
    }

    /// Takes a free frame, or `None` when every frame is in use.
    pub fn alloc(&mut self) -> Option<FrameNumber<K>> {
        self.free = self.free.checked_sub(1)?;
        let n = self.stack[self.free];
        // Stacked frames are in the map (pushed by `new` or `free`).
        if let Some(s) = self.map.get_mut(n.wrapping_sub(self.low) as usize) {
            *s = HANDED_OUT;
        }
        Some(FrameNumber(NonZeroU32::new(n)?, PhantomData))
    }

    /// Returns a frame to the pool. Refuses a frame this pool did not hand
    /// out, or one that is free already (a double free would hand one
    /// frame to two owners).
    pub fn free(&mut self, f: FrameNumber<K>) -> Result<(), PoolError> {
        let n = f.number();
        // One comparison: below `low` wraps to past the map.
        let state = self
            .map
            .get_mut(n.wrapping_sub(self.low) as usize)
            .ok_or(PoolError::NotOwned)?;
        if *state != HANDED_OUT {
            return Err(PoolError::NotOwned);
        }
        // Every frame handed out has its place on the stack.
        let slot = self.stack.get_mut(self.free).ok_or(PoolError::NotOwned)?;
        *slot = n;
        *state = FREE;
        self.free += 1;
        Ok(())
    }

    /// Whether frame `f` is free (in the pool, not handed out).
    pub fn is_free(&self, f: FrameNumber<K>) -> bool {
        self.map.get(f.number().wrapping_sub(self.low) as usize) == Some(&FREE)
    }

    /// Free frames.
    pub fn free_count(&self) -> usize {
        self.free
    }

    /// Frames the pool manages.
    pub fn capacity(&self) -> usize {
        self.stack.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The tests' brand.
    struct Test;
    type Frame = FrameNumber<Test>;

    fn frame(n: u32) -> Frame {
        FrameNumber::new(n, &Test).unwrap()
    }

    fn storage(ranges: &[Range]) -> (Vec<u32>, Vec<u8>) {
        (
            vec![0; FramePool::<Test>::frames_in(ranges)],
            vec![0; FramePool::<Test>::span_of(ranges)],
        )
    }

    #[test]
    fn hands_out_each_frame_once() {
        let ranges = [Range::new(0x1000, 0x4000), Range::new(0x10000, 0x12000)];
        let (mut st, mut map) = storage(&ranges);
        let mut p = FramePool::new(&mut st, &mut map, &ranges, &Test).unwrap();
        assert_eq!(p.capacity(), 5);
        let got: Vec<u32> = (0..5).map(|_| p.alloc().unwrap().number()).collect();
        assert_eq!(got, vec![1, 2, 3, 0x10, 0x11]);
        assert_eq!(p.alloc(), None);
        p.free(frame(2)).unwrap();
        assert_eq!(p.alloc(), Some(frame(2)));
    }

    #[test]
    fn rejects_foreign_frames_double_frees_and_overflow() {
        let ranges = [Range::new(0x2000, 0x5000)];
        let (mut st, mut map) = storage(&ranges);
        let mut p = FramePool::new(&mut st, &mut map, &ranges, &Test).unwrap();
        assert_eq!(p.free(frame(9)), Err(PoolError::NotOwned));
        assert_eq!(p.free(frame(2)), Err(PoolError::NotOwned)); // already free: pool full
        let (a, b) = (p.alloc().unwrap(), p.alloc().unwrap());
        assert!(!p.is_free(a) && !p.is_free(b));
        p.free(a).unwrap();
        assert!(p.is_free(a));
        // Not full any more, yet a second free of `a` is still refused.
        assert_eq!(p.free(a), Err(PoolError::NotOwned));
        assert_eq!(p.free_count(), 2);
        p.free(b).unwrap();
        // A frame between the ranges (a hole) was never the pool's.
        let ranges = [Range::new(0x1000, 0x2000), Range::new(0x4000, 0x5000)];
        let (mut st, mut map) = storage(&ranges);
        let mut p = FramePool::new(&mut st, &mut map, &ranges, &Test).unwrap();
        let _ = p.alloc().unwrap();
        assert!(!p.is_free(frame(2)) && !p.is_free(frame(3)));
        assert_eq!(p.free(frame(2)), Err(PoolError::NotOwned));
        assert_eq!(p.free(frame(5)), Err(PoolError::NotOwned));
        assert_eq!(p.free_count(), 1);
        let (mut small, mut map) = ([0u32; 1], [0u8; 2]);
        assert_eq!(
            FramePool::new(&mut small, &mut map, &[Range::new(0x1000, 0x3000)], &Test).unwrap_err(),
            PoolError::StorageTooSmall
        );
    }

    #[test]
    fn frame_zero_is_never_a_frame() {
        assert!(FrameNumber::new(0, &Test).is_none());
        assert_eq!(size_of::<Option<Frame>>(), size_of::<u32>());
        // A pool over the first frames skips frame 0.
        let ranges = [Range::new(0, 3 * 4096)];
        assert_eq!(FramePool::<Test>::frames_in(&ranges), 2);
        let (mut st, mut map) = storage(&ranges);
        let mut p = FramePool::new(&mut st, &mut map, &ranges, &Test).unwrap();
        assert_eq!(p.alloc(), Some(frame(1)));
        assert_eq!(p.alloc(), Some(frame(2)));
        assert_eq!(p.alloc(), None);
        assert_eq!(FramePool::<Test>::frames_in(&[Range::new(0, 4096)]), 0);
        assert_eq!(frame(3).addr(), 0x3000);
    }

    proptest! {
        #[test]
        fn new_frees_exactly_the_ranges(cuts in proptest::collection::btree_set(0u64..64, 0..10)) {
            // Alternating ranges and holes between sorted cut points.
            let cuts: Vec<u64> = cuts.into_iter().collect();
            let ranges: Vec<Range> = cuts
                .chunks(2)
                .filter(|c| c.len() == 2)
                .map(|c| Range::new(c[0] * 4096, c[1] * 4096))
                .collect();
            let (mut st, mut map) = storage(&ranges);
            let p = FramePool::new(&mut st, &mut map, &ranges, &Test).unwrap();
            let inside = |f: u64| f > 0 && ranges.iter().any(|r| r.start <= f * 4096 && f * 4096 < r.end);
            for f in 1..64u32 {
                prop_assert_eq!(p.is_free(frame(f)), inside(f as u64));
            }
            prop_assert_eq!(p.capacity(), (1..64).filter(|&f| inside(f)).count());
        }

        #[test]
        fn alloc_free_never_duplicates(ops in proptest::collection::vec(any::<(bool, u8)>(), 0..200)) {
            let ranges = [Range::new(4096, 17 * 4096)];
            let (mut st, mut map) = storage(&ranges);
            let mut p = FramePool::new(&mut st, &mut map, &ranges, &Test).unwrap();
            let mut held: Vec<Frame> = Vec::new();
            let mut freed: Vec<Frame> = Vec::new();
            for (op, pick) in ops {
                if op {
                    if let Some(f) = p.alloc() {
                        prop_assert!(!held.contains(&f));
                        held.push(f);
                        freed.retain(|&g| g != f);
                    } else {
                        prop_assert_eq!(held.len(), 16);
                    }
                } else if !held.is_empty() {
                    let f = held.swap_remove(pick as usize % held.len());
                    p.free(f).unwrap();
                    freed.push(f);
                } else if let Some(&f) = freed.first() {
                    // Freeing a free frame again is refused and changes nothing.
                    prop_assert_eq!(p.free(f), Err(PoolError::NotOwned));
                }
                prop_assert_eq!(p.free_count() + held.len(), 16);
                for f in &held {
                    prop_assert!(!p.is_free(*f));
                }
            }
        }
    }
}
