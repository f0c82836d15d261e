//! The protocol between UNIX keepers and the file-system domain (`unixd`):
//! order codes and how words, strings and keys are used. Every answer has
//! result code `OK` (a bad invocation of the domain itself aside) and
//! `w0` = what the system call returns: a value, or `-errno` as a
//! two's-complement word, exactly Linux's `rax`.
//!
//! Open files are named by **file ids** (`fid`), indices of the domain's
//! open-file table (Linux's "open file descriptions": offset and status
//! flags, shared by `dup` and `fork`). A keeper maps descriptors to fids.
//! A path is relative to a fid that names a directory (the keeper's
//! working directory is such a fid): `base`.

/// Opens `string` relative to `w0` base with `w1` flags and `w2` mode →
/// `w0` fid, `w1` inode, `w2` `st_mode`.
pub const OPEN: u64 = 1;
/// Drops a reference to fid `w0`; `w1` [`CLOSE_FD`]: a descriptor was
/// closed (not a mapping's or a fork's reference), so the caller's record
/// locks on the file go, as POSIX says ([`LOCK`]).
pub const CLOSE: u64 = 2;
/// [`CLOSE`]'s `w1`: a descriptor of the caller's was closed.
pub const CLOSE_FD: u64 = 1;
/// Reads up to `w1` bytes (≤ 4096) from fid `w0` at its offset → string,
/// `w0` bytes.
pub const READ: u64 = 3;
/// Writes the string to fid `w0` at its offset (or the end with
/// `O_APPEND`) → `w0` bytes.
pub const WRITE: u64 = 4;
/// Reads up to `w1` bytes of fid `w0` at offset `w2` → string, `w0`.
pub const PREAD: u64 = 5;
/// Writes the string to fid `w0` at offset `w1` → `w0`.
pub const PWRITE: u64 = 6;
/// `lseek(w0 fid, w1 offset, w2 whence)` → `w0` the new offset.
pub const LSEEK: u64 = 7;
/// `fstat` of fid `w0` → string: `struct stat`.
pub const FSTAT: u64 = 8;
/// `stat` of the string relative to `w0` base; `w1` flags
/// (`AT_SYMLINK_NOFOLLOW` 0x100, `AT_EMPTY_PATH` 0x1000) → string.
pub const STAT: u64 = 9;
/// `getdents64` of fid `w0`, at most `w1` bytes → string, `w0` bytes.
pub const GETDENTS: u64 = 10;
/// `mkdir` of the string relative to `w0`, mode `w1`.
pub const MKDIR: u64 = 11;
/// `unlink` of the string relative to `w0`; `w1` `AT_REMOVEDIR` (0x200)
/// for `rmdir`.
pub const UNLINK: u64 = 12;
/// `renameat2`: string "old\0new", bases `w0` and `w1`, flags `w2`
/// (`RENAME_NOREPLACE` 1).
pub const RENAME: u64 = 13;
/// `linkat`: string "old\0new", bases `w0` and `w1`, flags `w2`.
pub const LINK: u64 = 14;
/// `symlinkat`: string "target\0path", base `w0`.
pub const SYMLINK: u64 = 15;
/// `readlinkat` of the string relative to `w0` → string, `w0` bytes.
pub const READLINK: u64 = 16;
/// `fchmodat` (string relative to `w0`, mode `w1`), or `fchmod` of fid
/// `w0` when the string is empty.
pub const CHMOD: u64 = 17;
/// `ftruncate(w0 fid, w1 length)`, or `truncate` of the string relative
/// to `w0` when it is not empty.
pub const TRUNCATE: u64 = 18;
/// `faccessat` of the string relative to `w0`, `w1` mode → 0 or -errno.
pub const ACCESS: u64 = 19;
/// The path of directory fid `w0` → string, `w0` its length + 1.
pub const GETCWD: u64 = 20;
/// A new pipe → `w0` 0, `w1` read fid, `w2` write fid.
pub const PIPE: u64 = 21;
/// One more reference to fid `w0` (`dup`, and each fid at `fork`).
pub const DUP: u64 = 22;
/// Status flags of fid `w0`: `w1` 0 get → `w0` flags; 1 set to `w2`.
pub const FLAGS: u64 = 23;
/// The executable at the string relative to `w0` → key 0 its segment
/// (read-only), `w1` its length, `w2` its inode; `w0` 1 if it is
/// set-user-ID or set-group-ID (and group-executable).
pub const EXEC: u64 = 24;
/// `utimensat`: string relative to `w0` (or fid `w0` when empty), `w1`
/// atime ns, `w2` mtime ns (`u64::MAX`: now; `u64::MAX - 1`: omit).
pub const UTIMENS: u64 = 25;
/// Whether fid `w0` is a terminal → `w0` 0 or -ENOTTY.
pub const ISATTY: u64 = 26;

