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
/// `w0` fid, `w1` inode, `w2` `st_mode`. `w1`'s bits from
/// [`RESOLVE_SHIFT`] up are `openat2`'s `RESOLVE_*` ([`resolve`]).
pub const OPEN: u64 = 1;
/// The open flags of [`OPEN`]'s `w1` (Linux's reach bit 22).
pub const OPEN_FLAGS: u64 = (1 << RESOLVE_SHIFT) - 1;
/// Where `openat2`'s `RESOLVE_*` flags sit in [`OPEN`]'s `w1`.
pub const RESOLVE_SHIFT: u32 = 40;

/// `openat2`'s `RESOLVE_*` flags.
#[allow(missing_docs)]
pub mod resolve {
    pub const NO_XDEV: u64 = 0x01;
    pub const NO_MAGICLINKS: u64 = 0x02;
    pub const NO_SYMLINKS: u64 = 0x04;
    pub const BENEATH: u64 = 0x08;
    pub const IN_ROOT: u64 = 0x10;
    pub const CACHED: u64 = 0x20;
}
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
/// `O_APPEND`) → `w0` bytes. `w2` is the bitwise NOT of the caller's
/// `RLIMIT_FSIZE` ([`fsize_word`]; 0: none): a regular file's write is cut
/// at it, and one wholly past it is `-EFBIG`.
pub const WRITE: u64 = 4;
/// Reads up to `w1` bytes of fid `w0` at offset `w2` → string, `w0`.
pub const PREAD: u64 = 5;
/// Writes the string to fid `w0` at offset `w1` (the end with
/// `O_APPEND`, as Linux's `pwrite`) → `w0`; `w2` as [`WRITE`]'s. `-ESPIPE`
/// for a pipe, terminal or other file without offsets.
pub const PWRITE: u64 = 6;

/// `chroot` to the directory at the string relative to `w0` (forwarder:
/// the caller's root, where its absolute paths start and `..` stops; its
/// children inherit it) → 0; `-EPERM` unless privileged, `-ENOTDIR`,
/// `-ENOENT`, `-EACCES` as the walk finds.
pub const CHROOT: u64 = 140;

/// `memfd_create`: a new nameless regular file of the caller's, mode
/// 0777, empty; `w0` the flags (`MFD_ALLOW_SEALING` 2: it may be sealed;
/// else it starts with `F_SEAL_SEAL`) → `w0` a read-write fid.
pub const MEMFD_CREATE: u64 = 141;
/// Seals of the file of fid `w0`: `w1` 0 → `w0` its seals (`F_GET_SEALS`);
/// 1 adds seals `w2` (`F_ADD_SEALS`: `-EPERM` once `F_SEAL_SEAL` is set
/// or through a read-only fid, `-EINVAL` for an unknown seal) → 0.
/// `-EINVAL` for a file not made by [`MEMFD_CREATE`].
pub const SEALS: u64 = 142;

/// `open_by_handle_at`: opens inode `w0` (the handle `name_to_handle_at`
/// gives: the inode number) with flags `w1` (not `O_CREAT`); `w2` the
/// mount descriptor's fid (`u64::MAX`: the working directory) → as
/// [`OPEN`]. `-ESTALE` if the inode has no names any more, is `/proc`'s, or
/// the mount fid is not of the root file system. The keeper checks the
/// caller's privilege (`CAP_DAC_READ_SEARCH`).
pub const OPEN_HANDLE: u64 = 143;

/// Which of pages `w1`.. `w1 + w2` (`w2` ≤ 4096) of the regular file of
/// fid `w0` exist (`mincore` of a file mapping: the file's pages are
/// resident for every process) → string: a byte per page, 1 if it exists.
pub const PAGES: u64 = 144;

