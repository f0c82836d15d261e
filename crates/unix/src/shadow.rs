//! The keeper's shadow of a process's address-space tree: which nodes and
//! pages exist, so a page fault or a system call's buffer is decided with a
//! few loads instead of invocations, and the keeper never touches a
//! missing page through its window (that would fault the keeper itself).
//!
//! The tree is as shallow as the pages it holds allow: the root has size
//! code [`crate::layout::SPACE_LSS`], and a node of size code `K` may sit
//! in a slot of any node of a bigger one, covering the first `16^K` pages
//! of that slot's span (the segment model allows it: ABI.md, "Address
//! spaces"). A node is made as small as the page that needs it allows, so
//! a program's text at 0x400000 hangs under two nodes rather than five,
//! and a page past a small node puts a bigger one between it and its
//! parent ([`Builder::insert_node`]). Each node has an index; the keeper
//! keeps node keys in a directory by that index. The shadow changes only
//! after the invocations it stands for succeeded ([`Builder`]).

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
    /// Bit `s` set: `slots[s]` is not empty (a walk visits only those).
    full: u16,
    slots: [Entry; 16],
}

const FREE: Node = Node {
    level: 0,
    pslot: 0,
    parent: 0,
    full: 0,
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
    /// Make node `idx` of size code `level`, move the segment key in slot
    /// `slot` of node `parent` into its slot 0, and put a segment key to
    /// it in that slot of `parent` instead.
    fn insert_node(&mut self, idx: u16, level: u8, parent: u16, slot: u8) -> Result<(), Self::Err>;
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
    /// Pages present (leaf slots that are not empty).
    present: u64,
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

/// Pages a node of size code `level` covers.
const fn span(level: u8) -> u64 {
    1 << (4 * level as u64)
}

/// The smallest size code (at least 1) of a node that covers page `off`
/// counted from its start.
fn fits(off: u64) -> u8 {
    let digits = (64 - off.leading_zeros()).div_ceil(4) as u8;
    digits.max(1)
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
            present: 0,
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
        self.present = 0;
    }

    /// Pages present in the tree (the process's resident set, in pages).
    pub fn present(&self) -> u64 {
        self.present
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

    /// Node `idx`'s size code, parent and slot in the parent.
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
        loop {
            let node = &self.nodes[n as usize];
            if node.level == 1 {
                return Some(n);
            }
            match node.slots[digit(page, node.level)] {
                // A child covers the start of its slot's span.
                Entry::Child(c)
                    if page & (span(node.level - 1) - 1) < span(self.nodes[c as usize].level) =>
                {
                    n = c
                }
                _ => return None,
            }
        }
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

    /// The leaf over `page`, making the missing nodes on the way down:
    /// each as small as `page` allows, and a bigger one above a node that
    /// does not reach `page`.
    pub fn make_leaf<B: Builder>(&mut self, page: u64, b: &mut B) -> Result<u16, Error<B::Err>> {
        if page >= SPACE_PAGES {
            return Err(Error::Range);
        }
        let mut n = ROOT;
        loop {
            let level = self.nodes[n as usize].level;
            if level == 1 {
                return Ok(n);
            }
            let s = digit(page, level);
            // The smallest node that covers `page` from the slot's start.
            let want = fits(page & (span(level - 1) - 1));
            let below = match self.nodes[n as usize].slots[s] {
                Entry::Child(c) if want <= self.nodes[c as usize].level => {
                    n = c;
                    continue;
                }
                Entry::Child(c) => Some(c),
                Entry::Page(_) => return Err(Error::Range),
                Entry::Empty => None,
            };
            let idx = self.used;
            if idx == MAX_NODES {
                return Err(Error::Full);
            }
            let idx16 = idx as u16;
            let mut node = Node {
                level: want,
                parent: n,
                pslot: s as u8,
                ..FREE
            };
            // Entries past `used` are never read (`reset` leaves them as
            // they were, and a copy of the tree may skip them): a new node
            // starts empty here.
            match below {
                None => b.make_node(idx16, want, n, s as u8),
                Some(c) => {
                    node.slots[0] = Entry::Child(c);
                    node.full = 1;
                    b.insert_node(idx16, want, n, s as u8)
                }
            }
            .map_err(Error::Build)?;
            if let Some(c) = below {
                self.nodes[c as usize].parent = idx16;
                self.nodes[c as usize].pslot = 0;
            }
            self.nodes[idx] = node;
            self.nodes[n as usize].slots[s] = Entry::Child(idx16);
            self.nodes[n as usize].full |= 1 << s;
            self.used += 1;
            self.gen += 1;
            n = idx16;
        }
    }

    /// Calls `f(index, size code, parent, slot in the parent)` for every
    /// node but the root, each after its parent (a node put above another
    /// has a bigger index than the one below it, so index order is not
    /// that): the order to build a copy of the tree in.
    pub fn parents_first(&self, mut f: impl FnMut(u16, u8, u16, u8)) {
        self.each_child(ROOT, &mut f);
    }

    fn each_child(&self, n: u16, f: &mut impl FnMut(u16, u8, u16, u8)) {
        let node = &self.nodes[n as usize];
        if node.level == 1 {
            return;
        }
        let mut full = node.full;
        while full != 0 {
            let s = full.trailing_zeros() as usize;
            full &= full - 1;
            if let Entry::Child(c) = node.slots[s] {
                f(c, self.nodes[c as usize].level, n, s as u8);
                self.each_child(c, f);
            }
        }
    }

    /// Records page `page`'s slot (its leaf must exist).
    pub fn set_page(&mut self, page: u64, e: Entry) {
        if let Some(leaf) = self.leaf(page) {
            let (node, s) = (&mut self.nodes[leaf as usize], digit(page, 1));
            let was = node.slots[s] != Entry::Empty;
            let is = e != Entry::Empty;
            self.present = self.present + is as u64 - was as u64;
            node.slots[s] = e;
            if e == Entry::Empty {
                node.full &= !(1 << s);
            } else {
                node.full |= 1 << s;
            }
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
        let mut full = node.full;
        while full != 0 {
            let s = full.trailing_zeros() as usize;
            full &= full - 1;
            let lo = base + s as u64 * span;
            if lo >= end {
                break;
            }
            if lo + span <= first {
                continue;
            }
            match node.slots[s] {
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
