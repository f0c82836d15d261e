//! Extended attributes (`setxattr(2)`, `xattr(7)`): named values kept per
//! inode, beside the file system's own tables. Linux's rules for names,
//! namespaces, sizes and flags are here; unixd adds who may (the file's
//! mode bits, root) before it calls in.
//!
//! A file holds at most [`PER_FILE`] bytes of names and values in all, as
//! an ext4 file system with 4 KiB blocks does (one block of attributes):
//! past it `ENOSPC`. The table grows from unixd's heap (`try_reserve`: a
//! full heap is `ENOSPC` too), so it is sized by memory, not a constant.

use alloc::vec::Vec;
use stet_unix::sys::errno::{E2BIG, EINVAL, ENODATA, ENOSPC, EOPNOTSUPP, EPERM, ERANGE};

pub use stet_unix::proto::xattr::PER_FILE;
/// `setxattr`'s flags.
pub use stet_unix::sys::xattr as flag;
pub use stet_unix::sys::xattr::{NAME_MAX, SIZE_MAX};

/// The namespace a name belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// `user.`: readable and writable by whoever may read and write the
    /// file, on regular files and directories only.
    User,
    /// `trusted.`: the superuser's only (`CAP_SYS_ADMIN`).
    Trusted,
    /// `security.`: for security modules; any writer of the file.
    Security,
}

/// The namespace of `name`, or why it has none: `ERANGE` for an empty or
/// too long name, `EOPNOTSUPP` for an unknown prefix or `system.` (POSIX
/// ACLs, which Stet does not keep), `EINVAL` for a bare prefix ("user.").
pub fn space(name: &[u8]) -> Result<Space, i64> {
    if name.is_empty() || name.len() > NAME_MAX {
        return Err(ERANGE);
    }
    for (prefix, s) in [
        (&b"user."[..], Space::User),
        (b"trusted.", Space::Trusted),
        (b"security.", Space::Security),
    ] {
        if let Some(rest) = name.strip_prefix(prefix) {
            return if rest.is_empty() { Err(EINVAL) } else { Ok(s) };
        }
    }
    Err(EOPNOTSUPP)
}

/// What unixd knows of the caller and the file for [`permit`].
#[derive(Clone, Copy, Debug)]
pub struct Access {
    /// The caller is the superuser.
    pub privileged: bool,
    /// The file is a regular file or a directory.
    pub regular_or_dir: bool,
    /// The mode bits let the caller read (for reads) or write (for writes).
    pub mode_allows: bool,
    /// The file is a sticky directory the caller neither owns nor is
    /// privileged over (Linux keeps others' `user.` attributes there).
    pub foreign_sticky_dir: bool,
}

/// Whether a caller may read (`write` false) or change an attribute of
/// namespace `s`; the errors are Linux's (`xattr_permission`): a
/// `trusted.` attribute is invisible (`ENODATA`) and unchangeable (`EPERM`)
/// to others than the superuser; `user.` attributes exist only on regular
/// files and directories (elsewhere reads find none, writes `EPERM`).
/// `Err(EACCES)` means "the mode bits refuse": the caller maps it.
pub fn permit(s: Space, write: bool, a: Access) -> Result<(), i64> {
    match s {
        Space::Trusted if !a.privileged => Err(if write { EPERM } else { ENODATA }),
        Space::User if !a.regular_or_dir => Err(if write { EPERM } else { ENODATA }),
        Space::User if write && a.foreign_sticky_dir => Err(EPERM),
        _ if a.privileged || a.mode_allows => Ok(()),
        _ => Err(stet_unix::sys::errno::EACCES),
    }
}

#[derive(Clone, Debug)]
struct Attr {
    ino: u32,
    name: Vec<u8>,
    value: Vec<u8>,
}

/// Every extended attribute of the file system.
#[derive(Clone, Debug, Default)]
pub struct Xattrs {
    attrs: Vec<Attr>,
    /// Names and values held, all files together.
    bytes: usize,
}

impl Xattrs {
    /// None.
    pub const fn new() -> Xattrs {
        Xattrs {
            attrs: Vec::new(),
            bytes: 0,
        }
    }

    fn find(&self, ino: u32, name: &[u8]) -> Option<usize> {
        self.attrs
            .iter()
            .position(|a| a.ino == ino && a.name == name)
    }

    fn held(&self, ino: u32) -> usize {
        self.attrs
            .iter()
            .filter(|a| a.ino == ino)
            .map(|a| a.name.len() + 1 + a.value.len())
            .sum()
    }

