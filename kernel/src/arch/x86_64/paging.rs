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
use super::phys::{to_virt, PHYS_OFFSET};
use stet_physmem::boot::BootAllocator;
use stet_physmem::pool::{FrameNumber, FramePool};
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

/// The kernel's own PML4 (physical), and MMIO window state.
struct KernelTables {
    pml4: u64,
    mmio_pt: u64,
    mmio_next: u64,
    nx: u64,
    global: u64,
}

static KTABLES: super::kcell::KCell<KernelTables> = super::kcell::KCell::new(KernelTables {
    pml4: 0,
    mmio_pt: 0,
    mmio_next: 0,
    nx: 0,
    global: 0,
});

fn table(pa: u64) -> *mut [u64; 512] {
    to_virt(pa) as *mut [u64; 512]
}

/// Reads entry `i` of the table at `pa`.
fn get(pa: u64, i: usize) -> u64 {
    // SAFETY: `pa` is a page-table frame owned by the kernel (boot
    // allocator or pool), mapped by the direct map; `i < 512`.
    unsafe { (*table(pa))[i] }
}

/// Writes entry `i` of the table at `pa`.
fn set(pa: u64, i: usize, v: u64) {
    // SAFETY: as in `get`; page-table frames are never referenced by Rust
    // code, only through these two accessors.
    unsafe { (*table(pa))[i] = v }
}

fn boot_table(alloc: &mut BootAllocator) -> u64 {
    let pa = alloc
        .alloc(4096, 4096)
        .expect("boot: out of memory for page tables");
    for i in 0..512 {
        set(pa, i, 0);
    }
    pa
}

fn idx(va: u64, level: u32) -> usize {
    ((va >> (12 + 9 * level)) & 511) as usize
}

/// Builds the kernel's page tables and switches to them. `max_phys` is one
/// past the highest RAM address.
pub fn init(alloc: &mut BootAllocator, layout: &KernelLayout, f: &Features, max_phys: u64) {
    let nx = if f.nx { NX } else { 0 };
    let global = if f.pge { G } else { 0 };
    let pml4 = boot_table(alloc);

    // Direct map: all of RAM and at least the low 4 GiB.
    let gib = max_phys.max(4 << 30).div_ceil(1 << 30);
    for g in 0..gib {
        let va = PHYS_OFFSET + (g << 30);
        let pdpt = ensure(alloc, pml4, idx(va, 3));
        if f.huge_1g {
            set(pdpt, idx(va, 2), (g << 30) | P | W | PS | global | nx);
        } else {
            let pd = boot_table(alloc);
            for i in 0..512u64 {
                set(
                    pd,
                    i as usize,
                    ((g << 30) + (i << 21)) | P | W | PS | global | nx,
                );
            }
            set(pdpt, idx(va, 2), pd | P | W);
        }
    }

    // Kernel image, 4 KiB pages with per-section rights.
    let map = |alloc: &mut BootAllocator, (s, e): (u64, u64), flags: u64| {
        let mut va = s;
        while va < e {
            if va != layout.stack_guard {
                let pt = walk_create(alloc, pml4, va);
                set(pt, idx(va, 0), (va - KERNEL_BASE) | P | global | flags);
            }
            va += 4096;
        }
    };
    map(alloc, layout.text, 0);
    map(alloc, layout.rodata, nx);
    map(alloc, layout.data, W | nx);

    // MMIO window: one page table, filled at boot by `map_mmio`.
    let mmio_pt = walk_create(alloc, pml4, MMIO_BASE);

    // Every kernel-half PML4 entry must exist now: user spaces copy them.
    // SAFETY: boot, single-threaded.
    let k = unsafe { KTABLES.get() };
    *k = KernelTables {
        pml4,
        mmio_pt,
        mmio_next: 0,
        nx,
        global,
    };
    // SAFETY: the new tables map the kernel image, stacks and direct map
    // exactly where the boot tables did (minus the identity map, which
    // nothing uses any more), so execution continues seamlessly.
    unsafe {
        Cr3::write(
            PhysFrame::from_start_address_unchecked(PhysAddr::new(pml4)),
            Cr3Flags::empty(),
        )
    };
}

fn ensure(alloc: &mut BootAllocator, parent: u64, i: usize) -> u64 {
    let e = get(parent, i);
    if e & P != 0 {
        return e & ADDR;
    }
    let t = boot_table(alloc);
    set(parent, i, t | P | W);
    t
}

fn walk_create(alloc: &mut BootAllocator, pml4: u64, va: u64) -> u64 {
    let pdpt = ensure(alloc, pml4, idx(va, 3));
    let pd = ensure(alloc, pdpt, idx(va, 2));
    ensure(alloc, pd, idx(va, 1))
}

