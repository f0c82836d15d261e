//! A seeded, deterministic fuzzer of the invocation ABI (tests/system/fuzz.toml).
//!
//! It makes [`INVOCATIONS`] invocations with random control words (call,
//! send, malformed), invoked slots, order codes, data words, keys sent and
//! received, strings (in its own memory, at bad addresses, too long) and
//! receive buffers (writable, read-only, bad). Orders are small numbers,
//! boundary values or any `u64`; half the time, when it knows what the key
//! is, an order its object knows, and then half the time with words and
//! keys of the kinds that order accepts (so that domains get built, run,
//! fault and are destroyed). It checks:
//!
//! * the answers any key must give (docs/ABI.md): a malformed control word
//!   `BAD_CONTROL`, a string over 4096 bytes `STRING_TOO_LONG`, an
//!   unreadable string `BAD_BUFFER` (and never for a readable one), slot 0
//!   `VOID`, a send to the echo server `OK`; bit 16 of `rax` exactly when a
//!   reply string did not fit writable memory, and no other bits above 16;
//! * that the kernel never writes a read-only receive buffer (a canary in
//!   `.rodata`);
//! * every [`CHECK_EVERY`] invocations and at the end, that slots 1–13 hold
//!   only authority it was given or derived legitimately: discrim CLASSIFY
//!   (the type), key bits (the object) and discrim COMPARE against the
//!   reference copies (keys that must be exactly the ones given).
//!
//! Keys (fuzz.toml): 1, 2 fresh nodes, 3 a fresh page, 4 a supply node of 8
//! pages, 5 a range of 32 nodes, 6 a range of 32 pages, 7 discrim, 8 key
//! bits, 9 a number key, 10 a start key to the `echo` server, 11 a domain
//! key and 12 a start key to the victim (an `echo` instance with no keys
//! and no keeper: a fault just stops it), 13 the prime meter, 14 a node
//! holding reference copies of keys 1–13, 15 the console. Slots 14 and 15
//! are never invoked, sent or received into at random (so random strings
//! never reach the log); the fuzzer uses slot 14 itself to refill slots,
//! to fetch discrim and key bits and for the checks.
//!
//! So that it never blocks for good, it never uses kind *return*, and
//! before a call or send through a key it does not know it looks at the
//! key's bits: through a start key it only calls the echo server (any other
//! target may be stopped or busy for ever), through a resume key it only
//! sends. The echo server's start key is sent only to the server itself
//! and to discrim and key bits: stored anywhere else it could become the
//! keeper of a domain that faults without ever running (a meter missing),
//! and the server, answering each fault with an order that leaves it
//! pending, would be busy for ever — a caller stalled on it is woken each
//! time but the next fault always gets in first. A reply voids the
//! receive slots its keys do not fill, so it refills a random slot from
//! the reference node now and then. At the end it stops the victim and
//! clears or renews every node it was given, so that no domain it built
//! can run.
//!
//! `arg`: bits 0–31 the seed; bits 32–62, if not zero, the index of the
//! first invocation to print (with its answer) before making it, to narrow
//! down a kernel bug; bit 63: instead of fuzzing, reproduce the starvation
//! above ([`Fuzz::starve`]).
#![no_std]
#![no_main]

use core::fmt::{self, Write as _};
use core::sync::atomic::{AtomicU64, Ordering};
use stet_prng::XorShift64Star;
use stet_rt::abi::invoke::{fast, Kind, Source};
use stet_rt::abi::layout::{HEAP_START, STACK_TOP};
use stet_rt::abi::{
    code::{self, Code},
    order, MAX_STRING,
};
use stet_rt::invoke::{raw, Recv, Regs};
use stet_rt::key::{Answer, Msg, Slot};

/// Random invocations made.
const INVOCATIONS: u64 = 100_000;
/// Authority check period.
const CHECK_EVERY: u64 = 1000;
/// Slots the fuzzer chooses from: 0..=LAST.
const LAST: u8 = 13;
/// The reference node.
const REF: Slot = 14;
/// The console.
const CONSOLE: Slot = 15;
/// Slots of the reference node that hold keys parked during a check.
const STASH: [u64; 3] = [0, 14, 15];

// Given slots (and their reference copies at the same index).
const NODE_A: Slot = 1;
const NODE_B: Slot = 2;
const PAGE: Slot = 3;
const SUPPLY: Slot = 4;
const RANGE_NODES: Slot = 5;
const RANGE_PAGES: Slot = 6;
const DISCRIM: Slot = 7;
const KEYBITS: Slot = 8;
const NUMBER: Slot = 9;
const ECHO: Slot = 10;
const VICTIM: Slot = 11;
const VICTIM_START: Slot = 12;
const METER: Slot = 13;
/// Pages in the supply node.
const SUPPLY_PAGES: usize = 8;

// Key types (`stet_keys::KeyType`).
const T_VOID: u8 = 0;
const T_NUMBER: u8 = 1;
const T_PAGE: u8 = 2;
const T_NODE: u8 = 3;
const T_SEGMENT: u8 = 4;
const T_DOMAIN: u8 = 5;
const T_START: u8 = 6;
const T_RESUME: u8 = 7;
const T_METER: u8 = 8;
const T_DISCRIM: u8 = 9;
const T_KEYBITS: u8 = 12;
const T_RANGE: u8 = 13;
const T_FORWARDER: u8 = 16;
/// The oid bits of a key's second word.
const OID_MASK: u64 = (1 << 40) - 1;

