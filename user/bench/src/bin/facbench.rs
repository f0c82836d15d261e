//! Benchmarks of the services built from keys, run under `-icount` so
//! RDTSC counts guest instructions (tests/bench/services.toml; a short
//! run is a system test, tests/system/services_bench.toml):
//!
//! * `bank_page_alloc_free`, `bank_node_alloc_free`: ALLOC then FREE of
//!   one page (node) through a bank key (a sub-bank of the prime bank).
//! * `factory_create_destroy`: a fresh sub-bank of the prime bank, a
//!   product built into it by a sealed factory (requestor CREATE, the
//!   `facprod` program), and the sub-bank destroyed, which destroys the
//!   product. Between the two, untimed, the product is called once, so
//!   every sample is of a product that really ran.
//!
//! Each row: a warm-up, then every operation measured separately; the
//! median minus the RDTSC overhead (also reported). Argument: iterations
//! (0: 200 for the bank rows, 50 for the factory).
//!
//! Keys: 1 console, 2 sleep, 3 discrim, 4 the prime bank, 5 the
//! metafactory, 6 the `facprod` program node, 7 the prime meter.
#![no_std]
#![no_main]

use stet_rt::abi::code::Code;
use stet_rt::abi::service::factory as o;
use stet_rt::bank;
use stet_rt::bench::{self, median, report};
use stet_rt::cpu::rdtsc;
use stet_rt::key::{Msg, Slot};
use stet_rt::println;

const DISCRIM: Slot = 3;
const PRIME: Slot = 4;
const META: Slot = 5;
const PROG: Slot = 6;
const METER: Slot = 7;
const FB: Slot = 8;
const B: Slot = 9;
const R: Slot = 10;
const SUB: Slot = 11;
const X: Slot = 12;
const P: Slot = 13;

const MAX_N: usize = 200;

fn rdtsc_overhead() -> u64 {
    bench::rdtsc_overhead(MAX_N)
}

fn must(what: &str, c: u64) -> bool {
    if c != Code::Ok {
        println!("facbench: {what}: FAILED (code {c})");
    }
    c == Code::Ok
}

fn code_of(r: Result<(), u64>) -> u64 {
    r.err().unwrap_or(Code::Ok.into())
}

/// ALLOC then FREE through the bank key in SUB, `n` times after a warm-up.
fn alloc_free(name: &str, n: usize, overhead: u64, alloc: fn(Slot, Slot) -> Result<(), u64>) {
    let mut s = [0u64; MAX_N];
    let one = || {
        let t0 = rdtsc();
        let a = alloc(SUB, X);
        let f = bank::free(SUB, X);
        let t1 = rdtsc();
        (t1 - t0, code_of(a.and(f)))
    };
    for _ in 0..n / 10 + 1 {
        one();
    }
    for v in s.iter_mut().take(n) {
        let (t, c) = one();
        if !must(name, c) {
            return;
        }
        *v = t;
    }
    report(name, &mut s[..n], overhead);
}

/// One product built into a fresh sub-bank and destroyed with it →
/// (instructions building, instructions destroying, result code).
fn create_destroy() -> (u64, u64, u64) {
    let t0 = rdtsc();
    let c = code_of(bank::create_sub(PRIME, u64::MAX, u64::MAX, SUB));
    let c2 = Msg::new(R, o::CREATE)
        .keys([SUB, METER, 0, 0])
        .recv([P, 0, 0, 0])
        .call()
        .code;
    let t1 = rdtsc();
    // The product runs and answers (an order it does not know).
    let asked = Msg::new(P, 99).call().code;
    let t2 = rdtsc();
    let d = code_of(bank::destroy(SUB));
    let t3 = rdtsc();
    let ok = c == Code::Ok && c2 == Code::Ok && asked == Code::NoSuchOrder && d == Code::Ok;
    let why = if ok {
        Code::Ok.into()
    } else {
        c.max(c2).max(d).max(1)
    };
    (t1 - t0, t3 - t2, why)
}

fn factory(n: usize, overhead: u64) {
    let c = code_of(bank::create_sub(PRIME, u64::MAX, u64::MAX, FB));
    if !must("storage bank", c) {
        return;
    }
    let c = Msg::new(META, o::NEW_FACTORY)
        .keys([FB, PROG, 0, 0])
        .recv([B, R, 0, 0])
        .call()
        .code;
    if !must("NEW_FACTORY", c) {
        return;
    }
    let c = Msg::new(B, o::INSTALL)
        .w0(1)
        .keys([DISCRIM, 0, 0, 0])
        .call()
        .code;
    if !must("INSTALL", c) || !must("SEAL", Msg::new(B, o::SEAL).call().code) {
        return;
    }
    let mut s = [0u64; MAX_N];
    let mut build = [0u64; MAX_N];
    let mut destroy = [0u64; MAX_N];
    for _ in 0..n / 10 + 1 {
        create_destroy();
    }
    for i in 0..n {
        let (b, d, c) = create_destroy();
        if !must("factory_create_destroy", c) {
            return;
        }
        (s[i], build[i], destroy[i]) = (b + d, b, d);
    }
    report("factory_create_destroy", &mut s[..n], overhead);
    // Not rows: where the time goes (medians of each half, with the
    // counter's overhead in each).
    println!(
        "facbench: of which building {} and destroying {}",
        median(&mut build[..n]),
        median(&mut destroy[..n])
    );
}

fn main(arg: u64) -> i64 {
    let n = (arg as usize).min(MAX_N);
    let overhead = rdtsc_overhead();
    if !must(
        "bank",
        code_of(bank::create_sub(PRIME, u64::MAX, u64::MAX, SUB)),
    ) {
        return 1;
    }
    let bank_n = if n == 0 { 200 } else { n };
    alloc_free("bank_page_alloc_free", bank_n, overhead, bank::alloc_page);
    alloc_free("bank_node_alloc_free", bank_n, overhead, bank::alloc_node);
    bank::destroy(SUB).ok();
    factory(if n == 0 { 50 } else { n }, overhead);
    println!("facbench: done");
    0
}

stet_rt::main!(main);
