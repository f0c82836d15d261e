//! Geometry, root records, node records and version blocks.

use crate::geometry::{Geometry, GeometryError, Place, VERSIONS_PER_BLOCK};
use crate::node::{self, NodeImage, Record};
use crate::root::{block_for, choose, Root, RootError, ROOT_LEN};
use crate::versions::{self, Kind};
use crate::{seal, Damaged, BLOCK};
use proptest::prelude::*;
use stet_keys::{rights, Key, KeyType};

fn root(total: u64, generation: u64) -> Root {
    let g = Geometry::for_disk(total).unwrap();
    Root {
        generation,
        geometry: g,
        ckpt_generation: generation / 2,
        ckpt_start: g.log_start,
        ckpt_blocks: 3,
        migrated: false,
        journal_head: g.journal_start + 4,
        journal_seq: 17,
        restarts: 2,
    }
}

#[test]
fn small_disks_are_refused() {
    assert_eq!(Geometry::for_disk(0), Err(GeometryError::TooSmall));
    assert_eq!(Geometry::for_disk(56), Err(GeometryError::TooSmall));
    let g = Geometry::for_disk(57).unwrap();
    assert_eq!((g.nodes, g.pages), (8, 16));
    assert_eq!(g.journal_blocks, 16);
    // 2 roots, 2 node blocks, 2 version blocks, 16 pages, 16 journal,
    // and a log of header + 1 directory + 1 node block + 16 pages.
    assert_eq!(g.log_start, 2 + 2 + 2 + 16 + 16);
    assert_eq!(g.log_blocks, 19);
    assert_eq!(g.max_checkpoint().total_blocks(), 19);
    assert!(g.is_sane());
}

#[test]
fn a_64_mib_disk() {
    let g = Geometry::for_disk(16384).unwrap();
    assert_eq!(
        g,
        Geometry {
            total: 16384,
            nodes: 3664,
            node_area: 2,
            node_blocks: 458,
            pages: 7328,
            version_area: 918,
            version_blocks: 15,
            page_area: 948,
            journal_start: 8276,
            journal_blocks: 256,
            log_start: 8532,
            log_blocks: 7852,
        }
    );
    assert!(g.is_sane());
    // 1 header + 44 directory + 458 node blocks + 7328 pages; the 21
    // blocks too few for another unit go to the log.
    assert_eq!(g.max_checkpoint().total_blocks(), 7831);
    assert_eq!(g.journal_ring().slots(), 128);
}

#[test]
fn journal_size_is_bounded() {
    assert_eq!(Geometry::for_disk(1000).unwrap().journal_blocks, 16);
    assert_eq!(
        Geometry::for_disk(64 * 100 + 63).unwrap().journal_blocks,
        100
    );
    assert_eq!(
        Geometry::for_disk(64 * 101).unwrap().journal_blocks,
        100,
        "even"
    );
    assert_eq!(Geometry::for_disk(1 << 20).unwrap().journal_blocks, 512);
}

#[test]
fn huge_disks_keep_object_counts_in_32_bits() {
    let g = Geometry::for_disk(u64::MAX).unwrap();
    assert!(g.is_sane());
    assert_eq!(g.nodes + g.pages, (u32::MAX as u64 / 24) * 24);
}

#[test]
fn homes_are_where_the_docs_say() {
    let g = Geometry::for_disk(16384).unwrap();
    assert_eq!(
        g.node_home(0, 0),
        Some(Place {
            block: 2,
            offset: 0
        })
    );
    assert_eq!(
        g.node_home(9, 1),
        Some(Place {
            block: 2 + 458 + 1,
            offset: 512
        })
    );
    assert_eq!(g.node_home(3664, 0), None);
    assert_eq!(g.node_home(0, 2), None);
    assert_eq!(
        g.version_home(0, 0),
        Some(Place {
            block: 918,
            offset: 0
        })
    );
    assert_eq!(
        g.version_home(512, 1),
        Some(Place {
            block: 918 + 15 + 1,
            offset: 8
        })
    );
    assert_eq!(g.version_home(7328, 0), None);
    assert_eq!(g.version_block(14, 1), Some(947));
    assert_eq!(g.version_block(15, 0), None);
    assert_eq!(g.page_home(7327), Some(8275));
    assert_eq!(g.page_home(7328), None);
    assert_eq!(versions::version_block_of(510), (0, 510));
    assert_eq!(versions::version_block_of(511), (1, 0));
}