/// [`WRITE`]'s, [`PWRITE`]'s and [`TRUNCATE`]'s `w2` for a file-size
/// limit (`RLIMIT_FSIZE`'s soft value): its bitwise NOT, so that 0 (what
/// a caller that does not say sends) is no limit.
pub const fn fsize_word(limit: u64) -> u64 {
    !limit
}
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
/// to `w0` when it is not empty; `w2` the file-size limit as [`WRITE`]'s
/// (a length past it is `-EFBIG`).
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
/// (forwarder) Key 0: a read-only page key to the caller's process's
/// status page, which its keeper keeps up to date with plain stores once
/// the process has threads: word 0 ([`STATUS_SLEEPERS`]) is how many of
/// its threads wait on a private futex in the keeper (no call of theirs
/// is parked here; `/proc` shows the process `S` while one does). unixd
/// keeps it in slot [`FWD_STATUS`] of the process's forwarder node; a
/// page that is gone (an `execve` made the process a new bank) reads as
/// no sleepers → 0.
pub const STATUS_PAGE: u64 = 27;
/// The status page's word of futex sleepers (its byte offset).
pub const STATUS_SLEEPERS: u64 = 0;

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
/// [`FORK`]'s `w1`: `clone`'s `CLONE_PARENT`, the child's parent is the
/// caller's parent (`-EINVAL` for pid 1, whose parent is nobody).
pub const FORK_PARENT: u64 = 2;
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
/// (`POLLIN` 1, `POLLOUT` 4, `POLLERR` 8, `POLLHUP` 0x10, `POLLRDNORM`
/// 0x40, `POLLWRNORM` 0x100); `w1` the caller's pending signals (a
/// signalfd is readable when one of its mask is pending). The answer's `w1`
/// counts the changes of every file's readiness so far ([`POLL_WAIT`]),
/// its `w2` is 1 for a signalfd.
pub const POLL: u64 = 32;
/// A keeper says where it is: key 0 its start key (signals for its
/// process are sent there); `w0` its program's entry (`_start`), where
/// unixd starts a keeper again after a fault ([`KEEPER_FAULT`]) → `w0` 1
/// if unixd asks for the processes' meter ([`METER`]), else 0.
pub const HELLO: u64 = 33;
/// `kill(w0 pid as Linux's argument, w1 signal)`: 0 for "exists".
pub const KILL: u64 = 34;
/// Who sent the caller signal `w0` by `kill` (its `siginfo`'s `si_pid`
/// and `si_uid`, for a handler with `SA_SIGINFO` or `sigtimedwait`) →
/// `w0` the sender's pid, `w1` its real uid (0, 0: none kept); the
/// record is taken.
pub const SIG_SENDER: u64 = 230;
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
    /// the effective ones). `w2` 1: the caller has `PR_SET_NO_NEW_PRIVS`,
    /// the bits do not apply.
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

// epoll and signalfd (unixd's `epoll.rs`): codes 120–129.

/// `epoll_create`: → `w0` the fid of a new epoll instance (an open file
/// description: shared by `dup` and `fork`, gone with its last reference).
pub const EPOLL_CREATE: u64 = 120;
/// `epoll_ctl` on epoll fid `w0`: `w1` the operation (`EPOLL_CTL_ADD` 1,
/// `DEL` 2, `MOD` 3) | the descriptor number << 32, `w2` the target's fid,
/// the string the `struct epoll_event` (12 bytes: events, data). `EPERM`
/// for a regular file or directory, `EINVAL` if `w0` is no epoll or is the
/// target, `ELOOP` for a loop or too deep a nesting, `EEXIST`, `ENOENT`,
/// `ENOSPC` past the user's watches.
pub const EPOLL_CTL: u64 = 121;
/// A look at epoll fid `w0`'s interest list: at most `w1` events (≤ 341),
/// `w2` the caller's pending signals (for signalfds) → `w0` how many, the
/// string their `struct epoll_event`s. With the string 8 bytes, a deadline
/// (ns since boot, `u64::MAX` none) before which none ready parks the
/// call until some file may have changed (answered `BUSY`: look again),
/// the deadline (`w0` 0), or a signal of `w3` or one a signalfd in the
/// list reads (`-EINTR`).
pub const EPOLL_WAIT: u64 = 122;
/// signalfds: `w0` what ([`signalfd`]).
pub const SIGNALFD: u64 = 123;
/// `poll`'s and `select`'s wait between looks: parks until some file may
/// have changed since the look that answered [`POLL`] `w1` = `w1` here
/// (answered at once if one has; else `BUSY` when one does), until
/// deadline `w0` (ns since boot, `u64::MAX` none; `w0` 0), or a signal of
/// `w3` (`-EINTR`).
pub const POLL_WAIT: u64 = 124;

