//! Half-open physical address ranges and a fixed-capacity set of them.

/// A half-open range `[start, end)` of physical addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Range {
    /// First byte.
    pub start: u64,
    /// One past the last byte.
    pub end: u64,
}

impl Range {
    /// `[start, end)`; an inverted range is empty.
    pub const fn new(start: u64, end: u64) -> Self {
        Range { start, end }
    }
    /// Length in bytes.
    pub const fn len(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
    /// True when the range holds no bytes.
    pub const fn is_empty(&self) -> bool {
        self.end <= self.start
    }
    /// True when the two ranges share a byte.
    pub const fn overlaps(&self, other: &Range) -> bool {
        self.start < other.end && other.start < self.end && !self.is_empty() && !other.is_empty()
    }
}

/// Most ranges a [`RangeSet`] holds; firmware maps are far smaller.
pub const MAX_RANGES: usize = 128;

/// Error: a range set is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full;

/// A sorted set of disjoint ranges with fixed capacity.
#[derive(Clone, Debug)]
pub struct RangeSet {
    ranges: [Range; MAX_RANGES],
    len: usize,
}

impl Default for RangeSet {
    fn default() -> Self {
        Self::new()
    }
}

impl RangeSet {
    /// An empty set.
    pub const fn new() -> Self {
        RangeSet {
            ranges: [Range::new(0, 0); MAX_RANGES],
            len: 0,
        }
    }

    /// The ranges, sorted and disjoint.
    pub fn as_slice(&self) -> &[Range] {
        &self.ranges[..self.len]
    }

    /// Total bytes covered.
    pub fn total(&self) -> u64 {
        self.as_slice().iter().map(Range::len).sum()
    }

    /// Adds `r`, merging with overlapping or touching ranges.
    pub fn insert(&mut self, r: Range) -> Result<(), Full> {
        if r.is_empty() {
            return Ok(());
        }
        let mut merged = r;
        // Remove every range that overlaps or touches, widening `merged`.
        let mut i = 0;
        while i < self.len {
            let cur = self.ranges[i];
            if cur.start <= merged.end && merged.start <= cur.end {
                merged.start = merged.start.min(cur.start);
                merged.end = merged.end.max(cur.end);
                self.remove_at(i);
            } else {
                i += 1;
            }
        }
        if self.len == MAX_RANGES {
            return Err(Full);
        }
        let pos = self.as_slice().partition_point(|x| x.start < merged.start);
        self.ranges.copy_within(pos..self.len, pos + 1);
        self.ranges[pos] = merged;
        self.len += 1;
        Ok(())
    }

    /// Removes every byte of `r` from the set.
    pub fn remove(&mut self, r: Range) -> Result<(), Full> {
        if r.is_empty() {
            return Ok(());
        }
        let mut i = 0;
        while i < self.len {
            let cur = self.ranges[i];
            if !cur.overlaps(&r) {
                i += 1;
                continue;
            }
            let left = Range::new(cur.start, r.start.min(cur.end));
            let right = Range::new(r.end.max(cur.start), cur.end);
            match (left.is_empty(), right.is_empty()) {
                (true, true) => self.remove_at(i),
                (false, true) => {
                    self.ranges[i] = left;
                    i += 1;
                }
                (true, false) => {
                    self.ranges[i] = right;
                    i += 1;
                }
                (false, false) => {
                    if self.len == MAX_RANGES {
                        return Err(Full);
                    }
                    self.ranges[i] = left;
                    self.ranges.copy_within(i + 1..self.len, i + 2);
                    self.ranges[i + 1] = right;
                    self.len += 1;
                    i += 2;
                }
            }
        }
        Ok(())
    }

    fn remove_at(&mut self, i: usize) {
        self.ranges.copy_within(i + 1..self.len, i);
        self.len -= 1;
    }

    /// Mutable access to range `i` (for allocators that shrink ranges).
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut Range> {
        self.ranges[..self.len].get_mut(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn insert_merges_and_remove_splits() {
        let mut s = RangeSet::new();
        s.insert(Range::new(0, 10)).unwrap();
        s.insert(Range::new(20, 30)).unwrap();
        s.insert(Range::new(10, 20)).unwrap();
        assert_eq!(s.as_slice(), &[Range::new(0, 30)]);
        s.remove(Range::new(5, 7)).unwrap();
        assert_eq!(s.as_slice(), &[Range::new(0, 5), Range::new(7, 30)]);
        s.remove(Range::new(0, 100)).unwrap();
        assert!(s.as_slice().is_empty());
    }

    proptest! {
        #[test]
        fn set_matches_bitmap(ops in proptest::collection::vec((any::<bool>(), 0u64..200, 0u64..40), 0..40)) {
            let mut s = RangeSet::new();
            let mut model = [false; 240];
            for (add, start, len) in ops {
                let r = Range::new(start, start + len);
                if add { s.insert(r).unwrap(); } else { s.remove(r).unwrap(); }
                for b in start..start + len { model[b as usize] = add; }
            }
            let mut got = [false; 240];
            let sl = s.as_slice();
            for w in sl.windows(2) { prop_assert!(w[0].end < w[1].start); }
            for r in sl { prop_assert!(!r.is_empty()); for b in r.start..r.end { got[b as usize] = true; } }
            prop_assert_eq!(&got[..], &model[..]);
        }
    }
}
