//! A 16550 UART driven from user mode, through the `uart_16550` crate's
//! port backend. The crate needs nothing but `in` and `out` on the UART's
//! eight ports, so it works unchanged in ring 3 once the domain's ioports
//! key covers them (the kernel opens them in the TSS I/O bitmap).
#![allow(unsafe_code)]

use uart_16550::backend::PioBackend;
use uart_16550::spec::registers::{FifoTriggerLevel, IER};
use uart_16550::{Config, Uart16550};

/// COM1's first port.
pub const COM1: u16 = 0x3f8;
/// COM1's ISA interrupt line.
pub const COM1_IRQ: u8 = 4;

/// One UART, and its first port.
pub struct Uart(Uart16550<PioBackend>, u16);

/// No UART answers at the ports (its scratch register does not hold what
/// was written), or the configuration was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NoUart;

impl Uart {
    /// The UART whose registers are the eight ports from `base` (the
    /// domain must hold them, or every access faults to its keeper).
    pub fn new(base: u16) -> Option<Uart> {
        // The crate's contract is that the ports are this UART's
        // and safe to use. Port I/O cannot touch this program's memory: the
        // CPU either performs it (the kernel opened exactly the ports of
        // this domain's key) or raises #GP to the keeper. Which device sits
        // at the ports is the concern of whoever granted the key.
        // SAFETY: port I/O cannot touch this program's memory (above).
        unsafe { Uart16550::new_port(base) }
            .ok()
            .map(|u| Uart(u, base))
    }

    /// Programs it: 8N1 with FIFOs, an interrupt when a byte arrives (and
    /// when the FIFO holds bytes nobody read for four character times).
    /// `Err` if no UART answers at the ports.
    pub fn init(&mut self) -> Result<(), NoUart> {
        let config = Config {
            interrupts: IER::DATA_READY,
            fifo_trigger_level: Some(FifoTriggerLevel::One),
            ..Config::DEFAULT
        };
        self.0.init(config).map_err(|_| NoUart)
    }

    /// Whether the UART has lost what [`Uart::init`] programmed (its
    /// receive interrupt is off): the machine was reset under the driver,
    /// as when the system restarts from a checkpoint. One port read.
    pub fn was_reset(&self) -> bool {
        // The interrupt enable register (base + 1, with the divisor latch
        // closed, as the driver leaves it and the kernel restores it).
        crate::port::in8(self.1 + 1) & IER::DATA_READY.bits() == 0
    }

    /// Sends bytes, waiting for room in the transmitter; `\n` becomes
    /// `\r\n`.
    pub fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|&b| b == b'\n') {
            match chunk.split_last() {
                Some((b'\n', head)) => {
                    self.0.send_bytes_exact(head);
                    self.0.send_bytes_exact(b"\r\n");
                }
                _ => self.0.send_bytes_exact(chunk),
            }
        }
    }

    /// A received byte, if one is waiting.
    pub fn read_byte(&mut self) -> Option<u8> {
        self.0.try_receive_byte().ok()
    }
}
