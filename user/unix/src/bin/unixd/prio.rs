//! Nice values (`getpriority`, `setpriority`) and scheduling policies
//! (`sched_setscheduler`, `sched_setattr` and their readers, `SCHED`):
//! kept per process here, where processes can be found by group and by
//! user. The scheduler runs every domain alike, so a nice value or a
//! policy is only what the process and `/proc` are told; the permission
//! rules are Linux's (`stet_unix::sched`).

use crate::{Reply, Unixd};
use stet_unix::cred::cap;
use stet_unix::proto::sched_op;
use stet_unix::sched;
use stet_unix::sys::errno::*;

/// `PRIO_PROCESS`, `PRIO_PGRP`, `PRIO_USER`.
const PRIO_PROCESS: u64 = 0;
const PRIO_PGRP: u64 = 1;
const PRIO_USER: u64 = 2;

impl Unixd<'_> {
    /// `PRIO`: `w0` 0 get / 1 set, `w1` which, `w2` who, `w3`… (the nice
    /// value to set in `w1`'s upper half) → get: `20 - nice` of the
    /// highest priority found (the raw call's answer); set: 0.
    pub(crate) fn prio(
        &mut self,
        caller: u32,
        op: u64,
        which_nice: u64,
        who: u64,
    ) -> Result<u64, i64> {
        let me = self.proc_of(caller)?;
        let which = which_nice & 0xffff_ffff;
        let who = who as u32 as i32;
        if who < 0 {
            return Err(ESRCH);
        }
        let my = self.procs[me];
        let target = |p: &crate::procs::Proc| -> bool {
            if p.pid == 0 || p.zombie {
                return false;
            }
            match which {
                PRIO_PROCESS => p.pid == if who == 0 { caller } else { who as u32 },
                PRIO_PGRP => p.pgid == if who == 0 { my.pgid } else { who as u32 },
                _ => p.cred.uid[0] == if who == 0 { my.cred.uid[1] } else { who as u32 },
            }
        };
        if which > PRIO_USER {
            return Err(EINVAL);
        }
        if op == 0 {
            let best = self
                .procs
                .iter()
                .filter(|p| target(p))
                .map(|p| p.nice)
                .min();
            return best.map(|n| (20 - n as i64) as u64).ok_or(ESRCH);
        }
        let nice = ((which_nice >> 32) as u32 as i32).clamp(-20, 19) as i8;
        let mut found = false;
        let mut err = 0;
        for i in 0..self.procs.len() {
            let p = self.procs[i];
            if !target(&p) {
                continue;
            }
            found = true;
            let c = my.cred;
            if !c.capable(cap::SYS_NICE) && c.uid[1] != p.cred.uid[0] && c.uid[1] != p.cred.uid[1] {
                err = EPERM;
                continue;
            }
            if nice < p.nice && !c.capable(cap::SYS_NICE) {
                err = EACCES;
                continue;
            }
            self.procs[i].nice = nice;
        }
        match (found, err) {
            (false, _) => Err(ESRCH),
            (true, 0) => Ok(0),
            (true, e) => Err(e),
        }
    }

    /// The process a `sched_*` call names: 0 the caller, a pid, or a
    /// thread id (its process).
    fn sched_target(&mut self, caller: u32, who: u64) -> Result<usize, i64> {
        let me = self.proc_of(caller)?;
        if who == 0 {
            return Ok(me);
        }
        let who = u32::try_from(who).map_err(|_| ESRCH)?;
        let pid = self.tids.iter().find(|t| t.0 == who).map_or(who, |t| t.1);
        self.procs
            .iter()
            .position(|p| p.pid == pid && pid != 0)
            .ok_or(ESRCH)
    }

    /// `SCHED` (`proto::SCHED`).
    pub(crate) fn sched_order(
        &mut self,
        caller: u32,
        w: [u64; 4],
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let t = self.sched_target(caller, w[1])?;
        let p = self.procs[t];
        if w[0] == sched_op::GET {
            let c = p.sched;
            for (i, v) in c.dl.iter().enumerate() {
                out[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
            }
            let v = c.policy as u64
                | (c.prio as u64) << 8
                | (c.reset_on_fork as u64) << 16
                | ((p.nice as i64 + 20) as u64) << 24;
            return Ok(Reply::Now([v, 0, 0], 24, false));
        }
        if w[0] != sched_op::SET {
            return Err(EINVAL);
        }
        let a = w[2];
        let keep_policy = a & 1 << 17 != 0;
        let keep_params = a & 1 << 18 != 0;
        let mut new = p.sched;
        if !keep_policy {
            new.policy = (a & 0xff) as u8;
            new.reset_on_fork = a & 1 << 16 != 0;
        }
        let mut dl = [0u64; 3];
        for (i, d) in dl.iter_mut().enumerate() {
            if let Some(b) = s.get(i * 8..i * 8 + 8) {
                *d = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
            }
        }
        if !keep_params {
            new.prio = ((a >> 8) & 0xff) as u8;
            new.dl = if new.policy as u32 == sched::DEADLINE {
                dl
            } else {
                [0; 3]
            };
        }
        sched::check(new.policy as u32, new.prio as u32, new.dl)?;
        let fair = !sched::realtime(new.policy as u32) && new.policy as u32 != sched::DEADLINE;
        let nice = if a & 1 << 19 != 0 && !keep_params && fair {
            ((a >> 24) as u8 as i8).clamp(-20, 19)
        } else {
            p.nice
        };
        let me = self.proc_of(caller)?;
        let c = self.procs[me].cred;
        let nice_cap = c.capable(cap::SYS_NICE);
        sched::may_change(c.uid[1], nice_cap, [p.cred.uid[0], p.cred.uid[1]])?;
        if !nice_cap && !sched::unprivileged_ok(&p.sched, p.nice, &new, nice, w[3]) {
            return Err(EPERM);
        }
        self.procs[t].sched = new;
        self.procs[t].nice = nice;
        Ok(Reply::Now([0, 0, 0], 0, false))
    }
}
