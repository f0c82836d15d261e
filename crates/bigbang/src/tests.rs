//! Unit tests break one rule at a time (fixing the checksum afterwards so
//! the rule itself is what fails); property tests round-trip arbitrary
//! images and feed the parser garbage.

extern crate std;

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;

use proptest::prelude::*;
use stet_keys::{rights, Key, KeyType, Space, MAX_OID};

use super::*;

/// Recomputes the checksum after an edit of the body.
fn fix(bytes: &mut [u8]) {
    let crc = checksum(&bytes[HEADER_LEN..]);
    bytes[offset::CRC32C..offset::CRC32C + 4].copy_from_slice(&crc.to_le_bytes());
}

fn put64(bytes: &mut [u8], at: usize, v: u64) {
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn put32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn keys(pairs: &[(usize, Key)]) -> [Key; SLOTS] {
    let mut k = [Key::VOID; SLOTS];
    for &(i, key) in pairs {
        k[i] = key;
    }
    k
}

fn page_of(b: u8) -> [u8; PAGE_SIZE] {
    let mut p = [0u8; PAGE_SIZE];
    for (i, x) in p.iter_mut().enumerate() {
        *x = b ^ (i as u8);
    }
    p
}

/// Nodes 3 and 7, pages 2 and 9, node 3 runs, both named.
fn sample() -> Vec<u8> {
    Builder::new()
        .node(
            7,
            1,
            keys(&[
                (0, Key::number(5, 6)),
                (1, Key::page(9, 1, true)),
                (2, Key::range(Space::Page, 20, 4)),
            ]),
        )
        .node(
            3,
            2,
            keys(&[(0, Key::node(7, 1, 0)), (15, Key::start(11, 0, 9))]),
        )
        .page(9, 1, &page_of(9))
        .page(2, 4, &page_of(2))
        .run(3)
        .name(7, "seven")
        .name(3, "three")
        .build()
        .unwrap()
}

// Offsets in `sample()`.
const NODE0: usize = HEADER_LEN;
const NODE1: usize = HEADER_LEN + NODE_RECORD;
const PAGE0: usize = HEADER_LEN + 2 * NODE_RECORD;
const RUN0: usize = PAGE0 + 2 * PAGE_RECORD;
const NAME0: usize = RUN0 + RUN_RECORD;
const NAME1: usize = NAME0 + NAME_RECORD;

#[test]
fn record_sizes() {
    assert_eq!(NODE_RECORD, 272);
    assert_eq!(PAGE_RECORD, 4112);
    assert_eq!(NAME_RECORD, 32);
    assert_eq!(HEADER_LEN % 16, 0);
    assert_eq!(offset::RESERVED + 8, HEADER_LEN);
}

#[test]
fn empty_image() {
    let bytes = Builder::new().build().unwrap();
    assert_eq!(bytes.len(), HEADER_LEN);
    assert_eq!(&bytes[..8], b"STETBB01");
    let image = Image::parse(&bytes).unwrap();
    assert_eq!(image.nodes().len(), 0);
    assert_eq!(image.pages().len(), 0);
    assert_eq!(image.run().len(), 0);
    assert_eq!(image.names().len(), 0);
    assert_eq!(image.header().object_nodes, 0);
    assert_eq!(image.header().first_free_page, 0);
    assert_eq!(image.header().crc32c, checksum(&[]));
}

#[test]
fn header_bytes_are_where_documented() {
    let bytes = sample();
    let h = Image::parse(&bytes).unwrap().header;
    let le64 = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let le32 = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!(le64(8), bytes.len() as u64);
    assert_eq!(le32(16), checksum(&bytes[80..]));
    assert_eq!(le32(20), 0);
    assert_eq!((le32(24), le32(28), le32(32), le32(36)), (2, 2, 1, 2));
    // Node 11 is referred to by the start key; pages 20..24 by the range.
    assert_eq!((le64(40), le64(48), le64(56), le64(64)), (12, 24, 12, 24));
    assert_eq!(le64(72), 0);
    assert_eq!(h.total_len, (80 + 2 * 272 + 2 * 4112 + 8 + 2 * 32) as u64);
    assert_eq!(Header::read(&bytes).unwrap().to_bytes(), bytes[..80]);
}

#[test]
fn accessors() {
    let bytes = sample();
    let image = Image::parse(&bytes).unwrap();
    let nodes: Vec<_> = image.nodes().collect();
    assert_eq!(nodes.len(), 2);
    assert_eq!((nodes[0].oid, nodes[0].version), (3, 2));
    assert_eq!(nodes[0].keys[0], Key::node(7, 1, 0));
    assert_eq!(nodes[0].keys[15].info(), 9);
    assert_eq!(nodes[1].keys[2].range_parts(), Some((Space::Page, 20, 4)));
    assert_eq!(image.node(7), Some(nodes[1]));
    assert_eq!(image.node(4), None);
    assert_eq!(image.node(11), None);
    let pages: Vec<_> = image.pages().collect();
    assert_eq!((pages[0].oid, pages[0].version), (2, 4));
    assert_eq!(pages[1].data, &page_of(9));
    assert_eq!(image.page(9).unwrap().data[1], 8);
    assert_eq!(image.page(3), None);
    assert_eq!(image.run().collect::<Vec<_>>(), [3]);
    let names: Vec<_> = image.names().map(|n| (n.oid, n.name)).collect();
    assert_eq!(names, [(3, "three"), (7, "seven")]);
    assert_eq!(image.name_of(7), Some("seven"));
    assert_eq!(image.name_of(9), None);
    assert_eq!(image.node_at(2), None);
    assert_eq!(image.page_at(2), None);
}

#[test]
fn builder_drops_hints_and_keeps_reservations() {
    let bytes = Builder::new()
        .node(0, 1, keys(&[(1, Key::page(4, 1, false).with_hint(77))]))
        .reserve(10, 2)
        .build()
        .unwrap();
    let image = Image::parse(&bytes).unwrap();
    assert_eq!(image.node(0).unwrap().keys[1], Key::page(4, 1, false));
    let h = image.header();
    assert_eq!((h.object_nodes, h.first_free_node), (1, 10));
    assert_eq!((h.object_pages, h.first_free_page), (5, 5));
}

#[test]
fn header_errors() {
    let good = sample();
    assert_eq!(Image::parse(&good[..79]).unwrap_err(), Error::Truncated);
    let mut b = good.clone();
    b[0] = b'X';
    assert_eq!(Image::parse(&b).unwrap_err(), Error::BadMagic);
    let mut b = good.clone();
    put32(&mut b, offset::FLAGS, 4);
    assert_eq!(Image::parse(&b).unwrap_err(), Error::BadFlags(4));
    let mut b = good.clone();
    b[offset::RESERVED + 7] = 1;
    assert_eq!(Image::parse(&b).unwrap_err(), Error::BadReserved);
    let mut b = good.clone();
    put64(&mut b, offset::TOTAL_LEN, good.len() as u64 + 1);
    assert!(matches!(
        Image::parse(&b).unwrap_err(),
        Error::BadLength { .. }
    ));
    let mut b = good.clone();
    put32(&mut b, offset::NODE_COUNT, u32::MAX);
    assert!(matches!(
        Image::parse(&b).unwrap_err(),
        Error::BadLength { .. }
    ));
    let mut b = good.clone();
    b.push(0);
    assert_eq!(
        Image::parse(&b).unwrap_err(),
        Error::SizeMismatch {
            stated: good.len() as u64,
            actual: good.len() as u64 + 1
        }
    );
    assert!(matches!(
        Image::parse(&good[..good.len() - 1]).unwrap_err(),
        Error::SizeMismatch { .. }
    ));
    let mut b = good.clone();
    b[PAGE0 + 100] ^= 1;
    assert!(matches!(
        Image::parse(&b).unwrap_err(),
        Error::BadChecksum { .. }
    ));
    let mut b = good.clone();
    put64(&mut b, offset::FIRST_FREE_NODE, 11);
    assert_eq!(Image::parse(&b).unwrap_err(), Error::BadBounds(Space::Node));
    let mut b = good.clone();
    put64(&mut b, offset::FIRST_FREE_PAGE, OID_LIMIT + 1);
    assert_eq!(Image::parse(&b).unwrap_err(), Error::BadBounds(Space::Page));
    let mut b = good.clone();
    put64(&mut b, offset::FIRST_FREE_PAGE, OID_LIMIT);
    assert!(Image::parse(&b).is_ok());
}

#[test]
fn record_errors() {
    let good = sample();
    let edit = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut b = good.clone();
        f(&mut b);
        fix(&mut b);
        Image::parse(&b).unwrap_err()
    };
    // Node order: both oids 7.
    assert_eq!(
        edit(&|b| put64(b, NODE0, 7)),
        Error::Order {
            section: Section::Nodes,
            index: 1,
            oid: 7
        }
    );
    assert_eq!(
        edit(&|b| put64(b, PAGE0, 9)),
        Error::Order {
            section: Section::Pages,
            index: 1,
            oid: 9
        }
    );
    // A listed node beyond object_nodes (which stays 12).
    assert_eq!(
        edit(&|b| put64(b, NODE1, 12)),
        Error::ObjectOutOfBounds {
            space: Space::Node,
            oid: 12
        }
    );
    assert_eq!(
        edit(&|b| put64(b, PAGE0 + PAGE_RECORD, 30)),
        Error::ObjectOutOfBounds {
            space: Space::Page,
            oid: 30
        }
    );
    assert_eq!(
        edit(&|b| put32(b, NODE1 + 12, 1)),
        Error::BadPadding {
            space: Space::Node,
            oid: 7
        }
    );
    assert_eq!(
        edit(&|b| put32(b, PAGE0 + 12, 1)),
        Error::BadPadding {
            space: Space::Page,
            oid: 2
        }
    );
    // Slot 3 of node 7: an unknown key type.
    assert_eq!(
        edit(&|b| b[NODE1 + 16 + 3 * 16] = 0xee),
        Error::BadKey { node: 7, slot: 3 }
    );
    // Slot 1 of node 7 (a page key) with a hint.
    assert_eq!(
        edit(&|b| b[NODE1 + 16 + 16 + 15] = 1),
        Error::BadKey { node: 7, slot: 1 }
    );
    // A page key with the weak right (pages allow only RO).
    assert_eq!(
        edit(&|b| b[NODE1 + 16 + 16 + 1] = rights::WEAK),
        Error::BadKey { node: 7, slot: 1 }
    );
    // Node 3 slot 15: start key to node 11; lower the node bounds to 8.
    assert_eq!(
        edit(&|b| {
            put64(b, offset::OBJECT_NODES, 8);
            put64(b, offset::FIRST_FREE_NODE, 8);
        }),
        Error::KeyOutOfBounds { node: 3, slot: 15 }
    );
    // The page range 20..24 no longer fits.
    assert_eq!(
        edit(&|b| {
            put64(b, offset::OBJECT_PAGES, 23);
            put64(b, offset::FIRST_FREE_PAGE, 23);
        }),
        Error::KeyOutOfBounds { node: 7, slot: 2 }
    );
    assert_eq!(edit(&|b| put64(b, RUN0, 4)), Error::RunNotNode(4));
    assert_eq!(edit(&|b| put64(b, NAME0, 4)), Error::NameNotNode(4));
    assert_eq!(
        edit(&|b| put64(b, NAME1, 3)),
        Error::Order {
            section: Section::Names,
            index: 1,
            oid: 3
        }
    );
    assert_eq!(edit(&|b| b[NAME0 + 8] = 0), Error::BadName(3));
    assert_eq!(edit(&|b| b[NAME0 + 8 + 20] = b'x'), Error::BadName(3));
    assert_eq!(edit(&|b| b[NAME0 + 8 + 1] = 0xff), Error::BadName(3));
    assert_eq!(
        edit(&|b| b[NAME0 + 8..NAME0 + 8 + NAME_FIELD].fill(b'a')),
        Error::BadName(3)
    );
}

