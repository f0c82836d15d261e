//! Adversarial invocations of the console key: each must get its documented
//! result code (docs/ABI.md), never crash the kernel. Then try-sends: to a
//! kernel object, to a stopped domain (`BUSY`: nothing sent, no stall),
//! to itself, and to an available domain (delivered: `hello` prints the
//! order code it got as its argument).
//!
//! Keys: 1 console, 2 sleep, 3 discrim, 4 a start key to `idle` (an
//! available `hello`), 5 one to `stopped` (a stopped `hello`), 6 its own.
#![no_std]
#![no_main]

use stet_rt::abi::code::Code;
use stet_rt::invoke::{raw, Recv, Regs};
use stet_rt::kernel::CONSOLE;
use stet_rt::key::{call, Msg};
use stet_rt::{abi::order, println};

fn check(what: &str, got: u64, want: Code) -> bool {
    let ok = got == want;
    println!(
        "badcalls: {what}: {} (got {got}, want {})",
        if ok { "ok" } else { "WRONG" },
        want as u64
    );
    ok
}

fn write_raw(addr: u64, len: u64) -> u64 {
    Msg::new(CONSOLE, order::console::WRITE)
        .raw_string(addr, len)
        .call()
        .code
}

fn main(_arg: u64) -> i64 {
    let mut ok = true;
    let reserved = Regs {
        rax: 1 << 62 | CONSOLE as u64,
        rdi: order::console::WRITE,
        ..Regs::default()
    };
    ok &= check(
        "reserved control bit",
        raw(reserved, Recv::NONE).rdi,
        Code::BadControl,
    );
    ok &= check(
        "string from kernel address",
        write_raw(0xffff_ffff_8010_0000, 8),
        Code::BadBuffer,
    );
    ok &= check(
        "string from unmapped address",
        write_raw(0x10, 8),
        Code::BadBuffer,
    );
    ok &= check(
        "string of 4097 bytes",
        write_raw(0x40_0000, 4097),
        Code::StringTooLong,
    );
    ok &= check(
        "wrapping string",
        write_raw(u64::MAX - 2, 8),
        Code::BadBuffer,
    );
    ok &= check("string of 0 bytes", write_raw(0, 0), Code::Ok);
    ok &= check("void key (slot 0)", call(0, 1, [0; 4]).code, Code::Void);
    ok &= check("empty slot 9", call(9, 1, [0; 4]).code, Code::Void);
    ok &= check(
        "unknown console order",
        call(CONSOLE, 99, [0; 4]).code,
        Code::NoSuchOrder,
    );
    // Try-sends (kind 3).
    let kind3 = Regs {
        rax: 3 << 4 | CONSOLE as u64,
        rdi: 99,
        ..Regs::default()
    };
    ok &= check(
        "try-send to the console, unknown order",
        raw(kind3, Recv::NONE).rdi,
        Code::NoSuchOrder,
    );
    ok &= check(
        "try-send to a stopped domain",
        Msg::new(5, 1).try_send().code,
        Code::Busy,
    );
    ok &= check(
        "try-send to itself",
        Msg::new(6, 1).try_send().code,
        Code::BadState,
    );
    ok &= check(
        "try-send to void",
        Msg::new(0, 1).try_send().code,
        Code::Void,
    );
    ok &= check(
        "try-send to an available domain",
        Msg::new(4, 4242).try_send().code,
        Code::Ok,
    );
    println!("badcalls: {}", if ok { "all ok" } else { "SOME WRONG" });
    0
}

stet_rt::main!(main);
