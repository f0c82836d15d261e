//! The system calls the keeper carries out itself: memory, the process's
//! identity, signals' bookkeeping, clocks, randomness and the terminal's
//! descriptors. A call it does not implement answers `-ENOSYS` and is
//! counted, never harms anything.

use crate::slots::{keys, KEYS, SLEEP, T, T3, UNIXD};
use crate::space::Touch;
use crate::Keeper;
use stet_rt::abi::domain::Reg;
use stet_rt::abi::order;
use stet_rt::key::{call, Msg};
use stet_unix::clockid::Clock;
use stet_unix::layout::USER_END;
use stet_unix::proto::{self, at};
use stet_unix::sys::errno::*;
use stet_unix::sys::sig::{NSIG, SIGKILL, SIGSTOP, SIG_BLOCK, SIG_SETMASK, SIG_UNBLOCK};
use stet_unix::sys::{arch, clock, nr};
use stet_unix_personality::keydir;

/// What the keeper does after a call.
pub enum Next {
    /// Resume the process with the registers as they now are.
    Resume,
    /// The process ended with this status (`exit_group`).
    Exit(u8),
    /// A signal ended the process.
    Killed(u8),
    /// A new program is running (`execve`): there is no call to answer.
    Started,
    /// The thread's call waits; the keeper serves others (`threads`).
    Block,
    /// The thread has ended (`exit` of one of several).
    Gone,
}

/// Seconds from 1970 to 2024-01-01: the realtime clock at boot when the
/// kernel has no battery clock to read (`clocks`).
pub(crate) const EPOCH: u64 = 1_704_067_200;

/// The wall clock and the time since boot, in ns: the kernel's (the
/// battery clock read at boot, plus the time since), else [`EPOCH`] plus
/// the time since boot.
pub(crate) fn clocks() -> (u64, u64) {
    let a = call(SLEEP, order::sleep::NOW, [0; 4]);
    let wall = if a.w[2] != 0 {
        a.w[2]
    } else {
        EPOCH * 1_000_000_000 + a.w[0]
    };
    (wall, a.w[0])
}

/// The wall clock at boot (ns since 1970): converts a realtime deadline to
/// one since boot.
pub(crate) fn boot_wall_ns() -> u64 {
    let (w, n) = clocks();
    w.saturating_sub(n)
}

type R = Result<u64, i64>;

/// A C `int` argument, sign-extended (the register's upper half is not
/// part of it: `-1` may arrive as `0xffff_ffff`).
fn int(v: u64) -> u64 {
    v as u32 as i32 as i64 as u64
}

/// unixd's answer as a system call's result (its signals noted): `w0`,
/// or `-errno` in it; `EIO` if unixd could not be invoked.
/// A system call number no Linux has: with `Keeper::testing`, it makes
/// the keeper panic (fault injection: the process must still end and its
/// parent's `wait` return).
pub const PANIC_KEEPER: u64 = 0x5354_0001;
/// Likewise: makes the keeper fault (a read through its window of a page
/// its process does not have).
pub const FAULT_KEEPER: u64 = 0x5354_0002;

pub(crate) fn result(a: &stet_rt::key::Answer) -> R {
    crate::signals::note(a.w[proto::INTR_WORD]);
    let v = a.w[0] as i64;
    if a.code != stet_rt::abi::code::Code::Ok {
        Err(EIO)
    } else if (-4095..0).contains(&v) {
        Err(-v)
    } else {
        Ok(a.w[0])
    }
}

pub(crate) fn now_ns() -> u64 {
    call(SLEEP, order::sleep::NOW, [0; 4]).w[0]
}

