//! The panic handler: a panic is always a kernel bug. It prints the cause and
//! the program that was running, then stops (exit status 35 under QEMU).

use crate::arch;
use crate::kprintln;

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    match arch::percpu::current() {
        Some((i, name)) => kprintln!("KERNEL PANIC: {} (program {} '{}')", info, i, name),
        None => kprintln!("KERNEL PANIC: {} (no program running)", info),
    }
    arch::qemu::exit(stet_abi::qemu_exit::FAILURE)
}
