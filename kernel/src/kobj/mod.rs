//! Kernel objects: what each key type does with the orders it receives.
//! One file per type; the order codes are in `stet_abi::order` and every
//! failure is a `stet_abi::code::Code` (docs/ABI.md).

pub mod checkpoint;
pub mod domain;
pub mod ioports;
pub mod irq;
pub mod journal;
pub mod meter;
pub mod node;
pub mod page;
pub mod segment;
pub mod service;
pub mod sysinfo;

use crate::invoke::message::Msg;
use crate::kernel::Kernel;
use stet_abi::code::Code;
use stet_keys::{Key, KeyType};

/// A kernel object's answer.
pub struct Reply {
    /// Result code.
    pub code: Code,
    /// Data words.
    pub w: [u64; 4],
    /// Keys.
    pub keys: [Key; 4],
    /// Bytes of the reply string (in the caller's buffer).
    pub len: usize,
}

impl Reply {
    /// Success with nothing in it.
    pub fn new() -> Reply {
        Reply {
            code: Code::Ok,
            w: [0; 4],
            keys: [Key::VOID; 4],
            len: 0,
        }
    }

    /// Sets the result code.
    pub fn fail(&mut self, c: Code) {
        self.code = c;
    }
}

/// What the invoker does after the answer.
pub enum After {
    /// Keeps running.
    Continue,
    /// Gives up the CPU after the answer (yield).
    Schedule,
    /// No answer now: the invoker was parked (sleep) and re-executes the
    /// invocation when woken.
    Parked,
}

/// Parks `ci` until `wake` (a `domain::sleep` token) with data words
/// `w0`, `w1` for its retry: it re-executes the invocation (the two-byte
/// `syscall`) when woken, so nothing of the wait lives in the kernel.
pub fn park(k: &mut Kernel, ci: usize, w0: u64, w1: u64, wake: u64) -> After {
    let c = &mut k.ctxs[ci];
    c.frame.rsi = w0;
    c.frame.rdx = w1;
    c.frame.rip -= 2;
    crate::domain::sleep(k, ci, wake);
    k.current = None;
    After::Parked
}

/// Carries out `m.order` on the kernel object `key` designates, for
/// context `ci`. `s` is the string sent; the reply string goes to `out`.
pub fn order(
    k: &mut Kernel,
    ci: usize,
    key: Key,
    m: &Msg,
    s: &[u8],
    r: &mut Reply,
    out: &mut [u8; 4096],
) -> After {
    match key.key_type() {
        KeyType::Node => node::order(k, key, m, r),
        KeyType::Page => page::order(k, key, m, s, r, out),
        KeyType::Segment => segment::order(k, key, m, s, r, out),
        KeyType::Domain => return domain::order(k, ci, key, m, s, r, out),
        KeyType::Meter => meter::order(k, key, m, r),
        KeyType::Number => service::number(key, m, r),
        KeyType::Console => service::console(m, s, r),
        KeyType::Sleep => return service::sleep(k, ci, m, r),
        KeyType::Discrim => service::discrim(k, m, r),
        KeyType::KeyBits => service::keybits(m, r, out),
        KeyType::Range => service::range(k, key, m, s, r),
        KeyType::Checkpoint => return checkpoint::order(k, ci, m, r),
        KeyType::Journal => return journal::order(k, ci, m, r),
        KeyType::SysInfo => sysinfo::order(k, m, s, r, out),
        KeyType::IoPorts => ioports::order(key, m, r),
        KeyType::Irq => return irq::order(k, ci, key, m, r),
        // Start, resume and void keys never reach here.
        _ => r.fail(Code::Void),
    }
    After::Continue
}
