//! POSIX timers of the process (`timer_create`, `timer_settime`,
//! `timer_gettime`, `timer_getoverrun`, `timer_delete`): unixd keeps and
//! times them (`PTIMER`), this checks the arguments as Linux does.

use crate::fds::{result, ux};
use crate::space::Touch;
use crate::Keeper;
use stet_rt::key::Msg;
use stet_unix::proto::{self, ptimer as op};
use stet_unix::sys::errno::*;

type R = Result<u64, i64>;

/// `sigevent`'s `sigev_notify`.
const SIGEV_SIGNAL: u32 = 0;
const SIGEV_NONE: u32 = 1;
const SIGEV_THREAD: u32 = 2;
const SIGEV_THREAD_ID: u32 = 4;

impl Keeper {
    /// `timer_create(clock, sevp, timerid)`.
    pub fn timer_create(&mut self, clock: u64, sevp: u64, timerid: u64) -> R {
        // REALTIME, MONOTONIC, PROCESS_CPUTIME, THREAD_CPUTIME, BOOTTIME
        // (the alarm ones for root); a CPU-time clock is timed as wall
        // time (one meter runs every process: no time of its own).
        match clock as u32 {
            0 | 1 | 2 | 3 | 7 | 11 => {}
            8 | 9 if self.cred.capable(stet_unix::cred::cap::WAKE_ALARM) => {}
            8 | 9 => return Err(EPERM),
            // Another process's or thread's CPU-time clock.
            c if (c as i32) < 0 => {
                self.clock_of(clock)?;
            }
            _ => return Err(EINVAL),
        }
        let sig = if sevp == 0 {
            stet_unix::sys::sig::SIGALRM as u32
        } else {
            let mut b = [0u8; 64];
            self.space.read(sevp, &mut b).map_err(Touch::errno)?;
            let signo = u32::from_le_bytes(b[8..12].try_into().unwrap_or_default());
            let notify = u32::from_le_bytes(b[12..16].try_into().unwrap_or_default());
            match notify {
                SIGEV_NONE => 0,
                // SIGEV_THREAD is the C library's (a thread it makes asks
                // SIGEV_THREAD_ID); the signal goes to the process.
                SIGEV_SIGNAL | SIGEV_THREAD_ID if (1..=64).contains(&signo) => signo,
                SIGEV_THREAD => return Err(EINVAL),
                _ => return Err(EINVAL),
            }
        };
        self.space.touch(timerid, 4, true).map_err(Touch::errno)?;
        let id = ux(
            proto::PTIMER,
            [op::CREATE, sig as u64 | (clock as u32 as u64) << 32, 0, 0],
            &[],
        )
        .0?;
        self.ptimers_made = true;
        self.space
            .write(timerid, &(id as u32).to_le_bytes())
            .map_err(Touch::errno)?;
        Ok(0)
    }

    /// `timer_settime(id, flags, new, old)`, and `timer_gettime(id, cur)`
    /// (`new` 0, `flags` `u64::MAX`).
    pub fn timer_settime(&mut self, id: u64, flags: u64, new: u64, old: u64) -> R {
        // A timer id is a C int: a negative one is none; so is a NULL new
        // value for `timer_settime` (Linux: EINVAL).
        if (id as u32 as i32) < 0 || (new == 0 && flags != u64::MAX) {
            return Err(EINVAL);
        }
        let id = id as u32 as u64;
        let flags = if flags == u64::MAX { 0 } else { flags };
        if flags & !1 != 0 {
            return Err(EINVAL);
        }
        let mut set = None;
        if new != 0 {
            let interval = self.timespec(new)?;
            let value = self.timespec(new + 16)?;
            set = Some((interval, value));
        }
        let mut s = [0u8; 16];
        let (order, w2) = match set {
            Some((i, v)) => {
                s[..8].copy_from_slice(&i.to_le_bytes());
                s[8..].copy_from_slice(&(flags & 1).to_le_bytes());
                (op::SET, v)
            }
            None => (op::GET, 0),
        };
        let mut out = [0u8; 16];
        let a = Msg::new(crate::slots::UNIXD, proto::PTIMER)
            .words([order, id, w2, 0])
            .string(if set.is_some() { &s[..] } else { &[] })
            .call_into(&mut out);
        result(&a).unwrap_or(Err(EIO))?;
        if old != 0 {
            let left = u64::from_le_bytes(out[..8].try_into().unwrap_or_default());
            let iv = u64::from_le_bytes(out[8..].try_into().unwrap_or_default());
            let b = stet_unix::clockid::itimerspec(iv, left);
            self.space.write(old, &b).map_err(Touch::errno)?;
        }
        Ok(0)
    }

    /// `timer_gettime(id, cur)`: a NULL `cur` is `EFAULT`.
    pub fn timer_gettime(&mut self, id: u64, cur: u64) -> R {
        if (id as u32 as i32) < 0 {
            return Err(EINVAL);
        }
        if cur == 0 {
            // Linux looks the timer up first.
            self.timer_settime(id, u64::MAX, 0, 0)?;
            return Err(EFAULT);
        }
        self.timer_settime(id, u64::MAX, 0, cur)
    }

    /// `timer_getoverrun(id)`.
    pub fn timer_getoverrun(&mut self, id: u64) -> R {
        ux(proto::PTIMER, [op::OVERRUN, id as u32 as u64, 0, 0], &[]).0
    }

    /// `timer_delete(id)`.
    pub fn timer_delete(&mut self, id: u64) -> R {
        ux(proto::PTIMER, [op::DELETE, id as u32 as u64, 0, 0], &[]).0
    }
}
