//! Keepers: what happens when a domain cannot go on by itself.
//!
//! An exception, an invalid memory reference, a foreign `syscall` or an
//! empty meter stops the domain and sends a message to a keeper (KeyKOS
//! §7) as if the domain had *called* it: the domain waits, and the keeper
//! receives a resume key of the fault kind (see `stet_abi::fault`). If the
//! keeper is busy, the domain stalls on it; memory faults, foreign system
//! calls and empty meters are then simply re-detected when the domain next
//! runs (nothing is kept), while an exception is kept as the domain's
//! pending fault code. With no keeper at all the domain is stopped and the
//! console says why.

use crate::arch::idt;
use crate::domain;
use crate::invoke::message::{deliver, Str};
use crate::kernel::Kernel;
use crate::{kprintln, sched};
use stet_abi::domain::RunState;
use stet_abi::domain::{meter, root, state, REGS_SIZE};
use stet_abi::fault::code;
use stet_abi::invoke::Source;
use stet_keys::{resume_kind, Key, KeyType};
use stet_segment::{Access, Invalid};

/// Who gets a fault message.
enum Outcome {
    /// Delivered; the keeper runs.
    Delivered(usize),
    /// The keeper is busy: the domain was parked on it.
    Stalled,
    /// There is no usable keeper.
    NoKeeper,
}

/// The register block of context `ci` as bytes (little-endian words).
pub fn regs_bytes(k: &Kernel, ci: usize) -> [u8; REGS_SIZE] {
    zerocopy::transmute!(k.ctxs[ci].regs())
}

/// Sends a fault message for `ci` to the keeper behind start key `keeper`.
#[allow(clippy::too_many_arguments)]
fn to_keeper(
    k: &mut Kernel,
    ci: usize,
    keeper: Key,
    order: u64,
    w: [u64; 4],
    key0: Key,
    with_regs: bool,
) -> Outcome {
    if keeper.key_type() != KeyType::Start {
        return Outcome::NoKeeper;
    }
    let Ok(root) = k.node_of(keeper) else {
        return Outcome::NoKeeper;
    };
    let Ok(t) = domain::prepare(k, root) else {
        return Outcome::NoKeeper;
    };
    if t == ci {
        return Outcome::NoKeeper;
    }
    let tc = &k.ctxs[t];
    let free = tc.state == RunState::Available && tc.flags & state::STOPPED == 0;
    if free && !domain::may_deliver(k, ci, t) {
        // Promised to a caller that was stalled on it: that one goes
        // first; this domain retries from the back of the ready queue.
        if k.current == Some(ci) {
            k.current = None;
        }
        if k.ctxs[ci].queue() == crate::domain::context::Queue::None {
            domain::ready_push(k, ci);
        }
        return Outcome::Stalled;
    }
    if !free {
        domain::stall(k, ci, t);
        if k.current == Some(ci) {
            k.current = None;
        }
        return Outcome::Stalled;
    }
    let oid = k.ctx_oid(ci);
    let rootslot = k.ctxs[ci].root;
    let n = k.objs.node_mut(rootslot);
    n.calls = n.calls.wrapping_add(1);
    let resume = Key::resume(oid, n.calls, resume_kind::FAULT).with_hint(rootslot);
    let regs = regs_bytes(k, ci);
    let s = if with_regs {
        Str::Kernel(&regs)
    } else {
        Str::None
    };
    let info = keeper.info() as u64 | Source::Start.bits();
    deliver(
        k,
        t,
        info,
        order,
        w,
        Some(&[key0, Key::VOID, Key::VOID, Key::VOID]),
        s,
        Some(resume),
    );
    let c = &mut k.ctxs[ci];
    c.state = RunState::Waiting;
    // An exception's code also holds its vector and error code
    // (`exception`): kept, so that a keeper's answer that leaves the fault
    // pending (an order other than a resume) has it delivered again as it
    // was.
    if c.fault_code & 0xff != order {
        c.fault_code = order;
    }
    k.ctxs[t].state = RunState::Running;
    Outcome::Delivered(t)
}

/// A domain key to context `ci`'s domain.
pub fn domain_key(k: &Kernel, ci: usize) -> Key {
    let n = k.objs.node_entry(k.ctxs[ci].root);
    Key::domain(n.oid, n.version).with_hint(k.ctxs[ci].root)
}

/// Sends a fault to `ci`'s domain keeper; stops the domain if it has none.
fn to_domain_keeper(
    k: &mut Kernel,
    ci: usize,
    order: u64,
    w: [u64; 4],
    what: &dyn Fn(&Kernel),
) -> ! {
    let keeper = k.objs.node_entry(k.ctxs[ci].root).keys[root::KEEPER];
    let dk = domain_key(k, ci);
    match to_keeper(k, ci, keeper, order, w, dk, true) {
        Outcome::Delivered(t) => sched::switch(k, ci, t),
        Outcome::Stalled => sched::schedule(k),
        Outcome::NoKeeper => {
            what(k);
            k.ctxs[ci].flags |= state::STOPPED;
            k.ctxs[ci].fault_code = order;
            if k.current == Some(ci) {
                k.current = None;
            }
            domain::dequeue(k, ci);
            sched::schedule(k)
        }
    }
}

