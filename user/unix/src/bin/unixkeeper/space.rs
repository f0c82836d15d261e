//! The process's address space as its keeper manages it: the memory map
//! (`stet_unix::vm`), the shadow of the node tree (`stet_unix::shadow`), the
//! directory of node keys behind the shadow, and the window through which
//! the keeper reads and writes the process's memory.
//!
//! Pages are made on first touch (a page fault, or a system call's buffer):
//! anonymous memory gets a fresh zero page from the process's bank; a
//! read-only private file page is the file's own page key (shared text);
//! a writable one is a fresh page holding a copy of the file's bytes.
//!
//! Node keys live in a directory (`stet_unix_personality::keydir`) of nodes from
//! the process's bank, root in slot `DIR`; the leaf most recently used is
//! kept in slot `LEAF`, so sequential touches cost one bank call and one
//! swap per page.

use crate::slots::{DIR, EXEC, LEAF, MEMBANK, PBANK, T, T2, UNIXD};
use stet_rt::abi::code;
use stet_rt::abi::order::{node, page, segment};
use stet_rt::bank;
use stet_rt::key::{Msg, Slot};
use stet_rt::window::Window;
use stet_unix::elf::prot;
use stet_unix::layout::{EXEC_SLOT, FILE_LSS, PAGE, SPACE_LSS, USER_END, WINDOW_SLOT};
use stet_unix::proto;
use stet_unix::shadow::{self, page as pf, Builder, Entry, Tree};
use stet_unix::sys::errno::{EFAULT, ENOMEM};
use stet_unix::vm::{Backing, Map, Vma};
use stet_unix_personality::keydir::{self, fetch, swap, KeyDir};

/// A failed invocation's result code.
pub type Code = u64;

fn ok(a: stet_rt::key::Answer) -> Result<stet_rt::key::Answer, Code> {
    if a.code == code::Code::Ok {
        Ok(a)
    } else {
        Err(a.code)
    }
}

/// The directory of the tree's node keys: what makes shadow nodes real.
#[derive(Clone)]
pub struct Keys(KeyDir);

impl Keys {
    const fn new() -> Keys {
        Keys(KeyDir::new(keydir::Slots {
            root: DIR,
            bank: PBANK,
            scratch: T2,
            cache: LEAF,
        }))
    }

    /// The node key of shadow node `idx` in `LEAF`.
    fn leaf(&mut self, idx: u16) -> Result<(), Code> {
        self.0.cached(idx).map(|_| ())
    }
}

impl Keys {
    /// A fresh node as entry `idx`, and a segment key of size code `level`
    /// to it in `T`; then the slot holding the parent's node key (the
    /// cache, or `T2`).
    fn fresh(&mut self, idx: u16, level: u8, parent: u16) -> Result<Slot, Code> {
        bank::alloc_node(PBANK, T)?;
        self.0.put(idx, T)?;
        ok(Msg::new(T, node::MAKE_SEGMENT)
            .words([level as u64, 0, 0, 0])
            .recv([T, 0, 0, 0])
            .call())?;
        if self.0.cached_entry() == Some(parent) {
            Ok(LEAF)
        } else {
            self.0.get(parent, T2)?;
            Ok(T2)
        }
    }
}

impl Builder for Keys {
    type Err = Code;

    fn make_node(&mut self, idx: u16, level: u8, parent: u16, slot: u8) -> Result<(), Code> {
        let p = self.fresh(idx, level, parent)?;
        swap(p, slot as u64, T, 0)
    }

    fn insert_node(&mut self, idx: u16, level: u8, parent: u16, slot: u8) -> Result<(), Code> {
        // The new node into the parent's slot, the key that was there out
        // and into the new node's slot 0 (the process is stopped meanwhile:
        // nothing walks the gap).
        let p = self.fresh(idx, level, parent)?;
        swap(p, slot as u64, T, T)?;
        self.0.get(idx, T2)?;
        swap(T2, 0, T, 0)
    }
}

/// A process's address space.
#[derive(Clone)]
pub struct Space {
    /// The memory map.
    pub map: Map,
    /// The shadow tree.
    pub tree: Tree,
    keys: Keys,
    /// The process's memory.
    pub win: Window,
    /// The executable's bytes.
    pub exec: Window,
    /// The executable's length.
    pub exec_len: u64,
    /// Most pages present at once (`RLIMIT_RSS`, `limits`): a fresh page
    /// past it is refused (`Touch::NoMemory`: `ENOMEM`, or `SIGBUS` for a
    /// fault), so one process cannot take the memory every other needs.
    pub rss_pages: u64,
    /// The fids of the mapped files (`Backing::File`'s `file`; 0 is the
    /// executable, in `EXEC`), each holding one reference.
    files: [u32; MAX_FILES],
    /// Pages taken out of the tree by `mprotect(PROT_NONE)` (`park`):
    /// entry `i` is the page number << 8 | its shadow flags (a page number
    /// has 24 bits), its key in directory entry `PARK_BASE + i`;
    /// `NO_PAGE` is a free entry.
    parked: [u32; MAX_PARKED],
    /// How many entries of `parked` are in use (most processes: none,
    /// and `munmap` need not look).
    nparked: u16,
}

