//! Process control and introspection the keeper answers: `prctl`,
//! `personality`, `getcpu`, `membarrier`, `unshare`, `kcmp` and the
//! pidfd calls.
//!
//! What acts on other processes — the signal at a parent's end, the
//! subreaper that adopts orphans, the name `/proc` shows — is unixd's
//! (`proto::PROC_CTL`); the rest is the process's own and lives here.

use crate::space::Touch;
use crate::Keeper;
use stet_rt::key::Msg;
use stet_unix::proto::{self, proc_ctl};
use stet_unix::sys::clone::*;
use stet_unix::sys::errno::*;
use stet_unix::sys::prctl::*;

type R = Result<u64, i64>;

/// `SECURE_ALL_BITS | SECURE_ALL_LOCKS` (`uapi/linux/securebits.h`).
const SECURE_ALL: u64 = 0xff;

/// Linux's default timer slack (ns).
pub const DEFAULT_SLACK: u64 = 50_000;

/// `personality`'s `UNAME26`: `uname` says 2.6.(60 + minor).
pub const UNAME26: u32 = 0x0002_0000;

/// `membarrier` commands (Linux 6.1's, without the `rseq` ones: `rseq`
/// is not implemented).
mod mb {
    pub const QUERY: u64 = 0;
    pub const GLOBAL: u64 = 1;
    pub const GLOBAL_EXPEDITED: u64 = 2;
    pub const REGISTER_GLOBAL_EXPEDITED: u64 = 4;
    pub const PRIVATE_EXPEDITED: u64 = 8;
    pub const REGISTER_PRIVATE_EXPEDITED: u64 = 16;
    pub const PRIVATE_EXPEDITED_SYNC_CORE: u64 = 32;
    pub const REGISTER_PRIVATE_EXPEDITED_SYNC_CORE: u64 = 64;
    /// What `QUERY` answers.
    pub const SUPPORTED: u64 = 127;
}

/// Namespace `ioctl`s (`_IO(0xb7, n)`).
pub const NS_GET_USERNS: u64 = 0xb701;
pub const NS_GET_PARENT: u64 = 0xb702;
pub const NS_GET_NSTYPE: u64 = 0xb703;
pub const NS_GET_OWNER_UID: u64 = 0xb704;

/// `kcmp` types (`KCMP_FILE` … `KCMP_EPOLL_TFD`).
mod kcmp {
    pub const FILE: u64 = 0;
    pub const TYPES: u64 = 8;
}

impl Keeper {
    /// `PROC_CTL` `op` with value `v` → unixd's `w0`.
    fn proc_ctl(&mut self, op: u64, v: u64) -> R {
        self.unixd(proto::PROC_CTL, [op, v, 0, 0])
    }

