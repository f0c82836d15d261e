//! A process's memory map: which address ranges are mapped, with what
//! protection and backed by what (Linux's VMAs). The UNIX keeper decides
//! every page fault and every `brk`, `mmap`, `munmap` and `mprotect` from
//! it; which pages actually exist is the [`crate::shadow`] tree's business.
//!
//! Fixed capacity ([`MAX_VMAS`]); adjacent anonymous ranges with the same
//! protection are merged so `malloc`'s patterns do not fill it.

use crate::layout::{MMAP_TOP, PAGE, STACK_MAX, STACK_TOP, USER_END, USER_MIN};
use crate::sys::errno::{EINVAL, ENOMEM};

/// Most ranges a process may have.
pub const MAX_VMAS: usize = 256;

/// What backs a range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backing {
    /// Zero-filled memory.
    Anon,
    /// A file: the keeper's file `file`, whose byte `offset` is at the
    /// range's start. Bytes at or past address `zero_from` read as zero
    /// (the bss tail of a program's data segment).
    File {
        /// The keeper's index of the file.
        file: u16,
        /// File offset of the range's first byte.
        offset: u64,
        /// Addresses from here on are zero, not file bytes.
        zero_from: u64,
    },
}

/// One mapped range `[start, end)` (page-aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vma {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// `PROT_*` bits.
    pub prot: u8,
    /// `MAP_SHARED`: writes are seen by every mapping (and stay shared
    /// across `fork`).
    pub shared: bool,
    /// `MAP_GROWSDOWN`: a stack that grows down on a fault in the gap
    /// below it ([`Map::grow_down`]).
    pub grows_down: bool,
    /// What backs it.
    pub backing: Backing,
    /// Locked in memory (`mlock`, `MAP_LOCKED`): counted in `VmLck`, and
    /// `msync(MS_INVALIDATE)` over it is `EBUSY`.
    pub locked: bool,
}

impl Vma {
    /// The range from `a` to `b`, backing adjusted.
    fn slice(&self, a: u64, b: u64) -> Vma {
        let mut v = *self;
        v.start = a;
        v.end = b;
        if let Backing::File {
            file,
            offset,
            zero_from,
        } = self.backing
        {
            v.backing = Backing::File {
                file,
                offset: offset + (a - self.start),
                zero_from,
            };
        }
        v
    }

    fn joins(&self, next: &Vma) -> bool {
        self.end == next.start
            && self.prot == next.prot
            && self.shared == next.shared
            && self.grows_down == next.grows_down
            && self.locked == next.locked
            && match (self.backing, next.backing) {
                (Backing::Anon, Backing::Anon) => true,
                (
                    Backing::File {
                        file: f,
                        offset: o,
                        zero_from: z,
                    },
                    Backing::File {
                        file: g,
                        offset: p,
                        zero_from: y,
                    },
                ) => f == g && z == y && o + (self.end - self.start) == p,
                _ => false,
            }
    }
}

/// The memory map.
#[derive(Clone, Debug)]
pub struct Map {
    vmas: [Vma; MAX_VMAS],
    n: usize,
    /// Where the program break started (end of the program's last segment).
    pub brk_start: u64,
    /// The program break.
    pub brk: u64,
    /// The entry `find` found last: a run of faults and futex calls on one
    /// range looks it up once (any entry that holds the address is the
    /// one, the ranges being disjoint, so it needs no invalidation).
    last: core::cell::Cell<usize>,
}

const NONE: Vma = Vma {
    start: 0,
    end: 0,
    prot: 0,
    shared: false,
    grows_down: false,
    locked: false,
    backing: Backing::Anon,
};

fn page_up(a: u64) -> Option<u64> {
    a.checked_add(PAGE - 1).map(|x| x & !(PAGE - 1))
}

impl Default for Map {
    fn default() -> Self {
        Map::new()
    }
}

impl Map {
    /// An empty map.
    pub const fn new() -> Map {
        Map {
            vmas: [NONE; MAX_VMAS],
            n: 0,
            brk_start: 0,
            brk: 0,
            last: core::cell::Cell::new(0),
        }
    }

    /// The table's entries not in use, as addresses (a forked keeper's
    /// state copy skips the pages wholly inside: nothing reads them).
    pub fn unused(&self) -> core::ops::Range<u64> {
        let all = self.vmas.as_ptr_range();
        // Address arithmetic only: nothing is read through these.
        let start = all.start as u64 + (self.n * core::mem::size_of::<Vma>()) as u64;
        start..all.end as u64
    }

    /// The ranges, in address order.
    pub fn vmas(&self) -> &[Vma] {
        &self.vmas[..self.n]
    }

    /// The range holding `addr`.
    pub fn find(&self, addr: u64) -> Option<&Vma> {
        let vmas = self.vmas();
        if let Some(v) = vmas.get(self.last.get()) {
            if v.start <= addr && addr < v.end {
                return Some(v);
            }
        }
        let i = vmas.partition_point(|v| v.end <= addr);
        let v = vmas.get(i).filter(|v| v.start <= addr)?;
        self.last.set(i);
        Some(v)
    }

