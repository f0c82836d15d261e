//! Property tests: random trees and random graphs of nodes in the model
//! store, walked and compared with the reference translation
//! ([`crate::reference`]), plus invariants that hold for any store.

use crate::model::Model;
use crate::reference::{check_tiling, expect, regions, Out, Region};
use crate::{size_bytes, Access, Found, Invalid, MAX_DEPTH, MAX_STEPS, PAGE_SHIFT, PAGE_SIZE};
use proptest::prelude::*;
use proptest::sample::Index;
use std::vec::Vec;
use stet_keys::rights::{KEEPER, RO};
use stet_keys::{Key, KeyType, MAX_HINT};

/// What slot 15 of a red node holds.
#[derive(Clone, Debug)]
enum KeeperSpec {
    Start(u8),
    Void,
    Number,
    /// Whatever the slot list put there.
    Leave,
}

/// A tree to build: each node is referenced once.
#[derive(Clone, Debug)]
enum Spec {
    Void,
    Page {
        ro: bool,
        gone: bool,
        hint: u32,
    },
    Seg {
        /// How much smaller than the slot allows.
        drop: u8,
        /// One bigger than the slot allows (malformed).
        too_big: bool,
        rights: u8,
        gone: bool,
        keeper: KeeperSpec,
        slots: Vec<(usize, Spec)>,
        hint: u32,
    },
    /// Number, node, start or domain key.
    Other(u8),
}

/// `RO`, `WEAK` and `NOCALL` each with probability 1/4, `KEEPER` 1/2.
fn any_rights() -> impl Strategy<Value = u8> {
    (any::<u8>(), any::<u8>()).prop_map(|(a, b)| (a & b & 0x7) | (a & KEEPER))
}

fn leaf() -> BoxedStrategy<Spec> {
    prop_oneof![
        3 => Just(Spec::Void),
        5 => (any::<bool>(), prop::bool::weighted(0.1), 0..=MAX_HINT)
            .prop_map(|(ro, gone, hint)| Spec::Page { ro, gone, hint }),
        1 => (0u8..4).prop_map(Spec::Other),
    ]
    .boxed()
}

fn keeper_spec() -> impl Strategy<Value = KeeperSpec> {
    prop_oneof![
        4 => any::<u8>().prop_map(KeeperSpec::Start),
        1 => Just(KeeperSpec::Void),
        1 => Just(KeeperSpec::Number),
        1 => Just(KeeperSpec::Leave),
    ]
}

fn seg_of(inner: BoxedStrategy<Spec>) -> impl Strategy<Value = Spec> {
    (
        (
            prop_oneof![3 => Just(0u8), 1 => 1u8..3],
            prop::bool::weighted(0.05),
            any_rights(),
        ),
        prop::bool::weighted(0.05),
        keeper_spec(),
        prop::collection::vec((0usize..16, inner), 0..5),
        0..=MAX_HINT,
    )
        .prop_map(
            |((drop, too_big, rights), gone, keeper, slots, hint)| Spec::Seg {
                drop,
                too_big,
                rights,
                gone,
                keeper,
                slots,
                hint,
            },
        )
}

fn any_spec() -> impl Strategy<Value = Spec> {
    leaf().prop_recursive(10, 64, 3, |inner| seg_of(inner).boxed())
}

/// An entry: mostly a segment.
fn root_spec() -> impl Strategy<Value = Spec> {
    prop_oneof![1 => leaf(), 8 => seg_of(any_spec().boxed())]
}

/// A spine: a chain of full-size nodes, one per size code from the
/// returned entry size down to 1, ending in a page, with a few leaves
/// beside it. Reaches the depths random trees seldom reach.
fn spine_spec() -> impl Strategy<Value = (Spec, u8)> {
    let level = (
        0usize..16,
        any_rights(),
        prop::bool::weighted(0.03),
        keeper_spec(),
        prop::collection::vec((0usize..16, leaf()), 0..3),
    );
    (
        prop::collection::vec(level, 1..=10),
        any::<bool>(),
        prop::bool::weighted(0.05),
    )
        .prop_map(|(levels, ro, gone)| {
            let mut spec = Spec::Page { ro, gone, hint: 1 };
            for (slot, rights, gone, keeper, mut slots) in levels.iter().cloned().rev() {
                slots.push((slot, spec));
                spec = Spec::Seg {
                    drop: 0,
                    too_big: false,
                    rights,
                    gone,
                    keeper,
                    slots,
                    hint: 2,
                };
            }
            (spec, levels.len() as u8)
        })
}

