//! Checkpoint layout, header, directory blocks and the lookup directory.

use crate::ckpt::*;
use crate::{seal, Damaged, BLOCK};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::vec::Vec;
use stet_keys::Space;

fn node(oid: u64, version: u32) -> DirEntry {
    DirEntry {
        space: Space::Node,
        oid,
        version,
        crc: 0,
    }
}

fn page(oid: u64, version: u32, crc: u32) -> DirEntry {
    DirEntry {
        space: Space::Page,
        oid,
        version,
        crc,
    }
}

#[test]
fn layout() {
    let e = Layout::new(0, 0);
    assert_eq!((e.dir_blocks, e.node_blocks, e.total_blocks()), (0, 0, 1));
    let l = Layout::new(9, 300);
    assert_eq!(
        l,
        Layout {
            nodes: 9,
            pages: 300,
            dir_blocks: 2,
            node_blocks: 2
        }
    );
    assert_eq!(l.entries(), 309);
    assert_eq!(l.total_blocks(), 1 + 2 + 2 + 300);
    assert_eq!(l.dir_block(1), 2);
    assert_eq!(
        (
            l.dir_entries_in(0),
            l.dir_entries_in(1),
            l.dir_entries_in(2)
        ),
        (255, 54, 0)
    );
    assert_eq!(l.node_block(0), (3, 0));
    assert_eq!(l.node_block(7), (3, 7 * 512));
    assert_eq!(l.node_block(8), (4, 0));
    assert_eq!(l.page_block(0), 5);
    assert_eq!(l.page_block(299), 304);
    let big = Layout::new(u32::MAX / 3, u32::MAX / 3 * 2);
    assert_eq!(big.entries(), u32::MAX as u64);
}

#[test]
fn header_round_trips_and_is_checked() {
    let h = Header {
        ckpt_generation: 12,
        nodes: 9,
        pages: 300,
    };
    let mut b = [0xaau8; BLOCK];
    encode_header(&h, &mut b);
    assert_eq!(&b[0..8], b"STETCKPT");
    assert!(b[HEADER_LEN..].iter().all(|&x| x == 0));
    assert_eq!(decode_header(&b), Ok(h));
    assert_eq!(h.layout().total_blocks(), 305);
    let mut bad = b;
    bad[17] ^= 1;
    assert_eq!(decode_header(&bad), Err(Damaged));
    assert_eq!(decode_header(&[0u8; BLOCK]), Err(Damaged));
    let reseal = |at: usize, v: u8| {
        let mut x = b;
        x[at] = v;
        seal(&mut x, 40);
        decode_header(&x)
    };
    assert_eq!(reseal(8, 2), Err(Damaged), "format");
    assert_eq!(reseal(12, 1), Err(Damaged), "pad");
    assert_eq!(reseal(32, 3), Err(Damaged), "dir blocks disagree");
    assert_eq!(reseal(36, 0), Err(Damaged), "total disagrees");
    assert_eq!(reseal(24, 9), Ok(h), "unchanged");
}

#[test]
fn dir_blocks_round_trip_and_refuse_stale_ones() {
    let entries = [node(3, 1), node(1 << 39, 2), page(0, 5, 0x1234_5678)];
    let mut b = [0x55u8; BLOCK];
    encode_dir_block(7, &entries, &mut b);
    let (got, n) = decode_dir_block(7, &b).unwrap();
    assert_eq!(n, 3);
    assert_eq!(&got[..3], &entries);
    assert_eq!(got[3], DirEntry::EMPTY);
    // Bit 63 marks nodes.
    assert_eq!(b[7], 0x80);
    assert_eq!(b[16 + 7], 0x80);
    assert_eq!(b[32 + 7], 0);
    assert_eq!(
        decode_dir_block(6, &b),
        Err(Damaged),
        "an older checkpoint's"
    );
    let mut bad = b;
    bad[20] ^= 1;
    assert_eq!(decode_dir_block(7, &bad), Err(Damaged));
    let reseal = |f: &dyn Fn(&mut [u8; BLOCK])| {
        let mut x = b;
        f(&mut x);
        seal(&mut x, 4092);
        decode_dir_block(7, &x).map(|(_, n)| n)
    };
    assert_eq!(reseal(&|_| ()), Ok(3));
    assert_eq!(
        reseal(&|x| x[4088] = 0),
        Err(Damaged),
        "used entries past the count"
    );
    assert_eq!(
        reseal(&|x| x[4088] = 2),
        Err(Damaged),
        "a used entry past the count"
    );
    assert_eq!(reseal(&|x| x[4089] = 1), Err(Damaged), "count over 255");
    assert_eq!(
        reseal(&|x| x[100] = 1),
        Err(Damaged),
        "unused entry not zero"
    );
    assert_eq!(reseal(&|x| x[5] = 1), Err(Damaged), "oid over 40 bits");
    assert_eq!(decode_dir_block(7, &b[..4000]), Err(Damaged));
    let full: Vec<DirEntry> = (0..255).map(|i| page(i, 1, 2)).collect();
    encode_dir_block(1, &full, &mut b);
    assert_eq!(decode_dir_block(1, &b).unwrap().1, 255);
}

