//! Where everything lives on the disk, decided by the disk's size alone.

use crate::ckpt::Layout;
use crate::journal::Ring;

/// Bytes of one node record (homes and checkpoints alike).
pub const NODE_RECORD: usize = 512;
/// Node records per block.
pub const NODES_PER_BLOCK: u64 = (crate::BLOCK / NODE_RECORD) as u64;
/// Page entries (version and home checksum, 8 bytes each) per block of the
/// version area (the block's last 8 bytes are 4 zero bytes and its
/// CRC-32C).
pub const VERSIONS_PER_BLOCK: u64 = 511;
/// The journal ring's size bounds: 1/64 of the disk, within these.
pub const JOURNAL_MIN: u64 = 16;
/// See [`JOURNAL_MIN`].
pub const JOURNAL_MAX: u64 = 512;

/// A unit of allocation: 16 pages and 8 nodes.
const UNIT_PAGES: u64 = 16;
const UNIT_NODES: u64 = NODES_PER_BLOCK;
/// Most units: a checkpoint counts its objects in 32 bits.
const MAX_UNITS: u64 = u32::MAX as u64 / (UNIT_PAGES + UNIT_NODES);

/// The layout of a disk of `total` blocks. Areas in disk order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Blocks on the disk.
    pub total: u64,
    /// Node slots (objects 0..nodes).
    pub nodes: u64,
    /// First block of node copy 0; copy 1 follows it.
    pub node_area: u64,
    /// Blocks per node copy.
    pub node_blocks: u64,
    /// Page slots (objects 0..pages).
    pub pages: u64,
    /// First block of version copy 0; copy 1 follows it.
    pub version_area: u64,
    /// Blocks per version copy.
    pub version_blocks: u64,
    /// First block of the page area.
    pub page_area: u64,
    /// First block of the journal ring.
    pub journal_start: u64,
    /// Blocks in the journal ring.
    pub journal_blocks: u64,
    /// First block of the checkpoint log.
    pub log_start: u64,
    /// Blocks in the log (to the end of the disk).
    pub log_blocks: u64,
}

/// Why a disk cannot hold a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeometryError {
    /// Fewer blocks than the smallest store.
    TooSmall,
}

/// A place on the disk: a block and a byte offset in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Place {
    /// Block number.
    pub block: u64,
    /// Byte offset within the block.
    pub offset: usize,
}

/// Blocks needed after the roots and the journal by `units` units: node
/// homes (two copies), versions (two copies), page homes, and a log that
/// holds a checkpoint of every object.
fn need(units: u64) -> u64 {
    let (nodes, pages) = (units * UNIT_NODES, units * UNIT_PAGES);
    let node_blocks = nodes.div_ceil(NODES_PER_BLOCK);
    let version_blocks = pages.div_ceil(VERSIONS_PER_BLOCK);
    2 * node_blocks
        + 2 * version_blocks
        + pages
        + Layout::new(nodes as u32, pages as u32).total_blocks()
}

/// The journal ring for a disk of `total` blocks (even: records are two
/// blocks).
fn journal_for(total: u64) -> u64 {
    (total / 64).clamp(JOURNAL_MIN, JOURNAL_MAX) & !1
}

impl Geometry {
    /// The layout for a disk of `total` blocks: half a node per page, a
    /// journal of 1/64 of the disk (16 to 512 blocks), and a log that can
    /// hold a checkpoint of every object, so a checkpoint always fits once
    /// the previous one has migrated home. Extra blocks go to the log.
    pub fn for_disk(total: u64) -> Result<Geometry, GeometryError> {
        let journal_blocks = journal_for(total);
        let avail = total
            .checked_sub(2 + journal_blocks)
            .ok_or(GeometryError::TooSmall)?;
        // A unit costs 35 blocks plus 32/511 of a version block and 24/255
        // of a directory block; rounding costs at most 4 more. Start from a
        // count that surely fits and grow while the next one fits.
        let est = (avail.saturating_sub(4) as u128 * (511 * 255)
            / (35 * 511 * 255 + 32 * 255 + 24 * 511)) as u64;
        let mut units = est.min(MAX_UNITS);
        while units < MAX_UNITS && need(units + 1) <= avail {
            units += 1;
        }
        while units > 0 && need(units) > avail {
            units -= 1;
        }
        if units == 0 {
            return Err(GeometryError::TooSmall);
        }
        let nodes = units * UNIT_NODES;
        let pages = units * UNIT_PAGES;
        let node_blocks = nodes.div_ceil(NODES_PER_BLOCK);
        let version_blocks = pages.div_ceil(VERSIONS_PER_BLOCK);
        let node_area = 2;
        let version_area = node_area + 2 * node_blocks;
        let page_area = version_area + 2 * version_blocks;
        let journal_start = page_area + pages;
        let log_start = journal_start + journal_blocks;
        Ok(Geometry {
            total,
            nodes,
            node_area,
            node_blocks,
            pages,
            version_area,
            version_blocks,
            page_area,
            journal_start,
            journal_blocks,
            log_start,
            log_blocks: total - log_start,
        })
    }