/// A CPU exception in domain `ci`.
pub fn exception(k: &mut Kernel, ci: usize, vector: u8, error: u64, rip: u64, cr2: u64) -> ! {
    let w = [vector as u64, error, rip, cr2];
    k.ctxs[ci].fault_info = cr2;
    // Kept while the keeper is busy: re-executing would not reproduce a trap.
    k.ctxs[ci].fault_code = code::EXCEPTION | (vector as u64) << 8 | error << 16;
    let report = move |k: &Kernel| {
        kprintln!(
            "fault: domain {} '{}' {} at rip={:#x}, error={:#x}; no keeper, domain stopped",
            ci,
            k.ctx_name(ci),
            idt::exception_name(vector),
            rip,
            error
        );
    };
    to_domain_keeper(k, ci, code::EXCEPTION, w, &report)
}

/// Re-delivers a pending exception (its keeper was busy before).
pub fn deliver_pending(k: &mut Kernel, ci: usize) -> ! {
    let fc = k.ctxs[ci].fault_code;
    if fc & 0xff != code::EXCEPTION {
        // Only exceptions are kept; anything else is re-detected.
        k.ctxs[ci].fault_code = 0;
        sched::run(k, ci)
    }
    let (vector, error) = ((fc >> 8) as u8, fc >> 16);
    let (rip, cr2) = (k.ctxs[ci].frame.rip, k.ctxs[ci].fault_info);
    exception(k, ci, vector, error, rip, cr2)
}

/// An invalid memory reference by `ci` at `va`.
pub fn memory_fault(k: &mut Kernel, ci: usize, va: u64, access: Access, inv: Invalid) -> ! {
    let rip = k.ctxs[ci].frame.rip;
    if let Some(sk) = inv.keeper {
        let w = [sk.offset, access.code(), inv.why, rip];
        match to_keeper(k, ci, sk.start, code::SEGMENT, w, sk.segment, false) {
            Outcome::Delivered(t) => sched::switch(k, ci, t),
            Outcome::Stalled => sched::schedule(k),
            Outcome::NoKeeper => {}
        }
    }
    let w = [va, access.code(), inv.why, rip];
    let report = move |k: &Kernel| {
        kprintln!(
            "fault: domain {} '{}' page fault at rip={:#x}: {} access to {:#x} ({}); no keeper, domain stopped",
            ci,
            k.ctx_name(ci),
            rip,
            match access {
                Access::Read => "read",
                Access::Write => "write",
                Access::Execute => "execute",
            },
            va,
            why_name(inv.why)
        );
    };
    to_domain_keeper(k, ci, code::MEMORY, w, &report)
}

fn why_name(why: u64) -> &'static str {
    use stet_abi::fault::why;
    match why {
        why::NOT_PRESENT => "not present",
        why::PROTECTION => "not allowed",
        why::OUT_OF_RANGE => "out of range",
        why::MALFORMED => "malformed segment",
        _ => "?",
    }
}

/// A `syscall` by foreign domain `ci`: its keeper emulates it.
pub fn syscall_fault(k: &mut Kernel, ci: usize) -> ! {
    let f = &k.ctxs[ci].frame;
    let w = [f.rax, f.rip, 0, 0];
    let report = move |k: &Kernel| {
        kprintln!(
            "fault: foreign domain {} '{}' system call {}; no keeper, domain stopped",
            ci,
            k.ctx_name(ci),
            w[0]
        );
    };
    let keeper = k.objs.node_entry(k.ctxs[ci].root).keys[root::KEEPER];
    let dk = domain_key(k, ci);
    // The keeper sees `rip` after the instruction (where it resumes).
    match to_keeper(k, ci, keeper, code::SYSCALL, w, dk, true) {
        Outcome::Delivered(t) => sched::switch(k, ci, t),
        Outcome::Stalled => {
            // Parked: it re-executes the `syscall` when the keeper is free.
            k.ctxs[ci].frame.rip -= 2;
            sched::schedule(k)
        }
        Outcome::NoKeeper => {
            report(k);
            k.ctxs[ci].flags |= state::STOPPED;
            if k.current == Some(ci) {
                k.current = None;
            }
            sched::schedule(k)
        }
    }
}

/// `ci`'s meter chain is empty at meter node `m` (or broken: `None`).
pub fn meter_out(k: &mut Kernel, ci: usize, m: Option<u32>) -> ! {
    if let Some(m) = m {
        let n = k.objs.node_entry(m);
        let keeper = n.keys[meter::KEEPER];
        let mk = Key::meter(n.oid, n.version).with_hint(m);
        match to_keeper(k, ci, keeper, code::METER_OUT, [0; 4], mk, false) {
            Outcome::Delivered(t) => sched::switch(k, ci, t),
            Outcome::Stalled => sched::schedule(k),
            Outcome::NoKeeper => {}
        }
    }
    let report = move |k: &Kernel| {
        kprintln!(
            "fault: domain {} '{}' has no CPU time (meter {}); domain stopped",
            ci,
            k.ctx_name(ci),
            if m.is_some() {
                "empty, no keeper"
            } else {
                "missing"
            }
        );
    };
    to_domain_keeper(k, ci, code::METER, [0; 4], &report)
}