// Processes. The caller is the process its forwarder key names (the
// forwarder's data word is the pid: a keeper cannot speak for another).

/// A child of the caller: the string lists the fids (u32, little-endian)
/// the child inherits (each gets one more reference), `w0` the caller's
/// `RLIMIT_NPROC` (0: none; `EAGAIN` when the system holds that many
/// processes) → `w0` its pid, key 0 the forwarder its keeper calls this
/// domain with. `w1` [`FORK_VFORK`]: the caller will wait for the child
/// ([`VFORK`]).
pub const FORK: u64 = 28;
/// [`FORK`]'s `w1`: a `vfork` (or `clone` with `CLONE_VFORK`).
pub const FORK_VFORK: u64 = 1;
/// The caller has ended with wait status `w0` (`code << 8`, or the
/// signal): a zombie until its parent waits; its children go to pid 1.
/// A keeper made by `fork` sends key 0, its own `KEYS` node, and offers
/// itself as a spare: the call is not answered, its resume key goes into
/// the node's slot [`SPARE`] and the node to the parent with `WAIT4`'s
/// answer (or, when nobody will wait, the keeper's bank in slot
/// [`KEEPER_BANK`] is destroyed).
pub const EXIT: u64 = 29;
/// `wait4`: `w0` which child (as Linux's `pid` argument: -1 any, > 0 that
/// one, 0 or < -1 a process group), `w1` options (`WNOHANG` 1; 2:
/// `waitid`'s `WNOWAIT`, the child stays to be waited for again; 4: report
/// a stop, status `0x7f | sig << 8`; 8: a continue, status `0xffff`; 16:
/// not an end, [`JOBCTL`]) → `w0` the
/// child's pid (0 with `WNOHANG` and none ended; `-ECHILD`), `w1` its
/// wait status, `w2` 1 with key 0 the child's keeper as a spare (its
/// `KEYS` node: see `EXIT`). Parks until a child ends.
pub const WAIT4: u64 = 30;
/// Slot of a keeper's `KEYS` node holding its bank (destroying it ends
/// the keeper).
pub const KEEPER_BANK: u64 = 4;
/// Slot of a keeper's `KEYS` node: in a spare, the resume key that wakes
/// it (with [`BECOME`]); in a keeper at work, its own spare's `KEYS` node.
pub const SPARE: u64 = 7;
/// The order a keeper wakes its spare with (through the resume key of the
/// spare's `EXIT`): `w0` the new process's pid, keys 0–3 the process's
/// domain, its forwarder to this domain, its bank, its tree's directory.
/// The spare's data and heap already hold the waker's state; it starts
/// again at `_start` as a forked keeper.
pub const BECOME: u64 = 0x5BEC;
/// → `w0` the caller's parent (1 once its parent has ended).
pub const GETPPID: u64 = 31;
/// Readiness of fid `w0` → `w0` the `poll` events that hold now
/// (`POLLIN` 1, `POLLOUT` 4, `POLLERR` 8, `POLLHUP` 0x10).
pub const POLL: u64 = 32;
/// A keeper says where it is: key 0 its start key (signals for its
/// process are sent there); `w0` its program's entry (`_start`), where
/// unixd starts a keeper again after a fault ([`KEEPER_FAULT`]) → `w0` 1
/// if unixd asks for the processes' meter ([`METER`]), else 0.
pub const HELLO: u64 = 33;
/// `kill(w0 pid as Linux's argument, w1 signal)`: 0 for "exists".
pub const KILL: u64 = 34;
/// `setpgid(w0 pid, w1 pgid)` (0s: the caller).
pub const SETPGID: u64 = 35;
/// `getpgid(w0 pid)` / `getsid`: `w1` 0 group, 1 session.
pub const GETPGID: u64 = 36;
/// `setsid`.
pub const SETSID: u64 = 37;
/// From one of the domain's two clock helpers (`w1` which: 0 or 1):
/// retry signals a busy keeper could not take, fire alarms, end sleeps →
/// `w0` when to tick next (0: nothing to time; with `w0` 1 the caller is
/// parked until there is, or while the other helper's sleep covers it).
pub const TICK: u64 = 38;
/// Sleep until `w0` (ns since boot); parks; a signal ends it early
/// (`-EINTR`).
pub const SLEEP: u64 = 39;
/// `alarm` and `setitimer`: interval timer `w1` (0 `ITIMER_REAL`, 1
/// `ITIMER_VIRTUAL`, 2 `ITIMER_PROF`; `| 4`: only read it) set to ring in
/// `w0` ns (0: cancel), then every `w2` ns (0: once) → `w0` ns that were
/// left, `w1` its interval.
pub const ALARM: u64 = 40;
/// `pause` / `sigsuspend`: parks until a signal (`-EINTR`).
pub const PAUSE: u64 = 41;

