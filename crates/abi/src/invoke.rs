//! The one system call: invoke a key. Every register is listed in
//! docs/ABI.md; this module is the encoding of `rax`, the control word.
//!
//! ```text
//! on entry (syscall)                        on delivery (the message arrives)
//! rax  control word (below)                 rax  key info of the key used | source << 8
//! rdi  order code                           rdi  order code / result code
//! rsi, rdx, r10, r8  data words w0..w3      rsi, rdx, r10, r8  w0..w3
//! r9   send string address                  r9   full length of the string sent
//! r12  receive buffer address               r12  unchanged
//! r13  receive buffer capacity              r13  unchanged
//! rcx, r11 clobbered; all other registers and the FPU preserved.
//! ```
//!
//! Control word:
//!
//! ```text
//! bits  0..4   slot of the invoked key (general key slots 0..15)
//! bits  4..6   kind: 0 call, 1 return, 2 send, 3 try-send
//! bits  8..24  four 4-bit slots of the keys to send (slot 0 sends void)
//! bits 24..40  four 4-bit slots that receive keys (0: discard)
//! bits 40..44  slot that receives the resume key of a call (0: discard)
//! bits 48..61  length of the string to send (0..=4096)
//! other bits   must be zero
//! ```

/// How a message is sent: bits 4..6 of the control word (every value of
/// the two bits is a kind, so decoding never fails).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Kind {
    /// Send and wait for the reply through a new resume key.
    #[default]
    Call = 0,
    /// Send, then become available for the next message.
    Return = 1,
    /// Send and keep running (KeyKOS "fork").
    Send = 2,
    /// Send only if the receiver can take the message now, and keep
    /// running; else nothing is sent and the answer is `Code::Busy` (the invoker
    /// never stalls: how a supervisor sends to what it supervises).
    TrySend = 3,
}

impl Kind {
    /// The kind whose number is the low two bits of `b`.
    #[inline(always)]
    pub const fn from_bits(b: u64) -> Kind {
        match b & 3 {
            0 => Kind::Call,
            1 => Kind::Return,
            2 => Kind::Send,
            _ => Kind::TrySend,
        }
    }
}

/// Bits of the control word that must be zero.
pub const RESERVED: u64 = 0b11 << 6 | 0xf << 44 | 0x7 << 61;

/// Where a field of the control word starts.
const KIND_SHIFT: u32 = 4;
const SEND_SHIFT: u32 = 8;
const RECV_SHIFT: u32 = 24;
const RESUME_SHIFT: u32 = 40;
const LEN_SHIFT: u32 = 48;
/// The string length's bits (after the shift).
const LEN_MASK: u64 = 0x1fff;
/// The four send slots, the four receive slots (in place).
const SEND_SLOTS: u64 = 0xffff << SEND_SHIFT;
const RECV_SLOTS: u64 = 0xffff << RECV_SHIFT;
/// The resume slot, the string length (in place).
const RESUME_SLOT: u64 = 0xf << RESUME_SHIFT;
const LEN: u64 = LEN_MASK << LEN_SHIFT;

/// Where the message came from, in bits 8..16 of `rax` on delivery.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Through a start key (bits 0..8 are its key info).
    Start = 0,
    /// Through a resume key (a reply).
    Resume = 1,
    /// From a kernel object (a reply to an order).
    Kernel = 2,
    /// Through a forwarder key: bits 0..8 are the key info of the start key
    /// in the forwarder's slot 0, bits 32..64 the forwarder's data word.
    Forwarded = 3,
}

impl Source {
    /// Its bits in the delivered `rax`.
    #[inline(always)]
    pub const fn bits(self) -> u64 {
        (self as u64) << 8
    }

    /// The source numbered `s` (bits 8..16 of a delivered `rax`).
    pub const fn decode(s: u8) -> Option<Source> {
        match s {
            0 => Some(Source::Start),
            1 => Some(Source::Resume),
            2 => Some(Source::Kernel),
            3 => Some(Source::Forwarded),
            _ => None,
        }
    }
}

/// A delivered source byte (`Answer::source`) is this source.
impl PartialEq<Source> for u8 {
    #[inline(always)]
    fn eq(&self, s: &Source) -> bool {
        *self == *s as u8
    }
}

/// A decoded control word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Control {
    /// Slot of the invoked key.
    pub slot: u8,
    /// How it is sent (a default value is a call).
    pub kind: Kind,
    /// Slots of the keys sent.
    pub send: [u8; 4],
    /// Slots receiving keys (0: discard).
    pub recv: [u8; 4],
    /// Slot receiving the resume key (0: discard).
    pub resume: u8,
    /// Bytes of string to send.
    pub len: u16,
}