#[test]
fn insane_geometries_are_refused() {
    let g = Geometry::for_disk(16384).unwrap();
    let bad = [
        Geometry { nodes: 0, ..g },
        Geometry { node_area: 1, ..g },
        Geometry {
            node_blocks: 457,
            ..g
        },
        Geometry {
            version_area: 917,
            ..g
        },
        Geometry {
            version_blocks: 14,
            ..g
        },
        Geometry {
            page_area: 947,
            ..g
        },
        Geometry { pages: 7329, ..g },
        Geometry {
            journal_start: 8275,
            ..g
        },
        Geometry {
            journal_blocks: 1,
            ..g
        },
        Geometry {
            log_start: 8531,
            ..g
        },
        Geometry {
            log_blocks: 7851,
            ..g
        },
        Geometry { total: 16385, ..g },
        Geometry {
            pages: u64::MAX,
            ..g
        },
        Geometry {
            node_blocks: u64::MAX,
            ..g
        },
        Geometry {
            log_start: u64::MAX,
            ..g
        },
    ];
    for b in bad {
        assert!(!b.is_sane(), "{b:?}");
    }
    // The journal grown so the log is one block short of a full
    // checkpoint (and, one block less, just long enough).
    let spare = g.log_blocks - g.max_checkpoint().total_blocks();
    let grown = |by: u64| Geometry {
        log_start: g.log_start + by,
        log_blocks: g.log_blocks - by,
        journal_blocks: g.journal_blocks + by,
        ..g
    };
    assert!(!grown(spare + 1).is_sane());
    assert!(grown(spare).is_sane());
}

#[test]
fn root_round_trips_and_fails_on_damage() {
    let r = root(16384, 7);
    let b = r.encode();
    assert_eq!(Root::decode(&b, 16384), Ok(r));
    let mut bad = b;
    bad[20] ^= 1;
    assert_eq!(Root::decode(&bad, 16384), Err(RootError::Checksum));
    assert_eq!(Root::decode(&[0u8; ROOT_LEN], 16384), Err(RootError::Magic));
    assert_eq!(Root::decode(&b[..100], 16384), Err(RootError::Magic));
    assert_eq!(
        Root::decode(&b, 16385),
        Err(RootError::Geometry),
        "other disk size"
    );
    let reseal = |f: &dyn Fn(&mut [u8; ROOT_LEN])| {
        let mut x = b;
        f(&mut x);
        seal(&mut x, ROOT_LEN - 4);
        Root::decode(&x, 16384)
    };
    assert_eq!(reseal(&|x| x[8] = 1), Err(RootError::Format(1)));
    assert_eq!(crate::root::format_of(&b), Some(crate::FORMAT));
    assert_eq!(crate::root::format_of(&[0u8; ROOT_LEN]), None);
    assert_eq!(reseal(&|x| x[12] = 1), Err(RootError::Geometry));
    assert_eq!(
        reseal(&|x| x[200] = 1),
        Err(RootError::Geometry),
        "reserved"
    );
    assert_eq!(
        reseal(&|x| x[144] = 2),
        Err(RootError::Geometry),
        "migrated 2"
    );
    // The journal head must be a record's place: even offset in the ring.
    let odd = Root {
        journal_head: r.journal_head + 1,
        ..r
    };
    assert_eq!(Root::decode(&odd.encode(), 16384), Err(RootError::Geometry));
    let past = Root {
        journal_head: r.geometry.log_start,
        ..r
    };
    assert_eq!(
        Root::decode(&past.encode(), 16384),
        Err(RootError::Geometry)
    );
    // The checkpoint must lie in the log.
    let before = Root {
        ckpt_start: r.geometry.log_start - 1,
        ..r
    };
    assert_eq!(
        Root::decode(&before.encode(), 16384),
        Err(RootError::Geometry)
    );
    let long = Root {
        ckpt_blocks: r.geometry.log_blocks + 1,
        ..r
    };
    assert_eq!(
        Root::decode(&long.encode(), 16384),
        Err(RootError::Geometry)
    );
    let whole = Root {
        ckpt_blocks: r.geometry.log_blocks,
        ..r
    };
    assert_eq!(Root::decode(&whole.encode(), 16384), Ok(whole));
    // Checkpoint numbers come from root generations.
    let ahead = Root {
        ckpt_generation: 8,
        ..r
    };
    assert_eq!(
        Root::decode(&ahead.encode(), 16384),
        Err(RootError::Geometry)
    );
    assert_eq!(r.next_ckpt_generation(), 8);
    // No checkpoint means nothing to migrate.
    let none = Root {
        ckpt_blocks: 0,
        ..r
    };
    assert_eq!(
        Root::decode(&none.encode(), 16384),
        Err(RootError::Geometry)
    );
}

