//! Users and groups: a process's credentials and Linux's rules for them —
//! who may read, write or search a file, who may change its owner, mode or
//! times, remove a name from a directory, signal a process, and how the
//! `set*id` calls and a set-user-ID `execve` change the ids.
//!
//! Privilege is Linux's capability sets ([`Caps`]: effective, permitted,
//! inheritable and the bounding set), as on a Linux system without file
//! capabilities: a process of user 0 starts with them all, `capset` drops
//! some, the `set*id` calls change them as Linux's `cap_emulate_setxuid`
//! does (leaving user 0 clears the effective set, leaving it in all three
//! ids the permitted one; `setfsuid` moves the file-system capabilities),
//! and `execve` gives a program of user 0 the bounding set. Each check asks
//! for the one capability Linux asks for ([`Cred::capable`]); file access
//! asks the file-system ids (`fsuid`, `fsgid`), which follow the effective
//! ones unless `setfsuid` moved them.
//! unixd keeps each process's [`Cred`] (it is the one that checks paths and
//! signals); the keeper keeps a copy for the calls it answers itself.

use crate::fs::mode;
use crate::sys::errno::{EACCES, EINVAL, EPERM};

/// Supplementary groups a process may have: musl's `NGROUPS_MAX` (Linux
/// allows 65,536; a longer `setgroups` list is `EINVAL`, as past Linux's).
pub const NGROUPS: usize = 32;

/// "No change" in `setreuid`/`setresuid`/`chown`: `(uid_t)-1`.
pub const KEEP: u32 = u32::MAX;

/// Read, write and execute (search) requests, as `access`'s mode bits.
pub mod want {
    /// Read.
    pub const R: u32 = 4;
    /// Write.
    pub const W: u32 = 2;
    /// Execute, or search a directory.
    pub const X: u32 = 1;
}

/// Linux's capability numbers (capabilities(7)).
#[allow(missing_docs)]
pub mod cap {
    pub const CHOWN: u32 = 0;
    pub const DAC_OVERRIDE: u32 = 1;
    pub const DAC_READ_SEARCH: u32 = 2;
    pub const FOWNER: u32 = 3;
    pub const FSETID: u32 = 4;
    pub const KILL: u32 = 5;
    pub const SETGID: u32 = 6;
    pub const SETUID: u32 = 7;
    pub const SETPCAP: u32 = 8;
    pub const LINUX_IMMUTABLE: u32 = 9;
    pub const NET_RAW: u32 = 13;
    pub const IPC_LOCK: u32 = 14;
    pub const IPC_OWNER: u32 = 15;
    pub const SYS_CHROOT: u32 = 18;
    pub const SYS_PTRACE: u32 = 19;
    pub const SYS_ADMIN: u32 = 21;
    pub const SYS_BOOT: u32 = 22;
    pub const SYS_NICE: u32 = 23;
    pub const SYS_RESOURCE: u32 = 24;
    pub const SYS_TIME: u32 = 25;
    pub const SYS_TTY_CONFIG: u32 = 26;
    pub const MKNOD: u32 = 27;
    pub const MAC_OVERRIDE: u32 = 32;
    pub const SYSLOG: u32 = 34;
    pub const WAKE_ALARM: u32 = 35;
    /// `CAP_LAST_CAP` of Linux 6.1 (`CAP_CHECKPOINT_RESTORE`).
    pub const LAST: u32 = 40;
    /// Every capability.
    pub const ALL: u64 = (1 << (LAST + 1)) - 1;
    /// The file-system capabilities, which follow `fsuid` (Linux's
    /// `CAP_FS_MASK`).
    pub const FS_MASK: u64 = 1 << CHOWN
        | 1 << DAC_OVERRIDE
        | 1 << DAC_READ_SEARCH
        | 1 << FOWNER
        | 1 << FSETID
        | 1 << LINUX_IMMUTABLE
        | 1 << MKNOD
        | 1 << MAC_OVERRIDE;
}

/// A process's capability sets (bit `n` is capability `n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// What its checks see.
    pub effective: u64,
    /// What it may make effective.
    pub permitted: u64,
    /// What an `execve` may pass on (with file capabilities, which Stet's
    /// files do not have: kept, never used).
    pub inheritable: u64,
    /// What an `execve` by user 0 gives at most (`PR_CAPBSET_DROP`).
    pub bounding: u64,
}

