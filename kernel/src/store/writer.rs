//! The checkpoint writer: writes a snapshot into the log, commits it, and
//! migrates it to the objects' homes, all while domains run. It is a state
//! machine driven by disk completions (`pump`, from the disk interrupt, the
//! timer and the idle loop); every disk request belongs to a *job* in a
//! small fixed table, and a job owns the frames its requests use.
//!
//! The order on disk (docs/STORE.md has the argument):
//! 1. node records, pages, then the header and directory into the log;
//! 2. FLUSH; the root naming the checkpoint (not migrated) into the root
//!    block the previous root did not use; FLUSH — *committed*;
//! 3. pages to their homes, version blocks and node blocks, copy 0 of each;
//!    FLUSH; copy 1 of each; FLUSH (a torn write damages at most one copy
//!    of anything, and the log still holds every object of the checkpoint);
//! 4. the root saying it has migrated; FLUSH — the log is free again.

use crate::arch::virtio_blk::Op;
use crate::arch::{cpu, phys};
use crate::kernel::Kernel;
use crate::kprintln;
use stet_keys::Space;
use stet_physmem::pool::FrameNumber;
use stet_store::ckpt::{self, DirEntry, Directory, Found, Header, Layout};
use stet_store::geometry::{NODES_PER_BLOCK, NODE_RECORD};
use stet_store::node::{self, Record};
use stet_store::root;
use stet_store::versions;

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
    /// The disk failed: the writer stopped (reported once).
    Failed,
}

/// What a job does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
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
struct Job {
    kind: Kind,
    frames: [u32; JOB_FRAMES],
    nframes: usize,
    pending: u32,
}

const FREE: Job = Job {
    kind: Kind::Free,
    frames: [0; JOB_FRAMES],
    nframes: 0,
    pending: 0,
};

