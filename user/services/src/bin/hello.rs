//! The first user program: greets from ring 3 through a system call.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use stet_rt::println;

fn main(slot: u64) -> i64 {
    println!("hello from user space: program {slot} running in ring 3");
    0
}

stet_rt::main!(main);
