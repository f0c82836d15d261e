//! Order codes (in `rdi`) that kernel objects answer, by key type. Replies
//! put the result code in `rdi` (see [`crate::code`]) and results in
//! `w0..w3`, the string and the received keys.

/// Page keys.
pub mod page {
    /// `w0` offset, `w1` length (offset + length <= 4096) → the bytes as
    /// the reply string.
    pub const READ: u64 = 1;
    /// `w0` offset; the string is written there. Needs a read-write key.
    pub const WRITE: u64 = 2;
    /// Fills the page with zeros. Needs a read-write key.
    pub const ZERO: u64 = 3;
    /// `w0` offset (8-aligned) → `w0` the 64-bit word there.
    pub const READ_WORD: u64 = 4;
    /// `w0` offset (8-aligned), `w1` value. Needs a read-write key.
    pub const WRITE_WORD: u64 = 5;
    /// → key 0: the same page, read-only.
    pub const MAKE_RO: u64 = 6;
}

/// Node keys (full, read-only, sense).
pub mod node {
    /// `w0` slot → key 0: the key in that slot (diminished through a sense key).
    pub const FETCH: u64 = 1;
    /// `w0` slot, key 0 → stores key 0 there; key 0 of the reply is the
    /// old key. Needs a full key.
    pub const SWAP: u64 = 2;
    /// Makes every slot void. Needs a full key.
    pub const CLEAR: u64 = 3;
    /// `w0` size code (1..=10), `w1` rights (RO, WEAK, NOCALL, KEEPER) →
    /// key 0: a segment key to this node. A read-only node key gives a
    /// read-only segment key.
    pub const MAKE_SEGMENT: u64 = 4;
    /// → key 0: a read-only node key.
    pub const MAKE_RO: u64 = 5;
    /// → key 0: a sense key (read-only and weak).
    pub const MAKE_SENSE: u64 = 6;
    /// `w0` slot, `w1` low, `w2` high (32 bits) → stores a number key.
    /// Needs a full key.
    pub const WRITE_NUMBER: u64 = 7;
    /// Makes this node the root of a new domain. Keys 0, 1, 2: full node
    /// keys to the general-keys node and the registers annex, and a
    /// read-write page key for the FPU state. The domain starts stopped,
    /// available, with zero registers → key 0: a domain key. Needs a full key.
    pub const MAKE_DOMAIN: u64 = 8;
    /// `w0` slot → `w0` low, `w1` high of the number key there (`WRONG_TYPE`
    /// if it is not a number key).
    pub const READ_NUMBER: u64 = 9;
    /// → key 0: a forwarder key to this node (invoking it sends to the
    /// start key in slot 0 with the data word of the number key in slot 1).
    /// Needs a full key.
    pub const MAKE_FORWARDER: u64 = 10;
    /// `w0` slots, 4 bits each (the first in the low 4 bits), `w1` how
    /// many (1..=16) → key 0: what that many `FETCH`es in a row give, each
    /// through the key the one before gave (a key directory's entry in one
    /// call instead of one per level). A key on the way that is not a node
    /// key is `WRONG_TYPE`; one whose node is gone `VOID`; after a weak key
    /// every key is diminished.
    pub const FETCH_PATH: u64 = 11;
    /// `w0` slots, `w1` levels (1..=16), key 0 → stored; reply key 0: the
    /// old key. A `SWAP` of the last slot in the node the first `w1 - 1`
    /// fetches of a `FETCH_PATH` reach (one call to store a key directory's
    /// entry). The key that reaches that node must be a full one
    /// (`NO_RIGHTS` through a read-only key, and after a weak one, whose
    /// keys come diminished); errors on the way as `FETCH_PATH`'s.
    pub const SWAP_PATH: u64 = 12;
    /// Most levels one `FETCH_PATH` or `SWAP_PATH` walks.
    pub const PATH_MAX: u64 = 16;
}

