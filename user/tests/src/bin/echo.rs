//! The echo server: answers every message with what it learned about it.
//! Reply code: the order; words: key info, full string length, w0, w1;
//! string: what it accepted (its buffer holds 1024 bytes); keys: the four it
//! received (slots 4–7). Order 99 answers after a pause, to make callers
//! stall.
#![no_std]
#![no_main]

use stet_rt::key::{wait, Msg};

const RESUME: u8 = 8;

fn main(_arg: u64) -> i64 {
    let mut buf = [0u8; 1024];
    let mut a = wait([4, 5, 6, 7], RESUME, &mut buf);
    loop {
        let accepted = a.len.min(buf.len());
        if a.code == 99 {
            // Busy for a while: others calling now must stall.
            let until = stet_rt::kernel::now_ns() + a.w[0];
            stet_rt::kernel::sleep_until(until);
        }
        let mut out = [0u8; 1024];
        out[..accepted].copy_from_slice(&buf[..accepted]);
        a = Msg::new(RESUME, a.code)
            .words([a.info as u64, a.len as u64, a.w[0], a.w[1]])
            .string(&out[..accepted])
            .keys([4, 5, 6, 7])
            .recv([4, 5, 6, 7])
            .resume_into(RESUME)
            .ret_into(&mut buf);
    }
}

stet_rt::main!(main);
