//! Nice values (`getpriority`, `setpriority`): kept per process here,
//! where processes can be found by group and by user. The scheduler runs
//! every domain alike, so a nice value is only what the process and
//! `/proc` are told; the permission rules are Linux's.

use crate::Unixd;
use stet_unix::cred::cap;
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
}
