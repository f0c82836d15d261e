//! Every Linux value the UNIX personality types by hand, checked against
//! `linux-raw-sys` (generated from the kernel's uapi headers): system call
//! numbers, errno values, signals, terminal ioctls and flags, `open`,
//! `mmap` and `*at` flags, clock ids, the auxiliary vector's types, and
//! the layouts of `struct stat`, `struct termios` and `struct utsname` as
//! `stet-unix` writes them (`linux_dirent64`: `stet-unixfs`'s test).
//!
//! `every_constant_is_checked` reads the checked modules' sources: a
//! constant added there without a row here fails it.
//!
//! linux-raw-sys gives the values of the architecture it is built for, and
//! Stet's are x86_64's: on another host this file holds no test.
#![cfg(all(target_arch = "x86_64", target_os = "linux"))]

use linux_raw_sys::{auxvec, elf_uapi, errno, general, ioctl, net, prctl, system};
use std::collections::BTreeSet;
use std::mem::{offset_of, size_of};
use stet_unix::{elf, fs, proto, stack, sys, tty};

/// `(ours as written, our value, Linux's value)`.
type Row = (&'static str, i128, i128);

macro_rules! rows {
    ($($ours:path => $theirs:expr,)*) => {
        vec![$((stringify!($ours), $ours as i128, $theirs as i128),)*]
    };
}

/// The size of a field of `T`, without a value of `T`.
fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

/// Every checked constant and the value linux-raw-sys has for it.
fn linux_rows() -> Vec<Row> {
    let mut r = rows! {
        sys::nr::READ => general::__NR_read,
        sys::nr::WRITE => general::__NR_write,
        sys::nr::OPEN => general::__NR_open,
        sys::nr::CLOSE => general::__NR_close,
        sys::nr::STAT => general::__NR_stat,
        sys::nr::FSTAT => general::__NR_fstat,
        sys::nr::LSTAT => general::__NR_lstat,
        sys::nr::POLL => general::__NR_poll,
        sys::nr::LSEEK => general::__NR_lseek,
        sys::nr::MMAP => general::__NR_mmap,
        sys::nr::MPROTECT => general::__NR_mprotect,
        sys::nr::MUNMAP => general::__NR_munmap,
        sys::nr::BRK => general::__NR_brk,
        sys::nr::RT_SIGACTION => general::__NR_rt_sigaction,
        sys::nr::RT_SIGPROCMASK => general::__NR_rt_sigprocmask,
        sys::nr::RT_SIGRETURN => general::__NR_rt_sigreturn,
        sys::nr::IOCTL => general::__NR_ioctl,
        sys::nr::PREAD64 => general::__NR_pread64,
        sys::nr::PWRITE64 => general::__NR_pwrite64,
        sys::nr::READV => general::__NR_readv,
        sys::nr::WRITEV => general::__NR_writev,
        sys::nr::ACCESS => general::__NR_access,
        sys::nr::PIPE => general::__NR_pipe,
        sys::nr::SELECT => general::__NR_select,
        sys::nr::SCHED_YIELD => general::__NR_sched_yield,
        sys::nr::MREMAP => general::__NR_mremap,
        sys::nr::MSYNC => general::__NR_msync,
        sys::nr::MADVISE => general::__NR_madvise,
        sys::nr::DUP => general::__NR_dup,
        sys::nr::DUP2 => general::__NR_dup2,
        sys::nr::PAUSE => general::__NR_pause,
        sys::nr::NANOSLEEP => general::__NR_nanosleep,
        sys::nr::GETITIMER => general::__NR_getitimer,
        sys::nr::ALARM => general::__NR_alarm,
        sys::nr::SETITIMER => general::__NR_setitimer,
        sys::nr::GETPID => general::__NR_getpid,
        sys::nr::SENDFILE => general::__NR_sendfile,
        sys::nr::CLONE => general::__NR_clone,
        sys::nr::FORK => general::__NR_fork,
        sys::nr::VFORK => general::__NR_vfork,
        sys::nr::EXECVE => general::__NR_execve,
        sys::nr::EXIT => general::__NR_exit,
        sys::nr::WAIT4 => general::__NR_wait4,
        sys::nr::KILL => general::__NR_kill,
        sys::nr::PTRACE => general::__NR_ptrace,
        sys::nr::UNAME => general::__NR_uname,
        sys::nr::FCNTL => general::__NR_fcntl,
        sys::nr::FSYNC => general::__NR_fsync,
        sys::nr::FDATASYNC => general::__NR_fdatasync,
        sys::nr::TRUNCATE => general::__NR_truncate,
        sys::nr::FTRUNCATE => general::__NR_ftruncate,
        sys::nr::GETCWD => general::__NR_getcwd,
        sys::nr::CHDIR => general::__NR_chdir,
        sys::nr::FCHDIR => general::__NR_fchdir,
        sys::nr::RENAME => general::__NR_rename,
        sys::nr::MKDIR => general::__NR_mkdir,
        sys::nr::RMDIR => general::__NR_rmdir,
        sys::nr::LINK => general::__NR_link,
        sys::nr::UNLINK => general::__NR_unlink,
        sys::nr::SYMLINK => general::__NR_symlink,
        sys::nr::READLINK => general::__NR_readlink,
        sys::nr::CHMOD => general::__NR_chmod,
        sys::nr::FCHMOD => general::__NR_fchmod,
        sys::nr::CHOWN => general::__NR_chown,
        sys::nr::FCHOWN => general::__NR_fchown,
        sys::nr::LCHOWN => general::__NR_lchown,
        sys::nr::SETREUID => general::__NR_setreuid,
        sys::nr::SETREGID => general::__NR_setregid,
        sys::nr::SETGROUPS => general::__NR_setgroups,
        sys::nr::SETRESUID => general::__NR_setresuid,
        sys::nr::GETRESUID => general::__NR_getresuid,
        sys::nr::SETRESGID => general::__NR_setresgid,
        sys::nr::GETRESGID => general::__NR_getresgid,
        sys::nr::SETFSUID => general::__NR_setfsuid,
        sys::nr::SETFSGID => general::__NR_setfsgid,
        sys::nr::UMASK => general::__NR_umask,
        sys::nr::GETTIMEOFDAY => general::__NR_gettimeofday,
        sys::nr::GETRLIMIT => general::__NR_getrlimit,
        sys::nr::SYSINFO => general::__NR_sysinfo,
        sys::nr::SYSLOG => general::__NR_syslog,
        sys::nr::STATFS => general::__NR_statfs,
        sys::nr::FSTATFS => general::__NR_fstatfs,
        sys::nr::GETUID => general::__NR_getuid,
        sys::nr::GETGID => general::__NR_getgid,
        sys::nr::SETUID => general::__NR_setuid,
        sys::nr::SETGID => general::__NR_setgid,
        sys::nr::GETEUID => general::__NR_geteuid,
        sys::nr::GETEGID => general::__NR_getegid,
        sys::nr::SETPGID => general::__NR_setpgid,
        sys::nr::GETPPID => general::__NR_getppid,
        sys::nr::GETPGRP => general::__NR_getpgrp,
        sys::nr::SETSID => general::__NR_setsid,
        sys::nr::GETGROUPS => general::__NR_getgroups,
        sys::nr::GETPGID => general::__NR_getpgid,
        sys::nr::GETSID => general::__NR_getsid,
        sys::nr::RT_SIGPENDING => general::__NR_rt_sigpending,
        sys::nr::RT_SIGTIMEDWAIT => general::__NR_rt_sigtimedwait,
        sys::nr::RT_SIGQUEUEINFO => general::__NR_rt_sigqueueinfo,
        sys::nr::RT_TGSIGQUEUEINFO => general::__NR_rt_tgsigqueueinfo,
        sys::nr::RT_SIGSUSPEND => general::__NR_rt_sigsuspend,
        sys::nr::SIGALTSTACK => general::__NR_sigaltstack,
        sys::nr::ARCH_PRCTL => general::__NR_arch_prctl,
        sys::nr::PRCTL => general::__NR_prctl,
        sys::nr::SCHED_SETPARAM => general::__NR_sched_setparam,
        sys::nr::SCHED_GETPARAM => general::__NR_sched_getparam,
        sys::nr::SCHED_SETSCHEDULER => general::__NR_sched_setscheduler,
        sys::nr::SCHED_GETSCHEDULER => general::__NR_sched_getscheduler,
        sys::nr::SCHED_GET_PRIORITY_MAX => general::__NR_sched_get_priority_max,
        sys::nr::SCHED_GET_PRIORITY_MIN => general::__NR_sched_get_priority_min,
        sys::nr::SCHED_RR_GET_INTERVAL => general::__NR_sched_rr_get_interval,
        sys::nr::SCHED_SETATTR => general::__NR_sched_setattr,
        sys::nr::SCHED_GETATTR => general::__NR_sched_getattr,
        sys::nr::SYNC => general::__NR_sync,
        sys::nr::SYNCFS => general::__NR_syncfs,
        sys::nr::GETTID => general::__NR_gettid,
        sys::nr::TKILL => general::__NR_tkill,
        sys::nr::TIME => general::__NR_time,
        sys::nr::SCHED_GETAFFINITY => general::__NR_sched_getaffinity,
        sys::nr::SCHED_SETAFFINITY => general::__NR_sched_setaffinity,
        sys::nr::TIMES => general::__NR_times,
        sys::nr::WAITID => general::__NR_waitid,
        sys::nr::ADD_KEY => general::__NR_add_key,
        sys::nr::REQUEST_KEY => general::__NR_request_key,
        sys::nr::KEYCTL => general::__NR_keyctl,
        sys::nr::FLOCK => general::__NR_flock,
        sys::nr::MINCORE => general::__NR_mincore,
        sys::nr::PREADV => general::__NR_preadv,
        sys::nr::PWRITEV => general::__NR_pwritev,
        sys::nr::PREADV2 => general::__NR_preadv2,
        sys::nr::PWRITEV2 => general::__NR_pwritev2,
        sys::nr::SETXATTR => general::__NR_setxattr,
        sys::nr::LSETXATTR => general::__NR_lsetxattr,
        sys::nr::FSETXATTR => general::__NR_fsetxattr,
        sys::nr::GETXATTR => general::__NR_getxattr,
        sys::nr::LGETXATTR => general::__NR_lgetxattr,
        sys::nr::FGETXATTR => general::__NR_fgetxattr,
        sys::nr::LISTXATTR => general::__NR_listxattr,
        sys::nr::LLISTXATTR => general::__NR_llistxattr,
        sys::nr::FLISTXATTR => general::__NR_flistxattr,
        sys::nr::REMOVEXATTR => general::__NR_removexattr,
        sys::nr::LREMOVEXATTR => general::__NR_lremovexattr,
        sys::nr::FREMOVEXATTR => general::__NR_fremovexattr,
        sys::nr::FALLOCATE => general::__NR_fallocate,
        sys::nr::COPY_FILE_RANGE => general::__NR_copy_file_range,
        sys::nr::MKNOD => general::__NR_mknod,
        sys::nr::MKNODAT => general::__NR_mknodat,
        sys::nr::SPLICE => general::__NR_splice,
        sys::nr::TEE => general::__NR_tee,
        sys::nr::VMSPLICE => general::__NR_vmsplice,
        sys::nr::SETTIMEOFDAY => general::__NR_settimeofday,
        sys::nr::SETHOSTNAME => general::__NR_sethostname,
        sys::nr::SETDOMAINNAME => general::__NR_setdomainname,
        sys::nr::REBOOT => general::__NR_reboot,
        sys::nr::IOPRIO_GET => general::__NR_ioprio_get,
        sys::nr::IOPRIO_SET => general::__NR_ioprio_set,
        sys::nr::VHANGUP => general::__NR_vhangup,
        sys::nr::SYSFS => general::__NR_sysfs,
        sys::nr::USTAT => general::__NR_ustat,
        sys::nr::ADJTIMEX => general::__NR_adjtimex,
        sys::nr::CLOCK_ADJTIME => general::__NR_clock_adjtime,
        sys::nr::CLOCK_SETTIME => general::__NR_clock_settime,
        sys::nr::TIMER_CREATE => general::__NR_timer_create,
        sys::nr::TIMER_SETTIME => general::__NR_timer_settime,
        sys::nr::TIMER_GETTIME => general::__NR_timer_gettime,
        sys::nr::TIMER_GETOVERRUN => general::__NR_timer_getoverrun,
        sys::nr::TIMER_DELETE => general::__NR_timer_delete,
        sys::nr::TIMERFD_CREATE => general::__NR_timerfd_create,
        sys::nr::EVENTFD => general::__NR_eventfd,
        sys::nr::TIMERFD_SETTIME => general::__NR_timerfd_settime,
        sys::nr::TIMERFD_GETTIME => general::__NR_timerfd_gettime,
        sys::nr::EVENTFD2 => general::__NR_eventfd2,
        sys::nr::INOTIFY_INIT => general::__NR_inotify_init,
        sys::nr::INOTIFY_ADD_WATCH => general::__NR_inotify_add_watch,
        sys::nr::INOTIFY_RM_WATCH => general::__NR_inotify_rm_watch,
        sys::nr::INOTIFY_INIT1 => general::__NR_inotify_init1,
        sys::nr::GETRUSAGE => general::__NR_getrusage,
        sys::nr::SETRLIMIT => general::__NR_setrlimit,
        sys::nr::GETPRIORITY => general::__NR_getpriority,
        sys::nr::SETPRIORITY => general::__NR_setpriority,
        sys::nr::CAPGET => general::__NR_capget,
        sys::nr::CAPSET => general::__NR_capset,
        sys::nr::MLOCK => general::__NR_mlock,
        sys::nr::MUNLOCK => general::__NR_munlock,
        sys::nr::MLOCKALL => general::__NR_mlockall,
        sys::nr::MUNLOCKALL => general::__NR_munlockall,
        sys::nr::FADVISE64 => general::__NR_fadvise64,
        sys::nr::MLOCK2 => general::__NR_mlock2,
        sys::nr::GET_ROBUST_LIST => general::__NR_get_robust_list,
        sys::nr::CLONE3 => general::__NR_clone3,
        sys::nr::FUTEX => general::__NR_futex,
        sys::nr::GETDENTS64 => general::__NR_getdents64,
        sys::nr::SET_TID_ADDRESS => general::__NR_set_tid_address,
        sys::nr::CLOCK_GETTIME => general::__NR_clock_gettime,
        sys::nr::CLOCK_GETRES => general::__NR_clock_getres,
        sys::nr::CLOCK_NANOSLEEP => general::__NR_clock_nanosleep,
        sys::nr::EXIT_GROUP => general::__NR_exit_group,
        sys::nr::TGKILL => general::__NR_tgkill,
        sys::nr::OPENAT => general::__NR_openat,
        sys::nr::MKDIRAT => general::__NR_mkdirat,
        sys::nr::FCHOWNAT => general::__NR_fchownat,
        sys::nr::NEWFSTATAT => general::__NR_newfstatat,
        sys::nr::UNLINKAT => general::__NR_unlinkat,
        sys::nr::RENAMEAT => general::__NR_renameat,
        sys::nr::LINKAT => general::__NR_linkat,
        sys::nr::SYMLINKAT => general::__NR_symlinkat,
        sys::nr::READLINKAT => general::__NR_readlinkat,
        sys::nr::FCHMODAT => general::__NR_fchmodat,
        sys::nr::FACCESSAT => general::__NR_faccessat,
        sys::nr::PSELECT6 => general::__NR_pselect6,
        sys::nr::PPOLL => general::__NR_ppoll,
        sys::nr::EPOLL_CREATE => general::__NR_epoll_create,
        sys::nr::EPOLL_CREATE1 => general::__NR_epoll_create1,
        sys::nr::EPOLL_CTL => general::__NR_epoll_ctl,
        sys::nr::EPOLL_WAIT => general::__NR_epoll_wait,
        sys::nr::EPOLL_PWAIT => general::__NR_epoll_pwait,
        sys::nr::EPOLL_PWAIT2 => general::__NR_epoll_pwait2,
        sys::nr::SIGNALFD => general::__NR_signalfd,
        sys::nr::SIGNALFD4 => general::__NR_signalfd4,
        sys::nr::SET_ROBUST_LIST => general::__NR_set_robust_list,
        sys::nr::UTIMENSAT => general::__NR_utimensat,
        sys::nr::DUP3 => general::__NR_dup3,
        sys::nr::PIPE2 => general::__NR_pipe2,
        sys::nr::PRLIMIT64 => general::__NR_prlimit64,
        sys::nr::RENAMEAT2 => general::__NR_renameat2,
        sys::nr::GETRANDOM => general::__NR_getrandom,
        sys::nr::STATX => general::__NR_statx,
        sys::nr::PERSONALITY => general::__NR_personality,
        sys::nr::UNSHARE => general::__NR_unshare,
        sys::nr::GETCPU => general::__NR_getcpu,
        sys::nr::KCMP => general::__NR_kcmp,
        sys::nr::PROCESS_VM_READV => general::__NR_process_vm_readv,
        sys::nr::PROCESS_VM_WRITEV => general::__NR_process_vm_writev,
        sys::nr::MEMBARRIER => general::__NR_membarrier,
        sys::nr::PIDFD_SEND_SIGNAL => general::__NR_pidfd_send_signal,
        sys::nr::PIDFD_OPEN => general::__NR_pidfd_open,
        sys::nr::PIDFD_GETFD => general::__NR_pidfd_getfd,
        sys::nr::FUTEX_WAITV => general::__NR_futex_waitv,
        sys::nr::RSEQ => general::__NR_rseq,
        sys::nr::FACCESSAT2 => general::__NR_faccessat2,
        sys::nr::CHROOT => general::__NR_chroot,
        sys::nr::REMAP_FILE_PAGES => general::__NR_remap_file_pages,
        sys::nr::FUTIMESAT => general::__NR_futimesat,
        sys::nr::SYNC_FILE_RANGE => general::__NR_sync_file_range,
        sys::nr::MEMFD_CREATE => general::__NR_memfd_create,
        sys::nr::CLOSE_RANGE => general::__NR_close_range,
        sys::nr::OPENAT2 => general::__NR_openat2,
        sys::nr::NAME_TO_HANDLE_AT => general::__NR_name_to_handle_at,
        sys::nr::OPEN_BY_HANDLE_AT => general::__NR_open_by_handle_at,
        sys::errno::EPERM => errno::EPERM,
        sys::errno::ENOENT => errno::ENOENT,
        sys::errno::ESRCH => errno::ESRCH,
        sys::errno::EINTR => errno::EINTR,
        sys::errno::EIO => errno::EIO,
        sys::errno::ENXIO => errno::ENXIO,
        sys::errno::E2BIG => errno::E2BIG,
        sys::errno::ENOEXEC => errno::ENOEXEC,
        sys::errno::ELIBBAD => errno::ELIBBAD,
        sys::errno::EOPNOTSUPP => errno::EOPNOTSUPP,
        sys::errno::ENOLCK => errno::ENOLCK,
        sys::errno::EOVERFLOW => errno::EOVERFLOW,
        sys::errno::EBADF => errno::EBADF,
        sys::errno::ECHILD => errno::ECHILD,
        sys::errno::EAGAIN => errno::EAGAIN,
        sys::errno::ENOMEM => errno::ENOMEM,
        sys::errno::EACCES => errno::EACCES,
        sys::errno::EFAULT => errno::EFAULT,
        sys::errno::EBUSY => errno::EBUSY,
        sys::errno::EEXIST => errno::EEXIST,
        sys::errno::EXDEV => errno::EXDEV,
        sys::errno::ESTALE => errno::ESTALE,
        sys::errno::ENODEV => errno::ENODEV,
        sys::errno::ENOTDIR => errno::ENOTDIR,
        sys::errno::EISDIR => errno::EISDIR,
        sys::errno::EINVAL => errno::EINVAL,
        sys::errno::ENFILE => errno::ENFILE,
        sys::errno::EMFILE => errno::EMFILE,
        sys::errno::ENOTTY => errno::ENOTTY,
        sys::errno::EFBIG => errno::EFBIG,
        sys::errno::ENOSPC => errno::ENOSPC,
        sys::errno::ESPIPE => errno::ESPIPE,
        sys::errno::EROFS => errno::EROFS,
        sys::errno::EPIPE => errno::EPIPE,
        sys::errno::ERANGE => errno::ERANGE,
        sys::errno::EDEADLK => errno::EDEADLK,
        sys::errno::ENOLCK => errno::ENOLCK,
        sys::errno::EOVERFLOW => errno::EOVERFLOW,
        sys::errno::ENAMETOOLONG => errno::ENAMETOOLONG,
        sys::errno::ENOSYS => errno::ENOSYS,
        sys::errno::ENOTEMPTY => errno::ENOTEMPTY,
        sys::errno::ELOOP => errno::ELOOP,
        sys::errno::ETIMEDOUT => errno::ETIMEDOUT,
        sys::errno::ENODATA => errno::ENODATA,
        sys::errno::EDQUOT => errno::EDQUOT,
        sys::errno::ENOKEY => errno::ENOKEY,
        sys::errno::EKEYEXPIRED => errno::EKEYEXPIRED,
        sys::errno::EKEYREVOKED => errno::EKEYREVOKED,
        sys::xattr::NAME_MAX => general::XATTR_NAME_MAX,
        sys::xattr::SIZE_MAX => general::XATTR_SIZE_MAX,
        sys::xattr::CREATE => general::XATTR_CREATE,
        sys::xattr::REPLACE => general::XATTR_REPLACE,
        sys::sig::SIGHUP => general::SIGHUP,
        sys::sig::SIGINT => general::SIGINT,
        sys::sig::SIGQUIT => general::SIGQUIT,
        sys::sig::SIGILL => general::SIGILL,
        sys::sig::SIGTRAP => general::SIGTRAP,
        sys::sig::SIGABRT => general::SIGABRT,
        sys::sig::SIGBUS => general::SIGBUS,
        sys::sig::SIGFPE => general::SIGFPE,
        sys::sig::SIGKILL => general::SIGKILL,
        sys::sig::SIGUSR1 => general::SIGUSR1,
        sys::sig::SIGSEGV => general::SIGSEGV,
        sys::sig::SIGUSR2 => general::SIGUSR2,
        sys::sig::SIGPIPE => general::SIGPIPE,
        sys::sig::SIGALRM => general::SIGALRM,
        sys::sig::SIGTERM => general::SIGTERM,
        sys::sig::SIGSTKFLT => general::SIGSTKFLT,
        sys::sig::SIGCHLD => general::SIGCHLD,
        sys::sig::SIGCONT => general::SIGCONT,
        sys::sig::SIGSTOP => general::SIGSTOP,
        sys::sig::SIGTSTP => general::SIGTSTP,
        sys::sig::SIGTTIN => general::SIGTTIN,
        sys::sig::SIGTTOU => general::SIGTTOU,
        sys::sig::SIGURG => general::SIGURG,
        sys::sig::SIGXCPU => general::SIGXCPU,
        sys::sig::SIGXFSZ => general::SIGXFSZ,
        sys::sig::SIGVTALRM => general::SIGVTALRM,
        sys::sig::SIGPROF => general::SIGPROF,
        sys::sig::SIGWINCH => general::SIGWINCH,
        sys::sig::SIGIO => general::SIGIO,
        sys::sig::SIGPWR => general::SIGPWR,
        sys::sig::SIGSYS => general::SIGSYS,
        sys::sig::NSIG => general::_NSIG,
        sys::sig::SA_SIGINFO => general::SA_SIGINFO,
        sys::sig::SA_RESTORER => general::SA_RESTORER,
        sys::sig::SA_RESTART => general::SA_RESTART,
        sys::sig::SA_NODEFER => general::SA_NODEFER,
        sys::sig::SA_RESETHAND => general::SA_RESETHAND,
        sys::sig::SIG_BLOCK => general::SIG_BLOCK,
        sys::sig::SIG_UNBLOCK => general::SIG_UNBLOCK,
        sys::sig::SIG_SETMASK => general::SIG_SETMASK,
        sys::fcntl::F_DUPFD => general::F_DUPFD,
        sys::fcntl::F_GETFD => general::F_GETFD,
        sys::fcntl::F_SETFD => general::F_SETFD,
        sys::fcntl::F_GETFL => general::F_GETFL,
        sys::fcntl::F_SETFL => general::F_SETFL,
        sys::fcntl::F_GETLK => general::F_GETLK,
        sys::fcntl::F_SETLK => general::F_SETLK,
        sys::fcntl::F_SETLKW => general::F_SETLKW,
        sys::fcntl::F_DUPFD_CLOEXEC => general::F_DUPFD_CLOEXEC,
        sys::fcntl::F_SETOWN => general::F_SETOWN,
        sys::fcntl::F_GETOWN => general::F_GETOWN,
        sys::fcntl::F_SETSIG => general::F_SETSIG,
        sys::fcntl::F_GETSIG => general::F_GETSIG,
        sys::fcntl::F_SETOWN_EX => general::F_SETOWN_EX,
        sys::fcntl::F_GETOWN_EX => general::F_GETOWN_EX,
        sys::fcntl::F_SETLEASE => general::F_SETLEASE,
        sys::fcntl::F_GETLEASE => general::F_GETLEASE,
        sys::fcntl::F_SETPIPE_SZ => general::F_SETPIPE_SZ,
        sys::fcntl::F_GETPIPE_SZ => general::F_GETPIPE_SZ,
        sys::splice::SPLICE_F_MOVE => general::SPLICE_F_MOVE,
        sys::splice::SPLICE_F_NONBLOCK => general::SPLICE_F_NONBLOCK,
        sys::splice::SPLICE_F_MORE => general::SPLICE_F_MORE,
        sys::splice::SPLICE_F_GIFT => general::SPLICE_F_GIFT,
        sys::splice::ALL => general::SPLICE_F_MOVE
            | general::SPLICE_F_NONBLOCK
            | general::SPLICE_F_MORE
            | general::SPLICE_F_GIFT,
        sys::flock::SIZE => size_of::<general::flock>(),
        sys::flock::L_TYPE => offset_of!(general::flock, l_type),
        sys::flock::L_WHENCE => offset_of!(general::flock, l_whence),
        sys::flock::L_START => offset_of!(general::flock, l_start),
        sys::flock::L_LEN => offset_of!(general::flock, l_len),
        sys::flock::L_PID => offset_of!(general::flock, l_pid),
        sys::flock::F_RDLCK => general::F_RDLCK,
        sys::flock::F_WRLCK => general::F_WRLCK,
        sys::flock::F_UNLCK => general::F_UNLCK,
        sys::poll::POLLIN => general::POLLIN,
        sys::poll::POLLOUT => general::POLLOUT,
        sys::poll::POLLERR => general::POLLERR,
        sys::poll::POLLHUP => general::POLLHUP,
        sys::poll::POLLNVAL => general::POLLNVAL,
        sys::poll::FD_SETSIZE => general::__FD_SETSIZE,
        sys::wait::WNOHANG => general::WNOHANG,
        sys::wait::WUNTRACED => general::WUNTRACED,
        sys::wait::WALL => general::__WALL,
        sys::clone::CSIGNAL => general::CSIGNAL,
        sys::rlimit::RLIMIT_MEMLOCK => general::RLIMIT_MEMLOCK,
        sys::rlimit::RLIMIT_CORE => general::RLIMIT_CORE,
        sys::rlimit::RLIMIT_RTPRIO => general::RLIMIT_RTPRIO,
        sys::rlimit::RLIMIT_SIGPENDING => general::RLIMIT_SIGPENDING,
        sys::sig::SA_ONSTACK => general::SA_ONSTACK,
        sys::clone::CLONE_VM => general::CLONE_VM,
        sys::clone::CLONE_FS => general::CLONE_FS,
        sys::clone::CLONE_FILES => general::CLONE_FILES,
        sys::clone::CLONE_SIGHAND => general::CLONE_SIGHAND,
        sys::clone::CLONE_VFORK => general::CLONE_VFORK,
        sys::clone::CLONE_THREAD => general::CLONE_THREAD,
        sys::clone::CLONE_SYSVSEM => general::CLONE_SYSVSEM,
        sys::clone::CLONE_SETTLS => general::CLONE_SETTLS,
        sys::clone::CLONE_DETACHED => general::CLONE_DETACHED,
        sys::clone::CLONE_PARENT_SETTID => general::CLONE_PARENT_SETTID,
        sys::clone::CLONE_CHILD_CLEARTID => general::CLONE_CHILD_CLEARTID,
        sys::clone::CLONE_CHILD_SETTID => general::CLONE_CHILD_SETTID,
        sys::clone::CLONE_PARENT => general::CLONE_PARENT,
        sys::clone::CLONE_IO => general::CLONE_IO,
        sys::clone::CLONE_NEWNS => general::CLONE_NEWNS,
        sys::clone::CLONE_NEWCGROUP => general::CLONE_NEWCGROUP,
        sys::clone::CLONE_NEWUTS => general::CLONE_NEWUTS,
        sys::clone::CLONE_NEWIPC => general::CLONE_NEWIPC,
        sys::clone::CLONE_NEWUSER => general::CLONE_NEWUSER,
        sys::clone::CLONE_NEWPID => general::CLONE_NEWPID,
        sys::clone::CLONE_NEWNET => general::CLONE_NEWNET,
        sys::clone::CLONE_NEWTIME => general::CLONE_NEWTIME,
        sys::clone::NEW_NS => general::CLONE_NEWNS
            | general::CLONE_NEWCGROUP
            | general::CLONE_NEWUTS
            | general::CLONE_NEWIPC
            | general::CLONE_NEWUSER
            | general::CLONE_NEWPID
            | general::CLONE_NEWNET
            | general::CLONE_NEWTIME,
        sys::futex::WAIT => general::FUTEX_WAIT,
        sys::futex::WAKE => general::FUTEX_WAKE,
        sys::futex::REQUEUE => general::FUTEX_REQUEUE,
        sys::futex::CMP_REQUEUE => general::FUTEX_CMP_REQUEUE,
        sys::futex::WAKE_OP => general::FUTEX_WAKE_OP,
        sys::futex::WAIT_BITSET => general::FUTEX_WAIT_BITSET,
        sys::futex::WAKE_BITSET => general::FUTEX_WAKE_BITSET,
        sys::futex::PRIVATE_FLAG => general::FUTEX_PRIVATE_FLAG,
        sys::futex::CLOCK_REALTIME => general::FUTEX_CLOCK_REALTIME,
        sys::msync::MS_ASYNC => general::MS_ASYNC,
        sys::msync::MS_INVALIDATE => general::MS_INVALIDATE,
        sys::msync::MS_SYNC => general::MS_SYNC,
        sys::rlimit::RLIMIT_STACK => general::RLIMIT_STACK,
        sys::rlimit::RLIMIT_NOFILE => general::RLIMIT_NOFILE,
        sys::rlimit::RLIMIT_NPROC => general::RLIMIT_NPROC,
        sys::rlimit::RLIMIT_RSS => general::RLIMIT_RSS,
        sys::rlimit::RLIMIT_FSIZE => general::RLIMIT_FSIZE,
        sys::prctl::PR_SET_NAME => prctl::PR_SET_NAME,
        sys::prctl::PR_SET_PDEATHSIG => prctl::PR_SET_PDEATHSIG,
        sys::prctl::PR_GET_PDEATHSIG => prctl::PR_GET_PDEATHSIG,
        sys::prctl::PR_GET_TIMERSLACK => prctl::PR_GET_TIMERSLACK,
        sys::prctl::PR_SET_TIMERSLACK => prctl::PR_SET_TIMERSLACK,
        sys::prctl::PR_SET_CHILD_SUBREAPER => prctl::PR_SET_CHILD_SUBREAPER,
        sys::prctl::PR_GET_CHILD_SUBREAPER => prctl::PR_GET_CHILD_SUBREAPER,
        sys::prctl::PR_GET_DUMPABLE => prctl::PR_GET_DUMPABLE,
        sys::prctl::PR_SET_DUMPABLE => prctl::PR_SET_DUMPABLE,
        sys::prctl::PR_GET_SECCOMP => prctl::PR_GET_SECCOMP,
        sys::prctl::PR_SET_SECCOMP => prctl::PR_SET_SECCOMP,
        sys::prctl::PR_CAPBSET_READ => prctl::PR_CAPBSET_READ,
        sys::prctl::PR_SET_NO_NEW_PRIVS => prctl::PR_SET_NO_NEW_PRIVS,
        sys::prctl::PR_GET_NO_NEW_PRIVS => prctl::PR_GET_NO_NEW_PRIVS,
        sys::prctl::PR_GET_TID_ADDRESS => prctl::PR_GET_TID_ADDRESS,
        sys::prctl::PR_SET_THP_DISABLE => prctl::PR_SET_THP_DISABLE,
        sys::prctl::PR_GET_THP_DISABLE => prctl::PR_GET_THP_DISABLE,
        sys::prctl::PR_GET_SECUREBITS => prctl::PR_GET_SECUREBITS,
        sys::prctl::PR_SET_SECUREBITS => prctl::PR_SET_SECUREBITS,
        sys::prctl::PR_GET_SPECULATION_CTRL => prctl::PR_GET_SPECULATION_CTRL,
        sys::prctl::PR_SET_SPECULATION_CTRL => prctl::PR_SET_SPECULATION_CTRL,
        sys::prctl::PR_SPEC_ENABLE => prctl::PR_SPEC_ENABLE,
        sys::prctl::PR_SPEC_L1D_FLUSH => prctl::PR_SPEC_L1D_FLUSH,
        sys::prctl::PR_GET_NAME => prctl::PR_GET_NAME,
        sys::prctl::PR_CAPBSET_READ => prctl::PR_CAPBSET_READ,
        sys::prctl::PR_CAPBSET_DROP => prctl::PR_CAPBSET_DROP,
        sys::utime::UTIME_NOW => general::UTIME_NOW,
        sys::utime::UTIME_OMIT => general::UTIME_OMIT,
        sys::stat::ST_MODE => offset_of!(general::stat, st_mode),
        sys::stat::ST_RDEV => offset_of!(general::stat, st_rdev),
        sys::map::SHARED => general::MAP_SHARED,
        sys::map::PRIVATE => general::MAP_PRIVATE,
        sys::map::FIXED => general::MAP_FIXED,
        sys::map::ANONYMOUS => general::MAP_ANONYMOUS,
        sys::map::GROWSDOWN => general::MAP_GROWSDOWN,
        sys::map::SHARED_VALIDATE => general::MAP_SHARED_VALIDATE,
        sys::map::LOCKED => general::MAP_LOCKED,
        sys::map::KNOWN => general::MAP_SHARED
            | general::MAP_PRIVATE
            | general::MAP_FIXED
            | general::MAP_ANONYMOUS
            | general::MAP_GROWSDOWN
            | general::MAP_DENYWRITE
            | general::MAP_EXECUTABLE
            | general::MAP_LOCKED
            | general::MAP_NORESERVE
            | general::MAP_POPULATE
            | general::MAP_NONBLOCK
            | general::MAP_STACK
            | general::MAP_HUGETLB
            | general::MAP_FIXED_NOREPLACE
            | (general::MAP_HUGE_MASK << general::MAP_HUGE_SHIFT),
        sys::map::NORESERVE => general::MAP_NORESERVE,
        sys::map::POPULATE => general::MAP_POPULATE,
        sys::map::FIXED_NOREPLACE => general::MAP_FIXED_NOREPLACE,
        sys::arch::SET_FS => general::ARCH_SET_FS,
        sys::clock::REALTIME => general::CLOCK_REALTIME,
        sys::clock::MONOTONIC => general::CLOCK_MONOTONIC,
        sys::clock::PROCESS_CPUTIME => general::CLOCK_PROCESS_CPUTIME_ID,
        sys::clock::THREAD_CPUTIME => general::CLOCK_THREAD_CPUTIME_ID,
        sys::clock::MONOTONIC_RAW => general::CLOCK_MONOTONIC_RAW,
        sys::clock::REALTIME_COARSE => general::CLOCK_REALTIME_COARSE,
        sys::clock::MONOTONIC_COARSE => general::CLOCK_MONOTONIC_COARSE,
        sys::clock::BOOTTIME => general::CLOCK_BOOTTIME,
        sys::ioctl::TCGETS => ioctl::TCGETS,
        sys::ioctl::TCSETS => ioctl::TCSETS,
        sys::ioctl::TCSETSW => ioctl::TCSETSW,
        sys::ioctl::TCSETSF => ioctl::TCSETSF,
        sys::ioctl::TIOCGPGRP => ioctl::TIOCGPGRP,
        sys::ioctl::TIOCSPGRP => ioctl::TIOCSPGRP,
        sys::ioctl::TIOCGWINSZ => ioctl::TIOCGWINSZ,
        sys::ioctl::TIOCSWINSZ => ioctl::TIOCSWINSZ,
        sys::ioctl::FIONREAD => ioctl::FIONREAD,
        proto::o::ACCMODE => general::O_ACCMODE,
        proto::o::RDONLY => general::O_RDONLY,
        proto::o::WRONLY => general::O_WRONLY,
        proto::o::RDWR => general::O_RDWR,
        proto::o::CREAT => general::O_CREAT,
        proto::o::EXCL => general::O_EXCL,
        proto::o::NOCTTY => general::O_NOCTTY,
        proto::o::TRUNC => general::O_TRUNC,
        proto::o::APPEND => general::O_APPEND,
        proto::o::NONBLOCK => general::O_NONBLOCK,
        proto::o::ASYNC => general::FASYNC,
        proto::o::DIRECT => general::O_DIRECT,
        proto::o::DIRECTORY => general::O_DIRECTORY,
        proto::o::NOFOLLOW => general::O_NOFOLLOW,
        proto::o::CLOEXEC => general::O_CLOEXEC,
        proto::o::PATH => general::O_PATH,
        proto::o::NOATIME => general::O_NOATIME,
        proto::resolve::NO_XDEV => general::RESOLVE_NO_XDEV,
        proto::resolve::NO_MAGICLINKS => general::RESOLVE_NO_MAGICLINKS,
        proto::resolve::NO_SYMLINKS => general::RESOLVE_NO_SYMLINKS,
        proto::resolve::BENEATH => general::RESOLVE_BENEATH,
        proto::resolve::IN_ROOT => general::RESOLVE_IN_ROOT,
        proto::resolve::CACHED => general::RESOLVE_CACHED,
        proto::at::FDCWD => general::AT_FDCWD,
        proto::at::SYMLINK_NOFOLLOW => general::AT_SYMLINK_NOFOLLOW,
        proto::at::REMOVEDIR => general::AT_REMOVEDIR,
        proto::at::EACCESS => general::AT_EACCESS,
        proto::at::SYMLINK_FOLLOW => general::AT_SYMLINK_FOLLOW,
        proto::at::EMPTY_PATH => general::AT_EMPTY_PATH,
        tty::ICRNL => general::ICRNL,
        tty::ISIG => general::ISIG,
        tty::ICANON => general::ICANON,
        tty::ECHO => general::ECHO,
        tty::ECHOE => general::ECHOE,
        tty::ECHOK => general::ECHOK,
        tty::ECHOCTL => general::ECHOCTL,
        tty::cc::VINTR => general::VINTR,
        tty::cc::VQUIT => general::VQUIT,
        tty::cc::VERASE => general::VERASE,
        tty::cc::VKILL => general::VKILL,
        tty::cc::VEOF => general::VEOF,
        tty::cc::VTIME => general::VTIME,
        tty::cc::VMIN => general::VMIN,
        tty::cc::VSUSP => general::VSUSP,
        fs::mode::FMT => general::S_IFMT,
        fs::mode::DIR => general::S_IFDIR,
        fs::mode::REG => general::S_IFREG,
        fs::mode::LNK => general::S_IFLNK,
        fs::mode::CHR => general::S_IFCHR,
        fs::mode::FIFO => general::S_IFIFO,
        fs::mode::BLK => general::S_IFBLK,
        sys::nr::SOCKET => general::__NR_socket,
        sys::nr::CONNECT => general::__NR_connect,
        sys::nr::ACCEPT => general::__NR_accept,
        sys::nr::SENDTO => general::__NR_sendto,
        sys::nr::RECVFROM => general::__NR_recvfrom,
        sys::nr::SENDMSG => general::__NR_sendmsg,
        sys::nr::RECVMSG => general::__NR_recvmsg,
        sys::nr::SHUTDOWN => general::__NR_shutdown,
        sys::nr::BIND => general::__NR_bind,
        sys::nr::LISTEN => general::__NR_listen,
        sys::nr::GETSOCKNAME => general::__NR_getsockname,
        sys::nr::GETPEERNAME => general::__NR_getpeername,
        sys::nr::SOCKETPAIR => general::__NR_socketpair,
        sys::nr::SETSOCKOPT => general::__NR_setsockopt,
        sys::nr::GETSOCKOPT => general::__NR_getsockopt,
        sys::nr::ACCEPT4 => general::__NR_accept4,
        sys::errno::ENOTSOCK => errno::ENOTSOCK,
        sys::errno::EDESTADDRREQ => errno::EDESTADDRREQ,
        sys::errno::EMSGSIZE => errno::EMSGSIZE,
        sys::errno::EPROTOTYPE => errno::EPROTOTYPE,
        sys::errno::ENOPROTOOPT => errno::ENOPROTOOPT,
        sys::errno::EPROTONOSUPPORT => errno::EPROTONOSUPPORT,
        sys::errno::ESOCKTNOSUPPORT => errno::ESOCKTNOSUPPORT,
        sys::errno::EAFNOSUPPORT => errno::EAFNOSUPPORT,
        sys::errno::EADDRINUSE => errno::EADDRINUSE,
        sys::errno::ECONNRESET => errno::ECONNRESET,
        sys::errno::EISCONN => errno::EISCONN,
        sys::errno::ENOTCONN => errno::ENOTCONN,
        sys::errno::ECONNREFUSED => errno::ECONNREFUSED,
        sys::sock::AF_UNIX => net::AF_UNIX,
        sys::sock::AF_INET => net::AF_INET,
        sys::sock::AF_INET6 => net::AF_INET6,
        sys::sock::AF_MAX => net::AF_MAX,
        sys::sock::SOCK_STREAM => net::SOCK_STREAM,
        sys::sock::SOCK_DGRAM => net::SOCK_DGRAM,
        sys::sock::SOCK_RAW => net::SOCK_RAW,
        sys::sock::SOCK_SEQPACKET => net::SOCK_SEQPACKET,
        sys::sock::SHUT_RD => net::SHUT_RD,
        sys::sock::SHUT_WR => net::SHUT_WR,
        sys::sock::SHUT_RDWR => net::SHUT_RDWR,
        sys::sock::MSG_OOB => net::MSG_OOB,
        sys::sock::MSG_PEEK => net::MSG_PEEK,
        sys::sock::MSG_CTRUNC => net::MSG_CTRUNC,
        sys::sock::MSG_TRUNC => net::MSG_TRUNC,
        sys::sock::MSG_DONTWAIT => net::MSG_DONTWAIT,
        sys::sock::MSG_EOR => net::MSG_EOR,
        sys::sock::MSG_WAITALL => net::MSG_WAITALL,
        sys::sock::MSG_NOSIGNAL => net::MSG_NOSIGNAL,
        sys::sock::MSG_CMSG_CLOEXEC => net::MSG_CMSG_CLOEXEC,
        sys::sock::SOL_SOCKET => net::SOL_SOCKET,
        sys::sock::SO_DEBUG => net::SO_DEBUG,
        sys::sock::SO_REUSEADDR => net::SO_REUSEADDR,
        sys::sock::SO_TYPE => net::SO_TYPE,
        sys::sock::SO_ERROR => net::SO_ERROR,
        sys::sock::SO_DONTROUTE => net::SO_DONTROUTE,
        sys::sock::SO_BROADCAST => net::SO_BROADCAST,
        sys::sock::SO_SNDBUF => net::SO_SNDBUF,
        sys::sock::SO_RCVBUF => net::SO_RCVBUF,
        sys::sock::SO_KEEPALIVE => net::SO_KEEPALIVE,
        sys::sock::SO_OOBINLINE => net::SO_OOBINLINE,
        sys::sock::SO_PASSCRED => net::SO_PASSCRED,
        sys::sock::SO_PEERCRED => net::SO_PEERCRED,
        sys::sock::SO_RCVLOWAT => net::SO_RCVLOWAT,
        sys::sock::SO_SNDLOWAT => net::SO_SNDLOWAT,
        sys::sock::SO_ACCEPTCONN => net::SO_ACCEPTCONN,
        sys::sock::SO_PROTOCOL => net::SO_PROTOCOL,
        sys::sock::SO_DOMAIN => net::SO_DOMAIN,
        sys::sock::SCM_RIGHTS => net::SCM_RIGHTS,
        sys::sock::SOCK_NONBLOCK => general::O_NONBLOCK,
        sys::sock::SOCK_CLOEXEC => general::O_CLOEXEC,
        fs::mode::SOCK => general::S_IFSOCK,
        fs::mode::SUID => general::S_ISUID,
        fs::mode::SGID => general::S_ISGID,
        fs::mode::VTX => general::S_ISVTX,
        fs::MAX_NAME => general::NAME_MAX,
        // PATH_MAX counts the NUL.
        fs::MAX_PATH => general::PATH_MAX - 1,
        fs::MAX_LINK => general::PATH_MAX - 1,
        stack::at::NULL => auxvec::AT_NULL,
        stack::at::PHDR => auxvec::AT_PHDR,
        stack::at::PHENT => auxvec::AT_PHENT,
        stack::at::PHNUM => auxvec::AT_PHNUM,
        stack::at::PAGESZ => auxvec::AT_PAGESZ,
        stack::at::BASE => auxvec::AT_BASE,
        stack::at::FLAGS => auxvec::AT_FLAGS,
        stack::at::ENTRY => auxvec::AT_ENTRY,
        stack::at::UID => auxvec::AT_UID,
        stack::at::EUID => auxvec::AT_EUID,
        stack::at::GID => auxvec::AT_GID,
        stack::at::EGID => auxvec::AT_EGID,
        stack::at::PLATFORM => auxvec::AT_PLATFORM,
        stack::at::HWCAP => auxvec::AT_HWCAP,
        stack::at::CLKTCK => auxvec::AT_CLKTCK,
        stack::at::SECURE => auxvec::AT_SECURE,
        stack::at::RANDOM => auxvec::AT_RANDOM,
        stack::at::HWCAP2 => auxvec::AT_HWCAP2,
        stack::at::EXECFN => auxvec::AT_EXECFN,
        elf::prot::READ => general::PROT_READ,
        elf::prot::WRITE => general::PROT_WRITE,
        elf::prot::EXEC => general::PROT_EXEC,
        elf::PHENT => size_of::<elf_uapi::Elf64_Phdr>(),
        sys::UTSNAME_FIELD => field_size(|u: &system::new_utsname| &u.sysname),
        sys::statfs::TMPFS_MAGIC => general::TMPFS_MAGIC,
        sys::statfs::PROC_SUPER_MAGIC => general::PROC_SUPER_MAGIC,
        sys::statfs::PIPEFS_MAGIC => general::PIPEFS_MAGIC,
        sys::statfs::SIZE => size_of::<general::statfs>(),
    };
    // linux-raw-sys lacks these (bindgen drops the headers' casts, and it
    // takes only `ARCH_SET_FS` from <asm/prctl.h>): the headers' values.
    r.extend(rows! {
        sys::arch::SET_GS => 0x1001,
        sys::arch::GET_FS => 0x1003,
        sys::arch::GET_GS => 0x1004,
        // <asm-generic/signal-defs.h>: ((__sighandler_t)0) and 1.
        sys::sig::SIG_DFL => 0,
        sys::sig::SIG_IGN => 1,
        // <linux/statfs.h>'s ST_* (the kernel's, not uapi).
        sys::statfs::ST_NOSUID => 0x0002,
        sys::statfs::ST_NODEV => 0x0004,
        sys::statfs::ST_NOEXEC => 0x0008,
        sys::statfs::ST_VALID => 0x0020,
        // <linux/syslog.h>'s SYSLOG_ACTION_* (the kernel's, not uapi).
        sys::syslog::CLOSE => 0,
        sys::syslog::OPEN => 1,
        sys::syslog::READ => 2,
        sys::syslog::READ_ALL => 3,
        sys::syslog::READ_CLEAR => 4,
        sys::syslog::CLEAR => 5,
        sys::syslog::CONSOLE_OFF => 6,
        sys::syslog::CONSOLE_ON => 7,
        sys::syslog::CONSOLE_LEVEL => 8,
        sys::syslog::SIZE_UNREAD => 9,
        sys::syslog::SIZE_BUFFER => 10,
    });
    r
}

/// Constants in the checked modules that are Stet's own, not Linux's.
const OWN: [&str; 9] = [
    // <linux/net.h>'s SOCK_MAX and SOCK_TYPE_MASK are not uapi.
    "sys::sock::SOCK_MAX",
    "sys::sock::SOCK_TYPE_MASK",
    // `sun_path`'s size: a field of `struct sockaddr_un`, not a constant.
    "sys::sock::SUN_PATH",
    // The answer Stet gives to `uname`, not a value from a header.
    "sys::UNAME",
    // The terminal's input buffer.
    "tty::BUF",
    // How many `PT_LOAD` segments the loader takes.
    "elf::MAX_LOADS",
    // How many auxiliary vector entries `stack::build` writes.
    "stack::AUXV_ENTRIES",
    // Linux's MAXSYMLINKS (40) is not in the uapi headers.
    "fs::MAX_FOLLOW",
    // The root directory's inode number.
    "fs::ROOT",
];

/// The checked modules: a file of `stet-unix`, its source, and the
/// modules in it whose constants are Linux's ("" the file's top level,
/// "*" every module and the top level).
fn checked_sources() -> [(&'static str, &'static str, &'static [&'static str]); 6] {
    [
        // All of sys.rs: a new module there is checked too.
        ("sys", include_str!("../src/sys.rs"), &["*"]),
        (
            "proto",
            include_str!("../src/proto.rs"),
            &["o", "at", "resolve"],
        ),
        ("tty", include_str!("../src/tty.rs"), &["", "cc"]),
        ("fs", include_str!("../src/fs.rs"), &["", "mode"]),
        ("stack", include_str!("../src/stack.rs"), &["", "at"]),
        ("elf", include_str!("../src/elf.rs"), &["", "prot"]),
    ]
}