/// Typed input for the terminal (from the terminal reader): the string.
pub const INPUT: u64 = 42;
/// A terminal `ioctl` on fid `w0`: `w1` the request (`TCGETS`, `TCSETS`,
/// `TCSETSW`, `TCSETSF`, `TIOCGPGRP`, `TIOCSPGRP`, `TIOCGWINSZ`,
/// `TIOCSWINSZ`, `FIONREAD`), `w2` a number argument (the group of
/// `TIOCSPGRP`); `TCSETS*` take the 36-byte `struct termios` as the
/// string, `TCGETS` answers it → `w0` 0, the group, the window size
/// (rows << 16 | columns), or the bytes waiting. `-ENOTTY` if fid `w0` is
/// not the terminal.
pub const TTY: u64 = 43;

// Memory: files mapped into processes, shared memory and futexes.

/// The page key of page `w1` of regular file fid `w0` (made if it is a
/// hole) → key 0 the page (read-write; the keeper restricts it), `w0` 0.
/// `-ENXIO` for a page wholly past the end of the file (the fault is
/// `SIGBUS`), `-ENODEV` if fid `w0` is not a regular file.
pub const MAP_PAGE: u64 = 44;
/// Shared anonymous memory (`MAP_SHARED | MAP_ANONYMOUS`): a new regular
/// file with no name, `w0` bytes long → `w0` a read-write fid holding it.
pub const MEMFD: u64 = 45;
/// `FUTEX_WAIT`: parks while the 32-bit word at offset `w1` of the file
/// fid `w0` holds `w2` (fid `u64::MAX`: a private futex at address `w1`
/// of the caller, whose keeper compared the word). The string, when 8
/// bytes, is the deadline (ns since boot) → `w0` 0 when woken,
/// `-EAGAIN` if the word differs, `-ETIMEDOUT`, `-EINTR`.
pub const FUTEX_WAIT: u64 = 46;
/// `FUTEX_WAKE`: wakes at most `w2` calls parked on the word that `w0`
/// and `w1` name as for `FUTEX_WAIT` → `w0` how many woke.
pub const FUTEX_WAKE: u64 = 47;

/// The system's figures for `sysinfo` and `/proc/meminfo` → `w0` the
/// number of processes, `w1` pages of memory in all, `w2` pages free
/// (the UNIX personality's bank and its limit).
pub const SYSINFO: u64 = 48;

/// The caller now runs the program at the string's first part (up to a
/// NUL) relative to directory fid `w0`, with the rest of the string as its
/// arguments, each NUL-terminated: `/proc/<pid>/exe` and `cmdline`.
pub const PROCINFO: u64 = 49;

/// A process's keeper, as the process ends: the string is its
/// unimplemented calls, each a little-endian `u16` call number (511: any
/// higher) and `u32` count, added to the system's tally.
pub const ENOSYS: u64 = 50;
/// The native shell's `unix` command → `w0` processes, `w1` pages in
/// all, `w2` pages free, and as the string the tally of unimplemented
/// calls in `ENOSYS`'s format.
pub const STATUS: u64 = 51;
/// The name unixd publishes its start key under in the data store (for
/// the native shell).
pub const STORE_NAME: &[u8] = b"unix";

