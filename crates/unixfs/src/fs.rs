//! The file system's names and metadata: inodes, directories, path
//! resolution, `stat` and `getdents64` records — the pure half of the
//! file-system domain (`unixd`). A regular file's bytes are a segment the
//! domain keeps beside this ([`crate::forest`]); a symbolic link's target is
//! kept here.
//!
//! Sized by memory, not by constants: the inodes, the directory entries,
//! the name hash and the symbolic links are tables that grow (by doubling)
//! from the heap as files are made, reserved with `try_reserve`, so a full
//! heap — or the byte limit a test sets ([`Fs::with_limit`]) — answers
//! `ENOSPC` to the call that needed more and changes nothing. Freed inodes,
//! entries and links go on free lists threaded through their tables, so
//! freeing never allocates. What stays bounded is per call: a name is at
//! most [`MAX_NAME`] bytes (Linux's `NAME_MAX`), a path and a symbolic
//! link's target at most [`MAX_PATH`].
//!
//! A name is found through a hash table keyed by (directory, name): open
//! addressing with linear probing, at most half full, deletion by shifting
//! the following entries back (no tombstones), each entry's hash kept with
//! it so growing and deleting never hash a name again. A directory's
//! entries are also a doubly linked list, so `getdents64` and `rmdir`
//! never scan every name. Persistence is the store's: the whole structure
//! lives in the domain's memory, which checkpoints carry, so there is no
//! journal and no fsck.

use alloc::vec::Vec;
use core::mem::size_of;
use stet_unix::cred::{want, Cred};
use stet_unix::sys::errno::*;

pub use stet_unix::fs::{mode, stat_bytes, Inode, MAX_FOLLOW, MAX_LINK, MAX_NAME, MAX_PATH, ROOT};

/// No inode / no entry / end of a list.
const NONE: u32 = u32::MAX;
/// Name bytes an entry holds itself; a longer name is an allocation of its
/// own (most names are short: no allocation, and an entry of 56 bytes).
const SHORT: usize = 23;

const FREE_INODE: Inode = Inode::FREE;

/// A name: in the entry, or (longer than [`SHORT`]) on the heap.
#[derive(Clone, Debug)]
enum Name {
    Short(u8, [u8; SHORT]),
    Long(Vec<u8>),
}

impl Name {
    const EMPTY: Name = Name::Short(0, [0; SHORT]);

    fn get(&self) -> &[u8] {
        match self {
            Name::Short(n, b) => &b[..*n as usize],
            Name::Long(v) => v,
        }
    }

    /// Heap bytes it holds.
    fn heap(&self) -> usize {
        match self {
            Name::Short(..) => 0,
            Name::Long(v) => v.capacity(),
        }
    }
}

/// A directory entry. `ino` 0: free (then `next` is the next free one).
#[derive(Clone, Debug)]
struct Dirent {
    dir: u32,
    ino: u32,
    prev: u32,
    next: u32,
    /// `name_hash(dir, name)`.
    hash: u32,
    name: Name,
}

/// A symbolic link's target (empty: a free link, `next` the next free).
#[derive(Clone, Debug)]
struct Link {
    next: u32,
    target: Vec<u8>,
}

/// The file system's metadata.
#[derive(Clone)]
pub struct Fs {
    /// By inode number; 0 is never used.
    inodes: Vec<Inode>,
    free_inode: u32,
    ents: Vec<Dirent>,
    free_ent: u32,
    /// Hash buckets (a power of two of them, or none yet): dirent index +
    /// 1, 0 empty.
    hash: Vec<u32>,
    /// Entries in use.
    live: usize,
    links: Vec<Link>,
    free_link: u32,
    /// Heap bytes the tables, long names and targets hold, and the most
    /// they may.
    bytes: usize,
    limit: usize,
    /// Extended attributes, by inode (counted in `limit` with the rest).
    pub xattrs: crate::xattrs::Xattrs,
    /// Whose call is being served: every check of search, write and
    /// ownership asks these credentials (unixd sets them for each
    /// message; [`Cred::ROOT`] otherwise).
    pub who: Cred,
    /// The caller's root directory (`chroot`): where an absolute path
    /// starts and where `..` stays.
    pub root: u32,
    /// `openat2`'s limits on the walk being served ([`Resolve::NONE`]
    /// otherwise).
    pub resolve: Resolve,
}

