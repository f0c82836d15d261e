//! The kernel's disk: a virtio-blk device on PCI (QEMU's default
//! `virtio-blk-pci`, transitional id 0x1001 or modern 0x1042), driven through
//! the virtio 1.x PCI transport (capabilities in configuration space,
//! registers in a memory BAR), completions signalled by MSI-X on
//! [`DISK_VECTOR`].
//!
//! **Why not the `virtio-drivers` crate.** Its version 0.13 `VirtIOBlk` was
//! checked against what the store needs: FLUSH exists only as a blocking
//! call (no `flush_nb`), so a checkpoint could not flush while domains run;
//! each `*_nb` request takes one buffer (one descriptor, so one physically
//! contiguous run), not a list of scattered 4 KiB frames; every `*_nb` call
//! rings the doorbell itself (no batching); requests are `&mut [u8]` borrows
//! held across an `unsafe` contract rather than frame numbers; and its queue
//! is fixed at 16 entries. So the queue logic is our own, as pure code in
//! `crates/virtio` (host-tested against a fake device); this file only finds
//! the device, sets it up and gives that logic volatile access to the queue
//! memory and the doorbell.
//!
//! Memory: the queue area (rings, request headers, indirect tables) comes
//! from the boot allocator in [`probe`], before it is sealed. Data moves by
//! DMA straight into and out of the frames a request names. They are
//! [`FrameNumber`]s, so pool frames, never kernel memory; a table slot
//! without a frame is refused (`BadRequest`), never sent as some address.
//! The caller leaves a frame alone until its request completes (the store
//! submits only frames its writer and journal own, `store/writer/jobs.rs`).
//!
//! Interrupts: the device's MSI-X entry 0 targets this CPU's local APIC with
//! `DISK_VECTOR`; the queue's vector is entry 0, configuration changes have
//! none. [`interrupt`] (called from the trap code) only counts and sends EOI:
//! MSI-X needs no ISR read. Completions are collected by [`Disk::poll`].

use super::idt::DISK_VECTOR;
use super::phys::{FrameNumber, Phys};
use super::{apic, paging, pci, phys};
use crate::kprintln;
use core::sync::atomic::{compiler_fence, AtomicU64, Ordering};
use stet_physmem::boot::BootAllocator;
use stet_virtio::{feature, negotiate, BlkQueue, Device, Frame, Geometry, Unusable};
pub use stet_virtio::{IoError, Op, SubmitError};

const VENDOR: u16 = 0x1af4;
/// Transitional and modern virtio-blk.
const DEVICES: [u16; 2] = [0x1001, 0x1042];

/// No frames (a flush), typed.
pub const NO_FRAMES: &[FrameNumber] = &[];

/// Disk interrupts taken.
static INTERRUPTS: AtomicU64 = AtomicU64::new(0);

/// Handles [`DISK_VECTOR`]: counts it and sends
/// EOI. Safe to call from any trap; it touches no kernel state.
pub fn interrupt() {
    INTERRUPTS.fetch_add(1, Ordering::Relaxed);
    apic::eoi();
}

/// Disk interrupts taken since boot (the disk self-test's).
#[cfg(feature = "testing")]
pub fn interrupts() -> u64 {
    INTERRUPTS.load(Ordering::Relaxed)
}

/// A window of device registers mapped uncached by `paging::map_mmio_range`.
#[derive(Clone, Copy)]
struct Regs {
    va: u64,
    len: u64,
}

impl Regs {
    /// Maps the registers at `[pa, pa + len)`.
    ///
    /// # Safety
    /// Boot; the range is device registers (a BAR's window).
    unsafe fn map(pa: u64, len: u64) -> Regs {
        Regs {
            // SAFETY: the caller's contract.
            va: unsafe { paging::map_mmio_range(pa, len) },
            len,
        }
    }

    fn at<T>(&self, off: u64) -> *mut T {
        assert!(
            off + size_of::<T>() as u64 <= self.len,
            "register outside its window"
        );
        (self.va + off) as *mut T
    }

