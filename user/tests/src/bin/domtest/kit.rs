//! domtest's toolkit: reporting checks, taking fresh nodes and pages from
//! the ranges it holds, a store for keys it cannot keep in its 15 slots,
//! and threads: domains built at run time that share domtest's address
//! space and start at one of its functions.

use core::fmt;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};
use stet_rt::abi::domain::{Reg, NREGS, REGS_SIZE};
use stet_rt::abi::layout::HEAP_START;
use stet_rt::abi::{code::Code, order};
use stet_rt::kernel::{now_ns, sleep_until, yield_now};
use stet_rt::key::{Answer, Msg, Slot};
use stet_rt::println;

/// The console key.
pub const CONSOLE: Slot = 1;
/// The sleep key.
pub const SLEEP: Slot = 2;
/// The discrim key.
pub const DISCRIM: Slot = 3;
/// A range of nodes.
pub const NODES: Slot = 4;
/// A range of pages.
pub const PAGES: Slot = 5;
/// domtest's own address space (a segment key).
pub const SPACE: Slot = 6;
/// The prime meter.
pub const METER: Slot = 7;
/// A node key to domtest's own general-keys node.
pub const OWN: Slot = 8;
/// Scratch: a node of the key store.
pub const STORE: Slot = 9;
/// Scratch: the domain key being worked on.
pub const DOM: Slot = 10;
/// Scratch slots.
pub const K1: Slot = 11;
/// Scratch.
pub const K2: Slot = 12;
/// Scratch.
pub const K3: Slot = 13;
/// Scratch.
pub const K4: Slot = 14;
/// Scratch: a key to hand to a thread.
pub const KEY: Slot = 15;

/// Bytes of a function in which a thread's `rip` must lie to count as
/// "inside" it.
pub const FN_WINDOW: u64 = 0x400;

/// The toolkit's counters. Initialised with a non-zero field so that it
/// lands in `.data` (the image builder cannot load a program with a
/// `.bss` yet: the user linker script puts it on the page after `.data`
/// in a segment of its own).
struct Counters {
    fails: AtomicU32,
    next_stack: AtomicU64,
    tag: u64,
}

static K: Counters = Counters {
    fails: AtomicU32::new(0),
    next_stack: AtomicU64::new(0),
    tag: 1,
};

/// Whether the toolkit's statics were loaded.
pub fn loaded() -> bool {
    K.tag == 1
}

/// How many checks failed so far.
pub fn fails() -> u32 {
    K.fails.load(SeqCst)
}

/// A number as a report shows it: decimal when small, hex otherwise.
pub struct N(pub u64);

impl fmt::Display for N {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 < 0x1_0000 {
            write!(f, "{}", self.0)
        } else {
            write!(f, "{:#x}", self.0)
        }
    }
}

/// Reports `what`: ok if `got == want`.
pub fn check(what: fmt::Arguments<'_>, got: u64, want: u64) -> bool {
    if got == want {
        println!("domtest: {what}: ok");
        true
    } else {
        K.fails.fetch_add(1, SeqCst);
        println!("domtest: {what}: WRONG (got {}, want {})", N(got), N(want));
        false
    }
}

/// Reports `what`: ok if `lo <= got < hi`.
pub fn check_in(what: fmt::Arguments<'_>, got: u64, lo: u64, hi: u64) -> bool {
    if (lo..hi).contains(&got) {
        println!("domtest: {what}: ok");
        true
    } else {
        K.fails.fetch_add(1, SeqCst);
        println!(
            "domtest: {what}: WRONG (got {}, want {}..{})",
            N(got),
            N(lo),
            N(hi)
        );
        false
    }
}

/// An invocation the test relies on (not itself a check) failed.
pub fn must(a: Answer, what: &str) -> Answer {
    if a.code != Code::Ok {
        K.fails.fetch_add(1, SeqCst);
        println!("domtest: {what}: WRONG (got code {}, want 0)", a.code);
    }
    a
}

