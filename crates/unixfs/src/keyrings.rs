//! The kernel key retention service (`keyrings(7)`, `add_key(2)`,
//! `keyctl(2)`, `request_key(2)`): the table of keys unixd keeps, with
//! Linux's rules. A key has a serial number, a type (`user`, `logon`,
//! `keyring`), a description, an owner, a group and four bytes of
//! permissions (possessor, owner, group, others); a keyring's payload is
//! its links to other keys. Keys are counted by reference (the keyrings
//! that link them, the processes and threads whose keyrings they are) and
//! go with their last reference, giving their share of the owner's quota
//! back (`/proc/sys/kernel/keys/maxkeys`, `maxbytes` and root's).
//!
//! Each process has a session keyring (inherited by `fork`), a process
//! keyring and each thread a thread keyring (neither inherited, both
//! dropped at `execve`), made when first named; each user has a user
//! keyring and a user session keyring, made when first named. A key is
//! *possessed* when a search from the caller's thread, process and
//! session keyrings (the user session keyring when it has no session
//! keyring) reaches it through keyrings it may search; the possessor's
//! permission byte then adds to the others. The table grows from unixd's
//! heap (`try_reserve`: a full heap is `ENOMEM`), not a fixed array.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use stet_unix::keyctl::{perm, reqkey, spec, DESC_MAX, SEARCH_DEPTH, USER_PAYLOAD_MAX};
use stet_unix::sys::errno::*;

/// A key's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// `user`: a blob of up to 32767 bytes, readable.
    User,
    /// `logon`: as `user`, but never read back to user space; its
    /// description is `service:name`.
    Logon,
    /// `keyring`: a set of links to keys.
    Keyring,
}

impl Type {
    /// The type named `name`, if Stet has it (others: `ENODEV` to
    /// `add_key`, `ENOKEY` to searches, as Linux's unknown types).
    pub fn parse(name: &[u8]) -> Option<Type> {
        match name {
            b"user" => Some(Type::User),
            b"logon" => Some(Type::Logon),
            b"keyring" => Some(Type::Keyring),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static [u8] {
        match self {
            Type::User => b"user",
            Type::Logon => b"logon",
            Type::Keyring => b"keyring",
        }
    }
}

/// One key.
#[derive(Clone, Debug)]
pub struct Key {
    /// Its type.
    pub kind: Type,
    /// Its description.
    pub desc: Vec<u8>,
    /// A `user` or `logon` key's payload.
    pub payload: Vec<u8>,
    /// A keyring's links, in the order made.
    pub links: Vec<i32>,
    /// Its owner.
    pub uid: u32,
    /// Its group (`u32::MAX`: none).
    pub gid: u32,
    /// Its permissions.
    pub perm: u32,
    /// `KEYCTL_REVOKE`d.
    pub revoked: bool,
    /// Negatively instantiated: a `request_key` that found nothing and
    /// could not construct it left it (`ENOKEY` to reads and searches
    /// until it expires).
    pub negative: bool,
    /// When it expires (ns since boot; 0: never).
    pub expiry: u64,
    /// References: links to it and processes' keyrings.
    refs: u32,
    /// The user whose quota it is counted in, and the bytes counted.
    quser: u32,
    qbytes: u32,
}

/// One process's keyrings (serial 0: none).
#[derive(Clone, Debug, Default)]
struct ProcKeys {
    pid: u32,
    session: i32,
    process: i32,
    /// Its threads' keyrings: (thread id, serial).
    threads: Vec<(u32, i32)>,
    /// `KEYCTL_SET_REQKEY_KEYRING`'s setting.
    reqkey: i32,
}

/// One user's keyrings and quota use.
#[derive(Clone, Copy, Debug)]
pub struct UserKeys {
    /// The user.
    pub uid: u32,
    user: i32,
    session: i32,
    /// Keys counted to the user.
    pub nkeys: u32,
    /// Bytes counted to the user.
    pub nbytes: u32,
}

/// The per-user quotas (`/proc/sys/kernel/keys/*`), Linux's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Keys an ordinary user may own.
    pub maxkeys: u32,
    /// Bytes an ordinary user's keys may count.
    pub maxbytes: u32,
    /// Keys root may own.
    pub root_maxkeys: u32,
    /// Bytes root's keys may count.
    pub root_maxbytes: u32,
}

impl Limits {
    /// Linux's defaults.
    pub const LINUX: Limits = Limits {
        maxkeys: 200,
        maxbytes: 20000,
        root_maxkeys: 1_000_000,
        root_maxbytes: 25_000_000,
    };
}

/// Who calls, and when.
#[derive(Clone, Copy, Debug)]
pub struct Caller<'a> {
    /// The process.
    pub pid: u32,
    /// The thread.
    pub tid: u32,
    /// The real user id (whose user keyrings are meant).
    pub ruid: u32,
    /// The file-system user id (who owns a new key).
    pub fsuid: u32,
    /// The file-system group id.
    pub fsgid: u32,
    /// Supplementary groups.
    pub groups: &'a [u32],
    /// Holds `CAP_SYS_ADMIN`.
    pub admin: bool,
    /// ns since boot.
    pub now: u64,
}

/// Bytes a link costs its keyring's owner (`KEYQUOTA_LINK_BYTES`).
const LINK_BYTES: u32 = 4;

/// The table.
pub struct Keys {
    keys: BTreeMap<i32, Key>,
    procs: Vec<ProcKeys>,
    users: Vec<UserKeys>,
    /// Payloads and descriptions being staged: (pid, which, bytes).
    stage: Vec<(u32, u8, Vec<u8>)>,
    seed: u32,
    /// The quotas.
    pub limits: Limits,
}

impl Default for Keys {
    fn default() -> Self {
        Self::new()
    }
}

/// How long a negative key lasts (`key_negative_timeout`, 60 s).
const NEGATIVE_NS: u64 = 60_000_000_000;

/// What a lookup needs of a key besides a permission.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// That it is instantiated, neither negative nor revoked nor
    /// expired.
    Valid,
    /// That it is neither revoked nor expired (`KEY_LOOKUP_PARTIAL`:
    /// describing it, changing its attributes).
    Partial,
    /// Nothing: revoking, unlinking, invalidating, naming.
    Any,
}

fn grow<T>(v: &mut Vec<T>) -> Result<(), i64> {
    v.try_reserve(1).map_err(|_| ENOMEM)
}

impl Keys {
    /// An empty table.
    pub const fn new() -> Keys {
        Keys {
            keys: BTreeMap::new(),
            procs: Vec::new(),
            users: Vec::new(),
            stage: Vec::new(),
            seed: 0x2545_f491,
            limits: Limits::LINUX,
        }
    }

    /// The key `serial`, if it is there.
    pub fn get(&self, serial: i32) -> Option<&Key> {
        self.keys.get(&serial)
    }

    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Every key, by serial.
    pub fn iter(&self) -> impl Iterator<Item = (i32, &Key)> {
        self.keys.iter().map(|(&s, k)| (s, k))
    }

    /// Every user with keys.
    pub fn users(&self) -> &[UserKeys] {
        &self.users
    }

    /// Whether `k` has expired at `now`.
    pub fn expired(k: &Key, now: u64) -> bool {
        k.expiry != 0 && now >= k.expiry
    }

    fn user_index(&mut self, uid: u32) -> Result<usize, i64> {
        if let Some(i) = self.users.iter().position(|u| u.uid == uid) {
            return Ok(i);
        }
        grow(&mut self.users)?;
        self.users.push(UserKeys {
            uid,
            user: 0,
            session: 0,
            nkeys: 0,
            nbytes: 0,
        });
        Ok(self.users.len() - 1)
    }

    fn proc_index(&mut self, pid: u32) -> Result<usize, i64> {
        if let Some(i) = self.procs.iter().position(|p| p.pid == pid) {
            return Ok(i);
        }
        grow(&mut self.procs)?;
        self.procs.push(ProcKeys {
            pid,
            ..ProcKeys::default()
        });
        Ok(self.procs.len() - 1)
    }

    fn proc_keys(&self, pid: u32) -> Option<&ProcKeys> {
        self.procs.iter().find(|p| p.pid == pid)
    }

    /// Counts `bytes` more (and `keys` more keys) to `uid`: `EDQUOT` past
    /// its quota unless `overrun`.
    fn charge(&mut self, uid: u32, keys: u32, bytes: u32, overrun: bool) -> Result<(), i64> {
        let l = self.limits;
        let i = self.user_index(uid)?;
        let u = &mut self.users[i];
        let (mk, mb) = if uid == 0 {
            (l.root_maxkeys, l.root_maxbytes)
        } else {
            (l.maxkeys, l.maxbytes)
        };
        let nk = u.nkeys.saturating_add(keys);
        let nb = u.nbytes.saturating_add(bytes);
        if !overrun && ((keys > 0 && nk > mk) || (bytes > 0 && nb > mb)) {
            return Err(EDQUOT);
        }
        u.nkeys = nk;
        u.nbytes = nb;
        Ok(())
    }

