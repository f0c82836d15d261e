//! Node keys: fetch, swap, clear, make segment / read-only / sense keys,
//! numbers, and making a node the root of a domain.
//!
//! Every change to a node goes through [`write()`], which keeps the kernel's
//! caches honest: a node that is part of a prepared domain is written back
//! first and the domain reloaded after, and a node that backs hardware
//! mappings has them discarded when a non-void key in it is replaced.

use super::Reply;
use crate::domain::{self};
use crate::invoke::message::Msg;
use crate::kernel::Kernel;
use crate::memory;
use crate::obj::{Miss, SLOTS};
use stet_abi::code::Code;
use stet_abi::domain::{root, state};
use stet_abi::order::node as o;
use stet_keys::{rights, Key, KeyType, MAX_LSS};

/// Stores `key` in slot `slot` of node `i`, discarding the hardware
/// mappings built through the node if a non-void key is replaced. No domain bookkeeping: for the kernel's own
/// writes into general key slots and domain parts it keeps in step itself.
pub fn set_slot(k: &mut Kernel, i: u32, slot: usize, key: Key) {
    if !k.objs.node_entry(i).keys[slot].is_void() {
        memory::unmap_node(k, i, Some(slot));
    }
    k.objs.node_mut(i).keys[slot] = key;
}

/// The prepared domain node `i` belongs to, if any.
fn owner(k: &Kernel, i: u32) -> Option<usize> {
    domain::unlink(k.objs.node_entry(i).ctx)
}

/// Makes node `i`'s slots current (writes back a prepared domain it is
/// part of) before someone reads them through a key.
pub fn before_read(k: &mut Kernel, i: u32) {
    if let Some(d) = owner(k, i) {
        domain::sync(k, d);
    }
}

/// The slots of node `i` that cached meter checks depend on: a meter's
/// time left and superior, if it was ever walked as one. (A change to a
/// prepared domain's root reloads it, which forgets its check.)
fn meter_slots(k: &Kernel, i: u32) -> [Key; 2] {
    use stet_abi::domain::meter;
    let n = k.objs.node_entry(i);
    if n.meter {
        [n.keys[meter::TIME], n.keys[meter::SUPERIOR]]
    } else {
        [Key::VOID; 2]
    }
}

/// A change to node `i` through a key: write back the domain it belongs
/// to, change, reload the domain.
pub fn write(k: &mut Kernel, i: u32, f: impl FnOnce(&mut Kernel)) {
    let d = owner(k, i);
    if let Some(d) = d {
        domain::sync(k, d);
    }
    let before = meter_slots(k, i);
    f(k);
    if meter_slots(k, i) != before {
        // A meter's time or superior, or a domain's meter, changed: every
        // chain is checked again. Only then: servers swap keys in nodes
        // all the time, and a re-check walks a chain at every switch.
        k.meter_gen += 1;
    }
    if let Some(d) = d {
        // The general keys node is read at each use, never cached.
        if k.ctxs[d].general != i {
            domain::reload(k, d);
        }
    }
}

/// The node slot a node key designates, or a result code.
fn target(k: &mut Kernel, key: Key) -> Result<u32, Code> {
    match k.node_of(key) {
        Ok(i) => Ok(i),
        Err(Miss::Void) => Err(Code::Void),
        Err(Miss::NoSpace | Miss::Damaged) => Err(Code::NoSpace),
    }
}

fn slot_arg(w: u64) -> Result<usize, Code> {
    if w < SLOTS as u64 {
        Ok(w as usize)
    } else {
        Err(Code::SlotRange)
    }
}

/// The first `levels - 1` fetches of a `FETCH_PATH` (`path`: 4-bit slots,
/// the first lowest) from node `i` reached through `key` → the node they
/// reach, the key that reached it (diminished after a weak one) and the
/// last slot of the path.
fn walk_path(
    k: &mut Kernel,
    i: u32,
    key: Key,
    path: u64,
    levels: u64,
) -> Result<(u32, Key, usize), Code> {
    if levels == 0 || levels > o::PATH_MAX {
        return Err(Code::BadValue);
    }
    let slot = |level: u64| ((path >> (4 * level)) & 15) as usize;
    let (mut at, mut through) = (i, key);
    for level in 0..levels - 1 {
        before_read(k, at);
        let got = k.objs.node_entry(at).keys[slot(level)].canonical();
        let got = if through.rights() & rights::WEAK != 0 {
            got.diminish()
        } else {
            got
        };
        if got.key_type() != KeyType::Node {
            return Err(Code::WrongType);
        }
        at = target(k, got)?;
        through = got;
    }
    Ok((at, through, slot(levels - 1)))
}

/// Carries out a node order.
pub fn order(k: &mut Kernel, key: Key, m: &Msg, r: &mut Reply) {
    if let Err(c) = run(k, key, m, r) {
        r.fail(c);
    }
}

