//! Domains' memory: translating an address through the domain's segment
//! tree (`stet_segment::walk`), building hardware page tables lazily from
//! what the walk finds, discarding them when a segment changes, and copying
//! message strings between domains without ever touching user addresses
//! from the kernel (everything goes through the direct map; SMAP stays on).

use crate::arch::paging::{MapError, UserPerm, UserRoot};
use crate::arch::phys;
use crate::arch::phys::{FrameNumber, FramePool};
use crate::domain;
use crate::kernel::Kernel;
use crate::obj::Objects;
use crate::store::Store;
use stet_abi::domain::root;
use stet_keys::Key;
use stet_segment::mappers::At;
use stet_segment::{Access, Invalid};

const PAGE: u64 = 4096;

/// The segment walk's view of the object cache. For a walk that builds a
/// context's hardware mapping (`ctx`), every node it passes is marked as
/// backing a mapping of that context; a walk for a kernel copy through a
/// segment key builds none and marks nothing.
struct Walker<'a> {
    objs: &'a mut Objects,
    pool: &'a mut FramePool<'static>,
    store: &'a mut Store,
    ctx: Option<(usize, &'a [domain::context::Context])>,
    /// The top-level page-table entry the address is under (`top`), and
    /// the address (each node's place in the space follows from it).
    top: u8,
    va: u64,
    /// The space root's identity (a context's walk), how many slots the
    /// walk has read, and whether it met the root again below itself
    /// (`Context::root_below`).
    root_oid: Option<u64>,
    depth: u32,
    root_below: bool,
    /// The node whose slot was read last (the walk's leaf, once it ends).
    last: u32,
    /// Where the key being followed was read (node, slot): its hint is
    /// refreshed there when it missed, so the next walk finds the object
    /// by hint instead of by a lookup of its oid.
    from: Option<(u32, usize)>,
}

impl Walker<'_> {
    /// `key`, found at cache index `i`, goes back where it was read with
    /// that hint (if that slot still holds it: a keeper search reads
    /// other slots in between).
    #[inline(always)]
    fn refresh_hint(&mut self, key: Key, i: u32) {
        if key.hint() == i {
            return;
        }
        if let Some((n, s)) = self.from {
            if self.objs.node_entry(n).keys[s].canonical() == key.canonical() {
                self.objs.set_hint(n, s, key.with_hint(i));
            }
        }
    }
}

/// The top-level page-table entry (of the user half's 256) that `va` is
/// under: what a mapping's record keeps (`Mappers`).
fn top(va: u64) -> u8 {
    ((va >> 39) & 0xff) as u8
}

/// Where the node `node` designates sits in a space walked for `va`: its
/// slots span 16^(lss−1) pages, and it covers the aligned 16^lss pages
/// around `va` (a context's walk starts at address 0, and every level
/// takes the address's next digit).
fn node_at(node: Key, va: u64) -> At {
    let shift = 4 * (node.lss().max(1) as u32 - 1) + 12;
    let base = match 1u64.checked_shl(shift + 4) {
        Some(span) => va & !(span - 1),
        None => 0,
    };
    At {
        base,
        shift: shift as u8,
    }
}

/// A page's place: the page at `va`.
fn page_at(va: u64) -> At {
    At {
        base: va & !(PAGE - 1),
        shift: 12,
    }
}

/// Whether context `ci` still has the tables of generation `tgen`.
fn live(ctxs: &[domain::context::Context]) -> impl Fn(usize, u32) -> bool + '_ {
    |ci, tgen| ctxs.get(ci).is_some_and(|c| c.used && c.tgen == tgen)
}

impl stet_segment::Store for Walker<'_> {
    fn slot(&mut self, node: Key, slot: usize) -> Option<Key> {
        let i = self.objs.node_of(node, self.store).ok()?;
        self.refresh_hint(node, i);
        self.from = Some((i, slot));
        self.last = i;
        if self.depth > 0 && self.root_oid == Some(node.oid()) {
            self.root_below = true;
        }
        self.depth += 1;
        if let Some((ci, ctxs)) = self.ctx {
            let at = node_at(node, self.va);
            self.objs
                .mark_node_mapped(i, ci, ctxs[ci].tgen, (self.top, at), live(ctxs));
        }
        Some(self.objs.node_entry(i).keys[slot])
    }

    fn page_exists(&mut self, page: Key) -> bool {
        match self.objs.page_of(page, self.pool, self.store) {
            Ok(i) => {
                self.refresh_hint(page, i);
                true
            }
            Err(_) => false,
        }
    }
}

