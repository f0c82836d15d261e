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

/// How a message is sent.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Send and wait for the reply through a new resume key.
    Call = 0,
    /// Send, then become available for the next message.
    Return = 1,
    /// Send and keep running (KeyKOS "fork").
    Send = 2,
    /// Send only if the receiver can take the message now, and keep
    /// running; else nothing is sent and the answer is `BUSY` (the invoker
    /// never stalls: how a supervisor sends to what it supervises).
    TrySend = 3,
}

/// Bits of the control word that must be zero.
pub const RESERVED: u64 = 0b11 << 6 | 0xf << 44 | 0x7 << 61;

/// Where the message came from, in bits 8..16 of `rax` on delivery.
pub mod source {
    /// Through a start key (bits 0..8 are its key info).
    pub const START: u64 = 0;
    /// Through a resume key (a reply).
    pub const RESUME: u64 = 1;
    /// From a kernel object (a reply to an order).
    pub const KERNEL: u64 = 2;
    /// Through a forwarder key: bits 0..8 are the key info of the start key
    /// in the forwarder's slot 0, bits 32..64 the forwarder's data word.
    pub const FORWARDED: u64 = 3;
}

/// A decoded control word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Control {
    /// Slot of the invoked key.
    pub slot: u8,
    /// How it is sent (`None` in a default value means call).
    pub kind: u8,
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
            kind: Kind::Call as u8,
            send: [0; 4],
            recv: [0; 4],
            resume: 0,
            len: 0,
        }
    }

    /// Encodes the control word.
    #[inline(always)]
    pub const fn encode(&self) -> u64 {
        let mut w = (self.slot & 15) as u64 | ((self.kind & 3) as u64) << 4;
        let mut i = 0;
        while i < 4 {
            w |= ((self.send[i] & 15) as u64) << (8 + 4 * i);
            w |= ((self.recv[i] & 15) as u64) << (24 + 4 * i);
            i += 1;
        }
        w | ((self.resume & 15) as u64) << 40 | ((self.len as u64) & 0x1fff) << 48
    }

    /// Decodes a control word; `None` if reserved bits are set. The string
    /// length is returned as given (it
    /// may exceed 4096; the kernel answers `STRING_TOO_LONG`).
    pub const fn decode(w: u64) -> Option<Control> {
        if w & RESERVED != 0 {
            return None;
        }
        let mut c = Control {
            slot: (w & 15) as u8,
            kind: ((w >> 4) & 3) as u8,
            send: [0; 4],
            recv: [0; 4],
            resume: ((w >> 40) & 15) as u8,
            len: ((w >> 48) & 0x1fff) as u16,
        };
        let mut i = 0;
        while i < 4 {
            c.send[i] = ((w >> (8 + 4 * i)) & 15) as u8;
            c.recv[i] = ((w >> (24 + 4 * i)) & 15) as u8;
            i += 1;
        }
        Some(c)
    }

    /// The kind as an enum.
    pub const fn kind(&self) -> Kind {
        match self.kind {
            1 => Kind::Return,
            2 => Kind::Send,
            3 => Kind::TrySend,
            _ => Kind::Call,
        }
    }
}

/// Field extractors used by the kernel's fast path (no full decode).
pub mod fast {
    /// Slot of the invoked key.
    #[inline(always)]
    pub const fn slot(w: u64) -> usize {
        (w & 15) as usize
    }
    /// The kind bits.
    #[inline(always)]
    pub const fn kind(w: u64) -> u64 {
        (w >> 4) & 3
    }
    /// Whether the message carries only words: no keys sent, no string.
    #[inline(always)]
    pub const fn words_only(w: u64) -> bool {
        w & (0xffff << 8 | 0x1fff << 48) == 0
    }
    /// The resume-key slot.
    #[inline(always)]
    pub const fn resume_slot(w: u64) -> usize {
        ((w >> 40) & 15) as usize
    }
    /// Whether any key is to be received (four slots and the resume slot).
    #[inline(always)]
    pub const fn receives_keys(w: u64) -> bool {
        w & (0xffff << 24 | 0xf << 40) != 0
    }
}
