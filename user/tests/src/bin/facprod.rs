//! A factory's product for the factory tests (tests/system/factory.toml)
//! and benchmark: it serves calls and reports what it holds.
//!
//! Keys, as the factory gives them: components in slots 1..=12 (this
//! program wants discrim in slot 1), the argument key in 13, its bank in
//! 14; callers' resume keys land in 15. It has no console.
//!
//! Orders: 1 → the type of the key in each general slot 1..=15, one byte
//! each (`w0` slots 1–8, `w1` slots 9–15), their rights likewise in `w2`,
//! `w3`; 2 → `w0` its `rdi`, `w1` its counter, `w2`, `w3` pages and nodes
//! its bank has allocated; 3 → the counter plus one, `w0` its new value;
//! 5 → it ends (`stet_rt::service::exit(0x5eed)`: an `int3` its keeper
//! hears, as a supervised service's end).
#![no_std]
#![no_main]

use core::sync::atomic::{AtomicU64, Ordering};
use stet_rt::abi::order::discrim;
use stet_rt::abi::service::factory::BANK_SLOT;
use stet_rt::key::{Answer, Msg, Slot};

const DISCRIM: Slot = 1;
const RESUME: Slot = 15;

/// In the writable data segment: each product has its own copy of the
/// page, initialised from the template's.
static COUNTER: AtomicU64 = AtomicU64::new(1000);

fn classify_all() -> [u64; 4] {
    let mut w = [0u64; 4];
    for s in 1..=15u8 {
        let a = Msg::new(DISCRIM, discrim::CLASSIFY)
            .keys([s, 0, 0, 0])
            .call();
        let (word, shift) = if s <= 8 {
            (0, (s - 1) * 8)
        } else {
            (1, (s - 9) * 8)
        };
        w[word] |= (a.w[0] & 0xff) << shift;
        w[word + 2] |= (a.w[1] & 0xff) << shift;
    }
    w
}

fn main(rdi: u64) -> i64 {
    let mut input = [0u8; 0];
    let mut output = [0u8; 0];
    stet_rt::service::serve(
        [0; 4],
        RESUME,
        &mut input,
        &mut output,
        |a: &Answer, _, _| match a.code {
            1 => (0, classify_all(), 0, 0),
            2 => {
                let info = stet_rt::bank::info(BANK_SLOT as Slot).unwrap_or([u64::MAX; 4]);
                (
                    0,
                    [rdi, COUNTER.load(Ordering::Relaxed), info[0], info[1]],
                    0,
                    0,
                )
            }
            3 => {
                let n = COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
                (0, [n, 0, 0, 0], 0, 0)
            }
            5 => stet_rt::service::exit(0x5eed),
            _ => (stet_rt::abi::code::Code::NoSuchOrder.into(), [0; 4], 0, 0),
        },
    )
}

stet_rt::main!(main);