/// The writer's state.
pub struct Writer {
    /// Where it is.
    pub phase: Phase,
    /// The generation being written (or last written).
    pub generation: u64,
    /// Its layout.
    pub layout: Layout,
    /// Staging frames: header, directory blocks, node-record blocks.
    pub frames: &'static mut [u32],
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
    bounce: [u32; BOUNCE],
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
            bounce: [0; BOUNCE],
            nbounce: 0,
        }
    }

    /// Gives the writer its own frames (at boot, with a disk).
    pub fn set_aside(&mut self, pool: &mut stet_physmem::pool::FramePool<'_>) -> bool {
        while self.nbounce < BOUNCE {
            let Some(f) = pool.alloc() else {
                return false;
            };
            self.bounce[self.nbounce] = f.0;
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

fn fail(k: &mut Kernel, why: &str) {
    kprintln!(
        "ckpt: checkpoint {} stopped: {why}; the last committed state is still on disk",
        k.store.w.generation
    );
    k.store.w.phase = Phase::Failed;
}

/// Submits one request for job `j`.
fn submit(k: &mut Kernel, j: usize, op: Op, block: u64, frames: &[FrameNumber]) -> bool {
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
fn slots(k: &Kernel) -> usize {
    k.store
        .disk
        .as_ref()
        .map_or(0, |d| d.free_slots())
        .saturating_sub(k.store.reserved)
}

fn max_frames(k: &Kernel) -> usize {
    k.store
        .disk
        .as_ref()
        .map_or(1, |d| d.max_frames().min(JOB_FRAMES))
}

/// The writer's own frames free now.
pub(super) fn spare_frames(k: &Kernel) -> usize {
    k.store.w.nbounce
}

/// One of the writer's own frames (the caller checked `spare_frames`).
pub(super) fn take(k: &mut Kernel) -> FrameNumber {
    let w = &mut k.store.w;
    w.nbounce -= 1;
    FrameNumber(w.bounce[w.nbounce])
}

/// Gives a frame back to the writer.
pub(super) fn give(k: &mut Kernel, f: FrameNumber) {
    let w = &mut k.store.w;
    w.bounce[w.nbounce] = f.0;
    w.nbounce += 1;
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
            | Phase::FlushMigrate0
            | Phase::FlushMigrate1
            | Phase::FlushMigrated => {
                if !quiet {
                    return;
                }
                if k.store.w.next == u64::MAX {
                    // The flush completed (see `completed`).
                    k.store.w.next = 0;
                    match phase {
                        Phase::FlushLog => k.store.w.phase = Phase::Commit,
                        Phase::FlushCommit => {
                            k.store.w.phase = Phase::Migrate0;
                            committed(k);
                        }
                        Phase::FlushMigrate0 => k.store.w.phase = Phase::Migrate1,
                        Phase::FlushMigrate1 => k.store.w.phase = Phase::Migrated,
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
                if slots(k) == 0 || !counted(k, |k| submit(k, j, Op::Flush, 0, &[])) {
                    return;
                }
                k.store.w.jobs[j].kind = Kind::Single;
                return;
            }
            Phase::Commit | Phase::Migrated => {
                if !quiet {
                    return;
                }
                if k.store.w.next == u64::MAX {
                    k.store.w.next = 0;
                    k.store.w.phase = if phase == Phase::Commit {
                        Phase::FlushCommit
                    } else {
                        Phase::FlushMigrated
                    };
                    continue;
                }
                counted(k, |k| {
                    let before = k.store.w.inflight;
                    write_root(k, phase == Phase::Migrated);
                    k.store.w.inflight > before
                });
                return;
            }
            Phase::Migrate0 | Phase::Migrate1 => {
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

/// Items of the write phase: node-record blocks, then pages, then the
/// header and directory (last: the directory carries the pages' CRCs).
fn write_items(l: &Layout) -> u64 {
    l.node_blocks as u64 + l.pages as u64 + 1
}

/// Issues one request of the write phase. False when nothing more can be
/// issued now.
fn issue_write(k: &mut Kernel) -> bool {
    let l = k.store.w.layout;
    let next = k.store.w.next;
    if next >= write_items(&l) || slots(k) == 0 {
        return false;
    }
    let Some(j) = k.store.w.free_job() else {
        return false;
    };
    let start = k.store.root.geometry.log_start;
    let mf = max_frames(k);
    let nb = l.node_blocks as u64;
    let first_node = 1 + l.dir_blocks as usize;
    if next < nb {
        // Node-record blocks: already staged, contiguous in the log.
        let n = ((nb - next) as usize).min(mf);
        let mut fs = [FrameNumber(0); JOB_FRAMES];
        for (i, f) in fs.iter_mut().enumerate().take(n) {
            *f = FrameNumber(k.store.w.frames[first_node + next as usize + i]);
        }
        let (block, _) = l.node_block(next as u32 * NODES_PER_BLOCK as u32);
        if !submit(k, j, Op::Write, start + block, &fs[..n]) {
            return false;
        }
        k.store.w.jobs[j].kind = Kind::Stage {
            first: next as u32,
            n: n as u32,
        };
        k.store.w.next += n as u64;
        return true;
    }
    if next < nb + l.pages as u64 {
        // Pages: each copied into a frame the writer owns (so the domain
        // may change the page the moment it is copied), and checksummed.
        let p0 = (next - nb) as u32;
        let n = ((l.pages - p0) as usize).min(mf);
        let need = (0..n)
            .filter(|&i| !k.objs.snap[p0 as usize + i].copied)
            .count();
        if spare_frames(k) < need {
            return false;
        }
        let mut fs = [FrameNumber(0); JOB_FRAMES];
        for (i, f) in fs.iter_mut().enumerate().take(n) {
            let jx = p0 as usize + i;
            let s = k.objs.snap[jx];
            let frame = if s.copied {
                FrameNumber(s.frame)
            } else {
                let b = take(k);
                phys::copy_frame(FrameNumber(s.frame), b);
                let e = &mut k.objs.pages[s.slot as usize];
                if e.ckpt == jx as u32 + 1 {
                    e.ckpt = 0;
                }
                k.objs.snap[jx].frame = b.0;
                k.objs.snap[jx].copied = true;
                k.objs.snap[jx].bounced = true;
                b
            };
            k.objs.snap[jx].crc = phys::with_frame(frame, |b| crate::arch::crc32c::crc32c(b));
            *f = frame;
        }
        if !submit(k, j, Op::Write, start + l.page_block(p0), &fs[..n]) {
            return false;
        }
        k.store.w.jobs[j].kind = Kind::Pages {
            first: p0,
            n: n as u32,
        };
        k.store.w.next += n as u64;
        return true;
    }
    // Header and directory, once every page has its CRC.
    let pages_done = k.objs.snap[..l.pages as usize].iter().all(|s| s.copied);
    if !pages_done {
        return false;
    }
    encode_directory(k);
    let n = 1 + l.dir_blocks as usize;
    let mut issued = 0;
    while issued < n {
        let Some(jj) = k.store.w.free_job() else {
            return false;
        };
        let m = (n - issued).min(mf);
        let mut fs = [FrameNumber(0); JOB_FRAMES];
        for (i, f) in fs.iter_mut().enumerate().take(m) {
            *f = FrameNumber(k.store.w.frames[issued + i]);
        }
        if slots(k) == 0 || !submit(k, jj, Op::Write, start + issued as u64, &fs[..m]) {
            // Out of slots part way: a later pump re-encodes and resends
            // the whole header and directory (idempotent).
            return false;
        }
        k.store.w.jobs[jj].kind = Kind::Stage {
            first: issued as u32,
            n: m as u32,
        };
        issued += m;
    }
    k.store.w.next += 1;
    true
}

/// Encodes the header and directory blocks into their staging frames.
fn encode_directory(k: &mut Kernel) {
    let l = k.store.w.layout;
    let generation = k.store.w.generation;
    let h = Header {
        ckpt_generation: generation,
        nodes: l.nodes,
        pages: l.pages,
    };
    phys::with_frame_mut(FrameNumber(k.store.w.frames[0]), |b| {
        b.fill(0);
        ckpt::encode_header(&h, b);
    });
    for d in 0..l.dir_blocks {
        let mut entries = [DirEntry::EMPTY; ckpt::DIR_ENTRIES];
        let first = d as u64 * ckpt::DIR_ENTRIES as u64;
        let n = l.dir_entries_in(d);
        for (i, e) in entries.iter_mut().enumerate().take(n) {
            let x = first + i as u64;
            *e = if x < l.nodes as u64 {
                let NodeId { oid, version } = k.store.w.node_ids[x as usize];
                DirEntry {
                    space: Space::Node,
                    oid,
                    version,
                    crc: 0,
                }
            } else {
                let s = k.objs.snap[(x - l.nodes as u64) as usize];
                DirEntry {
                    space: Space::Page,
                    oid: s.oid,
                    version: s.version,
                    crc: s.crc,
                }
            };
        }
        let f = FrameNumber(k.store.w.frames[1 + d as usize]);
        phys::with_frame_mut(f, |b| ckpt::encode_dir_block(generation, &entries[..n], b));
    }
}

/// Writes the root: the commit of the checkpoint, or its migration.
fn write_root(k: &mut Kernel, migrated: bool) {
    let Some(j) = k.store.w.free_job() else {
        return;
    };
    if slots(k) == 0 || spare_frames(k) == 0 {
        return;
    }
    let mut r = k.store.root;
    r.generation += 1;
    if migrated {
        r.migrated = true;
    } else {
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
    let f = take(k);
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
    job.frames[0] = f.0;
    job.nframes = 1;
}

/// The checkpoint is on disk: statistics, waiters, and the snapshot's
/// objects become evictable (the directory now finds them in the log).
fn committed(k: &mut Kernel) {
    super::journal::committed(k);
    let w = &k.store.w;
    let l = w.layout;
    k.store.stats = super::CkptStats {
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
        let _ = k.pool.free(FrameNumber(k.store.w.frames[i]));
    }
    for x in 0..l.pages as usize {
        let s = k.objs.snap[x];
        let e = &mut k.objs.pages[s.slot as usize];
        if e.used && e.oid == s.oid {
            e.insnap = false;
        }
    }
    k.objs.snap_len = 0;
    k.objs.snapshot_nodes_written();
    super::checkpoint_committed(k);
    if k.store.trace {
        kprintln!("ckpt: migrating gen={}", k.store.w.generation);
    }
}

/// The checkpoint is home: the log is free and reads go home again.
fn migrated(k: &mut Kernel) {
    if k.store.trace {
        kprintln!("ckpt: migrated gen={}", k.store.w.generation);
    }
    if let Some(dir) = k.store.dir.take() {
        k.store.dir_slots = Some(dir.into_slots());
    }
    super::checkpoint_migrated(k);
}

/// A request of job `j` completed.
fn completed(k: &mut Kernel, j: usize) {
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
                if s.bounced {
                    give(k, FrameNumber(s.frame));
                } else {
                    let _ = k.pool.free(FrameNumber(s.frame));
                }
                k.objs.snap[x].frame = 0;
                k.objs.snap[x].written = true;
            }
            finish(k, j);
        }
        Kind::Single => {
            if let Some(r) = k.store.pending_root.take() {
                k.store.root = r;
                if k.store.w.phase == Phase::Commit {
                    k.store.commits_this_boot += 1;
                    if k.config.ckpt_halt == k.store.commits_this_boot {
                        kprintln!(
                            "ckpt: halted after writing the commit root of gen={} (ckpt_halt)",
                            k.store.w.generation
                        );
                        crate::arch::qemu::halt_forever();
                    }
                }
            }
            let job = k.store.w.jobs[j];
            for f in &job.frames[..job.nframes] {
                give(k, FrameNumber(*f));
            }
            finish(k, j);
            k.store.w.next = u64::MAX;
        }
        Kind::Home { first, n, writing } => {
            if writing {
                release(k, j);
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
                release(k, j);
            } else {
                merge_versions(k, j, first, n);
                k.store.reserved -= 1;
                let f = FrameNumber(k.store.w.jobs[j].frames[0]);
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
                merge_nodes(k, j, block, first, n);
                k.store.reserved -= 1;
                let f = FrameNumber(k.store.w.jobs[j].frames[0]);
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
    for f in &job.frames[..job.nframes] {
        give(k, FrameNumber(*f));
    }
    finish(k, j);
}

/// Directory entry `x` of the committed checkpoint.
fn entry(k: &Kernel, x: u64) -> Option<Found> {
    k.store.dir.as_ref()?.get(x as usize)
}

/// Issues migration jobs for copy `copy` (copy 0 also moves the pages).
/// The directory is sorted: pages (by oid), then nodes (by oid). `next`
/// walks it three times in copy 0 (pages, versions, nodes) and twice in
/// copy 1; `u64::MAX - 1` means done.
fn issue_migration(k: &mut Kernel, copy: u8) -> bool {
    let Some(total) = k.store.dir.as_ref().map(|d| d.len() as u64) else {
        k.store.w.next = u64::MAX - 1;
        return false;
    };
    let pages = k.store.w.layout.pages as u64;
    // Passes: 0 pages home (copy 0 only), 1 version blocks, 2 node blocks.
    let (pass, x) = (k.store.w.next >> 48, k.store.w.next & ((1 << 48) - 1));
    if k.store.w.next == u64::MAX - 1 {
        return false;
    }
    let next_pass = |k: &mut Kernel, p: u64| {
        k.store.w.next = if p > 2 { u64::MAX - 1 } else { p << 48 };
    };
    if pass == 0 && copy == 1 {
        next_pass(k, 1);
        return true;
    }
    let end = if pass == 2 { total } else { pages };
    let begin = if pass == 2 { pages } else { 0 };
    let x = x.max(begin);
    if x >= end {
        next_pass(k, pass + 1);
        return true;
    }
    if slots(k) < 3 {
        return false;
    }
    let Some(j) = k.store.w.free_job() else {
        return false;
    };
    let g = k.store.root.geometry;
    let start = k.store.root.ckpt_start;
    match pass {
        0 => {
            // Up to JOB_FRAMES pages: read each from the log.
            // n reads now and n writes when they complete.
            let n = ((end - x) as usize).min(JOB_FRAMES).min(slots(k) / 2);
            if spare_frames(k) < n {
                return false;
            }
            k.store.reserved += n;
            for i in 0..n {
                let Some(e) = entry(k, x + i as u64) else {
                    return false;
                };
                let f = take(k);
                k.store.w.jobs[j].frames[i] = f.0;
                k.store.w.jobs[j].nframes = i + 1;
                if !submit(k, j, Op::Read, start + e.block, &[f]) {
                    fail(k, "cannot read the log");
                    return false;
                }
            }
            k.store.w.jobs[j].kind = Kind::Home {
                first: x as u32,
                n: n as u32,
                writing: false,
            };
            k.store.w.next = x + n as u64;
        }
        1 => {
            // One version block: the run of pages whose versions it holds.
            let Some(e0) = entry(k, x) else { return false };
            let (vb, _) = versions::version_block_of(e0.oid);
            let mut n = 1u64;
            while x + n < end
                && entry(k, x + n).is_some_and(|e| versions::version_block_of(e.oid).0 == vb)
            {
                n += 1;
            }
            if !read_both(k, j, g.version_block(vb, 0), g.version_block(vb, 1)) {
                return false;
            }
            k.store.reserved += 1;
            k.store.w.jobs[j].kind = Kind::Versions {
                block: vb,
                first: x as u32,
                n: n as u32,
                copy,
                writing: false,
            };
            k.store.w.next = (1 << 48) | (x + n);
        }
        _ => {
            // One node home block: both copies plus the log blocks holding
            // the checkpoint's records for it.
            let Some(e0) = entry(k, x) else { return false };
            let hb = e0.oid / NODES_PER_BLOCK;
            let mut n = 1u64;
            while x + n < end && entry(k, x + n).is_some_and(|e| e.oid / NODES_PER_BLOCK == hb) {
                n += 1;
            }
            if spare_frames(k) < 2 + n as usize || slots(k) < 3 + n as usize {
                return false;
            }
            k.store.reserved += 1;
            let b0 = Some(g.node_area + hb);
            let b1 = Some(g.node_area + g.node_blocks + hb);
            if !read_both(k, j, b0, b1) {
                return false;
            }
            for i in 0..n {
                let Some(e) = entry(k, x + i) else {
                    return false;
                };
                let f = take(k);
                let job = &mut k.store.w.jobs[j];
                job.frames[job.nframes] = f.0;
                job.nframes += 1;
                if !submit(k, j, Op::Read, start + e.block, &[f]) {
                    fail(k, "cannot read the log");
                    return false;
                }
            }
            k.store.w.jobs[j].kind = Kind::Nodes {
                block: hb,
                first: x as u32,
                n: n as u32,
                copy,
                writing: false,
            };
            k.store.w.next = (2 << 48) | (x + n);
        }
    }
    true
}

/// Starts reading blocks `a` and `b` into the first two frames of job `j`.
fn read_both(k: &mut Kernel, j: usize, a: Option<u64>, b: Option<u64>) -> bool {
    let (Some(a), Some(b)) = (a, b) else {
        fail(k, "a home outside the disk");
        return false;
    };
    if spare_frames(k) < 2 {
        return false;
    }
    for (i, blk) in [a, b].into_iter().enumerate() {
        let f = take(k);
        k.store.w.jobs[j].frames[i] = f.0;
        k.store.w.jobs[j].nframes = i + 1;
        if !submit(k, j, Op::Read, blk, &[f]) {
            fail(k, "cannot read a home block");
            return false;
        }
    }
    true
}

/// Pages read from the log: check each and write it home.
fn home_writes(k: &mut Kernel, j: usize, first: u32, n: u32) {
    for i in 0..n as usize {
        let Some(e) = entry(k, first as u64 + i as u64) else {
            return fail(k, "directory changed during migration");
        };
        let f = FrameNumber(k.store.w.jobs[j].frames[i]);
        if phys::with_frame(f, |b| crate::arch::crc32c::crc32c(b)) != e.crc {
            kprintln!(
                "ckpt: page {} of checkpoint {} fails its checksum in the log",
                e.oid,
                k.store.w.generation
            );
            return fail(k, "a damaged log block");
        }
        let Some(home) = k.store.root.geometry.page_home(e.oid) else {
            return fail(k, "a page outside the disk");
        };
        k.store.reserved -= 1;
        if !submit(k, j, Op::Write, home, &[f]) {
            return fail(k, "cannot write a page home");
        }
    }
    k.store.w.jobs[j].kind = Kind::Home {
        first,
        n,
        writing: true,
    };
}

/// Merges the versions of directory entries `first..first+n` into the
/// valid copy of their version block (in frame 0 of job `j`).
fn merge_versions(k: &mut Kernel, j: usize, first: u32, n: u32) {
    let (f0, f1) = (
        FrameNumber(k.store.w.jobs[j].frames[0]),
        FrameNumber(k.store.w.jobs[j].frames[1]),
    );
    let pick = phys::with_frame(f0, |a| phys::with_frame(f1, |b| versions::pick(a, b)));
    match pick {
        Ok(Some(0)) => {}
        Ok(Some(_)) => phys::copy_frame(f1, f0),
        Ok(None) => phys::zero_frame(f0),
        Err(_) => {
            kprintln!("ckpt: both copies of a version block are damaged; rebuilding it from zero");
            phys::zero_frame(f0);
        }
    }
    let mut list = [(0usize, 0u32); JOB_FRAMES * 64];
    let mut m = 0;
    for i in 0..n as u64 {
        if let Some(e) = entry(k, first as u64 + i) {
            if m < list.len() {
                list[m] = (versions::version_block_of(e.oid).1, e.version);
                m += 1;
            }
        }
    }
    phys::with_frame_mut(f0, |b| {
        for &(idx, v) in &list[..m] {
            versions::set_version(b, idx, v);
        }
    });
}

/// Builds the new contents of node home block `block` in frame 0 of job
/// `j`: the checkpoint's records (read from the log into frames 2..),
/// and for the other records the valid one of the two copies.
fn merge_nodes(k: &mut Kernel, j: usize, block: u64, first: u32, n: u32) {
    let job = k.store.w.jobs[j];
    let (f0, f1) = (FrameNumber(job.frames[0]), FrameNumber(job.frames[1]));
    for r in 0..NODES_PER_BLOCK as usize {
        let oid = block * NODES_PER_BLOCK + r as u64;
        let at = r * NODE_RECORD;
        let mut rec = [0u8; NODE_RECORD];
        let from_log = (0..n as usize).find_map(|i| {
            let e = entry(k, first as u64 + i as u64)?;
            (e.oid == oid).then_some((i, e.offset))
        });
        if let Some((i, off)) = from_log {
            phys::read_frame(FrameNumber(job.frames[2 + i]), off, &mut rec);
        } else {
            phys::read_frame(f0, at, &mut rec);
            if matches!(node::decode(&rec, oid), Record::Damaged) {
                let mut other = [0u8; NODE_RECORD];
                phys::read_frame(f1, at, &mut other);
                if matches!(node::decode(&other, oid), Record::Valid(_)) {
                    rec = other;
                }
            }
        }
        phys::write_frame(f0, at, &rec);
    }
}
