//! The kernel's small services: number keys, the console, time and
//! sleeping, discrim, key bits, and ranges (creating and destroying
//! objects, the space bank's authority).

use super::{After, Reply};
use crate::arch;
use crate::domain;
use crate::invoke::message::Msg;
use crate::kernel::Kernel;
use crate::memory;
use crate::obj::Miss;
use stet_abi::code::Code;
use stet_abi::order::{console as oc, discrim as od, keybits as ob, range as orr, sleep as os};
use stet_keys::{Key, KeyType, Space};

/// A number key answers its value: `w0` low, `w1` high.
pub fn number(key: Key, _m: &Msg, r: &mut Reply) {
    let (lo, hi) = key.number_value().unwrap_or((0, 0));
    r.w = [lo, hi as u64, 0, 0];
}

/// The early console: print the string.
pub fn console(m: &Msg, s: &[u8], r: &mut Reply) {
    match m.order {
        oc::WRITE => arch::serial::write_bytes(s),
        _ => r.fail(Code::NoSuchOrder),
    }
}

/// Time: now, sleep until, yield.
pub fn sleep(k: &mut Kernel, ci: usize, m: &Msg, r: &mut Reply) -> After {
    match m.order {
        os::NOW => r.w = [k.now_ns(), k.ticks, k.wall_ns(), 0],
        os::SET_WALL => k.wall_base_ns = m.w[0].saturating_sub(k.now_ns()).max(1),
        os::UNTIL => {
            if k.now_ns() < m.w[0] {
                // Parked with `rip` on the `syscall`: when woken it asks
                // again, and then the time has come.
                k.ctxs[ci].frame.rip -= 2;
                domain::sleep(k, ci, m.w[0]);
                k.current = None;
                return After::Parked;
            }
        }
        os::YIELD => return After::Schedule,
        _ => r.fail(Code::NoSuchOrder),
    }
    After::Continue
}

/// Whether a key designates an object that no longer exists.
fn dangling(k: &mut Kernel, key: Key) -> bool {
    match key.key_type() {
        KeyType::Page => matches!(k.page_of(key), Err(Miss::Void)),
        KeyType::Resume => crate::invoke::message::resume_target(k, key).is_none(),
        t if t.designates_object() => matches!(k.node_of(key), Err(Miss::Void)),
        _ => false,
    }
}

/// Discrim: a key's type and rights, and key comparison, conveying no
/// authority.
pub fn discrim(k: &mut Kernel, m: &Msg, r: &mut Reply) {
    match m.order {
        od::CLASSIFY => {
            let key = m.keys[0];
            if dangling(k, key) {
                r.w = [KeyType::Void as u64, 0, 1, 0];
            } else {
                r.w = [key.key_type() as u64, key.rights() as u64, 0, 0];
            }
        }
        od::COMPARE => r.w[0] = m.keys[0].same(m.keys[1]) as u64,
        _ => r.fail(Code::NoSuchOrder),
    }
}

/// Key bits: a key's raw words (hint cleared), for privileged tools.
pub fn keybits(m: &Msg, r: &mut Reply, out: &mut [u8; 4096]) {
    match m.order {
        ob::GET => {
            let key = m.keys[0].canonical();
            let (w0, w1) = key.words();
            r.w = [w0, w1, 0, 0];
            out[..16].copy_from_slice(&key.to_bytes());
            r.len = 16;
        }
        _ => r.fail(Code::NoSuchOrder),
    }
}

/// Destroys object `oid` of `space` (zeroed, version bumped; a domain
/// built on it dropped) → a full key to the fresh object.
fn renew(k: &mut Kernel, space: Space, oid: u64) -> Result<Key, Code> {
    match space {
        Space::Node => {
            let i = k.node(oid).map_err(|_| Code::NoSpace)?;
            destroy_node(k, i);
            Ok(Key::node(oid, k.objs.node_entry(i).version, 0))
        }
        Space::Page => {
            let i = k.page(oid).map_err(|_| Code::NoSpace)?;
            if let Some(d) = domain::unlink(k.objs.page_entry(i).ctx) {
                drop_domain(k, d);
            }
            memory::unmap_page(k, i);
            k.objs
                .destroy_page(i, &mut k.pool)
                .map_err(|_| Code::NoSpace)?;
            Ok(Key::page(oid, k.objs.page_entry(i).version, false))
        }
    }
}

/// How many indices string `s` holds (1 to 16, each below `count`), or
/// `BAD_VALUE`.
fn indices(s: &[u8], count: u32) -> Result<usize, Code> {
    let n = s.len() / 4;
    let all_in = s
        .chunks_exact(4)
        .all(|c| (u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64) < count as u64);
    if !s.len().is_multiple_of(4) || n == 0 || n > crate::obj::SLOTS || !all_in {
        return Err(Code::BadValue);
    }
    Ok(n)
}

