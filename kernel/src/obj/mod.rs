//! The object cache: every node and page the kernel is working with.
//!
//! Objects are named by identity (oid) and version; a key carries both,
//! plus a hint (the cache slot where the object was last found). Lookups
//! try the hint, then the index. An object not in the cache is *faulted
//! in*: until the store lands (issue #4) that means it appears as a zero
//! object at version 0 — every oid names an object, and the big bang image
//! supplies the non-zero ones at boot. Slots are sized at boot and never
//! move, so a slot number is a valid cache handle (never a persistent name).
//!
//! Kernel caches that depend on an object's contents are told through the
//! per-slot marks: `ctx` (part of a prepared domain: write the domain back
//! before touching the node or page) and `mapped` (hardware page tables
//! were built through it: flush them before changing it).

mod index;

use crate::arch::phys;
use index::Index;
use stet_keys::{Key, KeyType, Space};
use stet_physmem::pool::{FrameNumber, FramePool};
use zerocopy::FromZeros;

/// Slots in a node.
pub const SLOTS: usize = 16;

/// A cached node.
#[derive(FromZeros)]
#[repr(C)]
pub struct NodeEntry {
    /// The 16 key slots.
    pub keys: [Key; SLOTS],
    /// Identity.
    pub oid: u64,
    /// Calls made by the domain rooted here (persistent; names resume keys).
    pub calls: u64,
    /// Version (bumped when the object is destroyed).
    pub version: u32,
    /// Context index + 1 if this node is part of a prepared domain (0: none).
    pub ctx: u16,
    /// Whether a hardware mapping was built through this node (since the
    /// last flush).
    pub mapped: bool,
    /// Whether the slot holds an object.
    pub used: bool,
}

/// A cached page.
#[derive(FromZeros)]
#[repr(C)]
pub struct PageEntry {
    /// Identity.
    pub oid: u64,
    /// Version.
    pub version: u32,
    /// The frame holding the data.
    pub frame: u32,
    /// Context index + 1 if this is the FPU page of a prepared domain.
    pub ctx: u16,
    /// Whether a hardware mapping of this page exists (since the last flush).
    pub mapped: bool,
    /// Whether the slot holds an object.
    pub used: bool,
}

/// Why a lookup found no object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// The key's object was destroyed (version mismatch) or the key is not
    /// an object key: treat it as void.
    Void,
    /// The cache (or the frame pool) is full.
    NoSpace,
}

/// The object cache.
pub struct Objects {
    /// Node slots.
    pub nodes: &'static mut [NodeEntry],
    /// Page slots.
    pub pages: &'static mut [PageEntry],
    node_index: Index,
    page_index: Index,
    nodes_used: usize,
    pages_used: usize,
}

/// Sizes of the cache's tables, for the boot allocator.
pub struct Sizes {
    /// Node slots.
    pub nodes: usize,
    /// Page slots.
    pub pages: usize,
}

impl Sizes {
    /// Bucket counts of the two indexes.
    pub fn buckets(&self) -> (usize, usize) {
        (
            Index::buckets_for(self.nodes),
            Index::buckets_for(self.pages),
        )
    }
}

impl Objects {
    /// A cache over zeroed tables.
    pub fn new(
        nodes: &'static mut [NodeEntry],
        pages: &'static mut [PageEntry],
        node_buckets: &'static mut [u32],
        page_buckets: &'static mut [u32],
    ) -> Objects {
        Objects {
            nodes,
            pages,
            node_index: Index::new(node_buckets),
            page_index: Index::new(page_buckets),
            nodes_used: 0,
            pages_used: 0,
        }
    }

    /// (node slots used, node capacity, page slots used, page capacity).
    pub fn usage(&self) -> (usize, usize, usize, usize) {
        (
            self.nodes_used,
            self.nodes.len(),
            self.pages_used,
            self.pages.len(),
        )
    }

