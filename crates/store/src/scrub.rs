//! The scrub: a slow, endless pass over the homes that reads both copies of
//! every node block and version block, and every page home that was
//! written, checks them, reports damage, and repairs a damaged copy from
//! the good one — so damage to a second copy is found while the first
//! still serves, not when it too fails.
//!
//! The kernel does the I/O a step at a time (a bounded amount per timer
//! tick) and only while no migration runs: homes are then stable, and the
//! two copies of every record must be equal (each migration writes both,
//! the install writes both). A copy that is not valid while the other is
//! valid is therefore damaged, and the valid one is the truth — what
//! [`crate::node::pick`] and [`crate::versions::pick`] would read. Nothing
//! is repaired from a copy that is not valid: two damaged copies, or a
//! damaged one beside a blank one, are reported and left for the reads to
//! refuse.
//!
//! The order of a pass: node blocks 0.., then version blocks 0.., each
//! followed by the pages whose entries it holds (those written home; a
//! page never written has nothing to check). [`Cursor`] keeps the place.

use crate::geometry::{Geometry, NODES_PER_BLOCK, NODE_RECORD, VERSIONS_PER_BLOCK};
use crate::node::{self, Record};
use crate::versions::{self, Kind};

/// What the scrub does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Read both copies of node block `k` and judge them ([`judge_nodes`]).
    Nodes(u64),
    /// Read both copies of version block `k` and judge them
    /// ([`judge_versions`]); its valid copy then serves the pages' checks.
    Versions(u64),
    /// Read the home of page `oid` (entry `index` of version block `block`)
    /// and check it against its entry ([`crate::versions::Entry::judge`]).
    Page {
        /// The version block.
        block: u64,
        /// The entry in it.
        index: usize,
        /// The page.
        oid: u64,
    },
}

/// Where a pass is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cursor {
    step: Step,
    passes: u64,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor::new()
    }
}

impl Cursor {
    /// The start of a pass.
    pub const fn new() -> Cursor {
        Cursor {
            step: Step::Nodes(0),
            passes: 0,
        }
    }

    /// The step to do now.
    pub fn step(&self) -> Step {
        self.step
    }

    /// Passes completed.
    pub fn passes(&self) -> u64 {
        self.passes
    }

    /// Moves past the current step on a disk of geometry `g`. After a
    /// version block or one of its pages, `written(i)` says whether entry
    /// `i` of that block records a page written home (the block's valid
    /// copy, as read by the step; `false` for every entry when it has
    /// none).
    pub fn advance(&mut self, g: &Geometry, written: impl Fn(usize) -> bool) {
        self.step = match self.step {
            Step::Nodes(k) if k + 1 < g.node_blocks => Step::Nodes(k + 1),
            Step::Nodes(_) => self.first_version_block(g),
            Step::Versions(k) => self.page_from(g, k, 0, &written),
            Step::Page { block, index, .. } => self.page_from(g, block, index + 1, &written),
        };
    }

    /// Goes back to the start of the current version block's pages (its
    /// entries changed under the scrub: a migration ran in between).
    pub fn restart_block(&mut self) {
        if let Step::Page { block, .. } = self.step {
            self.step = Step::Versions(block);
        }
    }

    fn first_version_block(&mut self, g: &Geometry) -> Step {
        if g.version_blocks > 0 {
            Step::Versions(0)
        } else {
            self.wrap()
        }
    }

    fn wrap(&mut self) -> Step {
        self.passes += 1;
        Step::Nodes(0)
    }

    /// The first written page of version block `k` from entry `from` on,
    /// else the next version block (or the next pass).
    fn page_from(
        &mut self,
        g: &Geometry,
        k: u64,
        from: usize,
        written: impl Fn(usize) -> bool,
    ) -> Step {
        let first = k * VERSIONS_PER_BLOCK;
        let n = g.pages.saturating_sub(first).min(VERSIONS_PER_BLOCK) as usize;
        if let Some(index) = (from..n).find(|&i| written(i)) {
            return Step::Page {
                block: k,
                index,
                oid: first + index as u64,
            };
        }
        if k + 1 < g.version_blocks {
            Step::Versions(k + 1)
        } else {
            self.wrap()
        }
    }
}

