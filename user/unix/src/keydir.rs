//! A directory of node keys by index, in nodes of the program's own: how a
//! domain that builds segment trees (a UNIX keeper, the file-system domain)
//! keeps a node key to every node it made, since a key lives only in a
//! node slot and a domain has sixteen. Three levels of nodes under a root
//! (16 × 16 × 16 = 4096 entries), made as needed from a bank; the entry
//! used last is kept in a slot, so a run of work on one node costs no
//! lookups.

use stet_rt::abi::{code, order::node};
use stet_rt::bank;
use stet_rt::key::{Msg, Slot};

/// Entries a directory holds.
pub const CAPACITY: usize = 4096;

/// A failed invocation's result code.
pub type Code = u64;

fn check(code: u64) -> Result<(), Code> {
    if code == code::Code::Ok {
        Ok(())
    } else {
        Err(code)
    }
}

/// Node `FETCH` of `slot` of `from` into `into`.
pub fn fetch(from: Slot, slot: u64, into: Slot) -> Result<(), Code> {
    check(
        Msg::new(from, node::FETCH)
            .w0(slot)
            .recv([into, 0, 0, 0])
            .call()
            .code,
    )
}

/// Node `SWAP`: the key in `key` goes into `slot` of node `n`, the old key
/// into `old` (0: dropped).
pub fn swap(n: Slot, slot: u64, key: Slot, old: Slot) -> Result<(), Code> {
    check(
        Msg::new(n, node::SWAP)
            .w0(slot)
            .keys([key, 0, 0, 0])
            .recv([old, 0, 0, 0])
            .call()
            .code,
    )
}

/// The slots a directory works with.
#[derive(Clone, Copy, Debug)]
pub struct Slots {
    /// Its root node.
    pub root: Slot,
    /// The bank its nodes come from.
    pub bank: Slot,
    /// Scratch for the walk.
    pub scratch: Slot,
    /// The cached entry's key.
    pub cache: Slot,
}

/// A directory.
#[derive(Clone, Debug)]
pub struct KeyDir {
    s: Slots,
    dir1: [bool; 16],
    dir2: [bool; 256],
    cached: Option<u16>,
    /// Which last-level directory node (entry / 16) the scratch slot
    /// holds, when the owner leaves that slot to the directory alone
    /// ([`KeyDir::private_scratch`]): an entry of the same 16 is then one
    /// call, not three.
    group: Option<u16>,
    private: bool,
}

impl KeyDir {
    /// A directory whose (empty) root node is in `s.root`.
    pub const fn new(s: Slots) -> KeyDir {
        KeyDir {
            s,
            dir1: [false; 16],
            dir2: [false; 256],
            cached: None,
            group: None,
            private: false,
        }
    }

    /// A directory whose scratch slot nobody else writes: it keeps the
    /// last-level node it walked to there.
    pub const fn private_scratch(s: Slots) -> KeyDir {
        let mut d = KeyDir::new(s);
        d.private = true;
        d
    }

    /// The last-level node over entry `idx` is in scratch (`private`).
    fn in_scratch(&self, idx: u16) -> bool {
        self.private && self.group == Some(idx >> 4)
    }

    /// Stores the key in `key` as entry `idx` (uses `scratch`, and `cache`
    /// when a directory node is made).
    pub fn put(&mut self, idx: u16, key: Slot) -> Result<(), Code> {
        let (a, b, c) = (idx as u64 >> 8, (idx as u64 >> 4) & 15, idx as u64 & 15);
        let s = self.s;
        if self.cached == Some(idx) {
            self.cached = None;
        }
        if self.in_scratch(idx) {
            return swap(s.scratch, c, key, 0);
        }
        self.group = None;
        if !self.dir1[a as usize] {
            bank::alloc_node(s.bank, s.scratch)?;
            swap(s.root, a, s.scratch, 0)?;
            self.dir1[a as usize] = true;
        } else {
            fetch(s.root, a, s.scratch)?;
        }
        let d2 = (idx >> 4) as usize;
        if !self.dir2[d2] {
            self.cached = None;
            bank::alloc_node(s.bank, s.cache)?;
            swap(s.scratch, b, s.cache, 0)?;
            self.dir2[d2] = true;
            swap(s.cache, c, key, 0)
        } else {
            fetch(s.scratch, b, s.scratch)?;
            self.group = Some(idx >> 4);
            swap(s.scratch, c, key, 0)
        }
    }

    /// Entry `idx` into `into`.
    pub fn get(&self, idx: u16, into: Slot) -> Result<(), Code> {
        if self.in_scratch(idx) {
            return fetch(self.s.scratch, idx as u64 & 15, into);
        }
        fetch(self.s.root, idx as u64 >> 8, into)?;
        fetch(into, (idx as u64 >> 4) & 15, into)?;
        fetch(into, idx as u64 & 15, into)
    }

    /// Entry `idx` in the cache slot.
    pub fn cached(&mut self, idx: u16) -> Result<Slot, Code> {
        if self.cached != Some(idx) {
            self.cached = None;
            self.get(idx, self.s.cache)?;
            self.cached = Some(idx);
        }
        Ok(self.s.cache)
    }

    /// Which entry the cache slot holds (so a caller that reuses the slot
    /// can say it did: [`KeyDir::forget`]).
    pub fn cached_entry(&self) -> Option<u16> {
        self.cached
    }

    /// The cache slot no longer holds an entry.
    pub fn forget(&mut self) {
        self.cached = None;
    }
}
