//! Every Linux x86_64 system call's name, by number (the kernel's
//! `arch/x86/entry/syscalls/syscall_64.tbl`, 64-bit and common entries),
//! for the tally of unimplemented calls and docs/UNIX.md's table of every
//! call. x86_64 numbers run from 0 to [`LOW_END`] and from [`HIGH_START`]
//! to [`LAST`]; the numbers between were never given out (x32's calls are
//! 512 and up). `tests.rs` checks each name and number against
//! `linux-raw-sys`.

use core::fmt;

/// The last number of the first run (`uretprobe`).
pub const LOW_END: u64 = 335;
/// The first number of the second run (`pidfd_send_signal`: from Linux
/// 5.1 every architecture numbers new calls alike).
pub const HIGH_START: u64 = 424;
/// The highest number here (`file_setattr`: the newest call
/// linux-raw-sys 0.12 knows).
pub const LAST: u64 = 469;
/// How many calls there are.
pub const COUNT: usize = LOW.len() + HIGH.len();

/// Numbers 0 to [`LOW_END`], ten to a line.
#[rustfmt::skip]
const LOW: [&str; LOW_END as usize + 1] = [
    // 0
    "read", "write", "open", "close", "stat", "fstat", "lstat", "poll", "lseek", "mmap",
    // 10
    "mprotect", "munmap", "brk", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "ioctl", "pread64", "pwrite64", "readv",
    // 20
    "writev", "access", "pipe", "select", "sched_yield", "mremap", "msync", "mincore", "madvise", "shmget",
    // 30
    "shmat", "shmctl", "dup", "dup2", "pause", "nanosleep", "getitimer", "alarm", "setitimer", "getpid",
    // 40
    "sendfile", "socket", "connect", "accept", "sendto", "recvfrom", "sendmsg", "recvmsg", "shutdown", "bind",
    // 50
    "listen", "getsockname", "getpeername", "socketpair", "setsockopt", "getsockopt", "clone", "fork", "vfork", "execve",
    // 60
    "exit", "wait4", "kill", "uname", "semget", "semop", "semctl", "shmdt", "msgget", "msgsnd",
    // 70
    "msgrcv", "msgctl", "fcntl", "flock", "fsync", "fdatasync", "truncate", "ftruncate", "getdents", "getcwd",
    // 80
    "chdir", "fchdir", "rename", "mkdir", "rmdir", "creat", "link", "unlink", "symlink", "readlink",
    // 90
    "chmod", "fchmod", "chown", "fchown", "lchown", "umask", "gettimeofday", "getrlimit", "getrusage", "sysinfo",
    // 100
    "times", "ptrace", "getuid", "syslog", "getgid", "setuid", "setgid", "geteuid", "getegid", "setpgid",
    // 110
    "getppid", "getpgrp", "setsid", "setreuid", "setregid", "getgroups", "setgroups", "setresuid", "getresuid", "setresgid",
    // 120
    "getresgid", "getpgid", "setfsuid", "setfsgid", "getsid", "capget", "capset", "rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo",
    // 130
    "rt_sigsuspend", "sigaltstack", "utime", "mknod", "uselib", "personality", "ustat", "statfs", "fstatfs", "sysfs",
    // 140
    "getpriority", "setpriority", "sched_setparam", "sched_getparam", "sched_setscheduler", "sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval", "mlock",
    // 150
    "munlock", "mlockall", "munlockall", "vhangup", "modify_ldt", "pivot_root", "_sysctl", "prctl", "arch_prctl", "adjtimex",
    // 160
    "setrlimit", "chroot", "sync", "acct", "settimeofday", "mount", "umount2", "swapon", "swapoff", "reboot",
    // 170
    "sethostname", "setdomainname", "iopl", "ioperm", "create_module", "init_module", "delete_module", "get_kernel_syms", "query_module", "quotactl",
    // 180
    "nfsservctl", "getpmsg", "putpmsg", "afs_syscall", "tuxcall", "security", "gettid", "readahead", "setxattr", "lsetxattr",
    // 190
    "fsetxattr", "getxattr", "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr", "removexattr", "lremovexattr", "fremovexattr",
    // 200
    "tkill", "time", "futex", "sched_setaffinity", "sched_getaffinity", "set_thread_area", "io_setup", "io_destroy", "io_getevents", "io_submit",
    // 210
    "io_cancel", "get_thread_area", "lookup_dcookie", "epoll_create", "epoll_ctl_old", "epoll_wait_old", "remap_file_pages", "getdents64", "set_tid_address", "restart_syscall",
    // 220
    "semtimedop", "fadvise64", "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete", "clock_settime", "clock_gettime", "clock_getres",
    // 230
    "clock_nanosleep", "exit_group", "epoll_wait", "epoll_ctl", "tgkill", "utimes", "vserver", "mbind", "set_mempolicy", "get_mempolicy",
    // 240
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr", "kexec_load", "waitid", "add_key", "request_key",
    // 250
    "keyctl", "ioprio_set", "ioprio_get", "inotify_init", "inotify_add_watch", "inotify_rm_watch", "migrate_pages", "openat", "mkdirat", "mknodat",
    // 260
    "fchownat", "futimesat", "newfstatat", "unlinkat", "renameat", "linkat", "symlinkat", "readlinkat", "fchmodat", "faccessat",
    // 270
    "pselect6", "ppoll", "unshare", "set_robust_list", "get_robust_list", "splice", "tee", "sync_file_range", "vmsplice", "move_pages",
    // 280
    "utimensat", "epoll_pwait", "signalfd", "timerfd_create", "eventfd", "fallocate", "timerfd_settime", "timerfd_gettime", "accept4", "signalfd4",
    // 290
    "eventfd2", "epoll_create1", "dup3", "pipe2", "inotify_init1", "preadv", "pwritev", "rt_tgsigqueueinfo", "perf_event_open", "recvmmsg",
    // 300
    "fanotify_init", "fanotify_mark", "prlimit64", "name_to_handle_at", "open_by_handle_at", "clock_adjtime", "syncfs", "sendmmsg", "setns", "getcpu",
    // 310
    "process_vm_readv", "process_vm_writev", "kcmp", "finit_module", "sched_setattr", "sched_getattr", "renameat2", "seccomp", "getrandom", "memfd_create",
    // 320
    "kexec_file_load", "bpf", "execveat", "userfaultfd", "membarrier", "mlock2", "copy_file_range", "preadv2", "pwritev2", "pkey_mprotect",
    // 330
    "pkey_alloc", "pkey_free", "statx", "io_pgetevents", "rseq", "uretprobe",
];