#[test]
fn fresh_root() {
    let g = Geometry::for_disk(4096).unwrap();
    let r = Root::fresh(g);
    assert_eq!(Root::decode(&r.encode(), 4096), Ok(r));
    assert!(!r.needs_log());
    assert_eq!(
        (r.generation, r.ckpt_blocks, r.journal_head, r.journal_seq),
        (0, 0, g.journal_start, 0)
    );
    assert!(root(4096, 1).needs_log());
    assert_eq!(block_for(0), 0);
    assert_eq!(block_for(1), 1);
}

#[test]
fn newer_valid_root_wins() {
    let (a, b) = (root(4096, 4).encode(), root(4096, 5).encode());
    assert_eq!(choose(&a, &b, 4096).unwrap().0, 1);
    assert_eq!(choose(&b, &a, 4096).unwrap().0, 0);
    let mut torn = b;
    torn[64..].fill(0);
    assert_eq!(choose(&a, &torn, 4096).unwrap(), (0, root(4096, 4)));
    assert_eq!(
        choose(&torn, &torn, 4096),
        Err([RootError::Checksum, RootError::Checksum])
    );
    assert_ne!(block_for(4), block_for(5));
}

fn keys_sample(oid: u64) -> [Key; 16] {
    let mut k = [Key::VOID; 16];
    k[0] = Key::node(oid, 3, rights::RO).with_hint(77);
    k[1] = Key::page(12, 9, false).with_hint(5);
    k[2] = Key::number(0xdead_beef, 42);
    k[3] = Key::segment(40, 1, 3, rights::KEEPER);
    k[4] = Key::resume(oid, 0x1234_5678_9abc, 1);
    k[5] = Key::service(KeyType::Journal);
    k[15] = Key::start(99, 2, 7).with_hint(1);
    k
}

#[test]
fn node_records_round_trip_without_hints() {
    let n = NodeImage {
        oid: 41,
        version: 6,
        calls: (1 << 48) + 5,
        keys: keys_sample(41),
    };
    let mut rec = [0u8; 512];
    node::encode(&n, &mut rec);
    let want = NodeImage {
        calls: 5,
        keys: n.keys.map(Key::canonical),
        ..n
    };
    assert_eq!(node::decode(&rec, 41), Record::Valid(want));
    assert_eq!(node::decode(&rec, 42), Record::Damaged, "another node's");
    assert_eq!(node::decode(&[0u8; 512], 41), Record::Blank);
    let mut bad = rec;
    bad[100] ^= 4;
    assert_eq!(node::decode(&bad, 41), Record::Damaged);
    let reseal = |f: &dyn Fn(&mut [u8; 512])| {
        let mut x = rec;
        f(&mut x);
        seal(&mut x, 508);
        node::decode(&x, 41)
    };
    assert_eq!(reseal(&|_| ()), Record::Valid(want));
    assert_eq!(reseal(&|x| x[0] = b'X'), Record::Damaged, "magic");
    assert_eq!(reseal(&|x| x[20] = 1), Record::Damaged, "pad");
    assert_eq!(
        reseal(&|x| x[30] = 1),
        Record::Damaged,
        "calls over 48 bits"
    );
    assert_eq!(reseal(&|x| x[32 + 8 + 5] = 1), Record::Damaged, "a hint");
    assert_eq!(
        reseal(&|x| x[32 + 16 * 6] = 200),
        Record::Damaged,
        "bad key type"
    );
    assert_eq!(reseal(&|x| x[400] = 1), Record::Damaged, "tail");
    // Only the record's 512 bytes are looked at.
    let mut block = [0xffu8; BLOCK];
    block[512..1024].copy_from_slice(&rec);
    assert_eq!(node::decode(&block[512..], 41), Record::Valid(want));
}

