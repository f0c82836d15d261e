//! The product's address space: which pages it has, where each comes
//! from, and the segment tree over them.
//!
//! A program template (made by the image builder, docs/IMAGE.md) lists
//! its load segments as page ranges, each read-only or writable. A
//! product gets every page of its program — read-only ones as the
//! template's own page keys (**shared** by every product), writable ones
//! as fresh pages holding a copy of the template's — and a stack of fresh
//! zero pages just below `layout::STACK_TOP`.
//!
//! The tree is the **smallest** one under the image builder's rule: the
//! root has size code [`ROOT_LSS`]; in a node of size code `L`, slot `i`
//! covers pages `[i·16^(L-1), (i+1)·16^(L-1))`; a slot with no page is
//! void; a slot whose only page is its first holds that page's key
//! directly; any other slot holds a segment key of the smallest size code
//! `K ≥ 1` whose `16^K` pages cover the slot's highest page, designating a
//! child built by the same rule. The template was built by that rule too,
//! so [`path`] can say where any of its pages sits without reading it.

use stet_abi::layout;

/// Bytes in a page.
pub const PAGE: u64 = 4096;
/// Size code of an address-space root: 16^9 pages (2^48 bytes).
pub const ROOT_LSS: u8 = 9;
/// Pages below the top of the user half (2^47 bytes).
pub const USER_PAGES: u64 = 1 << 35;
/// Most load segments a template lists (program node slots 2..=15).
pub const MAX_SEGMENTS: usize = 14;
/// Most page ranges in a [`Pages`]: the segments and the stack.
pub const MAX_RANGES: usize = MAX_SEGMENTS + 1;
/// Most stack pages (the stack area, `layout::STACK_SIZE`).
pub const MAX_STACK_PAGES: u64 = layout::STACK_SIZE / PAGE;
/// Stack pages a product gets unless its factory says otherwise.
pub const DEFAULT_STACK_PAGES: u64 = 8;
/// Most pages one segment may have (its count must fit the books' word).
pub const MAX_SEGMENT_PAGES: u64 = (1 << 28) - 1;
/// Most nodes on a path from the root to a page (size codes 9 down to 1).
pub const MAX_DEPTH: usize = ROOT_LSS as usize;

/// Where a page of a product comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// The template's own read-only page key (shared).
    Text,
    /// A fresh page holding a copy of the template's page.
    Data,
    /// A fresh zero page (the stack).
    Stack,
}

/// Why a template or a plan is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanError {
    /// A segment's start is not page-aligned.
    Misaligned,
    /// A segment of no pages, or more than [`MAX_SEGMENT_PAGES`].
    BadCount,
    /// Pages at or beyond the top of the user half.
    OutOfRange,
    /// Two ranges share a page (or a segment overlaps the stack).
    Overlap,
    /// More ranges than [`MAX_RANGES`] (or segments than [`MAX_SEGMENTS`]).
    TooMany,
    /// A stack of 0 or more than [`MAX_STACK_PAGES`] pages.
    BadStack,
}

/// One load segment of a template, in pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Segment {
    /// Its first page number (address / 4096).
    pub first: u64,
    /// How many pages.
    pub count: u64,
    /// Whether the program may write it (then each product gets a copy).
    pub writable: bool,
}

const FIRST_BITS: u32 = 35;
const COUNT_BITS: u32 = 28;

impl Segment {
    /// A segment from its program-node number key: `low` the page-aligned
    /// start address, `high` the page count << 1 | writable.
    pub fn from_number(low: u64, high: u64) -> Result<Segment, PlanError> {
        if !low.is_multiple_of(PAGE) {
            return Err(PlanError::Misaligned);
        }
        let s = Segment {
            first: low / PAGE,
            count: high >> 1,
            writable: high & 1 != 0,
        };
        s.check()?;
        Ok(s)
    }

    /// The program-node number key of this segment: `(low, high)`.
    pub fn to_number(self) -> (u64, u64) {
        (self.first * PAGE, self.count << 1 | self.writable as u64)
    }

    fn check(self) -> Result<(), PlanError> {
        if self.count == 0 || self.count > MAX_SEGMENT_PAGES {
            return Err(PlanError::BadCount);
        }
        if self.first >= USER_PAGES || self.count > USER_PAGES - self.first {
            return Err(PlanError::OutOfRange);
        }
        Ok(())
    }

    /// The segment as one word of the books (first page, count, writable).
    pub fn encode(self) -> u64 {
        self.first | self.count << FIRST_BITS | (self.writable as u64) << 63
    }

