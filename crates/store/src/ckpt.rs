//! A checkpoint in the log: one contiguous extent, starting at log block 0
//! (one checkpoint is in flight at a time and the previous one has migrated
//! home before the next writes anything, so the log is not a ring).
//!
//! ```text
//! relative block 0            header
//! 1 .. 1 + dir_blocks          directory: 255 entries of 16 bytes per block
//! then node_blocks             node records, 8 per block (node::encode)
//! then one block per page      the pages' data
//! ```
//!
//! Directory entries name the objects in record order: first every node (in
//! the order of the node records), then every page (in the order of the
//! page blocks). [`Directory`] sorts them into a caller-provided buffer so
//! the kernel can find an object without allocating.

use crate::geometry::{NODES_PER_BLOCK, NODE_RECORD};
use crate::node::{self, NodeImage, Record};
use crate::{get32, get64, put32, put64, seal, sealed, Damaged, BLOCK, FORMAT};
use stet_keys::{Space, MAX_OID};

/// The checkpoint header's magic.
pub const MAGIC: [u8; 8] = *b"STETCKPT";
/// Bytes of the encoded header (the rest of the block is zero).
pub const HEADER_LEN: usize = 44;
/// Bytes of a directory entry.
pub const DIR_ENTRY: usize = 16;
/// Directory entries per block.
pub const DIR_ENTRIES: usize = 255;
/// Bit of a directory entry's first word that marks a node.
pub const NODE_BIT: u64 = 1 << 63;

/// Where everything of a checkpoint of `nodes` nodes and `pages` pages is,
/// relative to its first block. `nodes + pages` must fit in 32 bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Node records.
    pub nodes: u32,
    /// Page blocks.
    pub pages: u32,
    /// Directory blocks.
    pub dir_blocks: u32,
    /// Blocks of node records.
    pub node_blocks: u32,
}

impl Layout {
    /// The layout of a checkpoint of `nodes` nodes and `pages` pages.
    pub fn new(nodes: u32, pages: u32) -> Layout {
        let entries = nodes as u64 + pages as u64;
        Layout {
            nodes,
            pages,
            dir_blocks: entries.div_ceil(DIR_ENTRIES as u64) as u32,
            node_blocks: (nodes as u64).div_ceil(NODES_PER_BLOCK) as u32,
        }
    }

    /// Directory entries (objects).
    pub fn entries(&self) -> u64 {
        self.nodes as u64 + self.pages as u64
    }

    /// Blocks of the whole checkpoint.
    pub fn total_blocks(&self) -> u64 {
        1 + self.dir_blocks as u64 + self.node_blocks as u64 + self.pages as u64
    }

    /// Relative block of directory block `k`.
    pub fn dir_block(&self, k: u32) -> u64 {
        1 + k as u64
    }

    /// Entries in directory block `k` (255 but in the last one).
    pub fn dir_entries_in(&self, k: u32) -> usize {
        let before = k as u64 * DIR_ENTRIES as u64;
        self.entries()
            .saturating_sub(before)
            .min(DIR_ENTRIES as u64) as usize
    }

    /// Relative block and byte offset of node record `i`.
    pub fn node_block(&self, i: u32) -> (u64, usize) {
        (
            1 + self.dir_blocks as u64 + i as u64 / NODES_PER_BLOCK,
            (i as u64 % NODES_PER_BLOCK) as usize * NODE_RECORD,
        )
    }

    /// Relative block of page `j`.
    pub fn page_block(&self, j: u32) -> u64 {
        1 + self.dir_blocks as u64 + self.node_blocks as u64 + j as u64
    }
}

/// A checkpoint's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The checkpoint's number (the root's `ckpt_generation`).
    pub ckpt_generation: u64,
    /// Nodes in it.
    pub nodes: u32,
    /// Pages in it.
    pub pages: u32,
}

impl Header {
    /// Its layout.
    pub fn layout(&self) -> Layout {
        Layout::new(self.nodes, self.pages)
    }
}

/// Encodes a header into `out` (one block: the rest is zeroed).
///
/// ```text
/// 0  magic "STETCKPT"    8  format u32     12 zero u32
/// 16 ckpt_generation u64 24 nodes u32      28 pages u32
/// 32 dir_blocks u32      36 total blocks u32
/// 40 CRC-32C of bytes 0..40
/// ```
pub fn encode_header(h: &Header, out: &mut [u8]) {
    let out = &mut out[..BLOCK];
    out.fill(0);
    let l = h.layout();
    out[0..8].copy_from_slice(&MAGIC);
    put32(out, 8, FORMAT);
    put64(out, 16, h.ckpt_generation);
    put32(out, 24, h.nodes);
    put32(out, 28, h.pages);
    put32(out, 32, l.dir_blocks);
    put32(out, 36, l.total_blocks() as u32);
    seal(out, 40);
}

