//! The general invocation path: decode the control word, gather the
//! message, and send it through a start key, a resume key or to a kernel
//! object. All checks happen before anything changes (atomicity).

use crate::domain::context::PrepareError;
use crate::domain::{self};
use crate::kernel::Kernel;
use crate::kobj::{self, Reply};
use crate::obj::Miss;
use crate::{memory, sched};
use stet_abi::domain::state;
use stet_abi::domain::RunState;
use stet_abi::fault::{RESUME, RESUME_SYSCALL, RESUME_WITH_REGS};
use stet_abi::invoke::{Control, Kind, Source};
use stet_abi::{code::Code, MAX_STRING};
use stet_keys::{resume_kind, Key, KeyType, CALL_COUNT_MASK};

/// A message being sent.
pub struct Msg {
    /// The decoded control word.
    pub ctl: Control,
    /// Order code.
    pub order: u64,
    /// Data words.
    pub w: [u64; 4],
    /// The keys sent (void where slot 0 was named).
    pub keys: [Key; 4],
    /// String address in the sender's memory.
    pub addr: u64,
    /// String length (≤ 4096, checked).
    pub len: usize,
}

/// Where the string of a delivery comes from.
pub enum Str<'a> {
    /// Nothing.
    None,
    /// A domain's memory (checked readable).
    User(usize, u64, usize),
    /// A kernel buffer.
    Kernel(&'a [u8]),
}

/// The general path. Never returns: it leaves by running some domain.
pub fn invoke(k: &mut Kernel, ci: usize) -> ! {
    let f = &k.ctxs[ci].frame;
    let Some(ctl) = Control::decode(f.rax) else {
        reply_code(k, ci, Code::BadControl);
    };
    if ctl.len as usize > MAX_STRING {
        reply_code(k, ci, Code::StringTooLong);
    }
    let general = k.ctxs[ci].general as usize;
    let gk = &k.objs.node_entry(general as u32).keys;
    let m = Msg {
        ctl,
        order: f.rdi,
        w: [f.rsi, f.rdx, f.r10, f.r8],
        // Slot 0 of the general keys is always void, whatever the node holds.
        keys: if ctl.send == [0; 4] {
            // The common case, without four slot lookups.
            [Key::VOID; 4]
        } else {
            ctl.send
                .map(|s| if s == 0 { Key::VOID } else { gk[s as usize] })
        },
        addr: f.r9,
        len: ctl.len as usize,
    };
    let key = if ctl.slot == 0 {
        Key::VOID
    } else {
        gk[ctl.slot as usize]
    };
    if m.len > 0 && memory::check_readable(k, ci, m.addr, m.len).is_err() {
        reply_code(k, ci, Code::BadBuffer);
    }
    match key.key_type() {
        KeyType::Start => to_start(k, ci, key, &m),
        KeyType::Forwarder => to_forwarder(k, ci, key, &m),
        KeyType::Resume => to_resume(k, ci, key, &m),
        KeyType::Void => to_void(k, ci, &m),
        _ => to_kernel(k, ci, key, &m),
    }
}

/// Invoking the void key: calls and sends answer `VOID`; a return makes
/// the invoker available (a server's first "wait for a message").
fn to_void(k: &mut Kernel, ci: usize, m: &Msg) -> ! {
    if m.ctl.kind == Kind::Return {
        become_available(k, ci);
        sched::schedule(k)
    }
    reply_code(k, ci, Code::Void)
}

/// A kernel object: do the order, then answer the invoker (or, for a
/// return, discard the answer and become available).
fn to_kernel(k: &mut Kernel, ci: usize, key: Key, m: &Msg) -> ! {
    let sc = crate::arch::scratch::take();
    let s = &mut sc.input[..m.len];
    if memory::read_user(k, ci, m.addr, s).is_err() {
        reply_code(k, ci, Code::BadBuffer);
    }
    let out = &mut sc.output;
    let mut r = Reply::new();
    let next = kobj::order(k, ci, key, m, &sc.input[..m.len], &mut r, out);
    if !k.ctxs[ci].used {
        // The order destroyed the invoker itself.
        sched::schedule(k)
    }
    match m.ctl.kind {
        Kind::Return => {
            become_available(k, ci);
            sched::schedule(k)
        }
        _ if matches!(next, kobj::After::Parked) => sched::schedule(k),
        _ => {
            let olen = r.len;
            let keys = (r.code == Code::Ok).then_some(&r.keys);
            deliver(
                k,
                ci,
                Source::Kernel.bits(),
                r.code as u64,
                r.w,
                keys,
                Str::Kernel(&out[..olen]),
                None,
            );
            match next {
                kobj::After::Continue => sched::run(k, ci),
                _ => sched::schedule(k),
            }
        }
    }
}

/// Answers the invoker with just a result code.
pub fn reply_code(k: &mut Kernel, ci: usize, c: Code) -> ! {
    deliver(
        k,
        ci,
        Source::Kernel.bits(),
        c as u64,
        [0; 4],
        None,
        Str::None,
        None,
    );
    sched::run(k, ci)
}