    /// The segment a word of the books holds ([`Segment::encode`]).
    pub fn decode(w: u64) -> Segment {
        Segment {
            first: w & ((1 << FIRST_BITS) - 1),
            count: (w >> FIRST_BITS) & ((1 << COUNT_BITS) - 1),
            writable: w >> 63 != 0,
        }
    }
}

/// A run of pages with one source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// First page number.
    pub first: u64,
    /// Pages.
    pub count: u64,
    /// Where they come from.
    pub source: Source,
}

const NO_RANGE: Range = Range {
    first: 0,
    count: 0,
    source: Source::Stack,
};

/// A set of pages as sorted, disjoint ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pages {
    r: [Range; MAX_RANGES],
    n: usize,
}

impl Default for Pages {
    fn default() -> Self {
        Pages::new()
    }
}

impl Pages {
    /// No pages.
    pub const fn new() -> Pages {
        Pages {
            r: [NO_RANGE; MAX_RANGES],
            n: 0,
        }
    }

    /// Adds `count` pages from `first`, all from `source`.
    pub fn add(&mut self, first: u64, count: u64, source: Source) -> Result<(), PlanError> {
        if count == 0 {
            return Err(PlanError::BadCount);
        }
        if first >= USER_PAGES || count > USER_PAGES - first {
            return Err(PlanError::OutOfRange);
        }
        if self.n == MAX_RANGES {
            return Err(PlanError::TooMany);
        }
        let at = self.r[..self.n].partition_point(|r| r.first < first);
        if at > 0 {
            let before = self.r[at - 1];
            if before.first + before.count > first {
                return Err(PlanError::Overlap);
            }
        }
        if at < self.n && first + count > self.r[at].first {
            return Err(PlanError::Overlap);
        }
        self.r.copy_within(at..self.n, at + 1);
        self.r[at] = Range {
            first,
            count,
            source,
        };
        self.n += 1;
        Ok(())
    }

    /// The ranges, in address order.
    pub fn ranges(&self) -> &[Range] {
        &self.r[..self.n]
    }

    /// How many pages.
    pub fn len(&self) -> u64 {
        self.ranges().iter().map(|r| r.count).sum()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// How many pages come from `source`.
    pub fn count(&self, source: Source) -> u64 {
        self.ranges()
            .iter()
            .filter(|r| r.source == source)
            .map(|r| r.count)
            .sum()
    }

    /// Where page `page` comes from, if it is in the set.
    pub fn source(&self, page: u64) -> Option<Source> {
        let at = self.ranges().partition_point(|r| r.first <= page);
        let r = self.ranges()[..at].last()?;
        (page < r.first + r.count).then_some(r.source)
    }

    /// The highest page of the set in `[lo, hi)`.
    pub fn highest_in(&self, lo: u64, hi: u64) -> Option<u64> {
        self.ranges()
            .iter()
            .rev()
            .find(|r| r.first < hi && r.first + r.count > lo)
            .map(|r| (r.first + r.count).min(hi) - 1)
    }
}

/// The pages of a template: every page of every segment, all under
/// read-only keys (so all [`Source::Text`]).
pub fn template(segments: &[Segment]) -> Result<Pages, PlanError> {
    if segments.len() > MAX_SEGMENTS {
        return Err(PlanError::TooMany);
    }
    let mut p = Pages::new();
    for s in segments {
        s.check()?;
        p.add(s.first, s.count, Source::Text)?;
    }
    Ok(p)
}

/// The pages of a product: read-only segments shared, writable ones
/// copied, and `stack_pages` fresh pages just below `layout::STACK_TOP`.
pub fn product(segments: &[Segment], stack_pages: u64) -> Result<Pages, PlanError> {
    if segments.len() > MAX_SEGMENTS {
        return Err(PlanError::TooMany);
    }
    if stack_pages == 0 || stack_pages > MAX_STACK_PAGES {
        return Err(PlanError::BadStack);
    }
    let mut p = Pages::new();
    for s in segments {
        s.check()?;
        let source = if s.writable {
            Source::Data
        } else {
            Source::Text
        };
        p.add(s.first, s.count, source)?;
    }
    p.add(
        layout::STACK_TOP / PAGE - stack_pages,
        stack_pages,
        Source::Stack,
    )?;
    Ok(p)
}

/// One step of building a tree, in the order to carry them out: a node
/// before everything in it (pre-order), slots in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// A node of size code `lss` covering pages from `base`, at `depth`
    /// (the root is at 0 and has no slot). Its segment key (size `lss`)
    /// goes into slot `slot` of the node at `depth - 1` last stepped to.
    Node {
        /// Depth (root 0).
        depth: u8,
        /// Size code.
        lss: u8,
        /// First page it covers.
        base: u64,
        /// Slot of its parent that holds it.
        slot: u8,
    },
    /// Page `page`'s key goes into slot `slot` of the node at `depth`
    /// last stepped to.
    Page {
        /// Depth of the node holding it.
        depth: u8,
        /// The slot.
        slot: u8,
        /// Page number.
        page: u64,
        /// Where it comes from.
        source: Source,
    },
}