/// Copy-on-write after `fork`: the string is pages by their bank identity
/// (`u32`s, little-endian), each now held by one more process → string:
/// a byte per page, 1 if counted, 0 if the table is full (the keeper
/// copies that page instead); `w0` how many were counted.
pub const SHARE: u64 = 52;
/// The caller lets go of shared pages (written and copied, unmapped, or
/// its process ended): the string as `SHARE`'s → string: a byte per
/// page, 1 if the caller was its last holder (the page is its own again:
/// to write without a copy, or to free). With `w0` 1 it only asks: 1 if
/// the caller is the page's only holder now, and nothing changes (a
/// writer that is not copies the page first and lets go after, so no
/// other holder can free it during the copy).
pub const UNSHARE: u64 = 53;
/// A `fork` that failed after `FORK` gave the child its pid (the keeper
/// could not build it): child `w0` goes as if it never was — no zombie,
/// no `SIGCHLD`. Only the child's parent may ask, before the child has
/// started (`HELLO`).
pub const UNFORK: u64 = 54;
/// → key 0: the start key to unixd that a keeper's domain keeper must be
/// ([`KEEPER_FAULT`]), for a keeper building a child keeper. `ENOENT` if
/// unixd has none (a system made before it had one).
pub const KEEPER_KEY: u64 = 55;
/// `fchownat`: the string relative to `w0` (fid `w0` when the string is
/// empty), `w1` the new owner in the low half and group in the high half
/// (each `u32::MAX`: unchanged), `w2` flags (`AT_SYMLINK_NOFOLLOW`).
pub const CHOWN: u64 = 56;
/// The caller's users and groups (`stet_unix::cred`): `w0` what
/// ([`cred_op`]), `w1` and `w2` its ids → `w0` the call's result, and `w1`
/// `w2` the kind's ids after it (`Cred::pack`: real | effective << 32,
/// saved | file-system << 32).
pub const CRED: u64 = 57;

/// What [`CRED`] does.
pub mod cred_op {
    /// → the user ids.
    pub const GET_UIDS: u64 = 0;
    /// → the group ids.
    pub const GET_GIDS: u64 = 1;
    /// `setuid(w1)`.
    pub const SETUID: u64 = 2;
    /// `setgid(w1)`.
    pub const SETGID: u64 = 3;
    /// `setreuid(w1 low, w1 high)`.
    pub const SETREUID: u64 = 4;
    /// `setregid(w1 low, w1 high)`.
    pub const SETREGID: u64 = 5;
    /// `setresuid(w1 low, w1 high, w2)`.
    pub const SETRESUID: u64 = 6;
    /// `setresgid(w1 low, w1 high, w2)`.
    pub const SETRESGID: u64 = 7;
    /// `setfsuid(w1)` → `w0` the old file-system user id.
    pub const SETFSUID: u64 = 8;
    /// `setfsgid(w1)` → `w0` the old file-system group id.
    pub const SETFSGID: u64 = 9;
    /// → the supplementary groups (string: `u32`s), `w0` how many.
    pub const GETGROUPS: u64 = 10;
    /// `setgroups` of the string's `u32`s.
    pub const SETGROUPS: u64 = 11;
    /// `execve` of inode `w1` has begun the new program: its set-user-ID
    /// and set-group-ID bits apply → `w0` 1 when the ids now differ from
    /// the real ones (`AT_SECURE`), `w1` real | effective user << 32, `w2`
    /// real | effective group << 32 (the saved and file-system ids are
    /// the effective ones).
    pub const EXEC: u64 = 12;
}

// The system as a whole (numbered apart from the orders above, which
// grow with the file and process calls).

/// `statfs` of the string relative to `w0` base (or `fstatfs` of fid `w0`
/// when the string is empty) → string: the 120-byte `struct statfs`.
pub const STATFS: u64 = 64;
/// `syslog(2)` on the kernel log unixd keeps: `w0` the action
/// (`sys::syslog`), `w1` its length argument. `READ` answers as the
/// string at most `w1` (and 4096) unread bytes, `w0` how many; it parks
/// until there are some, unless `w2` is 1. The first call of `READ_ALL`
/// or `READ_CLEAR` (`w2` `u64::MAX`) answers as the string the first
/// 4096 bytes at most of the newest whole lines that fit in `w1` bytes,
/// `w0` how many, `w1` the log position after them and `w2` where the
/// answer ends; a later call goes on from position `w2` up to end `w1`.
/// The other actions answer `w0` as `syslog` returns it.
pub const SYSLOG: u64 = 65;
/// The meter processes run under (key 0), for the processor's busy time
/// in `/proc/stat`, `/proc/uptime` and the load averages: a keeper sends
/// it once, when `HELLO`'s answer `w0` is 1.
pub const METER: u64 = 66;

