//! The one system call: invoke a key. Registers as in docs/ABI.md and
//! `stet_abi::invoke`; `syscall` clobbers `rcx` and `r11`, the kernel
//! writes the receive buffer.
#![allow(unsafe_code)]

/// The registers of an invocation (what goes in) and of the message that
/// comes back (what comes out), in ABI order.
#[derive(Clone, Copy, Debug, Default)]
pub struct Regs {
    /// `rax`: control word in, key info | source << 8 out.
    pub rax: u64,
    /// `rdi`: order code in, order or result code out.
    pub rdi: u64,
    /// `rsi`, `rdx`, `r10`, `r8`: data words.
    pub w: [u64; 4],
    /// `r9`: string address in, full string length out.
    pub r9: u64,
}

/// Invokes with `regs`, receive buffer `buf` of capacity `cap`.
#[inline(always)]
pub fn raw(regs: Regs, buf: u64, cap: u64) -> Regs {
    let mut r = regs;
    // SAFETY: the kernel reads the registers named here, writes at most
    // `cap` bytes at `buf` (the caller passes a buffer it owns, or cap 0),
    // clobbers rcx and r11 like the CPU, and never touches the stack.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") r.rax,
            inlateout("rdi") r.rdi,
            inlateout("rsi") r.w[0],
            inlateout("rdx") r.w[1],
            inlateout("r10") r.w[2],
            inlateout("r8") r.w[3],
            inlateout("r9") r.r9,
            in("r12") buf,
            in("r13") cap,
            out("rcx") _,
            out("r11") _,
            options(nostack),
        );
    }
    r
}
