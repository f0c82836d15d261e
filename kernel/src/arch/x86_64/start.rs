//! Bring-up order, from the first Rust instruction to the first program.
//!
//! serial → boot information → CPU features → GDT/TSS, per-CPU, IDT,
//! `syscall` → boot allocator → kernel page tables → FPU → interrupt
//! controllers and timer → I/O APIC (ACPI MADT) → `kmain`, which builds
//! the frame pool, seals the boot allocator and starts the programs.

use super::bootinfo::{self, BootInfo};
use super::cpu;
use super::phys::FramePool;
use super::{apic, boot, crc32c, entry, fpu, gdt, idt, ioapic, paging, percpu, phys, pic, serial};
use crate::kprintln;
use stet_kconfig::Config;
use stet_physmem::boot::{AllocError, BootAllocator};
use stet_physmem::pool::PoolError;
use stet_physmem::range::{Range, RangeSet};

/// What the hardware layer hands to the generic kernel: the boot
/// information, and boot memory through typed tables (the boot allocator
/// itself stays here, so no other code turns its addresses into memory).
pub struct Platform {
    /// Parsed command line.
    pub config: Config,
    /// The program image module, if the loader supplied one.
    pub module: Option<&'static [u8]>,
    /// The boot allocator (sealed by `frame_pool`).
    alloc: BootAllocator,
}

impl Platform {
    /// Frames a pool over the boot memory left now would have (to size
    /// the kernel's tables).
    pub fn free_frames(&self) -> usize {
        FramePool::frames_in(self.alloc.free_ranges())
    }

    /// Bytes of boot memory handed out so far.
    pub fn allocated(&self) -> u64 {
        self.alloc.allocated()
    }

    fn carve<T>(&mut self, n: usize) -> Result<u64, AllocError> {
        let bytes = (n * size_of::<T>()).max(1) as u64;
        self.alloc.alloc(bytes, align_of::<T>() as u64)
    }

    /// A table of `n` `T`s, each made by `init`, in boot memory for the
    /// kernel's lifetime (tables whose entries hold frames, which no
    /// zeroed or arbitrary bytes may forge).
    pub fn table<T>(
        &mut self,
        n: usize,
        init: impl FnMut() -> T,
    ) -> Result<&'static mut [T], AllocError> {
        let pa = self.carve::<T>(n)?;
        // SAFETY: the boot allocator just gave `pa` to this table alone,
        // aligned for `T` (it aligns to at least a frame); boot memory is
        // RAM covered by the direct map and never enters the frame pool.
        Ok(unsafe { phys::boot_array(pa, n, init) })
    }

    /// A table of `n` zeroed `T`s in boot memory (as [`table`](Self::table)).
    pub fn zeroed<T: zerocopy::FromZeros>(
        &mut self,
        n: usize,
    ) -> Result<&'static mut [T], AllocError> {
        let pa = self.carve::<T>(n)?;
        // SAFETY: as in `table`.
        Ok(unsafe { phys::boot_zeroed(pa, n) })
    }

    /// Finds and sets up the disk (before the boot allocator is sealed:
    /// its queue memory is boot memory).
    pub fn disk(&mut self) -> Option<super::virtio_blk::Disk> {
        // SAFETY: the boot allocator hands out only RAM that nothing else
        // uses (see `boot_allocator`).
        unsafe { super::virtio_blk::probe(&mut self.alloc) }
    }

    /// The frame pool: its storage is the last boot allocation, then the
    /// boot allocator is sealed and every later request is refused, and
    /// what it has left becomes the pool. A second call finds it sealed.
    pub fn frame_pool(&mut self) -> Result<FramePool<'static>, PoolError> {
        let (frames, span) = (
            FramePool::frames_in(self.alloc.free_ranges()),
            FramePool::span_of(self.alloc.free_ranges()),
        );
        let stack = self
            .zeroed::<u32>(frames)
            .map_err(|_| PoolError::StorageTooSmall)?;
        let map = self
            .zeroed::<u8>(span)
            .map_err(|_| PoolError::StorageTooSmall)?;
        // SAFETY: the sealed allocator's free ranges are RAM it never handed
        // out and never will; sealing happens once, so no other pool is
        // made over them.
        unsafe { phys::frame_pool(stack, map, self.alloc.seal()) }
    }

    /// The boot allocator once sealed (for the self-test that checks it
    /// refuses), or `None` before.
    #[cfg(feature = "testing")]
    pub fn sealed_allocator(&self) -> Option<BootAllocator> {
        self.alloc.is_sealed().then(|| self.alloc.clone())
    }
}

