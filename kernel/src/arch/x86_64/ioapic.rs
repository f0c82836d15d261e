//! The I/O APIC, for the interrupts user-mode drivers receive (irq keys).
//!
//! Found at boot through the ACPI MADT (the `acpi` crate, without an
//! allocator): every I/O APIC's address and first global system interrupt
//! (GSI), and the ISA *interrupt source overrides* (on QEMU's `pc` and
//! `q35` machines ISA IRQ 0 is GSI 2, and a firmware may make a line
//! level-triggered or active-low). Each ISA line 0..16 is routed, masked,
//! to vector [`IRQ_BASE`] + line on this CPU's local APIC.
//!
//! The model (see `kobj/irq.rs`): when a line fires, the kernel masks it,
//! counts it and sends EOI; the count waits for the driver's `WAIT`, which
//! unmasks the line again. The counts live here, in atomics, because the
//! interrupt may arrive while the idle loop runs, without the kernel state.

use super::kcell::KCell;
use super::{apic, paging, phys};
use acpi::madt::{Madt, MadtEntry};
use acpi::{AcpiHandler, AcpiTables, PhysicalMapping};
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Vector of ISA line 0; line `n` uses `IRQ_BASE + n`.
pub const IRQ_BASE: u8 = 0x50;
/// ISA interrupt lines.
pub const LINES: usize = 16;
/// Most I/O APICs kept.
const MAX_IOAPICS: usize = 4;

/// One I/O APIC.
#[derive(Clone, Copy)]
struct Chip {
    /// Its registers, mapped uncached.
    va: u64,
    /// The first GSI it serves.
    gsi_base: u32,
    /// How many inputs it has.
    pins: u32,
}

/// Where an ISA line goes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Route {
    /// The global system interrupt.
    pub gsi: u32,
    /// Level-triggered (else edge).
    pub level: bool,
    /// Active low (else active high).
    pub active_low: bool,
}

struct State {
    chips: [Option<Chip>; MAX_IOAPICS],
    routes: [Route; LINES],
    /// Whether line `n` reaches an I/O APIC input (bit `n`).
    routed: u16,
}

static STATE: KCell<State> = KCell::new(State {
    chips: [None; MAX_IOAPICS],
    routes: [Route {
        gsi: 0,
        level: false,
        active_low: false,
    }; LINES],
    routed: 0,
});

/// Interrupts of each line not yet handed to a `WAIT`.
static FIRED: [AtomicU32; LINES] = [const { AtomicU32::new(0) }; LINES];
/// Interrupts of each line since boot.
static TOTAL: [AtomicU64; LINES] = [const { AtomicU64::new(0) }; LINES];

fn state() -> &'static State {
    // SAFETY: written once at boot by `init`, only read afterwards.
    unsafe { &*STATE.as_ptr() }
}

/// The ACPI crate's window on physical memory: the direct map, which covers
/// the low 4 GiB where firmware puts the tables (nothing to unmap).
#[derive(Clone, Copy)]
struct DirectMap;

impl AcpiHandler for DirectMap {
    unsafe fn map_physical_region<T>(&self, pa: usize, size: usize) -> PhysicalMapping<Self, T> {
        let va = phys::to_virt(pa as u64) as *mut T;
        // SAFETY: the direct map covers the low 4 GiB (and all RAM) for the
        // kernel's lifetime; `va` is never null (it is in the kernel half).
        unsafe { PhysicalMapping::new(pa, NonNull::new_unchecked(va), size, size, DirectMap) }
    }

    fn unmap_physical_region<T>(_region: &PhysicalMapping<Self, T>) {}
}

fn read(chip: &Chip, reg: u32) -> u32 {
    // SAFETY: `va` maps the chip's two registers uncached (`init`); IOREGSEL
    // then IOWIN is the documented access, and the kernel is one CPU with
    // interrupts off, so the pair is not interleaved.
    unsafe {
        (chip.va as *mut u32).write_volatile(reg);
        ((chip.va + 0x10) as *const u32).read_volatile()
    }
}

fn write(chip: &Chip, reg: u32, v: u32) {
    // SAFETY: as in `read`.
    unsafe {
        (chip.va as *mut u32).write_volatile(reg);
        ((chip.va + 0x10) as *mut u32).write_volatile(v);
    }
}

/// The chip serving `gsi` and the pin number on it.
fn pin_of(st: &State, gsi: u32) -> Option<(Chip, u32)> {
    st.chips
        .iter()
        .flatten()
        .find(|c| gsi >= c.gsi_base && gsi < c.gsi_base + c.pins)
        .map(|c| (*c, gsi - c.gsi_base))
}

const MASKED: u32 = 1 << 16;
const LEVEL: u32 = 1 << 15;
const ACTIVE_LOW: u32 = 1 << 13;

/// What boot found, for the boot line.
pub struct Summary {
    /// I/O APICs found.
    pub chips: usize,
    /// Interrupt source overrides that apply to ISA lines.
    pub overrides: usize,
    /// ISA lines routed.
    pub lines: u32,
}

