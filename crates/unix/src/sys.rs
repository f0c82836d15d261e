//! The Linux x86_64 system-call ABI: call numbers, errno values and the
//! constants the UNIX keeper decodes (from the kernel's uapi headers).

/// System call numbers (`rax` at the `syscall`).
#[allow(missing_docs)]
pub mod nr {
    pub const READ: u64 = 0;
    pub const WRITE: u64 = 1;
    pub const OPEN: u64 = 2;
    pub const CLOSE: u64 = 3;
    pub const STAT: u64 = 4;
    pub const FSTAT: u64 = 5;
    pub const LSTAT: u64 = 6;
    pub const POLL: u64 = 7;
    pub const LSEEK: u64 = 8;
    pub const MMAP: u64 = 9;
    pub const MPROTECT: u64 = 10;
    pub const MUNMAP: u64 = 11;
    pub const BRK: u64 = 12;
    pub const RT_SIGACTION: u64 = 13;
    pub const RT_SIGPROCMASK: u64 = 14;
    pub const RT_SIGRETURN: u64 = 15;
    pub const IOCTL: u64 = 16;
    pub const PREAD64: u64 = 17;
    pub const PWRITE64: u64 = 18;
    pub const READV: u64 = 19;
    pub const WRITEV: u64 = 20;
    pub const ACCESS: u64 = 21;
    pub const PIPE: u64 = 22;
    pub const SELECT: u64 = 23;
    pub const SCHED_YIELD: u64 = 24;
    pub const MREMAP: u64 = 25;
    pub const TIMES: u64 = 100;
    pub const WAITID: u64 = 247;
    pub const ADD_KEY: u64 = 248;
    pub const REQUEST_KEY: u64 = 249;
    pub const KEYCTL: u64 = 250;
    pub const FLOCK: u64 = 73;
    pub const MINCORE: u64 = 27;
    pub const PREADV: u64 = 295;
    pub const PWRITEV: u64 = 296;
    pub const PREADV2: u64 = 327;
    pub const PWRITEV2: u64 = 328;
    pub const SETXATTR: u64 = 188;
    pub const LSETXATTR: u64 = 189;
    pub const FSETXATTR: u64 = 190;
    pub const GETXATTR: u64 = 191;
    pub const LGETXATTR: u64 = 192;
    pub const FGETXATTR: u64 = 193;
    pub const LISTXATTR: u64 = 194;
    pub const LLISTXATTR: u64 = 195;
    pub const FLISTXATTR: u64 = 196;
    pub const REMOVEXATTR: u64 = 197;
    pub const LREMOVEXATTR: u64 = 198;
    pub const FREMOVEXATTR: u64 = 199;
    pub const FALLOCATE: u64 = 285;
    pub const COPY_FILE_RANGE: u64 = 326;
    pub const MKNOD: u64 = 133;
    pub const MKNODAT: u64 = 259;
    pub const SPLICE: u64 = 275;
    pub const TEE: u64 = 276;
    pub const VMSPLICE: u64 = 278;
    pub const SETTIMEOFDAY: u64 = 164;
    pub const SETHOSTNAME: u64 = 170;
    pub const SETDOMAINNAME: u64 = 171;
    pub const REBOOT: u64 = 169;
    pub const IOPRIO_GET: u64 = 252;
    pub const IOPRIO_SET: u64 = 251;
    pub const VHANGUP: u64 = 153;
    pub const SYSFS: u64 = 139;
    pub const USTAT: u64 = 136;
    pub const ADJTIMEX: u64 = 159;
    pub const CLOCK_ADJTIME: u64 = 305;
    pub const CLOCK_SETTIME: u64 = 227;
    pub const TIMER_CREATE: u64 = 222;
    pub const TIMER_SETTIME: u64 = 223;
    pub const TIMER_GETTIME: u64 = 224;
    pub const TIMER_GETOVERRUN: u64 = 225;
    pub const TIMER_DELETE: u64 = 226;
    pub const TIMERFD_CREATE: u64 = 283;
    pub const EVENTFD: u64 = 284;
    pub const TIMERFD_SETTIME: u64 = 286;
    pub const TIMERFD_GETTIME: u64 = 287;
    pub const EVENTFD2: u64 = 290;
    pub const INOTIFY_INIT: u64 = 253;
    pub const INOTIFY_ADD_WATCH: u64 = 254;
    pub const INOTIFY_RM_WATCH: u64 = 255;
    pub const INOTIFY_INIT1: u64 = 294;
    pub const GETRUSAGE: u64 = 98;
    pub const SETRLIMIT: u64 = 160;
    pub const GETPRIORITY: u64 = 140;
    pub const SETPRIORITY: u64 = 141;
    pub const CAPGET: u64 = 125;
    pub const CAPSET: u64 = 126;
    pub const MLOCK: u64 = 149;
    pub const MUNLOCK: u64 = 150;
    pub const MLOCKALL: u64 = 151;
    pub const MUNLOCKALL: u64 = 152;
    pub const FADVISE64: u64 = 221;
    pub const MLOCK2: u64 = 325;
    pub const MSYNC: u64 = 26;
    pub const MADVISE: u64 = 28;
    pub const DUP: u64 = 32;
    pub const DUP2: u64 = 33;
    pub const PAUSE: u64 = 34;
    pub const NANOSLEEP: u64 = 35;
    pub const GETITIMER: u64 = 36;
    pub const ALARM: u64 = 37;
    pub const SETITIMER: u64 = 38;
    pub const GETPID: u64 = 39;
    pub const SENDFILE: u64 = 40;
    pub const CLONE: u64 = 56;
    pub const FORK: u64 = 57;
    pub const VFORK: u64 = 58;
    pub const EXECVE: u64 = 59;
    pub const EXIT: u64 = 60;
    pub const WAIT4: u64 = 61;
    pub const KILL: u64 = 62;
    pub const PTRACE: u64 = 101;
    pub const UNAME: u64 = 63;
    pub const FCNTL: u64 = 72;
    pub const FSYNC: u64 = 74;
    pub const FDATASYNC: u64 = 75;
    pub const TRUNCATE: u64 = 76;
    pub const FTRUNCATE: u64 = 77;
    pub const GETCWD: u64 = 79;
    pub const CHDIR: u64 = 80;
    pub const FCHDIR: u64 = 81;
    pub const RENAME: u64 = 82;
    pub const MKDIR: u64 = 83;
    pub const RMDIR: u64 = 84;
    pub const LINK: u64 = 86;
    pub const UNLINK: u64 = 87;
    pub const SYMLINK: u64 = 88;
    pub const READLINK: u64 = 89;
    pub const CHMOD: u64 = 90;
    pub const FCHMOD: u64 = 91;
    pub const CHOWN: u64 = 92;
    pub const FCHOWN: u64 = 93;
    pub const LCHOWN: u64 = 94;
    pub const UMASK: u64 = 95;
    pub const GETTIMEOFDAY: u64 = 96;
    pub const GETRLIMIT: u64 = 97;
    pub const SYSINFO: u64 = 99;
    pub const SYSLOG: u64 = 103;
    pub const GETUID: u64 = 102;
    pub const GETGID: u64 = 104;
    pub const SETUID: u64 = 105;
    pub const SETGID: u64 = 106;
    pub const GETEUID: u64 = 107;
    pub const GETEGID: u64 = 108;
    pub const SETPGID: u64 = 109;
    pub const GETPPID: u64 = 110;
    pub const GETPGRP: u64 = 111;
    pub const SETSID: u64 = 112;
    pub const SETREUID: u64 = 113;
    pub const SETREGID: u64 = 114;
    pub const GETGROUPS: u64 = 115;
    pub const SETGROUPS: u64 = 116;
    pub const SETRESUID: u64 = 117;
    pub const GETRESUID: u64 = 118;
    pub const SETRESGID: u64 = 119;
    pub const GETRESGID: u64 = 120;
    pub const SETFSUID: u64 = 122;
    pub const SETFSGID: u64 = 123;
    pub const GETPGID: u64 = 121;
    pub const GETSID: u64 = 124;
    pub const RT_SIGPENDING: u64 = 127;
    pub const RT_SIGTIMEDWAIT: u64 = 128;
    pub const RT_SIGQUEUEINFO: u64 = 129;
    pub const RT_TGSIGQUEUEINFO: u64 = 297;
    pub const RT_SIGSUSPEND: u64 = 130;
    pub const SIGALTSTACK: u64 = 131;
    pub const ARCH_PRCTL: u64 = 158;
    pub const PRCTL: u64 = 157;
    pub const STATFS: u64 = 137;
    pub const FSTATFS: u64 = 138;
    pub const SCHED_SETPARAM: u64 = 142;
    pub const SCHED_GETPARAM: u64 = 143;
    pub const SCHED_SETSCHEDULER: u64 = 144;
    pub const SCHED_GETSCHEDULER: u64 = 145;
    pub const SCHED_GET_PRIORITY_MAX: u64 = 146;
    pub const SCHED_GET_PRIORITY_MIN: u64 = 147;
    pub const SCHED_RR_GET_INTERVAL: u64 = 148;
    pub const SCHED_SETATTR: u64 = 314;
    pub const SCHED_GETATTR: u64 = 315;
    pub const SYNC: u64 = 162;
    pub const SYNCFS: u64 = 306;
    pub const GETTID: u64 = 186;
    pub const TKILL: u64 = 200;
    pub const TIME: u64 = 201;
    pub const SCHED_SETAFFINITY: u64 = 203;
    pub const SCHED_GETAFFINITY: u64 = 204;
    pub const GET_ROBUST_LIST: u64 = 274;
    pub const CLONE3: u64 = 435;
    pub const FUTEX: u64 = 202;
    pub const GETDENTS64: u64 = 217;
    pub const SET_TID_ADDRESS: u64 = 218;
    pub const CLOCK_GETTIME: u64 = 228;
    pub const CLOCK_GETRES: u64 = 229;
    pub const CLOCK_NANOSLEEP: u64 = 230;
    pub const EXIT_GROUP: u64 = 231;
    pub const TGKILL: u64 = 234;
    pub const OPENAT: u64 = 257;
    pub const MKDIRAT: u64 = 258;
    pub const FCHOWNAT: u64 = 260;
    pub const NEWFSTATAT: u64 = 262;
    pub const UNLINKAT: u64 = 263;
    pub const RENAMEAT: u64 = 264;
    pub const LINKAT: u64 = 265;
    pub const SYMLINKAT: u64 = 266;
    pub const READLINKAT: u64 = 267;
    pub const FCHMODAT: u64 = 268;
    pub const FACCESSAT: u64 = 269;
    pub const EPOLL_CREATE: u64 = 213;
    pub const EPOLL_WAIT: u64 = 232;
    pub const EPOLL_CTL: u64 = 233;
    pub const EPOLL_PWAIT: u64 = 281;
    pub const SIGNALFD: u64 = 282;
    pub const SIGNALFD4: u64 = 289;
    pub const EPOLL_CREATE1: u64 = 291;
    pub const EPOLL_PWAIT2: u64 = 441;
    pub const PSELECT6: u64 = 270;
    pub const PPOLL: u64 = 271;
    pub const SET_ROBUST_LIST: u64 = 273;
    pub const UTIMENSAT: u64 = 280;
    pub const DUP3: u64 = 292;
    pub const PIPE2: u64 = 293;
    pub const PRLIMIT64: u64 = 302;
    pub const RENAMEAT2: u64 = 316;
    pub const GETRANDOM: u64 = 318;
    pub const STATX: u64 = 332;
    // Process control and introspection (`unixkeeper/procctl.rs`).
    pub const PERSONALITY: u64 = 135;
    pub const UNSHARE: u64 = 272;
    pub const GETCPU: u64 = 309;
    pub const KCMP: u64 = 312;
    // Another process's memory (`unixkeeper/procvm.rs`).
    pub const PROCESS_VM_READV: u64 = 310;
    pub const PROCESS_VM_WRITEV: u64 = 311;
    pub const MEMBARRIER: u64 = 324;
    pub const PIDFD_SEND_SIGNAL: u64 = 424;
    pub const PIDFD_OPEN: u64 = 434;
    pub const PIDFD_GETFD: u64 = 438;
    pub const FUTEX_WAITV: u64 = 449;
    pub const RSEQ: u64 = 334;
    pub const SOCKET: u64 = 41;
    pub const CONNECT: u64 = 42;
    pub const ACCEPT: u64 = 43;
    pub const SENDTO: u64 = 44;
    pub const RECVFROM: u64 = 45;
    pub const SENDMSG: u64 = 46;
    pub const RECVMSG: u64 = 47;
    pub const SHUTDOWN: u64 = 48;
    pub const BIND: u64 = 49;
    pub const LISTEN: u64 = 50;
    pub const GETSOCKNAME: u64 = 51;
    pub const GETPEERNAME: u64 = 52;
    pub const SOCKETPAIR: u64 = 53;
    pub const SETSOCKOPT: u64 = 54;
    pub const GETSOCKOPT: u64 = 55;
    pub const ACCEPT4: u64 = 288;
    pub const FACCESSAT2: u64 = 439;
    // File and memory calls (issue 23's `fileerr` work).
    pub const CHROOT: u64 = 161;
    pub const REMAP_FILE_PAGES: u64 = 216;
    pub const FUTIMESAT: u64 = 261;
    pub const SYNC_FILE_RANGE: u64 = 277;
    pub const MEMFD_CREATE: u64 = 319;
    pub const CLOSE_RANGE: u64 = 436;
    pub const OPENAT2: u64 = 437;
    pub const NAME_TO_HANDLE_AT: u64 = 303;
    pub const OPEN_BY_HANDLE_AT: u64 = 304;
}

