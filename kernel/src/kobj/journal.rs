//! The journal key: `PAGE` commits one page to disk synchronously (see
//! `store::journal`). The invoker is parked until the record's flush
//! completes, with the record's sequence number (+1) and the boot it was
//! written in stored in its data words; re-executed, the order answers
//! `OK` once the record is durable — or `RESTARTED` if the system restarted
//! meanwhile (the record may or may not have reached the disk: ask again).
//! The `OK` answer's `w1` is what the record cost the kernel (benchmarks).

use super::{park, After, Reply};
use crate::arch::cpu;
use crate::invoke::message::Msg;
use crate::kernel::Kernel;
use crate::obj::Miss;
use crate::store::{self, journal};
use stet_abi::code::Code;
use stet_abi::order::journal as o;

/// `wake_at` of a domain parked on the journal.
pub const WAKE_ON_JOURNAL: u64 = u64::MAX - 2;

/// Carries out an order on the journal key for context `ci`.
pub fn order(k: &mut Kernel, ci: usize, m: &Msg, r: &mut Reply) -> After {
    let t = cpu::rdtsc();
    if m.order != o::PAGE {
        r.fail(Code::NoSuchOrder);
        return After::Continue;
    }
    if !k.store.persistent() {
        r.fail(Code::IoError);
        return After::Continue;
    }
    let (want, boot) = (m.w[0], m.w[1]);
    if want != 0 {
        if boot != k.store.restarts {
            r.fail(Code::Restarted);
            return After::Continue;
        }
        if journal::durable(k) >= want {
            r.w[0] = want - 1;
            r.w[1] = k.store.j.work + (cpu::rdtsc() - t);
            return After::Continue;
        }
        return park(k, ci, want, boot, WAKE_ON_JOURNAL);
    }
    let page = match k.page_of(m.keys[0]) {
        Ok(i) => i,
        Err(Miss::Void) => {
            r.fail(Code::VoidArgument);
            return After::Continue;
        }
        Err(_) => {
            r.fail(Code::NoSpace);
            return After::Continue;
        }
    };
    match journal::start(k, page) {
        Ok(seq) => {
            let after = park(k, ci, seq + 1, k.store.restarts, WAKE_ON_JOURNAL);
            k.store.j.work = cpu::rdtsc() - t;
            after
        }
        Err(journal::Busy::Full) => {
            store::request_checkpoint(k);
            park(k, ci, 0, 0, crate::kobj::checkpoint::WAKE_ON_COMMIT)
        }
        Err(_) => park(k, ci, 0, 0, WAKE_ON_JOURNAL),
    }
}
