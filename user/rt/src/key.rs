//! Invoking keys: calls, returns and sends, with words, a string and keys.
//!
//! A domain names its keys by general-key slot (1..=15; slot 0 is always
//! void). The kernel's answers carry a result code (`stet_abi::code::Code`).

use crate::invoke::{raw, Recv, Regs};
use stet_abi::invoke::{Control, Kind};

/// A general-key slot.
pub type Slot = u8;

/// What arrived: a reply to a call, or a new message for a server.
#[derive(Clone, Copy, Debug, Default)]
pub struct Answer {
    /// The key info of the start key used (0 for replies).
    pub info: u8,
    /// Where it came from (a `stet_abi::invoke::Source`; compares with one).
    pub source: u8,
    /// Whether the string did not fit the receive buffer's memory.
    pub buffer_fault: bool,
    /// The forwarder's data word (for a message through a forwarder key).
    pub label: u32,
    /// Order code (for a server) or result code (for a reply: compares
    /// with a kernel `stet_abi::code::Code`, or a server's own number).
    pub code: u64,
    /// Data words.
    pub w: [u64; 4],
    /// Full length of the string sent (may exceed what was accepted).
    pub len: usize,
}

impl Answer {
    fn from(r: Regs) -> Answer {
        Answer {
            info: r.rax as u8,
            source: (r.rax >> 8) as u8,
            buffer_fault: r.rax & (1 << 16) != 0,
            label: (r.rax >> 32) as u32,
            code: r.rdi,
            w: r.w,
            len: r.r9 as usize,
        }
    }

    /// Whether the code is `Code::Ok`.
    pub fn ok(&self) -> bool {
        self.code == stet_abi::code::Code::Ok
    }
}

/// A message to send, built up with the methods below.
#[derive(Clone, Copy, Debug)]
pub struct Msg<'a> {
    ctl: Control,
    order: u64,
    w: [u64; 4],
    string: &'a [u8],
    raw_string: Option<(u64, u64)>,
}

impl<'a> Msg<'a> {
    /// Order `order` to the key in `slot`.
    #[inline(always)]
    pub fn new(slot: Slot, order: u64) -> Msg<'a> {
        Msg {
            ctl: Control::call(slot),
            order,
            w: [0; 4],
            string: &[],
            raw_string: None,
        }
    }

    /// Data words.
    #[inline(always)]
    pub fn words(mut self, w: [u64; 4]) -> Self {
        self.w = w;
        self
    }

    /// Word 0.
    #[inline(always)]
    pub fn w0(mut self, v: u64) -> Self {
        self.w[0] = v;
        self
    }

    /// The string.
    pub fn string(mut self, s: &'a [u8]) -> Self {
        self.string = s;
        self
    }

    /// A string given by raw address and length (for tests of the kernel's
    /// checks; the length may exceed 4096).
    pub fn raw_string(mut self, addr: u64, len: u64) -> Self {
        self.raw_string = Some((addr, len));
        self
    }

    /// Keys to send (slots; 0 sends void).
    #[inline(always)]
    pub fn keys(mut self, k: [Slot; 4]) -> Self {
        self.ctl.send = k;
        self
    }

    /// Slots that receive the keys of the answer (0: discard).
    #[inline(always)]
    pub fn recv(mut self, k: [Slot; 4]) -> Self {
        self.ctl.recv = k;
        self
    }

    /// Slot that receives the resume key of a caller (servers).
    #[inline(always)]
    pub fn resume_into(mut self, s: Slot) -> Self {
        self.ctl.resume = s;
        self
    }

    #[inline(always)]
    fn regs(&self, kind: Kind) -> Regs {
        let mut c = self.ctl;
        c.kind = kind;
        let (addr, len) = self
            .raw_string
            .unwrap_or((self.string.as_ptr() as u64, self.string.len() as u64));
        c.len = len.min(0x1fff) as u16;
        Regs {
            rax: c.encode(),
            rdi: self.order,
            w: self.w,
            r9: addr,
        }
    }

    /// The control word this message would use for `kind`.
    pub fn control(&self, kind: Kind) -> u64 {
        self.regs(kind).rax
    }

    /// Calls: sends and waits for the reply (string into `buf`).
    pub fn call_into(&self, buf: &mut [u8]) -> Answer {
        self.call_to(Recv::bytes(buf))
    }

    /// Calls with the reply string going to `recv` (such as a window onto
    /// another domain's memory: `crate::window::Window::recv`).
    #[inline(always)]
    pub fn call_to(&self, recv: Recv<'_>) -> Answer {
        Answer::from(raw(self.regs(Kind::Call), recv))
    }

    /// Calls with no reply string.
    pub fn call(&self) -> Answer {
        self.call_to(Recv::NONE)
    }

    /// Returns: sends, then waits as an available domain for the next
    /// message through a start key (string into `buf`).
    pub fn ret_into(&self, buf: &mut [u8]) -> Answer {
        self.ret_to(Recv::bytes(buf))
    }

    /// Returns, the next message's string going to `recv` (such as the
    /// UNIX keeper's register block as words: `Recv::words`).
    #[inline(always)]
    pub fn ret_to(&self, recv: Recv<'_>) -> Answer {
        Answer::from(raw(self.regs(Kind::Return), recv))
    }

    /// Returns with no receive buffer.
    pub fn ret(&self) -> Answer {
        self.ret_to(Recv::NONE)
    }

    /// Sends and keeps running (the answer is the kernel's result code).
    pub fn send(&self) -> Answer {
        Answer::from(raw(self.regs(Kind::Send), Recv::NONE))
    }

    /// Sends only if the receiver can take it now, and keeps running:
    /// `BUSY` if it cannot (nothing was sent; this domain never waits).
    pub fn try_send(&self) -> Answer {
        Answer::from(raw(self.regs(Kind::TrySend), Recv::NONE))
    }
}

/// Calls `slot` with `order` and words only.
#[inline(always)]
pub fn call(slot: Slot, order: u64, w: [u64; 4]) -> Answer {
    Answer::from(raw(
        Regs {
            rax: Control::call(slot).encode(),
            rdi: order,
            w,
            r9: 0,
        },
        Recv::NONE,
    ))
}

/// Waits for the first message as an available domain (a return to the
/// void key), receiving keys into `recv` and a caller's resume key into
/// `resume`, the string into `buf`.
pub fn wait(recv: [Slot; 4], resume: Slot, buf: &mut [u8]) -> Answer {
    Msg::new(0, 0).recv(recv).resume_into(resume).ret_into(buf)
}