/// Reads the MADT (through the RSDP the loader gave, else by the BIOS
/// search), masks every I/O APIC input and routes the ISA lines, masked.
/// `Err` says why there is no I/O APIC to use (irq keys then answer
/// `IO_ERROR`).
///
/// # Safety
/// Boot, once, single-threaded; `rsdp` is what the boot loader gave (the
/// physical address of an RSDP), if anything.
pub(in crate::arch) unsafe fn init(rsdp: Option<u64>) -> Result<Summary, &'static str> {
    let tables = match rsdp {
        // SAFETY: the loader's RSDP address is in the direct-mapped low
        // memory; the crate checks its signature and checksum before use.
        Some(pa) => unsafe { AcpiTables::from_rsdp(DirectMap, pa as usize) },
        // SAFETY: a PC (BIOS or PVH from QEMU's firmware): the BIOS data
        // areas it searches are in the direct-mapped first MiB.
        None => unsafe { AcpiTables::search_for_rsdp_bios(DirectMap) },
    };
    let tables = tables.map_err(|_| "no ACPI tables")?;
    let madt = tables.find_table::<Madt>().map_err(|_| "no MADT")?;
    // SAFETY: boot, single-threaded, before any interrupt is routed.
    let st = unsafe { STATE.get() };
    for (i, r) in st.routes.iter_mut().enumerate() {
        // ISA default: identity, edge, active high.
        *r = Route {
            gsi: i as u32,
            level: false,
            active_low: false,
        };
    }
    let (mut nchips, mut overrides) = (0, 0);
    for e in madt.get().entries() {
        match e {
            MadtEntry::IoApic(a) if nchips < MAX_IOAPICS => {
                // SAFETY: boot (the caller's contract); the MADT names the
                // I/O APIC's register page, device memory.
                let va = unsafe { paging::map_mmio(a.io_apic_address as u64) };
                let mut chip = Chip {
                    va,
                    gsi_base: a.global_system_interrupt_base,
                    pins: 0,
                };
                chip.pins = ((read(&chip, 1) >> 16) & 0xff) + 1;
                st.chips[nchips] = Some(chip);
                nchips += 1;
            }
            MadtEntry::InterruptSourceOverride(o) if o.bus == 0 && (o.irq as usize) < LINES => {
                let flags = o.flags;
                // Polarity bits 0-1 (3: active low), trigger bits 2-3 (3:
                // level); 0 means "as the bus says": ISA is high, edge.
                st.routes[o.irq as usize] = Route {
                    gsi: o.global_system_interrupt,
                    active_low: flags & 3 == 3,
                    level: (flags >> 2) & 3 == 3,
                };
                overrides += 1;
            }
            _ => {}
        }
    }
    if nchips == 0 {
        return Err("no I/O APIC in the MADT");
    }
    for chip in st.chips.iter().flatten() {
        for pin in 0..chip.pins {
            write(chip, 0x10 + 2 * pin, MASKED);
        }
    }
    let dest = apic::id() & 0xff;
    let mut lines = 0;
    for (line, r) in st.routes.iter().enumerate() {
        let Some((chip, pin)) = pin_of(st, r.gsi) else {
            continue;
        };
        let mut low = MASKED | (IRQ_BASE as u32 + line as u32);
        if r.level {
            low |= LEVEL;
        }
        if r.active_low {
            low |= ACTIVE_LOW;
        }
        write(&chip, 0x11 + 2 * pin, dest << 24);
        write(&chip, 0x10 + 2 * pin, low);
        st.routed |= 1 << line;
        lines += 1;
    }
    Ok(Summary {
        chips: nchips,
        overrides,
        lines,
    })
}

/// Where ISA line `line` is routed, if it reaches an I/O APIC.
pub fn route(line: u8) -> Option<Route> {
    let st = state();
    (line < LINES as u8 && st.routed & (1 << line) != 0).then(|| st.routes[line as usize])
}

fn set_mask(line: u8, masked: bool) {
    let st = state();
    let Some(r) = route(line) else { return };
    let Some((chip, pin)) = pin_of(st, r.gsi) else {
        return;
    };
    let low = read(&chip, 0x10 + 2 * pin);
    let new = if masked { low | MASKED } else { low & !MASKED };
    if new != low {
        write(&chip, 0x10 + 2 * pin, new);
    }
}

/// Unmasks ISA line `line` (a routed one; others are ignored).
pub fn unmask(line: u8) {
    set_mask(line, false);
}

/// Masks ISA line `line`.
pub fn mask(line: u8) {
    set_mask(line, true);
}

/// The interrupt of vector `vector` (an irq vector) arrived: mask its line
/// (a level-triggered line would fire again at once), count it, EOI.
/// Returns the line.
pub fn fire(vector: u8) -> u8 {
    let line = vector - IRQ_BASE;
    mask(line);
    FIRED[line as usize].fetch_add(1, Ordering::Relaxed);
    TOTAL[line as usize].fetch_add(1, Ordering::Relaxed);
    apic::eoi();
    line
}

/// Whether `vector` is one of the ISA lines' vectors.
pub fn is_irq_vector(vector: u8) -> bool {
    (IRQ_BASE..IRQ_BASE + LINES as u8).contains(&vector)
}

/// Lines that fired and were not yet taken (bit `n` for line `n`).
pub fn pending() -> u16 {
    let mut m = 0;
    for (i, f) in FIRED.iter().enumerate() {
        if f.load(Ordering::Relaxed) != 0 {
            m |= 1 << i;
        }
    }
    m
}

/// Takes line `line`'s count of interrupts not yet handed to a `WAIT`.
pub fn take(line: u8) -> u32 {
    FIRED[line as usize].swap(0, Ordering::Relaxed)
}

/// Interrupts taken on line `line` since boot.
pub fn total(line: u8) -> u64 {
    TOTAL[line as usize].load(Ordering::Relaxed)
}
