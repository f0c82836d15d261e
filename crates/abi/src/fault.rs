//! Messages the kernel sends to keepers. Each is a call made on the
//! faulting domain's behalf: the domain waits, and the keeper receives a
//! resume key of the *fault* kind. Invoking it with order
//! [`RESUME`] clears the fault and lets the domain run; with
//! [`RESUME_WITH_REGS`] the string (the register block) also becomes its
//! registers; with [`RESUME_SYSCALL`] only `rax` changes. Not invoking it
//! leaves the domain stopped.

/// Keeper reply: clear the fault, run.
pub const RESUME: u64 = 0;
/// Keeper reply: set the registers from the string, clear the fault, run.
pub const RESUME_WITH_REGS: u64 = 1;
/// Keeper reply to a [`code::SYSCALL`] fault: `rax` = `w0` (the call's
/// result), every other register as it was; clear the fault, run. The
/// common answer to an emulated system call, without the register block.
pub const RESUME_SYSCALL: u64 = 2;

/// Fault codes: the order code of the keeper message, and the domain's
/// fault code while the fault is pending.
pub mod code {
    /// A CPU exception. `w0` vector, `w1` error code, `w2` rip, `w3` cr2.
    pub const EXCEPTION: u64 = 1;
    /// An invalid memory reference with no segment keeper to take it.
    /// `w0` address, `w1` access, `w2` why ([`super::why`]), `w3` rip.
    pub const MEMORY: u64 = 2;
    /// A `syscall` from a foreign domain. `w0` rax, `w1` rip.
    pub const SYSCALL: u64 = 3;
    /// The domain's meter chain ran out and the meter has no keeper.
    pub const METER: u64 = 4;
    /// To a segment keeper: an invalid reference in its segment. `w0`
    /// address (relative to the segment), `w1` access, `w2` why, `w3`
    /// the faulting domain's rip. Key 0: the segment key (with `KEEPER`).
    pub const SEGMENT: u64 = 5;
    /// To a meter keeper: the meter ran out. Key 0: the meter key.
    pub const METER_OUT: u64 = 6;
    /// A malformed domain (a part missing or of the wrong type). `w0`
    /// which slot of the root node.
    pub const MALFORMED: u64 = 7;
}

/// Access kinds in memory faults.
pub mod access {
    /// A data read.
    pub const READ: u64 = 0;
    /// A data write.
    pub const WRITE: u64 = 1;
    /// An instruction fetch.
    pub const EXECUTE: u64 = 2;
}

/// Why a memory reference was invalid.
pub mod why {
    /// No page there (a void slot, or a destroyed object).
    pub const NOT_PRESENT: u64 = 1;
    /// A write through a read-only key, or an instruction fetch from a
    /// writable page (Stet maps writable pages non-executable).
    pub const PROTECTION: u64 = 2;
    /// Beyond the end of a segment.
    pub const OUT_OF_RANGE: u64 = 3;
    /// A key in the tree that cannot be part of a segment.
    pub const MALFORMED: u64 = 4;
}
