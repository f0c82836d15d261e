//! The keeper's shadow of a process's address-space tree: which nodes and
//! pages exist, so a page fault or a system call's buffer is decided with a
//! few loads instead of invocations, and the keeper never touches a
//! missing page through its window (that would fault the keeper itself).
//!
//! The tree is full-depth: the root has size code
//! [`crate::layout::SPACE_LSS`] and every node of size code `L > 1` holds
//! children of size code `L - 1` (no short cuts), so node `i`'s slot `s`
//! always covers the same pages. Each node has an index; the keeper keeps
//! node keys in a directory by that index. The shadow changes only after
//! the invocations it stands for succeeded ([`Builder`]).

use crate::layout::SPACE_LSS;

/// Most nodes a process's tree may have (a leaf covers 64 KiB).
pub const MAX_NODES: usize = 1024;
/// The root's index.
pub const ROOT: u16 = 0;

/// What a page slot holds.
pub mod page {
    /// The key is read-write.
    pub const WRITABLE: u8 = 1;
    /// The page is the process's own (from its bank); otherwise it is
    /// someone else's (a file's page, shared text) and is never freed
    /// or written by the keeper.
    pub const OWNED: u8 = 2;
    /// An own page shared copy-on-write with other processes since a
    /// `fork` (read-only until written; unixd counts its holders).
    pub const SHARED: u8 = 4;
    /// An own page from the process's bank rather than the common one (a
    /// small process's pages copied at `fork`): it goes with that bank,
    /// never freed one by one.
    pub const LOCAL: u8 = 8;
}

/// One slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Entry {
    /// Void.
    #[default]
    Empty,
    /// A child node (by index).
    Child(u16),
    /// A page key with `page::*` flags.
    Page(u8),
}

#[derive(Clone, Copy, Debug)]
struct Node {
    level: u8,
    /// The slot of the parent that holds it.
    pslot: u8,
    /// The parent's index (the root's is itself).
    parent: u16,
    slots: [Entry; 16],
}

const FREE: Node = Node {
    level: 0,
    pslot: 0,
    parent: 0,
    slots: [Entry::Empty; 16],
};

/// Makes the nodes the shadow asks for; only what it did successfully
/// enters the shadow.
pub trait Builder {
    /// The error of an invocation.
    type Err;
    /// Make node `idx` of size code `level` and put a segment key to it in
    /// slot `slot` of node `parent`.
    fn make_node(&mut self, idx: u16, level: u8, parent: u16, slot: u8) -> Result<(), Self::Err>;
}

/// Why a node could not be made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error<E> {
    /// [`MAX_NODES`] are in use (`ENOMEM` to the process).
    Full,
    /// The page number is outside the space.
    Range,
    /// The builder failed.
    Build(E),
}

/// The shadow tree.
#[derive(Clone)]
pub struct Tree {
    nodes: [Node; MAX_NODES],
    used: usize,
    /// Counts changes (`generation`).
    gen: u64,
}

impl Default for Tree {
    fn default() -> Self {
        Tree::new()
    }
}

/// Pages in the space.
pub const SPACE_PAGES: u64 = 1 << (4 * SPACE_LSS as u64);

fn digit(page: u64, level: u8) -> usize {
    ((page >> (4 * (level as u64 - 1))) & 15) as usize
}

impl Tree {
    /// A tree of just the root (which the keeper made already).
    pub const fn new() -> Tree {
        let mut nodes = [FREE; MAX_NODES];
        nodes[0].level = SPACE_LSS;
        Tree {
            nodes,
            used: 1,
            gen: 0,
        }
    }

    /// Back to just the root, in place (the nodes past it are left as
    /// they are: never read again before they are made anew).
    pub fn reset(&mut self) {
        self.nodes[0] = Node {
            level: SPACE_LSS,
            ..FREE
        };
        self.used = 1;
        self.gen += 1;
    }

    /// A number that changes whenever the tree does (a node made, a page
    /// slot set, a reset): two equal generations of one tree mean the same
    /// nodes and the same entries, so a copy of the process's tree made at
    /// the first is still a copy at the second (a spare process kept for
    /// `fork`).
    pub fn generation(&self) -> u64 {
        self.gen
    }