/// Polls `f` for up to `ms` milliseconds, yielding in between.
pub fn poll(ms: u64, mut f: impl FnMut() -> bool) -> bool {
    let end = now_ns() + ms * 1_000_000;
    loop {
        if f() {
            return true;
        }
        if now_ns() > end {
            return f();
        }
        yield_now();
    }
}

/// Sleeps `ms` milliseconds.
pub fn pause(ms: u64) {
    sleep_until(now_ns() + ms * 1_000_000);
}

/// discrim CLASSIFY of the key in `slot`: type, rights, destroyed.
pub fn classify(slot: Slot) -> [u64; 3] {
    let a = Msg::new(DISCRIM, order::discrim::CLASSIFY)
        .keys([slot, 0, 0, 0])
        .call();
    [a.w[0], a.w[1], a.w[2]]
}

/// discrim COMPARE of the keys in two slots.
pub fn same(a: Slot, b: Slot) -> u64 {
    Msg::new(DISCRIM, order::discrim::COMPARE)
        .keys([a, b, 0, 0])
        .call()
        .w[0]
}

/// Copies the key in slot `from` to slot `to` (through the node key to
/// domtest's own general-keys node).
pub fn copy(from: Slot, to: Slot) {
    must(
        Msg::new(OWN, order::node::FETCH)
            .w0(from as u64)
            .recv([to, 0, 0, 0])
            .call(),
        "copy a key between my slots",
    );
}

/// Where fresh nodes and pages come from: the two ranges domtest holds,
/// used in order.
pub struct Bank {
    nodes: u64,
    pages: u64,
    max_nodes: u64,
    max_pages: u64,
    store_next: u64,
}

/// Nodes of the key store (range indices 0..STORE_NODES).
const STORE_NODES: u64 = 4;

impl Bank {
    /// A bank over the ranges in [`NODES`] and [`PAGES`]; the first nodes
    /// become the key store.
    pub fn new() -> Bank {
        let n = Msg::new(NODES, order::range::INFO).call();
        let p = Msg::new(PAGES, order::range::INFO).call();
        let mut b = Bank {
            nodes: 0,
            pages: 0,
            max_nodes: n.w[1],
            max_pages: p.w[1],
            store_next: 0,
        };
        for _ in 0..STORE_NODES {
            b.node(STORE);
        }
        b
    }

    /// A fresh node (RENEW of the next one in the range) into `into`;
    /// returns its range index.
    pub fn node(&mut self, into: Slot) -> u64 {
        let i = self.nodes;
        self.nodes += 1;
        if i >= self.max_nodes {
            K.fails.fetch_add(1, SeqCst);
            println!(
                "domtest: fresh node: WRONG (the range of {} is used up)",
                self.max_nodes
            );
        }
        must(
            Msg::new(NODES, order::range::RENEW)
                .w0(i)
                .recv([into, 0, 0, 0])
                .call(),
            "RENEW a node",
        );
        i
    }

    /// A fresh page into `into`; returns its range index.
    pub fn page(&mut self, into: Slot) -> u64 {
        let i = self.pages;
        self.pages += 1;
        if i >= self.max_pages {
            K.fails.fetch_add(1, SeqCst);
            println!(
                "domtest: fresh page: WRONG (the range of {} is used up)",
                self.max_pages
            );
        }
        must(
            Msg::new(PAGES, order::range::RENEW)
                .w0(i)
                .recv([into, 0, 0, 0])
                .call(),
            "RENEW a page",
        );
        i
    }

    /// Nodes and pages used so far.
    pub fn used(&self) -> (u64, u64) {
        (self.nodes, self.pages)
    }

    /// Keeps a copy of the key in `from` in the store; returns its place.
    pub fn stash(&mut self, from: Slot) -> u64 {
        let i = self.store_next;
        self.store_next += 1;
        if i >= STORE_NODES * 16 {
            K.fails.fetch_add(1, SeqCst);
            println!("domtest: key store: WRONG (full)");
        }
        put(i, from);
        i
    }
}

/// Overwrites place `i` of the store with the key in `from`.
pub fn put(i: u64, from: Slot) {
    node_key(i / 16, STORE);
    must(
        Msg::new(STORE, order::node::SWAP)
            .w0(i % 16)
            .keys([from, 0, 0, 0])
            .call(),
        "store a key",
    );
}

