//! The fast paths: the shortest code for the commonest invocations. Each
//! checks every condition the general path would and falls back to it
//! (by returning) when any differs, so behaviour is identical.
//!
//! * the void key (slot 0): a call answers `VOID` at once (`null_invoke`),
//!   a return waits for the next message;
//! * a words-only **call** through a start key to a prepared, available
//!   domain that receives no keys but the resume key;
//! * a words-only **return** through a resume key to a domain waiting on
//!   that call that receives no keys;
//! * a foreign domain's **trivial system call** its keeper left an answer
//!   for (`try_answer`): answered in place, no keeper, no switch;
//! * a foreign domain's **system call** to its keeper (`try_syscall_fault`)
//!   and the keeper's `RESUME_SYSCALL` answer (rax only): the two halves
//!   of every emulated Linux system call;
//! * a node key's `FETCH` and `SWAP` (`node_call`): how every server keeps
//!   keys in nodes (key directories, parked calls, a new domain's tree).

use crate::arch::entry::TrapFrame;
use crate::domain::context::Context;
use crate::domain::{self, unlink};
use crate::kernel::Kernel;
use crate::sched;
use stet_abi::code::Code;
use stet_abi::domain::RunState;
use stet_abi::domain::{answers, root as dom_root, state, REGS_SIZE};
use stet_abi::fault::{code as fault_code, RESUME_SYSCALL};
use stet_abi::invoke::{fast, Kind, Source};
use stet_keys::{resume_kind, Key, KeyType, CALL_COUNT_MASK};

/// Takes a fast path if one applies (never returns then).
#[inline(always)]
pub fn try_fast(k: &mut Kernel, ci: usize) {
    let ctl = k.ctxs[ci].frame.rax;
    if fast::malformed(ctl) {
        return;
    }
    if !fast::words_only(ctl) {
        // A node SWAP sends a key.
        if fast::first_keys_only(ctl) && fast::kind_is(ctl, Kind::Call) {
            node_call(k, ci, ctl);
        }
        return;
    }
    let slot = fast::slot(ctl);
    let call = fast::kind_is(ctl, Kind::Call);
    if slot == 0 {
        if call {
            let f = &mut k.ctxs[ci].frame;
            kernel_answer(f, Code::Void);
            // Same domain, same address space, same FPU: straight out.
            if !k.config.invariants {
                crate::arch::entry::enter_user(f)
            }
            sched::run(k, ci)
        }
        if fast::kind_is(ctl, Kind::Return) {
            // A return to nobody: wait for the next message (a keeper with
            // no answer to give), as `message::to_void` does it.
            crate::invoke::message::become_available(k, ci);
            sched::schedule(k)
        }
        return;
    }
    let general = k.ctxs[ci].general as usize;
    let mut key = k.objs.node_entry(general as u32).keys[slot];
    if matches!(key.key_type(), KeyType::Start | KeyType::Resume)
        && hinted_node(k, key, false).is_none()
    {
        // Refresh the hint once (a cache in the key itself; the next call
        // finds the object without the index). A resume key fetched from
        // a node (a keeper's kept waiter) comes without one.
        if let Ok(i) = k.node_of(key) {
            key = key.with_hint(i);
            k.objs.set_hint(general as u32, slot, key);
        }
    }
    match key.key_type() {
        KeyType::Start if call => fast_call(k, ci, key),
        KeyType::Resume if fast::kind_is(ctl, Kind::Return) => fast_return(k, ci, key),
        KeyType::Resume if fast::kind_is(ctl, Kind::Send) && !fast::receives_keys(ctl) => {
            send_syscall_answer(k, ci, key)
        }
        KeyType::Node if call && fast::first_keys_only(ctl) => node_call(k, ci, ctl),
        _ => {}
    }
}

