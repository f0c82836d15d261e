//! Leaving QEMU through its `isa-debug-exit` device (port 0xf4). On real
//! hardware the write goes nowhere and the caller halts instead.

use x86_64::instructions::port::Port;

/// Writes `code` to the debug-exit port; QEMU exits with `(code << 1) | 1`.
pub fn exit(code: u32) -> ! {
    // SAFETY: port 0xf4 is the debug-exit device under QEMU and unused on
    // the machines Stet supports; writing it has no other effect.
    unsafe { Port::<u32>::new(0xf4).write(code) };
    halt_forever()
}

/// Stops the CPU for good.
pub fn halt_forever() -> ! {
    loop {
        x86_64::instructions::interrupts::disable();
        x86_64::instructions::hlt();
    }
}