// inotify (unixd's `inotify.rs`): codes 210–219.

/// `inotify_init1`: `w0` `O_NONBLOCK` → `w0` the fid of a new inotify
/// instance (an open file description; `EMFILE` past the caller's real
/// user's `max_user_instances`).
pub const INOTIFY_INIT: u64 = 210;
/// `inotify_add_watch`: instance fid `w0`, the path (string) relative to
/// fid `w1`, `w2` the mask → `w0` the watch descriptor (`EINVAL`: no
/// instance or a bad mask; `ENOTDIR` for `IN_ONLYDIR`; `EEXIST` for
/// `IN_MASK_CREATE`; `ENOSPC` past `max_user_watches`; the walk's errors;
/// `EACCES` without read permission).
pub const INOTIFY_ADD: u64 = 211;
/// `inotify_rm_watch`: instance fid `w0`, watch descriptor `w1` (`EINVAL`:
/// no such watch or no instance).
pub const INOTIFY_RM: u64 = 212;

/// What [`SIGNALFD`] does.
pub mod signalfd {
    /// A new signalfd of mask `w1`, `w2` `O_NONBLOCK` → `w0` its fid.
    pub const CREATE: u64 = 0;
    /// The mask of signalfd fid `w1` becomes `w2` (`EINVAL`: not a
    /// signalfd).
    pub const SET: u64 = 1;
}

/// The answer (negated in `w0`) to a `READ` of a signalfd: the keeper
/// reads it from its own pending signals; `w1` is the signalfd's mask, `w2`
/// 1 if it is non-blocking. (No errno has this number.)
pub const SIGNALFD_READ: i64 = 1000;

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

/// The `*xattr` calls (`stet_unixfs::xattrs`): `w1` what ([`xattr`]'s
/// `GET`, `SET`, `LIST`, `REMOVE`), with `BY_FID` (the file is open file
/// `w0`) or else the path of the string relative to `w0`
/// (`AT_SYMLINK_NOFOLLOW` for the `l*` calls); `w2` `SET`'s flags, or the
/// most bytes `GET` and `LIST` want (0: only the length); the string
/// `name\0path\0value` (`BY_FID`: `name\0value`) → `w0` the value's or list's length, and (unless
/// asked only the length) the string: the value, or the names each ended
/// by a NUL.
pub const XATTR: u64 = 190;

/// The key retention service (`stet_unixfs::keyrings`, `keyrings(7)`):
/// `w0` the operation (`stet_unix::keyctl::op`: a `keyctl` operation, or
/// `ADD_KEY`, `REQUEST_KEY`) | the calling thread's id << 32, `w1`–`w3`
/// its arguments; descriptions and `add_key`'s payload staged
/// ([`KEY_STAGE`]), the type the string. `DESCRIBE`, `READ` and
/// `GET_SECURITY` take `w2` a byte offset → `w0` the whole length, the
/// string the bytes from the offset (≤ 4096).
pub const KEYCTL: u64 = 200;
/// Stages the string at byte `w1` (0 starts again) of the caller's next
/// [`KEYCTL`]'s payload (`w0` 0) or description (`w0` 1).
pub const KEY_STAGE: u64 = 201;
// Orders 220–229: assorted Linux behaviour (issue 23).

/// The caller's memory figures, sent by its keeper before the process
/// opens its own `/proc/<pid>/status`: `w0` bytes mapped (`VmSize`), `w1`
/// bytes locked (`VmLck`), `w2` pages resident (`VmRSS`), `w3` the most
/// pages resident at once (`VmHWM`) → 0. unixd keeps them (and the most
/// bytes mapped, `VmPeak`) for the `Vm*` lines of the file.
pub const VM_STATS: u64 = 220;