/// A call on a node key with order `FETCH` (`w0` slot → key 0) or `SWAP`
/// (`w0` slot, key 0 → the old key 0), no string, at most one key each
/// way: done here and answered straight back, as `kobj::node` would (its
/// every check is made; anything else goes the general way).
#[inline(always)]
fn node_call(k: &mut Kernel, ci: usize, ctl: u64) {
    use stet_abi::order::node as o;
    let f = &k.ctxs[ci].frame;
    let (order, s, levels) = (f.rdi, f.rsi, f.rdx);
    let swap = match order {
        o::FETCH => false,
        o::SWAP => true,
        o::FETCH_PATH => return fetch_path(k, ci, ctl, s, levels, false),
        o::SWAP_PATH => return fetch_path(k, ci, ctl, s, levels, true),
        _ => return,
    };
    let (send, recv) = (fast::send_slot(ctl, 0), fast::recv_slot(ctl, 0));
    if s >= crate::obj::SLOTS as u64 || (!swap && send != 0) {
        return;
    }
    let general = k.ctxs[ci].general as usize;
    let slot = fast::slot(ctl);
    let key = k.objs.node_entry(general as u32).keys[slot];
    if key.key_type() != KeyType::Node || (swap && key.is_ro()) {
        return;
    }
    let i = match hinted_node(k, key, true) {
        Some(i) => i,
        None => {
            let Ok(i) = k.node_of(key) else {
                return;
            };
            // The hint goes back into the key (as for start keys).
            k.objs.set_hint(general as u32, slot, key.with_hint(i));
            i
        }
    };
    // Committed: nothing below fails.
    crate::kobj::node::before_read(k, i);
    let old = k.objs.node_entry(i).keys[s as usize].canonical();
    let got = if swap {
        let new = if send == 0 {
            Key::VOID
        } else {
            k.objs.node_entry(general as u32).keys[send].canonical()
        };
        crate::kobj::node::write(k, i, |k| crate::kobj::node::set_slot(k, i, s as usize, new));
        old
    } else if key.rights() & stet_keys::rights::WEAK != 0 {
        old.diminish()
    } else {
        old
    };
    if recv != 0 {
        crate::kobj::node::set_slot(k, general as u32, recv, got);
    }
    kernel_answer(&mut k.ctxs[ci].frame, Code::Ok);
    sched::run(k, ci)
}

/// A node key's `FETCH_PATH` (`w0` slots, `w1` levels; no key sent) or
/// `SWAP_PATH` (`swap`: key 0 stored in the last slot), no string, when
/// every node on the way is a node key whose node is cached: as
/// `kobj::node` does it (anything else, an error included, goes the
/// general way, which answers it).
#[inline(always)]
fn fetch_path(k: &mut Kernel, ci: usize, ctl: u64, path: u64, levels: u64, swap: bool) {
    use stet_abi::order::node as o;
    let (send, recv) = (fast::send_slot(ctl, 0), fast::recv_slot(ctl, 0));
    if (send != 0 && !swap) || levels == 0 || levels > o::PATH_MAX {
        return;
    }
    let general = k.ctxs[ci].general;
    // Where the key walked through lies, and that key as stored there:
    // the walk goes by each stored key's hint, and a missed hint is
    // refreshed in place (the next walk finds the node without the index).
    let (mut held_in, mut held_at) = (general, fast::slot(ctl));
    let mut held = k.objs.node_entry(general).keys[held_at];
    let mut through = held;
    let mut got = Key::VOID;
    for level in 0..levels {
        if through.key_type() != KeyType::Node {
            return;
        }
        let i = match hinted_node(k, through, true) {
            Some(i) => i,
            None => {
                let Ok(i) = k.node_of(through) else {
                    return;
                };
                k.objs.set_hint(held_in, held_at, held.with_hint(i));
                i
            }
        };
        let s = ((path >> (4 * level)) & 15) as usize;
        if swap && level + 1 == levels {
            if through.is_ro() {
                return;
            }
            // Committed: nothing below fails.
            crate::kobj::node::before_read(k, i);
            got = k.objs.node_entry(i).keys[s].canonical();
            let new = if send == 0 {
                Key::VOID
            } else {
                k.objs.node_entry(general).keys[send].canonical()
            };
            crate::kobj::node::write(k, i, |k| crate::kobj::node::set_slot(k, i, s, new));
            break;
        }
        crate::kobj::node::before_read(k, i);
        let weak = through.rights() & stet_keys::rights::WEAK != 0;
        (held_in, held_at, held) = (i, s, k.objs.node_entry(i).keys[s]);
        through = if weak { held.diminish() } else { held };
        got = through.canonical();
    }
    if recv != 0 {
        crate::kobj::node::set_slot(k, general, recv, got);
    }
    kernel_answer(&mut k.ctxs[ci].frame, Code::Ok);
    sched::run(k, ci)
}

