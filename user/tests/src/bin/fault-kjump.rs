//! Fault test: jumps to a kernel address. The kernel must report it and keep running.
#![no_std]
#![no_main]

fn main(_slot: u64) -> i64 {
    stet_test_domains::fault("fault-kjump", stet_rt::fault::Fault::JumpToKernel)
}

stet_rt::main!(main);
