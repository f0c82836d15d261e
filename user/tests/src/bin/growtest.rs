//! Runs with no stack and no heap: every page it touches is made by its
//! segment keeper on the first touch. Recurses deeply (stack growth),
//! writes and checks a heap pattern, then touches an address outside both
//! areas, which the keeper refuses.
#![no_std]
#![no_main]

use stet_rt::abi::layout::{HEAP_SIZE, HEAP_START};
use stet_rt::mem::Heap;
use stet_rt::println;

fn recurse(n: u64) -> u64 {
    let pad = core::hint::black_box([n as u8; 512]);
    if n == 0 {
        return pad[0] as u64;
    }
    recurse(n - 1) + pad[511] as u64
}

fn main(_arg: u64) -> i64 {
    let depth = 400; // ~ 400 × 0.5 KiB and frames: over 200 KiB of stack
    let s = recurse(depth);
    println!("growtest: recursion of depth {depth} done ({s})");
    const PAGES: u64 = 1024; // 4 MiB of heap
    let heap = Heap::claim();
    for p in 0..PAGES {
        heap.store_byte(p * 4096 + (p % 4096), (p * 7) as u8);
    }
    let mut bad = 0;
    for p in 0..PAGES {
        if heap.load_byte(p * 4096 + (p % 4096)) != (p * 7) as u8 {
            bad += 1;
        }
        if heap.load_byte(p * 4096 + ((p + 1) % 4096)) != 0 {
            bad += 1;
        }
    }
    println!("growtest: heap of {PAGES} pages checked, {bad} bad");
    let outside = HEAP_START + HEAP_SIZE;
    println!("growtest: touching {outside:#x}, outside the heap");
    heap.store_byte(HEAP_SIZE, 1);
    println!("growtest: FAILED, the store outside the heap went through");
    1
}

stet_rt::main!(main);
