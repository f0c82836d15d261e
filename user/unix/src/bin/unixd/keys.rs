//! The directory of keys unixd keeps by table index (`keydir`, rooted in
//! the `KEYS` node): a slot holds one key, and unixd has sixteen, so the
//! keys that go with table entries live here, in three ranges:
//!
//! * entry `2i`: process `i`'s keeper's start key (`HELLO`);
//! * entry `2i + 1`: the node of the forwarder unixd made for process `i`
//!   (a forked process), freed when it is reaped;
//! * entry `WAITERS + w`: parked call `w`'s resume key, when it could not
//!   stay in a general slot (`wait::RESUME_SLOTS`);
//! * the last two entries: [`METER_KEY`], the meter processes run under
//!   (`procgen`), and [`FAULT_KEY`], the keepers' domain keeper.
//!
//! Walks use `LEAF`, the file tree directory's cache (which is told to
//! forget it: `Content::forget_cache`), and `T` when a directory node is
//! made; a read goes through the slot it reads into.

use crate::slots::{BANK, KEYS, LEAF, T};
use crate::Unixd;
use stet_rt::key::Slot;
use stet_unix_personality::keydir::{self, Code, KeyDir};

/// Most processes the system holds at once (Linux's `pid_max` is of the
/// same kind): the table grows from the heap up to this. What stops one
/// user's fork bomb well before it is `RLIMIT_NPROC` (`procs::fork`).
pub(crate) const MAX_PROCS: usize = 1024;
/// The first parked call's entry.
const WAITERS: usize = 2 * MAX_PROCS;
/// Most calls parked at once: every process's one call, and the clock's.
pub(crate) const MAX_WAITERS: usize = keydir::CAPACITY - WAITERS - 2;
/// The last entry: the start key to this domain that every keeper's
/// domain keeper is (`proto::KEEPER_FAULT`; `faults`).
pub(crate) const FAULT_KEY: u16 = (keydir::CAPACITY - 1) as u16;
/// The one before: the meter the processes run under (`proto::METER`).
pub(crate) const METER_KEY: u16 = (keydir::CAPACITY - 2) as u16;
const _: () = assert!(MAX_WAITERS > MAX_PROCS);

/// The directory (its root node is in `KEYS`).
pub(crate) fn directory() -> KeyDir {
    KeyDir::new(keydir::Slots {
        root: KEYS,
        bank: BANK,
        scratch: LEAF,
        cache: T,
    })
}

/// Process `i`'s keeper's start key's entry.
pub(crate) fn keeper(i: usize) -> u16 {
    (2 * i) as u16
}

/// Process `i`'s forwarder node's entry.
pub(crate) fn forwarder(i: usize) -> u16 {
    (2 * i + 1) as u16
}

/// Parked call `w`'s resume key's entry.
pub(crate) fn waiter(w: usize) -> u16 {
    (WAITERS + w) as u16
}

impl Unixd<'_> {
    /// Stores the key in `key` as entry `e`.
    pub(crate) fn put_key(&mut self, e: u16, key: Slot) -> Result<(), Code> {
        self.content.forget_cache();
        self.keys.put(e, key)
    }
}
