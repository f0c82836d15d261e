//! The object cache: the nodes and pages the kernel is working with.
//!
//! Objects are named by identity (oid) and version; a key carries both,
//! plus a hint (the cache slot where the object was last found). Lookups
//! try the hint, then the index. An object not in the cache is *faulted
//! in* from its backing store (`store::Backing`: the disk, or with no disk
//! a zero object at version 0). Slots are sized at boot and never move, so
//! a slot number is a valid cache handle (never a persistent name); an
//! evicted slot is reused, and keys whose hint points at it simply miss.
//!
//! RAM is only a cache. Every change to an object goes through
//! [`Objects::node_mut`] or the store's page-write path, which mark it
//! *dirty* (listed in O(1) for the next checkpoint). Clean objects may be
//! evicted at any time; dirty ones become clean when a checkpoint has
//! written them.
//!
//! Kernel caches that depend on an object's contents are told through the
//! per-slot marks: `ctx` (part of a prepared domain: write the domain back
//! before touching the node or page) and `mapped` (hardware page tables
//! were built through it since the last flush: flush them before changing
//! or evicting it). `mapped` is a flush generation, so a flush clears every
//! mark at once without visiting the slots.

use crate::arch::phys;
use crate::arch::phys::{FrameNumber, FramePool};
use stet_keys::{Key, KeyType, Space};
use stet_oidindex::Index;
pub use stet_segment::mappers::{At, Mappers};
use zerocopy::FromZeros;

/// Slots in a node.
pub const SLOTS: usize = 16;

/// Notes context `ci` (tables of generation `tgen`) as mapping an object
/// whose marks are `mapped_gen` and `mappers`: the first mapping since the
/// last flush starts a new record.
#[inline]
fn mark(
    flush_gen: u32,
    mapped_gen: &mut u32,
    mappers: &mut Mappers,
    ci: usize,
    tgen: u32,
    (top, at): (u8, At),
    live: impl Fn(usize, u32) -> bool,
) {
    if *mapped_gen != flush_gen {
        *mapped_gen = flush_gen;
        *mappers = Mappers::one(ci, tgen, top, at);
    } else {
        mappers.note(ci, tgen, top, at, live);
    }
}

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
    /// The flush generation in which a hardware mapping was built through
    /// this node (mapped iff equal to the cache's current generation).
    pub mapped_gen: u32,
    /// Which contexts' page tables were built through it.
    pub mappers: Mappers,
    /// Context index + 1 if this node is part of a prepared domain (0: none).
    pub ctx: u16,
    /// Changed since the last checkpoint snapshot.
    pub dirty: bool,
    /// Part of the checkpoint being written: not evictable until it
    /// commits (until then the disk has only the older version).
    pub insnap: bool,
    /// Whether the slot holds an object.
    pub used: bool,
    /// Walked as a meter since it was loaded (`sched::meter_check`): a
    /// change to its time or superior makes every domain's cached meter
    /// check stale. Eviction does too, since this flag goes with it.
    pub meter: bool,
}

/// A cached page.
#[repr(C)]
pub struct PageEntry {
    /// Identity.
    pub oid: u64,
    /// Version.
    pub version: u32,
    /// The frame holding the data (`None` while the slot is free).
    pub frame: Option<FrameNumber>,
    /// The flush generation of its last hardware mapping (see `NodeEntry`).
    pub mapped_gen: u32,
    /// Which contexts map it.
    pub mappers: Mappers,
    /// Index + 1 of its entry in the checkpoint being written, while the
    /// writer has not written it yet: writes must copy it first (0: none).
    pub ckpt: u32,
    /// Context index + 1 if this is the FPU page of a prepared domain.
    pub ctx: u16,
    /// Changed since the last checkpoint snapshot.
    pub dirty: bool,
    /// Part of the checkpoint being written (see `NodeEntry::insnap`).
    pub insnap: bool,
    /// Whether the slot holds an object.
    pub used: bool,
}

impl PageEntry {
    /// A free slot.
    pub fn empty() -> PageEntry {
        PageEntry {
            oid: 0,
            version: 0,
            frame: None,
            mapped_gen: 0,
            mappers: Mappers::new_zeroed(),
            ckpt: 0,
            ctx: 0,
            dirty: false,
            insnap: false,
            used: false,
        }
    }
}