/// The kernel's answer `code` in an invoker's registers: no words, no
/// string.
#[inline(always)]
fn kernel_answer(f: &mut TrapFrame, code: Code) {
    f.rax = Source::Kernel.bits();
    f.rdi = code as u64;
    f.rsi = 0;
    f.rdx = 0;
    f.r10 = 0;
    f.r8 = 0;
    f.r9 = 0;
}

/// Delivers a words-only message: the order and four words, no string.
#[inline(always)]
fn copy_words(src: &TrapFrame, dst: &mut TrapFrame, rax: u64) {
    dst.rax = rax;
    dst.rdi = src.rdi;
    dst.rsi = src.rsi;
    dst.rdx = src.rdx;
    dst.r10 = src.r10;
    dst.r8 = src.r8;
    dst.r9 = 0;
}

/// The node slot a key's hint names, if the hint is right and the version
/// matches (`check_version`).
#[inline(always)]
fn hinted_node(k: &Kernel, key: Key, check_version: bool) -> Option<u32> {
    let h = key.hint();
    let n = k.objs.node_entry_at(h)?;
    (n.used && n.oid == key.oid() && (!check_version || n.version == key.version())).then_some(h)
}

#[inline(always)]
fn fast_call(k: &mut Kernel, ci: usize, key: Key) {
    let Some(root) = hinted_node(k, key, true) else {
        return;
    };
    let Some(t) = unlink(k.objs.node_entry(root).ctx) else {
        return;
    };
    // Both contexts at once (fails if t == ci).
    let Ok([me, tc]) = k.ctxs.get_disjoint_mut([ci, t]) else {
        return;
    };
    if tc.root != root
        || tc.state != RunState::Available
        || tc.flags & state::STOPPED != 0
        || tc.reserved() != 0
        || fast::receives_keys(tc.frame.rax)
    {
        return;
    }
    let rslot = fast::resume_slot(tc.frame.rax);
    if rslot != 0 {
        let g = k.objs.node_entry(tc.general);
        if k.objs.node_mapped(tc.general) && !g.keys[rslot].is_void() {
            return; // the general path flushes mappings first
        }
    }
    // Everything checked: commit.
    let myroot = me.root;
    let n = k.objs.node_mut(myroot);
    n.calls = n.calls.wrapping_add(1);
    if rslot != 0 {
        let resume = Key::resume(n.oid, n.calls, resume_kind::REPLY).with_hint(myroot);
        k.objs.node_mut(tc.general).keys[rslot] = resume;
    }
    me.state = RunState::Waiting;
    tc.state = RunState::Running;
    copy_words(
        &me.frame,
        &mut tc.frame,
        key.info() as u64 | Source::Start.bits(),
    );
    sched::switch_fast(k, t)
}

/// The prepared, unstopped domain waiting on the call resume key `key`
/// (call count `count`) names, with pending fault code `fault` (0: a
/// reply is awaited): its index, and the invoker's context and its.
#[inline(always)]
fn waiting(
    k: &mut Kernel,
    ci: usize,
    key: Key,
    count: u64,
    fault: u64,
) -> Option<(usize, &mut Context, &mut Context)> {
    let root = hinted_node(k, key, false)?;
    let n = k.objs.node_entry(root);
    if n.calls & CALL_COUNT_MASK != count {
        return None;
    }
    let t = unlink(n.ctx)?;
    let [me, tc] = k.ctxs.get_disjoint_mut([ci, t]).ok()?;
    (tc.root == root
        && tc.state == RunState::Waiting
        && tc.flags & state::STOPPED == 0
        && tc.fault_code == fault)
        .then_some((t, me, tc))
}

