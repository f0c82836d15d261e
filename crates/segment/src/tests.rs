//! Unit tests: sizes, access codes, and one walk per rule of the segment
//! format.

use super::*;
use crate::model::Model;
use std::vec;
use stet_abi::fault::why;
use stet_keys::rights::{KEEPER, NOCALL, RO, WEAK};
use stet_keys::KeyType;

const P: u64 = PAGE_SIZE;

/// The `why` of a failed walk.
fn why_of(r: Result<Found, Invalid>) -> u64 {
    r.expect_err("walk should fail").why
}

#[test]
fn sizes() {
    assert_eq!(size_pages(0), 1);
    assert_eq!(size_pages(1), 16);
    assert_eq!(size_pages(10), 1 << 40);
    assert_eq!(size_pages(15), 1 << 60);
    assert_eq!(size_pages(16), u64::MAX);
    assert_eq!(size_pages(255), u64::MAX);
    assert_eq!(size_bytes(1), Some(1 << 16));
    assert_eq!(size_bytes(10), Some(1 << 52));
    assert_eq!(size_bytes(12), Some(1 << 60));
    assert_eq!(size_bytes(13), None);
    assert_eq!(size_bytes(255), None);
    assert_eq!(slot_span(0), 0);
    assert_eq!(slot_span(1), 1);
    assert_eq!(slot_span(2), 16);
    assert_eq!(slot_span(10), 1 << 36);
}

#[test]
fn min_lss() {
    assert_eq!(min_lss_for(0), 1);
    assert_eq!(min_lss_for(1), 1);
    assert_eq!(min_lss_for(16), 1);
    assert_eq!(min_lss_for(17), 2);
    assert_eq!(min_lss_for(256), 2);
    assert_eq!(min_lss_for(257), 3);
    assert_eq!(min_lss_for(1 << 40), 10);
    assert_eq!(min_lss_for((1 << 40) + 1), 11);
    assert_eq!(min_lss_for(u64::MAX), 16);
    for pages in [1u64, 2, 15, 16, 17, 4095, 4096, 4097, 1 << 33] {
        let l = min_lss_for(pages);
        assert!(size_pages(l) >= pages);
        assert!(l == 1 || size_pages(l - 1) < pages);
    }
}

#[test]
fn access_codes() {
    for a in Access::ALL {
        assert_eq!(Access::from_code(a.code()), Some(a));
    }
    assert_eq!(Access::Read.code(), stet_abi::fault::access::READ);
    assert_eq!(Access::Write.code(), stet_abi::fault::access::WRITE);
    assert_eq!(Access::Execute.code(), stet_abi::fault::access::EXECUTE);
    assert_eq!(Access::from_code(3), None);
}

/// A one-node segment (lss 1) with a page in slot 3.
fn one_node(rights: u8) -> (Model, Key, Key) {
    let mut m = Model::new();
    let n = m.node();
    let p = m.page();
    let pk = m.page_key(p, false).with_hint(77);
    m.set(n, 3, pk);
    let root = m.seg(n, 1, rights);
    (m, root, pk)
}

#[test]
fn finds_a_page() {
    let (mut m, root, pk) = one_node(0);
    let (r, seen) = m.run(root, 3 * P + 5, Access::Read);
    let f = r.unwrap();
    assert_eq!(f.page, pk, "page key as found, hint kept");
    assert_eq!(f.page.hint(), 77);
    assert!(f.writable && !f.executable);
    assert_eq!(f.depth, 1);
    assert_eq!(seen, vec![root]);
    assert!(m.run(root, 4 * P - 1, Access::Write).0.is_ok());
    // The node it came from, for translating its other pages.
    assert_eq!(
        f.leaf,
        Some(crate::Leaf {
            node: root,
            ro: false,
            red: false
        })
    );
}

#[test]
fn leaf_says_read_only_and_red() {
    let (mut m, root, _) = one_node(RO);
    let f = m.run(root, 3 * P, Access::Read).0.unwrap();
    assert_eq!(f.leaf.map(|l| (l.ro, l.red)), Some((true, false)));
    let (mut m, root, _) = one_node(KEEPER);
    let f = m.run(root, 3 * P, Access::Read).0.unwrap();
    assert_eq!(f.leaf.map(|l| (l.ro, l.red)), Some((false, true)));
}