#[test]
fn run_order_is_checked() {
    let good = Builder::new()
        .node(1, 1, [Key::VOID; SLOTS])
        .node(2, 1, [Key::VOID; SLOTS])
        .run(2)
        .run(1)
        .run(2)
        .build()
        .unwrap();
    let image = Image::parse(&good).unwrap();
    assert_eq!(image.run().collect::<Vec<_>>(), [1, 2]);
    let mut b = good.clone();
    let run0 = HEADER_LEN + 2 * NODE_RECORD;
    put64(&mut b, run0, 2);
    fix(&mut b);
    assert_eq!(
        Image::parse(&b).unwrap_err(),
        Error::Order {
            section: Section::Run,
            index: 1,
            oid: 2
        }
    );
}

#[test]
fn builder_errors() {
    let v = [Key::VOID; SLOTS];
    let err = |b: &mut Builder| b.build().unwrap_err();
    assert_eq!(
        err(Builder::new().node(1, 1, v).node(1, 2, v)),
        BuildError::DuplicateNode(1)
    );
    let z = [0u8; PAGE_SIZE];
    assert_eq!(
        err(Builder::new().page(5, 1, &z).page(5, 1, &z)),
        BuildError::DuplicatePage(5)
    );
    assert_eq!(
        err(Builder::new().node(1, 1, v).name(1, "a").name(1, "b")),
        BuildError::DuplicateName(1)
    );
    for bad in ["", "abcdefghijklmnopqrstuvwx", "a\0b"] {
        assert_eq!(
            err(Builder::new().node(1, 1, v).name(1, bad)),
            BuildError::BadName(bad.to_string())
        );
    }
    assert!(Builder::new()
        .node(1, 1, v)
        .name(1, "abcdefghijklmnopqrstuvw")
        .build()
        .is_ok());
    assert_eq!(err(Builder::new().run(3)), BuildError::NotANode(3));
    assert_eq!(
        err(Builder::new().node(1, 1, v).name(2, "x")),
        BuildError::NotANode(2)
    );
    assert_eq!(
        err(Builder::new().node(MAX_OID + 1, 1, v)),
        BuildError::OidRange(MAX_OID + 1)
    );
    assert_eq!(
        err(Builder::new().page(u64::MAX, 1, &z)),
        BuildError::OidRange(u64::MAX)
    );
    assert_eq!(
        err(Builder::new().reserve(OID_LIMIT + 1, 0)),
        BuildError::OidRange(OID_LIMIT + 1)
    );
    // The top oid itself is fine.
    let b = Builder::new()
        .node(MAX_OID, 1, keys(&[(0, Key::range(Space::Node, 0, 5))]))
        .build()
        .unwrap();
    assert_eq!(Image::parse(&b).unwrap().header().object_nodes, OID_LIMIT);
}