impl Keeper {
    /// Carries out the call in `regs` (number in `rax`), leaving the
    /// result in `rax`.
    pub fn syscall(&mut self, regs: &mut [u64; 20]) -> Next {
        // A tracer that asked for system-call stops sees the entry first.
        if self.trace_sys {
            match self.trace_entry(regs) {
                Err(s) => return Next::Killed(s),
                Ok(true) => {}
                Ok(false) => {
                    // Skipped by the tracer: the exit stop, then signals.
                    if let Err(s) = self.trace_exit(u64::MAX, regs) {
                        return Next::Killed(s);
                    }
                    return match self.deliver(regs, None) {
                        Some(sig) => Next::Killed(sig),
                        None => Next::Resume,
                    };
                }
            }
        }
        let a = [
            regs[Reg::Rdi as usize],
            regs[Reg::Rsi as usize],
            regs[Reg::Rdx as usize],
            regs[Reg::R10 as usize],
            regs[Reg::R8 as usize],
            regs[Reg::R9 as usize],
        ];
        let n = regs[Reg::Rax as usize];
        let cwd = at::FDCWD as u64;
        if self.trace {
            stet_rt::println!(
                "unix: pid {} thread {} call {n} ... (pending {:#x} mask {:#x})",
                self.pid,
                self.tid(),
                crate::signals::PENDING.load(core::sync::atomic::Ordering::Relaxed),
                self.sigmask
            );
        }
        let r = match n {
            nr::GETUID
            | nr::GETEUID
            | nr::GETGID
            | nr::GETEGID
            | nr::GETRESUID
            | nr::GETRESGID
            | nr::SETUID
            | nr::SETGID
            | nr::SETREUID
            | nr::SETREGID
            | nr::SETRESUID
            | nr::SETRESGID
            | nr::SETFSUID
            | nr::SETFSGID
            | nr::GETGROUPS
            | nr::SETGROUPS => self.id_call(n, &a).unwrap_or(Err(ENOSYS)),
            nr::CHOWN => self.chown(cwd, Some(a[0]), a[1], a[2], 0),
            nr::LCHOWN => self.chown(cwd, Some(a[0]), a[1], a[2], at::SYMLINK_NOFOLLOW),
            nr::FCHOWN => self.chown(a[0], None, a[1], a[2], 0),
            nr::FCHOWNAT => self.chown(a[0], Some(a[1]), a[2], a[3], a[4]),
            PANIC_KEEPER if self.testing => {
                panic!("pid {}: a keeper panic asked for by a test", self.pid)
            }
            FAULT_KEEPER if self.testing => {
                // A touch of a page the process does not have, through
                // the window (what `Space::touch` exists to prevent): the
                // keeper itself faults.
                let mut b = [0u8; 8];
                self.space
                    .win
                    .read(stet_unix::layout::USER_END - 4096, &mut b);
                Err(EFAULT)
            }
            nr::EXIT if self.threaded() => return self.thread_exit(a[0] as u8),
            nr::EXIT | nr::EXIT_GROUP => {
                self.end_other_threads();
                return Next::Exit(a[0] as u8);
            }
            nr::RT_SIGRETURN => {
                return match self.sigreturn(regs) {
                    Ok(()) => match self.deliver(regs, None) {
                        Some(sig) => Next::Killed(sig),
                        None => Next::Resume,
                    },
                    Err(sig) => Next::Killed(sig),
                }
            }
            nr::KILL => self.kill(int(a[0]) as i64, a[1] as u32 as u64),
            nr::PTRACE => self.ptrace(a[0], a[1], a[2], a[3]),
            // A thread id is a pid here (one thread per process); 0 or a
            // negative one is no thread (Linux: EINVAL), never a group.
            nr::TKILL if int(a[0]) as i64 <= 0 => Err(EINVAL),
            nr::TGKILL if int(a[0]) as i64 <= 0 || int(a[1]) as i64 <= 0 => Err(EINVAL),
            nr::TKILL => match self.signal_thread(int(a[0]), a[1] as u32 as u64) {
                Some(r) => r,
                None => self.kill(int(a[0]) as i64, a[1] as u32 as u64),
            },
            nr::TGKILL => self.tgkill(int(a[0]), int(a[1]), a[2] as u32 as u64),
            nr::PAUSE => self.pause(),
            nr::RT_SIGSUSPEND => self.sigsuspend(a[0], a[1]),
            nr::RT_SIGPENDING => self.sigpending(a[0], a[1]),
            nr::RT_SIGTIMEDWAIT => self.sigtimedwait(a[0], a[1], a[2], a[3]),
            nr::RT_SIGQUEUEINFO => self.sigqueueinfo(int(a[0]), None, a[1], a[2]),
            nr::RT_TGSIGQUEUEINFO => self.sigqueueinfo(int(a[0]), Some(int(a[1])), a[2], a[3]),
            nr::SIGALTSTACK => self.sigaltstack(a[0], a[1], regs[Reg::Rsp as usize]),
            nr::GETRLIMIT => self.getrlimit(a[0], a[1]),
            nr::GETPRIORITY => self.unixd(proto::PRIO, [0, a[0] as u32 as u64, a[1], 0]),
            nr::SETPRIORITY => self.unixd(
                proto::PRIO,
                [1, a[0] as u32 as u64 | (a[2] as u32 as u64) << 32, a[1], 0],
            ),
            nr::SETRLIMIT => self.setrlimit(a[0], a[1]),
            nr::CAPGET => self.capget(a[0], a[1]),
            nr::CAPSET => self.capset(a[0], a[1]),
            nr::FADVISE64 => self.fadvise(a[0], a[1], a[2], a[3]),
            nr::MLOCK => self.mlock(a[0], a[1], 0, true),
            nr::MLOCK2 => self.mlock(a[0], a[1], a[2], true),
            nr::MUNLOCK => self.mlock(a[0], a[1], 0, false),
            nr::MLOCKALL => self.mlockall(a[0]),
            nr::MUNLOCKALL => {
                self.lock_all(false);
                Ok(0)
            }
            nr::CLOCK_GETRES => self.clock_getres(a[0], a[1]),
            nr::CLOCK_SETTIME => self.clock_settime(a[0], a[1]),
            nr::FLOCK => self.flock(a[0], a[1]),
            nr::FALLOCATE => self.fallocate(a[0], a[1] as u32 as u64, a[2], a[3]),
            nr::COPY_FILE_RANGE => {
                self.copy_file_range(a[0], a[1], a[2], a[3], a[4], a[5] as u32 as u64)
            }
            nr::SETXATTR
            | nr::LSETXATTR
            | nr::FSETXATTR
            | nr::GETXATTR
            | nr::LGETXATTR
            | nr::FGETXATTR
            | nr::LISTXATTR
            | nr::LLISTXATTR
            | nr::FLISTXATTR
            | nr::REMOVEXATTR
            | nr::LREMOVEXATTR
            | nr::FREMOVEXATTR => self.xattr(n, &a),
            nr::ADD_KEY | nr::REQUEST_KEY | nr::KEYCTL => self.keys_call(n, &a),
            nr::TIMER_CREATE => self.timer_create(a[0], a[1], a[2]),
            nr::TIMER_SETTIME => self.timer_settime(a[0], a[1], a[2], a[3]),
            nr::TIMER_GETTIME => self.timer_gettime(a[0], a[1]),
            nr::TIMER_GETOVERRUN => self.timer_getoverrun(a[0]),
            nr::TIMER_DELETE => self.timer_delete(a[0]),
            nr::SETTIMEOFDAY => self.settimeofday(a[0], a[1]),
            nr::GETRUSAGE => self.getrusage(a[0], a[1]),
            nr::TIMES => self.times(a[0]),
            nr::MREMAP => self.mremap(a[0], a[1], a[2], a[3], a[4]),
            nr::ALARM => self.alarm(a[0] as u32 as u64),
            nr::SETITIMER => self.setitimer(int(a[0]), a[1], a[2]),
            nr::GETITIMER => self.setitimer(int(a[0]), u64::MAX, a[1]),
            nr::CLOCK_NANOSLEEP => self.clock_nanosleep(a[0], a[1], a[2], a[3]),
            nr::SETPGID => self.unixd(proto::SETPGID, [int(a[0]), int(a[1]), 0, 0]),
            nr::GETPGID => self.unixd(proto::GETPGID, [int(a[0]), 0, 0, 0]),
            nr::GETSID => self.unixd(proto::GETPGID, [int(a[0]), 1, 0, 0]),
            nr::SETSID => self.unixd(proto::SETSID, [0; 4]),
            nr::EXECVE => return self.execve(regs, a[0], a[1], a[2]),
            nr::FORK => self.fork(regs),
            nr::VFORK => self.vfork(regs),
            nr::CLONE => self.clone(regs, a[0], a[1], a[2], a[3], a[4]),
            // glibc and musl fall back to `clone` (documented in UNIX.md).
            nr::CLONE3 => Err(ENOSYS),
            nr::WAIT4 => self.wait4(int(a[0]), a[1], a[2] as u32 as u64),
            nr::WAITID => self.waitid(a[0], a[1], a[2], a[3]),
            nr::EVENTFD => self.eventfd(a[0], 0),
            nr::EVENTFD2 => self.eventfd(a[0], a[1]),
            nr::INOTIFY_INIT => self.inotify_init(0),
            nr::INOTIFY_INIT1 => self.inotify_init(a[0]),
            nr::INOTIFY_ADD_WATCH => self.inotify_add_watch(a[0], a[1], a[2]),
            nr::INOTIFY_RM_WATCH => self.inotify_rm_watch(a[0], a[1]),
            nr::TIMERFD_CREATE => self.timerfd_create(a[0], a[1]),
            nr::TIMERFD_SETTIME => self.timerfd_settime(a[0], a[1], a[2], a[3]),
            nr::TIMERFD_GETTIME => self.timerfd_settime(a[0], 0, 0, a[1]),
            nr::READ => self.read(a[0], a[1], a[2], None),
            nr::WRITE => self.write(a[0], a[1], a[2], None),
            // A negative offset is refused before the descriptor is looked at.
            nr::PREAD64 | nr::PWRITE64 if (a[3] as i64) < 0 => Err(EINVAL),
            nr::PREAD64 => self.read(a[0], a[1], a[2], Some(a[3])),
            nr::PWRITE64 => self.write(a[0], a[1], a[2], Some(a[3])),
            nr::READV => self.vector(a[0], a[1], a[2], false),
            nr::WRITEV => self.vector(a[0], a[1], a[2], true),
            nr::PREADV => self.vector_at(a[0], a[1], a[2], false, Some(a[3])),
            nr::PWRITEV => self.vector_at(a[0], a[1], a[2], true, Some(a[3])),
            nr::PREADV2 | nr::PWRITEV2 if a[5] as u32 & !0x1f != 0 => Err(EOPNOTSUPP),
            nr::PREADV2 | nr::PWRITEV2 => {
                let at = if a[3] as i64 == -1 { None } else { Some(a[3]) };
                self.vector_at(a[0], a[1], a[2], n == nr::PWRITEV2, at)
            }
            nr::MINCORE => self.mincore(a[0], a[1], a[2]),
            nr::OPEN => self.openat(cwd, a[0], a[1], a[2]),
            nr::OPENAT => self.openat(a[0], a[1], a[2], a[3]),
            nr::CLOSE => self.close(a[0]),
            nr::LSEEK => self.lseek(a[0], a[1], a[2] as u32 as u64),
            nr::FSTAT => self.fstat(a[0], a[1]),
            nr::STAT => self.fstatat(cwd, a[0], a[1], 0),
            nr::LSTAT => self.fstatat(cwd, a[0], a[1], at::SYMLINK_NOFOLLOW),
            nr::NEWFSTATAT => self.fstatat(a[0], a[1], a[2], a[3]),
            nr::STATX => self.statx(a[0], a[1], a[2], a[4]),
            nr::GETDENTS64 => self.getdents(a[0], a[1], a[2]),
            nr::MKDIR => self.path_call(proto::MKDIR, cwd, a[0], a[1] & 0o1777 & !self.umask, 0),
            nr::MKDIRAT => self.path_call(proto::MKDIR, a[0], a[1], a[2] & 0o1777 & !self.umask, 0),
            nr::UNLINK => self.path_call(proto::UNLINK, cwd, a[0], 0, 0),
            nr::RMDIR => self.path_call(proto::UNLINK, cwd, a[0], at::REMOVEDIR, 0),
            nr::UNLINKAT if a[2] as u32 as u64 & !at::REMOVEDIR != 0 => Err(EINVAL),
            nr::UNLINKAT => self.path_call(proto::UNLINK, a[0], a[1], a[2], 0),
            nr::RENAME => self.two_paths(proto::RENAME, cwd, a[0], cwd, a[1], 0),
            nr::RENAMEAT => self.two_paths(proto::RENAME, a[0], a[1], a[2], a[3], 0),
            nr::RENAMEAT2 => self.two_paths(proto::RENAME, a[0], a[1], a[2], a[3], a[4]),
            nr::LINK => self.two_paths(proto::LINK, cwd, a[0], cwd, a[1], 0),
            nr::LINKAT if a[4] as u32 as u64 & !(at::SYMLINK_FOLLOW | at::EMPTY_PATH) != 0 => {
                Err(EINVAL)
            }
            nr::LINKAT => self.two_paths(proto::LINK, a[0], a[1], a[2], a[3], a[4]),
            nr::SYMLINK => self.symlink(a[0], cwd, a[1]),
            nr::SYMLINKAT => self.symlink(a[0], a[1], a[2]),
            nr::READLINK => self.readlink(cwd, a[0], a[1], a[2]),
            nr::READLINKAT => self.readlink(a[0], a[1], a[2], a[3]),
            nr::CHMOD => self.path_call(proto::CHMOD, cwd, a[0], a[1], 0),
            nr::FCHMODAT => self.path_call(proto::CHMOD, a[0], a[1], a[2], 0),
            nr::FCHMOD => self
                .fid(a[0])
                .and_then(|f| self.unixd(proto::CHMOD, [f, a[1], 0, 0])),
            nr::TRUNCATE | nr::FTRUNCATE if (a[1] as i64) < 0 => Err(EINVAL),
            nr::TRUNCATE => {
                let r = self.path_call(proto::TRUNCATE, cwd, a[0], a[1], self.fsize());
                self.over_fsize(r)
            }
            nr::FTRUNCATE => {
                let r = self
                    .fid(a[0])
                    .and_then(|f| self.unixd(proto::TRUNCATE, [f, a[1], self.fsize(), 0]));
                self.over_fsize(r)
            }
            nr::ACCESS => self.path_call(proto::ACCESS, cwd, a[0], a[1], 0),
            nr::FACCESSAT => self.path_call(proto::ACCESS, a[0], a[1], a[2], 0),
            nr::FACCESSAT2
                if a[3] & !(at::EACCESS | at::SYMLINK_NOFOLLOW | at::EMPTY_PATH) != 0 =>
            {
                Err(EINVAL)
            }
            nr::FACCESSAT2 => self.path_call(proto::ACCESS, a[0], a[1], a[2], a[3]),
            nr::UTIMENSAT => self.utimensat(a[0], a[1], a[2]),
            nr::GETCWD => self.getcwd(a[0], a[1]),
            nr::CHDIR => self.chdir(Some(a[0]), 0),
            nr::FCHDIR => self.chdir(None, a[0]),
            nr::DUP => self.dup(a[0], None, 0, false),
            nr::DUP2 => self
                .fid(a[0])
                .and_then(|_| self.dup(a[0], Some(a[1]), 0, false)),
            nr::DUP3 if a[0] == a[1] || a[2] & !proto::o::CLOEXEC != 0 => Err(EINVAL),
            nr::DUP3 => self.dup(a[0], Some(a[1]), 0, a[2] & proto::o::CLOEXEC != 0),
            nr::FCNTL => self.fcntl(a[0], a[1], a[2]),
            nr::PIPE => self.pipe(a[0], 0),
            nr::PIPE2 => self.pipe(a[0], a[1]),
            nr::IOCTL => self.ioctl(a[0], a[1], a[2]),
            nr::POLL => self.poll(a[0], a[1], int(a[2]) as i64),
            nr::SELECT => self.select(int(a[0]), [a[1], a[2], a[3]], a[4], false),
            nr::PSELECT6 => self.pselect6(int(a[0]), [a[1], a[2], a[3]], a[4], a[5]),
            nr::PPOLL => self.ppoll(a[0], a[1], a[2], a[3], a[4]),
            nr::EPOLL_CREATE => self.epoll_create(Some(a[0]), 0),
            nr::EPOLL_CREATE1 => self.epoll_create(None, a[0] as u32 as u64),
            nr::EPOLL_CTL => self.epoll_ctl(a[0], a[1], a[2], a[3]),
            nr::EPOLL_WAIT => {
                let d = Keeper::deadline_ms(a[3]);
                self.epoll_wait(a[0], a[1], a[2], d, None)
            }
            nr::EPOLL_PWAIT => self.sigmask_arg(a[4], a[5]).and_then(|m| {
                let d = Keeper::deadline_ms(a[3]);
                self.epoll_wait(a[0], a[1], a[2], d, m)
            }),
            nr::EPOLL_PWAIT2 => self
                .deadline_ts(a[3])
                .and_then(|d| Ok((d, self.sigmask_arg(a[4], a[5])?)))
                .and_then(|(d, m)| self.epoll_wait(a[0], a[1], a[2], d, m)),
            nr::SIGNALFD => self.signalfd(a[0], a[1], a[2], 0),
            nr::SIGNALFD4 => self.signalfd(a[0], a[1], a[2], a[3] as u32 as u64),
            nr::FSYNC | nr::FDATASYNC => self.fsync(a[0]),
            nr::SYNCFS => self.fid(a[0]).and_then(|_| self.sync()),
            nr::SYNC => self.sync(),
            nr::REMAP_FILE_PAGES => self.remap_file_pages(a[0], a[1], a[2], a[3]),
            nr::NAME_TO_HANDLE_AT => self.name_to_handle_at(a[0], a[1], a[2], a[3], a[4]),
            nr::OPEN_BY_HANDLE_AT => self.open_by_handle_at(a[0], a[1], a[2]),
            nr::OPENAT2 => self.openat2(a[0], a[1], a[2], a[3]),
            nr::MEMFD_CREATE => self.memfd_create(a[0], a[1]),
            nr::CHROOT => self.path_call(proto::CHROOT, cwd, a[0], 0, 0),
            nr::SYNC_FILE_RANGE => self.sync_file_range(a[0], a[1], a[2], a[3]),
            nr::FUTIMESAT => self.futimesat(a[0], a[1], a[2]),
            nr::CLOSE_RANGE => self.close_range(a[0], a[1], a[2]),
            nr::SENDFILE => self.sendfile(a[0], a[1], a[2], a[3]),
            nr::MKNOD => self.mknodat(at::FDCWD as u64, a[0], a[1], a[2]),
            nr::MKNODAT => self.mknodat(a[0], a[1], a[2], a[3]),
            nr::SPLICE => self.splice(a[0], a[1], a[2], a[3], a[4], a[5]),
            nr::TEE => self.tee(a[0], a[1], a[2], a[3]),
            nr::VMSPLICE => self.vmsplice(a[0], a[1], a[2], a[3]),
            nr::BRK => Ok(self.brk(a[0])),
            nr::MMAP => self.mmap(a[0], a[1], a[2], a[3], a[4], a[5]),
            nr::MSYNC => self.msync(a[0], a[1], a[2]),
            nr::FUTEX => self.futex(a[0], a[1], a[2], a[3], a[4], a[5]),
            nr::MUNMAP => self.munmap(a[0], a[1]),
            nr::MPROTECT => self.mprotect(a[0], a[1], a[2]),
            nr::MADVISE | nr::SCHED_YIELD => Ok(0),
            nr::SCHED_SETSCHEDULER => self.sched_setscheduler(a[0], Some(a[1]), a[2]),
            nr::SCHED_SETPARAM => self.sched_setscheduler(a[0], None, a[1]),
            nr::SCHED_GETSCHEDULER => self.sched_getscheduler(a[0]),
            nr::SCHED_GETPARAM => self.sched_getparam(a[0], a[1]),
            nr::SCHED_SETATTR => self.sched_setattr(a[0], a[1], a[2]),
            nr::SCHED_GETATTR => self.sched_getattr(a[0], a[1], a[2], a[3]),
            nr::SCHED_RR_GET_INTERVAL => self.sched_rr_get_interval(a[0], a[1]),
            // SCHED_FIFO and SCHED_RR have priorities 1 to 99, the rest 0.
            nr::SCHED_GET_PRIORITY_MAX => stet_unix::sched::priority_max(a[0]),
            nr::SCHED_GET_PRIORITY_MIN => stet_unix::sched::priority_min(a[0]),
            nr::SCHED_GETAFFINITY => self.getaffinity(a[0], a[1], a[2]),
            nr::SYSINFO => self.sysinfo(a[0]),
            nr::STATFS => self.statfs(a[0], a[1]),
            nr::FSTATFS => self.fstatfs(a[0], a[1]),
            nr::SYSLOG => self.syslog(a[0], a[1], a[2]),
            nr::ARCH_PRCTL => self.arch_prctl(regs, a[0], a[1]),
            nr::SET_TID_ADDRESS => {
                let c = self.th.cur;
                self.th.t[c].clear_tid = a[0];
                Ok(self.tid())
            }
            nr::GETPID => {
                self.leave_answers();
                Ok(self.pid)
            }
            nr::GETTID => {
                self.leave_answers();
                Ok(self.tid())
            }
            nr::GET_ROBUST_LIST => self.get_robust(int(a[0]), a[1], a[2]),
            nr::SCHED_SETAFFINITY => self.setaffinity(a[0], a[1], a[2]),
            nr::GETPPID => self.unixd(proto::GETPPID, [0; 4]),
            nr::GETPGRP => self.unixd(proto::GETPGID, [0; 4]),
            nr::UMASK => Ok(core::mem::replace(&mut self.umask, a[0] & 0o777)),
            nr::UNAME => self.uname(a[0]),
            nr::SETHOSTNAME => self.set_uts_name(a[0], a[1], false),
            nr::SETDOMAINNAME => self.set_uts_name(a[0], a[1], true),
            nr::REBOOT => self.reboot(a[0], a[1], a[2]),
            nr::IOPRIO_GET => self.ioprio(false, a[0], a[1], 0),
            nr::IOPRIO_SET => self.ioprio(true, a[0], a[1], a[2]),
            nr::VHANGUP => self.vhangup(),
            nr::SYSFS => self.sysfs(a[0], a[1], a[2]),
            nr::USTAT => self.ustat(a[0], a[1]),
            nr::ADJTIMEX => self.clock_adjtime(0, a[0]),
            nr::CLOCK_ADJTIME => self.clock_adjtime(a[0], a[1]),
            nr::TIME => self.time(a[0]),
            nr::PRCTL => self.prctl(a[0], a[1], [a[2], a[3], a[4]]),
            nr::PERSONALITY => self.personality(a[0]),
            nr::GETCPU => self.getcpu(a[0], a[1]),
            nr::MEMBARRIER => self.membarrier(a[0], a[1]),
            nr::UNSHARE => self.unshare(a[0]),
            nr::KCMP => self.kcmp(a[0], a[1], a[2], a[3], a[4]),
            nr::PROCESS_VM_READV | nr::PROCESS_VM_WRITEV => {
                let write = n == nr::PROCESS_VM_WRITEV;
                self.process_vm(a[0], a[1], a[2], a[3], a[4], a[5], write)
            }
            nr::PIDFD_OPEN => self.pidfd_open(a[0], a[1]),
            nr::FUTEX_WAITV => self.futex_waitv(a[0], a[1], a[2], a[3], a[4]),
            nr::PIDFD_SEND_SIGNAL => self.pidfd_send_signal(a[0], a[1], a[2], a[3]),
            nr::PIDFD_GETFD => self.pidfd_getfd(a[0], a[1], a[2]),
            nr::SET_ROBUST_LIST => self.set_robust(a[0], a[1]),
            nr::CLOCK_GETTIME => self.clock_gettime(a[0], a[1]),
            nr::GETTIMEOFDAY => self.gettimeofday(a[0]),
            nr::NANOSLEEP => self.clock_nanosleep(clock::MONOTONIC, 0, a[0], a[1]),
            nr::GETRANDOM => self.getrandom(a[0], a[1], a[2]),
            nr::PRLIMIT64 => self.prlimit(a[0], a[1], a[2], a[3]),
            nr::RT_SIGACTION => self.sigaction(a[0] as u32 as u64, a[1], a[2], a[3]),
            nr::RT_SIGPROCMASK => self.sigprocmask(a[0] as u32 as u64, a[1], a[2], a[3]),
            n if crate::sysv::handles(n) => self.sysv(n, &a),
            n if crate::sockets::handles(n) => self.socket_call(n, &a),
            _ => {
                if n >= crate::answers::LIMIT {
                    self.leave_answers();
                }
                self.count_enosys(n);
                Err(ENOSYS)
            }
        };
        if self.trace {
            stet_rt::println!(
                "unix: pid {} call {n}({:#x}, {:#x}, {:#x}, {:#x}) = {:?}",
                self.pid,
                a[0],
                a[1],
                a[2],
                a[3],
                r
            );
        }
        // A thread's call that waits: the keeper serves the others.
        if r == Err(proto::ERESTARTSYS) && self.threaded() {
            return Next::Block;
        }
        self.th.retrying = false;
        self.th.t[self.th.cur].has_deadline = false;
        regs[Reg::Rax as usize] = stet_unix::sys::ret(r);
        if self.trace_sys {
            if let Err(s) = self.trace_exit(n, regs) {
                return Next::Killed(s);
            }
        }
        match self.deliver(regs, Some(n)) {
            Some(sig) => Next::Killed(sig),
            None => Next::Resume,
        }
    }

