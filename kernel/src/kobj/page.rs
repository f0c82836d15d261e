//! Page keys: read, write, zero, word access, read-only keys.
//!
//! A page that is the FPU state of a prepared domain is written back before
//! it is read and the domain reloaded after it is written, as with nodes.

use super::Reply;
use crate::arch::phys;
use crate::domain;
use crate::invoke::message::Msg;
use crate::kernel::Kernel;
use crate::obj::Miss;
use stet_abi::code::Code;
use stet_abi::order::page as o;
use stet_keys::{rights, Key};

const PAGE: u64 = 4096;

/// Carries out a page order.
pub fn order(k: &mut Kernel, key: Key, m: &Msg, s: &[u8], r: &mut Reply, out: &mut [u8; 4096]) {
    if let Err(c) = run(k, key, m, s, r, out) {
        r.fail(c);
    }
}

fn run(
    k: &mut Kernel,
    key: Key,
    m: &Msg,
    s: &[u8],
    r: &mut Reply,
    out: &mut [u8; 4096],
) -> Result<(), Code> {
    let i = match k.page_of(key) {
        Ok(i) => i,
        Err(Miss::Void) => return Err(Code::Void),
        Err(Miss::NoSpace | Miss::Damaged) => return Err(Code::NoSpace),
    };
    let Some(mut frame) = k.objs.frame(i) else {
        return Err(Code::Void);
    };
    let owner = domain::unlink(k.objs.page_entry(i).ctx);
    if let Some(d) = owner {
        domain::sync(k, d);
    }
    let writable = || {
        if key.is_ro() {
            Err(Code::NoRights)
        } else {
            Ok(())
        }
    };
    let word_at = |off: u64| {
        if !off.is_multiple_of(8) || off >= PAGE {
            Err(Code::BadValue)
        } else {
            Ok(off as usize)
        }
    };
    let mut wrote = false;
    if matches!(m.order, o::WRITE | o::ZERO | o::WRITE_WORD) && !key.is_ro() {
        frame = k.page_write(i).map_err(|_| Code::NoSpace)?;
    }
    match m.order {
        o::READ => {
            let (off, len) = (m.w[0], m.w[1]);
            if off > PAGE || len > PAGE - off {
                return Err(Code::BadValue);
            }
            phys::read_frame(frame, off as usize, &mut out[..len as usize]);
            r.len = len as usize;
        }
        o::WRITE => {
            writable()?;
            let off = m.w[0];
            if off > PAGE || s.len() as u64 > PAGE - off {
                return Err(Code::BadValue);
            }
            phys::write_frame(frame, off as usize, s);
            wrote = true;
        }
        o::ZERO => {
            writable()?;
            phys::zero_frame(frame);
            wrote = true;
        }
        o::READ_WORD => {
            let off = word_at(m.w[0])?;
            let mut b = [0u8; 8];
            phys::read_frame(frame, off, &mut b);
            r.w[0] = u64::from_le_bytes(b);
        }
        o::WRITE_WORD => {
            writable()?;
            let off = word_at(m.w[0])?;
            phys::write_frame(frame, off, &m.w[1].to_le_bytes());
            wrote = true;
        }
        o::MAKE_RO => r.keys[0] = key.canonical().restrict(rights::RO),
        _ => return Err(Code::NoSuchOrder),
    }
    if let (Some(d), true) = (owner, wrote) {
        domain::reload(k, d);
    }
    Ok(())
}
