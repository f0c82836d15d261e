//! The other end of the IPC benchmarks, in its own address space. Order 0
//! answers empty; 1 echoes the four words; 2 accepts a 4 KiB string and
//! answers empty; 3 answers with the four keys it received; 9 switches to
//! receiving four keys (slots 4–7), 8 back to receiving none (so the
//! words-only rows stay on the fast path).
#![no_std]
#![no_main]

use stet_rt::key::{wait, Msg};

const RESUME: u8 = 8;

fn main(_arg: u64) -> i64 {
    let mut buf = [0u8; 4096];
    let mut recv = [0u8; 4];
    let mut a = wait(recv, RESUME, &mut buf);
    loop {
        let mut m = Msg::new(RESUME, 0);
        match a.code {
            1 => m = m.words(a.w),
            3 => m = m.keys([4, 5, 6, 7]),
            8 => recv = [0; 4],
            9 => recv = [4, 5, 6, 7],
            _ => {}
        }
        a = m.recv(recv).resume_into(RESUME).ret_into(&mut buf);
    }
}

stet_rt::main!(main);