    /// A words-only call to the file-system domain.
    pub(crate) fn unixd(&mut self, order: u64, w: [u64; 4]) -> R {
        result(&Msg::new(UNIXD, order).words(w).call())
    }

    /// `clone`: a thread (`CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | …`,
    /// `threads`), or a process as `fork` makes one (`SIGCHLD` and the tid
    /// flags; `CLONE_VFORK|CLONE_VM` as `vfork`, a copy).
    fn clone(
        &mut self,
        regs: &[u64; 20],
        flags: u64,
        stack: u64,
        ptid: u64,
        ctid: u64,
        tls: u64,
    ) -> R {
        use stet_unix::sys::clone::*;
        const TID_FLAGS: u64 = CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | CLONE_PARENT_SETTID;
        // Linux's rules: a thread shares signal handlers, which share memory.
        if flags & CLONE_THREAD != 0 && flags & CLONE_SIGHAND == 0
            || flags & CLONE_SIGHAND != 0 && flags & CLONE_VM == 0
        {
            return Err(EINVAL);
        }
        if flags & CLONE_THREAD != 0 {
            const THREAD: u64 = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD;
            const MAY: u64 = THREAD | CLONE_SYSVSEM | CLONE_SETTLS | TID_FLAGS | CLONE_DETACHED;
            if flags & THREAD != THREAD || flags & !MAY != 0 || stack == 0 {
                self.count_enosys(nr::CLONE);
                return Err(EINVAL);
            }
            return self.clone_thread(regs, flags, stack, ptid, ctid, tls);
        }
        // A process: its own copy of memory, or with `CLONE_VM |
        // CLONE_VFORK` the caller's shared until its `execve` or end, the
        // caller waiting meanwhile (`vfork.rs`).
        //
        // `CLONE_PARENT`: a sibling rather than a child (unixd's
        // `FORK_PARENT`); `CLONE_IO` (share the I/O context: a scheduling
        // hint) and `CLONE_DETACHED` (ignored by Linux) change nothing;
        // namespaces as `unshare` grants them (`CLONE_NEWTIME` is
        // `clone3`'s: here the bit is the exit signal's). Tables shared between
        // processes (`CLONE_FILES`, `CLONE_FS`, `CLONE_SYSVSEM`, memory
        // without `CLONE_VFORK`) are not built.
        let may =
            CSIGNAL | TID_FLAGS | CLONE_VFORK | CLONE_VM | CLONE_PARENT | CLONE_IO | CLONE_DETACHED;
        let ns = flags & NEW_NS & !CLONE_NEWTIME;
        if flags & !may & !ns != 0 || (flags & CLONE_VM != 0 && flags & CLONE_VFORK == 0) {
            self.count_enosys(nr::CLONE);
            return Err(ENOSYS);
        }
        if ns != 0 {
            self.unshare(ns)?;
        }
        let (vm, vfork) = (flags & CLONE_VM != 0, flags & CLONE_VFORK != 0);
        // What the child's keeper does before its process runs: its tid
        // into its own memory, and the word to clear at its end.
        self.clone_child = (
            if flags & CLONE_CHILD_SETTID != 0 {
                ctid
            } else {
                0
            },
            if flags & CLONE_CHILD_CLEARTID != 0 {
                ctid
            } else {
                0
            },
        );
        self.fork_flags = if flags & CLONE_PARENT != 0 {
            proto::FORK_PARENT
        } else {
            0
        };
        let child = self.fork_with_stack(regs, if vm { stack } else { 0 }, vm, vfork);
        self.clone_child = (0, 0);
        self.fork_flags = 0;
        let child = child?;
        let tidb = (child as u32).to_le_bytes();
        if flags & CLONE_PARENT_SETTID != 0 {
            let _ = self.space.write(ptid, &tidb);
        }
        if vfork {
            self.vfork_wait(child);
        }
        Ok(child)
    }