fn run(k: &mut Kernel, key: Key, m: &Msg, r: &mut Reply) -> Result<(), Code> {
    let i = target(k, key)?;
    let ro = key.rights() & rights::RO != 0;
    let weak = key.rights() & rights::WEAK != 0;
    let writable = || if ro { Err(Code::NoRights) } else { Ok(()) };
    let (oid, version) = {
        let n = k.objs.node_entry(i);
        (n.oid, n.version)
    };
    match m.order {
        o::FETCH => {
            let s = slot_arg(m.w[0])?;
            before_read(k, i);
            let got = k.objs.node_entry(i).keys[s].canonical();
            r.keys[0] = if weak { got.diminish() } else { got };
        }
        o::FETCH_PATH => {
            let (at, through, s) = walk_path(k, i, key, m.w[0], m.w[1])?;
            before_read(k, at);
            let got = k.objs.node_entry(at).keys[s].canonical();
            r.keys[0] = if through.rights() & rights::WEAK != 0 {
                got.diminish()
            } else {
                got
            };
        }
        o::SWAP_PATH => {
            let (at, through, s) = walk_path(k, i, key, m.w[0], m.w[1])?;
            if through.rights() & rights::RO != 0 {
                return Err(Code::NoRights);
            }
            before_read(k, at);
            r.keys[0] = k.objs.node_entry(at).keys[s].canonical();
            let new = m.keys[0].canonical();
            write(k, at, |k| set_slot(k, at, s, new));
        }
        o::SWAP => {
            let s = slot_arg(m.w[0])?;
            writable()?;
            before_read(k, i);
            r.keys[0] = k.objs.node_entry(i).keys[s].canonical();
            let new = m.keys[0].canonical();
            write(k, i, |k| set_slot(k, i, s, new));
        }
        o::CLEAR => {
            writable()?;
            write(k, i, |k| {
                for s in 0..SLOTS {
                    set_slot(k, i, s, Key::VOID);
                }
            });
        }
        o::WRITE_NUMBER => {
            let s = slot_arg(m.w[0])?;
            writable()?;
            if m.w[2] > u32::MAX as u64 {
                return Err(Code::BadValue);
            }
            let new = Key::number(m.w[1], m.w[2] as u32);
            write(k, i, |k| set_slot(k, i, s, new));
        }
        o::READ_NUMBER => {
            let s = slot_arg(m.w[0])?;
            before_read(k, i);
            let (lo, hi) = k.objs.node_entry(i).keys[s]
                .number_value()
                .ok_or(Code::WrongType)?;
            r.w = [lo, hi as u64, 0, 0];
        }
        o::MAKE_SEGMENT => {
            let lss = m.w[0];
            if lss == 0 || lss > MAX_LSS as u64 || m.w[1] > 0xff {
                return Err(Code::BadValue);
            }
            let mut rts = m.w[1] as u8 & KeyType::Segment.allowed_rights();
            if ro {
                rts |= rights::RO;
            }
            // Through a weak (sense) key: no keeper of the segment may be
            // invoked either, or a sense key could lead to a message.
            if weak {
                rts |= rights::WEAK | rights::NOCALL;
            }
            r.keys[0] = Key::segment(oid, version, lss as u8, rts);
        }
        o::MAKE_RO => r.keys[0] = key.canonical().restrict(rights::RO),
        o::MAKE_SENSE => r.keys[0] = key.canonical().restrict(rights::RO | rights::WEAK),
        o::MAKE_FORWARDER => {
            writable()?;
            if weak {
                return Err(Code::NoRights);
            }
            r.keys[0] = Key::forwarder(oid, version);
        }
        o::MAKE_DOMAIN => {
            writable()?;
            r.keys[0] = make_domain(k, i, m)?;
        }
        _ => return Err(Code::NoSuchOrder),
    }
    Ok(())
}

/// The initial FPU image: x87 control word 0x37f, MXCSR 0x1f80, an XSAVE
/// header naming x87 and SSE.
pub fn initial_fpu(page: &mut [u8; 1024]) {
    page.fill(0);
    page[0..2].copy_from_slice(&0x037fu16.to_le_bytes());
    page[24..28].copy_from_slice(&0x1f80u32.to_le_bytes());
    page[28..32].copy_from_slice(&0xffffu32.to_le_bytes());
    page[512..520].copy_from_slice(&3u64.to_le_bytes());
}

/// Formats node `i` as a domain root over the parts passed as keys 0–2.
fn make_domain(k: &mut Kernel, i: u32, m: &Msg) -> Result<Key, Code> {
    let [g, a, f, _] = m.keys;
    for (key, t) in [(g, KeyType::Node), (a, KeyType::Node), (f, KeyType::Page)] {
        if key.is_void() {
            return Err(Code::VoidArgument);
        }
        if key.key_type() != t {
            return Err(Code::WrongType);
        }
        if key.rights() != 0 {
            return Err(Code::NoRights);
        }
    }
    let gi = k.node_of(g).map_err(|_| Code::VoidArgument)?;
    let ai = k.node_of(a).map_err(|_| Code::VoidArgument)?;
    let fi = k.page_of(f).map_err(|_| Code::VoidArgument)?;
    if gi == ai || gi == i || ai == i {
        return Err(Code::BadValue);
    }
    if owner(k, i).is_some()
        || owner(k, gi).is_some()
        || owner(k, ai).is_some()
        || k.objs.page_entry(fi).ctx != 0
    {
        return Err(Code::BadState);
    }
    for s in 0..SLOTS {
        set_slot(k, i, s, Key::VOID);
        set_slot(k, ai, s, Key::number(0, 0));
        set_slot(k, gi, s, Key::VOID);
    }
    set_slot(
        k,
        i,
        root::STATE,
        Key::number(state::AVAILABLE, state::STOPPED),
    );
    set_slot(k, i, root::GENERAL, g.canonical());
    set_slot(k, i, root::ANNEX, a.canonical());
    set_slot(k, i, root::FPU, f.canonical());
    set_slot(k, i, root::RIP, Key::number(0, 0));
    set_slot(k, i, root::RFLAGS, Key::number(0x202, 0));
    let mut img = [0u8; 1024];
    initial_fpu(&mut img);
    let frame = k.page_write(fi).map_err(|_| Code::NoSpace)?;
    crate::arch::phys::write_frame(frame, 0, &img);
    let n = k.objs.node_entry(i);
    Ok(Key::domain(n.oid, n.version))
}
