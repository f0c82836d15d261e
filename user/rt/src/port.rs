//! Port I/O from user mode. The CPU checks every `in` and `out` against the
//! TSS I/O permission bitmap, which the kernel opens for exactly the range
//! of the domain's ioports key (root slot 12) while it runs: a port outside
//! it raises #GP, which goes to the domain keeper as an `EXCEPTION` fault
//! (vector 13), like any fault. So these functions cannot touch the
//! program's memory and are safe to call; what a device does with a write
//! is the business of whoever was given its ports.
//!
//! The instructions are in assembly routines so that a test can name the
//! exact `rip` the kernel reports ([`in8_rip`], [`out8_rip`]).
#![allow(unsafe_code)]

core::arch::global_asm!(
    r#"
    .section .text.ports, "ax"
    .global stet_port_in8
stet_port_in8:
    mov edx, edi
    xor eax, eax
    .global stet_port_in8_insn
stet_port_in8_insn:
    in al, dx
    ret

    .global stet_port_out8
stet_port_out8:
    mov edx, edi
    mov eax, esi
    .global stet_port_out8_insn
stet_port_out8_insn:
    out dx, al
    ret
"#
);

unsafe extern "C" {
    fn stet_port_in8(port: u32) -> u32;
    fn stet_port_out8(port: u32, value: u32);
    static stet_port_in8_insn: u8;
    static stet_port_out8_insn: u8;
}

/// Reads one byte from `port` (`in al, dx`).
pub fn in8(port: u16) -> u8 {
    // SAFETY: `in` reads a device register into `al`; it touches no memory.
    // A port this domain does not hold faults to its keeper instead.
    unsafe { stet_port_in8(port as u32) as u8 }
}

/// Writes one byte to `port` (`out dx, al`).
pub fn out8(port: u16, v: u8) {
    // SAFETY: as for `in8`: no memory is touched.
    unsafe { stet_port_out8(port as u32, v as u32) }
}

/// The address of the `in` instruction of [`in8`] (what the kernel reports
/// as the `rip` of its #GP); the instruction is one byte long.
pub fn in8_rip() -> u64 {
    core::ptr::addr_of!(stet_port_in8_insn) as u64
}

/// The address of the `out` instruction of [`out8`]; one byte long.
pub fn out8_rip() -> u64 {
    core::ptr::addr_of!(stet_port_out8_insn) as u64
}

/// QEMU's `isa-debug-exit` port: a domain holding it can end the run.
pub const QEMU_EXIT_PORT: u16 = 0xf4;

/// Ends the QEMU run with status 33 (the tests' "passed"), as the kernel's
/// `exit_on_idle` does. The domain must hold `ioports:0xf4:1` or more;
/// without it the write faults to its keeper and this returns.
pub fn qemu_exit_success() {
    out8(QEMU_EXIT_PORT, stet_abi::qemu_exit::SUCCESS as u8);
}
