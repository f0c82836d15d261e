//! The object cache's index: object identity → cache slot, an open-addressed
//! hash table of fixed size (twice the slots, so probes stay short), with
//! deletion for evicted objects.
//!
//! Written here rather than with `heapless::FnvIndexMap` because entries
//! must be found from a key's hint first and the table is sized at boot
//! from the memory map, not at compile time.

#![no_std]

#[cfg(test)]
mod tests;

/// An index over `n` cache slots.
pub struct Index<'a> {
    /// Slot + 1 per bucket; 0 is empty.
    buckets: &'a mut [u32],
    mask: usize,
}

fn hash(oid: u64) -> usize {
    // Fibonacci hashing: consecutive oids (the common case) spread out.
    (oid.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize
}

impl<'a> Index<'a> {
    /// Buckets needed for `slots` slots (a power of two ≥ 2 × slots).
    pub fn buckets_for(slots: usize) -> usize {
        (slots * 2).next_power_of_two().max(2)
    }

    /// An empty index over zeroed `buckets` (length from [`Index::buckets_for`]).
    pub fn new(buckets: &'a mut [u32]) -> Index<'a> {
        let mask = buckets.len() - 1;
        Index { buckets, mask }
    }

    /// The slot holding `oid`, given a way to read a slot's oid.
    #[inline]
    pub fn find(&self, oid: u64, slot_oid: impl Fn(u32) -> u64) -> Option<u32> {
        let mut b = hash(oid) & self.mask;
        loop {
            let v = self.buckets[b];
            if v == 0 {
                return None;
            }
            if slot_oid(v - 1) == oid {
                return Some(v - 1);
            }
            b = (b + 1) & self.mask;
        }
    }

    /// Forgets that `slot` holds `oid` (the object was evicted). Linear
    /// probing with backward-shift deletion: later entries of the same
    /// probe run move up, so no tombstones accumulate.
    pub fn remove(&mut self, oid: u64, slot: u32, slot_oid: impl Fn(u32) -> u64) {
        let mut b = hash(oid) & self.mask;
        while self.buckets[b] != slot + 1 {
            if self.buckets[b] == 0 {
                return;
            }
            b = (b + 1) & self.mask;
        }
        let mut hole = b;
        let mut j = b;
        loop {
            j = (j + 1) & self.mask;
            let v = self.buckets[j];
            if v == 0 {
                break;
            }
            let home = hash(slot_oid(v - 1)) & self.mask;
            // Move entry j into the hole unless its home lies cyclically
            // in (hole, j]: then it is still reachable where it is.
            let stays = if hole <= j {
                home > hole && home <= j
            } else {
                home > hole || home <= j
            };
            if !stays {
                self.buckets[hole] = v;
                hole = j;
            }
        }
        self.buckets[hole] = 0;
    }

    /// Records that `slot` holds `oid` (which must not be present yet).
    /// The table never fills: it has twice as many buckets as slots.
    pub fn insert(&mut self, oid: u64, slot: u32) {
        let mut b = hash(oid) & self.mask;
        while self.buckets[b] != 0 {
            b = (b + 1) & self.mask;
        }
        self.buckets[b] = slot + 1;
    }
}
