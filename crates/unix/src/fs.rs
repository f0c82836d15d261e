//! The file system's names and metadata: inodes, directories, path
//! resolution, `stat` and `getdents64` records — the pure half of the
//! file-system domain (`unixd`). A regular file's bytes are a segment the
//! domain keeps beside this (`crate::forest`); a symbolic link's target is
//! kept here.
//!
//! Fixed capacity, no allocation: [`MAX_INODES`] inodes, [`MAX_DIRENTS`]
//! names. A name is found through a hash table keyed by (directory, name);
//! a directory's entries are also a doubly linked list, so `getdents64`
//! and `rmdir` never scan every name. Persistence is the store's: the whole
//! structure lives in the domain's memory, which checkpoints carry, so
//! there is no journal and no fsck.

use crate::sys::errno::*;

/// Most inodes.
pub const MAX_INODES: usize = 2048;
/// Most directory entries (names) in all directories.
pub const MAX_DIRENTS: usize = 4096;
/// Longest name in bytes (Linux allows 255; Stet's table entries hold
/// this many, and longer names answer `ENAMETOOLONG`).
pub const MAX_NAME: usize = 59;
/// Longest symbolic-link target.
pub const MAX_LINK: usize = 127;
/// Most symbolic links.
pub const MAX_LINKS: usize = 256;
/// Longest path.
pub const MAX_PATH: usize = 4095;
/// Symbolic links followed in one resolution before `ELOOP`.
pub const MAX_FOLLOW: usize = 40;
/// The root directory's inode.
pub const ROOT: u32 = 1;
/// No inode / no entry.
const NONE: u16 = u16::MAX;

/// File types (the `S_IFMT` bits of `st_mode`).
pub mod mode {
    /// Mask of the type bits.
    pub const FMT: u32 = 0o170000;
    /// Directory.
    pub const DIR: u32 = 0o040000;
    /// Regular file.
    pub const REG: u32 = 0o100000;
    /// Symbolic link.
    pub const LNK: u32 = 0o120000;
    /// Character device.
    pub const CHR: u32 = 0o020000;
    /// FIFO.
    pub const FIFO: u32 = 0o010000;
}

/// One inode. `mode` 0: free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inode {
    /// Type and permission bits.
    pub mode: u32,
    /// Names that refer to it (a directory counts its "." and each
    /// subdirectory's "..", as on Linux).
    pub nlink: u32,
    /// Bytes (a directory: 4096 per 64 entries, at least one block).
    pub size: u64,
    /// Modification, status change and access times (ns since 1970).
    pub mtime: u64,
    /// Status change time.
    pub ctime: u64,
    /// Access time.
    pub atime: u64,
    /// Device number of a character device (`major << 8 | minor`).
    pub rdev: u32,
    /// A directory's parent; a symlink's target index; else the domain's
    /// handle for the file's bytes (`u32::MAX`: none yet).
    pub aux: u32,
    /// A directory's first entry.
    first: u16,
    /// A directory's entries.
    pub entries: u16,
}

const FREE_INODE: Inode = Inode {
    mode: 0,
    nlink: 0,
    size: 0,
    mtime: 0,
    ctime: 0,
    atime: 0,
    rdev: 0,
    aux: u32::MAX,
    first: NONE,
    entries: 0,
};

#[derive(Clone, Copy, Debug)]
struct Dirent {
    dir: u32,
    ino: u32,
    prev: u16,
    next: u16,
    len: u8,
    name: [u8; MAX_NAME],
}

const FREE_DIRENT: Dirent = Dirent {
    dir: 0,
    ino: 0,
    prev: NONE,
    next: NONE,
    len: 0,
    name: [0; MAX_NAME],
};

#[derive(Clone, Copy)]
struct Link {
    len: u8,
    target: [u8; MAX_LINK],
}

