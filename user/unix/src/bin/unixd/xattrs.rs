//! Extended attributes (`XATTR`): the `*xattr` calls on a file named by
//! path or by open file. The names, namespaces, sizes and flags are
//! `stet_unixfs::xattrs`'; this file finds the inode and decides whether
//! the caller may read or change it (the mode bits, the superuser).

use crate::open::Kind;
use crate::{Reply, Unixd};
use alloc::vec::Vec;
use stet_rt::key::Answer;
use stet_unix::cred::want;
use stet_unix::fs::mode;
use stet_unix::proto::{at, xattr as op};
use stet_unix::sys::errno::*;
use stet_unixfs::xattrs::{self, permit, Access, Space};

impl Unixd<'_> {
    /// `XATTR`: see `proto::XATTR` for the words and the string.
    pub(crate) fn xattr(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let w = a.w;
        let what = w[1] & op::WHAT;
        // `name\0path\0value`, or by file `name\0value`.
        let by_fid = w[1] & op::BY_FID != 0;
        let mut parts = s.splitn(if by_fid { 2 } else { 3 }, |&b| b == 0);
        let name = parts.next().unwrap_or(&[]);
        let path = if by_fid {
            &[][..]
        } else {
            parts.next().unwrap_or(&[])
        };
        let value = parts.next().unwrap_or(&[]);
        // The file: an open file's inode, or a path's. Open files that are
        // no inode (pipes, the terminal, /dev/null) have no attributes and
        // take none, as Linux's special files.
        let ino = if by_fid {
            let f = self.fid(w[0])?;
            match self.open[f].kind {
                Kind::Inode(i) => Some(i),
                _ => None,
            }
        } else {
            let dir = self.base(w[0])?;
            Some(
                self.fs
                    .resolve(dir, path, w[1] & at::SYMLINK_NOFOLLOW == 0)?,
            )
        };
        let who = self.fs.who;
        let access = |write: bool| -> Access {
            let Some(i) = ino.and_then(|i| self.fs.inode(i)) else {
                return Access {
                    privileged: who.capable(stet_unix::cred::cap::SYS_ADMIN),
                    regular_or_dir: false,
                    mode_allows: true,
                    foreign_sticky_dir: false,
                };
            };
            let fmt = i.mode & mode::FMT;
            Access {
                privileged: who.capable(stet_unix::cred::cap::SYS_ADMIN),
                regular_or_dir: fmt == mode::REG || fmt == mode::DIR,
                mode_allows: who.may(i.owner(), if write { want::W } else { want::R }),
                foreign_sticky_dir: fmt == mode::DIR
                    && i.mode & 0o1000 != 0
                    && !who.owns(i.owner()),
            }
        };
        match what {
            op::LIST => {
                let size = w[2] as usize;
                let Some(ino) = ino else {
                    return Ok(Reply::Now([0, 0, 0], 0, false));
                };
                let privileged = who.capable(stet_unix::cred::cap::SYS_ADMIN);
                let mut v = Vec::new();
                let n = self.fs.xattrs.list(
                    ino,
                    size.min(out.len()),
                    |sp| sp != Space::Trusted || privileged,
                    &mut v,
                );
                // A file's names fit a message (`PER_FILE` is 4096).
                let n = n?;
                out[..v.len()].copy_from_slice(&v);
                Ok(Reply::Now([n as u64, 0, 0], v.len(), false))
            }
            op::GET | op::SET | op::REMOVE => {
                let sp = xattrs::space(name)?;
                let write = what != op::GET;
                permit(sp, write, access(write))?;
                let Some(ino) = ino else {
                    return Err(if write { EPERM } else { ENODATA });
                };
                match what {
                    op::GET => {
                        let mut v = Vec::new();
                        let n = self.fs.xattrs.get(
                            ino,
                            name,
                            (w[2] as usize).min(out.len()),
                            &mut v,
                        )?;
                        out[..v.len()].copy_from_slice(&v);
                        Ok(Reply::Now([n as u64, 0, 0], v.len(), false))
                    }
                    op::SET => {
                        self.fs.set_xattr(ino, name, value, w[2])?;
                        self.xattr_changed(ino);
                        Ok(Reply::Now([0, 0, 0], 0, false))
                    }
                    _ => {
                        self.fs.xattrs.remove(ino, name)?;
                        self.xattr_changed(ino);
                        Ok(Reply::Now([0, 0, 0], 0, false))
                    }
                }
            }
            _ => Err(EINVAL),
        }
    }

    /// A change of attributes is a change of the inode (`ctime`).
    fn xattr_changed(&mut self, ino: u32) {
        let now = self.time();
        if let Some(i) = self.fs.inode_mut(ino) {
            i.ctime = now;
        }
    }
}
