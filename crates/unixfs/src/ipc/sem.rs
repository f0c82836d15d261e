//! Semaphore sets (man 2 semget, semop, semctl): the values, `semop`'s
//! all-or-nothing operations (done in order on the set, undone if one
//! cannot be done), the `SEM_UNDO` adjustments a process's end applies,
//! the parked operations done when the set changes (in the order they
//! began, from the first again after each that changed a value, as
//! Linux's `update_queue`), and `semctl`.

use super::{Found, Ipc, Live, Wants};
use alloc::vec::Vec;
use stet_unix::cred::{Cred, EFF};
use stet_unix::sys::errno::*;
use stet_unix::sysv::{self, limit, Perm, SemBuf, IPC_NOWAIT, SEM_UNDO};

/// A set's semaphores.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SemSet {
    /// Values (0..=`SEMVMX`).
    pub vals: Vec<u16>,
    /// The pid of the last operation on each.
    pub pids: Vec<u32>,
    /// Last `semop`, last change (s since 1970).
    pub otime: u64,
    #[allow(missing_docs)]
    pub ctime: u64,
}

/// A process's `SEM_UNDO` adjustments to one set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undo {
    /// The process.
    pub pid: u32,
    /// The set.
    pub semid: i32,
    /// What its end adds to each value (`semadj`).
    pub adj: Vec<i16>,
}

/// What operations on a set came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// All done.
    Done,
    /// Operation `i` cannot be done yet: wait.
    Block(usize),
}

/// What a parked `semop` came to when its set changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woken {
    /// Done: answer 0.
    Done,
    /// It failed (`ERANGE`, `ENOMEM`).
    Failed(i64),
    /// It could be done now, but its caller will ask again (not done).
    Retry,
}

/// `semctl`'s answer: its result, bytes of the out buffer to answer, and
/// whether values changed (parked operations may go on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ctl {
    /// The call's result.
    pub ret: u64,
    /// Bytes written to the out buffer.
    pub len: usize,
    /// Values changed.
    pub changed: bool,
    /// The set's size (`GETALL`, `SETALL`'s question).
    pub nsems: u64,
}

fn zeros<T: Copy>(n: usize, v: T) -> Result<Vec<T>, i64> {
    let mut x = Vec::new();
    x.try_reserve_exact(n).map_err(|_| ENOMEM)?;
    x.resize(n, v);
    Ok(x)
}

impl SemSet {
    /// `n` semaphores of value 0.
    pub fn new(n: usize, now: u64) -> Result<SemSet, i64> {
        Ok(SemSet {
            vals: zeros(n, 0)?,
            pids: zeros(n, 0)?,
            otime: 0,
            ctime: now,
        })
    }

    /// Does `sops` in order, with `adj` the caller's `SEM_UNDO`
    /// adjustments to this set (empty when no operation asks for them):
    /// all, or none if one must wait (`Block`) or would leave a value or
    /// an adjustment out of range (`ERANGE`). With `apply` false only
    /// says, changing nothing.
    pub fn try_ops(
        &mut self,
        sops: &[SemBuf],
        adj: &mut [i16],
        pid: u32,
        apply: bool,
    ) -> Result<Outcome, i64> {
        let mut done = 0;
        let mut r = Ok(Outcome::Done);
        for (i, s) in sops.iter().enumerate() {
            let n = s.num as usize;
            let Some(&cur) = self.vals.get(n) else {
                r = Err(EFBIG);
                break;
            };
            let cur = cur as i32;
            if s.op == 0 {
                if cur != 0 {
                    r = Ok(Outcome::Block(i));
                    break;
                }
                done += 1;
                continue;
            }
            let v = cur + s.op as i32;
            if v < 0 {
                r = Ok(Outcome::Block(i));
                break;
            }
            if v > limit::SEMVMX {
                r = Err(ERANGE);
                break;
            }
            if s.flg as u32 & SEM_UNDO != 0 {
                if let Some(a) = adj.get_mut(n) {
                    let u = *a as i32 - s.op as i32;
                    if !(-limit::SEMAEM - 1..=limit::SEMAEM).contains(&u) {
                        r = Err(ERANGE);
                        break;
                    }
                    *a = u as i16;
                }
            }
            self.vals[n] = v as u16;
            done += 1;
        }
        if r != Ok(Outcome::Done) || !apply {
            // Undone, last first.
            for s in sops[..done].iter().rev() {
                let n = s.num as usize;
                if s.op == 0 {
                    continue;
                }
                self.vals[n] = (self.vals[n] as i32 - s.op as i32) as u16;
                if s.flg as u32 & SEM_UNDO != 0 {
                    if let Some(a) = adj.get_mut(n) {
                        *a = (*a as i32 + s.op as i32) as i16;
                    }
                }
            }
        } else {
            for s in sops {
                self.pids[s.num as usize] = pid;
            }
        }
        r
    }

