//! Programs: the table of running user programs and their saved state.
//!
//! Issue #3 turns these into KeyKOS domains (registers in nodes, keys,
//! meters, keepers). For now a task is a name, a register frame, an FPU
//! image and an address space.

use crate::arch::entry::TrapFrame;
use crate::arch::fpu::FpuState;
use crate::vm::Space;

/// Most programs at once.
pub const MAX_TASKS: usize = 16;

/// Where a task is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Slot unused.
    Free,
    /// Wants the CPU.
    Ready,
}

/// One program.
pub struct Task {
    /// User registers, saved by the entry paths. Must stay at a fixed
    /// address while the task can run (the table is a static).
    pub frame: TrapFrame,
    /// FPU/SSE/AVX registers.
    pub fpu: FpuState,
    /// Life-cycle state.
    pub state: State,
    /// Name from the boot image.
    pub name: &'static str,
    /// Address space.
    pub space: Option<Space>,
    /// Timer ticks spent running.
    pub ticks: u64,
    /// Times the timer took the CPU away while another task was ready.
    pub preemptions: u64,
}

impl Task {
    /// An unused slot.
    pub const EMPTY: Task = Task {
        frame: TrapFrame::ZERO,
        fpu: FpuState::initial(),
        state: State::Free,
        name: "",
        space: None,
        ticks: 0,
        preemptions: 0,
    };
}