/// Why an address could not be made accessible.
#[derive(Clone, Copy, Debug)]
pub enum MemFault {
    /// The segment says no (with the keeper to invoke, if any).
    Invalid(Invalid),
    /// The kernel ran out of frames for page tables or pages.
    NoSpace,
}

/// Translates `va` for context `ci` through its address-space segment.
pub fn walk(
    k: &mut Kernel,
    ci: usize,
    va: u64,
    access: Access,
) -> Result<(u32, bool, bool), MemFault> {
    if let Some(hit) = walk_cached(k, ci, va, access) {
        return Ok(hit);
    }
    let space = k.objs.node_entry(k.ctxs[ci].root).keys[root::SPACE];
    let mut w = Walker {
        objs: &mut k.objs,
        pool: &mut k.pool,
        store: &mut k.store,
        ctx: Some((ci, &*k.ctxs)),
        top: top(va),
        va,
        root_oid: Some(space.oid()),
        depth: 0,
        root_below: false,
        last: 0,
        from: Some((k.ctxs[ci].root, root::SPACE)),
    };
    let found = stet_segment::walk(&mut w, space, va, access, &mut |_| {});
    let (last, root_below) = (w.last, w.root_below);
    k.ctxs[ci].root_below |= root_below;
    let found = found.map_err(MemFault::Invalid)?;
    let page = k.page_of(found.page).map_err(|_| MemFault::NoSpace)?;
    if let Some(leaf) = found.leaf {
        let c = &mut k.ctxs[ci];
        c.leaf = domain::context::LeafCache {
            tgen: c.tgen,
            node: last,
            oid: leaf.node.oid(),
            base: va & !(16 * PAGE - 1),
            ro: leaf.ro,
            red: leaf.red,
            valid: true,
        };
    }
    Ok((page, found.writable, found.executable))
}

/// `walk` for an address among the 16 pages of the context's last leaf
/// (`LeafCache`), when its slot holds a page that allows `access`;
/// anything else (a void slot, a refusal) takes the whole walk, which
/// also finds the keeper to tell.
fn walk_cached(k: &mut Kernel, ci: usize, va: u64, access: Access) -> Option<(u32, bool, bool)> {
    let c = &k.ctxs[ci];
    let l = c.leaf;
    if !l.valid || l.tgen != c.tgen || va & !(16 * PAGE - 1) != l.base {
        return None;
    }
    let n = k.objs.node_entry_at(l.node)?;
    if !n.used || n.oid != l.oid {
        return None;
    }
    let s = ((va / PAGE) % 16) as usize;
    let key = n.keys[s];
    if (l.red && s == 15) || key.key_type() != stet_keys::KeyType::Page {
        return None;
    }
    let ro = l.ro || key.is_ro();
    let allowed = match access {
        Access::Read => true,
        Access::Write => !ro,
        Access::Execute => ro,
    };
    if !allowed {
        return None;
    }
    let page = k.page_of(key).ok()?;
    Some((page, !ro, ro))
}

/// The frame at byte `addr` of the segment `entry` (a segment or page key),
/// for kernel reads and writes through a segment key. No keeper is
/// invoked: an invalid address is the invoker's error.
pub fn segment_frame(
    k: &mut Kernel,
    entry: Key,
    addr: u64,
    access: Access,
) -> Result<(FrameNumber, bool), u64> {
    let found = segment_walk(k, entry, addr, access)?;
    let page = k
        .page_of(found.page)
        .map_err(|_| stet_abi::fault::why::NOT_PRESENT)?;
    if access == Access::Write && found.writable {
        let f = k
            .page_write(page)
            .map_err(|_| stet_abi::fault::why::NOT_PRESENT)?;
        return Ok((f, true));
    }
    let f = k
        .objs
        .frame(page)
        .ok_or(stet_abi::fault::why::NOT_PRESENT)?;
    Ok((f, found.writable))
}

