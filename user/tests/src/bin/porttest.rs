//! I/O-port and irq key tests (`ioports` system test). Two domains run it,
//! both kept by `portkeeper`:
//!
//! * `arg = 0`, the **probe**: holds ports 0x2f8–0x2ff (root slot 12). It
//!   uses its own ports, touches ports just outside them and COM1's (each
//!   faults with #GP to the keeper, which reports the port and `rip` and
//!   resumes it), checks the orders of ioports, irq and domain keys,
//!   including the refusals, and gives the other domain a port with
//!   `SET_IOPORTS`.
//! * `arg = 1`, **noports**: starts with no ports at all. Order 1: touch
//!   COM1 (faults); order 2: touch port 0x80 (which the probe gave it by
//!   then) and 0x81 (faults).
//! * `arg = 2`, **dlab** (holds COM1, like the console driver): opens the
//!   UART's divisor latch and has the kernel print meanwhile; the text must
//!   appear and the latch and divisor must be as they were.
//!
//! Keys of the probe: 1 console, 2 sleep, 3 discrim, 4 irq:4, 5 domain key
//! to noports, 6 start key to noports, 7 ioports:0x80:1, 8 a number key.
#![no_std]
#![no_main]

use stet_rt::abi::code::{self, Code};
use stet_rt::abi::order::{discrim, domain, ioports, irq};
use stet_rt::key::{call, wait, Msg, Slot};
use stet_rt::port::{in8, in8_rip, out8, out8_rip};
use stet_rt::println;

const DISCRIM: Slot = 3;
const IRQ: Slot = 4;
const NOPORTS_DOMAIN: Slot = 5;
const NOPORTS: Slot = 6;
const PORT80: Slot = 7;
const NUMBER: Slot = 8;
const SCRATCH: Slot = 9;

fn main(arg: u64) -> i64 {
    match arg {
        0 => probe(),
        1 => noports(),
        _ => dlab(),
    }
}

fn check(what: &str, got: u64, want: Code) -> bool {
    if got == want {
        println!("porttest: {what}: {} as expected", code::name(got));
        true
    } else {
        println!(
            "porttest: {what}: WRONG, {} instead of {}",
            code::name(got),
            want.name()
        );
        false
    }
}

/// Reads `port`, which the domain does not hold: announces the fault.
fn denied_in(who: &str, port: u16) {
    println!(
        "{who}: expecting #GP at rip={:#x} port {port:#x}",
        in8_rip()
    );
    let v = in8(port);
    println!("{who}: resumed, in {port:#x} read {v:#x}");
}