    /// `prctl(option, arg2, …)`; `rest` are `arg3` to `arg5`, which some
    /// options require to be 0.
    pub(crate) fn prctl(&mut self, option: u64, arg: u64, rest: [u64; 3]) -> R {
        let zeros = |from: usize| rest[from..].iter().all(|&v| v == 0);
        match option {
            PR_CAPBSET_READ => self.unixd(proto::CAPS, [proto::caps_op::BSET_READ, arg, 0, 0]),
            PR_CAPBSET_DROP => self.unixd(proto::CAPS, [proto::caps_op::BSET_DROP, arg, 0, 0]),
            PR_GET_DUMPABLE => Ok(self.dumpable as u64),
            PR_SET_DUMPABLE if arg > 1 => Err(EINVAL),
            PR_SET_DUMPABLE => {
                self.dumpable = arg as u8;
                // Who may reach its memory (`process_vm_readv`).
                crate::procvm::send_space(self.dumpable);
                Ok(0)
            }
            PR_SET_NO_NEW_PRIVS if arg != 1 || !zeros(0) => Err(EINVAL),
            PR_SET_NO_NEW_PRIVS => {
                self.no_new_privs = true;
                Ok(0)
            }
            PR_GET_NO_NEW_PRIVS if arg != 0 || !zeros(0) => Err(EINVAL),
            PR_GET_NO_NEW_PRIVS => Ok(self.no_new_privs as u64),
            // No seccomp filtering (as a kernel without `CONFIG_SECCOMP`).
            PR_GET_SECCOMP => Ok(0),
            PR_SET_SECCOMP => Err(EINVAL),
            PR_SET_THP_DISABLE if !zeros(0) => Err(EINVAL),
            PR_SET_THP_DISABLE => {
                self.thp_disable = arg != 0;
                Ok(0)
            }
            PR_GET_THP_DISABLE if arg != 0 || !zeros(0) => Err(EINVAL),
            PR_GET_THP_DISABLE => Ok(self.thp_disable as u64),
            PR_GET_TID_ADDRESS => {
                let c = self.th.cur;
                let at = self.th.t[c].clear_tid;
                self.space
                    .write(arg, &at.to_le_bytes())
                    .map_err(Touch::errno)?;
                Ok(0)
            }
            PR_SET_NAME => {
                let mut b = [0u8; 16];
                let n = match self.space.read_cstr(arg, &mut b[..15]) {
                    Ok(n) => n,
                    Err(Some(t)) => return Err(t.errno()),
                    Err(None) => 15,
                };
                let a = Msg::new(crate::slots::UNIXD, proto::PROC_CTL)
                    .words([proc_ctl::SET_NAME, 0, 0, 0])
                    .string(&b[..n])
                    .call();
                crate::calls::result(&a).map(|_| 0)
            }
            PR_GET_NAME => {
                // The name is unixd's (`execve` sets it too).
                let a = Msg::new(crate::slots::UNIXD, proto::PROC_CTL)
                    .words([proc_ctl::GET_NAME, 0, 0, 0])
                    .call();
                crate::calls::result(&a)?;
                let mut name = [0u8; 16];
                name[..8].copy_from_slice(&a.w[1].to_le_bytes());
                name[8..].copy_from_slice(&a.w[2].to_le_bytes());
                name[15] = 0;
                self.space.write(arg, &name).map_err(Touch::errno)?;
                Ok(0)
            }
            // A valid signal or 0 (Linux's `valid_signal`).
            PR_SET_PDEATHSIG if arg > 64 => Err(EINVAL),
            PR_SET_PDEATHSIG => self.proc_ctl(proc_ctl::SET_PDEATHSIG, arg).map(|_| 0),
            PR_GET_PDEATHSIG => {
                let sig = self.proc_ctl(proc_ctl::GET_PDEATHSIG, 0)? as u32;
                self.space
                    .write(arg, &sig.to_le_bytes())
                    .map_err(Touch::errno)?;
                Ok(0)
            }
            PR_SET_CHILD_SUBREAPER => self
                .proc_ctl(proc_ctl::SET_SUBREAPER, (arg != 0) as u64)
                .map(|_| 0),
            PR_GET_CHILD_SUBREAPER => {
                let v = self.proc_ctl(proc_ctl::GET_SUBREAPER, 0)? as u32;
                self.space
                    .write(arg, &v.to_le_bytes())
                    .map_err(Touch::errno)?;
                Ok(0)
            }
            // 0 goes back to the default: the slack the process had when
            // it was made (Linux: the creating thread's).
            PR_SET_TIMERSLACK => {
                self.slack[0] = if arg == 0 { self.slack[1] } else { arg };
                Ok(0)
            }
            PR_GET_TIMERSLACK => Ok(self.slack[0]),
            // No securebits are set, and none can be: their meanings
            // (`SECURE_NOROOT`, `SECURE_KEEP_CAPS`, …) are not done. The
            // checks before are Linux's (`cap_task_prctl`): a bit outside
            // the known ones, or no `CAP_SETPCAP`, is `EPERM`.
            PR_GET_SECUREBITS => Ok(0),
            PR_SET_SECUREBITS
                if arg & !SECURE_ALL != 0 || !self.cred.capable(stet_unix::cred::cap::SETPCAP) =>
            {
                Err(EPERM)
            }
            PR_SET_SECUREBITS if arg == 0 => Ok(0),
            PR_SET_SECUREBITS => Err(EINVAL),
            // Stet controls no speculation per process: every misfeature
            // is enabled and not the process's to change (Linux with the
            // mitigations off). Unused arguments must be 0.
            PR_GET_SPECULATION_CTRL if !zeros(0) => Err(EINVAL),
            PR_GET_SPECULATION_CTRL if arg > PR_SPEC_L1D_FLUSH => Err(ENODEV),
            PR_GET_SPECULATION_CTRL => Ok(PR_SPEC_ENABLE),
            PR_SET_SPECULATION_CTRL if !zeros(1) => Err(EINVAL),
            PR_SET_SPECULATION_CTRL if arg > PR_SPEC_L1D_FLUSH => Err(ENODEV),
            PR_SET_SPECULATION_CTRL => Err(ENXIO),
            _ => Err(EINVAL),
        }
    }