/// Walks the segment `entry` designates to the page holding byte `addr`
/// for `access`, no context's tables involved and no keeper invoked
/// (`Err`: why it is invalid).
pub fn segment_walk(
    k: &mut Kernel,
    entry: Key,
    addr: u64,
    access: Access,
) -> Result<stet_segment::Found, u64> {
    let mut w = Walker {
        objs: &mut k.objs,
        pool: &mut k.pool,
        store: &mut k.store,
        ctx: None,
        top: 0,
        va: 0,
        root_oid: None,
        depth: 0,
        root_below: false,
        last: 0,
        from: None,
    };
    stet_segment::walk(&mut w, entry, addr, access, &mut |_| {}).map_err(|i| i.why)
}

/// Makes sure context `ci` has a page-table root, and returns it.
pub fn ensure_tables(k: &mut Kernel, ci: usize) -> Result<&UserRoot, MemFault> {
    if k.ctxs[ci].tables.is_none() {
        let r = match UserRoot::new(&mut k.pool) {
            Some(r) => r,
            None => {
                flush_all(k);
                UserRoot::new(&mut k.pool).ok_or(MemFault::NoSpace)?
            }
        };
        k.ctxs[ci].tables = Some(r);
        // The first domain the scheduler runs after a restart gets its page
        // tables here (the restart benchmark's end).
        crate::store::bench::resuming(k);
    }
    k.ctxs[ci].tables.as_ref().ok_or(MemFault::NoSpace)
}

/// Maps `frame` at `va` in context `ci`'s tables (made by `ensure_tables`).
fn map_in(
    k: &mut Kernel,
    ci: usize,
    va: u64,
    frame: FrameNumber,
    perm: UserPerm,
) -> Result<(), MapError> {
    match &k.ctxs[ci].tables {
        Some(r) => r.map(va, frame, perm, &mut k.pool),
        None => Err(MapError::NoMemory),
    }
}

/// Resolves a fault (or a kernel access) at `va`: walks the segment and
/// maps the page. Returns the frame and whether it is mapped writable.
///
/// A page is mapped writable only for a write: that is how the store learns
/// a page is dirty (and, during a checkpoint, gives the writer its copy
/// first). A read maps it read-only even where the segment allows writes;
/// the first write then faults once more and upgrades the mapping.
pub fn resolve(
    k: &mut Kernel,
    ci: usize,
    va: u64,
    access: Access,
) -> Result<(FrameNumber, bool), MemFault> {
    let (page, writable, executable) = walk(k, ci, va, access)?;
    let write = writable && access == Access::Write;
    let frame = if write {
        k.page_write(page).map_err(|_| MemFault::NoSpace)?
    } else {
        k.objs.frame(page).ok_or(MemFault::NoSpace)?
    };
    let tgen = k.ctxs[ci].tgen;
    k.objs
        .mark_page_mapped(page, ci, tgen, (top(va), page_at(va)), live(k.ctxs));
    let perm = UserPerm {
        write,
        exec: executable,
    };
    ensure_tables(k, ci)?;
    if map_in(k, ci, va & !(PAGE - 1), frame, perm).is_err() {
        // Out of frames for page tables: drop every table and retry once.
        flush_all(k);
        ensure_tables(k, ci)?;
        map_in(k, ci, va & !(PAGE - 1), frame, perm).map_err(|_| MemFault::NoSpace)?;
    }
    Ok((frame, write))
}

/// The frame behind `va` in context `ci`, for a kernel read or write.
#[inline]
fn frame_for(k: &mut Kernel, ci: usize, va: u64, write: bool) -> Result<FrameNumber, MemFault> {
    if let Some(r) = &k.ctxs[ci].tables {
        if let Some((f, w)) = r.lookup(va & !(PAGE - 1)) {
            if w || !write {
                return Ok(f);
            }
        }
    }
    let access = if write { Access::Write } else { Access::Read };
    resolve(k, ci, va, access).map(|(f, _)| f)
}