    /// `sched_setaffinity(pid, len, mask)`: one processor, number 0.
    fn setaffinity(&mut self, pid: u64, len: u64, mask: u64) -> R {
        self.sched(pid)?;
        if len == 0 {
            return Err(EINVAL);
        }
        let mut b = [0u8; 1];
        self.space.read(mask, &mut b).map_err(Touch::errno)?;
        if b[0] & 1 == 0 {
            return Err(EINVAL);
        }
        Ok(0)
    }

    /// `wait4(pid, wstatus, options, rusage)`: parks in unixd until a
    /// child ends (unixd answers `BUSY` when one does; this asks again).
    fn wait4(&mut self, pid: u64, wstatus: u64, options: u64) -> R {
        // INT_MIN would be the group -INT_MIN, which is no number (Linux).
        if pid as i64 == i32::MIN as i64 {
            return Err(ESRCH);
        }
        self.wait_child(pid, wstatus, options, false)
            .map(|(p, _)| p)
    }

    /// `wait4`'s work, and `waitid`'s (`nowait`: `WNOWAIT`, the child
    /// stays) → the child's pid (0: none yet with `WNOHANG`) and status.
    pub(crate) fn wait_child(
        &mut self,
        pid: u64,
        wstatus: u64,
        options: u64,
        nowait: bool,
    ) -> Result<(u64, u32), i64> {
        use stet_unix::sys::wait::{WALL, WNOHANG, WUNTRACED};
        const WCONTINUED: u64 = 8;
        // `waitid` without WEXITED: stops and continues only.
        const NOT_ENDS: u64 = 1 << 40;
        if options & !(WNOHANG | WUNTRACED | WCONTINUED | WALL | NOT_ENDS) != 0 {
            return Err(EINVAL);
        }
        let unixd_options = options & WNOHANG
            | (nowait as u64) << 1
            | if options & WUNTRACED != 0 { 4 } else { 0 }
            | if options & WCONTINUED != 0 { 8 } else { 0 }
            | if options & NOT_ENDS != 0 { 16 } else { 0 };
        if wstatus != 0 {
            self.space
                .touch(wstatus, 4, true)
                .map_err(crate::space::Touch::errno)?;
        }
        loop {
            if options & WNOHANG == 0 && self.interrupted() {
                return Err(EINTR);
            }
            let intr = self.interrupting();
            let a = Msg::new(UNIXD, self.tagged(proto::WAIT4))
                .words([pid, unixd_options, 0, intr])
                .recv([T3, 0, 0, 0])
                .call();
            if a.code == stet_rt::abi::code::Code::Busy {
                continue;
            }
            crate::signals::note(a.w[proto::INTR_WORD]);
            let v = a.w[0] as i64;
            if !a.ok() {
                return Err(EIO);
            }
            if v < 0 {
                return Err(-v);
            }
            if a.w[2] & 1 != 0 {
                // The child's keeper (and its process: 2; put aside at
                // its `execve`: 4), for the next fork.
                self.keep_spare(T3, a.w[0], a.w[2] >> 1);
            }
            if v > 0 && wstatus != 0 {
                self.space
                    .win
                    .write(wstatus, &(a.w[1] as u32).to_le_bytes());
            }
            return Ok((a.w[0], a.w[1] as u32));
        }
    }

