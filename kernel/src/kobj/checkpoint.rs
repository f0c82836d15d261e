//! The checkpoint key: take a checkpoint (and wait for it to commit), read
//! statistics, set the period, wait for a restart; for benchmarks, wait
//! until the writer is idle (`store::idle`) and time a raw write
//! (`store::bench`, the test kernel's only). Waiting is the Fluke
//! way: the invoker is parked with its `rip` back on the `syscall` and the
//! generation it waits for written into its first data word, so after a
//! wake-up — or after a restart from any checkpoint — it simply asks
//! again and gets the answer that is true then.

use super::{After, Reply};
use crate::invoke::message::Msg;
use crate::kernel::Kernel;
use crate::store;
use stet_abi::code::Code;
use stet_abi::order::checkpoint as o;

/// `wake_at` of a domain parked until the next commit.
pub const WAKE_ON_COMMIT: u64 = u64::MAX - 1;
/// `wake_at` of a domain parked until the system restarts.
pub const WAKE_ON_RESTART: u64 = u64::MAX;

/// Carries out an order on the checkpoint key for context `ci`.
pub fn order(k: &mut Kernel, ci: usize, m: &Msg, r: &mut Reply) -> After {
    match m.order {
        o::TAKE => return take(k, ci, m.w[0], r),
        o::STATS => {
            let s = k.store.stats;
            r.w = [s.generation, s.nodes << 32 | s.pages, s.pause, s.commit];
        }
        o::SET_PERIOD => {
            k.store.period_ms = m.w[0];
            k.store.due_ns = k.now_ns().saturating_add(m.w[0].saturating_mul(1_000_000));
        }
        o::INFO => {
            r.w = [
                k.store.period_ms,
                k.store.restarts,
                k.store.restarted_from,
                k.store.stats.work,
            ]
        }
        o::WAIT_RESTART => {
            let want = m.w[0];
            if want != 0 && k.store.restarts >= want {
                r.fail(Code::Restarted);
            } else {
                let target = k.store.restarts + 1;
                return park(k, ci, target, WAKE_ON_RESTART);
            }
        }
        o::WAIT_IDLE => return store::idle::wait(k, ci, r),
        o::SCRUB => {
            if !k.store.persistent() {
                r.fail(Code::IoError);
            } else {
                let s = k.store.scrub.stats;
                r.w = [s.blocks, s.damaged, s.repaired, s.passes];
            }
        }
        o::RAW_WRITE => return store::bench::raw_write(k, ci, m, r),
        _ => r.fail(Code::NoSuchOrder),
    }
    After::Continue
}

/// TAKE with `want` = 0 (a new checkpoint that includes the invoker's
/// state now) or the generation it is waiting for. The invoker is parked
/// *before* any snapshot is taken, so the snapshot holds it parked on
/// "wait for this generation": restarted from that checkpoint it asks
/// again and is answered at once.
fn take(k: &mut Kernel, ci: usize, want: u64, r: &mut Reply) -> After {
    if !k.store.persistent() {
        r.fail(Code::IoError);
        return After::Continue;
    }
    let committed = k.store.committed;
    if want != 0 && committed >= want {
        r.w = [committed, (k.store.restarted_from >= want) as u64, 0, 0];
        return After::Continue;
    }
    if want != 0 && k.store.in_flight(want) {
        return park(k, ci, want, WAKE_ON_COMMIT);
    }
    // A checkpoint whose snapshot is taken from now on (after a restart,
    // the one waited for may never come: then this asks for a new one).
    let target = k.store.next_generation();
    let after = park(k, ci, target, WAKE_ON_COMMIT);
    store::request_checkpoint(k);
    after
}

/// Parks `ci` with its first data word set to `target`; it re-executes the
/// invocation when woken (`store::checkpoint_committed`, or a restart).
fn park(k: &mut Kernel, ci: usize, target: u64, wake: u64) -> After {
    let w1 = k.ctxs[ci].frame.rdx;
    super::park(k, ci, target, w1, wake)
}
