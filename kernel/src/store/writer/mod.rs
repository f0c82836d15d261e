//! The checkpoint writer: writes a snapshot into the log, commits it, and
//! migrates it to the objects' homes, all while domains run. It is a state
//! machine driven by disk completions (`pump`, from the disk interrupt, the
//! timer and the idle loop); every disk request belongs to a *job* in a
//! small fixed table, and a job owns the frames its requests use.
//!
//! The order on disk (docs/STORE.md has the argument):
//! 1. node records, pages, then the header and directory into the log;
//! 2. FLUSH; the root naming the checkpoint (not migrated) into the root
//!    block the previous root did not use; FLUSH — *committed*; the same
//!    root again into the other block; FLUSH — no root names the previous
//!    state any more, so its homes may change;
//! 3. pages to their homes, version blocks and node blocks, copy 0 of each;
//!    FLUSH; copy 1 of each; FLUSH (a torn write damages at most one copy
//!    of anything, and the log still holds every object of the checkpoint);
//! 4. the root saying it has migrated; FLUSH; again into the other block;
//!    FLUSH — the log is free again.
//!
//! Writing each root that changes the state twice is what lets a restart
//! use the other root when the newest is damaged: that root then always
//! names a state whose objects are intact (`stet_store::root::Roots`).
//!
//! The files: this one drives the phases (`pump`, `issue`); `jobs.rs` is
//! the disk request bookkeeping (jobs, slots, the writer's own frames,
//! completions); `log.rs` writes the snapshot into the log; `commit.rs`
//! writes the root and handles commit and migration's end; `migrate.rs`
//! moves the checkpoint to the objects' homes.

mod commit;
mod jobs;
mod log;
mod migrate;

use crate::arch::cpu;
use crate::arch::phys::{FrameNumber, FramePool};
use crate::arch::virtio_blk::Op;
use crate::kernel::Kernel;
use crate::kprintln;
use commit::{committed, migrated, named_twice, write_root, RootWrite};
use jobs::{completed, slots, submit, Job, Kind, FREE, NO_FRAMES};
pub(super) use jobs::{give, spare_frames, take};
use log::{issue_write, write_items};
use migrate::issue_migration;
use stet_store::ckpt::Layout;

/// Jobs in flight at once.
pub const JOBS: usize = 16;
/// Frames one job may own.
pub const JOB_FRAMES: usize = 16;
/// Frames the writer keeps for itself (set aside at boot): it copies pages
/// into them to write them and reads into them to migrate, so it always
/// makes progress — and frees memory — even when domains have used every
/// other frame.
pub const BOUNCE: usize = 96;

/// A staged node's identity and version, in record order.
#[derive(Clone, Copy, zerocopy::FromZeros)]
#[repr(C)]
pub struct NodeId {
    /// The node.
    pub oid: u64,
    /// Its version at the snapshot.
    pub version: u32,
}

/// Where the writer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Nothing to do.
    Idle,
    /// Writing the snapshot into the log.
    Write,
    /// Flushing it.
    FlushLog,
    /// Writing the commit root.
    Commit,
    /// Flushing the commit root.
    FlushCommit,
    /// Writing the commit root again, into the other block.
    Commit2,
    /// Flushing it: then migration may start.
    FlushCommit2,
    /// Migrating: pages home, then copy 0 of version and node blocks.
    Migrate0,
    /// Flushing copy 0.
    FlushMigrate0,
    /// Migrating copy 1 of version and node blocks.
    Migrate1,
    /// Flushing copy 1.
    FlushMigrate1,
    /// Writing the root that says the checkpoint has migrated.
    Migrated,
    /// Flushing it.
    FlushMigrated,
    /// Writing that root again, into the other block.
    Migrated2,
    /// Flushing it: then the log is free.
    FlushMigrated2,
    /// The disk failed: the writer stopped (reported once).
    Failed,
}

/// The writer's state.
pub struct Writer {
    /// Where it is.
    pub phase: Phase,
    /// The generation being written (or last written).
    pub generation: u64,
    /// Its layout.
    pub layout: Layout,
    /// Staging frames: header, directory blocks, node-record blocks.
    pub frames: &'static mut [Option<FrameNumber>],
    /// Each staged node, in record order.
    pub node_ids: &'static mut [NodeId],
    jobs: [Job; JOBS],
    /// Next item to issue in the current phase.
    next: u64,
    /// Requests in flight.
    inflight: u32,
    /// TSC at the snapshot, and the pause.
    t0: u64,
    pause: u64,
    /// TSC ticks spent in the writer (not waiting; see `pump`).
    work: u64,
    /// The writer's own frames, and how many are free.
    bounce: [Option<FrameNumber>; BOUNCE],
    nbounce: usize,
}

