//! Builds images from small specs and fixture programs, parses them back
//! with stet-bigbang and checks every object by hand, walking address
//! spaces the way the kernel will.

use std::collections::HashMap;

use stet_abi::domain::{meter, root, state, Reg, SEGMENT_KEEPER_SLOT};
use stet_abi::layout::{HEAP_START, STACK_TOP};
use stet_bigbang::{Image, Node};
use stet_keys::{rights, Key, KeyType, Space};

use super::*;
use crate::fixture::{program, DATA_ADDR, TEXT_ADDR};

const PAGE: u64 = 4096;

fn text() -> Vec<u8> {
    (0..100u8).map(|i| i.wrapping_mul(7) | 1).collect()
}

fn data() -> Vec<u8> {
    (0..5000u32).map(|i| (i % 251) as u8 | 1).collect()
}

fn programs() -> HashMap<String, Vec<u8>> {
    let mut p = HashMap::new();
    p.insert("client".into(), program(&text(), &data(), 3 * PAGE));
    p.insert("server".into(), program(&[0xcc; 10], &[], 0));
    p
}

fn loader() -> impl FnMut(&str) -> Result<Vec<u8>> {
    let p = programs();
    move |name: &str| {
        p.get(name)
            .cloned()
            .ok_or_else(|| anyhow!("no program {name}"))
    }
}

const SPEC: &str = r#"
[[meter]]
name = "a"
time = 100
keeper = "server:3"

[[meter]]
name = "b"
superior = "a"

[[domain]]
name = "client"
program = "client"
keys = [
  "console", "start:server:7", "supply:3", "range:pages:5", "range:nodes:2",
  "number:0x10", "meter:a", "space:server", "node:server:annex", "fpu:server",
  "fresh-node", "fresh-page", "meter-node:prime", "domain:server", "space-node:client",
]
meter = "a"
heap_pages = 2
keeper = "server"

[[domain]]
name = "server"
program = "server"
state = "available"
segment_keeper = "client:2"
arg = 99
stack_pages = 4
foreign = true
keys = ["sleep", "node:client:general", "node:client:root", "start:client", "void", "keybits", "discrim", "number:18446744073709551615"]

[[domain]]
name = "idle"
program = "server"
stopped = true
meter = "b"
"#;

struct Fx {
    built: Built,
}

impl Fx {
    fn new() -> Self {
        let spec = Spec::parse(SPEC).unwrap();
        Fx {
            built: build(&spec, loader()).unwrap(),
        }
    }

    fn image(&self) -> Image<'_> {
        Image::parse(&self.built.image).unwrap()
    }

    fn dom(&self, name: &str) -> &DomainInfo {
        self.built.domains.iter().find(|d| d.name == name).unwrap()
    }

    fn node(&self, oid: u64) -> Node {
        self.image().node(oid).unwrap()
    }

    fn general(&self, name: &str) -> [Key; 16] {
        self.node(self.dom(name).general).keys
    }
}

/// Looks `addr` up through `space` as the kernel's walk does; returns the
/// page key and whether any segment key on the way was read-only.
fn walk(image: &Image<'_>, space: Key, addr: u64) -> Option<(Key, bool)> {
    let mut key = space;
    let mut page = addr / PAGE;
    let mut ro = false;
    loop {
        match key.key_type() {
            KeyType::Page => return (page == 0).then_some((key, ro || key.is_ro())),
            KeyType::Segment => {
                let lss = key.lss() as u32;
                if page >= 16u64.pow(lss) {
                    return None;
                }
                ro |= key.is_ro();
                let span = 16u64.pow(lss - 1);
                let slot = (page / span) as usize;
                if key.rights() & rights::KEEPER != 0 && slot == SEGMENT_KEEPER_SLOT {
                    return None;
                }
                let node = image.node(key.oid())?;
                assert_eq!(node.version, key.version(), "stale segment key");
                key = node.keys[slot];
                page %= span;
            }
            _ => return None,
        }
    }
}

/// Checks the minimal-subtree rule in the tree under segment key `key`;
/// returns the highest page offset in use under it and its node count.
fn check_minimal(image: &Image<'_>, key: Key) -> (u64, usize) {
    let lss = key.lss() as u32;
    let node = image.node(key.oid()).unwrap();
    let span = 16u64.pow(lss - 1);
    let mut highest = 0;
    let mut nodes = 1;
    for (i, k) in node.keys.iter().enumerate() {
        let top = match k.key_type() {
            KeyType::Void => continue,
            KeyType::Page => 0,
            KeyType::Segment => {
                assert!((k.lss() as u32) < lss, "child too big");
                let (h, n) = check_minimal(image, *k);
                nodes += n;
                // Minimal: a smaller size would not cover the highest page,
                // and a child whose only page is its first is a page key.
                assert!(h > 0, "segment child with only its first page");
                assert!(h >= 16u64.pow(k.lss() as u32 - 1), "child not minimal");
                h
            }
            KeyType::Start if i == SEGMENT_KEEPER_SLOT => continue,
            t => panic!("unexpected {t:?} in a segment node"),
        };
        highest = highest.max(i as u64 * span + top);
    }
    (highest, nodes)
}