/// An entry and the size code it asks for.
fn any_entry() -> impl Strategy<Value = (Spec, u8)> {
    prop_oneof![3 => (root_spec(), 1u8..=10), 1 => spine_spec()]
}

/// Builds `spec` into `m` for a slot where segment keys may have size code
/// at most `max_lss`; its key. With `all_ro` every page and segment key is
/// read-only.
fn build(m: &mut Model, spec: &Spec, max_lss: u8, all_ro: bool) -> Key {
    match spec {
        Spec::Void => Key::VOID,
        Spec::Page { ro, gone, hint } => {
            let p = m.page();
            let k = m.page_key(p, *ro || all_ro).with_hint(*hint);
            if *gone {
                m.destroy_page(p);
            }
            k
        }
        Spec::Other(0) => Key::number(7, 7),
        Spec::Other(1) => Key::node(m.node(), 0, 0),
        Spec::Other(2) => Key::start(5, 0, 1),
        Spec::Other(_) => Key::domain(m.node(), 0),
        Spec::Seg {
            drop,
            too_big,
            rights,
            gone,
            keeper,
            slots,
            hint,
        } => {
            let lss = if *too_big {
                max_lss + 1
            } else {
                max_lss.saturating_sub(*drop).max(1)
            };
            let n = m.node();
            let ro = if all_ro { RO } else { 0 };
            let key = m.seg(n, lss, rights | ro).with_hint(*hint);
            for (i, sub) in slots {
                let k = build(m, sub, key.lss() - 1, all_ro);
                m.set(n, *i, k);
            }
            if key.rights() & KEEPER != 0 {
                match keeper {
                    KeeperSpec::Start(info) => m.set(n, 15, Key::start(9, 0, *info)),
                    KeeperSpec::Void => m.set(n, 15, Key::VOID),
                    KeeperSpec::Number => m.set(n, 15, Key::number(1, 0)),
                    KeeperSpec::Leave => {}
                }
            }
            if *gone {
                m.destroy_node(n);
            }
            key
        }
    }
}

/// How to choose an address, given the reference's regions.
#[derive(Clone, Debug)]
struct Pick {
    region: Index,
    how: u8,
    n: u64,
    byte: u64,
    access: Access,
}

fn any_access() -> impl Strategy<Value = Access> {
    prop::sample::select(&Access::ALL[..])
}

fn any_pick() -> impl Strategy<Value = Pick> {
    (
        any::<Index>(),
        0u8..8,
        any::<u64>(),
        0..PAGE_SIZE,
        any_access(),
    )
        .prop_map(|(region, how, n, byte, access)| Pick {
            region,
            how,
            n,
            byte,
            access,
        })
}

/// The address `p` designates: the first, last or any page of a region, of
/// a region holding a page if any (`how` 3 to 6), or any address at all
/// (`how` 7).
fn address(regions: &[Region], p: &Pick) -> u64 {
    let pages: Vec<&Region> = regions
        .iter()
        .filter(|r| matches!(r.out, Out::Page { .. }))
        .collect();
    let r = match p.how {
        3..=6 if !pages.is_empty() => pages[p.region.index(pages.len())],
        7 => return p.n,
        _ => &regions[p.region.index(regions.len())],
    };
    let page = r.first
        + match p.how {
            0 => 0,
            1 => r.pages - 1,
            _ => p.n % r.pages,
        };
    page << PAGE_SHIFT | p.byte
}

type Outcome = (Result<Found, Invalid>, Vec<Key>);

/// Walks twice (the walk must be deterministic) and checks the invariants
/// that hold in any store.
fn walk_checked(m: &mut Model, entry: Key, addr: u64, access: Access) -> Outcome {
    let first = m.run(entry, addr, access);
    let again = m.run(entry, addr, access);
    assert_eq!(first, again, "not deterministic");
    let (result, seen) = &first;
    let depth = match result {
        Ok(f) => {
            assert_eq!(f.page.key_type(), KeyType::Page);
            assert_eq!(f.writable, !f.executable);
            f.depth
        }
        Err(e) => {
            if let Some(k) = e.keeper {
                assert_eq!(k.start.key_type(), KeyType::Start);
                assert!(k.segment.rights() & KEEPER != 0);
                assert!(seen.contains(&k.segment));
            }
            e.depth
        }
    };
    assert!(depth <= MAX_DEPTH && usize::from(depth) < MAX_STEPS);
    assert_eq!(seen.len(), usize::from(depth), "visit once per node");
    if let Some(root) = seen.first() {
        assert_eq!(*root, entry);
    }
    for pair in seen.windows(2) {
        assert!(pair[1].lss() < pair[0].lss(), "sizes strictly decrease");
    }
    assert!(seen.iter().all(|k| k.key_type() == KeyType::Segment));
    first
}