#[test]
fn void_slot_is_not_present() {
    let (mut m, root, _) = one_node(0);
    let (r, seen) = m.run(root, 4 * P, Access::Read);
    let e = r.unwrap_err();
    assert_eq!(e.why, why::NOT_PRESENT);
    assert_eq!(e.keeper, None);
    assert_eq!(e.depth, 1);
    assert_eq!(seen, vec![root]);
}

#[test]
fn entry_void_and_other_keys() {
    let mut m = Model::new();
    let n = m.node();
    let (r, seen) = m.run(Key::VOID, 0, Access::Read);
    let e = r.unwrap_err();
    assert_eq!((e.why, e.keeper, e.depth), (why::NOT_PRESENT, None, 0));
    assert!(seen.is_empty());
    for k in [
        Key::number(1, 2),
        Key::node(n, 0, 0),
        Key::start(n, 0, 1),
        Key::domain(n, 0),
        Key::meter(n, 0),
        Key::resume(n, 0, 0),
        Key::service(KeyType::Discrim),
        Key::range(stet_keys::Space::Page, 0, 1),
    ] {
        let (r, seen) = m.run(k, 0, Access::Read);
        assert_eq!(why_of(r), why::MALFORMED, "{k:?}");
        assert!(seen.is_empty());
    }
}

#[test]
fn entry_page_key() {
    let mut m = Model::new();
    let p = m.page();
    let pk = m.page_key(p, false);
    for addr in [0, 1, P - 1] {
        let f = m.run(pk, addr, Access::Write).0.unwrap();
        assert_eq!((f.page, f.writable, f.depth, f.leaf), (pk, true, 0, None));
    }
    assert_eq!(why_of(m.run(pk, P, Access::Read).0), why::OUT_OF_RANGE);
    assert_eq!(
        why_of(m.run(pk, u64::MAX, Access::Read).0),
        why::OUT_OF_RANGE
    );
    assert_eq!(why_of(m.run(pk, 0, Access::Execute).0), why::PROTECTION);
    let ro = m.page_key(p, true);
    let f = m.run(ro, 0, Access::Execute).0.unwrap();
    assert!(!f.writable && f.executable);
    assert_eq!(why_of(m.run(ro, 0, Access::Write).0), why::PROTECTION);
    m.destroy_page(p);
    assert_eq!(why_of(m.run(pk, 0, Access::Read).0), why::NOT_PRESENT);
    // Out of range is decided by the key alone.
    assert_eq!(why_of(m.run(pk, P, Access::Read).0), why::OUT_OF_RANGE);
}

#[test]
fn page_in_a_big_slot_only_at_offset_zero() {
    let mut m = Model::new();
    let n = m.node();
    let p = m.page();
    let pk = m.page_key(p, false);
    m.set(n, 1, pk);
    let root = m.seg(n, 2, 0);
    let f = m.run(root, 16 * P + 100, Access::Read).0.unwrap();
    assert_eq!(f.page, pk);
    for addr in [17 * P, 31 * P + 5] {
        let (r, seen) = m.run(root, addr, Access::Read);
        assert_eq!(why_of(r), why::OUT_OF_RANGE);
        assert_eq!(seen, vec![root]);
    }
    assert_eq!(
        why_of(m.run(root, 32 * P, Access::Read).0),
        why::NOT_PRESENT
    );
}

#[test]
fn short_subtrees() {
    let mut m = Model::new();
    let top = m.node();
    let short = m.node();
    let full = m.node();
    let p = m.page();
    let pk = m.page_key(p, false);
    m.set(short, 15, pk);
    let short_key = m.seg(short, 1, 0);
    m.set(top, 2, short_key);
    let full_key = m.seg(full, 2, 0);
    m.set(full, 15, pk);
    m.set(top, 3, full_key);
    let root = m.seg(top, 3, 0);
    // Slot 2 covers pages 512..768; only 512..528 are in the short subtree.
    let (r, seen) = m.run(root, (512 + 15) * P, Access::Read);
    assert_eq!(r.unwrap().depth, 2);
    assert_eq!(seen, vec![root, short_key]);
    for page in [512 + 16, 767] {
        let (r, seen) = m.run(root, page * P, Access::Read);
        assert_eq!(why_of(r), why::OUT_OF_RANGE);
        assert_eq!(seen, vec![root], "the short node is not entered");
    }
    assert_eq!(
        why_of(m.run(root, 512 * P, Access::Read).0),
        why::NOT_PRESENT
    );
    // A full-size subtree (lss 2 in an lss 3 node) covers its whole slot.
    let (r, seen) = m.run(root, (768 + 15 * 16) * P, Access::Read);
    assert_eq!(r.unwrap().page, pk);
    assert_eq!(seen, vec![root, full_key]);
}

