//! A domain's address space: the program's pages, its stack and heap, and
//! the segment tree over them.
//!
//! The tree rule: the root is designated by a segment key of size code
//! [`ROOT_LSS`] (16^9 pages = 2^48 bytes). Slot `i` of a node of size code
//! `L` covers pages `[i·16^(L-1), (i+1)·16^(L-1))` of that node. A slot with
//! no page is void; a slot whose only page is its first page holds that
//! page key directly; any other slot holds a segment key of the smallest
//! size code `K ≥ 1` whose 16^K pages cover the slot's highest used page
//! (so `K ≤ L-1`), designating a child node built by the same rule. Nodes
//! of size code 1 therefore hold only page keys.

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use stet_abi::layout;
use stet_bigbang::{PAGE_SIZE, SLOTS};
use stet_elfimage::Program;
use stet_keys::Key;

use crate::{Objects, VERSION};

/// Size code of the key to an address-space root: 16^9 pages, 2^48 bytes.
pub const ROOT_LSS: u8 = 9;

const PAGE: u64 = PAGE_SIZE as u64;

/// One page of the address space before it has an oid.
struct PageSrc {
    /// Contents (`None`: zero).
    data: Option<Box<[u8; PAGE_SIZE]>>,
    /// Read-only.
    ro: bool,
}

/// What building a space produced.
pub(crate) struct Built {
    /// The root node's slots (slot 15 left void for the caller).
    pub root: [Key; SLOTS],
    /// Nodes below the root.
    pub nodes: usize,
    /// Pages stored in the image (nonzero contents).
    pub stored_pages: usize,
    /// Zero pages (oids reserved, not stored).
    pub zero_pages: usize,
    /// The oid of the first heap page (heap pages have consecutive oids).
    pub heap_first: Option<u64>,
}

fn insert(pages: &mut BTreeMap<u64, PageSrc>, index: u64, page: PageSrc, what: &str) -> Result<()> {
    if pages.insert(index, page).is_some() {
        bail!(
            "{what} page at {:#x} overlaps another part of the address space",
            index * PAGE
        );
    }
    Ok(())
}

/// The pages of a domain: the program's segments (file bytes, then zeros;
/// all read-only if `all_ro`, else read-only unless writable),
/// `stack_pages` zero pages below `STACK_TOP`, `heap_pages` from
/// `HEAP_START`. Indexed by page number (address / 4096).
fn pages(
    program: &Program,
    file: &[u8],
    stack_pages: u64,
    heap_pages: u64,
    all_ro: bool,
) -> Result<BTreeMap<u64, PageSrc>> {
    let mut out = BTreeMap::new();
    for seg in program.segments() {
        let (start, end) = seg.page_span();
        let file_end = seg.vaddr + seg.file_len;
        for a in (start..end).step_by(PAGE_SIZE) {
            let mut data = Box::new([0u8; PAGE_SIZE]);
            let lo = a.max(seg.vaddr);
            let hi = (a + PAGE).min(file_end);
            if lo < hi {
                let from = (seg.file_offset + (lo - seg.vaddr)) as usize;
                let len = (hi - lo) as usize;
                let at = (lo - a) as usize;
                data[at..at + len].copy_from_slice(&file[from..from + len]);
            }
            let nonzero = data.iter().any(|&b| b != 0);
            let page = PageSrc {
                data: nonzero.then_some(data),
                ro: all_ro || !seg.perm.write,
            };
            insert(&mut out, a / PAGE, page, "program")?;
        }
    }
    let zero = || PageSrc {
        data: None,
        ro: false,
    };
    let stack_top = layout::STACK_TOP / PAGE;
    for i in stack_top - stack_pages..stack_top {
        insert(&mut out, i, zero(), "stack")?;
    }
    let heap = layout::HEAP_START / PAGE;
    for i in heap..heap + heap_pages {
        insert(&mut out, i, zero(), "heap")?;
    }
    Ok(out)
}

/// Builds the address space of a program (already validated by
/// stet-elfimage) into `objs`, returning the root node's slots.
pub(crate) fn build(
    objs: &mut Objects,
    program: &Program,
    file: &[u8],
    stack_pages: u64,
    heap_pages: u64,
) -> Result<Built> {
    let srcs = pages(program, file, stack_pages, heap_pages, false)?;
    keyed_tree(objs, srcs, heap_pages)
}

/// Builds a program template's tree into `objs`: every page of every load
/// segment under a read-only page key (a writable segment's pages too:
/// each product copies them), no stack, no heap.
pub(crate) fn template(objs: &mut Objects, program: &Program, file: &[u8]) -> Result<Built> {
    let srcs = pages(program, file, 0, 0, true)?;
    keyed_tree(objs, srcs, 0)
}

/// Gives each page an oid (storing those with contents) and builds the
/// tree over them.
fn keyed_tree(objs: &mut Objects, srcs: BTreeMap<u64, PageSrc>, heap_pages: u64) -> Result<Built> {
    let heap_start = layout::HEAP_START / PAGE;
    let mut heap_first = None;
    let mut stored_pages = 0;
    let mut zero_pages = 0;
    let mut keyed = Vec::with_capacity(srcs.len());
    for (index, src) in srcs {
        let oid = objs.page();
        // Oids follow addresses and no other page lies between heap pages.
        if index == heap_start && heap_pages > 0 {
            heap_first = Some(oid);
        }
        let key = match src.data {
            Some(data) => {
                objs.b.page(oid, VERSION, &data);
                stored_pages += 1;
                Key::page(oid, VERSION, src.ro)
            }
            None => {
                zero_pages += 1;
                Key::page(oid, 0, src.ro)
            }
        };
        keyed.push((index, key));
    }
    let mut nodes = 0;
    let root = fill(objs, ROOT_LSS, 0, &keyed, &mut nodes);
    Ok(Built {
        root,
        nodes,
        stored_pages,
        zero_pages,
        heap_first,
    })
}

/// The slots of a node of size code `lss` covering pages from `base`,
/// holding `pages` (sorted, all inside the node). Child nodes are
/// allocated and stored in `objs`.
pub(crate) fn fill(
    objs: &mut Objects,
    lss: u8,
    base: u64,
    pages: &[(u64, Key)],
    nodes: &mut usize,
) -> [Key; SLOTS] {
    let span = 16u64.pow(lss as u32 - 1);
    let mut slots = [Key::VOID; SLOTS];
    let mut rest = pages;
    for (i, slot) in slots.iter_mut().enumerate() {
        let lo = base + i as u64 * span;
        let n = rest.partition_point(|&(p, _)| p < lo + span);
        let (sub, next) = rest.split_at(n);
        rest = next;
        let Some(&(last, _)) = sub.last() else {
            continue;
        };
        let highest = last - lo;
        if highest == 0 {
            *slot = sub[0].1;
            continue;
        }
        let mut k = 1u8;
        while 16u64.pow(k as u32) <= highest {
            k += 1;
        }
        let oid = objs.node();
        let child = fill(objs, k, lo, sub, nodes);
        objs.b.node(oid, VERSION, child);
        *nodes += 1;
        *slot = Key::segment(oid, VERSION, k, 0);
    }
    slots
}