/// errno values (a failing call returns `-errno` in `rax`).
#[allow(missing_docs)]
pub mod errno {
    pub const EPERM: i64 = 1;
    pub const ENOENT: i64 = 2;
    pub const ESRCH: i64 = 3;
    pub const EINTR: i64 = 4;
    pub const EIO: i64 = 5;
    pub const ENXIO: i64 = 6;
    pub const E2BIG: i64 = 7;
    pub const ENOEXEC: i64 = 8;
    pub const EBADF: i64 = 9;
    pub const ECHILD: i64 = 10;
    pub const EAGAIN: i64 = 11;
    pub const ENOMEM: i64 = 12;
    pub const EACCES: i64 = 13;
    pub const EFAULT: i64 = 14;
    pub const EBUSY: i64 = 16;
    pub const EEXIST: i64 = 17;
    pub const EXDEV: i64 = 18;
    pub const ESTALE: i64 = 116;
    pub const ENODEV: i64 = 19;
    pub const ENOTDIR: i64 = 20;
    pub const EISDIR: i64 = 21;
    pub const EINVAL: i64 = 22;
    pub const ENFILE: i64 = 23;
    pub const EMFILE: i64 = 24;
    pub const ENOTTY: i64 = 25;
    pub const EFBIG: i64 = 27;
    pub const ENOSPC: i64 = 28;
    pub const ESPIPE: i64 = 29;
    pub const EROFS: i64 = 30;
    pub const EPIPE: i64 = 32;
    pub const ERANGE: i64 = 34;
    pub const EDEADLK: i64 = 35;
    pub const ENAMETOOLONG: i64 = 36;
    pub const ENOLCK: i64 = 37;
    pub const ENOSYS: i64 = 38;
    pub const ENOTEMPTY: i64 = 39;
    pub const ELOOP: i64 = 40;
    pub const ENODATA: i64 = 61;
    pub const EOVERFLOW: i64 = 75;
    pub const ELIBBAD: i64 = 80;
    pub const ENOTSOCK: i64 = 88;
    pub const EDESTADDRREQ: i64 = 89;
    pub const EMSGSIZE: i64 = 90;
    pub const EPROTOTYPE: i64 = 91;
    pub const ENOPROTOOPT: i64 = 92;
    pub const EPROTONOSUPPORT: i64 = 93;
    pub const ESOCKTNOSUPPORT: i64 = 94;
    pub const EOPNOTSUPP: i64 = 95;
    pub const EAFNOSUPPORT: i64 = 97;
    pub const EADDRINUSE: i64 = 98;
    pub const ECONNRESET: i64 = 104;
    pub const EISCONN: i64 = 106;
    pub const ENOTCONN: i64 = 107;
    pub const ETIMEDOUT: i64 = 110;
    pub const ECONNREFUSED: i64 = 111;
    pub const EDQUOT: i64 = 122;
    pub const ENOKEY: i64 = 126;
    pub const EKEYEXPIRED: i64 = 127;
    pub const EKEYREVOKED: i64 = 128;
}

