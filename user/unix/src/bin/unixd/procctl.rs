//! A process's own settings that unixd keeps because they act on other
//! processes (`proto::PROC_CTL`): the signal it gets when its parent ends
//! (`PR_SET_PDEATHSIG`), whether it adopts its descendants' orphans
//! (`PR_SET_CHILD_SUBREAPER`; both carried out at a parent's `EXIT` in
//! `procs`), and its name (`PR_SET_NAME`, shown in `/proc/<pid>/comm`,
//! `stat` and `status`); and pidfds (`proto::PIDFD`), open file
//! descriptions naming a process, readable once it has ended.

use crate::open::Kind;
use crate::{word, Reply, Unixd};
use stet_rt::key::Answer;
use stet_unix::proto::o;
use stet_unix::proto::proc_ctl;
use stet_unix::sys::errno::*;

impl Unixd<'_> {
    /// `PROC_CTL` from process `a.label`.
    pub(crate) fn proc_ctl_order(&mut self, a: &Answer, s: &[u8]) -> Result<Reply, i64> {
        let i = self.proc_of(a.label)?;
        let (op, v) = (a.w[0], a.w[1]);
        let r = match op {
            proc_ctl::SET_PDEATHSIG => {
                if v > 64 {
                    return Err(EINVAL);
                }
                self.procs[i].pdeathsig = v as u8;
                0
            }
            proc_ctl::GET_PDEATHSIG => self.procs[i].pdeathsig as u64,
            proc_ctl::SET_SUBREAPER => {
                self.procs[i].subreaper = v != 0;
                0
            }
            proc_ctl::GET_SUBREAPER => self.procs[i].subreaper as u64,
            proc_ctl::SET_NAME => {
                let n = s.iter().position(|&b| b == 0).unwrap_or(s.len()).min(15);
                let mut comm = [0u8; 16];
                comm[..n].copy_from_slice(&s[..n]);
                self.procs[i].comm = comm;
                0
            }
            proc_ctl::GET_NAME => {
                let c = self.procs[i].comm;
                let half = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
                return Ok(Reply::Now([0, half(&c[..8]), half(&c[8..])], 0, false));
            }
            _ => return Err(EINVAL),
        };
        word(Ok(r))
    }

    /// Whether process `pid` has ended (a zombie, or reaped).
    pub(crate) fn pid_ended(&self, pid: u32) -> bool {
        !self.procs.iter().any(|p| p.pid == pid && !p.zombie)
    }

    /// `PIDFD`.
    pub(crate) fn pidfd_order(&mut self, a: &Answer) -> Result<Reply, i64> {
        match a.w[0] {
            0 => {
                let pid = a.w[1];
                if pid == 0 || pid > u32::MAX as u64 {
                    return Err(EINVAL);
                }
                let pid = pid as u32;
                if !self.procs.iter().any(|p| p.pid == pid) {
                    // A thread's id names no process (Linux: `EINVAL`).
                    return Err(if self.tids.iter().any(|t| t.0 == pid) {
                        EINVAL
                    } else {
                        ESRCH
                    });
                }
                let flags = o::RDWR | (a.w[2] & o::NONBLOCK);
                word(self.new_fid(Kind::Pidfd(pid), flags))
            }
            1 => {
                let f = self.fid(a.w[1])?;
                let Kind::Pidfd(pid) = self.open[f].kind else {
                    return Err(EBADF);
                };
                let nonblock = self.open[f].flags & o::NONBLOCK != 0;
                let bits = self.pid_ended(pid) as u64 | (nonblock as u64) << 1;
                Ok(Reply::Now([pid as u64, bits, 0], 0, false))
            }
            _ => Err(EINVAL),
        }
    }
}
