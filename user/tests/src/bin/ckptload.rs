//! The power-cut workload: rewrites 1 MiB of its heap epoch after epoch so
//! that its memory obeys an exact invariant at every instruction
//! (`stet_storecheck::load`), journals a counter once per epoch and asks
//! for a checkpoint every few epochs. `ckptcheck` verifies the invariant
//! after every restart.
//!
//! Keys: 1 console, 2 sleep, 3 checkpoint, 4 journal, 5 a read-write page
//! key to heap page `JOURNAL_PAGE` (`heap-page:<me>:1`). Heap: at least
//! `HEAP_PAGES` (258) pages. Argument: `stet_storecheck::args::LoadArgs`
//! (epochs to run, 0 forever; epochs between checkpoints).
//!
//! Lines (each a promise, see `stet_storecheck::promise`):
//! `load: journal J=<counter>` after the journal made the counter durable,
//! `load: commit E=<epoch> G=<generation>` after a checkpoint whose snapshot
//! follows the moment the epoch was `E` committed, `load: done` after the
//! last epoch (then it sleeps forever), `load: FAILED <why>` if a key
//! answers with an error other than `RESTARTED`.
#![no_std]
#![no_main]

use core::sync::atomic::{AtomicU64, Ordering};
use stet_rt::abi::code;
use stet_rt::kernel::{now_ns, sleep_until};
use stet_rt::mem::{heap_words, PAGE_WORDS};
use stet_rt::{checkpoint, journal, println};
use stet_storecheck::args::LoadArgs;
use stet_storecheck::load::{
    data_word, signature_word, Progress, COUNTER, DONE, FIRST_DATA_PAGE, HEADER_PAGE, HEAP_PAGES,
    JOURNALED, JOURNAL_PAGE,
};

const CHECKPOINT: u8 = 3;
const JOURNAL: u8 = 4;
const JOURNAL_PAGE_KEY: u8 = 5;

fn page(heap: &'static [AtomicU64], p: u64) -> &'static [AtomicU64] {
    let at = p as usize * PAGE_WORDS;
    &heap[at..at + PAGE_WORDS]
}

/// Reports that `what` failed with code `c`, then sleeps for good.
fn fail(what: &str, c: u64) -> ! {
    println!("load: FAILED {what} answered {} ({c})", code::name(c));
    sleep_forever()
}

fn sleep_forever() -> ! {
    loop {
        // A restart may answer early (RESTARTED): just sleep again.
        sleep_until(now_ns().saturating_add(10_000_000_000));
    }
}

/// Makes the counter one more and durable; returns the durable value.
fn journal_counter(jpage: &[AtomicU64]) -> u64 {
    // One locked instruction: a snapshot or a restart sees the old or the
    // new value, never a mix. Read from memory, not from a register, since
    // a restart may have put a newer journaled page back under us.
    jpage[COUNTER].fetch_add(1, Ordering::SeqCst);
    if let Err(c) = journal::page_retrying(JOURNAL, JOURNAL_PAGE_KEY) {
        fail("journal", c);
    }
    jpage[COUNTER].load(Ordering::SeqCst)
}

/// Asks for a checkpoint whose snapshot follows this call; returns its
/// generation.
fn commit() -> u64 {
    // TAKE may join a checkpoint whose snapshot was taken before the call,
    // and one checkpoint is in flight at a time: the second TAKE's snapshot
    // is taken after the first one committed, so after this call.
    let mut g = 0;
    for _ in 0..2 {
        match checkpoint::take_retrying(CHECKPOINT) {
            Ok(t) => g = t.generation,
            Err(c) => fail("checkpoint take", c),
        }
    }
    g
}

fn main(arg: u64) -> i64 {
    let args = LoadArgs::decode(arg);
    let heap = heap_words(HEAP_PAGES);
    let header = page(heap, HEADER_PAGE);
    let jpage = page(heap, JOURNAL_PAGE);
    // The journal page's signature, before its counter first moves (the
    // checker accepts a partial signature only while the counter is 0).
    for (w, v) in jpage.iter().enumerate().skip(1) {
        v.store(signature_word(w), Ordering::Relaxed);
    }
    core::sync::atomic::compiler_fence(Ordering::SeqCst);
    let mut epochs_run = 0u64;
    loop {
        let done = header[DONE].load(Ordering::Relaxed);
        let at = Progress::of(done);
        let data = page(heap, FIRST_DATA_PAGE + at.page);
        for (w, v) in data.iter().enumerate() {
            v.store(data_word(at.epoch, at.page, w), Ordering::Relaxed);
        }
        // Release: the page's stores come before the header's, also for
        // the compiler. One aligned store: the header moves atomically.
        header[DONE].store(done + 1, Ordering::Release);
        if !Progress::epoch_complete(done + 1) {
            continue;
        }
        epochs_run += 1;
        let j = journal_counter(jpage);
        header[JOURNALED].store(j, Ordering::Release);
        println!("load: journal J={j}");
        if epochs_run.is_multiple_of(args.take_every) {
            let e = Progress::of(done + 1).epoch;
            let g = commit();
            println!("load: commit E={e} G={g}");
        }
        if epochs_run == args.epochs {
            println!("load: done");
            sleep_forever();
        }
    }
}

stet_rt::main!(main);
