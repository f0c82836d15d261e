//! Protocols of the user-mode services (servers reached through start
//! keys, not kernel objects). Clients and servers share these numbers;
//! docs/ABI.md ("User services") describes them.

/// The console driver (`consoled`): owns the serial port through its
/// I/O-port key and receives its interrupt as a message. Order
/// [`console::WRITE`] is the kernel console key's `WRITE`, so a start key
/// to the driver can stand in for the console key.
pub mod console {
    /// The string is printed (`\n` becomes `\r\n`). → `w0` bytes written.
    pub const WRITE: u64 = 1;
    /// `w0` at most this many bytes (1..=4096, else `BAD_VALUE`); the
    /// string, if any, is printed first (a prompt) → the string: at least
    /// one byte of input, `w0` its length. Waits until input arrives (the
    /// driver keeps the caller's resume key and goes on serving others).
    /// One reader at a time: a second `READ` that would wait answers
    /// `BAD_STATE`.
    pub const READ: u64 = 2;
    /// `w0` at most this many bytes (0..=4096) → the input available now
    /// (possibly none), `w0` its length. Never waits.
    pub const POLL: u64 = 3;
    /// → `w0` interrupts the driver has received, `w1` bytes received,
    /// `w2` bytes written, `w3` `READ`s that had to wait for input.
    pub const STATS: u64 = 4;
    /// From the driver's interrupt waiter only (key info
    /// [`WAITER_INFO`]): the line fired `w0` times; `w1` 1: the system
    /// restarted from a checkpoint (the UART lost its programming). Others:
    /// `NO_RIGHTS`.
    pub const INTERRUPT: u64 = 5;
    /// Key info of the start key the driver's interrupt waiter holds.
    pub const WAITER_INFO: u8 = 255;
    /// Size of the driver's input buffer: bytes beyond it are dropped
    /// until a reader takes some.
    pub const INPUT_BUFFER: usize = 4096;
}