#[test]
fn directory_finds_every_object() {
    let l = Layout::new(2, 3);
    let mut buf = [DirSlot::EMPTY; 8];
    let mut d = Directory::new(&mut buf, l);
    for e in [
        node(40, 1),
        node(7, 2),
        page(9, 3, 33),
        page(40, 4, 44),
        page(1, 5, 55),
    ] {
        d.push(&e).unwrap();
    }
    assert_eq!(d.find(Space::Node, 40), None, "not finished");
    d.finish().unwrap();
    assert_eq!(d.len(), 5);
    assert_eq!(d.find(Space::Node, 40), Some((1, 2, 0)));
    assert_eq!(d.find(Space::Node, 7), Some((2, 2, 512)));
    assert_eq!(d.find(Space::Page, 9), Some((3, 3, 0)));
    assert_eq!(d.find(Space::Page, 40), Some((4, 4, 0)));
    assert_eq!(d.find(Space::Page, 1), Some((5, 5, 0)));
    assert_eq!(d.find(Space::Page, 7), None);
    assert_eq!(d.find(Space::Node, 9), None);
    assert_eq!(
        d.lookup(Space::Page, 40),
        Some(Found {
            space: Space::Page,
            oid: 40,
            version: 4,
            block: 4,
            offset: 0,
            crc: 44
        })
    );
    // Sorted order: pages by oid, then nodes by oid.
    let order: Vec<(Space, u64)> = (0..5)
        .map(|i| d.get(i).map(|f| (f.space, f.oid)).unwrap())
        .collect();
    assert_eq!(
        order,
        [
            (Space::Page, 1),
            (Space::Page, 9),
            (Space::Page, 40),
            (Space::Node, 7),
            (Space::Node, 40)
        ]
    );
    assert_eq!(d.get(5), None);
}

#[test]
fn found_checks_what_it_points_to() {
    use crate::node::{self, NodeImage};
    let mut block = [0u8; BLOCK];
    let n = NodeImage {
        version: 4,
        ..NodeImage::zero(9)
    };
    node::encode(&n, &mut block[1024..]);
    let f = Found {
        space: Space::Node,
        oid: 9,
        version: 4,
        block: 7,
        offset: 1024,
        crc: 0,
    };
    assert_eq!(f.node(&block), Ok(n));
    assert_eq!(
        Found { version: 5, ..f }.node(&block),
        Err(Damaged),
        "another version"
    );
    assert_eq!(
        Found { oid: 8, ..f }.node(&block),
        Err(Damaged),
        "another node"
    );
    assert_eq!(
        Found { offset: 512, ..f }.node(&block),
        Err(Damaged),
        "a blank record"
    );
    let data = [7u8; BLOCK];
    let p = Found {
        space: Space::Page,
        oid: 9,
        version: 1,
        block: 8,
        offset: 0,
        crc: crate::crc32c(&data),
    };
    assert_eq!(p.check_page(&data), Ok(()));
    assert_eq!(
        Found {
            crc: p.crc ^ 1,
            ..p
        }
        .check_page(&data),
        Err(Damaged)
    );
    assert_eq!(
        Found {
            space: Space::Node,
            ..p
        }
        .check_page(&data),
        Err(Damaged)
    );
    assert_eq!(core::mem::size_of::<DirSlot>(), 24);
}

#[test]
fn directory_refuses_bad_input() {
    let l = Layout::new(1, 1);
    let mut buf = [DirSlot::EMPTY; 4];
    let mut d = Directory::new(&mut buf, l);
    assert_eq!(
        d.push(&page(1, 1, 1)),
        Err(DirError::Order),
        "page among nodes"
    );
    assert_eq!(
        d.push(&DirEntry {
            crc: 5,
            ..node(1, 1)
        }),
        Err(DirError::Order),
        "node crc"
    );
    d.push(&node(1, 1)).unwrap();
    assert_eq!(d.finish(), Err(DirError::Missing));
    assert_eq!(
        d.push(&node(2, 1)),
        Err(DirError::Order),
        "node among pages"
    );
    d.push(&page(1, 1, 1)).unwrap();
    assert_eq!(
        d.push(&page(2, 1, 1)),
        Err(DirError::Order),
        "more than the header says"
    );
    d.finish().unwrap();
    assert_eq!(d.find(Space::Node, 1), Some((1, 2, 0)));

    let mut small = [DirSlot::EMPTY; 1];
    let mut d = Directory::new(&mut small, l);
    d.push(&node(1, 1)).unwrap();
    assert_eq!(d.push(&page(1, 1, 1)), Err(DirError::Full));

    let l = Layout::new(0, 2);
    let mut buf = [DirSlot::EMPTY; 2];
    let mut d = Directory::new(&mut buf, l);
    d.push(&page(3, 1, 1)).unwrap();
    d.push(&page(3, 2, 1)).unwrap();
    assert_eq!(d.finish(), Err(DirError::Duplicate));
    assert_eq!(d.find(Space::Page, 3), None);
}

