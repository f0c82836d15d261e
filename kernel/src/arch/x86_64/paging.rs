//! x86_64 four-level page tables.
//!
//! The kernel half (PML4 entries 256–511) is built once at boot and never
//! changes afterwards, so every user address space simply copies those 256
//! entries when it is created. It holds:
//!
//! | range | what |
//! |---|---|
//! | `0xffff_8000_0000_0000` + pa | direct map of RAM and the low 4 GiB (NX, global) |
//! | `0xffff_ff00_0000_0000` | MMIO window (uncached), e.g. the local APIC |
//! | `0xffff_ffff_8000_0000` + pa | the kernel image: text RX, rodata R, data RW (NX), with an unmapped guard page below the kernel stack |
//!
//! User page tables are a cache of the domain's segment tree, built
//! lazily on faults (`memory.rs`); the kernel may discard them at any
//! time.

use super::boot::{KernelLayout, KERNEL_BASE};
use super::cpu::Features;
use super::phys::{frame_at, to_virt, FrameNumber, FramePool, PHYS_OFFSET};
use stet_physmem::boot::BootAllocator;
use x86_64::registers::control::{Cr3, Cr3Flags};
use x86_64::structures::paging::PhysFrame;
use x86_64::PhysAddr;

const P: u64 = 1;
const W: u64 = 1 << 1;
const U: u64 = 1 << 2;
const PWT: u64 = 1 << 3;
const PCD: u64 = 1 << 4;
const PS: u64 = 1 << 7;
const G: u64 = 1 << 8;
const NX: u64 = 1 << 63;
const ADDR: u64 = 0x000f_ffff_ffff_f000;

/// Virtual base of the MMIO window.
pub const MMIO_BASE: u64 = 0xffff_ff00_0000_0000;
const MMIO_SLOTS: u64 = 512;

/// The kernel's own PML4, and MMIO window state (`None` until `init`).
struct KernelTables {
    pml4: Option<Table>,
    mmio_pt: Option<Table>,
    mmio_next: u64,
    nx: u64,
    global: u64,
}

static KTABLES: super::kcell::KCell<KernelTables> = super::kcell::KCell::new(KernelTables {
    pml4: None,
    mmio_pt: None,
    mmio_next: 0,
    nx: 0,
    global: 0,
});

/// The kernel's tables, read (written only by `init`, at boot).
fn ktables() -> &'static KernelTables {
    // SAFETY: written once by `init` before any reader runs, read-only
    // afterwards, and `map_mmio` (boot only) changes only the slot count.
    unsafe { &*KTABLES.as_ptr() }
}

/// A page table the kernel owns, by physical address: made only here, from
/// boot memory or a pool frame, or found through an entry of another one.
/// Page-table frames are never referenced by Rust code, only through
/// these accessors.
#[derive(Clone, Copy, Debug)]
struct Table(u64);

impl Table {
    /// A zeroed table in boot memory.
    ///
    /// # Safety
    /// `alloc` hands out only RAM that nothing else uses.
    unsafe fn boot(alloc: &mut BootAllocator) -> Table {
        let pa = alloc
            .alloc(4096, 4096)
            .expect("boot: out of memory for page tables");
        let t = Table(pa);
        for i in 0..512 {
            t.set(i, 0);
        }
        t
    }

    /// A zeroed table in a pool frame (user tables).
    fn pool(pool: &mut FramePool<'_>) -> Option<Table> {
        let f = pool.alloc()?;
        super::phys::zero_frame(f);
        Some(Table(f.addr()))
    }

    fn ptr(self) -> *mut [u64; 512] {
        to_virt(self.0) as *mut [u64; 512]
    }

    /// Entry `i`.
    #[inline(always)]
    fn get(self, i: usize) -> u64 {
        // SAFETY: a table the kernel owns (type doc), mapped by the direct
        // map; the index is bounds-checked.
        unsafe { (*self.ptr())[i] }
    }

