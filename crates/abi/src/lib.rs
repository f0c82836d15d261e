//! Numbers shared by the kernel, user programs and host tools: the
//! invocation registers, order codes, result codes, the layout of a domain's
//! nodes, fault messages and QEMU exit codes. docs/ABI.md is the prose
//! version of this crate and is kept true with it.
#![no_std]

pub mod code;
pub mod domain;
pub mod fault;
pub mod invoke;
pub mod order;
pub mod service;
pub mod wallclock;

#[cfg(test)]
extern crate std;

#[cfg(test)]
mod tests;

/// Longest message string in bytes.
pub const MAX_STRING: usize = 4096;

/// Values the kernel writes to QEMU's `isa-debug-exit` port (0xf4). QEMU
/// exits with status `(value << 1) | 1`.
pub mod qemu_exit {
    /// Every domain is idle and nothing can wake one (status 33).
    pub const SUCCESS: u32 = 0x10;
    /// The kernel panicked or took a fault (status 35).
    pub const FAILURE: u32 = 0x11;
    /// QEMU exit status for [`SUCCESS`].
    pub const SUCCESS_STATUS: i32 = 33;
    /// QEMU exit status for [`FAILURE`].
    pub const FAILURE_STATUS: i32 = 35;
}

/// The address-space layout the image builder gives boot domains.
pub mod layout {
    /// One past the top of the initial stack.
    pub const STACK_TOP: u64 = 0x0000_7fff_ffff_0000;
    /// Start of the heap area (pages appear only where someone puts them:
    /// the image builder or a segment keeper).
    pub const HEAP_START: u64 = 0x0000_1000_0000_0000;
    /// Size of the heap area a segment keeper may grow.
    pub const HEAP_SIZE: u64 = 64 << 20;
    /// Size of the stack area a segment keeper may grow.
    pub const STACK_SIZE: u64 = 1 << 20;
}