#[test]
fn errors_display() {
    let s = Error::BadKey { node: 3, slot: 4 }.to_string();
    assert_eq!(s, "node 3 slot 4: malformed key");
    assert!(BuildError::NotANode(3).to_string().contains('3'));
}

/// Any valid key (hint zero) whose referents lie below 64.
fn any_key() -> impl Strategy<Value = Key> {
    (
        0u8..14,
        any::<u8>(),
        any::<u8>(),
        any::<u32>(),
        0u64..64,
        any::<u64>(),
    )
        .prop_map(
            |(t, r, info, version, oid, data)| match KeyType::from_u8(t).unwrap() {
                KeyType::Void => Key::VOID,
                KeyType::Number => Key::number(data, version),
                KeyType::Page => Key::page(oid, version, r & 1 != 0),
                KeyType::Node => Key::node(oid, version, r),
                KeyType::Segment => Key::segment(oid, version, 1 + info % 10, r),
                KeyType::Domain => Key::domain(oid, version),
                KeyType::Start => Key::start(oid, version, info),
                KeyType::Resume => Key::resume(oid, data, r),
                KeyType::Meter => Key::meter(oid, version),
                KeyType::Range => Key::range(
                    if r & 1 == 0 { Space::Page } else { Space::Node },
                    oid,
                    info as u32,
                ),
                t => Key::service(t),
            },
        )
}

