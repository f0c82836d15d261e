//! The keeper's general key slots.

use stet_rt::key::Slot;

/// The console driver (`println!` and the process's terminal output).
pub const CONSOLE: Slot = 1;
/// The kernel's sleep key (clocks).
pub const SLEEP: Slot = 2;
/// Discrim (key types while walking a file's tree).
pub const DISCRIM: Slot = 3;
/// The bank the keeper's processes are made from.
pub const BANK: Slot = 4;
/// A node key to the keeper's own address-space root (its windows).
pub const SELF_SPACE: Slot = 5;
/// A start key to the keeper itself: the process's domain keeper.
pub const SELF_START: Slot = 6;
/// The meter the process runs under.
pub const METER: Slot = 7;
/// The file node of the executable (sense key: slot 0 its segment, slot 1
/// its length).
pub const EXEC: Slot = 8;
/// The process's own bank (a sub-bank of `BANK`): all its objects.
pub const PBANK: Slot = 9;
/// The process's domain key.
pub const PROC: Slot = 10;
/// The root of the directory of the process's tree nodes.
pub const DIR: Slot = 11;
/// The node key of the shadow's cached leaf.
pub const LEAF: Slot = 12;
/// The resume key of the fault being served.
pub const RESUME: Slot = 13;
/// Scratch.
pub const T: Slot = 14;
/// Scratch; at start the page holding the command line.
pub const T2: Slot = 15;
/// The command line, before it is read.
pub const ARGS: Slot = T2;
