//! The kernel console: COM1, a 16550 UART, used for boot messages, program
//! output (until a user-mode console driver exists) and panics.

use super::kcell::KCell;
use core::fmt;
use uart_16550::backend::PioBackend;
use uart_16550::{Config, Uart16550};

static COM1: KCell<Option<Uart16550<PioBackend>>> = KCell::new(None);

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
    for chunk in bytes.split_inclusive(|&b| b == b'\n') {
        match chunk.split_last() {
            Some((b'\n', head)) => {
                u.send_bytes_exact(head);
                u.send_bytes_exact(b"\r\n");
            }
            _ => u.send_bytes_exact(chunk),
        }
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