impl Control {
    /// A call on `slot` with nothing else.
    pub const fn call(slot: u8) -> Control {
        Control {
            slot,
            kind: Kind::Call,
            send: [0; 4],
            recv: [0; 4],
            resume: 0,
            len: 0,
        }
    }

    /// Encodes the control word.
    #[inline(always)]
    pub const fn encode(&self) -> u64 {
        let mut w = (self.slot & 15) as u64 | (self.kind as u64) << KIND_SHIFT;
        let mut i = 0;
        while i < 4 {
            w |= ((self.send[i] & 15) as u64) << (SEND_SHIFT + 4 * i as u32);
            w |= ((self.recv[i] & 15) as u64) << (RECV_SHIFT + 4 * i as u32);
            i += 1;
        }
        w | ((self.resume & 15) as u64) << RESUME_SHIFT
            | ((self.len as u64) & LEN_MASK) << LEN_SHIFT
    }

    /// Decodes a control word; `None` if reserved bits are set. The string
    /// length is returned as given (it may exceed 4096; the kernel answers
    /// `StringTooLong`).
    pub const fn decode(w: u64) -> Option<Control> {
        if fast::malformed(w) {
            return None;
        }
        let mut c = Control {
            slot: fast::slot(w) as u8,
            kind: fast::kind(w),
            send: [0; 4],
            recv: [0; 4],
            resume: fast::resume_slot(w) as u8,
            len: fast::len(w) as u16,
        };
        let mut i = 0;
        while i < 4 {
            c.send[i] = fast::send_slot(w, i) as u8;
            c.recv[i] = fast::recv_slot(w, i) as u8;
            i += 1;
        }
        Some(c)
    }
}

/// Fields and tests of a raw control word: how [`Control::decode`] reads
/// it, and all the kernel's fast path reads (no full decode).
pub mod fast {
    use super::*;

    /// Whether reserved bits are set (the kernel answers `BadControl`).
    #[inline(always)]
    pub const fn malformed(w: u64) -> bool {
        w & RESERVED != 0
    }
    /// Slot of the invoked key.
    #[inline(always)]
    pub const fn slot(w: u64) -> usize {
        (w & 15) as usize
    }
    /// The kind.
    #[inline(always)]
    pub const fn kind(w: u64) -> Kind {
        Kind::from_bits(w >> KIND_SHIFT)
    }
    /// Whether the kind is `k` (the fast path's test: a compare of the
    /// bits, which compiles to less than a decoded [`Kind`] does).
    #[inline(always)]
    pub const fn kind_is(w: u64, k: Kind) -> bool {
        (w >> KIND_SHIFT) & 3 == k as u64
    }
    /// Slot of the `i`th key sent (`i` < 4).
    #[inline(always)]
    pub const fn send_slot(w: u64, i: usize) -> usize {
        ((w >> (SEND_SHIFT + 4 * i as u32)) & 15) as usize
    }
    /// Slot receiving the `i`th key (`i` < 4).
    #[inline(always)]
    pub const fn recv_slot(w: u64, i: usize) -> usize {
        ((w >> (RECV_SHIFT + 4 * i as u32)) & 15) as usize
    }
    /// The resume-key slot.
    #[inline(always)]
    pub const fn resume_slot(w: u64) -> usize {
        ((w >> RESUME_SHIFT) & 15) as usize
    }
    /// Length of the string to send (as given: may exceed 4096).
    #[inline(always)]
    pub const fn len(w: u64) -> usize {
        ((w >> LEN_SHIFT) & LEN_MASK) as usize
    }
    /// Whether the message carries only words: no keys sent, no string.
    #[inline(always)]
    pub const fn words_only(w: u64) -> bool {
        w & (SEND_SLOTS | LEN) == 0
    }
    /// Whether any of the four keys of a message is to be received (the
    /// resume slot aside).
    #[inline(always)]
    pub const fn receives_keys(w: u64) -> bool {
        w & RECV_SLOTS != 0
    }
    /// Whether the message sends and receives at most the first key (slots
    /// 1..4 of both are 0), no string, and no resume key: a node call's
    /// shape on the fast path.
    #[inline(always)]
    pub const fn first_keys_only(w: u64) -> bool {
        w & (SEND_SLOTS & !0xf << SEND_SHIFT | RECV_SLOTS & !0xf << RECV_SHIFT | RESUME_SLOT | LEN)
            == 0
    }
}