    fn uncharge(&mut self, uid: u32, keys: u32, bytes: u32) {
        if let Some(u) = self.users.iter_mut().find(|u| u.uid == uid) {
            u.nkeys = u.nkeys.saturating_sub(keys);
            u.nbytes = u.nbytes.saturating_sub(bytes);
        }
    }

    fn next_serial(&mut self) -> i32 {
        loop {
            // xorshift32: serials that look random, as Linux's, and are
            // never below 3 nor `i32::MAX`.
            let mut x = self.seed;
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            self.seed = x;
            let s = (x & 0x7fff_ffff) as i32;
            if (3..i32::MAX).contains(&s) && !self.keys.contains_key(&s) {
                return s;
            }
        }
    }

    /// A new key with one reference (its maker's), counted to `uid`.
    #[allow(clippy::too_many_arguments)]
    fn alloc(
        &mut self,
        kind: Type,
        desc: &[u8],
        payload: &[u8],
        uid: u32,
        gid: u32,
        perm: u32,
        overrun: bool,
    ) -> Result<i32, i64> {
        let qbytes = (desc.len() + 1 + payload.len()) as u32;
        let mut d = Vec::new();
        d.try_reserve_exact(desc.len()).map_err(|_| ENOMEM)?;
        d.extend_from_slice(desc);
        let mut p = Vec::new();
        p.try_reserve_exact(payload.len()).map_err(|_| ENOMEM)?;
        p.extend_from_slice(payload);
        self.charge(uid, 1, qbytes, overrun)?;
        let s = self.next_serial();
        self.keys.insert(
            s,
            Key {
                kind,
                desc: d,
                payload: p,
                links: Vec::new(),
                uid,
                gid,
                perm,
                revoked: false,
                negative: false,
                expiry: 0,
                refs: 1,
                quser: uid,
                qbytes,
            },
        );
        Ok(s)
    }

    fn get_ref(&mut self, s: i32) {
        if let Some(k) = self.keys.get_mut(&s) {
            k.refs += 1;
        }
    }

    /// Drops a reference to `s`; the key goes with its last, and its
    /// links with it.
    fn put(&mut self, s: i32) {
        let mut todo = Vec::new();
        todo.push(s);
        while let Some(s) = todo.pop() {
            let gone = match self.keys.get_mut(&s) {
                Some(k) => {
                    k.refs = k.refs.saturating_sub(1);
                    k.refs == 0
                }
                None => false,
            };
            if gone {
                if let Some(k) = self.keys.remove(&s) {
                    self.uncharge(k.quser, 1, k.qbytes);
                    todo.extend_from_slice(&k.links);
                }
            }
        }
    }

    /// The permission bits the caller has on `k`.
    fn perm_on(k: &Key, c: &Caller, possessed: bool) -> u32 {
        let mut p = if k.uid == c.fsuid {
            k.perm >> perm::USR
        } else if k.gid != u32::MAX
            && k.perm & (perm::ALL << perm::GRP) != 0
            && (k.gid == c.fsgid || c.groups.contains(&k.gid))
        {
            k.perm >> perm::GRP
        } else {
            k.perm
        };
        if possessed {
            p |= k.perm >> perm::POS;
        }
        p & perm::ALL
    }

    fn may(&self, s: i32, c: &Caller, possessed: bool, need: u32) -> bool {
        self.keys
            .get(&s)
            .is_some_and(|k| Self::perm_on(k, c, possessed) & need == need)
    }

    /// The caller's keyrings a search starts from: thread, process,
    /// session (or the user session keyring when it has none).
    fn starts(&self, c: &Caller) -> Vec<i32> {
        let mut v = Vec::new();
        let _ = v.try_reserve(3);
        let pk = self.proc_keys(c.pid);
        if let Some(p) = pk {
            if let Some(&(_, t)) = p.threads.iter().find(|t| t.0 == c.tid) {
                v.push(t);
            }
            if p.process != 0 {
                v.push(p.process);
            }
        }
        match pk.map_or(0, |p| p.session) {
            0 => {
                if let Some(u) = self.users.iter().find(|u| u.uid == c.ruid) {
                    if u.session != 0 {
                        v.push(u.session);
                    }
                }
            }
            s => v.push(s),
        }
        v
    }

    /// Whether the caller possesses `target`: a search from its keyrings
    /// reaches it through keyrings it may search, and may search it.
    pub fn possessed(&self, c: &Caller, target: i32) -> bool {
        let mut seen: Vec<i32> = Vec::new();
        let mut level = self.starts(c);
        for _ in 0..=SEARCH_DEPTH {
            let mut next = Vec::new();
            for s in level {
                if seen.contains(&s) || !self.may(s, c, true, perm::SEARCH) {
                    continue;
                }
                if s == target {
                    return true;
                }
                if seen.try_reserve(1).is_err() {
                    return false;
                }
                seen.push(s);
                if let Some(k) = self.keys.get(&s) {
                    if k.kind == Type::Keyring && next.try_reserve(k.links.len()).is_ok() {
                        next.extend_from_slice(&k.links);
                    }
                }
            }
            level = next;
        }
        false
    }

    /// The user keyrings of `uid`, made on demand: `_uid.<uid>` and
    /// `_uid_ses.<uid>`, which links the first.
    fn user_keyrings(&mut self, uid: u32) -> Result<(i32, i32), i64> {
        let i = self.user_index(uid)?;
        if self.users[i].user != 0 {
            return Ok((self.users[i].user, self.users[i].session));
        }
        let mut d = [0u8; 24];
        let p = (perm::ALL & !perm::SETATTR) << perm::POS
            | (perm::VIEW | perm::READ | perm::SEARCH) << perm::USR;
        let n = fmt_id(&mut d, b"_uid.", uid);
        let u = self.alloc(Type::Keyring, &d[..n], &[], uid, u32::MAX, p, true)?;
        let n = fmt_id(&mut d, b"_uid_ses.", uid);
        let s = match self.alloc(Type::Keyring, &d[..n], &[], uid, u32::MAX, p, true) {
            Ok(s) => s,
            Err(e) => {
                self.put(u);
                return Err(e);
            }
        };
        if let Err(e) = self.link_in(s, u) {
            self.put(u);
            self.put(s);
            return Err(e);
        }
        let i = self.user_index(uid)?;
        self.users[i].user = u;
        self.users[i].session = s;
        Ok((u, s))
    }

    /// A new keyring for a process (`_tid`, `_pid`, `_ses`…).
    fn proc_keyring(&mut self, c: &Caller, name: &[u8], extra: u32) -> Result<i32, i64> {
        let p = perm::ALL << perm::POS | (perm::VIEW | extra) << perm::USR;
        self.alloc(Type::Keyring, name, &[], c.fsuid, c.fsgid, p, true)
    }

    fn thread_keyring(&mut self, c: &Caller, create: bool) -> Result<i32, i64> {
        let pi = self.proc_index(c.pid)?;
        if let Some(&(_, t)) = self.procs[pi].threads.iter().find(|t| t.0 == c.tid) {
            return Ok(t);
        }
        if !create {
            return Err(ENOKEY);
        }
        grow(&mut self.procs[pi].threads)?;
        let t = self.proc_keyring(c, b"_tid", 0)?;
        self.procs[pi].threads.push((c.tid, t));
        Ok(t)
    }

    fn process_keyring(&mut self, c: &Caller, create: bool) -> Result<i32, i64> {
        let pi = self.proc_index(c.pid)?;
        if self.procs[pi].process != 0 {
            return Ok(self.procs[pi].process);
        }
        if !create {
            return Err(ENOKEY);
        }
        let k = self.proc_keyring(c, b"_pid", 0)?;
        self.procs[pi].process = k;
        Ok(k)
    }

    /// Makes `k` (whose reference the caller gives) the process's
    /// session keyring.
    fn install_session(&mut self, pid: u32, k: i32) -> Result<(), i64> {
        let pi = match self.proc_index(pid) {
            Ok(i) => i,
            Err(e) => {
                self.put(k);
                return Err(e);
            }
        };
        let old = core::mem::replace(&mut self.procs[pi].session, k);
        if old != 0 {
            self.put(old);
        }
        Ok(())
    }

