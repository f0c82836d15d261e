//! Where everything lives on the disk.

/// Bytes of one node's home record (keys, identity, version, call count,
/// checksum), padded so that a block holds a whole number of them.
pub const NODE_RECORD: usize = 512;
/// Node records per block.
pub const NODES_PER_BLOCK: u64 = (crate::BLOCK / NODE_RECORD) as u64;

/// The layout of a disk of `total` blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Blocks on the disk.
    pub total: u64,
    /// Node slots (objects 0..nodes).
    pub nodes: u64,
    /// First block of node copy 0; copy 1 follows it.
    pub node_area: u64,
    /// Blocks per node copy area.
    pub node_blocks: u64,
    /// Page slots (objects 0..pages).
    pub pages: u64,
    /// First block of the page area.
    pub page_area: u64,
    /// First block of the checkpoint log.
    pub log_start: u64,
    /// Blocks in the log.
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

impl Geometry {
    /// The layout for a disk of `total` blocks: half a node per page, and a
    /// log that can hold a snapshot of every object (so a checkpoint can
    /// always be reserved once the previous one has migrated home).
    pub fn for_disk(total: u64) -> Result<Geometry, GeometryError> {
        // A unit is 16 pages and 8 nodes: 16 page blocks, 2 node blocks
        // (one per copy), and at most 17 log blocks to snapshot all of it
        // plus its share of checkpoint headers: 36 blocks per unit.
        const MIN: u64 = 2 + 2 * 36;
        if total < MIN {
            return Err(GeometryError::TooSmall);
        }
        let usable = total - 2;
        let units = usable / 36;
        let pages = units * 16;
        let nodes = (units * NODES_PER_BLOCK).max(NODES_PER_BLOCK);
        let node_blocks = nodes.div_ceil(NODES_PER_BLOCK);
        let node_area = 2;
        let page_area = node_area + 2 * node_blocks;
        let log_start = page_area + pages;
        if log_start >= total {
            return Err(GeometryError::TooSmall);
        }
        let log_blocks = total - log_start;
        Ok(Geometry {
            total,
            nodes,
            node_area,
            node_blocks,
            pages,
            page_area,
            log_start,
            log_blocks,
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

    /// Home block of page `oid` (`None` if out of range).
    pub fn page_home(&self, oid: u64) -> Option<u64> {
        (oid < self.pages).then(|| self.page_area + oid)
    }

    /// Whether the areas are disjoint, in order and inside the disk.
    pub fn is_sane(&self) -> bool {
        self.node_area >= 2
            && self.node_blocks.checked_mul(NODES_PER_BLOCK) >= Some(self.nodes)
            && self.node_area + 2 * self.node_blocks <= self.page_area
            && self.page_area.checked_add(self.pages) <= Some(self.log_start)
            && self.log_start.checked_add(self.log_blocks) == Some(self.total)
            && self.log_blocks > 0
    }
}