fn probe() -> i64 {
    let mut ok = true;
    // Its own ports, first and last.
    let _ = in8(0x2f8);
    let _ = in8(0x2ff);
    println!("porttest: in 0x2f8 and 0x2ff allowed");
    denied_in("porttest", 0x3f8);
    denied_in("porttest", 0x2f7);
    denied_in("porttest", 0x300);
    println!(
        "porttest: expecting #GP at rip={:#x} port 0x3f8 (out)",
        out8_rip()
    );
    out8(0x3f8, b'X');
    println!("porttest: resumed after out 0x3f8");

    // The other domain, with no ports, touches COM1.
    let a = call(NOPORTS, 1, [0; 4]);
    ok &= check("noports order 1", a.code, Code::Ok);

    // Ioports key orders.
    let a = call(PORT80, ioports::INFO, [0; 4]);
    println!(
        "porttest: ioports INFO {} base {:#x} count {}",
        code::name(a.code),
        a.w[0],
        a.w[1]
    );
    ok &= a.ok() && a.w[0] == 0x80 && a.w[1] == 1;
    ok &= check(
        "ioports order 9",
        call(PORT80, 9, [0; 4]).code,
        Code::NoSuchOrder,
    );

    // Irq key orders that never wait.
    let a = call(IRQ, irq::INFO, [0; 4]);
    println!(
        "porttest: irq INFO {} line {} gsi {} level {}",
        code::name(a.code),
        a.w[0],
        a.w[1],
        a.w[2]
    );
    ok &= a.ok() && a.w[0] == 4 && a.w[1] == 4 && a.w[2] == 0;
    ok &= check(
        "irq order 99",
        call(IRQ, 99, [0; 4]).code,
        Code::NoSuchOrder,
    );
    ok &= check(
        "irq WAIT w0=7",
        call(IRQ, irq::WAIT, [7, 0, 0, 0]).code,
        Code::BadValue,
    );
    // A waiter that names a restart count other than the store's (no disk
    // here: 0) hears RESTARTED at once, with the count now.
    let a = call(IRQ, irq::WAIT, [1, 3, 0, 0]);
    println!(
        "porttest: irq WAIT after restart 3: {} restarts {}",
        code::name(a.code),
        a.w[1]
    );
    ok &= a.code == Code::Restarted && a.w[1] == 0;

    // SET_IOPORTS refuses other key types and keeps the old key.
    for (what, slot) in [
        ("SET_IOPORTS with a number key", NUMBER),
        ("SET_IOPORTS with an irq key", IRQ),
    ] {
        let a = Msg::new(NOPORTS_DOMAIN, domain::SET_IOPORTS)
            .keys([slot, 0, 0, 0])
            .call();
        ok &= check(what, a.code, Code::WrongType);
    }
    let a = Msg::new(NOPORTS_DOMAIN, domain::GET_IOPORTS)
        .recv([SCRATCH, 0, 0, 0])
        .call();
    let t = Msg::new(DISCRIM, discrim::CLASSIFY)
        .keys([SCRATCH, 0, 0, 0])
        .call();
    println!(
        "porttest: GET_IOPORTS before {} type {}",
        code::name(a.code),
        t.w[0]
    );
    ok &= a.ok() && t.w[0] == 0;

    // Give noports port 0x80; it can use it at once, but not 0x81.
    let a = Msg::new(NOPORTS_DOMAIN, domain::SET_IOPORTS)
        .keys([PORT80, 0, 0, 0])
        .recv([SCRATCH, 0, 0, 0])
        .call();
    ok &= check("SET_IOPORTS with ioports:0x80:1", a.code, Code::Ok);
    let a = Msg::new(NOPORTS_DOMAIN, domain::GET_IOPORTS)
        .recv([SCRATCH, 0, 0, 0])
        .call();
    let same = Msg::new(DISCRIM, discrim::COMPARE)
        .keys([SCRATCH, PORT80, 0, 0])
        .call();
    println!(
        "porttest: GET_IOPORTS after {} same key {}",
        code::name(a.code),
        same.w[0]
    );
    ok &= a.ok() && same.w[0] == 1;
    let a = call(NOPORTS, 2, [0; 4]);
    ok &= check("noports order 2", a.code, Code::Ok);
    println!("porttest: {}", if ok { "all ok" } else { "WRONG" });
    0
}

fn noports() -> i64 {
    let mut a = wait([0; 4], 15, &mut []);
    loop {
        match a.code {
            1 => denied_in("noports", 0x3f8),
            2 => {
                let _ = in8(0x80);
                println!("noports: in 0x80 allowed after SET_IOPORTS");
                denied_in("noports", 0x81);
            }
            _ => {}
        }
        a = Msg::new(15, Code::Ok.into()).resume_into(15).ret();
    }
}

stet_rt::main!(main);

/// COM1's registers: data / divisor low, divisor high, line control.
const COM1_DATA: u16 = 0x3f8;
const COM1_DLM: u16 = 0x3f9;
const COM1_LCR: u16 = 0x3fb;

fn dlab() -> i64 {
    let lcr = in8(COM1_LCR);
    out8(COM1_LCR, lcr | 0x80);
    let before = (in8(COM1_DATA), in8(COM1_DLM));
    // Through the kernel's console key: the kernel writes COM1 now.
    println!("dlab: the kernel prints this while the divisor latch is open");
    let during = in8(COM1_LCR);
    let after = (in8(COM1_DATA), in8(COM1_DLM));
    out8(COM1_LCR, lcr);
    let ok = during == lcr | 0x80 && after == before;
    println!(
        "dlab: lcr {during:#x} (set {:#x}), divisor {:#x}:{:#x} (was {:#x}:{:#x}); {}",
        lcr | 0x80,
        after.1,
        after.0,
        before.1,
        before.0,
        if ok { "intact" } else { "WRONG" }
    );
    0
}
