//! Exceptions and interrupts: the timer, page faults, and the report a
//! faulting domain or kernel gets.

use crate::arch::{self, apic, idt, ioapic};
use crate::kernel::Kernel;
use crate::memory::{self, MemFault};
use crate::{fault, kprintln, sched};
use core::sync::atomic::{AtomicU64, Ordering};
use stet_segment::Access;

/// Timer interrupts taken while the CPU idled.
static IDLE_TICKS: AtomicU64 = AtomicU64::new(0);

/// Timer ticks taken while the CPU idled (the idle loop adds them to the
/// kernel's clock).
pub fn idle_ticks() -> u64 {
    IDLE_TICKS.load(Ordering::Relaxed)
}

/// A trap from user mode (the frame is already saved in the current context).
pub fn on_user_trap(k: &mut Kernel, vector: u8, error: u64, rip: u64, cr2: u64) -> ! {
    let Some(ci) = k.current else {
        crate::fatal(format_args!("user trap {vector} with no current domain"));
    };
    match vector {
        idt::TIMER_VECTOR => {
            apic::eoi();
            sched::tick(k, ci)
        }
        idt::DISK_VECTOR => {
            arch::virtio_blk::interrupt();
            crate::store::on_disk(k);
            if k.queues.any_ready() && !crate::domain::runnable(&k.ctxs[ci]) {
                sched::schedule(k)
            }
            sched::run(k, ci)
        }
        idt::SPURIOUS_VECTOR => sched::run(k, ci),
        v if ioapic::is_irq_vector(v) => {
            ioapic::fire(v);
            // A driver's waiter was woken: let it run soon (it queues
            // behind whoever is ready; this domain goes to the back).
            if crate::kobj::irq::deliver(k) {
                sched::schedule(k)
            }
            sched::run(k, ci)
        }
        // Not the domain's doing: note it and carry on.
        2 => {
            kprintln!("kernel: NMI while domain {ci} ran; ignored");
            sched::run(k, ci)
        }
        // Hardware failures, not domain faults.
        8 | 18 => crate::fatal(format_args!(
            "{} (vector {vector}) while domain {ci} ran, rip={rip:#x}",
            idt::exception_name(vector)
        )),
        14 => {
            let access = if error & (1 << 4) != 0 {
                Access::Execute
            } else if error & (1 << 1) != 0 {
                Access::Write
            } else {
                Access::Read
            };
            crate::store::memory::check_pressure(k);
            if crate::store::memory::low(k) && !crate::store::memory::make_room(k, ci) {
                // Parked until a checkpoint frees memory; the access is
                // retried then.
                sched::schedule(k)
            }
            match memory::resolve(k, ci, cr2, access) {
                Ok(_) => sched::run(k, ci),
                Err(MemFault::Invalid(inv)) => fault::memory_fault(k, ci, cr2, access, inv),
                Err(MemFault::NoSpace) => {
                    kprintln!("kernel: out of frames resolving a fault of domain {ci}");
                    fault::exception(k, ci, vector, error, rip, cr2)
                }
            }
        }
        // cr2 means something only for page faults.
        0..=31 => fault::exception(k, ci, vector, error, rip, 0),
        _ => {
            apic::eoi();
            kprintln!("kernel: unexpected interrupt vector {vector:#x} ignored");
            sched::run(k, ci)
        }
    }
}

/// A trap that interrupted the kernel itself: either the timer or the disk
/// waking the idle loop (return to it), or a kernel bug (report and stop).
pub fn on_kernel_trap(vector: u8, error: u64, rip: u64, rsp: u64, cr2: u64) {
    match vector {
        idt::TIMER_VECTOR => {
            IDLE_TICKS.fetch_add(1, Ordering::Relaxed);
            apic::eoi();
        }
        idt::DISK_VECTOR => arch::virtio_blk::interrupt(),
        idt::SPURIOUS_VECTOR => {}
        // The idle loop delivers it (`kobj::irq::deliver`).
        v if ioapic::is_irq_vector(v) => {
            ioapic::fire(v);
        }
        2 => kprintln!("kernel: NMI in kernel mode at rip={rip:#x}; ignored"),
        32..=254 => apic::eoi(),
        _ => {
            let who = match arch::percpu::current() {
                Some((i, oid)) => (i as i64, oid),
                None => (-1, 0),
            };
            kprintln!(
                "KERNEL FAULT: {} (vector {}) error={:#x} rip={:#x} cr2={:#x} rsp={:#x}; domain {} (root oid {:#x})",
                idt::exception_name(vector),
                vector,
                error,
                rip,
                cr2,
                rsp,
                who.0,
                who.1
            );
            arch::qemu::exit(stet_abi::qemu_exit::FAILURE)
        }
    }
}
