//! The keeper's general key slots. Slot 1 holds the console driver, where
//! `stet_rt`'s `print!` finds it (`stet_rt::kernel::CONSOLE`), for the
//! keeper's own reports; the process's terminal is the file-system
//! domain's.

use stet_rt::key::Slot;

/// The kernel's sleep key (clocks).
pub const SLEEP: Slot = 2;
/// The other slot a fault's resume key may arrive in (`Keeper::rs` says
/// which of the two the call being served has; the images put discrim
/// here at start, which nothing needs): a thread that blocks leaves its
/// key where it is and the next fault arrives in the other
/// (`Threads::parked`), so a futex wait and the wake that ends it need no
/// directory calls.
pub const RESUME2: Slot = 3;
/// The file-system domain (`unixd`).
pub const UNIXD: Slot = 4;
/// A node of keys used rarely (at `execve` and `fork`): see [`keys`].
pub const KEYS: Slot = 5;
/// Scratch.
pub const T3: Slot = 6;
/// The bank the process's own pages come from: the keepers' common bank
/// (`keys::BANK`), not the process's, because a page shared copy-on-write
/// after `fork` must outlive whichever process ends first. Pages are
/// freed one by one (unixd counts the holders of shared ones). During
/// `fork` the slot is scratch and refilled after.
pub const MEMBANK: Slot = 7;
/// The executable's segment (read-only), also in the exec window.
pub const EXEC: Slot = 8;
/// The process's own bank (a sub-bank of the keeper's bank): all its
/// objects.
pub const PBANK: Slot = 9;
/// The process's domain key.
pub const PROC: Slot = 10;
/// The root of the directory of the process's tree nodes.
pub const DIR: Slot = 11;
/// The node key of the shadow's cached leaf.
pub const LEAF: Slot = 12;
/// A fault's resume key (or in [`RESUME2`]: `Keeper::rs`).
pub const RESUME: Slot = 13;
/// Scratch.
pub const T: Slot = 14;
/// Scratch; at start the page holding the command line.
pub const T2: Slot = 15;
/// The command line, before it is read.
pub const ARGS: Slot = T2;

/// Slots of the `KEYS` node, and where the image puts those keys at
/// start (moved into the node before anything else).
pub mod keys {
    /// The bank processes are made from.
    pub const BANK: u64 = 0;
    /// A node key to the keeper's own address-space root (its windows).
    pub const SELF_SPACE: u64 = 1;
    /// A start key to the keeper itself: its process's domain keeper.
    pub const SELF_START: u64 = 2;
    /// The meter processes run under.
    pub const METER: u64 = 3;
    /// The bank the keeper itself came from (a forked keeper's; void for
    /// one the image made): destroyed when the keeper is no longer wanted
    /// (its process has ended and nobody keeps it as a spare).
    pub const OWN_BANK: u64 = stet_unix::proto::KEEPER_BANK;
    /// The checkpoint key (`fsync`, `sync`): void when the system has none
    /// to give (tests without a disk); then those calls return at once.
    pub const CHECKPOINT: u64 = 5;
    /// At work: the `KEYS` node of this keeper's spare, a keeper of an
    /// ended child kept for the next `fork` (`Keeper::spare`). As a
    /// spare: the resume key that wakes it (`proto::BECOME`).
    pub const SPARE: u64 = stet_unix::proto::SPARE;
    /// A spare whose process was kept (`Keeper::end`): the process's
    /// domain, bank and directory root, for the parent's next `fork`.
    /// (Outside a `fork` these slots are free; during one they are its
    /// scratch.)
    pub const KEPT_PROC: u64 = 8;
    pub const KEPT_PBANK: u64 = 9;
    pub const KEPT_DIR: u64 = 10;
    /// The general slot holding each at start, and its slot here.
    pub const AT_START: [(super::Slot, u64); 5] = [
        (7, BANK),
        (9, SELF_SPACE),
        (10, SELF_START),
        (11, METER),
        (12, CHECKPOINT),
    ];
}