impl Writer {
    /// An idle writer with no storage (a volatile system).
    pub fn new() -> Writer {
        Writer {
            phase: Phase::Idle,
            generation: 0,
            layout: Layout::new(0, 0),
            frames: &mut [],
            node_ids: &mut [],
            jobs: [FREE; JOBS],
            next: 0,
            inflight: 0,
            t0: 0,
            pause: 0,
            work: 0,
            bounce: [None; BOUNCE],
            nbounce: 0,
        }
    }

    /// Gives the writer its own frames (at boot, with a disk).
    pub fn set_aside(&mut self, pool: &mut FramePool<'_>) -> bool {
        while self.nbounce < BOUNCE {
            let Some(f) = pool.alloc() else {
                return false;
            };
            self.bounce[self.nbounce] = Some(f);
            self.nbounce += 1;
        }
        true
    }

    /// Whether a new checkpoint may start.
    pub fn is_idle(&self) -> bool {
        self.phase == Phase::Idle
    }

    /// Starts writing a snapshot of `layout` (staged by `snapshot::take`).
    pub fn start(&mut self, generation: u64, layout: Layout, t0: u64, pause: u64) {
        self.phase = Phase::Write;
        self.generation = generation;
        self.layout = layout;
        self.next = 0;
        self.t0 = t0;
        self.pause = pause;
        self.work = 0;
    }

    /// Resumes migrating a committed checkpoint after a restart.
    pub fn resume_migration(&mut self, generation: u64, layout: Layout) {
        self.phase = Phase::Migrate0;
        self.generation = generation;
        self.layout = layout;
        self.next = 0;
    }

    fn free_job(&self) -> Option<usize> {
        self.jobs.iter().position(|j| j.kind == Kind::Free)
    }
}

impl Default for Writer {
    fn default() -> Self {
        Writer::new()
    }
}

/// Moves the writer forward as far as it can: collects completions, then
/// issues whatever the current phase allows.
///
/// `work` counts the writer's own steps, each timed alone: handling each
/// of its completions, and each step of the write and commit that
/// submitted its requests (`counted`). Not counted: the checks for
/// completions, the doorbell, the attempts that found no free slot or
/// frame, and the journal's and the raw-write benchmark's completions —
/// how many of those there are depends on how the host's disk batches
/// its completions, not on the checkpoint.
pub fn pump(k: &mut Kernel) {
    if k.store.disk.is_none() {
        return;
    }
    let mut any = false;
    while let Some((tag, r)) = k.store.disk.as_mut().and_then(|d| d.poll()) {
        any = true;
        if tag >= super::bench::TAG {
            super::bench::completed(k, r.is_ok());
            continue;
        }
        if super::scrub::owns(tag) {
            super::scrub::completed(k, r.is_ok());
            continue;
        }
        if tag >= super::journal::TAG_WRITE {
            super::journal::completed(k, tag, r.is_ok());
            continue;
        }
        k.store.w.inflight -= 1;
        if r.is_err() {
            fail(k, "a disk request failed");
            return;
        }
        let t = cpu::rdtsc();
        completed(k, tag as usize);
        k.store.w.work += cpu::rdtsc() - t;
    }
    if any && k.store.j.step == super::journal::Step::Idle {
        // A journal record that found no free disk slot may go now.
        super::wake_journal(k);
    }
    if matches!(k.store.w.phase, Phase::Idle | Phase::Failed) {
        return;
    }
    issue(k);
    if let Some(d) = k.store.disk.as_mut() {
        d.kick();
    }
}

/// Runs `step`; adds its ticks to `work` if it did its work (returned
/// true: an attempt cut short, e.g. a directory whose requests found too
/// few slots, is redone whole later and counted then).
fn counted(k: &mut Kernel, step: impl FnOnce(&mut Kernel) -> bool) -> bool {
    let t = cpu::rdtsc();
    let done = step(k);
    if done {
        k.store.w.work += cpu::rdtsc() - t;
    }
    done
}

