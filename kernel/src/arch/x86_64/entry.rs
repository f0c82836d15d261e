//! Every way into and out of the kernel.
//!
//! **Interrupt model.** The CPU has one kernel stack. Every entry — a
//! `syscall`, an exception or an interrupt from user mode — saves the user
//! registers into the current program's [`TrapFrame`], switches to the top of
//! the (empty) kernel stack and calls into Rust. Rust never returns to the
//! entry stub: it finishes its work and leaves through [`enter_user`], which
//! restores some program's frame. Nothing of a program's state lives on the
//! kernel stack between traps, so a program that cannot proceed is simply
//! not resumed, and its re-executed instruction will start over (Fluke's
//! atomic API; KeyKOS's restartable invocations).
//!
//! * `syscall_entry`: `swapgs`, park the user `rsp`, point `rsp` at the top
//!   of the current frame and push the same layout the CPU pushes for an
//!   interrupt, then the general registers. ~25 instructions.
//! * `isr_stub_N` → `isr_common`: from user mode the CPU has already pushed
//!   `ss, rsp, rflags, cs, rip` (and an error code) into the frame, because
//!   the TSS `rsp0` points at the frame's top; the stub adds the vector and
//!   the general registers. From kernel mode (the idle loop, or a kernel bug)
//!   the frame lands on the kernel stack and [`crate::trap::on_kernel_trap`]
//!   decides.
//! * `resume_user`: pop the general registers and leave by `sysretq` when
//!   the frame came from `syscall` (cheap), else by `iretq` (restores
//!   everything, including `rcx` and `r11`).

use super::{gdt, percpu};

/// Vector number recorded for frames saved by `syscall`.
pub const SYSCALL_VECTOR: u64 = 0x100;
/// Vector number for a frame that has never run (leave by `iretq`).
pub const FRESH_VECTOR: u64 = 0x101;

/// A program's user-mode registers as saved by the entry paths.
/// The order is the push order reversed; assembly depends on it.
///
/// The selectors and flags are private: every frame holds user selectors
/// (the entry paths save what the CPU pushed from user mode, and
/// [`TrapFrame::FRESH`] is the only other start) and flags that give user
/// mode no privilege ([`set_rflags`](TrapFrame::set_rflags) masks them), so
/// [`enter_user`] can never leave into ring 0 or with I/O privilege.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
#[allow(missing_docs)]
pub struct TrapFrame {
    pub r15: u64,
    pub r14: u64,
    pub r13: u64,
    pub r12: u64,
    pub r11: u64,
    pub r10: u64,
    pub r9: u64,
    pub r8: u64,
    pub rbp: u64,
    pub rdi: u64,
    pub rsi: u64,
    pub rdx: u64,
    pub rcx: u64,
    pub rbx: u64,
    pub rax: u64,
    /// Exception vector, [`SYSCALL_VECTOR`] or [`FRESH_VECTOR`].
    pub vector: u64,
    /// CPU error code (0 when the vector has none).
    pub error: u64,
    pub rip: u64,
    cs: u64,
    rflags: u64,
    pub rsp: u64,
    ss: u64,
}

impl TrapFrame {
    /// All zero (null selectors: leaving on it faults in the kernel).
    pub const ZERO: TrapFrame = TrapFrame {
        r15: 0,
        r14: 0,
        r13: 0,
        r12: 0,
        r11: 0,
        r10: 0,
        r9: 0,
        r8: 0,
        rbp: 0,
        rdi: 0,
        rsi: 0,
        rdx: 0,
        rcx: 0,
        rbx: 0,
        rax: 0,
        vector: 0,
        error: 0,
        rip: 0,
        cs: 0,
        rflags: 0,
        rsp: 0,
        ss: 0,
    };

    /// A program that has never run: user selectors, every register 0,
    /// left by `iretq`.
    pub const FRESH: TrapFrame = TrapFrame {
        cs: gdt::USER_CS as u64,
        ss: gdt::USER_DS as u64,
        vector: FRESH_VECTOR,
        ..TrapFrame::ZERO
    };

