//! The console driver killed during its workload (`make soak`'s driver
//! kills, tests/soak/console_kills.toml).
//!
//! `arg` even: **the killer**, seed `arg >> 1 & 0xffff_ffff`, at most
//! `arg >> 33 & 0xffff` ms between kills (0: 3). Keys: 1 the kernel console,
//! 2 sleep, 3 the driver's domain key (`domain:consoled`), 4 a start key to
//! the driver. The driver is built stopped; the killer reads its first
//! registers (entry, stack top, argument), starts it, and then, every 0 to
//! a few ms (seeded), kills it: it stops the driver and, if the driver is waiting
//! for its next message, throws its incarnation away — registers back to
//! the first ones, so it runs from its entry again on a fresh stack and
//! programs the UART anew — and starts it; a driver caught in the middle of
//! a request is started again as it was and killed at a later try. Why
//! only between requests: a UART cannot tell which bytes it sent, so a
//! driver killed between an `out` and its record of it cannot know whether
//! to send that byte again; killed between two messages, nothing it was
//! asked is half done, and every byte a client gave it must come out once.
//! Each incarnation says `consoled: COM1 ready` (the soak counts them).
//!
//! `arg` odd: **the writer** of `arg >> 1` lines. Keys: 1 the kernel
//! console, 2 sleep, 3 a start key to the driver. Writes the lines
//! `cw: <n> <payload>` through the driver, one to five per `WRITE`, then
//! `cw: done <lines> lines`. The payload of line `n` is [`payload`]: the
//! soak computes the same, and checks that every line comes out once, whole
//! and in order.
#![no_std]
#![no_main]

use core::fmt::Write as _;
use stet_rt::abi::code::{self, Code};
use stet_rt::abi::domain::{state, REGS_SIZE};
use stet_rt::abi::order::domain;
use stet_rt::kernel::{now_ns, sleep_until};
use stet_rt::key::{call, Msg, Slot};
use stet_rt::{consoled, println};

const DRIVER: Slot = 3;
const CONS: Slot = 4;

/// Byte `i` of line `n`'s payload, and its length: the SplitMix64
/// finalizer of the line number (`stet_prng::mix`), so the soak can
/// compute the same (tools/harness/src/soak/kills.rs).
fn payload(n: u64, out: &mut [u8; 128]) -> usize {
    let len = 8 + (stet_prng::mix(n) % 100) as usize;
    for (i, b) in out.iter_mut().take(len).enumerate() {
        *b = b'a' + (stet_prng::mix(n << 16 | i as u64) % 26) as u8;
    }
    len
}

/// A fixed buffer to format lines into.
struct Buf {
    b: [u8; 4096],
    n: usize,
}

impl core::fmt::Write for Buf {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let end = self.n + s.len();
        if end > self.b.len() {
            return Err(core::fmt::Error);
        }
        self.b[self.n..end].copy_from_slice(s.as_bytes());
        self.n = end;
        Ok(())
    }
}

fn writer(lines: u64) -> i64 {
    const CONSOLE: Slot = 3;
    let mut n = 0u64;
    let mut buf = Buf { b: [0; 4096], n: 0 };
    let mut p = [0u8; 128];
    while n < lines {
        buf.n = 0;
        let k = 1 + stet_prng::mix(n ^ 0xabc) % 5;
        for _ in 0..k.min(lines - n) {
            n += 1;
            let len = payload(n, &mut p);
            let text = core::str::from_utf8(&p[..len]).unwrap_or("");
            let _ = writeln!(buf, "cw: {n} {text}");
        }
        match consoled::write(CONSOLE, &buf.b[..buf.n]) {
            Ok(w) if w == buf.n as u64 => {}
            r => {
                println!("cw: FAILED a write of lines to {n} answered {r:?}");
                return 1;
            }
        }
    }
    buf.n = 0;
    let _ = writeln!(buf, "cw: done {lines} lines");
    let _ = consoled::write(CONSOLE, &buf.b[..buf.n]);
    loop {
        sleep_until(now_ns().saturating_add(10_000_000_000));
    }
}

/// Reports a failed order through the kernel console and stops.
fn fail(what: &str, c: u64) -> i64 {
    println!("conkill: FAILED {what}: {} ({c})", code::name(c));
    1
}

fn killer(arg: u64) -> i64 {
    let seed = arg & 0xffff_ffff;
    let max_ms = match arg >> 32 & 0xffff {
        0 => 3,
        ms => ms,
    };
    let mut rng = stet_prng::SplitMix64::new(seed);
    let mut first = [0u8; REGS_SIZE];
    let a = Msg::new(DRIVER, domain::GET_REGS).call_into(&mut first);
    if a.code != Code::Ok || a.len != REGS_SIZE {
        return fail("reading the driver's first registers", a.code);
    }
    let c = call(DRIVER, domain::START, [0; 4]).code;
    if c != Code::Ok {
        return fail("starting the driver", c);
    }
    let mut line = Buf { b: [0; 4096], n: 0 };
    let _ = writeln!(
        line,
        "conkill: seed {seed}; killing the driver every 0-{max_ms} ms"
    );
    let _ = consoled::write(CONS, &line.b[..line.n]);
    let (mut kills, mut busy) = (0u64, 0u64);
    loop {
        let wait = rng.next_u64() % (max_ms * 1_000_000 + 1);
        sleep_until(now_ns() + wait);
        // A busy driver is seldom found between requests (the clock's tick
        // that wakes this domain interrupts it in one); right after it
        // answered one of ours it is, unless a writer's call got in first.
        let _ = consoled::stats(CONS);
        let c = call(DRIVER, domain::STOP, [0; 4]).code;
        if c != Code::Ok {
            return fail("stopping the driver", c);
        }
        let s = call(DRIVER, domain::GET_STATE, [0; 4]);
        if s.code != Code::Ok {
            return fail("reading the driver's state", s.code);
        }
        if s.w[0] == state::AVAILABLE && s.w[2] == 0 {
            let c = Msg::new(DRIVER, domain::SET_REGS)
                .string(&first)
                .call()
                .code;
            if c != Code::Ok {
                return fail("resetting the driver's registers", c);
            }
            let c = call(DRIVER, domain::SET_STATE, [state::RUNNING, s.w[1], 0, 0]).code;
            if c != Code::Ok {
                return fail("setting the driver running", c);
            }
            kills += 1;
        } else {
            busy += 1;
        }
        let c = call(DRIVER, domain::START, [0; 4]).code;
        if c != Code::Ok {
            return fail("starting the driver again", c);
        }
        if (kills + busy).is_multiple_of(256) {
            line.n = 0;
            let _ = writeln!(line, "conkill: {kills} kills, {busy} tries in a request");
            let _ = consoled::write(CONS, &line.b[..line.n]);
        }
    }
}

fn main(arg: u64) -> i64 {
    if arg & 1 == 1 {
        writer(arg >> 1)
    } else {
        killer(arg >> 1 & 0xffff_ffff_ffff)
    }
}

stet_rt::main!(main);