    fn session_keyring(&mut self, c: &Caller, create: bool) -> Result<i32, i64> {
        let pi = self.proc_index(c.pid)?;
        if self.procs[pi].session != 0 {
            return Ok(self.procs[pi].session);
        }
        // Named, there always is one: a new one to make, else the user's
        // session keyring becomes the process's.
        let (_, us) = self.user_keyrings(c.ruid)?;
        let k = if create {
            self.proc_keyring(c, b"_ses", perm::READ | perm::LINK)?
        } else {
            self.get_ref(us);
            us
        };
        self.install_session(c.pid, k)?;
        Ok(k)
    }

    /// `lookup_user_key`: the key `id` names (a serial or `KEY_SPEC_*`)
    /// and whether the caller possesses it, the special keyrings made on
    /// demand when `create` (the session keyring always), checked as
    /// `check` says and for the permission bits `need`.
    pub fn lookup(
        &mut self,
        c: &Caller,
        id: i32,
        create: bool,
        check: Check,
        need: u32,
    ) -> Result<(i32, bool), i64> {
        let (s, possessed) = match id {
            spec::THREAD_KEYRING => (self.thread_keyring(c, create)?, true),
            spec::PROCESS_KEYRING => (self.process_keyring(c, create)?, true),
            spec::SESSION_KEYRING => (self.session_keyring(c, create)?, true),
            spec::USER_KEYRING => (self.user_keyrings(c.ruid)?.0, true),
            spec::USER_SESSION_KEYRING => (self.user_keyrings(c.ruid)?.1, true),
            spec::REQKEY_AUTH_KEY | spec::REQUESTOR_KEYRING => return Err(ENOKEY),
            i if i < 1 => return Err(EINVAL),
            i => {
                if !self.keys.contains_key(&i) {
                    return Err(ENOKEY);
                }
                (i, self.possessed(c, i))
            }
        };
        let k = self.keys.get(&s).ok_or(ENOKEY)?;
        if check == Check::Valid && k.negative {
            return Err(ENOKEY);
        }
        if check != Check::Any {
            if k.revoked {
                return Err(EKEYREVOKED);
            }
            if Self::expired(k, c.now) {
                return Err(EKEYEXPIRED);
            }
        }
        if Self::perm_on(k, c, possessed) & need != need {
            return Err(EACCES);
        }
        Ok((s, possessed))
    }

    /// Whether keyring `from` reaches `to` through links.
    fn reaches(&self, from: i32, to: i32) -> bool {
        let mut seen: Vec<i32> = Vec::new();
        let mut todo = Vec::new();
        todo.push(from);
        while let Some(s) = todo.pop() {
            if s == to {
                return true;
            }
            if seen.contains(&s) || seen.try_reserve(1).is_err() {
                continue;
            }
            seen.push(s);
            if let Some(k) = self.keys.get(&s) {
                if todo.try_reserve(k.links.len()).is_ok() {
                    todo.extend_from_slice(&k.links);
                }
            }
        }
        false
    }

    /// Links `key` into keyring `ring` (a reference of its own), in
    /// place of a key there of the same type and description; a keyring
    /// that would reach itself is `EDEADLK`.
    fn link_in(&mut self, ring: i32, key: i32) -> Result<(), i64> {
        let (kind, same) = {
            let k = self.keys.get(&key).ok_or(ENOKEY)?;
            let r = self.keys.get(&ring).ok_or(ENOKEY)?;
            if r.kind != Type::Keyring {
                return Err(ENOTDIR);
            }
            let same = r.links.iter().position(|&l| {
                self.keys
                    .get(&l)
                    .is_some_and(|o| o.kind == k.kind && o.desc == k.desc)
            });
            (k.kind, same)
        };
        if kind == Type::Keyring && self.reaches(key, ring) {
            return Err(EDEADLK);
        }
        match same {
            Some(i) => {
                let old = self.keys.get(&ring).map_or(0, |r| r.links[i]);
                if old == key {
                    return Ok(());
                }
                self.get_ref(key);
                if let Some(r) = self.keys.get_mut(&ring) {
                    r.links[i] = key;
                }
                self.put(old);
            }
            None => {
                let owner = self.keys.get(&ring).map_or(0, |r| r.quser);
                grow(&mut self.keys.get_mut(&ring).ok_or(ENOKEY)?.links)?;
                self.charge(owner, 0, LINK_BYTES, false)?;
                self.get_ref(key);
                if let Some(r) = self.keys.get_mut(&ring) {
                    r.links.push(key);
                    r.qbytes += LINK_BYTES;
                }
            }
        }
        Ok(())
    }

    /// Removes `key`'s link from `ring` (`ENOENT`: none).
    fn unlink_from(&mut self, ring: i32, key: i32) -> Result<(), i64> {
        let r = self.keys.get_mut(&ring).ok_or(ENOKEY)?;
        if r.kind != Type::Keyring {
            return Err(ENOTDIR);
        }
        let i = r.links.iter().position(|&l| l == key).ok_or(ENOENT)?;
        r.links.remove(i);
        r.qbytes = r.qbytes.saturating_sub(LINK_BYTES);
        let owner = r.quser;
        self.uncharge(owner, 0, LINK_BYTES);
        self.put(key);
        Ok(())
    }

    /// Empties keyring `ring`.
    fn clear_links(&mut self, ring: i32) {
        let links = match self.keys.get_mut(&ring) {
            Some(r) => core::mem::take(&mut r.links),
            None => return,
        };
        let owner = self.keys.get(&ring).map_or(0, |r| r.quser);
        let n = links.len() as u32 * LINK_BYTES;
        if let Some(r) = self.keys.get_mut(&ring) {
            r.qbytes = r.qbytes.saturating_sub(n);
        }
        self.uncharge(owner, 0, n);
        for l in links {
            self.put(l);
        }
    }

    /// Checks a payload for its type (the types' `preparse`).
    fn preparse(kind: Type, desc: &[u8], plen: usize) -> Result<(), i64> {
        match kind {
            Type::Keyring if plen != 0 => Err(EINVAL),
            Type::User | Type::Logon if plen == 0 || plen > USER_PAYLOAD_MAX => Err(EINVAL),
            Type::Logon => match desc.iter().position(|&b| b == b':') {
                Some(i) if i > 0 => Ok(()),
                _ => Err(EINVAL),
            },
            _ => Ok(()),
        }
    }

    /// Replaces `s`'s payload (`KEYCTL_UPDATE`, `add_key` of a key that
    /// is there), counting the change to its owner.
    fn replace_payload(&mut self, s: i32, payload: &[u8]) -> Result<(), i64> {
        let k = self.keys.get(&s).ok_or(ENOKEY)?;
        if k.revoked {
            return Err(EKEYREVOKED);
        }
        let (old, quser) = (k.payload.len() as u32, k.quser);
        let new = payload.len() as u32;
        let mut p = Vec::new();
        p.try_reserve_exact(payload.len()).map_err(|_| ENOMEM)?;
        p.extend_from_slice(payload);
        if new > old {
            self.charge(quser, 0, new - old, false)?;
        } else {
            self.uncharge(quser, 0, old - new);
        }
        let k = self.keys.get_mut(&s).ok_or(ENOKEY)?;
        k.qbytes = k.qbytes.saturating_sub(old).saturating_add(new);
        k.payload = p;
        Ok(())
    }

    /// Stages `bytes` at `at` of the caller's next payload (`which` 0)
    /// or description (`which` 1) (`at` 0 starts again): what one message
    /// cannot hold.
    pub fn stage(&mut self, pid: u32, which: u8, at: usize, bytes: &[u8]) -> Result<(), i64> {
        let max = if which == 0 {
            USER_PAYLOAD_MAX
        } else {
            DESC_MAX
        };
        let i = match self.stage.iter().position(|s| s.0 == pid && s.1 == which) {
            Some(i) => i,
            None => {
                grow(&mut self.stage)?;
                self.stage.push((pid, which, Vec::new()));
                self.stage.len() - 1
            }
        };
        let v = &mut self.stage[i].2;
        if at == 0 {
            v.clear();
        }
        if at != v.len() || v.len() + bytes.len() > max {
            return Err(EINVAL);
        }
        v.try_reserve(bytes.len()).map_err(|_| ENOMEM)?;
        v.extend_from_slice(bytes);
        Ok(())
    }

    /// What the caller staged as `which` (taken).
    pub fn take_stage(&mut self, pid: u32, which: u8) -> Vec<u8> {
        match self.stage.iter().position(|s| s.0 == pid && s.1 == which) {
            Some(i) => self.stage.swap_remove(i).2,
            None => Vec::new(),
        }
    }