/// A full key to object `oid` of `space` as it is now (faulting it in).
fn object_key(k: &mut Kernel, space: Space, oid: u64) -> Result<Key, Code> {
    match space {
        Space::Node => k
            .node(oid)
            .map(|i| Key::node(oid, k.objs.node_entry(i).version, 0)),
        Space::Page => k
            .page(oid)
            .map(|i| Key::page(oid, k.objs.page_entry(i).version, false)),
    }
    .map_err(|_| Code::NoSpace)
}

/// `GET_INTO`: keys to up to 16 objects straight into a node's slots (a
/// bank fills a leaf of a new address space in one invocation, not one
/// `GET` and one `SWAP` per page). Everything is checked, and every object
/// found, before the node changes.
fn get_into(k: &mut Kernel, range: (Space, u64, u32), m: &Msg, s: &[u8]) -> Result<(), Code> {
    let (space, first, count) = range;
    let n = indices(s, count)?;
    let slot = m.w[0];
    if slot > (crate::obj::SLOTS - n) as u64 {
        return Err(Code::SlotRange);
    }
    let node = m.keys[0];
    if node.key_type() != KeyType::Node {
        return Err(Code::WrongType);
    }
    if node.rights() & stet_keys::rights::RO != 0 {
        return Err(Code::NoRights);
    }
    let mut keys = [Key::VOID; crate::obj::SLOTS];
    for (j, c) in s.chunks_exact(4).enumerate() {
        let index = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64;
        keys[j] = object_key(k, space, first + index)?;
    }
    // Last, so that faulting the objects in cannot move it.
    let ni = match k.node_of(node) {
        Ok(i) => i,
        Err(crate::obj::Miss::Void) => return Err(Code::Void),
        Err(_) => return Err(Code::NoSpace),
    };
    super::node::write(k, ni, |k| {
        for (j, &key) in keys[..n].iter().enumerate() {
            super::node::set_slot(k, ni, slot as usize + j, key);
        }
    });
    Ok(())
}

/// Ranges: keys to the objects of a range, and destroying them.
pub fn range(k: &mut Kernel, key: Key, m: &Msg, s: &[u8], r: &mut Reply) {
    let Some((space, first, count)) = key.range_parts() else {
        return r.fail(Code::Void);
    };
    if m.order == orr::GET_INTO {
        if let Err(c) = get_into(k, (space, first, count), m, s) {
            r.fail(c);
        }
        return;
    }
    if m.order == orr::RENEW_MANY {
        match indices(s, count) {
            Ok(n) => {
                let done = s[..n * 4]
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64)
                    .take_while(|&i| renew(k, space, first + i).is_ok())
                    .count();
                r.w[0] = done as u64;
            }
            Err(c) => r.fail(c),
        }
        return;
    }
    let index = m.w[0];
    let oid = first + index;
    let in_range = index < count as u64 && oid <= stet_keys::MAX_OID;
    match m.order {
        orr::INFO => r.w = [first, count as u64, space as u64, 0],
        orr::IDENTIFY => {
            let key = m.keys[0];
            let t = key.key_type();
            let of_space = match t {
                KeyType::Page => Space::Page,
                KeyType::Resume => return r.fail(Code::WrongType),
                _ if t.designates_object() => Space::Node,
                KeyType::Void => return r.fail(Code::VoidArgument),
                _ => return r.fail(Code::WrongType),
            };
            if of_space != space {
                return r.fail(Code::WrongType);
            }
            if dangling(k, key) {
                return r.fail(Code::VoidArgument);
            }
            let oid = key.oid();
            if oid < first || oid - first >= count as u64 {
                return r.fail(Code::BadValue);
            }
            r.w = [oid - first, t as u64, key.rights() as u64, 0];
        }
        orr::GET | orr::RENEW if !in_range => r.fail(Code::BadValue),
        orr::GET => match space {
            Space::Node => match k.node(oid) {
                Ok(i) => r.keys[0] = Key::node(oid, k.objs.node_entry(i).version, 0),
                Err(_) => r.fail(Code::NoSpace),
            },
            Space::Page => match k.page(oid) {
                Ok(i) => r.keys[0] = Key::page(oid, k.objs.page_entry(i).version, false),
                Err(_) => r.fail(Code::NoSpace),
            },
        },
        orr::RENEW => match renew(k, space, oid) {
            Ok(key) => r.keys[0] = key,
            Err(c) => r.fail(c),
        },
        _ => r.fail(Code::NoSuchOrder),
    }
}

/// Destroys node `i`: a domain built on it is dropped from every cache
/// first, and mappings through it are discarded.
fn destroy_node(k: &mut Kernel, i: u32) {
    k.meter_gen += 1;
    if let Some(d) = domain::unlink(k.objs.node_entry(i).ctx) {
        drop_domain(k, d);
    }
    memory::unmap_node(k, i, None);
    k.objs.destroy_node(i);
}

/// Takes a prepared domain out of every queue and the context cache
/// (its nodes are about to change under it).
fn drop_domain(k: &mut Kernel, d: usize) {
    domain::dequeue(k, d);
    domain::wake_stalled(k, d);
    if k.current == Some(d) {
        k.current = None;
    }
    domain::unprepare(k, d);
}