    /// The bytes of this tree (addresses) that hold no node in use: a copy
    /// of the tree for another domain need not carry them.
    pub fn unused(&self) -> core::ops::Range<u64> {
        let all = self.nodes.as_ptr_range();
        // Address arithmetic only: nothing is read through these.
        let start = all.start as u64 + (self.used * core::mem::size_of::<Node>()) as u64;
        start..all.end as u64
    }

    /// Nodes in use (the root included).
    pub fn nodes(&self) -> usize {
        self.used
    }

    /// Node `idx`'s size code, parent and slot in the parent. Nodes are
    /// made top-down, so a parent's index is always below its children's:
    /// building a copy in index order always finds the parent made.
    pub fn node(&self, idx: u16) -> (u8, u16, u8) {
        let n = &self.nodes[idx as usize];
        (n.level, n.parent, n.pslot)
    }

    /// The leaf (size code 1) over page number `page`, if it exists.
    pub fn leaf(&self, page: u64) -> Option<u16> {
        if page >= SPACE_PAGES {
            return None;
        }
        let mut n = ROOT;
        for level in (2..=SPACE_LSS).rev() {
            match self.nodes[n as usize].slots[digit(page, level)] {
                Entry::Child(c) => n = c,
                _ => return None,
            }
        }
        Some(n)
    }

    /// The page entry for page number `page`: (leaf, slot, flags).
    pub fn page(&self, page: u64) -> Option<(u16, u8, u8)> {
        let leaf = self.leaf(page)?;
        let s = digit(page, 1);
        match self.nodes[leaf as usize].slots[s] {
            Entry::Page(f) => Some((leaf, s as u8, f)),
            _ => None,
        }
    }

    /// The leaf over `page`, making the missing nodes on the way down.
    pub fn make_leaf<B: Builder>(&mut self, page: u64, b: &mut B) -> Result<u16, Error<B::Err>> {
        if page >= SPACE_PAGES {
            return Err(Error::Range);
        }
        let mut n = ROOT;
        for level in (2..=SPACE_LSS).rev() {
            let s = digit(page, level);
            n = match self.nodes[n as usize].slots[s] {
                Entry::Child(c) => c,
                Entry::Page(_) => return Err(Error::Range),
                Entry::Empty => {
                    let idx = self.used;
                    if idx == MAX_NODES {
                        return Err(Error::Full);
                    }
                    b.make_node(idx as u16, level - 1, n, s as u8)
                        .map_err(Error::Build)?;
                    self.used += 1;
                    self.gen += 1;
                    // Entries past `used` are never read (`reset` leaves
                    // them as they were, and a copy of the tree may skip
                    // them: `unused`): a new node starts empty here.
                    self.nodes[idx] = Node {
                        level: level - 1,
                        parent: n,
                        pslot: s as u8,
                        ..FREE
                    };
                    self.nodes[n as usize].slots[s] = Entry::Child(idx as u16);
                    idx as u16
                }
            };
        }
        Ok(n)
    }

    /// Records page `page`'s slot (its leaf must exist).
    pub fn set_page(&mut self, page: u64, e: Entry) {
        if let Some(leaf) = self.leaf(page) {
            self.nodes[leaf as usize].slots[digit(page, 1)] = e;
            self.gen += 1;
        }
    }

    /// Calls `f(page number, leaf, slot, flags)` for every page that exists
    /// in `[first, end)` (page numbers), skipping empty subtrees.
    pub fn pages(&self, first: u64, end: u64, mut f: impl FnMut(u64, u16, u8, u8)) {
        self.walk(ROOT, 0, first, end.min(SPACE_PAGES), &mut f);
    }

    fn walk(&self, n: u16, base: u64, first: u64, end: u64, f: &mut impl FnMut(u64, u16, u8, u8)) {
        let node = &self.nodes[n as usize];
        let span = 1u64 << (4 * (node.level as u64 - 1));
        for (s, e) in node.slots.iter().enumerate() {
            let lo = base + s as u64 * span;
            if lo >= end || lo + span <= first {
                continue;
            }
            match *e {
                Entry::Empty => {}
                Entry::Child(c) => self.walk(c, lo, first, end, f),
                Entry::Page(flags) => f(lo, n, s as u8, flags),
            }
        }
    }
}

#[cfg(test)]
#[path = "shadow/tests.rs"]
mod tests;
