//! The console driver: a user-mode driver for COM1 (MINIX 3 style). Two
//! domains run this program:
//!
//! * `arg = 0`, **the driver**: holds COM1's ports (0x3f8–0x3ff) through
//!   the ioports key in its root slot 12 and programs the 16550 itself
//!   (`stet_rt::uart`). One receive loop serves clients (protocol in
//!   `stet_abi::service::console`, docs/ABI.md "User services") *and*
//!   receives its interrupt, as a message like any other.
//! * `arg = 1`, **the interrupt waiter**: holds the irq key for ISA line 4
//!   (slot 2) and a start key to the driver with key info
//!   [`o::WAITER_INFO`] (slot 3), and loops: `WAIT` → `ACK` → call the
//!   driver with `INTERRUPT`. It acknowledges (unmasks) before the driver
//!   services the UART: the UART holds its interrupt line high until
//!   serviced, so a byte arriving while the line was still masked would
//!   give no new edge and be heard only at the next one.
//!
//! A `READ` with no input waiting keeps the caller's resume key in one of
//! three resume slots and the driver goes on serving others with a free
//! one; the interrupt that brings input answers it (a *send* through the
//! kept resume key). Slot 1 of both is the kernel console key, for reports.
//!
//! **Two consoles on one line.** Clients through a start key with key
//! info 0 use console 0, with key info 1 console 1: typed input goes to
//! the active console's reader, and output of the inactive console is kept
//! (the last 4 KiB) and shown when it becomes active, as on a real
//! terminal's virtual consoles, so two shells never write over each other.
//! `Ctrl-]` switches (the driver prints which is active). `make run` has
//! the UNIX terminal on console 1 (active first: driver `arg` 2) and the
//! native shell on console 0.
#![no_std]
#![no_main]

use stet_rt::abi::code::{self, Code};
use stet_rt::abi::service::console as o;
use stet_rt::key::{call, wait, Msg, Slot};
use stet_rt::uart::{Uart, COM1};
use stet_rt::{irq, println};

/// The waiter's irq key and its start key to the driver.
const IRQ: Slot = 2;
const DRIVER: Slot = 3;
/// The driver's three resume slots (a waiting reader's key on each
/// console, and the caller's).
const RESUME: [Slot; 3] = [13, 14, 15];
/// The byte that switches consoles (`Ctrl-]`).
const SWITCH: u8 = 0x1d;

fn main(arg: u64) -> i64 {
    match arg {
        0 => driver(0),
        1 => waiter(),
        2 => driver(1),
        _ => {
            println!(
                "consoled: arg {arg}: 0 is the driver (console 0 active), 2 the driver (console 1 active), 1 its interrupt waiter"
            );
            1
        }
    }
}

/// Turns the interrupt into messages to the driver.
fn waiter() -> i64 {
    // The restart count of the last answer: kept in this domain's memory,
    // so a restart is noticed even if the checkpoint caught the waiter
    // calling the driver rather than waiting.
    let mut seen = None;
    loop {
        let (n, restarted) = match irq::wait(IRQ, &mut seen) {
            Ok(n) => (n, 0),
            Err(c) if c == Code::Restarted => (0, 1),
            Err(c) => {
                println!("consoled: waiting for irq failed: {}", code::name(c));
                return 1;
            }
        };
        if let Err(c) = irq::ack(IRQ) {
            println!("consoled: acknowledging irq failed: {}", code::name(c));
            return 1;
        }
        let a = call(DRIVER, o::INTERRUPT, [n, restarted, 0, 0]);
        if !a.ok() {
            println!(
                "consoled: the driver refused an interrupt: {}",
                code::name(a.code)
            );
        }
    }
}

/// Received bytes not yet read.
struct Input {
    buf: [u8; o::INPUT_BUFFER],
    head: usize,
    len: usize,
}

impl Input {
    fn push(&mut self, b: u8) -> bool {
        if self.len == self.buf.len() {
            return false;
        }
        self.buf[(self.head + self.len) % self.buf.len()] = b;
        self.len += 1;
        true
    }

    /// Moves up to `out.len()` bytes out; returns how many.
    fn take(&mut self, out: &mut [u8]) -> usize {
        let n = out.len().min(self.len);
        for b in out.iter_mut().take(n) {
            *b = self.buf[self.head];
            self.head = (self.head + 1) % self.buf.len();
        }
        self.len -= n;
        n
    }
}

