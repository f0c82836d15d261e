//! Opening the store at boot. A blank disk becomes a new store (the caller
//! loads the big bang image and takes checkpoint 1). Otherwise the newest
//! valid root wins, and the system restarts from its checkpoint: the
//! directory is read if the checkpoint has not migrated home (objects are
//! then read from the log, and migration resumes in the background), the
//! kernel's state pages give back the clock, the names and the running set,
//! and every domain that was running is readied. Nothing else is read: the
//! object cache fills lazily as domains touch their objects.

use crate::arch::phys;
use crate::arch::phys::FrameNumber;
use crate::domain;
use crate::kernel::{Kernel, MAX_NAMES, NAME_LEN};
use crate::kprintln;
use stet_store::ckpt::{self, Directory};
use stet_store::geometry::Geometry;
use stet_store::kstate::{self, StateError};
use stet_store::root::{self, Root};

/// What the boot found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opened {
    /// No disk: a volatile system (load the big bang; nothing persists).
    Volatile,
    /// A blank disk, now a new store (load the big bang, then checkpoint).
    Fresh,
    /// Restarted from a checkpoint (do not load the big bang).
    Restarted,
}

/// Opens the disk. Stops the kernel (clearly) if the disk holds a store
/// that cannot be used: it is never silently replaced.
pub fn open(k: &mut Kernel) -> Opened {
    let Some(blocks) = k.store.disk.as_ref().map(|d| d.blocks()) else {
        return Opened::Volatile;
    };
    let geo = match Geometry::for_disk(blocks) {
        Ok(g) => g,
        Err(e) => {
            kprintln!("store: the disk ({blocks} blocks) is too small for a store ({e:?}); running without it");
            k.store.disk = None;
            return Opened::Volatile;
        }
    };
    let (Some(s0), Some(s1)) = (k.pool.alloc(), k.pool.alloc()) else {
        crate::fatal(format_args!("store: no frames for the store"));
    };
    k.store.scratch = Some((s0, s1));
    k.store.pressure_mark = k.pool.capacity() / 8;
    if !k.store.w.set_aside(&mut k.pool) {
        crate::fatal(format_args!("store: no frames for the checkpoint writer"));
    }
    k.store.geo = geo;
    let a = read_block(k, 0, s0);
    let b = read_block(k, 1, s1);
    let blank = |f: FrameNumber| phys::with_frame(f, |x| x.iter().all(|&v| v == 0));
    if a && b && blank(s0) && blank(s1) {
        return format(k, geo);
    }
    let chosen = phys::with_frame(s0, |x| {
        phys::with_frame(s1, |y| root::choose(&x[..], &y[..], blocks))
    });
    match chosen {
        Ok((which, r)) => {
            let other = phys::with_frame(if which == 0 { s1 } else { s0 }, |x| {
                Root::decode(&x[..], blocks)
            });
            if let Err(e) = other {
                if !blank(if which == 0 { s1 } else { s0 }) {
                    kprintln!(
                        "store: root {} is unusable ({e:?}); using root {which} (generation {})",
                        1 - which,
                        r.generation
                    );
                }
            }
            restart(k, r)
        }
        Err([ea, eb]) => crate::fatal(format_args!(
            "store: the disk holds no valid root (root 0: {ea:?}, root 1: {eb:?}); refusing to use it (make run FRESH=1 starts over)"
        )),
    }
}

/// Writes root `r` to its block and flushes, before the boot goes on.
fn write_root_sync(k: &mut Kernel, r: Root) {
    let Some((f, _)) = k.store.scratch else {
        crate::fatal(format_args!("store: cannot write the root (no frame)"));
    };
    let bytes = r.encode();
    phys::with_frame_mut(f, |b| {
        b.fill(0);
        b[..bytes.len()].copy_from_slice(&bytes);
    });
    let d = k.store.disk.as_mut().map(|d| {
        d.write_sync(root::block_for(r.generation), f)
            .and_then(|_| d.flush_sync())
    });
    if !matches!(d, Some(Ok(()))) {
        crate::fatal(format_args!("store: cannot write the root"));
    }
    k.store.root = r;
}

fn read_block(k: &mut Kernel, block: u64, f: FrameNumber) -> bool {
    match k.store.disk.as_mut().map(|d| d.read_sync(block, f)) {
        Some(Ok(())) => true,
        _ => {
            kprintln!("store: cannot read block {block}");
            false
        }
    }
}

/// Makes a blank disk a new store: its first root (generation 0, no
/// checkpoint yet).
fn format(k: &mut Kernel, geo: Geometry) -> Opened {
    let r = Root::fresh(geo);
    write_root_sync(k, r);
    k.store.committed = 0;
    super::journal::fresh(k);
    kprintln!(
        "store: new store on a disk of {} blocks: {} nodes, {} pages, log of {} blocks",
        geo.total,
        geo.nodes,
        geo.pages,
        geo.log_blocks
    );
    Opened::Fresh
}