/// What the fuzzer knows a slot holds: a key type, [`ECHO_START`] or
/// [`UNKNOWN`].
const UNKNOWN: u8 = 0xff;
/// A start key to the echo server (safe to call).
const ECHO_START: u8 = 0x80 | T_START;

/// A read-only buffer: receive buffers here must never be written.
static CANARY: [u8; 8192] = canary();

const fn canary() -> [u8; 8192] {
    let mut b = [0u8; 8192];
    let mut i = 0;
    while i < b.len() {
        b[i] = (i * 7 + 3) as u8;
        i += 1;
    }
    b
}

fn canary_sum() -> u64 {
    let c = core::hint::black_box(&CANARY);
    c.iter().enumerate().fold(0u64, |s, (i, &b)| {
        s.wrapping_mul(31).wrapping_add(b as u64 ^ i as u64)
    })
}

/// Some writable data to read strings from.
static DATA: AtomicU64 = AtomicU64::new(0x5eed);

/// Addresses where no byte is readable or writable by a domain.
const BAD_ADDRS: [u64; 16] = [
    0,
    0x10,
    0xff8,
    0x1000,
    0x3f_f000,
    HEAP_START,
    HEAP_START - 8,
    STACK_TOP,
    STACK_TOP - 16 * 4096 - 8,
    0x7fff_ffff_fff8,
    0x0000_8000_0000_0000,
    0xffff_8000_0000_0000,
    0xffff_ffff_8000_0000,
    0xffff_ffff_8010_0000,
    u64::MAX - 7,
    u64::MAX,
];

/// Word values at the edges of what orders accept.
const BOUNDARY: [u64; 20] = [
    0,
    1,
    7,
    8,
    15,
    16,
    255,
    256,
    4088,
    4095,
    4096,
    4097,
    1 << 32,
    (1 << 32) - 1,
    1 << 40,
    0x7fff_ffff_ffff,
    1 << 63,
    u64::MAX - 1,
    u64::MAX,
    0xffff_ffff_8000_0000,
];

/// The fuzzer's choices: `stet_prng`'s xorshift64*, so a printed seed
/// replays the same invocations.
struct Rng(XorShift64Star);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }

    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len() as u64) as usize]
    }

    /// A random slot 1..=LAST for which `ok` holds, if any.
    fn slot_where(&mut self, ok: impl Fn(Slot) -> bool) -> Option<Slot> {
        let n = (1..=LAST).filter(|&s| ok(s)).count() as u64;
        if n == 0 {
            return None;
        }
        let k = self.below(n) as usize;
        (1..=LAST).filter(|&s| ok(s)).nth(k)
    }
}

/// A console line formatted in a buffer and written with one invocation
/// (so that the kernel's own lines never cut it).
struct Line {
    buf: [u8; 1024],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            buf: [0; 1024],
            len: 0,
        }
    }

    fn emit(&mut self) {
        self.buf[self.len] = b'\n';
        Msg::new(CONSOLE, order::console::WRITE)
            .string(&self.buf[..self.len + 1])
            .call();
        self.len = 0;
    }
}

impl fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            if self.len < self.buf.len() - 1 {
                self.buf[self.len] = b;
                self.len += 1;
            }
        }
        Ok(())
    }
}

macro_rules! say {
    ($($arg:tt)*) => {{
        let mut l = Line::new();
        let _ = write!(l, $($arg)*);
        l.emit();
    }};
}

/// What a receive buffer is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Buf {
    /// 4096 bytes of writable memory of the fuzzer.
    Writable,
    /// Not one byte writable.
    Unwritable,
    /// None (capacity 0).
    None,
}

/// What a string is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Str {
    /// Readable memory of the fuzzer (or empty).
    Readable,
    /// Its first byte is not readable.
    Unreadable,
    /// A random address.
    Unknown,
}

/// A random invocation.
#[derive(Clone, Copy, Default)]
struct Inv {
    index: u64,
    /// What the fuzzer knew the invoked key was.
    class: u8,
    regs: Regs,
    buf: u64,
    cap: u64,
}

impl fmt::Display for Inv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.regs;
        write!(
            f,
            "#{} {} rax={:#x} rdi={:#x} w=[{:#x} {:#x} {:#x} {:#x}] r9={:#x} r12={:#x} r13={:#x}",
            self.index,
            class_name(self.class),
            r.rax,
            r.rdi,
            r.w[0],
            r.w[1],
            r.w[2],
            r.w[3],
            r.r9,
            self.buf,
            self.cap
        )
    }
}

fn class_name(c: u8) -> &'static str {
    match c {
        T_VOID => "void",
        T_NUMBER => "number",
        T_PAGE => "page",
        T_NODE => "node",
        T_SEGMENT => "segment",
        T_DOMAIN => "domain",
        T_START => "start",
        T_RESUME => "resume",
        T_METER => "meter",
        T_DISCRIM => "discrim",
        10 => "sleep",
        11 => "console",
        T_KEYBITS => "keybits",
        T_RANGE => "range",
        T_FORWARDER => "forwarder",
        ECHO_START => "start(echo)",
        _ => "?",
    }
}