    /// `sync`, `fsync`, `fdatasync`, `syncfs`: the file system is part of
    /// the single-level store, so making a file durable is taking a
    /// checkpoint and waiting for it to commit (everything else becomes
    /// durable with it). Without a checkpoint key (no disk) there is
    /// nothing to commit to: done at once, as on tmpfs.
    /// `fsync` / `fdatasync`: a regular file or a directory is made
    /// durable ([`Keeper::sync`]); a pipe, socket, terminal or other
    /// device has nothing to sync (`EINVAL`, as Linux's files without an
    /// `fsync` operation), a descriptor opened with `O_PATH` is `EBADF`.
    fn fsync(&mut self, fd: u64) -> R {
        use stet_unix::fs::mode;
        let fid = self.fid(fd)?;
        if self.unixd(proto::FLAGS, [fid, 0, 0, 0])? & proto::o::PATH != 0 {
            return Err(EBADF);
        }
        let mut st = [0u8; 144];
        let a = Msg::new(UNIXD, proto::FSTAT)
            .words([fid, 0, 0, 0])
            .call_into(&mut st);
        result(&a)?;
        let m = u32::from_le_bytes(st[24..28].try_into().unwrap_or_default());
        match m & mode::FMT {
            mode::REG | mode::DIR => self.sync(),
            _ => Err(EINVAL),
        }
    }