/// Decodes and checks a header block: magic, CRC-32C, format, and sizes
/// that agree with each other.
pub fn decode_header(block: &[u8]) -> Result<Header, Damaged> {
    if block.len() < HEADER_LEN || block[0..8] != MAGIC || !sealed(block, 40) {
        return Err(Damaged);
    }
    let h = Header {
        ckpt_generation: get64(block, 16),
        nodes: get32(block, 24),
        pages: get32(block, 28),
    };
    let l = h.layout();
    if get32(block, 8) != FORMAT
        || get32(block, 12) != 0
        || h.nodes as u64 + h.pages as u64 > u32::MAX as u64
        || get32(block, 32) != l.dir_blocks
        || get32(block, 36) as u64 != l.total_blocks()
    {
        return Err(Damaged);
    }
    Ok(h)
}

/// One directory entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// Node or page.
    pub space: Space,
    /// The object.
    pub oid: u64,
    /// Its version in this checkpoint.
    pub version: u32,
    /// CRC-32C of the page's 4096 bytes (0 for nodes: their records carry
    /// their own).
    pub crc: u32,
}

impl DirEntry {
    /// An unused entry.
    pub const EMPTY: DirEntry = DirEntry {
        space: Space::Page,
        oid: 0,
        version: 0,
        crc: 0,
    };

    fn key(&self) -> u64 {
        key(self.space, self.oid)
    }
}

fn key(space: Space, oid: u64) -> u64 {
    match space {
        Space::Node => oid | NODE_BIT,
        Space::Page => oid,
    }
}

/// Encodes a directory block of checkpoint `ckpt_generation` holding
/// `entries` (at most 255) into `out` (one block).
///
/// ```text
/// 0 + 16 i   entry i: oid u64 (bit 63: node), version u32, crc u32
/// 4080       ckpt_generation u64
/// 4088       entries used u32 (the rest are zero)
/// 4092       CRC-32C of bytes 0..4092
/// ```
pub fn encode_dir_block(ckpt_generation: u64, entries: &[DirEntry], out: &mut [u8]) {
    assert!(entries.len() <= DIR_ENTRIES);
    let out = &mut out[..BLOCK];
    out.fill(0);
    for (i, e) in entries.iter().enumerate() {
        let at = i * DIR_ENTRY;
        put64(out, at, e.key());
        put32(out, at + 8, e.version);
        put32(out, at + 12, e.crc);
    }
    put64(out, 4080, ckpt_generation);
    put32(out, 4088, entries.len() as u32);
    seal(out, 4092);
}

/// Decodes and checks a directory block that must belong to checkpoint
/// `ckpt_generation` (a stale block from an older checkpoint is refused).
/// Returns the entries and how many are used.
pub fn decode_dir_block(
    ckpt_generation: u64,
    block: &[u8],
) -> Result<([DirEntry; DIR_ENTRIES], usize), Damaged> {
    if block.len() < BLOCK || !sealed(block, 4092) || get64(block, 4080) != ckpt_generation {
        return Err(Damaged);
    }
    let count = get32(block, 4088) as usize;
    if count > DIR_ENTRIES || block[count * DIR_ENTRY..4080].iter().any(|&b| b != 0) {
        return Err(Damaged);
    }
    let mut out = [DirEntry::EMPTY; DIR_ENTRIES];
    for (i, e) in out.iter_mut().enumerate().take(count) {
        let at = i * DIR_ENTRY;
        let k = get64(block, at);
        let oid = k & !NODE_BIT;
        if oid > MAX_OID {
            return Err(Damaged);
        }
        *e = DirEntry {
            space: if k & NODE_BIT != 0 {
                Space::Node
            } else {
                Space::Page
            },
            oid,
            version: get32(block, at + 8),
            crc: get32(block, at + 12),
        };
    }
    Ok((out, count))
}

/// One object of a [`Directory`], in the caller's buffer (all-zero is an
/// unused slot, so the kernel can carve the buffer out of zeroed memory).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, zerocopy::FromZeros)]
#[repr(C)]
pub struct DirSlot {
    key: u64,
    version: u32,
    crc: u32,
    index: u32,
}

impl DirSlot {
    /// An unused slot (to fill a buffer with).
    pub const EMPTY: DirSlot = DirSlot {
        key: 0,
        version: 0,
        crc: 0,
        index: 0,
    };
}

/// Where an object of the checkpoint is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// Node or page.
    pub space: Space,
    /// The object.
    pub oid: u64,
    /// Its version in the checkpoint.
    pub version: u32,
    /// Block relative to the checkpoint's first block.
    pub block: u64,
    /// Byte offset in the block (node records; 0 for pages).
    pub offset: usize,
    /// The page data's CRC-32C (0 for nodes).
    pub crc: u32,
}

impl Found {
    /// The node from the checkpoint block `block` (read from `self.block`):
    /// its record at `self.offset` must be valid, this node's, and of the
    /// directory's version.
    pub fn node(&self, block: &[u8]) -> Result<NodeImage, Damaged> {
        match node::decode(&block[self.offset..], self.oid) {
            Record::Valid(n) if self.space == Space::Node && n.version == self.version => Ok(n),
            _ => Err(Damaged),
        }
    }