/// Segment keys.
pub mod segment {
    /// `w0` byte offset, `w1` length (≤ 4096) → the bytes as the reply
    /// string. Invalid addresses answer `INVALID_ADDRESS` (no keeper is
    /// invoked).
    pub const READ: u64 = 1;
    /// `w0` byte offset; the string is written there. Needs a read-write
    /// path.
    pub const WRITE: u64 = 2;
    /// → `w0` the size code, `w1` the size in bytes (0 means 2^64), `w2` rights.
    pub const INFO: u64 = 3;
    /// `w0` rights to add (RO, WEAK, NOCALL) → key 0: the weaker key.
    pub const RESTRICT: u64 = 4;
    /// `w0` byte offset → `w0` 1 if a page is there, `w1` 1 if writable.
    pub const PROBE: u64 = 5;
    /// `w0` slot → key 0: the key in that slot of the segment's node,
    /// always diminished (as through a sense key: page → read-only page,
    /// segment → read-only weak segment, numbers unchanged, all else void),
    /// so it conveys no more than reading the segment does. What a
    /// factory needs to share a program's read-only pages.
    pub const FETCH: u64 = 6;
    /// `w0` byte offset → key 0: a read-only key to the page holding that
    /// byte, as the `FETCH`es down to it would give, in one call (a loader
    /// mapping a file's page). `INVALID_ADDRESS` if no page is there; no
    /// keeper is invoked.
    pub const PAGE_KEY: u64 = 7;
}

/// Domain keys.
pub mod domain {
    /// → the registers as the reply string ([`crate::domain::REGS_SIZE`]
    /// bytes, order [`crate::domain::Reg`]); `w0` run state, `w1` flags,
    /// `w2` fault code, `w3` fault info.
    pub const GET_REGS: u64 = 1;
    /// The string (exactly `REGS_SIZE` bytes) becomes the registers.
    /// `rflags` keeps only the user-settable bits.
    pub const SET_REGS: u64 = 2;
    /// → the FPU/SSE/AVX save area as the string; `w0` its size.
    pub const GET_FPU: u64 = 3;
    /// The string (exactly the save-area size) becomes the FPU state;
    /// `BAD_VALUE` if it would not load (reserved bits).
    pub const SET_FPU: u64 = 4;
    /// `w0` slot → key 0: that general key.
    pub const GET_SLOT: u64 = 5;
    /// `w0` slot, key 0 → stores it (slot 0 stays void); key 0 of the
    /// reply is the old key.
    pub const SET_SLOT: u64 = 6;
    /// → key 0: the domain keeper.
    pub const GET_KEEPER: u64 = 7;
    /// key 0 (start key or void) becomes the keeper; reply key 0 is the old one.
    pub const SET_KEEPER: u64 = 8;
    /// → key 0: the meter.
    pub const GET_METER: u64 = 9;
    /// key 0 (meter key or void) becomes the meter; reply key 0 the old one.
    pub const SET_METER: u64 = 10;
    /// → key 0: the address-space key.
    pub const GET_SPACE: u64 = 11;
    /// key 0 (segment, page or void) becomes the address space; reply key
    /// 0 the old one.
    pub const SET_SPACE: u64 = 12;
    /// `w0` key info → key 0: a start key.
    pub const MAKE_START: u64 = 13;
    /// Stops the domain: it neither runs nor accepts messages until started.
    pub const STOP: u64 = 14;
    /// Clears the stop.
    pub const START: u64 = 15;
    /// → `w0` run state, `w1` flags, `w2` fault code, `w3` fault info.
    pub const GET_STATE: u64 = 16;
    /// `w0` run state (available or running), `w1` flags, `w2` fault code,
    /// `w3` fault info. A domain cannot be made waiting (`BAD_VALUE`);
    /// setting a waiting domain abandons its call (its resume keys become
    /// void).
    pub const SET_STATE: u64 = 17;
    /// key 0 (an ioports key or void) becomes the domain's I/O-port key
    /// (root slot [`crate::domain::root::IOPORTS`]): while the domain runs
    /// exactly those ports are open to it; reply key 0 is the old key.
    /// Another type: `WRONG_TYPE`.
    pub const SET_IOPORTS: u64 = 18;
    /// → key 0: the domain's I/O-port key (void if none).
    pub const GET_IOPORTS: u64 = 19;
    /// A foreign domain's kernel-answered calls ([`crate::domain::answers`]):
    /// key 0 (a node key, or void for none) becomes its answers node; `w0`
    /// the limit (< 2^32, or [`crate::domain::answers::NO_LIMIT`]), `w1` the
    /// limit's answer. Reply key 0: the old answers node; `w0` how many
    /// calls the old limit rule answered (the count starts again at 0).
    /// Another key type: `WRONG_TYPE`; a limit of 2^32 or more but
    /// `NO_LIMIT`: `BAD_VALUE`; a node that is part of another prepared
    /// domain: `BAD_STATE`.
    pub const SET_ANSWERS: u64 = 20;
    /// → key 0: the answers node (void if none); `w0` the limit (`NO_LIMIT`
    /// if none), `w1` its answer, `w2` how many calls it has answered.
    pub const GET_ANSWERS: u64 = 21;
}

