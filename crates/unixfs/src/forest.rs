//! The shapes of many files' segment trees in one arena: which nodes and
//! pages each file's tree has, so the file-system domain reads, writes,
//! truncates and frees files with invocations only where objects change.
//! The arena grows from the heap as files grow (`try_reserve`: a full heap
//! is [`Error::Full`], `ENOSPC`), up to a limit its owner sets (unixd: what
//! its node-key directory can name); freed nodes are kept on a free list
//! and reused first.
//!
//! A file's tree starts as one node of size code 1 (16 pages) and grows a
//! new root above the old one (old root in slot 0) each time a write goes
//! past what the root covers: a 4 KiB file is one node, a 2 MiB one three
//! levels. Children are full-depth below the root. Node indices name the
//! domain's node-key directory entries, as in `stet_unix::shadow`.

use alloc::vec::Vec;
pub use stet_unix::shadow::Entry;

/// Most nodes any arena holds: every index but [`NONE`].
pub const MAX_NODES: usize = u16::MAX as usize;
/// No node.
pub const NONE: u16 = u16::MAX;
/// The largest size code a file's root may reach (16^7 pages, 1 TiB).
pub const MAX_LSS: u8 = stet_unix::layout::FILE_LSS;

/// A node's shape; level 0: free (then `next` is the next free one).
#[derive(Clone, Copy, Debug)]
struct Node {
    level: u8,
    next: u16,
    slots: [Entry; 16],
}

/// A file's tree: its root node and the root's size code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct File {
    /// The root's index, or [`NONE`] for a file with no pages.
    pub root: u16,
    /// The root's size code.
    pub lss: u8,
}

impl File {
    /// A file without pages.
    pub const EMPTY: File = File { root: NONE, lss: 0 };
}

/// Makes the objects the arena asks for.
pub trait Builder {
    /// The error of an invocation.
    type Err;
    /// Make node `idx` (size code `level`) and record its key as directory
    /// entry `idx`.
    fn make_node(&mut self, idx: u16, level: u8) -> Result<(), Self::Err>;
    /// Put a segment key (size code `level`) to node `child` in slot
    /// `slot` of node `parent`.
    fn put_child(&mut self, parent: u16, slot: u8, child: u16, level: u8) -> Result<(), Self::Err>;
}

/// Why a page could not be placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error<E> {
    /// The arena is at its limit, or the heap is full (`ENOSPC`).
    Full,
    /// The page is past the largest file (`EFBIG`).
    TooBig,
    /// The builder failed.
    Build(E),
}

/// The arena.
#[derive(Clone)]
pub struct Forest {
    nodes: Vec<Node>,
    free: u16,
    used: usize,
    limit: usize,
}

impl Default for Forest {
    fn default() -> Self {
        Forest::new()
    }
}

fn digit(page: u64, level: u8) -> usize {
    ((page >> (4 * (level as u64 - 1))) & 15) as usize
}

fn span(lss: u8) -> u64 {
    1u64 << (4 * lss as u64)
}

impl Forest {
    /// An empty arena that may hold [`MAX_NODES`].
    pub const fn new() -> Forest {
        Forest::with_limit(MAX_NODES)
    }

    /// An empty arena that may hold `limit` nodes (at most [`MAX_NODES`]).
    pub const fn with_limit(limit: usize) -> Forest {
        Forest {
            nodes: Vec::new(),
            free: NONE,
            used: 0,
            limit: if limit < MAX_NODES { limit } else { MAX_NODES },
        }
    }

    /// Nodes in use.
    pub fn used(&self) -> usize {
        self.used
    }

    /// Node array bytes the arena holds (it grows and is not given back).
    pub fn bytes(&self) -> usize {
        self.nodes.capacity() * core::mem::size_of::<Node>()
    }

    fn alloc<B: Builder>(&mut self, level: u8, b: &mut B) -> Result<u16, Error<B::Err>> {
        let idx = if self.free != NONE {
            self.free
        } else {
            if self.nodes.len() >= self.limit {
                return Err(Error::Full);
            }
            if self.nodes.len() == self.nodes.capacity() {
                let more = self.nodes.capacity().max(16);
                self.nodes
                    .try_reserve_exact(more)
                    .map_err(|_| Error::Full)?;
            }
            self.nodes.len() as u16
        };
        b.make_node(idx, level).map_err(Error::Build)?;
        let n = Node {
            level,
            next: NONE,
            slots: [Entry::Empty; 16],
        };
        if idx == self.free {
            self.free = self.nodes[idx as usize].next;
            self.nodes[idx as usize] = n;
        } else {
            self.nodes.push(n);
        }
        self.used += 1;
        Ok(idx)
    }