/// A forwarder key: the message goes through the start key in the
/// forwarder node's slot 0, labelled with the data word of its slot 1. A
/// forwarder whose slot 0 holds anything but a start key acts as void
/// (that is how its owner blocks it).
fn to_forwarder(k: &mut Kernel, ci: usize, key: Key, m: &Msg) -> ! {
    let node = match k.node_of(key) {
        Ok(n) => n,
        Err(Miss::Void) => to_void(k, ci, m),
        Err(Miss::NoSpace | Miss::Damaged) => reply_code(k, ci, Code::NoSpace),
    };
    kobj::node::before_read(k, node);
    let slots = &k.objs.node_entry(node).keys;
    let (target, data) = (slots[0], slots[1]);
    if target.key_type() != KeyType::Start {
        to_void(k, ci, m);
    }
    let word = data.number_value().map_or(0, |(lo, _)| lo as u32 as u64);
    let info = target.info() as u64 | Source::Forwarded.bits() | word << 32;
    start_with(k, ci, target, info, m)
}

/// A start key: deliver to the domain if it is available, else stall.
fn to_start(k: &mut Kernel, ci: usize, key: Key, m: &Msg) -> ! {
    let info = key.info() as u64 | Source::Start.bits();
    start_with(k, ci, key, info, m)
}

/// Delivers through start key `key` with `info` in the receiver's `rax`.
fn start_with(k: &mut Kernel, ci: usize, key: Key, info: u64, m: &Msg) -> ! {
    let root = match k.node_of(key) {
        Ok(r) => r,
        Err(Miss::Void) => to_void(k, ci, m),
        Err(Miss::NoSpace | Miss::Damaged) => reply_code(k, ci, Code::NoSpace),
    };
    let t = match domain::prepare(k, root) {
        Ok(t) => t,
        Err(PrepareError::Malformed(_) | PrepareError::Shared(_)) => to_void(k, ci, m),
        Err(PrepareError::NoSpace) => reply_code(k, ci, Code::NoSpace),
    };
    if t == ci {
        reply_code(k, ci, Code::BadState);
    }
    let tc = &k.ctxs[t];
    let free = tc.state == RunState::Available && tc.flags & state::STOPPED == 0;
    if free && !domain::may_deliver(k, ci, t) {
        if m.ctl.kind == Kind::TrySend {
            reply_code(k, ci, Code::Busy);
        }
        // Promised to a caller that was stalled on it: let that one go
        // first, and try again after it.
        k.ctxs[ci].frame.rip -= 2;
        domain::ready_push(k, ci);
        sched::schedule(k)
    }
    if !free {
        if m.ctl.kind == Kind::TrySend {
            // A try-send never stalls: nothing is sent, and it says so.
            reply_code(k, ci, Code::Busy);
        }
        // Busy: wait for it, then re-execute this very invocation.
        k.ctxs[ci].frame.rip -= 2;
        domain::stall(k, ci, t);
        if k.current == Some(ci) {
            k.current = None;
        }
        sched::schedule(k)
    }
    send_to(k, ci, t, info, m)
}

/// Delivers `m` from `ci` to the receiving domain `t` (available, or
/// waiting on the resume key used), then carries out the sender's side.
fn send_to(k: &mut Kernel, ci: usize, t: usize, info: u64, m: &Msg) -> ! {
    let kind = m.ctl.kind;
    let resume = (kind == Kind::Call).then(|| make_call(k, ci));
    deliver(
        k,
        t,
        info,
        m.order,
        m.w,
        Some(&m.keys),
        Str::User(ci, m.addr, m.len),
        resume,
    );
    k.ctxs[t].state = RunState::Running;
    // A stopped domain (a reply reached it) keeps the message but does not
    // run until it is started.
    match kind {
        Kind::Call => sched::switch(k, ci, t),
        Kind::Return => {
            become_available(k, ci);
            sched::switch(k, ci, t)
        }
        Kind::Send | Kind::TrySend => {
            if domain::runnable(&k.ctxs[t]) {
                domain::ready_push(k, t);
            }
            let none = [Key::VOID; 4];
            deliver(
                k,
                ci,
                Source::Kernel.bits(),
                Code::Ok as u64,
                [0; 4],
                Some(&none),
                Str::None,
                None,
            );
            sched::run(k, ci)
        }
    }
}

/// The invoker of a call starts waiting; returns its new resume key.
pub fn make_call(k: &mut Kernel, ci: usize) -> Key {
    let root = k.ctxs[ci].root;
    let n = k.objs.node_mut(root);
    n.calls = n.calls.wrapping_add(1);
    let key = Key::resume(n.oid, n.calls, resume_kind::REPLY).with_hint(root);
    k.ctxs[ci].state = RunState::Waiting;
    key
}

/// The domain becomes available for its next message; anyone stalled on it
/// may now get through.
pub fn become_available(k: &mut Kernel, ci: usize) {
    k.ctxs[ci].state = RunState::Available;
    if k.current == Some(ci) {
        k.current = None;
    }
    domain::wake_stalled(k, ci);
}

