//! The file-system domain's general key slots.

use stet_rt::key::Slot;

/// The console driver: the terminal's output.
pub const CONSOLE: Slot = 1;
/// The kernel's sleep key (file times).
pub const SLEEP: Slot = 2;
/// The data store, as a publisher (`make run`): unixd publishes its start
/// key there for the native shell. Any other key (tests give discrim):
/// nothing is published. After that, a parked call's resume key.
pub const STORE: Slot = 3;
/// The bank every file's pages and nodes come from.
pub const BANK: Slot = 4;
/// The initial file system: a file node (sense key: slot 0 the segment of
/// a `newc` cpio archive, slot 1 its length). After the first start, a
/// parked call's resume key.
pub const ARCHIVE: Slot = 5;
/// A node key to this domain's own address-space root (the archive's
/// window).
pub const SELF_SPACE: Slot = 6;
/// The root of the directory of file-tree node keys.
pub const DIR: Slot = 7;
/// The root of the directory of keys by table index (`keys`).
pub const KEYS: Slot = 8;
/// The resume key of the call being served.
pub const RESUME: Slot = 9;
/// The node-key directory's cached entry.
pub const LEAF: Slot = 10;
/// Scratch; a key to answer with.
pub const T: Slot = 11;
/// Scratch for the directory.
pub const T2: Slot = 12;
/// A key that came with a message.
pub const K0: Slot = 13;
/// A start key to this domain (what the forwarders it makes hold).
pub const SELF: Slot = 14;
/// The bank regular files' pages and nodes come from: a sub-bank of
/// `BANK` with a limit, made at the first start (`content`), so files can
/// fill only their share and never the space unixd and the keepers need.
pub const FILES: Slot = 15;
