//! What the tree answers in Linux's layouts: `linux_dirent64` records
//! (`getdents64`), `struct stat` (x86_64, 144 bytes), and the absolute path
//! of a directory (`getcwd`).

use super::{mode, Fs, Inode, NONE, ROOT};
use crate::sys::errno::*;

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
                    (x.ino, &x.name[..x.len as usize], dtype(m))
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

    /// The absolute path of directory `ino` into `out` → its length.
    pub fn path_of(&self, ino: u32, out: &mut [u8]) -> Result<usize, i64> {
        if !self.is_dir(ino) {
            return Err(ENOENT);
        }
        // Collect the names from `ino` up, then write them root-first.
        let mut chain = [0u32; 64];
        let mut depth = 0;
        let mut at = ino;
        while at != ROOT {
            if depth == chain.len() {
                return Err(ENAMETOOLONG);
            }
            chain[depth] = at;
            depth += 1;
            at = self.inodes[at as usize].aux;
        }
        let mut n = 0;
        if depth == 0 {
            *out.get_mut(0).ok_or(ERANGE)? = b'/';
            return Ok(1);
        }
        for &child in chain[..depth].iter().rev() {
            let parent = self.inodes[child as usize].aux;
            let name = self.name_in(parent, child).ok_or(ENOENT)?;
            if n + 1 + name.len() > out.len() {
                return Err(ERANGE);
            }
            out[n] = b'/';
            out[n + 1..n + 1 + name.len()].copy_from_slice(name);
            n += 1 + name.len();
        }
        Ok(n)
    }

    /// The name of `child` in directory `dir`.
    fn name_in(&self, dir: u32, child: u32) -> Option<&[u8]> {
        let mut e = self.inodes[dir as usize].first;
        while e != NONE {
            let x = &self.ents[e as usize];
            if x.ino == child {
                return Some(&x.name[..x.len as usize]);
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

/// `struct stat` for an inode (dev 1, uid and gid 0, blksize 4096).
pub fn stat_bytes(ino: u32, i: &Inode) -> [u8; 144] {
    let mut b = [0u8; 144];
    let mut put =
        |off: usize, v: u64, len: usize| b[off..off + len].copy_from_slice(&v.to_le_bytes()[..len]);
    put(0, 1, 8); // st_dev
    put(8, ino as u64, 8);
    put(16, i.nlink as u64, 8);
    put(24, i.mode as u64, 4);
    put(40, i.rdev as u64, 8);
    put(48, i.size, 8);
    put(56, 4096, 8);
    put(64, i.size.div_ceil(512), 8);
    for (off, t) in [(72, i.atime), (88, i.mtime), (104, i.ctime)] {
        put(off, t / 1_000_000_000, 8);
        put(off + 8, t % 1_000_000_000, 8);
    }
    b
}