/// [`XATTR`]'s `w1`.
#[allow(missing_docs)]
pub mod xattr {
    pub const GET: u64 = 0;
    pub const SET: u64 = 1;
    pub const LIST: u64 = 2;
    pub const REMOVE: u64 = 3;
    pub const WHAT: u64 = 0xf;
    pub const BY_FID: u64 = 0x10;
    /// Names (each with its NUL, as `listxattr` gives them) and values
    /// one file may hold in all: a list or a value always fits one
    /// message (`stet_unixfs::xattrs`).
    pub const PER_FILE: usize = 4096;
}
// AF_UNIX sockets (`stet_unixfs::sock`, unixd's `sockets.rs`): codes
// 100–119. A socket is an open file description of its own kind; the
// calls that may wait (`ACCEPT`, `CONNECT`, `SEND`, `RECV`) park like a
// pipe's and are answered `BUSY` to ask again; `w3` is [`INTR_WORD`].
// Names are `sun_path`'s bytes as the string: a path (to its first NUL)
// relative to the caller's working directory, or an abstract name from
// its leading NUL. Any order on a fid that is not a socket is `ENOTSOCK`
// (`EBADF` for an `O_PATH` one).

/// `socket`: `w0` the type (`SOCK_STREAM`, `SOCK_DGRAM`, `SOCK_SEQPACKET`),
/// `w1` `O_NONBLOCK` or 0 → `w0` a fid.
pub const SOCKET: u64 = 100;
/// `socketpair`: as [`SOCKET`] → `w1`, `w2` the two fids, connected.
pub const SOCKETPAIR: u64 = 101;
/// `bind` of socket fid `w0` to the string's name, `w1` the file's mode
/// (the umask applied), `w2` the working directory's fid; an empty
/// string: an abstract name of the domain's choosing (autobind).
/// `EADDRINUSE` if the name exists, `EINVAL` if the socket has one.
pub const BIND: u64 = 102;
/// `listen(w0 fid, w1 backlog as a C int)`.
pub const LISTEN: u64 = 103;
/// `accept` on listener fid `w0`, `w1` `O_NONBLOCK` or 0 for the new fid
/// → `w0` the new fid, the string the peer's name. Parks while none.
pub const ACCEPT: u64 = 104;
/// `connect` of socket fid `w0` to the string's name, `w1` the working
/// directory's fid. Parks while the listener's queue is full.
pub const CONNECT: u64 = 105;
/// `sendto` on socket fid `w0`, `w1` the flags (`MSG_DONTWAIT`), `w2`
/// the destination name's length in the low 16 bits (0: none), the
/// number of fids passed (`SCM_RIGHTS`) in the next 16 and the working
/// directory's fid from bit 32; the string: the bytes, the name, then
/// the fids (`u32`s) → `w0` bytes taken. Parks while there is no room.
pub const SEND: u64 = 106;
/// `recvfrom` on socket fid `w0` of at most `w1` bytes, `w2` the flags
/// (`MSG_PEEK`, `MSG_DONTWAIT`, [`RECV_NO_FDS`]) → `w0` bytes copied,
/// `w1` the message's whole length, `w2` the sender's name's length and
/// (bits 16–31) the number of fids that came (`SCM_RIGHTS`, each now a
/// reference of the caller's); the string: the bytes, the name, the fids.
/// Parks while there is nothing.
pub const RECV: u64 = 107;
/// `shutdown(w0 fid, w1 how)`.
pub const SHUTDOWN: u64 = 108;
/// The name of socket fid `w0` (`w1` 0), or of its peer (`w1` 1,
/// `ENOTCONN` without one) → the string, `w0` its length.
pub const SOCKNAME: u64 = 109;
/// `SOL_SOCKET` options of socket fid `w0`: `w1` 0 get, 1 set to the
/// string's `int`; `w2` the option → `w0` the value (`SO_PEERCRED`: `w0`
/// pid, `w1` uid, `w2` gid). `ENOPROTOOPT` for one it does not know.
pub const SOCKOPT: u64 = 110;
/// The largest datagram (and sequenced packet) a socket sends: what one
/// message holds with a name (`EMSGSIZE` past it; 4 bytes less for each
/// description it passes).
pub const MAX_DGRAM: usize = 4096 - 128;
/// The most descriptions one `SCM_RIGHTS` passes (Linux's `SCM_MAX_FD`).
pub const SCM_MAX_FD: usize = 253;
/// [`RECV`]'s flag: a reader that already has bytes takes none that came
/// with descriptions (`EAGAIN`), so they come with the first bytes of a
/// `recvmsg`.
pub const RECV_NO_FDS: u64 = 1 << 62;