    /// `add_key(type, desc, payload, plen, ring)`: `plen` is the
    /// payload's whole length (over 32767 the payload is not passed: no
    /// type Stet has takes it).
    pub fn add_key(
        &mut self,
        c: &Caller,
        typ: &[u8],
        desc: Option<&[u8]>,
        payload: &[u8],
        plen: usize,
        ring: i32,
    ) -> Result<i32, i64> {
        let (ring, _) = self.lookup(c, ring, true, Check::Valid, perm::WRITE)?;
        let kind = Type::parse(typ).ok_or(ENODEV)?;
        if self.keys.get(&ring).ok_or(ENOKEY)?.kind != Type::Keyring {
            return Err(ENOTDIR);
        }
        let desc = desc.unwrap_or(&[]);
        Self::preparse(kind, desc, plen)?;
        if desc.is_empty() {
            return Err(EINVAL);
        }
        if payload.len() != plen {
            return Err(EINVAL);
        }
        // A key of the same type and description there is updated (not a
        // keyring: a new one takes its place), if it is not revoked.
        if kind != Type::Keyring {
            let there = self.keys[&ring].links.iter().copied().find(|l| {
                self.keys
                    .get(l)
                    .is_some_and(|k| k.kind == kind && k.desc == desc && !k.revoked)
            });
            if let Some(s) = there {
                let p = self.possessed(c, s);
                if !self.may(s, c, p, perm::WRITE) {
                    return Err(EACCES);
                }
                self.replace_payload(s, payload)?;
                return Ok(s);
            }
        }
        let p = Self::new_perm(kind);
        let s = self.alloc(kind, desc, payload, c.fsuid, c.fsgid, p, false)?;
        let r = self.link_in(ring, s);
        self.put(s);
        r.map(|_| s)
    }

    /// A new key's permissions: the possessor's all but reading a type
    /// that cannot be read, the owner's view.
    fn new_perm(kind: Type) -> u32 {
        let mut p = (perm::VIEW | perm::SEARCH | perm::LINK | perm::SETATTR | perm::WRITE)
            << perm::POS
            | perm::VIEW << perm::USR;
        if kind != Type::Logon {
            p |= perm::READ << perm::POS;
        }
        p
    }

    /// Searches the keyrings `from` (with whether each is possessed) for
    /// a key of `kind` and `desc` the caller may search: the first found,
    /// or why none (`ENOKEY` for a negative key, `EKEYREVOKED`,
    /// `EKEYEXPIRED` or `EACCES` for a match that would not do, else
    /// `EAGAIN`: nothing matched).
    fn search(
        &self,
        c: &Caller,
        from: &[(i32, bool)],
        kind: Type,
        desc: &[u8],
    ) -> Result<i32, i64> {
        let mut err = EAGAIN;
        for &(start, pos) in from {
            let mut seen: Vec<i32> = Vec::new();
            let mut level = Vec::new();
            level.push(start);
            for _ in 0..=SEARCH_DEPTH {
                let mut next = Vec::new();
                for s in level {
                    let Some(k) = self.keys.get(&s) else { continue };
                    if seen.contains(&s) || seen.try_reserve(1).is_err() {
                        continue;
                    }
                    seen.push(s);
                    if k.kind == kind && k.desc == desc {
                        if k.revoked {
                            err = EKEYREVOKED;
                        } else if k.negative && !Self::expired(k, c.now) {
                            err = ENOKEY;
                        } else if Self::expired(k, c.now) {
                            err = EKEYEXPIRED;
                        } else if !self.may(s, c, pos, perm::SEARCH) {
                            err = EACCES;
                        } else {
                            return Ok(s);
                        }
                        continue;
                    }
                    if k.kind == Type::Keyring
                        && !k.revoked
                        && self.may(s, c, pos, perm::SEARCH)
                        && next.try_reserve(k.links.len()).is_ok()
                    {
                        next.extend_from_slice(&k.links);
                    }
                }
                level = next;
            }
        }
        Err(err)
    }

    /// `request_key(type, desc, callout, dest)`: a search of the
    /// caller's keyrings, the key found linked into `dest` (0: none).
    /// Nothing constructs a key that is not found (there is no
    /// `/sbin/request-key`): `ENOKEY`, after the check Linux makes that
    /// the keyring it would go to may be written (`EACCES`) when there is
    /// a callout.
    pub fn request_key(
        &mut self,
        c: &Caller,
        typ: &[u8],
        desc: &[u8],
        callout: bool,
        dest: i32,
    ) -> Result<i32, i64> {
        let dest = if dest != 0 {
            Some(self.lookup(c, dest, true, Check::Valid, perm::WRITE)?.0)
        } else {
            None
        };
        let kind = Type::parse(typ).ok_or(ENOKEY)?;
        if desc.is_empty() {
            return Err(EINVAL);
        }
        let mut from = Vec::new();
        from.try_reserve(3).map_err(|_| ENOMEM)?;
        for s in self.starts(c) {
            from.push((s, true));
        }
        match self.search(c, &from, kind, desc) {
            Ok(s) => {
                if let Some(d) = dest {
                    if self.may(s, c, self.possessed(c, s), perm::LINK) {
                        self.link_in(d, s)?;
                    }
                }
                Ok(s)
            }
            Err(EAGAIN) if callout => {
                let ring = match dest {
                    Some(d) => d,
                    None => self.default_dest(c)?,
                };
                if !self.may(ring, c, true, perm::WRITE) {
                    return Err(EACCES);
                }
                // Constructed by nobody: the key is made, negated for a
                // minute and linked where it would have gone.
                let s = self.alloc(
                    kind,
                    desc,
                    &[],
                    c.fsuid,
                    c.fsgid,
                    Self::new_perm(kind),
                    false,
                )?;
                if let Some(k) = self.keys.get_mut(&s) {
                    k.negative = true;
                    k.expiry = c.now.saturating_add(NEGATIVE_NS);
                }
                let r = self.link_in(ring, s);
                self.put(s);
                r?;
                Err(ENOKEY)
            }
            Err(EAGAIN) => Err(ENOKEY),
            Err(e) => Err(e),
        }
    }

    /// The keyring a constructed key would go to by the caller's
    /// `KEY_REQKEY_DEFL_*` setting.
    fn default_dest(&mut self, c: &Caller) -> Result<i32, i64> {
        let pk = self.proc_keys(c.pid).cloned().unwrap_or_default();
        let thread = pk.threads.iter().find(|t| t.0 == c.tid).map_or(0, |t| t.1);
        let user_session = |k: &mut Keys| k.user_keyrings(c.ruid).map(|u| u.1);
        let pick = match pk.reqkey {
            reqkey::THREAD_KEYRING => thread,
            reqkey::PROCESS_KEYRING => pk.process,
            reqkey::SESSION_KEYRING => pk.session,
            reqkey::USER_SESSION_KEYRING => user_session(self)?,
            reqkey::USER_KEYRING => self.user_keyrings(c.ruid)?.0,
            _ => 0,
        };
        if pick != 0 {
            return Ok(pick);
        }
        for s in [thread, pk.process, pk.session] {
            if s != 0 {
                return Ok(s);
            }
        }
        user_session(self)
    }

    /// `KEYCTL_JOIN_SESSION_KEYRING`: a new anonymous session keyring
    /// (`name` `None`), or the keyring of that name the caller may
    /// search, else a new one of that name, as its session keyring.
    pub fn join_session(&mut self, c: &Caller, name: Option<&[u8]>) -> Result<i32, i64> {
        let k = match name {
            None => self.proc_keyring(c, b"_ses", perm::READ | perm::LINK)?,
            Some(n) => {
                if n.first() == Some(&b'.') {
                    return Err(EPERM);
                }
                let user_rings: Vec<i32> = self
                    .users
                    .iter()
                    .flat_map(|u| [u.user, u.session])
                    .collect();
                // Only one the caller may search without possessing it
                // (`find_keyring_by_name`); else a new one of that name.
                let found = self
                    .keys
                    .iter()
                    .find(|(s, k)| {
                        k.kind == Type::Keyring
                            && k.desc == n
                            && !k.revoked
                            && !user_rings.contains(s)
                            && Self::perm_on(k, c, false) & perm::SEARCH != 0
                    })
                    .map(|(&s, _)| s);
                match found {
                    Some(s) => {
                        if self.proc_keys(c.pid).is_some_and(|p| p.session == s) {
                            return Ok(s);
                        }
                        self.get_ref(s);
                        s
                    }
                    None => self.proc_keyring(c, n, perm::READ | perm::LINK)?,
                }
            }
        };
        self.install_session(c.pid, k)?;
        Ok(k)
    }