#[test]
fn malformed_slots() {
    let mut m = Model::new();
    let top = m.node();
    let other = m.node();
    let root = m.seg(top, 2, 0);
    let bad = [
        m.seg(other, 2, 0),
        m.seg(other, 3, 0),
        m.seg(other, 10, 0),
        Key::node(other, 0, 0),
        Key::start(other, 0, 0),
        Key::number(5, 0),
        Key::domain(other, 0),
        Key::service(KeyType::Console),
    ];
    for k in bad {
        m.set(top, 0, k);
        let (r, seen) = m.run(root, 0, Access::Read);
        let e = r.unwrap_err();
        assert_eq!((e.why, e.depth), (why::MALFORMED, 1), "{k:?}");
        assert_eq!(seen, vec![root]);
    }
    // In an lss 1 node no segment key fits.
    let low = m.seg(top, 1, 0);
    m.set(top, 0, m.seg(other, 1, 0));
    assert_eq!(why_of(m.run(low, 0, Access::Read).0), why::MALFORMED);
}

#[test]
fn keeper_slot_is_not_address_space() {
    let mut m = Model::new();
    let n = m.node();
    let p = m.page();
    let pk = m.page_key(p, false);
    m.set(n, 15, pk);
    let plain = m.seg(n, 1, 0);
    assert_eq!(m.run(plain, 15 * P, Access::Read).0.unwrap().page, pk);
    let red = m.seg(n, 1, KEEPER);
    let (r, seen) = m.run(red, 15 * P, Access::Read);
    let e = r.unwrap_err();
    assert_eq!((e.why, e.keeper, e.depth), (why::OUT_OF_RANGE, None, 1));
    assert_eq!(seen, vec![red]);
    let k = Key::start(40, 1, 9).with_hint(5);
    m.set(n, 15, k);
    let e = m.run(red, 15 * P + 7, Access::Read).0.unwrap_err();
    assert_eq!(e.why, why::OUT_OF_RANGE);
    assert_eq!(
        e.keeper,
        Some(Keeper {
            start: k,
            segment: red,
            offset: 15 * P + 7
        })
    );
}

#[test]
fn read_only_accumulates() {
    // entry -> mid (lss 2) -> page; RO on any one key makes the page RO.
    for (e_ro, m_ro, p_ro) in [
        (false, false, false),
        (true, false, false),
        (false, true, false),
        (false, false, true),
        (true, true, true),
    ] {
        let mut m = Model::new();
        let top = m.node();
        let mid = m.node();
        let p = m.page();
        m.set(mid, 1, m.page_key(p, p_ro));
        m.set(top, 2, m.seg(mid, 1, if m_ro { RO } else { 0 }));
        let root = m.seg(top, 2, if e_ro { RO } else { 0 });
        let addr = (2 * 16 + 1) * P;
        let ro = e_ro || m_ro || p_ro;
        let f = m.run(root, addr, Access::Read).0.unwrap();
        assert_eq!((f.writable, f.executable, f.depth), (!ro, ro, 2));
        let w = m.run(root, addr, Access::Write).0;
        let x = m.run(root, addr, Access::Execute).0;
        if ro {
            assert_eq!(why_of(w), why::PROTECTION);
            assert!(x.unwrap().executable);
        } else {
            assert!(w.unwrap().writable);
            assert_eq!(
                why_of(x),
                why::PROTECTION,
                "no execute from a writable page"
            );
        }
    }
}

#[test]
fn weak_does_not_matter() {
    let (mut m, root, pk) = one_node(WEAK);
    let f = m.run(root, 3 * P, Access::Write).0.unwrap();
    assert_eq!((f.page, f.writable), (pk, true));
}

/// outer (lss 3, red, keeper A) -> slot 1: inner (lss 2, red, keeper B) ->
/// slot 2: leaf (lss 1, `leaf_rights`) -> slot 3: page; other slots void.
struct Nest {
    m: Model,
    root: Key,
    inner_key: Key,
    a: Key,
    b: Key,
    inner: u64,
}