/// The file system's metadata.
#[derive(Clone)]
pub struct Fs {
    inodes: [Inode; MAX_INODES],
    ents: [Dirent; MAX_DIRENTS],
    /// Hash buckets: dirent index + 1, 0 empty, `TOMB` deleted.
    hash: [u16; 2 * MAX_DIRENTS],
    links: [Link; MAX_LINKS],
    free_ents: usize,
}

const TOMB: u16 = u16::MAX;

/// A path walk's state: symbolic links it may still follow, and the
/// directory it reports looking names up in.
struct Walk {
    budget: usize,
    watch: Option<u32>,
    seen: bool,
}

fn name_hash(dir: u32, name: &[u8]) -> usize {
    // FNV-1a over the directory and the name.
    let mut h: u32 = 0x811c_9dc5;
    for &b in dir.to_le_bytes().iter().chain(name) {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h as usize
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
    /// A file system holding only the root directory, made at `now`.
    pub fn new(now: u64) -> Fs {
        let mut fs = Fs {
            inodes: [FREE_INODE; MAX_INODES],
            ents: [FREE_DIRENT; MAX_DIRENTS],
            hash: [0; 2 * MAX_DIRENTS],
            links: [Link {
                len: 0,
                target: [0; MAX_LINK],
            }; MAX_LINKS],
            free_ents: MAX_DIRENTS,
        };
        fs.inodes[ROOT as usize] = Inode {
            mode: mode::DIR | 0o755,
            nlink: 2,
            size: 4096,
            mtime: now,
            ctime: now,
            atime: now,
            aux: ROOT,
            ..FREE_INODE
        };
        fs
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

    fn slot_of(&self, dir: u32, name: &[u8]) -> Result<usize, usize> {
        let n = self.hash.len();
        let mut i = name_hash(dir, name) % n;
        let mut tomb = None;
        for _ in 0..n {
            match self.hash[i] {
                0 => return Err(tomb.unwrap_or(i)),
                TOMB => {
                    tomb.get_or_insert(i);
                }
                e => {
                    let d = &self.ents[e as usize - 1];
                    if d.dir == dir && &d.name[..d.len as usize] == name {
                        return Ok(i);
                    }
                }
            }
            i = (i + 1) % n;
        }
        Err(tomb.unwrap_or(0))
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
                .slot_of(dir, name)
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
        let l = self.links.get(i.aux as usize)?;
        Some(&l.target[..l.len as usize])
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
        let mut at = if path[0] == b'/' { ROOT } else { cwd };
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
            let next = self.lookup(at, c).ok_or(ENOENT)?;
            let last = i + 1 == n;
            if (!last || follow) && self.link_target(next).is_some() {
                if w.budget == 0 {
                    return Err(ELOOP);
                }
                w.budget -= 1;
                let mut t = [0u8; MAX_LINK];
                let target = self.link_target(next).unwrap_or_default();
                t[..target.len()].copy_from_slice(target);
                at = self.walk(at, &t[..target.len()], true, w)?;
            } else {
                at = next;
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
        let ino = (ROOT as usize + 1..MAX_INODES)
            .find(|&i| self.inodes[i].mode == 0)
            .ok_or(ENOSPC)?;
        self.inodes[ino] = Inode {
            mode: m,
            nlink: 0,
            mtime: now,
            ctime: now,
            atime: now,
            ..FREE_INODE
        };
        Ok(ino as u32)
    }

    fn add_entry(&mut self, dir: u32, name: &[u8], ino: u32) -> Result<(), i64> {
        valid_name(name)?;
        let slot = match self.slot_of(dir, name) {
            Ok(_) => return Err(EEXIST),
            Err(s) => s,
        };
        if self.free_ents == 0 {
            return Err(ENOSPC);
        }
        let e = self.ents.iter().position(|d| d.ino == 0).ok_or(ENOSPC)?;
        let first = self.inodes[dir as usize].first;
        let mut d = Dirent {
            dir,
            ino,
            prev: NONE,
            next: first,
            len: name.len() as u8,
            name: [0; MAX_NAME],
        };
        d.name[..name.len()].copy_from_slice(name);
        self.ents[e] = d;
        if first != NONE {
            self.ents[first as usize].prev = e as u16;
        }
        let di = &mut self.inodes[dir as usize];
        di.first = e as u16;
        di.entries += 1;
        di.size = 4096 * (1 + di.entries as u64 / 64);
        self.hash[slot] = e as u16 + 1;
        self.free_ents -= 1;
        Ok(())
    }

    fn remove_entry(&mut self, dir: u32, name: &[u8]) -> Result<u32, i64> {
        let slot = self.slot_of(dir, name).map_err(|_| ENOENT)?;
        let e = self.hash[slot] as usize - 1;
        let d = self.ents[e];
        if d.prev != NONE {
            self.ents[d.prev as usize].next = d.next;
        } else {
            self.inodes[dir as usize].first = d.next;
        }
        if d.next != NONE {
            self.ents[d.next as usize].prev = d.prev;
        }
        self.ents[e] = FREE_DIRENT;
        self.hash[slot] = TOMB;
        let di = &mut self.inodes[dir as usize];
        di.entries -= 1;
        di.size = 4096 * (1 + di.entries as u64 / 64);
        self.free_ents += 1;
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
        let ino = self.alloc_inode(m, now)?;
        if let Err(e) = self.add_entry(dir, name, ino) {
            self.inodes[ino as usize] = FREE_INODE;
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
        let slot = (0..MAX_LINKS)
            .find(|&l| self.links[l].len == 0)
            .ok_or(ENOSPC)?;
        let ino = self.create(dir, name, mode::LNK | 0o777, now)?;
        let l = &mut self.links[slot];
        l.len = target.len() as u8;
        l.target[..target.len()].copy_from_slice(target);
        let i = &mut self.inodes[ino as usize];
        i.aux = slot as u32;
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
        if name == b"." {
            return Err(EINVAL);
        }
        if name == b".." {
            return Err(ENOTEMPTY);
        }
        let ino = self.lookup(dir, name).ok_or(ENOENT)?;
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
        self.inodes[ino as usize] = FREE_INODE;
        self.inodes[dir as usize].nlink -= 1;
        self.touch(dir, now);
        Ok(ino)
    }

    /// Whether `a` is `b` or inside it.
    fn within(&self, mut a: u32, b: u32) -> bool {
        for _ in 0..MAX_INODES {
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
    /// left), if any.
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
        let mut replaced = None;
        if let Some(dst) = self.lookup(d2, n2) {
            if dst == src {
                return Ok(None);
            }
            match (src_dir, self.is_dir(dst)) {
                (false, true) => return Err(EISDIR),
                (true, false) => return Err(ENOTDIR),
                (true, true) => {
                    self.rmdir(d2, n2, now)?;
                    replaced = Some((dst, true));
                }
                (false, false) => replaced = Some(self.unlink(d2, n2, now)?),
            }
        }
        self.remove_entry(d1, n1)?;
        self.add_entry(d2, n2, src)?;
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

    /// Frees inode `ino` (no names, no descriptors left).
    pub fn free(&mut self, ino: u32) {
        if let Some(i) = self.inode(ino).copied() {
            if i.mode & mode::FMT == mode::LNK {
                if let Some(l) = self.links.get_mut(i.aux as usize) {
                    l.len = 0;
                }
            }
            self.inodes[ino as usize] = FREE_INODE;
        }
    }

    fn touch(&mut self, ino: u32, now: u64) {
        let i = &mut self.inodes[ino as usize];
        i.mtime = now;
        i.ctime = now;
    }
}

#[path = "fs/records.rs"]
mod records;
pub use records::stat_bytes;

#[cfg(test)]
#[path = "fs/tests.rs"]
mod tests;