    fn r8(&self, off: u64) -> u8 {
        // SAFETY: `at` keeps the access inside the mapped register window;
        // device registers are read with volatile accesses of their width.
        unsafe { self.at::<u8>(off).read_volatile() }
    }
    fn r16(&self, off: u64) -> u16 {
        // SAFETY: as in `r8`.
        unsafe { self.at::<u16>(off).read_volatile() }
    }
    fn r32(&self, off: u64) -> u32 {
        // SAFETY: as in `r8`.
        unsafe { self.at::<u32>(off).read_volatile() }
    }
    fn w8(&self, off: u64, v: u8) {
        // SAFETY: as in `r8`; the callers write only registers whose
        // meaning the virtio and MSI-X specifications give.
        unsafe { self.at::<u8>(off).write_volatile(v) }
    }
    fn w16(&self, off: u64, v: u16) {
        // SAFETY: as in `w8`.
        unsafe { self.at::<u16>(off).write_volatile(v) }
    }
    fn w32(&self, off: u64, v: u32) {
        // SAFETY: as in `w8`.
        unsafe { self.at::<u32>(off).write_volatile(v) }
    }
    fn w64(&self, off: u64, v: u64) {
        // 64-bit registers as two 32-bit halves, low first (virtio §4.1.3.1).
        self.w32(off, v as u32);
        self.w32(off + 4, (v >> 32) as u32);
    }
}

/// The queue area (through the direct map) and the queue's doorbell.
pub struct Ring {
    va: u64,
    len: usize,
    notify: Regs,
    /// TSC at the last doorbell or spin.
    spin_last: u64,
    /// TSC ticks spent spinning for synchronous requests: from the
    /// doorbell to the last spin of each (the testing kernel reads it: `Disk::spun`).
    spun: u64,
}

impl Ring {
    fn ptr<T>(&self, off: usize) -> *mut T {
        assert!(off + size_of::<T>() <= self.len, "outside the queue area");
        (self.va + off as u64) as *mut T
    }
}

impl Device for Ring {
    fn read8(&self, off: usize) -> u8 {
        // SAFETY: the queue area is RAM the boot allocator gave this ring
        // alone (never in the frame pool), mapped by the direct map; `ptr`
        // bounds the access; volatile, because the device writes it.
        unsafe { self.ptr::<u8>(off).read_volatile() }
    }
    fn read16(&self, off: usize) -> u16 {
        // SAFETY: as in `read8`; the queue logic keeps 2-byte fields aligned.
        unsafe { self.ptr::<u16>(off).read_volatile() }
    }
    fn read32(&self, off: usize) -> u32 {
        // SAFETY: as in `read16`.
        unsafe { self.ptr::<u32>(off).read_volatile() }
    }
    fn write8(&mut self, off: usize, v: u8) {
        // SAFETY: as in `read8`.
        unsafe { self.ptr::<u8>(off).write_volatile(v) }
    }
    fn write16(&mut self, off: usize, v: u16) {
        // SAFETY: as in `read16`.
        unsafe { self.ptr::<u16>(off).write_volatile(v) }
    }
    fn write64(&mut self, off: usize, v: u64) {
        // SAFETY: as in `read16` (descriptors and headers are 8-aligned).
        unsafe { self.ptr::<u64>(off).write_volatile(v) }
    }
    fn barrier(&self) {
        // x86 keeps stores in order with stores and loads with loads (and
        // the uncached doorbell write after both); only the compiler must
        // not move the volatile accesses across this point.
        compiler_fence(Ordering::SeqCst);
    }
    fn notify(&mut self) {
        self.notify.w16(0, 0);
        self.spin_last = super::cpu::rdtsc();
    }
    fn relax(&mut self) {
        // A synchronous request rings the doorbell, then spins until its
        // completion: the ticks from the doorbell to its last spin vary
        // with the host's disk and are counted apart. (Every spin runs the
        // same instructions, so what is left does not depend on how many
        // there were.)
        let t = super::cpu::rdtsc();
        self.spun += t - self.spin_last;
        self.spin_last = t;
        core::hint::spin_loop();
    }
}

/// The kernel's disk: one virtio-blk device and its request queue.
pub struct Disk {
    q: BlkQueue<Ring>,
    #[cfg(feature = "testing")]
    msix: bool,
}

impl Disk {
    /// Capacity in 4 KiB blocks.
    pub fn blocks(&self) -> u64 {
        self.q.blocks()
    }

    /// Most frames in one request.
    pub fn max_frames(&self) -> usize {
        self.q.max_frames()
    }

    /// Requests that can be submitted now (while non-zero, any request of
    /// up to `max_frames` frames is accepted).
    pub fn free_slots(&self) -> usize {
        self.q.free_slots()
    }