/// Object identities learned at the start.
#[derive(Clone, Copy, Default)]
struct World {
    /// First oid and count of the node range, of the page range.
    nodes: (u64, u64),
    pages: (u64, u64),
    node_a: u64,
    node_b: u64,
    page: u64,
    supply: u64,
    supply_pages: [u64; SUPPLY_PAGES],
    echo: u64,
    victim: u64,
    /// The victim's address space key at the start: type and oid.
    space_type: u8,
    space: u64,
    meter: u64,
}

impl World {
    fn owns_node(&self, oid: u64) -> bool {
        (oid >= self.nodes.0 && oid < self.nodes.0 + self.nodes.1)
            || oid == self.node_a
            || oid == self.node_b
            || oid == self.supply
    }

    fn owns_page(&self, oid: u64) -> bool {
        (oid >= self.pages.0 && oid < self.pages.0 + self.pages.1)
            || oid == self.page
            || self.supply_pages.contains(&oid)
    }
}

struct Fuzz {
    rng: Rng,
    seed: u64,
    trace_from: u64,
    world: World,
    /// What each slot holds, as far as the fuzzer knows.
    shadow: [u8; 16],
    /// What each reference copy is.
    ref_class: [u8; 16],
    /// Random invocations made.
    made: u64,
    /// Helper invocations (refills, looks at keys, checks).
    helpers: u64,
    /// Random invocations drawn but not made (through a start key to a
    /// domain that may never answer).
    skipped: u64,
    /// Echo start keys not sent (see the module comment).
    withheld: u64,
    /// Kernel answers by result code (14: any other).
    kernel: [u64; 15],
    /// Replies from the echo server.
    echoed: u64,
    /// `OK` answers by type of the key invoked and order (0..=20).
    coverage: [[u32; 21]; 14],
    wrong: u64,
    /// The last invocations, for reports.
    ring: [Inv; 16],
    canary: u64,
    code_page: u64,
    /// Send scratch (random words) and receive scratch: 8 KiB each.
    sbuf: u64,
    rbuf: u64,
}

impl Fuzz {
    /// A helper invocation: a call with `w0`, keys, one receive slot.
    fn h(&mut self, slot: Slot, ord: u64, w0: u64, keys: [Slot; 2], recv: Slot) -> Answer {
        self.helpers += 1;
        Msg::new(slot, ord)
            .words([w0, 0, 0, 0])
            .keys([keys[0], keys[1], 0, 0])
            .recv([recv, 0, 0, 0])
            .call()
    }

    /// A helper invocation that must succeed.
    fn must(
        &mut self,
        what: &str,
        slot: Slot,
        ord: u64,
        w0: u64,
        keys: [Slot; 2],
        recv: Slot,
    ) -> Answer {
        let a = self.h(slot, ord, w0, keys, recv);
        if a.code != Code::Ok {
            let name = code::name(a.code);
            self.wrong(format_args!("{what}: code {} ({name})", a.code));
        }
        a
    }

    /// Copies reference key `r` into slot `t`.
    fn fetch(&mut self, r: Slot, t: Slot) {
        self.must("fetch", REF, order::node::FETCH, r as u64, [0, 0], t);
        self.shadow[t as usize] = self.ref_class[r as usize];
    }

    /// The key bits of slot `s`, through the key-bits key in slot `kb`.
    fn bits_via(&mut self, kb: Slot, s: Slot) -> (u64, u64) {
        let a = self.must("key bits", kb, order::keybits::GET, 0, [s, 0], 0);
        (a.w[0], a.w[1])
    }

    fn wrong(&mut self, what: fmt::Arguments<'_>) {
        self.wrong += 1;
        if self.wrong <= 20 {
            say!("fuzz: WRONG after {} invocations: {}", self.made, what);
            if self.wrong <= 3 {
                let n = self.ring.len() as u64;
                for i in self.made.saturating_sub(n)..self.made {
                    say!("fuzz:   {}", self.ring[(i % n) as usize]);
                }
            }
        }
    }

    /// Refills a random slot, mostly a void one, from a random reference.
    fn refill_some(&mut self) {
        let r = 1 + self.rng.below(LAST as u64) as u8;
        let mut t = 1 + self.rng.below(LAST as u64) as u8;
        if self.rng.chance(3, 4) {
            let shadow = self.shadow;
            if let Some(v) = self.rng.slot_where(|s| shadow[s as usize] == T_VOID) {
                t = v;
            }
        }
        self.fetch(r, t);
    }

    /// What slot `s` holds, looking at its bits if unknown (through a
    /// key-bits key, fetched into some other slot if none is known).
    fn class(&mut self, s: Slot) -> u8 {
        if s == 0 {
            return T_VOID;
        }
        if self.shadow[s as usize] == UNKNOWN {
            let kb = match (1..=LAST).find(|&t| t != s && self.shadow[t as usize] == T_KEYBITS) {
                Some(t) => t,
                None => {
                    let t = 1 + (s as u64 + self.rng.below(LAST as u64 - 1)) % LAST as u64;
                    self.fetch(KEYBITS, t as u8);
                    t as u8
                }
            };
            let (w0, w1) = self.bits_via(kb, s);
            self.shadow[s as usize] = self.class_of(w0, w1);
        }
        self.shadow[s as usize]
    }

    fn class_of(&self, w0: u64, w1: u64) -> u8 {
        let t = w0 as u8;
        if t == T_START && w1 & OID_MASK == self.world.echo {
            ECHO_START
        } else {
            t
        }
    }