    /// The leaf and slot of page `p` of `f`, if that page exists.
    pub fn page(&self, f: &File, p: u64) -> Option<(u16, u8, u8)> {
        if f.root == NONE || p >= span(f.lss) {
            return None;
        }
        let mut n = f.root;
        for level in (2..=f.lss).rev() {
            match self.nodes[n as usize].slots[digit(p, level)] {
                Entry::Child(c) => n = c,
                _ => return None,
            }
        }
        match self.nodes[n as usize].slots[digit(p, 1)] {
            Entry::Page(fl) => Some((n, digit(p, 1) as u8, fl)),
            _ => None,
        }
    }

    /// The leaf over page `p` of `f` and the slot, making the root bigger
    /// and the nodes on the way as needed.
    pub fn make_leaf<B: Builder>(
        &mut self,
        f: &mut File,
        p: u64,
        b: &mut B,
    ) -> Result<(u16, u8), Error<B::Err>> {
        if p >= span(MAX_LSS) {
            return Err(Error::TooBig);
        }
        if f.root == NONE {
            f.root = self.alloc(1, b)?;
            f.lss = 1;
        }
        while p >= span(f.lss) {
            let top = self.alloc(f.lss + 1, b)?;
            b.put_child(top, 0, f.root, f.lss).map_err(Error::Build)?;
            self.nodes[top as usize].slots[0] = Entry::Child(f.root);
            f.root = top;
            f.lss += 1;
        }
        let mut n = f.root;
        for level in (2..=f.lss).rev() {
            let s = digit(p, level);
            n = match self.nodes[n as usize].slots[s] {
                Entry::Child(c) => c,
                _ => {
                    let c = self.alloc(level - 1, b)?;
                    b.put_child(n, s as u8, c, level - 1)
                        .map_err(Error::Build)?;
                    self.nodes[n as usize].slots[s] = Entry::Child(c);
                    c
                }
            };
        }
        Ok((n, digit(p, 1) as u8))
    }

    /// Records slot `slot` of leaf `leaf`.
    pub fn set(&mut self, leaf: u16, slot: u8, e: Entry) {
        self.nodes[leaf as usize].slots[slot as usize] = e;
    }

    /// Calls `f(page, leaf, slot, flags)` for every page of `file` in
    /// `[first, end)` (page numbers).
    pub fn pages(&self, file: &File, first: u64, end: u64, mut f: impl FnMut(u64, u16, u8, u8)) {
        if file.root != NONE {
            self.walk(file.root, 0, first, end, &mut f);
        }
    }

    fn walk(&self, n: u16, base: u64, first: u64, end: u64, f: &mut impl FnMut(u64, u16, u8, u8)) {
        let node = &self.nodes[n as usize];
        let sp = span(node.level - 1);
        for (s, e) in node.slots.iter().enumerate() {
            let lo = base + s as u64 * sp;
            if lo >= end || lo + sp <= first {
                continue;
            }
            match *e {
                Entry::Empty => {}
                Entry::Child(c) => self.walk(c, lo, first, end, f),
                Entry::Page(fl) => f(lo, n, s as u8, fl),
            }
        }
    }

    /// Calls `f(idx)` for every node of `file`'s tree.
    pub fn nodes(&self, file: &File, mut f: impl FnMut(u16)) {
        if file.root != NONE {
            self.visit(file.root, &mut f);
        }
    }

    fn visit(&self, n: u16, f: &mut impl FnMut(u16)) {
        for e in self.nodes[n as usize].slots {
            if let Entry::Child(c) = e {
                self.visit(c, f);
            }
        }
        f(n);
    }

    /// Forgets `file`'s tree, calling `node(idx)` for each of its nodes (the
    /// caller frees the objects; pages first, through [`Forest::pages`]).
    pub fn free(&mut self, file: &mut File, mut node: impl FnMut(u16)) {
        if file.root != NONE {
            self.free_node(file.root, &mut node);
        }
        *file = File::EMPTY;
    }

    fn free_node(&mut self, n: u16, f: &mut impl FnMut(u16)) {
        let slots = self.nodes[n as usize].slots;
        for e in slots {
            if let Entry::Child(c) = e {
                self.free_node(c, f);
            }
        }
        self.nodes[n as usize] = Node {
            level: 0,
            next: self.free,
            slots: [Entry::Empty; 16],
        };
        self.free = n;
        self.used -= 1;
        f(n);
    }
}

#[cfg(test)]
#[path = "forest/tests.rs"]
mod tests;
