use super::*;
use std::vec::Vec;

#[derive(Default)]
struct Log {
    made: Vec<(u16, u8, u16, u8)>,
    fail_at: Option<usize>,
}

impl Builder for Log {
    type Err = ();
    fn make_node(&mut self, idx: u16, level: u8, parent: u16, slot: u8) -> Result<(), ()> {
        if self.fail_at == Some(self.made.len()) {
            return Err(());
        }
        self.made.push((idx, level, parent, slot));
        Ok(())
    }
}

#[test]
fn a_leaf_is_made_top_down_once() {
    let mut t = Tree::new();
    let mut b = Log::default();
    // Page 0x400 (address 0x400000): digits 0,0,0,4,0,0 from the top.
    let leaf = t.make_leaf(0x400, &mut b).unwrap();
    assert_eq!(
        b.made,
        [
            (1, 5, 0, 0),
            (2, 4, 1, 0),
            (3, 3, 2, 0),
            (4, 2, 3, 4),
            (5, 1, 4, 0)
        ]
    );
    assert_eq!(leaf, 5);
    assert_eq!(t.leaf(0x400), Some(5));
    assert_eq!(t.leaf(0x40f), Some(5));
    assert_eq!(t.leaf(0x410), None);
    // Its neighbour shares all but the leaf.
    b.made.clear();
    assert_eq!(t.make_leaf(0x410, &mut b).unwrap(), 6);
    assert_eq!(b.made, [(6, 1, 4, 1)]);
    assert_eq!(t.nodes(), 7);
    assert_eq!(t.node(6), (1, 4, 1));
    assert_eq!(t.node(1), (5, 0, 0));
    for i in 1..7u16 {
        assert!(t.node(i).1 < i, "parents come first");
    }
}

#[test]
fn pages_are_recorded_and_walked() {
    let mut t = Tree::new();
    let mut b = Log::default();
    for p in [0x400u64, 0x401, 0x40f, 0xfffff0, SPACE_PAGES - 1] {
        t.make_leaf(p, &mut b).unwrap();
        t.set_page(p, Entry::Page(page::OWNED));
    }
    assert_eq!(t.page(0x401).map(|x| (x.1, x.2)), Some((1, page::OWNED)));
    assert_eq!(t.page(0x402), None);
    let mut seen = Vec::new();
    t.pages(0, SPACE_PAGES, |p, _, _, _| seen.push(p));
    assert_eq!(seen, [0x400, 0x401, 0x40f, 0xfffff0, SPACE_PAGES - 1]);
    seen.clear();
    t.pages(0x401, 0xfffff1, |p, _, _, _| seen.push(p));
    assert_eq!(seen, [0x401, 0x40f, 0xfffff0]);
    t.set_page(0x401, Entry::Empty);
    assert_eq!(t.page(0x401), None);
}

#[test]
fn failures_leave_the_shadow_as_it_was() {
    let mut t = Tree::new();
    let mut b = Log {
        fail_at: Some(2),
        ..Log::default()
    };
    assert_eq!(t.make_leaf(0x400, &mut b), Err(Error::Build(())));
    // The two nodes that were made are kept (they exist), the rest not.
    assert_eq!(t.nodes(), 3);
    assert_eq!(t.leaf(0x400), None);
    b.fail_at = None;
    b.made.clear();
    assert_eq!(t.make_leaf(0x400, &mut b).unwrap(), 5);
    assert_eq!(b.made.len(), 3);
    assert_eq!(t.make_leaf(SPACE_PAGES, &mut b), Err(Error::Range));
}

#[test]
fn the_tree_fills_without_harm() {
    let mut t = Tree::new();
    let mut b = Log::default();
    let mut p = 0u64;
    loop {
        match t.make_leaf(p, &mut b) {
            Ok(_) => p += 16,
            Err(e) => {
                assert_eq!(e, Error::Full);
                break;
            }
        }
    }
    assert_eq!(t.nodes(), MAX_NODES);
    assert!(t.leaf(p - 16).is_some());
}

/// A tree reset in place (its old nodes left past `used`) behaves as a new
/// one, and only the bytes of nodes in use lie outside `unused`: what a
/// spare keeper's copy of the state relies on.
#[test]
fn a_reset_tree_ignores_its_old_nodes() {
    let mut t = Tree::new();
    let mut b = Log::default();
    for p in [0x400u64, 0x123456, SPACE_PAGES - 1] {
        t.make_leaf(p, &mut b).unwrap();
        t.set_page(p, Entry::Page(page::OWNED));
    }
    let old = t.nodes();
    assert_eq!(old, 16);
    t.reset();
    assert_eq!(t.nodes(), 1);
    let mut seen = Vec::new();
    t.pages(0, SPACE_PAGES, |p, _, _, _| seen.push(p));
    assert!(seen.is_empty());
    // Rebuilt over the stale entries: the new nodes start empty.
    let mut fresh = Tree::new();
    for tree in [&mut t, &mut fresh] {
        let mut b = Log::default();
        tree.make_leaf(0x410, &mut b).unwrap();
        tree.set_page(0x410, Entry::Page(page::OWNED));
    }
    let (mut a, mut c) = (Vec::new(), Vec::new());
    t.pages(0, SPACE_PAGES, |p, l, s, f| a.push((p, l, s, f)));
    fresh.pages(0, SPACE_PAGES, |p, l, s, f| c.push((p, l, s, f)));
    assert_eq!(a, c);
    assert_eq!(a, [(0x410, 5, 0, page::OWNED)]);
    assert_eq!(t.leaf(0x400), None, "a stale leaf is not found");
    // `unused` starts right after the nodes in use and ends with the tree.
    let r = t.unused();
    let size = core::mem::size_of::<Node>() as u64;
    assert_eq!(r.end - r.start, (MAX_NODES - t.nodes()) as u64 * size);
    let base = &t as *const Tree as u64;
    assert!(r.start > base && r.end <= base + core::mem::size_of::<Tree>() as u64);
}

#[test]
fn the_generation_changes_with_every_change_and_only_then() {
    let mut t = Tree::new();
    let mut b = Log::default();
    let g0 = t.generation();
    t.make_leaf(0x400, &mut b).unwrap();
    let g1 = t.generation();
    assert_ne!(g1, g0);
    // Finding the leaf again makes nothing: no change.
    t.make_leaf(0x401, &mut b).unwrap();
    assert_eq!(t.generation(), g1);
    let _ = (t.page(0x400), t.leaf(0x400), t.nodes());
    t.pages(0, u64::MAX, |_, _, _, _| {});
    assert_eq!(t.generation(), g1);
    // A page set, even to the entry it had, is a change.
    t.set_page(0x400, Entry::Page(page::OWNED));
    let g2 = t.generation();
    assert_ne!(g2, g1);
    t.set_page(0x400, Entry::Page(page::OWNED));
    assert_ne!(t.generation(), g2);
    let g3 = t.generation();
    // A page under no leaf changes nothing.
    t.set_page(0x9000, Entry::Page(page::OWNED));
    assert_eq!(t.generation(), g3);
    // A failed build changes nothing.
    let mut bad = Log {
        fail_at: Some(b.made.len()),
        ..Log::default()
    };
    bad.made = b.made.clone();
    assert!(t.make_leaf(0x9000, &mut bad).is_err());
    assert_eq!(t.generation(), g3);
    t.reset();
    assert_ne!(t.generation(), g3);
}