    /// A random data word.
    fn word(&mut self) -> u64 {
        let addrs = [self.sbuf, self.rbuf, self.code_page, STACK_TOP - 4096];
        let r = &mut self.rng;
        match r.below(20) {
            0..=1 => r.below(4),
            2..=5 => r.below(21),
            6..=8 => r.below(4097) & !r.pick(&[0, 7]),
            9..=11 => r.pick(&BOUNDARY),
            12..=13 => r.pick(&addrs) + r.below(4096),
            _ => r.next(),
        }
    }

    /// Words that order `regs.rdi` of a `class` key accepts, mostly.
    fn shape(&mut self, class: u8, regs: &mut Regs) {
        let page_or_segment = if self.rng.chance(1, 2) {
            T_PAGE
        } else {
            T_SEGMENT
        };
        let keys: &[u8] = match (class, regs.rdi) {
            (T_NODE, order::node::MAKE_DOMAIN) => &[T_NODE, T_NODE, T_PAGE],
            (T_DOMAIN, order::domain::SET_SPACE) => &[page_or_segment],
            (T_DOMAIN, order::domain::SET_METER) => &[T_METER],
            (T_DOMAIN, order::domain::SET_KEEPER) => &[T_START],
            (T_METER, order::meter::CREATE_SUB) => &[T_NODE],
            _ => &[],
        };
        if !keys.is_empty() {
            let slot = regs.rax & 15;
            regs.rax = regs.rax & !(0xffff << 8) | self.keys_of(slot, keys);
        }
        let r = &mut self.rng;
        let w = &mut regs.w;
        match (class, regs.rdi) {
            (T_DOMAIN, order::domain::SET_STATE) => {
                // Run states, flags (stopped, foreign), fault codes.
                *w = [r.pick(&[0, 2]), r.below(4), r.below(9), r.below(4096)];
            }
            (T_DOMAIN, order::domain::MAKE_START) => w[0] = r.below(257),
            (T_DOMAIN, order::domain::GET_SLOT | order::domain::SET_SLOT) => w[0] = r.below(17),
            (T_NODE, order::node::MAKE_SEGMENT) => *w = [r.below(12), r.below(16), 0, 0],
            (T_NODE, _) => w[0] = r.below(17),
            (T_PAGE, order::page::READ | order::page::WRITE) => {
                *w = [r.below(4097), r.below(4097), 0, 0];
            }
            (T_PAGE, _) => w[0] = r.below(513) * 8,
            (T_SEGMENT, order::segment::RESTRICT) => w[0] = r.below(16),
            (T_SEGMENT, _) => *w = [r.below(1 << 20), r.below(4097), 0, 0],
            (T_METER, _) => w[0] = r.pick(&[0, 1, 10, 1000, u64::MAX]),
            (T_RANGE, _) => w[0] = r.below(33),
            _ => {}
        }
    }

    /// Keys to send: none, random slots, or slots holding the types
    /// orders want (nodes and a page for MAKE_DOMAIN, meters, segments…).
    fn draw_keys(&mut self, slot: u64) -> u64 {
        let mut ctl = 0;
        match self.rng.below(4) {
            0 | 1 => {}
            2 => {
                for i in 0..4 {
                    if self.rng.chance(1, 2) {
                        ctl |= self.rng.below(LAST as u64 + 1) << (8 + 4 * i);
                    }
                }
            }
            _ => {
                let r = &mut self.rng;
                let types = [
                    T_NODE, T_PAGE, T_SEGMENT, T_DOMAIN, T_METER, ECHO_START, T_NUMBER, T_RESUME,
                ];
                let patterns = [
                    [T_NODE, T_NODE, T_PAGE],
                    [T_NODE, T_VOID, T_VOID],
                    [T_PAGE, T_VOID, T_VOID],
                    [T_SEGMENT, T_VOID, T_VOID],
                    [T_METER, T_VOID, T_VOID],
                    [ECHO_START, T_VOID, T_VOID],
                    [r.pick(&types), r.pick(&types), T_VOID],
                    [r.pick(&types), r.pick(&types), r.pick(&types)],
                ];
                let p = r.pick(&patterns);
                ctl = self.keys_of(slot, &p);
            }
        }
        ctl
    }

    /// Keys of types `types` (void: none) to send, in distinct slots that
    /// hold them, other than `slot` (random slots where it has none).
    fn keys_of(&mut self, slot: u64, types: &[u8]) -> u64 {
        let mut ctl = 0;
        let mut used = 1u16 << slot;
        let shadow = self.shadow;
        for (i, &t) in types.iter().enumerate() {
            if t == T_VOID {
                continue;
            }
            let r = &mut self.rng;
            let s = r
                .slot_where(|s| shadow[s as usize] == t && used & 1 << s == 0)
                .unwrap_or_else(|| r.below(LAST as u64 + 1) as u8);
            used |= 1 << s;
            ctl |= (s as u64) << (8 + 4 * i);
        }
        ctl
    }

