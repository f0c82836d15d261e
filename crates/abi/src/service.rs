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

/// A bank key (a forwarder to the space bank labelled with the bank).
pub mod bank {
    /// → key 0: a read-write key to a fresh zero page.
    pub const ALLOC_PAGE: u64 = 1;
    /// → key 0: a full key to a fresh node of void keys.
    pub const ALLOC_NODE: u64 = 2;
    /// Key 0: a key to an object this bank handed out → destroyed (every
    /// key to it becomes void). `BAD_VALUE` if the bank does not own it.
    pub const FREE: u64 = 3;
    /// `w0` page limit, `w1` node limit (`u64::MAX`: none) → key 0: a key
    /// to a new sub-bank. Its forwarder node counts against this bank.
    pub const CREATE_SUB: u64 = 4;
    /// Destroys this bank, its sub-banks and everything allocated through
    /// them; every key to them becomes void. The prime bank: `BAD_STATE`.
    pub const DESTROY: u64 = 5;
    /// → `w0` pages and `w1` nodes allocated through this bank and its
    /// sub-banks, `w2` page limit, `w3` node limit.
    pub const INFO: u64 = 6;
    /// Key 0: a key to a sub-bank (any depth) of this bank, `w0` page
    /// limit, `w1` node limit → set.
    pub const SET_LIMITS: u64 = 7;
    /// Key 0: any key → `w0` 1 if it is a live bank key of this space bank.
    pub const VERIFY: u64 = 8;
    /// Key 0: a key (of any rights) to a page or node allocated through
    /// this bank or one of its sub-banks → `w0` the object's index (its
    /// identity among the bank service's objects of that space), `w1` the
    /// space (0 pages, 1 nodes), key 0 a full key to it. `BAD_VALUE` for
    /// anyone else's object (a UNIX keeper names its processes' shared
    /// pages this way and gets back write access to one it alone holds).
    pub const IDENTIFY: u64 = 9;
    /// Key 0: a node key (not read-only), `w0` a first slot, `w1` a count
    /// (1 to 16) → that many fresh zero pages, read-write keys to them in
    /// consecutive slots of the node from `w0` (what the slots held is
    /// dropped). All or nothing: `LIMIT` if the bank cannot give them all;
    /// the range key's `GET_INTO` errors for a bad node key or slots.
    pub const ALLOC_PAGES_INTO: u64 = 10;
    /// → `w0` pages and `w1` nodes the whole space bank can hand out,
    /// `w2` pages and `w3` nodes allocated now (by every bank): what a
    /// server sizing a sub-bank's limit needs (an unlimited bank's `INFO`
    /// says `u64::MAX`).
    pub const CAPACITY: u64 = 11;
}

/// The data store (`datastore`): names → keys and small blobs. A start
/// key with key info 1 may publish and delete; key info 0 may only look up.
pub mod store {
    /// Key info of a start key that may publish.
    pub const PUBLISHER: u8 = 1;
    /// Longest name in bytes.
    pub const MAX_NAME: usize = 32;
    /// Longest blob in bytes.
    pub const MAX_BLOB: usize = 128;
    /// Entries the store holds.
    pub const MAX_ENTRIES: usize = 128;
    /// String: name, a zero byte, the blob; key 0: the key to publish (may
    /// be void) → `w0` the entry's generation (1 for a new name, one more
    /// on each publish). Publishers only (`NO_RIGHTS`).
    pub const PUT: u64 = 1;
    /// String: name → key 0 the key, string the blob, `w0` generation.
    /// `BAD_VALUE` if there is no such name.
    pub const GET: u64 = 2;
    /// String: name → removed. Publishers only.
    pub const DELETE: u64 = 3;
    /// `w0` index → string the name of the index-th entry (in table order),
    /// `w0` its generation, `w1` the next index to ask for; `BAD_VALUE` past
    /// the end.
    pub const LIST: u64 = 4;
}

/// The reincarnation service (`rs`): starts services from factories,
/// watches them (faults through its keeper key, heartbeats, exits) and
/// restarts them by policy, publishing each incarnation's start key in the
/// data store under the service's name.
pub mod rs {
    /// Key info of the start key clients (the shell, tests) use.
    pub const CLIENT: u8 = 200;
    /// Key info of the start key its timer domain uses.
    pub const TIMER: u8 = 201;
    /// Most services supervised.
    pub const MAX_SERVICES: usize = 16;
    /// The heartbeat order every service receives (a *send*; answering is
    /// becoming available again). `stet_rt::service` handles it.
    pub const PING: u64 = 0xffff_0001;
    /// String: the name (≤ 32 bytes), optionally a zero byte and the
    /// product's argument (8 bytes, little-endian); key 0: the factory's
    /// requestor key;
    /// `w0` restart (1) or hold (0); `w1` back-off base ns; `w2` most
    /// restarts per `w3` ns (at most 16; 0: no rate cap; the rate window
    /// 0: 1 s) → starts it
    /// (published in the data store) → `w0` its index. `LIMIT` when full.
    pub const REGISTER: u64 = 1;
    /// `w0` index → the string its name, `w0` state ([`state`]), `w1`
    /// restarts, `w2` the data store generation, `w3` the next index;
    /// `BAD_VALUE` past the last.
    pub const STATUS: u64 = 2;
    /// String: a name; `w0` 0 crash (it jumps to address 0 and faults to
    /// its keeper, the reincarnation service), 1 kill (its objects are
    /// destroyed at once) → done. `BAD_STATE` if it is not running now,
    /// `BAD_VALUE` no such name or kind.
    pub const INJECT: u64 = 3;
    /// String: a name → a held service is started again.
    pub const RESTART: u64 = 4;
    /// (From its timer.) Time passes: heartbeats, hangs, due restarts.
    pub const TICK: u64 = 5;