/// The key info of the start key to unixd that is every UNIX keeper's own
/// domain keeper: a message through it is a keeper's fault (an exception
/// or an invalid reference; key 0 the keeper's domain key). unixd answers
/// it through its resume key by starting the keeper again at its entry
/// (`HELLO`'s `w0`) on a fresh stack with [`KEEPER_FAILED`] as its
/// argument: the keeper then ends its process as if by SIGKILL.
pub const KEEPER_FAULT: u8 = 1;

/// The argument of a keeper started again after a fault (its `FAILED` and
/// `FAULTED` bits).
pub const KEEPER_FAILED: u64 = (1 << 58) | (1 << 56);

/// A call that may park carries in `w3` the signals that end the wait
/// (those neither blocked nor ignored): a signal among them answers the
/// parked call `-EINTR`. Every answer to a process's keeper carries in
/// `w3` the signals sent to the process since the last answer.
pub const INTR_WORD: usize = 3;

/// A signal for a process, sent (try-send) to its keeper's start key:
/// `w0` the signals.
pub const SIGNAL: u64 = 0x5160;

/// Threads of a process that may go on, sent (try-send) to its keeper's
/// start key: `w0` a mask of the keeper's thread slots. Each had a call
/// parked with [`NOTIFY_SHIFT`]; the keeper asks again for each.
pub const READY: u64 = 0x5161;

/// A threaded process's keeper puts its thread's slot (≥ 1) in the order
/// code's bits from here up: a call of that thread that must wait does
/// not hold the keeper — unixd answers it at once `-ERESTARTSYS` and
/// keeps the wait without a resume key, and says [`READY`] when the thread
/// may ask again. (The keeper serves its other threads meanwhile.)
pub const NOTIFY_SHIFT: u64 = 32;

/// The answer to a call parked with [`NOTIFY_SHIFT`]: Linux's
/// kernel-internal `ERESTARTSYS`, which no system call returns.
pub const ERESTARTSYS: i64 = 512;

/// The orders whose answers to a threaded process carry in `w2` the mask
/// of its threads that may go on ([`READY`]'s `w0`): those answered with
/// `w0` alone, that can end another thread's wait.
pub const CARRIES_READY: [u64; 5] = [WRITE, PWRITE, CLOSE, FUTEX_WAKE, KILL];

/// Thread ids (each a number of the pid space, as on Linux): `w0` 0 → `w0`
/// a new id for a thread of the caller; 1: `w1` (the caller's) is free
/// again; 2: every thread id of the caller is free (`execve`, its end).
pub const TID: u64 = 58;

/// `getpriority`/`setpriority`: `w0` 0 get, 1 set; `w1` which
/// (`PRIO_PROCESS`, `PRIO_PGRP`, `PRIO_USER`) in the low half and the nice
/// value to set in the high half; `w2` who → get: `20 - nice` of the
/// highest priority among them (the raw system call's answer).
pub const PRIO: u64 = 59;

/// `eventfd2`: `w0` the initial value, `w1` flags (`EFD_SEMAPHORE` 1,
/// `O_NONBLOCK`) → `w0` a fid: reads take 8 bytes (the count, or 1), writes
/// add 8 bytes' value, both wait as Linux's.
pub const EVENTFD: u64 = 60;
/// `timerfd_create`: `w0` `O_NONBLOCK`, `w1` the clock → `w0` a fid, disarmed; a read
/// answers the expirations since the last (8 bytes), waiting for one.
pub const TIMERFD: u64 = 61;
/// `timerfd_settime`: `w0` fid, `w1` the first expiry in ns (0 disarms):
/// from now, or with `w2` bit 0 (`TFD_TIMER_ABSTIME`) a time of its clock;
/// string: the interval (8 bytes) → string: the old time left and
/// interval (2 × 8 bytes).
pub const TIMERFD_SET: u64 = 62;
/// `timerfd_gettime`: `w0` fid → string as `TIMERFD_SET`'s.
pub const TIMERFD_GET: u64 = 63;