    /// Draws a random invocation; also says whether the control word is
    /// malformed and what the string and the receive buffer are.
    fn draw(&mut self) -> (Inv, bool, Str, Buf) {
        let mut slot = self.rng.below(LAST as u64 + 1);
        if (slot == 0 || self.shadow[slot as usize] == T_VOID) && self.rng.chance(3, 4) {
            // Mostly invoke keys that are there.
            slot = self.rng.below(LAST as u64 + 1);
        }
        let roll = self.rng.below(100);
        let (kind, bad) = match roll {
            0..=49 => (0, false),
            50..=94 => (2, false),
            // A try-send: never stalls, so any target is safe.
            95..=96 => (3, false),
            _ => (self.rng.below(4), true),
        };
        let mut ctl = slot | kind << 4 | self.draw_keys(slot);
        let r = &mut self.rng;
        if roll >= 97 {
            // A reserved bit (6, 7, 44-47, 61-63).
            ctl |= 1 << r.pick(&[6u64, 7, 44, 45, 46, 47, 61, 62, 63]);
        }
        for i in 0..4 {
            // Kernel objects answer with key 0.
            if r.chance(if i == 0 { 4 } else { 1 }, 10) {
                ctl |= (1 + r.below(LAST as u64)) << (24 + 4 * i);
            }
        }
        if r.chance(1, 4) {
            ctl |= r.below(LAST as u64 + 1) << 40;
        }
        let len = match r.below(40) {
            0..=15 => 0,
            16..=23 => 1 + r.below(64),
            24..=31 => 1 + r.below(MAX_STRING as u64),
            32 => MAX_STRING as u64,
            // The sizes of a register block and an FPU image.
            33..=35 => 160,
            36..=37 => 1024,
            _ => MAX_STRING as u64 + 1 + r.below(0x1fff - MAX_STRING as u64),
        };
        ctl |= len << 48;
        let canary = CANARY.as_ptr() as u64;
        let regions = [
            (self.sbuf, 8192u64),
            (self.rbuf, 8192),
            (canary, CANARY.len() as u64),
            (self.code_page, 4096),
            (DATA.as_ptr() as u64, 8),
        ];
        let (addr, s) = match r.below(20) {
            0..=13 => {
                let (base, size) = r.pick(&regions);
                if len <= size {
                    let off = r.below(size - len + 1) & !r.pick(&[0, 7, 7]);
                    (base + off, Str::Readable)
                } else {
                    (base, Str::Unknown)
                }
            }
            14..=16 => (r.pick(&BAD_ADDRS), Str::Unreadable),
            _ => (r.next(), Str::Unknown),
        };
        let s = if len == 0 { Str::Readable } else { s };
        let cap = match r.below(6) {
            0 => 0,
            1 => r.below(64),
            2 => 4096,
            3 => r.below(8192),
            _ => r.next(),
        };
        // The kernel writes at most 4096 bytes: offsets below 4096 keep
        // them inside the scratch (or the canary).
        let (buf, b) = match r.below(20) {
            0..=6 => (self.rbuf + r.below(4096), Buf::Writable),
            7..=9 => (canary + r.below(4096), Buf::Unwritable),
            10 => (self.code_page + r.below(4096), Buf::Unwritable),
            11..=15 => (r.pick(&BAD_ADDRS), Buf::Unwritable),
            _ => (0, Buf::None),
        };
        let cap = if b == Buf::None { 0 } else { cap };
        let rdi = match r.below(20) {
            0..=9 => r.below(10),
            10..=14 => r.below(21),
            15..=16 => r.pick(&BOUNDARY),
            _ => r.next(),
        };
        let w = [self.word(), self.word(), self.word(), self.word()];
        let regs = Regs {
            rax: ctl,
            rdi,
            w,
            r9: addr,
        };
        let inv = Inv {
            index: self.made,
            class: UNKNOWN,
            regs,
            buf,
            cap,
        };
        (inv, bad, s, b)
    }

    /// Draws invocations until one is safe to make (see the module
    /// comment), and knows what it invokes.
    fn draw_safe(&mut self) -> (Inv, bool, Str, Buf) {
        loop {
            let (mut inv, bad, s, b) = self.draw();
            let regs = &mut inv.regs;
            let slot = (regs.rax & 15) as u8;
            let len = regs.rax >> 48 & 0x1fff;
            if bad || len > MAX_STRING as u64 || s == Str::Unreadable {
                // Refused before the key is looked at.
                return (inv, bad, s, b);
            }
            let class = self.class(slot);
            let orders = match class {
                T_PAGE => 6,
                T_NODE => 9,
                T_SEGMENT => 5,
                T_DOMAIN => 17,
                T_METER | T_DISCRIM | T_RESUME => 2,
                T_KEYBITS => 1,
                T_RANGE => 3,
                _ => 0,
            };
            if orders > 0 && self.rng.chance(1, 2) {
                // An order the object knows (resume keys: 0 and 1), often
                // with words in the range it accepts.
                regs.rdi = (class != T_RESUME) as u64 + self.rng.below(orders);
                if self.rng.chance(1, 2) {
                    self.shape(class, regs);
                }
            }
            match class {
                T_VOID if slot != 0 && self.rng.chance(3, 4) => continue,
                // Either may lead to a domain that never takes a message.
                T_START | T_FORWARDER => {
                    self.skipped += 1;
                    continue;
                }
                T_RESUME => regs.rax = regs.rax & !(3 << 4) | 2 << 4,
                _ => {}
            }
            if !matches!(
                class,
                ECHO_START | T_DISCRIM | T_KEYBITS | T_VOID | T_NUMBER
            ) {
                for i in 0..4 {
                    let k = (regs.rax >> (8 + 4 * i) & 15) as u8;
                    if k != 0 && self.class(k) == ECHO_START {
                        regs.rax &= !(15 << (8 + 4 * i));
                        self.withheld += 1;
                    }
                }
            }
            // (Looking at a key may have put a key-bits key in the slot.)
            inv.class = self.shadow[slot as usize];
            return (inv, bad, s, b);
        }
    }

