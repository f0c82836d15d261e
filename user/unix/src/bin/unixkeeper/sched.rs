//! Scheduling policies (`sched_setscheduler`, `sched_setparam`,
//! `sched_getscheduler`, `sched_getparam`, `sched_setattr`,
//! `sched_getattr`, `sched_rr_get_interval`, `sched_get_priority_*`):
//! the arguments checked here as Linux checks them, the values kept by
//! unixd (`proto::SCHED`) with its permission rules.

use crate::fds::ux;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::key::Msg;
use stet_unix::proto::{self, sched_op};
use stet_unix::sched::{self, flag, ATTR_SIZE_VER0, ATTR_SIZE_VER1};
use stet_unix::sys::errno::*;
use stet_unix::sys::rlimit::RLIMIT_RTPRIO;

type R = Result<u64, i64>;

/// A process's policy as unixd tells it.
struct Got {
    policy: u32,
    prio: u32,
    reset: bool,
    nice: i32,
    dl: [u64; 3],
}

/// A pid argument: a negative one is `EINVAL`.
fn pid_arg(pid: u64) -> R {
    if (pid as u32 as i32) < 0 {
        Err(EINVAL)
    } else {
        Ok(pid as u32 as u64)
    }
}

impl Keeper {
    fn sched_get(&mut self, pid: u64) -> Result<Got, i64> {
        let mut out = [0u8; 24];
        let a = Msg::new(crate::slots::UNIXD, proto::SCHED)
            .words([sched_op::GET, pid, 0, 0])
            .call_into(&mut out);
        let v = crate::fds::result(&a).unwrap_or(Err(EIO))?;
        let mut dl = [0u64; 3];
        for (i, d) in dl.iter_mut().enumerate() {
            *d = u64::from_le_bytes(out[i * 8..i * 8 + 8].try_into().unwrap_or_default());
        }
        Ok(Got {
            policy: (v & 0xff) as u32,
            prio: ((v >> 8) & 0xff) as u32,
            reset: v & 1 << 16 != 0,
            nice: ((v >> 24) & 0xff) as i32 - 20,
            dl,
        })
    }

    fn sched_set(&mut self, pid: u64, w2: u64, dl: [u64; 3]) -> R {
        let mut s = [0u8; 24];
        for (i, d) in dl.iter().enumerate() {
            s[i * 8..i * 8 + 8].copy_from_slice(&d.to_le_bytes());
        }
        let rt = self.rlimits[RLIMIT_RTPRIO as usize][0];
        ux(proto::SCHED, [sched_op::SET, pid, w2, rt], &s)
            .0
            .map(|_| 0)
    }

    /// `sched_setscheduler(pid, policy, param)` (`policy` `None`:
    /// `sched_setparam`, the policy kept).
    pub fn sched_setscheduler(&mut self, pid: u64, policy: Option<u64>, param: u64) -> R {
        let pid = pid_arg(pid)?;
        if param == 0 {
            return Err(EINVAL);
        }
        let mut w2 = 0;
        if let Some(p) = policy {
            let p = p as u32;
            let reset = p & sched::RESET_ON_FORK != 0;
            let p = p & !sched::RESET_ON_FORK;
            // sched_setscheduler cannot ask for SCHED_DEADLINE.
            if (p as i32) < 0 || !sched::known(p) || p == sched::DEADLINE {
                return Err(EINVAL);
            }
            w2 = p as u64 | (reset as u64) << 16;
        } else {
            w2 |= 1 << 17;
        }
        let mut b = [0u8; 4];
        self.space.read(param, &mut b).map_err(Touch::errno)?;
        let prio = i32::from_le_bytes(b);
        if !(0..=99).contains(&prio) {
            return Err(EINVAL);
        }
        self.sched_set(pid, w2 | (prio as u64) << 8, [0; 3])
    }

    /// `sched_getscheduler(pid)`.
    pub fn sched_getscheduler(&mut self, pid: u64) -> R {
        let g = self.sched_get(pid_arg(pid)?)?;
        Ok(g.policy as u64
            | if g.reset {
                sched::RESET_ON_FORK as u64
            } else {
                0
            })
    }

    /// `sched_getparam(pid, param)`.
    pub fn sched_getparam(&mut self, pid: u64, param: u64) -> R {
        let pid = pid_arg(pid)?;
        if param == 0 {
            return Err(EINVAL);
        }
        let g = self.sched_get(pid)?;
        self.space
            .write(param, &g.prio.to_le_bytes())
            .map_err(Touch::errno)?;
        Ok(0)
    }