    /// Queues a request without notifying the device. Read/Write: `frames`
    /// are the data, blocks `block..block + frames.len()`. Flush: `frames`
    /// empty, `block` ignored; it completes once every write completed
    /// before it was submitted is on stable storage. `tag` comes back from
    /// [`poll`](Self::poll). `frames` may be frames or table slots
    /// (`Option`s); an empty slot makes the request a `BadRequest`.
    pub fn submit<F: Frame<Phys>>(
        &mut self,
        op: Op,
        block: u64,
        frames: &[F],
        tag: u64,
    ) -> Result<(), SubmitError> {
        self.q.submit(op, block, frames, tag)
    }

    /// Notifies the device of everything submitted (nothing if nothing new).
    pub fn kick(&mut self) {
        self.q.kick()
    }

    /// One completed request, in completion order.
    pub fn poll(&mut self) -> Option<(u64, Result<(), IoError>)> {
        self.q.poll()
    }

    /// Reads block `block` into `frame`, spinning until done; completions of
    /// queued requests met meanwhile are kept for `poll`.
    pub fn read_sync(&mut self, block: u64, frame: FrameNumber) -> Result<(), IoError> {
        self.q.read_sync(block, frame)
    }

    /// Writes `frame` to block `block`, spinning until done.
    pub fn write_sync(&mut self, block: u64, frame: FrameNumber) -> Result<(), IoError> {
        self.q.write_sync(block, frame)
    }

    /// Flushes the device's write cache, spinning until done.
    pub fn flush_sync(&mut self) -> Result<(), IoError> {
        self.q.flush_sync()
    }
}

/// What the disk self-test and the benchmarks read (the test kernel's
/// only: the `testing` feature).
#[cfg(feature = "testing")]
impl Disk {
    /// Whether completions raise [`DISK_VECTOR`] (else only polling finds them).
    pub fn has_interrupts(&self) -> bool {
        self.msix
    }

    /// Requests completed so far.
    pub fn completed(&self) -> u64 {
        self.q.completed()
    }

    /// Doorbells rung so far.
    pub fn kicks(&self) -> u64 {
        self.q.kicks()
    }

    /// TSC ticks spent so far waiting in synchronous requests: from the
    /// doorbell to the last spin of each, so that what is left of the time
    /// a synchronous request takes (posting it, ringing, the end of one
    /// spin and the successful look at the ring) is the same however long
    /// the host's disk takes.
    pub fn spun(&mut self) -> u64 {
        self.q.device_mut().spun
    }
}

/// Virtio PCI capability types (virtio 1.x §4.1.4).
const CAP_COMMON: u8 = 1;
const CAP_NOTIFY: u8 = 2;
const CAP_DEVICE: u8 = 4;
const CAP_VENDOR: u8 = 0x09;
const CAP_MSIX: u8 = 0x11;

/// Common configuration registers.
const C_DEVICE_FEATURE_SELECT: u64 = 0x00;
const C_DEVICE_FEATURE: u64 = 0x04;
const C_DRIVER_FEATURE_SELECT: u64 = 0x08;
const C_DRIVER_FEATURE: u64 = 0x0c;
const C_MSIX_CONFIG: u64 = 0x10;
const C_STATUS: u64 = 0x14;
const C_CONFIG_GENERATION: u64 = 0x15;
const C_QUEUE_SELECT: u64 = 0x16;
const C_QUEUE_SIZE: u64 = 0x18;
const C_QUEUE_MSIX_VECTOR: u64 = 0x1a;
const C_QUEUE_ENABLE: u64 = 0x1c;
const C_QUEUE_NOTIFY_OFF: u64 = 0x1e;
const C_QUEUE_DESC: u64 = 0x20;
const C_QUEUE_DRIVER: u64 = 0x28;
const C_QUEUE_DEVICE: u64 = 0x30;

/// Device status bits.
const S_ACKNOWLEDGE: u8 = 1;
const S_DRIVER: u8 = 2;
const S_DRIVER_OK: u8 = 4;
const S_FEATURES_OK: u8 = 8;
const S_FAILED: u8 = 0x80;

const NO_VECTOR: u16 = 0xffff;