/// `ckpt_halt=N` with `ckpt_halt_at` = `at`: stops the machine here if
/// this is the N-th checkpoint of the boot (corruption tests damage the
/// disk it leaves).
fn halt_if(k: &Kernel, at: stet_kconfig::HaltAt, what: &str) {
    if k.config.ckpt_halt == k.store.commits_this_boot && k.config.ckpt_halt_at == at {
        kprintln!(
            "ckpt: halted after {what} of gen={} (ckpt_halt)",
            k.store.w.generation
        );
        crate::arch::qemu::halt_forever();
    }
}

fn fail(k: &mut Kernel, why: &str) {
    kprintln!(
        "ckpt: checkpoint {} stopped: {why}; the last committed state is still on disk",
        k.store.w.generation
    );
    k.store.w.phase = Phase::Failed;
}

/// Issues work for the current phase while slots and jobs are free.
fn issue(k: &mut Kernel) {
    loop {
        let w = &k.store.w;
        let phase = w.phase;
        let quiet = w.inflight == 0;
        match phase {
            Phase::Write => {
                if !counted(k, issue_write) {
                    if quiet && k.store.w.next >= write_items(&k.store.w.layout) {
                        k.store.w.phase = Phase::FlushLog;
                        continue;
                    }
                    return;
                }
            }
            Phase::FlushLog
            | Phase::FlushCommit
            | Phase::FlushCommit2
            | Phase::FlushMigrate0
            | Phase::FlushMigrate1
            | Phase::FlushMigrated
            | Phase::FlushMigrated2 => {
                if !quiet {
                    return;
                }
                if k.store.w.next == u64::MAX {
                    // The flush completed (see `completed`).
                    k.store.w.next = 0;
                    match phase {
                        Phase::FlushLog => k.store.w.phase = Phase::Commit,
                        Phase::FlushCommit => {
                            k.store.w.phase = Phase::Commit2;
                            committed(k);
                        }
                        Phase::FlushCommit2 => {
                            k.store.w.phase = Phase::Migrate0;
                            named_twice(k);
                        }
                        Phase::FlushMigrate0 => k.store.w.phase = Phase::Migrate1,
                        Phase::FlushMigrate1 => k.store.w.phase = Phase::Migrated,
                        Phase::FlushMigrated => k.store.w.phase = Phase::Migrated2,
                        _ => {
                            // Idle now; this may start the next checkpoint.
                            k.store.w.phase = Phase::Idle;
                            migrated(k);
                            // A new snapshot pumps itself.
                            return;
                        }
                    }
                    continue;
                }
                let Some(j) = k.store.w.free_job() else {
                    return;
                };
                if slots(k) == 0 || !counted(k, |k| submit(k, j, Op::Flush, 0, NO_FRAMES)) {
                    return;
                }
                k.store.w.jobs[j].kind = Kind::Single;
                return;
            }
            Phase::Commit | Phase::Commit2 | Phase::Migrated | Phase::Migrated2 => {
                if !quiet {
                    return;
                }
                let (what, flush) = match phase {
                    Phase::Commit => (RootWrite::Commit, Phase::FlushCommit),
                    Phase::Migrated => (RootWrite::Migrated, Phase::FlushMigrated),
                    Phase::Commit2 => (RootWrite::Again, Phase::FlushCommit2),
                    _ => (RootWrite::Again, Phase::FlushMigrated2),
                };
                if k.store.w.next == u64::MAX {
                    k.store.w.next = 0;
                    k.store.w.phase = flush;
                    continue;
                }
                counted(k, |k| {
                    let before = k.store.w.inflight;
                    write_root(k, what);
                    k.store.w.inflight > before
                });
                return;
            }
            Phase::Migrate0 | Phase::Migrate1 => {
                // A scrub step started before the snapshot may still be
                // reading or repairing a home: it ends first.
                if super::scrub::busy(k) {
                    return;
                }
                if !issue_migration(k, if phase == Phase::Migrate0 { 0 } else { 1 }) {
                    if quiet && k.store.w.next == u64::MAX - 1 {
                        k.store.w.next = 0;
                        k.store.w.phase = if phase == Phase::Migrate0 {
                            Phase::FlushMigrate0
                        } else {
                            Phase::FlushMigrate1
                        };
                        continue;
                    }
                    return;
                }
            }
            Phase::Idle | Phase::Failed => return,
        }
    }
}
