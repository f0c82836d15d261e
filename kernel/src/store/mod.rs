//! The single-level store (issue #4; format in crates/store and
//! docs/STORE.md): where objects come from when they are not in the object
//! cache, and where the checkpoint puts them.
//!
//! * `Store` is the object cache's `Backing`: a node or page not in the
//!   cache is read from the disk (from the last checkpoint's log while it
//!   has not migrated home, else from its home), or is a zero object when
//!   the system runs without a disk.
//! * `memory` keeps the cache from running dry: it evicts clean objects
//!   and, when only dirty ones are left, asks for a checkpoint.

pub mod memory;

use crate::obj::{Backing, Miss, NodeEntry};
use stet_physmem::pool::FrameNumber;

/// The store's state.
pub struct Store {
    /// Whether a disk backs the objects (else every uncached object is a
    /// zero object at version 0 and nothing survives a reboot).
    pub persistent: bool,
}

impl Store {
    /// A store with no disk.
    pub fn volatile() -> Store {
        Store { persistent: false }
    }
}

impl Backing for Store {
    fn read_node(&mut self, _oid: u64, _e: &mut NodeEntry) -> Result<(), Miss> {
        Ok(())
    }

    fn read_page(&mut self, _oid: u64, f: FrameNumber) -> Result<u32, Miss> {
        crate::arch::phys::zero_frame(f);
        Ok(0)
    }
}
