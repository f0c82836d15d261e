//! The kernel's state: one structure, reached once per trap.

use crate::arch::kcell::KCell;
use crate::task::{Task, MAX_TASKS};
use stet_kconfig::Config;
use stet_physmem::boot::BootAllocator;
use stet_physmem::pool::FramePool;

/// Everything the kernel keeps. Fixed size; nothing in it grows after boot.
pub struct Kernel {
    /// The command-line configuration.
    pub config: Config,
    /// The program table.
    pub tasks: [Task; MAX_TASKS],
    /// The program on the CPU (whose frame the entry paths save into).
    pub current: Option<usize>,
    /// The program whose FPU state is in the CPU's registers.
    pub fpu_owner: Option<usize>,
    /// Free physical frames (user pages and page tables).
    pub pool: Option<FramePool<'static>>,
    /// The boot allocator, sealed: kept to show it refuses.
    pub bootmem: Option<BootAllocator>,
    /// Timer interrupts taken while a program ran.
    pub ticks: u64,
}

/// The one instance. Reached only through trap entry points (`arch`).
pub static KERNEL: KCell<Kernel> = KCell::new(Kernel {
    config: Config {
        hz: stet_kconfig::DEFAULT_HZ,
        exit_on_idle: false,
        selftest: None,
        unknown: 0,
    },
    tasks: [const { Task::EMPTY }; MAX_TASKS],
    current: None,
    fpu_owner: None,
    pool: None,
    bootmem: None,
    ticks: 0,
});

impl Kernel {
    /// The frame pool (exists from `kmain` on).
    pub fn pool(&mut self) -> &mut FramePool<'static> {
        self.pool
            .as_mut()
            .expect("frame pool used before boot built it")
    }
}