    /// Whether this frame was saved while the CPU ran user code.
    pub fn is_user(&self) -> bool {
        self.cs & 3 == 3
    }

    /// The flags.
    pub fn rflags(&self) -> u64 {
        self.rflags
    }

    /// Sets the flags a program may set (`USER_RFLAGS`), with interrupts
    /// on and the reserved bit 1.
    pub fn set_rflags(&mut self, v: u64) {
        self.rflags = (v & stet_abi::domain::USER_RFLAGS) | 0x202;
    }
}

const FRAME_SIZE: usize = core::mem::size_of::<TrapFrame>();

core::arch::global_asm!(
    include_str!(concat!(env!("OUT_DIR"), "/isr_stubs.s")),
    r#"
    // The general registers, in TrapFrame order (rax at the highest address).
    .macro push_gprs
    push rax
    push rbx
    push rcx
    push rdx
    push rsi
    push rdi
    push rbp
    push r8
    push r9
    push r10
    push r11
    push r12
    push r13
    push r14
    push r15
    .endm
    .macro pop_gprs
    pop r15
    pop r14
    pop r13
    pop r12
    pop r11
    pop r10
    pop r9
    pop r8
    pop rbp
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rbx
    pop rax
    .endm

    .section .text.entry, "ax"
    .global syscall_entry
syscall_entry:
    swapgs
    mov gs:[{user_rsp}], rsp
    mov rsp, gs:[{frame_top}]
    push {user_ds}
    push qword ptr gs:[{user_rsp}]
    push r11
    push {user_cs}
    push rcx
    push 0
    push {syscall_vector}
    push_gprs
    mov rsp, gs:[{kstack_top}]
    call {syscall_rust}
    ud2

isr_common:
    test byte ptr [rsp + 24], 3
    jz 1f
    swapgs
1:
    push_gprs
    cld
    mov rdi, rsp
    test byte ptr [rsp + {cs_off}], 3
    jz 2f
    mov rsp, gs:[{kstack_top}]
    call {user_trap_rust}
    ud2
2:
    call {kernel_trap_rust}
    pop_gprs
    add rsp, 16
    iretq

    .global resume_user
resume_user:
    mov rsp, rdi
    pop_gprs
    cmp qword ptr [rsp], {syscall_vector}
    jne 3f
    mov rcx, [rsp + 16]
    bt rcx, 47
    jc 3f
    mov r11, [rsp + 32]
    mov rsp, [rsp + 40]
    swapgs
    sysretq
3:
    add rsp, 16
    swapgs
    iretq
"#,
    user_rsp = const percpu::USER_RSP,
    frame_top = const percpu::FRAME_TOP,
    kstack_top = const percpu::KSTACK_TOP,
    user_ds = const gdt::USER_DS as u64,
    user_cs = const gdt::USER_CS as u64,
    syscall_vector = const SYSCALL_VECTOR,
    cs_off = const core::mem::offset_of!(TrapFrame, cs),
    syscall_rust = sym syscall_rust,
    user_trap_rust = sym user_trap_rust,
    kernel_trap_rust = sym kernel_trap_rust,
);

unsafe extern "C" {
    fn syscall_entry();
    fn resume_user(frame: *const TrapFrame) -> !;
    static isr_stub_table: [u64; 256];
}

/// Address of the `syscall` entry point, for `LSTAR`.
pub fn syscall_entry_addr() -> u64 {
    syscall_entry as *const () as u64
}

/// Address of the stub for interrupt `vector`, for the IDT.
pub fn isr_stub(vector: u8) -> u64 {
    // SAFETY: the table is 256 initialised quadwords in .rodata.
    unsafe { isr_stub_table[vector as usize] }
}

