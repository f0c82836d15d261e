//! Fault test: writes to a read-only page of its own image. The kernel must report it and keep running.
#![no_std]
#![no_main]

fn main(_slot: u64) -> i64 {
    stet_test_domains::fault("fault-ro", stet_rt::fault::Fault::WriteReadOnly)
}

stet_rt::main!(main);