    /// A process's end: its adjustments added (each value kept within 0
    /// and `SEMVMX`) → whether any changed.
    pub fn undo(&mut self, adj: &[i16], pid: u32, _now: u64) -> bool {
        let mut any = false;
        for (i, &a) in adj.iter().enumerate().take(self.vals.len()) {
            if a != 0 {
                let v = (self.vals[i] as i32 + a as i32).clamp(0, limit::SEMVMX);
                self.vals[i] = v as u16;
                self.pids[i] = pid;
                any = true;
            }
        }
        any
    }
}

impl Ipc {
    /// `semget`'s checks before a set is made: `nsems` out of
    /// `0..=SEMMSL` is `EINVAL`, and so is 0 for a new set or more than
    /// the key's set has; `ENOSPC` past the caller's caps or `SEMMNI` sets
    /// or `SEMMNS` semaphores in all.
    pub fn sem_lookup(&self, key: i32, nsems: i64, flags: u32, c: &Cred) -> Result<Found, i64> {
        if !(0..=limit::SEMMSL as i64).contains(&nsems) {
            return Err(EINVAL);
        }
        let f = Self::lookup(&self.sem, key, flags, c, |s| {
            if nsems as usize > s.vals.len() {
                Err(EINVAL)
            } else {
                Ok(())
            }
        })?;
        if f == Found::Create {
            if nsems == 0 {
                return Err(EINVAL);
            }
            // Linux's system-wide limits: `SEMMNI` sets, `SEMMNS`
            // semaphores; then the caller's caps (which cannot be
            // passed while all users' sets are within them).
            let n = nsems as usize;
            let (all_sets, all_sems) = (self.sem.in_use(), self.sem_count);
            if all_sets >= limit::SEMMNI as usize || all_sems + n > limit::SEMMNS as usize {
                return Err(ENOSPC);
            }
            if all_sets >= self.caps.objects || all_sems + n > self.caps.sems {
                let uid = c.uid[EFF];
                let mine = self.sem.iter().filter(|(_, e)| e.perm.cuid == uid);
                let (sets, sems) =
                    mine.fold((0, 0), |(a, b), (_, e)| (a + 1, b + e.obj.vals.len()));
                if sets >= self.caps.objects || sems + n > self.caps.sems {
                    return Err(ENOSPC);
                }
            }
        }
        Ok(f)
    }

    /// `semget`: a new set of `nsems` → its id.
    pub fn sem_create(
        &mut self,
        key: i32,
        nsems: i64,
        flags: u32,
        c: &Cred,
        now: u64,
    ) -> Result<i32, i64> {
        let set = SemSet::new(nsems.clamp(0, limit::SEMMSL as i64) as usize, now)?;
        let n = set.vals.len();
        let id = self.sem.insert(Perm::new(key, c, flags, 0), set)?;
        self.sem_count += n;
        Ok(id)
    }

    /// The index of `pid`'s adjustments to set `id` of `n` semaphores,
    /// made if it has none.
    fn undo_for(&mut self, pid: u32, id: i32, n: usize) -> Result<usize, i64> {
        if let Some(i) = self.undo.iter().position(|u| u.pid == pid && u.semid == id) {
            return Ok(i);
        }
        let adj = zeros(n, 0)?;
        self.undo.try_reserve(1).map_err(|_| ENOMEM)?;
        self.undo.push(Undo {
            pid,
            semid: id,
            adj,
        });
        Ok(self.undo.len() - 1)
    }

    /// Does `sops` on set `id` with `undo` the caller's adjustments.
    fn ops_on(
        &mut self,
        id: i32,
        sops: &[SemBuf],
        pid: u32,
        apply: bool,
        now: u64,
    ) -> Result<Outcome, i64> {
        let n = self.sem.get(id as i64)?.obj.vals.len();
        let u = if sops.iter().any(|s| s.flg as u32 & SEM_UNDO != 0) {
            Some(self.undo_for(pid, id, n)?)
        } else {
            None
        };
        let Ipc { sem, undo, .. } = self;
        let set = &mut sem.get_mut(id as i64)?.obj;
        let adj: &mut [i16] = match u {
            Some(i) => &mut undo[i].adj,
            None => &mut [],
        };
        let r = set.try_ops(sops, adj, pid, apply)?;
        if r == Outcome::Done && apply {
            set.otime = now;
        }
        Ok(r)
    }

