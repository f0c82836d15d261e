//! Resource limits (`prlimit64`, which `getrlimit`/`setrlimit` use in the
//! C libraries): kept per process in its keeper, inherited at `fork` (the
//! child keeper starts as a copy) and kept across `execve`. Enforced:
//! `RLIMIT_NOFILE` (the lowest free descriptor, `dup2`/`dup3`,
//! `F_DUPFD`; at most the descriptor table, `fds::MAX_FDS`) and
//! `RLIMIT_NPROC` (unixd refuses a `FORK` with `EAGAIN` when the system
//! already holds that many processes: one user, so all of them count, as
//! Linux counts a user's) and `RLIMIT_RSS` (most pages present in the
//! process's space: a fresh page past it is `ENOMEM` for a call, `SIGBUS`
//! for a fault, as Linux's out-of-memory end; by default half of the
//! space bank, so one process cannot take the memory every other process,
//! unixd and the keepers need). The others are kept and reported.

use crate::fds::MAX_FDS;
use crate::slots::MEMBANK;
use crate::space::Touch;
use crate::Keeper;
use stet_unix::sys::errno::*;
use stet_unix::sys::rlimit::{RLIMIT_NOFILE, RLIMIT_NPROC, RLIMIT_RSS, RLIMIT_STACK};

/// Resources Linux knows (`RLIM_NLIMITS`).
pub const RESOURCES: usize = 16;
/// No limit.
pub const INFINITY: u64 = u64::MAX;
/// The default `RLIMIT_NPROC`: a quarter of the processes the system
/// holds (unixd's `MAX_PROCS`), so a fork bomb stops with room to spare
/// for a shell to kill it.
pub const DEFAULT_NPROC: u64 = 256;

/// Every process's limits at the start (soft, hard).
pub const fn defaults() -> [[u64; 2]; RESOURCES] {
    let mut l = [[INFINITY, INFINITY]; RESOURCES];
    l[RLIMIT_STACK as usize] = [stet_unix::layout::STACK_MAX, INFINITY];
    l[RLIMIT_NOFILE as usize] = [MAX_FDS as u64, MAX_FDS as u64];
    l[RLIMIT_NPROC as usize] = [DEFAULT_NPROC, DEFAULT_NPROC];
    // Linux's default: 8 MiB may be locked.
    l[stet_unix::sys::rlimit::RLIMIT_MEMLOCK as usize] = [8 << 20, 8 << 20];
    // Linux's default: no core files until a process raises its limit.
    l[stet_unix::sys::rlimit::RLIMIT_CORE as usize] = [0, INFINITY];
    // Real-time priorities only for the privileged (Linux's default 0).
    l[stet_unix::sys::rlimit::RLIMIT_RTPRIO as usize] = [0, 0];
    l
}

/// The part of the space bank's pages one process may hold by default.
const RSS_SHARE: (u64, u64) = (1, 2);

impl Keeper {
    /// The first process's limits that depend on the system: its
    /// `RLIMIT_RSS` (children inherit all of them).
    pub fn size_limits(&mut self) {
        if let Ok([pages, ..]) = stet_rt::bank::capacity(MEMBANK) {
            let rss = pages * RSS_SHARE.0 / RSS_SHARE.1 * 4096;
            self.rlimits[RLIMIT_RSS as usize] = [rss, rss];
        }
        self.apply_limits();
    }

    /// Puts the limits the space enforces into it.
    pub fn apply_limits(&mut self) {
        self.space.rss_pages = self.rlimits[RLIMIT_RSS as usize][0] / 4096;
    }

    /// One past the highest descriptor the process may open.
    pub fn fd_limit(&self) -> usize {
        (self.rlimits[RLIMIT_NOFILE as usize][0]).min(MAX_FDS as u64) as usize
    }

    /// The most processes (`FORK`'s `w0`).
    pub fn nproc_limit(&self) -> u64 {
        self.rlimits[RLIMIT_NPROC as usize][0]
    }

    /// `prlimit64(pid, resource, new, old)`.
    pub fn prlimit(&mut self, pid: u64, res: u64, new: u64, old: u64) -> Result<u64, i64> {
        if pid != 0 && pid != self.pid {
            return Err(ESRCH);
        }
        let r = usize::try_from(res)
            .ok()
            .filter(|&r| r < RESOURCES)
            .ok_or(EINVAL)?;
        let mut want = None;
        if new != 0 {
            let mut b = [0u8; 16];
            self.space.read(new, &mut b).map_err(Touch::errno)?;
            let cur = u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]));
            let max = u64::from_le_bytes(b[8..].try_into().unwrap_or([0; 8]));
            if cur > max {
                return Err(EINVAL);
            }
            // Every process is privileged until users come (issue 10), so
            // a hard limit may go up, but not past what the system can
            // give: the descriptor table.
            if r == RLIMIT_NOFILE as usize && max > MAX_FDS as u64 {
                return Err(EPERM);
            }
            // Raising a hard limit is the superuser's (CAP_SYS_RESOURCE).
            if max > self.rlimits[r][1] && !self.cred.capable(stet_unix::cred::cap::SYS_RESOURCE) {
                return Err(EPERM);
            }
            want = Some([cur, max]);
        }
        if old != 0 {
            let [cur, max] = self.rlimits[r];
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&cur.to_le_bytes());
            b[8..].copy_from_slice(&max.to_le_bytes());
            self.space.write(old, &b).map_err(Touch::errno)?;
        }
        if let Some(l) = want {
            self.rlimits[r] = l;
            self.apply_limits();
        }
        Ok(0)
    }
}
