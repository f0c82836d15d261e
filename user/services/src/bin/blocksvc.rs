//! A block-style test service for the reincarnation service: `READ` of
//! block n answers 4096 bytes computed from n (`stet_abi::service::blk`),
//! so a client can check every byte and simply ask again after a restart;
//! `CRASH` makes it crash while serving the request.
//!
//! Built by a factory: component 1 is the console; slot 15 takes callers'
//! resume keys. The argument (`rdi`) picks a misbehaviour for the tests:
//! 0 none, 1 crash at start-up, 2 hang (spin) after `arg >> 8` requests,
//! 3 exit at once (code 7).
#![no_std]
#![no_main]

use stet_rt::abi::code::Code;
use stet_rt::abi::service::blk;
use stet_rt::{fault, service};

fn main(arg: u64) -> i64 {
    match arg & 0xff {
        1 => fault::Fault::InvalidOpcode.trigger(),
        3 => service::exit(7),
        _ => {}
    }
    let hang_after = if arg & 0xff == 2 { arg >> 8 } else { u64::MAX };
    let mut served = 0u64;
    let mut input = [0u8; 0];
    let mut out = [0u8; 4096];
    service::serve([0; 4], 15, &mut input, &mut out, |a, _, out| {
        if served >= hang_after {
            #[allow(clippy::empty_loop)]
            loop {}
        }
        served += 1;
        match a.code {
            blk::READ => {
                for (i, b) in out.iter_mut().enumerate() {
                    *b = blk::byte(a.w[0], i);
                }
                (Code::Ok.into(), [a.w[0], 0, 0, 0], out.len(), 0)
            }
            blk::CRASH => {
                fault::Fault::InvalidOpcode.trigger();
                (Code::BadState.into(), [0; 4], 0, 0)
            }
            _ => (Code::NoSuchOrder.into(), [0; 4], 0, 0),
        }
    })
}

stet_rt::main!(main);
