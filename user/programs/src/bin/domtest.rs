//! Placeholder for the domtest test program (being written).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

fn main(_arg: u64) -> i64 {
    0
}

stet_rt::main!(main);
