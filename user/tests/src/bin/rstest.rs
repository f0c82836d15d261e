//! The reincarnation service under fire (tests/system/rs_*.toml).
//!
//! Argument 0, the driver. Keys: 1 console, 2 sleep, 3 the reincarnation
//! service (client), 4 the metafactory, 5 the data store (lookup), 6 a
//! bank, 7 the blocksvc program. It builds a factory for `blocksvc` and
//! registers services from it: `blk` (restart at once), `crasher` (crashes
//! at start-up: held after the rate cap), `hanger` (hangs at its 4th
//! request: detected and replaced; the hung request is answered
//! `RESTARTED`), `exiter` (exits with code 7, policy hold).
//!
//! Argument 1, the streamer. Keys: 1 console, 2 sleep, 5 the data store
//! (lookup), 6 the data store (publisher). It reads 10 MiB (2560 blocks)
//! from `blk`, checks every byte, and on any failure looks the service up
//! again and retries the same block; then it publishes `stream-done`.
//!
//! Argument 2, the killer. Keys: 1 console, 2 sleep, 3 the reincarnation
//! service, 5 the data store (lookup), 6 the data store (publisher). Every 2 ms it crashes `blk` (INJECT)
//! until `stream-done` appears, and reports how many times.
#![no_std]
#![no_main]

use stet_rt::abi::code::Code;
use stet_rt::abi::service::factory as fo;
use stet_rt::abi::service::rs as ro;
use stet_rt::abi::service::{blk, store as so};
use stet_rt::kernel::{now_ns, sleep_until};
use stet_rt::key::{Msg, Slot};
use stet_rt::println;

const SLEEP_MS: u64 = 1_000_000;
const RS: Slot = 3;
const META: Slot = 4;
const LOOKUP: Slot = 5;
const BANK: Slot = 6;
const PUBLISH: Slot = 6;
const PROGRAM: Slot = 7;
const BUILDER: Slot = 8;
const REQUESTOR: Slot = 9;
const SVC: Slot = 10;

const BLOCKS: u64 = 2560;

fn sleep_ms(n: u64) {
    sleep_until(now_ns() + n * SLEEP_MS);
}

/// Looks `name` up in the data store into `into` → its generation.
fn lookup(name: &[u8], into: Slot) -> Option<u64> {
    let a = Msg::new(LOOKUP, so::GET)
        .string(name)
        .recv([into, 0, 0, 0])
        .call();
    (a.code == Code::Ok).then_some(a.w[0])
}

fn register(name: &str, arg: u64, restart: bool, base_ns: u64, rate: u64, window_ns: u64) -> u64 {
    let mut s = [0u8; 41];
    let n = name.len();
    s[..n].copy_from_slice(name.as_bytes());
    s[n + 1..n + 9].copy_from_slice(&arg.to_le_bytes());
    Msg::new(RS, ro::REGISTER)
        .string(&s[..n + 9])
        .words([restart as u64, base_ns, rate, window_ns])
        .keys([REQUESTOR, 0, 0, 0])
        .call()
        .code
}

fn status_of(name: &[u8]) -> Option<[u64; 3]> {
    let mut next = 0;
    let mut buf = [0u8; 32];
    loop {
        let a = Msg::new(RS, ro::STATUS).w0(next).call_into(&mut buf);
        if a.code != Code::Ok {
            return None;
        }
        if &buf[..a.len.min(32)] == name {
            return Some([a.w[0], a.w[1], a.w[2]]);
        }
        next = a.w[3];
    }
}

fn wait_status(name: &[u8], state: u64) -> [u64; 3] {
    for _ in 0..2000 {
        if let Some(s) = status_of(name) {
            if s[0] == state {
                return s;
            }
        }
        sleep_ms(1);
    }
    [u64::MAX; 3]
}