    /// Writes entry `i`.
    #[inline(always)]
    fn set(self, i: usize, v: u64) {
        // SAFETY: as in `get`.
        unsafe { (*self.ptr())[i] = v }
    }

    /// The table entry `i` points to, if present and not a large page
    /// (kernel tables: the direct map uses large pages). Only for tables
    /// above the leaves: there bit 7 is the large-page bit, and every other
    /// present entry this module writes is a table.
    fn child(self, i: usize) -> Option<Table> {
        let e = self.get(i);
        (e & P != 0 && e & PS == 0).then_some(Table(e & ADDR))
    }

    /// The table entry `i` of a *user* table above the leaves points to, if
    /// present: user tables hold no large pages (`UserRoot::map` writes
    /// 4 KiB leaves and tables only), so every present entry is a table.
    #[inline(always)]
    fn user_child(self, i: usize) -> Option<Table> {
        let e = self.get(i);
        (e & P != 0).then_some(Table(e & ADDR))
    }
}

fn idx(va: u64, level: u32) -> usize {
    ((va >> (12 + 9 * level)) & 511) as usize
}

/// Builds the kernel's page tables and switches to them. `max_phys` is one
/// past the highest RAM address.
///
/// # Safety
/// Boot, once: `alloc` hands out only RAM that nothing else uses (the
/// tables are written there), and `layout` is the running kernel's.
pub(in crate::arch) unsafe fn init(
    alloc: &mut BootAllocator,
    layout: &KernelLayout,
    f: &Features,
    max_phys: u64,
) {
    let nx = if f.nx { NX } else { 0 };
    let global = if f.pge { G } else { 0 };
    // SAFETY: the caller's contract on `alloc` (so for every `Table::boot`,
    // `ensure` and `walk_create` below).
    let pml4 = unsafe { Table::boot(alloc) };

    // Direct map: all of RAM and at least the low 4 GiB.
    let gib = max_phys.max(4 << 30).div_ceil(1 << 30);
    for g in 0..gib {
        let va = PHYS_OFFSET + (g << 30);
        // SAFETY: see above.
        let pdpt = unsafe { ensure(alloc, pml4, idx(va, 3)) };
        if f.huge_1g {
            pdpt.set(idx(va, 2), (g << 30) | P | W | PS | global | nx);
        } else {
            // SAFETY: see above.
            let pd = unsafe { Table::boot(alloc) };
            for i in 0..512u64 {
                pd.set(
                    i as usize,
                    ((g << 30) + (i << 21)) | P | W | PS | global | nx,
                );
            }
            pdpt.set(idx(va, 2), pd.0 | P | W);
        }
    }

    // Kernel image, 4 KiB pages with per-section rights.
    let map = |alloc: &mut BootAllocator, (s, e): (u64, u64), flags: u64| {
        let mut va = s;
        while va < e {
            if va != layout.stack_guard {
                // SAFETY: see above.
                let pt = unsafe { walk_create(alloc, pml4, va) };
                pt.set(idx(va, 0), (va - KERNEL_BASE) | P | global | flags);
            }
            va += 4096;
        }
    };
    map(alloc, layout.text, 0);
    map(alloc, layout.rodata, nx);
    map(alloc, layout.data, W | nx);

    // MMIO window: one page table, filled at boot by `map_mmio`.
    // SAFETY: see above.
    let mmio_pt = unsafe { walk_create(alloc, pml4, MMIO_BASE) };

    // Every kernel-half PML4 entry must exist now: user spaces copy them.
    // SAFETY: boot, single-threaded.
    let k = unsafe { KTABLES.get() };
    *k = KernelTables {
        pml4: Some(pml4),
        mmio_pt: Some(mmio_pt),
        mmio_next: 0,
        nx,
        global,
    };
    // SAFETY: the new tables map the kernel image, stacks and direct map
    // exactly where the boot tables did (minus the identity map, which
    // nothing uses any more), so execution continues seamlessly.
    unsafe {
        Cr3::write(
            PhysFrame::from_start_address_unchecked(PhysAddr::new(pml4.0)),
            Cr3Flags::empty(),
        )
    };
}