/// The domain a resume key is for, if the key is still valid (the domain
/// waits on exactly that call).
pub fn resume_target(k: &mut Kernel, key: Key) -> Option<(usize, u8)> {
    let (count, kind) = key.resume_parts()?;
    let root = k.node_of(key).ok()?;
    if k.objs.node_entry(root).calls & CALL_COUNT_MASK != count {
        return None;
    }
    let t = domain::prepare(k, root).ok()?;
    let c = &k.ctxs[t];
    let fault_kind = if c.fault_code != 0 {
        resume_kind::FAULT
    } else {
        resume_kind::REPLY
    };
    (c.state == RunState::Waiting && kind == fault_kind).then_some((t, kind))
}

/// A resume key: reply to the waiting domain (one shot), or restart a
/// domain whose keeper took its fault.
fn to_resume(k: &mut Kernel, ci: usize, key: Key, m: &Msg) -> ! {
    let Some((t, kind)) = resume_target(k, key) else {
        to_void(k, ci, m);
    };
    if t == ci {
        to_void(k, ci, m);
    }
    if kind == resume_kind::REPLY {
        send_to(k, ci, t, Source::Resume.bits(), m);
    }
    // A fault restart: the message is an instruction to the kernel, not
    // data for the domain.
    match m.order {
        RESUME => k.ctxs[t].fault_code = 0,
        RESUME_WITH_REGS => {
            let mut b = [0u8; stet_abi::domain::REGS_SIZE];
            if m.len != b.len() || memory::read_user(k, ci, m.addr, &mut b).is_err() {
                reply_code(k, ci, Code::BadValue);
            }
            let regs = core::array::from_fn(|i| {
                u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))
            });
            if k.ctxs[t].set_regs(&regs).is_err() {
                reply_code(k, ci, Code::BadValue);
            }
            k.ctxs[t].fault_code = 0;
        }
        // Only for a system call: rax is its result.
        RESUME_SYSCALL if k.ctxs[t].fault_code == stet_abi::fault::code::SYSCALL => {
            k.ctxs[t].frame.rax = m.w[0];
            k.ctxs[t].fault_code = 0;
        }
        // Any other order leaves the fault pending: the domain runs only to
        // deliver it to its keeper again.
        _ => {}
    }
    k.ctxs[t].state = RunState::Running;
    domain::wake_stalled(k, t);
    let runs = domain::runnable(&k.ctxs[t]);
    // The restarted domain receives nothing, so a call through this key
    // is answered at once, like a send.
    if m.ctl.kind == Kind::Return {
        become_available(k, ci);
        if runs {
            sched::switch(k, ci, t)
        }
        sched::schedule(k)
    }
    if runs {
        domain::ready_push(k, t);
    }
    deliver(
        k,
        ci,
        Source::Kernel.bits(),
        Code::Ok as u64,
        [0; 4],
        Some(&[Key::VOID; 4]),
        Str::None,
        None,
    );
    sched::run(k, ci)
}

/// Writes a message into domain `t`'s registers, its receive buffer and the
/// key slots its receive specification names. `t`'s control word (the
/// `rax` of its last invocation) holds that specification. With `keys`
/// `None` (an error answer) the key slots are left as they were: a failed
/// invocation changes nothing.
#[allow(clippy::too_many_arguments)]
pub fn deliver(
    k: &mut Kernel,
    t: usize,
    info: u64,
    order: u64,
    w: [u64; 4],
    keys: Option<&[Key; 4]>,
    s: Str<'_>,
    resume: Option<Key>,
) {
    let spec = Control::decode(k.ctxs[t].frame.rax).unwrap_or_default();
    let (buf, cap) = {
        let f = &k.ctxs[t].frame;
        (f.r12, (f.r13 as usize).min(MAX_STRING))
    };
    let mut info = info;
    let full = match s {
        Str::None => 0,
        Str::Kernel(b) => {
            let n = b.len().min(cap);
            if memory::write_user(k, t, buf, &b[..n]) < n {
                info |= 1 << 16;
            }
            b.len()
        }
        Str::User(from, addr, len) => {
            let n = len.min(cap);
            if n > 0 && memory::copy_between(k, from, addr, t, buf, n) < n {
                info |= 1 << 16;
            }
            len
        }
    };
    let general = k.ctxs[t].general;
    if let (Some(keys), true) = (keys, spec.recv != [0; 4]) {
        for (i, &slot) in spec.recv.iter().enumerate() {
            if slot != 0 {
                kobj::node::set_slot(k, general, slot as usize, keys[i].canonical());
            }
        }
    }
    if let Some(r) = resume {
        if spec.resume != 0 {
            kobj::node::set_slot(k, general, spec.resume as usize, r);
        }
    }
    let f = &mut k.ctxs[t].frame;
    f.rax = info;
    f.rdi = order;
    f.rsi = w[0];
    f.rdx = w[1];
    f.r10 = w[2];
    f.r8 = w[3];
    f.r9 = full as u64;
}