#[derive(Clone, Debug)]
struct Contents {
    nodes: BTreeMap<u64, (u32, [Key; SLOTS])>,
    pages: BTreeMap<u64, (u32, u8)>,
    run: Vec<u64>,
    names: BTreeMap<u64, String>,
    reserve: (u64, u64),
}

fn any_contents() -> impl Strategy<Value = Contents> {
    let node = (any::<u32>(), proptest::array::uniform16(any_key()));
    (
        proptest::collection::btree_map(0u64..400, node, 0..12),
        proptest::collection::btree_map(0u64..400, (any::<u32>(), any::<u8>()), 0..4),
        proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        proptest::collection::vec((any::<prop::sample::Index>(), "[a-z0-9é-]{1,11}"), 0..6),
        (0u64..1000, 0u64..1000),
    )
        .prop_map(|(nodes, pages, run, names, reserve)| {
            let oids: Vec<u64> = nodes.keys().copied().collect();
            let pick = |i: &prop::sample::Index| (!oids.is_empty()).then(|| *i.get(&oids));
            let run = run.iter().filter_map(pick).collect();
            let names = names
                .iter()
                .filter_map(|(i, n)| Some((pick(i)?, n.clone())))
                .collect();
            Contents {
                nodes,
                pages,
                run,
                names,
                reserve,
            }
        })
}