/// Most pages `mprotect(PROT_NONE)` holds out of a process's tree at once
/// (more: `ENOMEM`, which Linux's `mprotect` may answer too).
pub const MAX_PARKED: usize = 1024;
/// The key directory's entries for parked pages (the shadow's nodes use
/// those below `shadow::MAX_NODES`; the directory holds 4,096).
const PARK_BASE: u16 = 2048;
/// A free [`Space::parked`] entry.
const NO_PAGE: u32 = u32::MAX;

/// Fewest own pages a process has for `fork` to share them copy-on-write
/// rather than copy them (`share_own_pages`).
pub const COW_MIN_PAGES: usize = 64;

/// Most files mapped at once, the executable included.
pub const MAX_FILES: usize = 64;
/// A free entry of the mapped files.
const NO_FILE: u32 = u32::MAX;

/// Why touching memory failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touch {
    /// Not mapped, or not with that access: `EFAULT` to a call, `SIGSEGV`
    /// to a fault.
    Fault,
    /// Out of memory (the bank, or the shadow's capacity): `ENOMEM`, or
    /// `SIGBUS`/`SIGKILL` for a fault.
    NoMemory,
}

impl Touch {
    /// The errno a system call answers.
    pub fn errno(self) -> i64 {
        match self {
            Touch::Fault => EFAULT,
            Touch::NoMemory => ENOMEM,
        }
    }
}

fn from_shadow(e: shadow::Error<Code>) -> Touch {
    match e {
        shadow::Error::Range => Touch::Fault,
        _ => Touch::NoMemory,
    }
}

impl Space {
    /// A space with only the root node, whose key the caller stored as
    /// directory entry 0 through [`Space::put_root`].
    pub const fn new() -> Space {
        Space {
            map: Map::new(),
            tree: Tree::new(),
            keys: Keys::new(),
            win: match Window::new(WINDOW_SLOT, USER_END) {
                Some(w) => w,
                None => panic!(),
            },
            exec: match Window::new(EXEC_SLOT, 1 << (12 + 4 * FILE_LSS as u64)) {
                Some(w) => w,
                None => panic!(),
            },
            exec_len: 0,
            rss_pages: u64::MAX,
            files: [NO_FILE; MAX_FILES],
            parked: [NO_PAGE; MAX_PARKED],
            nparked: 0,
        }
    }

    /// Back to [`Space::new`]'s state, in place (the shadow's old nodes
    /// are not rewritten: `Tree::reset`).
    pub fn reset(&mut self) {
        self.map = Map::new();
        self.tree.reset();
        self.keys = Keys::new();
        self.exec_len = 0;
        self.files = [NO_FILE; MAX_FILES];
        self.parked = [NO_PAGE; MAX_PARKED];
        self.nparked = 0;
    }

    /// Records mapped file `fid` (whose reference the space now holds) →
    /// its index for `Backing::File`; `None` if the table is full.
    pub fn add_file(&mut self, fid: u32) -> Option<u16> {
        if let Some(i) = (1..MAX_FILES).find(|&i| self.files[i] == fid) {
            // Already mapped: one reference is enough.
            crate::signals::tell_unixd(Msg::new(UNIXD, proto::CLOSE).w0(fid as u64));
            return Some(i as u16);
        }
        let i = (1..MAX_FILES).find(|&i| self.files[i] == NO_FILE)?;
        self.files[i] = fid;
        Some(i as u16)
    }

    /// The fid of mapped file `i`.
    pub fn file_fid(&self, i: u16) -> Option<u32> {
        self.files
            .get(i as usize)
            .copied()
            .filter(|&f| i != 0 && f != NO_FILE)
    }