/// What the two copies of a node block say, record by record (bit `r` of
/// a mask is record `r` of the block).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeVerdict {
    /// Records of copy 0 to rewrite from copy 1 (not valid there, valid in
    /// copy 1).
    pub bad0: u8,
    /// Records of copy 1 to rewrite from copy 0.
    pub bad1: u8,
    /// Records with no valid copy that are not blank in both: reported,
    /// not repaired.
    pub lost: u8,
}

impl NodeVerdict {
    /// Whether everything is as it should be.
    pub fn clean(&self) -> bool {
        self.bad0 | self.bad1 | self.lost == 0
    }
}

/// Judges the two copies of node block `k` (each one block) of a disk of
/// geometry `g`. Two valid copies that differ are left alone (both are
/// valid records of the node; the reads prefer copy 0).
pub fn judge_nodes(g: &Geometry, k: u64, copy0: &[u8], copy1: &[u8]) -> NodeVerdict {
    let mut v = NodeVerdict::default();
    for r in 0..NODES_PER_BLOCK as usize {
        let oid = k * NODES_PER_BLOCK + r as u64;
        if oid >= g.nodes {
            break;
        }
        let at = r * NODE_RECORD;
        let a = node::decode(&copy0[at..], oid);
        let b = node::decode(&copy1[at..], oid);
        let bit = 1u8 << r;
        match (a, b) {
            (Record::Valid(_), Record::Valid(_)) | (Record::Blank, Record::Blank) => {}
            (Record::Valid(_), _) => v.bad1 |= bit,
            (_, Record::Valid(_)) => v.bad0 |= bit,
            _ => v.lost |= bit,
        }
    }
    v
}

/// The byte ranges of a node block holding the records of `mask`: what
/// a repair copies from the good copy into the other.
pub fn records(mask: u8) -> impl Iterator<Item = core::ops::Range<usize>> {
    (0..NODES_PER_BLOCK as usize)
        .filter(move |r| mask & (1 << r) != 0)
        .map(|r| r * NODE_RECORD..(r + 1) * NODE_RECORD)
}

/// Copies the records of `mask` from the good copy `from` into the block
/// `into` (the other copy, to be written back to its place).
pub fn repair_nodes(into: &mut [u8], from: &[u8], mask: u8) {
    for at in records(mask) {
        into[at.clone()].copy_from_slice(&from[at]);
    }
}

/// What the two copies of a version block say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionVerdict {
    /// Both valid, or both blank (never written).
    Clean,
    /// Copy `bad` is not valid and the other is: write the other over it.
    Repair {
        /// The copy to rewrite.
        bad: u8,
    },
    /// No valid copy, and not both blank: reported, not repaired (reads
    /// follow [`crate::versions::pick`]).
    Lost,
}

/// Judges the two copies of a version block.
pub fn judge_versions(copy0: &[u8], copy1: &[u8]) -> VersionVerdict {
    match (versions::classify(copy0), versions::classify(copy1)) {
        (Kind::Valid, Kind::Valid) | (Kind::Blank, Kind::Blank) => VersionVerdict::Clean,
        (Kind::Valid, _) => VersionVerdict::Repair { bad: 1 },
        (_, Kind::Valid) => VersionVerdict::Repair { bad: 0 },
        _ => VersionVerdict::Lost,
    }
}

/// Whether entry `index` of a version block records a page written home.
/// The block must be one already judged valid (or blank: then no entry
/// does); nothing is checked here, so a pass over a block's entries costs
/// no checksum.
pub fn written(block: &[u8], index: usize) -> bool {
    index < VERSIONS_PER_BLOCK as usize
        && versions::entry_at(block, index) != versions::Entry::NEVER
}

/// The blocks one step reads: node and version steps read both copies, a
/// page step its home (for the counters).
pub fn blocks_read(s: Step) -> u64 {
    match s {
        Step::Nodes(_) | Step::Versions(_) => 2,
        Step::Page { .. } => 1,
    }
}

/// Where step `s` reads on a disk of geometry `g`: the blocks of copy 0
/// and copy 1 (a page step: its home, twice).
pub fn places(g: &Geometry, s: Step) -> Option<(u64, u64)> {
    match s {
        Step::Nodes(k) => {
            let a = g.node_home(k * NODES_PER_BLOCK, 0)?.block;
            let b = g.node_home(k * NODES_PER_BLOCK, 1)?.block;
            Some((a, b))
        }
        Step::Versions(k) => Some((g.version_block(k, 0)?, g.version_block(k, 1)?)),
        Step::Page { oid, .. } => {
            let h = g.page_home(oid)?;
            Some((h, h))
        }
    }
}