/// Signals: their numbers, the two dispositions that are not handlers,
/// `sigaction`'s flags and `sigprocmask`'s `how`.
#[allow(missing_docs)]
pub mod sig {
    pub const SIGHUP: u64 = 1;
    pub const SIGINT: u64 = 2;
    pub const SIGQUIT: u64 = 3;
    pub const SIGILL: u64 = 4;
    pub const SIGTRAP: u64 = 5;
    pub const SIGABRT: u64 = 6;
    pub const SIGBUS: u64 = 7;
    pub const SIGFPE: u64 = 8;
    pub const SIGKILL: u64 = 9;
    pub const SIGUSR1: u64 = 10;
    pub const SIGSEGV: u64 = 11;
    pub const SIGUSR2: u64 = 12;
    pub const SIGPIPE: u64 = 13;
    pub const SIGALRM: u64 = 14;
    pub const SIGTERM: u64 = 15;
    pub const SIGSTKFLT: u64 = 16;
    pub const SIGCHLD: u64 = 17;
    pub const SIGCONT: u64 = 18;
    pub const SIGSTOP: u64 = 19;
    pub const SIGTSTP: u64 = 20;
    pub const SIGTTIN: u64 = 21;
    pub const SIGTTOU: u64 = 22;
    pub const SIGURG: u64 = 23;
    pub const SIGXCPU: u64 = 24;
    pub const SIGXFSZ: u64 = 25;
    pub const SIGVTALRM: u64 = 26;
    pub const SIGPROF: u64 = 27;
    pub const SIGWINCH: u64 = 28;
    pub const SIGIO: u64 = 29;
    pub const SIGPWR: u64 = 30;
    pub const SIGSYS: u64 = 31;
    /// Signals are 1..=`NSIG` (the real-time ones from 32 up): a mask is
    /// one `u64`, signal `s` its bit `s - 1`.
    pub const NSIG: u64 = 64;
    pub const SIG_DFL: u64 = 0;
    pub const SIG_IGN: u64 = 1;
    pub const SA_SIGINFO: u64 = 4;
    pub const SA_RESTORER: u64 = 0x0400_0000;
    pub const SA_ONSTACK: u64 = 0x0800_0000;
    pub const SA_RESTART: u64 = 0x1000_0000;
    pub const SA_NODEFER: u64 = 0x4000_0000;
    pub const SA_RESETHAND: u64 = 0x8000_0000;
    pub const SIG_BLOCK: u64 = 0;
    pub const SIG_UNBLOCK: u64 = 1;
    pub const SIG_SETMASK: u64 = 2;
}