/// POSIX timers (`timer_create` …) of the caller: `w0` what
/// ([`ptimer`]), `w1` the timer's id (`CREATE`: the signal in the low byte
/// (0: `SIGEV_NONE`) and the clock in the high half), `w2` (`SET`) the first
/// expiry in ns (0 disarms); `SET`'s string: the interval and 1 if absolute
/// (2 × 8 bytes) → `CREATE`: `w0` the id; `SET`/`GET`: string: the time
/// left and the interval (2 × 8 bytes); `OVERRUN`: `w0` the expirations
/// no signal stood for since the last `OVERRUN` (which clears them).
pub const PTIMER: u64 = 67;

/// Locks of open file descriptions on fid `w0`: `w1` what ([`flock`]), `w2` the type (`F_RDLCK`
/// 0, `F_WRLCK` 1, `F_UNLCK` 2) | whence << 8 (| `lock::NONBLOCK` for
/// `flock`); string: start and length (2 × `i64`, as `struct flock`) →
/// `GETLK`: string: the conflicting lock's type (`F_UNLCK` if none),
/// start, length and pid (−1 for an OFD lock), 4 × `i64`. A conflicting
/// `SETLK` is `EAGAIN`; `SETLKW` waits (parked, `BUSY` to ask again).
pub const FLOCK: u64 = 68;

/// What [`FLOCK`] does.
pub mod flock {
    /// `F_GETLK`.
    pub const GETLK: u64 = 0;
    /// `F_SETLK`.
    pub const SETLK: u64 = 1;
    /// `F_SETLKW`.
    pub const SETLKW: u64 = 2;
    /// `F_OFD_GETLK`.
    pub const OFD_GETLK: u64 = 3;
    /// `F_OFD_SETLK`.
    pub const OFD_SETLK: u64 = 4;
    /// `F_OFD_SETLKW`.
    pub const OFD_SETLKW: u64 = 5;
    /// `flock` (whole file; owned by the description).
    pub const FLOCK: u64 = 6;
    /// With `FLOCK`: `LOCK_NB`.
    pub const NONBLOCK: u64 = 1 << 16;
}

/// What [`PTIMER`] does.
pub mod ptimer {
    /// A new timer.
    pub const CREATE: u64 = 0;
    /// Arms or disarms one, answering its old setting.
    pub const SET: u64 = 1;
    /// Its setting.
    pub const GET: u64 = 2;
    /// Its overrun count.
    pub const OVERRUN: u64 = 3;
    /// It goes.
    pub const DELETE: u64 = 4;
    /// All of the caller's go (`execve`).
    pub const DELETE_ALL: u64 = 5;
}

// System V IPC (`stet_unix::sysv`, unixd's `sysv.rs`): codes 70–79. The
// calls that may wait carry the signals that end the wait in `w3`
// ([`INTR_WORD`]), like every other.

