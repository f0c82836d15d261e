//! A reference translation for tests, written independently of the walk:
//! it enumerates the whole address space of an entry key into regions
//! (page runs with one outcome each), then answers an address by looking it
//! up. Recursive and allocating, fine for test-sized trees.

use crate::model::Model;
use crate::{size_pages, Access, Found, Invalid, Keeper, Leaf, PAGE_SHIFT};
use std::vec::Vec;
use stet_abi::fault::why;
use stet_keys::{rights, Key, KeyType, MAX_LSS};

/// Pages addressable by a u64 byte address.
pub const ALL_PAGES: u64 = 1 << (64 - PAGE_SHIFT);

/// What every address of a region leads to.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    /// A page, reached read-only or not.
    Page { key: Key, ro: bool },
    /// An invalid reference.
    Bad(u64),
}

/// A run of pages with one outcome.
#[derive(Clone, Debug)]
pub struct Region {
    pub first: u64,
    pub pages: u64,
    pub out: Out,
    /// Nodes passed through, root first.
    pub path: Vec<Key>,
    /// The keeper to tell: (start key, segment key, first page of that
    /// segment).
    pub keeper: Option<(Key, Key, u64)>,
}

/// The state of the path down to a key.
#[derive(Clone, Default)]
struct Path {
    ro: bool,
    nocall: bool,
    nodes: Vec<Key>,
    /// Red nodes with no NOCALL above: (segment key, first page, slot 15).
    reds: Vec<(Key, u64, Key)>,
}

impl Path {
    fn region(&self, first: u64, pages: u64, out: Out) -> Region {
        let keeper = self
            .reds
            .iter()
            .rev()
            .find(|r| r.2.key_type() == KeyType::Start)
            .map(|&(seg, base, start)| (start, seg, base));
        Region {
            first,
            pages,
            out,
            path: self.nodes.clone(),
            keeper,
        }
    }
}

/// Every region of the address space reached through `entry`, sorted.
pub fn regions(m: &Model, entry: Key) -> Vec<Region> {
    let mut out = Vec::new();
    // The entry behaves as a slot spanning every address, where segment
    // keys of any valid size fit.
    place(m, entry, 0, ALL_PAGES, MAX_LSS, &Path::default(), &mut out);
    out.sort_by_key(|r| r.first);
    out
}

/// The regions of `key` standing in a window of `window` pages at `base`,
/// where segment keys may have size code at most `max_lss`.
fn place(
    m: &Model,
    key: Key,
    base: u64,
    window: u64,
    max_lss: u8,
    path: &Path,
    out: &mut Vec<Region>,
) {
    let bad = |why| Out::Bad(why);
    match key.key_type() {
        KeyType::Void => out.push(path.region(base, window, bad(why::NOT_PRESENT))),
        KeyType::Page => {
            let o = if m.page_live(key) {
                Out::Page {
                    key,
                    ro: path.ro || key.is_ro(),
                }
            } else {
                bad(why::NOT_PRESENT)
            };
            out.push(path.region(base, 1, o));
            if window > 1 {
                out.push(path.region(base + 1, window - 1, bad(why::OUT_OF_RANGE)));
            }
        }
        KeyType::Segment if (1..=max_lss).contains(&key.lss()) => {
            let lss = key.lss();
            let size = size_pages(lss);
            if size < window {
                out.push(path.region(base + size, window - size, bad(why::OUT_OF_RANGE)));
            }
            let Some(slots) = m.contents(key) else {
                out.push(path.region(base, size, bad(why::NOT_PRESENT)));
                return;
            };
            let mut inner = path.clone();
            inner.ro |= key.is_ro();
            inner.nocall |= key.rights() & rights::NOCALL != 0;
            inner.nodes.push(key);
            let red = key.rights() & rights::KEEPER != 0;
            if red && !inner.nocall {
                inner.reds.push((key, base, slots[15]));
            }
            let span = size / 16;
            for (i, &slot) in slots.iter().enumerate() {
                let first = base + i as u64 * span;
                if red && i == 15 {
                    out.push(inner.region(first, span, bad(why::OUT_OF_RANGE)));
                } else {
                    place(m, slot, first, span, lss - 1, &inner, out);
                }
            }
        }
        _ => out.push(path.region(base, window, bad(why::MALFORMED))),
    }
}

/// The region holding page `page`.
pub fn lookup(regions: &[Region], page: u64) -> &Region {
    let i = regions.partition_point(|r| r.first <= page) - 1;
    let r = &regions[i];
    assert!(page - r.first < r.pages, "regions leave a hole");
    r
}

/// What the walk should answer for `addr` and `access`, and the nodes it
/// should visit.
pub fn expect(regions: &[Region], addr: u64, access: Access) -> (Result<Found, Invalid>, &[Key]) {
    let r = lookup(regions, addr >> PAGE_SHIFT);
    let depth = r.path.len() as u8;
    let keeper = r.keeper.map(|(start, segment, base)| Keeper {
        start,
        segment,
        offset: addr - (base << PAGE_SHIFT),
    });
    let fail = |why| Err(Invalid { why, keeper, depth });
    let result = match r.out {
        Out::Bad(why) => fail(why),
        Out::Page { key, ro } => match (access, ro) {
            (Access::Write, true) | (Access::Execute, false) => fail(why::PROTECTION),
            _ => Ok(Found {
                page: key,
                writable: !ro,
                executable: ro,
                depth,
                // A node of size 1 holds 16 pages, aligned.
                leaf: r.path.last().filter(|n| n.lss() == 1).map(|&n| Leaf {
                    node: n,
                    ro: r.path.iter().any(|k| k.is_ro()),
                    red: n.rights() & rights::KEEPER != 0,
                }),
            }),
        },
    };
    (result, &r.path)
}

/// Checks that `regions` tile every page exactly once.
pub fn check_tiling(regions: &[Region]) {
    let mut next = 0u64;
    for r in regions {
        assert_eq!(r.first, next, "regions overlap or leave a hole");
        assert!(r.pages > 0);
        next = r.first + r.pages;
    }
    assert_eq!(next, ALL_PAGES);
}