#[derive(Default)]
struct Stats {
    interrupts: u64,
    received: u64,
    written: u64,
    waited: u64,
}

/// Output of a console while it is not shown: the last bytes written.
struct Hidden {
    buf: [u8; o::INPUT_BUFFER],
    head: usize,
    len: usize,
}

impl Hidden {
    const fn new() -> Hidden {
        Hidden {
            buf: [0; o::INPUT_BUFFER],
            head: 0,
            len: 0,
        }
    }

    /// Keeps `data`, dropping the oldest bytes when full.
    fn keep(&mut self, data: &[u8]) {
        for &b in data {
            let n = self.buf.len();
            if self.len == n {
                self.head = (self.head + 1) % n;
                self.len -= 1;
            }
            self.buf[(self.head + self.len) % n] = b;
            self.len += 1;
        }
    }

    /// Writes what was kept, oldest first, and forgets it.
    fn show(&mut self, uart: &mut Uart) {
        let n = self.buf.len();
        let first = (n - self.head).min(self.len);
        uart.write(&self.buf[self.head..self.head + first]);
        uart.write(&self.buf[..self.len - first]);
        self.head = 0;
        self.len = 0;
    }
}

/// Moves every byte the UART holds into the active console's input;
/// `Ctrl-]` switches the active console and shows what it missed.
fn drain(
    uart: &mut Uart,
    input: &mut [Input; 2],
    active: &mut usize,
    hidden: &mut [Hidden; 2],
    st: &mut Stats,
) {
    while let Some(b) = uart.read_byte() {
        st.received += 1;
        if b == SWITCH {
            *active = 1 - *active;
            uart.write(b"\n[console ");
            uart.write(if *active == 0 {
                b"0: native shell"
            } else {
                b"1: unix"
            });
            uart.write(b"; Ctrl-] switches]\n");
            hidden[*active].show(uart);
            continue;
        }
        // A full buffer drops the byte (a reader takes some first).
        let _ = input[*active].push(b);
    }
}

/// If the UART was reset under the driver (the machine restarted from a
/// checkpoint), programs it again and starts a new terminal session: input
/// typed before the checkpoint and not yet read belongs to a session that
/// is gone (its echo was never seen, the rest of it was lost in the UART),
/// so it is dropped, as a terminal driver flushes its queue at hang-up; a
/// reader still waiting is answered `RESTARTED` and asks again. Called
/// before any input is handed out and when the waiter reports a restart,
/// whichever comes first; the second finds the UART programmed and does
/// nothing, so input typed in between is kept.
fn after_reset(uart: &mut Uart, input: &mut [Input; 2], readers: &mut [Option<(Slot, usize)>; 2]) {
    if !uart.was_reset() {
        return;
    }
    if uart.init().is_err() {
        println!("consoled: no UART after the restart");
    }
    uart.write(b"consoled: COM1 re-initialised after a restart\n");
    for (i, r) in input.iter_mut().zip(readers.iter_mut()) {
        i.head = 0;
        i.len = 0;
        if let Some((slot, _)) = r.take() {
            Msg::new(slot, Code::Restarted.into()).send();
        }
    }
}

/// A resume slot no waiting reader holds.
fn free_slot(readers: &[Option<(Slot, usize)>; 2]) -> usize {
    (0..RESUME.len())
        .find(|&i| readers.iter().all(|r| r.map(|(s, _)| s) != Some(RESUME[i])))
        .unwrap_or(0)
}

/// A reply: result code, words, bytes of `out` to send.
type Reply = (u64, [u64; 4], usize);