    /// Whether any of `[a, b)` is mapped.
    fn overlaps(&self, a: u64, b: u64) -> bool {
        let i = self.vmas().partition_point(|v| v.end <= a);
        self.vmas().get(i).is_some_and(|v| v.start < b)
    }

    /// Maps `v` where nothing is mapped (callers unmap first). `ENOMEM`
    /// when the table is full.
    pub fn insert(&mut self, v: Vma) -> Result<(), i64> {
        debug_assert!(v.start < v.end && !self.overlaps(v.start, v.end));
        if self.n == MAX_VMAS {
            return Err(ENOMEM);
        }
        let i = self.vmas().partition_point(|x| x.end <= v.start);
        self.vmas.copy_within(i..self.n, i + 1);
        self.vmas[i] = v;
        self.n += 1;
        self.merge_around(i);
        Ok(())
    }

    fn remove(&mut self, i: usize) {
        self.vmas.copy_within(i + 1..self.n, i);
        self.n -= 1;
    }

    /// Merges range `i` with its neighbours where they join.
    fn merge_around(&mut self, i: usize) {
        let mut i = i;
        if i > 0 && self.vmas[i - 1].joins(&self.vmas[i]) {
            self.vmas[i - 1].end = self.vmas[i].end;
            self.remove(i);
            i -= 1;
        }
        if i + 1 < self.n && self.vmas[i].joins(&self.vmas[i + 1]) {
            self.vmas[i].end = self.vmas[i + 1].end;
            self.remove(i + 1);
        }
    }

    /// A fault at unmapped `addr`: if the range above it grows down
    /// (`MAP_GROWSDOWN`, anonymous), it is extended down to `addr`'s page
    /// and returned — unless that leaves less than `gap` bytes above the
    /// accessible range below it (Linux's `stack_guard_gap`) or makes it
    /// longer than `max` bytes (`RLIMIT_STACK`).
    pub fn grow_down(&mut self, addr: u64, gap: u64, max: u64) -> Option<Vma> {
        let i = self.vmas().partition_point(|v| v.end <= addr);
        let v = *self.vmas().get(i)?;
        if v.start <= addr || !v.grows_down || v.backing != Backing::Anon {
            return None;
        }
        let start = addr & !(PAGE - 1);
        if start < USER_MIN || v.end - start > max {
            return None;
        }
        if i > 0 {
            let prev = self.vmas[i - 1];
            let guarded = !prev.grows_down && prev.prot != 0;
            if start < prev.end || guarded && start - prev.end < gap {
                return None;
            }
        }
        self.vmas[i].start = start;
        Some(self.vmas[i])
    }

    /// Unmaps `[a, b)` (page-aligned), calling `gone` for every piece that
    /// was mapped (so the keeper can drop its pages). `ENOMEM` if splitting
    /// a range would overflow the table (nothing is changed then).
    pub fn unmap(&mut self, a: u64, b: u64, mut gone: impl FnMut(&Vma)) -> Result<(), i64> {
        let i = self.vmas().partition_point(|v| v.end <= a);
        if let Some(v) = self.vmas().get(i) {
            if v.start < a && v.end > b && self.n == MAX_VMAS {
                return Err(ENOMEM);
            }
        }
        let mut i = i;
        while i < self.n && self.vmas[i].start < b {
            let v = self.vmas[i];
            let (lo, hi) = (v.start.max(a), v.end.min(b));
            gone(&v.slice(lo, hi));
            match (v.start < lo, v.end > hi) {
                (false, false) => self.remove(i),
                (true, false) => {
                    self.vmas[i].end = lo;
                    i += 1;
                }
                (false, true) => self.vmas[i] = v.slice(hi, v.end),
                (true, true) => {
                    self.vmas[i].end = lo;
                    self.vmas.copy_within(i + 1..self.n, i + 2);
                    self.vmas[i + 1] = v.slice(hi, v.end);
                    self.n += 1;
                    i += 2;
                }
            }
        }
        Ok(())
    }

    /// Changes the protection of `[a, b)`; `ENOMEM` if any of it is not
    /// mapped (then nothing changes).
    pub fn protect(&mut self, a: u64, b: u64, prot: u8) -> Result<(), i64> {
        self.change(a, b, |v| v.prot = prot)
    }

    /// Locks `[a, b)` in memory or unlocks it; `ENOMEM` if any of it is
    /// not mapped (then nothing changes).
    pub fn lock(&mut self, a: u64, b: u64, locked: bool) -> Result<(), i64> {
        self.change(a, b, |v| v.locked = locked)
    }

    /// Bytes of the ranges locked in memory.
    pub fn locked_bytes(&self) -> u64 {
        self.vmas()
            .iter()
            .filter(|v| v.locked)
            .map(|v| v.end - v.start)
            .sum()
    }

