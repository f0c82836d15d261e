//! Users and groups as the process sees them: the id calls, `set*id`,
//! the supplementary groups and `chown`. unixd holds the credentials that
//! count (it checks paths and signals with them: `stet_unix::cred` has the
//! rules); the keeper keeps a copy (`Keeper::cred`) for the calls it
//! answers itself, and for the kernel's answers (`answers`), which it
//! takes back whenever an id changes so that the next ones carry the new
//! ids.

use crate::fds::{result, ux};
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::key::Msg;
use stet_unix::cred::{Cred, Which, EFF, NGROUPS, REAL, SAVED};
use stet_unix::proto::{self, cred_op as op};
use stet_unix::sys::errno::*;
use stet_unix::sys::nr;

type R = Result<u64, i64>;

impl Keeper {
    /// The id calls: `n` with arguments `a`, or `None` if `n` is not one.
    pub fn id_call(&mut self, n: u64, a: &[u64; 6]) -> Option<R> {
        let c = &self.cred;
        let id = |v: u32| Ok(v as u64);
        let r = match n {
            nr::GETUID => id(c.uid[REAL]),
            nr::GETEUID => id(c.uid[EFF]),
            nr::GETGID => id(c.gid[REAL]),
            nr::GETEGID => id(c.gid[EFF]),
            nr::GETRESUID => self.getres(Which::User, a),
            nr::GETRESGID => self.getres(Which::Group, a),
            nr::SETUID => self.set(op::SETUID, Which::User, a[0], 0),
            nr::SETGID => self.set(op::SETGID, Which::Group, a[0], 0),
            nr::SETREUID => self.set(op::SETREUID, Which::User, pair(a[0], a[1]), 0),
            nr::SETREGID => self.set(op::SETREGID, Which::Group, pair(a[0], a[1]), 0),
            nr::SETRESUID => self.set(
                op::SETRESUID,
                Which::User,
                pair(a[0], a[1]),
                a[2] as u32 as u64,
            ),
            nr::SETRESGID => self.set(
                op::SETRESGID,
                Which::Group,
                pair(a[0], a[1]),
                a[2] as u32 as u64,
            ),
            nr::SETFSUID => self.set_fs(op::SETFSUID, Which::User, a[0]),
            nr::SETFSGID => self.set_fs(op::SETFSGID, Which::Group, a[0]),
            nr::GETGROUPS => self.getgroups(a[0], a[1]),
            nr::SETGROUPS => self.setgroups(a[0], a[1]),
            _ => return None,
        };
        if matches!(n, nr::GETUID | nr::GETEUID | nr::GETGID | nr::GETEGID) {
            self.leave_answers();
        }
        Some(r)
    }

    /// `getresuid`/`getresgid(r, e, s)`: three `u32`s.
    fn getres(&mut self, w: Which, a: &[u64; 6]) -> R {
        let ids = match w {
            Which::User => self.cred.uid,
            Which::Group => self.cred.gid,
        };
        for (at, v) in [(a[0], ids[REAL]), (a[1], ids[EFF]), (a[2], ids[SAVED])] {
            self.space
                .write(at, &v.to_le_bytes())
                .map_err(Touch::errno)?;
        }
        Ok(0)
    }

    /// A `set*id` call through unixd; the copy follows its answer.
    fn set(&mut self, what: u64, w: Which, w1: u64, w2: u64) -> R {
        // An id is a C `uid_t`: the register's upper half is not part of it.
        let w1 = if matches!(what, op::SETUID | op::SETGID) {
            w1 as u32 as u64
        } else {
            w1
        };
        let (r, a) = ux(proto::CRED, [what, w1, w2, 0], &[]);
        if a.ok() {
            self.took(w, [a.w[1], a.w[2]]);
        }
        r
    }

    fn set_fs(&mut self, what: u64, w: Which, id: u64) -> R {
        let (r, a) = ux(proto::CRED, [what, id as u32 as u64, 0, 0], &[]);
        if a.ok() {
            self.took(w, [a.w[1], a.w[2]]);
        }
        r
    }

    /// The ids unixd answered: the copy, and the kernel's answers if the
    /// ids they give changed (taken back: the next are left with the new).
    fn took(&mut self, w: Which, p: [u64; 2]) {
        let before = self.cred;
        self.cred.unpack(w, p);
        if before.uid[..2] != self.cred.uid[..2] || before.gid[..2] != self.cred.gid[..2] {
            self.collect_enosys();
        }
        if before.uid != self.cred.uid {
            // The capabilities follow the user ids (unixd's rules).
            self.sync_caps();
        }
    }

    /// `execve` of inode `ino` has begun the new program: its set-id
    /// bits apply (in unixd) → `AT_SECURE`.
    pub fn exec_ids(&mut self, ino: u64) -> bool {
        let nnp = self.no_new_privs as u64;
        let (r, a) = ux(proto::CRED, [op::EXEC, ino, nnp, 0], &[]);
        if r.is_err() || !a.ok() {
            return false;
        }
        // Real and effective; the saved and file-system ids are the
        // effective ones.
        for (w, v) in [(Which::User, a.w[1]), (Which::Group, a.w[2])] {
            let eff = v >> 32;
            self.cred.unpack(w, [v, eff | eff << 32]);
        }
        self.sync_caps();
        a.w[0] == 1
    }

    /// `getgroups(size, list)`.
    fn getgroups(&mut self, size: u64, list: u64) -> R {
        let size = size as u32 as i32;
        if size < 0 {
            return Err(EINVAL);
        }
        let mut b = [0u8; NGROUPS * 4];
        let a = Msg::new(UNIXD, proto::CRED)
            .words([op::GETGROUPS, 0, 0, 0])
            .call_into(&mut b);
        let n = result(&a).unwrap_or(Err(EIO))? as usize;
        if size == 0 {
            return Ok(n as u64);
        }
        if (size as usize) < n {
            return Err(EINVAL);
        }
        self.space
            .write(list, b.get(..n * 4).ok_or(EIO)?)
            .map_err(Touch::errno)?;
        Ok(n as u64)
    }

    /// `setgroups(size, list)`.
    fn setgroups(&mut self, size: u64, list: u64) -> R {
        let size = size as u32 as i32;
        if size < 0 || size as usize > NGROUPS {
            return Err(EINVAL);
        }
        let mut b = [0u8; NGROUPS * 4];
        let n = size as usize * 4;
        self.space.read(list, &mut b[..n]).map_err(Touch::errno)?;
        let (r, _) = ux(proto::CRED, [op::SETGROUPS, 0, 0, 0], &b[..n]);
        r
    }

    /// `fchownat(dirfd, path, owner, group, flags)`; `fchown(fd)` when
    /// `path` is `None`.
    pub fn chown(&mut self, dirfd: u64, path: Option<u64>, uid: u64, gid: u64, flags: u64) -> R {
        let ids = uid as u32 as u64 | (gid as u32 as u64) << 32;
        match path {
            None => {
                let fid = self.fid(dirfd)?;
                ux(proto::CHOWN, [fid, ids, 0, 0], &[]).0
            }
            Some(p) => {
                if flags & !(proto::at::SYMLINK_NOFOLLOW | proto::at::EMPTY_PATH) != 0 {
                    return Err(EINVAL);
                }
                self.chown_path(dirfd, p, ids, flags)
            }
        }
    }
}

/// Two ids in one word, as `CRED` takes them.
fn pair(a: u64, b: u64) -> u64 {
    a as u32 as u64 | (b as u32 as u64) << 32
}

/// The credentials a new first process starts with: the superuser's.
pub const FIRST: Cred = Cred::ROOT;
