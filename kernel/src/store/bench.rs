//! Benchmark measurements of the store (`make bench` runs them,
//! docs/STORE.md "Benchmarks" says what each row means). Both are off
//! unless the kernel command line asks for them, and only the test kernel
//! (the `testing` feature) has them: a user's kernel has `nobench.rs`.
//!
//! * `bench_restart=N`: after a restart, the TSC ticks from the kernel's
//!   first instruction (`arch::cpu::boot_tsc`) to the moment the scheduler
//!   first runs a domain (it builds that domain's page tables: a hook in
//!   `memory::ensure_tables`, off the hot paths), less the ticks spent
//!   waiting for synchronous disk
//!   requests (`Disk::spun`: what the host's disk takes, not the kernel's
//!   work), printed as `BENCH name=restart_resume_<N>mib …`.
//! * `bench_raw`: the checkpoint key's `RAW_WRITE` order, a raw sequential
//!   write over the (free) checkpoint log, to compare the checkpoint
//!   writer's throughput with the disk's. It runs only while the writer is
//!   idle, and no checkpoint starts until it has finished.

use super::idle;
use crate::arch::phys::FrameNumber;
use crate::arch::virtio_blk::Op;
use crate::arch::{cpu, phys};
use crate::invoke::message::Msg;
use crate::kernel::Kernel;
use crate::kobj::{After, Reply};
use crate::kprintln;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use stet_abi::code::Code;

/// Disk tags of the raw write's requests (above the journal's).
pub const TAG: u64 = 2 << 32;
/// Most frames in one raw request (the disk may allow fewer).
const MAX_FRAMES: usize = 256;

/// Whether the restart measurement waits for the first domain to run.
static ARMED: AtomicBool = AtomicBool::new(false);
/// Ticks `store::boot::open` took to restart (less disk waits).
static OPEN: AtomicU64 = AtomicU64::new(0);

/// The TSC and the disk's waiting ticks now (before opening the store).
pub fn mark(k: &mut Kernel) -> (u64, u64) {
    (cpu::rdtsc(), spun(k))
}

fn spun(k: &mut Kernel) -> u64 {
    k.store.disk.as_mut().map_or(0, |d| d.spun())
}

/// The system restarted from a checkpoint (`mark` was taken before the
/// store was opened): measure until the first domain runs (if asked to).
pub fn restarted(k: &mut Kernel, mark: (u64, u64)) {
    if k.config.bench_restart != 0 {
        let open = (cpu::rdtsc() - mark.0).saturating_sub(spun(k) - mark.1);
        OPEN.store(open, Ordering::Relaxed);
        ARMED.store(true, Ordering::Relaxed);
    }
}

/// A domain's page tables were just built, which the scheduler does when
/// it runs a domain that has none (every domain, first after a restart).
#[inline(always)]
pub fn resuming(k: &mut Kernel) {
    if ARMED.load(Ordering::Relaxed) {
        report_resume(k);
    }
}

#[cold]
#[inline(never)]
fn report_resume(k: &mut Kernel) {
    let t = cpu::rdtsc();
    ARMED.store(false, Ordering::Relaxed);
    let (requests, spun) = k
        .store
        .disk
        .as_mut()
        .map_or((0, 0), |d| (d.completed(), d.spun()));
    let ticks = (t - cpu::boot_tsc()).saturating_sub(spun);
    kprintln!(
        "BENCH name=restart_resume_{}mib instructions={ticks} iterations=1 overhead=0",
        k.config.bench_restart
    );
    kprintln!(
        "bench: restart: {} of them opening the store; {requests} disk requests; {spun} ticks waiting for them not counted",
        OPEN.load(Ordering::Relaxed)
    );
}

/// Where a raw write is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// None running.
    Idle,
    /// Writing blocks.
    Writing,
    /// Flushing them.
    Flushing,
    /// Finished; the result waits for its invoker.
    Done,
    /// A request failed; the invoker is told.
    Failed,
}

/// The raw write's state.
pub struct Raw {
    /// Where it is.
    pub phase: Phase,
    /// Its invoker's token (this boot's restarts, and a counter).
    id: u64,
    seq: u64,
    /// Blocks to write, blocks issued, requests in flight.
    blocks: u64,
    next: u64,
    inflight: u32,
    /// A request failed (it ends once none is in flight).
    failed: bool,
    /// Frames per request, and the frames (written again and again).
    per: usize,
    frames: [Option<FrameNumber>; MAX_FRAMES],
    /// TSC at the first request; ticks to the flush's completion.
    t0: u64,
    ticks: u64,
}

impl Raw {
    /// No raw write.
    pub const fn new() -> Raw {
        Raw {
            phase: Phase::Idle,
            id: 0,
            seq: 0,
            blocks: 0,
            next: 0,
            inflight: 0,
            failed: false,
            per: 0,
            frames: [None; MAX_FRAMES],
            t0: 0,
            ticks: 0,
        }
    }
}

impl Default for Raw {
    fn default() -> Self {
        Raw::new()
    }
}

/// Whether a raw write is using the log (no checkpoint may start).
pub fn busy(k: &Kernel) -> bool {
    matches!(k.store.bench.phase, Phase::Writing | Phase::Flushing)
}

