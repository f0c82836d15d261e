//! The client side of the console driver (`stet_abi::service::console`):
//! a start key to `consoled` in some slot. [`crate::kernel::set_console`]
//! with that slot sends `print!` through the driver too (its `WRITE` is the
//! console key's).

use crate::key::{call, Msg, Slot};
use stet_abi::code::Code;
use stet_abi::service::console as o;

/// What the driver counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Interrupts it received (as messages from its waiter).
    pub interrupts: u64,
    /// Bytes received.
    pub received: u64,
    /// Bytes written.
    pub written: u64,
    /// `READ`s that had to wait for input.
    pub waited: u64,
}

fn result(c: u64) -> Result<(), u64> {
    if c == Code::Ok {
        Ok(())
    } else {
        Err(c)
    }
}

/// Prints `s`; returns the bytes written.
pub fn write(cons: Slot, s: &[u8]) -> Result<u64, u64> {
    let a = Msg::new(cons, o::WRITE).string(s).call();
    result(a.code).map(|()| a.w[0])
}

/// Prints `prompt`, then waits for input: at least one byte, at most
/// `buf.len()` (≤ 4096). Returns the bytes read.
pub fn read(cons: Slot, prompt: &[u8], buf: &mut [u8]) -> Result<usize, u64> {
    let a = Msg::new(cons, o::READ)
        .w0(buf.len() as u64)
        .string(prompt)
        .call_into(buf);
    result(a.code).map(|()| a.w[0] as usize)
}

/// The input available now (possibly none), at most `buf.len()` bytes.
pub fn poll(cons: Slot, buf: &mut [u8]) -> Result<usize, u64> {
    let a = Msg::new(cons, o::POLL).w0(buf.len() as u64).call_into(buf);
    result(a.code).map(|()| a.w[0] as usize)
}

/// The driver's counters.
pub fn stats(cons: Slot) -> Result<Stats, u64> {
    let a = call(cons, o::STATS, [0; 4]);
    result(a.code).map(|()| Stats {
        interrupts: a.w[0],
        received: a.w[1],
        written: a.w[2],
        waited: a.w[3],
    })
}
