//! The factory server's books, as pure logic over an array of words (its
//! heap, which the single-level store makes persistent).
//!
//! * A header: sizes, the free list of factory numbers, the high-water
//!   mark.
//! * One record of [`REC`] words per factory number `1..=max`: its state
//!   (free, open, sealed), a generation (bumped each time the number is
//!   reused, so a nested factory's record can tell a reused number from
//!   the factory that was installed), the oid and version of the two
//!   nodes behind its builder and requestor keys, the program's entry and
//!   load segments, the stack size, its components as the discreetness
//!   rule sees them and, once sealed, its verdict.
//! * An index from a requestor key's node oid to the factory number
//!   (open addressing, linear probing, backward-shift deletion), so that
//!   recognising one of its own requestor keys takes the key's bits (the
//!   key-bits service) and one lookup, never a search.
//!
//! Factory numbers are also where the server keeps each factory's node
//! keys: [`dir_path`] places them in a three-level tree of nodes.

use crate::discreet::{self, Component, Nested, Verdict};
use crate::plan::{Segment, DEFAULT_STACK_PAGES, MAX_SEGMENTS, MAX_STACK_PAGES};
use stet_abi::service::factory::COMPONENTS;

pub use stet_words::Words;

/// Most factories: what the directory tree holds (16 × 16 × 8 numbers,
/// number 0 being the metafactory's label).
pub const MAX_FACTORIES: u32 = 16 * 16 * 8 - 1;
/// Words per factory record.
pub const REC: usize = 40;

const MAGIC: u64 = 0x5443_4146_5445_5453; // "STETFACT"
const HEADER: usize = 8;
const H_MAGIC: usize = 0;
const H_MAX: usize = 1;
const H_FREE: usize = 2;
const H_HWM: usize = 3;
const H_BUCKETS: usize = 4;

const R_STATE: usize = 0;
const R_GEN: usize = 1;
const R_NEXT: usize = 2;
const R_REQ_OID: usize = 3;
const R_REQ_VER: usize = 4;
const R_BLD_OID: usize = 5;
const R_BLD_VER: usize = 6;
const R_ENTRY: usize = 7;
const R_STACK: usize = 8;
const R_NSEG: usize = 9;
const R_VERDICT: usize = 10;
const R_COMP: usize = 11;
const R_SEG: usize = R_COMP + COMPONENTS;
const _: () = assert!(R_SEG + MAX_SEGMENTS <= REC);

/// A factory's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Being built: components may change.
    Open,
    /// Sealed: nothing changes any more.
    Sealed,
}

const S_FREE: u64 = 0;
const S_OPEN: u64 = 1;
const S_SEALED: u64 = 2;

/// Why a change was refused. Nothing changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// No such factory.
    NoFactory,
    /// The factory is sealed.
    Sealed,
    /// A component slot outside 1..=12, a stack size outside its bounds,
    /// or too many segments.
    BadValue,
    /// Not the number [`Books::next_free`] gave, or none is free.
    Full,
}

/// A node's identity: oid and version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeId {
    /// Object identity.
    pub oid: u64,
    /// Version.
    pub version: u32,
}

/// What a new factory is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct New<'a> {
    /// The node behind its requestor key.
    pub requestor: NodeId,
    /// The node behind its builder key.
    pub builder: NodeId,
    /// The program's entry point.
    pub entry: u64,
    /// The program's load segments (at most [`MAX_SEGMENTS`]).
    pub segments: &'a [Segment],
}

/// A factory's record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Open or sealed.
    pub state: State,
    /// Generation of this number.
    pub gen: u32,
    /// The node behind its requestor key.
    pub requestor: NodeId,
    /// The node behind its builder key.
    pub builder: NodeId,
    /// The program's entry point.
    pub entry: u64,
    /// Stack pages of each product.
    pub stack_pages: u64,
    segments: [Segment; MAX_SEGMENTS],
    nseg: usize,
    /// Its components (slot `i + 1` at `i`).
    pub components: [Component; COMPONENTS],
    /// Its verdict ([`Verdict::UNSEALED`] while open).
    pub verdict: Verdict,
}

impl Record {
    /// The program's load segments.
    pub fn segments(&self) -> &[Segment] {
        &self.segments[..self.nseg]
    }
}

/// Where factory `n`'s node keys sit in the server's directory: slot of
/// the root directory node, slot of the middle node, and the leaf slot of
/// its requestor node's key (its builder node's key is in the next slot).
pub fn dir_path(n: u32) -> [u8; 3] {
    let leaf = n / 8;
    [(leaf / 16) as u8 & 15, (leaf % 16) as u8, (n % 8 * 2) as u8]
}

