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

/// Namespace kinds, one namespace each: their names in `/proc/<pid>/ns/`
/// and `CLONE_NEW*` flags (the `_for_children` names are the same files).
pub(crate) const NS_KINDS: usize = 8;
const NS: [(&[u8], u64); NS_KINDS] = [
    (b"cgroup", 0x0200_0000),
    (b"ipc", 0x0800_0000),
    (b"mnt", 0x2_0000),
    (b"net", 0x4000_0000),
    (b"pid", 0x2000_0000),
    (b"time", 0x80),
    (b"user", 0x1000_0000),
    (b"uts", 0x0400_0000),
];
/// The names that show the same namespace as another (`NS` index).
const NS_ALIASES: [(&[u8], usize); 2] = [(b"pid_for_children", 4), (b"time_for_children", 5)];
/// `NS`'s index of the user namespace.
const NS_USER: usize = 6;

impl Unixd<'_> {
    /// Makes `/proc/<pid>/ns/` in the process directory `dir`: a name for
    /// each namespace's one inode (so every process shows the same
    /// `st_ino`, as processes of one namespace do on Linux).
    pub(crate) fn ns_dir(&mut self, dir: u32) {
        let now = self.time();
        for k in 0..NS_KINDS {
            if self.ns[k] == 0 {
                let Ok(ino) = self.fs.create_unnamed(0, now) else {
                    return;
                };
                if let Some(i) = self.fs.inode_mut(ino) {
                    i.mode = stet_unix::fs::mode::REG | 0o444;
                }
                // unixd keeps it open, so it outlives every name and
                // every process's descriptor of it.
                if self.new_fid(Kind::Inode(ino), o::RDONLY).is_err() {
                    self.fs.free(ino);
                    return;
                }
                self.ns[k] = ino;
            }
        }
        let Ok(d) = self
            .fs
            .create(dir, b"ns", stet_unix::fs::mode::DIR | 0o511, now)
        else {
            return;
        };
        for (k, (name, _)) in NS.iter().enumerate() {
            let _ = self.fs.link(d, name, self.ns[k], now);
        }
        for (name, k) in NS_ALIASES {
            let _ = self.fs.link(d, name, self.ns[k], now);
        }
    }

    /// Removes `/proc/<pid>/ns/` from the process directory `dir` (the
    /// namespaces' inodes stay).
    pub(crate) fn ns_gone(&mut self, dir: u32) {
        let Some(d) = self.fs.lookup(dir, b"ns") else {
            return;
        };
        let now = self.time();
        for name in NS.iter().map(|n| n.0).chain(NS_ALIASES.iter().map(|a| a.0)) {
            let _ = self.fs.unlink(d, name, now);
        }
        let _ = self.fs.rmdir(dir, b"ns", now);
    }

    /// The namespace (`NS` index) fid `fid` holds.
    fn ns_of(&self, fid: u64) -> Result<usize, i64> {
        let f = self.fid(fid)?;
        let ino = self.inode_of(f).ok_or(ENOTTY)?;
        (0..NS_KINDS)
            .find(|&k| self.ns[k] == ino && ino != 0)
            .ok_or(ENOTTY)
    }

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
            proc_ctl::NS_KIND => NS[self.ns_of(v)?].1,
            proc_ctl::NS_USER => {
                let ino = self.ns[NS_USER];
                if ino == 0 {
                    return Err(ENOENT);
                }
                return word(self.new_fid(Kind::Inode(ino), o::RDONLY));
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
