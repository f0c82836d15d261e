//! What `/proc` and `statfs` need of the tree: a symbolic link whose
//! target changes in place (`/proc/self`, which names the calling process:
//! unixd points it at each caller before a path is looked up), and how
//! many inodes are in use.

use super::{heap_copy, mode, Fs, MAX_LINK};
use stet_unix::sys::errno::*;

impl Fs {
    /// Points symbolic link `ino` at `target`, reusing the old target's
    /// heap when it fits (no allocation for a pid's digits).
    pub fn set_link_target(&mut self, ino: u32, target: &[u8]) -> Result<(), i64> {
        if target.is_empty() {
            return Err(ENOENT);
        }
        if target.len() > MAX_LINK {
            return Err(ENAMETOOLONG);
        }
        let i = *self.inode(ino).ok_or(ENOENT)?;
        if i.mode & mode::FMT != mode::LNK {
            return Err(EINVAL);
        }
        let l = self.links.get_mut(i.aux as usize).ok_or(ENOENT)?;
        if l.target.capacity() >= target.len() {
            l.target.clear();
            l.target.extend_from_slice(target);
        } else {
            let t = heap_copy(target, &mut self.bytes, self.limit)?;
            let l = &mut self.links[i.aux as usize];
            self.bytes -= l.target.capacity();
            l.target = t;
        }
        self.inodes[ino as usize].size = target.len() as u64;
        Ok(())
    }

    /// Inodes in use (the root included).
    pub fn inodes_in_use(&self) -> usize {
        self.inodes.iter().skip(1).filter(|i| i.mode != 0).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::ROOT;

    #[test]
    fn a_link_is_pointed_elsewhere_in_place() {
        let mut f = Fs::new(1);
        let a = f.create(ROOT, b"a", mode::DIR | 0o755, 1).unwrap();
        let b = f.create(ROOT, b"bb", mode::DIR | 0o755, 1).unwrap();
        let l = f.symlink(ROOT, b"self", b"a", 1).unwrap();
        assert_eq!(f.resolve(ROOT, b"/self", true), Ok(a));
        let bytes = f.bytes();
        f.set_link_target(l, b"bb").unwrap();
        assert_eq!(f.link_target(l), Some(&b"bb"[..]));
        assert_eq!(f.inode(l).unwrap().size, 2);
        assert_eq!(f.resolve(ROOT, b"/self", true), Ok(b));
        // Shorter again: the same heap.
        let grown = f.bytes();
        assert!(grown >= bytes);
        f.set_link_target(l, b"a").unwrap();
        assert_eq!(f.bytes(), grown);
        assert_eq!(f.resolve(ROOT, b"/self", true), Ok(a));
        assert_eq!(f.set_link_target(l, b""), Err(ENOENT));
        assert_eq!(f.set_link_target(a, b"x"), Err(EINVAL));
        assert_eq!(f.set_link_target(999, b"x"), Err(ENOENT));
        assert_eq!(
            f.set_link_target(l, &[b'x'; MAX_LINK + 1]),
            Err(ENAMETOOLONG)
        );
        // Freed, it gives its heap back as any link.
        f.unlink(ROOT, b"self", 1).unwrap();
        f.free(l);
        assert_eq!(f.link_target(l), None);
    }

    #[test]
    fn inodes_in_use_counts_the_root_and_each_file() {
        let mut f = Fs::new(1);
        assert_eq!(f.inodes_in_use(), 1);
        f.create(ROOT, b"x", mode::REG | 0o644, 1).unwrap();
        f.create(ROOT, b"y", mode::REG | 0o644, 1).unwrap();
        assert_eq!(f.inodes_in_use(), 3);
        let (ino, _) = f.unlink(ROOT, b"x", 1).unwrap();
        f.free(ino);
        assert_eq!(f.inodes_in_use(), 2);
    }
}