fn hash(oid: u64) -> usize {
    (oid.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize
}

/// The books over storage `W`.
pub struct Books<W: Words> {
    w: W,
    max: u32,
    buckets: usize,
}

impl<W: Words> Books<W> {
    /// Index buckets for `max` factories (a power of two ≥ 2 × max).
    fn buckets_for(max: u32) -> usize {
        (max as usize * 2).next_power_of_two().max(2)
    }

    /// Words the books need for `max` factories.
    pub fn words_for(max: u32) -> usize {
        HEADER + max as usize * REC + Self::buckets_for(max)
    }

    /// Formats `w` for `max` factories (1..=[`MAX_FACTORIES`]). `None` if
    /// it is too small or `max` out of range.
    pub fn format(mut w: W, max: u32) -> Option<Self> {
        if max == 0 || max > MAX_FACTORIES || w.len() < Self::words_for(max) {
            return None;
        }
        for i in 0..Self::words_for(max) {
            w.set(i, 0);
        }
        let buckets = Self::buckets_for(max);
        w.set(H_MAX, max as u64);
        w.set(H_BUCKETS, buckets as u64);
        w.set(H_MAGIC, MAGIC);
        Some(Books { w, max, buckets })
    }

    /// Opens books formatted before (after a restart, the heap holds them).
    pub fn open(w: W) -> Option<Self> {
        if w.len() < HEADER || w.get(H_MAGIC) != MAGIC {
            return None;
        }
        let max = w.get(H_MAX);
        if max == 0 || max > MAX_FACTORIES as u64 {
            return None;
        }
        let max = max as u32;
        let buckets = w.get(H_BUCKETS) as usize;
        if buckets != Self::buckets_for(max) || w.len() < Self::words_for(max) {
            return None;
        }
        Some(Books { w, max, buckets })
    }

    /// The storage back.
    pub fn into_words(self) -> W {
        self.w
    }

    /// How many factories the books hold at most.
    pub fn max(&self) -> u32 {
        self.max
    }

    fn at(&self, n: u32, f: usize) -> usize {
        HEADER + (n as usize - 1) * REC + f
    }

    fn get(&self, n: u32, f: usize) -> u64 {
        self.w.get(self.at(n, f))
    }

    fn set(&mut self, n: u32, f: usize, v: u64) {
        let i = self.at(n, f);
        self.w.set(i, v);
    }

    fn bucket(&self, b: usize) -> usize {
        HEADER + self.max as usize * REC + b
    }

    fn valid(&self, n: u32) -> bool {
        n >= 1 && n <= self.max && self.get(n, R_STATE) != S_FREE
    }

    /// The number the next [`Books::create`] must use, if any is free.
    pub fn next_free(&self) -> Option<u32> {
        match self.w.get(H_FREE) {
            0 => {
                let hwm = self.w.get(H_HWM);
                (hwm < self.max as u64).then_some(hwm as u32 + 1)
            }
            n => Some(n as u32),
        }
    }

    /// Records a new, open factory under number `n` (from
    /// [`Books::next_free`]) → its generation.
    pub fn create(&mut self, n: u32, new: &New<'_>) -> Result<u32, Error> {
        if Some(n) != self.next_free() {
            return Err(Error::Full);
        }
        if new.segments.len() > MAX_SEGMENTS {
            return Err(Error::BadValue);
        }
        if self.w.get(H_FREE) == n as u64 {
            let next = self.get(n, R_NEXT);
            self.w.set(H_FREE, next);
        } else {
            self.w.set(H_HWM, n as u64);
        }
        let gen = (self.get(n, R_GEN) as u32).wrapping_add(1);
        for f in 0..REC {
            self.set(n, f, 0);
        }
        self.set(n, R_GEN, gen as u64);
        self.set(n, R_REQ_OID, new.requestor.oid);
        self.set(n, R_REQ_VER, new.requestor.version as u64);
        self.set(n, R_BLD_OID, new.builder.oid);
        self.set(n, R_BLD_VER, new.builder.version as u64);
        self.set(n, R_ENTRY, new.entry);
        self.set(n, R_STACK, DEFAULT_STACK_PAGES);
        self.set(n, R_NSEG, new.segments.len() as u64);
        for (i, s) in new.segments.iter().enumerate() {
            self.set(n, R_SEG + i, s.encode());
        }
        self.set(n, R_VERDICT, Verdict::UNSEALED.encode());
        self.set(n, R_STATE, S_OPEN);
        self.index_insert(new.requestor.oid, n);
        Ok(gen)
    }

    /// Forgets factory `n` (its nodes are gone); its number is reused.
    pub fn free(&mut self, n: u32) -> Result<(), Error> {
        if !self.valid(n) {
            return Err(Error::NoFactory);
        }
        self.index_remove(self.get(n, R_REQ_OID), n);
        self.set(n, R_STATE, S_FREE);
        let head = self.w.get(H_FREE);
        self.set(n, R_NEXT, head);
        self.w.set(H_FREE, n as u64);
        Ok(())
    }

    /// Factory `n`'s record.
    pub fn record(&self, n: u32) -> Option<Record> {
        if !self.valid(n) {
            return None;
        }
        let nseg = (self.get(n, R_NSEG) as usize).min(MAX_SEGMENTS);
        Some(Record {
            state: if self.get(n, R_STATE) == S_SEALED {
                State::Sealed
            } else {
                State::Open
            },
            gen: self.get(n, R_GEN) as u32,
            requestor: NodeId {
                oid: self.get(n, R_REQ_OID),
                version: self.get(n, R_REQ_VER) as u32,
            },
            builder: NodeId {
                oid: self.get(n, R_BLD_OID),
                version: self.get(n, R_BLD_VER) as u32,
            },
            entry: self.get(n, R_ENTRY),
            stack_pages: self.get(n, R_STACK),
            segments: core::array::from_fn(|i| Segment::decode(self.get(n, R_SEG + i))),
            nseg,
            components: core::array::from_fn(|i| Component::decode(self.get(n, R_COMP + i))),
            verdict: Verdict::decode(self.get(n, R_VERDICT)),
        })
    }

    fn open_factory(&self, n: u32) -> Result<(), Error> {
        if !self.valid(n) {
            return Err(Error::NoFactory);
        }
        if self.get(n, R_STATE) == S_SEALED {
            return Err(Error::Sealed);
        }
        Ok(())
    }

    /// Records what component slot `slot` (1..=12) of factory `n` now holds.
    pub fn install(&mut self, n: u32, slot: u64, c: Component) -> Result<(), Error> {
        self.open_factory(n)?;
        if slot == 0 || slot > COMPONENTS as u64 {
            return Err(Error::BadValue);
        }
        self.set(n, R_COMP + slot as usize - 1, c.encode());
        Ok(())
    }

    /// Sets the stack pages of factory `n`'s products.
    pub fn set_stack(&mut self, n: u32, pages: u64) -> Result<(), Error> {
        self.open_factory(n)?;
        if pages == 0 || pages > MAX_STACK_PAGES {
            return Err(Error::BadValue);
        }
        self.set(n, R_STACK, pages);
        Ok(())
    }

    /// Where factory `n` at generation `gen` stands.
    pub fn nested(&self, n: u32, gen: u32) -> Nested {
        if !self.valid(n) || self.get(n, R_GEN) as u32 != gen {
            return Nested::Gone;
        }
        if self.get(n, R_STATE) == S_SEALED {
            Nested::Sealed(Verdict::decode(self.get(n, R_VERDICT)).discreet)
        } else {
            Nested::Unsealed
        }
    }

    /// Seals factory `n` and decides its verdict.
    pub fn seal(&mut self, n: u32) -> Result<Verdict, Error> {
        self.open_factory(n)?;
        let comps: [Component; COMPONENTS] =
            core::array::from_fn(|i| Component::decode(self.get(n, R_COMP + i)));
        let v = discreet::verdict(&comps, |m, g| self.nested(m, g));
        self.set(n, R_VERDICT, v.encode());
        self.set(n, R_STATE, S_SEALED);
        Ok(v)
    }

    /// The factory whose requestor key designates node `id`, and its
    /// generation.
    pub fn by_requestor(&self, id: NodeId) -> Option<(u32, u32)> {
        let n = self.index_find(id)?;
        Some((n, self.get(n, R_GEN) as u32))
    }

    /// The numbers of every factory on the books.
    pub fn in_use(&self) -> impl Iterator<Item = u32> + '_ {
        let hwm = self.w.get(H_HWM).min(self.max as u64) as u32;
        (1..=hwm).filter(|&n| self.valid(n))
    }

    // A dead factory not yet freed may share its node's oid with a live
    // one (the node was destroyed and made again): the version decides.
    fn index_find(&self, id: NodeId) -> Option<u32> {
        let mask = self.buckets - 1;
        let mut b = hash(id.oid) & mask;
        for _ in 0..self.buckets {
            let n = self.w.get(self.bucket(b)) as u32;
            if n == 0 {
                return None;
            }
            if n <= self.max
                && self.get(n, R_REQ_OID) == id.oid
                && self.get(n, R_REQ_VER) == id.version as u64
            {
                return Some(n);
            }
            b = (b + 1) & mask;
        }
        None
    }

    fn index_insert(&mut self, oid: u64, n: u32) {
        let mask = self.buckets - 1;
        let mut b = hash(oid) & mask;
        // Never full: twice as many buckets as factories.
        while self.w.get(self.bucket(b)) != 0 {
            b = (b + 1) & mask;
        }
        let i = self.bucket(b);
        self.w.set(i, n as u64);
    }

    fn index_remove(&mut self, oid: u64, n: u32) {
        let mask = self.buckets - 1;
        let mut b = hash(oid) & mask;
        let mut looked = 0;
        while self.w.get(self.bucket(b)) != n as u64 {
            if self.w.get(self.bucket(b)) == 0 || looked == self.buckets {
                return;
            }
            b = (b + 1) & mask;
            looked += 1;
        }
        let mut hole = b;
        let mut j = b;
        loop {
            j = (j + 1) & mask;
            let v = self.w.get(self.bucket(j)) as u32;
            if v == 0 {
                break;
            }
            let home = hash(self.get(v, R_REQ_OID)) & mask;
            // Entry j stays if its home lies cyclically in (hole, j].
            let stays = if hole <= j {
                home > hole && home <= j
            } else {
                home > hole || home <= j
            };
            if !stays {
                let h = self.bucket(hole);
                self.w.set(h, v as u64);
                hole = j;
            }
        }
        let h = self.bucket(hole);
        self.w.set(h, 0);
    }
}
