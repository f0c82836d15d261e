//! `memfd_create`'s files (`proto::MEMFD_CREATE`): nameless regular files
//! as `MEMFD`'s for shared anonymous memory, owned by the caller with mode
//! 0777 as Linux's, and their seals (`proto::SEALS`: `F_ADD_SEALS`,
//! `F_GET_SEALS`). A file made without `MFD_ALLOW_SEALING` starts sealed
//! with `F_SEAL_SEAL` (no more seals); other files have no seals to get or
//! add (`EINVAL`). The seals bind every writer: `write`/`pwrite` under
//! `F_SEAL_WRITE` or `F_SEAL_FUTURE_WRITE` and a write past the end under
//! `F_SEAL_GROW` are `EPERM` (`io`), so is a truncation under
//! `F_SEAL_SHRINK`/`F_SEAL_GROW` (`files`) and a shared writable mapping
//! under a write seal (the keeper asks before it maps).
//!
//! The seals are kept by inode in a table that grows with the files
//! (`Unixd::seals`) and loses a file's entry when the file is freed.

use crate::{word, Reply, Unixd};
use stet_rt::key::Answer;
use stet_unix::proto as p;
use stet_unix::proto::o;
use stet_unix::sys::errno::*;

/// `F_SEAL_SEAL`: no more seals.
pub(crate) const SEAL_SEAL: u32 = 1;
/// `F_SEAL_SHRINK`.
pub(crate) const SEAL_SHRINK: u32 = 2;
/// `F_SEAL_GROW`.
pub(crate) const SEAL_GROW: u32 = 4;
/// `F_SEAL_WRITE`.
pub(crate) const SEAL_WRITE: u32 = 8;
/// `F_SEAL_FUTURE_WRITE`.
pub(crate) const SEAL_FUTURE_WRITE: u32 = 0x10;
/// Every seal Linux knows.
const SEALS: u32 = 0x1f;
/// `MFD_ALLOW_SEALING`.
const ALLOW_SEALING: u64 = 2;

impl Unixd<'_> {
    /// The seals of inode `ino` (0 for a file that is not a memfd).
    pub(crate) fn seals_of(&self, ino: u32) -> u32 {
        self.seals
            .iter()
            .find(|&&(i, _)| i == ino)
            .map_or(0, |&(_, s)| s)
    }

    /// Forgets the seals of a freed inode.
    pub(crate) fn seals_gone(&mut self, ino: u32) {
        self.seals.retain(|&(i, _)| i != ino);
    }

    /// `MEMFD_CREATE` and `SEALS`.
    pub(crate) fn memfd_order(&mut self, a: &Answer) -> Result<Reply, i64> {
        let w = a.w;
        match a.code {
            p::MEMFD_CREATE => {
                self.seals.try_reserve(1).map_err(|_| ENOMEM)?;
                let fid = self.memfd(0)?;
                let f = self.fid(fid)?;
                let ino = self.inode_of(f).ok_or(EIO)?;
                // The caller's file-system ids own it (no directory's group).
                let none = stet_unix::cred::Owner {
                    uid: 0,
                    gid: 0,
                    mode: 0,
                };
                let own = self
                    .caller_cred()
                    .new_inode(none, stet_unix::fs::mode::REG | 0o777);
                if let Some(i) = self.fs.inode_mut(ino) {
                    i.mode = own.mode;
                    i.uid = own.uid;
                    i.gid = own.gid;
                }
                let first = if w[0] & ALLOW_SEALING != 0 {
                    0
                } else {
                    SEAL_SEAL
                };
                self.seals.push((ino, first));
                word(Ok(fid))
            }
            p::SEALS => {
                let f = self.fid(w[0])?;
                let ino = self.inode_of(f).ok_or(EINVAL)?;
                let at = self
                    .seals
                    .iter()
                    .position(|&(i, _)| i == ino)
                    .ok_or(EINVAL)?;
                let now = self.seals[at].1;
                if w[1] == 0 {
                    return word(Ok(now as u64));
                }
                let add = w[2] as u32 as u64;
                if add & !(SEALS as u64) != 0 {
                    return Err(EINVAL);
                }
                // Sealing needs a descriptor open for writing.
                if self.open[f].flags & o::ACCMODE == o::RDONLY {
                    return Err(EPERM);
                }
                if now & SEAL_SEAL != 0 {
                    return Err(EPERM);
                }
                self.seals[at].1 = now | add as u32;
                word(Ok(0))
            }
            _ => Err(ENOSYS),
        }
    }
}