#[test]
fn root_slots() {
    let fx = Fx::new();
    let client = fx.dom("client");
    let server = fx.dom("server");
    let meter_a = fx.built.meters[1].node;
    let r = fx.node(client.root).keys;
    assert_eq!(r[root::STATE], Key::number(state::RUNNING, 0));
    assert_eq!(r[root::METER], Key::meter(meter_a, 1));
    assert_eq!(r[root::KEEPER], Key::start(server.root, 1, 0));
    assert_eq!(r[root::SPACE], Key::segment(client.space_root, 1, 9, 0));
    assert_eq!(r[root::SPACE], client.space_key);
    assert_eq!(r[root::GENERAL], Key::node(client.general, 1, 0));
    assert_eq!(r[root::ANNEX], Key::node(client.annex, 1, 0));
    assert_eq!(r[root::FPU], Key::page(client.fpu, 1, false));
    assert_eq!(r[root::RIP], Key::number(TEXT_ADDR, 0));
    assert_eq!(r[root::RFLAGS], Key::number(0x202, 0));
    assert_eq!(r[root::FS_BASE], Key::number(0, 0));
    assert_eq!(r[root::GS_BASE], Key::number(0, 0));
    assert_eq!(r[root::FAULT_INFO], Key::number(0, 0));
    assert!(r[12..].iter().all(|k| k.is_void()));

    let r = fx.node(server.root).keys;
    assert_eq!(
        r[root::STATE],
        Key::number(state::AVAILABLE, state::FOREIGN)
    );
    assert_eq!(r[root::METER], Key::meter(0, 1));
    assert_eq!(r[root::KEEPER], Key::VOID);
    assert_eq!(
        r[root::SPACE],
        Key::segment(server.space_root, 1, 9, rights::KEEPER)
    );
    let space = fx.node(server.space_root).keys;
    assert_eq!(space[SEGMENT_KEEPER_SLOT], Key::start(client.root, 1, 2));

    let idle = fx.dom("idle");
    let r = fx.node(idle.root).keys;
    assert_eq!(r[root::STATE], Key::number(state::RUNNING, state::STOPPED));
    assert_eq!(r[root::METER], Key::meter(fx.built.meters[2].node, 1));
    assert!(fx.image().nodes().all(|n| n.version == 1));
    assert!(fx.image().pages().all(|p| p.version == 1));
}

#[test]
fn annex_and_fpu() {
    let fx = Fx::new();
    for (name, rdi) in [("client", 0), ("server", 99), ("idle", 2)] {
        let annex = fx.node(fx.dom(name).annex).keys;
        for (i, k) in annex.iter().enumerate() {
            let want = if i == Reg::Rsp as usize {
                STACK_TOP
            } else if i == Reg::Rdi as usize {
                rdi
            } else {
                0
            };
            assert_eq!(*k, Key::number(want, 0), "{name} reg {i}");
        }
        let fpu = fx.image().page(fx.dom(name).fpu).unwrap();
        let d = fpu.data;
        assert_eq!(u16::from_le_bytes([d[0], d[1]]), 0x037f);
        assert_eq!(u32::from_le_bytes(d[24..28].try_into().unwrap()), 0x1f80);
        assert_eq!(u32::from_le_bytes(d[28..32].try_into().unwrap()), 0xffff);
        assert_eq!(u64::from_le_bytes(d[512..520].try_into().unwrap()), 3);
        let nonzero: Vec<usize> = (0..4096).filter(|&i| d[i] != 0).collect();
        assert_eq!(nonzero, [0, 1, 24, 25, 28, 29, 512]);
    }
}

#[test]
fn meters() {
    let fx = Fx::new();
    let image = fx.image();
    let m = &fx.built.meters;
    assert_eq!(
        m.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
        ["prime", "a", "b"]
    );
    let prime = image.node(m[0].node).unwrap().keys;
    assert_eq!(prime[meter::SUPERIOR], Key::VOID);
    assert_eq!(prime[meter::KEEPER], Key::VOID);
    assert_eq!(prime[meter::TIME], Key::number(u64::MAX, 0));
    assert_eq!(prime[meter::USED], Key::number(0, 0));
    let a = image.node(m[1].node).unwrap().keys;
    assert_eq!(a[meter::SUPERIOR], Key::meter(m[0].node, 1));
    assert_eq!(a[meter::KEEPER], Key::start(fx.dom("server").root, 1, 3));
    assert_eq!(a[meter::TIME], Key::number(100, 0));
    assert_eq!(a[meter::USED], Key::number(0, 0));
    let b = image.node(m[2].node).unwrap().keys;
    assert_eq!(b[meter::SUPERIOR], Key::meter(m[1].node, 1));
    assert_eq!(b[meter::TIME], Key::number(u64::MAX, 0));
}

#[test]
fn run_list_and_names() {
    let fx = Fx::new();
    let image = fx.image();
    assert_eq!(image.run().collect::<Vec<_>>(), [fx.dom("client").root]);
    let names: Vec<_> = image.names().map(|n| (n.oid, n.name)).collect();
    assert_eq!(
        names,
        [
            (fx.dom("client").root, "client"),
            (fx.dom("server").root, "server"),
            (fx.dom("idle").root, "idle"),
        ]
    );
    assert!(fx.dom("client").runs && !fx.dom("server").runs && !fx.dom("idle").runs);
    let summary = fx.built.summary();
    assert!(
        summary.contains("domain client (client): root node"),
        "{summary}"
    );
    assert!(summary.contains("meter a: node 1"), "{summary}");
}