/// A FIFO end just opened (a blocking `open`, not `O_RDWR`): fid `w0` →
/// `w0` 0 once the other end has been opened since (or is open); parked
/// until then (answered `BUSY`: ask again). Orders 130–139 are named
/// pipes', pipes' sizes, `splice`'s and leases'.
pub const FIFO_WAIT: u64 = 130;
/// `mknodat`: the string relative to `w0` base, `w1` the type and
/// permission bits (the umask applied; type 0 is a regular file), `w2`
/// the device number (`S_IFCHR`, `S_IFBLK`: root only).
pub const MKNOD: u64 = 131;
/// A pipe's capacity: fid `w0` (either end, or a FIFO's), `w1` 0 → `w0`
/// the capacity in bytes; `w1` 1: set it to `w2` bytes (rounded up to a
/// power of two of pages) → `w0` the new capacity.
pub const PIPE_SIZE: u64 = 132;
/// `splice`'s side on a pipe: fid `w0`, `w1` bytes (≤ 4096); `w2`
/// [`SPLICE_WRITE`]: write the string (else read → string), and
/// [`SPLICE_NOWAIT`]: `-EAGAIN` rather than park.
pub const SPLICE_IO: u64 = 133;
/// [`SPLICE_IO`]'s and [`PIPE_MOVE`]'s `w2` bits.
pub const SPLICE_WRITE: u64 = 1 << 32;
/// Do not wait (`SPLICE_F_NONBLOCK`).
pub const SPLICE_NOWAIT: u64 = 1 << 33;
/// [`PIPE_MOVE`]: copy, leaving the bytes (`tee`).
pub const SPLICE_TEE: u64 = 1 << 34;
/// Pipe to pipe (`splice`, `tee`): from fid `w0` to fid `w1`, at most `w2`
/// low half bytes (`w2` bits [`SPLICE_TEE`], [`SPLICE_NOWAIT`]) → `w0`
/// bytes moved; parks while the first is empty with writers or the second
/// full (`BUSY`: ask again).
pub const PIPE_MOVE: u64 = 134;
/// `fcntl` `F_GETLEASE` (`w1` 0) and `F_SETLEASE` (`w1` 1, type `w2`) on
/// fid `w0`.
pub const LEASE: u64 = 135;
/// An open file description's owner and signal (`F_GETOWN`, `F_SETOWN`,
/// `F_GETOWN_EX`, `F_SETOWN_EX`, `F_GETSIG`, `F_SETSIG`): fid `w0`, `w1`
/// [`owner`]'s operation, `w2` the owner (`F_OWNER_*` type \| pid << 32)
/// or the signal → `w0` the owner or signal (get), 0 (set).
pub const OWNER: u64 = 136;
/// `/proc/<pid>/fd` and `/proc/<pid>/fdinfo` of the caller made again
/// (forwarder): the string is its open descriptors, a `u32` descriptor and
/// a `u32` fid each.
pub const FD_DIR: u64 = 137;

/// [`OWNER`]'s operations.
pub mod owner {
    /// → the owner: type \| pid << 32.
    pub const GET: u64 = 0;
    /// Sets the owner.
    pub const SET: u64 = 1;
    /// → the signal.
    pub const GETSIG: u64 = 2;
    /// Sets the signal.
    pub const SETSIG: u64 = 3;
}

// Process control (orders 160–169: clone, futex, prctl and
// introspection).

