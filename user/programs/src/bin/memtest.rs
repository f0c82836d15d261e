//! Demand-zero memory: heap pages appear zeroed on first touch, keep what is
//! written, and read as zero again after `release`.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use stet_rt::abi::layout::HEAP_START;
use stet_rt::cpu::{load_byte, store_byte};
use stet_rt::{println, sys};

const PAGES: u64 = 64;

fn addr(p: u64) -> u64 {
    HEAP_START + p * 4096 + p
}

fn main(_slot: u64) -> i64 {
    for p in 0..PAGES {
        if load_byte(addr(p)) != 0 {
            println!("memtest: FAILED, fresh page {p} is not zero");
            return 1;
        }
        store_byte(addr(p), p as u8 + 1);
    }
    for p in 0..PAGES {
        if load_byte(addr(p)) != p as u8 + 1 {
            println!("memtest: FAILED, page {p} lost its value");
            return 1;
        }
    }
    let freed = sys::release(HEAP_START, PAGES * 4096);
    for p in 0..PAGES {
        if load_byte(addr(p)) != 0 {
            println!("memtest: FAILED, released page {p} is not zero");
            return 1;
        }
    }
    println!("memtest: {PAGES} heap pages written and verified; release freed {freed}; all read zero again");
    0
}

stet_rt::main!(main);