    /// Makes one random invocation and checks the answer (a writable
    /// receive buffer is in `rbuf`, the scratch at `self.rbuf`).
    fn step(&mut self, rbuf: &mut [u8; 8192]) {
        let (inv, bad, s, b) = self.draw_safe();
        let n = self.ring.len() as u64;
        self.ring[(self.made % n) as usize] = inv;
        let tracing = self.made >= self.trace_from;
        if tracing {
            say!("fuzz: {inv}");
        }
        let recv = match b {
            Buf::Writable => {
                let off = (inv.buf - self.rbuf) as usize;
                Recv::bytes_cap(&mut rbuf[off..], inv.cap)
            }
            Buf::Unwritable => Recv::foreign(inv.buf, inv.cap),
            Buf::None => Some(Recv::NONE),
        };
        let Some(recv) = recv else {
            self.wrong(format_args!(
                "{inv}: its receive buffer is this program's memory"
            ));
            return;
        };
        let out = raw(inv.regs, recv);
        if tracing {
            let w = out.w;
            say!(
                "fuzz:   = rdi {:#x} rax {:#x} w=[{:#x} {:#x} {:#x} {:#x}]",
                out.rdi,
                out.rax,
                w[0],
                w[1],
                w[2],
                w[3]
            );
        }
        self.made += 1;
        let ctl = inv.regs.rax;
        let (slot, kind, len) = (fast::slot(ctl), fast::kind(ctl), fast::len(ctl));
        for i in 0..4 {
            let t = fast::recv_slot(ctl, i);
            if t != 0 {
                self.shadow[t] = UNKNOWN;
            }
        }
        let src = (out.rax >> 8) as u8;
        if src == Source::Resume {
            self.echoed += 1;
        } else {
            let (c, o) = (inv.class as usize, inv.regs.rdi as usize);
            if out.rdi == Code::Ok && o <= 20 && c < self.coverage.len() {
                self.coverage[c][o] += 1;
            }
            self.kernel[out.rdi.min(14) as usize] += 1;
        }
        let want = if bad {
            Some(Code::BadControl)
        } else if len > MAX_STRING {
            Some(Code::StringTooLong)
        } else if s == Str::Unreadable {
            Some(Code::BadBuffer)
        } else if s != Str::Readable {
            None
        } else if slot == 0 {
            Some(Code::Void)
        } else if kind == Kind::Send && inv.class == ECHO_START {
            // A send answers at once.
            Some(Code::Ok)
        } else {
            None
        };
        if kind == Kind::TrySend && inv.class == ECHO_START && want.is_none() && s == Str::Readable
        {
            // A try-send: delivered, or BUSY with nothing sent.
            if !matches!(Code::decode(out.rdi), Some(Code::Ok | Code::Busy))
                || src != Source::Kernel
            {
                self.wrong(format_args!(
                    "try-send answered {} (source {src}), want ok or busy",
                    out.rdi
                ));
            }
        }
        if let Some(c) = want {
            if out.rdi != c || src != Source::Kernel {
                let name = c.name();
                self.wrong(format_args!(
                    "answer {} (source {src}), want {} ({name})",
                    out.rdi, c as u64
                ));
            }
        } else if s == Str::Readable && src == Source::Kernel && out.rdi == Code::BadBuffer {
            self.wrong(format_args!("BAD_BUFFER for a readable string"));
        }
        let n = out.r9.min(inv.cap).min(MAX_STRING as u64);
        let fault = out.rax >> 16 & 1 != 0;
        if n > 0 {
            match b {
                Buf::Writable if fault => self.wrong(format_args!(
                    "buffer fault bit for writable memory ({n} bytes)"
                )),
                Buf::Unwritable if !fault => self.wrong(format_args!(
                    "no buffer fault bit for unwritable memory ({n} bytes)"
                )),
                _ => {}
            }
        }
        if out.rax >> 17 != 0 {
            self.wrong(format_args!("rax {:#x} on delivery", out.rax));
        }
    }

    /// Checks that slots 1..=13 hold only legitimate authority, and that
    /// the canary is intact.
    fn check(&mut self) {
        if canary_sum() != self.canary {
            self.wrong(format_args!("the kernel wrote a read-only receive buffer"));
            self.canary = canary_sum();
        }
        self.phase([11, 12, 13], 1..=10);
        self.phase([1, 2, 3], 11..=13);
    }

    /// Parks the keys of `tools` in the reference node, puts discrim and
    /// key bits in the first two (the third is scratch), checks `slots`,
    /// and puts the parked keys back.
    fn phase(&mut self, tools: [Slot; 3], slots: core::ops::RangeInclusive<Slot>) {
        for (j, &t) in tools.iter().enumerate() {
            self.must("park", REF, order::node::SWAP, STASH[j], [t, 0], 0);
        }
        let saved = self.shadow;
        let [d, kb, sc] = tools;
        self.fetch(DISCRIM, d);
        self.fetch(KEYBITS, kb);
        for s in slots {
            self.verify(s, d, kb, sc);
        }
        for (j, &t) in tools.iter().enumerate() {
            self.must("unpark", REF, order::node::FETCH, STASH[j], [0, 0], t);
            self.shadow[t as usize] = saved[t as usize];
        }
    }