    /// Service states in STATUS.
    pub mod state {
        /// Running (the published key works).
        pub const RUNNING: u64 = 0;
        /// Down, restarting at a time set by the back-off.
        pub const BACKOFF: u64 = 1;
        /// Down and held (by policy or the rate cap).
        pub const HELD: u64 = 2;
    }
}

/// Factory requestor orders the reincarnation service relies on are in
/// the factory's own module; the block-style test service's orders:
pub mod blk {
    /// `w0` block number → string: the block's 4096 bytes
    /// (`stet_abi::service::blk::byte`).
    pub const READ: u64 = 1;
    /// The test service crashes while serving this (an invalid opcode):
    /// what a driver's bug looks like to its client, who hears `RESTARTED`
    /// from the reincarnation service (`service_restart` measures it).
    pub const CRASH: u64 = 2;

    /// Byte `i` of block `n`: what the test service serves and its clients
    /// check.
    pub fn byte(n: u64, i: usize) -> u8 {
        (n.wrapping_mul(0x9e37_79b9)
            .wrapping_add((i as u64).wrapping_mul(i as u64 + 7))
            >> 3) as u8
    }
}

/// The factory server's keys: the metafactory key (label 0, made by the
/// image builder: `forwarder:factory:0`), and per factory a builder key
/// and a requestor key (forwarders it makes).
pub mod factory {
    /// Metafactory: key 0 a bank key (storage for the new factory), key 1
    /// a key to a program node (`program:<name>` in a spec) → key 0 the
    /// builder key, key 1 the requestor key of a new, unsealed factory.
    pub const NEW_FACTORY: u64 = 1;
    /// Builder: `w0` component slot (1..=12), key 0 any key → installed
    /// (replacing what the slot held). `BAD_STATE` once sealed.
    pub const INSTALL: u64 = 2;
    /// Builder: `w0` stack pages of each product (1..=256; default 8).
    /// `BAD_STATE` once sealed.
    pub const SET_STACK_PAGES: u64 = 3;
    /// Builder: seals the factory (no more changes) and decides whether
    /// its products are discreet.
    pub const SEAL: u64 = 4;
    /// Requestor: key 0 the requester's bank key, key 1 a meter key, key 2
    /// the argument key, key 3 the product's domain keeper (a start key,
    /// or void), `w0` the product's `rdi` → key 0 a start key to the new,
    /// running product, key 1 a domain key to it if a keeper was named
    /// (a supervisor's), else void. `BAD_STATE` until sealed.
    pub const CREATE: u64 = 5;
    /// Requestor or builder: → `w0` 1 if the products are discreet, else
    /// 0 with `w1` the first component slot that is not discreet (0: the
    /// factory is not sealed), `w2` why ([`why`]), `w3` the type of that
    /// component key.
    pub const IS_DISCREET: u64 = 6;

    /// Component slots a factory has (the product's general slots 1..=12).
    pub const COMPONENTS: usize = 12;
    /// The product's general slot holding the argument key.
    pub const ARG_SLOT: usize = 13;
    /// The product's general slot holding its bank (a sub-bank of the
    /// requester's bank, from which all its objects come).
    pub const BANK_SLOT: usize = 14;

    /// Why a factory's products are not discreet (`IS_DISCREET` `w2`).
    pub mod why {
        /// The factory is not sealed.
        pub const UNSEALED: u64 = 1;
        /// A component key's type or rights can pass information out.
        pub const KEY: u64 = 2;
        /// A forwarder that is not a requestor key of this factory server.
        pub const FORWARDER: u64 = 3;
        /// A requestor key of a factory that was not sealed when this one
        /// was (every cycle of factories ends here).
        pub const NESTED_UNSEALED: u64 = 4;
        /// A requestor key of a factory whose products are not discreet.
        pub const NESTED_NOT_DISCREET: u64 = 5;
    }
}

/// The notes service (`notes`): the shell's persistent notes and counter,
/// kept in the service's own memory — which is all it takes to survive
/// killing QEMU.
pub mod notes {
    /// String: the note (≤ 120 bytes) → `w0` the number of notes. `NO_SPACE`
    /// when 64 notes are kept.
    pub const ADD: u64 = 1;
    /// `w0` index → string the note; `BAD_VALUE` past the last.
    pub const GET: u64 = 2;
    /// → `w0` the counter, one more than last time.
    pub const COUNT: u64 = 3;
    /// Longest note.
    pub const MAX_NOTE: usize = 120;
    /// Most notes.
    pub const MAX_NOTES: usize = 64;
}