/// The table under entry `i` of `parent`, made in boot memory if missing.
///
/// # Safety
/// As for [`Table::boot`].
unsafe fn ensure(alloc: &mut BootAllocator, parent: Table, i: usize) -> Table {
    if let Some(t) = parent.child(i) {
        return t;
    }
    // SAFETY: the caller's contract.
    let t = unsafe { Table::boot(alloc) };
    parent.set(i, t.0 | P | W);
    t
}

/// The last-level table for `va`, made in boot memory where missing.
///
/// # Safety
/// As for [`Table::boot`].
unsafe fn walk_create(alloc: &mut BootAllocator, pml4: Table, va: u64) -> Table {
    // SAFETY: the caller's contract, for each level.
    unsafe {
        let pdpt = ensure(alloc, pml4, idx(va, 3));
        let pd = ensure(alloc, pdpt, idx(va, 2));
        ensure(alloc, pd, idx(va, 1))
    }
}

/// Maps one page of device memory, uncached, at boot. Returns its address.
///
/// # Safety
/// Boot, single-threaded. `pa` must be device memory (registers), never
/// RAM: an uncached alias of RAM the direct map caches would give two
/// memory types to one page.
pub(in crate::arch) unsafe fn map_mmio(pa: u64) -> u64 {
    // SAFETY: boot, single-threaded (the caller's contract).
    let k = unsafe { KTABLES.get() };
    let pt = k.mmio_pt.expect("MMIO mapped before the kernel's tables");
    assert!(k.mmio_next < MMIO_SLOTS, "MMIO window full");
    let va = MMIO_BASE + k.mmio_next * 4096;
    pt.set(
        idx(va, 0),
        (pa & ADDR) | P | W | PCD | PWT | k.nx | k.global,
    );
    k.mmio_next += 1;
    x86_64::instructions::tlb::flush(x86_64::VirtAddr::new(va));
    va
}

/// Maps `len` bytes of device memory at `pa` (any alignment), uncached, at
/// boot, on consecutive pages of the MMIO window. Returns the address `pa`
/// is mapped at.
///
/// # Safety
/// As for [`map_mmio`], for every page of the range.
pub(in crate::arch) unsafe fn map_mmio_range(pa: u64, len: u64) -> u64 {
    let first = pa & !0xfff;
    let end = pa + len.max(1);
    // SAFETY: the caller's contract, page by page.
    let va = unsafe { map_mmio(first) };
    let mut page = first + 4096;
    while page < end {
        // SAFETY: as above.
        unsafe { map_mmio(page) };
        page += 4096;
    }
    va + (pa & 0xfff)
}

/// Rights of a user mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserPerm {
    /// Writable.
    pub write: bool,
    /// Executable.
    pub exec: bool,
}

/// Errors from mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapError {
    /// The frame pool is empty.
    NoMemory,
    /// Not a user address.
    NotUser,
}

/// A user address space's top-level table, and through it every table of
/// the space. It owns them: it is neither `Copy` nor `Clone`, and only
/// [`UserRoot::new`] makes one, so what reaches CR3 is always a root this
/// module built, and a discarded root cannot be activated again.
#[derive(Debug)]
pub struct UserRoot(FrameNumber);

/// One past the highest user address.
pub const USER_END: u64 = 0x0000_8000_0000_0000;

fn is_user(va: u64) -> bool {
    va < USER_END
}

impl UserRoot {
    /// A new, empty address space sharing the kernel half (`None`: no
    /// frame for it).
    pub fn new(pool: &mut FramePool<'_>) -> Option<Self> {
        let kpml4 = ktables().pml4?;
        let f = pool.alloc()?;
        super::phys::zero_frame(f);
        let root = Table(f.addr());
        for i in 256..512 {
            root.set(i, kpml4.get(i));
        }
        Some(UserRoot(f))
    }