    /// Home of node `oid`, copy 0 or 1 (`None` if out of range).
    pub fn node_home(&self, oid: u64, copy: u8) -> Option<Place> {
        if oid >= self.nodes || copy > 1 {
            return None;
        }
        let base = self.node_area + copy as u64 * self.node_blocks;
        Some(Place {
            block: base + oid / NODES_PER_BLOCK,
            offset: (oid % NODES_PER_BLOCK) as usize * NODE_RECORD,
        })
    }

    /// Where page `oid`'s entry (version and home checksum) lives, copy 0
    /// or 1 (`None` if out of range): two little-endian u32 at `offset`.
    pub fn version_home(&self, page_oid: u64, copy: u8) -> Option<Place> {
        if page_oid >= self.pages || copy > 1 {
            return None;
        }
        let (block, index) = crate::versions::version_block_of(page_oid);
        Some(Place {
            block: self.version_area + copy as u64 * self.version_blocks + block,
            offset: index * crate::versions::ENTRY,
        })
    }

    /// Block `k` of version copy `copy` (`None` if out of range).
    pub fn version_block(&self, k: u64, copy: u8) -> Option<u64> {
        (k < self.version_blocks && copy <= 1)
            .then(|| self.version_area + copy as u64 * self.version_blocks + k)
    }

    /// Home block of page `oid` (`None` if out of range).
    pub fn page_home(&self, oid: u64) -> Option<u64> {
        (oid < self.pages).then(|| self.page_area + oid)
    }

    /// The journal ring.
    pub fn journal_ring(&self) -> Ring {
        Ring {
            start: self.journal_start,
            blocks: self.journal_blocks,
        }
    }

    /// The layout of a checkpoint of every object: the largest there can
    /// be, and it fits in the log.
    pub fn max_checkpoint(&self) -> Layout {
        Layout::new(self.nodes as u32, self.pages as u32)
    }

    /// Whether the areas are disjoint, in order, inside the disk, large
    /// enough for their objects, and the log holds a checkpoint of every
    /// object. Checked on every root read, so it never overflows.
    pub fn is_sane(&self) -> bool {
        let end = |a: u64, n: u64| a.checked_add(n);
        let le = |a: Option<u64>, b: u64| a.is_some_and(|a| a <= b);
        self.nodes > 0
            && self
                .nodes
                .checked_add(self.pages)
                .is_some_and(|n| n <= u32::MAX as u64)
            && self.node_area >= 2
            && self.node_blocks.checked_mul(NODES_PER_BLOCK) >= Some(self.nodes)
            && le(
                self.node_blocks
                    .checked_mul(2)
                    .and_then(|n| end(self.node_area, n)),
                self.version_area,
            )
            && self.version_blocks.checked_mul(VERSIONS_PER_BLOCK) >= Some(self.pages)
            && le(
                self.version_blocks
                    .checked_mul(2)
                    .and_then(|n| end(self.version_area, n)),
                self.page_area,
            )
            && le(end(self.page_area, self.pages), self.journal_start)
            && self.journal_blocks >= 2
            && le(end(self.journal_start, self.journal_blocks), self.log_start)
            && end(self.log_start, self.log_blocks) == Some(self.total)
            && self.log_blocks >= self.max_checkpoint().total_blocks()
    }
}
