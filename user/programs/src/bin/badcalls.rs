//! Adversarial system calls: each must get its documented error, never
//! crash the kernel.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use stet_rt::abi::err;
use stet_rt::abi::layout::HEAP_START;
use stet_rt::{println, sys};

fn check(what: &str, got: i64, want: i64) -> bool {
    let ok = got == want;
    println!(
        "badcalls: {what}: {} (got {got}, want {want})",
        if ok { "ok" } else { "WRONG" }
    );
    ok
}

fn main(_slot: u64) -> i64 {
    let mut ok = true;
    ok &= check("unknown call", sys::invalid(), err::NO_SUCH_CALL);
    ok &= check(
        "write from kernel address",
        sys::write_raw(0xffff_ffff_8010_0000, 8),
        err::BAD_ADDRESS,
    );
    ok &= check(
        "write from unmapped address",
        sys::write_raw(0x10, 8),
        err::BAD_ADDRESS,
    );
    ok &= check(
        "write over 4096 bytes",
        sys::write_raw(0x40_0000, 4097),
        err::TOO_LONG,
    );
    ok &= check(
        "write wrapping the address space",
        sys::write_raw(u64::MAX - 2, 8),
        err::BAD_ADDRESS,
    );
    ok &= check("write of 0 bytes", sys::write_raw(0, 0), 0);
    ok &= check(
        "release of the image (not demand-zero)",
        sys::release(0, HEAP_START),
        0,
    );
    ok &= check(
        "release wrapping the address space",
        sys::release(u64::MAX - 4095, u64::MAX),
        0,
    );
    ok &= check("nop", sys::nop(), 0);
    println!(
        "badcalls: {}",
        if ok {
            "all errors as documented"
        } else {
            "FAILED"
        }
    );
    if ok {
        0
    } else {
        1
    }
}

stet_rt::main!(main);