impl Caps {
    /// Every capability (user 0's).
    pub const ALL: Caps = Caps {
        effective: cap::ALL,
        permitted: cap::ALL,
        inheritable: 0,
        bounding: cap::ALL,
    };
    /// None (any other user's), the bounding set full.
    pub const NONE: Caps = Caps {
        effective: 0,
        permitted: 0,
        inheritable: 0,
        bounding: cap::ALL,
    };

    /// `capset`'s rules (Linux's `cap_capset`): the new inheritable set
    /// within the old inheritable and permitted ones (unless
    /// `CAP_SETPCAP` is effective) and within the old inheritable and the
    /// bounding set; the new permitted within the old; the new effective
    /// within the new permitted (`EPERM`).
    pub fn set(&mut self, effective: u64, permitted: u64, inheritable: u64) -> Result<(), i64> {
        let (e, p, i) = (
            effective & cap::ALL,
            permitted & cap::ALL,
            inheritable & cap::ALL,
        );
        let sub = |a: u64, b: u64| a & !b == 0;
        if self.effective & 1 << cap::SETPCAP == 0 && !sub(i, self.inheritable | self.permitted) {
            return Err(EPERM);
        }
        if !sub(i, self.inheritable | self.bounding) || !sub(p, self.permitted) || !sub(e, p) {
            return Err(EPERM);
        }
        self.effective = e;
        self.permitted = p;
        self.inheritable = i;
        Ok(())
    }
}

/// A process's user and group ids and capabilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cred {
    /// Real, effective, saved and file-system user ids.
    pub uid: [u32; 4],
    /// Real, effective, saved and file-system group ids.
    pub gid: [u32; 4],
    /// Supplementary groups in use (`groups[..ngroups]`).
    pub ngroups: u32,
    /// Supplementary groups.
    pub groups: [u32; NGROUPS],
    /// Capabilities.
    pub caps: Caps,
}

/// Indices into [`Cred::uid`] and [`Cred::gid`].
pub const REAL: usize = 0;
/// The effective id.
pub const EFF: usize = 1;
/// The saved set-user-ID (set-group-ID).
pub const SAVED: usize = 2;
/// The file-system id.
pub const FS: usize = 3;

/// What `setuid`, `setreuid`, … change: the user ids or the group ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// The user ids (`CAP_SETUID` decides).
    User,
    /// The group ids (`CAP_SETGID` decides).
    Group,
}

/// An inode's owner and mode, as the rules need them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Type and permission bits.
    pub mode: u32,
}

impl Cred {
    /// The superuser, with no supplementary groups.
    pub const ROOT: Cred = Cred::user(0, 0);

    /// A process of user `uid` and group `gid` (every id that), without
    /// supplementary groups; every capability for user 0, none for
    /// another.
    pub const fn user(uid: u32, gid: u32) -> Cred {
        Cred {
            uid: [uid; 4],
            gid: [gid; 4],
            ngroups: 0,
            groups: [0; NGROUPS],
            caps: if uid == 0 { Caps::ALL } else { Caps::NONE },
        }
    }

    /// Whether capability `c` (of [`cap`]) is effective (Linux's
    /// `capable`).
    pub fn capable(&self, c: u32) -> bool {
        c <= cap::LAST && self.caps.effective & 1 << c != 0
    }

    /// The capability sets after the user ids went from `old` to what
    /// they are (Linux's `cap_emulate_setxuid`, and for `setfsuid` its
    /// file-system mask): leaving user 0 in the real, effective and saved
    /// ids clears the permitted and effective sets; the effective id
    /// leaving 0 clears the effective set, coming to 0 makes it the
    /// permitted one.
    pub fn fix_caps(&mut self, old: [u32; 4], fs_only: bool) {
        let new = self.uid;
        let c = &mut self.caps;
        if fs_only {
            if old[FS] == 0 && new[FS] != 0 {
                c.effective &= !cap::FS_MASK;
            } else if old[FS] != 0 && new[FS] == 0 {
                c.effective |= c.permitted & cap::FS_MASK;
            }
            return;
        }
        let root = |u: [u32; 4]| u[REAL] == 0 || u[EFF] == 0 || u[SAVED] == 0;
        if root(old) && !root(new) {
            c.permitted = 0;
            c.effective = 0;
        }
        if old[EFF] == 0 && new[EFF] != 0 {
            c.effective = 0;
        }
        if old[EFF] != 0 && new[EFF] == 0 {
            c.effective = c.permitted;
        }
    }

