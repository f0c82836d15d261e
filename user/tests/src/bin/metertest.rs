//! A meter keeper with its own policy: two workers share the CPU 3:1.
//!
//! The same program runs three domains (tests/system/meter_ratio.toml):
//!
//! * `arg` 1 and 2 — the workers A and B: they count forever in a static
//!   the keeper reads through their address spaces. Each runs under its own
//!   sub-meter (`a`, `b`) whose keeper is domain 0's start key with key info
//!   1 or 2.
//! * `arg` 0 — the keeper. Each time a sub-meter runs out the kernel calls
//!   it (METER_OUT, key 0 the meter key, a fault resume key). It holds
//!   each worker until both have used their share, then gives A 3 ticks and
//!   B 1 tick (WRITE_NUMBER into slot 2 of the meter nodes) and restarts
//!   both: a round. After [`ROUNDS`] rounds it compares the work done and
//!   the ticks used (meter node slot 3), prints both ratios ×1000 and
//!   restarts no one, so the system goes idle.
//!
//! Keeper keys: 1 console, 2 sleep, 3 discrim, 4/5 node keys to meters
//! a/b, 6/7 the workers' address spaces, 8/9 meter keys a/b. The first and
//! second METER_OUT of a round leave their resume keys in slots 10 and 11
//! and their meter keys in 12 and 13.
#![no_std]
#![no_main]

use core::sync::atomic::{AtomicU64, Ordering};
use stet_rt::abi::{fault, order};
use stet_rt::key::{call, wait, Msg, Slot};
use stet_rt::println;

/// Rounds of 3 + 1 ticks (the image's initial times are the first).
const ROUNDS: u64 = 100;
/// Ticks per round for A and B.
const SHARE: [u64; 2] = [3, 1];
/// The ratio the policy aims at, ×1000, and the tolerance (5%).
const WANT: u64 = 3000;
const TOLERANCE: u64 = 150;

const DISCRIM: Slot = stet_rt::kernel::DISCRIM;
const METER_NODE: [Slot; 2] = [4, 5];
const SPACE: [Slot; 2] = [6, 7];
const METER: [Slot; 2] = [8, 9];
const RESUME: [Slot; 2] = [10, 11];
const GOT_METER: [Slot; 2] = [12, 13];

/// Meter node slots (`stet_abi::domain::meter`).
const TIME: u64 = 2;
const USED: u64 = 3;

/// Where a worker's count starts. Not zero: a zero-initialised static
/// would go to `.bss`, which the linker script puts on `.data`'s page as a
/// second LOAD segment, and the image builder refuses segments sharing a
/// page (`Overlap`).
const START: u64 = 1;

/// The work a worker has done, plus [`START`] (each worker's own copy, in
/// its own space).
static WORK: AtomicU64 = AtomicU64::new(START);

fn worker() -> ! {
    let mut n = START;
    loop {
        n = core::hint::black_box(n.wrapping_add(1));
        WORK.store(n, Ordering::Relaxed);
    }
}

/// Worker `i`'s work counter, read through its address space.
fn work_of(i: usize) -> Option<u64> {
    let mut b = [0u8; 8];
    let a = Msg::new(SPACE[i], order::segment::READ)
        .words([WORK.as_ptr() as u64, 8, 0, 0])
        .call_into(&mut b);
    (a.ok() && a.len == 8).then(|| u64::from_le_bytes(b).wrapping_sub(START))
}

fn used_ticks(i: usize) -> u64 {
    call(METER_NODE[i], order::node::READ_NUMBER, [USED, 0, 0, 0]).w[0]
}

/// `num * 1000 / den`.
fn ratio(num: u64, den: u64) -> u64 {
    if den == 0 {
        return u64::MAX;
    }
    (num as u128 * 1000 / den as u128) as u64
}

