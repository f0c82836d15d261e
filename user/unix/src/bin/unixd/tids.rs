//! Thread ids: numbers of the pid space (as on Linux, a thread's id is
//! never a live process's pid, nor another thread's), handed to a
//! threaded process's keeper (`TID`) and free again when the thread ends,
//! the process `execve`s or is reaped. The threads themselves are the
//! keeper's business.

use crate::Unixd;
use stet_unix::sys::errno::*;

impl Unixd<'_> {
    /// Whether `n` is a live pid or thread id.
    pub(crate) fn id_taken(&self, n: u32) -> bool {
        self.procs.iter().any(|p| p.pid == n) || self.tids.iter().any(|t| t.0 == n)
    }

    /// The first free id from `next_pid` on, below `pid_max` and past it
    /// from 2 again (`EAGAIN`: every one is taken).
    pub(crate) fn free_id(&self) -> Result<u32, i64> {
        let max = self.pid_max;
        let mut n = self.next_pid;
        for _ in 0..max {
            if n < 2 || n >= max {
                n = 2;
            }
            if !self.id_taken(n) {
                return Ok(n);
            }
            n += 1;
        }
        Err(EAGAIN)
    }

    /// The id after `n` to try next.
    pub(crate) fn after(&self, n: u32) -> u32 {
        if n.saturating_add(1) >= self.pid_max {
            2
        } else {
            n + 1
        }
    }

    /// `TID`.
    pub(crate) fn tid_order(&mut self, pid: u32, op: u64, tid: u64) -> Result<u64, i64> {
        self.proc_of(pid)?;
        match op {
            0 => {
                let n = self.free_id()?;
                self.tids.try_reserve(1).map_err(|_| EAGAIN)?;
                if self.tids.len() >= crate::keys::MAX_PROCS * 4 {
                    return Err(EAGAIN);
                }
                self.tids.push((n, pid));
                self.next_pid = self.after(n);
                self.tasks_changed(pid);
                Ok(n as u64)
            }
            1 => {
                let i = self
                    .tids
                    .iter()
                    .position(|t| t.0 as u64 == tid && t.1 == pid)
                    .ok_or(ESRCH)?;
                self.tids.swap_remove(i);
                self.keyring.thread_exit(pid, tid as u32);
                self.tasks_changed(pid);
                Ok(0)
            }
            2 => {
                self.free_tids(pid);
                Ok(0)
            }
            _ => Err(EINVAL),
        }
    }

    /// Every thread id of `pid` is free again.
    pub(crate) fn free_tids(&mut self, pid: u32) {
        while let Some(i) = self.tids.iter().position(|t| t.1 == pid) {
            self.tids.swap_remove(i);
            self.tasks_changed(pid);
        }
    }

    /// How many threads `pid` has (`/proc/<pid>/status`).
    pub(crate) fn thread_count(&self, pid: u32) -> usize {
        1 + self.tids.iter().filter(|t| t.1 == pid).count()
    }
}