#[test]
fn node_copies_pick() {
    let a = Record::Valid(NodeImage::zero(1));
    let b = Record::Valid(NodeImage {
        version: 2,
        ..NodeImage::zero(1)
    });
    use Record::{Blank, Damaged as D};
    assert_eq!(node::pick(a, b), a);
    assert_eq!(node::pick(D, b), b);
    assert_eq!(node::pick(Blank, b), b);
    assert_eq!(node::pick(a, D), a);
    assert_eq!(node::pick(a, Blank), a);
    assert_eq!(node::pick(Blank, Blank), Blank);
    assert_eq!(node::pick(D, D), D);
    assert_eq!(node::pick(Blank, D), D);
    assert_eq!(node::pick(D, Blank), D);
}

#[test]
fn version_blocks() {
    use versions::Entry;
    let mut v = [Entry::NEVER; 511];
    for (i, x) in v.iter_mut().enumerate() {
        *x = Entry::new(i as u32 * 7 + 1, i as u32 ^ 0xdead_beef);
    }
    let mut b = [0u8; BLOCK];
    versions::encode_entries(&v, &mut b);
    assert_eq!(versions::decode_entries(&b), Ok(v));
    assert_eq!(versions::classify(&b), Kind::Valid);
    assert_eq!(versions::entry_at(&b, 500).version, 3501);
    assert_eq!(versions::entry_at(&b, 500).crc, 500 ^ 0xdead_beef);
    let blank = [0u8; BLOCK];
    assert_eq!(versions::decode_entries(&blank), Ok([Entry::NEVER; 511]));
    assert_eq!(versions::classify(&blank), Kind::Blank);
    let mut bad = b;
    bad[4000] ^= 0x80;
    assert_eq!(versions::decode_entries(&bad), Err(Damaged));
    assert_eq!(versions::pick(&b, &bad), Ok(Some(0)));
    assert_eq!(versions::pick(&bad, &b), Ok(Some(1)));
    assert_eq!(versions::pick(&blank, &b), Ok(Some(1)));
    assert_eq!(versions::pick(&blank, &blank), Ok(None));
    assert_eq!(versions::pick(&bad, &blank), Ok(None), "a torn first write");
    assert_eq!(versions::pick(&blank, &bad), Err(Damaged));
    assert_eq!(versions::pick(&bad, &bad), Err(Damaged));
    // The spare bytes before the CRC must be zero, even resealed.
    let mut spare = b;
    spare[4090] = 1;
    crate::seal(&mut spare, BLOCK - 4);
    assert_eq!(versions::classify(&spare), Kind::Damaged);
    // Setting one entry in a blank block makes a valid block.
    let mut one = [0u8; BLOCK];
    let e = Entry::of(99, &[7u8; BLOCK]);
    versions::set_entry(&mut one, 5, e);
    let mut want = [Entry::NEVER; 511];
    want[5] = e;
    assert_eq!(versions::decode_entries(&one), Ok(want));
    assert_eq!(VERSIONS_PER_BLOCK, 511);
}

