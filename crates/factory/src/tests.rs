//! Host tests: the plan against `stet-segment`'s walk and against the
//! image builder's rule written out over explicit page lists; the
//! discreetness rule, type by type; the books against a model.

use crate::books::{dir_path, Books, Error, New, NodeId, MAX_FACTORIES};
use crate::discreet::{classify, verdict, Class, Component, Nested, Verdict};
use crate::plan::{
    self, node_count, path, steps, Pages, PlanError, Segment, Source, Step, PAGE, ROOT_LSS,
    USER_PAGES,
};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::format;
use std::vec::Vec;
use stet_abi::layout::STACK_TOP;
use stet_abi::service::factory::why;
use stet_keys::{rights, Key, KeyType};
use stet_segment::{walk, Access, Store};

// ---- plan ---------------------------------------------------------------

fn seg(first: u64, count: u64, writable: bool) -> Segment {
    Segment {
        first,
        count,
        writable,
    }
}

#[test]
fn segment_numbers_round_trip_and_are_checked() {
    let s = seg(0x400, 3, true);
    assert_eq!(s.to_number(), (0x40_0000, 7));
    assert_eq!(Segment::from_number(0x40_0000, 7), Ok(s));
    assert_eq!(
        Segment::from_number(0x40_0001, 7),
        Err(PlanError::Misaligned)
    );
    assert_eq!(Segment::from_number(0x40_0000, 1), Err(PlanError::BadCount));
    assert_eq!(
        Segment::from_number(0x40_0000, (1 << 28) << 1),
        Err(PlanError::BadCount)
    );
    assert_eq!(
        Segment::from_number(USER_PAGES * PAGE, 2),
        Err(PlanError::OutOfRange)
    );
    assert_eq!(
        Segment::from_number((USER_PAGES - 1) * PAGE, 4),
        Err(PlanError::OutOfRange)
    );
    assert_eq!(Segment::decode(s.encode()), s);
}

#[test]
fn pages_are_sorted_and_disjoint() {
    let mut p = Pages::new();
    p.add(100, 10, Source::Text).unwrap();
    p.add(10, 5, Source::Data).unwrap();
    assert_eq!(p.add(14, 1, Source::Text), Err(PlanError::Overlap));
    assert_eq!(p.add(105, 1, Source::Text), Err(PlanError::Overlap));
    assert_eq!(p.add(95, 6, Source::Text), Err(PlanError::Overlap));
    assert_eq!(p.add(0, 0, Source::Text), Err(PlanError::BadCount));
    assert_eq!(
        p.add(USER_PAGES, 1, Source::Text),
        Err(PlanError::OutOfRange)
    );
    p.add(15, 85, Source::Stack).unwrap();
    assert_eq!(p.ranges().len(), 3);
    assert_eq!(p.len(), 100);
    assert_eq!(p.count(Source::Data), 5);
    assert_eq!(p.source(9), None);
    assert_eq!(p.source(10), Some(Source::Data));
    assert_eq!(p.source(15), Some(Source::Stack));
    assert_eq!(p.source(109), Some(Source::Text));
    assert_eq!(p.source(110), None);
    assert_eq!(p.highest_in(0, 50), Some(49));
    assert_eq!(p.highest_in(0, 10), None);
    assert_eq!(p.highest_in(0, 1000), Some(109));
    for i in 0..12 {
        p.add(1000 + i * 2, 1, Source::Text).unwrap();
    }
    assert_eq!(p.add(5000, 1, Source::Text), Err(PlanError::TooMany));
}

#[test]
fn product_pages_share_text_copy_data_add_the_stack() {
    let segs = [seg(0x400, 3, false), seg(0x403, 2, true)];
    let p = plan::product(&segs, 4).unwrap();
    assert_eq!(p.count(Source::Text), 3);
    assert_eq!(p.count(Source::Data), 2);
    assert_eq!(p.count(Source::Stack), 4);
    assert_eq!(p.source(STACK_TOP / PAGE - 4), Some(Source::Stack));
    assert_eq!(p.source(STACK_TOP / PAGE), None);
    assert_eq!(plan::product(&segs, 0), Err(PlanError::BadStack));
    assert_eq!(plan::product(&segs, 257), Err(PlanError::BadStack));
    assert!(plan::product(&segs, 256).is_ok());
    let clash = [seg(STACK_TOP / PAGE - 1, 1, false)];
    assert_eq!(plan::product(&clash, 1), Err(PlanError::Overlap));
    let t = plan::template(&segs).unwrap();
    assert_eq!(t.count(Source::Text), 5);
    assert_eq!(
        plan::template(&[seg(1, 2, false), seg(2, 1, true)]),
        Err(PlanError::Overlap)
    );
    let many = [seg(1, 1, false); 15];
    assert_eq!(plan::template(&many), Err(PlanError::TooMany));
}

