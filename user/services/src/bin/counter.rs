//! The `make run` demo of persistence: counts seconds of its own life and
//! says so every two seconds. Its count lives only in its own memory and
//! registers; kill QEMU at any moment and the next `make run` continues
//! from the last checkpoint (at most one checkpoint period behind), with
//! the restart count one higher. Keys: 1 console, 2 sleep, 4 checkpoint.
#![no_std]
#![no_main]

use stet_rt::{checkpoint, kernel, println};

const CHECKPOINT: u8 = 4;
const STEP_NS: u64 = 2_000_000_000;

fn main(_arg: u64) -> i64 {
    let mut count = 0u64;
    let mut next = kernel::now_ns();
    loop {
        next += STEP_NS;
        kernel::sleep_until(next);
        count += 2;
        let restarts = checkpoint::info(CHECKPOINT).map_or(0, |i| i.restarts);
        println!(
            "counter: {count} s of life, restart {restarts} (kill QEMU any time; make run continues)"
        );
    }
}

stet_rt::main!(main);