/// Leaves the kernel and runs the program whose registers are `frame`.
/// The frame must belong to the program last passed to [`activate`].
pub fn enter_user(frame: &TrapFrame) -> ! {
    debug_assert!(frame.is_user());
    // Frames are only made by `TrapFrame::new_user` or saved by the entry
    // paths, so they hold user selectors; the kernel stack is abandoned,
    // which the interrupt model allows (nothing on it is live).
    // SAFETY: `iretq`/`sysretq` with user selectors cannot enter ring 0.
    unsafe { resume_user(frame) }
}

/// Something that holds a program's frame (a prepared domain).
pub trait HasFrame {
    /// The frame.
    fn frame(&self) -> &TrapFrame;
}

/// Makes the frame of `table[index]` the place where the next trap from
/// user mode saves registers (TSS `rsp0` and the `syscall` path), and
/// records the program's identity for fault reports.
///
/// The frame must outlive this trap, since the next one writes it: so it
/// comes from a table that lives for ever (`&'static mut`: the kernel's
/// table of prepared domains), never from the stack. A frame a `HasFrame`
/// gives is borrowed from the entry (or is itself `'static`), so it lies in
/// memory that lives for ever too. An `index` past the table panics (a
/// kernel bug); the callers have just indexed the table with it, so the
/// check costs nothing.
#[inline(always)]
pub fn activate<T: HasFrame>(table: &&'static mut [T], index: usize, oid: u64) {
    let top = table[index].frame() as *const TrapFrame as u64 + FRAME_SIZE as u64;
    // SAFETY: the frame is in memory that lives for ever (above) and is a
    // `TrapFrame`, which the entry paths fill in the layout they push.
    unsafe {
        percpu::set_current(index, top, oid);
        gdt::set_rsp0(top);
    }
}

extern "C" fn syscall_rust() -> ! {
    // SAFETY: a trap entry point, first thing.
    unsafe { super::scratch::reset() };
    // SAFETY: a trap entry point, on an empty kernel stack: the only holder
    // of the kernel state until it leaves through `enter_user`.
    let k = unsafe { crate::kernel::KERNEL.get() };
    let Some(k) = k.as_mut() else {
        crate::fatal(format_args!("syscall before the kernel was built"))
    };
    crate::invoke::on_syscall(k)
}

extern "C" fn user_trap_rust(frame: *mut TrapFrame) -> ! {
    // SAFETY: a trap entry point, first thing.
    unsafe { super::scratch::reset() };
    // Vectors with their own interrupt stack (NMI, double fault, machine
    // check) push the user state on that stack instead of into the current
    // program's frame: copy it home, so the frame is always the truth.
    let home = percpu::frame_top() - FRAME_SIZE as u64;
    if frame as u64 != home {
        // `frame` is the IST frame `isr_common` just pushed; `home` is the
        // current program's TrapFrame (set by `activate`).
        // SAFETY: both valid; disjoint (interrupt stack vs. task table).
        unsafe { core::ptr::copy_nonoverlapping(frame, home as *mut TrapFrame, 1) };
    }
    // SAFETY: `isr_common` passes the frame it just filled. Only the vector,
    // error code and rip are read.
    let (vector, error, rip) = unsafe { ((*frame).vector, (*frame).error, (*frame).rip) };
    let cr2 = super::cpu::read_cr2();
    // SAFETY: a trap entry point, as in `syscall_rust`.
    let k = unsafe { crate::kernel::KERNEL.get() };
    let Some(k) = k.as_mut() else {
        crate::fatal(format_args!("user trap before the kernel was built"))
    };
    crate::trap::on_user_trap(k, vector as u8, error, rip, cr2)
}

extern "C" fn kernel_trap_rust(frame: *mut TrapFrame) {
    // SAFETY: `isr_common` passes the frame it pushed on the kernel stack;
    // it stays valid until this function returns.
    let f = unsafe { &*frame };
    // Deliberately no access to the kernel state here: this trap interrupted
    // kernel code (the idle loop, or a bug) that may hold it.
    crate::trap::on_kernel_trap(
        f.vector as u8,
        f.error,
        f.rip,
        f.rsp,
        super::cpu::read_cr2(),
    );
}
