//! `make run`'s first program: it sets up what the shell demonstrates,
//! then ends. It builds a factory for the block-style demo service
//! (`blocksvc`), its product holding only the console, and registers it
//! with the reincarnation service as `blk` (restart at once, back-off from
//! 1 ms, at most 8 restarts a second), so `inject blk` in the shell shows a
//! crash detected and the service back, and `read blk <n>` that it answers.
//!
//! It runs once, on the first boot of a new disk: after a restart the
//! service is still registered (the reincarnation service's books are in
//! its persistent memory), and this domain has ended.
//!
//! Keys: 1 console, 2 sleep, 3 the reincarnation service (client), 4 the
//! metafactory, 5 a bank, 6 the blocksvc program.
#![no_std]
#![no_main]

use stet_rt::abi::code;
use stet_rt::key::Slot;
use stet_rt::println;
use stet_rt::supervised::{self, Registration};

const CONSOLE: Slot = 1;
const RS: Slot = 3;
const META: Slot = 4;
const BANK: Slot = 5;
const PROGRAM: Slot = 6;
const BUILDER: Slot = 7;
const REQUESTOR: Slot = 8;

fn setup() -> Result<(), (&'static str, u64)> {
    supervised::register(&Registration {
        rs: RS,
        meta: META,
        bank: BANK,
        program: PROGRAM,
        component1: CONSOLE,
        scratch: [BUILDER, REQUESTOR],
        name: b"blk",
        policy: [1, 1_000_000, 8, 1_000_000_000],
    })
}

fn main(_arg: u64) -> i64 {
    match setup() {
        Ok(()) => {
            println!("init: the demo service blk is registered");
            0
        }
        Err((what, c)) => {
            println!(
                "init: setting up blk failed: {what}: {} ({c})",
                code::name(c)
            );
            1
        }
    }
}

stet_rt::main!(main);