    /// `personality(persona)`: the old one; `0xffffffff` only asks.
    pub(crate) fn personality(&mut self, p: u64) -> R {
        let old = self.persona;
        if p as u32 != u32::MAX {
            self.persona = p as u32;
        }
        Ok(old as u64)
    }

    /// `getcpu(cpu, node, cache)`: the processor and NUMA node the caller
    /// runs on. One processor, one node: both 0. (With more processors
    /// the answer may be stale by the time it is read, as on Linux.)
    pub(crate) fn getcpu(&mut self, cpu: u64, node: u64) -> R {
        for at in [cpu, node] {
            if at != 0 {
                self.space
                    .write(at, &0u32.to_le_bytes())
                    .map_err(Touch::errno)?;
            }
        }
        Ok(0)
    }

    /// `membarrier(cmd, flags, cpu_id)`.
    ///
    /// A barrier here is every thread of the process (or of the system)
    /// having passed through the kernel since the call began. On one
    /// processor the caller is the only thread running, and its own trap
    /// to the keeper is that point for everyone: so each command is done
    /// when it returns. With several processors the private commands
    /// would stop and start each other running thread of the process
    /// (the keeper holds their domains; a stop waits for the thread to
    /// leave its processor), and `GLOBAL` would need the kernel to say
    /// when every processor has switched domains once.
    pub(crate) fn membarrier(&mut self, cmd: u64, flags: u64) -> R {
        if flags != 0 {
            return Err(EINVAL);
        }
        let reg = |c: u64| match c {
            mb::PRIVATE_EXPEDITED => 1u8,
            mb::PRIVATE_EXPEDITED_SYNC_CORE => 2,
            _ => 0,
        };
        match cmd as u32 as u64 {
            mb::QUERY => Ok(mb::SUPPORTED),
            mb::GLOBAL | mb::GLOBAL_EXPEDITED | mb::REGISTER_GLOBAL_EXPEDITED => Ok(0),
            c @ (mb::PRIVATE_EXPEDITED | mb::PRIVATE_EXPEDITED_SYNC_CORE) => {
                if self.membarrier & reg(c) == 0 {
                    return Err(EPERM);
                }
                Ok(0)
            }
            mb::REGISTER_PRIVATE_EXPEDITED => {
                self.membarrier |= reg(mb::PRIVATE_EXPEDITED);
                Ok(0)
            }
            mb::REGISTER_PRIVATE_EXPEDITED_SYNC_CORE => {
                self.membarrier |= reg(mb::PRIVATE_EXPEDITED_SYNC_CORE);
                Ok(0)
            }
            _ => Err(EINVAL),
        }
    }

