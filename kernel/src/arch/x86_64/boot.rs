//! The first instructions: the 32-bit entry shared by PVH (QEMU `-kernel`,
//! Firecracker, cloud-hypervisor) and Multiboot2 (GRUB on real machines),
//! early page tables, the switch to long mode and the jump to the higher
//! half.
//!
//! Both protocols enter at `_start32` in 32-bit protected mode with paging
//! off and `ebx` pointing at the boot information; Multiboot2 also puts its
//! magic in `eax`, PVH puts its magic at the start of the structure. The
//! Rust side (`start::kernel_entry`) tells them apart.
//!
//! The early tables map the first 1 GiB three times with 2 MiB pages:
//! identity (so this code keeps running when paging turns on), at the
//! direct-map base `0xffff_8000_0000_0000`, and at the kernel base
//! `0xffff_ffff_8000_0000`. `paging::init` replaces them with the real
//! tables before any user program exists.

use super::start::kernel_entry;

/// Size of the boot CPU's kernel stack (the one stack all traps use).
pub const KERNEL_STACK_SIZE: usize = 64 * 1024;
/// Size of each interrupt stack (double fault, NMI, machine check).
pub const IST_STACK_SIZE: usize = 16 * 1024;

core::arch::global_asm!(
    r#"
    .section .multiboot2, "a"
    .balign 8
mb2_header:
    .long 0xe85250d6
    .long 0
    .long mb2_header_end - mb2_header
    .long 0x100000000 - (0xe85250d6 + (mb2_header_end - mb2_header))
    .short 0
    .short 0
    .long 8
mb2_header_end:

    .section .note.Xen, "a", @note
    .balign 4
    .long 4
    .long 4
    .long 18
    .asciz "Xen"
    .long _start32

    .section .boot.data, "aw"
    .balign 4096
boot_pml4:      .skip 4096
boot_pdpt_low:  .skip 4096
boot_pdpt_high: .skip 4096
boot_pd:        .skip 4096
boot_stack:     .skip 1024
boot_stack_top:
    .balign 8
boot_gdt:
    .quad 0
    .quad 0x00af9a000000ffff
    .quad 0x00cf92000000ffff
boot_gdt_end:
boot_gdt_ptr:
    .short boot_gdt_end - boot_gdt - 1
    .long boot_gdt
no_lm_msg: .asciz "Stet: this CPU has no 64-bit long mode; halting.\r\n"

    .section .boot.text, "ax"
    .code32
    .global _start32
_start32:
    cli
    cld
    mov esp, offset boot_stack_top
    mov edi, eax
    mov esi, ebx
    // The TSC at entry (for the restart benchmark), kept on the boot
    // stack until the 64-bit code passes it on.
    rdtsc
    push edx
    push eax
    mov eax, 0x80000000
    cpuid
    cmp eax, 0x80000001
    jb 8f
    mov eax, 0x80000001
    cpuid
    test edx, 0x20000000
    jz 8f

    mov eax, offset boot_pdpt_low
    or eax, 3
    mov dword ptr [boot_pml4], eax
    mov dword ptr [boot_pml4 + 256 * 8], eax
    mov eax, offset boot_pdpt_high
    or eax, 3
    mov dword ptr [boot_pml4 + 511 * 8], eax
    mov eax, offset boot_pd
    or eax, 3
    mov dword ptr [boot_pdpt_low], eax
    mov dword ptr [boot_pdpt_high + 510 * 8], eax
    xor ecx, ecx
2:
    mov eax, ecx
    shl eax, 21
    or eax, 0x83
    mov dword ptr [boot_pd + ecx * 8], eax
    inc ecx
    cmp ecx, 512
    jne 2b

    mov eax, cr4
    or eax, 0x20
    mov cr4, eax
    mov eax, offset boot_pml4
    mov cr3, eax
    mov ecx, 0xC0000080
    rdmsr
    or eax, 0x100
    wrmsr
    mov eax, cr0
    or eax, 0x80010001
    mov cr0, eax
    lgdt [boot_gdt_ptr]
    // ljmp 0x08:long_mode_start (encoded by hand: assemblers disagree on
    // the Intel-syntax spelling of a 32-bit far jump)
    .byte 0xea
    .long long_mode_start
    .short 0x08

8:
    mov ebx, offset no_lm_msg
9:
    mov al, byte ptr [ebx]
    test al, al
    jz 7f
    mov dx, 0x3f8
    out dx, al
    inc ebx
    jmp 9b
7:
    hlt
    jmp 7b

    .code64
long_mode_start:
    mov ax, 0x10
    mov ds, ax
    mov es, ax
    mov ss, ax
    xor eax, eax
    mov fs, ax
    mov gs, ax
    movabs rax, offset higher_half_start
    jmp rax

    .section .text.start, "ax"
higher_half_start:
    mov r12d, edi
    mov r13d, esi
    mov eax, esp
    mov r14, qword ptr [rax]
    lea rdi, [rip + __bss_start]
    lea rcx, [rip + __bss_end]
    sub rcx, rdi
    shr rcx, 3
    xor eax, eax
    rep stosq
    lea rsp, [rip + kernel_stack_top]
    xor ebp, ebp
    mov rdi, r12
    mov rsi, r13
    mov rdx, r14
    call {entry}
    ud2

    .section .bss.stacks, "aw", @nobits
    .balign 4096
    .global kernel_stack_guard
kernel_stack_guard:
    .skip 4096
    .global kernel_stack_bottom
kernel_stack_bottom:
    .skip {kstack}
    .global kernel_stack_top
kernel_stack_top:
    .global ist_stacks
ist_stacks:
    .skip {ist} * 3
    .global ist_stacks_end
ist_stacks_end:
"#,
    entry = sym kernel_entry,
    kstack = const KERNEL_STACK_SIZE,
    ist = const IST_STACK_SIZE,
);

