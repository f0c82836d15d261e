//! Which address spaces' hardware page tables were built through an object
//! (a node on a walk's path, or the page found), and where, so that
//! changing the object discards only those tables: [`Mappers`].

/// Which contexts' hardware page tables were built through an object
/// (while it is marked mapped): up to [`RECORDS`] (context, table
/// generation, top-level table entries) records, or "many". A change to the object
/// then discards only those contexts' tables, and of those only the
/// top-level entries (512 GiB each) its mappings were made under (the
/// kernel's `memory::unmap_node`): a UNIX keeper's window onto its process
/// goes without its own text, stack and heap. A record whose context has
/// had its tables discarded since (another generation) no longer counts.
/// Shared objects (a program's text mapped by many) fall back to
/// discarding every context's tables.
#[derive(zerocopy::FromZeros, Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(C)]
pub struct Mappers {
    /// Context index + 1 (0: none); `ctx[0] == MANY`: more than
    /// [`RECORDS`].
    ctx: [u16; RECORDS],
    /// The first and last top-level entry (of the user half's 256) of
    /// each record's mappings.
    top: [[u8; 2]; RECORDS],
    /// The table generation of each.
    tgen: [u32; RECORDS],
    /// Where each record's context maps the object: the first address it
    /// covers ([`SEVERAL`]: at more than one place) …
    base: [u64; RECORDS],
    /// … and the span of one of its slots (log2 bytes; a page: 12).
    shift: [u8; RECORDS],
}

/// A record's `base` when its context maps the object at more than one
/// place (a space root met again below itself, a window onto a subtree
/// the context also maps directly): only its top-level entries are known.
pub const SEVERAL: u64 = u64::MAX;

/// Where a context maps an object: the object's first address in that
/// space, and the span of one of its slots (log2 bytes: a page 12, a node
/// of size code `lss` 4·(lss−1)+12). A change to slot `s` then touches
/// only `base + s·2^shift ..` one slot's span: what [`At::slot_range`]
/// gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    /// The object's first address.
    pub base: u64,
    /// log2 of one slot's span in bytes.
    pub shift: u8,
}

impl At {
    /// The addresses `[start, end)` slot `slot` covers (`None`: the
    /// whole node, its 16 slots; a page is its slot 0), clamped to
    /// `limit` (the end of the user half).
    pub fn slot_range(&self, slot: Option<usize>, limit: u64) -> (u64, u64) {
        let (first, count) = match slot {
            Some(s) => (s as u64, 1),
            None => (0, 16),
        };
        // base + n slots, or past every address (`limit`) on overflow.
        let at = |n: u64| {
            if n == 0 {
                return self.base.min(limit);
            }
            1u64.checked_shl(u32::from(self.shift))
                .and_then(|unit| unit.checked_mul(n))
                .and_then(|off| self.base.checked_add(off))
                .map_or(limit, |a| a.min(limit))
        };
        (at(first), at(first + count))
    }
}

/// Records kept before an object counts as mapped by "many". Four, not
/// two: a threaded UNIX process's memory is mapped by its main thread, a
/// new thread and its keeper's window at once, and a third mapper made
/// every `mmap` of a thread's stack discard every context's tables
/// (`thread_create_join` refaulted 154 pages per thread).
pub const RECORDS: usize = 4;

/// One record: the context, its table generation, and the first and last
/// top-level entry its mappings through the object were made under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapper {
    /// The context's index.
    pub ctx: usize,
    /// Its tables' generation.
    pub tgen: u32,
    /// First top-level entry.
    pub lo: u8,
    /// Last top-level entry.
    pub hi: u8,
    /// Where it maps the object (`None`: at several places).
    pub at: Option<At>,
}

impl Mappers {
    const MANY: u16 = u16::MAX;

    /// Only context `ci` in generation `tgen`, under top-level entry `top`,
    /// mapping the object at `at`.
    #[inline]
    pub fn one(ci: usize, tgen: u32, top: u8, at: At) -> Mappers {
        let mut m = Mappers::default();
        m.ctx[0] = ci as u16 + 1;
        m.top[0] = [top, top];
        m.tgen[0] = tgen;
        m.base[0] = at.base;
        m.shift[0] = at.shift;
        m
    }

    /// Whether more contexts map it than are recorded.
    #[inline]
    pub fn many(&self) -> bool {
        self.ctx[0] == Self::MANY
    }