#[test]
fn directory_from_blocks() {
    let l = Layout::new(3, 300);
    let entries: Vec<DirEntry> = (0..3)
        .map(|i| node(i * 10, 1))
        .chain((0..300).map(|i| page(i * 3, 2, i as u32)))
        .collect();
    let mut b0 = [0u8; BLOCK];
    let mut b1 = [0u8; BLOCK];
    encode_dir_block(4, &entries[..255], &mut b0);
    encode_dir_block(4, &entries[255..], &mut b1);
    let mut buf = std::vec![DirSlot::EMPTY; 303];
    let mut d = Directory::new(&mut buf, l);
    assert_eq!(
        d.add_block(1, 4, &b1),
        Err(DirError::Order),
        "out of sequence"
    );
    assert_eq!(
        d.add_block(0, 5, &b0),
        Err(DirError::Damaged),
        "wrong checkpoint"
    );
    assert_eq!(
        d.add_block(0, 4, &b1),
        Err(DirError::Damaged),
        "wrong count"
    );
    d.add_block(0, 4, &b0).unwrap();
    assert_eq!(
        d.add_block(2, 4, &b1),
        Err(DirError::Order),
        "past the last"
    );
    d.add_block(1, 4, &b1).unwrap();
    d.finish().unwrap();
    assert_eq!(d.find(Space::Node, 20), Some((1, 3, 1024)));
    assert_eq!(
        d.lookup(Space::Page, 897).map(|f| (f.block, f.crc)),
        Some((l.page_block(299), 299))
    );
}

proptest! {
    #[test]
    fn directory_lookup_matches_the_layout(
        nodes in proptest::collection::btree_set(0u64..5000, 0..300),
        pages in proptest::collection::btree_set(0u64..5000, 0..600),
        probes in proptest::collection::vec((any::<bool>(), 0u64..5000), 50),
        seed in any::<u32>(),
    ) {
        // Directory order is arbitrary (the writer's): shuffle by a seed.
        let mut ns: Vec<u64> = nodes.iter().copied().collect();
        let mut ps: Vec<u64> = pages.iter().copied().collect();
        ns.sort_by_key(|o| (o.wrapping_mul(2654435761) ^ seed as u64) & 0xffff);
        ps.sort_by_key(|o| (o.wrapping_mul(40503) ^ seed as u64) & 0xffff);
        let l = Layout::new(ns.len() as u32, ps.len() as u32);
        let entries: Vec<DirEntry> = ns.iter().map(|&o| node(o, o as u32 ^ seed))
            .chain(ps.iter().map(|&o| page(o, o as u32 + seed, !(o as u32))))
            .collect();
        let mut buf = std::vec![DirSlot::EMPTY; entries.len()];
        let mut d = Directory::new(&mut buf, l);
        let mut blk = [0u8; BLOCK];
        for (k, chunk) in entries.chunks(DIR_ENTRIES).enumerate() {
            encode_dir_block(9, chunk, &mut blk);
            d.add_block(k as u32, 9, &blk).unwrap();
        }
        d.finish().unwrap();
        for (i, &o) in ns.iter().enumerate() {
            let (b, off) = l.node_block(i as u32);
            prop_assert_eq!(d.find(Space::Node, o), Some((o as u32 ^ seed, b, off)));
        }
        for (j, &o) in ps.iter().enumerate() {
            prop_assert_eq!(d.find(Space::Page, o), Some((o as u32 + seed, l.page_block(j as u32), 0)));
            prop_assert_eq!(d.lookup(Space::Page, o).unwrap().crc, !(o as u32));
        }
        let (nset, pset): (BTreeSet<u64>, BTreeSet<u64>) = (nodes, pages);
        for (is_node, o) in probes {
            let present = if is_node { nset.contains(&o) } else { pset.contains(&o) };
            let space = if is_node { Space::Node } else { Space::Page };
            prop_assert_eq!(d.find(space, o).is_some(), present);
        }
        // Every block of the checkpoint is used once.
        let mut used = BTreeSet::new();
        for i in 0..d.len() {
            let f = d.get(i).unwrap();
            prop_assert!(used.insert((f.block, f.offset)));
            prop_assert!(f.block > l.dir_blocks as u64 && f.block < l.total_blocks());
        }
    }
}
