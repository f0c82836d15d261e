//! The kernel console: COM1, a 16550 UART, used for boot messages, the
//! console key (early output and tests), fault reports and panics.
//!
//! The user-mode console driver (`consoled`) may own the same UART through
//! its ioports key and program it while the kernel prints (the kernel runs
//! whenever the driver is interrupted). The kernel only ever waits for the
//! transmitter and writes the data register, which is safe in any state the
//! driver leaves but one: the divisor latch (LCR bit 7) open, when the data
//! register is the divisor's low byte. So every write closes the latch for
//! its duration and puts the driver's LCR back after.

use super::kcell::KCell;
use core::fmt;
use uart_16550::backend::PioBackend;
use uart_16550::{Config, Uart16550};
use x86_64::instructions::port::Port;

static COM1: KCell<Option<Uart16550<PioBackend>>> = KCell::new(None);

/// COM1's line control register and its divisor-latch access bit.
const COM1_LCR: u16 = 0x3fb;
const LCR_DLAB: u8 = 0x80;

/// Initialises COM1 (115200 8N1).
pub fn init() {
    // SAFETY: 0x3f8 is COM1 on PC-compatible machines; the kernel owns it.
    let uart = unsafe { Uart16550::new_port(0x3f8) };
    if let Ok(mut u) = uart {
        if u.init(Config::default()).is_ok() {
            // SAFETY: boot, single-threaded, first use.
            unsafe { *COM1.get() = Some(u) };
        }
    }
}

/// Writes raw bytes, turning `\n` into `\r\n` for terminals.
pub fn write_bytes(bytes: &[u8]) {
    // SAFETY: the console is used only with interrupts off, by one CPU; a
    // nested use from the kernel-fault path can at worst interleave bytes.
    let Some(u) = (unsafe { (*COM1.as_ptr()).as_mut() }) else {
        return;
    };
    let mut lcr = Port::<u8>::new(COM1_LCR);
    // SAFETY: COM1's line control register; reading it has no side effect.
    let saved = unsafe { lcr.read() };
    if saved & LCR_DLAB != 0 {
        // SAFETY: closes the divisor latch so that the data register is the
        // transmitter again; restored below.
        unsafe { lcr.write(saved & !LCR_DLAB) };
    }
    for chunk in bytes.split_inclusive(|&b| b == b'\n') {
        match chunk.split_last() {
            Some((b'\n', head)) => {
                u.send_bytes_exact(head);
                u.send_bytes_exact(b"\r\n");
            }
            _ => u.send_bytes_exact(chunk),
        }
    }
    if saved & LCR_DLAB != 0 {
        // SAFETY: puts back exactly what the driver had written.
        unsafe { lcr.write(saved) };
    }
}

/// `fmt::Write` adapter for the console.
pub struct Console;

impl fmt::Write for Console {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        write_bytes(s.as_bytes());
        Ok(())
    }
}
