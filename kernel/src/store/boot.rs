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
    let Some(bitmap) = k.pool.alloc() else {
        crate::fatal(format_args!("store: no frames for the store"));
    };
    phys::zero_frame(bitmap);
    k.store.blank_versions = Some(bitmap);
    k.store.pressure_mark = k.pool.capacity() / 8;
    if !k.store.w.set_aside(&mut k.pool) {
        crate::fatal(format_args!("store: no frames for the checkpoint writer"));
    }
    if !super::scrub::start(k, k.config.scrub_ms) {
        crate::fatal(format_args!("store: no frames for the scrub"));
    }
    k.store.geo = geo;
    let a = read_block(k, 0, s0);
    let b = read_block(k, 1, s1);
    let blank = |f: FrameNumber| phys::with_frame(f, |x| x.iter().all(|&v| v == 0));
    if a && b && blank(s0) && blank(s1) {
        return format(k, geo);
    }
    let roots = phys::with_frame(s0, |x| {
        phys::with_frame(s1, |y| root::Roots::read(&x[..], &y[..], blocks))
    });
    let Some((nb, newest)) = roots.newest else {
        if let Some(f) = roots.other_format() {
            crate::fatal(format_args!(
                "store: the disk holds a store of format {f}; this kernel reads format {}, and converts no other: refusing it (make run FRESH=1 starts over; docs/STORE.md, \"Format changes\")",
                stet_store::FORMAT
            ));
        }
        let [ea, eb] = roots.refused;
        crate::fatal(format_args!(
            "store: the disk holds no valid root (root 0: {ea:?}, root 1: {eb:?}); refusing to use it (make run FRESH=1 starts over)"
        ));
    };
    for (which, f) in [(0u8, s0), (1, s1)] {
        if let Some(e) = roots.refused[which as usize] {
            if !blank(f) {
                kprintln!(
                    "store: root {which} is unusable ({e:?}); using root {nb} (generation {}, checkpoint {})",
                    newest.generation,
                    newest.ckpt_generation
                );
            }
        }
    }
    // The newest root's state, or else the other root's: it names a state
    // whose objects are intact (`Roots`), the same as the newest's or the
    // one just before it.
    let why = match open_state(k, newest) {
        Ok(()) => return restart(k, newest),
        Err(why) => why,
    };
    let Some((ob, older)) = roots.other else {
        crate::fatal(format_args!(
            "store: checkpoint {} cannot be used ({why}), and there is no other valid root to fall back to; refusing to use the disk",
            newest.ckpt_generation
        ));
    };
    kprintln!(
        "store: checkpoint {} cannot be used ({why}); falling back to checkpoint {} (root {ob}, generation {})",
        newest.ckpt_generation,
        older.ckpt_generation,
        older.generation
    );
    if let Err(why) = open_state(k, older) {
        crate::fatal(format_args!(
            "store: checkpoint {} cannot be used either ({why}); refusing to use the disk",
            older.ckpt_generation
        ));
    }
    restart(k, older)
}

/// Makes root `r` the one objects are read through and checks that its
/// state can be opened: its unmigrated checkpoint's header and directory,
/// and its kernel state page. On failure nothing of it is kept.
fn open_state(k: &mut Kernel, r: Root) -> Result<(), &'static str> {
    drop_directory(k);
    k.store.root = r;
    if r.needs_log() && !load_directory(k, r) {
        drop_directory(k);
        return Err("its log cannot be read");
    }
    // The state page, read without entering the cache (a fallback must
    // leave nothing of this root behind).
    let Some(f) = k.pool.alloc() else {
        crate::fatal(format_args!("store: no frame to read the kernel state"));
    };
    let read = crate::obj::Backing::read_page(&mut k.store, kstate::STATE_PAGE, f);
    let decoded = read.map(|_| phys::with_frame(f, |b| kstate::decode_header(&b[..])));
    let _ = k.pool.free(f);
    let why = match decoded {
        Ok(Ok(_)) => return Ok(()),
        // A store formatted but never checkpointed (see `restart`).
        Ok(Err(StateError::Blank)) if r.ckpt_generation == 0 => return Ok(()),
        Ok(Err(_)) => "its kernel state page is damaged",
        Err(_) => "its kernel state page cannot be read",
    };
    drop_directory(k);
    Err(why)
}

/// Forgets a directory loaded by `open_state` (its buffer is kept).
fn drop_directory(k: &mut Kernel) {
    if let Some(dir) = k.store.dir.take() {
        k.store.dir_slots = Some(dir.into_slots());
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

/// Restarts from root `r` (opened by `open_state`).
fn restart(k: &mut Kernel, r: Root) -> Opened {
    k.store.root = r;
    k.store.committed = r.ckpt_generation;
    k.store.restarted_from = r.ckpt_generation;
    if r.needs_log() {
        let layout = k.store.dir.as_ref().map(|d| d.layout());
        if let Some(l) = layout {
            k.store.w.resume_migration(r.ckpt_generation, l);
        }
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
/// its objects are found there until it has migrated home. False
/// (reported) if they cannot be read or are damaged.
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
    let built = fill_directory(k, r, f, &mut dir);
    if !built {
        // Its buffer stays for another try (a fallback root's directory).
        k.store.dir_slots = Some(dir.into_slots());
        return false;
    }
    k.store.dir = Some(dir);
    true
}

/// Reads the directory blocks of `r`'s checkpoint into `dir` (with frame
/// `f`) and sorts it. False (reported) on any failure.
fn fill_directory(k: &mut Kernel, r: Root, f: FrameNumber, dir: &mut Directory<'static>) -> bool {
    let layout = dir.layout();
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
    true
}