    /// The node slots in use (slots are handed out in order and, until the
    /// store can evict, never given back).
    pub fn used_nodes(&self) -> &[NodeEntry] {
        &self.nodes[..self.nodes_used]
    }

    /// The page slots in use.
    pub fn used_pages(&self) -> &[PageEntry] {
        &self.pages[..self.pages_used]
    }

    /// The cache slot of node `oid`, faulting it in.
    pub fn node(&mut self, oid: u64) -> Result<u32, Miss> {
        let nodes = &*self.nodes;
        if let Some(i) = self.node_index.find(oid, |s| nodes[s as usize].oid) {
            return Ok(i);
        }
        if self.nodes_used == self.nodes.len() {
            return Err(Miss::NoSpace);
        }
        let i = self.nodes_used as u32;
        self.nodes_used += 1;
        let e = &mut self.nodes[i as usize];
        e.oid = oid;
        e.used = true;
        self.node_index.insert(oid, i);
        Ok(i)
    }

    /// The cache slot of page `oid`, faulting it in (a fresh zeroed frame).
    pub fn page(&mut self, oid: u64, pool: &mut FramePool<'_>) -> Result<u32, Miss> {
        let pages = &*self.pages;
        if let Some(i) = self.page_index.find(oid, |s| pages[s as usize].oid) {
            return Ok(i);
        }
        if self.pages_used == self.pages.len() {
            return Err(Miss::NoSpace);
        }
        let f = pool.alloc().ok_or(Miss::NoSpace)?;
        phys::zero_frame(f);
        let i = self.pages_used as u32;
        self.pages_used += 1;
        let e = &mut self.pages[i as usize];
        e.oid = oid;
        e.frame = f.0;
        e.used = true;
        self.page_index.insert(oid, i);
        Ok(i)
    }

    /// The node a key designates (domain, start, meter, segment and node
    /// keys), checking its version. Resume keys check their call count
    /// elsewhere; for them only the oid is resolved.
    #[inline]
    pub fn node_of(&mut self, key: Key) -> Result<u32, Miss> {
        if key.space() != Some(Space::Node) {
            return Err(Miss::Void);
        }
        let oid = key.oid();
        let h = key.hint() as usize;
        let i = match self.nodes.get(h) {
            Some(e) if e.used && e.oid == oid => h as u32,
            _ => self.node(oid)?,
        };
        if key.key_type() != KeyType::Resume && self.nodes[i as usize].version != key.version() {
            return Err(Miss::Void);
        }
        Ok(i)
    }

    /// The page a page key designates, checking its version.
    #[inline]
    pub fn page_of(&mut self, key: Key, pool: &mut FramePool<'_>) -> Result<u32, Miss> {
        if key.key_type() != KeyType::Page {
            return Err(Miss::Void);
        }
        let oid = key.oid();
        let h = key.hint() as usize;
        let i = match self.pages.get(h) {
            Some(e) if e.used && e.oid == oid => h as u32,
            _ => self.page(oid, pool)?,
        };
        if self.pages[i as usize].version != key.version() {
            return Err(Miss::Void);
        }
        Ok(i)
    }

    /// The frame of page slot `i`.
    pub fn frame(&self, i: u32) -> FrameNumber {
        FrameNumber(self.pages[i as usize].frame)
    }

    /// Destroys node slot `i`: every key to it becomes void. The caller has
    /// already written back and dropped any domain built on it.
    pub fn destroy_node(&mut self, i: u32) {
        let e = &mut self.nodes[i as usize];
        e.keys = [Key::VOID; SLOTS];
        e.version = e.version.wrapping_add(1);
    }

    /// Destroys page slot `i` (zeroes it, bumps its version).
    pub fn destroy_page(&mut self, i: u32) {
        let e = &mut self.pages[i as usize];
        e.version = e.version.wrapping_add(1);
        phys::zero_frame(FrameNumber(e.frame));
    }
}