    /// Whether any of `[a, b)` is locked.
    pub fn any_locked(&self, a: u64, b: u64) -> bool {
        self.vmas()
            .iter()
            .any(|v| v.locked && v.start < b && a < v.end)
    }

    /// Applies `f` to each piece of `[a, b)`, splitting ranges at `a`
    /// and `b`; `ENOMEM` if any of it is not mapped or the table has no
    /// room for the split (then nothing changes).
    fn change(&mut self, a: u64, b: u64, f: impl Fn(&mut Vma)) -> Result<(), i64> {
        // All of it must be mapped.
        let mut at = a;
        for v in self.vmas() {
            if v.end <= at {
                continue;
            }
            if v.start > at {
                break;
            }
            at = v.end;
            if at >= b {
                break;
            }
        }
        if at < b {
            return Err(ENOMEM);
        }
        // Take the pieces out and put them back with the new protection.
        let mut pieces = [NONE; 3 + MAX_VMAS];
        let mut np = 0;
        let free = MAX_VMAS - self.n;
        let i = self.vmas().partition_point(|v| v.end <= a);
        let first = self.vmas[i];
        let last = {
            let j = self.vmas().partition_point(|v| v.end < b);
            self.vmas[j]
        };
        // Splitting adds at most two ranges.
        if free < (first.start < a) as usize + (last.end > b) as usize {
            return Err(ENOMEM);
        }
        self.unmap(a, b, |v| {
            pieces[np] = *v;
            np += 1;
        })?;
        for p in &mut pieces[..np] {
            f(p);
            self.insert(*p)?;
        }
        Ok(())
    }

    /// A free page-aligned place for `len` bytes, the highest below
    /// [`MMAP_TOP`] (Linux's top-down layout).
    pub fn find_free(&self, len: u64) -> Option<u64> {
        let len = page_up(len)?;
        let mut top = MMAP_TOP;
        for v in self.vmas().iter().rev() {
            if v.start >= top {
                continue;
            }
            if v.end <= top && top - v.end >= len {
                return Some(top - len);
            }
            top = top.min(v.start);
        }
        let floor = page_up(self.brk)?.max(USER_MIN);
        (top >= floor && top - floor >= len).then(|| top - len)
    }

    /// `mmap`'s choice of address for `len` bytes with `hint` (0: none):
    /// the hint if that range is free, else [`Map::find_free`].
    pub fn place(&self, hint: u64, len: u64) -> Result<u64, i64> {
        let len = page_up(len).ok_or(ENOMEM)?;
        if hint != 0 && hint.is_multiple_of(PAGE) && hint >= USER_MIN {
            if let Some(end) = hint.checked_add(len) {
                if end <= USER_END && !self.overlaps(hint, end) {
                    return Ok(hint);
                }
            }
        }
        self.find_free(len).ok_or(ENOMEM)
    }

    /// Sets up the program break just past the program and the stack range
    /// (the whole 8 MiB reserved, its pages made on first touch).
    pub fn start(&mut self, brk: u64) -> Result<(), i64> {
        self.brk_start = brk;
        self.brk = brk;
        self.insert(Vma {
            start: STACK_TOP - STACK_MAX,
            end: STACK_TOP,
            prot: crate::elf::prot::READ | crate::elf::prot::WRITE,
            shared: false,
            grows_down: false,
            locked: false,
            backing: Backing::Anon,
        })
    }

    /// `brk(new)`: moves the break when it can and answers the break (the
    /// old one when it cannot: Linux's convention). Pages freed by a
    /// shrink are reported through `gone`.
    pub fn set_brk(&mut self, new: u64, gone: impl FnMut(&Vma)) -> u64 {
        let rw = crate::elf::prot::READ | crate::elf::prot::WRITE;
        if new < self.brk_start || new >= MMAP_TOP {
            return self.brk;
        }
        let (Some(old_end), Some(new_end)) = (page_up(self.brk), page_up(new)) else {
            return self.brk;
        };
        if new_end > old_end {
            if self.overlaps(old_end, new_end) {
                return self.brk;
            }
            let v = Vma {
                start: old_end,
                end: new_end,
                prot: rw,
                shared: false,
                grows_down: false,
                locked: false,
                backing: Backing::Anon,
            };
            if self.insert(v).is_err() {
                return self.brk;
            }
        } else if new_end < old_end && self.unmap(new_end, old_end, gone).is_err() {
            return self.brk;
        }
        self.brk = new;
        self.brk
    }
}

/// Checks an `mmap`/`munmap`/`mprotect` range: page-aligned start, nonzero
/// length, inside the process's space → `[a, b)` page-aligned.
pub fn range(a: u64, len: u64) -> Result<(u64, u64), i64> {
    if !a.is_multiple_of(PAGE) || len == 0 {
        return Err(EINVAL);
    }
    let b = a.checked_add(len).and_then(page_up).ok_or(EINVAL)?;
    if b > USER_END {
        return Err(ENOMEM);
    }
    Ok((a, b))
}

#[cfg(test)]
#[path = "vm/tests.rs"]
mod tests;