    /// `KEYCTL_UPDATE`.
    pub fn update(&mut self, c: &Caller, id: i32, payload: &[u8]) -> Result<(), i64> {
        let (s, _) = self.lookup(c, id, false, Check::Valid, perm::WRITE)?;
        let kind = self.keys[&s].kind;
        if kind == Type::Keyring {
            return Err(EOPNOTSUPP);
        }
        Self::preparse(kind, &self.keys[&s].desc.clone(), payload.len())?;
        self.replace_payload(s, payload)
    }

    /// `KEYCTL_REVOKE` (write or setattr permission): the key stays,
    /// but every use but unlinking is `EKEYREVOKED`; a keyring loses its
    /// links, a key its payload.
    pub fn revoke(&mut self, c: &Caller, id: i32) -> Result<(), i64> {
        let s = match self.lookup(c, id, false, Check::Any, perm::WRITE) {
            Err(EACCES) => self.lookup(c, id, false, Check::Any, perm::SETATTR)?.0,
            r => r?.0,
        };
        if self.keys[&s].revoked {
            return Ok(());
        }
        self.clear_links(s);
        let _ = self.replace_payload(s, &[]);
        if let Some(k) = self.keys.get_mut(&s) {
            k.revoked = true;
        }
        Ok(())
    }

    /// `KEYCTL_INVALIDATE` (search permission): the key is unlinked from
    /// every keyring and forgotten by every process at once.
    pub fn invalidate(&mut self, c: &Caller, id: i32) -> Result<(), i64> {
        let (s, _) = self.lookup(c, id, false, Check::Any, perm::SEARCH)?;
        let rings: Vec<i32> = self
            .keys
            .iter()
            .filter(|(_, k)| k.links.contains(&s))
            .map(|(&r, _)| r)
            .collect();
        // Held while it is taken apart.
        self.get_ref(s);
        for r in rings {
            let _ = self.unlink_from(r, s);
        }
        let mut drop = Vec::new();
        for p in self.procs.iter_mut() {
            for slot in [&mut p.session, &mut p.process] {
                if *slot == s {
                    *slot = 0;
                    drop.push(s);
                }
            }
            p.threads.retain(|t| {
                if t.1 == s {
                    drop.push(s);
                }
                t.1 != s
            });
        }
        for u in self.users.iter_mut() {
            if u.user == s || u.session == s {
                drop.push(u.user);
                drop.push(u.session);
                u.user = 0;
                u.session = 0;
            }
        }
        for d in drop {
            self.put(d);
        }
        self.clear_links(s);
        self.put(s);
        Ok(())
    }

    /// `KEYCTL_CHOWN`: a new owner is root's to give (`EACCES`), counted
    /// to them (`EDQUOT`); a new group the owner's if a member.
    pub fn chown(&mut self, c: &Caller, id: i32, uid: u32, gid: u32) -> Result<(), i64> {
        let (s, _) = self.lookup(c, id, true, Check::Partial, perm::SETATTR)?;
        let k = &self.keys[&s];
        let (ouid, quser, qbytes) = (k.uid, k.quser, k.qbytes);
        if uid != u32::MAX && uid != ouid && !c.admin {
            return Err(EACCES);
        }
        if gid != u32::MAX
            && gid != k.gid
            && !c.admin
            && (ouid != c.fsuid || !(gid == c.fsgid || c.groups.contains(&gid)))
        {
            return Err(EACCES);
        }
        if uid != u32::MAX && uid != quser {
            self.charge(uid, 1, qbytes, false)?;
            self.uncharge(quser, 1, qbytes);
        }
        let k = self.keys.get_mut(&s).ok_or(ENOKEY)?;
        if uid != u32::MAX {
            k.uid = uid;
            k.quser = uid;
        }
        if gid != u32::MAX {
            k.gid = gid;
        }
        Ok(())
    }

    /// `KEYCTL_SETPERM`: the owner's or an administrator's.
    pub fn setperm(&mut self, c: &Caller, id: i32, p: u32) -> Result<(), i64> {
        let all =
            perm::ALL << perm::POS | perm::ALL << perm::USR | perm::ALL << perm::GRP | perm::ALL;
        if p & !all != 0 {
            return Err(EINVAL);
        }
        let (s, _) = self.lookup(c, id, true, Check::Partial, perm::SETATTR)?;
        let k = self.keys.get_mut(&s).ok_or(ENOKEY)?;
        if !c.admin && k.uid != c.fsuid {
            return Err(EACCES);
        }
        k.perm = p;
        Ok(())
    }

    /// `KEYCTL_DESCRIBE`: `type;uid;gid;perm;description` and its NUL.
    pub fn describe(&mut self, c: &Caller, id: i32, out: &mut Vec<u8>) -> Result<(), i64> {
        let (s, _) = self.lookup(c, id, true, Check::Partial, perm::VIEW)?;
        let k = &self.keys[&s];
        let mut b = [0u8; 64];
        let mut n = 0;
        let mut put = |bytes: &[u8], b: &mut [u8; 64]| {
            b[n..n + bytes.len()].copy_from_slice(bytes);
            n += bytes.len();
        };
        put(k.kind.name(), &mut b);
        put(b";", &mut b);
        let mut d = [0u8; 24];
        let l = fmt_signed(&mut d, k.uid);
        put(&d[..l], &mut b);
        put(b";", &mut b);
        let l = fmt_signed(&mut d, k.gid);
        put(&d[..l], &mut b);
        put(b";", &mut b);
        let l = fmt_hex8(&mut d, k.perm);
        put(&d[..l], &mut b);
        put(b";", &mut b);
        out.try_reserve(n + k.desc.len() + 1).map_err(|_| ENOMEM)?;
        out.extend_from_slice(&b[..n]);
        out.extend_from_slice(&k.desc);
        out.push(0);
        Ok(())
    }

    /// `KEYCTL_READ`: a `user` key's payload, a keyring's serials (4
    /// bytes each, little-endian); read permission, or possession.
    pub fn read(&mut self, c: &Caller, id: i32, out: &mut Vec<u8>) -> Result<(), i64> {
        let (s, pos) = self.lookup(c, id, false, Check::Any, 0)?;
        if !self.may(s, c, pos, perm::READ) && !pos {
            return Err(EACCES);
        }
        let k = &self.keys[&s];
        if k.negative {
            return Err(ENOKEY);
        }
        if k.revoked {
            return Err(EKEYREVOKED);
        }
        if Self::expired(k, c.now) {
            return Err(EKEYEXPIRED);
        }
        match k.kind {
            Type::Logon => Err(EOPNOTSUPP),
            Type::User => {
                out.try_reserve(k.payload.len()).map_err(|_| ENOMEM)?;
                out.extend_from_slice(&k.payload);
                Ok(())
            }
            Type::Keyring => {
                out.try_reserve(k.links.len() * 4).map_err(|_| ENOMEM)?;
                for l in &k.links {
                    out.extend_from_slice(&l.to_le_bytes());
                }
                Ok(())
            }
        }
    }

    /// `KEYCTL_CLEAR`.
    pub fn clear(&mut self, c: &Caller, id: i32) -> Result<(), i64> {
        let (s, _) = self.lookup(c, id, true, Check::Valid, perm::WRITE)?;
        if self.keys[&s].kind != Type::Keyring {
            return Err(ENOTDIR);
        }
        self.clear_links(s);
        Ok(())
    }

    /// `KEYCTL_LINK`: link permission on the key, write on the keyring.
    pub fn link(&mut self, c: &Caller, id: i32, ring: i32) -> Result<(), i64> {
        let (r, _) = self.lookup(c, ring, true, Check::Valid, perm::WRITE)?;
        let (k, _) = self.lookup(c, id, true, Check::Valid, perm::LINK)?;
        self.link_in(r, k)
    }

    /// `KEYCTL_UNLINK`: write permission on the keyring.
    pub fn unlink(&mut self, c: &Caller, id: i32, ring: i32) -> Result<(), i64> {
        let (r, _) = self.lookup(c, ring, false, Check::Valid, perm::WRITE)?;
        let (k, _) = self.lookup(c, id, false, Check::Any, 0)?;
        self.unlink_from(r, k)
    }

    /// `KEYCTL_SEARCH`: from keyring `ring` (search permission), the key
    /// found linked into `dest` (0: none) when it may be.
    pub fn search_ring(
        &mut self,
        c: &Caller,
        ring: i32,
        typ: &[u8],
        desc: &[u8],
        dest: i32,
    ) -> Result<i32, i64> {
        let (r, pos) = self.lookup(c, ring, false, Check::Valid, perm::SEARCH)?;
        let d = if dest != 0 {
            Some(self.lookup(c, dest, true, Check::Valid, perm::WRITE)?.0)
        } else {
            None
        };
        let kind = Type::parse(typ).ok_or(ENOKEY)?;
        if self.keys[&r].kind != Type::Keyring {
            return Err(ENOTDIR);
        }
        let s = match self.search(c, &[(r, pos)], kind, desc) {
            Err(EAGAIN) => return Err(ENOKEY),
            r => r?,
        };
        if let Some(d) = d {
            if !self.may(s, c, self.possessed(c, s), perm::LINK) {
                return Err(EACCES);
            }
            self.link_in(d, s)?;
        }
        Ok(s)
    }

