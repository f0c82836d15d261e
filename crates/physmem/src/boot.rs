//! The boot allocator: hands out physical memory while the kernel sets up
//! its fixed-size tables, and refuses every request once sealed.

use crate::range::{Full, Range, RangeSet};
use crate::FRAME_SIZE;

/// Why a boot allocation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocError {
    /// The allocator was sealed: the kernel is past boot and may not allocate.
    Sealed,
    /// No free range can satisfy the request.
    OutOfMemory,
    /// Alignment is zero or not a power of two, or size is zero.
    BadRequest,
}

/// Boot-time physical memory allocator over the firmware memory map.
#[derive(Clone, Debug)]
pub struct BootAllocator {
    free: RangeSet,
    sealed: bool,
    allocated: u64,
    /// Allocations end at or below this address (`set_limit`).
    limit: u64,
}

impl BootAllocator {
    /// Starts from the usable RAM in `usable`, minus every range in
    /// `reserved` (the kernel image, boot modules, firmware tables). Usable
    /// ranges are shrunk to whole frames.
    pub fn new(usable: &[Range], reserved: &[Range]) -> Result<Self, Full> {
        let mut free = RangeSet::new();
        for r in usable {
            let start = r.start.div_ceil(FRAME_SIZE) * FRAME_SIZE;
            let end = r.end / FRAME_SIZE * FRAME_SIZE;
            free.insert(Range::new(start, end))?;
        }
        for r in reserved {
            let start = r.start / FRAME_SIZE * FRAME_SIZE;
            let end = r.end.div_ceil(FRAME_SIZE) * FRAME_SIZE;
            free.remove(Range::new(start, end))?;
        }
        Ok(BootAllocator {
            free,
            sealed: false,
            allocated: 0,
            limit: u64::MAX,
        })
    }

    /// Hands out only memory below `limit` from now on (`u64::MAX`: any).
    /// The kernel's first tables are written through the boot loader's
    /// early map, which covers only the first GiB: with more RAM than that,
    /// the highest free range is not mapped yet.
    pub fn set_limit(&mut self, limit: u64) {
        self.limit = limit;
    }

    /// Allocates `size` bytes aligned to `align` (a power of two), from the
    /// highest suitable free range so that low memory stays available for
    /// devices that need it. Fails once sealed.
    pub fn alloc(&mut self, size: u64, align: u64) -> Result<u64, AllocError> {
        if self.sealed {
            return Err(AllocError::Sealed);
        }
        if size == 0 || align == 0 || !align.is_power_of_two() {
            return Err(AllocError::BadRequest);
        }
        let size = size.div_ceil(FRAME_SIZE) * FRAME_SIZE;
        let align = align.max(FRAME_SIZE);
        for i in (0..self.free.as_slice().len()).rev() {
            let r = self.free.as_slice()[i];
            let Some(top) = r.end.min(self.limit).checked_sub(size) else {
                continue;
            };
            let start = top / align * align;
            if start < r.start {
                continue;
            }
            // Take [start, start+size); what lies above stays free.
            let taken = Range::new(start, start + size);
            if taken.end == r.end {
                if let Some(slot) = self.free.get_mut(i) {
                    slot.end = start;
                }
                if self.free.as_slice()[i].is_empty() {
                    let _ = self.free.remove(Range::new(r.start, r.end));
                }
            } else {
                self.free
                    .remove(taken)
                    .map_err(|_| AllocError::OutOfMemory)?;
            }
            self.allocated += size;
            return Ok(start);
        }
        Err(AllocError::OutOfMemory)
    }

    /// Ends the boot phase: every later [`alloc`](Self::alloc) fails with
    /// [`AllocError::Sealed`]. Returns the free ranges that remain, which
    /// become the frame pool.
    pub fn seal(&mut self) -> &[Range] {
        self.sealed = true;
        self.free.as_slice()
    }

    /// True once sealed.
    pub fn is_sealed(&self) -> bool {
        self.sealed
    }

    /// Bytes handed out so far.
    pub fn allocated(&self) -> u64 {
        self.allocated
    }

    /// Free bytes left.
    pub fn free_bytes(&self) -> u64 {
        self.free.total()
    }

