//! How domains and meters are made of nodes. The image builder, the
//! kernel and tools that build domains all follow these layouts.

/// Slots of a domain's root node.
pub mod root {
    /// Number key: run state (low byte of `low`), flags (`high`), and
    /// `low >> 8`: the fault code; see [`super::state`].
    pub const STATE: usize = 0;
    /// Meter key.
    pub const METER: usize = 1;
    /// Domain keeper (start key or void).
    pub const KEEPER: usize = 2;
    /// Address space (segment key, page key or void).
    pub const SPACE: usize = 3;
    /// Node key to the general-keys node (16 key slots; slot 0 always void).
    pub const GENERAL: usize = 4;
    /// Node key to the registers annex (the 16 general registers as number keys).
    pub const ANNEX: usize = 5;
    /// Page key to the FPU/SSE/AVX save area.
    pub const FPU: usize = 6;
    /// Number key: `rip`.
    pub const RIP: usize = 7;
    /// Number key: `rflags`.
    pub const RFLAGS: usize = 8;
    /// Number key: the `fs` base.
    pub const FS_BASE: usize = 9;
    /// Number key: the `gs` base.
    pub const GS_BASE: usize = 10;
    /// Number key: fault information (an address, or a vector and error code).
    pub const FAULT_INFO: usize = 11;
    /// The domain's I/O-port key (an ioports key, or void): while the
    /// domain runs, exactly those ports are open to it.
    pub const IOPORTS: usize = 12;
    /// A foreign domain's *answers node* (a node key, or anything else for
    /// none): system calls the kernel answers itself, without its keeper
    /// (see [`super::answers`]).
    pub const ANSWERS: usize = 13;
    /// Number key: the *limit rule* of a foreign domain: `high` the first
    /// call number it covers (every `rax` at or above it), `low` the
    /// answer. Anything else: no limit rule.
    pub const LIMIT: usize = 14;
    /// Number key (`low`): how many calls the limit rule has answered.
    pub const LIMITED: usize = 15;
}

/// A foreign domain's trivial system calls, answered by the kernel on the
/// keeper's behalf (KLOS: a trivial service call should not pay for a
/// context switch). The keeper states the answers; the kernel only
/// repeats them, and everything else still goes to the keeper.
///
/// * The answers node: slot `nr % 16` may hold a number key whose `high`
///   is the call number `nr` and `low` the answer: a `syscall` with
///   `rax == nr` gets `rax = low`. A key for another number in that slot,
///   or any other key, answers nothing.
/// * The limit rule (root slot [`root::LIMIT`]): a `syscall` with `rax`
///   at or above the limit gets its answer and is counted in root slot
///   [`root::LIMITED`] (for a personality's "unimplemented call" tally).
pub mod answers {
    /// The answers node slot for call number `nr`.
    pub const fn slot(nr: u64) -> usize {
        (nr % 16) as usize
    }
    /// `SET_ANSWERS`'s `w0` for no limit rule.
    pub const NO_LIMIT: u64 = u64::MAX;
}

/// A domain's run state as a type; its numbers are `state::AVAILABLE`,
/// `WAITING` and `RUNNING` (the low byte of the state number key).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "zerocopy", derive(zerocopy::FromZeros))]
pub enum RunState {
    /// Accepts a message through a start key.
    #[default]
    Available = 0,
    /// Waits for the reply to its call (through its resume key).
    Waiting = 1,
    /// Wants the CPU (possibly to deliver a fault to its keeper first).
    Running = 2,
}

// The numbers are written out (`FromZeros` needs a literal 0); they are
// the `state` constants, which this checks at compile time.
const _: () = assert!(
    RunState::Available as u64 == state::AVAILABLE
        && RunState::Waiting as u64 == state::WAITING
        && RunState::Running as u64 == state::RUNNING
);

impl RunState {
    /// The state numbered `v`, if there is one.
    pub const fn from_bits(v: u64) -> Option<RunState> {
        match v {
            state::AVAILABLE => Some(RunState::Available),
            state::WAITING => Some(RunState::Waiting),
            state::RUNNING => Some(RunState::Running),
            _ => None,
        }
    }

    /// Its number.
    pub const fn bits(self) -> u64 {
        self as u64
    }
}

/// Run states (the low byte of the state number key).
pub mod state {
    /// Accepts a message through a start key.
    pub const AVAILABLE: u64 = 0;
    /// Waits for the reply to its call (through its resume key).
    pub const WAITING: u64 = 1;
    /// Wants the CPU (possibly to deliver a fault to its keeper first).
    pub const RUNNING: u64 = 2;

    /// Flag: stopped by a domain key holder (neither runs nor accepts).
    pub const STOPPED: u32 = 1;
    /// Flag: a foreign (Linux ABI) domain: every `syscall` is a fault for
    /// its keeper.
    pub const FOREIGN: u32 = 2;
    /// All flags.
    pub const FLAGS: u32 = STOPPED | FOREIGN;
}

/// Registers as the domain orders and keeper messages carry them: 20
/// little-endian 64-bit words in this order.
#[repr(usize)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Reg {
    Rax = 0,
    Rbx,
    Rcx,
    Rdx,
    Rsi,
    Rdi,
    Rbp,
    Rsp,
    R8,
    R9,
    R10,
    R11,
    R12,
    R13,
    R14,
    R15,
    Rip,
    Rflags,
    FsBase,
    GsBase,
}

/// Words in the register block.
pub const NREGS: usize = 20;
/// Bytes in the register block.
pub const REGS_SIZE: usize = NREGS * 8;
/// `rflags` bits a domain may set (CF PF AF ZF SF TF DF OF, AC, ID); IF is
/// always set by the kernel.
pub const USER_RFLAGS: u64 = 0x0024_0dd5;

/// Slots of a meter node.
pub mod meter {
    /// The superior meter key (void for the prime meter).
    pub const SUPERIOR: usize = 0;
    /// The meter keeper (start key or void).
    pub const KEEPER: usize = 1;
    /// Number key: time left in ticks (`u64::MAX`: unlimited).
    pub const TIME: usize = 2;
    /// Number key: ticks used so far.
    pub const USED: usize = 3;
}

/// Slot of a segment node (given a segment key with the `KEEPER` right)
/// that holds the segment keeper.
pub const SEGMENT_KEEPER_SLOT: usize = 15;
