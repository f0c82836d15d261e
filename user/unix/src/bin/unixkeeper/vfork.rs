//! `vfork`, and `clone` with `CLONE_VFORK` (glibc's and musl's
//! `posix_spawn`, Python's `subprocess`): as vfork(2) says, the child
//! shares the parent's memory (`CLONE_VM`) and the calling thread is
//! suspended until the child runs `execve` or ends. So what the child
//! writes before then — `posix_spawn`'s child puts its `execve` error in
//! the parent's memory — is what the parent reads after.
//!
//! The child is built as by `fork`, except that the parent's own pages
//! are not made copy-on-write but stay writable and go into the child's
//! tree with the same read-write keys (`Space::share_own_pages` with
//! `vm`); unixd counts their holders as for copy-on-write, so the child's
//! `execve` or end lets go of them and the parent is their only holder
//! again. Then the parent's keeper waits in unixd (`VFORK`) until the
//! child's new program is in place, or it has ended; only `SIGKILL` ends
//! the wait (Linux's killable wait), other signals come after.
//!
//! What the child shares is the memory that exists when it starts: pages
//! it makes (a stack page never touched before, an `mmap`) and mappings
//! it changes are its own. A page the parent itself shares copy-on-write
//! with another process, or a small process's page copied from its own
//! bank at its `fork` (`LOCAL`), is first made the parent's own writable
//! page (`Space::own_for_vm`), so it is shared too. A threaded
//! parent's other threads wait with the calling one while the keeper is
//! held.

use crate::fds::result;
use crate::slots::UNIXD;
use crate::Keeper;
use stet_rt::abi::domain::NREGS;
use stet_rt::key::Msg;
use stet_unix::proto;
use stet_unix::sys::sig::SIGKILL;

impl Keeper {
    /// `vfork`: a child sharing this process's memory; back when the child
    /// has run `execve` or ended → its pid.
    pub fn vfork(&mut self, regs: &[u64; NREGS]) -> Result<u64, i64> {
        let child = self.fork_with_stack(regs, 0, true, true)?;
        self.vfork_wait(child);
        Ok(child)
    }

    /// Waits until child `child` has run `execve` or ended (or this
    /// process is killed: the pending `SIGKILL` then ends it).
    pub fn vfork_wait(&mut self, child: u64) {
        let killed = 1 << (SIGKILL - 1);
        loop {
            let a = Msg::new(UNIXD, proto::VFORK)
                .words([child, 0, 0, killed])
                .call();
            if result(&a).is_some() {
                return;
            }
        }
    }
}