#[inline(always)]
fn fast_return(k: &mut Kernel, ci: usize, key: Key) {
    let Some((count, kind)) = key.resume_parts() else {
        return;
    };
    if kind == resume_kind::FAULT {
        return resume_syscall(k, ci, key, count);
    }
    if kind != resume_kind::REPLY {
        return;
    }
    let Some((t, me, tc)) = waiting(k, ci, key, count, 0) else {
        return;
    };
    if fast::receives_keys(tc.frame.rax) {
        return;
    }
    tc.state = RunState::Running;
    me.state = RunState::Available;
    copy_words(&me.frame, &mut tc.frame, Source::Resume.bits());
    if me.stalled() != 0 {
        domain::wake_stalled(k, ci);
    }
    sched::switch_fast(k, t)
}

/// Whether the resume key for a message to `tc` may be stored in its
/// resume slot `rslot` here: the general path must first discard mappings
/// of a general-keys node that is also mapped as memory.
#[inline(always)]
fn resume_slot_ok(k: &Kernel, general: u32, rslot: usize) -> bool {
    rslot == 0 || !k.objs.node_mapped(general) || k.objs.node_entry(general).keys[rslot].is_void()
}

/// A foreign domain's `syscall` its keeper answered in advance
/// (`stet_abi::domain::answers`): its answers node's slot for the number,
/// then its limit rule. Like the void key: same domain, same address
/// space, same FPU, so straight out.
#[inline(always)]
pub fn try_answer(k: &mut Kernel, ci: usize) {
    let c = &k.ctxs[ci];
    let nr = c.frame.rax;
    let exact = match c.answers.checked_sub(1) {
        Some(a) => k.objs.node_entry(a).keys[answers::slot(nr)].number_value(),
        None => None,
    };
    let c = &mut k.ctxs[ci];
    c.frame.rax = match exact {
        Some((answer, n)) if n as u64 == nr => answer,
        _ if nr >= c.limit => {
            c.limited = c.limited.wrapping_add(1);
            c.limit_answer
        }
        _ => return,
    };
    if !k.config.invariants {
        crate::arch::entry::enter_user(&k.ctxs[ci].frame)
    }
    sched::run(k, ci)
}