    /// The file-size limit as [`proto::WRITE`]'s `w2`.
    pub(crate) fn fsize(&self) -> u64 {
        use stet_unix::sys::rlimit::RLIMIT_FSIZE;
        proto::fsize_word(self.rlimits[RLIMIT_FSIZE as usize][0])
    }

    /// A call that would pass the file-size limit (`EFBIG`) also sends the
    /// process `SIGXFSZ` when `RLIMIT_FSIZE` is what it passed.
    pub(crate) fn over_fsize(&self, r: R) -> R {
        use stet_unix::sys::rlimit::RLIMIT_FSIZE;
        if r == Err(EFBIG) && self.rlimits[RLIMIT_FSIZE as usize][0] != u64::MAX {
            crate::signals::raise(stet_unix::sys::sig::SIGXFSZ);
        }
        r
    }

    pub(crate) fn sync(&mut self) -> R {
        use stet_rt::abi::order::checkpoint;
        if keydir::fetch(KEYS, keys::CHECKPOINT, T).is_err() {
            return Ok(0);
        }
        let a = Msg::new(T, checkpoint::TAKE).call();
        match stet_rt::abi::code::Code::decode(a.code) {
            Some(stet_rt::abi::code::Code::Ok) => Ok(0),
            // Void: no store.
            Some(stet_rt::abi::code::Code::Void) => Ok(0),
            _ => Err(EIO),
        }
    }

    /// The process a scheduling call names: only this one (every process
    /// is scheduled alike: the policy is accepted and has no effect).
    fn sched(&self, pid: u64) -> R {
        if pid == 0 || pid == self.pid {
            Ok(0)
        } else {
            Err(ESRCH)
        }
    }