    /// The capability sets a new program gets (Linux without file
    /// capabilities): a real or effective user 0 is permitted the
    /// bounding and inheritable sets, effective when the effective user
    /// is 0; anyone else gets none.
    pub fn exec_caps(&mut self) {
        let c = &mut self.caps;
        if self.uid[REAL] == 0 || self.uid[EFF] == 0 {
            c.permitted = c.bounding | c.inheritable;
            c.effective = if self.uid[EFF] == 0 { c.permitted } else { 0 };
        } else {
            c.permitted = 0;
            c.effective = 0;
        }
    }

    /// The supplementary groups.
    pub fn groups(&self) -> &[u32] {
        &self.groups[..(self.ngroups as usize).min(NGROUPS)]
    }

    /// Whether `gid` is the file-system group or a supplementary one
    /// (Linux's `in_group_p`).
    pub fn in_group(&self, gid: u32) -> bool {
        self.gid[FS] == gid || self.groups().contains(&gid)
    }

    /// The same process as `access(2)` sees it: real ids for file access
    /// (and, unless the real user is root, no capabilities; a real root
    /// has its permitted ones).
    pub fn as_real(&self) -> Cred {
        let mut c = *self;
        c.uid[FS] = c.uid[REAL];
        c.gid[FS] = c.gid[REAL];
        if c.uid[REAL] != 0 {
            c.caps.effective = 0;
        } else {
            c.caps.effective = c.caps.permitted;
        }
        c
    }

    /// Whether it may access a file of `o` for `w` (bits of [`want`]):
    /// the owner's, group's or others' bits, whichever class it is in;
    /// with `CAP_DAC_OVERRIDE` it may read and write anything, search any
    /// directory, and execute a file with any execute bit; with
    /// `CAP_DAC_READ_SEARCH` read any file and read and search any
    /// directory.
    pub fn may(&self, o: Owner, w: u32) -> bool {
        let dir = o.mode & mode::FMT == mode::DIR;
        if self.capable(cap::DAC_OVERRIDE) && (w & want::X == 0 || dir || o.mode & 0o111 != 0) {
            return true;
        }
        let bits = if self.uid[FS] == o.uid {
            o.mode >> 6
        } else if self.in_group(o.gid) {
            o.mode >> 3
        } else {
            o.mode
        } & 7;
        bits & w == w
            || self.capable(cap::DAC_READ_SEARCH) && (w == want::R || dir && w & want::W == 0)
    }

    /// [`Cred::may`] as a result: `EACCES` when not.
    pub fn check(&self, o: Owner, w: u32) -> Result<(), i64> {
        if self.may(o, w) {
            Ok(())
        } else {
            Err(EACCES)
        }
    }

    /// Whether it owns `o` or is privileged (Linux's
    /// `inode_owner_or_capable`).
    pub fn owns(&self, o: Owner) -> bool {
        self.capable(cap::FOWNER) || self.uid[FS] == o.uid
    }

    /// May it remove (or rename away) the name of `victim` from directory
    /// `dir`? Write and search on the directory (`EACCES`), and in a
    /// sticky directory (`/tmp`) only the file's owner, the directory's
    /// owner or the superuser (`EPERM`).
    pub fn may_delete(&self, dir: Owner, victim: Owner) -> Result<(), i64> {
        self.check(dir, want::W | want::X)?;
        if dir.mode & mode::VTX != 0
            && !self.capable(cap::FOWNER)
            && self.uid[FS] != victim.uid
            && self.uid[FS] != dir.uid
        {
            return Err(EPERM);
        }
        Ok(())
    }

    /// The owner, group and mode of a new inode of mode `m` (type and
    /// permission bits, the umask already applied) in directory `dir`:
    /// the file-system ids, or the directory's group when it is
    /// set-group-ID (a new directory inherits the bit; a new file keeps
    /// its set-group-ID bit only if its maker is in that group).
    pub fn new_inode(&self, dir: Owner, m: u32) -> Owner {
        let mut o = Owner {
            uid: self.uid[FS],
            gid: self.gid[FS],
            mode: m,
        };
        if dir.mode & mode::SGID != 0 {
            o.gid = dir.gid;
            if m & mode::FMT == mode::DIR {
                o.mode |= mode::SGID;
            } else if m & (mode::SGID | 0o010) == mode::SGID | 0o010
                && !self.in_group(o.gid)
                && !self.capable(cap::FSETID)
            {
                o.mode &= !mode::SGID;
            }
        }
        o
    }