fn driver(first: usize) -> i64 {
    let Some(mut uart) = Uart::new(COM1) else {
        println!("consoled: bad port base");
        return 1;
    };
    if uart.init().is_err() {
        println!("consoled: no UART answers at {COM1:#x}");
        return 1;
    }
    uart.write(b"consoled: COM1 ready, input by interrupt 4\n");
    if first == 1 {
        uart.write(b"consoled: the keyboard goes to console 1 (unix); Ctrl-] switches to console 0 (native shell) and back\n");
    }
    let mut input = [
        Input {
            buf: [0; o::INPUT_BUFFER],
            head: 0,
            len: 0,
        },
        Input {
            buf: [0; o::INPUT_BUFFER],
            head: 0,
            len: 0,
        },
    ];
    let mut active = first;
    let mut hidden = [Hidden::new(), Hidden::new()];
    let mut st = Stats::default();
    // The reader waiting for input on each console: its resume slot and
    // how much it takes.
    let mut readers: [Option<(Slot, usize)>; 2] = [None, None];
    let mut cur = 0;
    let mut buf = [0u8; stet_rt::abi::MAX_STRING];
    let mut out = [0u8; stet_rt::abi::MAX_STRING];
    let mut a = wait([0; 4], RESUME[cur], &mut buf);
    loop {
        let len = a.len.min(buf.len());
        let reply: Reply = match a.code {
            o::WRITE => {
                // Output of the console not shown waits for it (the
                // interrupt waiter's key info is 255: console 0).
                let c = if a.info == 1 { 1 } else { 0 };
                if c == active {
                    uart.write(&buf[..len]);
                } else {
                    hidden[c].keep(&buf[..len]);
                }
                st.written += len as u64;
                (Code::Ok.into(), [len as u64, 0, 0, 0], 0)
            }
            o::READ if a.w[0] == 0 || a.w[0] > out.len() as u64 => {
                (Code::BadValue.into(), [0; 4], 0)
            }
            o::READ => {
                // Whether it waits is decided before the prompt shows:
                // input typed in answer to the prompt comes by interrupt.
                after_reset(&mut uart, &mut input, &mut readers);
                drain(&mut uart, &mut input, &mut active, &mut hidden, &mut st);
                let max = a.w[0] as usize;
                let c = (a.info as usize).min(1);
                if c == active {
                    uart.write(&buf[..len]);
                } else {
                    hidden[c].keep(&buf[..len]);
                }
                st.written += len as u64;
                if input[c].len > 0 {
                    let n = input[c].take(&mut out[..max]);
                    (Code::Ok.into(), [n as u64, 0, 0, 0], n)
                } else if readers[c].is_some() {
                    (Code::BadState.into(), [0; 4], 0)
                } else {
                    // Keep the caller waiting: its resume key stays in this
                    // slot; the next callers' go to a free one.
                    readers[c] = Some((RESUME[cur], max));
                    st.waited += 1;
                    cur = free_slot(&readers);
                    a = wait([0; 4], RESUME[cur], &mut buf);
                    continue;
                }
            }
            o::POLL if a.w[0] > out.len() as u64 => (Code::BadValue.into(), [0; 4], 0),
            o::POLL => {
                after_reset(&mut uart, &mut input, &mut readers);
                drain(&mut uart, &mut input, &mut active, &mut hidden, &mut st);
                let c = (a.info as usize).min(1);
                let n = input[c].take(&mut out[..a.w[0] as usize]);
                (Code::Ok.into(), [n as u64, 0, 0, 0], n)
            }
            o::STATS => (
                Code::Ok.into(),
                [st.interrupts, st.received, st.written, st.waited],
                0,
            ),
            o::INTERRUPT if a.info == o::WAITER_INFO => {
                if a.w[1] == 1 {
                    // The machine restarted from a checkpoint: the UART
                    // lost its programming (and its interrupt enable).
                    after_reset(&mut uart, &mut input, &mut readers);
                }
                st.interrupts += a.w[0];
                drain(&mut uart, &mut input, &mut active, &mut hidden, &mut st);
                for c in 0..2 {
                    if let Some((slot, max)) = readers[c] {
                        if input[c].len > 0 {
                            let n = input[c].take(&mut out[..max]);
                            Msg::new(slot, Code::Ok.into())
                                .words([n as u64, 0, 0, 0])
                                .string(&out[..n])
                                .send();
                            readers[c] = None;
                        }
                    }
                }
                (Code::Ok.into(), [0; 4], 0)
            }
            o::INTERRUPT => (Code::NoRights.into(), [0; 4], 0),
            _ => (Code::NoSuchOrder.into(), [0; 4], 0),
        };
        let (c, w, n) = reply;
        a = Msg::new(RESUME[cur], c)
            .words(w)
            .string(&out[..n])
            .resume_into(RESUME[cur])
            .ret_into(&mut buf);
    }
}

stet_rt::main!(main);