    #[inline(always)]
    fn table(&self) -> Table {
        Table(self.0.addr())
    }

    /// Maps `frame` at `va` (page aligned) with rights `perm`.
    pub fn map(
        &self,
        va: u64,
        frame: FrameNumber,
        perm: UserPerm,
        pool: &mut FramePool<'_>,
    ) -> Result<(), MapError> {
        if !is_user(va) {
            return Err(MapError::NotUser);
        }
        let mut t = self.table();
        for level in (1..=3).rev() {
            let i = idx(va, level);
            t = match t.user_child(i) {
                Some(c) => c,
                None => {
                    let n = Table::pool(pool).ok_or(MapError::NoMemory)?;
                    t.set(i, n.0 | P | W | U);
                    n
                }
            };
        }
        let i = idx(va, 0);
        let old = t.get(i);
        let mut e = frame.addr() | P | U;
        if perm.write {
            e |= W;
        }
        if !perm.exec {
            e |= ktables().nx;
        }
        t.set(i, e);
        if old & P != 0 && self.is_active() {
            // Replacing a mapping (a read-only page that is now writable,
            // or a different page): the old translation may be cached.
            x86_64::instructions::tlb::flush(x86_64::VirtAddr::new(va));
        }
        Ok(())
    }

    #[inline(always)]
    fn leaf(&self, va: u64) -> Option<(Table, usize)> {
        if !is_user(va) {
            return None;
        }
        let mut t = self.table();
        for level in (1..=3).rev() {
            t = t.user_child(idx(va, level))?;
        }
        Some((t, idx(va, 0)))
    }

    /// The frame mapped at `va` and whether it is writable.
    #[inline]
    pub fn lookup(&self, va: u64) -> Option<(FrameNumber, bool)> {
        let (t, i) = self.leaf(va)?;
        let e = t.get(i);
        if e & P == 0 {
            return None;
        }
        // SAFETY: leaf entries of user tables are written only by `map`,
        // from a frame number its caller held (a page object's frame).
        let f = unsafe { frame_at(e & ADDR) }?;
        Some((f, e & W != 0))
    }

    #[inline(always)]
    fn is_active(&self) -> bool {
        Cr3::read().0.start_address().as_u64() == self.0.addr()
    }

    /// Makes this the CPU's address space.
    #[inline]
    pub fn activate(&self) {
        if !self.is_active() {
            // SAFETY: the root was built by `new` (the type doc) and shares
            // the kernel half with every other root, so the kernel keeps
            // running; the user half is this program's.
            unsafe {
                Cr3::write(
                    PhysFrame::from_start_address_unchecked(PhysAddr::new(self.0.addr())),
                    Cr3Flags::empty(),
                )
            };
        }
    }

    /// Frees the page tables of this space, then the root; the pages they
    /// mapped belong to page objects and are left alone. The kernel switches
    /// to its own tables first if this space is active.
    pub fn discard(self, pool: &mut FramePool<'_>) {
        if self.is_active() {
            if let Some(k) = ktables().pml4 {
                // SAFETY: the kernel tables map everything the kernel needs.
                unsafe {
                    Cr3::write(
                        PhysFrame::from_start_address_unchecked(PhysAddr::new(k.0)),
                        Cr3Flags::empty(),
                    )
                };
            }
        }
        free_level(self.table(), 3, 256, pool);
        let _ = pool.free(self.0);
    }

    /// Calls `f(va, physical address, writable)` for every page this space
    /// maps (the invariant walker checks each against its segment).
    pub fn for_each_mapping(&self, f: &mut dyn FnMut(u64, u64, bool)) {
        fn visit(t: Table, level: u32, base: u64, n: usize, f: &mut dyn FnMut(u64, u64, bool)) {
            for i in 0..n {
                let e = t.get(i);
                if e & P == 0 {
                    continue;
                }
                let va = base + ((i as u64) << (12 + 9 * level));
                if level == 0 {
                    f(va, e & ADDR, e & W != 0);
                } else if let Some(c) = t.user_child(i) {
                    visit(c, level - 1, va, 512, f);
                }
            }
        }
        visit(self.table(), 3, 0, 256, f);
    }