/// A process's own settings unixd keeps: `w0` says which ([`proc_ctl`]),
/// `w1` the value to set → `w0` the value (a get) or 0.
pub const PROC_CTL: u64 = 160;
/// [`PROC_CTL`]'s `w0`.
pub mod proc_ctl {
    /// `PR_SET_PDEATHSIG`: the signal `w1` (0: none) the caller gets when
    /// its parent ends (`-EINVAL` past 64).
    pub const SET_PDEATHSIG: u64 = 0;
    /// `PR_GET_PDEATHSIG` → `w0` the signal.
    pub const GET_PDEATHSIG: u64 = 1;
    /// `PR_SET_CHILD_SUBREAPER`: `w1` nonzero makes the caller the
    /// parent its descendants' orphans go to.
    pub const SET_SUBREAPER: u64 = 2;
    /// `PR_GET_CHILD_SUBREAPER` → `w0` 1 or 0.
    pub const GET_SUBREAPER: u64 = 3;
    /// `PR_SET_NAME`: the string (at most 15 bytes) is the caller's name
    /// (`/proc/<pid>/comm`, `stat`, `status`).
    pub const SET_NAME: u64 = 4;
    /// `PR_GET_NAME` → `w1`, `w2` the name's 16 bytes (NUL-padded).
    pub const GET_NAME: u64 = 5;
    /// Which namespace fid `w1` is (a `/proc/<pid>/ns/` file) → `w0` its
    /// `CLONE_NEW*` flag; `-ENOTTY` for any other file.
    pub const NS_KIND: u64 = 6;
    /// A new fid (read-only) of the user namespace → `w0`.
    pub const NS_USER: u64 = 7;
}

/// `FUTEX_REQUEUE` of words in shared mappings: wakes at most `w3`'s low
/// half of the calls parked on the word `w0`, `w1` names (as
/// [`FUTEX_WAIT`]) and moves at most its high half of the rest to the
/// word of fid `w2` at the offset the 8-byte string holds → `w0` how many
/// woke and moved; `-EFAULT` for a word past its file's end.
pub const FUTEX_REQUEUE: u64 = 161;

/// Process file descriptors: `w0` 0 OPEN a pidfd of process `w1` (`w2`
/// `O_NONBLOCK` or 0) → `w0` its fid (`-ESRCH`: no such process,
/// `-EINVAL`: a thread's id); 1 PID of fid `w1` → `w0` the pid, `w1` bit 0
/// it has ended, bit 1 the pidfd is `O_NONBLOCK` (`-EBADF`: not a pidfd).
pub const PIDFD: u64 = 162;

/// (forwarder) Key 0 is the caller's process's address space: a full
/// segment key to the root of its tree, which its keeper sends after
/// `HELLO` and after each `execve` (a new tree). unixd keeps it in slot
/// [`FWD_SPACE`] of the process's forwarder node (a node of its own for a
/// process unixd did not fork) until the process is reaped, for
/// [`PROCVM`]; `w0` 1 if the process may not be dumped (`PR_SET_DUMPABLE`
/// 0: only `CAP_SYS_PTRACE` reaches it), sent again when that changes → 0.
pub const PROC_SPACE: u64 = 240;
/// Slot of a process's forwarder node that holds its space ([`PROC_SPACE`]).
pub const FWD_SPACE: u64 = 3;
/// Slot of a process's forwarder node that holds its status page
/// ([`STATUS_PAGE`]).
pub const FWD_STATUS: u64 = 4;
/// (forwarder) `process_vm_readv`/`process_vm_writev`: may the caller
/// reach process (or thread) `w0`'s memory, for writing if `w1` is 1? As
/// Linux's `ptrace_may_access` with real credentials: the target's real,
/// effective and saved user ids all the caller's real one and its group
/// ids all the caller's real group and it may be dumped, or the caller
/// has `CAP_SYS_PTRACE`
/// → key 0: a no-call segment key to the target's space (read-only
/// unless `w1` is 1), `w0` 0. `-ESRCH` for no such process or a zombie,
/// `-EPERM` when not allowed, `-EAGAIN` when the target's keeper has not
/// sent its space yet (a child that has only just been forked: ask again).
pub const PROCVM: u64 = 241;

