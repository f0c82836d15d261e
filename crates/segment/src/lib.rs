//! Segment trees: walking a tree of nodes and pages to translate an address.
//!
//! A *segment* is a tree of nodes (16 key slots each) with 4 KiB pages at
//! the leaves. The kernel walks it to translate a domain's virtual address
//! into a page on a page fault, and to copy message strings.
//!
//! The tree is entered through a key:
//!
//! * a **segment key** with size code `lss` designates a node and covers
//!   16^`lss` pages; slot `i` of that node covers pages
//!   `[i·16^(lss-1), (i+1)·16^(lss-1))`;
//! * a **page key** covers exactly one page, at offset 0.
//!
//! A slot holds a void key (no page there), a page key (valid for the first
//! page of the slot's range only), or a segment key whose size code is at
//! most `lss - 1` (a *short* subtree covers only the first 16^`K` pages of
//! the slot's range). Anything else is malformed.
//!
//! Rights accumulate down the path: one read-only key anywhere makes the
//! page read-only. Stet never maps a page writable and executable: a page
//! reached read-write is mapped non-executable, and a page reached read-only
//! is mapped executable. So an instruction fetch from a page reached
//! read-write is a protection fault, like a write to a read-only page.
//! `WEAK` does not affect translation.
//!
//! A node reached through a key with the `KEEPER` right is *red*: its slot
//! 15 holds the segment's keeper (a start key; void means none) and is not
//! part of the address space. When a walk fails, [`walk`] names the keeper to
//! invoke: see [`Invalid::keeper`].
//!
//! The crate does no allocation; the walk is a loop of at most
//! [`MAX_STEPS`] steps, because size codes strictly decrease down the tree.
#![no_std]

#[cfg(test)]
extern crate std;

pub mod mappers;
mod size;
mod walk;

#[cfg(test)]
mod model;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;

pub use size::{min_lss_for, size_bytes, size_pages, slot_span, PAGE_SHIFT, PAGE_SIZE};
pub use walk::walk;

use stet_abi::fault::access;
use stet_keys::{Key, MAX_LSS};

/// The most keys a walk follows: one node per size code from
/// [`MAX_LSS`] down to 1, then a page.
pub const MAX_STEPS: usize = MAX_LSS as usize + 1;

/// The most nodes a walk passes through (the largest [`Found::depth`] and
/// [`Invalid::depth`]).
pub const MAX_DEPTH: u8 = MAX_LSS;

/// Where the walk reads the tree: the kernel's object cache, or a model in
/// tests and host tools.
pub trait Store {
    /// The key in slot `slot` (0..16) of the node designated by `node` (a
    /// segment key), or `None` if that node no longer exists (for example
    /// the key's version no longer matches the node's).
    fn slot(&mut self, node: Key, slot: usize) -> Option<Key>;
    /// Whether the page designated by `page` (a page key) exists.
    fn page_exists(&mut self, page: Key) -> bool;
}

/// What a memory reference wants to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// A data read.
    Read,
    /// A data write.
    Write,
    /// An instruction fetch.
    Execute,
}

impl Access {
    /// Every access kind.
    pub const ALL: [Access; 3] = [Access::Read, Access::Write, Access::Execute];

    /// The access kind with ABI code `code` ([`stet_abi::fault::access`]).
    pub fn from_code(code: u64) -> Option<Access> {
        match code {
            access::READ => Some(Access::Read),
            access::WRITE => Some(Access::Write),
            access::EXECUTE => Some(Access::Execute),
            _ => None,
        }
    }

    /// The ABI code ([`stet_abi::fault::access`]) of this access kind.
    pub fn code(self) -> u64 {
        match self {
            Access::Read => access::READ,
            Access::Write => access::WRITE,
            Access::Execute => access::EXECUTE,
        }
    }
}

/// A successful walk: the page and how it may be mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Found {
    /// The leaf page key as found in its slot (or the entry key), hint
    /// untouched.
    pub page: Key,
    /// No key on the path is read-only: the page may be mapped writable.
    pub writable: bool,
    /// Some key on the path is read-only: the page may be mapped
    /// executable. Always `!writable` (writable pages are never executable).
    pub executable: bool,
    /// How many nodes the walk passed through (each was given to `visit`).
    pub depth: u8,
    /// The node whose slot held the page (`None` when the entry key was
    /// the page, or a page sat in a bigger node's slot): the kernel keeps
    /// it to translate the node's other pages without a walk.
    pub leaf: Option<Leaf>,
}

/// Where a walk found its page: a node of size code 1, whose 16 slots are
/// the 16 aligned pages around the address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Leaf {
    /// The segment key the walk reached the node by.
    pub node: Key,
    /// Some key above the page is read-only (a page in another slot is
    /// then read-only too, and executable).
    pub ro: bool,
    /// The node is red: slot 15 is its keeper, not a page.
    pub red: bool,
}

/// A failed walk: why, and who should hear of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Invalid {
    /// Why the reference is invalid: a [`stet_abi::fault::why`] code.
    pub why: u64,
    /// The segment keeper to invoke: the keeper of the innermost red node
    /// on the path walked, among those whose keeper is *eligible* (no key
    /// from the entry key down to and including the key designating the red
    /// node has `NOCALL`, and slot 15 holds a start key). `None` if no keeper
    /// is eligible: the fault then goes to the domain's keeper.
    pub keeper: Option<Keeper>,
    /// How many nodes the walk passed through before it failed (each was
    /// given to `visit`).
    pub depth: u8,
}

/// A segment keeper to invoke for an invalid reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Keeper {
    /// The keeper: the start key in slot 15 of the red node, as found.
    pub start: Key,
    /// The segment key (with `KEEPER`) that designated the red node, as
    /// found; the keeper message carries it.
    pub segment: Key,
    /// The faulting address relative to the start of that segment, in
    /// bytes.
    pub offset: u64,
}