/// The checkpoint key's `RAW_WRITE`: `w0` blocks (0: the last
/// checkpoint's extent), `w1` 0, or the token of the invoker's run when
/// it re-executes.
pub fn raw_write(k: &mut Kernel, ci: usize, m: &Msg, r: &mut Reply) -> After {
    if !k.config.bench_raw {
        r.fail(Code::NoSuchOrder);
        return After::Continue;
    }
    if !k.store.persistent() {
        r.fail(Code::IoError);
        return After::Continue;
    }
    let (want, token) = (m.w[0], m.w[1]);
    if token != 0 {
        let raw = &mut k.store.bench;
        if raw.id != token {
            // Its run was lost in a restart.
            r.fail(Code::Restarted);
            return After::Continue;
        }
        match raw.phase {
            Phase::Done => r.w = [raw.ticks, raw.blocks, 0, 0],
            Phase::Failed => r.fail(Code::IoError),
            _ => return idle::park(k, ci, want, token),
        }
        raw.phase = Phase::Idle;
        raw.id = 0;
        return After::Continue;
    }
    if k.store.bench.phase != Phase::Idle || !idle::writer_idle(k) {
        return idle::park(k, ci, want, 0);
    }
    let blocks = if want == 0 {
        k.store.root.ckpt_blocks
    } else {
        want
    };
    if blocks == 0 || blocks > k.store.root.geometry.log_blocks {
        r.fail(Code::BadValue);
        return After::Continue;
    }
    let per = k
        .store
        .disk
        .as_ref()
        .map_or(1, |d| d.max_frames())
        .min(MAX_FRAMES);
    if k.pool.free_count() < super::memory::RESERVE + per {
        r.fail(Code::NoSpace);
        return After::Continue;
    }
    let raw = &mut k.store.bench;
    for f in raw.frames.iter_mut().take(per) {
        // Counted above; a frame missing all the same makes the disk
        // refuse the request (the run fails, reported), never page 0.
        *f = k.pool.alloc();
        if let Some(b) = *f {
            phys::zero_frame(b);
        }
    }
    raw.seq += 1;
    raw.id = k.store.restarts << 32 | raw.seq;
    raw.per = per;
    raw.blocks = blocks;
    raw.next = 0;
    raw.inflight = 0;
    raw.failed = false;
    raw.phase = Phase::Writing;
    let id = raw.id;
    raw.t0 = cpu::rdtsc();
    issue(k);
    idle::park(k, ci, want, id)
}

/// Disk request slots free now, less those promised to others.
fn slots(k: &Kernel) -> usize {
    k.store
        .disk
        .as_ref()
        .map_or(0, |d| d.free_slots())
        .saturating_sub(k.store.reserved)
}

/// Issues writes while slots are free; the flush once all completed.
fn issue(k: &mut Kernel) {
    let start = k.store.root.geometry.log_start;
    let per = k.store.bench.per;
    let fs = k.store.bench.frames;
    while k.store.bench.phase == Phase::Writing && slots(k) > 0 {
        let raw = &k.store.bench;
        if raw.next >= raw.blocks {
            if raw.inflight > 0 {
                break;
            }
            if !submit(k, Op::Flush, 0, &[]) {
                return;
            }
            k.store.bench.phase = Phase::Flushing;
            break;
        }
        let n = ((raw.blocks - raw.next) as usize).min(per);
        let block = start + raw.next;
        if !submit(k, Op::Write, block, &fs[..n]) {
            return;
        }
        k.store.bench.next += n as u64;
    }
    if let Some(d) = k.store.disk.as_mut() {
        d.kick();
    }
}

fn submit(k: &mut Kernel, op: Op, block: u64, frames: &[Option<FrameNumber>]) -> bool {
    let ok = k
        .store
        .disk
        .as_mut()
        .is_some_and(|d| d.submit(op, block, frames, TAG).is_ok());
    if ok {
        k.store.bench.inflight += 1;
    } else {
        kprintln!("bench: the disk refused a raw write request");
        k.store.bench.failed = true;
        if k.store.bench.inflight == 0 {
            end(k, Phase::Failed);
        }
    }
    ok
}

/// A raw request completed (from `writer::pump`).
pub fn completed(k: &mut Kernel, ok: bool) {
    let t = cpu::rdtsc();
    let raw = &mut k.store.bench;
    if !matches!(raw.phase, Phase::Writing | Phase::Flushing) {
        return;
    }
    raw.inflight -= 1;
    if !ok && !raw.failed {
        kprintln!("bench: a raw write request failed");
        raw.failed = true;
    }
    if raw.failed {
        // The frames go back only once no request uses them.
        if raw.inflight == 0 {
            end(k, Phase::Failed);
        }
        return;
    }
    if raw.phase == Phase::Flushing {
        raw.ticks = t - raw.t0;
        return end(k, Phase::Done);
    }
    issue(k);
}

/// The raw write is over: its frames go back, its invoker and anyone
/// waiting for the log asks again, and a checkpoint asked for meanwhile
/// starts.
fn end(k: &mut Kernel, phase: Phase) {
    let per = k.store.bench.per;
    for i in 0..per {
        if let Some(f) = k.store.bench.frames[i].take() {
            let _ = k.pool.free(f);
        }
    }
    k.store.bench.per = 0;
    k.store.bench.phase = phase;
    idle::wake(k);
    if k.store.requested {
        super::request_checkpoint(k);
    }
}