/// Why a lookup found no object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// The key's object was destroyed (version mismatch) or the key is not
    /// an object key: treat it as void.
    Void,
    /// The cache (or the frame pool) is full.
    NoSpace,
    /// The object could not be read from disk (both copies damaged, or an
    /// I/O error): reported, never replaced by a zero object. (An oid
    /// beyond the store's object space is `Void`: no such object exists.)
    Damaged,
}

/// Where objects not in the cache come from.
pub trait Backing {
    /// Reads node `oid` into `e` (keys, version, calls).
    fn read_node(&mut self, oid: u64, e: &mut NodeEntry) -> Result<(), Miss>;
    /// Reads page `oid` into frame `f`; returns its version.
    fn read_page(&mut self, oid: u64, f: FrameNumber) -> Result<u32, Miss>;
}

/// A fixed-capacity list of slot numbers (each slot at most once: the
/// entry's flag says whether it is listed).
pub struct SlotList {
    items: &'static mut [u32],
    len: usize,
}

impl SlotList {
    /// An empty list over `items` (capacity = its length).
    pub fn new(items: &'static mut [u32]) -> SlotList {
        SlotList { items, len: 0 }
    }

    /// Appends `i`. Never full: the capacity is the number of slots.
    #[inline]
    pub fn push(&mut self, i: u32) {
        self.items[self.len] = i;
        self.len += 1;
    }

    /// Removes and returns the last item.
    pub fn pop(&mut self) -> Option<u32> {
        self.len = self.len.checked_sub(1)?;
        Some(self.items[self.len])
    }

    /// The listed slots.
    pub fn as_slice(&self) -> &[u32] {
        &self.items[..self.len]
    }