/// The system's own settings and the calls about the system as a whole
/// (forwarder): `w0` says which ([`sysmisc`]), the rest its arguments.
pub const SYSMISC: u64 = 170;

/// What [`SYSMISC`] does.
pub mod sysmisc {
    /// → string: `uname`'s `nodename` and `domainname`, 65 bytes each
    /// (NUL-padded).
    pub const UTS: u64 = 0;
    /// `sethostname` to the string (`-EPERM` without `CAP_SYS_ADMIN`,
    /// `-EINVAL` past 64 bytes).
    pub const SET_HOSTNAME: u64 = 1;
    /// `setdomainname` to the string (likewise).
    pub const SET_DOMAINNAME: u64 = 2;
    /// `ioprio_get(w1 which, w2 who)` → `w0` the priority.
    pub const IOPRIO_GET: u64 = 3;
    /// `ioprio_set(w1 which, w2 who, w3 ioprio)`.
    pub const IOPRIO_SET: u64 = 4;
    /// `reboot`'s command `w1` (the magic numbers checked by the keeper).
    pub const REBOOT: u64 = 5;
    /// `vhangup`: the caller's controlling terminal is hung up.
    pub const VHANGUP: u64 = 6;
    /// → `w0` `/proc/sys/kernel/dmesg_restrict` (0 or 1).
    pub const DMESG_RESTRICT: u64 = 7;
    /// An `ioctl` of the random devices on fid `w1`, request `w2` → `w0`
    /// its value (`RNDGETENTCNT`: the entropy count; `-ENOTTY` for
    /// another file).
    pub const RANDOM: u64 = 8;
    /// `adjtimex` (`clock_adjtime(CLOCK_REALTIME)`) of the string's
    /// `struct timex` → `w0` the clock state, string the `struct timex`
    /// filled in (`stet_unix::timex`).
    pub const ADJTIME: u64 = 9;
}

/// Capabilities (forwarder): `w0` says what ([`caps_op`]).
pub const CAPS: u64 = 171;

/// What [`CAPS`] does.
pub mod caps_op {
    /// The sets of process `w1` (0: the caller) → `w0` effective, `w1`
    /// permitted, `w2` inheritable (`-ESRCH`: no such process).
    pub const GET: u64 = 0;
    /// `capset` of the caller to effective `w1`, permitted `w2`,
    /// inheritable `w3` (`-EPERM` by `Caps::set`'s rules).
    pub const SET: u64 = 1;
    /// `PR_CAPBSET_READ` of capability `w1` → `w0` 1 or 0 (`-EINVAL`).
    pub const BSET_READ: u64 = 2;
    /// `PR_CAPBSET_DROP` of capability `w1` (`-EPERM` without
    /// `CAP_SETPCAP`, `-EINVAL`).
    pub const BSET_DROP: u64 = 3;
}

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

/// `ptrace`, the tracer's side (docs/UNIX.md, "Tracing"): `w0` the
/// request \| the tracee's pid << 32 (`stet_unix::ptrace::req`), `w1` the
/// address, `w2` the data (for `SETREGS`/`SETSIGINFO`, whose data the
/// caller's keeper read: the bytes as the string, or `w2`
/// [`trace::BAD_BUFFER`] when they could not be read) → `w0` 0 or
/// `-errno`, `w1` a word read (`PEEK*`, `GETEVENTMSG`), string: the
/// registers (`GETREGS`, 216 bytes) or the `siginfo` (`GETSIGINFO`, 128).
/// Linux's errnos: `ESRCH` for a process not traced by the caller or not
/// stopped, `EPERM` for one that may not be traced, `EIO` for a bad
/// request, offset or signal. A `PEEK`/`POKE` of memory is relayed to the
/// stopped tracee's keeper (its `TRACE_STOP` is answered with it) and the
/// caller parks until [`TRACE_REPLY`].
pub const TRACE: u64 = 250;
/// A tracee's keeper stops its process for the tracer: `w0` why
/// ([`trace`]`::SIGNAL`, `SYSCALL_ENTRY`, `SYSCALL_EXIT`, `EXEC`), `w1` the
/// signal, `w2` bit 0: the same stop asked again (after `BUSY` or a
/// signal), string: the registers (`user_regs_struct`, 216 bytes).
/// → `w0` [`trace::NOT_TRACED`] (not traced: go on), else the call parks
/// until the tracer resumes it (`w0` [`trace::RESUME`], `w1` the signal to
/// deliver, `w2` [`trace`] flags, string: the registers) or asks for
/// memory (`w0` [`trace::PEEK`]/[`trace::POKE`], `w1` the address, `w2`
/// the word), answered with [`TRACE_REPLY`].
pub const TRACE_STOP: u64 = 251;
/// A stopped tracee's keeper answers a relayed `PEEK`/`POKE`: `w0` 0 or
/// `-EIO`, `w1` the word read; the tracer's `TRACE` is answered and this
/// call parks again as `TRACE_STOP` did.
pub const TRACE_REPLY: u64 = 252;