/// The key at place `i` of the store, into `into`.
pub fn fetch(i: u64, into: Slot) {
    node_key(i / 16, STORE);
    must(
        Msg::new(STORE, order::node::FETCH)
            .w0(i % 16)
            .recv([into, 0, 0, 0])
            .call(),
        "fetch a stored key",
    );
}

/// A full key to node `i` of the range, as it is now.
pub fn node_key(i: u64, into: Slot) {
    must(
        Msg::new(NODES, order::range::GET)
            .w0(i)
            .recv([into, 0, 0, 0])
            .call(),
        "GET a node of the range",
    );
}

/// A full key to page `i` of the range, as it is now.
pub fn page_key(i: u64, into: Slot) {
    must(
        Msg::new(PAGES, order::range::GET)
            .w0(i)
            .recv([into, 0, 0, 0])
            .call(),
        "GET a page of the range",
    );
}

/// `len` bytes at `addr` of domtest's address space (through the segment
/// key; nothing is dereferenced). Zeros where it cannot be read.
pub fn peek(addr: u64, len: usize) -> [u8; 16] {
    let mut b = [0u8; 16];
    let n = len.min(16);
    Msg::new(SPACE, order::segment::READ)
        .words([addr, n as u64, 0, 0])
        .call_into(&mut b[..n]);
    b
}

/// Whether the two bytes at `addr` are a `syscall` instruction.
pub fn is_syscall(addr: u64) -> bool {
    let b = peek(addr, 2);
    b[0] == 0x0f && b[1] == 0x05
}

/// Registers as a register block.
pub fn regs_bytes(r: &[u64; NREGS]) -> [u8; REGS_SIZE] {
    let mut b = [0u8; REGS_SIZE];
    for (i, v) in r.iter().enumerate() {
        b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }
    b
}

/// A register block as registers.
pub fn regs_words(b: &[u8; REGS_SIZE]) -> [u64; NREGS] {
    core::array::from_fn(|i| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[i * 8..i * 8 + 8]);
        u64::from_le_bytes(w)
    })
}

/// The nodes and page of a domain (range indices).
#[derive(Clone, Copy, Debug, Default)]
pub struct Parts {
    /// Root node.
    pub root: u64,
    /// General-keys node.
    pub general: u64,
    /// Registers annex.
    pub annex: u64,
    /// FPU page.
    pub fpu: u64,
}

/// Builds a domain from three fresh nodes and a fresh page (node MAKE_DOMAIN
/// on the root); the domain key goes to `into`. Uses K1..K4 (they hold the
/// root, general, annex and FPU keys afterwards).
pub fn make_domain(bank: &mut Bank, into: Slot) -> (Parts, Answer) {
    let p = Parts {
        root: bank.node(K1),
        general: bank.node(K2),
        annex: bank.node(K3),
        fpu: bank.page(K4),
    };
    let a = Msg::new(K1, order::node::MAKE_DOMAIN)
        .keys([K2, K3, K4, 0])
        .recv([into, 0, 0, 0])
        .call();
    (p, a)
}

/// A thread's entry point: never returns.
pub type Entry = extern "C" fn(u64) -> !;

/// Bytes of a thread's stack.
const STACK_BYTES: u64 = 16 << 10;
/// Thread stacks: the heap area's pages, which domtest's TOML gives it
/// (`heap_pages`); one stack per 4 pages.
pub const NSTACKS: u64 = 40;

/// A domain built at run time running one of domtest's functions in
/// domtest's address space, on a stack of its own.
#[derive(Clone, Copy, Debug)]
pub struct Thread {
    /// Its nodes and page.
    pub parts: Parts,
    /// Where its domain key is kept in the store.
    pub key: u64,
    /// The entry function's address.
    pub entry: u64,
    /// Its stack: lowest address and one past the top.
    pub stack: (u64, u64),
}