    /// Items listed.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is listed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets every item.
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

/// One page of the checkpoint being written: what the writer must write,
/// captured at the snapshot.
#[derive(Clone, Copy)]
#[repr(C)]
pub struct SnapPage {
    /// Identity.
    pub oid: u64,
    /// Version at the snapshot.
    pub version: u32,
    /// The frame holding the contents as of the snapshot (`None` once
    /// written).
    pub frame: Option<FrameNumber>,
    /// Its cache slot.
    pub slot: u32,
    /// CRC-32C of the contents (computed as the writer writes it).
    pub crc: u32,
    /// Whether `frame` is the writer's own (a copy, checksummed): taken
    /// by copy on write from the pool, or copied by the writer into one of
    /// its frames (`bounced`). Freed once written.
    pub copied: bool,
    /// Whether the copy is in one of the writer's own frames.
    pub bounced: bool,
    /// Whether the writer has written it.
    pub written: bool,
}

impl SnapPage {
    /// An unused entry.
    pub const EMPTY: SnapPage = SnapPage {
        oid: 0,
        version: 0,
        frame: None,
        slot: 0,
        crc: 0,
        copied: false,
        bounced: false,
        written: false,
    };
}

/// The object cache.
pub struct Objects {
    /// Node slots: read through `node`, changed through `node_mut` (which
    /// marks them dirty) or the cache-mark setters.
    nodes: &'static mut [NodeEntry],
    /// Page slots: read through `page_entry`; contents changed through
    /// `page_write` (copy on write for the checkpoint, then dirty), marks
    /// through the setters below.
    pages: &'static mut [PageEntry],
    node_index: Index<'static>,
    page_index: Index<'static>,
    free_nodes: SlotList,
    free_pages: SlotList,
    /// Nodes changed since the last snapshot (`node_mut` adds them).
    dirty_nodes: SlotList,
    /// Pages changed since the last snapshot (`page_dirty` adds them).
    dirty_pages: SlotList,
    /// The nodes of the checkpoint being written (the dirty list at the
    /// snapshot: `snapshot_nodes`).
    snap_nodes: SlotList,
    /// The current flush generation (see `NodeEntry::mapped_gen`).
    flush_gen: u32,
    /// One past the highest node and page slots ever used (slots are
    /// handed out lowest first, so walks can stop here).
    node_high: usize,
    page_high: usize,
    /// Clock hands for eviction.
    node_hand: usize,
    page_hand: usize,
    /// Objects read from the backing store, and evicted.
    pub stats: CacheStats,
    /// The pages of the checkpoint being written (`snap_len` used).
    pub snap: &'static mut [SnapPage],
    /// Entries of `snap` in use.
    pub snap_len: usize,
}

/// Counters for reports.
#[derive(Clone, Copy, Debug, Default)]
pub struct CacheStats {
    /// Nodes faulted in from the backing store.
    pub node_reads: u64,
    /// Pages faulted in from the backing store.
    pub page_reads: u64,
    /// Nodes evicted.
    pub node_evictions: u64,
    /// Pages evicted.
    pub page_evictions: u64,
}

/// Storage for the cache's tables, carved out at boot.
pub struct Tables {
    /// Node slots.
    pub nodes: &'static mut [NodeEntry],
    /// Page slots.
    pub pages: &'static mut [PageEntry],
    /// Node index buckets (`Sizes::buckets`).
    pub node_buckets: &'static mut [u32],
    /// Page index buckets.
    pub page_buckets: &'static mut [u32],
    /// Five lists of slot numbers: free nodes, free pages, dirty nodes,
    /// dirty pages, snapshot nodes (the node lists as long as `nodes`, the
    /// page lists as long as `pages`).
    pub lists: [&'static mut [u32]; 5],
    /// The checkpoint's page list (as long as `pages`).
    pub snap: &'static mut [SnapPage],
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
    /// A cache over fresh tables (zeroed nodes, empty page slots).
    pub fn new(t: Tables) -> Objects {
        let [fnodes, fpages, dnodes, dpages, snodes] = t.lists;
        let mut free_nodes = SlotList::new(fnodes);
        let mut free_pages = SlotList::new(fpages);
        // Hand out low slots first (popped from the end).
        for i in (0..t.nodes.len() as u32).rev() {
            free_nodes.push(i);
        }
        for i in (0..t.pages.len() as u32).rev() {
            free_pages.push(i);
        }
        Objects {
            nodes: t.nodes,
            pages: t.pages,
            node_index: Index::new(t.node_buckets),
            page_index: Index::new(t.page_buckets),
            free_nodes,
            free_pages,
            dirty_nodes: SlotList::new(dnodes),
            dirty_pages: SlotList::new(dpages),
            snap_nodes: SlotList::new(snodes),
            flush_gen: 1,
            node_high: 0,
            page_high: 0,
            node_hand: 0,
            page_hand: 0,
            stats: CacheStats::default(),
            snap: t.snap,
            snap_len: 0,
        }
    }

    /// (node slots used, node capacity, page slots used, page capacity).
    pub fn usage(&self) -> (usize, usize, usize, usize) {
        (
            self.nodes.len() - self.free_nodes.len(),
            self.nodes.len(),
            self.pages.len() - self.free_pages.len(),
            self.pages.len(),
        )
    }

    /// The node slots that may be in use (for walks over the cache).
    pub fn node_slots(&self) -> &[NodeEntry] {
        &self.nodes[..self.node_high]
    }

    /// The page slots that may be in use.
    pub fn page_slots(&self) -> &[PageEntry] {
        &self.pages[..self.page_high]
    }

    /// Free node slots.
    pub fn free_node_slots(&self) -> usize {
        self.free_nodes.len()
    }

    /// Free page slots.
    pub fn free_page_slots(&self) -> usize {
        self.free_pages.len()
    }

    /// The cache slot of node `oid` if it is cached.
    #[inline]
    pub fn cached_node(&self, oid: u64) -> Option<u32> {
        let nodes = &*self.nodes;
        self.node_index.find(oid, |s| nodes[s as usize].oid)
    }

    /// The cache slot of page `oid` if it is cached.
    #[inline]
    pub fn cached_page(&self, oid: u64) -> Option<u32> {
        let pages = &*self.pages;
        self.page_index.find(oid, |s| pages[s as usize].oid)
    }

    /// The cache slot of node `oid`, faulting it in from `b`.
    pub fn node(&mut self, oid: u64, b: &mut dyn Backing) -> Result<u32, Miss> {
        if let Some(i) = self.cached_node(oid) {
            return Ok(i);
        }
        let i = self.free_nodes.pop().ok_or(Miss::NoSpace)?;
        let e = &mut self.nodes[i as usize];
        *e = NodeEntry::new_zeroed();
        e.oid = oid;
        if let Err(m) = b.read_node(oid, e) {
            self.free_nodes.push(i);
            return Err(m);
        }
        e.used = true;
        self.node_index.insert(oid, i);
        self.node_high = self.node_high.max(i as usize + 1);
        self.stats.node_reads += 1;
        Ok(i)
    }

    /// The cache slot of page `oid`, faulting it in from `b` into a frame
    /// from `pool`.
    pub fn page(
        &mut self,
        oid: u64,
        pool: &mut FramePool<'_>,
        b: &mut dyn Backing,
    ) -> Result<u32, Miss> {
        if let Some(i) = self.cached_page(oid) {
            return Ok(i);
        }
        if self.free_pages.is_empty() {
            return Err(Miss::NoSpace);
        }
        let f = pool.alloc().ok_or(Miss::NoSpace)?;
        let version = match b.read_page(oid, f) {
            Ok(v) => v,
            Err(m) => {
                let _ = pool.free(f);
                return Err(m);
            }
        };
        let Some(i) = self.free_pages.pop() else {
            let _ = pool.free(f);
            return Err(Miss::NoSpace);
        };
        let e = &mut self.pages[i as usize];
        *e = PageEntry::empty();
        e.oid = oid;
        e.version = version;
        e.frame = Some(f);
        e.used = true;
        self.page_index.insert(oid, i);
        self.page_high = self.page_high.max(i as usize + 1);
        self.stats.page_reads += 1;
        Ok(i)
    }

    /// The node a key designates (domain, start, meter, segment and node
    /// keys), checking its version. Resume keys check their call count
    /// elsewhere; for them only the oid is resolved.
    #[inline]
    pub fn node_of(&mut self, key: Key, b: &mut dyn Backing) -> Result<u32, Miss> {
        if key.space() != Some(Space::Node) {
            return Err(Miss::Void);
        }
        let oid = key.oid();
        let h = key.hint() as usize;
        let i = match self.nodes.get(h) {
            Some(e) if e.used && e.oid == oid => h as u32,
            _ => self.node(oid, b)?,
        };
        if key.key_type() != KeyType::Resume && self.nodes[i as usize].version != key.version() {
            return Err(Miss::Void);
        }
        Ok(i)
    }

    /// The page a page key designates, checking its version.
    #[inline]
    pub fn page_of(
        &mut self,
        key: Key,
        pool: &mut FramePool<'_>,
        b: &mut dyn Backing,
    ) -> Result<u32, Miss> {
        if key.key_type() != KeyType::Page {
            return Err(Miss::Void);
        }
        let oid = key.oid();
        let h = key.hint() as usize;
        let i = match self.pages.get(h) {
            Some(e) if e.used && e.oid == oid => h as u32,
            _ => self.page(oid, pool, b)?,
        };
        if self.pages[i as usize].version != key.version() {
            return Err(Miss::Void);
        }
        Ok(i)
    }

    /// The frame of page slot `i` (`None`: the slot is free).
    #[inline]
    pub fn frame(&self, i: u32) -> Option<FrameNumber> {
        self.pages[i as usize].frame
    }

    /// Node slot `i`, to read. (Changes go through `node_mut`, which marks
    /// the node dirty for the next checkpoint, or through the setters
    /// below of marks that are only the cache's, never the node's.)
    #[inline(always)]
    pub fn node_entry(&self, i: u32) -> &NodeEntry {
        &self.nodes[i as usize]
    }

    /// Node slot `h`, if there is one: a key's hint may hold any value.
    #[inline(always)]
    pub fn node_entry_at(&self, h: u32) -> Option<&NodeEntry> {
        self.nodes.get(h as usize)
    }

    /// Puts `key` back into slot `slot` of node `i` with a refreshed hint:
    /// the same key, found faster next time. A hint is only a cache
    /// (zeroed on disk), so the node is not dirtied.
    #[inline(always)]
    pub fn set_hint(&mut self, i: u32, slot: usize, key: Key) {
        let k = &mut self.nodes[i as usize].keys[slot];
        debug_assert!(
            k.canonical() == key.canonical(),
            "a hint write changed the key"
        );
        *k = key;
    }

    /// Marks node `i` as part of prepared context `mark - 1` (0: of none).
    #[inline]
    pub fn set_ctx(&mut self, i: u32, mark: u16) {
        self.nodes[i as usize].ctx = mark;
    }

    /// Notes that node `i` was walked as a meter (`NodeEntry::meter`).
    #[inline]
    pub fn set_meter(&mut self, i: u32) {
        self.nodes[i as usize].meter = true;
    }

    /// The dirty nodes become the snapshot's: each is clean from now on and
    /// stays in the cache until the checkpoint commits (`insnap`); `f` sees
    /// each, with its place in the snapshot, to encode it.
    pub fn snapshot_nodes(&mut self, mut f: impl FnMut(usize, &NodeEntry)) {
        core::mem::swap(&mut self.dirty_nodes, &mut self.snap_nodes);
        for (n, &i) in self.snap_nodes.as_slice().iter().enumerate() {
            let e = &mut self.nodes[i as usize];
            e.dirty = false;
            e.insnap = true;
            f(n, e);
        }
    }

    /// Nodes changed since the last snapshot.
    #[inline]
    pub fn dirty_node_count(&self) -> usize {
        self.dirty_nodes.len()
    }

    /// The snapshot's nodes are on disk: each may be evicted again
    /// (`NodeEntry::insnap`), and the list is empty for the next one.
    pub fn snapshot_nodes_written(&mut self) {
        for &i in self.snap_nodes.as_slice() {
            self.nodes[i as usize].insnap = false;
        }
        self.snap_nodes.clear();
    }

    /// Node slot `i`, to change it: marks it dirty.
    #[inline]
    pub fn node_mut(&mut self, i: u32) -> &mut NodeEntry {
        let e = &mut self.nodes[i as usize];
        if !e.dirty {
            e.dirty = true;
            self.dirty_nodes.push(i);
        }
        &mut self.nodes[i as usize]
    }

    /// Page slot `i`, to read.
    #[inline(always)]
    pub fn page_entry(&self, i: u32) -> &PageEntry {
        &self.pages[i as usize]
    }

    /// Pages changed since the last snapshot.
    #[inline]
    pub fn dirty_page_count(&self) -> usize {
        self.dirty_pages.len()
    }

    /// The pages changed since the last snapshot, in the order they were.
    #[inline]
    pub fn dirty_pages(&self) -> &[u32] {
        self.dirty_pages.as_slice()
    }

    /// Marks page `i` as the FPU page of prepared context `mark - 1` (0: of
    /// none).
    #[inline]
    pub fn set_page_ctx(&mut self, i: u32, mark: u16) {
        self.pages[i as usize].ctx = mark;
    }

    /// Page slot `i` as of `version` (a journal record, the big bang
    /// image): its frame, to write its contents (as `page_write`).
    pub fn page_restore(
        &mut self,
        i: u32,
        version: u32,
        pool: &mut FramePool<'_>,
    ) -> Result<FrameNumber, Miss> {
        let f = self.page_write(i, pool)?;
        self.pages[i as usize].version = version;
        Ok(f)
    }

    /// The dirty pages become the snapshot's, `snap[..n]` (→ n): each is
    /// clean from now on and stays in the cache until the checkpoint
    /// commits (`insnap`), and a write to it copies it first while the
    /// writer still needs it (`ckpt`) — except a prepared domain's FPU
    /// page, written in place at every write-back, of which the writer
    /// already has its own copy (`store::snapshot::take_frames`).
    pub fn snapshot_pages(&mut self) -> usize {
        let n = self.dirty_pages.len();
        for (j, &i) in self.dirty_pages.as_slice().iter().enumerate() {
            let e = &mut self.pages[i as usize];
            e.dirty = false;
            e.insnap = true;
            let s = &mut self.snap[j];
            s.oid = e.oid;
            s.version = e.version;
            s.slot = i;
            s.crc = 0;
            s.written = false;
            s.bounced = false;
            if e.ctx != 0 {
                s.copied = true;
            } else {
                s.frame = e.frame;
                s.copied = false;
                e.ckpt = j as u32 + 1;
            }
        }
        self.dirty_pages.clear();
        self.snap_len = n;
        n
    }

    /// The writer made its own copy of snapshot page `jx`: a write to the
    /// page needs no copy first any more.
    pub fn snapshot_page_copied(&mut self, jx: usize) {
        let e = &mut self.pages[self.snap[jx].slot as usize];
        if e.ckpt == jx as u32 + 1 {
            e.ckpt = 0;
        }
    }

    /// The snapshot's first `n` pages are on disk: each still in the cache
    /// may be evicted again, and the snapshot's page list is empty.
    pub fn snapshot_pages_written(&mut self, n: usize) {
        for x in 0..n {
            let s = self.snap[x];
            let e = &mut self.pages[s.slot as usize];
            if e.used && e.oid == s.oid {
                e.insnap = false;
            }
        }
        self.snap_len = 0;
    }

    /// Page slot `i`, to change its contents: if the checkpoint writer
    /// still needs them as of the snapshot, it gets a copy first (copy on
    /// write); then the page is marked dirty. Returns the frame to write.
    /// A free slot (no frame) is `Void`.
    #[inline]
    pub fn page_write(&mut self, i: u32, pool: &mut FramePool<'_>) -> Result<FrameNumber, Miss> {
        let e = &self.pages[i as usize];
        let frame = e.frame.ok_or(Miss::Void)?;
        if e.ckpt != 0 {
            let j = e.ckpt as usize - 1;
            let copy = pool.alloc().ok_or(Miss::NoSpace)?;
            phys::copy_frame(frame, copy);
            self.snap[j].frame = Some(copy);
            self.snap[j].copied = true;
            self.pages[i as usize].ckpt = 0;
        }
        self.page_dirty(i);
        Ok(frame)
    }

    /// Marks page slot `i` dirty. Only for pages the checkpoint writer does
    /// not need (`ckpt == 0`): everything else goes through `page_write`.
    #[inline]
    pub fn page_dirty(&mut self, i: u32) {
        debug_assert_eq!(self.pages[i as usize].ckpt, 0);
        let e = &mut self.pages[i as usize];
        if !e.dirty {
            e.dirty = true;
            self.dirty_pages.push(i);
        }
    }

    /// Whether a hardware mapping was built through node slot `i` since
    /// the last flush.
    #[inline]
    pub fn node_mapped(&self, i: u32) -> bool {
        self.nodes[i as usize].mapped_gen == self.flush_gen
    }

    /// Whether page slot `i` is mapped by some hardware page table.
    #[inline]
    pub fn page_mapped(&self, i: u32) -> bool {
        self.pages[i as usize].mapped_gen == self.flush_gen
    }

    /// Notes a hardware mapping built through node slot `i` for context
    /// `ci` (its tables' generation `tgen`) under top-level table entry
    /// `place.0`, the node at `place.1`; `live` as in `Mappers::note`.
    #[inline]
    pub fn mark_node_mapped(
        &mut self,
        i: u32,
        ci: usize,
        tgen: u32,
        place: (u8, At),
        live: impl Fn(usize, u32) -> bool,
    ) {
        let e = &mut self.nodes[i as usize];
        mark(
            self.flush_gen,
            &mut e.mapped_gen,
            &mut e.mappers,
            ci,
            tgen,
            place,
            live,
        );
    }

    /// Notes a hardware mapping of page slot `i` for context `ci`.
    #[inline]
    pub fn mark_page_mapped(
        &mut self,
        i: u32,
        ci: usize,
        tgen: u32,
        place: (u8, At),
        live: impl Fn(usize, u32) -> bool,
    ) {
        let e = &mut self.pages[i as usize];
        mark(
            self.flush_gen,
            &mut e.mapped_gen,
            &mut e.mappers,
            ci,
            tgen,
            place,
            live,
        );
    }

    /// Node slot `i` will no longer be mapped (the caller discards the
    /// tables of the contexts returned) → who mapped it.
    pub fn unmark_node(&mut self, i: u32) -> Mappers {
        let e = &mut self.nodes[i as usize];
        e.mapped_gen = 0;
        e.mappers
    }

    /// Page slot `i` will no longer be mapped → who mapped it.
    pub fn unmark_page(&mut self, i: u32) -> Mappers {
        let e = &mut self.pages[i as usize];
        e.mapped_gen = 0;
        e.mappers
    }

    /// Every hardware page table was discarded: no slot is mapped now.
    pub fn flushed(&mut self) {
        self.flush_gen = self.flush_gen.wrapping_add(1).max(1);
        if self.flush_gen == 1 {
            // Wrapped: stale generations could match again; clear them.
            for n in self.nodes.iter_mut() {
                n.mapped_gen = 0;
            }
            for p in self.pages.iter_mut() {
                p.mapped_gen = 0;
            }
        }
    }

    /// Evicts up to `want` clean, unpinned nodes (clock order). Returns how
    /// many were evicted and whether any was mapped (the caller must flush
    /// the page tables before the next mapping is built).
    pub fn evict_nodes(&mut self, want: usize) -> (usize, bool) {
        let n = self.nodes.len();
        let (mut got, mut mapped) = (0, false);
        for _ in 0..n {
            if got == want {
                break;
            }
            let i = self.node_hand;
            self.node_hand = (i + 1) % n;
            let e = &self.nodes[i];
            if !e.used || e.dirty || e.insnap || e.ctx != 0 {
                continue;
            }
            mapped |= e.mapped_gen == self.flush_gen;
            let oid = e.oid;
            let nodes = &*self.nodes;
            self.node_index
                .remove(oid, i as u32, |s| nodes[s as usize].oid);
            self.nodes[i].used = false;
            self.free_nodes.push(i as u32);
            self.stats.node_evictions += 1;
            got += 1;
        }
        (got, mapped)
    }

    /// Evicts up to `want` clean, unpinned pages, returning their frames to
    /// `pool` only if none was mapped; otherwise the frames go to `held`
    /// (up to its length) for the caller to free after flushing. Returns
    /// (evicted, frames held).
    pub fn evict_pages(
        &mut self,
        want: usize,
        pool: &mut FramePool<'_>,
        held: &mut [Option<FrameNumber>],
    ) -> (usize, usize) {
        let n = self.pages.len();
        let (mut got, mut nheld) = (0, 0);
        for _ in 0..n {
            if got == want || nheld == held.len() {
                break;
            }
            let i = self.page_hand;
            self.page_hand = (i + 1) % n;
            let e = &self.pages[i];
            if !e.used || e.dirty || e.insnap || e.ckpt != 0 || e.ctx != 0 {
                continue;
            }
            let (oid, mapped) = (e.oid, e.mapped_gen == self.flush_gen);
            let pages = &*self.pages;
            self.page_index
                .remove(oid, i as u32, |s| pages[s as usize].oid);
            self.pages[i].used = false;
            let frame = self.pages[i].frame.take();
            self.free_pages.push(i as u32);
            if mapped {
                held[nheld] = frame;
                nheld += 1;
            } else if let Some(f) = frame {
                let _ = pool.free(f);
            }
            self.stats.page_evictions += 1;
            got += 1;
        }
        (got, nheld)
    }

    /// Destroys node slot `i`: every key to it becomes void. The caller has
    /// already written back and dropped any domain built on it.
    pub fn destroy_node(&mut self, i: u32) {
        let e = self.node_mut(i);
        e.keys = [Key::VOID; SLOTS];
        e.version = e.version.wrapping_add(1);
    }

    /// Destroys page slot `i` (zeroes it, bumps its version).
    pub fn destroy_page(&mut self, i: u32, pool: &mut FramePool<'_>) -> Result<(), Miss> {
        let f = self.page_write(i, pool)?;
        phys::zero_frame(f);
        let e = &mut self.pages[i as usize];
        e.version = e.version.wrapping_add(1);
        Ok(())
    }
}