    /// `sched_rr_get_interval(pid, tp)`.
    pub fn sched_rr_get_interval(&mut self, pid: u64, tp: u64) -> R {
        let g = self.sched_get(pid_arg(pid)?)?;
        let s = sched::Sched {
            policy: g.policy as u8,
            ..sched::Sched::default()
        };
        let ns = s.interval_ns();
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&(ns / 1_000_000_000).to_le_bytes());
        b[8..].copy_from_slice(&(ns % 1_000_000_000).to_le_bytes());
        self.space.write(tp, &b).map_err(Touch::errno)?;
        Ok(0)
    }

    /// `sched_setattr(pid, attr, flags)`.
    pub fn sched_setattr(&mut self, pid: u64, attr: u64, flags: u64) -> R {
        if attr == 0 || (pid as u32 as i32) < 0 || flags as u32 != 0 {
            return Err(EINVAL);
        }
        let pid = pid as u32 as u64;
        let mut sz = [0u8; 4];
        self.space.read(attr, &mut sz).map_err(Touch::errno)?;
        let mut size = u32::from_le_bytes(sz);
        if size == 0 {
            size = ATTR_SIZE_VER0;
        }
        // Too small or more than a page: E2BIG, the size this system
        // knows written back. Bytes past what it knows must be zero.
        let too_big = |k: &mut Self| -> R {
            let _ = k.space.write(attr, &ATTR_SIZE_VER1.to_le_bytes());
            Err(E2BIG)
        };
        if !(ATTR_SIZE_VER0..=4096).contains(&size) {
            return too_big(self);
        }
        let mut b = [0u8; ATTR_SIZE_VER1 as usize];
        let n = size.min(ATTR_SIZE_VER1) as usize;
        self.space.read(attr, &mut b[..n]).map_err(Touch::errno)?;
        let mut at = attr + ATTR_SIZE_VER1 as u64;
        while at < attr + size as u64 {
            let mut rest = [0u8; 64];
            let k = ((attr + size as u64 - at) as usize).min(64);
            self.space.read(at, &mut rest[..k]).map_err(Touch::errno)?;
            if rest[..k].iter().any(|&x| x != 0) {
                return too_big(self);
            }
            at += k as u64;
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or_default());
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap_or_default());
        let policy = u32_at(4);
        let fl = u64_at(8);
        let nice = u32_at(16) as i32;
        let prio = u32_at(20);
        let dl = [u64_at(24), u64_at(32), u64_at(40)];
        if fl & !flag::ALL != 0 {
            return Err(EINVAL);
        }
        let keep_policy = fl & flag::KEEP_POLICY != 0;
        if !keep_policy && (!sched::known(policy) || policy as i32 <= -1) {
            return Err(EINVAL);
        }
        // The utilization clamps are accepted (nothing to clamp); a
        // value above 1024 is not.
        if fl & flag::UTIL_CLAMP_MIN != 0 && size >= ATTR_SIZE_VER1 && u32_at(48) > 1024 {
            return Err(EINVAL);
        }
        if fl & flag::UTIL_CLAMP_MAX != 0 && size >= ATTR_SIZE_VER1 && u32_at(52) > 1024 {
            return Err(EINVAL);
        }
        if prio > 99 {
            return Err(EINVAL);
        }
        let nice = nice.clamp(-20, 19);
        let w2 = policy as u64 & 0xff
            | (prio as u64) << 8
            | ((fl & flag::RESET_ON_FORK != 0) as u64) << 16
            | (keep_policy as u64) << 17
            | ((fl & flag::KEEP_PARAMS != 0) as u64) << 18
            | 1 << 19
            | (nice as i8 as u8 as u64) << 24;
        self.sched_set(pid, w2, dl)
    }

    /// `sched_getattr(pid, attr, size, flags)`.
    pub fn sched_getattr(&mut self, pid: u64, attr: u64, size: u64, flags: u64) -> R {
        let size = size as u32;
        if attr == 0
            || (pid as u32 as i32) < 0
            || flags as u32 != 0
            || !(ATTR_SIZE_VER0..=4096).contains(&size)
        {
            return Err(EINVAL);
        }
        let g = self.sched_get(pid as u32 as u64)?;
        let n = size.min(ATTR_SIZE_VER1);
        let mut b = [0u8; ATTR_SIZE_VER1 as usize];
        b[0..4].copy_from_slice(&n.to_le_bytes());
        b[4..8].copy_from_slice(&g.policy.to_le_bytes());
        let fl = if g.reset { flag::RESET_ON_FORK } else { 0 };
        b[8..16].copy_from_slice(&fl.to_le_bytes());
        let nice = if sched::realtime(g.policy) || g.policy == sched::DEADLINE {
            0
        } else {
            g.nice
        };
        b[16..20].copy_from_slice(&nice.to_le_bytes());
        b[20..24].copy_from_slice(&g.prio.to_le_bytes());
        for (i, d) in g.dl.iter().enumerate() {
            b[24 + i * 8..32 + i * 8].copy_from_slice(&d.to_le_bytes());
        }
        b[52..56].copy_from_slice(&1024u32.to_le_bytes());
        self.space
            .write(attr, &b[..n as usize])
            .map_err(Touch::errno)?;
        Ok(0)
    }
}
