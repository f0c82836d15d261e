//! The space bank's bookkeeping, as pure logic over an array of words.
//!
//! The space bank (`user/services/src/bin/spacebank.rs`) holds range keys
//! to every node and page it may hand out. This crate decides *which*
//! object to hand out and remembers, for every object, which bank it
//! belongs to; the program only turns those decisions into range-key
//! orders (GET to hand an object out, RENEW to destroy one). Keeping the
//! bookkeeping here lets it be tested on the host against a model.
//!
//! Everything lives in one array of 64-bit words (the bank domain's heap,
//! which the single-level store makes persistent), laid out by [`Layout`]:
//!
//! * a header (sizes, free-list heads, high-water marks);
//! * the bank table: per bank its parent, children (a doubly linked
//!   sibling list), limits, the objects allocated through it and its
//!   descendants, the heads of its own object lists, and the node that
//!   backs its forwarder key;
//! * per object two words: owner and list links. An allocated object is on
//!   its bank's doubly linked list (free in O(1)); a free one is on its
//!   space's free list.
//!
//! Bank 0 is the prime bank: unlimited, never destroyed. A sub-bank's
//! forwarder node is charged to its parent (so creating banks uses up the
//! parent's node limit: a runaway cannot escape its limit by making banks).
//! Destroying a bank is a sequence of [`Banks::destroy_step`]s, each naming
//! one object for the caller to destroy, deepest sub-bank first; the state
//! is consistent after every step, so a checkpoint may fall anywhere.
#![no_std]

#[cfg(test)]
extern crate std;

#[cfg(test)]
mod tests;

pub use stet_words::Words;

/// The two object spaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// Pages.
    Page,
    /// Nodes.
    Node,
}

/// Why a request was refused. Nothing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// A limit on the bank's chain (or the supply of objects) is used up.
    Limit,
    /// No such live bank (or the prime bank, for destroy).
    BadBank,
    /// The object does not belong to this bank (or is a bank's forwarder).
    NotOwned,
    /// The bank table is full.
    TooManyBanks,
}

/// "No object" / "no bank" in the links.
pub const NIL: u32 = u32::MAX;
/// An unlimited limit.
pub const UNLIMITED: u64 = u64::MAX;
/// The prime bank.
pub const PRIME: u32 = 0;

const MAGIC: u64 = 0x4b4e_4142_5445_5453; // "STETBANK"
const HEADER: usize = 16;
const BANK_WORDS: usize = 16;

// Header words.
const H_MAGIC: usize = 0;
const H_PAGES: usize = 1;
const H_NODES: usize = 2;
const H_BANKS: usize = 3;
const H_HWM_PAGE: usize = 4;
const H_HWM_NODE: usize = 5;
const H_FREE_PAGE: usize = 6;
const H_FREE_NODE: usize = 7;
const H_FREE_BANK: usize = 8;
const H_HWM_BANK: usize = 9;

// Bank words.
const B_ALIVE: usize = 0;
const B_PARENT: usize = 1;
const B_CHILD: usize = 2;
const B_NEXT: usize = 3;
const B_PREV: usize = 4;
const B_LIMIT: usize = 5; // + space
const B_USED: usize = 7; // + space
const B_HEAD: usize = 9; // + space
const B_FORWARDER: usize = 11;

/// Object word 0: `next` (32) | owner (31) << 32 | forwarder flag << 63.
const FWD_FLAG: u64 = 1 << 63;
const OWNER_NONE: u32 = 0x7fff_ffff;

/// Where everything is in the word array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Pages the bank may hand out.
    pub pages: u32,
    /// Nodes the bank may hand out.
    pub nodes: u32,
    /// Banks (the prime bank included).
    pub banks: u32,
}

impl Layout {
    /// Words the bookkeeping needs.
    pub fn words(&self) -> usize {
        HEADER + self.banks as usize * BANK_WORDS + 2 * (self.pages as usize + self.nodes as usize)
    }

    fn bank(&self, b: u32, f: usize) -> usize {
        HEADER + b as usize * BANK_WORDS + f
    }

    fn obj(&self, s: Space, i: u32) -> usize {
        let base = HEADER + self.banks as usize * BANK_WORDS;
        match s {
            Space::Page => base + 2 * i as usize,
            Space::Node => base + 2 * (self.pages as usize + i as usize),
        }
    }

    fn count(&self, s: Space) -> u32 {
        match s {
            Space::Page => self.pages,
            Space::Node => self.nodes,
        }
    }
}