    /// `semop` on set `id` by `pid`: `EINVAL` for no operations or a bad
    /// id, `E2BIG` past `SEMOPM`, `EFBIG` for a semaphore past the set,
    /// `EACCES` without write (read for waits for zero only); then done,
    /// or `Block` (the caller parks it), or `EAGAIN` when the operation
    /// that cannot be done says `IPC_NOWAIT`, or `ERANGE`.
    pub fn semop(
        &mut self,
        id: i64,
        sops: &[SemBuf],
        c: &Cred,
        pid: u32,
        now: u64,
    ) -> Result<Outcome, i64> {
        if sops.is_empty() || id < 0 {
            return Err(EINVAL);
        }
        if sops.len() > limit::SEMOPM as usize {
            return Err(E2BIG);
        }
        let e = self.sem.get(id)?;
        if sops.iter().any(|s| s.num as usize >= e.obj.vals.len()) {
            return Err(EFBIG);
        }
        let alter = sops.iter().any(|s| s.op != 0);
        e.perm.check(c, if alter { 0o222 } else { 0o444 })?;
        match self.ops_on(id as i32, sops, pid, true, now)? {
            Outcome::Block(i) if sops[i].flg as u32 & IPC_NOWAIT != 0 => Err(EAGAIN),
            o => Ok(o),
        }
    }

    /// Set `id` changed: the parked operations on it that can be done now
    /// are, in the order they began (from the first again after one that
    /// changed a value) → each one's ticket and what it came to. `live`
    /// says which are gone (forgotten) and which will ask again (their
    /// operations are not done for them: `Retry`).
    pub fn sem_update(
        &mut self,
        id: i32,
        now: u64,
        live: impl Fn(u32) -> Live,
    ) -> Vec<(u32, Woken)> {
        let mut out = Vec::new();
        let mut k = 0;
        while k < self.pending.len() {
            if !matches!(self.pending[k].wants, Wants::Sem { id: s, .. } if s == id) {
                k += 1;
                continue;
            }
            let l = live(self.pending[k].ticket);
            let mut p = self.pending.remove(k);
            if l == Live::Gone {
                continue;
            }
            let Wants::Sem { sops, blocking, .. } = &mut p.wants else {
                continue;
            };
            let r = self.ops_on(id, sops, p.pid, l == Live::Answer, now);
            let woken = match r {
                Ok(Outcome::Block(i)) => {
                    *blocking = i;
                    // (Its place was freed above: there is room.)
                    self.pending.insert(k, p);
                    k += 1;
                    continue;
                }
                Ok(Outcome::Done) if l == Live::Retry => Woken::Retry,
                Ok(Outcome::Done) => {
                    if sops.iter().any(|s| s.op != 0) {
                        k = 0;
                    }
                    Woken::Done
                }
                Err(e) => Woken::Failed(e),
            };
            if out.try_reserve(1).is_ok() {
                out.push((p.ticket, woken));
            }
        }
        out
    }

    /// `GETNCNT` (`zero` false) or `GETZCNT` of semaphore `num` of set
    /// `id`: the parked operations waiting on it to grow (to be zero).
    pub fn sem_waiting(&self, id: i32, num: u16, zero: bool) -> u64 {
        self.pending
            .iter()
            .filter(|p| match &p.wants {
                Wants::Sem {
                    id: s,
                    sops,
                    blocking,
                } if *s == id => sops
                    .get(*blocking)
                    .is_some_and(|o| o.num == num && (o.op == 0) == zero),
                _ => false,
            })
            .count() as u64
    }