/// `fcntl` commands.
#[allow(missing_docs)]
pub mod fcntl {
    pub const F_DUPFD: u64 = 0;
    pub const F_GETFD: u64 = 1;
    pub const F_SETFD: u64 = 2;
    pub const F_GETFL: u64 = 3;
    pub const F_SETFL: u64 = 4;
    pub const F_GETLK: u64 = 5;
    pub const F_SETLK: u64 = 6;
    pub const F_SETLKW: u64 = 7;
    pub const F_DUPFD_CLOEXEC: u64 = 1030;
    pub const F_SETOWN: u64 = 8;
    pub const F_GETOWN: u64 = 9;
    pub const F_SETSIG: u64 = 10;
    pub const F_GETSIG: u64 = 11;
    pub const F_SETOWN_EX: u64 = 15;
    pub const F_GETOWN_EX: u64 = 16;
    pub const F_SETLEASE: u64 = 1024;
    pub const F_GETLEASE: u64 = 1025;
    pub const F_SETPIPE_SZ: u64 = 1031;
    pub const F_GETPIPE_SZ: u64 = 1032;
}

/// `splice`, `tee` and `vmsplice` flags.
#[allow(missing_docs)]
pub mod splice {
    pub const SPLICE_F_MOVE: u64 = 1;
    pub const SPLICE_F_NONBLOCK: u64 = 2;
    pub const SPLICE_F_MORE: u64 = 4;
    pub const SPLICE_F_GIFT: u64 = 8;
    pub const ALL: u64 = 15;
}