fn nest(root_rights: u8, inner_rights: u8, leaf_rights: u8) -> Nest {
    let mut m = Model::new();
    let outer = m.node();
    let inner = m.node();
    let leaf = m.node();
    let p = m.page();
    let a = Key::start(100, 0, 1);
    let b = Key::start(101, 0, 2);
    m.set(outer, 15, a);
    m.set(inner, 15, b);
    m.set(leaf, 3, m.page_key(p, false));
    m.set(inner, 2, m.seg(leaf, 1, leaf_rights));
    let inner_key = m.seg(inner, 2, inner_rights);
    m.set(outer, 1, inner_key);
    let root = m.seg(outer, 3, root_rights);
    Nest {
        m,
        root,
        inner_key,
        a,
        b,
        inner,
    }
}

/// An address in the leaf's void slot 4: page 256 + 32 + 4.
const IN_LEAF: u64 = (256 + 32 + 4) * P + 9;

#[test]
fn innermost_keeper() {
    let mut n = nest(KEEPER, KEEPER, 0);
    let (r, seen) = n.m.run(n.root, IN_LEAF, Access::Read);
    let e = r.unwrap_err();
    assert_eq!((e.why, e.depth), (why::NOT_PRESENT, 3));
    assert_eq!(seen.len(), 3);
    let k = e.keeper.unwrap();
    assert_eq!((k.start, k.segment), (n.b, n.inner_key));
    assert_eq!(k.offset, IN_LEAF - 256 * P);
    // A fault in the outer node only goes to A, with the whole address.
    let e =
        n.m.run(n.root, 2 * 256 * P + 1, Access::Read)
            .0
            .unwrap_err();
    let k = e.keeper.unwrap();
    assert_eq!(
        (k.start, k.segment, k.offset),
        (n.a, n.root, 2 * 256 * P + 1)
    );
    // A protection fault goes to keepers too.
    let mut n = nest(KEEPER, KEEPER | RO, 0);
    let e =
        n.m.run(n.root, (256 + 32 + 3) * P, Access::Write)
            .0
            .unwrap_err();
    assert_eq!(e.why, why::PROTECTION);
    assert_eq!(e.keeper.unwrap().start, n.b);
}

#[test]
fn nocall_hides_keepers() {
    // NOCALL on the inner key hides B: A is used.
    let mut n = nest(KEEPER, KEEPER | NOCALL, 0);
    let k =
        n.m.run(n.root, IN_LEAF, Access::Read)
            .0
            .unwrap_err()
            .keeper
            .unwrap();
    assert_eq!((k.start, k.segment, k.offset), (n.a, n.root, IN_LEAF));
    // NOCALL on the entry hides both.
    let mut n = nest(KEEPER | NOCALL, KEEPER, 0);
    let e = n.m.run(n.root, IN_LEAF, Access::Read).0.unwrap_err();
    assert_eq!((e.why, e.keeper), (why::NOT_PRESENT, None));
    // NOCALL below the red node does not hide its keeper.
    let mut n = nest(KEEPER, KEEPER, NOCALL);
    let k =
        n.m.run(n.root, IN_LEAF, Access::Read)
            .0
            .unwrap_err()
            .keeper
            .unwrap();
    assert_eq!(k.start, n.b);
}

#[test]
fn non_start_keeper_slots_are_skipped() {
    for not_keeper in [Key::VOID, Key::number(1, 1), Key::domain(3, 0)] {
        let mut n = nest(KEEPER, KEEPER, 0);
        n.m.set(n.inner, 15, not_keeper);
        let k =
            n.m.run(n.root, IN_LEAF, Access::Read)
                .0
                .unwrap_err()
                .keeper
                .unwrap();
        assert_eq!((k.start, k.segment), (n.a, n.root));
    }
    // Without the KEEPER right slot 15 is not a keeper, even if a start key.
    let mut n = nest(0, KEEPER, 0);
    let k =
        n.m.run(n.root, IN_LEAF, Access::Read)
            .0
            .unwrap_err()
            .keeper
            .unwrap();
    assert_eq!(k.start, n.b);
    let mut n = nest(KEEPER, 0, 0);
    let k =
        n.m.run(n.root, IN_LEAF, Access::Read)
            .0
            .unwrap_err()
            .keeper
            .unwrap();
    assert_eq!(k.start, n.a);
}