fn si(s: Space) -> usize {
    match s {
        Space::Page => 0,
        Space::Node => 1,
    }
}

/// One step of destroying a bank.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Destroy this object (it is already free in the bookkeeping).
    Renew(Space, u32),
    /// A bank of the tree is gone; destroy its forwarder node (voiding
    /// every key to the bank). `NIL` for none.
    BankGone(u32, u32),
    /// Nothing left: the bank and its tree are gone.
    Done,
}

/// A bank's accounts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Info {
    /// Pages allocated through it and its descendants.
    pub used_pages: u64,
    /// Nodes, likewise (the forwarder nodes of its sub-banks included).
    pub used_nodes: u64,
    /// Its page limit.
    pub limit_pages: u64,
    /// Its node limit.
    pub limit_nodes: u64,
}

/// The bookkeeping over storage `W`.
pub struct Banks<W: Words> {
    w: W,
    l: Layout,
}

impl<W: Words> Banks<W> {
    /// Formats `w` for `layout`, with an unlimited prime bank. `None` if
    /// `w` is too small or the layout is empty of banks.
    pub fn format(mut w: W, l: Layout) -> Option<Self> {
        if w.len() < l.words()
            || l.banks == 0
            || l.pages == NIL
            || l.nodes == NIL
            || l.banks > OWNER_NONE
        {
            return None;
        }
        w.set(H_MAGIC, MAGIC);
        w.set(H_PAGES, l.pages as u64);
        w.set(H_NODES, l.nodes as u64);
        w.set(H_BANKS, l.banks as u64);
        w.set(H_HWM_PAGE, 0);
        w.set(H_HWM_NODE, 0);
        w.set(H_FREE_PAGE, NIL as u64);
        w.set(H_FREE_NODE, NIL as u64);
        w.set(H_FREE_BANK, NIL as u64);
        w.set(H_HWM_BANK, 1);
        let mut b = Banks { w, l };
        b.init_bank(PRIME, NIL, UNLIMITED, UNLIMITED, NIL);
        Some(b)
    }

    /// Opens storage formatted earlier (after a restart it is just there).
    pub fn open(w: W) -> Option<Self> {
        if w.len() < HEADER || w.get(H_MAGIC) != MAGIC {
            return None;
        }
        let l = Layout {
            pages: w.get(H_PAGES) as u32,
            nodes: w.get(H_NODES) as u32,
            banks: w.get(H_BANKS) as u32,
        };
        (w.len() >= l.words()).then_some(Banks { w, l })
    }

    /// The layout.
    pub fn layout(&self) -> Layout {
        self.l
    }

    fn bget(&self, b: u32, f: usize) -> u64 {
        self.w.get(self.l.bank(b, f))
    }

    fn bset(&mut self, b: u32, f: usize, v: u64) {
        let i = self.l.bank(b, f);
        self.w.set(i, v);
    }

    fn init_bank(&mut self, b: u32, parent: u32, lp: u64, ln: u64, fwd: u32) {
        self.bset(b, B_ALIVE, 1);
        self.bset(b, B_PARENT, parent as u64);
        self.bset(b, B_CHILD, NIL as u64);
        self.bset(b, B_NEXT, NIL as u64);
        self.bset(b, B_PREV, NIL as u64);
        self.bset(b, B_LIMIT, lp);
        self.bset(b, B_LIMIT + 1, ln);
        self.bset(b, B_USED, 0);
        self.bset(b, B_USED + 1, 0);
        self.bset(b, B_HEAD, NIL as u64);
        self.bset(b, B_HEAD + 1, NIL as u64);
        self.bset(b, B_FORWARDER, fwd as u64);
    }

    /// Whether `b` is a live bank.
    pub fn alive(&self, b: u32) -> bool {
        b < self.l.banks && b < self.w.get(H_HWM_BANK) as u32 && self.bget(b, B_ALIVE) == 1
    }

    fn check(&self, b: u32) -> Result<(), Error> {
        if self.alive(b) {
            Ok(())
        } else {
            Err(Error::BadBank)
        }
    }

    /// The parent of live bank `b` (`NIL` for the prime bank).
    pub fn parent(&self, b: u32) -> u32 {
        self.bget(b, B_PARENT) as u32
    }

    /// Whether `d` is `a` or one of its descendants.
    pub fn is_descendant(&self, d: u32, a: u32) -> bool {
        let mut x = d;
        while x != NIL {
            if x == a {
                return true;
            }
            x = self.parent(x);
        }
        false
    }