#[test]
fn address_space() {
    let fx = Fx::new();
    let image = fx.image();
    let client = fx.dom("client");
    let space = client.space_key;
    // Text: read-only, stored, the ELF's bytes at the entry point.
    let (k, ro) = walk(&image, space, TEXT_ADDR).unwrap();
    assert!(ro && k.version() == 1);
    let page = image.page(k.oid()).unwrap();
    assert_eq!(&page.data[..100], &text()[..]);
    assert!(page.data[100..].iter().all(|&b| b == 0));
    assert!(walk(&image, space, TEXT_ADDR + PAGE).is_none());
    // Data: writable; 5000 bytes over two pages, then three bss pages.
    let (k, ro) = walk(&image, space, DATA_ADDR).unwrap();
    assert!(!ro);
    assert_eq!(&image.page(k.oid()).unwrap().data[..], &data()[..4096]);
    let (k, ro) = walk(&image, space, DATA_ADDR + PAGE + 5).unwrap();
    assert!(!ro);
    let second = image.page(k.oid()).unwrap().data;
    assert_eq!(&second[..904], &data()[4096..]);
    assert!(second[904..].iter().all(|&b| b == 0));
    for i in 2..5 {
        let (k, ro) = walk(&image, space, DATA_ADDR + i * PAGE).unwrap();
        assert!(!ro && k.version() == 0 && image.page(k.oid()).is_none());
        assert!(k.oid() < image.header().object_pages);
    }
    assert!(walk(&image, space, DATA_ADDR + 5 * PAGE).is_none());
    // Stack: 16 zero pages just below STACK_TOP; heap: 2 from HEAP_START.
    for i in 1..=16 {
        let (k, ro) = walk(&image, space, STACK_TOP - i * PAGE).unwrap();
        assert!(!ro && k.version() == 0 && image.page(k.oid()).is_none());
    }
    assert!(walk(&image, space, STACK_TOP - 17 * PAGE).is_none());
    assert!(walk(&image, space, STACK_TOP).is_none());
    for i in 0..2 {
        let (k, ro) = walk(&image, space, HEAP_START + i * PAGE).unwrap();
        assert!(!ro && k.version() == 0);
    }
    assert!(walk(&image, space, HEAP_START + 2 * PAGE).is_none());
    assert!(walk(&image, space, 0).is_none());
    // Every page key in the space is distinct.
    let mut oids: Vec<u64> = [TEXT_ADDR, DATA_ADDR, DATA_ADDR + PAGE]
        .into_iter()
        .chain((2..5).map(|i| DATA_ADDR + i * PAGE))
        .chain((1..=16).map(|i| STACK_TOP - i * PAGE))
        .chain((0..2).map(|i| HEAP_START + i * PAGE))
        .map(|a| walk(&image, space, a).unwrap().0.oid())
        .collect();
    oids.sort_unstable();
    oids.dedup();
    assert_eq!(oids.len(), 24);
    assert_eq!(client.stored_pages, 3);
    assert_eq!(client.zero_pages, 21);

    // The tree is minimal, and its node count is what the summary says.
    let (_, nodes) = check_minimal(&image, space);
    assert_eq!(nodes - 1, client.segment_nodes);

    // The server: 4 stack pages, keeper slot not part of the space.
    let server = fx.dom("server");
    let (k, ro) = walk(&image, server.space_key, TEXT_ADDR).unwrap();
    assert!(ro);
    assert_eq!(&image.page(k.oid()).unwrap().data[..10], &[0xcc; 10]);
    assert!(walk(&image, server.space_key, STACK_TOP - 4 * PAGE).is_some());
    assert!(walk(&image, server.space_key, STACK_TOP - 5 * PAGE).is_none());
    assert!(walk(&image, server.space_key, 15 << 44).is_none());
    let (_, nodes) = check_minimal(&image, server.space_key);
    assert_eq!(nodes - 1, server.segment_nodes);
}

#[test]
fn general_keys() {
    let fx = Fx::new();
    let image = fx.image();
    let h = *image.header();
    let client = fx.dom("client");
    let server = fx.dom("server");
    let g = fx.general("client");
    assert_eq!(g[0], Key::VOID);
    assert_eq!(g[1], Key::service(KeyType::Console));
    assert_eq!(g[2], Key::start(server.root, 1, 7));
    // supply:3: a stored node with three zero pages.
    assert_eq!(g[3].key_type(), KeyType::Node);
    assert_eq!((g[3].version(), g[3].rights()), (1, 0));
    let supply = image.node(g[3].oid()).unwrap().keys;
    for (i, k) in supply.iter().enumerate() {
        if i < 3 {
            assert_eq!(*k, Key::page(supply[0].oid() + i as u64, 0, false));
            assert!(image.page(k.oid()).is_none());
        } else {
            assert!(k.is_void());
        }
    }
    // Ranges come last: pages then nodes, each ending at the first free oid.
    let (space, first, count) = g[4].range_parts().unwrap();
    assert_eq!((space, count), (Space::Page, 5));
    assert_eq!(first + 5, h.first_free_page);
    assert_eq!(h.first_free_page, h.object_pages);
    let (space, first, count) = g[5].range_parts().unwrap();
    assert_eq!((space, count), (Space::Node, 2));
    assert_eq!(first + 2, h.first_free_node);
    assert_eq!(h.first_free_node, h.object_nodes);
    // Nothing in the image lies inside a range.
    assert!(image.nodes().all(|n| n.oid < first));
    assert_eq!(g[6], Key::number(16, 0));
    assert_eq!(g[7], Key::meter(fx.built.meters[1].node, 1));
    assert_eq!(g[8], server.space_key);
    assert_eq!(g[9], Key::node(server.annex, 1, 0));
    assert_eq!(g[10], Key::page(server.fpu, 1, false));
    assert_eq!((g[11].key_type(), g[11].version()), (KeyType::Node, 0));
    assert!(image.node(g[11].oid()).is_none() && g[11].oid() < h.object_nodes);
    assert_eq!((g[12].key_type(), g[12].version()), (KeyType::Page, 0));
    assert!(!g[12].is_ro() && image.page(g[12].oid()).is_none());
    assert_eq!(g[13], Key::node(0, 1, 0));
    assert_eq!(g[14], Key::domain(server.root, 1));
    assert_eq!(g[15], Key::node(client.space_root, 1, 0));

    let g = fx.general("server");
    assert_eq!(g[1], Key::service(KeyType::Sleep));
    assert_eq!(g[2], Key::node(client.general, 1, 0));
    assert_eq!(g[3], Key::node(client.root, 1, 0));
    assert_eq!(g[4], Key::start(client.root, 1, 0));
    assert_eq!(g[5], Key::VOID);
    assert_eq!(g[6], Key::service(KeyType::KeyBits));
    assert_eq!(g[7], Key::service(KeyType::Discrim));
    assert_eq!(g[8], Key::number(u64::MAX, 0));
    assert!(g[9..].iter().all(|k| k.is_void()));
    assert!(fx.general("idle").iter().all(|k| k.is_void()));
}

