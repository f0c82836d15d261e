//! A foreign (Linux ABI) domain: its `syscall` instructions are not key
//! invocations but faults its keeper answers. It cannot print through the
//! console key (that would be a `syscall` too): its last system call number
//! is the sum of its keeper's answers, which the keeper prints. It ends
//! with a divide error the keeper does not handle.
#![no_std]
#![no_main]

use stet_rt::cpu::{foreign_syscall, ud2_emulated};

fn main(_arg: u64) -> i64 {
    // Three "system calls": the keeper adds 2000 to each number.
    let s = foreign_syscall(39) + foreign_syscall(1) + foreign_syscall(60);
    // 2039 + 2001 + 2060 = 6100; ud2 then adds 1000 → 7100.
    let r = ud2_emulated(s);
    foreign_syscall(r);
    stet_rt::fault::Fault::DivideByZero.trigger();
    1
}

stet_rt::main!(main);
