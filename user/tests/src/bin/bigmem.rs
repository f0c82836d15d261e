//! Larger than RAM: writes a pattern (`stet_storecheck::big`) over every
//! word of its heap — 256 MiB by default, four times the RAM of the test
//! that runs it — then reads all of it back and verifies every word. The
//! kernel must page: RAM is only a cache of the store.
//!
//! Keys: 1 console. Heap: at least the pages it covers. Argument: pages to
//! cover (0: 65536).
//!
//! Lines: `bigmem: progress write|verify <n>/<total>` every 32 MiB,
//! `bigmem: wrote <n> pages`, then `bigmem: verified <n> pages` or, for
//! the first few bad words, `bigmem: FAILED page <p> word <w> expected
//! <x> found <y>` and a count. It then returns (the domain goes idle).
#![no_std]
#![no_main]

use core::sync::atomic::Ordering;
use stet_rt::mem::{heap_words, PAGE_WORDS};
use stet_rt::println;
use stet_storecheck::args::big_pages;
use stet_storecheck::big::word;

/// Pages between progress lines (32 MiB).
const PROGRESS: u64 = 8192;
/// Bad words reported one by one.
const REPORTED: u64 = 4;

fn main(arg: u64) -> i64 {
    let pages = big_pages(arg);
    let heap = heap_words(pages);
    for (p, page) in heap.chunks_exact(PAGE_WORDS).enumerate() {
        for (w, v) in page.iter().enumerate() {
            v.store(word(p as u64, w), Ordering::Relaxed);
        }
        let n = p as u64 + 1;
        if n.is_multiple_of(PROGRESS) && n < pages {
            println!("bigmem: progress write {n}/{pages}");
        }
    }
    println!("bigmem: wrote {pages} pages");
    let mut bad = 0u64;
    let mut bad_pages = 0u64;
    for (p, page) in heap.chunks_exact(PAGE_WORDS).enumerate() {
        let before = bad;
        for (w, v) in page.iter().enumerate() {
            let want = word(p as u64, w);
            let found = v.load(Ordering::Relaxed);
            if found != want {
                if bad < REPORTED {
                    println!(
                        "bigmem: FAILED page {p} word {w} expected {want:#x} found {found:#x}"
                    );
                }
                bad += 1;
            }
        }
        if bad > before {
            bad_pages += 1;
        }
        let n = p as u64 + 1;
        if n.is_multiple_of(PROGRESS) && n < pages {
            println!("bigmem: progress verify {n}/{pages}");
        }
    }
    if bad > 0 {
        println!("bigmem: FAILED {bad} bad words in {bad_pages} pages");
        return 1;
    }
    println!("bigmem: verified {pages} pages");
    0
}

stet_rt::main!(main);
