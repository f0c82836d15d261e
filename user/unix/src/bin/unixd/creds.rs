//! Users and groups: each process's credentials (`Proc::cred`, copied at
//! `fork`), the `set*id` and group calls (`CRED`), `chown` (`CHOWN`), and
//! the caller's credentials for the file system's checks. The rules are
//! `stet_unix::cred`'s; this file applies them to the process table and
//! the inodes. Also each process's root directory (`chroot`, `Proc::root`,
//! copied at `fork`), which every path it names starts from.

use crate::{word, Reply, Unixd};
use stet_rt::key::Answer;
use stet_unix::cred::{Cred, Which, KEEP, NGROUPS};
use stet_unix::fs::mode;
use stet_unix::proto::{at, cred_op as op};
use stet_unix::sys::errno::*;

impl Unixd<'_> {
    /// The credentials of the caller being served: a process's, or the
    /// superuser's for the system's own domains (the terminal reader, the
    /// clock, the native shell).
    pub(crate) fn caller_cred(&self) -> Cred {
        if self.caller == 0 {
            return Cred::ROOT;
        }
        self.procs
            .iter()
            .find(|p| p.pid == self.caller)
            .map_or(Cred::ROOT, |p| p.cred)
    }

    /// Makes the file system check what follows as the caller.
    pub(crate) fn act_as_caller(&mut self) {
        self.fs.who = self.caller_cred();
        self.fs.root = self
            .procs
            .iter()
            .find(|p| p.pid == self.caller && self.caller != 0)
            .map_or(stet_unix::fs::ROOT, |p| p.root);
    }

    /// `CHROOT`: the caller's root becomes the directory at `path`
    /// relative to fid `base` (privileged callers only: `CAP_SYS_CHROOT`).
    pub(crate) fn chroot(&mut self, base: u64, path: &[u8]) -> Result<Reply, i64> {
        self.act_as_caller();
        // As Linux: the walk's errors, then search permission, then the
        // privilege.
        let dir = self.base(base)?;
        let ino = self.fs.resolve(dir, path, true)?;
        if !self.fs.is_dir(ino) {
            return Err(ENOTDIR);
        }
        let i = *self.fs.inode(ino).ok_or(ENOENT)?;
        self.fs.who.check(i.owner(), stet_unix::cred::want::X)?;
        if !self.fs.who.capable(stet_unix::cred::cap::SYS_CHROOT) {
            return Err(EPERM);
        }
        let me = self.proc_of(self.caller)?;
        self.procs[me].root = ino;
        word(Ok(0))
    }

    /// `CRED`: the caller's ids, read or changed.
    pub(crate) fn cred_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let i = self.proc_of(a.label)?;
        let w = a.w;
        let (lo, hi) = (w[1] as u32, (w[1] >> 32) as u32);
        let c = &mut self.procs[i].cred;
        let (r, which) = match w[0] {
            op::GET_UIDS => (Ok(0), Which::User),
            op::GET_GIDS => (Ok(0), Which::Group),
            op::SETUID => (c.set_id(Which::User, lo).map(|_| 0), Which::User),
            op::SETGID => (c.set_id(Which::Group, lo).map(|_| 0), Which::Group),
            op::SETREUID => (c.set_re(Which::User, lo, hi).map(|_| 0), Which::User),
            op::SETREGID => (c.set_re(Which::Group, lo, hi).map(|_| 0), Which::Group),
            op::SETRESUID => (
                c.set_res(Which::User, lo, hi, w[2] as u32).map(|_| 0),
                Which::User,
            ),
            op::SETRESGID => (
                c.set_res(Which::Group, lo, hi, w[2] as u32).map(|_| 0),
                Which::Group,
            ),
            op::SETFSUID => (Ok(c.set_fs(Which::User, lo) as u64), Which::User),
            op::SETFSGID => (Ok(c.set_fs(Which::Group, lo) as u64), Which::Group),
            op::GETGROUPS => {
                let g = c.groups();
                for (k, id) in g.iter().enumerate() {
                    out[k * 4..k * 4 + 4].copy_from_slice(&id.to_le_bytes());
                }
                return Ok(Reply::Now([g.len() as u64, 0, 0], g.len() * 4, false));
            }
            op::SETGROUPS => {
                if !s.len().is_multiple_of(4) || s.len() > NGROUPS * 4 {
                    return word(Err(EINVAL));
                }
                let mut g = [0u32; NGROUPS];
                for (k, b) in s.chunks_exact(4).enumerate() {
                    g[k] = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                }
                return word(c.set_groups(&g[..s.len() / 4]).map(|_| 0));
            }
            op::EXEC => {
                let mut o = self.fs.inode(w[1] as u32).ok_or(ENOENT)?.owner();
                if w[2] & 1 != 0 {
                    // `PR_SET_NO_NEW_PRIVS`: no set-id bits.
                    o.mode &= !0o6000;
                }
                let c = &mut self.procs[i].cred;
                let secure = c.exec(o);
                let u = c.pack(Which::User)[0];
                let g = c.pack(Which::Group)[0];
                return Ok(Reply::Now([secure as u64, u, g], 0, false));
            }
            _ => (Err(EINVAL), Which::User),
        };
        let p = self.procs[i].cred.pack(which);
        Ok(Reply::Now([stet_unix::sys::ret(r), p[0], p[1]], 0, false))
    }

    /// `CAPS`: the capability sets, read or changed.
    pub(crate) fn caps_order(&mut self, a: &Answer) -> Result<Reply, i64> {
        use stet_unix::cred::cap;
        use stet_unix::proto::caps_op as c;
        let i = self.proc_of(a.label)?;
        let w = a.w;
        match w[0] {
            c::GET => {
                let pid = w[1];
                let p = if pid == 0 {
                    &self.procs[i]
                } else {
                    self.procs
                        .iter()
                        .find(|p| p.pid as u64 == pid)
                        .ok_or(ESRCH)?
                };
                let k = p.cred.caps;
                Ok(Reply::Now(
                    [k.effective, k.permitted, k.inheritable],
                    0,
                    false,
                ))
            }
            c::SET => word(self.procs[i].cred.caps.set(w[1], w[2], w[3]).map(|_| 0)),
            c::BSET_READ if w[1] > cap::LAST as u64 => word(Err(EINVAL)),
            c::BSET_READ => word(Ok(self.procs[i].cred.caps.bounding >> w[1] & 1)),
            c::BSET_DROP if w[1] > cap::LAST as u64 => word(Err(EINVAL)),
            c::BSET_DROP => {
                let cr = &mut self.procs[i].cred;
                if !cr.capable(cap::SETPCAP) {
                    return word(Err(EPERM));
                }
                cr.caps.bounding &= !(1 << w[1]);
                word(Ok(0))
            }
            _ => word(Err(EINVAL)),
        }
    }

    /// `CHOWN`: a file's owner and group, by `Cred::chown`'s rules.
    pub(crate) fn chown(&mut self, a: &Answer, s: &[u8]) -> Result<u64, i64> {
        let ino = if s.is_empty() {
            let f = self.fid(a.w[0])?;
            self.inode_of(f).ok_or(EPERM)?
        } else {
            let follow = a.w[2] & at::SYMLINK_NOFOLLOW == 0;
            self.fs.resolve(self.base(a.w[0])?, s, follow)?
        };
        let (uid, gid) = (a.w[1] as u32, (a.w[1] >> 32) as u32);
        let now = self.time();
        let who = self.caller_cred();
        let i = self.fs.inode_mut(ino).ok_or(ENOENT)?;
        let o = who.chown(i.owner(), uid, gid)?;
        if uid != KEEP || gid != KEEP || i.mode & mode::FMT != mode::DIR {
            i.uid = o.uid;
            i.gid = o.gid;
            i.mode = o.mode;
            i.ctime = now;
        }
        self.inotify_inode(ino, stet_unixfs::inotify::mask::ATTRIB);
        Ok(0)
    }
}