    /// `getxattr`: the value of `name` of `ino`, copied into `out` (at
    /// most `size` bytes wanted: 0 asks only the length) → its length;
    /// `ENODATA` if there is none, `ERANGE` if `size` is too small.
    pub fn get(&self, ino: u32, name: &[u8], size: usize, out: &mut Vec<u8>) -> Result<usize, i64> {
        let a = &self.attrs[self.find(ino, name).ok_or(ENODATA)?];
        if size == 0 {
            return Ok(a.value.len());
        }
        if size < a.value.len() {
            return Err(ERANGE);
        }
        out.extend_from_slice(&a.value);
        Ok(a.value.len())
    }

    /// `setxattr` of a name already checked by [`space`], with `flags`.
    pub fn set(&mut self, ino: u32, name: &[u8], value: &[u8], flags: u64) -> Result<(), i64> {
        if flags & !(flag::CREATE | flag::REPLACE) != 0 {
            return Err(EINVAL);
        }
        if value.len() > SIZE_MAX {
            return Err(E2BIG);
        }
        let at = self.find(ino, name);
        match at {
            Some(_) if flags & flag::CREATE != 0 => return Err(stet_unix::sys::errno::EEXIST),
            None if flags & flag::REPLACE != 0 => return Err(ENODATA),
            _ => {}
        }
        let old = at.map_or(0, |i| {
            self.attrs[i].name.len() + 1 + self.attrs[i].value.len()
        });
        if self.held(ino) - old + name.len() + 1 + value.len() > PER_FILE {
            return Err(ENOSPC);
        }
        let mut v = Vec::new();
        v.try_reserve_exact(value.len()).map_err(|_| ENOSPC)?;
        v.extend_from_slice(value);
        self.bytes = self.bytes - old + name.len() + 1 + value.len();
        match at {
            Some(i) => self.attrs[i].value = v,
            None => {
                let mut n = Vec::new();
                n.try_reserve_exact(name.len()).map_err(|_| ENOSPC)?;
                n.extend_from_slice(name);
                self.attrs.try_reserve(1).map_err(|_| ENOSPC)?;
                self.attrs.push(Attr {
                    ino,
                    name: n,
                    value: v,
                });
            }
        }
        Ok(())
    }

    /// `removexattr`: `ENODATA` if there is none.
    pub fn remove(&mut self, ino: u32, name: &[u8]) -> Result<(), i64> {
        let i = self.find(ino, name).ok_or(ENODATA)?;
        let a = self.attrs.remove(i);
        self.bytes -= a.name.len() + 1 + a.value.len();
        Ok(())
    }

    /// `listxattr`: the names of `ino` the caller may see (`visible`),
    /// each followed by a NUL, into `out` (at most `size` bytes wanted: 0
    /// asks only the length) → their length; `ERANGE` if too small.
    pub fn list(
        &self,
        ino: u32,
        size: usize,
        visible: impl Fn(Space) -> bool,
        out: &mut Vec<u8>,
    ) -> Result<usize, i64> {
        let visible = &visible;
        let names = || {
            self.attrs
                .iter()
                .filter(move |a| a.ino == ino && space(&a.name).is_ok_and(visible))
        };
        let len: usize = names().map(|a| a.name.len() + 1).sum();
        if size == 0 {
            return Ok(len);
        }
        if size < len {
            return Err(ERANGE);
        }
        for a in names() {
            out.extend_from_slice(&a.name);
            out.push(0);
        }
        Ok(len)
    }

    /// Forgets every attribute of an inode that is being freed (its number
    /// will name another file).
    pub fn forget(&mut self, ino: u32) {
        let gone = self.held(ino);
        self.attrs.retain(|a| a.ino != ino);
        self.bytes -= gone;
    }

    /// Names and values held, all files together.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use stet_unix::sys::errno::{EACCES, EEXIST};

    #[test]
    fn names_and_namespaces() {
        assert_eq!(space(b"user.a"), Ok(Space::User));
        assert_eq!(space(b"trusted.x"), Ok(Space::Trusted));
        assert_eq!(space(b"security.selinux"), Ok(Space::Security));
        assert_eq!(space(b"user."), Err(EINVAL));
        assert_eq!(space(b"system.posix_acl_access"), Err(EOPNOTSUPP));
        assert_eq!(space(b"foo.bar"), Err(EOPNOTSUPP));
        assert_eq!(space(b""), Err(ERANGE));
        let mut long = Vec::from(&b"user."[..]);
        long.resize(256, b'a');
        assert_eq!(space(&long), Err(ERANGE));
        long.truncate(255);
        assert_eq!(space(&long), Ok(Space::User));
    }