/// `shmget(w0 key, w1 size, w2 shmflg)` → `w0` the segment's id.
pub const SHMGET: u64 = 70;
/// `shmat` of segment `w0`, `w1` shmflg (`SHM_RDONLY`, `SHM_EXEC`): the
/// caller may → `w0` a new fid of the segment (a nameless file, read-only
/// with `SHM_RDONLY`), `w1` its size. The keeper maps the fid as a shared
/// file mapping; each reference to it is an attach (`shm_nattch`), so
/// `fork` adds one and the last `CLOSE` of it detaches.
pub const SHMAT: u64 = 71;
/// `shmdt`: → `w0` the size of the segment fid `w0` attaches, or
/// `-EINVAL` if it attaches none.
pub const SHMDT: u64 = 72;
/// `semget(w0 key, w1 nsems, w2 semflg)` → `w0` the set's id.
pub const SEMGET: u64 = 73;
/// `semtimedop(w0 semid)` of the string's `struct sembuf`s, `w1` the
/// deadline (ns since boot; `u64::MAX`: none) → `w0` 0 once done. Parks
/// until the operations can be done all at once (done then, in the order
/// the waits began); `-EAGAIN` with `IPC_NOWAIT` or at the deadline,
/// `-EIDRM` if the set is removed, `-EINTR`.
pub const SEMOP: u64 = 74;
/// `msgget(w0 key, w1 msgflg)` → `w0` the queue's id.
pub const MSGGET: u64 = 75;
/// `msgsnd(w0 msqid)` of a message of type `w1`, `w2` its length in the
/// low half and msgflg in the high: the string is its text from byte
/// 4096 × k on, the first k × 4096 bytes staged before ([`IPC_MORE`] 0).
/// Parks while the queue is full.
pub const MSGSND: u64 = 76;
/// `msgrcv(w0 msqid, w1 msgtyp)`, `w2` the buffer's text length in the
/// low half and msgflg in the high → `w0` the text's length, `w1` its
/// type, the string its first 4096 bytes at most (the rest with
/// [`IPC_MORE`] 1). Parks until a message is there.
pub const MSGRCV: u64 = 77;
/// `shmctl`, `semctl`, `msgctl`: `w0` the kind ([`ipc_kind`]) | the
/// command << 8 | `semnum` << 32, `w1` the id (an index for `*_STAT`),
/// `w2` the argument (`SETVAL`'s value; `GETALL`'s first semaphore;
/// `SETALL`: 0 to ask `w1` the set's size, 1 to set it from the staged
/// values and the string). `IPC_SET` takes the structure as the string;
/// `IPC_STAT`, `*_STAT`, `*_INFO` and `GETALL` (`u16`s, `w1` the set's
/// size) answer as the string.
pub const IPCCTL: u64 = 78;
/// What one message cannot hold, and POSIX message queues: `w0`'s low
/// byte says what ([`ipc_more`]).
pub const IPC_MORE: u64 = 79;

/// [`IPC_MORE`]'s orders (`w0`'s low byte; its upper bits an argument).
pub mod ipc_more {
    /// Stages the string at byte `w1` of the caller's next `MSGSND`,
    /// `SETALL` or `MQ_SEND` (0 starts again).
    pub const STAGE: u64 = 0;
    /// → the string: the text of the caller's last `MSGRCV` or `MQ_RECV`
    /// from byte `w1` on, `w0` its length.
    pub const REST: u64 = 1;
    /// `mq_open` of the string's name (a file of `/dev/mqueue`; after a
    /// NUL, with `w2` 1, `mq_maxmsg` and `mq_msgsize` as two `i64`s),
    /// `w0 >> 8` the flags (`O_ACCMODE`, `O_CREAT`, `O_EXCL`,
    /// `O_NONBLOCK`), `w1` the mode (the umask applied) → `w0` a fid.
    pub const MQ_OPEN: u64 = 2;
    /// `mq_unlink` of the string's name.
    pub const MQ_UNLINK: u64 = 3;
    /// `mq_timedsend` to the queue fid `w1` holds (low half), priority
    /// `w1 >> 32`, deadline `w2` (ns since boot; `u64::MAX` none), the
    /// text `w0 >> 8` bytes long: the string its last piece, those before
    /// staged. Parks while the queue is full.
    pub const MQ_SEND: u64 = 4;
    /// `mq_timedreceive` from the queue fid `w1` holds into `w0 >> 8`
    /// bytes, deadline `w2` → `w0` the length, `w1` the priority, the
    /// string the first 4096 bytes (the rest: `REST`). Parks while empty.
    pub const MQ_RECV: u64 = 5;
    /// `mq_notify` on the queue fid `w1` holds: `w2` 0 removes the
    /// caller's registration, 1 registers `SIGEV_NONE`, 2 + a signal
    /// registers `SIGEV_SIGNAL`.
    pub const MQ_NOTIFY: u64 = 6;
    /// `mq_getsetattr` of the queue fid `w1` holds; `w2` 1 + the new
    /// `mq_flags` (only `O_NONBLOCK`) sets → the string: the old
    /// `mq_flags`, `mq_maxmsg`, `mq_msgsize`, `mq_curmsgs` (`i64`s).
    pub const MQ_ATTR: u64 = 7;
}

/// [`IPCCTL`]'s kinds of object.
pub mod ipc_kind {
    /// Shared memory segments.
    pub const SHM: u64 = 0;
    /// Semaphore sets.
    pub const SEM: u64 = 1;
    /// Message queues.
    pub const MSG: u64 = 2;
}

