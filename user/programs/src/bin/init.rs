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
#![deny(unsafe_code)]

use stet_rt::abi::code;
use stet_rt::abi::service::{factory as fo, rs as ro};
use stet_rt::key::{Msg, Slot};
use stet_rt::println;

const CONSOLE: Slot = 1;
const RS: Slot = 3;
const META: Slot = 4;
const BANK: Slot = 5;
const PROGRAM: Slot = 6;
const BUILDER: Slot = 7;
const REQUESTOR: Slot = 8;

fn ok(c: u64) -> Result<(), u64> {
    if c == code::OK {
        Ok(())
    } else {
        Err(c)
    }
}

fn setup() -> Result<(), u64> {
    ok(Msg::new(META, fo::NEW_FACTORY)
        .keys([BANK, PROGRAM, 0, 0])
        .recv([BUILDER, REQUESTOR, 0, 0])
        .call()
        .code)?;
    ok(Msg::new(BUILDER, fo::INSTALL)
        .w0(1)
        .keys([CONSOLE, 0, 0, 0])
        .call()
        .code)?;
    ok(Msg::new(BUILDER, fo::SEAL).call().code)?;
    ok(Msg::new(RS, ro::REGISTER)
        .string(b"blk")
        .words([1, 1_000_000, 8, 1_000_000_000])
        .keys([REQUESTOR, 0, 0, 0])
        .call()
        .code)
}

fn main(_arg: u64) -> i64 {
    match setup() {
        Ok(()) => {
            println!("init: the demo service blk is registered");
            0
        }
        Err(c) => {
            println!("init: setting up blk failed: {} ({c})", code::name(c));
            1
        }
    }
}

stet_rt::main!(main);