    /// `sched_getaffinity`: one processor.
    fn getaffinity(&mut self, pid: u64, len: u64, mask: u64) -> R {
        self.sched(pid)?;
        if len < 8 || !len.is_multiple_of(8) {
            return Err(EINVAL);
        }
        self.space
            .write(mask, &1u64.to_le_bytes())
            .map_err(Touch::errno)?;
        Ok(8)
    }

    pub(crate) fn count_enosys(&mut self, n: u64) {
        let i = (n as usize).min(self.enosys.len() - 1);
        self.enosys[i] = self.enosys[i].saturating_add(1);
        self.enosys_any = true;
    }

    fn arch_prctl(&mut self, regs: &mut [u64; 20], code: u64, addr: u64) -> R {
        match code {
            arch::SET_FS | arch::SET_GS => {
                if addr >= USER_END {
                    return Err(EPERM);
                }
                let r = if code == arch::SET_FS {
                    Reg::FsBase
                } else {
                    Reg::GsBase
                };
                regs[r as usize] = addr;
                Ok(0)
            }
            arch::GET_FS | arch::GET_GS => {
                let r = if code == arch::GET_FS {
                    Reg::FsBase
                } else {
                    Reg::GsBase
                };
                let v = regs[r as usize];
                self.space
                    .write(addr, &v.to_le_bytes())
                    .map_err(Touch::errno)?;
                Ok(0)
            }
            _ => Err(EINVAL),
        }
    }

    fn time(&mut self, tloc: u64) -> R {
        let t = clocks().0 / 1_000_000_000;
        if tloc != 0 {
            self.space
                .write(tloc, &t.to_le_bytes())
                .map_err(Touch::errno)?;
        }
        Ok(t)
    }

    /// The clock `clk` names, checked: a CPU-time clock of a process
    /// that exists, or of a thread of this process (Linux: `EINVAL`).
    pub(crate) fn clock_of(&mut self, clk: u64) -> Result<Clock, i64> {
        let c = stet_unix::clockid::decode(clk)?;
        let none = match c {
            Clock::Process(pid) if pid != 0 && pid as u64 != self.pid => {
                self.unixd(proto::GETPGID, [pid as u64, 0, 0, 0]).is_err()
            }
            Clock::Thread(tid) if tid != 0 => !self.th.t.iter().any(|t| t.tid == tid),
            _ => false,
        };
        if none {
            return Err(EINVAL);
        }
        Ok(c)
    }

    /// The CPU time of process `pid` (0: this one), ns. Every process runs
    /// under one meter, so no process has a time of its own yet: the time
    /// since boot stands for it (it only grows, as CPU time does).
    pub(crate) fn cpu_ns(&mut self, _pid: u32) -> R {
        Ok(now_ns())
    }

