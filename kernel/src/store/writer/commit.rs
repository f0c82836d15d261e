//! Committing: the root that names the checkpoint (or says it has
//! migrated), and what the kernel does once each is on disk.

use super::jobs::{give, slots, spare_frames, submit, take, Kind};
use super::NodeId;
use crate::arch::virtio_blk::Op;
use crate::arch::{cpu, phys};
use crate::kernel::Kernel;
use crate::kprintln;
use stet_keys::Space;
use stet_store::ckpt::{DirEntry, Directory};
use stet_store::root;

/// Which root a root write writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RootWrite {
    /// The commit of the checkpoint.
    Commit,
    /// Its migration.
    Migrated,
    /// The last root again, into the other block.
    Again,
}

/// Writes a root (to the block the last root is not in).
pub(super) fn write_root(k: &mut Kernel, what: RootWrite) {
    let Some(j) = k.store.w.free_job() else {
        return;
    };
    if slots(k) == 0 || spare_frames(k) == 0 {
        return;
    }
    let mut r = k.store.root;
    r.generation += 1;
    if what == RootWrite::Migrated {
        r.migrated = true;
    } else if what == RootWrite::Commit {
        r.ckpt_generation = k.store.w.generation;
        r.ckpt_start = r.geometry.log_start;
        r.ckpt_blocks = k.store.w.layout.total_blocks();
        r.migrated = false;
        // Records older than the snapshot are in the checkpoint; the
        // journal that applies on top of it starts after them.
        let (head, seq) = k.store.j.at_snapshot;
        r.journal_head = head;
        r.journal_seq = seq;
        r.restarts = k.store.restarts;
    }
    let Some(f) = take(k) else {
        return;
    };
    let bytes = r.encode();
    phys::with_frame_mut(f, |b| {
        b.fill(0);
        b[..bytes.len()].copy_from_slice(&bytes);
    });
    if !submit(k, j, Op::Write, root::block_for(r.generation), &[f]) {
        give(k, f);
        return;
    }
    k.store.pending_root = Some(r);
    let job = &mut k.store.w.jobs[j];
    job.kind = Kind::Single;
    job.frames[0] = Some(f);
    job.nframes = 1;
}

/// The checkpoint is on disk: statistics, waiters, and the snapshot's
/// objects become evictable (the directory now finds them in the log).
pub(super) fn committed(k: &mut Kernel) {
    let w = &k.store.w;
    let l = w.layout;
    k.store.stats = crate::store::CkptStats {
        generation: w.generation,
        nodes: l.nodes as u64,
        pages: l.pages as u64,
        pause: w.pause,
        commit: cpu::rdtsc() - w.t0,
        work: w.work,
    };
    if k.store.trace {
        kprintln!("ckpt: committed gen={}", w.generation);
    }
    // The directory of the committed checkpoint, for reads until it has
    // migrated (built from what the writer staged).
    k.store.dir = None;
    if let Some(slots) = k.store.dir_slots.take() {
        let mut dir = Directory::new(slots, l);
        let mut ok = true;
        for x in 0..l.nodes {
            let NodeId { oid, version } = k.store.w.node_ids[x as usize];
            ok &= dir
                .push(&DirEntry {
                    space: Space::Node,
                    oid,
                    version,
                    crc: 0,
                })
                .is_ok();
        }
        for s in &k.objs.snap[..l.pages as usize] {
            ok &= dir
                .push(&DirEntry {
                    space: Space::Page,
                    oid: s.oid,
                    version: s.version,
                    crc: s.crc,
                })
                .is_ok();
        }
        ok &= dir.finish().is_ok();
        if !ok {
            crate::fatal(format_args!(
                "ckpt: the directory of checkpoint {} does not fit its table",
                k.store.w.generation
            ));
        }
        k.store.dir = Some(dir);
    }
    // Staging frames and page copies go back to the pool.
    let staging = 1 + l.dir_blocks as usize + l.node_blocks as usize;
    for i in 0..staging {
        if let Some(f) = k.store.w.frames[i].take() {
            let _ = k.pool.free(f);
        }
    }
    k.objs.snapshot_pages_written(l.pages as usize);
    k.objs.snapshot_nodes_written();
    crate::store::checkpoint_committed(k);
}

/// Both root blocks name the committed checkpoint: the previous state is
/// named by no root any more, so its journal records are free and its
/// homes may change — migration starts.
pub(super) fn named_twice(k: &mut Kernel) {
    crate::store::journal::committed(k);
    crate::store::journal_freed(k);
    if k.store.trace {
        kprintln!("ckpt: migrating gen={}", k.store.w.generation);
    }
}

/// The checkpoint is home: the log is free and reads go home again.
pub(super) fn migrated(k: &mut Kernel) {
    if k.store.trace {
        kprintln!("ckpt: migrated gen={}", k.store.w.generation);
    }
    super::halt_if(k, stet_kconfig::HaltAt::Migrated, "migrating");
    if let Some(dir) = k.store.dir.take() {
        k.store.dir_slots = Some(dir.into_slots());
    }
    k.store.migrations += 1;
    crate::store::checkpoint_migrated(k);
}