    /// `KEYCTL_SET_REQKEY_KEYRING`: the old setting (`-1` asks it); the
    /// thread or process keyring named is made.
    pub fn set_reqkey(&mut self, c: &Caller, to: i32) -> Result<i32, i64> {
        let pi = self.proc_index(c.pid)?;
        let old = self.procs[pi].reqkey;
        match to {
            reqkey::NO_CHANGE => return Ok(old),
            reqkey::THREAD_KEYRING => {
                self.thread_keyring(c, true)?;
            }
            reqkey::PROCESS_KEYRING => {
                self.process_keyring(c, true)?;
            }
            reqkey::DEFAULT
            | reqkey::SESSION_KEYRING
            | reqkey::USER_KEYRING
            | reqkey::USER_SESSION_KEYRING
            | reqkey::REQUESTOR_KEYRING => {}
            _ => return Err(EINVAL),
        }
        let pi = self.proc_index(c.pid)?;
        self.procs[pi].reqkey = to;
        Ok(old)
    }

    /// `KEYCTL_SET_TIMEOUT`: the key expires `secs` from now (0: never).
    pub fn set_timeout(&mut self, c: &Caller, id: i32, secs: u32) -> Result<(), i64> {
        let (s, _) = self.lookup(c, id, true, Check::Partial, perm::SETATTR)?;
        let k = self.keys.get_mut(&s).ok_or(ENOKEY)?;
        k.expiry = if secs == 0 {
            0
        } else {
            c.now.saturating_add(secs as u64 * 1_000_000_000)
        };
        Ok(())
    }

    /// `KEYCTL_GET_SECURITY`: no security module labels keys: "".
    pub fn get_security(&mut self, c: &Caller, id: i32, out: &mut Vec<u8>) -> Result<(), i64> {
        self.lookup(c, id, false, Check::Valid, perm::VIEW)?;
        out.try_reserve(1).map_err(|_| ENOMEM)?;
        out.push(0);
        Ok(())
    }

    /// `KEYCTL_SESSION_TO_PARENT`: the parent `ppid` (of the same users,
    /// `parent_uids` its real, effective and saved ones) takes the
    /// caller's session keyring.
    pub fn session_to_parent(
        &mut self,
        c: &Caller,
        ppid: u32,
        parent_uids: [u32; 3],
    ) -> Result<(), i64> {
        let s = self.session_keyring(c, false)?;
        if parent_uids.iter().any(|&u| u != c.fsuid) && !c.admin {
            return Err(EPERM);
        }
        if self.keys.get(&s).is_some_and(|k| k.uid != c.fsuid) && !c.admin {
            return Err(EPERM);
        }
        self.get_ref(s);
        self.install_session(ppid, s)
    }

    /// `fork`: the child shares the parent's session keyring and request
    /// setting, and has no thread nor process keyring.
    pub fn fork(&mut self, parent: u32, child: u32) -> Result<(), i64> {
        let Some(p) = self.proc_keys(parent) else {
            return Ok(());
        };
        let (session, reqkey) = (p.session, p.reqkey);
        if session == 0 && reqkey == 0 {
            return Ok(());
        }
        let ci = self.proc_index(child)?;
        self.procs[ci].session = session;
        self.procs[ci].reqkey = reqkey;
        if session != 0 {
            self.get_ref(session);
        }
        Ok(())
    }

    /// `execve`: the thread and process keyrings are dropped.
    pub fn exec(&mut self, pid: u32) {
        let Some(i) = self.procs.iter().position(|p| p.pid == pid) else {
            return;
        };
        let threads = core::mem::take(&mut self.procs[i].threads);
        let process = core::mem::replace(&mut self.procs[i].process, 0);
        for (_, t) in threads {
            self.put(t);
        }
        if process != 0 {
            self.put(process);
        }
    }

    /// A thread ended: its keyring is dropped.
    pub fn thread_exit(&mut self, pid: u32, tid: u32) {
        let Some(i) = self.procs.iter().position(|p| p.pid == pid) else {
            return;
        };
        if let Some(j) = self.procs[i].threads.iter().position(|t| t.0 == tid) {
            let (_, t) = self.procs[i].threads.swap_remove(j);
            self.put(t);
        }
    }

    /// The process ended: all its keyrings are dropped.
    pub fn exit(&mut self, pid: u32) {
        self.exec(pid);
        self.stage.retain(|s| s.0 != pid);
        if let Some(i) = self.procs.iter().position(|p| p.pid == pid) {
            let p = self.procs.swap_remove(i);
            if p.session != 0 {
                self.put(p.session);
            }
        }
    }

    /// `/proc/keys`: a line per key the caller may view, Linux's
    /// format (`proc_keys_show`).
    pub fn proc_keys_text(&self, c: &Caller, t: &mut impl core::fmt::Write) -> core::fmt::Result {
        for (&s, k) in &self.keys {
            if Self::perm_on(k, c, self.possessed(c, s)) & perm::VIEW == 0 {
                continue;
            }
            let mut tb = [0u8; 24];
            let timeout: &str = if k.expiry == 0 {
                "perm"
            } else if Self::expired(k, c.now) {
                "expd"
            } else {
                let secs = (k.expiry - c.now) / 1_000_000_000;
                let (v, unit) = match secs {
                    0..=59 => (secs, b's'),
                    60..=3599 => (secs / 60, b'm'),
                    3600..=86399 => (secs / 3600, b'h'),
                    86400..=604_799 => (secs / 86400, b'd'),
                    _ => (secs / 604_800, b'w'),
                };
                let n = fmt_signed(&mut tb, v.min(i32::MAX as u64) as u32);
                tb[n] = unit;
                core::str::from_utf8(&tb[..n + 1]).unwrap_or("?")
            };
            let flag = |on: bool, ch: char| if on { ch } else { '-' };
            write!(
                t,
                "{:08x} I{}-Q-{}- {:5} {:>4} {:08x} {:5} {:5} {:<9.9} ",
                s,
                flag(k.revoked, 'R'),
                flag(k.negative, 'N'),
                k.refs,
                timeout,
                k.perm,
                k.uid as i32,
                k.gid as i32,
                core::str::from_utf8(k.kind.name()).unwrap_or("?"),
            )?;
            t.write_str(core::str::from_utf8(&k.desc).unwrap_or("?"))?;
            if !k.negative && !k.revoked {
                match k.kind {
                    Type::Keyring if k.links.is_empty() => t.write_str(": empty")?,
                    Type::Keyring => write!(t, ": {}", k.links.len())?,
                    _ => write!(t, ": {}", k.payload.len())?,
                }
            }
            t.write_str("\n")?;
        }
        Ok(())
    }

    /// `/proc/key-users`: a line per user with keys, Linux's format
    /// (`proc_key_users_show`): uid, usage, keys/instantiated keys,
    /// keys/quota, bytes/quota.
    pub fn proc_key_users_text(&self, t: &mut impl core::fmt::Write) -> core::fmt::Result {
        let mut users: Vec<&UserKeys> = self.users.iter().filter(|u| u.nkeys > 0).collect();
        users.sort_by_key(|u| u.uid);
        for u in users {
            let l = self.limits;
            let (mk, mb) = if u.uid == 0 {
                (l.root_maxkeys, l.root_maxbytes)
            } else {
                (l.maxkeys, l.maxbytes)
            };
            let owned = self.keys.values().filter(|k| k.quser == u.uid);
            let (n, ni) = owned.fold((0, 0), |(n, ni), k| (n + 1, ni + !k.negative as u32));
            writeln!(
                t,
                "{:5}: {:5} {}/{} {}/{} {}/{}",
                u.uid, n, n, ni, u.nkeys, mk, u.nbytes, mb
            )?;
        }
        Ok(())
    }

    /// Processes with keyrings (for tests).
    pub fn procs_with_keys(&self) -> usize {
        self.procs.len()
    }
}

/// `prefix` and `n` in decimal into `b`: the length.
fn fmt_id(b: &mut [u8; 24], prefix: &[u8], n: u32) -> usize {
    b[..prefix.len()].copy_from_slice(prefix);
    let mut d = [0u8; 24];
    let l = fmt_signed(&mut d, n);
    b[prefix.len()..prefix.len() + l].copy_from_slice(&d[..l]);
    prefix.len() + l
}

