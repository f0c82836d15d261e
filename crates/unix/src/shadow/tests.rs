use super::*;
use std::vec;
use std::vec::Vec;

#[derive(Default)]
struct Log {
    /// (index, size code, parent, slot, inserted above what was there).
    made: Vec<(u16, u8, u16, u8, bool)>,
    fail_at: Option<usize>,
}

impl Log {
    fn log(&mut self, e: (u16, u8, u16, u8, bool)) -> Result<(), ()> {
        if self.fail_at == Some(self.made.len()) {
            return Err(());
        }
        self.made.push(e);
        Ok(())
    }
}

impl Builder for Log {
    type Err = ();
    fn make_node(&mut self, idx: u16, level: u8, parent: u16, slot: u8) -> Result<(), ()> {
        self.log((idx, level, parent, slot, false))
    }
    fn insert_node(&mut self, idx: u16, level: u8, parent: u16, slot: u8) -> Result<(), ()> {
        self.log((idx, level, parent, slot, true))
    }
}

/// What the keys do: nodes with slots, built by the same calls the keeper
/// makes, and walked by the segment model's rules (slot `i` of a node of
/// size code `L` covers `[i·16^(L-1), (i+1)·16^(L-1))`; a child of size
/// code `K` covers the first `16^K` pages of its slot).
struct Keys {
    nodes: Vec<(u8, [Option<u16>; 16])>,
}

impl Keys {
    fn new() -> Keys {
        Keys {
            nodes: vec![(SPACE_LSS, [None; 16])],
        }
    }

    /// The node a segment walk for `page` ends at, if it reaches a leaf.
    fn walk(&self, page: u64) -> Option<u16> {
        let (mut n, mut off) = (0u16, page);
        if off >= SPACE_PAGES {
            return None;
        }
        loop {
            let (level, slots) = self.nodes[n as usize];
            if level == 1 {
                return Some(n);
            }
            let span = 1u64 << (4 * (level as u64 - 1));
            let c = slots[(off / span) as usize]?;
            off %= span;
            if off >= 1u64 << (4 * self.nodes[c as usize].0 as u64) {
                return None;
            }
            n = c;
        }
    }
}

impl Builder for Keys {
    type Err = ();
    fn make_node(&mut self, idx: u16, level: u8, parent: u16, slot: u8) -> Result<(), ()> {
        assert_eq!(idx as usize, self.nodes.len());
        assert!(level < self.nodes[parent as usize].0);
        assert!(self.nodes[parent as usize].1[slot as usize].is_none());
        self.nodes.push((level, [None; 16]));
        self.nodes[parent as usize].1[slot as usize] = Some(idx);
        Ok(())
    }
    fn insert_node(&mut self, idx: u16, level: u8, parent: u16, slot: u8) -> Result<(), ()> {
        assert_eq!(idx as usize, self.nodes.len());
        assert!(level < self.nodes[parent as usize].0);
        let below = self.nodes[parent as usize].1[slot as usize].expect("a node to move");
        assert!(self.nodes[below as usize].0 < level);
        let mut slots = [None; 16];
        slots[0] = Some(below);
        self.nodes.push((level, slots));
        self.nodes[parent as usize].1[slot as usize] = Some(idx);
        Ok(())
    }
}

#[test]
fn a_leaf_is_made_as_high_as_it_can_sit() {
    let mut t = Tree::new();
    let mut b = Log::default();
    // Page 0x400 (address 0x400000): root slot 0, then 0x400 pages into
    // it, which a node of size code 3 covers from its start; in that
    // node's slot 4 the page is the first: a leaf.
    let leaf = t.make_leaf(0x400, &mut b).unwrap();
    assert_eq!(b.made, [(1, 3, 0, 0, false), (2, 1, 1, 4, false)]);
    assert_eq!(leaf, 2);
    assert_eq!(t.leaf(0x400), Some(2));
    assert_eq!(t.leaf(0x40f), Some(2));
    assert_eq!(t.leaf(0x410), None);
    assert_eq!(t.leaf(0x1000), None, "past the size-3 node");
    // The next page past the leaf: a size-2 node goes between the size-3
    // node and the leaf, and a second leaf under it.
    b.made.clear();
    assert_eq!(t.make_leaf(0x410, &mut b).unwrap(), 4);
    assert_eq!(b.made, [(3, 2, 1, 4, true), (4, 1, 3, 1, false)]);
    assert_eq!(t.node(2), (1, 3, 0), "the first leaf moved down");
    assert_eq!(t.node(3), (2, 1, 4));
    assert_eq!(t.leaf(0x40f), Some(2));
    assert_eq!(t.leaf(0x41f), Some(4));
    assert_eq!(t.nodes(), 5);
    // Its neighbour shares all but the leaf.
    b.made.clear();
    assert_eq!(t.make_leaf(0x420, &mut b).unwrap(), 5);
    assert_eq!(b.made, [(5, 1, 3, 2, false)]);
}

#[test]
fn a_stack_that_starts_a_root_slot_needs_one_node() {
    let mut t = Tree::new();
    let mut b = Log::default();
    // The stack's pages are the first 16 of root slot 15.
    for p in (0xf0_0000u64..0xf0_0010).rev() {
        t.make_leaf(p, &mut b).unwrap();
    }
    assert_eq!(b.made, [(1, 1, 0, 15, false)]);
    // Growing down past it is another root slot's top: a full path.
    b.made.clear();
    t.make_leaf(0xef_ffff, &mut b).unwrap();
    assert_eq!(
        b.made.iter().map(|m| m.1).collect::<Vec<_>>(),
        [5, 4, 3, 2, 1]
    );
}