/// `struct flock` (`fcntl`'s record locks): its size, its fields' byte
/// offsets, and the lock types of `l_type`.
#[allow(missing_docs)]
pub mod flock {
    pub const SIZE: usize = 32;
    pub const L_TYPE: usize = 0;
    pub const L_WHENCE: usize = 2;
    pub const L_START: usize = 8;
    pub const L_LEN: usize = 16;
    pub const L_PID: usize = 24;
    pub const F_RDLCK: u64 = 0;
    pub const F_WRLCK: u64 = 1;
    pub const F_UNLCK: u64 = 2;
}

/// Extended attributes' limits and `setxattr`'s flags (`xattr(7)`).
pub mod xattr {
    /// The longest name, namespace prefix included (`XATTR_NAME_MAX`).
    pub const NAME_MAX: usize = 255;
    /// The largest value (`XATTR_SIZE_MAX`; also `XATTR_LIST_MAX`):
    /// past it `E2BIG`.
    pub const SIZE_MAX: usize = 65536;
    /// Fail with `EEXIST` if the attribute exists.
    pub const CREATE: u64 = 1;
    /// Fail with `ENODATA` if it does not.
    pub const REPLACE: u64 = 2;
}

/// `poll` events, and the most descriptors `select` looks at.
#[allow(missing_docs)]
pub mod poll {
    pub const POLLIN: u64 = 1;
    pub const POLLOUT: u64 = 4;
    pub const POLLERR: u64 = 8;
    pub const POLLHUP: u64 = 0x10;
    pub const POLLNVAL: u64 = 0x20;
    pub const FD_SETSIZE: u64 = 1024;
}

