//! The first user program: greets through a system call, saying which
//! ring it runs in (the privilege level in its `cs`, read from the CPU).
#![no_std]
#![no_main]

use stet_rt::{cpu, println};

fn main(slot: u64) -> i64 {
    let ring = cpu::privilege_level();
    println!("hello from user space: program {slot} running in ring {ring}");
    0
}

stet_rt::main!(main);
