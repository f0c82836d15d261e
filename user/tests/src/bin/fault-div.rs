//! Fault test: divides by zero. The kernel must report it and keep running.
#![no_std]
#![no_main]

fn main(_slot: u64) -> i64 {
    stet_test_domains::fault("fault-div", stet_rt::fault::Fault::DivideByZero)
}

stet_rt::main!(main);
