//! Numbers shared by the kernel, user programs and host tools.
//!
//! The system calls here are **temporary**: issue #3 replaces them with key
//! invocations. They are kept deliberately few. docs/ABI.md documents every
//! register.
#![no_std]
#![deny(unsafe_code)]

/// Temporary system call numbers (in `rax` at `syscall`).
pub mod sys {
    /// `write(rdi = buffer, rsi = length)`: print bytes on the console.
    /// Returns the length written.
    pub const WRITE: u64 = 0;
    /// `exit(rdi = code)`: end the calling program. Does not return.
    pub const EXIT: u64 = 1;
    /// `yield()`: give the rest of the time slice to the next program.
    pub const YIELD: u64 = 2;
    /// `release(rdi = address, rsi = length)`: drop the demand-zero pages
    /// in a range (they read as zero again on next touch). Returns pages freed.
    pub const RELEASE: u64 = 3;
    /// `nop()`: return 0 at once (the null system call, for benchmarks).
    pub const NOP: u64 = 4;
}

/// Errors, returned in `rax` as small negative numbers.
pub mod err {
    /// Unknown system call number.
    pub const NO_SUCH_CALL: i64 = -1;
    /// A buffer is not mapped readable in the caller's address space.
    pub const BAD_ADDRESS: i64 = -2;
    /// A length exceeds the limit of the call.
    pub const TOO_LONG: i64 = -3;
}

/// Longest `write` in bytes.
pub const MAX_WRITE: u64 = 4096;

/// Values the kernel writes to QEMU's `isa-debug-exit` port (0xf4). QEMU
/// exits with status `(value << 1) | 1`.
pub mod qemu_exit {
    /// Every program ended and the kernel is idle (status 33).
    pub const SUCCESS: u32 = 0x10;
    /// The kernel panicked or took a fault (status 35).
    pub const FAILURE: u32 = 0x11;
    /// QEMU exit status for [`SUCCESS`].
    pub const SUCCESS_STATUS: i32 = 33;
    /// QEMU exit status for [`FAILURE`].
    pub const FAILURE_STATUS: i32 = 35;
}

/// Fixed user address-space layout for boot programs.
pub mod layout {
    /// One past the top of the initial stack.
    pub const STACK_TOP: u64 = 0x0000_7fff_ffff_0000;
    /// Size of the demand-zero stack region.
    pub const STACK_SIZE: u64 = 1 << 20;
    /// Start of the demand-zero heap region.
    pub const HEAP_START: u64 = 0x0000_1000_0000_0000;
    /// Size of the demand-zero heap region.
    pub const HEAP_SIZE: u64 = 64 << 20;
}
