//! Keepers that fault. Every UNIX keeper's domain keeper is a start key to
//! this domain with key info `proto::KEEPER_FAULT` (the image's keeper by
//! its spec, a forked one by its parent: `KEEPER_KEY`), so a keeper that
//! takes an exception or an invalid reference (a bug: a keeper must never
//! fault on what its process does) calls here. unixd answers through the
//! fault's resume key by starting the keeper again at its entry (`HELLO`)
//! on a fresh stack with `proto::KEEPER_FAILED`: the keeper then finds its
//! state again and ends its process as if by SIGKILL, so the parent's
//! `wait` returns (the keeper's `failed`). A keeper that keeps failing
//! stops itself after the third time.

use crate::keys::FAULT_KEY;
use crate::slots::T;
use crate::{Reply, Unixd};
use stet_rt::abi::domain::{Reg, NREGS};
use stet_rt::abi::fault;
use stet_rt::abi::layout::STACK_TOP;
use stet_rt::key::{Answer, Msg};
use stet_unix::proto as p;

impl Unixd<'_> {
    /// A keeper's fault (`a`): start it again to end its process.
    pub(crate) fn keeper_fault(&mut self, a: &Answer) -> Reply {
        if self.keeper_entry == 0 {
            self.klog(
                crate::klog::ERR,
                true,
                format_args!(
                    "unixd: a UNIX keeper faulted (fault {}, {:#x}) before any keeper said where it starts; it stays stopped",
                    a.code, a.w[0]
                ),
            );
            return Reply::Kept;
        }
        self.klog(
            crate::klog::ERR,
            true,
            format_args!(
                "unixd: a UNIX keeper faulted (fault {}, {:#x} at rip {:#x}); it starts again to end its process",
                a.code,
                a.w[0],
                if a.code == fault::code::MEMORY { a.w[3] } else { a.w[2] }
            ),
        );
        let mut r = [0u64; NREGS];
        r[Reg::Rip as usize] = self.keeper_entry;
        r[Reg::Rsp as usize] = STACK_TOP;
        r[Reg::Rdi as usize] = p::KEEPER_FAILED;
        r[Reg::Rflags as usize] = 0x202;
        let mut b = [0u8; 8 * NREGS];
        for (c, v) in b.chunks_exact_mut(8).zip(r) {
            c.copy_from_slice(&v.to_le_bytes());
        }
        Msg::new(self.resume, fault::RESUME_WITH_REGS)
            .string(&b)
            .send();
        Reply::Kept
    }

    /// `KEEPER_KEY`: the keepers' domain keeper into `T` (void on a system
    /// made before unixd had one).
    pub(crate) fn keeper_key(&mut self) -> Result<Reply, i64> {
        self.keys
            .get(FAULT_KEY, T)
            .map_err(|_| stet_unix::sys::errno::ENOENT)?;
        Ok(Reply::Now([0; 3], 0, true))
    }
}
