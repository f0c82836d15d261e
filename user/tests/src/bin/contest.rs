//! Clients of the console driver (`consoled`), for the system tests. Key
//! slots: 1 the kernel console, 2 sleep, 3 discrim, 4 a start key to the
//! driver. A domain that ends the run holds `ioports:0xf4:1` (QEMU's exit
//! port): with the driver's interrupt waiter parked, `exit_on_idle` never
//! comes.
//!
//! * `arg = 0`: writes (exact text, several lines, a long line, `print!`
//!   through the driver), the refusals, the driver's byte count; ends the
//!   run.
//! * `arg = 1`: the reader: two `READ`s with prompts, echoing exactly what
//!   was typed; checks that the interrupt path was used; ends the run.
//! * `arg = 2`: the writer: once the reader waits, a second `READ` is
//!   refused and a `WRITE` is served at once.
//! * `arg = 3`: across a restart (slot 5: the checkpoint key): writes,
//!   takes a checkpoint and idles until the harness kills the machine;
//!   restarted from that checkpoint, writes again through the driver.
#![no_std]
#![no_main]

use core::fmt::Write as _;
use stet_rt::abi::code::{self, Code};
use stet_rt::abi::service::console as o;
use stet_rt::consoled::{self, Stats};
use stet_rt::key::{call, Msg, Slot};
use stet_rt::{checkpoint, kernel, port, println};

const CONS: Slot = 4;

fn main(arg: u64) -> i64 {
    match arg {
        0 => writes(),
        1 => reader(),
        2 => writer(),
        _ => across_restart(),
    }
}

fn check(what: &str, got: u64, want: Code) -> bool {
    if got == want {
        println!("contest: {what}: {}", code::name(got));
        true
    } else {
        println!(
            "contest: {what}: WRONG, {} instead of {}",
            code::name(got),
            want.name()
        );
        false
    }
}

fn stats() -> Stats {
    consoled::stats(CONS).unwrap_or_default()
}

fn end(ok: bool, what: &str) -> i64 {
    println!("contest: {what} {}", if ok { "all ok" } else { "WRONG" });
    port::qemu_exit_success();
    println!("contest: FAILED to end the run");
    1
}

fn writes() -> i64 {
    let mut ok = true;
    let mut sent = 0u64;
    let mut long = [0u8; 3010];
    long[..9].copy_from_slice(b"contest: ");
    for (i, b) in long[9..3009].iter_mut().enumerate() {
        *b = b'0' + (i % 10) as u8;
    }
    long[3009] = b'\n';
    let texts: [&[u8]; 3] = [
        b"contest: hello through consoled\n",
        b"contest: line one\ncontest: line two\n",
        &long,
    ];
    for t in texts {
        match consoled::write(CONS, t) {
            Ok(n) if n == t.len() as u64 => sent += n,
            r => {
                println!("contest: WRONG answer to a write of {}: {r:?}", t.len());
                ok = false;
            }
        }
    }
    let st = stats();
    println!(
        "contest: the driver wrote {} bytes, {} sent",
        st.written, sent
    );
    ok &= st.written == sent;

    ok &= check("order 77", call(CONS, 77, [0; 4]).code, Code::NoSuchOrder);
    ok &= check(
        "READ of 0 bytes",
        call(CONS, o::READ, [0; 4]).code,
        Code::BadValue,
    );
    ok &= check(
        "READ of 4097 bytes",
        call(CONS, o::READ, [4097, 0, 0, 0]).code,
        Code::BadValue,
    );
    ok &= check(
        "POLL of 4097 bytes",
        call(CONS, o::POLL, [4097, 0, 0, 0]).code,
        Code::BadValue,
    );
    ok &= check(
        "INTERRUPT from a client",
        call(CONS, o::INTERRUPT, [1, 0, 0, 0]).code,
        Code::NoRights,
    );
    let mut none = [0u8; 16];
    let n = consoled::poll(CONS, &mut none);
    println!("contest: POLL with nothing typed: {n:?}");
    ok &= n == Ok(0);

    // From here on `print!` goes through the driver.
    kernel::set_console(CONS);
    println!("contest: println through consoled {}", 42);
    end(ok, "write test")
}

