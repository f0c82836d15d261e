//! Regular files' bytes: each file is a segment tree of pages from the
//! UNIX bank, its shape in the `Forest`, node keys in a `KeyDir`. Reads
//! copy pages out with page `READ` (a hole reads as zeros), writes make the
//! nodes and pages they need and copy in with page `WRITE`. The forest and
//! the table of each inode's tree grow from the heap with the files.

use crate::slots::{BANK, DIR, FILES, LEAF, T, T2};
use alloc::vec::Vec;
use stet_rt::abi::code;
use stet_rt::abi::order::{node, page};
use stet_rt::bank;
use stet_rt::key::{Msg, Slot};
use stet_unix::sys::errno::{EFBIG, EIO, ENOSPC};
use stet_unix_personality::keydir::{self, fetch, swap, Code, KeyDir};
use stet_unixfs::forest::{self, Builder, Entry, File, Forest};

const PAGE: u64 = 4096;

fn ok(c: u64) -> Result<(), Code> {
    if c == code::Code::Ok {
        Ok(())
    } else {
        Err(c)
    }
}

/// The node keys behind the forest.
pub struct Keys(pub KeyDir);

impl Builder for Keys {
    type Err = Code;

    fn make_node(&mut self, idx: u16, _level: u8) -> Result<(), Code> {
        bank::alloc_node(FILES, T)?;
        self.0.put(idx, T)
    }

    fn put_child(&mut self, parent: u16, slot: u8, child: u16, level: u8) -> Result<(), Code> {
        self.0.get(child, T)?;
        ok(Msg::new(T, node::MAKE_SEGMENT)
            .words([level as u64, 0, 0, 0])
            .recv([T, 0, 0, 0])
            .call()
            .code)?;
        let p = self.0.cached(parent)?;
        swap(p, slot as u64, T, 0)
    }
}

/// Every file's bytes.
pub struct Content {
    /// The trees' shapes.
    pub forest: Forest,
    /// Each inode's tree, by inode number (as far as an inode had pages).
    files: Vec<File>,
    keys: Keys,
    /// Pages of every file, now.
    pub pages: u64,
    /// Pages the call being served may still make (`Unixd::charged`).
    pub budget: u64,
}

fn errno_of<E>(e: forest::Error<E>) -> i64 {
    match e {
        forest::Error::Full => ENOSPC,
        forest::Error::TooBig => EFBIG,
        forest::Error::Build(_) => ENOSPC,
    }
}

impl Content {
    /// The directory's cache slot (`LEAF`) was used for something else.
    pub fn forget_cache(&mut self) {
        self.keys.0.forget();
    }

    /// No files yet; the directory's root node is in `DIR`.
    pub fn new() -> Content {
        Content {
            forest: Forest::new(),
            files: Vec::new(),
            keys: Keys(KeyDir::new(keydir::Slots {
                root: DIR,
                bank: BANK,
                scratch: T2,
                cache: LEAF,
            })),
            pages: 0,
            budget: u64::MAX,
        }
    }

    /// File `ino`'s tree.
    fn file(&self, ino: u32) -> File {
        self.files.get(ino as usize).copied().unwrap_or(File::EMPTY)
    }

    /// The page key of page `p` of file `ino` into `into`, if it exists.
    fn page_key(&mut self, ino: u32, p: u64, into: Slot) -> Result<bool, Code> {
        let Some((leaf, slot, _)) = self.forest.page(&self.file(ino), p) else {
            return Ok(false);
        };
        let l = self.keys.0.cached(leaf)?;
        fetch(l, slot as u64, into)?;
        Ok(true)
    }

    /// Copies `out.len()` bytes of file `ino` from `off` (the caller keeps
    /// within the file's size).
    pub fn read(&mut self, ino: u32, off: u64, out: &mut [u8]) -> Result<(), i64> {
        let mut done = 0;
        while done < out.len() {
            let at = off + done as u64;
            let in_page = (at % PAGE) as usize;
            let n = (PAGE as usize - in_page).min(out.len() - done);
            let chunk = &mut out[done..done + n];
            if self.page_key(ino, at / PAGE, T).map_err(|_| EIO)? {
                let a = Msg::new(T, page::READ)
                    .words([in_page as u64, n as u64, 0, 0])
                    .call_into(chunk);
                if a.code != code::Code::Ok {
                    return Err(EIO);
                }
            } else {
                chunk.fill(0);
            }
            done += n;
        }
        Ok(())
    }

    /// Calls `f(page)` for every page of file `ino` that exists in
    /// `[first, end)`, in order (holes are skipped, not visited).
    pub fn pages_of(&self, ino: u32, first: u64, end: u64, mut f: impl FnMut(u64)) {
        if let Some(file) = self.files.get(ino as usize) {
            self.forest.pages(file, first, end, |p, _, _, _| f(p));
        }
    }