    /// Records context `ci` (generation `tgen`) mapping under top-level
    /// entry `top`, the object at `at` (a second place makes the record's
    /// place [`SEVERAL`]); `live` says whether a recorded pair still holds (its
    /// context still has those tables), so a stale pair's place can be
    /// reused.
    #[inline]
    pub fn note(
        &mut self,
        ci: usize,
        tgen: u32,
        top: u8,
        at: At,
        live: impl Fn(usize, u32) -> bool,
    ) {
        if self.many() {
            return;
        }
        let c = ci as u16 + 1;
        for j in 0..RECORDS {
            if self.ctx[j] == c && self.tgen[j] == tgen {
                let t = &mut self.top[j];
                *t = [t[0].min(top), t[1].max(top)];
                if self.base[j] != at.base || self.shift[j] != at.shift {
                    self.base[j] = SEVERAL;
                }
                return;
            }
        }
        for j in 0..RECORDS {
            if self.ctx[j] == 0 || !live(self.ctx[j] as usize - 1, self.tgen[j]) {
                self.ctx[j] = c;
                self.tgen[j] = tgen;
                self.top[j] = [top, top];
                self.base[j] = at.base;
                self.shift[j] = at.shift;
                return;
            }
        }
        self.ctx[0] = Self::MANY;
    }