/// Meter keys.
pub mod meter {
    /// → `w0` time left (ticks; `u64::MAX` is unlimited), `w1` time used.
    pub const QUERY: u64 = 1;
    /// `w0` time (ticks; `u64::MAX` unlimited), key 0: a full node key to
    /// a node that becomes the sub-meter (its slots are overwritten: see
    /// [`crate::domain::meter`]) → key 0: a meter key to it. The creator
    /// keeps its node key to set the time and keeper later.
    pub const CREATE_SUB: u64 = 2;
}

/// The console key.
pub mod console {
    /// The string is printed.
    pub const WRITE: u64 = 1;
}

/// The sleep key.
pub mod sleep {
    /// → `w0` nanoseconds since boot, `w1` timer ticks since boot, `w2`
    /// the wall clock: nanoseconds since 1970 (UTC), 0 when unknown (the
    /// battery clock read at boot, plus the time since).
    pub const NOW: u64 = 1;
    /// `w0` absolute time (ns since boot): the reply comes at or after it.
    pub const UNTIL: u64 = 2;
    /// Gives the rest of the time slice to other domains.
    pub const YIELD: u64 = 3;
    /// `w0` the wall clock's new time (ns since 1970): `NOW`'s `w2` goes
    /// on from it (the UNIX personality's `clock_settime` for root).
    pub const SET_WALL: u64 = 4;
}

/// The discrim key.
pub mod discrim {
    /// key 0 → `w0` its type number, `w1` its rights bits, `w2` 1 if it
    /// designates an object that no longer exists (then `w0` is void).
    pub const CLASSIFY: u64 = 1;
    /// keys 0 and 1 → `w0` 1 if they convey the same authority.
    pub const COMPARE: u64 = 2;
}

/// The key-bits key (privileged tools only).
pub mod keybits {
    /// key 0 → `w0`, `w1`: its two words (hint cleared); the string: its 16 bytes.
    pub const GET: u64 = 1;
}

/// Range keys (privileged: the space bank's).
pub mod range {
    /// → `w0` first object, `w1` count, `w2` space (0 pages, 1 nodes).
    pub const INFO: u64 = 1;
    /// `w0` index → key 0: a full key to that object as it is now.
    pub const GET: u64 = 2;
    /// `w0` index: destroys the object (zeroes it, bumps its version:
    /// every key to it becomes void) → key 0: a full key to the fresh object.
    pub const RENEW: u64 = 3;
    /// Key 0: a key designating an object (page, node, segment, domain,
    /// start, meter or forwarder key) → `w0` its index in this range, `w1`
    /// its type, `w2` its rights. `VOID_ARGUMENT` if void or destroyed,
    /// `WRONG_TYPE` if of the other space (or no object), `BAD_VALUE` if
    /// outside the range.
    pub const IDENTIFY: u64 = 4;
    /// Key 0: a node key (not read-only), string: 1 to 16 indices (`u32`
    /// each, little-endian), `w0` a first slot → a full key to each object
    /// (as `GET`) in consecutive slots of that node from `w0`. All or
    /// nothing: `BAD_VALUE` (an index outside the range, or a bad string),
    /// `SLOT_RANGE`, `WRONG_TYPE`, `NO_RIGHTS`, `VOID`, `NO_SPACE`.
    pub const GET_INTO: u64 = 5;
    /// String: 1 to 16 indices (`u32` each, little-endian) → the objects
    /// are destroyed in order, as by `RENEW`, stopping at the first that
    /// cannot be for want of memory → `w0` how many were (the caller asks
    /// again for the rest). `BAD_VALUE` (nothing done): an index outside
    /// the range, or a bad string.
    pub const RENEW_MANY: u64 = 6;
}

