//! `_start`: the kernel enters here with `rsp` at the stack top and the
//! argument the image gave it in `rdi`; [`restart`] enters it again.
#![allow(unsafe_code)]

use core::sync::atomic::{AtomicU64, Ordering};

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

/// The argument `_start` gets again when the program panics (0: a panic
/// ends the program), and how many times this domain has panicked.
static PANIC_ARG: AtomicU64 = AtomicU64::new(0);
static FAILURES: AtomicU64 = AtomicU64::new(0);

/// At most this many panics restart the program; the next one ends it.
const PANIC_RESTARTS: u64 = 2;

/// Asks that a panic start this program again at `_start` with `arg` on a
/// fresh stack (`restart`) instead of ending it: for a program that must
/// report its own failure to someone who waits on it (a UNIX keeper ends
/// its process, so the parent's `wait` returns). [`failures`] tells the new
/// start what happened. After two such restarts a panic ends the program
/// as any other.
pub fn restart_on_panic(arg: u64) {
    PANIC_ARG.store(arg, Ordering::Relaxed);
}

/// How many times this domain has failed and been started again: panicked,
/// or faulted and was restarted by its keeper ([`fault_restarted`]). Its
/// statics survive both.
pub fn failures() -> u64 {
    FAILURES.load(Ordering::Relaxed)
}

/// A program its keeper started again at `_start` after a fault (its
/// argument tells it) counts the failure, as a panic counts itself.
pub fn fault_restarted() {
    FAILURES.fetch_add(1, Ordering::Relaxed);
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    crate::println!("panic: {}", info);
    let n = FAILURES.fetch_add(1, Ordering::Relaxed) + 1;
    let arg = PANIC_ARG.load(Ordering::Relaxed);
    if arg != 0 && n <= PANIC_RESTARTS {
        // The panicking frames are abandoned, never returned to (`restart`).
        restart(arg)
    }
    crate::kernel::exit(101)
}