    /// `clock_gettime(clock, tp)`. A CPU-time clock reads the time the
    /// process has run (`Keeper::cpu_ns`).
    fn clock_gettime(&mut self, clk: u64, tp: u64) -> R {
        let t = match self.clock_of(clk)? {
            Clock::Wall => clocks().0,
            Clock::Boot => clocks().1,
            Clock::Process(pid) => self.cpu_ns(pid)?,
            Clock::Thread(_) => self.cpu_ns(0)?,
        };
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&(t / 1_000_000_000).to_le_bytes());
        b[8..].copy_from_slice(&(t % 1_000_000_000).to_le_bytes());
        self.space.write(tp, &b).map_err(Touch::errno)?;
        Ok(0)
    }

    fn gettimeofday(&mut self, tv: u64) -> R {
        if tv != 0 {
            let t = clocks().0;
            let mut b = [0u8; 16];
            b[..8].copy_from_slice(&(t / 1_000_000_000).to_le_bytes());
            b[8..].copy_from_slice(&(t % 1_000_000_000 / 1000).to_le_bytes());
            self.space.write(tv, &b).map_err(Touch::errno)?;
        }
        Ok(0)
    }

    /// A parked wait in unixd until `deadline` (ns since boot, `u64::MAX`:
    /// none, only a signal ends it) → `Ok` when it passed, `-EINTR` when a
    /// signal came first.
    pub(crate) fn wait_until(&mut self, deadline: u64) -> R {
        self.wait_until_for(deadline, 0)
    }

    /// [`Self::wait_until`], ended also by the (blocked) signals `extra`
    /// (`rt_sigtimedwait`'s set).
    pub(crate) fn wait_until_for(&mut self, deadline: u64, extra: u64) -> R {
        let deadline = self.keep_deadline(deadline);
        loop {
            let intr = self.interrupting() | extra;
            if (crate::signals::PENDING.load(core::sync::atomic::Ordering::Relaxed) | self.tpending)
                & intr
                != 0
            {
                return Err(EINTR);
            }
            let a = if deadline == u64::MAX {
                Msg::new(UNIXD, self.tagged(proto::PAUSE))
                    .words([0, 0, 0, intr])
                    .call()
            } else {
                Msg::new(UNIXD, self.tagged(proto::SLEEP))
                    .words([deadline, 0, 0, intr])
                    .call()
            };
            if a.code == stet_rt::abi::code::Code::Busy {
                continue;
            }
            crate::signals::note(a.w[proto::INTR_WORD]);
            let v = a.w[0] as i64;
            return if v < 0 { Err(-v) } else { Ok(0) };
        }
    }

    fn pause(&mut self) -> R {
        self.wait_until(u64::MAX)
    }

    /// A parked wait until a signal comes: one that interrupts (`EINTR`),
    /// or one of `extra` (blocked ones a signalfd reads: `Ok`).
    pub(crate) fn wait_for_signals(&mut self, extra: u64) -> R {
        use core::sync::atomic::Ordering;
        loop {
            if (crate::signals::PENDING.load(Ordering::Relaxed) | self.tpending) & extra != 0 {
                return Ok(0);
            }
            if self.interrupted() {
                return Err(EINTR);
            }
            let intr = self.interrupting() | extra;
            let a = Msg::new(UNIXD, self.tagged(proto::PAUSE))
                .words([0, 0, 0, intr])
                .call();
            if a.code == stet_rt::abi::code::Code::Busy {
                continue;
            }
            crate::signals::note(a.w[proto::INTR_WORD]);
        }
    }

    /// `rt_sigsuspend`: the mask for the wait; the old one comes back when
    /// the handler returns (the frame keeps it).
    fn sigsuspend(&mut self, set: u64, size: u64) -> R {
        if size != 8 {
            return Err(EINVAL);
        }
        let mut b = [0u8; 8];
        self.space.read(set, &mut b).map_err(Touch::errno)?;
        self.suspend_mask = Some(self.sigmask);
        self.sigmask = u64::from_le_bytes(b) & !crate::signals::UNBLOCKABLE;
        let r = self.pause();
        if crate::signals::PENDING.load(core::sync::atomic::Ordering::Relaxed) & !self.sigmask == 0
        {
            // Woken by nothing deliverable: the old mask again.
            if let Some(m) = self.suspend_mask.take() {
                self.sigmask = m;
            }
        }
        r
    }

    fn sigpending(&mut self, set: u64, size: u64) -> R {
        if size != 8 {
            return Err(EINVAL);
        }
        // The process's and this thread's own (`tkill`, `raise`).
        let p = (crate::signals::PENDING.load(core::sync::atomic::Ordering::Relaxed)
            | self.tpending)
            & self.sigmask;
        self.space
            .write(set, &p.to_le_bytes())
            .map_err(Touch::errno)?;
        Ok(0)
    }

    fn alarm(&mut self, secs: u64) -> R {
        let left = self.unixd(proto::ALARM, [secs.saturating_mul(1_000_000_000), 0, 0, 0])?;
        Ok(left.div_ceil(1_000_000_000))
    }

    /// `setitimer(which, new, old)` and `getitimer(which, cur)` (`new`
    /// `u64::MAX`): `ITIMER_REAL`, `ITIMER_VIRTUAL`, `ITIMER_PROF` kept
    /// by unixd with their intervals (the CPU-time ones timed as wall
    /// time). A NULL `new` disarms, as Linux still allows.
    fn setitimer(&mut self, which: u64, new: u64, old: u64) -> R {
        let get = new == u64::MAX;
        let (value, interval) = if get || new == 0 {
            (0, 0)
        } else {
            let mut b = [0u8; 32];
            self.space.read(new, &mut b).map_err(Touch::errno)?;
            let w =
                |i: usize| i64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or_default());
            let ns = |s: i64, us: i64| -> R {
                if s < 0 || !(0..1_000_000).contains(&us) {
                    return Err(EINVAL);
                }
                Ok((s as u64)
                    .saturating_mul(1_000_000_000)
                    .saturating_add(us as u64 * 1000))
            };
            (ns(w(2), w(3))?, ns(w(0), w(1))?)
        };
        if which > 2 {
            return Err(EINVAL);
        }
        if get {
            // A bad pointer is found before anything is read.
            self.space.touch(old, 32, true).map_err(Touch::errno)?;
        }
        let a = Msg::new(UNIXD, proto::ALARM)
            .words([value, which | if get { 4 } else { 0 }, interval, 0])
            .call();
        let left = crate::fds::result(&a).unwrap_or(Err(EIO))?;
        let iv = a.w[1];
        if old != 0 {
            let mut b = [0u8; 32];
            b[..8].copy_from_slice(&(iv / 1_000_000_000).to_le_bytes());
            b[8..16].copy_from_slice(&(iv % 1_000_000_000 / 1000).to_le_bytes());
            // Rounded up to a microsecond: a timer still armed never
            // reads as 0.
            let l = left.div_ceil(1000);
            b[16..24].copy_from_slice(&(l / 1_000_000).to_le_bytes());
            b[24..32].copy_from_slice(&(l % 1_000_000).to_le_bytes());
            self.space.write(old, &b).map_err(Touch::errno)?;
        }
        Ok(0)
    }

    /// `nanosleep` and `clock_nanosleep` (`TIMER_ABSTIME` 1): parked in
    /// unixd, so a signal ends it with `-EINTR` and the time left.
    fn clock_nanosleep(&mut self, clk: u64, flags: u64, req: u64, rem: u64) -> R {
        // The calling thread's CPU clock cannot be slept on (Linux:
        // EOPNOTSUPP), another thread's neither (EINVAL); a process's CPU
        // clock is slept on as wall time.
        let wall = match self.clock_of(clk)? {
            Clock::Thread(_) if clk == clock::THREAD_CPUTIME => return Err(EOPNOTSUPP),
            Clock::Thread(_) => return Err(EINVAL),
            Clock::Wall => true,
            _ => false,
        };
        let t = self.timespec(req)?;
        let now = now_ns();
        let deadline = if flags & 1 != 0 {
            if wall {
                t.saturating_sub(boot_wall_ns())
            } else {
                t
            }
        } else {
            now.saturating_add(t)
        };
        let r = self.wait_until(deadline);
        if r == Err(EINTR) && rem != 0 && flags & 1 == 0 {
            let left = deadline.saturating_sub(now_ns());
            let mut o = [0u8; 16];
            o[..8].copy_from_slice(&(left / 1_000_000_000).to_le_bytes());
            o[8..].copy_from_slice(&(left % 1_000_000_000).to_le_bytes());
            self.space.write(rem, &o).map_err(Touch::errno)?;
        }
        r
    }

    fn getrandom(&mut self, buf: u64, len: u64, flags: u64) -> R {
        // GRND_NONBLOCK 1, GRND_RANDOM 2, GRND_INSECURE 4 (not with RANDOM).
        let flags = flags as u32;
        if flags & !7 != 0 || flags & 6 == 6 {
            return Err(EINVAL);
        }
        let len = len.min(1 << 20);
        self.space.touch(buf, len, true).map_err(Touch::errno)?;
        let mut at = 0;
        while at < len {
            let v = self.random().to_le_bytes();
            let n = (len - at).min(8) as usize;
            self.space.win.write(buf + at, &v[..n]);
            at += n as u64;
        }
        Ok(len)
    }

    fn sigaction(&mut self, sig: u64, act: u64, old: u64, size: u64) -> R {
        if sig == 0 || sig > NSIG || size != 8 {
            return Err(EINVAL);
        }
        if act != 0 && (sig == SIGKILL || sig == SIGSTOP) {
            return Err(EINVAL);
        }
        let i = sig as usize - 1;
        if old != 0 {
            let cur = self.actions[i];
            self.space.write(old, &cur).map_err(Touch::errno)?;
        }
        if act != 0 {
            let mut b = [0u8; 32];
            self.space.read(act, &mut b).map_err(Touch::errno)?;
            self.set_action(i, b);
        }
        Ok(0)
    }

    fn sigprocmask(&mut self, how: u64, set: u64, old: u64, size: u64) -> R {
        if size != 8 {
            return Err(EINVAL);
        }
        let prev = self.sigmask;
        if set != 0 {
            let mut b = [0u8; 8];
            self.space.read(set, &mut b).map_err(Touch::errno)?;
            let s = u64::from_le_bytes(b);
            self.sigmask = match how {
                SIG_BLOCK => prev | s,
                SIG_UNBLOCK => prev & !s,
                SIG_SETMASK => s,
                _ => return Err(EINVAL),
            };
            self.sigmask &= !crate::signals::UNBLOCKABLE;
        }
        if old != 0 {
            self.space
                .write(old, &prev.to_le_bytes())
                .map_err(Touch::errno)?;
        }
        Ok(0)
    }
}
