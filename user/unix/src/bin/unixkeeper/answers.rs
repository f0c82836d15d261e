//! The calls the kernel answers for the process without waking this keeper
//! (`stet_abi::domain::answers`): the identity calls, whose answers do not
//! change while the process domain lives, and every number above the
//! table, which Linux answers `ENOSYS`. A `getpid` then costs a trap and
//! nothing more, as on Linux. The keeper leaves them at the process's
//! second call of one ([`AFTER`], `Keeper::leave_answers`), and still
//! answers all of them itself when the kernel does not.

use stet_rt::abi::domain::answers::slot;
use stet_rt::abi::order::{domain, node};
use stet_rt::bank;
use stet_rt::key::{Msg, Slot};
use stet_unix::sys::errno::ENOSYS;
use stet_unix::sys::nr;

/// Call numbers from here up are answered `-ENOSYS` by the kernel (and
/// counted there): the keeper implements none of them, and its tally's
/// last bucket stands for them (`Keeper::enosys`).
pub const LIMIT: u64 = 511;

/// The keeper leaves the answers at the process's second call of one of
/// them (a call made once is cheaper answered than installed).
pub const AFTER: u8 = 2;

/// The answers of a process with id `pid` and real and effective user
/// and group ids `ids` (they change only through the keeper, which takes
/// the answers back then: `ids`).
fn table(pid: u64, ids: [u64; 4]) -> [(u64, u64); 6] {
    [
        (nr::GETPID, pid),
        (nr::GETTID, pid),
        (nr::GETUID, ids[0]),
        (nr::GETEUID, ids[1]),
        (nr::GETGID, ids[2]),
        (nr::GETEGID, ids[3]),
    ]
}

/// Gives process domain `proc` its answers, in a node from `bank` (held
/// in `scratch` meanwhile). All or nothing for the process: on an error
/// it simply has none, and the keeper answers everything.
pub fn install(
    proc: Slot,
    bank_slot: Slot,
    scratch: Slot,
    pid: u64,
    ids: [u64; 4],
) -> Result<(), u64> {
    bank::alloc_node(bank_slot, scratch)?;
    for (n, v) in table(pid, ids) {
        let a = Msg::new(scratch, node::WRITE_NUMBER)
            .words([slot(n) as u64, v, n, 0])
            .call();
        if !a.ok() {
            return Err(a.code);
        }
    }
    let a = Msg::new(proc, domain::SET_ANSWERS)
        .keys([scratch, 0, 0, 0])
        .words([LIMIT, (-ENOSYS) as u64, 0, 0])
        .call();
    if a.ok() {
        Ok(())
    } else {
        Err(a.code)
    }
}

/// Takes process domain `proc`'s answers away (its node, into `scratch`,
/// goes back to `bank_slot`): a domain kept for another process must not
/// answer with this one's pid. → how many calls the kernel answered
/// `ENOSYS` for it since they were installed (0 if it had none).
pub fn remove(proc: Slot, bank_slot: Slot, scratch: Slot) -> u64 {
    let a = Msg::new(proc, domain::SET_ANSWERS)
        .keys([0, 0, 0, 0])
        .words([u64::MAX, 0, 0, 0])
        .recv([scratch, 0, 0, 0])
        .call();
    if !a.ok() {
        return 0;
    }
    let _ = bank::free(bank_slot, scratch);
    a.w[0]
}