    /// `chmod`: the owner or the superuser may (`EPERM`); a caller
    /// outside the file's group loses the set-group-ID bit it asked for.
    /// → the new mode.
    pub fn chmod(&self, o: Owner, perm: u32) -> Result<u32, i64> {
        if !self.owns(o) {
            return Err(EPERM);
        }
        let mut p = perm & 0o7777;
        if !self.capable(cap::FSETID) && !self.in_group(o.gid) {
            p &= !mode::SGID;
        }
        Ok((o.mode & mode::FMT) | p)
    }

    /// `chown(uid, gid)` ([`KEEP`]: unchanged): only the superuser gives a
    /// file away; its owner may change its group to one it is in
    /// (`EPERM`). → the new owner, group and mode: a non-directory loses
    /// its set-user-ID bit, and its set-group-ID bit when group-executable
    /// (as Linux does on every `chown`, privileged or not).
    pub fn chown(&self, o: Owner, uid: u32, gid: u32) -> Result<Owner, i64> {
        let priv_ = self.capable(cap::CHOWN);
        if uid != KEEP && uid != o.uid && !priv_ {
            return Err(EPERM);
        }
        if uid != KEEP && uid == o.uid && !priv_ && self.uid[FS] != o.uid {
            return Err(EPERM);
        }
        if gid != KEEP && !priv_ && (self.uid[FS] != o.uid || !(gid == o.gid || self.in_group(gid)))
        {
            return Err(EPERM);
        }
        let mut n = o;
        if uid != KEEP {
            n.uid = uid;
        }
        if gid != KEEP {
            n.gid = gid;
        }
        if o.mode & mode::FMT != mode::DIR {
            n.mode &= !mode::SUID;
            if n.mode & 0o010 != 0 {
                n.mode &= !mode::SGID;
            }
        }
        Ok(n)
    }

    /// `utimensat`: setting given times needs the owner or the superuser
    /// (`EPERM`); setting them to now (`explicit` false) also whoever may
    /// write the file (`EACCES`).
    pub fn may_touch(&self, o: Owner, explicit: bool) -> Result<(), i64> {
        if self.owns(o) {
            Ok(())
        } else if explicit {
            Err(EPERM)
        } else {
            self.check(o, want::W)
        }
    }

    /// The mode a write by this process leaves on a file of `o`: a writer
    /// without privilege clears set-user-ID, and set-group-ID when
    /// group-executable (Linux's `file_remove_privs`).
    pub fn after_write(&self, o: Owner) -> u32 {
        if self.capable(cap::FSETID) || o.mode & (mode::SUID | mode::SGID) == 0 {
            return o.mode;
        }
        let mut m = o.mode & !mode::SUID;
        if m & 0o010 != 0 {
            m &= !mode::SGID;
        }
        m
    }

    /// May this process send a signal to a process whose credentials are
    /// `t`? The superuser may; otherwise its real or effective user id
    /// must be the target's real or saved one.
    pub fn may_signal(&self, t: &Cred) -> bool {
        self.capable(cap::KILL)
            || [self.uid[REAL], self.uid[EFF]]
                .iter()
                .any(|u| *u == t.uid[REAL] || *u == t.uid[SAVED])
    }

    /// Whether it may change ids of kind `w` freely (`CAP_SETUID`,
    /// `CAP_SETGID`).
    fn may_set(&self, w: Which) -> bool {
        self.capable(match w {
            Which::User => cap::SETUID,
            Which::Group => cap::SETGID,
        })
    }

    /// After a change of ids of kind `w` from `old`: the capabilities
    /// follow a change of user ids.
    fn after_set(&mut self, w: Which, old: [u32; 4], fs_only: bool) {
        if w == Which::User {
            self.fix_caps(old, fs_only);
        }
    }

    fn ids(&mut self, w: Which) -> &mut [u32; 4] {
        match w {
            Which::User => &mut self.uid,
            Which::Group => &mut self.gid,
        }
    }

    /// `setuid`/`setgid(id)`: privileged, every id; otherwise the
    /// effective (and file-system) id, to the real or saved one (`EPERM`).
    pub fn set_id(&mut self, w: Which, id: u32) -> Result<(), i64> {
        if id == KEEP {
            return Err(EINVAL);
        }
        let p = self.may_set(w);
        let ids = self.ids(w);
        let old = *ids;
        if p {
            *ids = [id; 4];
        } else if id == ids[REAL] || id == ids[SAVED] {
            ids[EFF] = id;
            ids[FS] = id;
        } else {
            return Err(EPERM);
        }
        self.after_set(w, old, false);
        Ok(())
    }

