use super::*;
use std::boxed::Box;
use std::vec;
use std::vec::Vec;

#[derive(Default)]
struct Log {
    made: Vec<(u16, u8)>,
    put: Vec<(u16, u8, u16, u8)>,
}

impl Builder for Log {
    type Err = ();
    fn make_node(&mut self, idx: u16, level: u8) -> Result<(), ()> {
        self.made.push((idx, level));
        Ok(())
    }
    fn put_child(&mut self, parent: u16, slot: u8, child: u16, level: u8) -> Result<(), ()> {
        self.put.push((parent, slot, child, level));
        Ok(())
    }
}

#[test]
fn a_file_grows_its_root() {
    let mut fo = Box::new(Forest::new());
    let mut b = Log::default();
    let mut f = File::EMPTY;
    assert_eq!(fo.make_leaf(&mut f, 3, &mut b).unwrap(), (0, 3));
    assert_eq!(f, File { root: 0, lss: 1 });
    fo.set(0, 3, Entry::Page(1));
    // Page 20 needs a size-2 root above the first node.
    assert_eq!(fo.make_leaf(&mut f, 20, &mut b).unwrap(), (2, 4));
    assert_eq!(f, File { root: 1, lss: 2 });
    assert_eq!(b.made, vec![(0, 1), (1, 2), (2, 1)]);
    assert_eq!(b.put, vec![(1, 0, 0, 1), (1, 1, 2, 1)]);
    assert_eq!(fo.page(&f, 3), Some((0, 3, 1)));
    assert_eq!(fo.page(&f, 20), None);
    fo.set(2, 4, Entry::Page(1));
    let mut seen = Vec::new();
    fo.pages(&f, 0, 1 << 20, |p, _, _, _| seen.push(p));
    assert_eq!(seen, [3, 20]);
    let mut freed = Vec::new();
    fo.free(&mut f, |n| freed.push(n));
    freed.sort();
    assert_eq!(freed, [0, 1, 2]);
    assert_eq!(f, File::EMPTY);
    assert_eq!(fo.used(), 0);
}

#[test]
fn files_share_the_arena_and_reuse_it() {
    let mut fo = Box::new(Forest::new());
    let mut b = Log::default();
    let mut a = File::EMPTY;
    let mut c = File::EMPTY;
    fo.make_leaf(&mut a, 0, &mut b).unwrap();
    fo.make_leaf(&mut c, 0, &mut b).unwrap();
    assert_eq!((a.root, c.root), (0, 1));
    fo.free(&mut a, |_| {});
    let mut d = File::EMPTY;
    fo.make_leaf(&mut d, 0, &mut b).unwrap();
    assert_eq!(d.root, 0, "a freed node is reused");
    assert_eq!(fo.make_leaf(&mut d, 1 << 28, &mut b), Err(Error::TooBig));
}

#[test]
fn the_arena_grows_past_the_old_4096_nodes() {
    let mut fo = Forest::new();
    let mut b = Log::default();
    // 6,000 one-page files: a node each.
    let mut files = vec![File::EMPTY; 6000];
    for f in files.iter_mut() {
        let (leaf, slot) = fo.make_leaf(f, 0, &mut b).unwrap();
        fo.set(leaf, slot, Entry::Page(1));
    }
    assert_eq!(fo.used(), 6000);
    // And one file of 40,000 pages: 2,500 leaves and their parents.
    let mut big = File::EMPTY;
    for p in 0..40_000 {
        let (leaf, slot) = fo.make_leaf(&mut big, p, &mut b).unwrap();
        fo.set(leaf, slot, Entry::Page(1));
    }
    assert_eq!(fo.page(&big, 39_999).map(|x| x.2), Some(1));
    let mut seen = 0;
    fo.nodes(&big, |_| seen += 1);
    assert_eq!(seen, 2500 + 157 + 10 + 1);
    assert_eq!(fo.used(), 6000 + seen);
    let bytes = fo.bytes();
    let mut freed = 0;
    fo.free(&mut big, |_| freed += 1);
    assert_eq!(freed, seen);
    for f in files.iter_mut() {
        fo.free(f, |_| {});
    }
    assert_eq!(fo.used(), 0);
    // All of it again from the free list: no growth.
    for f in files.iter_mut() {
        fo.make_leaf(f, 0, &mut b).unwrap();
    }
    assert_eq!(fo.bytes(), bytes);
}

#[test]
fn a_limit_is_full_and_nothing_leaks() {
    let mut fo = Forest::with_limit(20);
    let mut b = Log::default();
    let mut f = File::EMPTY;
    let mut placed = 0;
    let err = loop {
        match fo.make_leaf(&mut f, placed * 16, &mut b) {
            Ok((leaf, slot)) => {
                fo.set(leaf, slot, Entry::Page(1));
                placed += 1;
            }
            Err(e) => break e,
        }
    };
    assert_eq!(err, Error::Full);
    assert_eq!(fo.used(), 20);
    let mut n = 0;
    fo.nodes(&f, |_| n += 1);
    assert_eq!(n, 20, "every node made is in the tree");
    fo.free(&mut f, |_| {});
    assert_eq!(fo.used(), 0);
    let mut g = File::EMPTY;
    assert!(fo.make_leaf(&mut g, 0, &mut b).is_ok());
}