/// Checks that `[va, va + len)` is readable by `ci` (at most two pages for
/// a 4096-byte string), faulting pages in as needed.
pub fn check_readable(k: &mut Kernel, ci: usize, va: u64, len: usize) -> Result<(), MemFault> {
    if len == 0 {
        return Ok(());
    }
    let end = va.checked_add(len as u64 - 1).ok_or(MemFault::NoSpace)?;
    let mut p = va & !(PAGE - 1);
    while p <= end {
        frame_for(k, ci, p, false)?;
        p += PAGE;
    }
    Ok(())
}

/// Copies from `ci`'s memory at `va` into `out`.
pub fn read_user(k: &mut Kernel, ci: usize, va: u64, out: &mut [u8]) -> Result<(), MemFault> {
    let mut done = 0;
    while done < out.len() {
        let a = va.checked_add(done as u64).ok_or(MemFault::NoSpace)?;
        let f = frame_for(k, ci, a, false)?;
        let off = (a % PAGE) as usize;
        let n = (PAGE as usize - off).min(out.len() - done);
        phys::read_frame(f, off, &mut out[done..done + n]);
        done += n;
    }
    Ok(())
}

/// Copies `data` into `ci`'s memory at `va`. Returns the bytes written
/// before the first invalid page.
pub fn write_user(k: &mut Kernel, ci: usize, va: u64, data: &[u8]) -> usize {
    let mut done = 0;
    while done < data.len() {
        let Some(a) = va.checked_add(done as u64) else {
            break;
        };
        let Ok(f) = frame_for(k, ci, a, true) else {
            break;
        };
        let off = (a % PAGE) as usize;
        let n = (PAGE as usize - off).min(data.len() - done);
        phys::write_frame(f, off, &data[done..done + n]);
        done += n;
    }
    done
}

/// Writes all of `data` (at most a page) to `ci`'s memory at `va`, or
/// nothing: both pages are found writable before a byte is written. For
/// the fast paths, which must not change anything when they fall back.
pub fn write_user_all(k: &mut Kernel, ci: usize, va: u64, data: &[u8]) -> bool {
    let Some(last) = va.checked_add(data.len() as u64 - 1) else {
        return false;
    };
    let Ok(f0) = frame_for(k, ci, va, true) else {
        return false;
    };
    let off = (va % PAGE) as usize;
    let first = (PAGE as usize - off).min(data.len());
    if first < data.len() {
        let Ok(f1) = frame_for(k, ci, last, true) else {
            return false;
        };
        phys::write_frame(f1, 0, &data[first..]);
    }
    phys::write_frame(f0, off, &data[..first]);
    true
}

/// Copies `len` bytes from `src` at `sva` to `dst` at `dva`, page by page.
/// The source was checked readable; returns the bytes the destination
/// accepted.
pub fn copy_between(
    k: &mut Kernel,
    src: usize,
    sva: u64,
    dst: usize,
    dva: u64,
    len: usize,
) -> usize {
    let mut done = 0;
    while done < len {
        let (Some(s), Some(d)) = (sva.checked_add(done as u64), dva.checked_add(done as u64))
        else {
            break;
        };
        let (Ok(sf), Ok(df)) = (frame_for(k, src, s, false), frame_for(k, dst, d, true)) else {
            break;
        };
        let (so, doff) = ((s % PAGE) as usize, (d % PAGE) as usize);
        let n = (PAGE as usize - so)
            .min(PAGE as usize - doff)
            .min(len - done);
        phys::copy_frames(sf, so, df, doff, n);
        done += n;
    }
    done
}

/// Slot `slot` of node `i` is about to change (a key in it replaced), or
/// (`None`) the whole node (destroyed): the contexts whose tables were
/// built through it lose what was built through that slot (or node) —
/// the addresses it covers, where the record knows the one place the
/// context maps the node (`Mappers`, `At`); else the top-level entries it
/// was mapped under. Everyone else keeps theirs.
///
/// A node that keeps some mapping (one slot changed) stays marked: the
/// rest is still mapped through it (unmarked, the next change to another
/// slot would discard nothing, and a keeper's window moved to a new
/// process after its exec window moved would still show the old one).
pub fn unmap_node(k: &mut Kernel, i: u32, slot: Option<usize>) {
    if k.objs.node_mapped(i) {
        let m = k.objs.node_entry(i).mappers;
        let change = match slot {
            Some(s) => Change::Slot(i, s),
            None => Change::Whole,
        };
        if !discard_mappers(k, m, change) {
            k.objs.unmark_node(i);
        }
    }
}