    /// Whether slot `s` holds exactly reference key `r`.
    fn same(&mut self, s: Slot, r: Slot, d: Slot, sc: Slot) -> bool {
        self.fetch(r, sc);
        let a = self.must("compare", d, order::discrim::COMPARE, 0, [s, sc], 0);
        a.w[0] == 1
    }

    /// Checks slot `s` with discrim in `d`, key bits in `kb`, `sc` scratch.
    fn verify(&mut self, s: Slot, d: Slot, kb: Slot, sc: Slot) {
        let c = self.must("classify", d, order::discrim::CLASSIFY, 0, [s, 0], 0);
        let (ty, dangling) = (c.w[0] as u8, c.w[2] == 1);
        let (w0, w1) = self.bits_via(kb, s);
        let (bt, oid) = (w0 as u8, w1 & OID_MASK);
        if dangling && ty != T_VOID {
            self.wrong(format_args!("slot {s}: a dangling key classified {ty}"));
        } else if !dangling && bt != ty {
            self.wrong(format_args!(
                "slot {s}: discrim says {ty}, key bits {w0:#x}"
            ));
        }
        let w = self.world;
        let ok = match bt {
            T_VOID | T_NUMBER => true,
            T_DISCRIM => self.same(s, DISCRIM, d, sc),
            T_KEYBITS => self.same(s, KEYBITS, d, sc),
            T_PAGE => w.owns_page(oid) || (w.space_type == T_PAGE && oid == w.space),
            T_NODE => w.owns_node(oid),
            T_SEGMENT => w.owns_node(oid) || (w.space_type == T_SEGMENT && oid == w.space),
            T_DOMAIN | T_RESUME => w.owns_node(oid) || oid == w.victim,
            T_START => {
                w.owns_node(oid) || oid == w.victim || (oid == w.echo && self.same(s, ECHO, d, sc))
            }
            T_METER => w.owns_node(oid) || self.same(s, METER, d, sc),
            T_RANGE => self.same(s, RANGE_NODES, d, sc) || self.same(s, RANGE_PAGES, d, sc),
            // Made by MAKE_FORWARDER from one of its own nodes.
            T_FORWARDER => w.owns_node(oid),
            _ => false,
        };
        if !ok {
            let name = class_name(bt);
            self.wrong(format_args!(
                "slot {s} holds a {name} key it was never given: bits {w0:#018x} {w1:#018x}"
            ));
        }
        // What the check learned (a dangling key acts as void).
        self.shadow[s as usize] = if dangling {
            T_VOID
        } else {
            self.class_of(w0, w1)
        };
    }

    /// Copies its keys to the reference node and learns the objects it
    /// was given.
    fn setup(&mut self) {
        for i in 1..=LAST {
            self.must(
                "copy to reference",
                REF,
                order::node::SWAP,
                i as u64,
                [i, 0],
                0,
            );
        }
        let mut w = World::default();
        let oid = |f: &mut Fuzz, s: Slot| f.bits_via(KEYBITS, s).1 & OID_MASK;
        (w.node_a, w.node_b, w.page) = (oid(self, NODE_A), oid(self, NODE_B), oid(self, PAGE));
        (w.supply, w.echo, w.meter) = (oid(self, SUPPLY), oid(self, ECHO), oid(self, METER));
        w.victim = oid(self, VICTIM);
        if oid(self, VICTIM_START) != w.victim {
            self.wrong(format_args!("victim start key and domain key differ"));
        }
        let a = self.must("range info", RANGE_NODES, order::range::INFO, 0, [0, 0], 0);
        w.nodes = (a.w[0], a.w[1]);
        let a = self.must("range info", RANGE_PAGES, order::range::INFO, 0, [0, 0], 0);
        w.pages = (a.w[0], a.w[1]);
        // Slot 9 (a number key) as scratch.
        for j in 0..SUPPLY_PAGES {
            self.must(
                "supply",
                SUPPLY,
                order::node::FETCH,
                j as u64,
                [0, 0],
                NUMBER,
            );
            w.supply_pages[j] = oid(self, NUMBER);
        }
        self.must(
            "victim space",
            VICTIM,
            order::domain::GET_SPACE,
            0,
            [0, 0],
            NUMBER,
        );
        let (w0, w1) = self.bits_via(KEYBITS, NUMBER);
        (w.space_type, w.space) = (w0 as u8, w1 & OID_MASK);
        self.world = w;
        self.must(
            "restore",
            REF,
            order::node::FETCH,
            NUMBER as u64,
            [0, 0],
            NUMBER,
        );
        self.ref_class[0] = T_VOID;
        for i in 1..=LAST {
            let (w0, w1) = self.bits_via(KEYBITS, i);
            self.ref_class[i as usize] = self.class_of(w0, w1);
        }
        self.shadow = self.ref_class;
        say!(
            "fuzz: seed {}; nodes {}+{}, {}, {}, supply {}; pages {}+{}, {}, supply {}..; echo {}, victim {} (space: {} {}), meter {}",
            self.seed, w.nodes.0, w.nodes.1, w.node_a, w.node_b, w.supply, w.pages.0, w.pages.1,
            w.page, w.supply_pages[0], w.echo, w.victim, class_name(w.space_type), w.space, w.meter
        );
    }