#[test]
fn deterministic() {
    assert_eq!(Fx::new().built.image, Fx::new().built.image);
}

#[test]
fn spec_defaults() {
    let spec = Spec::parse("[[domain]]\nname = \"x\"\nprogram = \"p\"\n").unwrap();
    assert_eq!(spec.domain[0], DomainSpec::new("x", "p"));
    assert!(spec.meter.is_empty());
    let spec = Spec::parse("[[meter]]\nname = \"m\"\n").unwrap();
    assert_eq!(spec.meter[0].superior, "prime");
    assert_eq!(spec.meter[0].time, None);
    assert!(Spec::parse("[[domain]]\nname = \"x\"\nprogram = \"p\"\nstak_pages = 1\n").is_err());
    assert!(
        Spec::parse("[[domain]]\nname = \"x\"\nprogram = \"p\"\nstate = \"asleep\"\n").is_err()
    );
    assert!(Spec::parse("[[domain]]\nname = \"x\"\n").is_err());
    assert!(Spec::parse("[[meter]]\nname = \"m\"\ncolor = 1\n").is_err());
}

#[test]
fn shorthand() {
    let spec = Spec::from_programs(&["a".into(), "b".into(), "a".into()]);
    let names: Vec<_> = spec.domain.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "a.2"]);
    assert_eq!(spec.domain[2].program, "a");
    assert_eq!(spec.domain[0].keys, ["console", "sleep", "discrim"]);
    let mut p = HashMap::new();
    p.insert("a".to_string(), program(&[1], &[], 0));
    p.insert("b".to_string(), program(&[2], &[], 0));
    let built = build(&spec, |n: &str| Ok(p[n].clone())).unwrap();
    let image = Image::parse(&built.image).unwrap();
    assert_eq!(image.run().len(), 3);
    for (i, d) in built.domains.iter().enumerate() {
        let annex = image.node(d.annex).unwrap().keys;
        assert_eq!(annex[Reg::Rdi as usize], Key::number(i as u64, 0));
        let g = image.node(d.general).unwrap().keys;
        assert_eq!(g[1], Key::service(KeyType::Console));
        assert_eq!(g[2], Key::service(KeyType::Sleep));
        assert_eq!(g[3], Key::service(KeyType::Discrim));
    }
    // No domains at all: an image with only the prime meter.
    let built = build(&Spec::default(), |_: &str| unreachable!()).unwrap();
    let image = Image::parse(&built.image).unwrap();
    assert_eq!((image.node_count(), image.page_count()), (1, 0));
}

fn build_err(spec: &str) -> String {
    let spec = Spec::parse(spec).unwrap();
    format!("{:#}", build(&spec, loader()).unwrap_err())
}

fn one(keys: &str) -> String {
    format!("[[domain]]\nname = \"d\"\nprogram = \"server\"\nkeys = [{keys}]\n")
}

#[test]
fn errors() {
    let cases = [
        (one("\"start:nobody\""), "domain \"d\" key slot 1 (\"start:nobody\"): unknown domain \"nobody\""),
        (one("\"console\", \"number:12x\""), "key slot 2 (\"number:12x\"): bad number"),
        (one("\"number:18446744073709551616\""), "bad number"),
        (one("\"start:d:256\""), "does not fit a byte"),
        (one("\"bogus\""), "unknown key spec \"bogus\""),
        (one("\"meter:nope\""), "unknown meter \"nope\""),
        (one("\"node:d:brain\""), "unknown node part"),
        (one("\"range:disks:3\""), "unknown range space"),
        (one("\"range:pages:0\""), "range of 0 objects"),
        (one("\"supply:17\""), "supply of 17 pages"),
        (one("\"space:\""), "missing name"),
        (one(&vec!["\"void\""; 16].join(",")), "domain \"d\" has 16 keys (at most 15)"),
        (
            format!("{}{}", one(""), one("")),
            "duplicate domain name \"d\"",
        ),
        (
            "[[domain]]\nname = \"a:b\"\nprogram = \"server\"\n".into(),
            "bad domain name",
        ),
        (
            "[[domain]]\nname = \"abcdefghijklmnopqrstuvwx\"\nprogram = \"server\"\n".into(),
            "bad domain name",
        ),
        (
            "[[meter]]\nname = \"prime\"\n".into(),
            "duplicate meter name \"prime\"",
        ),
        (
            "[[meter]]\nname = \"m\"\n[[meter]]\nname = \"m\"\n".into(),
            "duplicate meter name",
        ),
        (
            "[[meter]]\nname = \"x\"\nsuperior = \"y\"\n[[meter]]\nname = \"y\"\nsuperior = \"x\"\n".into(),
            "meter \"x\": its chain of superior meters is a cycle",
        ),
        (
            "[[meter]]\nname = \"x\"\nsuperior = \"z\"\n".into(),
            "meter \"x\": superior: unknown meter \"z\"",
        ),
        (
            "[[meter]]\nname = \"x\"\nkeeper = \"ghost:1\"\n".into(),
            "meter \"x\": keeper \"ghost:1\": unknown domain \"ghost\"",
        ),
        (
            "[[domain]]\nname = \"d\"\nprogram = \"server\"\nmeter = \"q\"\n".into(),
            "domain \"d\": meter: unknown meter \"q\"",
        ),
        (
            "[[domain]]\nname = \"d\"\nprogram = \"server\"\nkeeper = \"d:x\"\n".into(),
            "domain \"d\": keeper \"d:x\": bad number",
        ),
        (
            "[[domain]]\nname = \"d\"\nprogram = \"server\"\nsegment_keeper = \"e\"\n".into(),
            "domain \"d\": segment_keeper \"e\": unknown domain \"e\"",
        ),
        (
            "[[domain]]\nname = \"d\"\nprogram = \"missing\"\n".into(),
            "domain \"d\": no program missing",
        ),
        (
            "[[domain]]\nname = \"d\"\nprogram = \"server\"\nstack_pages = 257\n".into(),
            "stack_pages must be at most 256",
        ),
    ];
    for (spec, want) in cases {
        let got = build_err(&spec);
        assert!(
            got.contains(want),
            "spec:\n{spec}\nwant: {want}\ngot: {got}"
        );
    }
}

