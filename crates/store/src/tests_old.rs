//! Unit and property tests of the disk format.

use crate::geometry::{Geometry, GeometryError, NODES_PER_BLOCK};
use crate::log::{Log, LogError};
use crate::root::{block_for, choose, Root, RootError, ROOT_LEN};
use proptest::prelude::*;

fn root(total: u64, generation: u64) -> Root {
    let g = Geometry::for_disk(total).unwrap();
    Root {
        generation,
        geometry: g,
        ckpt_start: g.log_start,
        ckpt_blocks: 3,
        migrated: false,
        journal_start: g.log_start + 3,
    }
}

#[test]
fn small_disks_are_refused() {
    assert_eq!(Geometry::for_disk(10), Err(GeometryError::TooSmall));
    assert!(Geometry::for_disk(2 + 72).is_ok());
}

#[test]
fn a_64_mib_disk() {
    let g = Geometry::for_disk(16384).unwrap();
    assert!(g.is_sane());
    assert_eq!(g.pages, 455 * 16);
    assert_eq!(g.nodes, 455 * 8);
    // The log holds a snapshot of every object.
    assert!(g.log_blocks > g.pages + g.nodes / NODES_PER_BLOCK);
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
    assert_eq!(
        Root::decode(&b, 16385),
        Err(RootError::Geometry),
        "other disk size"
    );
}

#[test]
fn newer_valid_root_wins() {
    let (a, b) = (root(4096, 4).encode(), root(4096, 5).encode());
    assert_eq!(choose(&a, &b, 4096).unwrap().0, 1);
    assert_eq!(choose(&b, &a, 4096).unwrap().0, 0);
    let mut torn = b;
    torn[64..].fill(0);
    assert_eq!(choose(&a, &torn, 4096).unwrap(), (0, root(4096, 4)));
    assert!(choose(&torn, &torn, 4096).is_err());
    assert_ne!(block_for(4), block_for(5));
}

#[test]
fn log_protects_the_committed_checkpoint() {
    let mut l = Log::new(100);
    let a = l.reserve(60).unwrap();
    assert_eq!(l.reserve(1), Err(LogError::Busy));
    l.committed(a).unwrap();
    // Only 40 blocks are outside the protected extent.
    assert_eq!(l.reserve(41), Err(LogError::Full));
    let b = l.reserve(40).unwrap();
    assert_eq!(l.committed(b), Err(LogError::NotMigrated));
    l.migrated();
    l.committed(b).unwrap();
    assert_eq!(l.protected, Some(b));
}

proptest! {
    #[test]
    fn geometry_is_sane_and_homes_are_unique(total in 74u64..5_000_000) {
        let g = Geometry::for_disk(total).unwrap();
        prop_assert!(g.is_sane());
        prop_assert!(g.log_blocks >= g.pages + g.nodes.div_ceil(NODES_PER_BLOCK));
        // First, last and neighbours: inside their areas, copies apart.
        for oid in [0, 1, g.nodes / 2, g.nodes - 1] {
            let a = g.node_home(oid, 0).unwrap();
            let b = g.node_home(oid, 1).unwrap();
            prop_assert!(a.block >= g.node_area && a.block < g.node_area + g.node_blocks);
            prop_assert_eq!(b.block, a.block + g.node_blocks);
            prop_assert_eq!(a.offset, b.offset);
        }
        prop_assert!(g.node_home(g.nodes, 0).is_none());
        prop_assert_eq!(g.page_home(g.pages - 1), Some(g.log_start - 1));
        prop_assert!(g.page_home(g.pages).is_none());
    }

    #[test]
    fn any_single_byte_damage_is_detected(total in 74u64..1_000_000, gen in any::<u64>(), at in 0usize..ROOT_LEN, bit in 0u8..8) {
        let r = root(total, gen);
        let mut b = r.encode();
        b[at] ^= 1 << bit;
        prop_assert!(Root::decode(&b, total).is_err());
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
                prop_assert!(which == 0 || !damage_b);
            }
            Err(_) => prop_assert!(damage_a && damage_b),
        }
    }

    #[test]
    fn reservations_never_overlap_protected_space(ops in proptest::collection::vec((0u8..4, 1u64..60), 1..200)) {
        let size = 128;
        let mut l = Log::new(size);
        for (op, n) in ops {
            match op {
                0 => { let _ = l.reserve(n); }
                1 => { if let Some(e) = l.in_flight { let _ = l.committed(e); } }
                2 => l.migrated(),
                _ => l.abandon(),
            }
            if let (Some(f), Some(p)) = (l.in_flight, l.protected) {
                for b in 0..size {
                    prop_assert!(!(f.contains(b, size) && p.contains(b, size)), "block {} in both", b);
                }
            }
        }
    }
}