/// The checkpoint key.
pub mod checkpoint {
    /// Takes a checkpoint now (or joins the one being written) and replies
    /// when it has committed → `w0` its generation, `w1` 1 if the reply
    /// comes after a restart from that very checkpoint (else 0).
    pub const TAKE: u64 = 1;
    /// → `w0` last committed generation, `w1` objects it wrote (nodes in
    /// the high 32 bits, pages in the low 32), `w2` its stop-the-world
    /// pause in TSC ticks, `w3` TSC ticks from the pause to the commit.
    pub const STATS: u64 = 2;
    /// `w0` the period in milliseconds (0: no periodic checkpoints).
    pub const SET_PERIOD: u64 = 3;
    /// → `w0` the period in milliseconds, `w1` restarts since the store was
    /// created, `w2` the generation the system last restarted from, `w3`
    /// TSC ticks the kernel spent writing and committing the last
    /// checkpoint: its own steps, each timed alone (not waiting for the
    /// disk, nor checking for completions; docs/STORE.md "Benchmarks").
    pub const INFO: u64 = 4;
    /// Waits until the system restarts from a checkpoint; the reply is
    /// then `RESTARTED` (a domain that checks state after every restart).
    pub const WAIT_RESTART: u64 = 5;
    /// Waits until the checkpoint writer is idle: the last checkpoint has
    /// migrated home, none is asked for, no raw write runs (benchmarks
    /// start from a quiet disk).
    pub const WAIT_IDLE: u64 = 6;
    /// Benchmarks only (`bench_raw` on the kernel command line, else
    /// `NO_SUCH_ORDER`): once the writer is idle, writes `w0` blocks (0:
    /// as many as the last checkpoint's extent; at most the log's size)
    /// from the start of the checkpoint log, which is free then, in
    /// requests of the disk's largest size, as many in flight as the queue
    /// takes, then flushes → `w0` TSC ticks from the first request to the
    /// flush's completion, `w1` the blocks written. No checkpoint starts
    /// meanwhile. `w1` must be 0 (the kernel uses it while the invoker
    /// waits); `BAD_VALUE` for a size out of range, `NO_SPACE` without
    /// frames for the requests.
    pub const RAW_WRITE: u64 = 7;
    /// The scrub's counters (the background check of both copies of every
    /// home, docs/STORE.md "Scrub") → `w0` blocks read and checked, `w1`
    /// damaged copies found, `w2` copies repaired, `w3` passes over the
    /// whole disk completed.
    pub const SCRUB: u64 = 8;
}

/// The journal key.
pub mod journal {
    /// key 0: a page key → the page's current contents are on disk when
    /// the reply comes (`OK`), and survive a crash before the next
    /// checkpoint. `w0` of the reply: the journal record's sequence number;
    /// `w1`: TSC ticks the kernel spent on the most recent record (the
    /// order that started it, the handling of its write's and flush's
    /// completions, and this answer; not waiting for the disk, nor
    /// entering and leaving the kernel) — under `-icount`, instructions.
    pub const PAGE: u64 = 1;
}

/// The sysinfo key (privileged: the shell's).
pub mod sysinfo {
    /// `w0` a context index to start at → the first domain in the context
    /// cache (every domain that ran recently) at or after it: string a
    /// [`DOMAIN_RECORD`]-byte record (see docs/ABI.md), `w0` the index to
    /// ask next. `BAD_VALUE` past the last.
    pub const DOMAINS: u64 = 1;
    /// → `w0` node slots used << 32 | node slots, `w1` page slots used <<
    /// 32 | page slots, `w2` dirty nodes << 32 | dirty pages, `w3` free
    /// frames. String: 4 words: nodes and pages read from disk, nodes and
    /// pages evicted.
    pub const OBJECTS: u64 = 2;
    /// Key 0: a domain key; string: a name (1–23 bytes) → reports name the
    /// domain so (persistent). `NO_SPACE` when the table of names is full.
    pub const NAME: u64 = 3;
    /// Bytes of a DOMAINS record: root oid, state word (run state | flags
    /// << 8 | fault code << 16), ticks charged, meter oid, meter ticks
    /// left, keeper oid, keeper key info (u64 each; `u64::MAX`: none), the
    /// name (24 bytes, NUL-padded).
    pub const DOMAIN_RECORD: usize = 80;
}

/// I/O-port keys (privileged: a driver's device registers).
pub mod ioports {
    /// → `w0` the first port, `w1` the number of ports.
    pub const INFO: u64 = 1;
}

/// Interrupt keys (privileged: a driver's interrupt line).
pub mod irq {
    /// `w0` 0 (the kernel uses `w0` and `w1` while the invoker waits):
    /// unmasks the line and, once it has fired since the last `WAIT`
    /// answered, answers `OK` with `w0` = the number of interrupts since.
    /// The line is masked each time it fires. After a restart from a
    /// checkpoint a waiting invoker gets `RESTARTED` (re-initialise the
    /// device). No interrupt controller for the line: `IO_ERROR`.
    pub const WAIT: u64 = 1;
    /// Unmasks the line now, without waiting (an edge that arrives while
    /// the line is masked is lost: a driver whose device holds its
    /// interrupt asserted until serviced acknowledges before servicing).
    pub const ACK: u64 = 2;
    /// → `w0` the line, `w1` the global system interrupt it is routed to,
    /// `w2` 1 if level-triggered, `w3` interrupts taken on it since boot.
    pub const INFO: u64 = 3;
}