/// Restarts from root `r`.
fn restart(k: &mut Kernel, r: Root) -> Opened {
    k.store.root = r;
    k.store.committed = r.ckpt_generation;
    k.store.restarted_from = r.ckpt_generation;
    if r.needs_log() && !load_directory(k, r) {
        crate::fatal(format_args!(
            "store: checkpoint {} cannot be read from the log (see above); refusing to use the disk",
            r.ckpt_generation
        ));
    }
    // The kernel's state: clock, period, restarts, names, running set.
    let Ok(sp) = k.page(kstate::STATE_PAGE) else {
        crate::fatal(format_args!("store: the kernel state page cannot be read"));
    };
    let Some(sf) = k.objs.frame(sp) else {
        crate::fatal(format_args!("store: the kernel state page has no frame"));
    };
    let header = phys::with_frame(sf, |b| kstate::decode_header(&b[..]));
    let (h, n) = match header {
        Ok(x) => x,
        Err(StateError::Blank) if r.ckpt_generation == 0 => {
            // Formatted, but no checkpoint ever committed: start anew.
            kprintln!("store: the store has no checkpoint yet; starting from the big bang");
            super::journal::fresh(k);
            return Opened::Fresh;
        }
        Err(e) => crate::fatal(format_args!(
            "store: the kernel state of checkpoint {} is unusable ({e:?})",
            r.ckpt_generation
        )),
    };
    k.ticks = h.clock_ns / k.tick_ns;
    k.store.period_ms = h.period_ms;
    k.store.due_ns = h.clock_ns + h.period_ms * 1_000_000;
    if let Some(nf) = k
        .page(kstate::NAMES_PAGE)
        .ok()
        .and_then(|np| k.objs.frame(np))
    {
        let mut names = [(0u64, [0u8; NAME_LEN]); MAX_NAMES];
        let mut nn = 0;
        phys::with_frame(nf, |b| {
            for i in 0..MAX_NAMES.min(kstate::MAX_NAMES) {
                if let Some((oid, name)) = kstate::name(&b[..], i) {
                    let len = name.len().min(NAME_LEN);
                    names[nn].0 = oid;
                    names[nn].1[..len].copy_from_slice(&name[..len]);
                    nn += 1;
                }
            }
        });
        k.names = names;
        k.nnames = nn;
    }
    k.store.names_dirty = false;
    let applied = super::journal::restore(k);
    if applied > 0 {
        kprintln!(
            "store: applied {applied} journal records newer than checkpoint {}",
            r.ckpt_generation
        );
    }
    // The boot root: a new root number and restart count, durable before
    // any journal record or snapshot of this boot (records carry the
    // count, so a stale record of an earlier boot is never applied).
    let mut b = k.store.root;
    b.generation += 1;
    b.restarts += 1;
    write_root_sync(k, b);
    k.store.restarts = b.restarts;
    let mut running = 0;
    for i in 0..n {
        let Ok(e) = phys::with_frame(sf, |b| kstate::entry(&b[..], i)) else {
            kprintln!("store: running-set entry {i} is damaged; skipped");
            continue;
        };
        let Ok(root) = k.node(e.oid) else {
            kprintln!("store: domain {:#x} cannot be read; not resumed", e.oid);
            continue;
        };
        match domain::prepare(k, root) {
            Ok(ci) if domain::runnable(&k.ctxs[ci]) => {
                if k.ctxs[ci].queue() == domain::context::Queue::None {
                    domain::ready_push(k, ci);
                }
                running += 1;
            }
            Ok(_) => {}
            Err(err) => kprintln!(
                "store: domain '{}' cannot be prepared: {err:?}",
                k.name_of(e.oid)
            ),
        }
    }
    kprintln!(
        "store: restarted from gen={} (restart {}), {} domains running{}",
        r.ckpt_generation,
        k.store.restarts,
        running,
        if r.needs_log() {
            ", migration resumes"
        } else {
            ""
        }
    );
    Opened::Restarted
}

/// Reads the committed checkpoint's header and directory from the log, so
/// its objects are found there until it has migrated home.
fn load_directory(k: &mut Kernel, r: Root) -> bool {
    let Some((_, f)) = k.store.scratch else {
        return false;
    };
    if !read_block(k, r.ckpt_start, f) {
        return false;
    }
    let h = match phys::with_frame(f, |b| ckpt::decode_header(&b[..])) {
        Ok(h) if h.ckpt_generation == r.ckpt_generation => h,
        _ => {
            kprintln!(
                "store: the header of checkpoint {} in the log is damaged",
                r.ckpt_generation
            );
            return false;
        }
    };
    let layout = h.layout();
    if layout.total_blocks() != r.ckpt_blocks {
        kprintln!(
            "store: checkpoint {} has the wrong length",
            r.ckpt_generation
        );
        return false;
    }
    let Some(slots) = k.store.dir_slots.take() else {
        return false;
    };
    if (layout.entries() as usize) > slots.len() {
        kprintln!(
            "store: checkpoint {} lists {} objects; this memory size holds a directory of {}",
            r.ckpt_generation,
            layout.entries(),
            slots.len()
        );
        k.store.dir_slots = Some(slots);
        return false;
    }
    let mut dir = Directory::new(slots, layout);
    for d in 0..layout.dir_blocks {
        if !read_block(k, r.ckpt_start + layout.dir_block(d), f) {
            return false;
        }
        let ok = phys::with_frame(f, |b| dir.add_block(d, r.ckpt_generation, &b[..]));
        if ok.is_err() {
            kprintln!(
                "store: directory block {d} of checkpoint {} is damaged ({ok:?})",
                r.ckpt_generation
            );
            return false;
        }
    }
    if let Err(e) = dir.finish() {
        kprintln!(
            "store: the directory of checkpoint {} is unusable ({e:?})",
            r.ckpt_generation
        );
        return false;
    }
    k.store.dir = Some(dir);
    k.store.w.resume_migration(r.ckpt_generation, layout);
    true
}
