//! CPU-bound program "spin-b": proves timer preemption and FPU switching.
#![no_std]
#![no_main]

fn main(_slot: u64) -> i64 {
    stet_test_domains::spin("spin-b", 0xbbbb_0000_0000_bbbb)
}

stet_rt::main!(main);
