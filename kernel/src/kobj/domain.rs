//! Domain keys: full control of a domain's state, at any time and at once
//! (prompt: nothing here waits for the target to do anything), in a form
//! that can be written back to a fresh domain (correct).

use super::{After, Reply};
use crate::arch::fpu::{self, AREA_SIZE};
use crate::domain::{self, context::Queue};
use crate::invoke::message::Msg;
use crate::kernel::Kernel;
use crate::kobj::node::set_slot;
use stet_abi::code::Code;
use stet_abi::domain::answers::NO_LIMIT;
use stet_abi::domain::RunState;
use stet_abi::domain::{root, state, NREGS, REGS_SIZE};
use stet_abi::order::domain as o;
use stet_keys::{Key, KeyType};

/// Carries out a domain order for invoker `ci`.
pub fn order(
    k: &mut Kernel,
    ci: usize,
    key: Key,
    m: &Msg,
    s: &[u8],
    r: &mut Reply,
    out: &mut [u8; 4096],
) -> After {
    match run(k, ci, key, m, s, r, out) {
        Ok(a) => a,
        Err(c) => {
            r.fail(c);
            After::Continue
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn run(
    k: &mut Kernel,
    ci: usize,
    key: Key,
    m: &Msg,
    s: &[u8],
    r: &mut Reply,
    out: &mut [u8; 4096],
) -> Result<After, Code> {
    let rootslot = k.node_of(key).map_err(|_| Code::Void)?;
    let t = domain::prepare(k, rootslot).map_err(|e| match e {
        domain::context::PrepareError::NoSpace => Code::NoSpace,
        domain::context::PrepareError::Malformed(_) | domain::context::PrepareError::Shared(_) => {
            Code::BadState
        }
    })?;
    let slot = |w: u64| {
        if w < 16 {
            Ok(w as usize)
        } else {
            Err(Code::SlotRange)
        }
    };
    let state_words = |k: &Kernel| {
        let c = &k.ctxs[t];
        [c.state.bits(), c.flags as u64, c.fault_code, c.fault_info]
    };
    match m.order {
        o::GET_REGS => {
            for (i, v) in k.ctxs[t].regs().iter().enumerate() {
                out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
            }
            r.len = REGS_SIZE;
            r.w = state_words(k);
        }
        o::SET_REGS => {
            if s.len() != REGS_SIZE {
                return Err(Code::BadValue);
            }
            let regs: [u64; NREGS] = core::array::from_fn(|i| {
                u64::from_le_bytes(s[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))
            });
            k.ctxs[t].set_regs(&regs).map_err(|_| Code::BadValue)?;
            if t == ci {
                // The answer would overwrite them; the domain resumes with
                // exactly what was written.
                return Ok(After::Parked).inspect(|_| domain::ready_push(k, ci));
            }
        }
        o::GET_FPU => {
            domain::save_fpu(k, t);
            out[..AREA_SIZE].copy_from_slice(&k.ctxs[t].fpu.0);
            r.len = AREA_SIZE;
            r.w[0] = AREA_SIZE as u64;
        }
        o::SET_FPU => {
            if s.len() != AREA_SIZE {
                return Err(Code::BadValue);
            }
            let mut img = fpu::FpuState([0; AREA_SIZE]);
            img.0.copy_from_slice(s);
            if fpu::sanitize(&mut img) {
                return Err(Code::BadValue);
            }
            domain::save_fpu(k, t);
            k.ctxs[t].fpu = img;
        }
        o::GET_SLOT => {
            let sl = slot(m.w[0])?;
            if sl != 0 {
                r.keys[0] = k.objs.node_entry(k.ctxs[t].general).keys[sl].canonical();
            }
        }
        o::SET_SLOT => {
            let sl = slot(m.w[0])?;
            if sl != 0 {
                let g = k.ctxs[t].general;
                r.keys[0] = k.objs.node_entry(g).keys[sl].canonical();
                set_slot(k, g, sl, m.keys[0].canonical());
            }
        }
        o::GET_KEEPER | o::GET_METER | o::GET_SPACE => {
            let sl = match m.order {
                o::GET_KEEPER => root::KEEPER,
                o::GET_METER => root::METER,
                _ => root::SPACE,
            };
            r.keys[0] = k.objs.node_entry(rootslot).keys[sl].canonical();
        }
        o::SET_KEEPER | o::SET_METER | o::SET_SPACE => {
            let new = m.keys[0].canonical();
            let (sl, ok) = match m.order {
                o::SET_KEEPER => (root::KEEPER, matches!(new.key_type(), KeyType::Start)),
                o::SET_METER => (root::METER, matches!(new.key_type(), KeyType::Meter)),
                _ => (
                    root::SPACE,
                    matches!(new.key_type(), KeyType::Segment | KeyType::Page),
                ),
            };
            if !ok && !new.is_void() {
                return Err(Code::WrongType);
            }
            r.keys[0] = k.objs.node_entry(rootslot).keys[sl].canonical();
            set_slot(k, rootslot, sl, new);
            k.meter_gen += 1;
            if sl == root::SPACE {
                domain::discard_tables(k, t);
            }
        }
        o::GET_IOPORTS => {
            r.keys[0] = k.objs.node_entry(rootslot).keys[root::IOPORTS].canonical();
        }
        o::SET_IOPORTS => {
            let new = m.keys[0].canonical();
            if !new.is_void() && new.key_type() != KeyType::IoPorts {
                return Err(Code::WrongType);
            }
            r.keys[0] = k.objs.node_entry(rootslot).keys[root::IOPORTS].canonical();
            set_slot(k, rootslot, root::IOPORTS, new);
            // Takes effect the next time the domain is dispatched (the
            // invoker itself: on the way out of this call, `sched::run`).
            k.ctxs[t].io = crate::domain::context::io_word(new);
        }
        o::GET_ANSWERS => {
            let c = &k.ctxs[t];
            let node = k.objs.node_entry(rootslot).keys[root::ANSWERS].canonical();
            r.keys[0] = if node.key_type() == KeyType::Node {
                node
            } else {
                Key::VOID
            };
            let answer = if c.limit == NO_LIMIT {
                0
            } else {
                c.limit_answer
            };
            r.w = [c.limit, answer, c.limited, 0];
        }
        o::SET_ANSWERS => set_answers(k, t, m, r)?,
        o::MAKE_START => {
            if m.w[0] > 0xff {
                return Err(Code::BadValue);
            }
            let n = k.objs.node_entry(rootslot);
            r.keys[0] = Key::start(n.oid, n.version, m.w[0] as u8);
        }
        o::STOP => {
            k.ctxs[t].flags |= state::STOPPED;
            if matches!(k.ctxs[t].queue(), Queue::Ready | Queue::Sleeping) {
                domain::dequeue(k, t);
            }
            if t == ci {
                return Ok(After::Schedule);
            }
        }
        o::START => {
            k.ctxs[t].flags &= !state::STOPPED;
            settle(k, ci, t);
        }
        o::GET_STATE => r.w = state_words(k),
        o::SET_STATE => {
            // A domain may be made available or running, never waiting
            // (no caller's resume key could answer it).
            let st = match RunState::from_bits(m.w[0]) {
                Some(s @ (RunState::Available | RunState::Running)) => s,
                _ => return Err(Code::BadValue),
            };
            if m.w[1] & !(state::FLAGS as u64) != 0 {
                return Err(Code::BadValue);
            }
            let c = &mut k.ctxs[t];
            c.state = st;
            c.flags = m.w[1] as u32;
            c.fault_code = m.w[2];
            c.fault_info = m.w[3];
            settle(k, ci, t);
            if t == ci && !domain::runnable(&k.ctxs[ci]) {
                return Ok(After::Schedule);
            }
        }
        _ => return Err(Code::NoSuchOrder),
    }
    Ok(After::Continue)
}

/// After a change of run state or flags: queue the domain if it now wants
/// to run, take it off the ready queue if not, and let anyone stalled on
/// it try again if it accepts messages.
fn settle(k: &mut Kernel, ci: usize, t: usize) {
    let runnable = domain::runnable(&k.ctxs[t]);
    match k.ctxs[t].queue() {
        Queue::Ready | Queue::Sleeping if !runnable => domain::dequeue(k, t),
        Queue::None if runnable && t != ci && k.current != Some(t) => domain::ready_push(k, t),
        _ => {}
    }
    if k.ctxs[t].state == RunState::Available && k.ctxs[t].flags & state::STOPPED == 0 {
        domain::wake_stalled(k, t);
    }
}

/// `SET_ANSWERS` on prepared domain `t`: checks everything, then moves the
/// answers node's mark and the limit rule in the root and the context at
/// once (the context stays prepared; nothing else about it changes).
fn set_answers(k: &mut Kernel, t: usize, m: &Msg, r: &mut Reply) -> Result<(), Code> {
    let new = m.keys[0].canonical();
    if !new.is_void() && new.key_type() != KeyType::Node {
        return Err(Code::WrongType);
    }
    let (limit, answer) = (m.w[0], m.w[1]);
    if limit != NO_LIMIT && limit > u32::MAX as u64 {
        return Err(Code::BadValue);
    }
    let node = if new.is_void() {
        None
    } else {
        match k.node_of(new) {
            Ok(i) => Some(i),
            // A key to a destroyed node answers nothing (as at preparation).
            Err(crate::obj::Miss::Void | crate::obj::Miss::Damaged) => None,
            Err(crate::obj::Miss::NoSpace) => return Err(Code::NoSpace),
        }
    };
    let mark = domain::link(t);
    if let Some(i) = node {
        let owner = k.objs.node_entry(i).ctx;
        if owner != 0 && owner != mark {
            return Err(Code::BadState);
        }
    }
    // Committed.
    let rootslot = k.ctxs[t].root;
    r.keys[0] = k.objs.node_entry(rootslot).keys[root::ANSWERS].canonical();
    r.w[0] = k.ctxs[t].limited;
    let c = &k.ctxs[t];
    if let Some(old) = c.answers.checked_sub(1) {
        // Unmarked unless it is also another of the domain's parts.
        let (root_, general, annex) = (c.root, c.general, c.annex);
        if old != root_ && old != general && old != annex {
            k.objs.set_ctx(old, 0);
        }
    }
    let rule = if limit == NO_LIMIT {
        [Key::VOID; 2]
    } else {
        [Key::number(answer, limit as u32), Key::number(0, 0)]
    };
    set_slot(k, rootslot, root::ANSWERS, new);
    set_slot(k, rootslot, root::LIMIT, rule[0]);
    set_slot(k, rootslot, root::LIMITED, rule[1]);
    if let Some(i) = node {
        k.objs.set_ctx(i, mark);
    }
    let c = &mut k.ctxs[t];
    c.answers = node.map_or(0, |i| i + 1);
    c.limit = limit;
    c.limit_answer = answer;
    c.limited = 0;
    Ok(())
}