    #[test]
    fn set_get_list_remove() {
        let mut x = Xattrs::new();
        let mut out = Vec::new();
        assert_eq!(x.get(5, b"user.a", 10, &mut out), Err(ENODATA));
        x.set(5, b"user.a", b"hello", 0).unwrap();
        x.set(5, b"trusted.t", b"1", 0).unwrap();
        x.set(6, b"user.a", b"other", 0).unwrap();
        assert_eq!(x.get(5, b"user.a", 0, &mut out), Ok(5));
        assert_eq!(x.get(5, b"user.a", 4, &mut out), Err(ERANGE));
        assert_eq!(x.get(5, b"user.a", 5, &mut out), Ok(5));
        assert_eq!(out, b"hello");
        assert_eq!(x.set(5, b"user.a", b"x", flag::CREATE), Err(EEXIST));
        assert_eq!(x.set(5, b"user.b", b"x", flag::REPLACE), Err(ENODATA));
        assert_eq!(x.set(5, b"user.b", b"x", 4), Err(EINVAL));
        x.set(5, b"user.a", b"bye", flag::REPLACE).unwrap();
        out.clear();
        assert_eq!(x.list(5, 0, |_| true, &mut out), Ok(17));
        assert_eq!(x.list(5, 16, |_| true, &mut out), Err(ERANGE));
        assert_eq!(x.list(5, 100, |_| true, &mut out), Ok(17));
        assert_eq!(out, b"user.a\0trusted.t\0");
        out.clear();
        assert_eq!(x.list(5, 100, |s| s != Space::Trusted, &mut out), Ok(7));
        assert_eq!(out, b"user.a\0");
        x.remove(5, b"user.a").unwrap();
        assert_eq!(x.remove(5, b"user.a"), Err(ENODATA));
        x.forget(5);
        assert_eq!(x.list(5, 0, |_| true, &mut out), Ok(0));
        assert_eq!(x.get(6, b"user.a", 0, &mut out), Ok(5));
    }

    #[test]
    fn sizes() {
        let mut x = Xattrs::new();
        let big = alloc::vec![7u8; SIZE_MAX + 1];
        assert_eq!(x.set(1, b"user.a", &big, 0), Err(E2BIG));
        assert_eq!(x.set(1, b"user.a", &big[..PER_FILE], 0), Err(ENOSPC));
        assert_eq!(x.set(1, b"user.a", &big[..PER_FILE - 6], 0), Err(ENOSPC));
        x.set(1, b"user.a", &big[..PER_FILE - 7], 0).unwrap();
        assert_eq!(x.set(1, b"user.b", b"", 0), Err(ENOSPC));
        // Replacing counts the old value out first.
        x.set(1, b"user.a", &big[..PER_FILE - 7], 0).unwrap();
        x.set(1, b"user.a", b"", 0).unwrap();
        x.set(1, b"user.b", b"", 0).unwrap();
    }

    #[test]
    fn permissions() {
        let a = |privileged, regular_or_dir, mode_allows, foreign_sticky_dir| Access {
            privileged,
            regular_or_dir,
            mode_allows,
            foreign_sticky_dir,
        };
        assert_eq!(
            permit(Space::Trusted, false, a(false, true, true, false)),
            Err(ENODATA)
        );
        assert_eq!(
            permit(Space::Trusted, true, a(false, true, true, false)),
            Err(EPERM)
        );
        assert_eq!(
            permit(Space::Trusted, true, a(true, false, false, false)),
            Ok(())
        );
        assert_eq!(
            permit(Space::User, true, a(true, false, true, false)),
            Err(EPERM)
        );
        assert_eq!(
            permit(Space::User, false, a(false, false, true, false)),
            Err(ENODATA)
        );
        assert_eq!(
            permit(Space::User, true, a(false, true, true, true)),
            Err(EPERM)
        );
        assert_eq!(
            permit(Space::User, false, a(false, true, false, false)),
            Err(EACCES)
        );
        assert_eq!(
            permit(Space::Security, true, a(false, false, true, false)),
            Ok(())
        );
    }

    proptest! {
        /// Whatever is set, a file never holds more than PER_FILE bytes, and
        /// what get answers is the last value set.
        #[test]
        fn bounded(ops in proptest::collection::vec((0u32..3, 0u8..4, 0usize..3000, 0u64..4), 0..60)) {
            let mut x = Xattrs::new();
            let mut model: std::collections::BTreeMap<(u32, u8), usize> = Default::default();
            for (ino, n, len, flags) in ops {
                let name = [b'u', b's', b'e', b'r', b'.', b'a' + n];
                let v = alloc::vec![n; len];
                if x.set(ino, &name, &v, flags).is_ok() {
                    model.insert((ino, n), len);
                }
                for i in 0..3 {
                    prop_assert!(x.held(i) <= PER_FILE);
                }
                prop_assert_eq!(x.bytes(), (0..3).map(|i| x.held(i)).sum::<usize>());
            }
            for ((ino, n), len) in model {
                let name = [b'u', b's', b'e', b'r', b'.', b'a' + n];
                let mut out = Vec::new();
                prop_assert_eq!(x.get(ino, &name, SIZE_MAX, &mut out), Ok(len));
                prop_assert!(out.iter().all(|&b| b == n));
            }
        }
    }
}