/// A foreign domain's `syscall` (`fault::syscall_fault` is the general
/// path): the fault message goes straight to its keeper when the keeper is
/// prepared, available, receives no keys but the resume key, and has room
/// for the register block, which must be writable now.
#[inline(always)]
pub fn try_syscall_fault(k: &mut Kernel, ci: usize) {
    let root = k.ctxs[ci].root as usize;
    let mut key = k.objs.node_entry(root as u32).keys[dom_root::KEEPER];
    if key.key_type() != KeyType::Start {
        return;
    }
    if hinted_node(k, key, true).is_none() {
        // Refresh the hint (as for general keys in `try_fast`).
        if let Ok(i) = k.node_of(key) {
            key = key.with_hint(i);
            k.objs.set_hint(root as u32, dom_root::KEEPER, key);
        }
    }
    let Some(kroot) = hinted_node(k, key, true) else {
        return;
    };
    let Some(t) = unlink(k.objs.node_entry(kroot).ctx) else {
        return;
    };
    let Ok([_, tc]) = k.ctxs.get_disjoint_mut([ci, t]) else {
        return;
    };
    if tc.root != kroot
        || tc.state != RunState::Available
        || tc.flags & state::STOPPED != 0
        || tc.reserved() != 0
        || (1..4).any(|i| fast::recv_slot(tc.frame.rax, i) != 0)
        || tc.frame.r13 < REGS_SIZE as u64
    {
        return;
    }
    // Key 0, as the general path sends it: the faulting domain's key (a
    // keeper of several threads knows which one it serves, no lookup).
    let kslot = fast::recv_slot(tc.frame.rax, 0);
    let (rslot, general, buf) = (fast::resume_slot(tc.frame.rax), tc.general, tc.frame.r12);
    if !resume_slot_ok(k, general, rslot) {
        return;
    }
    let regs = crate::fault::regs_bytes(k, ci);
    if !crate::memory::write_user_all(k, t, buf, &regs) {
        return;
    }
    // Written; nothing below can fail.
    let n = k.objs.node_mut(root as u32);
    n.calls = n.calls.wrapping_add(1);
    let resume = Key::resume(n.oid, n.calls, resume_kind::FAULT).with_hint(root as u32);
    if rslot != 0 {
        k.objs.node_mut(general).keys[rslot] = resume;
    }
    if kslot != 0 {
        let dk = crate::fault::domain_key(k, ci);
        crate::kobj::node::set_slot(k, general, kslot, dk);
    }
    let Ok([me, tc]) = k.ctxs.get_disjoint_mut([ci, t]) else {
        return;
    };
    me.state = RunState::Waiting;
    me.fault_code = fault_code::SYSCALL;
    tc.state = RunState::Running;
    let f = &mut tc.frame;
    f.rax = key.info() as u64 | Source::Start.bits();
    f.rdi = fault_code::SYSCALL;
    // The keeper sees `rip` after the instruction (where it resumes).
    f.rsi = me.frame.rax;
    f.rdx = me.frame.rip;
    f.r10 = 0;
    f.r8 = 0;
    f.r9 = REGS_SIZE as u64;
    sched::switch_fast(k, t)
}

/// `RESUME_SYSCALL` (order in the invoker's `rdi`, `rax` in its `rsi`)
/// through the fault resume key `key` (call count `count`) of a domain
/// waiting on its system call: the answer is in its `rax` and it runs
/// again → it, the invoker's context and its; `None` (nothing changed)
/// for anything else.
#[inline(always)]
fn answer_syscall(
    k: &mut Kernel,
    ci: usize,
    key: Key,
    count: u64,
) -> Option<(usize, &mut Context, &mut Context)> {
    if k.ctxs[ci].frame.rdi != RESUME_SYSCALL {
        return None;
    }
    let (t, me, tc) = waiting(k, ci, key, count, fault_code::SYSCALL)?;
    tc.frame.rax = me.frame.rsi;
    tc.fault_code = 0;
    tc.state = RunState::Running;
    Some((t, me, tc))
}

/// A keeper's `RESUME_SYSCALL` *sent* (not returned) through the fault
/// resume key of another thread's system call — a futex wake answering a
/// waiter: rax is its result, it is made ready, and the keeper runs on
/// with `OK`, as the general path does it.
#[inline(always)]
fn send_syscall_answer(k: &mut Kernel, ci: usize, key: Key) {
    let Some((count, resume_kind::FAULT)) = key.resume_parts() else {
        return;
    };
    let Some((t, me, tc)) = answer_syscall(k, ci, key, count) else {
        return;
    };
    kernel_answer(&mut me.frame, Code::Ok);
    if tc.stalled() != 0 {
        domain::wake_stalled(k, t);
    }
    if domain::runnable(&k.ctxs[t]) {
        domain::ready_push(k, t);
    }
    sched::run(k, ci)
}

/// A keeper's `RESUME_SYSCALL` (a words-only return through the fault
/// resume key of a system call): rax is the result; the domain runs on.
#[inline(always)]
fn resume_syscall(k: &mut Kernel, ci: usize, key: Key, count: u64) {
    let Some((t, me, tc)) = answer_syscall(k, ci, key, count) else {
        return;
    };
    me.state = RunState::Available;
    let (me_stalled, t_stalled) = (me.stalled() != 0, tc.stalled() != 0);
    if me_stalled {
        domain::wake_stalled(k, ci);
    }
    if t_stalled {
        domain::wake_stalled(k, t);
    }
    sched::switch_fast(k, t)
}
