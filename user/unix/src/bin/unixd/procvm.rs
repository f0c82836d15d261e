//! Another process's memory (`process_vm_readv`/`process_vm_writev`):
//! unixd keeps each process's address space (`proto::PROC_SPACE`, a
//! segment key its keeper sends) and hands it, after Linux's permission
//! check, to a keeper that asks (`proto::PROCVM`). The copy itself is the
//! asking keeper's, through that key: unixd never touches the memory and
//! never waits for the target.

use crate::keys;
use crate::slots::{BANK, K0, T, T2};
use crate::{Reply, Unixd};
use stet_rt::abi::order::segment;
use stet_rt::bank;
use stet_rt::key::Msg;
use stet_unix::cred::{cap, EFF, REAL, SAVED};
use stet_unix::proto as p;
use stet_unix::sys::errno::*;
use stet_unix_personality::keydir::{fetch, swap};

impl Unixd<'_> {
    /// `PROC_SPACE`: the caller's space (`K0`) into slot `FWD_SPACE` of its
    /// forwarder's node (a plain node made now for a process the image
    /// started), and whether it may not be dumped.
    pub(crate) fn proc_space(&mut self, pid: u32, undumpable: bool) -> Result<Reply, i64> {
        let i = self.proc_of(pid)?;
        self.procs[i].undumpable = undumpable;
        self.keep_in_forwarder(i, p::FWD_SPACE)?;
        crate::word(Ok(0))
    }

    /// `STATUS_PAGE`: the caller's status page (`K0`) into slot
    /// `FWD_STATUS` of its forwarder's node.
    pub(crate) fn status_page(&mut self, pid: u32) -> Result<Reply, i64> {
        let i = self.proc_of(pid)?;
        self.keep_in_forwarder(i, p::FWD_STATUS)?;
        self.procs[i].status_page = true;
        crate::word(Ok(0))
    }

    /// The key in `K0` into slot `slot` of process `i`'s forwarder's node
    /// (a plain node made now for a process the image started).
    fn keep_in_forwarder(&mut self, i: usize, slot: u64) -> Result<(), i64> {
        if !self.procs[i].fwd && !self.procs[i].side {
            bank::alloc_node(BANK, T).map_err(|_| ENOMEM)?;
            if self.put_key(keys::forwarder(i), T).is_err() {
                let _ = bank::free(BANK, T);
                return Err(ENOMEM);
            }
            self.procs[i].side = true;
        }
        self.content.forget_cache();
        self.keys.get(keys::forwarder(i), T).map_err(|_| EIO)?;
        swap(T, slot, K0, 0).map_err(|_| EIO)
    }

    /// How many of process `i`'s threads wait on a private futex in its
    /// keeper, as its status page says (0 without one, or one that is
    /// gone). Uses `T2`.
    pub(crate) fn futex_sleepers(&self, i: usize) -> u64 {
        if !self.procs[i].status_page
            || self.keys.get(keys::forwarder(i), T2).is_err()
            || fetch(T2, p::FWD_STATUS, T2).is_err()
        {
            return 0;
        }
        let a = Msg::new(T2, stet_rt::abi::order::page::READ_WORD)
            .w0(p::STATUS_SLEEPERS)
            .call();
        if a.ok() {
            a.w[0]
        } else {
            0
        }
    }

    /// `PROCVM`: process or thread `target`'s space for the caller, if it
    /// may reach it (`write`: to write) → the key in `T`.
    pub(crate) fn procvm(&mut self, caller: u32, target: u64, write: bool) -> Result<Reply, i64> {
        let me = self.proc_of(caller)?;
        // `pid_t`: the low half, as Linux reads it; 0 and negatives name
        // nobody.
        let t = target as u32 as i32;
        if t <= 0 {
            return Err(ESRCH);
        }
        let t = t as u32;
        let pid = self.tids.iter().find(|x| x.0 == t).map_or(t, |x| x.1);
        let i = self
            .procs
            .iter()
            .position(|p| p.pid == pid && !p.zombie)
            .ok_or(ESRCH)?;
        if pid != caller {
            let (c, tc) = (self.procs[me].cred, self.procs[i].cred);
            let (u, g) = (c.uid[REAL], c.gid[REAL]);
            let same = [REAL, EFF, SAVED]
                .iter()
                .all(|&k| tc.uid[k] == u && tc.gid[k] == g);
            // Linux's `__ptrace_may_access`: the ids, then dumpable.
            if (!same || self.procs[i].undumpable) && !c.capable(cap::SYS_PTRACE) {
                return Err(EPERM);
            }
        }
        self.content.forget_cache();
        if self.keys.get(keys::forwarder(i), T).is_err() || fetch(T, p::FWD_SPACE, T).is_err() {
            return Err(EAGAIN);
        }
        // No keeper of the target's is ever called through it, and a
        // reader cannot write. A void slot (no space sent yet) or a space
        // just destroyed (the target ending) fails here: ask again.
        let rights = stet_keys::rights::NOCALL | if write { 0 } else { stet_keys::rights::RO };
        let a = Msg::new(T, segment::RESTRICT)
            .w0(rights as u64)
            .recv([T, 0, 0, 0])
            .call();
        if !a.ok() {
            return Err(EAGAIN);
        }
        Ok(Reply::Now([0; 3], 0, true))
    }
}
