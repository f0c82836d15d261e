//! Result codes: what every kernel object answers in `rdi` when an order
//! fails (0 is success). The kernel answers only a [`Code`]; domains are
//! free to use any `u64` codes between themselves, so a delivered code is a
//! `u64` that compares with a `Code` (`a.code == Code::Void`) and decodes
//! into one ([`Code::decode`]).

/// A kernel result code. The numbers are docs/ABI.md's table (a host test
/// reads the table and checks them).
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// Success.
    Ok = 0,
    /// The invoked key is void, or designates an object that was destroyed.
    Void = 1,
    /// The object does not know this order code.
    NoSuchOrder = 2,
    /// A key passed with the order has the wrong type.
    WrongType = 3,
    /// The invoked key lacks the rights for this order (read-only, sense).
    NoRights = 4,
    /// A slot number is out of range.
    SlotRange = 5,
    /// A key passed with the order is void (or designates a destroyed object).
    VoidArgument = 6,
    /// The string to send is longer than 4096 bytes.
    StringTooLong = 7,
    /// A string or buffer address is not valid memory of the invoker.
    BadBuffer = 8,
    /// A data word is out of range for this order.
    BadValue = 9,
    /// A fixed-size kernel cache or object range is exhausted; try later.
    NoSpace = 10,
    /// The target is not in a state that allows the order.
    BadState = 11,
    /// The control word in `rax` is malformed (reserved bits set).
    BadControl = 12,
    /// The address is not valid in the segment.
    InvalidAddress = 13,
    /// The system restarted from a checkpoint while the domain waited on a
    /// device (the disk, the clock, an interrupt line): the operation may or
    /// may not have happened, and a device may have lost its state; ask again.
    Restarted = 14,
    /// The disk failed the operation (an I/O error, or no disk is attached);
    /// an irq key's line reaches no interrupt controller.
    IoError = 15,
    /// A space bank's limit (or the bank's own supply) is exhausted; the
    /// request was refused and nothing was allocated.
    Limit = 16,
    /// A try-send found its receiver unable to take the message now (busy,
    /// waiting, stopped, or promised to a stalled caller): nothing was sent.
    Busy = 17,
}

impl Code {
    /// Every code, in numbering order (`ALL[n]` is code `n`).
    pub const ALL: [Code; 18] = [
        Code::Ok,
        Code::Void,
        Code::NoSuchOrder,
        Code::WrongType,
        Code::NoRights,
        Code::SlotRange,
        Code::VoidArgument,
        Code::StringTooLong,
        Code::BadBuffer,
        Code::BadValue,
        Code::NoSpace,
        Code::BadState,
        Code::BadControl,
        Code::InvalidAddress,
        Code::Restarted,
        Code::IoError,
        Code::Limit,
        Code::Busy,
    ];

    /// The kernel code numbered `c`, if there is one.
    pub const fn decode(c: u64) -> Option<Code> {
        if c < Code::ALL.len() as u64 {
            Some(Code::ALL[c as usize])
        } else {
            None
        }
    }

    /// The name for reports.
    pub const fn name(self) -> &'static str {
        match self {
            Code::Ok => "ok",
            Code::Void => "void",
            Code::NoSuchOrder => "no such order",
            Code::WrongType => "wrong key type",
            Code::NoRights => "no rights",
            Code::SlotRange => "slot out of range",
            Code::VoidArgument => "void key argument",
            Code::StringTooLong => "string too long",
            Code::BadBuffer => "bad buffer",
            Code::BadValue => "bad value",
            Code::NoSpace => "no space",
            Code::BadState => "bad state",
            Code::BadControl => "bad control word",
            Code::InvalidAddress => "invalid address",
            Code::Restarted => "restarted",
            Code::IoError => "i/o error",
            Code::Limit => "limit reached",
            Code::Busy => "busy",
        }
    }
}

impl From<Code> for u64 {
    #[inline(always)]
    fn from(c: Code) -> u64 {
        c as u64
    }
}

/// A delivered code (any `u64`) is this kernel code.
impl PartialEq<Code> for u64 {
    #[inline(always)]
    fn eq(&self, c: &Code) -> bool {
        *self == *c as u64
    }
}

impl PartialEq<u64> for Code {
    #[inline(always)]
    fn eq(&self, c: &u64) -> bool {
        *self as u64 == *c
    }
}

/// Name of a delivered result code, for reports ("?" for a code that is
/// not the kernel's).
pub fn name(c: u64) -> &'static str {
    match Code::decode(c) {
        Some(c) => c.name(),
        None => "?",
    }
}