/// At boot, before the boot allocator is sealed: finds and sets up the
/// first virtio-blk device. `None` if there is none or it cannot be used;
/// prints one line either way.
///
/// # Safety
/// Boot, once; `alloc` hands out only RAM that nothing else uses (the
/// queue area is written there, and the device writes it).
pub(in crate::arch) unsafe fn probe(alloc: &mut BootAllocator) -> Option<Disk> {
    let Some(f) = pci::find(VENDOR, &DEVICES) else {
        kprintln!("disk: no virtio-blk device");
        return None;
    };
    // SAFETY: the caller's contract.
    match unsafe { setup(f, alloc) } {
        Ok(d) => Some(d),
        Err(why) => {
            kprintln!(
                "disk: virtio-blk at {:02x}:{:02x}.{} unusable: {}",
                f.bus,
                f.dev,
                f.func,
                why
            );
            None
        }
    }
}

/// A capability's register window: (BAR address + offset, length), plus the
/// notify multiplier for the notify capability.
fn vendor_cap(f: &pci::Function, at: u8) -> Option<(u8, u64, u64, u32)> {
    let kind = f.read8(at + 3);
    let bar = f.bar(f.read8(at + 4))?;
    let off = f.read32(at + 8) as u64;
    let len = f.read32(at + 12) as u64;
    let mult = if kind == CAP_NOTIFY {
        f.read32(at + 16)
    } else {
        0
    };
    Some((kind, bar + off, len, mult))
}

