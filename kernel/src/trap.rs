//! Exceptions and interrupts: the timer, page faults, and the report a
//! faulting program or kernel gets.

use crate::arch::{self, apic, idt};
use crate::kernel::Kernel;
use crate::{kprintln, sched, vm};
use core::sync::atomic::{AtomicU64, Ordering};

/// Timer interrupts taken while the CPU idled.
static IDLE_TICKS: AtomicU64 = AtomicU64::new(0);

/// A trap from user mode (the frame is already saved in the current task).
pub fn on_user_trap(k: &mut Kernel, vector: u8, error: u64, rip: u64, cr2: u64) -> ! {
    let Some(cur) = k.current else {
        crate::fatal(format_args!("user trap {vector} with no current program"));
    };
    match vector {
        idt::TIMER_VECTOR => {
            apic::eoi();
            k.ticks += 1;
            k.tasks[cur].ticks += 1;
            if sched::others_ready(k) {
                k.tasks[cur].preemptions += 1;
                sched::schedule(k)
            }
            sched::run(k, cur)
        }
        idt::SPURIOUS_VECTOR => sched::run(k, cur),
        // Not the program's doing: note it and carry on.
        2 => {
            kprintln!("kernel: NMI while program {cur} ran; ignored");
            sched::run(k, cur)
        }
        // Hardware failures, not program faults.
        8 | 18 => crate::fatal(format_args!(
            "{} (vector {vector}) while program {cur} ran, rip={rip:#x}",
            idt::exception_name(vector)
        )),
        14 => {
            let access = vm::Access::from_error(error);
            let pool = k.pool.as_mut().expect("pool exists once programs run");
            let space = k.tasks[cur].space.as_mut();
            match space.map(|s| s.resolve(cr2, access, pool)) {
                Some(Ok(())) => sched::run(k, cur),
                Some(Err(why)) => {
                    let t = &k.tasks[cur];
                    kprintln!(
                        "fault: program {} '{}' {} at rip={:#x}: {} access to {:#x} ({}), error={:#x}; program ended",
                        cur,
                        t.name,
                        idt::exception_name(14),
                        rip,
                        access.name(),
                        cr2,
                        why.name(),
                        error
                    );
                    end_task(k, cur);
                    sched::schedule(k)
                }
                None => crate::fatal(format_args!("program {cur} has no address space")),
            }
        }
        0..=31 => {
            let t = &k.tasks[cur];
            kprintln!(
                "fault: program {} '{}' {} at rip={:#x}, error={:#x}; program ended",
                cur,
                t.name,
                idt::exception_name(vector),
                rip,
                error
            );
            end_task(k, cur);
            sched::schedule(k)
        }
        _ => {
            apic::eoi();
            kprintln!("kernel: unexpected interrupt vector {vector:#x} ignored");
            sched::run(k, cur)
        }
    }
}

/// Ends task `i`: frees its memory and its slot.
pub fn end_task(k: &mut Kernel, i: usize) {
    let space = k.tasks[i].space.take();
    if let (Some(space), Some(pool)) = (space, k.pool.as_mut()) {
        space.destroy(pool);
    }
    let t = &mut k.tasks[i];
    t.state = crate::task::State::Free;
    if k.fpu_owner == Some(i) {
        k.fpu_owner = None;
    }
    if k.current == Some(i) {
        k.current = None;
    }
}

/// A trap that interrupted the kernel itself: either the timer waking the
/// idle loop (return to it), or a kernel bug (report and stop).
pub fn on_kernel_trap(vector: u8, error: u64, rip: u64, rsp: u64, cr2: u64) {
    match vector {
        idt::TIMER_VECTOR => {
            IDLE_TICKS.fetch_add(1, Ordering::Relaxed);
            apic::eoi();
        }
        idt::SPURIOUS_VECTOR => {}
        2 => kprintln!("kernel: NMI in kernel mode at rip={rip:#x}; ignored"),
        32..=254 => apic::eoi(),
        _ => {
            let who = match arch::percpu::current() {
                Some((i, name)) => (i as i64, name),
                None => (-1, "none"),
            };
            kprintln!(
                "KERNEL FAULT: {} (vector {}) error={:#x} rip={:#x} cr2={:#x} rsp={:#x}; program {} '{}'",
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
