//! Pages shared copy-on-write after `fork`: how many processes hold each
//! (unixd keeps this table for every keeper). A page is named by its
//! identity in the space bank (`bank::identify`). An entry exists only
//! while two or more processes hold the page; the last holder finds none
//! and knows the page is its own again (to write without copying, or to
//! free).
//!
//! Open addressing with linear probing, at most three quarters full;
//! deletion shifts the following entries back (no tombstones, so the table
//! never fills with them). The table doubles from the heap as more pages
//! are shared (`try_reserve`); when the heap has no room, `add` says so and
//! `fork` copies the page instead.

use alloc::vec::Vec;

const EMPTY: u32 = u32::MAX;
/// Buckets of the first table.
const FIRST: usize = 256;

/// The table.
#[derive(Clone)]
pub struct Shares {
    page: Vec<u32>,
    holders: Vec<u16>,
    len: usize,
    /// Most pages shared at once (tests: a full heap).
    limit: usize,
}

impl Default for Shares {
    fn default() -> Self {
        Self::new()
    }
}

/// Page `p`'s first bucket in a table of `n` (a power of two).
fn home(p: u32, n: usize) -> usize {
    // Fibonacci hashing: the product's top bits.
    ((p.wrapping_mul(0x9e37_79b9) as u64) << 32 >> (64 - n.trailing_zeros())) as usize
}

impl Shares {
    /// An empty table.
    pub const fn new() -> Shares {
        Shares::with_limit(usize::MAX)
    }

    /// An empty table that shares at most `limit` pages at once.
    pub const fn with_limit(limit: usize) -> Shares {
        Shares {
            page: Vec::new(),
            holders: Vec::new(),
            len: 0,
            limit,
        }
    }

    /// Pages shared now.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Heap bytes the table holds.
    pub fn bytes(&self) -> usize {
        self.page.capacity() * 4 + self.holders.capacity() * 2
    }

    fn find(&self, p: u32) -> Result<usize, usize> {
        let n = self.page.len();
        if n == 0 || p == EMPTY {
            return Err(0);
        }
        let mut i = home(p, n);
        loop {
            match self.page[i] {
                x if x == p => return Ok(i),
                EMPTY => return Err(i),
                _ => i = (i + 1) & (n - 1),
            }
        }
    }

    /// Doubles the table (or makes it) → whether it could.
    fn grow(&mut self) -> bool {
        let n = (self.page.len() * 2).max(FIRST);
        let (mut page, mut holders) = (Vec::new(), Vec::new());
        if page.try_reserve_exact(n).is_err() || holders.try_reserve_exact(n).is_err() {
            return false;
        }
        page.resize(n, EMPTY);
        holders.resize(n, 0);
        for (&p, &h) in self.page.iter().zip(&self.holders) {
            if p != EMPTY {
                let mut i = home(p, n);
                while page[i] != EMPTY {
                    i = (i + 1) & (n - 1);
                }
                page[i] = p;
                holders[i] = h;
            }
        }
        self.page = page;
        self.holders = holders;
        true
    }

    /// How many hold page `p` (1: nobody shares it).
    pub fn holders(&self, p: u32) -> u16 {
        self.find(p).map_or(1, |i| self.holders[i])
    }

    /// One more process holds page `p` (a fork): → the holders now.
    /// `None` if the table cannot take it (the caller copies the page
    /// instead).
    pub fn add(&mut self, p: u32) -> Option<u16> {
        match self.find(p) {
            Ok(i) => {
                self.holders[i] = self.holders[i].checked_add(1)?;
                Some(self.holders[i])
            }
            Err(_) if p == EMPTY || self.len >= self.limit => None,
            Err(mut i) => {
                if (self.len + 1) * 4 > self.page.len() * 3 {
                    if !self.grow() {
                        return None;
                    }
                    i = self.find(p).err()?;
                }
                self.page[i] = p;
                self.holders[i] = 2;
                self.len += 1;
                Some(2)
            }
        }
    }

    /// One process lets go of page `p` (it wrote it and took a copy, or
    /// unmapped it, or ended) → whether it was the last holder (then the
    /// page is its own: to keep writable, or to free).
    pub fn release(&mut self, p: u32) -> bool {
        let Ok(i) = self.find(p) else {
            return true;
        };
        self.holders[i] -= 1;
        if self.holders[i] <= 1 {
            self.remove(i);
        }
        false
    }

    fn remove(&mut self, mut i: usize) {
        let n = self.page.len();
        self.page[i] = EMPTY;
        self.len -= 1;
        let mut j = i;
        loop {
            j = (j + 1) & (n - 1);
            if self.page[j] == EMPTY {
                return;
            }
            let h = home(self.page[j], n);
            // Entry j may move to the hole at i if its home is not in the
            // cyclic range (i, j].
            let stays = if i <= j {
                i < h && h <= j
            } else {
                i < h || h <= j
            };
            if !stays {
                self.page[i] = self.page[j];
                self.holders[i] = self.holders[j];
                self.page[j] = EMPTY;
                i = j;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::boxed::Box;
    use std::collections::BTreeMap;

    #[test]
    fn two_holders_then_the_last_owns_it() {
        let mut s = Box::new(Shares::new());
        assert_eq!(s.holders(5), 1);
        assert_eq!(s.add(5), Some(2));
        assert_eq!(s.add(5), Some(3));
        assert!(!s.release(5));
        assert_eq!(s.holders(5), 2);
        assert!(!s.release(5));
        // One holder left: no entry; its release says it was the last.
        assert_eq!((s.holders(5), s.len()), (1, 0));
        assert!(s.release(5));
    }

    #[test]
    fn grows_past_the_old_8192() {
        let mut s = Shares::new();
        for p in 0..20_000u32 {
            assert_eq!(s.add(p.wrapping_mul(7919)), Some(2));
        }
        assert_eq!(s.len(), 20_000);
        for p in 0..20_000u32 {
            assert_eq!(s.holders(p.wrapping_mul(7919)), 2);
        }
        assert!(s.bytes() <= 32768 * 6, "three quarters full at most");
        for p in 0..20_000u32 {
            assert!(!s.release(p.wrapping_mul(7919)));
        }
        assert!(s.is_empty());
    }

    #[test]
    fn full_table_says_so() {
        let mut s = Box::new(Shares::with_limit(100));
        for p in 0..100 {
            assert_eq!(s.add(p), Some(2));
        }
        assert_eq!(s.add(1000), None);
        assert_eq!(s.add(3), Some(3), "a page already in is still counted");
        assert!(!s.release(5));
        assert_eq!(s.add(1000), Some(2), "room again");
    }

    proptest! {
        #[test]
        fn agrees_with_a_map(ops in proptest::collection::vec((0u32..64, any::<bool>()), 0..400)) {
            let mut s = Box::new(Shares::new());
            let mut m: BTreeMap<u32, u16> = BTreeMap::new();
            for (p, add) in ops {
                // Pages collide on purpose: 64 of them, spread by `home`.
                let p = p.wrapping_mul(1024);
                if add {
                    let want = m.get(&p).copied().unwrap_or(1) + 1;
                    prop_assert_eq!(s.add(p), Some(want));
                    m.insert(p, want);
                } else {
                    let n = m.get(&p).copied().unwrap_or(1);
                    prop_assert_eq!(s.release(p), n == 1);
                    if n > 2 { m.insert(p, n - 1); } else { m.remove(&p); }
                }
                prop_assert_eq!(s.len(), m.len());
                for (&q, &n) in &m {
                    prop_assert_eq!(s.holders(q), n);
                }
            }
        }
    }
}