/// Sets up the device at `f`.
///
/// # Safety
/// As for [`probe`].
unsafe fn setup(f: pci::Function, alloc: &mut BootAllocator) -> Result<Disk, &'static str> {
    let (mut common, mut notify, mut device, mut msix) = (None, None, None, None);
    for (id, at) in f.capabilities() {
        match id {
            CAP_VENDOR => match vendor_cap(&f, at) {
                // The first capability of each type is the one to use.
                Some((CAP_COMMON, pa, len, _)) if common.is_none() => common = Some((pa, len)),
                Some((CAP_NOTIFY, pa, len, m)) if notify.is_none() => notify = Some((pa, len, m)),
                Some((CAP_DEVICE, pa, len, _)) if device.is_none() => device = Some((pa, len)),
                _ => {}
            },
            CAP_MSIX if msix.is_none() => msix = Some(at),
            _ => {}
        }
    }
    let (Some(common), Some(notify), Some(device)) = (common, notify, device) else {
        return Err("no virtio 1.x capabilities (legacy-only device)");
    };
    f.enable(pci::CMD_MEMORY | pci::CMD_BUS_MASTER | pci::CMD_INTX_DISABLE);
    // SAFETY: boot (the caller's contract); the capabilities name windows
    // of the device's memory BARs.
    let (c, cfg) = unsafe {
        (
            Regs::map(common.0, common.1.max(0x38)),
            Regs::map(device.0, device.1.max(0x18)),
        )
    };

    // Reset, then acknowledge (virtio 1.x §3.1.1).
    c.w8(C_STATUS, 0);
    while c.r8(C_STATUS) != 0 {
        core::hint::spin_loop();
    }
    c.w8(C_STATUS, S_ACKNOWLEDGE | S_DRIVER);
    let fail = |why| {
        c.w8(C_STATUS, c.r8(C_STATUS) | S_FAILED);
        Err(why)
    };
    let mut offered = 0u64;
    for half in 0..2 {
        c.w32(C_DEVICE_FEATURE_SELECT, half);
        offered |= (c.r32(C_DEVICE_FEATURE) as u64) << (32 * half);
    }
    let features = match negotiate(offered) {
        Ok(x) => x,
        Err(Unusable::NotVersion1) => return fail("no VIRTIO_F_VERSION_1"),
        Err(_) => return fail("features"),
    };
    for half in 0..2 {
        c.w32(C_DRIVER_FEATURE_SELECT, half);
        c.w32(C_DRIVER_FEATURE, (features >> (32 * half)) as u32);
    }
    c.w8(C_STATUS, S_ACKNOWLEDGE | S_DRIVER | S_FEATURES_OK);
    if c.r8(C_STATUS) & S_FEATURES_OK == 0 {
        return fail("the device refused our features");
    }

    // Device configuration (virtio_blk_config), read until stable.
    let has = |bit| features & bit != 0;
    let (sectors, size_max, seg_max) = loop {
        let gen = c.r8(C_CONFIG_GENERATION);
        let sectors = cfg.r32(0) as u64 | (cfg.r32(4) as u64) << 32;
        let size_max = has(feature::SIZE_MAX).then(|| cfg.r32(8));
        let seg_max = has(feature::SEG_MAX).then(|| cfg.r32(12));
        if c.r8(C_CONFIG_GENERATION) == gen {
            break (sectors, size_max, seg_max);
        }
    };

    c.w16(C_QUEUE_SELECT, 0);
    let g = match Geometry::choose(
        c.r16(C_QUEUE_SIZE),
        seg_max,
        size_max,
        has(feature::INDIRECT_DESC),
    ) {
        Ok(g) => g,
        Err(Unusable::QueueTooSmall) => return fail("queue 0 too small"),
        Err(_) => return fail("segments smaller than 4 KiB"),
    };
    let l = g.layout();
    let Ok(base) = alloc.alloc(l.bytes as u64, 4096) else {
        return fail("no memory for the queue");
    };
    let va = phys::to_virt(base);
    // SAFETY: the boot allocator just gave `[base, base + l.bytes)` to this
    // queue alone; it is RAM covered by the direct map (the caller's
    // contract).
    unsafe { core::ptr::write_bytes(va as *mut u8, 0, l.bytes) };

    let notify_off = c.r16(C_QUEUE_NOTIFY_OFF) as u64 * notify.2 as u64;
    if notify_off + 2 > notify.1 {
        return fail("queue doorbell outside the notify window");
    }
    let ring = Ring {
        va,
        len: l.bytes,
        // SAFETY: boot; the doorbell is inside the notify window (checked).
        notify: unsafe { Regs::map(notify.0 + notify_off, 2) },
        spin_last: 0,
        spun: 0,
    };
    let q = BlkQueue::new(ring, g, base, sectors, has(feature::FLUSH));
    c.w16(C_QUEUE_SIZE, g.queue_size);
    c.w64(C_QUEUE_DESC, base + l.desc as u64);
    c.w64(C_QUEUE_DRIVER, base + l.avail as u64);
    c.w64(C_QUEUE_DEVICE, base + l.used as u64);

    let msix = msix.is_some_and(|at| enable_msix(&f, at, &c));
    c.w16(C_QUEUE_ENABLE, 1);
    c.w8(
        C_STATUS,
        S_ACKNOWLEDGE | S_DRIVER | S_FEATURES_OK | S_DRIVER_OK,
    );
    let word = |bit, name| if has(bit) { name } else { "" };
    kprintln!(
        "disk: virtio-blk at {:02x}:{:02x}.{}: {} blocks ({} MiB){}, features{}{}{}, queue {}, {} frames per request, {} slots, {}",
        f.bus,
        f.dev,
        f.func,
        sectors / 8,
        sectors >> 11,
        word(feature::RO, " read-only"),
        word(feature::FLUSH, " flush"),
        word(feature::INDIRECT_DESC, " indirect"),
        word(feature::SEG_MAX, " seg_max"),
        g.queue_size,
        g.max_frames,
        g.slots - 1,
        if msix { "msi-x" } else { "polled (no msi-x)" }
    );
    Ok(Disk {
        q,
        #[cfg(feature = "testing")]
        msix,
    })
}

/// Points MSI-X entry 0 at this CPU with `DISK_VECTOR`, enables MSI-X and
/// gives the queue that entry. False if the device could not take it.
fn enable_msix(f: &pci::Function, at: u8, c: &Regs) -> bool {
    let table = f.read32(at + 4);
    let Some(bar) = f.bar((table & 7) as u8) else {
        return false;
    };
    // SAFETY: boot (only `setup` calls this); the MSI-X capability names
    // the table's place in a memory BAR.
    let t = unsafe { Regs::map(bar + (table & !7) as u64, 16) };
    let apic = apic::id();
    if apic > 0xff {
        return false;
    }
    t.w32(0, 0xfee0_0000 | apic << 12);
    t.w32(4, 0);
    t.w32(8, DISK_VECTOR as u32); // fixed delivery, edge
    t.w32(12, 0); // unmasked
    let ctl = f.read16(at + 2);
    f.write16(at + 2, (ctl | 1 << 15) & !(1 << 14)); // enable, unmask all
    c.w16(C_MSIX_CONFIG, NO_VECTOR);
    c.w16(C_QUEUE_MSIX_VECTOR, 0);
    c.r16(C_QUEUE_MSIX_VECTOR) == 0
}
