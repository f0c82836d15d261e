//! The panic handler: a panic is always a kernel bug. It prints the cause and
//! the domain that was running, then stops (exit status 35 under QEMU).

use crate::arch;
use crate::kprintln;

#[panic_handler]
fn panic(info: &core::panic::PanicInfo<'_>) -> ! {
    match arch::percpu::current() {
        Some((i, oid)) => kprintln!(
            "KERNEL PANIC: {} (domain {} with root oid {:#x})",
            info,
            i,
            oid
        ),
        None => kprintln!("KERNEL PANIC: {} (no domain running)", info),
    }
    arch::qemu::exit(stet_abi::qemu_exit::FAILURE)
}