/// Page slot `i` is about to be destroyed: as [`unmap_node`].
pub fn unmap_page(k: &mut Kernel, i: u32) {
    if k.objs.page_mapped(i) {
        let m = k.objs.unmark_page(i);
        discard_mappers(k, m, Change::Page);
    }
}

/// What changed in an object that backs mappings.
#[derive(Clone, Copy)]
enum Change {
    /// Slot `.1` of node `.0`.
    Slot(u32, usize),
    /// The whole node.
    Whole,
    /// A page.
    Page,
}

/// Discards what the records in `m` say was built through an object: for
/// a record that knows where its context maps the object, the addresses
/// the change covers; else the top-level entries, and when the change is
/// one slot of a context's space root only the entries under that slot
/// (a UNIX keeper given a new window keeps the tables of its own text,
/// stack and heap). → whether some mapping through the object survives.
fn discard_mappers(k: &mut Kernel, m: crate::obj::Mappers, change: Change) -> bool {
    if m.many() {
        flush_all(k);
        return false;
    }
    let mut survives = false;
    for r in m.records() {
        let c = &k.ctxs[r.ctx];
        if !c.used || c.tgen != r.tgen {
            continue;
        }
        if let Some(at) = r.at {
            let slot = match change {
                Change::Slot(_, s) => Some(s),
                Change::Whole => None,
                Change::Page => Some(0),
            };
            let (start, end) = at.slot_range(slot, crate::arch::paging::USER_END);
            survives |= matches!(change, Change::Slot(..));
            domain::discard_range(k, r.ctx, start, end);
            k.targeted_flushes += 1;
            continue;
        }
        let (mut lo, mut hi) = (r.lo, r.hi);
        if let Change::Slot(i, slot) = change {
            if !c.root_below {
                let space = k.objs.node_entry(c.root).keys[root::SPACE];
                let n = k.objs.node_entry(i);
                if let Some((a, b)) = slot_tops(space, n.oid, n.version, slot) {
                    survives |= r.lo < a || r.hi > b;
                    (lo, hi) = (lo.max(a), hi.min(b));
                    if lo > hi {
                        continue;
                    }
                }
            }
        }
        if (lo, hi) == (0, 255) {
            domain::discard_tables(k, r.ctx);
        } else {
            domain::discard_top_entries(k, r.ctx, lo, hi);
        }
        k.targeted_flushes += 1;
    }
    survives
}

/// The top-level entries slot `slot` of a space root covers, when `space`
/// (a context's space key) designates the node `oid`/`version` and its
/// slots are 512 GiB or larger (size code 8 and up); else `None`.
fn slot_tops(space: Key, oid: u64, version: u32, slot: usize) -> Option<(u8, u8)> {
    if space.key_type() != stet_keys::KeyType::Segment
        || space.oid() != oid
        || space.version() != version
        || space.lss() < 8
    {
        return None;
    }
    // Slot span in top-level entries: 16^(lss-1) pages of 2^12 bytes over
    // 2^39 bytes per entry.
    let shift = 4 * (space.lss() as u32 - 1) + 12 - 39;
    let first = (slot as u64) << shift;
    let last = first + (1u64 << shift) - 1;
    (first < 256).then(|| (first as u8, last.min(255) as u8))
}

/// Discards every hardware page table (they are rebuilt on demand). Called
/// when a node or page that backs a mapping changes: simpler than tracking
/// which mapping came from which slot, and rare (growing a segment fills
/// void slots, which needs no flush).
pub fn flush_all(k: &mut Kernel) {
    for ci in 0..k.ctxs.len() {
        if k.ctxs[ci].used {
            domain::discard_tables(k, ci);
        }
    }
    k.objs.flushed();
    k.flushes += 1;
}
