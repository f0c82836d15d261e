//! The scheduler: round robin over ready programs, one timer tick per slice.
//!
//! Policy moves to user-level meter keepers in issue #3; what stays here is
//! the mechanism: pick a program, make it current, leave the kernel.

use crate::arch;
use crate::kernel::Kernel;
use crate::kprintln;
use crate::task::{State, MAX_TASKS};

/// The next ready task after `after` (wrapping), or `after` itself if it is
/// the only one.
fn next_ready(k: &Kernel, after: Option<usize>) -> Option<usize> {
    let start = after.map_or(0, |c| c + 1);
    (0..MAX_TASKS)
        .map(|i| (start + i) % MAX_TASKS)
        .find(|&i| k.tasks[i].state == State::Ready)
}

/// Whether a task other than the current one is ready.
pub fn others_ready(k: &Kernel) -> bool {
    next_ready(k, k.current).is_some_and(|i| Some(i) != k.current)
}

/// Runs the next ready task, or idles. Never returns.
pub fn schedule(k: &mut Kernel) -> ! {
    match next_ready(k, k.current) {
        Some(i) => run(k, i),
        None => idle(k),
    }
}

/// Leaves the kernel into task `i`, switching address space and FPU state
/// if it is not the current task.
pub fn run(k: &mut Kernel, i: usize) -> ! {
    if k.current != Some(i) {
        let t = &k.tasks[i];
        arch::entry::activate(i, &t.frame, t.name);
        if let Some(space) = &t.space {
            space.root.activate();
        }
        k.current = Some(i);
    }
    if k.fpu_owner != Some(i) {
        if let Some(o) = k.fpu_owner {
            arch::fpu::save(&mut k.tasks[o].fpu);
        }
        arch::fpu::restore(&k.tasks[i].fpu);
        k.fpu_owner = Some(i);
    }
    arch::entry::enter_user(&k.tasks[i].frame)
}

/// Nothing is ready. With `exit_on_idle` and no tasks left, stop QEMU with
/// success; otherwise wait for interrupts forever (nothing can become ready
/// yet: there is no blocking in this first kernel).
fn idle(k: &mut Kernel) -> ! {
    k.current = None;
    if k.config.exit_on_idle {
        kprintln!("kernel: all programs have ended");
        arch::qemu::exit(stet_abi::qemu_exit::SUCCESS);
    }
    kprintln!("kernel: all programs have ended; idle (Ctrl-A X quits QEMU)");
    loop {
        arch::cpu::wait_for_interrupt();
    }
}