/// Builds a thread that will run `entry(arg)`: a fresh domain with
/// domtest's address space, the prime meter, the console, sleep and
/// discrim keys in slots 1–3, `rip` at `entry`, `rsp` on a fresh stack.
/// It stays stopped until [`Thread::go`].
pub fn thread(bank: &mut Bank, entry: Entry, arg: u64) -> Thread {
    let (parts, a) = make_domain(bank, DOM);
    must(a, "MAKE_DOMAIN for a thread");
    let n = K.next_stack.fetch_add(1, SeqCst);
    if n >= NSTACKS {
        K.fails.fetch_add(1, SeqCst);
        println!("domtest: thread stacks: WRONG (all {NSTACKS} used)");
    }
    let lo = HEAP_START + (n % NSTACKS) * STACK_BYTES;
    let hi = lo + STACK_BYTES;
    let t = Thread {
        parts,
        key: bank.stash(DOM),
        entry: entry as usize as u64,
        stack: (lo, hi),
    };
    let dom = |o: u64| Msg::new(DOM, o);
    must(
        dom(order::domain::SET_SPACE).keys([SPACE, 0, 0, 0]).call(),
        "SET_SPACE",
    );
    must(
        dom(order::domain::SET_METER).keys([METER, 0, 0, 0]).call(),
        "SET_METER",
    );
    for s in [CONSOLE, SLEEP, DISCRIM] {
        must(
            dom(order::domain::SET_SLOT)
                .w0(s as u64)
                .keys([s, 0, 0, 0])
                .call(),
            "SET_SLOT",
        );
    }
    let mut r = [0u64; NREGS];
    r[Reg::Rip as usize] = t.entry;
    // As if just called: the return address slot below a 16-aligned top.
    r[Reg::Rsp as usize] = hi - 8;
    r[Reg::Rdi as usize] = arg;
    r[Reg::Rflags as usize] = 0x202;
    must(
        dom(order::domain::SET_REGS).string(&regs_bytes(&r)).call(),
        "SET_REGS",
    );
    t
}

impl Thread {
    /// Its domain key, into `into`.
    pub fn dom(&self, into: Slot) {
        fetch(self.key, into);
    }

    /// An order on its domain key (words only).
    pub fn order(&self, o: u64, w: [u64; 4]) -> Answer {
        self.dom(DOM);
        Msg::new(DOM, o).words(w).call()
    }

    /// Puts the key in domtest's slot `from` in its general slot `slot`.
    pub fn give(&self, slot: Slot, from: Slot) {
        self.dom(DOM);
        must(
            Msg::new(DOM, order::domain::SET_SLOT)
                .w0(slot as u64)
                .keys([from, 0, 0, 0])
                .call(),
            "SET_SLOT of a thread",
        );
    }

    /// Lets it run (SET_STATE running, no flags).
    pub fn go(&self) {
        must(
            self.order(order::domain::SET_STATE, [2, 0, 0, 0]),
            "SET_STATE running",
        );
    }

    /// A start key to it with key info `info`, into `into`.
    pub fn start_key(&self, info: u64, into: Slot) {
        self.dom(DOM);
        must(
            Msg::new(DOM, order::domain::MAKE_START)
                .w0(info)
                .recv([into, 0, 0, 0])
                .call(),
            "MAKE_START",
        );
    }

    /// GET_STATE: run state, flags, fault code, fault info (or the code
    /// of a failure in w0 with w3 = u64::MAX).
    pub fn state(&self) -> [u64; 4] {
        let a = self.order(order::domain::GET_STATE, [0; 4]);
        if a.ok() {
            a.w
        } else {
            [a.code, 0, 0, u64::MAX]
        }
    }

    /// GET_REGS: the registers and the answer.
    pub fn regs(&self) -> ([u64; NREGS], Answer) {
        self.dom(DOM);
        let mut b = [0u8; REGS_SIZE];
        let a = Msg::new(DOM, order::domain::GET_REGS).call_into(&mut b);
        (regs_words(&b), a)
    }

    /// Polls until its run state is `st`.
    pub fn wait_state(&self, st: u64, ms: u64) -> bool {
        poll(ms, || self.state()[0] == st)
    }
}