#[test]
fn the_image_builders_example_takes_ten_nodes_below_the_root() {
    // docs/IMAGE.md: text at 0x400000, data at 0x600000, 16 stack pages.
    let segs = [seg(0x400, 1, false), seg(0x600, 2, true)];
    let p = plan::product(&segs, 16).unwrap();
    assert_eq!(node_count(&p), 11);
    let mut got = Vec::new();
    steps::<()>(&p, &mut |s| {
        got.push(s);
        Ok(())
    })
    .unwrap();
    assert_eq!(
        &got[..5],
        &[
            Step::Node {
                depth: 0,
                lss: 9,
                base: 0,
                slot: 0
            },
            Step::Node {
                depth: 1,
                lss: 3,
                base: 0,
                slot: 0
            },
            Step::Page {
                depth: 1,
                slot: 4,
                page: 0x400,
                source: Source::Text
            },
            Step::Node {
                depth: 2,
                lss: 1,
                base: 0x600,
                slot: 6
            },
            Step::Page {
                depth: 2,
                slot: 0,
                page: 0x600,
                source: Source::Data
            },
        ]
    );
    let p600 = path(&p, 0x601).unwrap();
    assert_eq!(p600.leaf_lss, 1);
    assert_eq!(p600.leaf_base, 0x600);
    let hops: Vec<(u8, u8)> = p600.hops().iter().map(|h| (h.slot, h.lss)).collect();
    assert_eq!(hops, [(0, 3), (6, 1), (1, 0)]);
    let top = path(&p, STACK_TOP / PAGE - 1).unwrap();
    assert_eq!(top.hops().len(), 9);
    assert_eq!(top.hops()[0].slot, 7);
    assert_eq!(path(&p, 0x401), None);
}

/// The image builder's rule over an explicit page list (tools/mkimage's
/// `fill`), counting nodes: the reference for minimality.
fn reference_nodes(lss: u8, base: u64, pages: &[u64]) -> u64 {
    let span = 16u64.pow(lss as u32 - 1);
    let mut n = 0;
    let mut rest = pages;
    for i in 0..16 {
        let lo = base + i * span;
        let k = rest.partition_point(|&p| p < lo + span);
        let (sub, next) = rest.split_at(k);
        rest = next;
        let Some(&last) = sub.last() else { continue };
        let highest = last - lo;
        if highest == 0 {
            continue;
        }
        let mut kk = 1u8;
        while 16u64.pow(kk as u32) <= highest {
            kk += 1;
        }
        n += 1 + reference_nodes(kk, lo, sub);
    }
    n
}

/// A tree built from the steps, as the kernel would hold it.
#[derive(Default)]
struct Model {
    nodes: Vec<[Key; 16]>,
    /// Page number → the key put in the tree.
    keys: BTreeMap<u64, Key>,
}

impl Store for Model {
    fn slot(&mut self, node: Key, slot: usize) -> Option<Key> {
        self.nodes.get(node.oid() as usize).map(|n| n[slot])
    }
    fn page_exists(&mut self, _page: Key) -> bool {
        true
    }
}

/// Builds the tree the way the factory server does: a stack of the
/// current node at each depth.
fn build(p: &Pages) -> (Model, Key) {
    let mut m = Model::default();
    let mut stack: Vec<usize> = Vec::new();
    let mut next_page = 0u64;
    steps::<()>(p, &mut |s| {
        match s {
            Step::Node {
                depth, lss, slot, ..
            } => {
                let oid = m.nodes.len();
                m.nodes.push([Key::VOID; 16]);
                stack.truncate(depth as usize);
                if let Some(&parent) = stack.last() {
                    m.nodes[parent][slot as usize] = Key::segment(oid as u64, 0, lss, 0);
                }
                stack.push(oid);
            }
            Step::Page {
                depth,
                slot,
                page,
                source,
            } => {
                stack.truncate(depth as usize + 1);
                let key = Key::page(next_page, 0, source == Source::Text);
                next_page += 1;
                m.nodes[*stack.last().unwrap()][slot as usize] = key;
                assert!(m.keys.insert(page, key).is_none(), "page {page:#x} twice");
            }
        }
        Ok(())
    })
    .unwrap();
    (m, Key::segment(0, 0, ROOT_LSS, 0))
}