#[test]
fn bad_programs() {
    let spec = Spec::parse("[[domain]]\nname = \"d\"\nprogram = \"p\"\n").unwrap();
    let err = build(&spec, |_: &str| Ok(b"not an elf".to_vec())).unwrap_err();
    assert!(format!("{err:#}").contains("not a valid user ELF: Malformed"));
    // A data segment where the heap goes collides with the heap pages.
    let elf = fixture::elf(
        TEXT_ADDR,
        &[
            fixture::Seg {
                vaddr: TEXT_ADDR,
                data: vec![0x90],
                mem_len: 1,
                write: false,
                exec: true,
            },
            fixture::Seg {
                vaddr: HEAP_START,
                data: vec![1],
                mem_len: 1,
                write: true,
                exec: false,
            },
        ],
    );
    let spec = Spec::parse("[[domain]]\nname = \"d\"\nprogram = \"p\"\nheap_pages = 1\n").unwrap();
    let err = build(&spec, |_: &str| Ok(elf.clone())).unwrap_err();
    assert!(
        format!("{err:#}").contains("heap page at 0x100000000000 overlaps"),
        "{err:#}"
    );
}

#[test]
fn minimal_tree_shapes() {
    // One page, no stack: the nodes between the root and the page.
    // Page 0x400 (0x400000): root slot 0 holds a size-3 node (16^3 pages
    // cover offset 0x400) whose slot 4 holds the page key directly.
    // Page 1: a size-1 node. Page 0x7_ffff_ff00: sizes 8, 7, 6, 5, 4, 3.
    let cases: [(u64, usize); 3] = [(TEXT_ADDR, 1), (0x1000, 1), (0x7fff_fff0_0000, 6)];
    for (addr, want) in cases {
        let elf = fixture::elf(
            addr,
            &[fixture::Seg {
                vaddr: addr,
                data: vec![0xc3],
                mem_len: 1,
                write: false,
                exec: true,
            }],
        );
        let spec =
            Spec::parse("[[domain]]\nname = \"d\"\nprogram = \"p\"\nstack_pages = 0\n").unwrap();
        let built = build(&spec, |_: &str| Ok(elf.clone())).unwrap();
        let image = Image::parse(&built.image).unwrap();
        let d = &built.domains[0];
        let (k, ro) = walk(&image, d.space_key, addr).unwrap();
        assert!(ro && image.page(k.oid()).unwrap().data[0] == 0xc3);
        let (_, nodes) = check_minimal(&image, d.space_key);
        assert_eq!(nodes - 1, d.segment_nodes);
        assert_eq!(d.segment_nodes, want, "page at {addr:#x}");
    }
}

