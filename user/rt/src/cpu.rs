//! CPU access a user program may use: the time-stamp counter (which counts
//! guest instructions under `-icount`), the SSE registers (to check that
//! the kernel preserves them), the privilege level, and instructions a
//! keeper emulates.
#![allow(unsafe_code)]

/// Reads the time-stamp counter, serialised so earlier instructions retire
/// first. Costs a fixed number of instructions, measured by the benchmarks.
#[inline(always)]
pub fn rdtsc() -> u64 {
    let lo: u32;
    let hi: u32;
    // SAFETY: LFENCE and RDTSC have no memory effects; CR4.TSD is clear.
    unsafe {
        core::arch::asm!("lfence", "rdtsc", out("eax") lo, out("edx") hi, options(nomem, nostack));
    }
    ((hi as u64) << 32) | lo as u64
}

/// Loads xmm0..xmm15 with `seed ^ i` (low quadword).
pub fn load_xmm(seed: u64) {
    // SAFETY: writes only xmm registers, which compiled (soft-float) code
    // never uses, so no Rust value lives in them.
    unsafe {
        core::arch::asm!(
            "mov rax, {s}", "movq xmm0, rax",
            "xor rax, 1", "movq xmm1, rax", "xor rax, 1",
            "xor rax, 2", "movq xmm2, rax", "xor rax, 2",
            "xor rax, 3", "movq xmm3, rax", "xor rax, 3",
            "xor rax, 4", "movq xmm4, rax", "xor rax, 4",
            "xor rax, 5", "movq xmm5, rax", "xor rax, 5",
            "xor rax, 6", "movq xmm6, rax", "xor rax, 6",
            "xor rax, 7", "movq xmm7, rax", "xor rax, 7",
            "xor rax, 8", "movq xmm8, rax", "xor rax, 8",
            "xor rax, 9", "movq xmm9, rax", "xor rax, 9",
            "xor rax, 10", "movq xmm10, rax", "xor rax, 10",
            "xor rax, 11", "movq xmm11, rax", "xor rax, 11",
            "xor rax, 12", "movq xmm12, rax", "xor rax, 12",
            "xor rax, 13", "movq xmm13, rax", "xor rax, 13",
            "xor rax, 14", "movq xmm14, rax", "xor rax, 14",
            "xor rax, 15", "movq xmm15, rax",
            s = in(reg) seed,
            out("rax") _,
            options(nomem, nostack),
        );
    }
}

/// Returns the first register (0..=15) whose value differs from what
/// [`load_xmm`] put there, or `None` when all are intact.
pub fn check_xmm(seed: u64) -> Option<u32> {
    let mut got = [0u64; 16];
    // SAFETY: reads xmm registers into a local array of 16 quadwords.
    unsafe {
        core::arch::asm!(
            "movq [{p} + 0], xmm0", "movq [{p} + 8], xmm1",
            "movq [{p} + 16], xmm2", "movq [{p} + 24], xmm3",
            "movq [{p} + 32], xmm4", "movq [{p} + 40], xmm5",
            "movq [{p} + 48], xmm6", "movq [{p} + 56], xmm7",
            "movq [{p} + 64], xmm8", "movq [{p} + 72], xmm9",
            "movq [{p} + 80], xmm10", "movq [{p} + 88], xmm11",
            "movq [{p} + 96], xmm12", "movq [{p} + 104], xmm13",
            "movq [{p} + 112], xmm14", "movq [{p} + 120], xmm15",
            p = in(reg) got.as_mut_ptr(),
            options(nostack),
        );
    }
    (0..16u32).find(|&i| got[i as usize] != seed ^ i as u64)
}

/// The privilege level this code runs at: the requested privilege level
/// (the low two bits) of the code segment selector in `cs`. 3 in every
/// domain (ring 3); the kernel alone runs at 0.
pub fn privilege_level() -> u8 {
    let cs: u16;
    // SAFETY: reading a segment register has no memory effects.
    unsafe {
        core::arch::asm!("mov {0:x}, cs", out(reg) cs, options(nomem, nostack, preserves_flags))
    };
    (cs & 3) as u8
}

/// Executes `ud2` with `v` in `rax` and returns `rax` afterwards: a domain
/// keeper that emulates the instruction (and moves `rip` past its two
/// bytes) decides the result.
#[inline(always)]
pub fn ud2_emulated(v: u64) -> u64 {
    let mut r = v;
    // SAFETY: `ud2` raises #UD; the domain stops and its keeper either
    // resumes it after the instruction (with any `rax`) or leaves it
    // stopped. No memory is touched.
    unsafe { core::arch::asm!("ud2", inlateout("rax") r, options(nostack, nomem)) };
    r
}

/// A raw `syscall` with `nr` in `rax` (what a foreign, Linux-ABI domain
/// does; its keeper answers). Returns `rax` afterwards.
#[inline(always)]
pub fn foreign_syscall(nr: u64) -> u64 {
    let mut r = nr;
    // SAFETY: in a foreign domain the kernel turns `syscall` into a message
    // to the keeper, which sets registers and resumes after the
    // instruction; rcx and r11 are clobbered as by the CPU.
    unsafe {
        core::arch::asm!("syscall", inlateout("rax") r, out("rcx") _, out("r11") _, options(nostack));
    }
    r
}
