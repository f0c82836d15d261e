//! Benchmarks, run under `-icount` so RDTSC counts guest instructions.
//! Each row: warm up, measure every operation separately, report the median
//! minus the RDTSC overhead (also reported).
#![no_std]
#![no_main]

use stet_rt::bench::{self, report};
use stet_rt::cpu::rdtsc;
use stet_rt::cpu::ud2_emulated;
use stet_rt::key::{call, Msg};
use stet_rt::mem::Heap;

const N: usize = 2000;
const WARMUP: usize = 200;

fn rdtsc_overhead() -> u64 {
    bench::rdtsc_overhead(N)
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

/// Measures `op` N times after a warm-up.
fn measure(name: &str, overhead: u64, mut op: impl FnMut()) {
    let mut s = [0u64; N];
    for _ in 0..WARMUP {
        op();
    }
    for v in s.iter_mut() {
        let t0 = rdtsc();
        op();
        let t1 = rdtsc();
        *v = t1 - t0;
    }
    report(name, &mut s, overhead);
}

/// Round trips to the bench server (slot 4), in another address space.
fn ipc(overhead: u64) {
    measure("ipc_rt_empty", overhead, || {
        call(SERVER, 0, [0; 4]);
    });
    measure("ipc_rt_4words", overhead, || {
        call(SERVER, 1, [1, 2, 3, 4]);
    });
    let data = [0x5au8; 4096];
    measure("ipc_rt_4kib_string", overhead, || {
        Msg::new(SERVER, 2).string(&data).call();
    });
    call(SERVER, 9, [0; 4]);
    measure("ipc_rt_4keys", overhead, || {
        Msg::new(SERVER, 3)
            .keys([1, 2, 3, 5])
            .recv([9, 10, 11, 12])
            .call();
    });
    call(SERVER, 8, [0; 4]);
}

/// An exception whose keeper emulates the instruction and resumes.
fn keeper_fault(overhead: u64) {
    measure("keeper_fault_rt", overhead, || {
        ud2_emulated(1);
    });
}

/// First touches of heap pages: invalid reference → segment keeper adds a
/// page → the domain resumes.
fn segment_fault(overhead: u64) {
    const PAGES: usize = 1000;
    let mut s = [0u64; PAGES];
    let heap = Heap::claim();
    for (p, v) in s.iter_mut().enumerate() {
        let offset = (p as u64) * 4096;
        let t0 = rdtsc();
        heap.store_byte(offset, 1);
        let t1 = rdtsc();
        *v = t1 - t0;
    }
    // The first pages of each leaf node also pay for building nodes; the
    // median is the steady state.
    report("segment_fault_rt", &mut s[16..], overhead);
}

const SERVER: u8 = 4;

fn main(_arg: u64) -> i64 {
    let overhead = rdtsc_overhead();
    null_invoke(overhead);
    ipc(overhead);
    keeper_fault(overhead);
    segment_fault(overhead);
    0
}

stet_rt::main!(main);
