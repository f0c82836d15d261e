//! What the tree answers in Linux's layouts: `linux_dirent64` records
//! (`getdents64`), `struct stat` (x86_64, 144 bytes), and the absolute path
//! of a directory (`getcwd`).

use super::{mode, stat_bytes, Fs, NONE, ROOT};
use stet_unix::sys::errno::*;

impl Fs {
    /// `getdents64` from entry `pos` (0 ".", 1 "..", then the entries):
    /// as many `linux_dirent64` records as fit `out` → (bytes, next pos).
    /// `EINVAL` if not even one fits.
    pub fn getdents(&self, dir: u32, pos: u64, out: &mut [u8]) -> Result<(usize, u64), i64> {
        let d = self.inode(dir).ok_or(ENOENT)?;
        if d.mode & mode::FMT != mode::DIR {
            return Err(ENOTDIR);
        }
        let mut n = 0;
        let mut at = pos;
        let mut e = d.first;
        // Skip to entry `pos - 2` of the list.
        let mut skip = pos.saturating_sub(2);
        while skip > 0 && e != NONE {
            e = self.ents[e as usize].next;
            skip -= 1;
        }
        loop {
            let (ino, name, ty): (u32, &[u8], u8) = match at {
                0 => (dir, b".", 4),
                1 => (d.aux, b"..", 4),
                _ => {
                    if e == NONE {
                        break;
                    }
                    let x = &self.ents[e as usize];
                    let m = self.inodes[x.ino as usize].mode;
                    (x.ino, x.name.get(), dtype(m))
                }
            };
            let reclen = (19 + name.len() + 1).next_multiple_of(8);
            if n + reclen > out.len() {
                break;
            }
            let r = &mut out[n..n + reclen];
            r.fill(0);
            r[..8].copy_from_slice(&(ino as u64).to_le_bytes());
            r[8..16].copy_from_slice(&(at + 1).to_le_bytes());
            r[16..18].copy_from_slice(&(reclen as u16).to_le_bytes());
            r[18] = ty;
            r[19..19 + name.len()].copy_from_slice(name);
            n += reclen;
            if at >= 2 {
                e = self.ents[e as usize].next;
            }
            at += 1;
        }
        if n == 0 && (at < 2 || e != NONE) {
            return Err(EINVAL);
        }
        Ok((n, at))
    }

    /// The `struct stat` of `ino` (x86_64 layout, 144 bytes).
    pub fn stat(&self, ino: u32) -> Result<[u8; 144], i64> {
        let i = self.inode(ino).ok_or(ENOENT)?;
        Ok(stat_bytes(ino, i))
    }

    /// The absolute path of directory `ino` into `out` → its length
    /// (`ERANGE` if it does not fit).
    pub fn path_of(&self, ino: u32, out: &mut [u8]) -> Result<usize, i64> {
        if !self.is_dir(ino) {
            return Err(ENOENT);
        }
        if ino == self.root || ino == ROOT {
            *out.get_mut(0).ok_or(ERANGE)? = b'/';
            if ino == self.root {
                return Ok(1);
            }
        }
        // The names from `ino` up, written from the end of `out` back,
        // then moved to its start; up to the caller's root (`chroot`), or
        // to the real root with "(unreachable)" before the path, as Linux
        // says of a directory outside the caller's root.
        let mut start = out.len();
        let mut at = ino;
        for _ in 0..self.inodes.len() {
            if at == self.root || at == ROOT {
                if at != self.root {
                    const OUTSIDE: &[u8] = b"(unreachable)";
                    if start == out.len() {
                        // The real root itself.
                        start -= 1;
                        out[start] = b'/';
                    }
                    if start < OUTSIDE.len() {
                        return Err(ERANGE);
                    }
                    start -= OUTSIDE.len();
                    out[start..start + OUTSIDE.len()].copy_from_slice(OUTSIDE);
                }
                let n = out.len() - start;
                out.copy_within(start.., 0);
                return Ok(n);
            }
            let parent = self.inodes[at as usize].aux;
            let name = self.name_in(parent, at).ok_or(ENOENT)?;
            if start < 1 + name.len() {
                return Err(ERANGE);
            }
            start -= name.len();
            out[start..start + name.len()].copy_from_slice(name);
            start -= 1;
            out[start] = b'/';
            at = parent;
        }
        Err(ENOENT)
    }

    /// The absolute path of any inode into `out` → its length: a
    /// directory's, or a name of a file's (the first found: a file does
    /// not know its directories, so every name is looked at); `ENOENT`
    /// for a file with no name.
    pub fn any_path(&self, ino: u32, out: &mut [u8]) -> Result<usize, i64> {
        if self.is_dir(ino) {
            return self.path_of(ino, out);
        }
        let e = self
            .ents
            .iter()
            .find(|e| e.ino == ino && ino != 0)
            .ok_or(ENOENT)?;
        let name = e.name.get();
        let mut n = self.path_of(e.dir, out)?;
        if n > 1 {
            *out.get_mut(n).ok_or(ERANGE)? = b'/';
            n += 1;
        }
        out.get_mut(n..n + name.len())
            .ok_or(ERANGE)?
            .copy_from_slice(name);
        Ok(n + name.len())
    }

    /// The name of `child` in directory `dir` (the first, for a file
    /// with several there).
    pub fn name_in(&self, dir: u32, child: u32) -> Option<&[u8]> {
        let mut e = self.inodes[dir as usize].first;
        while e != NONE {
            let x = &self.ents[e as usize];
            if x.ino == child {
                return Some(x.name.get());
            }
            e = x.next;
        }
        None
    }
}

/// The `d_type` of a mode.
fn dtype(m: u32) -> u8 {
    match m & mode::FMT {
        mode::DIR => 4,
        mode::REG => 8,
        mode::LNK => 10,
        mode::CHR => 2,
        mode::FIFO => 1,
        _ => 0,
    }
}