    /// `setreuid`/`setregid(r, e)` ([`KEEP`]: unchanged): unprivileged, the
    /// real id may become the effective one, the effective the real or
    /// saved one. The saved id becomes the new effective one when the real
    /// id is set, or the effective one set to other than the old real.
    pub fn set_re(&mut self, w: Which, r: u32, e: u32) -> Result<(), i64> {
        let p = self.may_set(w);
        let ids = self.ids(w);
        let old = *ids;
        if !p {
            if r != KEEP && r != old[REAL] && r != old[EFF] {
                return Err(EPERM);
            }
            if e != KEEP && e != old[REAL] && e != old[EFF] && e != old[SAVED] {
                return Err(EPERM);
            }
        }
        if r != KEEP {
            ids[REAL] = r;
        }
        if e != KEEP {
            ids[EFF] = e;
        }
        if r != KEEP || (e != KEEP && e != old[REAL]) {
            ids[SAVED] = ids[EFF];
        }
        ids[FS] = ids[EFF];
        self.after_set(w, old, false);
        Ok(())
    }

    /// `setresuid`/`setresgid(r, e, s)`: unprivileged, each new id must be
    /// one of the three current ones.
    pub fn set_res(&mut self, w: Which, r: u32, e: u32, s: u32) -> Result<(), i64> {
        let p = self.may_set(w);
        let ids = self.ids(w);
        let old = *ids;
        let allowed = |x: u32| p || x == KEEP || old[..3].contains(&x);
        if !(allowed(r) && allowed(e) && allowed(s)) {
            return Err(EPERM);
        }
        for (i, v) in [(REAL, r), (EFF, e), (SAVED, s)] {
            if v != KEEP {
                ids[i] = v;
            }
        }
        ids[FS] = ids[EFF];
        self.after_set(w, old, false);
        Ok(())
    }

    /// `setfsuid`/`setfsgid(id)`: → the old file-system id, always; the
    /// new one is taken if privileged or one of the other three ids.
    pub fn set_fs(&mut self, w: Which, id: u32) -> u32 {
        let p = self.may_set(w);
        let ids = self.ids(w);
        let before = *ids;
        if id != KEEP && (p || ids.contains(&id)) {
            ids[FS] = id;
        }
        self.after_set(w, before, true);
        before[FS]
    }

    /// `setgroups`: the superuser's (`EPERM`); at most [`NGROUPS`]
    /// (`EINVAL`).
    pub fn set_groups(&mut self, g: &[u32]) -> Result<(), i64> {
        if g.len() > NGROUPS {
            return Err(EINVAL);
        }
        if !self.capable(cap::SETGID) {
            return Err(EPERM);
        }
        self.groups[..g.len()].copy_from_slice(g);
        self.ngroups = g.len() as u32;
        Ok(())
    }

    /// `execve` of a file of `o`: a set-user-ID file makes its owner the
    /// effective user, a set-group-ID and group-executable file its group
    /// the effective group; the saved ids become the effective ones.
    /// → whether the ids now differ from the real ones (`AT_SECURE`).
    pub fn exec(&mut self, o: Owner) -> bool {
        if o.mode & mode::SUID != 0 {
            self.uid[EFF] = o.uid;
        }
        if o.mode & (mode::SGID | 0o010) == mode::SGID | 0o010 {
            self.gid[EFF] = o.gid;
        }
        self.uid[SAVED] = self.uid[EFF];
        self.uid[FS] = self.uid[EFF];
        self.gid[SAVED] = self.gid[EFF];
        self.gid[FS] = self.gid[EFF];
        self.exec_caps();
        self.uid[EFF] != self.uid[REAL] || self.gid[EFF] != self.gid[REAL]
    }

    /// Packs one kind's ids for a message: real and effective in the first
    /// word, saved and file-system in the second.
    pub fn pack(&self, w: Which) -> [u64; 2] {
        let ids = match w {
            Which::User => self.uid,
            Which::Group => self.gid,
        };
        [
            ids[REAL] as u64 | (ids[EFF] as u64) << 32,
            ids[SAVED] as u64 | (ids[FS] as u64) << 32,
        ]
    }

    /// The inverse of [`Cred::pack`].
    pub fn unpack(&mut self, w: Which, p: [u64; 2]) {
        *self.ids(w) = [
            p[0] as u32,
            (p[0] >> 32) as u32,
            p[1] as u32,
            (p[1] >> 32) as u32,
        ];
    }
}

#[cfg(test)]
mod tests;
