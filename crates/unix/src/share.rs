//! Pages shared copy-on-write after `fork`: how many processes hold each
//! (unixd keeps this table for every keeper). A page is named by its
//! identity in the space bank (`bank::identify`). An entry exists only
//! while two or more processes hold the page; the last holder finds none
//! and knows the page is its own again (to write without copying, or to
//! free).
//!
//! Open addressing with linear probing; deletion shifts the following
//! entries back (no tombstones, so the table never fills with them).

/// Most pages shared at once; beyond it `fork` copies instead.
pub const CAPACITY: usize = 8192;

const EMPTY: u32 = u32::MAX;

/// The table.
#[derive(Clone)]
pub struct Shares {
    page: [u32; CAPACITY],
    holders: [u16; CAPACITY],
    len: usize,
}

impl Default for Shares {
    fn default() -> Self {
        Self::new()
    }
}

fn home(p: u32) -> usize {
    (p.wrapping_mul(0x9e37_79b9) >> 19) as usize % CAPACITY
}

impl Shares {
    /// An empty table.
    pub const fn new() -> Shares {
        Shares {
            page: [EMPTY; CAPACITY],
            holders: [0; CAPACITY],
            len: 0,
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

    fn find(&self, p: u32) -> Result<usize, usize> {
        let mut i = home(p);
        loop {
            match self.page[i] {
                x if x == p => return Ok(i),
                EMPTY => return Err(i),
                _ => i = (i + 1) % CAPACITY,
            }
        }
    }

    /// How many hold page `p` (1: nobody shares it).
    pub fn holders(&self, p: u32) -> u16 {
        self.find(p).map_or(1, |i| self.holders[i])
    }

    /// One more process holds page `p` (a fork): → the holders now.
    /// `None` if the table is full (the caller copies the page instead).
    pub fn add(&mut self, p: u32) -> Option<u16> {
        match self.find(p) {
            Ok(i) => {
                self.holders[i] = self.holders[i].checked_add(1)?;
                Some(self.holders[i])
            }
            // Keep a free slot so every probe ends.
            Err(_) if self.len + 1 >= CAPACITY => None,
            Err(i) => {
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
        self.page[i] = EMPTY;
        self.len -= 1;
        let mut j = i;
        loop {
            j = (j + 1) % CAPACITY;
            if self.page[j] == EMPTY {
                return;
            }
            let h = home(self.page[j]);
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
    fn full_table_says_so() {
        let mut s = Box::new(Shares::new());
        for p in 0..(CAPACITY as u32 - 1) {
            assert_eq!(s.add(p), Some(2));
        }
        assert_eq!(s.add(CAPACITY as u32), None);
        assert_eq!(s.add(3), Some(3), "a page already in is still counted");
    }

    proptest! {
        #[test]
        fn agrees_with_a_map(ops in proptest::collection::vec((0u32..64, any::<bool>()), 0..400)) {
            let mut s = Box::new(Shares::new());
            let mut m: BTreeMap<u32, u16> = BTreeMap::new();
            for (p, add) in ops {
                // Pages collide on purpose: 64 of them, spread by `home`.
                let p = p.wrapping_mul(CAPACITY as u32 / 8);
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
