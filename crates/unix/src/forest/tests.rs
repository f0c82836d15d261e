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