#[test]
fn a_copy_built_parents_first_finds_each_parent_made() {
    let mut t = Tree::new();
    let mut b = Log::default();
    for p in [
        0x400u64, 0x410, 0x5000, 0x40_0000, 0xf0_0000, 0x41234, 0x40_1000,
    ] {
        t.make_leaf(p, &mut b).unwrap();
    }
    let mut made = vec![ROOT];
    let mut n = 0;
    t.parents_first(|idx, level, parent, slot| {
        assert!(made.contains(&parent), "node {idx}'s parent {parent} first");
        assert_eq!(t.node(idx), (level, parent, slot));
        made.push(idx);
        n += 1;
    });
    assert_eq!(n + 1, t.nodes());
    // An inserted node comes after the one it sits above in index order,
    // but before it here.
    assert!(b.made.iter().any(|m| m.4));
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
    // Page 0xfffff0 needs five nodes below the root.
    assert_eq!(t.make_leaf(0xff_fff0, &mut b), Err(Error::Build(())));
    // The two nodes that were made are kept (they exist), the rest not.
    assert_eq!(t.nodes(), 3);
    assert_eq!(t.leaf(0xff_fff0), None);
    b.fail_at = None;
    b.made.clear();
    assert_eq!(t.make_leaf(0xff_fff0, &mut b).unwrap(), 5);
    assert_eq!(b.made.len(), 3);
    assert_eq!(t.make_leaf(SPACE_PAGES, &mut b), Err(Error::Range));
    // A failed insertion leaves the node below where it was.
    t.make_leaf(0x400, &mut b).unwrap();
    let n = t.nodes();
    b.fail_at = Some(b.made.len());
    assert_eq!(t.make_leaf(0x410, &mut b), Err(Error::Build(())));
    assert_eq!(t.nodes(), n);
    assert_eq!(t.leaf(0x400), Some(n as u16 - 1));
    assert_eq!(t.node(n as u16 - 1), (1, n as u16 - 2, 4));
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
    assert_eq!(old, 13);
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
    assert_eq!(a, [(0x410, 3, 0, page::OWNED)]);
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

/// Pages spread the way a process's are: near the text, the heap, the
/// stack at the start of root slot 15 and below it, and anywhere.
fn a_page() -> impl proptest::strategy::Strategy<Value = u64> {
    use proptest::prelude::*;
    prop_oneof![
        0x400u64..0x1400,
        0xf0_0000u64..0xf0_0040,
        0xef_ff00u64..0xf0_0000,
        0u64..SPACE_PAGES,
    ]
}

proptest::proptest! {
    /// Whatever order pages are touched in, the shadow finds each page's
    /// leaf exactly where the segment model's walk of the keys built by
    /// its calls does, and nowhere else; a copy built parents first from
    /// the shadow has the same shape.
    #[test]
    fn the_shadow_agrees_with_the_keys(
        pages in proptest::collection::vec(a_page(), 1..60),
        probes in proptest::collection::vec(a_page(), 0..60),
    ) {
        let mut t = Tree::new();
        let mut keys = Keys::new();
        for &p in &pages {
            let leaf = t.make_leaf(p, &mut keys).unwrap();
            proptest::prop_assert_eq!(keys.walk(p), Some(leaf));
            t.set_page(p, Entry::Page(page::OWNED));
        }
        for &p in pages.iter().chain(&probes) {
            proptest::prop_assert_eq!(t.leaf(p), keys.walk(p), "page {:#x}", p);
        }
        // Some pages leave again (`munmap`): a walk no longer sees them.
        for &p in pages.iter().step_by(3) {
            t.set_page(p, Entry::Empty);
        }
        let mut want: Vec<u64> = pages
            .iter()
            .copied()
            .filter(|p| !pages.iter().step_by(3).any(|q| q == p))
            .collect();
        want.sort_unstable();
        want.dedup();
        // The resident count is exactly the pages present.
        proptest::prop_assert_eq!(t.present(), want.len() as u64);
        let mut seen = Vec::new();
        t.pages(0, SPACE_PAGES, |p, leaf, slot, _| {
            assert_eq!(t.page(p), Some((leaf, slot, page::OWNED)));
            seen.push(p)
        });
        proptest::prop_assert_eq!(&seen, &want);
        // And a part of the space: only the pages inside it.
        let (lo, hi) = (probes.first().copied().unwrap_or(0), probes.last().copied().unwrap_or(0));
        let (lo, hi) = (lo.min(hi), lo.max(hi) + 1);
        seen.clear();
        t.pages(lo, hi, |p, _, _, _| seen.push(p));
        let part: Vec<u64> = want.iter().copied().filter(|p| (lo..hi).contains(p)).collect();
        proptest::prop_assert_eq!(&seen, &part);
        // The copy: the same calls `fork` makes.
        let mut copy = Keys::new();
        copy.nodes.resize(t.nodes(), (0, [None; 16]));
        t.parents_first(|idx, level, parent, slot| {
            assert!(copy.nodes[parent as usize].0 > level, "parent made first");
            copy.nodes[idx as usize].0 = level;
            copy.nodes[parent as usize].1[slot as usize] = Some(idx);
        });
        for &p in pages.iter().chain(&probes) {
            proptest::prop_assert_eq!(copy.walk(p), keys.walk(p));
        }
    }
}