    /// The accounts of bank `b`.
    pub fn info(&self, b: u32) -> Result<Info, Error> {
        self.check(b)?;
        Ok(Info {
            used_pages: self.bget(b, B_USED),
            used_nodes: self.bget(b, B_USED + 1),
            limit_pages: self.bget(b, B_LIMIT),
            limit_nodes: self.bget(b, B_LIMIT + 1),
        })
    }

    /// Sets bank `b`'s limits (what is already allocated stays).
    pub fn set_limits(&mut self, b: u32, pages: u64, nodes: u64) -> Result<(), Error> {
        self.check(b)?;
        self.bset(b, B_LIMIT, pages);
        self.bset(b, B_LIMIT + 1, nodes);
        Ok(())
    }

    fn oget(&self, s: Space, i: u32) -> (u32, u32, bool, u32) {
        let at = self.l.obj(s, i);
        let a = self.w.get(at);
        let next = a as u32;
        let owner = ((a >> 32) as u32) & OWNER_NONE;
        (next, owner, a & FWD_FLAG != 0, self.w.get(at + 1) as u32)
    }

    fn oset(&mut self, s: Space, i: u32, next: u32, owner: u32, fwd: bool, prev: u32) {
        let at = self.l.obj(s, i);
        let a = next as u64 | (owner as u64) << 32 | if fwd { FWD_FLAG } else { 0 };
        self.w.set(at, a);
        self.w.set(at + 1, prev as u64);
    }

    /// The bank that owns object `i` of `s`, and whether it is a bank's
    /// forwarder node (then the bank is the one the node backs).
    pub fn owner(&self, s: Space, i: u32) -> Option<(u32, bool)> {
        if i >= self.l.count(s) || i >= self.hwm(s) {
            return None;
        }
        let (_, owner, fwd, _) = self.oget(s, i);
        (owner != OWNER_NONE).then_some((owner, fwd))
    }

    fn hwm(&self, s: Space) -> u32 {
        self.w.get(H_HWM_PAGE + si(s)) as u32
    }

    /// Whether one more object of `s` fits every limit on `b`'s chain.
    fn fits(&self, b: u32, s: Space) -> bool {
        let mut x = b;
        while x != NIL {
            if self.bget(x, B_USED + si(s)) >= self.bget(x, B_LIMIT + si(s)) {
                return false;
            }
            x = self.parent(x);
        }
        true
    }

    fn charge(&mut self, b: u32, s: Space, up: bool) {
        let mut x = b;
        while x != NIL {
            let u = self.bget(x, B_USED + si(s));
            self.bset(x, B_USED + si(s), if up { u + 1 } else { u - 1 });
            x = self.parent(x);
        }
    }

    /// Takes a free object of `s` (not yet owned or linked).
    fn take(&mut self, s: Space) -> Option<u32> {
        let head = self.w.get(H_FREE_PAGE + si(s)) as u32;
        if head != NIL {
            let (next, ..) = self.oget(s, head);
            self.w.set(H_FREE_PAGE + si(s), next as u64);
            return Some(head);
        }
        let hwm = self.hwm(s);
        if hwm < self.l.count(s) {
            self.w.set(H_HWM_PAGE + si(s), hwm as u64 + 1);
            return Some(hwm);
        }
        None
    }

    fn put_free(&mut self, s: Space, i: u32) {
        let head = self.w.get(H_FREE_PAGE + si(s)) as u32;
        self.oset(s, i, head, OWNER_NONE, false, NIL);
        self.w.set(H_FREE_PAGE + si(s), i as u64);
    }

    /// Allocates an object of `s` to bank `b` → its index in the range.
    pub fn alloc(&mut self, b: u32, s: Space) -> Result<u32, Error> {
        self.check(b)?;
        if !self.fits(b, s) {
            return Err(Error::Limit);
        }
        let i = self.take(s).ok_or(Error::Limit)?;
        let head = self.bget(b, B_HEAD + si(s)) as u32;
        self.oset(s, i, head, b, false, NIL);
        if head != NIL {
            let (n, o, f, _) = self.oget(s, head);
            self.oset(s, head, n, o, f, i);
        }
        self.bset(b, B_HEAD + si(s), i as u64);
        self.charge(b, s, true);
        Ok(i)
    }