/// An id as Linux prints it (`%d`: `u32::MAX` is -1).
fn fmt_signed(b: &mut [u8; 24], n: u32) -> usize {
    let v = n as i32 as i64;
    let mut t = [0u8; 24];
    let mut m = v.unsigned_abs();
    let mut i = 0;
    loop {
        t[i] = b'0' + (m % 10) as u8;
        m /= 10;
        i += 1;
        if m == 0 {
            break;
        }
    }
    let mut n = 0;
    if v < 0 {
        b[0] = b'-';
        n = 1;
    }
    for j in (0..i).rev() {
        b[n] = t[j];
        n += 1;
    }
    n
}

/// `%08x`.
fn fmt_hex8(b: &mut [u8; 24], v: u32) -> usize {
    for (i, c) in b[..8].iter_mut().enumerate() {
        let d = (v >> (28 - 4 * i)) & 0xf;
        *c = b"0123456789abcdef"[d as usize];
    }
    8
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec;

    fn who(pid: u32, uid: u32) -> Caller<'static> {
        Caller {
            pid,
            tid: pid,
            ruid: uid,
            fsuid: uid,
            fsgid: uid,
            groups: &[],
            admin: uid == 0,
            now: 1_000_000_000,
        }
    }

    fn add(k: &mut Keys, c: &Caller, t: &str, d: &str, p: &[u8], ring: i32) -> Result<i32, i64> {
        k.add_key(c, t.as_bytes(), Some(d.as_bytes()), p, p.len(), ring)
    }

    #[test]
    fn add_read_update_and_describe() {
        let mut k = Keys::new();
        let c = who(10, 0);
        let s = add(&mut k, &c, "user", "a", b"hello", spec::PROCESS_KEYRING).unwrap();
        let mut out = vec![];
        k.read(&c, s, &mut out).unwrap();
        assert_eq!(out, b"hello");
        // The same description again updates the same key.
        assert_eq!(
            add(&mut k, &c, "user", "a", b"bye", spec::PROCESS_KEYRING),
            Ok(s)
        );
        out.clear();
        k.read(&c, s, &mut out).unwrap();
        assert_eq!(out, b"bye");
        k.update(&c, s, b"again").unwrap();
        out.clear();
        k.describe(&c, s, &mut out).unwrap();
        assert_eq!(out, b"user;0;0;3f010000;a\0");
        // The process keyring lists it.
        out.clear();
        k.read(&c, spec::PROCESS_KEYRING, &mut out).unwrap();
        assert_eq!(out, s.to_le_bytes());
    }

    #[test]
    fn bad_input() {
        let mut k = Keys::new();
        let c = who(10, 0);
        let r = spec::THREAD_KEYRING;
        assert_eq!(add(&mut k, &c, "nosuch", "a", b"x", r), Err(ENODEV));
        assert_eq!(add(&mut k, &c, "user", "a", b"", r), Err(EINVAL));
        assert_eq!(add(&mut k, &c, "keyring", "a", b"x", r), Err(EINVAL));
        assert_eq!(add(&mut k, &c, "logon", "nocolon", b"x", r), Err(EINVAL));
        assert_eq!(add(&mut k, &c, "logon", ":x", b"x", r), Err(EINVAL));
        assert_eq!(add(&mut k, &c, "user", "a", b"x", 0), Err(EINVAL));
        assert_eq!(add(&mut k, &c, "user", "a", b"x", -6), Err(EINVAL));
        assert_eq!(add(&mut k, &c, "user", "a", b"x", 12345), Err(ENOKEY));
        assert_eq!(k.add_key(&c, b"user", None, b"x", 1, r), Err(EINVAL));
        let u = add(&mut k, &c, "user", "u", b"x", r).unwrap();
        assert_eq!(add(&mut k, &c, "user", "a", b"x", u), Err(ENOTDIR));
        let lg = add(&mut k, &c, "logon", "s:n", b"x", r).unwrap();
        assert_eq!(k.read(&c, lg, &mut vec![]), Err(EOPNOTSUPP));
        assert_eq!(k.setperm(&c, u, 0x4000_0000), Err(EINVAL));
        assert_eq!(k.read(&c, i32::MAX, &mut vec![]), Err(ENOKEY));
        assert_eq!(k.revoke(&c, i32::MAX), Err(ENOKEY));
        assert_eq!(
            k.join_session(&c, Some(b".builtin_trusted_keys")),
            Err(EPERM)
        );
        assert_eq!(k.set_reqkey(&c, 6), Err(EINVAL));
        assert_eq!(
            k.lookup(&c, spec::REQKEY_AUTH_KEY, true, Check::Valid, 0),
            Err(ENOKEY)
        );
    }

    #[test]
    fn revoke_expire_and_search() {
        let mut k = Keys::new();
        let mut c = who(10, 0);
        let a = add(&mut k, &c, "keyring", "ltp2", b"", spec::THREAD_KEYRING).unwrap();
        let b = add(&mut k, &c, "keyring", "ltp3", b"", spec::THREAD_KEYRING).unwrap();
        k.revoke(&c, a).unwrap();
        k.set_timeout(&c, b, 1).unwrap();
        assert_eq!(
            k.request_key(&c, b"keyring", b"ltp2", false, 0),
            Err(EKEYREVOKED)
        );
        c.now += 2_000_000_000;
        assert_eq!(
            k.request_key(&c, b"keyring", b"ltp3", false, 0),
            Err(EKEYEXPIRED)
        );
        assert_eq!(
            k.request_key(&c, b"keyring", b"ltp1", false, 0),
            Err(ENOKEY)
        );
        assert_eq!(
            k.request_key(&c, b"keyring", b"ltp1", false, a),
            Err(EKEYREVOKED)
        );
        assert_eq!(k.read(&c, a, &mut vec![]), Err(EKEYREVOKED));
        let d = add(&mut k, &c, "keyring", "ltp", b"", spec::THREAD_KEYRING).unwrap();
        assert_eq!(k.request_key(&c, b"keyring", b"ltp", false, 0), Ok(d));
        assert_eq!(
            k.search_ring(&c, spec::THREAD_KEYRING, b"keyring", b"ltp", 0),
            Ok(d)
        );
        assert_eq!(
            k.search_ring(&c, spec::THREAD_KEYRING, b"nosuch", b"ltp", 0),
            Err(ENOKEY)
        );
    }

    #[test]
    fn request_key_needs_a_writable_keyring_for_a_callout() {
        let mut k = Keys::new();
        let c = who(10, 0);
        k.join_session(&c, None).unwrap();
        let pos = (perm::SEARCH | perm::READ | perm::VIEW) << perm::POS;
        k.setperm(&c, spec::SESSION_KEYRING, pos).unwrap();
        k.set_reqkey(&c, reqkey::SESSION_KEYRING).unwrap();
        assert_eq!(k.request_key(&c, b"user", b"desc", true, 0), Err(EACCES));
        assert_eq!(k.request_key(&c, b"user", b"desc", false, 0), Err(ENOKEY));
        let mut out = vec![];
        k.read(&c, spec::SESSION_KEYRING, &mut out).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn a_request_with_a_callout_leaves_a_negative_key() {
        let mut k = Keys::new();
        let c = who(10, 0);
        assert_eq!(
            k.request_key(&c, b"user", b"d", true, spec::PROCESS_KEYRING),
            Err(ENOKEY)
        );
        let mut out = vec![];
        k.read(&c, spec::PROCESS_KEYRING, &mut out).unwrap();
        let s = i32::from_le_bytes([out[0], out[1], out[2], out[3]]);
        assert_eq!(k.read(&c, s, &mut vec![]), Err(ENOKEY));
        let mut d = vec![];
        k.describe(&c, s, &mut d).unwrap();
        assert_eq!(d, b"user;0;0;3f010000;d\0");
        // Found again: ENOKEY, nothing more made.
        assert_eq!(k.request_key(&c, b"user", b"d", true, 0), Err(ENOKEY));
        assert_eq!(k.len(), 2);
        // A minute later it has expired.
        let later = Caller {
            now: c.now + NEGATIVE_NS,
            ..c
        };
        assert_eq!(
            k.request_key(&later, b"user", b"d", false, 0),
            Err(EKEYEXPIRED)
        );
    }

    #[test]
    fn proc_files() {
        let mut k = Keys::new();
        let c = who(10, 0);
        let s = add(&mut k, &c, "user", "pk", b"abc", spec::PROCESS_KEYRING).unwrap();
        k.set_timeout(&c, s, 90).unwrap();
        let mut t = std::string::String::new();
        k.proc_keys_text(&c, &mut t).unwrap();
        let pr = k
            .lookup(&c, spec::PROCESS_KEYRING, false, Check::Valid, 0)
            .unwrap()
            .0;
        let want_key =
            std::format!("{s:08x} I--Q---     1   1m 3f010000     0     0 user      pk: 3\n");
        let want_ring =
            std::format!("{pr:08x} I--Q---     1 perm 3f010000     0     0 keyring   _pid: 1\n");
        assert!(t.contains(&want_key), "{t}");
        assert!(t.contains(&want_ring), "{t}");
        // Another user sees neither.
        let mut o = std::string::String::new();
        k.proc_keys_text(&who(11, 5), &mut o).unwrap();
        assert_eq!(o, "");
        let mut u = std::string::String::new();
        k.proc_key_users_text(&mut u).unwrap();
        assert_eq!(u, "    0:     2 2/2 2/1000000 15/25000000\n");
    }

    #[test]
    fn user_keyrings_are_the_users() {
        let mut k = Keys::new();
        let root = who(10, 0);
        let fake = add(
            &mut k,
            &root,
            "keyring",
            "_uid.7",
            b"",
            spec::PROCESS_KEYRING,
        )
        .unwrap();
        let seven = who(10, 7);
        let (u, _) = k
            .lookup(&seven, spec::USER_KEYRING, true, Check::Valid, 0)
            .unwrap();
        assert_ne!(u, fake);
        let mut out = vec![];
        k.describe(&seven, u, &mut out).unwrap();
        assert_eq!(out, b"keyring;7;-1;1f0b0000;_uid.7\0");
        let (us, _) = k
            .lookup(&seven, spec::USER_SESSION_KEYRING, true, Check::Valid, 0)
            .unwrap();
        out.clear();
        k.read(&seven, us, &mut out).unwrap();
        assert_eq!(out, u.to_le_bytes());
    }

    #[test]
    fn permissions_and_possession() {
        let mut k = Keys::new();
        let root = who(10, 0);
        let s = add(&mut k, &root, "user", "a", b"x", spec::PROCESS_KEYRING).unwrap();
        // Another process of another user neither possesses nor may read.
        let other = who(11, 5);
        assert_eq!(k.read(&other, s, &mut vec![]), Err(EACCES));
        assert_eq!(k.describe(&other, s, &mut vec![]), Err(EACCES));
        // Root's other process: the owner's view only.
        let root2 = who(12, 0);
        assert!(k.describe(&root2, s, &mut vec![]).is_ok());
        assert_eq!(k.read(&root2, s, &mut vec![]), Err(EACCES));
        assert_eq!(k.update(&root2, s, b"y"), Err(EACCES));
        // Others may view once set so, not change the permissions.
        k.setperm(&root, s, 0x3f01_0001).unwrap();
        assert!(k.describe(&other, s, &mut vec![]).is_ok());
        assert_eq!(k.setperm(&other, s, 0), Err(EACCES));
        assert_eq!(k.chown(&other, s, 5, u32::MAX), Err(EACCES));
    }

    #[test]
    fn link_unlink_cycle_and_clear() {
        let mut k = Keys::new();
        let c = who(10, 0);
        let a = add(&mut k, &c, "keyring", "a", b"", spec::PROCESS_KEYRING).unwrap();
        let b = add(&mut k, &c, "keyring", "b", b"", a).unwrap();
        assert_eq!(k.link(&c, a, b), Err(EDEADLK));
        assert_eq!(k.link(&c, a, a), Err(EDEADLK));
        let u = add(&mut k, &c, "user", "u", b"x", b).unwrap();
        k.link(&c, u, a).unwrap();
        k.unlink(&c, u, b).unwrap();
        assert_eq!(k.unlink(&c, u, b), Err(ENOENT));
        assert!(k.get(u).is_some());
        k.clear(&c, a).unwrap();
        // Unlinked everywhere: gone, as is `b`.
        assert!(k.get(u).is_none());
        assert!(k.get(b).is_none());
        assert_eq!(k.clear(&c, u), Err(ENOKEY));
    }

    #[test]
    fn quotas() {
        let mut k = Keys::new();
        let c = who(10, 1000);
        let big = [7u8; 32767];
        assert_eq!(
            add(&mut k, &c, "user", "big", &big, spec::PROCESS_KEYRING),
            Err(EDQUOT)
        );
        k.limits.maxbytes = 100_000;
        assert!(add(&mut k, &c, "user", "big", &big, spec::PROCESS_KEYRING).is_ok());
        k.limits.maxkeys = 3;
        let mut made = 0;
        for i in 0..10 {
            let d = std::format!("k{i}");
            if add(&mut k, &c, "user", &d, b"x", spec::PROCESS_KEYRING).is_ok() {
                made += 1;
            }
        }
        // The process keyring and "big" count: one more fits.
        assert_eq!(made, 1);
        k.exit(10);
        assert!(k.is_empty());
        assert_eq!(k.users()[0].nkeys, 0);
        assert_eq!(k.users()[0].nbytes, 0);
    }

    #[test]
    fn fork_exec_exit() {
        let mut k = Keys::new();
        let c = who(10, 0);
        let ses = k.join_session(&c, Some(b"mine")).unwrap();
        add(&mut k, &c, "user", "t", b"x", spec::THREAD_KEYRING).unwrap();
        add(&mut k, &c, "user", "p", b"x", spec::PROCESS_KEYRING).unwrap();
        k.fork(10, 11).unwrap();
        let child = who(11, 0);
        let got = k.lookup(&child, spec::SESSION_KEYRING, false, Check::Valid, 0);
        assert_eq!(got.map(|g| g.0), Ok(ses));
        assert_eq!(
            k.lookup(&child, spec::PROCESS_KEYRING, false, Check::Valid, 0),
            Err(ENOKEY)
        );
        k.exec(10);
        assert_eq!(
            k.lookup(&c, spec::THREAD_KEYRING, false, Check::Valid, 0),
            Err(ENOKEY)
        );
        assert_eq!(k.len(), 1);
        k.exit(10);
        k.exit(11);
        assert!(k.is_empty());
        // A named session keyring is found again by name while it lives,
        // by those who may search it.
        let a = k.join_session(&c, Some(b"x")).unwrap();
        let other = k.join_session(&who(11, 0), Some(b"x")).unwrap();
        assert_ne!(other, a);
        k.setperm(&c, a, 0x3f0b_0000).unwrap();
        assert_eq!(k.join_session(&who(12, 0), Some(b"x")), Ok(a));
    }

    proptest! {
        /// Whatever is done, every key is accounted for: quota counts
        /// match the keys there, and ending every process leaves only the
        /// users' keyrings.
        #[test]
        fn accounting_holds(ops in proptest::collection::vec((0u8..9, 0i32..6, 0u8..4), 1..60)) {
            let mut k = Keys::new();
            let mut made: Vec<i32> = Vec::new();
            for (op, a, b) in ops {
                let pid = 10 + (b as u32 % 2);
                let c = who(pid, if b < 2 { 0 } else { 1000 });
                let pick = |a: i32| made.get(a as usize).copied().unwrap_or(-(a + 1));
                let r: Result<i32, i64> = match op {
                    0 => add(&mut k, &c, "user", &std::format!("u{a}"), b"pay", -(a % 5) - 1),
                    1 => add(&mut k, &c, "keyring", &std::format!("r{a}"), b"", -(a % 5) - 1),
                    2 => k.link(&c, pick(a), pick(b as i32)).map(|_| 0),
                    3 => k.unlink(&c, pick(a), pick(b as i32)).map(|_| 0),
                    4 => k.revoke(&c, pick(a)).map(|_| 0),
                    5 => k.invalidate(&c, pick(a)).map(|_| 0),
                    6 => k.clear(&c, pick(a)).map(|_| 0),
                    7 => { k.fork(pid, pid + 10).map(|_| 0) }
                    _ => { k.exec(pid); Ok(0) }
                };
                if let Ok(s) = r {
                    if s > 0 { made.push(s); }
                }
            }
            for pid in [10, 11, 20, 21] {
                k.exit(pid);
            }
            let keys: u32 = k.users().iter().map(|u| u.nkeys).sum();
            prop_assert_eq!(keys as usize, k.len());
            let bytes: u32 = k.users().iter().map(|u| u.nbytes).sum();
            let held: u32 = k.iter().map(|(_, key)| key.qbytes).sum();
            prop_assert_eq!(bytes, held);
            // Only the users' keyrings (two each, and what they link) remain.
            for (_, key) in k.iter() {
                prop_assert!(key.desc.starts_with(b"_uid") || key.refs > 0);
            }
        }
    }
}