#[test]
fn page_homes_are_judged_by_their_entry() {
    use versions::{Entry, Home};
    let page = [0x5au8; BLOCK];
    let e = Entry::of(3, &page);
    assert_eq!(e.judge(crate::crc32c(&page)), Home::Use);
    let mut flipped = page;
    flipped[1000] ^= 4;
    assert_eq!(e.judge(crate::crc32c(&flipped)), Home::Damaged);
    // Never written: whatever the block holds, the page is zero (it need
    // not be read).
    assert!(Entry::NEVER.never_written());
    assert_eq!(Entry::NEVER.judge(crate::crc32c(&page)), Home::Zero);
    assert_eq!(Entry::NEVER.judge(0), Home::Zero);
    // A page written at version 0 whose CRC is 0 is not "never written":
    // its field holds 1, and a home whose CRC is 0 (or 1) matches it.
    let z = Entry::new(0, 0);
    assert_eq!(z, Entry { version: 0, crc: 1 });
    assert!(!z.never_written());
    assert_eq!(z.judge(0), Home::Use);
    assert_eq!(z.judge(crate::crc32c(&page)), Home::Damaged);
    // A lost entry is never trusted, whatever the home holds.
    assert_eq!(Entry::LOST.judge(u32::MAX), Home::Damaged);
    assert_eq!(Entry::LOST.judge(crate::crc32c(&page)), Home::Damaged);
    // A page of version 0 with any other contents is an entry like others.
    let z = Entry::of(0, &page);
    assert!(!z.never_written());
    assert_eq!(z.judge(crate::crc32c(&flipped)), Home::Damaged);
}

fn any_key() -> impl Strategy<Value = Key> {
    (0u8..8, any::<u64>(), any::<u32>(), any::<u32>()).prop_map(|(t, oid, v, hint)| {
        let oid = oid & stet_keys::MAX_OID;
        match t {
            0 => Key::VOID,
            1 => Key::number(oid, v),
            2 => Key::page(oid, v, hint & 1 != 0).with_hint(hint),
            3 => Key::node(oid, v, hint as u8).with_hint(hint),
            4 => Key::segment(oid, v, 1 + (hint % 10) as u8, hint as u8).with_hint(hint),
            5 => Key::start(oid, v, hint as u8).with_hint(hint),
            6 => Key::resume(oid, oid, hint as u8),
            _ => Key::service(KeyType::Checkpoint),
        }
    })
}