unsafe extern "C" {
    static kernel_stack_guard: u8;
    static kernel_stack_top: u8;
    static ist_stacks: u8;
    static __kernel_phys_start: u8;
    static __kernel_phys_end: u8;
    static __text_start: u8;
    static __text_end: u8;
    static __rodata_start: u8;
    static __rodata_end: u8;
    static __data_start: u8;
    static __data_end: u8;
}

/// Offset between the kernel's virtual and physical addresses.
pub const KERNEL_BASE: u64 = 0xffff_ffff_8000_0000;

/// Address of a linker symbol. Taking an address reads nothing.
macro_rules! sym_addr {
    ($s:ident) => {
        core::ptr::addr_of!($s) as u64
    };
}

/// The kernel image's sections as virtual address ranges, for `paging`.
#[derive(Clone, Copy, Debug)]
pub struct KernelLayout {
    /// Physical start of the image (the boot section at 1 MiB).
    pub phys_start: u64,
    /// Physical end of the image.
    pub phys_end: u64,
    /// Code: mapped read + execute.
    pub text: (u64, u64),
    /// Constants: mapped read-only, no-execute.
    pub rodata: (u64, u64),
    /// Data, bss and stacks: mapped read-write, no-execute.
    pub data: (u64, u64),
    /// The guard page below the kernel stack: left unmapped.
    pub stack_guard: u64,
    /// Top of the boot CPU's kernel stack.
    pub stack_top: u64,
    /// Base of the three interrupt stacks.
    pub ist_base: u64,
}

/// Where the linker put everything.
pub fn layout() -> KernelLayout {
    KernelLayout {
        phys_start: sym_addr!(__kernel_phys_start),
        phys_end: sym_addr!(__kernel_phys_end),
        text: (sym_addr!(__text_start), sym_addr!(__text_end)),
        rodata: (sym_addr!(__rodata_start), sym_addr!(__rodata_end)),
        data: (sym_addr!(__data_start), sym_addr!(__data_end)),
        stack_guard: sym_addr!(kernel_stack_guard),
        stack_top: sym_addr!(kernel_stack_top),
        ist_base: sym_addr!(ist_stacks),
    }
}