    /// Checks a page's data (read from `self.block`) against the
    /// directory's CRC-32C.
    pub fn check_page(&self, data: &[u8]) -> Result<(), Damaged> {
        if self.space == Space::Page && crate::crc32c(&data[..BLOCK]) == self.crc {
            Ok(())
        } else {
            Err(Damaged)
        }
    }
}

/// Why a directory could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirError {
    /// A directory block failed its checks or holds the wrong number of
    /// entries.
    Damaged,
    /// The caller's buffer is too small.
    Full,
    /// Entries out of order: a page among the nodes, a node among the
    /// pages, blocks out of sequence, or more entries than the header
    /// says.
    Order,
    /// Fewer entries than the header says.
    Missing,
    /// An object appears twice.
    Duplicate,
    /// Not built yet (`finish` not called or failed).
    NotReady,
}

/// The directory of a checkpoint, sorted for lookup by binary search, in a
/// caller-provided buffer (its length is the capacity). Built by pushing the
/// entries in directory order (or whole blocks), then [`Directory::finish`].
pub struct Directory<'a> {
    slots: &'a mut [DirSlot],
    len: usize,
    layout: Layout,
    ready: bool,
}

impl<'a> Directory<'a> {
    /// An empty directory for a checkpoint of `layout`.
    pub fn new(slots: &'a mut [DirSlot], layout: Layout) -> Directory<'a> {
        Directory {
            slots,
            len: 0,
            layout,
            ready: false,
        }
    }

    /// Gives the buffer back (to build another directory in it).
    pub fn into_slots(self) -> &'a mut [DirSlot] {
        self.slots
    }

    /// The checkpoint's layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Entries so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends the next entry (directory order: nodes, then pages).
    pub fn push(&mut self, e: &DirEntry) -> Result<(), DirError> {
        let index = self.len as u64;
        if index >= self.layout.entries() {
            return Err(DirError::Order);
        }
        let want = if index < self.layout.nodes as u64 {
            Space::Node
        } else {
            Space::Page
        };
        if e.space != want || (want == Space::Node && e.crc != 0) {
            return Err(DirError::Order);
        }
        let slot = self.slots.get_mut(self.len).ok_or(DirError::Full)?;
        *slot = DirSlot {
            key: e.key(),
            version: e.version,
            crc: e.crc,
            index: index as u32,
        };
        self.len += 1;
        self.ready = false;
        Ok(())
    }

    /// Decodes directory block `k` of checkpoint `ckpt_generation` and
    /// appends its entries. Blocks must come in order.
    pub fn add_block(
        &mut self,
        k: u32,
        ckpt_generation: u64,
        block: &[u8],
    ) -> Result<(), DirError> {
        if k >= self.layout.dir_blocks || self.len as u64 != k as u64 * DIR_ENTRIES as u64 {
            return Err(DirError::Order);
        }
        let (entries, count) =
            decode_dir_block(ckpt_generation, block).map_err(|_| DirError::Damaged)?;
        if count != self.layout.dir_entries_in(k) {
            return Err(DirError::Damaged);
        }
        entries[..count].iter().try_for_each(|e| self.push(e))
    }

    /// Sorts the entries for lookup; all of them must be there, once.
    pub fn finish(&mut self) -> Result<(), DirError> {
        if self.len as u64 != self.layout.entries() {
            return Err(DirError::Missing);
        }
        let s = &mut self.slots[..self.len];
        s.sort_unstable_by_key(|x| x.key);
        if s.windows(2).any(|w| w[0].key == w[1].key) {
            return Err(DirError::Duplicate);
        }
        self.ready = true;
        Ok(())
    }

    fn found(&self, s: &DirSlot) -> Found {
        let node = s.key & NODE_BIT != 0;
        let (block, offset) = if node {
            self.layout.node_block(s.index)
        } else {
            (self.layout.page_block(s.index - self.layout.nodes), 0)
        };
        Found {
            space: if node { Space::Node } else { Space::Page },
            oid: s.key & !NODE_BIT,
            version: s.version,
            block,
            offset,
            crc: s.crc,
        }
    }

    /// Where object `oid` of `space` is in the checkpoint, if it is in it
    /// (`None` also before [`Directory::finish`] succeeded).
    pub fn lookup(&self, space: Space, oid: u64) -> Option<Found> {
        if !self.ready {
            return None;
        }
        let s = &self.slots[..self.len];
        let i = s.binary_search_by_key(&key(space, oid), |x| x.key).ok()?;
        Some(self.found(&s[i]))
    }

    /// `(version, relative block, offset)` of object `oid` of `space` in the
    /// checkpoint, if it is in it.
    pub fn find(&self, space: Space, oid: u64) -> Option<(u32, u64, usize)> {
        self.lookup(space, oid)
            .map(|f| (f.version, f.block, f.offset))
    }

    /// Entry `i` in sorted order (pages by oid, then nodes by oid), to walk
    /// every object (migration after a restart).
    pub fn get(&self, i: usize) -> Option<Found> {
        if !self.ready {
            return None;
        }
        self.slots[..self.len].get(i).map(|s| self.found(s))
    }
}