/// Called by `boot.rs` on the kernel stack, with paging on and the kernel
/// in the higher half. `magic` and `info` are what the boot loader passed;
/// `tsc` is the time-stamp counter at the kernel's first instruction.
pub extern "C" fn kernel_entry(magic: u32, info: u64, tsc: u64) -> ! {
    cpu::set_boot_tsc(tsc);
    serial::init();
    // A fresh line: firmware may have left the cursor mid-line.
    kprintln!();
    kprintln!(
        "Stet {} - a persistent capability operating system",
        env!("CARGO_PKG_VERSION")
    );
    // SAFETY: `magic` and `info` are what the boot loader passed (`boot.rs`).
    let boot = match unsafe { bootinfo::parse(magic, info) } {
        Ok(b) => b,
        Err(bootinfo::BootError::UnknownProtocol(magic)) => crate::fatal(format_args!(
            "unknown boot protocol (eax={magic:#x}); boot through PVH or Multiboot2"
        )),
        Err(bootinfo::BootError::NoMemoryMap) => {
            crate::fatal(format_args!("the boot loader supplied no memory map"))
        }
    };
    let features = cpu::detect();
    // SAFETY: boot, once, with this CPU's features.
    unsafe { cpu::enable(&features) };
    crc32c::init(features.sse42);
    let layout = boot::layout();
    // SAFETY: boot, before any trap; the layout's stacks are the kernel's
    // (`boot.rs` reserves them in the image for this).
    unsafe {
        gdt::init(
            layout.stack_top,
            layout.ist_base,
            boot::IST_STACK_SIZE as u64,
        )
    };
    // SAFETY: as above.
    unsafe { percpu::init(layout.stack_top) };
    idt::init();
    // SAFETY: the entry point and selectors that go together.
    unsafe {
        cpu::init_syscall(
            entry::syscall_entry_addr(),
            gdt::KERNEL_CS,
            gdt::SYSRET_BASE,
        )
    };

    let mut alloc = boot_allocator(&boot, &layout);
    // The tables paging::init writes are reached through the early map
    // (boot.rs: the first GiB); the rest of RAM is mapped once they are in.
    alloc.set_limit(1 << 30);
    // SAFETY: boot, once; the boot allocator holds only usable RAM minus
    // everything that must survive (`boot_allocator`).
    unsafe { paging::init(&mut alloc, &layout, &features, boot.max_phys) };
    alloc.set_limit(u64::MAX);
    let fpu_mode = fpu::init(&features);
    pic::disable();
    let config = stet_kconfig::parse(boot.cmdline());
    let (apic_mode, apic_rate) = apic::init(features.x2apic, config.hz);
    let (smep, smap) = cpu::smep_smap_active();
    kprintln!(
        "boot: {:?}, {} MiB usable, cmdline \"{}\"",
        boot.protocol,
        boot.usable.total() >> 20,
        boot.cmdline()
    );
    kprintln!(
        "cpu: smep {} smap {} nx {} fpu {} apic {} timer {} Hz ({} ticks/s) pku {} fsgsbase {} crc32 {}",
        on(smep),
        on(smap),
        on(features.nx),
        fpu_mode,
        apic_mode,
        config.hz,
        apic_rate,
        on(features.pku),
        on(features.fsgsbase),
        on(crc32c::is_hardware())
    );
    // SAFETY: boot, once; the RSDP address is the loader's.
    match unsafe { ioapic::init(boot.rsdp) } {
        Ok(s) => kprintln!(
            "irq: {} I/O APIC(s), {} ISA lines routed to vectors {:#x}.., {} interrupt source override(s)",
            s.chips,
            s.lines,
            ioapic::IRQ_BASE,
            s.overrides
        ),
        Err(why) => kprintln!("irq: {why}; irq keys answer IO_ERROR"),
    }
    let module = boot.module.map(|m| {
        // SAFETY: the module range was reserved from the boot allocator
        // (see `boot_allocator`), so it is never handed out or written, and
        // the direct map covers all RAM.
        unsafe { phys::reserved_slice(m.start, m.len() as usize) }
    });
    let k = crate::kmain(Platform {
        config,
        module,
        alloc,
    });
    // SAFETY: boot, before the first trap: this is the only reference.
    let slot = unsafe { crate::kernel::KERNEL.get() };
    let k = slot.insert(k);
    crate::start(k)
}

fn on(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// Usable RAM minus everything that must survive: the first MiB (firmware
/// data, the PVH start info), the kernel image, the boot structures and the
/// program module.
fn boot_allocator(boot: &BootInfo, layout: &boot::KernelLayout) -> BootAllocator {
    let mut reserved = RangeSet::new();
    let mut add = |r: Range| {
        if reserved.insert(r).is_err() {
            crate::fatal(format_args!("too many reserved ranges"));
        }
    };
    add(Range::new(0, 1 << 20));
    add(Range::new(layout.phys_start, layout.phys_end));
    for r in boot.reserved.as_slice() {
        add(*r);
    }
    if let Some(m) = boot.module {
        add(m);
    }
    match BootAllocator::new(boot.usable.as_slice(), reserved.as_slice()) {
        Ok(a) => a,
        Err(_) => crate::fatal(format_args!("memory map has too many ranges")),
    }
}
