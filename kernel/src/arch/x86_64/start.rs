//! Bring-up order, from the first Rust instruction to the first program.
//!
//! serial → boot information → CPU features → GDT/TSS, per-CPU, IDT,
//! `syscall` → boot allocator → kernel page tables → FPU → interrupt
//! controllers and timer → I/O APIC (ACPI MADT) → `kmain`, which builds
//! the frame pool, seals the boot allocator and starts the programs.

use super::bootinfo::{self, BootInfo};
use super::cpu;
use super::{apic, boot, crc32c, entry, fpu, gdt, idt, ioapic, paging, percpu, phys, pic, serial};
use crate::kprintln;
use stet_kconfig::Config;
use stet_physmem::boot::BootAllocator;
use stet_physmem::range::{Range, RangeSet};

/// What the hardware layer hands to the generic kernel.
pub struct Platform {
    /// Parsed command line.
    pub config: Config,
    /// The boot allocator (not yet sealed).
    pub alloc: BootAllocator,
    /// The program image module, if the loader supplied one.
    pub module: Option<&'static [u8]>,
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
    let boot = match bootinfo::parse(magic, info) {
        Ok(b) => b,
        Err(bootinfo::BootError::UnknownProtocol(magic)) => crate::fatal(format_args!(
            "unknown boot protocol (eax={magic:#x}); boot through PVH or Multiboot2"
        )),
        Err(bootinfo::BootError::NoMemoryMap) => {
            crate::fatal(format_args!("the boot loader supplied no memory map"))
        }
    };
    let features = cpu::detect();
    cpu::enable(&features);
    crc32c::init(features.sse42);
    let layout = boot::layout();
    gdt::init(
        layout.stack_top,
        layout.ist_base,
        boot::IST_STACK_SIZE as u64,
    );
    percpu::init(layout.stack_top);
    idt::init();
    cpu::init_syscall(
        entry::syscall_entry_addr(),
        gdt::KERNEL_CS,
        gdt::SYSRET_BASE,
    );

    let mut alloc = boot_allocator(&boot, &layout);
    paging::init(&mut alloc, &layout, &features, boot.max_phys);
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
    match ioapic::init(boot.rsdp) {
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
        alloc,
        module,
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
