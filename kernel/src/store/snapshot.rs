//! The stop-the-world phase of a checkpoint. It only *records* what must
//! be written: every prepared domain is written back into its nodes, the
//! kernel's own state (the running set, names, clock) goes into its state
//! pages, dirty nodes are encoded into staging frames (nodes change in too
//! many places to copy them lazily), dirty pages are marked copy-on-write
//! (the writer copies each as it writes it; a domain that writes one first
//! gives the writer a copy), and the hardware page tables are dropped so
//! the next write to any page faults. The work is proportional to the
//! dirty objects and the prepared domains, never to clean memory.

use super::memory::RESERVE;
use crate::arch::{cpu, phys};
use crate::domain;
use crate::kernel::Kernel;
use crate::{kprintln, memory};
use stet_store::ckpt::Layout;
use stet_store::geometry::NODE_RECORD;
use stet_store::kstate::{self, Entry, Header, Kind};
use stet_store::node::{self, NodeImage};

/// Why a checkpoint did not start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotStarted {
    /// No disk.
    Volatile,
    /// The previous checkpoint is still being written or migrated.
    Busy,
    /// Not enough free frames to stage the dirty nodes.
    NoMemory,
}

/// Takes a snapshot and starts the writer. Returns the new generation.
pub fn take(k: &mut Kernel) -> Result<u64, NotStarted> {
    if !k.store.persistent() {
        return Err(NotStarted::Volatile);
    }
    if !k.store.w.is_idle() || super::bench::busy(k) {
        return Err(NotStarted::Busy);
    }
    let t0 = cpu::rdtsc();
    // Checkpoint numbers are root numbers (never reused, even for a
    // checkpoint lost in a crash: see crates/store `Root::next_ckpt_generation`).
    let generation = k.store.root.next_ckpt_generation();
    // 1. Every prepared domain's registers into its nodes and FPU page.
    for ci in 0..k.ctxs.len() {
        if k.ctxs[ci].used {
            domain::sync(k, ci);
        }
    }
    // 2. The kernel's own state.
    if !write_kernel_state(k, generation) {
        return Err(NotStarted::NoMemory);
    }
    // 3. Frames for the node records, the header and the directory, and
    //    for copies of pinned pages: all or nothing, before anything moves.
    let nn = k.objs.dirty_node_count();
    let np = k.objs.dirty_page_count();
    let layout = Layout::new(nn as u32, np as u32);
    let staging = 1 + layout.dir_blocks as usize + layout.node_blocks as usize;
    if !take_frames(k, staging) {
        return Err(NotStarted::NoMemory);
    }
    // 4. Nodes: encode each dirty node into its record now.
    let first_node_frame = 1 + layout.dir_blocks as usize;
    let w = &mut k.store.w;
    k.objs.snapshot_nodes(|n, e| {
        let img = NodeImage {
            oid: e.oid,
            version: e.version,
            calls: e.calls,
            keys: super::image_keys(&e.keys),
        };
        w.node_ids[n] = super::writer::NodeId {
            oid: e.oid,
            version: e.version,
        };
        // Staged by `take_frames` just above.
        if let Some(f) = w.frames[first_node_frame + n / 8] {
            phys::with_frame_mut(f, |b| {
                let at = (n % 8) * NODE_RECORD;
                node::encode(&img, &mut b[at..at + NODE_RECORD]);
            });
        }
    });
    // 5. Pages: listed, and copy-on-write from now on.
    k.objs.snapshot_pages();
    // Journal records from now on are not in this checkpoint.
    super::journal::snapshot_taken(k);
    // 6. Every later write to a page faults (and is copied first if the
    //    writer still needs the page).
    memory::flush_all(k);
    let pause = cpu::rdtsc() - t0;
    k.store.w.start(generation, layout, t0, pause);
    if k.store.trace {
        kprintln!("ckpt: snapshot gen={generation} nodes={nn} pages={np} pause={pause}");
    }
    super::writer::pump(k);
    Ok(generation)
}

