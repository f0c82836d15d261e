//! Result codes: what every kernel object answers in `rdi` when an order
//! fails (0 is success). Domains are free to use any codes between
//! themselves; these are the kernel's.

/// Success.
pub const OK: u64 = 0;
/// The invoked key is void, or designates an object that was destroyed.
pub const VOID: u64 = 1;
/// The object does not know this order code.
pub const NO_SUCH_ORDER: u64 = 2;
/// A key passed with the order has the wrong type.
pub const WRONG_TYPE: u64 = 3;
/// The invoked key lacks the rights for this order (read-only, sense).
pub const NO_RIGHTS: u64 = 4;
/// A slot number is out of range.
pub const SLOT_RANGE: u64 = 5;
/// A key passed with the order is void (or designates a destroyed object).
pub const VOID_ARGUMENT: u64 = 6;
/// The string to send is longer than 4096 bytes.
pub const STRING_TOO_LONG: u64 = 7;
/// A string or buffer address is not valid memory of the invoker.
pub const BAD_BUFFER: u64 = 8;
/// A data word is out of range for this order.
pub const BAD_VALUE: u64 = 9;
/// A fixed-size kernel cache or object range is exhausted; try later.
pub const NO_SPACE: u64 = 10;
/// The target is not in a state that allows the order.
pub const BAD_STATE: u64 = 11;
/// The control word in `rax` is malformed (reserved bits or bad kind).
pub const BAD_CONTROL: u64 = 12;
/// The address is not valid in the segment.
pub const INVALID_ADDRESS: u64 = 13;
/// The system restarted from a checkpoint while the domain waited on a
/// device (the disk, the clock, an interrupt line): the operation may or
/// may not have happened, and a device may have lost its state; ask again.
pub const RESTARTED: u64 = 14;
/// The disk failed the operation (an I/O error, or no disk is attached);
/// an irq key's line reaches no interrupt controller.
pub const IO_ERROR: u64 = 15;
/// A space bank's limit (or the bank's own supply) is exhausted; the
/// request was refused and nothing was allocated.
pub const LIMIT: u64 = 16;
/// A try-send found its receiver unable to take the message now (busy,
/// waiting, stopped, or promised to a stalled caller): nothing was sent.
pub const BUSY: u64 = 17;

/// Name of a kernel result code, for reports.
pub fn name(c: u64) -> &'static str {
    match c {
        OK => "ok",
        VOID => "void",
        NO_SUCH_ORDER => "no such order",
        WRONG_TYPE => "wrong key type",
        NO_RIGHTS => "no rights",
        SLOT_RANGE => "slot out of range",
        VOID_ARGUMENT => "void key argument",
        STRING_TOO_LONG => "string too long",
        BAD_BUFFER => "bad buffer",
        BAD_VALUE => "bad value",
        NO_SPACE => "no space",
        BAD_STATE => "bad state",
        BAD_CONTROL => "bad control word",
        INVALID_ADDRESS => "invalid address",
        RESTARTED => "restarted",
        IO_ERROR => "i/o error",
        LIMIT => "limit reached",
        BUSY => "busy",
        _ => "?",
    }
}
