//! Benchmarks, run under `-icount` so RDTSC counts guest instructions.
//! Each row: warm up, measure every operation separately, report the median
//! minus the RDTSC overhead (also reported).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use stet_rt::cpu::rdtsc;
use stet_rt::key::call;
use stet_rt::println;

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

/// Invoking the void key: the kernel's shortest answer, the floor of
/// every invocation.
fn null_invoke(overhead: u64) {
    let mut s = [0u64; N];
    for _ in 0..WARMUP {
        call(0, 0, [0; 4]);
    }
    for v in s.iter_mut() {
        let t0 = rdtsc();
        call(0, 0, [0; 4]);
        let t1 = rdtsc();
        *v = t1 - t0;
    }
    report("null_invoke", &mut s, overhead);
}

fn main(_slot: u64) -> i64 {
    let overhead = rdtsc_overhead();
    null_invoke(overhead);
    0
}

stet_rt::main!(main);
