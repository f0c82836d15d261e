//! The UNIX file-system domain's clock. unixd never waits, so it cannot
//! sleep; this domain sleeps for it: it calls unixd `TICK` (`w0` 1: "park
//! me if there is nothing to time"), which rings alarms, ends sleeps and
//! hands signals to keepers that were busy, and answers when to tick next.
//! With nothing to time it stays parked in unixd, so an idle system
//! idles.
//!
//! unixd has two of these (argument 0 and 1, sent in `w1`): the kernel
//! cannot cut a sleep short, so while one sleeps until a far alarm the
//! other times what comes sooner (`unixd`'s `wait::kick`).
//!
//! Keys: 1 console, 2 sleep, 3 a start key to unixd.
#![no_std]
#![no_main]

use stet_rt::kernel::sleep_until;
use stet_rt::key::call;
use stet_unix::proto::TICK;

fn main(arg: u64) -> i64 {
    let me = arg & 1;
    let mut next = 0;
    loop {
        let a = if next == 0 {
            call(3, TICK, [1, me, 0, 0])
        } else {
            sleep_until(next);
            call(3, TICK, [0, me, 0, 0])
        };
        next = if a.ok() { a.w[0] } else { 0 };
    }
}

stet_rt::main!(main);
