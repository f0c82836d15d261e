//! Irq keys (`stet_abi::order::irq`): a driver's interrupt line.

use crate::key::{call, Slot};
use stet_abi::{code::Code, order::irq as o};

/// Waits until the line in `irq` has fired since the last `WAIT`; returns
/// how many times. `seen` is the store's restart count the last answer
/// reported (`None` before the first): if the system has restarted from a
/// checkpoint since — whether this domain was waiting then or doing
/// anything else — the answer is `Err(RESTARTED)` (re-initialise the
/// device). Other codes as the kernel answered (`IO_ERROR`: no interrupt
/// controller for the line).
pub fn wait(irq: Slot, seen: &mut Option<u64>) -> Result<u64, u64> {
    let w = match *seen {
        Some(n) => [1, n, 0, 0],
        None => [0; 4],
    };
    let a = call(irq, o::WAIT, w);
    if a.code == Code::Ok || a.code == Code::Restarted {
        *seen = Some(a.w[1]);
    }
    if a.code == Code::Ok {
        Ok(a.w[0])
    } else {
        Err(a.code)
    }
}

/// Unmasks the line now (before servicing a device that holds its
/// interrupt asserted until serviced: an edge on a masked line is lost).
pub fn ack(irq: Slot) -> Result<(), u64> {
    match call(irq, o::ACK, [0; 4]).code {
        c if c == Code::Ok => Ok(()),
        c => Err(c),
    }
}

/// `(line, global system interrupt, level-triggered, interrupts since
/// boot)`.
pub fn info(irq: Slot) -> Result<(u64, u64, bool, u64), u64> {
    let a = call(irq, o::INFO, [0; 4]);
    if a.code == Code::Ok {
        Ok((a.w[0], a.w[1], a.w[2] != 0, a.w[3]))
    } else {
        Err(a.code)
    }
}