fn driver() -> i64 {
    // A factory for blocksvc, its product holding only the console.
    let a = Msg::new(META, fo::NEW_FACTORY)
        .keys([BANK, PROGRAM, 0, 0])
        .recv([BUILDER, REQUESTOR, 0, 0])
        .call();
    if a.code != Code::Ok {
        println!("rstest: factory: code {}", a.code);
        return 1;
    }
    Msg::new(BUILDER, fo::INSTALL)
        .w0(1)
        .keys([1, 0, 0, 0])
        .call();
    Msg::new(BUILDER, fo::SEAL).call();

    let c = register("blk", 0, true, 100_000, 16, 1_000_000);
    println!("rstest: registered blk: code {c}");

    // Crashes at start-up: restarted 4 times, then held by the rate cap.
    register("crasher", 1, true, 1_000_000, 4, 10_000_000_000);
    let s = wait_status(b"crasher", ro::state::HELD);
    println!("rstest: crasher held after {} restarts", s[1]);

    // Hangs in its 4th request: the request is answered RESTARTED, the
    // replacement answers.
    register("hanger", 2 | 3 << 8, true, 1_000_000, 16, 1_000_000_000);
    lookup(b"hanger", SVC);
    let mut buf = [0u8; 4096];
    let mut codes = [0u64; 5];
    for (n, c) in codes.iter_mut().enumerate() {
        *c = Msg::new(SVC, blk::READ)
            .w0(n as u64)
            .call_into(&mut buf)
            .code;
        if *c != Code::Ok {
            let _ = wait_status(b"hanger", ro::state::RUNNING);
            lookup(b"hanger", SVC);
        }
    }
    println!("rstest: hanger answered {codes:?}");

    // Exits with code 7; its policy is hold.
    register("exiter", 3, false, 0, 1, 0);
    let s = wait_status(b"exiter", ro::state::HELD);
    println!("rstest: exiter held after {} restarts", s[1]);

    // The run ends when the stream is done and the killer has reported
    // (the reincarnation service's timer never lets the system idle).
    while lookup(b"killer-done", SVC).is_none() {
        sleep_ms(5);
    }
    println!("rstest: done");
    stet_rt::port::qemu_exit_success();
    0
}

fn streamer() -> i64 {
    let mut generation = loop {
        if let Some(g) = lookup(b"blk", SVC) {
            break g;
        }
        sleep_ms(1);
    };
    let mut buf = [0u8; 4096];
    let mut retries = 0u64;
    for n in 0..BLOCKS {
        loop {
            let a = Msg::new(SVC, blk::READ).w0(n).call_into(&mut buf);
            if a.code == Code::Ok && a.len == 4096 && a.w[0] == n {
                if let Some(i) = (0..4096).find(|&i| buf[i] != blk::byte(n, i)) {
                    println!("streamer: block {n} byte {i} WRONG");
                    return 1;
                }
                break;
            }
            retries += 1;
            // The service is being replaced: find its new key.
            loop {
                match lookup(b"blk", SVC) {
                    Some(g) if g > generation => {
                        generation = g;
                        break;
                    }
                    _ => sleep_ms(1),
                }
            }
        }
        if n % 8 == 7 {
            sleep_ms(1);
        }
    }
    println!(
        "streamer: {} bytes ok, {retries} retries, generation {generation}",
        BLOCKS * 4096
    );
    Msg::new(PUBLISH, so::PUT).string(b"stream-done").call();
    0
}

fn killer() -> i64 {
    let mut kills = 0u64;
    let mut busy = 0u64;
    loop {
        sleep_ms(2);
        if lookup(b"stream-done", 11).is_some() {
            break;
        }
        let c = Msg::new(RS, ro::INJECT).string(b"blk").w0(0).call().code;
        match c {
            _ if c == Code::Ok => kills += 1,
            _ => busy += 1,
        }
    }
    println!("killer: {kills} kills during the stream ({busy} times it was down already)");
    Msg::new(6, so::PUT).string(b"killer-done").call();
    0
}

fn main(arg: u64) -> i64 {
    match arg {
        1 => streamer(),
        2 => killer(),
        _ => driver(),
    }
}

stet_rt::main!(main);
