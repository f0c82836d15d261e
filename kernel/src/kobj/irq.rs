//! Irq keys: one ISA interrupt line, received as a message.
//!
//! The interrupt model forbids blocking in the kernel, so `WAIT` is a
//! Fluke re-executed call, like sleeping and the journal: a line with no
//! interrupt counted parks the invoker on the sleep list with `wake_at =`
//! [`WAKE_ON_IRQ`] + line, its `rip` back on the `syscall`, `w0` = 1 and
//! `w1` = the store's restart count. When the line fires (`arch::ioapic`
//! masks it and counts it) [`deliver`] readies the waiters and each asks
//! again; the first finds the count and takes it. A waiter that was
//! checkpointed parked and restarted re-executes with an old restart count
//! and gets `RESTARTED`: the device lost its state with the machine.
//! Every answer carries the restart count in `w1`, and a waiter passes the
//! count it last saw (`w0` = 1): so a restart is reported even to a waiter
//! that was checkpointed elsewhere (calling its driver) rather than parked.
//!
//! A line masks itself when it fires; `WAIT` unmasks it when it finds
//! nothing counted (the driver has serviced the device by then), `ACK`
//! unmasks it at once. The driver program turns the interrupt into a
//! message: a waiter domain loops `WAIT` → call the driver's start key.

use super::{After, Reply};
use crate::arch::ioapic;
use crate::domain;
use crate::invoke::message::Msg;
use crate::kernel::Kernel;
use stet_abi::code::Code;
use stet_abi::order::irq as o;
use stet_keys::Key;

/// `wake_at` of a domain parked on line 0; line `n` uses `WAKE_ON_IRQ + n`.
/// Below the store's device waits: an interrupt can come while the system
/// idles, so irq waiters keep `exit_on_idle` from ending the run.
pub const WAKE_ON_IRQ: u64 = u64::MAX - 64;

/// Carries out an order on an irq key for context `ci`.
pub fn order(k: &mut Kernel, ci: usize, key: Key, m: &Msg, r: &mut Reply) -> After {
    let Some(line) = key.irq_line() else {
        r.fail(Code::Void);
        return After::Continue;
    };
    let Some(route) = ioapic::route(line) else {
        if matches!(m.order, o::WAIT | o::ACK | o::INFO) {
            r.fail(Code::IoError);
        } else {
            r.fail(Code::NoSuchOrder);
        }
        return After::Continue;
    };
    match m.order {
        o::WAIT => return wait(k, ci, line, m, r),
        o::ACK => ioapic::unmask(line),
        o::INFO => {
            r.w = [
                line as u64,
                route.gsi as u64,
                route.level as u64,
                ioapic::total(line),
            ]
        }
        _ => r.fail(Code::NoSuchOrder),
    }
    After::Continue
}

fn wait(k: &mut Kernel, ci: usize, line: u8, m: &Msg, r: &mut Reply) -> After {
    match m.w[0] {
        0 => {}
        1 if m.w[1] == k.store.restarts => {}
        1 => {
            r.fail(Code::Restarted);
            r.w[1] = k.store.restarts;
            return After::Continue;
        }
        _ => {
            r.fail(Code::BadValue);
            return After::Continue;
        }
    }
    let n = ioapic::take(line);
    if n > 0 {
        // The line stays masked until the next WAIT finds nothing (or an
        // ACK): the driver services the device in between.
        r.w[0] = n as u64;
        r.w[1] = k.store.restarts;
        return After::Continue;
    }
    ioapic::unmask(line);
    let c = &mut k.ctxs[ci];
    c.frame.rsi = 1;
    c.frame.rdx = k.store.restarts;
    c.frame.rip -= 2;
    domain::sleep(k, ci, WAKE_ON_IRQ + line as u64);
    k.current = None;
    After::Parked
}

/// Readies every domain waiting on a line that fired. Returns whether any
/// was woken.
pub fn deliver(k: &mut Kernel) -> bool {
    let pending = ioapic::pending();
    if pending == 0 {
        return false;
    }
    let mut woke = false;
    let mut l = k.queues.sleepers();
    while let Some(ci) = domain::unlink(l) {
        l = k.ctxs[ci].next();
        let w = k.ctxs[ci].wake_at;
        if (WAKE_ON_IRQ..WAKE_ON_IRQ + ioapic::LINES as u64).contains(&w)
            && pending & (1 << (w - WAKE_ON_IRQ)) != 0
        {
            domain::dequeue(k, ci);
            domain::ready_push(k, ci);
            woke = true;
        }
    }
    woke
}