/// Reads until a newline; returns the bytes (newline included).
fn read_line<'a>(prompt: &[u8], buf: &'a mut [u8; 256]) -> Result<&'a [u8], u64> {
    let mut len = 0;
    let mut prompt = prompt;
    while len < buf.len() {
        let n = consoled::read(CONS, prompt, &mut buf[len..])?;
        prompt = b"";
        len += n;
        if buf[..len].contains(&b'\n') {
            break;
        }
    }
    Ok(&buf[..len])
}

/// `bytes` as hex, for exact comparison in the test.
struct Hex<'a>(&'a [u8]);

impl core::fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, b) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_char(' ')?;
            }
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

fn reader() -> i64 {
    kernel::set_console(CONS);
    let mut ok = true;
    let mut buf = [0u8; 256];
    let mut received = 0;
    match read_line(b"contest: ready for input\n", &mut buf) {
        Ok(line) => {
            received += line.len() as u64;
            let text = core::str::from_utf8(line).unwrap_or("?").trim_end();
            println!("contest: echo [{text}]");
        }
        Err(c) => {
            println!("contest: READ failed: {}", code::name(c));
            ok = false;
        }
    }
    match read_line(b"contest: second prompt\n", &mut buf) {
        Ok(line) => {
            received += line.len() as u64;
            println!("contest: bytes {}", Hex(line));
        }
        Err(c) => {
            println!("contest: READ failed: {}", code::name(c));
            ok = false;
        }
    }
    let st = stats();
    println!(
        "contest: interrupts {} received {} (read {received}) waited {}",
        st.interrupts, st.received, st.waited
    );
    ok &= st.interrupts > 0 && st.received == received && st.waited >= 2;
    if st.interrupts > 0 {
        println!("contest: the interrupt path was used");
    }
    let mut none = [0u8; 16];
    ok &= consoled::poll(CONS, &mut none) == Ok(0);
    end(ok, "read test")
}

fn writer() -> i64 {
    // Wait until the reader's first READ is kept waiting by the driver.
    while stats().waited == 0 {
        kernel::sleep_until(kernel::now_ns() + 5_000_000);
    }
    let mut buf = [0u8; 16];
    let a = Msg::new(CONS, o::READ).w0(16).call_into(&mut buf);
    let ok = check("a second READ while one waits", a.code, Code::BadState);
    let line: &[u8] = if ok {
        b"writer: wrote while a reader waited\n"
    } else {
        b"writer: WRONG\n"
    };
    let _ = consoled::write(CONS, line);
    0
}

stet_rt::main!(main);

fn across_restart() -> i64 {
    let _ = consoled::write(CONS, b"contest: written before the checkpoint\n");
    // Let the driver's waiter reach its first WAIT, so that the checkpoint
    // holds it parked there.
    kernel::sleep_until(kernel::now_ns() + 50_000_000);
    match checkpoint::take(5) {
        Ok(t) if !t.restarted => {
            println!("contest: checkpoint {} committed", t.generation);
            // The harness kills the machine now.
            loop {
                kernel::sleep_until(u64::MAX - 1);
            }
        }
        Ok(t) => {
            println!("contest: restarted from checkpoint {}", t.generation);
            // The driver's waiter, ready since the restart, runs meanwhile
            // and has the UART re-initialised.
            kernel::sleep_until(kernel::now_ns() + 50_000_000);
            let r = consoled::write(CONS, b"contest: written after the restart\n");
            println!("contest: write after the restart: {r:?}");
            0
        }
        Err(c) => {
            println!("contest: checkpoint FAILED: {}", code::name(c));
            1
        }
    }
}
