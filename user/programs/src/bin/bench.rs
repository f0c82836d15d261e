//! Benchmarks, run under `-icount` so RDTSC counts guest instructions.
//! Each row: warm up, measure every operation separately, report the median
//! minus the RDTSC overhead (also reported).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use stet_rt::abi::layout::HEAP_START;
use stet_rt::cpu::rdtsc;
use stet_rt::{println, sys};

const N: usize = 2000;
const WARMUP: usize = 200;

fn median(s: &mut [u64]) -> u64 {
    s.sort_unstable();
    s[s.len() / 2]
}

fn report(name: &str, samples: &mut [u64], overhead: u64) {
    let m = median(samples).saturating_sub(overhead);
    println!(
        "BENCH name={name} instructions={m} iterations={} overhead={overhead}",
        samples.len()
    );
}

fn rdtsc_overhead() -> u64 {
    let mut s = [0u64; N];
    for v in s.iter_mut() {
        let t0 = rdtsc();
        let t1 = rdtsc();
        *v = t1 - t0;
    }
    median(&mut s)
}

fn null_syscall(overhead: u64) {
    let mut s = [0u64; N];
    for _ in 0..WARMUP {
        sys::nop();
    }
    for v in s.iter_mut() {
        let t0 = rdtsc();
        sys::nop();
        let t1 = rdtsc();
        *v = t1 - t0;
    }
    report("null_syscall", &mut s, overhead);
}

/// A first touch of a demand-zero page: the kernel takes the fault, finds
/// the region, zeroes a frame, maps it and resumes the store.
fn kernel_page_fault(overhead: u64) {
    const PAGES: usize = 100;
    const ROUNDS: usize = 20;
    let mut s = [0u64; PAGES * ROUNDS];
    let mut k = 0;
    for round in 0..=ROUNDS {
        sys::release(HEAP_START, (PAGES * 4096) as u64);
        for p in 0..PAGES {
            let addr = HEAP_START + (p * 4096) as u64;
            let t0 = rdtsc();
            stet_rt::cpu::store_byte(addr, 1);
            let t1 = rdtsc();
            if round > 0 {
                s[k] = t1 - t0;
                k += 1;
            }
        }
    }
    report("kernel_page_fault", &mut s, overhead);
}

fn main(_slot: u64) -> i64 {
    let overhead = rdtsc_overhead();
    null_syscall(overhead);
    kernel_page_fault(overhead);
    0
}

stet_rt::main!(main);