    /// `semctl(id, num, cmd, arg)` for every command but the information
    /// ones: `inp` is `IPC_SET`'s structure or `SETALL`'s values, `out`
    /// takes the answer's bytes. `SETALL` with `arg` 0 only asks the
    /// set's size (write permission checked); `GETALL` answers the values
    /// from `arg` on. Removing a set removes every adjustment to it (the
    /// caller answers its parked operations `EIDRM`).
    #[allow(clippy::too_many_arguments)]
    pub fn sem_ctl(
        &mut self,
        id: i64,
        num: i64,
        cmd: u32,
        arg: u64,
        inp: &[u8],
        out: &mut [u8],
        c: &Cred,
        pid: u32,
        now: u64,
    ) -> Result<Ctl, i64> {
        use sysv::*;
        if cmd == SEM_STAT || cmd == SEM_STAT_ANY {
            let (i, e) = self.sem.at(id)?;
            if cmd == SEM_STAT {
                e.perm.check(c, 0o444)?;
            }
            write_semid_ds(
                out,
                &e.perm,
                e.obj.otime,
                e.obj.ctime,
                e.obj.vals.len() as u64,
            );
            return Ok(Ctl {
                ret: i as u64,
                len: size::SEMID_DS,
                ..Ctl::default()
            });
        }
        if id < 0 {
            return Err(EINVAL);
        }
        if cmd == SETVAL {
            let v = arg as u32 as i32;
            if !(0..=limit::SEMVMX).contains(&v) {
                return Err(ERANGE);
            }
            let e = self.sem.get_mut(id)?;
            let n = usize::try_from(num)
                .ok()
                .filter(|&n| n < e.obj.vals.len())
                .ok_or(EINVAL)?;
            e.perm.check(c, 0o222)?;
            e.obj.vals[n] = v as u16;
            e.obj.pids[n] = pid;
            e.obj.ctime = now;
            for u in self.undo.iter_mut().filter(|u| u.semid as i64 == id) {
                if let Some(a) = u.adj.get_mut(n) {
                    *a = 0;
                }
            }
            return Ok(Ctl {
                changed: true,
                ..Ctl::default()
            });
        }
        let e = self.sem.get_mut(id)?;
        let nsems = e.obj.vals.len();
        match cmd {
            IPC_STAT => {
                e.perm.check(c, 0o444)?;
                write_semid_ds(out, &e.perm, e.obj.otime, e.obj.ctime, nsems as u64);
                Ok(Ctl {
                    len: size::SEMID_DS,
                    ..Ctl::default()
                })
            }
            IPC_SET => {
                e.perm.owner(c)?;
                e.perm.set_from(inp);
                e.obj.ctime = now;
                Ok(Ctl::default())
            }
            IPC_RMID => {
                e.perm.owner(c)?;
                if let Some(e) = self.sem.remove(id) {
                    self.sem_count -= e.obj.vals.len();
                }
                self.undo.retain(|u| u.semid as i64 != id);
                Ok(Ctl::default())
            }
            GETALL => {
                e.perm.check(c, 0o444)?;
                let from = (arg as usize).min(nsems);
                let n = (nsems - from).min(out.len() / 2);
                for (i, v) in e.obj.vals[from..from + n].iter().enumerate() {
                    out[2 * i..2 * i + 2].copy_from_slice(&v.to_le_bytes());
                }
                Ok(Ctl {
                    len: 2 * n,
                    nsems: nsems as u64,
                    ..Ctl::default()
                })
            }
            SETALL => {
                e.perm.check(c, 0o222)?;
                if arg == 0 {
                    return Ok(Ctl {
                        nsems: nsems as u64,
                        ..Ctl::default()
                    });
                }
                if inp.len() != 2 * nsems {
                    return Err(EINVAL);
                }
                let vals = inp
                    .chunks_exact(2)
                    .map(|b| u16::from_le_bytes([b[0], b[1]]));
                if vals.clone().any(|v| v as i32 > limit::SEMVMX) {
                    return Err(ERANGE);
                }
                for (i, v) in vals.enumerate() {
                    e.obj.vals[i] = v;
                    e.obj.pids[i] = pid;
                }
                e.obj.ctime = now;
                for u in self.undo.iter_mut().filter(|u| u.semid as i64 == id) {
                    u.adj.fill(0);
                }
                Ok(Ctl {
                    changed: true,
                    nsems: nsems as u64,
                    ..Ctl::default()
                })
            }
            GETVAL | GETPID | GETNCNT | GETZCNT => {
                e.perm.check(c, 0o444)?;
                let n = usize::try_from(num)
                    .ok()
                    .filter(|&n| n < nsems)
                    .ok_or(EINVAL)?;
                let ret = match cmd {
                    GETVAL => e.obj.vals[n] as u64,
                    GETPID => e.obj.pids[n] as u64,
                    _ => self.sem_waiting(id as i32, n as u16, cmd == GETZCNT),
                };
                Ok(Ctl {
                    ret,
                    ..Ctl::default()
                })
            }
            _ => Err(EINVAL),
        }
    }

    /// `SEM_INFO`'s figures: sets, semaphores in all.
    pub fn sem_usage(&self) -> (u32, u32) {
        let sems: usize = self.sem.iter().map(|(_, e)| e.obj.vals.len()).sum();
        (self.sem.in_use() as u32, sems as u32)
    }
}