    /// The mapped files' fids (for `fork`: the child gets a reference to
    /// each).
    pub fn file_fids(&self) -> impl Iterator<Item = u32> + '_ {
        self.files[1..].iter().copied().filter(|&f| f != NO_FILE)
    }

    /// Gives back the reference of each mapped file no range maps any
    /// more.
    pub fn release_files(&mut self) {
        for i in 1..MAX_FILES {
            let fid = self.files[i];
            if fid == NO_FILE {
                continue;
            }
            let used = self
                .map
                .vmas()
                .iter()
                .any(|v| matches!(v.backing, Backing::File { file, .. } if file as usize == i));
            if !used {
                crate::signals::tell_unixd(Msg::new(UNIXD, proto::CLOSE).w0(fid as u64));
                self.files[i] = NO_FILE;
            }
        }
    }

    /// Gives back every mapped file's reference (`execve`, exit).
    pub fn close_files(&mut self) {
        for i in 1..MAX_FILES {
            if self.files[i] != NO_FILE {
                crate::signals::tell_unixd(Msg::new(UNIXD, proto::CLOSE).w0(self.files[i] as u64));
                self.files[i] = NO_FILE;
            }
        }
    }

    /// The node key of shadow node `idx` into `LEAF`.
    pub fn leaf_key(&mut self, idx: u16) -> Result<(), Code> {
        self.keys.leaf(idx)
    }

    /// `LEAF` was used for something else (or this is a fresh copy of the
    /// keeper, whose `LEAF` holds nothing yet).
    pub fn forget_cache(&mut self) {
        self.keys.0.forget();
    }

    /// Records the root node (its node key in `key`) as shadow node 0.
    pub fn put_root(&mut self, key: Slot) -> Result<(), Code> {
        self.keys.0.put(shadow::ROOT, key)
    }

    /// The node key of the root into `into`.
    pub fn root_key(&self, into: Slot) -> Result<(), Code> {
        self.keys.0.get(shadow::ROOT, into)
    }

    /// Makes the page at `addr` exist as mapping `v` says, writable if
    /// `write` (and `v` allows it). Leaves the page key in no slot.
    pub fn make_page(&mut self, v: &Vma, addr: u64, write: bool) -> Result<(), Touch> {
        let p = addr / PAGE;
        let base = addr & !(PAGE - 1);
        if let Some((leaf, slot, flags)) = self.tree.page(p) {
            if !write || flags & pf::WRITABLE != 0 {
                return Ok(());
            }
            if flags & pf::SHARED != 0 {
                return self.unshare_for_write(p, base);
            }
            if !v.shared {
                return self.break_page(p, base);
            }
            // A shared page made read-only by mprotect: the file's page
            // again, writable.
            self.keys.leaf(leaf).map_err(|_| Touch::NoMemory)?;
            swap(LEAF, slot as u64, 0, 0).map_err(|_| Touch::NoMemory)?;
            self.tree.set_page(p, Entry::Empty);
        }
        if self.tree.present() >= self.rss_pages {
            return Err(Touch::NoMemory);
        }
        let leaf = self
            .tree
            .make_leaf(p, &mut self.keys)
            .map_err(from_shadow)?;
        self.keys.leaf(leaf).map_err(|_| Touch::NoMemory)?;
        let writable = v.prot & prot::WRITE != 0;
        let flags = match v.backing {
            Backing::File {
                file,
                offset,
                zero_from,
            } if file != 0 => {
                // A mapped file: its own page. Private and written: a
                // copy, made below once the file's page is in place.
                let fid = self.file_fid(file).ok_or(Touch::Fault)?;
                let fo = offset + (base - v.start);
                // The last page of an interpreter's data: a page of its
                // own with the file's bytes up to `zero_from`, zeros after
                // (its bss); the file's page only passes through `T2`.
                let tail = !v.shared && base + PAGE > zero_from;
                if tail {
                    bank::alloc_page(MEMBANK, T).map_err(|_| Touch::NoMemory)?;
                }
                let a = Msg::new(UNIXD, proto::MAP_PAGE)
                    .words([fid as u64, fo / PAGE, 0, 0])
                    .recv([if tail { T2 } else { T }, 0, 0, 0])
                    .call();
                crate::signals::note(a.w[proto::INTR_WORD]);
                if a.code != code::Code::Ok || (a.w[0] as i64) < 0 {
                    // Past the end of the file: SIGBUS, as Linux.
                    return Err(Touch::NoMemory);
                }
                if tail {
                    copy_head(zero_from.saturating_sub(base))?;
                    pf::OWNED | pf::WRITABLE
                } else if v.shared {
                    pf::WRITABLE
                } else {
                    ok(Msg::new(T, page::MAKE_RO).recv([T, 0, 0, 0]).call())
                        .map_err(|_| Touch::NoMemory)?;
                    0
                }
            }
            Backing::File {
                offset, zero_from, ..
            } if base < zero_from => {
                let fo = offset + (base - v.start);
                let whole =
                    base + PAGE <= zero_from && fo + PAGE <= self.exec_len.next_multiple_of(PAGE);
                if !writable && whole {
                    // Shared text: the file's own (read-only) page.
                    self.file_page(fo).map_err(|_| Touch::NoMemory)?;
                    0
                } else {
                    bank::alloc_page(MEMBANK, T).map_err(|_| Touch::NoMemory)?;
                    let n = (zero_from - base)
                        .min(PAGE)
                        .min(self.exec_len.saturating_sub(fo));
                    ok(Msg::new(T, page::WRITE)
                        .w0(0)
                        .raw_string(self.exec.addr(fo), n)
                        .call())
                    .map_err(|_| Touch::NoMemory)?;
                    pf::OWNED | pf::WRITABLE
                }
            }
            _ if writable => {
                // An anonymous page, writable: the bank puts it straight
                // into its leaf slot (one call, not an allocation and a
                // swap).
                bank::alloc_pages_into(MEMBANK, LEAF, p & 15, 1).map_err(|_| Touch::NoMemory)?;
                self.tree.set_page(p, Entry::Page(pf::OWNED | pf::WRITABLE));
                return Ok(());
            }
            _ => {
                bank::alloc_page(MEMBANK, T).map_err(|_| Touch::NoMemory)?;
                pf::OWNED | pf::WRITABLE
            }
        };
        let flags = if flags & pf::WRITABLE != 0 && !writable {
            ok(Msg::new(T, page::MAKE_RO).recv([T, 0, 0, 0]).call())
                .map_err(|_| Touch::NoMemory)?;
            flags & !pf::WRITABLE
        } else {
            flags
        };
        swap(LEAF, p & 15, T, 0).map_err(|_| Touch::NoMemory)?;
        self.tree.set_page(p, Entry::Page(flags));
        if write && flags & pf::WRITABLE == 0 && writable {
            // A private mapping of a file, written: its own copy.
            return self.break_page(p, base);
        }
        Ok(())
    }

    /// A read-only page that must become writable: a fresh copy replaces
    /// it (and the old one is freed if it was the process's own).
    fn break_page(&mut self, p: u64, base: u64) -> Result<(), Touch> {
        let (leaf, slot, flags) = self.tree.page(p).ok_or(Touch::Fault)?;
        self.keys.leaf(leaf).map_err(|_| Touch::NoMemory)?;
        bank::alloc_page(MEMBANK, T).map_err(|_| Touch::NoMemory)?;
        ok(Msg::new(T, page::WRITE)
            .w0(0)
            .raw_string(self.win.addr(base), PAGE)
            .call())
        .map_err(|_| Touch::NoMemory)?;
        swap(LEAF, slot as u64, T, T).map_err(|_| Touch::NoMemory)?;
        self.tree.set_page(p, Entry::Page(pf::OWNED | pf::WRITABLE));
        if flags & (pf::OWNED | pf::SHARED | pf::LOCAL) == pf::OWNED {
            let _ = bank::free(MEMBANK, T);
        }
        Ok(())
    }

    /// A write to a page shared copy-on-write. If this process is its
    /// only holder (the others have let go) the page is simply its own
    /// again: its full key back from the bank, no copy. Otherwise it gets
    /// a copy first and lets go of the shared page after — in that order,
    /// so the page cannot be freed by another holder while it is being
    /// copied (and if the others let go meanwhile, this process was the
    /// last and frees it).
    fn unshare_for_write(&mut self, p: u64, base: u64) -> Result<(), Touch> {
        let (leaf, slot, _) = self.tree.page(p).ok_or(Touch::Fault)?;
        // LEAF stays this leaf's node key until the swap: nothing between
        // uses the key directory (whose scratch slot is T2).
        self.keys.leaf(leaf).map_err(|_| Touch::NoMemory)?;
        fetch(LEAF, slot as u64, T).map_err(|_| Touch::NoMemory)?;
        let id = bank::identify(MEMBANK, T, T).map_err(|_| Touch::NoMemory)?;
        if sole_holder(id as u32) {
            swap(LEAF, slot as u64, T, 0).map_err(|_| Touch::NoMemory)?;
            self.tree.set_page(p, Entry::Page(pf::OWNED | pf::WRITABLE));
            return Ok(());
        }
        // The copy; `break_page` leaves the shared page's key in T and
        // does not free it.
        self.break_page(p, base)?;
        let mut last = [0u8; 1];
        unshare(&[id as u32], &mut last);
        if last[0] == 1 {
            let _ = bank::free(MEMBANK, T);
        }
        Ok(())
    }

    /// Before a child shares this memory (`vfork`, `clone` with
    /// `CLONE_VM`): each page of a private writable mapping that is not
    /// the process's own writable page of the common bank — one shared
    /// copy-on-write with another process (as after this process's own
    /// `fork`), or a copy in its own bank (`LOCAL`, which the child
    /// cannot hold) — becomes one, as a write would make it. Then
    /// `share_own_pages` gives the child the same writable page, and what
    /// either writes the other reads (Linux's one memory).
    pub fn own_for_vm(&mut self) -> Result<(), Touch> {
        let mut from = 0;
        loop {
            let mut found = [(0u64, 0u8); 64];
            let mut n = 0;
            self.tree.pages(from, u64::MAX, |p, _, _, flags| {
                let cow = flags & (pf::SHARED | pf::WRITABLE) == pf::SHARED;
                if n < found.len() && (cow || flags & pf::LOCAL != 0) {
                    found[n] = (p, flags);
                    n += 1;
                }
            });
            for &(p, flags) in &found[..n] {
                from = p + 1;
                let base = p * PAGE;
                let Some(v) = self.map.find(base).copied() else {
                    continue;
                };
                if v.shared || v.prot & prot::WRITE == 0 {
                    continue;
                }
                if flags & pf::SHARED != 0 {
                    self.unshare_for_write(p, base)?;
                } else {
                    self.break_page(p, base)?;
                }
            }
            if n < found.len() {
                return Ok(());
            }
        }
    }

    /// `fork`: every own page becomes shared copy-on-write — counted in
    /// unixd (one more holder: the child) and read-only here (the child's
    /// tree gets the same read-only key). A page unixd cannot count (its
    /// table is full) stays as it was, and the child gets a copy.
    ///
    /// → whether the child gets a plain copy of every own page (none is
    /// shared): then its tree is a copy of this one that a process kept
    /// for the next `fork` can be rewritten into.
    ///
    /// `vm` (`vfork`, `clone` with `CLONE_VM`: the child shares this
    /// memory while this process waits): every own page of the common
    /// bank is shared however few there are, and stays writable — the
    /// child's tree gets the same read-write key, so what the child writes
    /// before its `execve` or end is what this process reads after
    /// (`SHARED | WRITABLE`; unixd still counts the holders, so whichever
    /// lets go last frees it). A page already shared copy-on-write with a
    /// third process stays read-only, and the process's own bank's pages
    /// (`LOCAL`, which go with that bank) are copied as for `fork`.
    pub fn share_own_pages(&mut self, vm: bool) -> bool {
        // A small process is copied instead: with a page copy cheaper than
        // the messages sharing costs here (the page's identity from the
        // bank at fork, and again when each holder lets go), copying wins
        // below this many own pages; above it sharing saves time and, by
        // far, memory.
        let (mut own, mut odd) = (0, 0);
        self.tree.pages(0, u64::MAX, |_, _, _, flags| {
            own += (flags & pf::OWNED != 0) as usize;
            odd += (flags & (pf::OWNED | pf::SHARED) == pf::OWNED | pf::SHARED) as usize;
        });
        // (A page already shared must be counted for the child too: then
        // this is the sharing path whatever the count.)
        if own < COW_MIN_PAGES && odd == 0 && !vm {
            return true;
        }
        let mut found = [(0u64, 0u16, 0u8, 0u8); 64];
        let mut from = 0;
        loop {
            let mut n = 0;
            // A page of this process's own bank (`LOCAL`) cannot outlive
            // it: the child gets a copy of that one.
            self.tree.pages(from, u64::MAX, |p, leaf, slot, flags| {
                if n < found.len() && flags & (pf::OWNED | pf::LOCAL) == pf::OWNED {
                    found[n] = (p, leaf, slot, flags);
                    n += 1;
                }
            });
            if n == 0 {
                return false;
            }
            let mut ids = [0u32; 64];
            let mut have = [false; 64];
            for (j, &(_, leaf, slot, _)) in found[..n].iter().enumerate() {
                if self.keys.leaf(leaf).is_ok() && fetch(LEAF, slot as u64, T).is_ok() {
                    if let Ok(id) = bank::identify(MEMBANK, T, T) {
                        ids[j] = id as u32;
                        have[j] = true;
                    }
                }
            }
            let mut b = [0u8; 4 * 64];
            let mut k = 0;
            for j in (0..n).filter(|&j| have[j]) {
                b[4 * k..4 * k + 4].copy_from_slice(&ids[j].to_le_bytes());
                k += 1;
            }
            let mut counted = [0u8; 64];
            let a = Msg::new(UNIXD, proto::SHARE)
                .string(&b[..4 * k])
                .call_into(&mut counted[..k]);
            crate::signals::note(a.w[proto::INTR_WORD]);
            if a.code != code::Code::Ok {
                counted.fill(0);
            }
            let mut k = 0;
            for (j, &(p, leaf, slot, flags)) in found[..n].iter().enumerate() {
                from = p + 1;
                if !have[j] {
                    continue;
                }
                let ok_ = counted[k] == 1;
                k += 1;
                if !ok_ || flags & pf::SHARED != 0 && flags & pf::WRITABLE == 0 {
                    // Not counted, or already shared and read-only.
                    if ok_ {
                        self.tree.set_page(p, Entry::Page(flags));
                    }
                    continue;
                }
                if vm {
                    self.tree
                        .set_page(p, Entry::Page(pf::OWNED | pf::SHARED | pf::WRITABLE));
                    continue;
                }
                let ro = self.keys.leaf(leaf).is_ok()
                    && fetch(LEAF, slot as u64, T).is_ok()
                    && Msg::new(T, page::MAKE_RO).recv([T, 0, 0, 0]).call().code == code::Code::Ok
                    && swap(LEAF, slot as u64, T, 0).is_ok();
                if ro {
                    self.tree.set_page(p, Entry::Page(pf::OWNED | pf::SHARED));
                } else {
                    // Counted but still writable here: give the count back
                    // (the child then gets a copy).
                    let mut last = [0u8; 1];
                    unshare(&ids[j..j + 1], &mut last);
                }
            }
            if n < found.len() {
                return false;
            }
        }
    }

    /// A forked keeper's first act: each own page of its process that is
    /// not shared copy-on-write is a copy `fork` made from the process's
    /// bank, and is marked so (`LOCAL`: it goes with that bank). → whether
    /// every own page is such a copy (none shared): then the process can
    /// be kept as it is for its parent's next `fork`.
    pub fn mark_copies_local(&mut self) -> bool {
        let mut from = 0;
        let mut shared = false;
        loop {
            let mut found = [(0u64, 0u8); 64];
            let mut n = 0;
            self.tree.pages(from, u64::MAX, |p, _, _, flags| {
                shared |= flags & (pf::OWNED | pf::SHARED) == pf::OWNED | pf::SHARED;
                if n < found.len() && flags & (pf::OWNED | pf::SHARED | pf::LOCAL) == pf::OWNED {
                    found[n] = (p, flags);
                    n += 1;
                }
            });
            for &(p, flags) in &found[..n] {
                self.tree.set_page(p, Entry::Page(flags | pf::LOCAL));
                from = p + 1;
            }
            if n < found.len() {
                return !shared;
            }
        }
    }

    /// Lets go of every own page of `[a, b)` without touching the tree
    /// (`execve` and exit, whose tree goes with the process's bank):
    /// unshared ones go back to the bank, shared ones to unixd's count,
    /// and are freed by their last holder.
    pub fn release_pages(&mut self, a: u64, b: u64) {
        self.for_own_pages(a, b, false);
    }

    /// Shared work of `drop_pages` and `release_pages`: each own page of
    /// `[a, b)` is freed (shared ones only by their last holder); with
    /// `clear`, every page also leaves the tree.
    fn for_own_pages(&mut self, a: u64, b: u64, clear: bool) {
        // Parked pages go back first, to be freed as any other.
        self.unpark(a, b);
        let mut found = [(0u64, 0u16, 0u8, 0u8); 64];
        let mut from = a / PAGE;
        let end = b.div_ceil(PAGE);
        loop {
            let mut n = 0;
            self.tree.pages(from, end, |p, leaf, slot, flags| {
                // A page of the process's own bank (`LOCAL`) needs nothing
                // unless it leaves the tree: it goes with the bank.
                let own = flags & pf::OWNED != 0 && flags & pf::LOCAL == 0;
                if n < found.len() && (clear || own) {
                    found[n] = (p, leaf, slot, flags);
                    n += 1;
                }
            });
            if n == 0 {
                return;
            }
            // The shared ones' identities, and whether this process is
            // the last holder of each.
            let mut ids = [0u32; 64];
            let mut which = [usize::MAX; 64];
            let mut k = 0;
            for (j, &(_, leaf, slot, flags)) in found[..n].iter().enumerate() {
                if flags & pf::SHARED != 0
                    && self.keys.leaf(leaf).is_ok()
                    && fetch(LEAF, slot as u64, T).is_ok()
                {
                    if let Ok(id) = bank::identify(MEMBANK, T, T) {
                        ids[k] = id as u32;
                        which[j] = k;
                        k += 1;
                    }
                }
            }
            let mut last = [0u8; 64];
            if k > 0 {
                unshare(&ids[..k], &mut last[..k]);
            }
            for (j, &(p, leaf, slot, flags)) in found[..n].iter().enumerate() {
                if self.keys.leaf(leaf).is_err() {
                    return;
                }
                let got = if clear {
                    swap(LEAF, slot as u64, 0, T)
                } else {
                    fetch(LEAF, slot as u64, T)
                };
                if got.is_err() {
                    return;
                }
                if clear {
                    self.tree.set_page(p, Entry::Empty);
                }
                let free = match (flags & pf::OWNED != 0, flags & pf::SHARED != 0) {
                    // A page of the process's own bank goes with it.
                    _ if flags & pf::LOCAL != 0 => false,
                    (true, false) => true,
                    (true, true) => which[j] != usize::MAX && last[which[j]] == 1,
                    _ => false,
                };
                if free {
                    let _ = bank::free(MEMBANK, T);
                }
                from = p + 1;
            }
            if n < found.len() {
                return;
            }
        }
    }

    /// The executable's page at file offset `fo` (page-aligned) into `T`,
    /// from its segment key in `EXEC` (one `PAGE_KEY` call).
    fn file_page(&self, fo: u64) -> Result<(), Code> {
        ok(Msg::new(EXEC, segment::PAGE_KEY)
            .w0(fo & !(PAGE - 1))
            .recv([T, 0, 0, 0])
            .call())
        .map(|_| ())
    }

    /// Makes every page of `[a, a + len)` exist, writable if `write`, for a
    /// system call's buffer. `Touch::Fault` if any byte is not mapped with
    /// that access.
    pub fn touch(&mut self, a: u64, len: u64, write: bool) -> Result<(), Touch> {
        if len == 0 {
            return Ok(());
        }
        let end = a
            .checked_add(len)
            .filter(|&e| e <= USER_END)
            .ok_or(Touch::Fault)?;
        let mut at = a & !(PAGE - 1);
        while at < end {
            let v = *self.map.find(at).ok_or(Touch::Fault)?;
            let need = if write { prot::WRITE } else { prot::READ };
            if v.prot & need == 0 {
                return Err(Touch::Fault);
            }
            let stop = v.end.min(end);
            while at < stop {
                self.make_page(&v, at, write)?;
                at += PAGE;
            }
        }
        Ok(())
    }

    /// Copies the process's bytes at `a` into `out`.
    pub fn read(&mut self, a: u64, out: &mut [u8]) -> Result<(), Touch> {
        self.touch(a, out.len() as u64, false)?;
        self.win.read(a, out);
        Ok(())
    }

    /// Copies `data` to the process's address `a`.
    pub fn write(&mut self, a: u64, data: &[u8]) -> Result<(), Touch> {
        self.touch(a, data.len() as u64, true)?;
        self.win.write(a, data);
        Ok(())
    }

    /// A NUL-terminated string at `a` into `buf` → its length (without
    /// the NUL). `Err(None)` if it does not fit.
    pub fn read_cstr(&mut self, a: u64, buf: &mut [u8]) -> Result<usize, Option<Touch>> {
        let mut n = 0;
        while n < buf.len() {
            // A page at a time, so a string that ends before an unmapped
            // page is fine.
            let at = a + n as u64;
            let chunk = ((PAGE - at % PAGE) as usize).min(buf.len() - n);
            self.touch(at, chunk as u64, false).map_err(Some)?;
            self.win.read(at, &mut buf[n..n + chunk]);
            if let Some(z) = buf[n..n + chunk].iter().position(|&b| b == 0) {
                return Ok(n + z);
            }
            n += chunk;
        }
        Err(None)
    }

    /// Drops the pages of `[a, b)` (after an unmap or a shrink): each
    /// leaves the tree, and the process's own pages go back to the bank
    /// (a shared one only when this process was its last holder).
    pub fn drop_pages(&mut self, a: u64, b: u64) {
        self.for_own_pages(a, b, true);
    }

    /// `mprotect(PROT_NONE)` of `[a, b)`: each page that exists leaves the
    /// process's tree (the segment model has no "no access" right), its
    /// key kept in the key directory, so a touch faults (`SIGSEGV`, the
    /// map says no access) until access comes back ([`Space::unpark`]).
    /// `ENOMEM` when more than [`MAX_PARKED`] would be out.
    pub fn park(&mut self, a: u64, b: u64) -> Result<(), i64> {
        // With none parked the table may hold a spare's stale entries (a
        // forked keeper's copy skips it: `unused_state`).
        if self.nparked == 0 {
            self.parked = [NO_PAGE; MAX_PARKED];
        }
        let mut found = [(0u64, 0u16, 0u8, 0u8); 16];
        loop {
            let mut n = 0;
            self.tree
                .pages(a / PAGE, b.div_ceil(PAGE), |p, leaf, slot, flags| {
                    if n < found.len() {
                        found[n] = (p, leaf, slot, flags);
                        n += 1;
                    }
                });
            if n == 0 {
                return Ok(());
            }
            for &(p, leaf, slot, flags) in &found[..n] {
                let i = self
                    .parked
                    .iter()
                    .position(|&e| e == NO_PAGE)
                    .ok_or(ENOMEM)?;
                let step = self
                    .keys
                    .leaf(leaf)
                    .and_then(|_| fetch(LEAF, slot as u64, T))
                    .and_then(|_| self.keys.0.put(PARK_BASE + i as u16, T))
                    .and_then(|_| self.keys.leaf(leaf))
                    .and_then(|_| swap(LEAF, slot as u64, 0, 0));
                if step.is_err() {
                    return Err(ENOMEM);
                }
                self.parked[i] = (p as u32) << 8 | flags as u32;
                self.nparked += 1;
                self.tree.set_page(p, Entry::Empty);
            }
        }
    }

    /// Puts the parked pages of `[a, b)` back into the tree (access came
    /// back, or they are about to be freed, shared or copied).
    pub fn unpark(&mut self, a: u64, b: u64) {
        if self.nparked == 0 {
            return;
        }
        let (first, end) = (a / PAGE, b.div_ceil(PAGE));
        for i in 0..MAX_PARKED {
            let e = self.parked[i];
            let (p, flags) = ((e >> 8) as u64, e as u8);
            if e == NO_PAGE || p < first || p >= end {
                continue;
            }
            self.parked[i] = NO_PAGE;
            self.nparked -= 1;
            let Ok(leaf) = self.tree.make_leaf(p, &mut self.keys) else {
                continue;
            };
            let back = self
                .keys
                .0
                .get(PARK_BASE + i as u16, T)
                .and_then(|_| self.keys.leaf(leaf))
                .and_then(|_| swap(LEAF, p & 15, T, 0))
                .and_then(|_| self.keys.0.put(PARK_BASE + i as u16, 0));
            if back.is_ok() {
                self.tree.set_page(p, Entry::Page(flags));
            }
        }
    }

    /// A forked keeper's space: its directory has only the shadow's
    /// nodes, not the parent's threads' and parked pages' entries.
    pub fn forget_parking(&mut self) {
        self.keys.0.forget_from(crate::threads::DOMAINS);
    }

    /// Directory entry `idx` (beyond the shadow's nodes: threads' keys)
    /// into `into`.
    pub fn dir_get(&self, idx: u16, into: Slot) -> Result<(), Code> {
        self.keys.0.get(idx, into)
    }

    /// The key in `key` as directory entry `idx`.
    pub fn dir_put(&mut self, idx: u16, key: Slot) -> Result<(), Code> {
        self.keys.0.put(idx, key)
    }

    /// The parked-page table when none is parked (see `park`), as
    /// addresses; else an empty range.
    pub fn unused_parked(&self) -> core::ops::Range<u64> {
        if self.nparked != 0 {
            return 0..0;
        }
        let all = self.parked.as_ptr_range();
        all.start as u64..all.end as u64
    }

    /// Whether any page is parked.
    pub fn any_parked(&self) -> bool {
        self.nparked != 0
    }

    /// Parks the existing pages of every `PROT_NONE` range again (after a
    /// `fork`, in the parent and in the child, whose trees were built with
    /// them in place).
    pub fn park_none(&mut self) {
        let mut i = 0;
        while let Some(v) = self.map.vmas().get(i).copied() {
            if v.prot == 0 {
                let _ = self.park(v.start, v.end);
            }
            i += 1;
        }
    }

    /// Takes write access away from the existing pages of `[a, b)`
    /// (`mprotect` without `PROT_WRITE`); giving it back happens at the
    /// next write fault (`break_page`).
    pub fn write_protect(&mut self, a: u64, b: u64) {
        let mut found = [(0u64, 0u16, 0u8, 0u8); 64];
        let mut from = a / PAGE;
        let end = b.div_ceil(PAGE);
        while from < end {
            let mut n = 0;
            self.tree.pages(from, end, |p, leaf, slot, flags| {
                if n < found.len() && flags & pf::WRITABLE != 0 {
                    found[n] = (p, leaf, slot, flags);
                    n += 1;
                }
            });
            if n == 0 {
                return;
            }
            for &(p, leaf, slot, flags) in &found[..n] {
                if self.keys.leaf(leaf).is_err()
                    || fetch(LEAF, slot as u64, T).is_err()
                    || Msg::new(T, page::MAKE_RO).recv([T, 0, 0, 0]).call().code != code::Code::Ok
                    || swap(LEAF, slot as u64, T, 0).is_err()
                {
                    return;
                }
                self.tree.set_page(p, Entry::Page(flags & !pf::WRITABLE));
                from = p + 1;
            }
        }
    }
}

