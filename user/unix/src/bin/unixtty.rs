//! The UNIX terminal's reader: waits for input on the console driver's
//! console 1 (`consoled`, a start key with key info 1) and hands every byte
//! to unixd (`INPUT`), whose line discipline (`stet_unix::tty`) echoes,
//! edits, sends `^C` as `SIGINT` and answers readers. (unixd never waits,
//! so it cannot call the driver's `READ` itself.)
//!
//! Keys: 1 the console driver (console 1), 2 a start key to unixd.
#![no_std]
#![no_main]

use stet_rt::abi::code::Code;
use stet_rt::consoled;
use stet_rt::key::Msg;

fn main(_arg: u64) -> i64 {
    let mut buf = [0u8; 256];
    loop {
        match consoled::read(1, b"", &mut buf) {
            Ok(n) => {
                Msg::new(2, stet_unix::proto::INPUT)
                    .string(&buf[..n])
                    .call();
            }
            // Input typed before a restart is gone; wait for more.
            Err(c) if c == Code::Restarted => {}
            Err(_) => {
                stet_rt::kernel::sleep_until(stet_rt::kernel::now_ns() + 100_000_000);
            }
        }
    }
}

stet_rt::main!(main);