    /// Makes page `p` of file `ino` exist → its key in `T` (a mapping's
    /// page fault, and every write).
    pub fn make_page(&mut self, ino: u32, p: u64) -> Result<(), i64> {
        if self.page_key(ino, p, T).map_err(|_| EIO)? {
            return Ok(());
        }
        if self.budget == 0 {
            return Err(ENOSPC);
        }
        let i = ino as usize;
        if i >= self.files.len() {
            // Room for this inode's tree (and, doubling, for the next ones).
            let more = (i + 1 - self.files.len()).max(self.files.len());
            self.files.try_reserve(more).map_err(|_| ENOSPC)?;
            self.files.resize(i + 1, File::EMPTY);
        }
        let f = &mut self.files[i];
        let (leaf, slot) = self
            .forest
            .make_leaf(f, p, &mut self.keys)
            .map_err(errno_of)?;
        bank::alloc_page(FILES, T).map_err(|_| ENOSPC)?;
        let l = self.keys.0.cached(leaf).map_err(|_| EIO)?;
        swap(l, slot as u64, T, 0).map_err(|_| EIO)?;
        self.forest.set(leaf, slot, Entry::Page(1));
        self.pages += 1;
        self.budget -= 1;
        Ok(())
    }

    /// Writes the bytes at this domain's address `src` (`len` of them) to
    /// file `ino` at `off`.
    pub fn write_from(&mut self, ino: u32, off: u64, src: u64, len: u64) -> Result<(), i64> {
        let mut done = 0;
        while done < len {
            let at = off + done;
            let n = (PAGE - at % PAGE).min(len - done);
            self.make_page(ino, at / PAGE)?;
            let a = Msg::new(T, page::WRITE)
                .w0(at % PAGE)
                .raw_string(src + done, n)
                .call();
            if a.code != code::Code::Ok {
                return Err(EIO);
            }
            done += n;
        }
        Ok(())
    }

    /// Writes `data` to file `ino` at `off`.
    pub fn write(&mut self, ino: u32, off: u64, data: &[u8]) -> Result<(), i64> {
        self.write_from(ino, off, data.as_ptr() as u64, data.len() as u64)
    }

    /// Cuts file `ino` (now `old` bytes) to `len` bytes: pages past it are
    /// freed, the rest of the last page zeroed.
    pub fn truncate(&mut self, ino: u32, old: u64, len: u64) -> Result<(), i64> {
        if len >= old {
            return Ok(());
        }
        let first = len.div_ceil(PAGE);
        self.drop_pages(ino, first, u64::MAX);
        if !len.is_multiple_of(PAGE) && self.page_key(ino, len / PAGE, T).map_err(|_| EIO)? {
            let zeros = [0u8; PAGE as usize];
            let from = (len % PAGE) as usize;
            let a = Msg::new(T, page::WRITE)
                .w0(from as u64)
                .string(&zeros[from..])
                .call();
            if a.code != code::Code::Ok {
                return Err(EIO);
            }
        }
        Ok(())
    }

    fn drop_pages(&mut self, ino: u32, first: u64, end: u64) {
        let mut found = [(0u16, 0u8); 64];
        loop {
            let mut n = 0;
            self.forest
                .pages(&self.file(ino), first, end, |_, leaf, slot, _| {
                    if n < found.len() {
                        found[n] = (leaf, slot);
                        n += 1;
                    }
                });
            if n == 0 {
                return;
            }
            for &(leaf, slot) in &found[..n] {
                let Ok(l) = self.keys.0.cached(leaf) else {
                    return;
                };
                if swap(l, slot as u64, 0, T).is_err() {
                    return;
                }
                let _ = bank::free(FILES, T);
                self.forest.set(leaf, slot, Entry::Empty);
                self.pages = self.pages.saturating_sub(1);
            }
        }
    }

    /// Frees file `ino`'s pages and nodes.
    pub fn free(&mut self, ino: u32) {
        self.drop_pages(ino, 0, u64::MAX);
        let mut f = self.file(ino);
        self.keys.0.forget();
        let keys = &self.keys.0;
        self.forest.nodes(&f, |idx| {
            if keys.get(idx, T).is_ok() {
                let _ = bank::free(FILES, T);
            }
        });
        self.forest.free(&mut f, |_| {});
        if let Some(e) = self.files.get_mut(ino as usize) {
            *e = File::EMPTY;
        }
    }

    /// A read-only segment key to file `ino`'s bytes into `into` (a file
    /// with no pages gets one empty node).
    pub fn segment(&mut self, ino: u32, into: Slot) -> Result<(), i64> {
        if self.file(ino).root == forest::NONE {
            self.make_page(ino, 0)?;
        }
        let f = self.file(ino);
        self.keys.0.get(f.root, into).map_err(|_| EIO)?;
        ok(Msg::new(into, node::MAKE_SEGMENT)
            .words([f.lss as u64, stet_keys::rights::RO as u64, 0, 0])
            .recv([into, 0, 0, 0])
            .call()
            .code)
        .map_err(|_| EIO)
    }
}