/// Words of [`TRACE`] and [`TRACE_STOP`].
pub mod trace {
    /// `TRACE_STOP`'s answer: the process is not traced.
    pub const NOT_TRACED: u64 = 0;
    /// Go on (`CONT`, `SYSCALL`, `DETACH`).
    pub const RESUME: u64 = 1;
    /// Read the word at `w1`.
    pub const PEEK: u64 = 2;
    /// Write `w2` at `w1`.
    pub const POKE: u64 = 3;
    /// `TRACE_STOP`'s `w0`: a signal's delivery.
    pub const SIGNAL: u64 = 0;
    /// A system call's entry.
    pub const SYSCALL_ENTRY: u64 = 1;
    /// Its exit.
    pub const SYSCALL_EXIT: u64 = 2;
    /// A successful `execve`.
    pub const EXEC: u64 = 3;
    /// `RESUME`'s flags: stop at system calls (`PTRACE_SYSCALL`).
    pub const SYSCALLS: u64 = 1;
    /// The registers were changed: take the string's.
    pub const REGS: u64 = 2;
    /// No longer traced (`DETACH`).
    pub const DETACHED: u64 = 4;
    /// Still stopped by job control (a `DETACH` of a stopped process).
    pub const STILL_STOPPED: u64 = 8;
    /// `TRACE`'s `w2` for `SETREGS`/`SETSIGINFO`: the data was unreadable.
    pub const BAD_BUFFER: u64 = 1;
    /// `PAUSE`'s answer `w1` to a process stopped by job control that a
    /// tracer attached: stop for the tracer.
    pub const ATTACHED: u64 = 1;
}

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
pub const NAMES_FILES: [u64; 20] = [
    OPEN,
    STAT,
    GETDENTS,
    MKDIR,
    UNLINK,
    RENAME,
    LINK,
    SYMLINK,
    READLINK,
    CHMOD,
    TRUNCATE,
    ACCESS,
    EXEC,
    UTIMENS,
    CHOWN,
    STATFS,
    MKNOD,
    FD_DIR,
    CHROOT,
    INOTIFY_ADD,
];

/// The orders of [`NAMES_FILES`] that look one path up first (`OPEN`
/// then may make a file where it ends, never in `/proc`).
pub const LOOKS_UP: [u64; 8] = [
    OPEN,
    STAT,
    ACCESS,
    READLINK,
    EXEC,
    STATFS,
    CHROOT,
    INOTIFY_ADD,
];

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
    /// `O_ASYNC`: a signal to the owner when input comes (pipes).
    pub const ASYNC: u64 = 0o20000;
    /// `O_DIRECT`: on a pipe's write end, packets (`pipe2(2)`).
    pub const DIRECT: u64 = 0o40000;
    pub const DIRECTORY: u64 = 0o200000;
    pub const NOFOLLOW: u64 = 0o400000;
    pub const CLOEXEC: u64 = 0o2000000;
    pub const PATH: u64 = 0o10000000;
    /// Do not update the access time: the owner's (or privileged) only.
    pub const NOATIME: u64 = 0o1000000;
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