/// Maps one page of device memory, uncached, at boot. Returns its address.
pub fn map_mmio(pa: u64) -> u64 {
    // SAFETY: boot, single-threaded; called before user programs exist.
    let k = unsafe { KTABLES.get() };
    assert!(k.mmio_next < MMIO_SLOTS, "MMIO window full");
    let va = MMIO_BASE + k.mmio_next * 4096;
    set(
        k.mmio_pt,
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
pub fn map_mmio_range(pa: u64, len: u64) -> u64 {
    let first = pa & !0xfff;
    let end = pa + len.max(1);
    let va = map_mmio(first);
    let mut page = first + 4096;
    while page < end {
        map_mmio(page);
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

/// A user address space's top-level table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserRoot(FrameNumber);

fn is_user(va: u64) -> bool {
    va < 0x0000_8000_0000_0000
}

fn pool_table(pool: &mut FramePool<'_>) -> Option<u64> {
    let f = pool.alloc()?;
    super::phys::zero_frame(f);
    Some(f.addr())
}

impl UserRoot {
    /// The root whose top-level table is frame `f` (made by [`UserRoot::new`]).
    pub fn from_frame(f: FrameNumber) -> Self {
        UserRoot(f)
    }

    /// The top-level table's frame.
    pub fn frame(&self) -> FrameNumber {
        self.0
    }

    /// A new, empty address space sharing the kernel half.
    pub fn new(pool: &mut FramePool<'_>) -> Option<Self> {
        let root = pool_table(pool)?;
        // SAFETY: KTABLES is written only at boot; this is a read.
        let kpml4 = unsafe { (*KTABLES.as_ptr()).pml4 };
        for i in 256..512 {
            set(root, i, get(kpml4, i));
        }
        Some(UserRoot(FrameNumber((root / 4096) as u32)))
    }

    fn pa(&self) -> u64 {
        self.0.addr()
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
        let mut t = self.pa();
        for level in (1..=3).rev() {
            let i = idx(va, level);
            let e = get(t, i);
            t = if e & P != 0 {
                e & ADDR
            } else {
                let n = pool_table(pool).ok_or(MapError::NoMemory)?;
                set(t, i, n | P | W | U);
                n
            };
        }
        let i = idx(va, 0);
        let old = get(t, i);
        // SAFETY: KTABLES is written only at boot.
        let nx = unsafe { (*KTABLES.as_ptr()).nx };
        let mut e = frame.addr() | P | U;
        if perm.write {
            e |= W;
        }
        if !perm.exec {
            e |= nx;
        }
        set(t, i, e);
        if old & P != 0 && self.is_active() {
            // Replacing a mapping (a read-only page that is now writable,
            // or a different page): the old translation may be cached.
            x86_64::instructions::tlb::flush(x86_64::VirtAddr::new(va));
        }
        Ok(())
    }

    fn leaf(&self, va: u64) -> Option<(u64, usize)> {
        if !is_user(va) {
            return None;
        }
        let mut t = self.pa();
        for level in (1..=3).rev() {
            let e = get(t, idx(va, level));
            if e & P == 0 {
                return None;
            }
            t = e & ADDR;
        }
        Some((t, idx(va, 0)))
    }

    /// The frame mapped at `va` and whether it is writable.
    pub fn lookup(&self, va: u64) -> Option<(FrameNumber, bool)> {
        let (t, i) = self.leaf(va)?;
        let e = get(t, i);
        (e & P != 0).then_some((FrameNumber(((e & ADDR) / 4096) as u32), e & W != 0))
    }

    fn is_active(&self) -> bool {
        Cr3::read().0.start_address().as_u64() == self.pa()
    }

    /// Makes this the CPU's address space.
    pub fn activate(&self) {
        if !self.is_active() {
            // SAFETY: the root shares the kernel half with every other root,
            // so the kernel keeps running; the user half is this program's.
            unsafe {
                Cr3::write(
                    PhysFrame::from_start_address_unchecked(PhysAddr::new(self.pa())),
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
            // SAFETY: KTABLES is written only at boot; the kernel tables map
            // everything the kernel needs.
            let k = unsafe { (*KTABLES.as_ptr()).pml4 };
            // SAFETY: see above.
            unsafe {
                Cr3::write(
                    PhysFrame::from_start_address_unchecked(PhysAddr::new(k)),
                    Cr3Flags::empty(),
                )
            };
        }
        free_level(self.pa(), 3, 256, pool);
        let _ = pool.free(self.0);
    }
}

impl UserRoot {
    /// Frees the page tables under top-level entries `lo..=hi` (< 256) and
    /// clears those entries; the rest of the space stays mapped.
    pub fn discard_top(&self, lo: usize, hi: usize, pool: &mut FramePool<'_>) {
        let root = self.pa();
        for i in lo..=hi.min(255) {
            let e = get(root, i);
            if e & P == 0 {
                continue;
            }
            set(root, i, 0);
            let child = e & ADDR;
            free_level(child, 2, 512, pool);
            let _ = pool.free(FrameNumber((child / 4096) as u32));
        }
        if self.is_active() {
            // Translations under the cleared entries may be cached: a
            // reload of CR3 drops every non-global one.
            x86_64::instructions::tlb::flush_all();
        }
    }
}

fn free_level(t: u64, level: u32, entries: usize, pool: &mut FramePool<'_>) {
    if level == 0 {
        return;
    }
    // A process's tables are sparse: eight entries are tested at once
    // (every exit and exec scans thousands of them).
    for group in (0..entries).step_by(8) {
        let any = (group..group + 8).fold(0, |acc, i| acc | get(t, i));
        if any & P == 0 {
            continue;
        }
        for i in group..group + 8 {
            let e = get(t, i);
            if e & P == 0 {
                continue;
            }
            let child = e & ADDR;
            free_level(child, level - 1, 512, pool);
            let _ = pool.free(FrameNumber((child / 4096) as u32));
        }
    }
}