proptest! {
    #[test]
    fn geometry_is_sane_and_homes_are_unique(total in 57u64..5_000_000) {
        let g = Geometry::for_disk(total).unwrap();
        prop_assert!(g.is_sane());
        prop_assert_eq!(g.nodes * 2, g.pages);
        let ckpt = g.max_checkpoint().total_blocks();
        prop_assert!(g.log_blocks >= ckpt);
        // No room was wasted: another unit (35 blocks and a bit) would not fit.
        prop_assert!(g.log_blocks - ckpt < 39, "slack {}", g.log_blocks - ckpt);
        for oid in [0, 1, g.nodes / 2, g.nodes - 1] {
            let a = g.node_home(oid, 0).unwrap();
            let b = g.node_home(oid, 1).unwrap();
            prop_assert!(a.block >= g.node_area && a.block < g.node_area + g.node_blocks);
            prop_assert_eq!(b.block, a.block + g.node_blocks);
            prop_assert_eq!(a.offset, b.offset);
        }
        for oid in [0, 1, g.pages / 2, g.pages - 1] {
            let a = g.version_home(oid, 0).unwrap();
            let b = g.version_home(oid, 1).unwrap();
            prop_assert!(a.block >= g.version_area && a.block < g.version_area + g.version_blocks);
            prop_assert_eq!(b.block, a.block + g.version_blocks);
            prop_assert!(b.block < g.page_area);
        }
        prop_assert!(g.node_home(g.nodes, 0).is_none());
        prop_assert_eq!(g.page_home(g.pages - 1), Some(g.journal_start - 1));
        prop_assert!(g.page_home(g.pages).is_none());
        prop_assert_eq!(g.journal_blocks % 2, 0);
        prop_assert!((16..=512).contains(&g.journal_blocks));
    }

    #[test]
    fn any_bit_flip_in_a_root_is_detected(total in 57u64..1_000_000, gen in any::<u64>(), at in 0usize..ROOT_LEN, bit in 0u8..8) {
        let r = root(total.max(100), gen);
        let mut b = r.encode();
        b[at] ^= 1 << bit;
        prop_assert!(Root::decode(&b, total.max(100)).is_err());
    }

    #[test]
    fn choose_takes_the_newest_valid(g1 in 0u64..1000, g2 in 0u64..1000, damage_a in any::<bool>(), damage_b in any::<bool>()) {
        let mut a = root(8192, g1).encode();
        let mut b = root(8192, g2).encode();
        if damage_a { a[30] ^= 0x40; }
        if damage_b { b[90] ^= 0x01; }
        match choose(&a, &b, 8192) {
            Ok((which, r)) => {
                prop_assert!(!(damage_a && damage_b));
                let want = match (damage_a, damage_b) {
                    (false, false) => g1.max(g2),
                    (true, _) => g2,
                    (_, true) => g1,
                };
                prop_assert_eq!(r.generation, want);
                prop_assert_eq!(which, if damage_a || (!damage_b && g2 > g1) { 1 } else { 0 });
            }
            Err(_) => prop_assert!(damage_a && damage_b),
        }
    }

    #[test]
    fn node_records_round_trip(oid in 0u64..1 << 40, version in any::<u32>(), calls in any::<u64>(), keys in proptest::array::uniform16(any_key())) {
        let n = NodeImage { oid, version, calls, keys };
        let mut rec = [0u8; 512];
        node::encode(&n, &mut rec);
        let want = NodeImage { calls: calls & stet_keys::CALL_COUNT_MASK, keys: keys.map(Key::canonical), ..n };
        prop_assert_eq!(node::decode(&rec, oid), Record::Valid(want));
    }

    #[test]
    fn any_bit_flip_in_a_node_record_is_detected(at in 0usize..512, bit in 0u8..8, keys in proptest::array::uniform16(any_key())) {
        let n = NodeImage { oid: 5, version: 1, calls: 2, keys };
        let mut rec = [0u8; 512];
        node::encode(&n, &mut rec);
        rec[at] ^= 1 << bit;
        prop_assert_eq!(node::decode(&rec, 5), Record::Damaged);
    }

    #[test]
    fn any_bit_flip_in_a_version_block_is_detected(at in 0usize..BLOCK, bit in 0u8..8, seed in any::<u32>()) {
        let mut v = [versions::Entry::NEVER; 511];
        for (i, x) in v.iter_mut().enumerate() {
            *x = versions::Entry { version: seed.wrapping_mul(i as u32 + 1), crc: seed ^ i as u32 };
        }
        let mut b = [0u8; BLOCK];
        versions::encode_entries(&v, &mut b);
        b[at] ^= 1 << bit;
        prop_assert_eq!(versions::decode_entries(&b), Err(Damaged));
    }

    #[test]
    fn any_bit_flip_in_a_page_home_is_detected(at in 0usize..BLOCK, bit in 0u8..8, seed in any::<u64>(), version in any::<u32>()) {
        let mut page = [0u8; BLOCK];
        let mut r = stet_prng::SplitMix64::new(seed);
        for w in page.chunks_mut(8) { w.copy_from_slice(&r.next_u64().to_le_bytes()); }
        let e = versions::Entry::of(version, &page);
        prop_assert_eq!(e.judge(crate::crc32c(&page)), versions::Home::Use);
        page[at] ^= 1 << bit;
        prop_assert_eq!(e.judge(crate::crc32c(&page)), versions::Home::Damaged);
    }
}

#[test]
fn a_store_of_another_format_is_recognised() {
    use crate::root::Roots;
    let r = root(16384, 7);
    let mut old = r.encode();
    crate::put32(&mut old, 8, 2);
    seal(&mut old, ROOT_LEN - 4);
    let blank = [0u8; ROOT_LEN];
    let both = Roots::read(&old, &old, 16384);
    assert_eq!(both.newest, None);
    assert_eq!(both.other_format(), Some(2));
    assert_eq!(Roots::read(&old, &blank, 16384).other_format(), Some(2));
    assert_eq!(Roots::read(&blank, &blank, 16384).other_format(), None);
    // One root of this format: the store is this format's (a damaged
    // newest, or a half-written one); nothing to refuse as a whole.
    let now = Roots::read(&old, &r.encode(), 16384);
    assert_eq!(now.newest.map(|(b, x)| (b, x.generation)), Some((1, 7)));
    assert_eq!(now.other_format(), None);
    let mut torn = r.encode();
    torn[100] ^= 1;
    assert_eq!(Roots::read(&old, &torn, 16384).other_format(), None);
}