    /// The records (none if many).
    #[inline]
    pub fn records(&self) -> impl Iterator<Item = Mapper> + '_ {
        (0..RECORDS)
            .filter(move |&j| !self.many() && self.ctx[j] != 0)
            .map(move |j| Mapper {
                ctx: self.ctx[j] as usize - 1,
                tgen: self.tgen[j],
                lo: self.top[j][0],
                hi: self.top[j][1],
                at: (self.base[j] != SEVERAL).then_some(At {
                    base: self.base[j],
                    shift: self.shift[j],
                }),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;
    use std::vec::Vec;

    const A: At = At { base: 0, shift: 12 };

    fn pairs(m: &Mappers) -> Vec<(usize, u32)> {
        m.records().map(|r| (r.ctx, r.tgen)).collect()
    }

    #[test]
    fn records_four_then_many() {
        let live = |_: usize, _: u32| true;
        let mut m = Mappers::one(3, 7, 0, A);
        m.note(3, 7, 0, A, live);
        assert_eq!(pairs(&m), [(3, 7)]);
        m.note(5, 1, 0, A, live);
        m.note(6, 2, 0, A, live);
        m.note(8, 4, 0, A, live);
        assert_eq!(pairs(&m), [(3, 7), (5, 1), (6, 2), (8, 4)]);
        assert!(!m.many());
        m.note(9, 2, 0, A, live);
        assert!(m.many());
        assert_eq!(m.records().count(), 0);
        m.note(3, 7, 0, A, live);
        assert!(m.many(), "many stays many");
    }

    #[test]
    fn a_stale_pair_makes_room() {
        let mut m = Mappers::one(1, 10, 0, A);
        m.note(2, 20, 0, A, |_, _| true);
        // Context 1 has had its tables discarded (now generation 11).
        m.note(4, 40, 0, A, |c, g| !(c == 1 && g == 10));
        assert_eq!(pairs(&m), [(4, 40), (2, 20)]);
        // The same context in a new generation is a new pair.
        m.note(2, 21, 0, A, |c, g| !(c == 2 && g == 20));
        assert_eq!(pairs(&m), [(4, 40), (2, 21)]);
    }

    #[test]
    fn a_record_spans_its_top_level_entries() {
        let live = |_: usize, _: u32| true;
        let mut m = Mappers::one(1, 10, 64, A);
        m.note(1, 10, 70, A, live);
        m.note(1, 10, 65, A, live);
        m.note(2, 5, 0, A, live);
        let r: Vec<_> = m.records().map(|r| (r.ctx, r.lo, r.hi)).collect();
        assert_eq!(r, [(1, 64, 70), (2, 0, 0)]);
        // A new generation starts a new span.
        m.note(1, 11, 3, A, |c, g| !(c == 1 && g == 10));
        let r: Vec<_> = m.records().map(|r| (r.ctx, r.lo, r.hi)).collect();
        assert_eq!(r, [(1, 3, 3), (2, 0, 0)]);
    }

    #[test]
    fn a_record_knows_its_place_until_a_second() {
        let live = |_: usize, _: u32| true;
        let leaf = At {
            base: 0x40_0000,
            shift: 12,
        };
        let mut m = Mappers::one(1, 10, 0, leaf);
        m.note(1, 10, 0, leaf, live);
        m.note(
            2,
            5,
            0,
            At {
                base: 0x7000_0000,
                shift: 12,
            },
            live,
        );
        let r: Vec<_> = m.records().map(|r| r.at).collect();
        assert_eq!(
            r,
            [
                Some(leaf),
                Some(At {
                    base: 0x7000_0000,
                    shift: 12
                })
            ]
        );
        // Context 1 meets it again elsewhere (or with another size).
        m.note(
            1,
            10,
            0,
            At {
                base: 0x50_0000,
                shift: 12,
            },
            live,
        );
        let r: Vec<_> = m.records().map(|r| r.at).collect();
        assert_eq!(
            r,
            [
                None,
                Some(At {
                    base: 0x7000_0000,
                    shift: 12
                })
            ]
        );
        // A new generation is a new place.
        m.note(1, 11, 0, leaf, |c, g| !(c == 1 && g == 10));
        assert_eq!(m.records().next().map(|r| r.at), Some(Some(leaf)));
    }

    #[test]
    fn slot_ranges() {
        const END: u64 = 1 << 47;
        let page = At {
            base: 0x1234_5000,
            shift: 12,
        };
        assert_eq!(page.slot_range(Some(0), END), (0x1234_5000, 0x1234_6000));
        let leaf = At {
            base: 0x40_0000,
            shift: 12,
        };
        assert_eq!(leaf.slot_range(Some(3), END), (0x40_3000, 0x40_4000));
        assert_eq!(leaf.slot_range(None, END), (0x40_0000, 0x41_0000));
        // lss 2: 64 KiB slots.
        let n = At {
            base: 0x100_0000,
            shift: 16,
        };
        assert_eq!(n.slot_range(Some(15), END), (0x10f_0000, 0x110_0000));
        // A root of size code 10 (2^48 bytes a slot): slot 0 is the whole
        // user half, slot 1 beyond it.
        let root = At { base: 0, shift: 48 };
        assert_eq!(root.slot_range(Some(0), END), (0, END));
        assert_eq!(root.slot_range(Some(1), END), (END, END));
        assert_eq!(root.slot_range(None, END), (0, END));
        // Spans past 2^64 saturate.
        let huge = At { base: 0, shift: 64 };
        assert_eq!(huge.slot_range(Some(1), END), (END, END));
        assert_eq!(huge.slot_range(Some(0), END), (0, END));
    }

    proptest! {
        /// Against a model of the page tables: whatever the order of
        /// mappings, whole discards and discards of some top-level
        /// entries, every mapping a context's current tables hold is
        /// within a recorded live record's span, or `many` is set.
        /// (Missing one would leave a stale mapping after a change.)
        #[test]
        fn never_forgets_a_live_mapping(
            ops in proptest::collection::vec((0usize..6, 0u8..6, 0u8..3), 1..80)
        ) {
            let mut tgen = [0u32; 6];
            let mut next = 1u32;
            for g in tgen.iter_mut() {
                *g = next;
                next += 1;
            }
            // The mappings through the object now: (context, generation,
            // top-level entry).
            let mut maps: BTreeSet<(usize, u32, u8)> = BTreeSet::new();
            let mut m: Option<Mappers> = None;
            for (c, top, op) in ops {
                match op {
                    0 => {
                        let t = tgen;
                        match &mut m {
                            None => m = Some(Mappers::one(c, tgen[c], top, A)),
                            Some(m) => m.note(c, tgen[c], top, A, |ci, g| t[ci] == g),
                        }
                        maps.insert((c, tgen[c], top));
                    }
                    1 => {
                        // Context c's tables are discarded.
                        tgen[c] = next;
                        next += 1;
                        maps.retain(|&(x, _, _)| x != c);
                    }
                    _ => {
                        // Entries from `top` up of context c are discarded
                        // (another object's change); its generation stays.
                        maps.retain(|&(x, _, t)| x != c || t < top);
                    }
                }
                let Some(m) = m else { continue };
                if !m.many() {
                    for &(c, g, t) in &maps {
                        prop_assert!(
                            m.records().any(|r| r.ctx == c && r.tgen == g && r.lo <= t && t <= r.hi),
                            "{c} {g} {t} missing"
                        );
                    }
                }
            }
        }
    }
}