/// A key in a random graph (sharing and cycles allowed): indices are taken
/// modulo the number of nodes or pages.
#[derive(Clone, Debug)]
enum G {
    Void,
    Page {
        idx: usize,
        ro: bool,
        stale: bool,
    },
    Seg {
        idx: usize,
        lss: u8,
        rights: u8,
        stale: bool,
    },
    Start(u8),
    Number,
}

fn any_g() -> impl Strategy<Value = G> {
    prop_oneof![
        4 => Just(G::Void),
        3 => (any::<usize>(), any::<bool>(), prop::bool::weighted(0.1))
            .prop_map(|(idx, ro, stale)| G::Page { idx, ro, stale }),
        4 => (
            any::<usize>(),
            prop_oneof![3 => 1u8..=3, 1 => 1u8..=10],
            any_rights(),
            prop::bool::weighted(0.1)
        )
            .prop_map(|(idx, lss, rights, stale)| G::Seg { idx, lss, rights, stale }),
        1 => any::<u8>().prop_map(G::Start),
        1 => Just(G::Number),
    ]
}

fn g_key(g: &G, nodes: usize, pages: usize) -> Key {
    match *g {
        G::Void => Key::VOID,
        G::Page { idx, ro, stale } => Key::page((idx % pages) as u64, stale as u32, ro),
        G::Seg {
            idx,
            lss,
            rights,
            stale,
        } => Key::segment((idx % nodes) as u64, stale as u32, lss, rights),
        G::Start(info) => Key::start(3, 0, info),
        G::Number => Key::number(2, 2),
    }
}

/// A model with the given nodes (16 keys each) and `pages` pages.
fn graph(nodes: &[Vec<G>], pages: usize) -> Model {
    let mut m = Model::new();
    for _ in 0..pages {
        m.page();
    }
    for _ in nodes {
        m.node();
    }
    for (n, slots) in nodes.iter().enumerate() {
        for (i, g) in slots.iter().enumerate() {
            m.set(n as u64, i, g_key(g, nodes.len(), pages));
        }
    }
    m
}

proptest! {
    #[test]
    fn walk_matches_reference(
        (root, root_lss) in any_entry(),
        picks in prop::collection::vec(any_pick(), 1..12),
    ) {
        let mut m = Model::new();
        let entry = build(&mut m, &root, root_lss, false);
        let regions = regions(&m, entry);
        check_tiling(&regions);
        for p in &picks {
            let addr = address(&regions, p);
            let (want, path) = expect(&regions, addr, p.access);
            let (got, seen) = walk_checked(&mut m, entry, addr, p.access);
            prop_assert_eq!(got, want, "address {:#x}", addr);
            prop_assert_eq!(&seen[..], path);
        }
    }

    #[test]
    fn read_only_trees_are_never_writable(
        (root, root_lss) in any_entry(),
        picks in prop::collection::vec(any_pick(), 1..12),
    ) {
        let mut m = Model::new();
        let entry = build(&mut m, &root, root_lss, true);
        let regions = regions(&m, entry);
        for p in &picks {
            let addr = address(&regions, p);
            for access in Access::ALL {
                let (r, _) = walk_checked(&mut m, entry, addr, access);
                if let Ok(f) = r {
                    prop_assert!(!f.writable && f.executable);
                    prop_assert!(access != Access::Write);
                }
            }
        }
    }

    #[test]
    fn graphs_terminate_and_match_reference(
        nodes in prop::collection::vec(prop::collection::vec(any_g(), 16), 1..6),
        pages in 1usize..5,
        entry in any_g(),
        picks in prop::collection::vec(any_pick(), 1..12),
    ) {
        let mut m = graph(&nodes, pages);
        let entry = g_key(&entry, nodes.len(), pages);
        // Shared nodes multiply the regions; enumerate only small entries.
        let small = entry.key_type() != KeyType::Segment || entry.lss() <= 4;
        let regions = if small { regions(&m, entry) } else { Vec::new() };
        for p in &picks {
            let addr = match (small, size_bytes(entry.lss())) {
                (true, _) => address(&regions, p),
                (false, Some(size)) if p.how < 7 => p.n % size,
                _ => p.n,
            };
            let (got, seen) = walk_checked(&mut m, entry, addr, p.access);
            if small {
                let (want, path) = expect(&regions, addr, p.access);
                prop_assert_eq!(got, want, "address {:#x}", addr);
                prop_assert_eq!(&seen[..], path);
            }
        }
    }
}