/// `16^k` pages.
fn pow16(k: u8) -> u64 {
    1u64 << (4 * k as u32)
}

/// The smallest size code `K ≥ 1` whose `16^K` pages cover page `h`
/// (relative to a slot's start).
fn lss_covering(h: u64) -> u8 {
    let mut k = 1u8;
    while pow16(k) <= h {
        k += 1;
    }
    k
}

/// Calls `f` with every step of building the smallest tree over `pages`
/// (the root first), stopping at the first error.
pub fn steps<E>(pages: &Pages, f: &mut impl FnMut(Step) -> Result<(), E>) -> Result<(), E> {
    f(Step::Node {
        depth: 0,
        lss: ROOT_LSS,
        base: 0,
        slot: 0,
    })?;
    node_steps(pages, ROOT_LSS, 0, 0, f)
}

fn node_steps<E>(
    pages: &Pages,
    lss: u8,
    base: u64,
    depth: u8,
    f: &mut impl FnMut(Step) -> Result<(), E>,
) -> Result<(), E> {
    let span = pow16(lss - 1);
    for i in 0..16u8 {
        let lo = base + i as u64 * span;
        let Some(high) = pages.highest_in(lo, lo + span) else {
            continue;
        };
        if high == lo {
            let source = pages.source(lo).unwrap_or(Source::Stack);
            f(Step::Page {
                depth,
                slot: i,
                page: lo,
                source,
            })?;
            continue;
        }
        let k = lss_covering(high - lo);
        f(Step::Node {
            depth: depth + 1,
            lss: k,
            base: lo,
            slot: i,
        })?;
        node_steps(pages, k, lo, depth + 1, f)?;
    }
    Ok(())
}

/// How many nodes the smallest tree over `pages` has (the root included).
pub fn node_count(pages: &Pages) -> u64 {
    let mut n = 0;
    let _ = steps::<()>(pages, &mut |s| {
        if let Step::Node { .. } = s {
            n += 1;
        }
        Ok(())
    });
    n
}

/// One step of a path from the root: the slot, and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hop {
    /// Slot of the current node.
    pub slot: u8,
    /// Size code of the segment key in it, or 0 for the page key itself.
    pub lss: u8,
}

/// Where a page sits in the smallest tree over a set of pages: the slots
/// from the root down, the last one holding the page key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Path {
    hops: [Hop; MAX_DEPTH],
    len: usize,
    /// Size code of the node whose slot holds the page key.
    pub leaf_lss: u8,
    /// First page that node covers.
    pub leaf_base: u64,
}

impl Path {
    /// The hops, from the root's slot to the page key's slot.
    pub fn hops(&self) -> &[Hop] {
        &self.hops[..self.len]
    }
}

/// The path to `page` in the smallest tree over `pages`, or `None` if the
/// page is not in the set.
pub fn path(pages: &Pages, page: u64) -> Option<Path> {
    pages.source(page)?;
    let mut p = Path {
        hops: [Hop { slot: 0, lss: 0 }; MAX_DEPTH],
        len: 0,
        leaf_lss: ROOT_LSS,
        leaf_base: 0,
    };
    let (mut lss, mut base) = (ROOT_LSS, 0u64);
    loop {
        let span = pow16(lss - 1);
        let slot = ((page - base) / span) as u8;
        let lo = base + slot as u64 * span;
        let high = pages.highest_in(lo, lo + span)?;
        if high == lo {
            p.hops[p.len] = Hop { slot, lss: 0 };
            p.len += 1;
            p.leaf_lss = lss;
            p.leaf_base = base;
            return Some(p);
        }
        let k = lss_covering(high - lo);
        p.hops[p.len] = Hop { slot, lss: k };
        p.len += 1;
        lss = k;
        base = lo;
    }
}