fn segments() -> impl Strategy<Value = (Vec<Segment>, u64)> {
    // Clustered near the usual program address, or anywhere below the
    // stack area, so that trees both share nodes and spread out.
    let start = prop_oneof![0x400u64..0x2000, 0u64..(STACK_TOP / PAGE - 512),];
    (
        proptest::collection::vec((start, 1u64..40, any::<bool>()), 0..6),
        1u64..40,
    )
        .prop_map(|(raw, stack)| {
            let mut segs: Vec<Segment> = Vec::new();
            for (first, count, writable) in raw {
                let s = seg(first, count, writable);
                let clash = segs
                    .iter()
                    .any(|o| o.first < first + count && first < o.first + o.count);
                if !clash {
                    segs.push(s);
                }
            }
            (segs, stack)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Every page of the plan walks (through `stet-segment`) to its own
    /// key, writable exactly when it is not shared text; pages outside the
    /// plan do not walk; the tree is as small as the image builder's; and
    /// `path` finds every page where the tree has it.
    #[test]
    fn the_plan_is_the_smallest_tree_and_walks((segs, stack) in segments(), probes in proptest::collection::vec(0u64..USER_PAGES, 20)) {
        let p = plan::product(&segs, stack).unwrap();
        let (mut m, root) = build(&p);
        let mut all: Vec<u64> = Vec::new();
        for r in p.ranges() {
            all.extend(r.first..r.first + r.count);
        }
        prop_assert_eq!(m.keys.len() as u64, p.len());
        prop_assert_eq!(node_count(&p), 1 + reference_nodes(ROOT_LSS, 0, &all));
        prop_assert_eq!(node_count(&p), m.nodes.len() as u64);
        for &page in &all {
            let f = walk(&mut m, root, page * PAGE + 8, Access::Read, &mut |_| {});
            let f = f.map_err(|e| TestCaseError::fail(format!("{page:#x}: {e:?}")))?;
            prop_assert_eq!(f.page, m.keys[&page]);
            prop_assert_eq!(f.writable, p.source(page) != Some(Source::Text));
            let path = path(&p, page).unwrap();
            let mut key = root;
            for h in path.hops() {
                key = m.slot(key, h.slot as usize).unwrap();
                if h.lss == 0 {
                    prop_assert_eq!(key.key_type(), KeyType::Page);
                } else {
                    prop_assert_eq!((key.key_type(), key.lss()), (KeyType::Segment, h.lss));
                }
            }
            prop_assert_eq!(key, m.keys[&page]);
        }
        let set: BTreeSet<u64> = all.iter().copied().collect();
        for page in probes {
            if !set.contains(&page) {
                let r = walk(&mut m, root, page * PAGE, Access::Read, &mut |_| {});
                prop_assert!(r.is_err());
                prop_assert!(path(&p, page).is_none());
            }
        }
    }

    #[test]
    fn pages_source_matches_a_list(segs in segments(), probes in proptest::collection::vec(0u64..0x3000, 40)) {
        let (segs, stack) = segs;
        let p = plan::product(&segs, stack).unwrap();
        for page in probes {
            let want = segs
                .iter()
                .find(|s| s.first <= page && page < s.first + s.count)
                .map(|s| if s.writable { Source::Data } else { Source::Text });
            prop_assert_eq!(p.source(page), want);
        }
    }
}

// ---- the discreetness rule -----------------------------------------------

#[test]
fn every_key_type_is_classified() {
    use Class::*;
    let ro = rights::RO as u64;
    let sense = (rights::RO | rights::WEAK) as u64;
    let seg_ok = (rights::RO | rights::WEAK | rights::NOCALL) as u64;
    let t = |k: KeyType| k as u64;
    let cases = [
        (t(KeyType::Void), 0, Discreet),
        (t(KeyType::Number), 0, Discreet),
        (t(KeyType::Page), 0, NotDiscreet),
        (t(KeyType::Page), ro, Discreet),
        (t(KeyType::Node), 0, NotDiscreet),
        (t(KeyType::Node), ro, NotDiscreet),
        (t(KeyType::Node), rights::WEAK as u64, NotDiscreet),
        (t(KeyType::Node), sense, Discreet),
        (t(KeyType::Segment), sense, NotDiscreet),
        (t(KeyType::Segment), ro | rights::NOCALL as u64, NotDiscreet),
        (t(KeyType::Segment), seg_ok, Discreet),
        (
            t(KeyType::Segment),
            seg_ok | rights::KEEPER as u64,
            Discreet,
        ),
        (t(KeyType::Domain), 0, NotDiscreet),
        (t(KeyType::Start), 0, NotDiscreet),
        (t(KeyType::Resume), 0, NotDiscreet),
        (t(KeyType::Meter), 0, NotDiscreet),
        (t(KeyType::Discrim), 0, Discreet),
        (t(KeyType::Sleep), 0, Discreet),
        (t(KeyType::Console), 0, NotDiscreet),
        (t(KeyType::KeyBits), 0, NotDiscreet),
        (t(KeyType::Range), 0, NotDiscreet),
        (t(KeyType::Checkpoint), 0, NotDiscreet),
        (t(KeyType::Journal), 0, NotDiscreet),
        (t(KeyType::Forwarder), 0, Forwarder),
        (17, 0, NotDiscreet),
        (18, 0, NotDiscreet),
        (256 + 1, 0, NotDiscreet),
    ];
    for (ty, r, want) in cases {
        assert_eq!(classify(ty, r, false), want, "type {ty} rights {r}");
    }
    // A key to a destroyed object acts as void.
    assert_eq!(classify(t(KeyType::Start), 0, true), Discreet);
}

proptest! {
    #[test]
    fn components_and_verdicts_round_trip(tag in 0u8..4, ty in any::<u8>(), w in any::<u8>(), n in 0u32..(1 << 24), gen in any::<u32>(), d in any::<bool>(), slot in 0u8..13) {
        let c = match tag {
            0 => Component::Empty,
            1 => Component::Discreet { ty },
            2 => Component::NotDiscreet { ty, why: w },
            _ => Component::Factory { n, gen },
        };
        prop_assert_eq!(Component::decode(c.encode()), c);
        let v = Verdict { discreet: d, slot, why: w, ty };
        prop_assert_eq!(Verdict::decode(v.encode()), v);
    }
}

#[test]
fn the_first_slot_that_is_not_discreet_decides() {
    let mut c = [Component::Empty; 12];
    assert_eq!(verdict(&c, |_, _| Nested::Gone), Verdict::DISCREET);
    c[0] = Component::Discreet { ty: 9 };
    c[4] = Component::NotDiscreet {
        ty: 2,
        why: why::KEY as u8,
    };
    c[7] = Component::NotDiscreet {
        ty: 6,
        why: why::KEY as u8,
    };
    let v = verdict(&c, |_, _| Nested::Gone);
    assert_eq!(
        v,
        Verdict {
            discreet: false,
            slot: 5,
            why: why::KEY as u8,
            ty: 2
        }
    );
    assert_eq!(v.words(), [0, 5, why::KEY, 2]);

    let mut c = [Component::Empty; 12];
    c[2] = Component::Factory { n: 7, gen: 3 };
    let at = |state: Nested| {
        verdict(&c, |n, g| {
            assert_eq!((n, g), (7, 3));
            state
        })
    };
    assert_eq!(at(Nested::Sealed(true)), Verdict::DISCREET);
    assert_eq!(at(Nested::Gone), Verdict::DISCREET);
    let fwd = KeyType::Forwarder as u8;
    assert_eq!(
        at(Nested::Sealed(false)),
        Verdict {
            discreet: false,
            slot: 3,
            why: why::NESTED_NOT_DISCREET as u8,
            ty: fwd
        }
    );
    assert_eq!(
        at(Nested::Unsealed),
        Verdict {
            discreet: false,
            slot: 3,
            why: why::NESTED_UNSEALED as u8,
            ty: fwd
        }
    );
    assert_eq!(Verdict::UNSEALED.words(), [0, 0, why::UNSEALED, 0]);
}

// ---- the books -------------------------------------------------------------

type Vecw = Vec<u64>;

fn books(max: u32) -> Books<Vecw> {
    Books::format(std::vec![0; Books::<Vecw>::words_for(max)], max).unwrap()
}

fn id(oid: u64, version: u32) -> NodeId {
    NodeId { oid, version }
}

fn new(req: NodeId, bld: NodeId) -> New<'static> {
    static SEGS: [Segment; 2] = [
        Segment {
            first: 0x400,
            count: 2,
            writable: false,
        },
        Segment {
            first: 0x402,
            count: 1,
            writable: true,
        },
    ];
    New {
        requestor: req,
        builder: bld,
        entry: 0x40_1000,
        segments: &SEGS,
    }
}

#[test]
fn books_format_open_and_refuse_garbage() {
    assert!(Books::format(std::vec![0; 10], 4).is_none());
    assert!(Books::format(std::vec![0; 100_000], 0).is_none());
    assert!(Books::format(std::vec![0; 200_000], MAX_FACTORIES + 1).is_none());
    assert!(Books::open(std::vec![0; 1000]).is_none());
    let mut b = books(4);
    let n = b.next_free().unwrap();
    b.create(n, &new(id(10, 1), id(11, 1))).unwrap();
    let w = b.into_words();
    let b = Books::open(w).unwrap();
    assert_eq!(b.max(), 4);
    let r = b.record(1).unwrap();
    assert_eq!(r.entry, 0x40_1000);
    assert_eq!(r.segments(), new(id(0, 0), id(0, 0)).segments);
    assert_eq!(r.stack_pages, plan::DEFAULT_STACK_PAGES);
    assert_eq!(r.verdict, Verdict::UNSEALED);
}

#[test]
fn numbers_are_handed_out_reused_and_bounded() {
    let mut b = books(2);
    assert_eq!(b.next_free(), Some(1));
    assert_eq!(b.create(2, &new(id(10, 1), id(11, 1))), Err(Error::Full));
    assert_eq!(b.create(1, &new(id(10, 1), id(11, 1))), Ok(1));
    assert_eq!(b.create(2, &new(id(20, 1), id(21, 1))), Ok(1));
    assert_eq!(b.next_free(), None);
    assert_eq!(b.by_requestor(id(20, 1)), Some((2, 1)));
    assert_eq!(b.by_requestor(id(20, 2)), None);
    assert_eq!(b.by_requestor(id(21, 1)), None);
    assert_eq!(b.free(1), Ok(()));
    assert_eq!(b.free(1), Err(Error::NoFactory));
    assert_eq!(b.record(1), None);
    assert_eq!(b.by_requestor(id(10, 1)), None);
    assert_eq!(b.next_free(), Some(1));
    // Reused: a new generation; the old node's oid made again.
    assert_eq!(b.create(1, &new(id(10, 2), id(11, 2))), Ok(2));
    assert_eq!(b.by_requestor(id(10, 2)), Some((1, 2)));
    assert_eq!(b.in_use().collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn a_dead_factory_and_a_live_one_on_the_same_oid_are_told_apart() {
    let mut b = books(4);
    b.create(1, &new(id(10, 1), id(11, 1))).unwrap();
    // Node 10 was destroyed and made again for another factory before
    // factory 1 was swept.
    b.create(2, &new(id(10, 2), id(12, 2))).unwrap();
    assert_eq!(b.by_requestor(id(10, 1)), Some((1, 1)));
    assert_eq!(b.by_requestor(id(10, 2)), Some((2, 1)));
    b.free(1).unwrap();
    assert_eq!(b.by_requestor(id(10, 1)), None);
    assert_eq!(b.by_requestor(id(10, 2)), Some((2, 1)));
}

#[test]
fn install_and_seal() {
    let mut b = books(8);
    b.create(1, &new(id(10, 1), id(11, 1))).unwrap();
    b.create(2, &new(id(20, 1), id(21, 1))).unwrap();
    b.create(3, &new(id(30, 1), id(31, 1))).unwrap();
    assert_eq!(b.install(1, 0, Component::Empty), Err(Error::BadValue));
    assert_eq!(b.install(1, 13, Component::Empty), Err(Error::BadValue));
    assert_eq!(b.install(9, 1, Component::Empty), Err(Error::NoFactory));
    assert_eq!(b.set_stack(1, 0), Err(Error::BadValue));
    assert_eq!(b.set_stack(1, 257), Err(Error::BadValue));
    assert_eq!(b.set_stack(1, 3), Ok(()));
    b.install(1, 1, Component::Discreet { ty: 9 }).unwrap();
    b.install(1, 12, Component::Discreet { ty: 1 }).unwrap();
    // Factory 2 nests factory 1 (discreet once sealed) ...
    b.install(2, 4, Component::Factory { n: 1, gen: 1 })
        .unwrap();
    // ... factory 3 nests factory 2 before it is sealed.
    b.install(3, 2, Component::Factory { n: 2, gen: 1 })
        .unwrap();
    assert_eq!(b.seal(1), Ok(Verdict::DISCREET));
    assert_eq!(b.seal(1), Err(Error::Sealed));
    assert_eq!(b.install(1, 2, Component::Empty), Err(Error::Sealed));
    assert_eq!(b.set_stack(1, 4), Err(Error::Sealed));
    assert_eq!(b.record(1).unwrap().stack_pages, 3);
    assert_eq!(b.nested(1, 1), Nested::Sealed(true));
    assert_eq!(b.nested(1, 2), Nested::Gone);
    assert_eq!(b.nested(2, 1), Nested::Unsealed);
    assert_eq!(b.nested(7, 1), Nested::Gone);
    let v3 = b.seal(3).unwrap();
    assert_eq!(
        v3.words(),
        [0, 2, why::NESTED_UNSEALED, KeyType::Forwarder as u64]
    );
    assert_eq!(b.seal(2), Ok(Verdict::DISCREET));
    // A cycle: 4 and 5 nest each other; whichever is sealed first sees
    // the other unsealed.
    b.create(4, &new(id(40, 1), id(41, 1))).unwrap();
    b.create(5, &new(id(50, 1), id(51, 1))).unwrap();
    b.install(4, 1, Component::Factory { n: 5, gen: 1 })
        .unwrap();
    b.install(5, 1, Component::Factory { n: 4, gen: 1 })
        .unwrap();
    assert!(!b.seal(4).unwrap().discreet);
    assert_eq!(b.seal(5).unwrap().why as u64, why::NESTED_NOT_DISCREET);
    // A factory nesting itself.
    b.create(6, &new(id(60, 1), id(61, 1))).unwrap();
    b.install(6, 3, Component::Factory { n: 6, gen: 1 })
        .unwrap();
    assert_eq!(b.seal(6).unwrap().why as u64, why::NESTED_UNSEALED);
    assert_eq!(b.record(6).unwrap().verdict.slot, 3);
}

#[test]
fn directory_paths_are_distinct() {
    let mut seen = BTreeSet::new();
    for n in 0..=MAX_FACTORIES {
        let p = dir_path(n);
        assert!(p[0] < 16 && p[1] < 16 && p[2] < 16 && p[2].is_multiple_of(2));
        assert!(seen.insert(p), "{n}: {p:?}");
    }
    assert_eq!(dir_path(1), [0, 0, 2]);
    assert_eq!(dir_path(8), [0, 1, 0]);
    assert_eq!(dir_path(128), [1, 0, 0]);
}

#[derive(Clone, Debug)]
enum Op {
    Create(u64),
    Free(usize),
    Kill(usize),
}

proptest! {
    /// The index against a map: oids drawn from a few values so that they
    /// collide, nodes "destroyed" (their version bumped) without their
    /// factory being freed yet.
    #[test]
    fn the_index_finds_exactly_the_live_requestors(ops in proptest::collection::vec(
        prop_oneof![
            (0u64..12).prop_map(Op::Create),
            any::<usize>().prop_map(Op::Free),
            any::<usize>().prop_map(Op::Kill),
        ], 1..120)) {
        let mut b = books(6);
        let mut version: HashMap<u64, u32> = HashMap::new();
        // number → requestor node as recorded
        let mut live: BTreeMap<u32, NodeId> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Create(oid) => {
                    let Some(n) = b.next_free() else { continue };
                    let v = *version.entry(oid).or_insert(1);
                    if live.values().any(|x| *x == id(oid, v)) {
                        continue; // a live node is one factory's only
                    }
                    b.create(n, &new(id(oid, v), id(oid + 100, v))).unwrap();
                    live.insert(n, id(oid, v));
                }
                Op::Free(i) => {
                    if live.is_empty() { continue }
                    let n = *live.keys().nth(i % live.len()).unwrap();
                    b.free(n).unwrap();
                    live.remove(&n);
                }
                Op::Kill(i) => {
                    if live.is_empty() { continue }
                    let node = *live.values().nth(i % live.len()).unwrap();
                    *version.get_mut(&node.oid).unwrap() += 1;
                }
            }
            for (&n, &node) in &live {
                prop_assert_eq!(b.by_requestor(node).map(|x| x.0), Some(n));
            }
            for oid in 0..12 {
                for v in 0..4 {
                    let want = live.iter().find(|(_, x)| **x == id(oid, v)).map(|(n, _)| *n);
                    prop_assert_eq!(b.by_requestor(id(oid, v)).map(|x| x.0), want);
                }
            }
            prop_assert_eq!(b.in_use().collect::<Vec<_>>(), live.keys().copied().collect::<Vec<_>>());
        }
    }
}
