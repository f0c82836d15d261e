//! Fault test: executes an undefined opcode (ud2). The kernel must report it and keep running.
#![no_std]
#![no_main]

fn main(_slot: u64) -> i64 {
    stet_test_domains::fault("fault-ud", stet_rt::fault::Fault::InvalidOpcode)
}

stet_rt::main!(main);