fn keeper() -> i64 {
    // held[i]: which of the two message slots (0, 1) holds worker i's
    // resume key (RESUME) and meter key (GOT_METER) while it waits for the
    // next round.
    let mut held: [Option<usize>; 2] = [None, None];
    let mut n = 0;
    let mut rounds = 0u64;
    let mut bad_keys = 0u64;
    let mut unexpected = 0u64;
    let (ha, _) = loop {
        // Between rounds the keeper does nothing but wait: whatever it did
        // here would be taken from the tick of the worker that runs next.
        let a = wait([GOT_METER[n], 0, 0, 0], RESUME[n], &mut []);
        let i = a.info as usize;
        if a.code != fault::code::METER_OUT || !(1..=2).contains(&i) || held[i - 1].is_some() {
            unexpected += 1;
            println!(
                "metertest: unexpected message: order {} info {} (words {:?})",
                a.code, a.info, a.w
            );
            continue;
        }
        held[i - 1] = Some(n);
        let (Some(ha), Some(hb)) = (held[0], held[1]) else {
            // The other worker still runs.
            n = 1;
            continue;
        };
        // Both have used their share and wait: the CPU is idle, so the
        // keeper's own work costs the workers nothing now.
        rounds += 1;
        for (i, h) in [ha, hb].into_iter().enumerate() {
            let same = Msg::new(DISCRIM, order::discrim::COMPARE)
                .keys([GOT_METER[h], METER[i], 0, 0])
                .call();
            if same.w[0] != 1 {
                bad_keys += 1;
            }
        }
        if rounds == ROUNDS {
            break (ha, hb);
        }
        for (m, t) in METER_NODE.iter().zip(SHARE) {
            call(*m, order::node::WRITE_NUMBER, [TIME, t, 0, 0]);
        }
        // Start the round on a tick: the worker that runs first then gets
        // a whole tick, not the rest of one charged as a whole.
        stet_rt::kernel::sleep_until(stet_rt::kernel::now_ns() + 1);
        // Alternate who goes first (it loses the few instructions of the
        // restart and of this keeper's next wait).
        let first = if rounds.is_multiple_of(2) {
            [ha, hb]
        } else {
            [hb, ha]
        };
        for h in first {
            Msg::new(RESUME[h], fault::RESUME).call();
        }
        held = [None, None];
        n = 0;
    };

    let work = [work_of(0), work_of(1)];
    let ticks = [used_ticks(0), used_ticks(1)];
    println!(
        "metertest: {rounds} rounds of {}:{} ticks",
        SHARE[0], SHARE[1]
    );
    println!("metertest: ticks used a={} b={}", ticks[0], ticks[1]);
    let mut ok = unexpected == 0;
    let want_ticks = [SHARE[0] * ROUNDS, SHARE[1] * ROUNDS];
    if ticks != want_ticks {
        ok = false;
        println!("metertest: ticks used WRONG (got {ticks:?}, want {want_ticks:?})");
    }
    println!(
        "metertest: tick ratio x1000 = {}",
        ratio(ticks[0], ticks[1])
    );
    if bad_keys == 0 {
        println!("metertest: key 0 of every METER_OUT was the meter key: ok");
    } else {
        ok = false;
        println!("metertest: key 0 of {bad_keys} METER_OUT messages was not the meter key: WRONG");
    }
    match work {
        [Some(wa), Some(wb)] => {
            let r = ratio(wa, wb);
            println!("metertest: work a={wa} b={wb}");
            let within = r.abs_diff(WANT) <= TOLERANCE;
            println!(
                "metertest: work ratio x1000 = {r} (want {WANT} +- {TOLERANCE}): {}",
                if within { "ok" } else { "WRONG" }
            );
            ok &= within;
        }
        _ => {
            ok = false;
            println!("metertest: cannot read the work counters: WRONG");
        }
    }
    ok &= restart_without_time(ha, false);
    ok &= restart_without_time(ha, true);
    println!("metertest: {}", if ok { "all ok" } else { "SOME WRONG" });
    0
}

/// Restarts worker A, held in message slot `h`, while its meter is empty,
/// by a call on its resume key (it goes through the ready queue) or by a
/// return (the kernel may switch to it directly). docs/ABI.md: "A domain
/// runs only while every meter on its chain has time", so it must come
/// straight back with METER_OUT, having done no work and been charged no
/// tick. Leaves it held in `h` again.
fn restart_without_time(h: usize, by_return: bool) -> bool {
    let (w0, t0) = (work_of(0), used_ticks(0));
    let m = Msg::new(RESUME[h], fault::RESUME)
        .recv([GOT_METER[h], 0, 0, 0])
        .resume_into(RESUME[h]);
    let a = if by_return {
        m.ret()
    } else {
        m.call();
        wait([GOT_METER[h], 0, 0, 0], RESUME[h], &mut [])
    };
    let (w1, t1) = (work_of(0), used_ticks(0));
    let back = a.code == fault::code::METER_OUT && a.info == 1;
    let ok = back && w0 == w1 && t0 == t1;
    println!(
        "metertest: worker a restarted with an empty meter by {}: back with METER_OUT {back}, \
         work {w0:?} -> {w1:?}, ticks used {t0} -> {t1}: {}",
        if by_return { "return" } else { "call" },
        if ok { "ok" } else { "WRONG" }
    );
    ok
}

fn main(arg: u64) -> i64 {
    match arg {
        0 => keeper(),
        _ => worker(),
    }
}

stet_rt::main!(main);