/// Takes the snapshot's frames from the pool, leaving `RESERVE`: for each
/// dirty page of a prepared domain (an FPU page, written in place at every
/// write-back) a copy of it now, then `staging` for the writer (header,
/// directory, node records). All or nothing: false, with every frame back
/// in the pool, if memory runs short.
fn take_frames(k: &mut Kernel, staging: usize) -> bool {
    let (objs, pool) = (&mut k.objs, &mut k.pool);
    let pinned = objs
        .dirty_pages()
        .iter()
        .filter(|&&i| objs.page_entry(i).ctx != 0)
        .count();
    if pool.free_count() < staging + pinned + RESERVE || staging > k.store.w.frames.len() {
        return false;
    }
    // The copies. Write-backs (step 1) made the FPU pages dirty last, so
    // the search runs from the end and stops at the last one.
    let mut left = pinned;
    let mut j = objs.dirty_pages().len();
    while left > 0 && j > 0 {
        j -= 1;
        let e = objs.page_entry(objs.dirty_pages()[j]);
        if e.ctx == 0 {
            continue;
        }
        left -= 1;
        let copy = e.frame.and_then(|page| Some((page, pool.alloc()?)));
        let Some((page, copy)) = copy else {
            return give_back(k, 0, j + 1);
        };
        phys::copy_frame(page, copy);
        objs.snap[j].frame = Some(copy);
    }
    for s in 0..staging {
        k.store.w.frames[s] = k.pool.alloc();
        if k.store.w.frames[s].is_none() {
            return give_back(k, s, j);
        }
    }
    true
}

/// Returns to the pool the first `staged` staging frames and the copies
/// made for the dirty pages from `from` on. False.
fn give_back(k: &mut Kernel, staged: usize, from: usize) -> bool {
    for s in 0..staged {
        if let Some(f) = k.store.w.frames[s].take() {
            let _ = k.pool.free(f);
        }
    }
    for j in from..k.objs.dirty_page_count() {
        let i = k.objs.dirty_pages()[j];
        if k.objs.page_entry(i).ctx != 0 {
            if let Some(f) = k.objs.snap[j].frame.take() {
                let _ = k.pool.free(f);
            }
        }
    }
    false
}

/// Writes the running set, the clock and the names into the kernel's state
/// pages. False if they cannot be faulted in or copied.
fn write_kernel_state(k: &mut Kernel, generation: u64) -> bool {
    let h = Header {
        clock_ns: k.now_ns(),
        period_ms: k.store.period_ms,
        restarts: k.store.restarts,
        generation,
    };
    let Ok(sp) = k.page(kstate::STATE_PAGE) else {
        return false;
    };
    let Ok(sf) = k.page_write(sp) else {
        return false;
    };
    let ctxs = &*k.ctxs;
    let objs = &k.objs;
    let running = (0..ctxs.len())
        .filter(|&ci| domain::runnable(&ctxs[ci]))
        .map(|ci| Entry {
            oid: objs.node_entry(ctxs[ci].root).oid,
            kind: Kind::Ready,
            aux: 0,
        });
    let want = (0..ctxs.len())
        .filter(|&ci| domain::runnable(&ctxs[ci]))
        .count();
    let wrote = phys::with_frame_mut(sf, |b| kstate::encode_state(&h, running, b));
    if wrote < want {
        kprintln!(
            "ckpt: {} running domains do not fit in the state page; {} will not resume",
            want,
            want - wrote
        );
    }
    if k.store.names_dirty {
        let Ok(np) = k.page(kstate::NAMES_PAGE) else {
            return false;
        };
        let Ok(nf) = k.page_write(np) else {
            return false;
        };
        let names = &k.names[..k.nnames];
        phys::with_frame_mut(nf, |b| {
            kstate::encode_names(
                names.iter().map(|(oid, n)| {
                    let len = n.iter().position(|&c| c == 0).unwrap_or(n.len());
                    (*oid, &n[..len])
                }),
                b,
            )
        });
        k.store.names_dirty = false;
    }
    true
}