#[test]
fn load_dir_reads_files() {
    let dir = std::env::temp_dir().join(format!("stet-mkimage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("p"), program(&[0x90], &[], 0)).unwrap();
    let spec = Spec::parse("[[domain]]\nname = \"d\"\nprogram = \"p\"\n").unwrap();
    assert!(build(&spec, load_dir(&dir)).is_ok());
    let spec = Spec::parse("[[domain]]\nname = \"d\"\nprogram = \"q\"\n").unwrap();
    let err = format!("{:#}", build(&spec, load_dir(&dir)).unwrap_err());
    assert!(err.contains("reading program"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn heap_page_keys() {
    let spec = Spec::parse(
        "[[domain]]\nname = \"a\"\nprogram = \"server\"\nheap_pages = 3\n\
         keys = [\"heap-page:a:0\", \"heap-page:b:1\", \"heap-page:a:2\"]\n\
         [[domain]]\nname = \"b\"\nprogram = \"client\"\nheap_pages = 2\n",
    )
    .unwrap();
    let built = build(&spec, loader()).unwrap();
    let image = Image::parse(&built.image).unwrap();
    let (a, b) = (&built.domains[0], &built.domains[1]);
    let g = image.node(a.general).unwrap().keys;
    // Exactly the key the owner's space holds for that page: read-write,
    // version 0 (a zero page, not stored).
    for (slot, dom, i) in [(1, a, 0), (2, b, 1), (3, a, 2)] {
        let (k, ro) = walk(&image, dom.space_key, HEAP_START + i * PAGE).unwrap();
        assert!(!ro);
        assert_eq!(g[slot], k, "slot {slot}");
        assert_eq!((g[slot].key_type(), g[slot].version()), (KeyType::Page, 0));
        assert!(!g[slot].is_ro() && image.page(g[slot].oid()).is_none());
    }
    assert_ne!(g[1], g[3]);
    assert_eq!(g[3].oid(), g[1].oid() + 2);

    let cases = [
        (
            "\"heap-page:d:0\"",
            "domain \"d\" key slot 1 (\"heap-page:d:0\"): domain \"d\" has no heap page 0 (heap_pages = 0)",
        ),
        ("\"heap-page:nobody:0\"", "unknown domain \"nobody\""),
        ("\"heap-page:d:x\"", "bad number \"x\""),
        ("\"heap-page:d\"", "unknown key spec \"heap-page:d\""),
    ];
    for (keys, want) in cases {
        let got = build_err(&one(keys));
        assert!(got.contains(want), "want: {want}\ngot: {got}");
    }
    let spec = format!("{}heap_pages = 2\n", one("\"heap-page:d:2\""));
    let got = build_err(&spec);
    assert!(
        got.contains("domain \"d\" has no heap page 2 (heap_pages = 2)"),
        "{got}"
    );
}

#[test]
fn ioports_and_irq_keys() {
    let spec = Spec::parse(
        "[[domain]]\nname = \"a\"\nprogram = \"server\"\nioports = \"ioports:0x3f8:8\"\n\
         keys = [\"ioports:0x3f8:8\", \"irq:4\", \"ioports:0:65536\", \"irq:15\", \"ioports:0xffff:1\"]\n\
         [[domain]]\nname = \"b\"\nprogram = \"client\"\n",
    )
    .unwrap();
    let built = build(&spec, loader()).unwrap();
    let image = Image::parse(&built.image).unwrap();
    let (a, b) = (&built.domains[0], &built.domains[1]);
    let g = image.node(a.general).unwrap().keys;
    assert_eq!(g[1], Key::ioports(0x3f8, 8).unwrap());
    assert_eq!(g[1].words(), (17 | 8 << 32, 0x3f8));
    assert_eq!(g[2], Key::irq(4).unwrap());
    assert_eq!(g[3].ioports_parts(), Some((0, 65536)));
    assert_eq!(g[4].irq_line(), Some(15));
    assert_eq!(g[5].ioports_parts(), Some((0xffff, 1)));
    // The ioports field fills root slot 12; by default it is void.
    assert_eq!(
        image.node(a.root).unwrap().keys[root::IOPORTS],
        Key::ioports(0x3f8, 8).unwrap()
    );
    assert!(image.node(b.root).unwrap().keys[root::IOPORTS].is_void());

    let cases = [
        ("\"ioports:0x3f8:0\"", "need 1 or more ports"),
        ("\"ioports:0xffff:2\"", "need 1 or more ports"),
        ("\"ioports:0x10000:1\"", "need 1 or more ports"),
        ("\"ioports:0x3f8\"", "unknown key spec \"ioports:0x3f8\""),
        ("\"ioports:x:1\"", "bad number \"x\""),
        ("\"irq:16\"", "irq 16: ISA lines are 0 to 15"),
        ("\"irq\"", "unknown key spec \"irq\""),
        ("\"irq:four\"", "bad number"),
    ];
    for (keys, want) in cases {
        let got = build_err(&one(keys));
        assert!(got.contains(want), "want: {want}\ngot: {got}");
    }
    for (field, want) in [
        (
            "irq:4",
            "ioports \"irq:4\": not an ioports:<base>:<count> key",
        ),
        ("ioports:1:0", "ioports \"ioports:1:0\": ports 0x1+0"),
        ("bogus", "ioports \"bogus\": unknown key spec"),
    ] {
        let spec = format!("{}ioports = \"{field}\"\n", one(""));
        let got = build_err(&spec);
        assert!(got.contains(want), "want: {want}\ngot: {got}");
        assert!(got.contains("domain \"d\""), "{got}");
    }
}

#[test]
fn big_sparse_heap() {
    // 256 MiB of heap: 65536 zero pages, none stored; only the segment
    // nodes over them are (4096 + 256 + 16 + 1 under root slot 1).
    let spec = Spec::parse(
        "[[domain]]\nname = \"d\"\nprogram = \"server\"\nstack_pages = 0\nheap_pages = 65536\n",
    )
    .unwrap();
    let built = build(&spec, loader()).unwrap();
    let image = Image::parse(&built.image).unwrap();
    let d = &built.domains[0];
    assert_eq!(d.zero_pages, 65536);
    assert_eq!(d.stored_pages, 1);
    // The text page's chain below root slot 0: one size-3 node (see
    // minimal_tree_shapes).
    assert_eq!(d.segment_nodes, 4369 + 1);
    assert_eq!(image.page_count(), 2); // the text page and the FPU page
    for i in [0, 1, 4095, 4096, 65535] {
        let (k, ro) = walk(&image, d.space_key, HEAP_START + i * PAGE).unwrap();
        assert!(!ro && k.version() == 0 && image.page(k.oid()).is_none());
    }
    assert!(walk(&image, d.space_key, HEAP_START + 65536 * PAGE).is_none());
    let (_, nodes) = check_minimal(&image, d.space_key);
    assert_eq!(nodes - 1, d.segment_nodes);

    let too_big = format!(
        "[[domain]]\nname = \"d\"\nprogram = \"server\"\nheap_pages = {}\n",
        MAX_HEAP_PAGES + 1
    );
    assert!(build_err(&too_big).contains("heap_pages at most 262144"));
}

proptest::proptest! {
    /// Any set of pages: the tree finds exactly those pages, and is minimal.
    #[test]
    fn trees_hold_exactly_their_pages(
        pages in proptest::collection::btree_set(
            proptest::prop_oneof![
                0u64..1 << 35,
                0u64..4096,
                (1u64 << 35) - 4096..1 << 35,
                0x7_ffff_ff00u64..0x7_ffff_fff0,
            ],
            1..40,
        ),
        probes in proptest::collection::vec(0u64..1 << 35, 0..40),
    ) {
        let mut objs = Objects { b: stet_bigbang::Builder::new(), next_node: 0, next_page: 0, forwarders: Default::default(), programs: Default::default(), files: Default::default() };
        let keyed: Vec<(u64, Key)> = pages
            .iter()
            .enumerate()
            .map(|(i, &p)| (p, Key::page(i as u64, 1, false)))
            .collect();
        let root = objs.node();
        let mut nodes = 0;
        let slots = space::fill(&mut objs, ROOT_LSS, 0, &keyed, &mut nodes);
        objs.b.node(root, VERSION, slots);
        let bytes = objs.b.build().unwrap();
        let image = Image::parse(&bytes).unwrap();
        let space = Key::segment(root, VERSION, ROOT_LSS, 0);
        for &(p, k) in &keyed {
            proptest::prop_assert_eq!(walk(&image, space, p * PAGE), Some((k, false)));
        }
        for p in probes.iter().copied().chain(pages.iter().map(|p| p ^ 1)) {
            let want = keyed.iter().find(|&&(q, _)| q == p).map(|&(_, k)| (k, false));
            proptest::prop_assert_eq!(walk(&image, space, p * PAGE), want);
        }
        let (highest, n) = check_minimal(&image, space);
        proptest::prop_assert_eq!(highest, *pages.last().unwrap());
        proptest::prop_assert_eq!(n - 1, nodes);
    }
}

#[test]
fn summary_accounts_for_every_object() {
    let mut built = Fx::new().built;
    assert_eq!(
        built.summary(),
        "big bang image: 45320 bytes, 45 nodes and 8 pages stored, 1 running; \
         object_nodes 48 object_pages 60 (first free node 48, page 60)\n\
         meter prime: node 0\n\
         meter a: node 1\n\
         meter b: node 2\n\
         domain client (client): root node 3, general 4, annex 5, space 6 (+11 segment nodes), \
         fpu page 2; entry 0x400000, 3 pages stored, 21 zero pages; runs\n\
         domain server (server): root node 7, general 8, annex 9, space 10 (+9 segment nodes), \
         fpu page 3; entry 0x400000, 1 pages stored, 4 zero pages; does not run\n\
         domain idle (server): root node 11, general 12, annex 13, space 14 (+9 segment nodes), \
         fpu page 4; entry 0x400000, 1 pages stored, 16 zero pages; does not run\n"
    );
    // An image that does not parse says so instead of its counts.
    built.image.truncate(16);
    let first = built.summary().lines().next().unwrap().to_string();
    assert_eq!(
        first,
        "big bang image: INVALID: shorter than the 80-byte header"
    );
}

#[test]
fn forwarder_specs_share_one_node_per_target_and_word() {
    let spec = Spec::parse(
        r#"
[[domain]]
name = "bank"
program = "server"
keys = ["forwarder:bank:0", "forwarder:bank:7"]

[[domain]]
name = "user"
program = "client"
keys = ["forwarder:bank:0"]
"#,
    )
    .unwrap();
    let built = build(&spec, loader()).unwrap();
    let image = Image::parse(&built.image).unwrap();
    let dom = |n: &str| built.domains.iter().find(|d| d.name == n).unwrap();
    let bank = image.node(dom("bank").general).unwrap().keys;
    let user = image.node(dom("user").general).unwrap().keys;
    assert_eq!(bank[1].key_type(), KeyType::Forwarder);
    assert_eq!(bank[1], user[1], "the same (domain, word) is one forwarder");
    assert_ne!(bank[1].oid(), bank[2].oid());
    for (key, word) in [(bank[1], 0), (bank[2], 7)] {
        let node = image.node(key.oid()).unwrap();
        assert_eq!(node.version, key.version());
        assert_eq!(node.keys[0], Key::start(dom("bank").root, VERSION, 0));
        assert_eq!(node.keys[1], Key::number(word, 0));
    }
    let err = Spec::parse(
        r#"
[[domain]]
name = "x"
program = "server"
keys = ["forwarder:x:4294967296"]
"#,
    )
    .map_err(|e| e.to_string())
    .and_then(|s| build(&s, loader()).map(|_| ()).map_err(|e| e.to_string()))
    .unwrap_err();
    assert!(err.contains("does not fit 32 bits"), "{err}");
}

#[test]
fn program_specs_make_one_shared_read_only_template_per_program() {
    let spec = Spec::parse(
        r#"
[[domain]]
name = "a"
program = "server"
keys = ["program:client", "program:server"]

[[domain]]
name = "b"
program = "server"
keys = ["program:client"]
"#,
    )
    .unwrap();
    let built = build(&spec, loader()).unwrap();
    let image = Image::parse(&built.image).unwrap();
    let dom = |n: &str| built.domains.iter().find(|d| d.name == n).unwrap();
    let a = image.node(dom("a").general).unwrap().keys;
    let b = image.node(dom("b").general).unwrap().keys;
    assert_eq!(a[1], b[1], "one template per program");
    assert_ne!(a[1].oid(), a[2].oid());
    assert_eq!(a[1].key_type(), KeyType::Node);
    assert_eq!(a[1].rights(), rights::RO | rights::WEAK, "a sense key");

    let node = image.node(a[1].oid()).unwrap();
    assert_eq!(node.version, a[1].version());
    let space = node.keys[0];
    assert_eq!(space.key_type(), KeyType::Segment);
    assert_eq!((space.lss(), space.rights()), (ROOT_LSS, rights::RO));
    assert_eq!(node.keys[1], Key::number(TEXT_ADDR, 0), "entry");
    // Text: one page, read-only; data: 5000 bytes and 3 bss pages = 5
    // pages, writable.
    assert_eq!(node.keys[2], Key::number(TEXT_ADDR, 1 << 1));
    assert_eq!(node.keys[3], Key::number(DATA_ADDR, 5 << 1 | 1));
    assert!(node.keys[4..].iter().all(|k| k.is_void()));

    // Every page is under a read-only page key, with the program's bytes.
    let (k, _) = walk(&image, space, TEXT_ADDR).unwrap();
    assert!(k.is_ro());
    assert_eq!(&image.page(k.oid()).unwrap().data[..100], &text()[..]);
    let (k, _) = walk(&image, space, DATA_ADDR).unwrap();
    assert!(k.is_ro(), "a writable segment's template page is read-only");
    assert_eq!(&image.page(k.oid()).unwrap().data[..], &data()[..4096]);
    for i in 2..5 {
        let (k, _) = walk(&image, space, DATA_ADDR + i * PAGE).unwrap();
        assert!(k.is_ro() && k.version() == 0 && image.page(k.oid()).is_none());
    }
    assert!(walk(&image, space, DATA_ADDR + 5 * PAGE).is_none());
    assert!(walk(&image, space, STACK_TOP - PAGE).is_none(), "no stack");
    // The tree is the smallest, and the domains' own pages are not the
    // template's.
    let (_, nodes) = check_minimal(&image, space);
    assert_eq!(
        nodes, 3,
        "the root, a size-3 node, a size-1 node for the data"
    );
    let own = walk(&image, dom("a").space_key, TEXT_ADDR).unwrap().0;
    assert_ne!(own.oid(), walk(&image, space, TEXT_ADDR).unwrap().0.oid());

    let server = image.node(a[2].oid()).unwrap();
    assert_eq!(server.keys[2], Key::number(TEXT_ADDR, 1 << 1));
    assert!(server.keys[3].is_void());

    let err = build_err(&one("\"program:nosuch\""));
    assert!(
        err.contains("domain \"d\" key slot 1 (\"program:nosuch\"): no program nosuch"),
        "{err}"
    );
    assert!(build_err(&one("\"program:\"")).contains("missing name"));
}

#[test]
fn programs_spec_makes_a_node_of_the_same_templates() {
    let spec = Spec::parse(
        r#"
[[domain]]
name = "a"
program = "server"
keys = ["programs:client:server", "program:server"]
"#,
    )
    .unwrap();
    let built = build(&spec, loader()).unwrap();
    let image = Image::parse(&built.image).unwrap();
    let a = image.node(built.domains[0].general).unwrap().keys;
    assert_eq!((a[1].key_type(), a[1].rights()), (KeyType::Node, 0));
    let node = image.node(a[1].oid()).unwrap();
    assert_eq!(node.keys[1], a[2], "the same template as program:server");
    assert_eq!(node.keys[0].rights(), rights::RO | rights::WEAK);
    assert_ne!(node.keys[0].oid(), node.keys[1].oid());
    assert!(node.keys[2..].iter().all(|k| k.is_void()));

    assert!(build_err(&one("\"programs\"")).contains("1 to 16 programs"));
    assert!(build_err(&one("\"programs:client:nosuch\"")).contains("no program nosuch"));
}

#[test]
fn file_and_text_specs() {
    let spec = Spec::parse(
        r#"
[[domain]]
name = "a"
program = "server"
keys = ["file:client", "text:/bin/x a:b", "file:client"]
"#,
    )
    .unwrap();
    let built = build(&spec, loader()).unwrap();
    let image = Image::parse(&built.image).unwrap();
    let g = image.node(built.domains[0].general).unwrap().keys;
    assert_eq!(g[1], g[3], "one node per file");
    assert_eq!(
        (g[1].key_type(), g[1].rights()),
        (KeyType::Node, rights::RO | rights::WEAK)
    );
    let f = image.node(g[1].oid()).unwrap().keys;
    let bytes = programs()["client"].clone();
    assert_eq!(f[1], Key::number(bytes.len() as u64, 0));
    assert_eq!(f[0].key_type(), KeyType::Segment);
    assert_eq!(f[0].rights(), rights::RO);
    // Every page of the file reads back through the tree.
    for (i, chunk) in bytes.chunks(4096).enumerate() {
        let (page, _) = walk(&image, f[0], i as u64 * PAGE).unwrap();
        assert_eq!(page.rights(), rights::RO);
        let data = image.page(page.oid()).unwrap().data;
        assert_eq!(&data[..chunk.len()], chunk);
    }
    // Text: a read-only page with the bytes, colons kept.
    assert_eq!(
        (g[2].key_type(), g[2].rights()),
        (KeyType::Page, rights::RO)
    );
    let t = image.page(g[2].oid()).unwrap().data;
    assert_eq!(&t[..16], b"/bin/x a:b\0\0\0\0\0\0");
    assert!(build_err(&one("\"file:nosuch\"")).contains("no program nosuch"));
}
