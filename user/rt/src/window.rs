//! Another domain's memory seen through a slot of this domain's own
//! address-space root: a keeper that puts a process's segment in root slot
//! `n` (2 to 6) reads and writes the process's address `a` at
//! `n << 44 | a` with plain loads and stores (KeyNIX's UNIX keeper "maps the
//! segment into the keeper address space").
//!
//! Why this is sound without `unsafe` at the call sites: those slots hold no
//! Rust object of this program (its image is in slot 0, the heap area in
//! slot 1, the stack in slot 7), so a window address never aliases Rust
//! memory; every byte pattern is a valid `u8`; and an address with no page
//! behind it faults, which stops this domain rather than letting it run on
//! with a bad value. Callers check that pages exist first (a keeper's
//! shadow tree) so that they are not stopped. The other domain does not run
//! while its keeper serves its fault; memory it shares with a third domain
//! may change under a copy, which costs only a torn copy of bytes.
#![allow(unsafe_code)]

/// The lowest and the highest root slots a window may use.
const SLOTS: core::ops::RangeInclusive<u64> = 2..=6;

/// A window: root slot `slot`, `len` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    base: u64,
    len: u64,
}

impl Window {
    /// The window of root slot `slot` (2 to 6), `len` bytes long (at most
    /// 2^44). `None` for another slot or length.
    pub const fn new(slot: u64, len: u64) -> Option<Window> {
        if slot < *SLOTS.start() || slot > *SLOTS.end() || len > 1 << 44 {
            return None;
        }
        Some(Window {
            base: slot << 44,
            len,
        })
    }

    /// This domain's address of the window's byte `a` (for strings sent
    /// straight from the window).
    pub fn addr(&self, a: u64) -> u64 {
        self.base + a
    }

    fn check(&self, a: u64, n: usize) -> u64 {
        // No bytes at any address are no bytes: a caller's empty buffer
        // (a system call's zero length with a wild pointer, which Linux
        // accepts) is never a reason to stop. The window's start is
        // returned, and nothing is read or written there.
        if n == 0 {
            return self.base;
        }
        match a.checked_add(n as u64) {
            Some(e) if e <= self.len => self.base + a,
            _ => panic!("window access {a:#x}+{n} outside {:#x}", self.len),
        }
    }

    /// The window's `n` bytes at `a` as a receive buffer: a message's string
    /// goes straight into the other domain's memory.
    pub fn recv(&self, a: u64, n: u64) -> crate::invoke::Recv<'static> {
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        crate::invoke::Recv::window(self.check(a, n), n as u64)
    }

    /// Copies the window's bytes at `a` into `out`.
    pub fn read(&self, a: u64, out: &mut [u8]) {
        let p = self.check(a, out.len()) as *const u8;
        // SAFETY: `p..p+len` lies in a window slot, which holds no Rust
        // object (module doc), so it cannot overlap `out`; any byte is a
        // valid u8; a missing page stops the domain at the first load.
        unsafe { core::ptr::copy_nonoverlapping(p, out.as_mut_ptr(), out.len()) };
    }

    /// Copies `data` into the window at `a`.
    pub fn write(&self, a: u64, data: &[u8]) {
        let p = self.check(a, data.len()) as *mut u8;
        // SAFETY: as for `read`: the destination is window memory, never a
        // Rust object, and cannot overlap `data`.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
    }

    /// Fills `n` bytes at `a` with `v`.
    pub fn fill(&self, a: u64, n: usize, v: u8) {
        let p = self.check(a, n) as *mut u8;
        // SAFETY: as for `write`.
        unsafe { core::ptr::write_bytes(p, v, n) };
    }

    /// The 8-byte little-endian word at `a`.
    pub fn read_u64(&self, a: u64) -> u64 {
        let mut b = [0u8; 8];
        self.read(a, &mut b);
        u64::from_le_bytes(b)
    }
}