    /// Unmaps `[start, end)` (page aligned; clamped to the user half):
    /// the mappings made through one slot of a node that changed, the
    /// rest of the space staying mapped.
    pub fn discard_range(&self, start: u64, end: u64, pool: &mut FramePool<'_>) {
        let end = end.min(USER_END);
        if start >= end {
            return;
        }
        discard_in(self.table(), 3, 0, start, end, pool);
        if self.is_active() {
            let pages = (end - start) / 4096;
            if pages <= 32 {
                // INVLPG also drops cached upper-level entries (of tables
                // freed above).
                for p in 0..pages {
                    x86_64::instructions::tlb::flush(x86_64::VirtAddr::new(start + p * 4096));
                }
            } else {
                x86_64::instructions::tlb::flush_all();
            }
        }
    }

    /// Frees the page tables under top-level entries `lo..=hi` (< 256) and
    /// clears those entries; the rest of the space stays mapped.
    pub fn discard_top(&self, lo: usize, hi: usize, pool: &mut FramePool<'_>) {
        let root = self.table();
        for i in lo..=hi.min(255) {
            if root.get(i) & P == 0 {
                continue;
            }
            let child = root.user_child(i);
            root.set(i, 0);
            if let Some(c) = child {
                free_level(c, 2, 512, pool);
                free_table(c, pool);
            }
        }
        if self.is_active() {
            // Translations under the cleared entries may be cached: a
            // reload of CR3 drops every non-global one.
            x86_64::instructions::tlb::flush_all();
        }
    }
}

/// Clears the entries of table `t` (at `level`, its first address
/// `tbase`) that map `[start, end)`: a table wholly inside goes with
/// everything under it, one partly inside is visited. Tables left empty
/// stay (a later mapping reuses them; the space's discard frees them).
fn discard_in(t: Table, level: u32, tbase: u64, start: u64, end: u64, pool: &mut FramePool<'_>) {
    let size = 1u64 << (12 + 9 * level);
    let first = ((start.max(tbase) - tbase) / size) as usize;
    let last = ((end.min(tbase + 512 * size) - 1 - tbase) / size) as usize;
    for i in first..=last.min(511) {
        if t.get(i) & P == 0 {
            continue;
        }
        let (lo, hi) = (tbase + i as u64 * size, tbase + (i as u64 + 1) * size);
        if level == 0 {
            t.set(i, 0);
        } else if let Some(c) = t.user_child(i) {
            if start <= lo && hi <= end {
                t.set(i, 0);
                free_level(c, level - 1, 512, pool);
                free_table(c, pool);
            } else {
                discard_in(c, level - 1, lo, start, end, pool);
            }
        }
    }
}

/// Returns a user table (made by `Table::pool`) to the pool.
fn free_table(t: Table, pool: &mut FramePool<'_>) {
    // SAFETY: user tables below a root are made by `Table::pool` alone, so
    // `t` is a pool frame; its parent entry is gone or going.
    if let Some(f) = unsafe { frame_at(t.0) } {
        let _ = pool.free(f);
    }
}

fn free_level(t: Table, level: u32, entries: usize, pool: &mut FramePool<'_>) {
    if level == 0 {
        return;
    }
    // A process's tables are sparse: eight entries are tested at once
    // (every exit and exec scans thousands of them).
    for group in (0..entries).step_by(8) {
        let any = (group..group + 8).fold(0, |acc, i| acc | t.get(i));
        if any & P == 0 {
            continue;
        }
        for i in group..group + 8 {
            if let Some(c) = t.user_child(i) {
                free_level(c, level - 1, 512, pool);
                free_table(c, pool);
            }
        }
    }
}