/// `fcntl`'s record locks on fid `w0`: `w1` the command (`F_GETLK`,
/// `F_SETLK`, `F_SETLKW`), the string the caller's `struct flock` → for
/// `F_GETLK` the string: the `struct flock` to write back. A lock belongs
/// to the calling process; `F_SETLKW` with a conflicting lock parks until
/// a lock of that file changes (answered `BUSY`: ask again), or ends with
/// `EDEADLK` when the holder waits, directly or through others, for the
/// caller (`stet_unixfs::locks`).
pub const LOCK: u64 = 90;

/// `vfork`'s wait: the caller's child `w0`, made by a [`FORK`] with
/// [`FORK_VFORK`], has not yet run `execve` or ended → parked until it has
/// (answered `BUSY`: ask again); `w0` 0 once it has (or if it is not such
/// a child of the caller's).
pub const VFORK: u64 = 91;

/// Scheduling policies (`stet_unix::sched`): `w0` [`sched_op`], `w1` the
/// pid (0: the caller; a thread id names its process). GET → `w0` the
/// policy \| priority << 8 \| reset-on-fork << 16 \| (nice + 20) << 24,
/// string: the deadline runtime, deadline, period (`u64` LE each). SET:
/// `w2` the policy \| priority << 8 \| reset-on-fork << 16 \| keep the
/// policy << 17 \| keep the parameters << 18 \| set the nice value << 19
/// \| the nice value (`i8`) << 24, `w3` the caller's `RLIMIT_RTPRIO`,
/// string as GET's (a deadline policy's times) → `w0` 0. Linux's
/// permission rules (`EPERM`), `EINVAL` for a bad policy or priority,
/// `ESRCH` for no such process.
pub const SCHED: u64 = 150;

/// Job control: the caller's keeper has stopped it for signal `w0` (a
/// stop signal's default action) → `w0` 0; its parent is told (`SIGCHLD`,
/// its waits wake; [`WAIT4`] with `WUNTRACED` reports it). The keeper
/// then waits ([`PAUSE`]) for `SIGCONT` or `SIGKILL`; a `SIGCONT` sent to
/// a stopped process is reported as a continue (`WCONTINUED`).
pub const JOBCTL: u64 = 151;

/// [`SCHED`]'s `w0`.
pub mod sched_op {
    /// Read a process's policy.
    pub const GET: u64 = 0;
    /// Set it.
    pub const SET: u64 = 1;
}

/// The orders that name files by path or list a directory: anything that
/// could see `/proc` (unixd makes a forked child's `/proc/<pid>/` only
/// before one of these; before one of [`LOOKS_UP`] only if the path goes
/// through `/proc`).
pub const NAMES_FILES: [u64; 16] = [
    OPEN, STAT, GETDENTS, MKDIR, UNLINK, RENAME, LINK, SYMLINK, READLINK, CHMOD, TRUNCATE, ACCESS,
    EXEC, UTIMENS, CHOWN, STATFS,
];

/// The orders of [`NAMES_FILES`] that only look one path up.
pub const LOOKS_UP: [u64; 5] = [STAT, ACCESS, READLINK, EXEC, STATFS];

/// `open` flags the domain understands.
#[allow(missing_docs)]
pub mod o {
    pub const ACCMODE: u64 = 3;
    pub const RDONLY: u64 = 0;
    pub const WRONLY: u64 = 1;
    pub const RDWR: u64 = 2;
    pub const CREAT: u64 = 0o100;
    pub const EXCL: u64 = 0o200;
    pub const NOCTTY: u64 = 0o400;
    pub const TRUNC: u64 = 0o1000;
    pub const APPEND: u64 = 0o2000;
    pub const NONBLOCK: u64 = 0o4000;
    pub const DIRECTORY: u64 = 0o200000;
    pub const NOFOLLOW: u64 = 0o400000;
    pub const CLOEXEC: u64 = 0o2000000;
    pub const PATH: u64 = 0o10000000;
}

/// `*at` flags.
#[allow(missing_docs)]
pub mod at {
    /// The "current directory" descriptor number.
    pub const FDCWD: i64 = -100;
    pub const SYMLINK_NOFOLLOW: u64 = 0x100;
    pub const REMOVEDIR: u64 = 0x200;
    /// `faccessat2`: check with the effective ids (same bit as `REMOVEDIR`).
    pub const EACCESS: u64 = 0x200;
    pub const SYMLINK_FOLLOW: u64 = 0x400;
    pub const EMPTY_PATH: u64 = 0x1000;
}
