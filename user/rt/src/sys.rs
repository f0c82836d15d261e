//! System-call stubs (the temporary interface of issue #2; see
//! docs/ABI.md). `syscall` clobbers `rcx` and `r11`.
#![allow(unsafe_code)]

use stet_abi::sys;

#[inline(always)]
fn syscall2(nr: u64, a0: u64, a1: u64) -> i64 {
    let ret: i64;
    // SAFETY: the kernel reads rax/rdi/rsi, writes rax, and (like the CPU)
    // clobbers rcx and r11; it touches no user memory except through the
    // documented arguments, and never the stack.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") nr as i64 => ret,
            in("rdi") a0,
            in("rsi") a1,
            out("rcx") _,
            out("r11") _,
            options(nostack),
        );
    }
    ret
}

/// Prints `bytes` on the console. Returns bytes written or an error.
pub fn write(bytes: &[u8]) -> i64 {
    syscall2(sys::WRITE, bytes.as_ptr() as u64, bytes.len() as u64)
}

/// Raw `write` with any pointer (for tests of the kernel's checks).
pub fn write_raw(addr: u64, len: u64) -> i64 {
    syscall2(sys::WRITE, addr, len)
}

/// Ends the program.
pub fn exit(code: i64) -> ! {
    syscall2(sys::EXIT, code as u64, 0);
    unreachable!("exit returned")
}

/// Gives up the CPU.
pub fn yield_now() {
    syscall2(sys::YIELD, 0, 0);
}

/// Drops demand-zero pages in a range; returns pages freed.
pub fn release(addr: u64, len: u64) -> i64 {
    syscall2(sys::RELEASE, addr, len)
}

/// The null system call.
#[inline(always)]
pub fn nop() -> i64 {
    syscall2(sys::NOP, 0, 0)
}

/// An unassigned system-call number (to check the error path).
pub fn invalid() -> i64 {
    syscall2(0xdead, 0, 0)
}