    /// `unshare(flags)`: Linux's checks and order. A single-threaded
    /// process shares no descriptor table, file-system context, signal
    /// handlers or memory with anyone, so those flags change nothing; in
    /// a threaded process the keeper's one table serves every thread and
    /// cannot be split (`EINVAL`). A mount namespace of its own is granted
    /// to a privileged caller: Stet has one mount table and no `mount`,
    /// so every copy stays the same. The other namespaces are not built
    /// (`EINVAL`, as a Linux kernel without them; `EPERM` first for an
    /// unprivileged caller).
    pub(crate) fn unshare(&mut self, flags: u64) -> R {
        let mut f = flags as u32 as u64;
        const MAY: u64 = CLONE_THREAD
            | CLONE_FS
            | CLONE_NEWNS
            | CLONE_SIGHAND
            | CLONE_VM
            | CLONE_FILES
            | CLONE_SYSVSEM
            | CLONE_NEWUTS
            | CLONE_NEWIPC
            | CLONE_NEWNET
            | CLONE_NEWUSER
            | CLONE_NEWPID
            | CLONE_NEWCGROUP
            | CLONE_NEWTIME;
        if f & CLONE_NEWUSER != 0 {
            f |= CLONE_THREAD | CLONE_FS;
        }
        if f & CLONE_VM != 0 {
            f |= CLONE_SIGHAND;
        }
        if f & CLONE_SIGHAND != 0 {
            f |= CLONE_THREAD;
        }
        if f & CLONE_NEWNS != 0 {
            f |= CLONE_FS;
        }
        if f & !MAY != 0 {
            return Err(EINVAL);
        }
        if f & (CLONE_THREAD | CLONE_SIGHAND | CLONE_VM | CLONE_FILES | CLONE_FS) != 0
            && self.threaded()
        {
            return Err(EINVAL);
        }
        if f & CLONE_NEWUSER != 0 {
            return Err(EINVAL);
        }
        if f & NEW_NS != 0 {
            if !self.cred.capable(stet_unix::cred::cap::SYS_ADMIN) {
                return Err(EPERM);
            }
            if f & NEW_NS != CLONE_NEWNS {
                return Err(EINVAL);
            }
        }
        Ok(0)
    }

    /// Whether `pid` is this process or one of its threads.
    pub(crate) fn is_mine(&self, pid: u64) -> bool {
        pid == self.pid || (0..self.th.t.len()).any(|i| self.th.t[i].tid as u64 == pid && pid != 0)
    }

    /// `kcmp(pid1, pid2, type, idx1, idx2)`: 0 the same object, 1 or 2
    /// different (ordered), as Linux. Within one process every table is
    /// the same, and two descriptors are the same file when they hold the
    /// same open file description (ordered by unixd's file id). Two
    /// processes share no table here (threads are one process); another
    /// process's descriptors are its keeper's, so `KCMP_FILE` across
    /// processes is `EOPNOTSUPP`.
    pub(crate) fn kcmp(&mut self, pid1: u64, pid2: u64, ty: u64, i1: u64, i2: u64) -> R {
        let (p1, p2) = (pid1 as u32 as i32 as i64, pid2 as u32 as i32 as i64);
        for p in [p1, p2] {
            if p <= 0 {
                return Err(ESRCH);
            }
            if !self.is_mine(p as u64) {
                // It must exist (and be the caller's to look at).
                self.kill(p, 0)?;
            }
        }
        let ty = ty as u32 as u64;
        if ty >= kcmp::TYPES {
            return Err(EINVAL);
        }
        let order = |a: u64, b: u64| match a.cmp(&b) {
            core::cmp::Ordering::Equal => 0,
            core::cmp::Ordering::Less => 1,
            core::cmp::Ordering::Greater => 2,
        };
        let (m1, m2) = (self.is_mine(p1 as u64), self.is_mine(p2 as u64));
        if ty == kcmp::FILE || ty == kcmp::TYPES - 1 {
            if !(m1 && m2) {
                return Err(EOPNOTSUPP);
            }
            let (f1, f2) = (self.fid(i1)?, self.fid(i2)?);
            if ty == kcmp::TYPES - 1 {
                // `KCMP_EPOLL_TFD`: the first is no epoll descriptor.
                return Err(EINVAL);
            }
            return Ok(order(f1, f2));
        }
        if m1 && m2 || p1 == p2 {
            return Ok(0);
        }
        Ok(order(p1 as u64, p2 as u64).max(1))
    }

