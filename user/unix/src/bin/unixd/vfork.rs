//! `vfork` (and `clone` with `CLONE_VFORK`): the parent waits until its
//! child has run `execve` or ended (vfork(2): "the calling thread is
//! suspended until the child releases its virtual memory"). The parent's
//! keeper says so in its `FORK` (`FORK_VFORK`), which puts the pair in
//! `vforks`, then waits with `VFORK`; the child's `PROCINFO` (sent once
//! its new program is in place), its end or its `UNFORK` takes the pair
//! out and wakes the parent.

use crate::wait::Wait;
use crate::{word, Reply, Unixd};

impl Unixd<'_> {
    /// `FORK` with `FORK_VFORK` answered `rax` (the child's pid, or
    /// `-errno`) to `parent`.
    pub(crate) fn vfork_begin(&mut self, rax: u64, parent: u32) {
        let child = rax as i64;
        if child > 0 && child <= u32::MAX as i64 && self.vforks.try_reserve(1).is_ok() {
            self.vforks.push((child as u32, parent));
        }
    }

    /// `VFORK`: the caller waits for child `child`.
    pub(crate) fn vfork_wait(&mut self, child: u64) -> Result<Reply, i64> {
        let me = self.caller;
        if self
            .vforks
            .iter()
            .any(|&(c, p)| c as u64 == child && p == me)
        {
            self.park(Wait::Vfork(child as u32))
        } else {
            word(Ok(0))
        }
    }

    /// Process `pid` has run `execve`, ended, or was never started: its
    /// parent, if it waits for that, goes on.
    pub(crate) fn vfork_done(&mut self, pid: u32) {
        let before = self.vforks.len();
        self.vforks.retain(|&(c, _)| c != pid);
        if self.vforks.len() == before {
            return;
        }
        for w in 0..self.waiters.len() {
            if self.waiters[w].on == Wait::Vfork(pid) {
                self.wake(w);
            }
        }
    }
}