/// `openat2`'s `RESOLVE_*` as limits on a walk (`RESOLVE_IN_ROOT` is a
/// [`Fs::root`] of the call's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolve {
    /// `RESOLVE_BENEATH`: the directory the walk may not leave (`EXDEV`
    /// for an absolute path, an absolute link or `..` out of it).
    pub beneath: u32,
    /// `RESOLVE_NO_SYMLINKS`: following any link is `ELOOP`.
    pub no_symlinks: bool,
    /// `RESOLVE_NO_MAGICLINKS`: following a link inside a subdirectory of
    /// this one (`/proc`: its processes' `exe`, `cwd`, `fd/N`) is `ELOOP`.
    pub magic: u32,
    /// `RESOLVE_NO_XDEV`: this directory is another file system's mount
    /// point (`/proc`); walking into or out of it is `EXDEV`.
    pub mount: u32,
}

impl Resolve {
    /// No limits.
    pub const NONE: Resolve = Resolve {
        beneath: NONE,
        no_symlinks: false,
        magic: NONE,
        mount: NONE,
    };
}

/// A path walk's state: symbolic links it may still follow, and the
/// directory it reports looking names up in.
struct Walk {
    budget: usize,
    watch: Option<u32>,
    seen: bool,
}

fn name_hash(dir: u32, name: &[u8]) -> u32 {
    // FNV-1a over the directory and the name.
    let mut h: u32 = 0x811c_9dc5;
    for &b in dir.to_le_bytes().iter().chain(name) {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// Checks one path component.
fn valid_name(name: &[u8]) -> Result<(), i64> {
    if name.is_empty() || name == b"." || name == b".." {
        return Err(EINVAL);
    }
    if name.len() > MAX_NAME {
        return Err(ENAMETOOLONG);
    }
    if name.contains(&b'/') || name.contains(&0) {
        return Err(EINVAL);
    }
    Ok(())
}

/// Checks the name of something to be made: "." and ".." exist already.
fn new_name(name: &[u8]) -> Result<(), i64> {
    if name == b"." || name == b".." {
        return Err(EEXIST);
    }
    valid_name(name)
}

/// Makes sure `v` has room for one more element, doubling it if not,
/// within `limit` heap bytes in all (`used` counts them).
fn room<T>(v: &mut Vec<T>, used: &mut usize, limit: usize) -> Result<(), i64> {
    if v.len() < v.capacity() {
        return Ok(());
    }
    let more = v.capacity().max(4);
    if used.saturating_add(more * size_of::<T>()) > limit {
        return Err(ENOSPC);
    }
    let before = v.capacity();
    v.try_reserve_exact(more).map_err(|_| ENOSPC)?;
    *used += (v.capacity() - before) * size_of::<T>();
    Ok(())
}

/// A copy of `b` on the heap, within `limit` bytes in all.
fn heap_copy(b: &[u8], used: &mut usize, limit: usize) -> Result<Vec<u8>, i64> {
    if used.saturating_add(b.len()) > limit {
        return Err(ENOSPC);
    }
    let mut v = Vec::new();
    v.try_reserve_exact(b.len()).map_err(|_| ENOSPC)?;
    v.extend_from_slice(b);
    *used += v.capacity();
    Ok(v)
}

/// What a path resolves to for operations that create or remove a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parent<'a> {
    /// The directory holding the last component.
    pub dir: u32,
    /// The last component (may be "." or ".." or empty for "/").
    pub name: &'a [u8],
}

impl Default for Fs {
    fn default() -> Self {
        Fs::new(0)
    }
}

impl Fs {
    /// A file system holding only the root directory, made at `now`, whose
    /// tables may take all the heap.
    pub fn new(now: u64) -> Fs {
        Fs::with_limit(now, usize::MAX)
    }

    /// [`Fs::new`] whose tables, names and targets hold at most `limit`
    /// heap bytes (past it, calls that need more answer `ENOSPC`). If not
    /// even the root fits, there is no root and every path answers
    /// `ENOENT`.
    pub fn with_limit(now: u64, limit: usize) -> Fs {
        let mut fs = Fs {
            inodes: Vec::new(),
            free_inode: NONE,
            ents: Vec::new(),
            free_ent: NONE,
            hash: Vec::new(),
            live: 0,
            links: Vec::new(),
            free_link: NONE,
            bytes: 0,
            limit,
            xattrs: crate::xattrs::Xattrs::new(),
            who: Cred::ROOT,
            root: ROOT,
            resolve: Resolve::NONE,
        };
        if room(&mut fs.inodes, &mut fs.bytes, limit).is_ok() {
            fs.inodes.push(FREE_INODE);
            fs.inodes.push(Inode {
                mode: mode::DIR | 0o755,
                nlink: 2,
                size: 4096,
                mtime: now,
                ctime: now,
                atime: now,
                aux: ROOT,
                ..FREE_INODE
            });
        }
        fs
    }

    /// Heap bytes the file system's tables, long names and link targets
    /// hold (tables grow and are not given back).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Inode `ino`, if it is in use.
    pub fn inode(&self, ino: u32) -> Option<&Inode> {
        self.inodes
            .get(ino as usize)
            .filter(|i| i.mode != 0 && ino != 0)
    }

    /// Inode `ino` to change.
    pub fn inode_mut(&mut self, ino: u32) -> Option<&mut Inode> {
        if ino == 0 {
            return None;
        }
        self.inodes.get_mut(ino as usize).filter(|i| i.mode != 0)
    }

    /// Whether `ino` is a directory.
    pub fn is_dir(&self, ino: u32) -> bool {
        self.inode(ino)
            .is_some_and(|i| i.mode & mode::FMT == mode::DIR)
    }

    /// The bucket holding (`dir`, `name`), or the empty one where it would
    /// go (the table is at most half full, so a probe always ends; with no
    /// table yet: `Err(0)`).
    fn slot_of(&self, dir: u32, name: &[u8], h: u32) -> Result<usize, usize> {
        if self.hash.is_empty() {
            return Err(0);
        }
        let mask = self.hash.len() - 1;
        let mut i = h as usize & mask;
        loop {
            match self.hash[i] {
                0 => return Err(i),
                e => {
                    let d = &self.ents[e as usize - 1];
                    if d.hash == h && d.dir == dir && d.name.get() == name {
                        return Ok(i);
                    }
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// The inode named `name` in directory `dir` ("." and ".." included).
    pub fn lookup(&self, dir: u32, name: &[u8]) -> Option<u32> {
        let d = self.inode(dir)?;
        if d.mode & mode::FMT != mode::DIR {
            return None;
        }
        match name {
            b"." | b"" => Some(dir),
            b".." => Some(d.aux),
            _ => self
                .slot_of(dir, name, name_hash(dir, name))
                .ok()
                .map(|s| self.ents[self.hash[s] as usize - 1].ino),
        }
    }

    /// A symbolic link's target.
    pub fn link_target(&self, ino: u32) -> Option<&[u8]> {
        let i = self.inode(ino)?;
        if i.mode & mode::FMT != mode::LNK {
            return None;
        }
        Some(&self.links.get(i.aux as usize)?.target)
    }

    /// Resolves `path` from `cwd` (absolute paths from the root). With
    /// `follow`, a symbolic link as the last component is followed too.
    pub fn resolve(&self, cwd: u32, path: &[u8], follow: bool) -> Result<u32, i64> {
        let mut w = Walk {
            budget: MAX_FOLLOW,
            watch: None,
            seen: false,
        };
        self.walk(cwd, path, follow, &mut w)
    }

    /// [`Fs::resolve`], and whether it looked a name up in directory
    /// `watch` (unixd: whether the path went through `/proc`).
    pub fn resolve_watching(
        &self,
        cwd: u32,
        path: &[u8],
        follow: bool,
        watch: u32,
    ) -> (Result<u32, i64>, bool) {
        let mut w = Walk {
            budget: MAX_FOLLOW,
            watch: Some(watch),
            seen: false,
        };
        let r = self.walk(cwd, path, follow, &mut w);
        (r, w.seen)
    }

    fn walk(&self, cwd: u32, path: &[u8], follow: bool, w: &mut Walk) -> Result<u32, i64> {
        if path.is_empty() {
            return Err(ENOENT);
        }
        if path.len() > MAX_PATH {
            return Err(ENAMETOOLONG);
        }
        let r = self.resolve;
        if path[0] == b'/' && r.beneath != NONE {
            return Err(EXDEV);
        }
        let mut at = if path[0] == b'/' { self.root } else { cwd };
        if self.inode(at).is_none() {
            return Err(ENOENT);
        }
        let comps = path.split(|&b| b == b'/').filter(|c| !c.is_empty());
        let n = comps.clone().count();
        for (i, c) in comps.enumerate() {
            if !self.is_dir(at) {
                return Err(ENOTDIR);
            }
            if c.len() > MAX_NAME {
                return Err(ENAMETOOLONG);
            }
            w.seen |= w.watch == Some(at);
            self.who.check(self.inodes[at as usize].owner(), want::X)?;
            // `..` of the root is the root (of a `chroot`'s too).
            if c == b".." && (at == r.beneath || (at == r.mount && at != self.root)) {
                return Err(EXDEV);
            }
            let next = if c == b".." && at == self.root {
                at
            } else {
                self.lookup(at, c).ok_or(ENOENT)?
            };
            if next == r.mount && at != r.mount && c != b"." {
                return Err(EXDEV);
            }
            let last = i + 1 == n;
            match self.link_target(next) {
                Some(_) if (!last || follow) && r.no_symlinks => return Err(ELOOP),
                Some(_)
                    if (!last || follow)
                        && r.magic != NONE
                        && at != r.magic
                        && self.within(at, r.magic) =>
                {
                    return Err(ELOOP)
                }
                Some(target) if !last || follow => {
                    if w.budget == 0 {
                        return Err(ELOOP);
                    }
                    w.budget -= 1;
                    at = self.walk(at, target, true, w)?;
                }
                _ => at = next,
            }
        }
        // "a/" must be a directory.
        if path.ends_with(b"/") && !self.is_dir(at) {
            return Err(ENOTDIR);
        }
        Ok(at)
    }

    /// The directory and last component of `path` (for create, unlink,
    /// rename). The directory must exist and be a directory.
    pub fn parent<'a>(&self, cwd: u32, path: &'a [u8]) -> Result<Parent<'a>, i64> {
        if path.is_empty() {
            return Err(ENOENT);
        }
        if path.len() > MAX_PATH {
            return Err(ENAMETOOLONG);
        }
        let trimmed = {
            let mut e = path.len();
            while e > 1 && path[e - 1] == b'/' {
                e -= 1;
            }
            &path[..e]
        };
        let (dir_part, name) = match trimmed.iter().rposition(|&b| b == b'/') {
            Some(0) => (&trimmed[..1], &trimmed[1..]),
            Some(p) => (&trimmed[..p], &trimmed[p + 1..]),
            None => (&b""[..], trimmed),
        };
        let dir = if dir_part.is_empty() {
            cwd
        } else {
            self.resolve(cwd, dir_part, true)?
        };
        if !self.is_dir(dir) {
            return Err(if self.inode(dir).is_some() {
                ENOTDIR
            } else {
                ENOENT
            });
        }
        if name.len() > MAX_NAME {
            return Err(ENAMETOOLONG);
        }
        Ok(Parent { dir, name })
    }

    fn alloc_inode(&mut self, m: u32, now: u64) -> Result<u32, i64> {
        if self.inodes.is_empty() {
            // Not even the root fitted.
            return Err(ENOSPC);
        }
        let ino = if self.free_inode != NONE {
            let ino = self.free_inode;
            self.free_inode = self.inodes[ino as usize].aux;
            ino
        } else {
            if self.inodes.len() >= NONE as usize {
                return Err(ENOSPC);
            }
            room(&mut self.inodes, &mut self.bytes, self.limit)?;
            self.inodes.push(FREE_INODE);
            (self.inodes.len() - 1) as u32
        };
        self.inodes[ino as usize] = Inode {
            mode: m,
            nlink: 0,
            mtime: now,
            ctime: now,
            atime: now,
            ..FREE_INODE
        };
        Ok(ino)
    }

    /// Puts inode `ino` on the free list.
    fn release_inode(&mut self, ino: u32) {
        self.inodes[ino as usize] = Inode {
            aux: self.free_inode,
            ..FREE_INODE
        };
        self.free_inode = ino;
    }

    /// Doubles the hash table (or makes it) if one more entry would fill
    /// it past half.
    fn hash_room(&mut self) -> Result<(), i64> {
        if (self.live + 1) * 2 <= self.hash.len() {
            return Ok(());
        }
        let n = (self.hash.len() * 2).max(64);
        if self.bytes.saturating_add(n * size_of::<u32>()) > self.limit {
            return Err(ENOSPC);
        }
        let mut t: Vec<u32> = Vec::new();
        t.try_reserve_exact(n).map_err(|_| ENOSPC)?;
        t.resize(n, 0);
        let mask = n - 1;
        for &e in self.hash.iter().filter(|&&e| e != 0) {
            let mut i = self.ents[e as usize - 1].hash as usize & mask;
            while t[i] != 0 {
                i = (i + 1) & mask;
            }
            t[i] = e;
        }
        self.bytes =
            self.bytes + t.capacity() * size_of::<u32>() - self.hash.capacity() * size_of::<u32>();
        self.hash = t;
        Ok(())
    }

    fn add_entry(&mut self, dir: u32, name: &[u8], ino: u32) -> Result<(), i64> {
        valid_name(name)?;
        let h = name_hash(dir, name);
        if self.slot_of(dir, name, h).is_ok() {
            return Err(EEXIST);
        }
        // Everything that can fail first, so a failure changes nothing.
        if self.free_ent == NONE {
            if self.ents.len() >= NONE as usize - 1 {
                return Err(ENOSPC);
            }
            room(&mut self.ents, &mut self.bytes, self.limit)?;
        }
        self.hash_room()?;
        let stored = if name.len() <= SHORT {
            let mut b = [0; SHORT];
            b[..name.len()].copy_from_slice(name);
            Name::Short(name.len() as u8, b)
        } else {
            Name::Long(heap_copy(name, &mut self.bytes, self.limit)?)
        };
        // The empty bucket for it (it is absent: checked above).
        let (Ok(slot) | Err(slot)) = self.slot_of(dir, name, h);
        let e = if self.free_ent != NONE {
            let e = self.free_ent;
            self.free_ent = self.ents[e as usize].next;
            e
        } else {
            self.ents.push(Dirent {
                dir: 0,
                ino: 0,
                prev: NONE,
                next: NONE,
                hash: 0,
                name: Name::EMPTY,
            });
            (self.ents.len() - 1) as u32
        };
        let first = self.inodes[dir as usize].first;
        self.ents[e as usize] = Dirent {
            dir,
            ino,
            prev: NONE,
            next: first,
            hash: h,
            name: stored,
        };
        if first != NONE {
            self.ents[first as usize].prev = e;
        }
        let di = &mut self.inodes[dir as usize];
        di.first = e;
        di.entries += 1;
        di.size = 4096 * (1 + di.entries as u64 / 64);
        self.hash[slot] = e + 1;
        self.live += 1;
        Ok(())
    }

    /// Empties bucket `i` and shifts the entries after it back where their
    /// probes still find them.
    fn unhash(&mut self, mut i: usize) {
        let mask = self.hash.len() - 1;
        self.hash[i] = 0;
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let e = self.hash[j];
            if e == 0 {
                return;
            }
            let home = self.ents[e as usize - 1].hash as usize & mask;
            // Entry j may move to the hole at i if its home is not in the
            // cyclic range (i, j].
            let stays = if i <= j {
                i < home && home <= j
            } else {
                i < home || home <= j
            };
            if !stays {
                self.hash[i] = e;
                self.hash[j] = 0;
                i = j;
            }
        }
    }

    fn remove_entry(&mut self, dir: u32, name: &[u8]) -> Result<u32, i64> {
        let slot = self
            .slot_of(dir, name, name_hash(dir, name))
            .map_err(|_| ENOENT)?;
        let e = self.hash[slot];
        self.unhash(slot);
        let d = core::mem::replace(
            &mut self.ents[e as usize - 1],
            Dirent {
                dir: 0,
                ino: 0,
                prev: NONE,
                next: self.free_ent,
                hash: 0,
                name: Name::EMPTY,
            },
        );
        self.free_ent = e - 1;
        if d.prev != NONE {
            self.ents[d.prev as usize].next = d.next;
        } else {
            self.inodes[dir as usize].first = d.next;
        }
        if d.next != NONE {
            self.ents[d.next as usize].prev = d.prev;
        }
        self.bytes -= d.name.heap();
        let di = &mut self.inodes[dir as usize];
        di.entries -= 1;
        di.size = 4096 * (1 + di.entries as u64 / 64);
        self.live -= 1;
        Ok(d.ino)
    }

    /// Makes a new file, directory, device or FIFO `name` in `dir` with
    /// type and permission bits `m` → its inode.
    pub fn create(&mut self, dir: u32, name: &[u8], m: u32, now: u64) -> Result<u32, i64> {
        if !self.is_dir(dir) {
            return Err(ENOTDIR);
        }
        new_name(name)?;
        if self.lookup(dir, name).is_some() {
            return Err(EEXIST);
        }
        let d = self.inodes[dir as usize].owner();
        self.who.check(d, want::W | want::X)?;
        let o = self.who.new_inode(d, m);
        let ino = self.alloc_inode(o.mode, now)?;
        self.inodes[ino as usize].uid = o.uid;
        self.inodes[ino as usize].gid = o.gid;
        if let Err(e) = self.add_entry(dir, name, ino) {
            self.release_inode(ino);
            return Err(e);
        }
        let is_dir = m & mode::FMT == mode::DIR;
        let i = &mut self.inodes[ino as usize];
        i.nlink = if is_dir { 2 } else { 1 };
        if is_dir {
            i.aux = dir;
            i.size = 4096;
            self.inodes[dir as usize].nlink += 1;
        }
        self.touch(dir, now);
        Ok(ino)
    }

    /// A regular file with no name (`MAP_SHARED | MAP_ANONYMOUS` memory,
    /// Linux's shmem file) of `size` bytes: it lives while an open file
    /// holds it, and is freed like an unlinked file after.
    pub fn create_unnamed(&mut self, size: u64, now: u64) -> Result<u32, i64> {
        let ino = self.alloc_inode(mode::REG | 0o600, now)?;
        self.inodes[ino as usize].size = size;
        Ok(ino)
    }

    /// Makes a symbolic link `name` in `dir` to `target`.
    pub fn symlink(&mut self, dir: u32, name: &[u8], target: &[u8], now: u64) -> Result<u32, i64> {
        if target.is_empty() {
            return Err(ENOENT);
        }
        if target.len() > MAX_LINK {
            return Err(ENAMETOOLONG);
        }
        if self.free_link == NONE {
            if self.links.len() >= NONE as usize {
                return Err(ENOSPC);
            }
            room(&mut self.links, &mut self.bytes, self.limit)?;
        }
        let t = heap_copy(target, &mut self.bytes, self.limit)?;
        let ino = match self.create(dir, name, mode::LNK | 0o777, now) {
            Ok(ino) => ino,
            Err(e) => {
                self.bytes -= t.capacity();
                return Err(e);
            }
        };
        let slot = if self.free_link != NONE {
            let l = self.free_link;
            self.free_link = self.links[l as usize].next;
            self.links[l as usize] = Link {
                next: NONE,
                target: t,
            };
            l
        } else {
            self.links.push(Link {
                next: NONE,
                target: t,
            });
            (self.links.len() - 1) as u32
        };
        let i = &mut self.inodes[ino as usize];
        i.aux = slot;
        i.size = target.len() as u64;
        Ok(ino)
    }

    /// A new name `name` in `dir` for the non-directory `ino`.
    pub fn link(&mut self, dir: u32, name: &[u8], ino: u32, now: u64) -> Result<(), i64> {
        let i = self.inode(ino).ok_or(ENOENT)?;
        if i.mode & mode::FMT == mode::DIR {
            return Err(EPERM);
        }
        if !self.is_dir(dir) {
            return Err(ENOTDIR);
        }
        new_name(name)?;
        if self.lookup(dir, name).is_some() {
            return Err(EEXIST);
        }
        self.who
            .check(self.inodes[dir as usize].owner(), want::W | want::X)?;
        self.add_entry(dir, name, ino)?;
        let i = &mut self.inodes[ino as usize];
        i.nlink += 1;
        i.ctime = now;
        self.touch(dir, now);
        Ok(())
    }

    /// Removes the name `name` (not a directory) from `dir` → its inode
    /// and whether it has no names left (the caller frees it, and its
    /// bytes, once no descriptor holds it: [`Fs::free`]).
    pub fn unlink(&mut self, dir: u32, name: &[u8], now: u64) -> Result<(u32, bool), i64> {
        if !self.is_dir(dir) {
            return Err(ENOTDIR);
        }
        if name == b"." || name == b".." {
            return Err(if name == b"." { EINVAL } else { ENOTEMPTY });
        }
        let ino = self.lookup(dir, name).ok_or(ENOENT)?;
        self.may_delete(dir, ino)?;
        if self.is_dir(ino) {
            return Err(EISDIR);
        }
        self.remove_entry(dir, name)?;
        let i = &mut self.inodes[ino as usize];
        i.nlink -= 1;
        i.ctime = now;
        let gone = i.nlink == 0;
        self.touch(dir, now);
        Ok((ino, gone))
    }

    /// Removes the empty directory `name` from `dir` → its inode.
    pub fn rmdir(&mut self, dir: u32, name: &[u8], now: u64) -> Result<u32, i64> {
        let ino = self.rmdir_keep(dir, name, now)?;
        self.release_inode(ino);
        Ok(ino)
    }

    /// [`Fs::rmdir`] that leaves the inode, with no links, for its caller
    /// to [`Fs::free`] once nothing holds it open (a removed directory
    /// still open is empty and takes no new names: its inode number is
    /// not given to another file meanwhile).
    pub fn rmdir_keep(&mut self, dir: u32, name: &[u8], now: u64) -> Result<u32, i64> {
        if name == b"." {
            return Err(EINVAL);
        }
        if name == b".." {
            return Err(ENOTEMPTY);
        }
        let ino = self.lookup(dir, name).ok_or(ENOENT)?;
        self.may_delete(dir, ino)?;
        if !self.is_dir(ino) {
            return Err(ENOTDIR);
        }
        if ino == ROOT {
            return Err(EBUSY);
        }
        if self.inodes[ino as usize].entries > 0 {
            return Err(ENOTEMPTY);
        }
        self.remove_entry(dir, name)?;
        self.inodes[ino as usize].nlink = 0;
        self.inodes[dir as usize].nlink -= 1;
        self.touch(dir, now);
        Ok(ino)
    }

    /// Whether the caller may remove the name of `ino` from `dir`
    /// ([`Cred::may_delete`]: the sticky bit's rule).
    fn may_delete(&self, dir: u32, ino: u32) -> Result<(), i64> {
        self.who.may_delete(
            self.inodes[dir as usize].owner(),
            self.inodes[ino as usize].owner(),
        )
    }

    /// Whether `a` is `b` or inside it.
    fn within(&self, mut a: u32, b: u32) -> bool {
        for _ in 0..self.inodes.len() {
            if a == b {
                return true;
            }
            if a == ROOT {
                return false;
            }
            a = self.inodes[a as usize].aux;
        }
        false
    }

    /// `rename(d1/n1, d2/n2)` with Linux's rules: a file replaces a file,
    /// a directory replaces an empty directory, a directory cannot move
    /// into itself → the inode replaced (and whether it has no names
    /// left), if any. A failure (`ENOSPC` included: a longer new name may
    /// need memory) changes nothing.
    pub fn rename(
        &mut self,
        d1: u32,
        n1: &[u8],
        d2: u32,
        n2: &[u8],
        now: u64,
    ) -> Result<Option<(u32, bool)>, i64> {
        if !self.is_dir(d1) || !self.is_dir(d2) {
            return Err(ENOTDIR);
        }
        if matches!(n1, b"." | b"..") || matches!(n2, b"." | b"..") {
            return Err(EBUSY);
        }
        let src = self.lookup(d1, n1).ok_or(ENOENT)?;
        valid_name(n2)?;
        let src_dir = self.is_dir(src);
        if src_dir && self.within(d2, src) {
            return Err(EINVAL);
        }
        let dst = self.lookup(d2, n2);
        self.may_delete(d1, src)?;
        match dst {
            Some(t) => self.may_delete(d2, t)?,
            None => self
                .who
                .check(self.inodes[d2 as usize].owner(), want::W | want::X)?,
        }
        // A directory moving to another parent has its ".." rewritten.
        if src_dir && d1 != d2 {
            self.who.check(self.inodes[src as usize].owner(), want::W)?;
        }
        if dst == Some(src) {
            return Ok(None);
        }
        if let Some(dst) = dst {
            match (src_dir, self.is_dir(dst)) {
                (false, true) => return Err(EISDIR),
                (true, false) => return Err(ENOTDIR),
                (true, true) if self.inodes[dst as usize].entries > 0 => return Err(ENOTEMPTY),
                _ => {}
            }
        }
        // Nothing changes until nothing can fail: a name replaced keeps its
        // entry (now naming `src`), a new one is added (which may need
        // memory) before the old goes.
        let mut replaced = None;
        if let Some(dst) = dst {
            if let Ok(slot) = self.slot_of(d2, n2, name_hash(d2, n2)) {
                let e = self.hash[slot] as usize - 1;
                self.ents[e].ino = src;
            }
            replaced = Some(if src_dir {
                // An empty directory: its ".." in `d2` goes with it.
                self.release_inode(dst);
                self.inodes[d2 as usize].nlink -= 1;
                (dst, true)
            } else {
                let i = &mut self.inodes[dst as usize];
                i.nlink -= 1;
                i.ctime = now;
                (dst, i.nlink == 0)
            });
        } else {
            self.add_entry(d2, n2, src)?;
        }
        self.remove_entry(d1, n1)?;
        if src_dir && d1 != d2 {
            self.inodes[d1 as usize].nlink -= 1;
            self.inodes[d2 as usize].nlink += 1;
            self.inodes[src as usize].aux = d2;
        }
        self.inodes[src as usize].ctime = now;
        self.touch(d1, now);
        self.touch(d2, now);
        Ok(replaced)
    }

    /// `renameat2(RENAME_EXCHANGE)`: names `n1` in `d1` and `n2` in `d2`
    /// trade their inodes, both of which must exist (`ENOENT`). Either may
    /// be a directory (not moved under itself: `EINVAL`); the caller must
    /// be allowed to remove and add each name.
    pub fn exchange(
        &mut self,
        d1: u32,
        n1: &[u8],
        d2: u32,
        n2: &[u8],
        now: u64,
    ) -> Result<(), i64> {
        if !self.is_dir(d1) || !self.is_dir(d2) {
            return Err(ENOTDIR);
        }
        if matches!(n1, b"." | b"..") || matches!(n2, b"." | b"..") {
            return Err(EBUSY);
        }
        let a = self.lookup(d1, n1).ok_or(ENOENT)?;
        let b = self.lookup(d2, n2).ok_or(ENOENT)?;
        let (a_dir, b_dir) = (self.is_dir(a), self.is_dir(b));
        if (a_dir && self.within(d2, a)) || (b_dir && self.within(d1, b)) {
            return Err(EINVAL);
        }
        self.may_delete(d1, a)?;
        self.may_delete(d2, b)?;
        if d1 != d2 {
            if a_dir {
                self.who.check(self.inodes[a as usize].owner(), want::W)?;
            }
            if b_dir {
                self.who.check(self.inodes[b as usize].owner(), want::W)?;
            }
        }
        if a == b {
            return Ok(());
        }
        let s1 = self
            .slot_of(d1, n1, name_hash(d1, n1))
            .map_err(|_| ENOENT)?;
        let s2 = self
            .slot_of(d2, n2, name_hash(d2, n2))
            .map_err(|_| ENOENT)?;
        let (e1, e2) = (self.hash[s1] as usize - 1, self.hash[s2] as usize - 1);
        self.ents[e1].ino = b;
        self.ents[e2].ino = a;
        if d1 != d2 {
            // A directory changing parent takes its ".." link along.
            if a_dir {
                self.inodes[d1 as usize].nlink -= 1;
                self.inodes[d2 as usize].nlink += 1;
                self.inodes[a as usize].aux = d2;
            }
            if b_dir {
                self.inodes[d2 as usize].nlink -= 1;
                self.inodes[d1 as usize].nlink += 1;
                self.inodes[b as usize].aux = d1;
            }
        }
        self.inodes[a as usize].ctime = now;
        self.inodes[b as usize].ctime = now;
        self.touch(d1, now);
        self.touch(d2, now);
        Ok(())
    }

    /// Frees inode `ino` (no names, no descriptors left).
    pub fn free(&mut self, ino: u32) {
        if let Some(i) = self.inode(ino).copied() {
            if i.mode & mode::FMT == mode::LNK {
                if let Some(l) = self.links.get_mut(i.aux as usize) {
                    self.bytes -= l.target.capacity();
                    l.target = Vec::new();
                    l.next = self.free_link;
                    self.free_link = i.aux;
                }
            }
            self.xattrs.forget(ino);
            self.release_inode(ino);
        }
    }

    /// `setxattr` of `ino`'s `name` (see [`crate::xattrs::Xattrs::set`]),
    /// within the heap bytes the file system may hold (`ENOSPC`).
    pub fn set_xattr(
        &mut self,
        ino: u32,
        name: &[u8],
        value: &[u8],
        flags: u64,
    ) -> Result<(), i64> {
        let all = self.bytes.saturating_add(self.xattrs.bytes());
        if all.saturating_add(name.len() + value.len()) > self.limit {
            return Err(ENOSPC);
        }
        self.xattrs.set(ino, name, value, flags)
    }

    fn touch(&mut self, ino: u32, now: u64) {
        let i = &mut self.inodes[ino as usize];
        i.mtime = now;
        i.ctime = now;
    }
}

#[path = "fs/records.rs"]
mod records;

#[path = "fs/relink.rs"]
mod relink;

#[cfg(test)]
#[path = "fs/tests.rs"]
mod tests;
