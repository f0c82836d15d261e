//! Checkpoint and journal benchmarks, run under `-icount` (TSC ticks are
//! guest instructions). For 64, 16 and 1 MiB of dirty memory, in that
//! order (so the 1 MiB pause is measured with 64 MiB of clean memory
//! present): dirty the pages, take a checkpoint, read the kernel's
//! statistics of it; rows `ckpt_pause_<n>mib` (the stop-the-world pause)
//! and `ckpt_commit_16mib` (pause to commit), medians of [`ROUNDS`]. Then
//! `journal_commit_page`: one journal commit of a page, measured around
//! the invocation.
//!
//! Keys: 1 console, 2 sleep, 3 checkpoint, 4 journal, 5 a read-write page
//! key to heap page [`JOURNAL_PAGE`] (`heap-page:<me>:16384`). Heap:
//! 16385 pages. Argument: 0 for every row; `n` > 0 for only the
//! `ckpt_pause_<n>mib` row (n ≤ 64).
//!
//! Lines: `BENCH name=.. instructions=.. iterations=.. overhead=..` (the
//! format `stet-harness bench` collects), `ckptbench: done`, or
//! `ckptbench: FAILED <why>`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::Ordering;
use stet_rt::abi::code;
use stet_rt::cpu::rdtsc;
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

fn median(s: &mut [u64]) -> u64 {
    s.sort_unstable();
    s[s.len() / 2]
}

fn report(name: &str, instructions: u64, iterations: usize, overhead: u64) {
    println!(
        "BENCH name={name} instructions={instructions} iterations={iterations} overhead={overhead}"
    );
}

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

/// Dirties `mib` MiB [`ROUNDS`] times, checkpointing each time; returns
/// the median pause and time to commit, or an error line's return value.
fn measure(mib: u64) -> Result<(u64, u64), i64> {
    let pages = mib * 256;
    // Warm-up: the pages exist and are clean when the rounds start.
    dirty(pages, 1);
    checkpoint::take_retrying(CHECKPOINT).map_err(|c| fail("checkpoint take", c))?;
    let mut pause = [0u64; ROUNDS];
    let mut commit = [0u64; ROUNDS];
    for r in 0..ROUNDS {
        dirty(pages, r as u64 + 2);
        let t = checkpoint::take_retrying(CHECKPOINT).map_err(|c| fail("checkpoint take", c))?;
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
        pause[r] = s.pause_ticks;
        commit[r] = s.commit_ticks;
    }
    Ok((median(&mut pause), median(&mut commit)))
}

fn rdtsc_overhead() -> u64 {
    let mut s = [0u64; 1000];
    for v in s.iter_mut() {
        let t0 = rdtsc();
        let t1 = rdtsc();
        *v = t1 - t0;
    }
    median(&mut s)
}

fn journal_commit(overhead: u64) -> Result<(), i64> {
    let heap = heap_words(JOURNAL_PAGE + 1);
    let word = &heap[JOURNAL_PAGE as usize * PAGE_WORDS];
    let mut s = [0u64; JOURNAL_N];
    for i in 0..JOURNAL_WARMUP + JOURNAL_N {
        word.store(i as u64 + 1, Ordering::Relaxed);
        let t0 = rdtsc();
        let r = journal::page(JOURNAL, JOURNAL_PAGE_KEY);
        let t1 = rdtsc();
        match r {
            Ok(_) if i >= JOURNAL_WARMUP => s[i - JOURNAL_WARMUP] = t1 - t0,
            Ok(_) => {}
            Err(c) => return Err(fail("journal page", c)),
        }
    }
    report(
        "journal_commit_page",
        median(&mut s).saturating_sub(overhead),
        JOURNAL_N,
        overhead,
    );
    Ok(())
}

fn run(arg: u64) -> Result<(), i64> {
    if arg > MAX_MIB {
        println!("ckptbench: FAILED argument {arg} MiB (at most {MAX_MIB})");
        return Err(1);
    }
    // Only the checkpoints asked for: a periodic one would be joined.
    checkpoint::set_period(CHECKPOINT, 0).map_err(|c| fail("checkpoint set_period", c))?;
    let overhead = rdtsc_overhead();
    let all = [64, 16, 1];
    let one = [arg];
    let sizes: &[u64] = if arg == 0 { &all } else { &one };
    for &mib in sizes {
        let (pause, commit) = measure(mib)?;
        println!(
            "BENCH name=ckpt_pause_{mib}mib instructions={pause} iterations={ROUNDS} overhead=0"
        );
        if mib == 16 {
            report("ckpt_commit_16mib", commit, ROUNDS, 0);
        }
    }
    if arg == 0 {
        journal_commit(overhead)?;
    }
    Ok(())
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