#[test]
fn out_of_range_goes_to_the_holder_of_the_short_key() {
    // A short red leaf (lss 1, keeper C) in slot 4 of a red lss 3 node
    // (keeper A). An address beyond the leaf is reported to A, not C: the
    // reference never entered the leaf, and A's segment holds the key.
    let mut m = Model::new();
    let outer = m.node();
    let leaf = m.node();
    let a = Key::start(100, 0, 1);
    let c = Key::start(102, 0, 3);
    m.set(outer, 15, a);
    m.set(leaf, 15, c);
    let leaf_key = m.seg(leaf, 1, KEEPER);
    m.set(outer, 4, leaf_key);
    let root = m.seg(outer, 3, KEEPER);
    let (r, seen) = m.run(root, (4 * 256 + 16) * P, Access::Read);
    let e = r.unwrap_err();
    assert_eq!(e.why, why::OUT_OF_RANGE);
    assert_eq!(e.keeper.unwrap().start, a);
    assert_eq!(seen, vec![root]);
    // Inside the leaf, the leaf's own keeper, with the leaf-relative address.
    let (r, seen) = m.run(root, (4 * 256 + 5) * P + 1, Access::Read);
    let k = r.unwrap_err().keeper.unwrap();
    assert_eq!((k.start, k.segment, k.offset), (c, leaf_key, 5 * P + 1));
    assert_eq!(seen, vec![root, leaf_key]);
}

#[test]
fn destroyed_objects_are_not_present() {
    let mut n = nest(KEEPER, KEEPER, 0);
    let leaf = n.m.contents(n.inner_key).unwrap()[2].oid();
    n.m.destroy_node(leaf);
    let (r, seen) = n.m.run(n.root, IN_LEAF, Access::Read);
    let e = r.unwrap_err();
    assert_eq!((e.why, e.depth), (why::NOT_PRESENT, 2));
    assert_eq!(e.keeper.unwrap().start, n.b);
    assert_eq!(seen, vec![n.root, n.inner_key]);
    // The inner node gone: reported to the outer keeper.
    n.m.destroy_node(n.inner);
    let e = n.m.run(n.root, IN_LEAF, Access::Read).0.unwrap_err();
    assert_eq!((e.why, e.depth), (why::NOT_PRESENT, 1));
    assert_eq!(e.keeper.unwrap().start, n.a);
    // The entry node gone: no keeper at all.
    n.m.destroy_node(n.root.oid());
    let (r, seen) = n.m.run(n.root, IN_LEAF, Access::Read);
    let e = r.unwrap_err();
    assert_eq!((e.why, e.keeper, e.depth), (why::NOT_PRESENT, None, 0));
    assert!(seen.is_empty());
    // A destroyed page.
    let (mut m, root, pk) = one_node(0);
    m.destroy_page(pk.oid());
    assert_eq!(why_of(m.run(root, 3 * P, Access::Read).0), why::NOT_PRESENT);
}

#[test]
fn largest_segment() {
    // A chain of ten nodes, lss 10 down to 1, to the very last page.
    let mut m = Model::new();
    let p = m.page();
    let mut key = m.page_key(p, false);
    let mut chain = vec![];
    for lss in 1..=10 {
        let n = m.node();
        m.set(n, 15, key);
        key = m.seg(n, lss, 0);
        chain.push(key);
    }
    chain.reverse();
    let root = key;
    let last = (1u64 << 52) - P;
    let (r, seen) = m.run(root, last + P - 1, Access::Write);
    let f = r.unwrap();
    assert_eq!(f.depth, MAX_DEPTH);
    assert_eq!(seen, chain);
    assert_eq!(
        why_of(m.run(root, last - P, Access::Read).0),
        why::NOT_PRESENT
    );
    for addr in [1 << 52, u64::MAX, 1 << 63] {
        let (r, seen) = m.run(root, addr, Access::Read);
        let e = r.unwrap_err();
        assert_eq!((e.why, e.keeper, e.depth), (why::OUT_OF_RANGE, None, 0));
        assert!(seen.is_empty());
    }
}

#[test]
fn beyond_the_entry() {
    let (mut m, root, _) = one_node(KEEPER);
    m.set(root.oid(), 15, Key::start(1, 0, 0));
    let (r, seen) = m.run(root, 16 * P, Access::Read);
    let e = r.unwrap_err();
    assert_eq!((e.why, e.keeper, e.depth), (why::OUT_OF_RANGE, None, 0));
    assert!(seen.is_empty());
    let big = m.seg(root.oid(), 2, 0);
    assert_eq!(
        why_of(m.run(big, 256 * P, Access::Read).0),
        why::OUT_OF_RANGE
    );
    assert_eq!(why_of(m.run(big, 16 * P, Access::Read).0), why::NOT_PRESENT);
}