/// Sockets (<linux/socket.h>, <linux/net.h>, <asm-generic/socket.h>):
/// families, types, `send`/`recv` flags, `SOL_SOCKET` options.
#[allow(missing_docs)]
pub mod sock {
    pub const AF_UNIX: u64 = 1;
    pub const AF_INET: u64 = 2;
    pub const AF_INET6: u64 = 10;
    /// Families are below this (Linux's `NPROTO`).
    pub const AF_MAX: u64 = 46;
    pub const SOCK_STREAM: u64 = 1;
    pub const SOCK_DGRAM: u64 = 2;
    pub const SOCK_RAW: u64 = 3;
    pub const SOCK_SEQPACKET: u64 = 5;
    /// Types are below this.
    pub const SOCK_MAX: u64 = 11;
    pub const SOCK_TYPE_MASK: u64 = 0xf;
    pub const SOCK_NONBLOCK: u64 = 0o4000;
    pub const SOCK_CLOEXEC: u64 = 0o2000000;
    pub const SHUT_RD: u64 = 0;
    pub const SHUT_WR: u64 = 1;
    pub const SHUT_RDWR: u64 = 2;
    pub const MSG_OOB: u64 = 1;
    pub const MSG_PEEK: u64 = 2;
    pub const MSG_CTRUNC: u64 = 8;
    pub const MSG_TRUNC: u64 = 0x20;
    pub const MSG_DONTWAIT: u64 = 0x40;
    pub const MSG_EOR: u64 = 0x80;
    pub const MSG_WAITALL: u64 = 0x100;
    pub const MSG_NOSIGNAL: u64 = 0x4000;
    pub const MSG_CMSG_CLOEXEC: u64 = 0x4000_0000;
    pub const SOL_SOCKET: u64 = 1;
    pub const SO_DEBUG: u64 = 1;
    pub const SO_REUSEADDR: u64 = 2;
    pub const SO_TYPE: u64 = 3;
    pub const SO_ERROR: u64 = 4;
    pub const SO_DONTROUTE: u64 = 5;
    pub const SO_BROADCAST: u64 = 6;
    pub const SO_SNDBUF: u64 = 7;
    pub const SO_RCVBUF: u64 = 8;
    pub const SO_KEEPALIVE: u64 = 9;
    pub const SO_OOBINLINE: u64 = 10;
    pub const SO_PASSCRED: u64 = 16;
    pub const SO_PEERCRED: u64 = 17;
    pub const SO_RCVLOWAT: u64 = 18;
    pub const SO_SNDLOWAT: u64 = 19;
    pub const SO_ACCEPTCONN: u64 = 30;
    pub const SO_PROTOCOL: u64 = 38;
    pub const SO_DOMAIN: u64 = 39;
    pub const SCM_RIGHTS: u64 = 1;
    /// `struct sockaddr_un`: the family (2 bytes) and `sun_path`.
    pub const SUN_PATH: usize = 108;
}

/// `wait4` options.
#[allow(missing_docs)]
pub mod wait {
    pub const WNOHANG: u64 = 1;
    pub const WUNTRACED: u64 = 2;
    /// `__WALL`: wait for every kind of child (one kind here).
    pub const WALL: u64 = 0x4000_0000;
}

/// `clone` flags: the signal sent at exit in the low byte, and the tid
/// flags.
#[allow(missing_docs)]
pub mod clone {
    pub const CSIGNAL: u64 = 0xff;
    pub const CLONE_VM: u64 = 0x100;
    pub const CLONE_FS: u64 = 0x200;
    pub const CLONE_FILES: u64 = 0x400;
    pub const CLONE_SIGHAND: u64 = 0x800;
    pub const CLONE_VFORK: u64 = 0x4000;
    pub const CLONE_THREAD: u64 = 0x1_0000;
    pub const CLONE_SYSVSEM: u64 = 0x4_0000;
    pub const CLONE_SETTLS: u64 = 0x8_0000;
    pub const CLONE_DETACHED: u64 = 0x40_0000;
    pub const CLONE_PARENT_SETTID: u64 = 0x0010_0000;
    pub const CLONE_CHILD_CLEARTID: u64 = 0x0020_0000;
    pub const CLONE_CHILD_SETTID: u64 = 0x0100_0000;
    pub const CLONE_PARENT: u64 = 0x8000;
    pub const CLONE_NEWNS: u64 = 0x2_0000;
    pub const CLONE_NEWCGROUP: u64 = 0x0200_0000;
    pub const CLONE_NEWUTS: u64 = 0x0400_0000;
    pub const CLONE_NEWIPC: u64 = 0x0800_0000;
    pub const CLONE_NEWUSER: u64 = 0x1000_0000;
    pub const CLONE_NEWPID: u64 = 0x2000_0000;
    pub const CLONE_NEWNET: u64 = 0x4000_0000;
    pub const CLONE_IO: u64 = 0x8000_0000;
    pub const CLONE_NEWTIME: u64 = 0x80;
    /// Every namespace flag.
    pub const NEW_NS: u64 = CLONE_NEWNS
        | CLONE_NEWCGROUP
        | CLONE_NEWUTS
        | CLONE_NEWIPC
        | CLONE_NEWUSER
        | CLONE_NEWPID
        | CLONE_NEWNET
        | CLONE_NEWTIME;
}

