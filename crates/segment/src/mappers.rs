//! Which address spaces' hardware page tables were built through an object
//! (a node on a walk's path, or the page found), so that changing the
//! object discards only those tables: [`Mappers`].

/// Which contexts' hardware page tables were built through an object
/// (while it is marked mapped): up to two (context, table generation)
/// pairs, or "many". A change to the object then discards only those
/// contexts' tables (the kernel's `memory::unmap_node`); a pair whose context has had
/// its tables discarded since (another generation) no longer counts.
/// Shared objects (a program's text mapped by many) fall back to
/// discarding every context's tables.
#[derive(zerocopy::FromZeros, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(C)]
pub struct Mappers {
    /// Context index + 1 (0: none); `ctx[0] == MANY`: more than two.
    ctx: [u16; 2],
    /// The table generation of each.
    tgen: [u32; 2],
}

impl Mappers {
    const MANY: u16 = u16::MAX;

    /// Only context `ci` in generation `tgen`.
    #[inline]
    pub fn one(ci: usize, tgen: u32) -> Mappers {
        Mappers {
            ctx: [ci as u16 + 1, 0],
            tgen: [tgen, 0],
        }
    }

    /// Whether more contexts map it than are recorded.
    #[inline]
    pub fn many(&self) -> bool {
        self.ctx[0] == Self::MANY
    }

    /// Records context `ci` (generation `tgen`); `live` says whether a
    /// recorded pair still holds (its context still has those tables), so
    /// a stale pair's place can be reused.
    #[inline]
    pub fn note(&mut self, ci: usize, tgen: u32, live: impl Fn(usize, u32) -> bool) {
        if self.many() {
            return;
        }
        let c = ci as u16 + 1;
        if (self.ctx[0] == c && self.tgen[0] == tgen) || (self.ctx[1] == c && self.tgen[1] == tgen)
        {
            return;
        }
        for j in 0..2 {
            if self.ctx[j] == 0 || !live(self.ctx[j] as usize - 1, self.tgen[j]) {
                self.ctx[j] = c;
                self.tgen[j] = tgen;
                return;
            }
        }
        self.ctx[0] = Self::MANY;
    }

    /// The recorded (context, generation) pairs (none if many).
    #[inline]
    pub fn pairs(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        (0..2)
            .filter(move |&j| !self.many() && self.ctx[j] != 0)
            .map(move |j| (self.ctx[j] as usize - 1, self.tgen[j]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;
    use std::vec::Vec;

    #[test]
    fn records_two_then_many() {
        let live = |_: usize, _: u32| true;
        let mut m = Mappers::one(3, 7);
        m.note(3, 7, live);
        assert_eq!(m.pairs().collect::<Vec<_>>(), [(3, 7)]);
        m.note(5, 1, live);
        assert_eq!(m.pairs().collect::<Vec<_>>(), [(3, 7), (5, 1)]);
        assert!(!m.many());
        m.note(9, 2, live);
        assert!(m.many());
        assert_eq!(m.pairs().count(), 0);
        m.note(3, 7, live);
        assert!(m.many(), "many stays many");
    }

    #[test]
    fn a_stale_pair_makes_room() {
        let mut m = Mappers::one(1, 10);
        m.note(2, 20, |_, _| true);
        // Context 1 has had its tables discarded (now generation 11).
        m.note(4, 40, |c, g| !(c == 1 && g == 10));
        assert_eq!(m.pairs().collect::<Vec<_>>(), [(4, 40), (2, 20)]);
        // The same context in a new generation is a new pair.
        m.note(2, 21, |c, g| !(c == 2 && g == 20));
        assert_eq!(m.pairs().collect::<Vec<_>>(), [(4, 40), (2, 21)]);
    }

    proptest! {
        /// Against a model of the page tables: whatever the order of
        /// mappings and discards, every context whose current tables map
        /// the object is among the recorded live pairs, or `many` is set.
        /// (Missing one would leave a stale mapping after a change.)
        #[test]
        fn never_forgets_a_live_mapping(
            ops in proptest::collection::vec((0usize..6, any::<bool>()), 1..60)
        ) {
            let mut tgen = [0u32; 6];
            let mut next = 1u32;
            for g in tgen.iter_mut() {
                *g = next;
                next += 1;
            }
            // Which contexts map the object now, by generation.
            let mut maps: BTreeMap<usize, u32> = BTreeMap::new();
            let mut m: Option<Mappers> = None;
            for (c, map) in ops {
                if map {
                    let t = tgen;
                    match &mut m {
                        None => m = Some(Mappers::one(c, tgen[c])),
                        Some(m) => m.note(c, tgen[c], |ci, g| t[ci] == g),
                    }
                    maps.insert(c, tgen[c]);
                } else {
                    // Context c's tables are discarded.
                    tgen[c] = next;
                    next += 1;
                    maps.remove(&c);
                }
                let Some(m) = m else { continue };
                if !m.many() {
                    for (&c, &g) in &maps {
                        prop_assert!(m.pairs().any(|p| p == (c, g)), "{c} {g} missing");
                    }
                }
            }
        }
    }
}
