//! `_start`: the kernel enters here with `rsp` at the stack top and the
//! argument the image gave it in `rdi`.
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