/// `futex` operations and the flags beside them.
#[allow(missing_docs)]
pub mod futex {
    pub const WAIT: u64 = 0;
    pub const WAKE: u64 = 1;
    pub const REQUEUE: u64 = 3;
    pub const CMP_REQUEUE: u64 = 4;
    pub const WAKE_OP: u64 = 5;
    pub const WAIT_BITSET: u64 = 9;
    pub const WAKE_BITSET: u64 = 10;
    pub const PRIVATE_FLAG: u64 = 128;
    pub const CLOCK_REALTIME: u64 = 256;
}

/// `msync` flags.
#[allow(missing_docs)]
pub mod msync {
    pub const MS_ASYNC: u64 = 1;
    pub const MS_INVALIDATE: u64 = 2;
    pub const MS_SYNC: u64 = 4;
}

/// `prlimit64` resources.
#[allow(missing_docs)]
pub mod rlimit {
    pub const RLIMIT_FSIZE: u64 = 1;
    pub const RLIMIT_STACK: u64 = 3;
    pub const RLIMIT_NOFILE: u64 = 7;
    pub const RLIMIT_RSS: u64 = 5;
    pub const RLIMIT_NPROC: u64 = 6;
    pub const RLIMIT_MEMLOCK: u64 = 8;
    pub const RLIMIT_CORE: u64 = 4;
    pub const RLIMIT_RTPRIO: u64 = 14;
    pub const RLIMIT_SIGPENDING: u64 = 11;
}

/// `prctl` options.
#[allow(missing_docs)]
pub mod prctl {
    pub const PR_SET_PDEATHSIG: u64 = 1;
    pub const PR_GET_PDEATHSIG: u64 = 2;
    pub const PR_SET_NAME: u64 = 15;
    pub const PR_GET_NAME: u64 = 16;
    pub const PR_GET_TIMERSLACK: u64 = 30;
    pub const PR_SET_TIMERSLACK: u64 = 29;
    pub const PR_SET_CHILD_SUBREAPER: u64 = 36;
    pub const PR_GET_CHILD_SUBREAPER: u64 = 37;
    pub const PR_CAPBSET_READ: u64 = 23;
    pub const PR_CAPBSET_DROP: u64 = 24;
    pub const PR_GET_DUMPABLE: u64 = 3;
    pub const PR_SET_DUMPABLE: u64 = 4;
    pub const PR_GET_SECCOMP: u64 = 21;
    pub const PR_SET_SECCOMP: u64 = 22;
    pub const PR_SET_NO_NEW_PRIVS: u64 = 38;
    pub const PR_GET_NO_NEW_PRIVS: u64 = 39;
    pub const PR_GET_TID_ADDRESS: u64 = 40;
    pub const PR_SET_THP_DISABLE: u64 = 41;
    pub const PR_GET_THP_DISABLE: u64 = 42;
    pub const PR_GET_SECUREBITS: u64 = 27;
    pub const PR_SET_SECUREBITS: u64 = 28;
    pub const PR_GET_SPECULATION_CTRL: u64 = 52;
    pub const PR_SET_SPECULATION_CTRL: u64 = 53;
    /// `PR_GET_SPECULATION_CTRL`'s misfeatures (`PR_SPEC_STORE_BYPASS`,
    /// `PR_SPEC_INDIRECT_BRANCH`, `PR_SPEC_L1D_FLUSH`).
    pub const PR_SPEC_L1D_FLUSH: u64 = 2;
    /// Speculation enabled, no mitigation the process may control.
    pub const PR_SPEC_ENABLE: u64 = 1 << 1;
}

/// `utimensat`'s nanosecond values that are not times.
#[allow(missing_docs)]
pub mod utime {
    pub const UTIME_NOW: u64 = (1 << 30) - 1;
    pub const UTIME_OMIT: u64 = (1 << 30) - 2;
}

/// Byte offsets of `struct stat`'s fields that the keeper reads
/// (`fs::stat_bytes` writes the whole struct).
#[allow(missing_docs)]
pub mod stat {
    pub const ST_MODE: usize = 24;
    pub const ST_RDEV: usize = 40;
}

