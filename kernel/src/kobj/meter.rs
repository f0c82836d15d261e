//! Meter keys: how much time is left, and making sub-meters. Time is set
//! by whoever holds a node key to the meter's node (its creator), so that a
//! meter key alone can never add time to itself.

use super::Reply;
use crate::invoke::message::Msg;
use crate::kernel::Kernel;
use crate::kobj::node::{self, set_slot};
use crate::obj::SLOTS;
use stet_abi::code::Code;
use stet_abi::domain::meter;
use stet_abi::order::meter as o;
use stet_keys::{Key, KeyType};

/// Carries out a meter order.
pub fn order(k: &mut Kernel, key: Key, m: &Msg, r: &mut Reply) {
    if let Err(c) = run(k, key, m, r) {
        r.fail(c);
    }
}

fn run(k: &mut Kernel, key: Key, m: &Msg, r: &mut Reply) -> Result<(), Code> {
    let i = k.node_of(key).map_err(|_| Code::Void)?;
    match m.order {
        o::QUERY => {
            let n = k.objs.node_entry(i);
            let num = |s: usize| n.keys[s].number_value().map_or(0, |(v, _)| v);
            r.w = [num(meter::TIME), num(meter::USED), 0, 0];
        }
        o::CREATE_SUB => {
            let nk = m.keys[0];
            if nk.is_void() {
                return Err(Code::VoidArgument);
            }
            if nk.key_type() != KeyType::Node {
                return Err(Code::WrongType);
            }
            if nk.rights() != 0 {
                return Err(Code::NoRights);
            }
            let ni = k.node_of(nk).map_err(|_| Code::VoidArgument)?;
            if ni == i || k.objs.node_entry(ni).ctx != 0 {
                return Err(Code::BadState);
            }
            let sup = key.canonical();
            let time = m.w[0];
            node::write(k, ni, |k| {
                for s in 0..SLOTS {
                    set_slot(k, ni, s, Key::VOID);
                }
                set_slot(k, ni, meter::SUPERIOR, sup);
                set_slot(k, ni, meter::TIME, Key::number(time, 0));
                set_slot(k, ni, meter::USED, Key::number(0, 0));
            });
            let n = k.objs.node_entry(ni);
            r.keys[0] = Key::meter(n.oid, n.version);
        }
        _ => return Err(Code::NoSuchOrder),
    }
    Ok(())
}
