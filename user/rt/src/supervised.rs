//! The client side of the reincarnation service (`stet_abi::service::rs`):
//! putting a program under supervision takes a sealed factory for it and a
//! registration, the same four orders wherever it is done (`init`, the
//! benchmarks, the power-cut workload).

use crate::key::{Msg, Slot};
use stet_abi::code::Code;
use stet_abi::service::{factory as fo, rs as ro};

/// Where the keys are and which scratch slots to use.
pub struct Registration<'a> {
    /// The reincarnation service (client key).
    pub rs: Slot,
    /// The metafactory.
    pub meta: Slot,
    /// The bank the factory is built from.
    pub bank: Slot,
    /// The program node (`program:<name>` in an image spec).
    pub program: Slot,
    /// The key installed as the product's component 1 (its console).
    pub component1: Slot,
    /// Two scratch slots: the builder and requestor keys land there.
    pub scratch: [Slot; 2],
    /// The service's name.
    pub name: &'a [u8],
    /// REGISTER's words: restart (1) or hold, back-off base ns, most
    /// restarts per window (0: no cap), the window in ns.
    pub policy: [u64; 4],
}

/// Builds a factory for the program (component 1 installed, sealed) and
/// registers its requestor key → `Err((the order that failed, its code))`.
pub fn register(r: &Registration<'_>) -> Result<(), (&'static str, u64)> {
    let ok = |what, c| {
        if c == Code::Ok {
            Ok(())
        } else {
            Err((what, c))
        }
    };
    let [builder, requestor] = r.scratch;
    let a = Msg::new(r.meta, fo::NEW_FACTORY)
        .keys([r.bank, r.program, 0, 0])
        .recv([builder, requestor, 0, 0])
        .call();
    ok("NEW_FACTORY", a.code)?;
    let a = Msg::new(builder, fo::INSTALL)
        .w0(1)
        .keys([r.component1, 0, 0, 0])
        .call();
    ok("INSTALL", a.code)?;
    ok("SEAL", Msg::new(builder, fo::SEAL).call().code)?;
    let a = Msg::new(r.rs, ro::REGISTER)
        .string(r.name)
        .words(r.policy)
        .keys([requestor, 0, 0, 0])
        .call();
    ok("REGISTER", a.code)
}
