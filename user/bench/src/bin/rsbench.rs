//! The `service_restart` benchmark (tests/bench/service_restart.toml; a
//! short run is the system test service_restart_bench), under `-icount`
//! so RDTSC counts guest instructions.
//!
//! One operation: a client asks the supervised block service `blk` to
//! `CRASH` (it executes an invalid opcode while serving the call); the
//! kernel stops it and sends the fault to its keeper, the reincarnation
//! service, which answers the client's call `RESTARTED`, destroys the
//! incarnation's bank, builds a replacement from the service's factory
//! and publishes it in the data store; the client looks the service up and
//! its `READ` is answered by the replacement. From the `CRASH` call to that
//! answer, all of it: detection, clean-up, a factory build (about 275k
//! instructions of the total, `factory_create_destroy`), the log lines the
//! reincarnation service prints, the client's retry.
//!
//! `blk` is registered with no back-off and no rate cap: the restart is
//! immediate, every time. Argument: iterations (0: 50).
//!
//! Keys: 1 console, 2 sleep, 3 the reincarnation service (client), 4 the
//! metafactory, 5 the data store (lookup), 6 a bank, 7 the blocksvc
//! program; port 0xf4 (QEMU's exit) when done.
#![no_std]
#![no_main]

use stet_rt::abi::code::{self, Code};
use stet_rt::abi::service::{blk, store as so};
use stet_rt::bench::{self, report};
use stet_rt::cpu::rdtsc;
use stet_rt::key::{Msg, Slot};
use stet_rt::println;
use stet_rt::supervised::{self, Registration};

const RS: Slot = 3;
const META: Slot = 4;
const LOOKUP: Slot = 5;
const BANK: Slot = 6;
const PROGRAM: Slot = 7;
const BUILDER: Slot = 8;
const REQUESTOR: Slot = 9;
const SVC: Slot = 10;

const MAX_N: usize = 200;

fn ok(what: &str, c: u64) -> Result<(), u64> {
    if c == Code::Ok {
        Ok(())
    } else {
        println!("rsbench: {what}: FAILED ({} {c})", code::name(c));
        Err(c)
    }
}

/// The service's current key into SVC → its generation.
fn lookup() -> Result<u64, u64> {
    let a = Msg::new(LOOKUP, so::GET)
        .string(b"blk")
        .recv([SVC, 0, 0, 0])
        .call();
    ok("lookup blk", a.code).map(|_| a.w[0])
}

/// One crash and recovery → (instructions, the new generation).
fn crash_and_recover(generation: u64) -> Result<(u64, u64), u64> {
    let t0 = rdtsc();
    let c = Msg::new(SVC, blk::CRASH).call().code;
    if c != Code::Restarted {
        println!(
            "rsbench: CRASH answered {} ({c}), not restarted: FAILED",
            code::name(c)
        );
        return Err(c);
    }
    // The reincarnation service answers the crashed call before it builds
    // the replacement; if the client runs first (a preemption in
    // between), it waits for the new generation to be published.
    let mut g = lookup()?;
    let mut tries = 0;
    while g <= generation {
        tries += 1;
        if tries > 10_000 {
            println!("rsbench: no replacement published after generation {generation}: FAILED");
            return Err(Code::BadState.into());
        }
        stet_rt::kernel::sleep_until(stet_rt::kernel::now_ns() + 1000);
        g = lookup()?;
    }
    let mut b = [0u8; 4096];
    let a = Msg::new(SVC, blk::READ).w0(g).call_into(&mut b);
    let t1 = rdtsc();
    ok("READ of the replacement", a.code)?;
    if a.len != b.len() || b[7] != blk::byte(g, 7) {
        println!("rsbench: block {g}: {} bytes, WRONG: FAILED", a.len);
        return Err(Code::BadState.into());
    }
    Ok((t1 - t0, g))
}

fn run(n: usize) -> Result<(), u64> {
    supervised::register(&Registration {
        rs: RS,
        meta: META,
        bank: BANK,
        program: PROGRAM,
        component1: 1,
        scratch: [BUILDER, REQUESTOR],
        name: b"blk",
        policy: [1, 0, 0, 0],
    })
    .map_err(|(what, c)| {
        println!("rsbench: {what}: FAILED ({} {c})", code::name(c));
        c
    })?;
    let overhead = bench::rdtsc_overhead(200);
    let mut generation = lookup()?;
    for _ in 0..n / 10 + 1 {
        generation = crash_and_recover(generation)?.1;
    }
    let mut s = [0u64; MAX_N];
    for v in s.iter_mut().take(n) {
        let (t, g) = crash_and_recover(generation)?;
        (*v, generation) = (t, g);
    }
    report("service_restart", &mut s[..n], overhead);
    println!("rsbench: done, generation {generation}");
    // The reincarnation service's clock never lets the system idle.
    stet_rt::port::qemu_exit_success();
    Ok(())
}

fn main(arg: u64) -> i64 {
    let n = if arg == 0 {
        50
    } else {
        (arg as usize).min(MAX_N)
    };
    match run(n) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

stet_rt::main!(main);
