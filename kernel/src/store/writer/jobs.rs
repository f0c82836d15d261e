//! The writer's disk request bookkeeping: jobs (each owns the frames its
//! requests use), disk slots, the writer's own frames, and what happens
//! when a job's requests complete.

use super::migrate::{home_writes, merge_nodes, merge_versions};
use super::{fail, Phase, JOB_FRAMES};
use crate::arch::phys::{FrameNumber, Phys};
use crate::arch::virtio_blk::Op;
pub(super) use crate::arch::virtio_blk::NO_FRAMES;
use crate::kernel::Kernel;
use stet_kconfig::HaltAt;
use stet_virtio::Frame;

/// What a job does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Free,
    /// Staging frames `first..first + n` of `frames` to the log.
    Stage {
        first: u32,
        n: u32,
    },
    /// Snapshot pages `first..first + n` to the log.
    Pages {
        first: u32,
        n: u32,
    },
    /// A flush or a root write.
    Single,
    /// Directory entries `first..first + n` (pages) from the log to their
    /// homes: reading, then writing.
    Home {
        first: u32,
        n: u32,
        writing: bool,
    },
    /// One version block (`block`) for directory entries `first..first+n`:
    /// reading both copies, then writing copy `copy`.
    Versions {
        block: u64,
        first: u32,
        n: u32,
        copy: u8,
        writing: bool,
    },
    /// One node home block for directory entries `first..first+n`.
    Nodes {
        block: u64,
        first: u32,
        n: u32,
        copy: u8,
        writing: bool,
    },
}

#[derive(Clone, Copy)]
pub(super) struct Job {
    pub(super) kind: Kind,
    pub(super) frames: [Option<FrameNumber>; JOB_FRAMES],
    pub(super) nframes: usize,
    pub(super) pending: u32,
}

pub(super) const FREE: Job = Job {
    kind: Kind::Free,
    frames: [None; JOB_FRAMES],
    nframes: 0,
    pending: 0,
};

/// Submits one request for job `j` (`frames`: frames, or table slots, each
/// of which must hold one).
pub(super) fn submit<F: Frame<Phys>>(
    k: &mut Kernel,
    j: usize,
    op: Op,
    block: u64,
    frames: &[F],
) -> bool {
    let Some(d) = k.store.disk.as_mut() else {
        return false;
    };
    if d.submit(op, block, frames, j as u64).is_err() {
        return false;
    }
    k.store.w.jobs[j].pending += 1;
    k.store.w.inflight += 1;
    true
}

/// Disk request slots free now, less those promised to requests that
/// jobs (and the journal) will submit when their reads complete.
pub(super) fn slots(k: &Kernel) -> usize {
    k.store
        .disk
        .as_ref()
        .map_or(0, |d| d.free_slots())
        .saturating_sub(k.store.reserved)
}

pub(super) fn max_frames(k: &Kernel) -> usize {
    k.store
        .disk
        .as_ref()
        .map_or(1, |d| d.max_frames().min(JOB_FRAMES))
}

/// The writer's own frames free now.
pub(in crate::store) fn spare_frames(k: &Kernel) -> usize {
    k.store.w.nbounce
}

/// One of the writer's own frames (`None` when it has none free: callers
/// check `spare_frames` first).
pub(in crate::store) fn take(k: &mut Kernel) -> Option<FrameNumber> {
    let w = &mut k.store.w;
    w.nbounce = w.nbounce.checked_sub(1)?;
    // The slots from `nbounce` up are dead: `give` writes before reading.
    w.bounce[w.nbounce]
}

/// Gives a frame back to the writer.
pub(in crate::store) fn give(k: &mut Kernel, f: FrameNumber) {
    let w = &mut k.store.w;
    w.bounce[w.nbounce] = Some(f);
    w.nbounce += 1;
}

/// A request of job `j` completed.
pub(super) fn completed(k: &mut Kernel, j: usize) {
    let job = &mut k.store.w.jobs[j];
    job.pending -= 1;
    if job.pending > 0 {
        return;
    }
    match job.kind {
        Kind::Free => {}
        Kind::Stage { .. } => finish(k, j),
        Kind::Pages { first, n } => {
            // The copies are in the log: their frames are free again (the
            // CRCs the directory needs were taken when they were copied).
            for x in first as usize..(first + n) as usize {
                let s = k.objs.snap[x];
                if let Some(f) = k.objs.snap[x].frame.take() {
                    if s.bounced {
                        give(k, f);
                    } else {
                        let _ = k.pool.free(f);
                    }
                }
                k.objs.snap[x].written = true;
            }
            finish(k, j);
        }
        Kind::Single => {
            if let Some(r) = k.store.pending_root.take() {
                k.store.root = r;
                if k.store.w.phase == Phase::Commit {
                    k.store.commits_this_boot += 1;
                    super::halt_if(k, HaltAt::Commit, "writing the commit root");
                }
            }
            let job = k.store.w.jobs[j];
            for f in job.frames[..job.nframes].iter().flatten() {
                give(k, *f);
            }
            finish(k, j);
            k.store.w.next = u64::MAX;
        }
        Kind::Home { first, n, writing } => {
            if writing {
                release(k, j);
                super::halt_if(k, HaltAt::Home, "writing pages home");
            } else {
                home_writes(k, j, first, n);
            }
        }
        Kind::Versions {
            block,
            first,
            n,
            copy,
            writing,
        } => {
            if writing {
                // A read between the merge and this write may have seen
                // the block blank still: forget that.
                k.store.set_blank(block, false);
                release(k, j);
            } else {
                k.store.reserved -= 1;
                if !merge_versions(k, j, first, n) {
                    return fail(k, "a migration frame is missing");
                }
                let f = k.store.w.jobs[j].frames[0];
                let target = k.store.root.geometry.version_block(block, copy);
                match target {
                    Some(b) if submit(k, j, Op::Write, b, &[f]) => {
                        k.store.w.jobs[j].kind = Kind::Versions {
                            block,
                            first,
                            n,
                            copy,
                            writing: true,
                        };
                    }
                    _ => fail(k, "cannot write a version block"),
                }
            }
        }
        Kind::Nodes {
            block,
            first,
            n,
            copy,
            writing,
        } => {
            if writing {
                release(k, j);
            } else {
                k.store.reserved -= 1;
                if !merge_nodes(k, j, block, first, n) {
                    return fail(k, "a migration frame is missing");
                }
                let f = k.store.w.jobs[j].frames[0];
                let g = k.store.root.geometry;
                let b = g.node_area + copy as u64 * g.node_blocks + block;
                if submit(k, j, Op::Write, b, &[f]) {
                    k.store.w.jobs[j].kind = Kind::Nodes {
                        block,
                        first,
                        n,
                        copy,
                        writing: true,
                    };
                } else {
                    fail(k, "cannot write a node block");
                }
            }
        }
    }
}

fn finish(k: &mut Kernel, j: usize) {
    k.store.w.jobs[j] = FREE;
}

/// Frees a job and its frames.
fn release(k: &mut Kernel, j: usize) {
    let job = k.store.w.jobs[j];
    for f in job.frames[..job.nframes].iter().flatten() {
        give(k, *f);
    }
    finish(k, j);
}
