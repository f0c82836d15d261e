//! CPU-bound program "spin-a": proves timer preemption and FPU switching.
#![no_std]
#![no_main]

fn main(_slot: u64) -> i64 {
    stet_test_domains::spin("spin-a", 0xaaaa_0000_0000_aaaa)
}

stet_rt::main!(main);
