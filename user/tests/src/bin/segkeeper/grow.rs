//! A segment keeper's work: put a fresh zero page at an address of a
//! segment tree, creating the nodes on the way down. Used by the `segkeeper`
//! domain (stack and heap on demand) and by the `segment_fault_rt` benchmark.
//!
//! The keeper owns the tree below the root: it holds a node key to the root
//! (size code [`ROOT_LSS`]), a range of fresh nodes and a range of fresh
//! pages. It remembers which range index holds the node for each
//! (size code, base page) it made, and keeps the last leaf node's key in a
//! slot so sequential growth costs three invocations: fresh page, swap, and
//! the reply that restarts the faulting domain.

use stet_rt::abi::{code::Code, order};
use stet_rt::key::{Msg, Slot};

/// Size code of an address-space root made by the image builder.
pub const ROOT_LSS: u8 = 9;
const KNOWN: usize = 128;

/// Slots the grower uses.
#[derive(Clone, Copy)]
pub struct Slots {
    /// Node key to the root node.
    pub root: Slot,
    /// Range of fresh nodes.
    pub nodes: Slot,
    /// Range of fresh pages.
    pub pages: Slot,
    /// Scratch: the node being descended.
    pub cur: Slot,
    /// Scratch: the last leaf node.
    pub leaf: Slot,
    /// Scratch: a key being placed.
    pub tmp: Slot,
}

/// Why growing failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrowError {
    /// Out of fresh nodes or pages.
    Exhausted,
    /// An invocation failed with this code.
    Code(u64),
}

/// The grower's memory.
pub struct Grower {
    s: Slots,
    next_node: u64,
    next_page: u64,
    max_nodes: u64,
    max_pages: u64,
    known: [(u8, u64, u64); KNOWN],
    nknown: usize,
    leaf_base: Option<u64>,
}

fn check(a: stet_rt::key::Answer) -> Result<stet_rt::key::Answer, GrowError> {
    if a.code == Code::Ok {
        Ok(a)
    } else {
        Err(GrowError::Code(a.code))
    }
}

impl Grower {
    /// A grower over the ranges in `s` (sizes from the range keys).
    pub fn new(s: Slots) -> Grower {
        let n = Msg::new(s.nodes, order::range::INFO).call();
        let p = Msg::new(s.pages, order::range::INFO).call();
        Grower {
            s,
            next_node: 0,
            next_page: 0,
            max_nodes: n.w[1],
            max_pages: p.w[1],
            known: [(0, 0, 0); KNOWN],
            nknown: 0,
            leaf_base: None,
        }
    }

    /// Pages placed so far.
    pub fn pages_used(&self) -> u64 {
        self.next_page
    }

    fn lookup(&self, lss: u8, base: u64) -> Option<u64> {
        self.known[..self.nknown]
            .iter()
            .find(|(l, b, _)| *l == lss && *b == base)
            .map(|(_, _, i)| *i)
    }

    /// Puts a fresh zero page at byte `addr` of the root segment.
    pub fn grow(&mut self, addr: u64) -> Result<(), GrowError> {
        let page = addr >> 12;
        let leaf_base = page & !15;
        if self.leaf_base != Some(leaf_base) {
            self.descend(page)?;
            self.leaf_base = Some(leaf_base);
        }
        if self.next_page >= self.max_pages {
            return Err(GrowError::Exhausted);
        }
        check(
            Msg::new(self.s.pages, order::range::RENEW)
                .w0(self.next_page)
                .recv([self.s.tmp, 0, 0, 0])
                .call(),
        )?;
        self.next_page += 1;
        check(
            Msg::new(self.s.leaf, order::node::SWAP)
                .w0(page & 15)
                .keys([self.s.tmp, 0, 0, 0])
                .call(),
        )?;
        Ok(())
    }

    /// Finds or makes the size-1 node above `page`, leaving its node key
    /// in the leaf slot.
    fn descend(&mut self, page: u64) -> Result<(), GrowError> {
        let mut cur = self.s.root;
        for lss in (1..ROOT_LSS).rev() {
            // The child of size `lss` covering `page`.
            let span = 1u64 << (4 * lss);
            let base = page & !(span - 1);
            let slot = (page >> (4 * lss)) & 15;
            let index = match self.lookup(lss, base) {
                Some(i) => i,
                None => {
                    if self.next_node >= self.max_nodes || self.nknown == KNOWN {
                        return Err(GrowError::Exhausted);
                    }
                    let i = self.next_node;
                    self.next_node += 1;
                    check(
                        Msg::new(self.s.nodes, order::range::RENEW)
                            .w0(i)
                            .recv([self.s.tmp, 0, 0, 0])
                            .call(),
                    )?;
                    check(
                        Msg::new(self.s.tmp, order::node::MAKE_SEGMENT)
                            .words([lss as u64, 0, 0, 0])
                            .recv([self.s.tmp, 0, 0, 0])
                            .call(),
                    )?;
                    check(
                        Msg::new(cur, order::node::SWAP)
                            .w0(slot)
                            .keys([self.s.tmp, 0, 0, 0])
                            .call(),
                    )?;
                    self.known[self.nknown] = (lss, base, i);
                    self.nknown += 1;
                    i
                }
            };
            let into = if lss == 1 { self.s.leaf } else { self.s.cur };
            check(
                Msg::new(self.s.nodes, order::range::GET)
                    .w0(index)
                    .recv([into, 0, 0, 0])
                    .call(),
            )?;
            cur = into;
        }
        Ok(())
    }
}
