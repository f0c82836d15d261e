//! The scrub's plan: its cursor and its judgments of a pair of copies.

use crate::geometry::{Geometry, NODES_PER_BLOCK, NODE_RECORD, VERSIONS_PER_BLOCK};
use crate::node::{self, NodeImage};
use crate::scrub::{self, Cursor, NodeVerdict, Step, VersionVerdict};
use crate::versions::{self, Entry};
use crate::BLOCK;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::vec::Vec;

/// Every step of one pass, with `written` pages.
fn pass(g: &Geometry, written: &BTreeSet<u64>) -> Vec<Step> {
    let mut c = Cursor::new();
    let mut out = Vec::new();
    while c.passes() == 0 {
        out.push(c.step());
        let block = match c.step() {
            Step::Versions(k) | Step::Page { block: k, .. } => k,
            Step::Nodes(_) => 0,
        };
        c.advance(g, |i| {
            written.contains(&(block * VERSIONS_PER_BLOCK + i as u64))
        });
        assert!(out.len() < 1 << 20, "a pass ends");
    }
    assert_eq!(c.step(), Step::Nodes(0), "the next pass starts over");
    out
}

proptest! {
    /// A pass visits every node block, then every version block followed
    /// by exactly its written pages, in order, once.
    #[test]
    fn a_pass_visits_everything_once(total in 57u64..3000, pages in proptest::collection::btree_set(0u64..3000, 0..60)) {
        let g = Geometry::for_disk(total).unwrap();
        let written: BTreeSet<u64> = pages.into_iter().filter(|&p| p < g.pages).collect();
        let steps = pass(&g, &written);
        let nodes: Vec<u64> = steps.iter().filter_map(|s| match s { Step::Nodes(k) => Some(*k), _ => None }).collect();
        prop_assert_eq!(nodes, (0..g.node_blocks).collect::<Vec<_>>());
        let mut want = Vec::new();
        for k in 0..g.version_blocks {
            want.push(Step::Versions(k));
            for &p in written.iter().filter(|&&p| p / VERSIONS_PER_BLOCK == k) {
                want.push(Step::Page { block: k, index: (p % VERSIONS_PER_BLOCK) as usize, oid: p });
            }
        }
        prop_assert_eq!(&steps[g.node_blocks as usize..], &want[..]);
        for s in &steps {
            let (a, b) = scrub::places(&g, *s).unwrap();
            prop_assert!(a < g.total && b < g.total);
        }
    }
}

#[test]
fn a_changed_block_is_scrubbed_again_from_its_start() {
    let g = Geometry::for_disk(3000).unwrap();
    let mut c = Cursor::new();
    while !matches!(c.step(), Step::Versions(_)) {
        c.advance(&g, |_| false);
    }
    c.advance(&g, |i| i == 7 || i == 9);
    assert_eq!(
        c.step(),
        Step::Page {
            block: 0,
            index: 7,
            oid: 7
        }
    );
    c.restart_block();
    assert_eq!(c.step(), Step::Versions(0));
    c.restart_block();
    assert_eq!(c.step(), Step::Versions(0), "only a page step goes back");
}

fn node_block(g: &Geometry, k: u64, seed: u32) -> [u8; BLOCK] {
    let mut b = [0u8; BLOCK];
    for r in 0..NODES_PER_BLOCK {
        let oid = k * NODES_PER_BLOCK + r;
        if oid < g.nodes && r != 5 {
            let mut n = NodeImage::zero(oid);
            n.version = seed + r as u32;
            node::encode(&n, &mut b[r as usize * NODE_RECORD..]);
        }
    }
    b
}

#[test]
fn node_pairs_are_judged_record_by_record() {
    let g = Geometry::for_disk(3000).unwrap();
    let good = node_block(&g, 2, 10);
    assert!(scrub::judge_nodes(&g, 2, &good, &good).clean());
    let mut c0 = good;
    c0[NODE_RECORD + 40] ^= 1; // record 1 of copy 0
    let mut c1 = good;
    c1[3 * NODE_RECORD..4 * NODE_RECORD].fill(0); // record 3 of copy 1 zeroed
    c1[5 * NODE_RECORD + 9] = 0x33; // record 5 (blank in copy 0) damaged
    let v = scrub::judge_nodes(&g, 2, &c0, &c1);
    assert_eq!(
        v,
        NodeVerdict {
            bad0: 1 << 1,
            bad1: 1 << 3,
            lost: 1 << 5
        }
    );
    scrub::repair_nodes(&mut c0, &c1, v.bad0);
    scrub::repair_nodes(&mut c1, &good, v.bad1);
    assert_eq!(c0, good);
    let v = scrub::judge_nodes(&g, 2, &c0, &c1);
    assert_eq!(
        v.lost,
        1 << 5,
        "a damaged copy beside a blank one is not repaired"
    );
    assert_eq!(v.bad0 | v.bad1, 0);
    // Two valid copies that differ are both valid: left alone.
    let other = node_block(&g, 2, 99);
    assert!(scrub::judge_nodes(&g, 2, &good, &other).clean());
}

#[test]
fn version_pairs_are_judged_whole() {
    let mut b = [0u8; BLOCK];
    versions::set_entry(&mut b, 3, Entry::of(4, &[1u8; BLOCK]));
    let blank = [0u8; BLOCK];
    let mut bad = b;
    bad[17] ^= 2;
    use VersionVerdict::*;
    assert_eq!(scrub::judge_versions(&b, &b), Clean);
    assert_eq!(scrub::judge_versions(&blank, &blank), Clean);
    assert_eq!(scrub::judge_versions(&b, &bad), Repair { bad: 1 });
    assert_eq!(scrub::judge_versions(&b, &blank), Repair { bad: 1 });
    assert_eq!(scrub::judge_versions(&bad, &b), Repair { bad: 0 });
    assert_eq!(scrub::judge_versions(&bad, &blank), Lost);
    assert_eq!(scrub::judge_versions(&bad, &bad), Lost);
    assert!(scrub::written(&b, 3) && !scrub::written(&b, 4) && !scrub::written(&blank, 3));
    assert!(!scrub::written(&b, VERSIONS_PER_BLOCK as usize));
}
