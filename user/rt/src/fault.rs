//! Deliberate faults, for the tests that prove the kernel survives them.
//! Each function prints nothing itself; [`Fault::rip`] tells the caller the
//! address of the faulting instruction so the test can match the kernel's
//! report exactly.
#![allow(unsafe_code)]

core::arch::global_asm!(
    r#"
    .section .text.faults, "ax"
    .global stet_fault_write
stet_fault_write:
    .global stet_fault_write_insn
stet_fault_write_insn:
    mov byte ptr [rdi], 1
    ret

    .global stet_fault_ud
stet_fault_ud:
    .global stet_fault_ud_insn
stet_fault_ud_insn:
    ud2

    .global stet_fault_div
stet_fault_div:
    xor ecx, ecx
    mov eax, 1
    xor edx, edx
    .global stet_fault_div_insn
stet_fault_div_insn:
    div ecx
    ret

    .global stet_fault_jump
stet_fault_jump:
    jmp rdi
"#
);

unsafe extern "C" {
    fn stet_fault_write(addr: u64);
    fn stet_fault_ud();
    fn stet_fault_div();
    fn stet_fault_jump(addr: u64);
    static stet_fault_write_insn: u8;
    static stet_fault_ud_insn: u8;
    static stet_fault_div_insn: u8;
}

/// A kernel-half address: the base of the kernel image.
pub const KERNEL_ADDRESS: u64 = 0xffff_ffff_8010_0000;

static READ_ONLY: u8 = 7;

/// The faults a test can provoke.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// Store to a read-only page of the program's own image.
    WriteReadOnly,
    /// Undefined opcode (`ud2`).
    InvalidOpcode,
    /// Integer division by zero.
    DivideByZero,
    /// Jump to a kernel address.
    JumpToKernel,
}

impl Fault {
    /// The address the kernel will report as the faulting `rip`.
    pub fn rip(self) -> u64 {
        match self {
            Fault::WriteReadOnly => core::ptr::addr_of!(stet_fault_write_insn) as u64,
            Fault::InvalidOpcode => core::ptr::addr_of!(stet_fault_ud_insn) as u64,
            Fault::DivideByZero => core::ptr::addr_of!(stet_fault_div_insn) as u64,
            Fault::JumpToKernel => KERNEL_ADDRESS,
        }
    }

    /// The data address involved (for the page fault), if any.
    pub fn address(self) -> Option<u64> {
        match self {
            Fault::WriteReadOnly => Some(core::ptr::addr_of!(READ_ONLY) as u64),
            Fault::JumpToKernel => Some(KERNEL_ADDRESS),
            _ => None,
        }
    }

    /// Commits the fault. Returns only if the kernel failed to stop it.
    pub fn trigger(self) {
        // Each routine executes one faulting instruction, where the kernel
        // ends the program; if it did not, the routine returns normally.
        // SAFETY: no Rust-visible state is touched (the store hits a static).
        unsafe {
            match self {
                Fault::WriteReadOnly => stet_fault_write(core::ptr::addr_of!(READ_ONLY) as u64),
                Fault::InvalidOpcode => stet_fault_ud(),
                Fault::DivideByZero => stet_fault_div(),
                Fault::JumpToKernel => stet_fault_jump(KERNEL_ADDRESS),
            }
        }
    }
}

/// `int3` with `rdi` = `arg`: a trap to the domain keeper (exception 3).
/// Supervised services end this way (`crate::service::exit`).
pub fn breakpoint(arg: u64) {
    // SAFETY: a breakpoint trap; it touches no memory, and the kernel turns
    // it into a fault message to the keeper (or stops the domain).
    unsafe { core::arch::asm!("int3", in("rdi") arg, options(nomem, nostack)) };
}
