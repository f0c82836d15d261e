//! Checkpoint and journal benchmarks (`make bench`; docs/STORE.md
//! "Benchmarks"). The argument chooses the run:
//!
//! * 0, under `-icount` (TSC ticks are guest instructions): for 64, 16 and
//!   1 MiB of dirty heap, in that order (so the 1 MiB pause is measured
//!   with 64 MiB of clean memory present), [`ROUNDS`] times each: wait
//!   until the writer is idle (the previous checkpoint has migrated),
//!   spin until a timer tick (so the ticks that fall in the measured work
//!   fall at the same instructions in every run, and the meter is always
//!   charged), dirty the pages, take a checkpoint and read the kernel's
//!   statistics of it. Rows
//!   `ckpt_pause_<n>mib` (the stop-the-world pause, STATS `w2`) and
//!   `ckpt_commit_16mib` (the kernel's work to write and commit it, INFO
//!   `w3`), medians. Then `journal_commit_page`: the median of what
//!   [`JOURNAL_N`] journal records cost the kernel (the PAGE answer's
//!   `w1`).
//! * 1, the restart benchmark's two boots: dirty 64 MiB, take a
//!   checkpoint. Without a restart it prints `ckptbench: stored …` and
//!   ends (the kernel exits once the checkpoint has migrated); resumed by
//!   a restart from that checkpoint (the kernel prints the row), it prints
//!   `ckptbench: resumed …`.
//! * 2, without `-icount` (TSC ticks follow the host's clock): [`RAW_ROUNDS`]
//!   times, a checkpoint of 64 MiB dirty (pause to commit, STATS `w3`) and
//!   a raw write of as many blocks (RAW_WRITE); row
//!   `ckpt_write_pct_of_raw` = the median of 100 × raw ticks / checkpoint
//!   ticks (the checkpoint's throughput as a percentage of the raw
//!   write's).
//!
//! Keys: 1 console, 2 sleep, 3 checkpoint, 4 journal, 5 a read-write page
//! key to heap page [`JOURNAL_PAGE`] (`heap-page:<me>:16384`). Heap:
//! 16385 pages.
//!
//! Lines: `BENCH name=.. instructions=.. iterations=.. overhead=..` (or
//! `percent=..`: the format `stet-harness bench` collects), `ckptbench:
//! done`, or `ckptbench: FAILED <why>`.
#![no_std]
#![no_main]

use core::sync::atomic::Ordering;
use stet_rt::abi::code;
use stet_rt::bench::median;
use stet_rt::kernel::now_ns;
use stet_rt::mem::{heap_words, PAGE_WORDS};
use stet_rt::{checkpoint, journal, println};

const CHECKPOINT: u8 = 3;
const JOURNAL: u8 = 4;
const JOURNAL_PAGE_KEY: u8 = 5;

/// Most dirty memory measured, in MiB.
const MAX_MIB: u64 = 64;
/// Heap page journaled (after the data pages).
const JOURNAL_PAGE: u64 = MAX_MIB * 256;
/// Checkpoints measured per size.
const ROUNDS: usize = 3;
/// Journal commits measured, after [`JOURNAL_WARMUP`] unmeasured ones.
const JOURNAL_N: usize = 50;
const JOURNAL_WARMUP: usize = 5;
/// Checkpoint and raw-write pairs of the throughput row.
const RAW_ROUNDS: usize = 7;

fn fail(what: &str, c: u64) -> i64 {
    println!("ckptbench: FAILED {what}: {} ({c})", code::name(c));
    1
}

/// Writes one word in each of the first `pages` heap pages.
fn dirty(pages: u64, round: u64) {
    let heap = heap_words(pages);
    for page in heap.chunks_exact(PAGE_WORDS) {
        page[0].store(round, Ordering::Relaxed);
    }
}

/// Waits until the checkpoint writer is idle.
fn quiet() -> Result<(), i64> {
    checkpoint::wait_idle(CHECKPOINT).map_err(|c| fail("checkpoint wait_idle", c))
}

/// Spins until a timer tick interrupts this domain: the work that follows
/// then meets the timer at the same instructions in every run, and the
/// tick has charged the meter, so its node is dirty in every checkpoint
/// (a tick that came due while the kernel finished the last migration
/// would otherwise charge it, or not, as the host's disk decides).
fn tick() {
    let t = now_ns();
    while now_ns() == t {}
}

/// Dirties `pages` pages, takes a checkpoint, checks that it wrote them
/// and returns its statistics.
fn checkpoint_of(pages: u64, round: u64) -> Result<checkpoint::Stats, i64> {
    dirty(pages, round);
    let t = checkpoint::take(CHECKPOINT).map_err(|c| fail("checkpoint take", c))?;
    let s = checkpoint::stats(CHECKPOINT).map_err(|c| fail("checkpoint stats", c))?;
    if s.generation != t.generation {
        println!(
            "ckptbench: FAILED stats of generation {} after taking {}",
            s.generation, t.generation
        );
        return Err(1);
    }
    if (s.pages as u64) < pages {
        println!(
            "ckptbench: FAILED checkpoint {} wrote {} pages, {pages} were dirty",
            s.generation, s.pages
        );
        return Err(1);
    }
    Ok(s)
}

