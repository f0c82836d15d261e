//! I/O-port keys: the authority to use a range of I/O ports. The key does
//! nothing by being invoked but describe itself; it takes effect in a
//! domain's root slot 12 (`SET_IOPORTS` on a domain key), where the
//! dispatcher opens its ports in the TSS I/O permission bitmap while that
//! domain runs (`sched::open_ports`).

use super::Reply;
use crate::invoke::message::Msg;
use stet_abi::code::Code;
use stet_abi::order::ioports as o;
use stet_keys::Key;

/// Carries out an order on an ioports key.
pub fn order(key: Key, m: &Msg, r: &mut Reply) {
    let Some((base, count)) = key.ioports_parts() else {
        return r.fail(Code::Void);
    };
    match m.order {
        o::INFO => r.w = [base as u64, count as u64, 0, 0],
        _ => r.fail(Code::NoSuchOrder),
    }
}