/// Copies the first `n` bytes of the page in `T2` into the fresh page in
/// `T` (zeros after), through a small buffer: this
/// runs deep in `execve`'s stack writes, where a page-sized buffer would
/// not fit a forked keeper's stack.
#[inline(never)]
fn copy_head(n: u64) -> Result<(), Touch> {
    let mut b = [0u8; 512];
    let mut at = 0;
    while at < n.min(PAGE) {
        let k = (n - at).min(b.len() as u64);
        let r = Msg::new(T2, page::READ)
            .words([at, k, 0, 0])
            .call_into(&mut b[..k as usize]);
        ok(r).map_err(|_| Touch::NoMemory)?;
        ok(Msg::new(T, page::WRITE)
            .w0(at)
            .string(&b[..k as usize])
            .call())
        .map_err(|_| Touch::NoMemory)?;
        at += k;
    }
    Ok(())
}

/// The size code of a process's space (for `MAKE_SEGMENT` of the root).
pub const ROOT_LSS: u64 = SPACE_LSS as u64;

/// Whether this process is the only holder of shared page `id` (unixd's
/// `UNSHARE` with `w0` 1: a question, nothing changes).
fn sole_holder(id: u32) -> bool {
    let mut sole = [0u8; 1];
    let a = Msg::new(UNIXD, proto::UNSHARE)
        .w0(1)
        .string(&id.to_le_bytes())
        .call_into(&mut sole);
    crate::signals::note(a.w[proto::INTR_WORD]);
    a.code == code::Code::Ok && sole[0] == 1
}

/// unixd's `UNSHARE` of pages `ids` → `last[i]` 1 where this process was
/// the last holder. Should unixd not answer, nothing is freed (a leak,
/// never a page freed under another process).
pub fn unshare(ids: &[u32], last: &mut [u8]) {
    let mut b = [0u8; 4 * 64];
    for (c, id) in b.chunks_exact_mut(4).zip(ids) {
        c.copy_from_slice(&id.to_le_bytes());
    }
    last.fill(0);
    let a = Msg::new(UNIXD, proto::UNSHARE)
        .string(&b[..4 * ids.len()])
        .call_into(last);
    crate::signals::note(a.w[proto::INTR_WORD]);
    if a.code != code::Code::Ok {
        last.fill(0);
    }
}
