//! `_start`: the kernel enters here with `rsp` at the stack top and the
//! argument the image gave it in `rdi`; [`restart`] enters it again.
#![allow(unsafe_code)]

unsafe extern "C" {
    fn __stet_main(arg: u64) -> i64;
}

core::arch::global_asm!(
    r#"
    .section .text._start, "ax"
    .global _start
_start:
    and rsp, -16
    xor ebp, ebp
    call {rust_start}
    ud2
"#,
    rust_start = sym rust_start,
);

/// Starts this program again at `_start` with `arg`, on a fresh stack
/// (`layout::STACK_TOP` down): for a domain whose data and heap were just
/// rewritten from outside while it waited (a spare UNIX keeper given a new
/// process: it finds its new state with `carry::resume`). Nothing of the
/// current stack is used again.
pub fn restart(arg: u64) -> ! {
    // `_start` needs only `rdi` and a stack pointer (it aligns it);
    // STACK_TOP is the top of this domain's own stack. No frame of the
    // current stack is returned to, so no reference into it or into the
    // rewritten memory is used again.
    // SAFETY: a valid stack for `_start`, and nothing old is used (above).
    unsafe {
        core::arch::asm!(
            "mov rsp, {top}",
            "jmp _start",
            top = in(reg) stet_abi::layout::STACK_TOP,
            in("rdi") arg,
            options(noreturn)
        )
    }
}

extern "C" fn rust_start(arg: u64) -> ! {
    // SAFETY: every program defines `__stet_main` with `stet_rt::main!`.
    let code = unsafe { __stet_main(arg) };
    crate::kernel::exit(code)
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    crate::println!("panic: {}", info);
    crate::kernel::exit(101)
}