    fn unlink(&mut self, b: u32, s: Space, i: u32) {
        let (next, _, _, prev) = self.oget(s, i);
        if prev == NIL {
            self.bset(b, B_HEAD + si(s), next as u64);
        } else {
            let (_, o, f, pp) = self.oget(s, prev);
            self.oset(s, prev, next, o, f, pp);
        }
        if next != NIL {
            let (nn, o, f, _) = self.oget(s, next);
            self.oset(s, next, nn, o, f, prev);
        }
    }

    /// Frees object `i` of `s`, which bank `b` must own (not a forwarder
    /// node). The caller then destroys the object.
    pub fn free(&mut self, b: u32, s: Space, i: u32) -> Result<(), Error> {
        self.check(b)?;
        match self.owner(s, i) {
            Some((o, false)) if o == b => {}
            _ => return Err(Error::NotOwned),
        }
        self.unlink(b, s, i);
        self.charge(b, s, false);
        self.put_free(s, i);
        Ok(())
    }

    /// Creates a sub-bank of `parent` with the given limits → the new bank
    /// and the node to build its forwarder in (charged to `parent`).
    pub fn create_sub(&mut self, parent: u32, pages: u64, nodes: u64) -> Result<(u32, u32), Error> {
        self.check(parent)?;
        if !self.fits(parent, Space::Node) {
            return Err(Error::Limit);
        }
        let free = self.w.get(H_FREE_BANK) as u32;
        let hwm = self.w.get(H_HWM_BANK) as u32;
        if free == NIL && hwm >= self.l.banks {
            return Err(Error::TooManyBanks);
        }
        let fwd = self.take(Space::Node).ok_or(Error::Limit)?;
        let b = if free != NIL {
            self.w.set(H_FREE_BANK, self.bget(free, B_NEXT));
            free
        } else {
            self.w.set(H_HWM_BANK, hwm as u64 + 1);
            hwm
        };
        // The forwarder node is owned by the new bank, flagged: it is on no
        // list and counts against the parent.
        self.oset(Space::Node, fwd, NIL, b, true, NIL);
        self.charge(parent, Space::Node, true);
        self.init_bank(b, parent, pages, nodes, fwd);
        let first = self.bget(parent, B_CHILD) as u32;
        self.bset(b, B_NEXT, first as u64);
        if first != NIL {
            self.bset(first, B_PREV, b as u64);
        }
        self.bset(parent, B_CHILD, b as u64);
        Ok((b, fwd))
    }

    /// The bank whose forwarder is node `i`.
    pub fn bank_of_forwarder(&self, i: u32) -> Option<u32> {
        match self.owner(Space::Node, i) {
            Some((b, true)) if self.alive(b) && self.bget(b, B_FORWARDER) == i as u64 => Some(b),
            _ => None,
        }
    }

    /// One step of destroying bank `b` and everything allocated through it
    /// and its sub-banks. Call until it answers [`Step::Done`]; destroy the
    /// object each other step names. The prime bank cannot be destroyed.
    pub fn destroy_step(&mut self, b: u32) -> Result<Step, Error> {
        if b == PRIME {
            return Err(Error::BadBank);
        }
        if !self.alive(b) {
            return Ok(Step::Done);
        }
        // The deepest bank on the first-child path.
        let mut x = b;
        loop {
            let c = self.bget(x, B_CHILD) as u32;
            if c == NIL {
                break;
            }
            x = c;
        }
        for s in [Space::Page, Space::Node] {
            let head = self.bget(x, B_HEAD + si(s)) as u32;
            if head != NIL {
                self.unlink(x, s, head);
                self.charge(x, s, false);
                self.put_free(s, head);
                return Ok(Step::Renew(s, head));
            }
        }
        // `x` is empty: remove it from its parent's children, release its
        // forwarder node (charged to the parent) and its table entry.
        let parent = self.parent(x);
        let (next, prev) = (self.bget(x, B_NEXT) as u32, self.bget(x, B_PREV) as u32);
        if prev == NIL {
            self.bset(parent, B_CHILD, next as u64);
        } else {
            self.bset(prev, B_NEXT, next as u64);
        }
        if next != NIL {
            self.bset(next, B_PREV, prev as u64);
        }
        let fwd = self.bget(x, B_FORWARDER) as u32;
        if fwd != NIL {
            self.charge(parent, Space::Node, false);
            self.put_free(Space::Node, fwd);
        }
        self.bset(x, B_ALIVE, 0);
        self.bset(x, B_NEXT, self.w.get(H_FREE_BANK));
        self.w.set(H_FREE_BANK, x as u64);
        Ok(Step::BankGone(x, fwd))
    }
}