/// The `pub const` items of `src` in `mods` (a `pub mod` at the top
/// level, "" for the top level itself, "*" for all), as
/// `file::mod::NAME`.
fn consts(file: &str, src: &str, mods: &[&str]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut module: Option<&str> = None;
    for line in src.lines() {
        if let Some(m) = line
            .strip_prefix("pub mod ")
            .and_then(|m| m.strip_suffix(" {"))
        {
            module = Some(m);
        } else if line == "}" {
            module = None;
        } else {
            let (indent, name_of) = match module {
                None => ("pub const ", ""),
                Some(m) => ("    pub const ", m),
            };
            let Some(rest) = line.strip_prefix(indent) else {
                continue;
            };
            if rest.starts_with("fn ") || !(mods.contains(&name_of) || mods.contains(&"*")) {
                continue;
            }
            let name = rest.split(':').next().unwrap();
            out.insert(match name_of {
                "" => format!("{file}::{name}"),
                m => format!("{file}::{m}::{name}"),
            });
        }
    }
    out
}

#[test]
fn every_value_is_linux_s() {
    let mut wrong = Vec::new();
    for (name, ours, theirs) in linux_rows() {
        if ours != theirs {
            wrong.push(format!("{name}: ours {ours:#x}, Linux {theirs:#x}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_constant_is_checked() {
    let mut found = BTreeSet::new();
    for (file, src, mods) in checked_sources() {
        found.extend(consts(file, src, mods));
    }
    // The scan sees what it should: a few known names, in each file.
    for name in [
        "sys::nr::READ",
        "sys::UTSNAME_FIELD",
        "proto::o::PATH",
        "tty::cc::VSUSP",
        "fs::mode::FIFO",
        "stack::at::EXECFN",
        "elf::PHENT",
    ] {
        assert!(found.contains(name), "the scan missed {name}");
    }
    let mut checked: BTreeSet<String> = linux_rows()
        .iter()
        .map(|(name, _, _)| name.split_whitespace().collect())
        .collect();
    checked.extend(OWN.iter().map(|s| s.to_string()));
    let unchecked: Vec<_> = found.difference(&checked).collect();
    assert!(
        unchecked.is_empty(),
        "constants with no row in linux_rows (or OWN): {unchecked:?}"
    );
    let stale: Vec<_> = checked.difference(&found).collect();
    assert!(
        stale.is_empty(),
        "rows for constants the scan did not find: {stale:?}"
    );
}

/// A little-endian field of `b`.
fn get(b: &[u8], off: usize, len: usize) -> u64 {
    let mut w = [0u8; 8];
    w[..len].copy_from_slice(&b[off..off + len]);
    u64::from_le_bytes(w)
}

#[test]
fn stat_is_struct_stat() {
    use general::stat;
    let ino = 77;
    let i = fs::Inode {
        mode: fs::mode::REG | 0o640,
        nlink: 3,
        size: 0x1234_5678_9abc,
        rdev: 0x105,
        atime: 1_700_000_001_000_000_011,
        mtime: 1_700_000_002_000_000_022,
        ctime: 1_700_000_003_000_000_033,
        ..fs::Inode::FREE
    };
    let b = fs::stat_bytes(ino, &i);
    assert_eq!(b.len(), size_of::<stat>());
    macro_rules! field {
        ($f:ident) => {
            get(&b, offset_of!(stat, $f), field_size(|s: &stat| &s.$f))
        };
    }
    assert_eq!(field!(st_dev), 1);
    assert_eq!(field!(st_ino), ino as u64);
    assert_eq!(field!(st_nlink), 3);
    assert_eq!(field!(st_mode), (fs::mode::REG | 0o640) as u64);
    assert_eq!(field!(st_uid), 0);
    assert_eq!(field!(st_gid), 0);
    assert_eq!(field!(st_rdev), 0x105);
    assert_eq!(field!(st_size), 0x1234_5678_9abc);
    assert_eq!(field!(st_blksize), 4096);
    assert_eq!(field!(st_blocks), 0x1234_5678_9abc_u64.div_ceil(512));
    assert_eq!(field!(st_atime), 1_700_000_001);
    assert_eq!(field!(st_atime_nsec), 11);
    assert_eq!(field!(st_mtime), 1_700_000_002);
    assert_eq!(field!(st_mtime_nsec), 22);
    assert_eq!(field!(st_ctime), 1_700_000_003);
    assert_eq!(field!(st_ctime_nsec), 33);
}

#[test]
fn termios_is_struct_termios() {
    use general::termios;
    assert_eq!(size_of::<termios>(), 36);
    let t = tty::Termios {
        iflag: 0x0101_0101,
        oflag: 0x0202_0202,
        cflag: 0x0303_0303,
        lflag: 0x0404_0404,
        line: 5,
        cc: core::array::from_fn(|i| 0x10 + i as u8),
    };
    let b = t.to_bytes();
    assert_eq!(get(&b, offset_of!(termios, c_iflag), 4), 0x0101_0101);
    assert_eq!(get(&b, offset_of!(termios, c_oflag), 4), 0x0202_0202);
    assert_eq!(get(&b, offset_of!(termios, c_cflag), 4), 0x0303_0303);
    assert_eq!(get(&b, offset_of!(termios, c_lflag), 4), 0x0404_0404);
    assert_eq!(b[offset_of!(termios, c_line)], 5);
    assert_eq!(b[offset_of!(termios, c_cc)..], t.cc);
    assert_eq!(t.cc.len(), general::NCCS as usize);
    assert_eq!(tty::Termios::from_bytes(&b), t);
}

#[test]
fn default_termios_is_linux_s() {
    use general::*;
    let t = tty::Termios::DEFAULT;
    assert_eq!(t.iflag, ICRNL | IXON);
    assert_eq!(t.oflag, OPOST | ONLCR);
    assert_eq!(t.cflag, B38400 | CS8 | CREAD);
    assert_eq!(
        t.lflag,
        ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN
    );
    assert_eq!(t.line, 0);
    // The kernel's INIT_C_CC, by name.
    let ctrl = |c: u8| c & 0x1f;
    let want = [
        (VINTR, ctrl(b'C')),
        (VQUIT, ctrl(b'\\')),
        (VERASE, 0x7f),
        (VKILL, ctrl(b'U')),
        (VEOF, ctrl(b'D')),
        (VTIME, 0),
        (VMIN, 1),
        (VSWTC, 0),
        (VSTART, ctrl(b'Q')),
        (VSTOP, ctrl(b'S')),
        (VSUSP, ctrl(b'Z')),
        (VEOL, 0),
        (VREPRINT, ctrl(b'R')),
        (VDISCARD, ctrl(b'O')),
        (VWERASE, ctrl(b'W')),
        (VLNEXT, ctrl(b'V')),
        (VEOL2, 0),
    ];
    for (i, v) in want {
        assert_eq!(t.cc[i as usize], v, "c_cc[{i}]");
    }
}

#[test]
fn statfs_is_struct_statfs() {
    use stet_unix::procgen::Statfs;
    let s = Statfs {
        kind: 1,
        blocks: 2,
        bfree: 3,
        bavail: 4,
        files: 5,
        ffree: 6,
        flags: 7,
    };
    let b = s.bytes();
    assert_eq!(b.len(), size_of::<general::statfs>());
    let at = |f: usize| get(&b, f, 8);
    assert_eq!(at(offset_of!(general::statfs, f_type)), 1);
    assert_eq!(at(offset_of!(general::statfs, f_bsize)), 4096);
    assert_eq!(at(offset_of!(general::statfs, f_blocks)), 2);
    assert_eq!(at(offset_of!(general::statfs, f_bfree)), 3);
    assert_eq!(at(offset_of!(general::statfs, f_bavail)), 4);
    assert_eq!(at(offset_of!(general::statfs, f_files)), 5);
    assert_eq!(at(offset_of!(general::statfs, f_ffree)), 6);
    assert_eq!(at(offset_of!(general::statfs, f_fsid)), 0);
    assert_eq!(
        at(offset_of!(general::statfs, f_namelen)),
        general::NAME_MAX as u64
    );
    assert_eq!(at(offset_of!(general::statfs, f_frsize)), 4096);
    assert_eq!(at(offset_of!(general::statfs, f_flags)), 7 | 0x20);
}

#[test]
fn sysinfo_is_struct_sysinfo() {
    use stet_unix::procgen::{Sysinfo, SYSINFO_SIZE};
    assert_eq!(SYSINFO_SIZE, size_of::<system::sysinfo>());
    let s = Sysinfo {
        uptime: 11,
        loads: [2048, 1024, 0],
        totalram: 1000,
        freeram: 600,
        procs: 3,
    };
    let b = s.bytes();
    assert_eq!(get(&b, offset_of!(system::sysinfo, uptime), 8), 11);
    let loads = offset_of!(system::sysinfo, loads);
    assert_eq!(get(&b, loads, 8), 65536);
    assert_eq!(get(&b, loads + 8, 8), 32768);
    assert_eq!(get(&b, loads + 16, 8), 0);
    assert_eq!(get(&b, offset_of!(system::sysinfo, totalram), 8), 1000);
    assert_eq!(get(&b, offset_of!(system::sysinfo, freeram), 8), 600);
    assert_eq!(get(&b, offset_of!(system::sysinfo, procs), 2), 3);
    assert_eq!(get(&b, offset_of!(system::sysinfo, mem_unit), 4), 4096);
}