    /// The free ranges.
    pub fn free_ranges(&self) -> &[Range] {
        self.free.as_slice()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MB: u64 = 1 << 20;

    #[test]
    fn stays_below_the_limit() {
        let mut a = BootAllocator::new(&[Range::new(MB, 2048 * MB)], &[]).unwrap();
        a.set_limit(1024 * MB);
        let x = a.alloc(4096, 4096).unwrap();
        assert_eq!(x, 1024 * MB - 4096);
        let y = a.alloc(2 * MB, 2 * MB).unwrap();
        assert_eq!(y, 1020 * MB);
        // Nothing fits below the limit: refused, not taken above it.
        assert_eq!(a.alloc(2048 * MB, 4096), Err(AllocError::OutOfMemory));
        a.set_limit(u64::MAX);
        assert_eq!(a.alloc(4096, 4096).unwrap(), 2048 * MB - 4096);
        // What was taken below the limit stays taken; the rest is free.
        assert_eq!(a.free_bytes(), 2047 * MB - 2 * 4096 - 2 * MB);
    }

    #[test]
    fn refuses_after_seal() {
        let mut a = BootAllocator::new(&[Range::new(MB, 64 * MB)], &[]).unwrap();
        assert!(a.alloc(4096, 4096).is_ok());
        let left = a.seal().iter().map(Range::len).sum::<u64>();
        assert_eq!(left, 63 * MB - 4096);
        assert_eq!(a.alloc(4096, 4096), Err(AllocError::Sealed));
        assert_eq!(a.alloc(1, 1), Err(AllocError::Sealed));
        assert!(a.is_sealed());
    }

    #[test]
    fn skips_reserved_and_rounds_to_frames() {
        let a = BootAllocator::new(
            &[Range::new(100, 3 * 4096 + 5)],
            &[Range::new(4096 + 1, 4096 + 2)],
        )
        .unwrap();
        assert_eq!(a.free_ranges(), &[Range::new(2 * 4096, 3 * 4096)]);
    }

    #[test]
    fn bad_requests_and_exhaustion() {
        let mut a = BootAllocator::new(&[Range::new(0, 8192)], &[]).unwrap();
        assert_eq!(a.alloc(0, 4096), Err(AllocError::BadRequest));
        assert_eq!(a.alloc(4096, 3), Err(AllocError::BadRequest));
        assert_eq!(a.alloc(3 * 4096, 4096), Err(AllocError::OutOfMemory));
        assert_eq!(a.alloc(4096, 4096), Ok(4096));
        assert_eq!(a.alloc(4096, 4096), Ok(0));
        assert_eq!(a.alloc(4096, 4096), Err(AllocError::OutOfMemory));
    }

    proptest! {
        #[test]
        fn allocations_are_disjoint_aligned_and_usable(
            usable in proptest::collection::vec((0u64..64, 1u64..32), 1..6),
            reserved in proptest::collection::vec((0u64..64, 1u64..8), 0..4),
            reqs in proptest::collection::vec((1u64..5, 0u32..4), 1..30),
        ) {
            let usable: Vec<Range> = usable.iter().map(|&(s, l)| Range::new(s * MB, (s + l) * MB)).collect();
            let reserved: Vec<Range> = reserved.iter().map(|&(s, l)| Range::new(s * MB + 123, (s + l) * MB)).collect();
            let mut a = BootAllocator::new(&usable, &reserved).unwrap();
            let mut got: Vec<Range> = Vec::new();
            for (pages, align_shift) in reqs {
                let align = 4096u64 << (align_shift * 3);
                if let Ok(p) = a.alloc(pages * 4096, align) {
                    let r = Range::new(p, p + pages * 4096);
                    prop_assert_eq!(p % align, 0);
                    prop_assert!(usable.iter().any(|u| u.start <= r.start && r.end <= u.end));
                    prop_assert!(!reserved.iter().any(|x| x.overlaps(&r)));
                    prop_assert!(!got.iter().any(|g| g.overlaps(&r)));
                    prop_assert!(!a.free_ranges().iter().any(|f| f.overlaps(&r)));
                    got.push(r);
                }
            }
            a.seal();
            prop_assert_eq!(a.alloc(4096, 4096), Err(AllocError::Sealed));
        }
    }
}