/// `mmap` flags.
#[allow(missing_docs)]
pub mod map {
    pub const SHARED: u64 = 0x01;
    pub const PRIVATE: u64 = 0x02;
    pub const SHARED_VALIDATE: u64 = 0x03;
    pub const LOCKED: u64 = 0x2000;
    /// The flags Linux knows (`LEGACY_MAP_MASK`, `MAP_FIXED_NOREPLACE` and
    /// the huge-page size bits): `MAP_SHARED_VALIDATE` refuses any other.
    pub const KNOWN: u64 = 0x03
        | 0x10
        | 0x20
        | 0x100
        | 0x800
        | 0x1000
        | 0x2000
        | 0x4000
        | 0x8000
        | 0x1_0000
        | 0x2_0000
        | 0x4_0000
        | 0x10_0000
        | 0xfc00_0000;
    pub const FIXED: u64 = 0x10;
    pub const ANONYMOUS: u64 = 0x20;
    pub const GROWSDOWN: u64 = 0x100;
    pub const NORESERVE: u64 = 0x4000;
    pub const POPULATE: u64 = 0x8000;
    pub const FIXED_NOREPLACE: u64 = 0x10_0000;
}

/// `arch_prctl` codes.
#[allow(missing_docs)]
pub mod arch {
    pub const SET_GS: u64 = 0x1001;
    pub const SET_FS: u64 = 0x1002;
    pub const GET_FS: u64 = 0x1003;
    pub const GET_GS: u64 = 0x1004;
}

/// Clock ids.
#[allow(missing_docs)]
pub mod clock {
    pub const REALTIME: u64 = 0;
    pub const MONOTONIC: u64 = 1;
    pub const PROCESS_CPUTIME: u64 = 2;
    pub const THREAD_CPUTIME: u64 = 3;
    pub const MONOTONIC_RAW: u64 = 4;
    pub const REALTIME_COARSE: u64 = 5;
    pub const MONOTONIC_COARSE: u64 = 6;
    pub const BOOTTIME: u64 = 7;
}

/// Terminal ioctls.
#[allow(missing_docs)]
pub mod ioctl {
    pub const TCGETS: u64 = 0x5401;
    pub const TCSETS: u64 = 0x5402;
    pub const TCSETSW: u64 = 0x5403;
    pub const TCSETSF: u64 = 0x5404;
    pub const TIOCGPGRP: u64 = 0x540f;
    pub const TIOCSPGRP: u64 = 0x5410;
    pub const TIOCGWINSZ: u64 = 0x5413;
    pub const TIOCSWINSZ: u64 = 0x5414;
    pub const FIONREAD: u64 = 0x541b;
}

/// `statfs`: file-system magic numbers (`f_type`), mount flags
/// (`f_flags`) and the size of `struct statfs`.
#[allow(missing_docs)]
pub mod statfs {
    pub const TMPFS_MAGIC: u64 = 0x0102_1994;
    pub const PROC_SUPER_MAGIC: u64 = 0x9fa0;
    pub const PIPEFS_MAGIC: u64 = 0x5049_5045;
    pub const ST_NOSUID: u64 = 2;
    pub const ST_NODEV: u64 = 4;
    pub const ST_NOEXEC: u64 = 8;
    pub const ST_VALID: u64 = 0x20;
    pub const SIZE: usize = 120;
}

/// `syslog(2)`'s actions (`SYSLOG_ACTION_*`, from the kernel's
/// <linux/syslog.h>, which is not uapi).
#[allow(missing_docs)]
pub mod syslog {
    pub const CLOSE: u64 = 0;
    pub const OPEN: u64 = 1;
    pub const READ: u64 = 2;
    pub const READ_ALL: u64 = 3;
    pub const READ_CLEAR: u64 = 4;
    pub const CLEAR: u64 = 5;
    pub const CONSOLE_OFF: u64 = 6;
    pub const CONSOLE_ON: u64 = 7;
    pub const CONSOLE_LEVEL: u64 = 8;
    pub const SIZE_UNREAD: u64 = 9;
    pub const SIZE_BUFFER: u64 = 10;
}

/// `struct utsname` is six fields of this many bytes.
pub const UTSNAME_FIELD: usize = 65;

/// The `uname` answer: sysname, nodename, release, version, machine,
/// domainname. The release is one glibc accepts as new enough.
pub const UNAME: [&str; 6] = ["Linux", "stet", "6.1.0-stet", "#1 Stet", "x86_64", "(none)"];

/// Encodes a call's result as `rax`: a value, or `-errno`.
pub fn ret(r: Result<u64, i64>) -> u64 {
    match r {
        Ok(v) => v,
        Err(e) => (-e) as u64,
    }
}