/// Numbers [`HIGH_START`] to [`LAST`], ten to a line.
#[rustfmt::skip]
const HIGH: [&str; (LAST - HIGH_START) as usize + 1] = [
    // 424
    "pidfd_send_signal", "io_uring_setup", "io_uring_enter", "io_uring_register", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
    // 434
    "pidfd_open", "clone3", "close_range", "openat2", "pidfd_getfd", "faccessat2", "process_madvise", "epoll_pwait2", "mount_setattr", "quotactl_fd",
    // 444
    "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self", "memfd_secret", "process_mrelease", "futex_waitv", "set_mempolicy_home_node", "cachestat", "fchmodat2", "map_shadow_stack",
    // 454
    "futex_wake", "futex_wait", "futex_requeue", "statmount", "listmount", "lsm_get_self_attr", "lsm_set_self_attr", "lsm_list_modules", "mseal", "setxattrat",
    // 464
    "getxattrat", "listxattrat", "removexattrat", "open_tree_attr", "file_getattr", "file_setattr",
];

/// The name of call `nr` (`None`: no x86_64 call has that number).
pub fn name(nr: u64) -> Option<&'static str> {
    match nr {
        0..=LOW_END => Some(LOW[nr as usize]),
        HIGH_START..=LAST => Some(HIGH[(nr - HIGH_START) as usize]),
        _ => None,
    }
}

/// The number of the call named `name`.
pub fn number(name: &str) -> Option<u64> {
    all().find(|&(_, n)| n == name).map(|(nr, _)| nr)
}

/// Every call, `(number, name)`, in order of number.
pub fn all() -> impl Iterator<Item = (u64, &'static str)> {
    (0..=LOW_END)
        .chain(HIGH_START..=LAST)
        .filter_map(|nr| Some((nr, name(nr)?)))
}

/// The tally's bucket for every number from here up (`proto::ENOSYS`;
/// the kernel answers them itself and counts them together).
pub const OTHER: u16 = 511;

/// One entry of the tally of unimplemented calls as it is printed:
/// `rseq ×1`, `other ×3` (numbers from [`OTHER`] up), or the number for
/// one no x86_64 call has (`400 ×1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tally {
    /// The call number, as the tally keeps it (`u16`; [`OTHER`]: any higher).
    pub nr: u16,
    /// How many times it was answered `ENOSYS`.
    pub count: u32,
}

impl Tally {
    /// An entry of the tally's wire format (`proto::ENOSYS`): the number
    /// and the count, little-endian `u16` and `u32`.
    pub fn decode(b: &[u8; 6]) -> Tally {
        Tally {
            nr: u16::from_le_bytes([b[0], b[1]]),
            count: u32::from_le_bytes([b[2], b[3], b[4], b[5]]),
        }
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match name(self.nr as u64) {
            _ if self.nr >= OTHER => write!(f, "other ×{}", self.count),
            Some(n) => write!(f, "{n} ×{}", self.count),
            None => write!(f, "{} ×{}", self.nr, self.count),
        }
    }
}

#[cfg(test)]
mod tests;
