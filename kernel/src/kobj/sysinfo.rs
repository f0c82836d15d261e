//! The sysinfo key: what a shell shows about the system — the domains in
//! the context cache with their state, meter and keeper, the object
//! cache's statistics — and naming domains for reports.

use super::Reply;
use crate::invoke::message::Msg;
use crate::kernel::{Kernel, MAX_NAMES};
use stet_abi::code::Code;
use stet_abi::domain::{meter, root};
use stet_abi::order::sysinfo as o;
use stet_keys::KeyType;

const NONE: u64 = u64::MAX;

/// Carries out a sysinfo order; the reply string goes to `out`.
pub fn order(k: &mut Kernel, m: &Msg, s: &[u8], r: &mut Reply, out: &mut [u8; 4096]) {
    match m.order {
        o::DOMAINS => domains(k, m.w[0], r, out),
        o::OBJECTS => {
            let (nu, nc, pu, pc) = k.objs.usage();
            r.w = [
                (nu as u64) << 32 | nc as u64,
                (pu as u64) << 32 | pc as u64,
                (k.objs.dirty_node_count() as u64) << 32 | k.objs.dirty_page_count() as u64,
                k.pool.free_count() as u64,
            ];
            let st = k.objs.stats;
            for (i, v) in [
                st.node_reads,
                st.page_reads,
                st.node_evictions,
                st.page_evictions,
            ]
            .into_iter()
            .enumerate()
            {
                out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
            }
            r.len = 32;
        }
        o::NAME => name(k, m, s, r),
        _ => r.fail(Code::NoSuchOrder),
    }
}

fn domains(k: &mut Kernel, from: u64, r: &mut Reply, out: &mut [u8; 4096]) {
    let Some(ci) = (from as usize..k.ctxs.len()).find(|&i| k.ctxs[i].used) else {
        return r.fail(Code::BadValue);
    };
    let c = &k.ctxs[ci];
    let state = c.state.bits() | (c.flags as u64) << 8 | c.fault_code << 16;
    let ticks = c.ticks;
    let rooti = c.root as usize;
    let oid = k.objs.node_entry(rooti as u32).oid;
    let keys = k.objs.node_entry(rooti as u32).keys;
    let (mut moid, mut mleft) = (NONE, NONE);
    let mk = keys[root::METER];
    if mk.key_type() == KeyType::Meter {
        moid = mk.oid();
        if let Ok(mi) = k.node_of(mk) {
            mleft = k.objs.node_entry(mi).keys[meter::TIME]
                .number_value()
                .map_or(NONE, |(lo, _)| lo);
        }
    }
    let kk = keys[root::KEEPER];
    let (koid, kinfo) = if kk.key_type() == KeyType::Start {
        (kk.oid(), kk.info() as u64)
    } else {
        (NONE, NONE)
    };
    for (i, v) in [oid, state, ticks, moid, mleft, koid, kinfo]
        .into_iter()
        .enumerate()
    {
        out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }
    let name = k.name_of(oid).as_bytes();
    let n = name.len().min(24);
    out[56..80].fill(0);
    out[56..56 + n].copy_from_slice(&name[..n]);
    r.len = o::DOMAIN_RECORD;
    r.w[0] = ci as u64 + 1;
}

fn name(k: &mut Kernel, m: &Msg, s: &[u8], r: &mut Reply) {
    let d = m.keys[0];
    if d.key_type() != KeyType::Domain {
        return r.fail(if d.is_void() {
            Code::VoidArgument
        } else {
            Code::WrongType
        });
    }
    if k.node_of(d).is_err() {
        return r.fail(Code::VoidArgument);
    }
    let len = crate::kernel::NAME_LEN;
    if s.is_empty() || s.len() >= len || s.contains(&0) || core::str::from_utf8(s).is_err() {
        return r.fail(Code::BadValue);
    }
    let oid = d.oid();
    let at = match k.names[..k.nnames].iter().position(|(o, _)| *o == oid) {
        Some(i) => i,
        None if k.nnames < MAX_NAMES => {
            k.nnames += 1;
            k.nnames - 1
        }
        None => return r.fail(Code::NoSpace),
    };
    k.names[at].0 = oid;
    k.names[at].1 = [0; 24];
    k.names[at].1[..s.len()].copy_from_slice(s);
    // The names page goes into the next checkpoint.
    k.store.names_dirty = true;
}