    /// The process a pidfd names → (pid, it has ended, the pidfd is
    /// `O_NONBLOCK`); `EBADF` if `fd` is no pidfd.
    pub(crate) fn pidfd_pid(&mut self, fd: u64) -> Result<(u64, bool, bool), i64> {
        let fid = self.fid(fd)?;
        let (r, a) = crate::fds::ux(proto::PIDFD, [1, fid, 0, 0], &[]);
        r?;
        Ok((a.w[0], a.w[1] & 1 != 0, a.w[1] & 2 != 0))
    }

    /// `pidfd_open(pid, flags)`: a descriptor (close-on-exec) naming the
    /// process, readable once it has ended.
    pub(crate) fn pidfd_open(&mut self, pid: u64, flags: u64) -> R {
        use stet_unix::proto::o::NONBLOCK;
        let pid = pid as u32 as i32;
        if flags as u32 as u64 & !NONBLOCK != 0 || pid <= 0 {
            return Err(EINVAL);
        }
        let (r, _) = crate::fds::ux(proto::PIDFD, [0, pid as u64, flags & NONBLOCK, 0], &[]);
        self.install_fid(r?, true)
    }

    /// `pidfd_send_signal(pidfd, sig, info, flags)`: `kill` of the
    /// process the pidfd names (`ESRCH` once it has ended). A `siginfo`
    /// of the caller's own making is not carried (`EINVAL`).
    pub(crate) fn pidfd_send_signal(&mut self, fd: u64, sig: u64, info: u64, flags: u64) -> R {
        if flags as u32 != 0 || info != 0 {
            return Err(EINVAL);
        }
        let (pid, ended, _) = self.pidfd_pid(fd)?;
        if sig as u32 as u64 > 64 {
            return Err(EINVAL);
        }
        if ended {
            return Err(ESRCH);
        }
        self.kill(pid as i64, sig as u32 as u64)
    }

    /// `pidfd_getfd(pidfd, targetfd, flags)`: a copy (close-on-exec) of
    /// a descriptor of the process the pidfd names. This process's own
    /// are copied; another's are its keeper's, which this one cannot
    /// reach: `EPERM`, after `ESRCH` if it has ended and `EPERM` if it
    /// may not be looked at.
    pub(crate) fn pidfd_getfd(&mut self, fd: u64, target: u64, flags: u64) -> R {
        if flags as u32 != 0 {
            return Err(EINVAL);
        }
        let (pid, ended, _) = self.pidfd_pid(fd)?;
        if ended {
            return Err(ESRCH);
        }
        if pid == self.pid {
            return self.dup(target, None, 0, true);
        }
        self.kill(pid as i64, 0)?;
        Err(EPERM)
    }

    /// The `ioctl`s of a namespace file (`/proc/<pid>/ns/<kind>`, fid
    /// `fid`). Stet has one namespace of each kind, the initial one: the
    /// user namespace owns them all and is owned by none, so asking for
    /// its owner or for a parent of the PID or user namespace is `EPERM`
    /// (as Linux answers outside the caller's namespaces), a parent of any
    /// other kind `EINVAL`; its owner is root.
    pub(crate) fn ns_ioctl(&mut self, fid: u64, req: u64, arg: u64) -> R {
        let kind = self.proc_ctl(proc_ctl::NS_KIND, fid)?;
        match req {
            NS_GET_USERNS if kind == CLONE_NEWUSER => Err(EPERM),
            NS_GET_USERNS => {
                let f = self.proc_ctl(proc_ctl::NS_USER, 0)?;
                self.install_fid(f, true)
            }
            NS_GET_PARENT if kind == CLONE_NEWPID || kind == CLONE_NEWUSER => Err(EPERM),
            NS_GET_PARENT => Err(EINVAL),
            NS_GET_NSTYPE => Ok(kind),
            NS_GET_OWNER_UID if kind != CLONE_NEWUSER => Err(EINVAL),
            NS_GET_OWNER_UID => {
                self.space
                    .write(arg, &0u32.to_le_bytes())
                    .map_err(Touch::errno)?;
                Ok(0)
            }
            _ => Err(ENOTTY),
        }
    }
}
