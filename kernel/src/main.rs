//! The Stet nanokernel.
//!
//! Where to look:
//! * boot and bring-up: `arch/x86_64/boot.rs`, `arch/x86_64/start.rs`, `kmain` below
//! * every kernel entry and exit (syscall, interrupts, faults): `arch/x86_64/entry.rs`
//! * system calls: `syscall.rs`; faults and the timer: `trap.rs`
//! * the scheduler: `sched.rs`; programs: `task.rs`; address spaces: `vm.rs`
//!
//! The kernel follows the interrupt model: one kernel stack per CPU, every
//! trap runs to completion with interrupts off and leaves by resuming some
//! program. After boot it allocates nothing: the frame pool and task table
//! are fixed in size.
#![no_std]
#![no_main]
#![deny(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]

mod arch;
mod console;
mod kernel;
mod loader;
mod panic;
mod sched;
mod selftest;
mod syscall;
mod task;
mod trap;
mod vm;

use arch::start::Platform;
use kernel::Kernel;
use stet_physmem::pool::FramePool;

/// Second half of boot: memory pool, programs, first schedule.
fn kmain(k: &mut Kernel, mut p: Platform) -> ! {
    k.config = p.config;
    if k.config.unknown > 0 {
        kprintln!(
            "boot: {} unrecognised command-line word(s) ignored",
            k.config.unknown
        );
    }
    // The frame pool's storage is the last boot allocation; then the boot
    // allocator is sealed and every later request is refused.
    let frames = FramePool::frames_in(p.alloc.free_ranges());
    let storage = match p.alloc.alloc(frames as u64 * 4, 8) {
        Ok(pa) => arch::phys::boot_slice_u32(pa, frames),
        Err(e) => fatal(format_args!("no memory for the frame pool: {e:?}")),
    };
    let used = p.alloc.allocated();
    let pool = match FramePool::new(storage, p.alloc.seal()) {
        Ok(pool) => pool,
        Err(e) => fatal(format_args!("frame pool: {e:?}")),
    };
    kprintln!(
        "memory: {} frames in the pool ({} MiB), {} KiB used by boot tables; boot allocator sealed",
        pool.capacity(),
        pool.capacity() >> 8,
        used >> 10
    );
    k.pool = Some(pool);
    k.bootmem = Some(p.alloc);
    let _ = p.features;

    if let Some(t) = k.config.selftest {
        selftest::run(k, t);
    }
    match p.module {
        Some(m) => loader::start_programs(k, m),
        None => kprintln!("boot: no program image was supplied"),
    }
    sched::schedule(k)
}

/// Reports a fatal boot or kernel error and stops (exit status 35 under QEMU).
pub fn fatal(args: core::fmt::Arguments<'_>) -> ! {
    kprintln!("KERNEL PANIC: {}", args);
    arch::qemu::exit(stet_abi::qemu_exit::FAILURE)
}