fn build(c: &Contents) -> Vec<u8> {
    let mut b = Builder::new();
    // Insert in reverse order: the builder sorts.
    for (&oid, &(version, keys)) in c.nodes.iter().rev() {
        b.node(oid, version, keys);
    }
    for (&oid, &(version, seed)) in c.pages.iter().rev() {
        b.page(oid, version, &page_of(seed));
    }
    for &oid in &c.run {
        b.run(oid);
    }
    for (&oid, name) in &c.names {
        b.name(oid, name);
    }
    b.reserve(c.reserve.0, c.reserve.1);
    b.build().unwrap()
}

/// Rebuilds an image from what the parser shows.
fn rebuild(image: &Image<'_>) -> Vec<u8> {
    let mut b = Builder::new();
    for n in image.nodes() {
        b.node(n.oid, n.version, n.keys);
    }
    for p in image.pages() {
        b.page(p.oid, p.version, p.data);
    }
    for oid in image.run() {
        b.run(oid);
    }
    for n in image.names() {
        b.name(n.oid, n.name);
    }
    let h = image.header();
    b.reserve(h.first_free_node, h.first_free_page);
    b.build().unwrap()
}

/// Touches everything a parsed image offers.
fn walk(image: &Image<'_>) -> usize {
    let mut n = 0;
    for node in image.nodes() {
        n += node.keys.iter().filter(|k| !k.is_void()).count();
        assert_eq!(image.node(node.oid), Some(node));
    }
    for page in image.pages() {
        n += page.data[0] as usize;
        assert_eq!(image.page(page.oid), Some(page));
    }
    for oid in image.run() {
        assert!(image.node(oid).is_some());
    }
    for name in image.names() {
        assert!(!name.name.is_empty());
        assert_eq!(image.name_of(name.oid), Some(name.name));
    }
    n
}

proptest! {
    #[test]
    fn round_trip(c in any_contents()) {
        let bytes = build(&c);
        let image = Image::parse(&bytes).unwrap();
        let nodes: BTreeMap<_, _> = image.nodes().map(|n| (n.oid, (n.version, n.keys))).collect();
        prop_assert_eq!(&nodes, &c.nodes);
        let pages: BTreeMap<_, _> = image.pages().map(|p| (p.oid, (p.version, *p.data))).collect();
        let want: BTreeMap<_, _> = c.pages.iter().map(|(&o, &(v, s))| (o, (v, page_of(s)))).collect();
        prop_assert_eq!(pages, want);
        let mut run = c.run.clone();
        run.sort_unstable();
        run.dedup();
        prop_assert_eq!(image.run().collect::<Vec<_>>(), run);
        let names: BTreeMap<_, _> = image.names().map(|n| (n.oid, n.name.to_string())).collect();
        prop_assert_eq!(&names, &c.names);
        let h = *image.header();
        prop_assert!(h.object_nodes <= h.first_free_node);
        prop_assert!(h.first_free_node >= c.reserve.0);
        prop_assert!(c.nodes.keys().all(|&o| o < h.object_nodes));
        prop_assert_eq!(rebuild(&image), bytes.clone());
        walk(&image);
    }

    #[test]
    fn never_panics_on_garbage(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = Image::parse(&bytes);
        let mut with_header = vec![0u8; HEADER_LEN];
        with_header[..8].copy_from_slice(&MAGIC);
        with_header.extend_from_slice(&bytes);
        let _ = Image::parse(&with_header);
    }

    #[test]
    fn never_panics_on_mutations(
        c in any_contents(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        fix_crc in any::<bool>(),
    ) {
        let mut bytes = build(&c);
        for (at, v) in &edits {
            let i = at.index(bytes.len());
            bytes[i] = *v;
        }
        if fix_crc {
            fix(&mut bytes);
        }
        if let Ok(image) = Image::parse(&bytes) {
            walk(&image);
            // Whatever parses is what the builder would write (the header's
            // bounds may be looser than the builder's exact ones).
            prop_assert_eq!(&rebuild(&image)[HEADER_LEN..], &bytes[HEADER_LEN..]);
        }
    }
}