/// Dirties `mib` MiB [`ROUNDS`] times, checkpointing each time; returns
/// the median pause and the median work to write and commit.
fn measure(mib: u64) -> Result<(u64, u64), i64> {
    let pages = mib * 256;
    // Warm-up: the pages exist and are clean when the rounds start.
    quiet()?;
    checkpoint_of(pages, 1)?;
    let mut pause = [0u64; ROUNDS];
    let mut work = [0u64; ROUNDS];
    for r in 0..ROUNDS {
        quiet()?;
        tick();
        let s = checkpoint_of(pages, r as u64 + 2)?;
        let i = checkpoint::info(CHECKPOINT).map_err(|c| fail("checkpoint info", c))?;
        pause[r] = s.pause_ticks;
        work[r] = i.work_ticks;
        println!(
            "ckptbench: {mib} MiB round {r}: checkpoint {} of {} pages, {} nodes: pause {}, work {}",
            s.generation, s.pages, s.nodes, s.pause_ticks, i.work_ticks
        );
    }
    Ok((median(&mut pause), median(&mut work)))
}

fn journal_commit() -> Result<(), i64> {
    let heap = heap_words(JOURNAL_PAGE + 1);
    let word = &heap[JOURNAL_PAGE as usize * PAGE_WORDS];
    let mut s = [0u64; JOURNAL_N];
    quiet()?;
    for i in 0..JOURNAL_WARMUP + JOURNAL_N {
        word.store(i as u64 + 1, Ordering::Relaxed);
        match journal::page_cost(JOURNAL, JOURNAL_PAGE_KEY) {
            Ok((_, cost)) if i >= JOURNAL_WARMUP => s[i - JOURNAL_WARMUP] = cost,
            Ok(_) => {}
            Err(c) => return Err(fail("journal page", c)),
        }
    }
    let m = median(&mut s);
    println!(
        "ckptbench: journal records cost {} to {} (sorted)",
        s[0],
        s[JOURNAL_N - 1]
    );
    println!("BENCH name=journal_commit_page instructions={m} iterations={JOURNAL_N} overhead=0");
    Ok(())
}

/// Argument 0: the rows measured under `-icount`.
fn instruction_rows() -> Result<(), i64> {
    for mib in [64, 16, 1] {
        let (pause, work) = measure(mib)?;
        println!(
            "BENCH name=ckpt_pause_{mib}mib instructions={pause} iterations={ROUNDS} overhead=0"
        );
        if mib == 16 {
            println!(
                "BENCH name=ckpt_commit_16mib instructions={work} iterations={ROUNDS} overhead=0"
            );
        }
    }
    journal_commit()
}

/// Argument 1: 64 MiB of state for the restart benchmark.
fn restart_state() -> Result<(), i64> {
    dirty(MAX_MIB * 256, 1);
    let t = checkpoint::take(CHECKPOINT).map_err(|c| fail("checkpoint take", c))?;
    if t.restarted {
        println!("ckptbench: resumed from checkpoint {}", t.generation);
    } else {
        let s = checkpoint::stats(CHECKPOINT).map_err(|c| fail("checkpoint stats", c))?;
        println!(
            "ckptbench: stored checkpoint {} ({} pages, {} nodes)",
            s.generation, s.pages, s.nodes
        );
    }
    Ok(())
}

/// Argument 2: the checkpoint writer's throughput against a raw write.
fn write_throughput() -> Result<(), i64> {
    let pages = MAX_MIB * 256;
    // Warm-up: the pages exist, and the log's blocks were written once.
    quiet()?;
    checkpoint_of(pages, 1)?;
    quiet()?;
    checkpoint::raw_write(CHECKPOINT, 0).map_err(|c| fail("checkpoint raw_write", c))?;
    let mut pct = [0u64; RAW_ROUNDS];
    for (r, p) in pct.iter_mut().enumerate() {
        quiet()?;
        let s = checkpoint_of(pages, r as u64 + 2)?;
        let i = checkpoint::info(CHECKPOINT).map_err(|c| fail("checkpoint info", c))?;
        quiet()?;
        let (raw, blocks) =
            checkpoint::raw_write(CHECKPOINT, 0).map_err(|c| fail("checkpoint raw_write", c))?;
        *p = raw * 100 / s.commit_ticks.max(1);
        println!(
            "ckptbench: round {r}: {blocks} blocks: checkpoint {} ticks (pause {}, kernel work {}), raw write {raw} ticks: {p}%",
            s.commit_ticks, s.pause_ticks, i.work_ticks
        );
    }
    println!(
        "BENCH name=ckpt_write_pct_of_raw percent={} iterations={RAW_ROUNDS} overhead=0",
        median(&mut pct)
    );
    Ok(())
}

fn run(arg: u64) -> Result<(), i64> {
    // Only the checkpoints asked for: a periodic one would be joined.
    checkpoint::set_period(CHECKPOINT, 0).map_err(|c| fail("checkpoint set_period", c))?;
    match arg {
        0 => instruction_rows(),
        1 => restart_state(),
        2 => write_throughput(),
        _ => {
            println!("ckptbench: FAILED argument {arg} (0, 1 or 2)");
            Err(1)
        }
    }
}

fn main(arg: u64) -> i64 {
    match run(arg) {
        Ok(()) => {
            println!("ckptbench: done");
            0
        }
        Err(c) => c,
    }
}

stet_rt::main!(main);
