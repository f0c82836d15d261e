//! Its keeper emulates `ud2` (rax += 1000, skip the instruction); this
//! checks the results, then divides by zero, which the keeper does not
//! handle: the domain stays stopped.
#![no_std]
#![no_main]

use stet_rt::cpu::ud2_emulated;
use stet_rt::println;

fn main(_arg: u64) -> i64 {
    let mut ok = true;
    for v in [41u64, 0, u64::MAX - 1000] {
        let r = ud2_emulated(v);
        println!("emulate: ud2 with rax={v} gave {r}");
        ok &= r == v.wrapping_add(1000);
    }
    println!("emulate: {}", if ok { "all ok" } else { "WRONG" });
    stet_rt::fault::Fault::DivideByZero.trigger();
    println!("emulate: FAILED, still running after the divide error");
    1
}

stet_rt::main!(main);