    /// The starvation the echo key rule avoids: the victim, with no meter
    /// and the echo server as its keeper, is set running; its fault goes to
    /// the server, which answers with the fault code as order (not RESUME),
    /// so the fault is delivered again at once, for ever. Calls to the
    /// server should still get through between two faults.
    fn starve(&mut self) {
        let a = self.h(VICTIM, order::domain::SET_KEEPER, 0, [ECHO, 0], 0);
        say!("fuzz: starve: victim SET_KEEPER(echo) -> {}", a.code);
        let a = self.h(VICTIM, order::domain::SET_METER, 0, [0, 0], 0);
        say!("fuzz: starve: victim SET_METER(void) -> {}", a.code);
        let a = self.h(VICTIM, order::domain::SET_STATE, 2, [0, 0], 0);
        say!("fuzz: starve: victim SET_STATE(running) -> {}", a.code);
        for i in 1..=1000 {
            let a = self.h(ECHO, 42, 0, [0, 0], 0);
            if i % 100 == 0 || i == 1 {
                say!("fuzz: starve: call {i} to echo -> {}", a.code);
            }
        }
        let a = self.h(VICTIM, order::domain::STOP, 0, [0, 0], 0);
        say!("fuzz: starve: victim STOP -> {}; not starved", a.code);
    }

    /// Stops everything it may have set running: the victim, and every
    /// domain it built (all on its own nodes, which it clears or renews).
    fn cleanup(&mut self) {
        self.fetch(VICTIM, 1);
        let a = self.h(1, order::domain::STOP, 0, [0, 0], 0);
        say!("fuzz: victim stopped ({})", code::name(a.code));
        for r in [NODE_A, NODE_B, SUPPLY] {
            self.fetch(r, 1);
            self.must("clear", 1, order::node::CLEAR, 0, [0, 0], 0);
        }
        for (r, n) in [
            (RANGE_NODES, self.world.nodes.1),
            (RANGE_PAGES, self.world.pages.1),
        ] {
            self.fetch(r, 1);
            for j in 0..n {
                self.must("renew", 1, order::range::RENEW, j, [0, 0], 0);
            }
        }
    }

    fn report(&self) {
        let mut l = Line::new();
        let (made, seed) = (self.made, self.seed);
        let _ = write!(l, "fuzz: {made} invocations, seed {seed}, kernel answers:");
        for (c, &n) in self.kernel.iter().enumerate() {
            if n > 0 {
                let name = if c < 14 {
                    code::name(c as u64)
                } else {
                    "other"
                };
                let _ = write!(l, " {name}={n}");
            }
        }
        let _ = write!(
            l,
            "; echo replies={}, skipped={}, echo keys withheld={}, helper invocations={}",
            self.echoed, self.skipped, self.withheld, self.helpers
        );
        l.emit();
        let _ = write!(l, "fuzz: orders answered ok (type: order=count):");
        for (t, row) in self.coverage.iter().enumerate() {
            if row.iter().any(|&n| n > 0) {
                let _ = write!(l, " {}:", class_name(t as u8));
                for (o, &n) in row.iter().enumerate().filter(|(_, &n)| n > 0) {
                    let _ = write!(l, " {o}={n}");
                }
                let _ = write!(l, ";");
            }
        }
        l.emit();
    }
}

fn main(arg: u64) -> i64 {
    stet_rt::kernel::set_console(CONSOLE);
    let seed = arg & 0xffff_ffff;
    let trace_from = match arg >> 32 & 0x7fff_ffff {
        0 => u64::MAX,
        t => t,
    };
    let mut sbuf = [0u8; 8192];
    let mut rbuf = [0u8; 8192];
    let mut f = Fuzz {
        rng: Rng(XorShift64Star::new(seed)),
        seed,
        trace_from,
        world: World::default(),
        shadow: [UNKNOWN; 16],
        ref_class: [UNKNOWN; 16],
        made: 0,
        helpers: 0,
        skipped: 0,
        withheld: 0,
        kernel: [0; 15],
        echoed: 0,
        coverage: [[0; 21]; 14],
        wrong: 0,
        ring: [Inv::default(); 16],
        canary: canary_sum(),
        code_page: main as fn(u64) -> i64 as usize as u64 & !0xfff,
        sbuf: sbuf.as_ptr() as u64,
        rbuf: rbuf.as_mut_ptr() as u64,
    };
    // Data words as strings: a 160-byte string is a register block with
    // some valid values.
    for c in sbuf.chunks_mut(8) {
        c.copy_from_slice(&f.word().to_le_bytes());
    }
    DATA.store(f.rng.next(), Ordering::Relaxed);
    f.setup();
    if arg >> 63 != 0 {
        f.starve();
        return 0;
    }
    f.check();
    while f.made < INVOCATIONS {
        if f.rng.chance(1, 2) {
            f.refill_some();
        }
        f.step(&mut rbuf);
        if f.made.is_multiple_of(CHECK_EVERY) {
            f.check();
        }
    }
    f.cleanup();
    f.check();
    f.report();
    core::hint::black_box(&mut rbuf);
    if f.wrong == 0 {
        say!("fuzz: all ok");
    } else {
        say!("fuzz: {} WRONG", f.wrong);
    }
    0
}

stet_rt::main!(main);
