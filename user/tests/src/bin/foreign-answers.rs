//! A foreign domain whose keeper leaves answers with the kernel
//! (`stet_abi::domain::answers`): it makes calls the kernel answers and
//! calls that still reach the keeper, then reports every result back
//! through the keeper (`10_000_000 + result`), which prints them. It ends
//! with a divide error its keeper does not handle.
#![no_std]
#![no_main]

use stet_rt::cpu::foreign_syscall;

fn main(_arg: u64) -> i64 {
    let calls = [
        39,       // the keeper installs the answers and answers 2039
        39,       // the kernel: 4242
        186,      // the kernel: 7
        1000,     // the limit rule: -38
        u64::MAX, // the limit rule: -38
        55,       // slot 7 holds 39's answer: the keeper, 2055
        1,        // slot 1 holds an answer for 17: the keeper, 2001
        2,        // the keeper checks the count, changes 39's answer: 2002
        39,       // the kernel again: 4343
        3,        // the keeper removes the answers: 2003
        39,       // the keeper: 2039
        1000,     // the keeper: 3000
    ];
    let mut got = [0u64; 12];
    for (g, &c) in got.iter_mut().zip(calls.iter()) {
        *g = foreign_syscall(c);
    }
    for g in got {
        foreign_syscall(10_000_000u64.wrapping_add(g));
    }
    stet_rt::fault::Fault::DivideByZero.trigger();
    1
}

stet_rt::main!(main);
