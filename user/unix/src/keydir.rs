//! A directory of node keys by index, in nodes of the program's own: how a
//! domain that builds segment trees (a UNIX keeper, the file-system domain)
//! keeps a node key to every node it made, since a key lives only in a
//! node slot and a domain has sixteen. Three levels of nodes under a root
//! (16 × 16 × 16 = 4096 entries), made as needed from a bank; the entry
//! used last is kept in a slot, so a run of work on one node costs no
//! lookups. An entry past 4096 (the file-system domain's file trees, which
//! grow with its files) puts a new root above the old one, as a segment
//! tree grows: four levels, 65,536 entries, one more fetch per walk — paid
//! only by a directory that grew.

use stet_rt::abi::{code, order::node};
use stet_rt::bank;
use stet_rt::key::{Msg, Slot};

/// Entries a directory holds before it grows a level.
pub const CAPACITY: usize = 4096;
/// Entries a directory holds at most (every `u16`).
pub const MAX_CAPACITY: usize = 65536;

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

/// Node `FETCH_PATH`: the key `levels` fetches down from node `from`
/// (slots in `slots`, 4 bits each, the first lowest) into `into`.
pub fn fetch_path(from: Slot, slots: u64, levels: u64, into: Slot) -> Result<(), Code> {
    check(
        Msg::new(from, node::FETCH_PATH)
            .words([slots, levels, 0, 0])
            .recv([into, 0, 0, 0])
            .call()
            .code,
    )
}

/// Node `SWAP_PATH`: the key in `key` into the slot `levels` steps down
/// from node `from` (the last of `slots`), the old key into `old` (0:
/// dropped).
pub fn swap_path(from: Slot, slots: u64, levels: u64, key: Slot, old: Slot) -> Result<(), Code> {
    check(
        Msg::new(from, node::SWAP_PATH)
            .words([slots, levels, 0, 0])
            .keys([key, 0, 0, 0])
            .recv([old, 0, 0, 0])
            .call()
            .code,
    )
}

/// The slots from the root down to entry `idx` of a directory `depth`
/// levels deep, stopping `above` levels over the entry: `FETCH_PATH`'s
/// `w0` (the root's digit in the low 4 bits).
fn path(idx: u16, depth: u32, above: u32) -> u64 {
    (above..depth).rev().enumerate().fold(0, |p, (level, h)| {
        p | ((idx as u64 >> (4 * h)) & 15) << (4 * level)
    })
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
    /// Levels of directory nodes, the root's included: 3 or 4.
    depth: u8,
    /// Which directory nodes below the root exist, by height (`made1`:
    /// the nodes right above the entries, bit `idx >> 4`; `made2`: bit
    /// `idx >> 8`; `made3`, in a directory that grew: bit `idx >> 12`).
    made1: [u64; 64],
    made2: [u64; 4],
    made3: u64,
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
            depth: 3,
            made1: [0; 64],
            made2: [0; 4],
            made3: 0,
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

    /// Whether the directory node `h` levels above entry `idx` exists.
    fn made(&self, h: u32, idx: u16) -> bool {
        let b = (idx >> (4 * h)) as usize;
        match h {
            1 => self.made1[b / 64] & 1 << (b % 64) != 0,
            2 => self.made2[b / 64] & 1 << (b % 64) != 0,
            _ => self.made3 & 1 << b != 0,
        }
    }

    fn set_made(&mut self, h: u32, idx: u16) {
        let b = (idx >> (4 * h)) as usize;
        match h {
            1 => self.made1[b / 64] |= 1 << (b % 64),
            2 => self.made2[b / 64] |= 1 << (b % 64),
            _ => self.made3 |= 1 << b,
        }
    }

    /// Forgets every directory node over entries from `first` on (a
    /// multiple of 256) without touching them: a copy of this directory's
    /// state that describes another directory, whose tree has only the
    /// entries below `first` (a forked keeper's), makes them afresh.
    pub fn forget_from(&mut self, first: u16) {
        // Whole words where it can (this runs at every fork).
        let clear = |bits: &mut [u64], from: usize| {
            for (i, w) in bits.iter_mut().enumerate() {
                let lo = i * 64;
                if from <= lo {
                    *w = 0;
                } else if from < lo + 64 {
                    *w &= (1u64 << (from - lo)) - 1;
                }
            }
        };
        clear(&mut self.made1, (first >> 4) as usize);
        clear(&mut self.made2, (first >> 8) as usize);
        if self.cached.is_some_and(|c| c >= first) {
            self.cached = None;
        }
        if self.group.is_some_and(|g| g >= first >> 4) {
            self.group = None;
        }
    }

    /// A fourth level: a new root whose slot 0 is the old one (whose
    /// entries keep their numbers), in `s.root` (uses `scratch`).
    fn grow(&mut self) -> Result<(), Code> {
        let s = self.s;
        self.group = None;
        bank::alloc_node(s.bank, s.scratch)?;
        swap(s.scratch, 0, s.root, 0)?;
        // A slot cannot be copied to a slot: through one of the new root's
        // own, emptied again.
        swap(s.scratch, 1, s.scratch, 0)?;
        swap(s.scratch, 1, 0, s.root)?;
        self.made3 |= 1;
        self.depth = 4;
        Ok(())
    }

    /// Stores the key in `key` as entry `idx` (uses `scratch`, and `cache`
    /// when a directory node is made).
    pub fn put(&mut self, idx: u16, key: Slot) -> Result<(), Code> {
        let s = self.s;
        if self.cached == Some(idx) {
            self.cached = None;
        }
        if self.in_scratch(idx) {
            return swap(s.scratch, idx as u64 & 15, key, 0);
        }
        if self.depth == 3 && idx as usize >= CAPACITY {
            self.grow()?;
        }
        self.group = None;
        // Every level made (the common case): one call from the root.
        let depth = self.depth as u32;
        if (1..depth).all(|h| self.made(h, idx)) {
            return swap_path(s.root, path(idx, depth, 0), depth as u64, key, 0);
        }
        // Down from the root, the node at each height into `scratch` (or,
        // when it is made under a node in `scratch`, into `cache`).
        let mut at = s.root;
        for h in (1..self.depth as u32).rev() {
            let digit = (idx as u64 >> (4 * h)) & 15;
            if self.made(h, idx) {
                fetch(at, digit, s.scratch)?;
                at = s.scratch;
            } else {
                let new = if at == s.scratch { s.cache } else { s.scratch };
                if new == s.cache {
                    self.cached = None;
                }
                bank::alloc_node(s.bank, new)?;
                swap(at, digit, new, 0)?;
                self.set_made(h, idx);
                at = new;
            }
        }
        if at == s.scratch {
            self.group = Some(idx >> 4);
        }
        swap(at, idx as u64 & 15, key, 0)
    }

    /// Entry `idx` into `into`.
    pub fn get(&self, idx: u16, into: Slot) -> Result<(), Code> {
        if self.in_scratch(idx) {
            return fetch(self.s.scratch, idx as u64 & 15, into);
        }
        fetch_path(
            self.s.root,
            path(idx, self.depth as u32, 0),
            self.depth as u64,
            into,
        )
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
