//! The UNIX file-system domain: one domain holding every directory, inode,
//! open file description and pipe of the UNIX personality (Workplace OS's
//! and KeyNIX's hindsight: not a domain per inode, no queue domains on
//! pipes). Regular files are segments (`content`), so a keeper maps an
//! executable's pages straight into its process. It needs no journal and
//! no fsck: all of it is in this domain's memory and its objects, which the
//! single-level store checkpoints like everything else.
//!
//! Keepers call it with the orders of `stet_unix::proto`; every answer is
//! `OK` with the system call's `rax` in `w0`. A call that must wait (a
//! pipe with nothing to read, or no room) is parked: its resume key stays
//! where it arrived if one of the `RESUME_SLOTS` is free for the next
//! message (no invocation at all), else goes in the `WAITS` node. When the
//! pipe changes, a parked read is answered with its bytes; other calls are
//! answered `BUSY`, on which they ask again (restartable, as in Fluke).
//!
//! On its first start it builds the file system from a `newc` cpio
//! archive (`boot`), adds `/dev`, `/tmp` and `/proc`, and prints a line.
//!
//! Keys: see `slots`. Argument: the system's start time (s since 1970) in
//! bits 0–31, and the file-space shares in bits 32–55 (`limits::Shares`).
//!
//! `handle` sends each order to the file that serves its area: `files`
//! (names and open files), `io` (read, write, pipes, the terminal),
//! `procs` (fork, exit, wait, ids), `signals` (kill, alarm), `wait`
//! (parked calls, sleeps, the clock), `memory` (file pages, memfd,
//! futexes, shared pages), `sockets` (AF_UNIX sockets), `procfs` and `procgen` (`/proc`), `statfs`
//! and `klog` (the kernel log, `syslog`); `content` keeps regular files'
//! bytes and `boot` builds the first file system. A message through
//! the start key with key info `KEEPER_FAULT` is a keeper's fault
//! (`faults`).
#![no_std]
#![no_main]

extern crate alloc;

mod boot;
mod content;
mod creds;
mod epoll;
mod faults;
mod fdobjs;
mod fifos;
mod files;
mod flocks;
mod inotify;
mod io;
mod keyrings;
mod keys;
mod klog;
mod limits;
mod locks;
mod memfds;
mod memory;
mod mqueue;
mod open;
mod prio;
mod procctl;
mod procfs;
mod procgen;
mod procs;
mod procvm;
mod ptimers;
mod ptrace;
mod signals;
mod slots;
mod sockets;
mod statfs;
mod sysmisc;
mod sysv;
mod table;
mod tids;
mod vfork;
mod wait;
mod xattrs;

use alloc::vec::Vec;
use content::Content;
use open::{Kind, Open, Pipe};
use procs::Proc;
use slots::{K0, RESUME, SELF, SLEEP, STORE, T};
use stet_rt::abi::invoke::Source;
use stet_rt::abi::service::store as order_store;
use stet_rt::abi::{code::Code, order};
use stet_rt::key::Slot;
use stet_rt::key::{call, wait, Answer, Msg};
use stet_unix::proto as p;
use stet_unix::sys::errno::*;
use stet_unix::tty::Tty;
use stet_unixfs::fs::Fs;
use wait::Waiter;

stet_rt::global_heap!();

/// What to answer.
enum Reply {
    /// `w0`..`w2`, and `n` bytes of the out buffer as the string; with a
    /// key in `T` when `key`.
    Now([u64; 3], usize, bool),
    /// The call is parked.
    Parked,
    /// The call is never answered here (its resume key went elsewhere).
    Kept,
}

fn now_ns() -> u64 {
    call(SLEEP, order::sleep::NOW, [0; 4]).w[0]
}

fn ret(r: Result<u64, i64>) -> [u64; 3] {
    [stet_unix::sys::ret(r), 0, 0]
}

/// A system call's answer now: its `rax` alone.
fn word(r: Result<u64, i64>) -> Result<Reply, i64> {
    Ok(Reply::Now(ret(r), 0, false))
}

/// The domain's state.
pub struct Unixd<'a> {
    fs: &'a mut Fs,
    content: &'a mut Content,
    /// Open file descriptions, by file id.
    open: Vec<Open>,
    /// Pipes, by number.
    pipes: Vec<Pipe>,
    /// Open file descriptions' leases, owners and signals (`fifos`).
    extras: Vec<fifos::Extra>,
    /// Parked calls; call `i`'s resume key is entry `i` of `waits`, unless
    /// it stayed in a general slot.
    waiters: Vec<Waiter>,
    /// Keys by table index (`keys`).
    keys: stet_unix_personality::keydir::KeyDir,
    /// Processes, by table index.
    procs: Vec<Proc>,
    /// Who sent each signal by `kill` that its target has not asked about
    /// (`signals::Sender`).
    senders: Vec<crate::signals::Sender>,

    next_pid: u32,
    /// Pids and thread ids are below this (`/proc/sys/kernel/pid_max`,
    /// root may set it within Linux's bounds).
    pid_max: u32,
    /// The caller of the message being served (0: not a process) and the
    /// signals that end its wait if it parks.
    caller: u32,
    intr: u64,
    /// The slot the message being served brought its resume key in, which
    /// is where the next one's goes unless `park` leaves a call there.
    resume: Slot,
    /// Where a keeper starts (`HELLO`): a faulted keeper is started there
    /// again (`faults`).
    keeper_entry: u64,
    /// Until when each clock helper sleeps (0: parked, or on its way to
    /// `TICK`): `wait::Unixd::kick`.
    tick_at: [u64; 2],
    /// The `FILES` bank's page limit (`limits`).
    files_limit: u64,
    /// The percentage of it one process may hold (`limits`).
    file_share: u64,
    /// The terminal.
    tty: &'a mut Tty,
    /// Seconds since 1970 at boot: file times are `epoch + now`.
    epoch_ns: u64,
    /// The generated files of `/proc` (inode, what), by inode.
    gen: Vec<(u32, procfs::Gen)>,
    /// The kernel log and what the system's files of `/proc` need.
    sys: procgen::Sys,
    /// Unimplemented calls of every process that has ended, by number
    /// (the last counts all higher numbers).
    enosys: [u32; 512],
    /// Pages shared copy-on-write after fork, and their holders.
    shares: &'a mut stet_unixfs::share::Shares,
    /// Some process's `/proc` directory waits to be made
    /// (`Proc::proc_pending`).
    proc_pending: bool,
    /// What waiting directories of processes that ran `execve` will hold.
    infos: &'a mut [procfs::ExecInfo; procfs::MAX_INFO],
    /// The message being served is a thread's whose keeper must not wait
    /// (`proto::NOTIFY_SHIFT`): its keeper slot, else 0.
    notify: u16,
    /// Thread ids in use, and their processes (`TID`).
    tids: Vec<(u32, u32)>,
    /// The one namespace of each kind: its inode, shown as
    /// `/proc/<pid>/ns/<kind>` in every process (`procctl::NS_NAMES`; 0:
    /// not made yet).
    ns: [u32; procctl::NS_KINDS],
    /// Eventfds and timerfds (`fdobjs`).
    events: Vec<fdobjs::Event>,
    timers: Vec<fdobjs::Timer>,
    /// Epoll instances and signalfds' masks (`epoll`).
    epolls: Vec<epoll::Epoll>,
    sigfds: Vec<Option<u64>>,
    /// The entries one user may have in all its epolls.
    max_user_watches: u64,
    /// `EPOLLEXCLUSIVE`: which epoll took each watched file's latest
    /// change (fid, generation, epoll), so that no other reports it.
    claims: Vec<(u32, u32, u16)>,
    /// How many times some file's readiness may have changed (`epoll`,
    /// `proto::POLL_WAIT`).
    changes: u64,
    /// POSIX timers of every process (`ptimers`).
    ptimers: Vec<ptimers::PTimer>,
    /// Open-file-description locks and `flock` (`flocks`).
    flocks: stet_unixfs::flocks::Locks,
    /// System V IPC's objects (`sysv`).
    ipc: stet_unixfs::ipc::Ipc,
    /// The key retention service's keys (`keyrings`).
    keyring: stet_unixfs::keyrings::Keys,
    /// `fcntl`'s record locks (`locks`).
    locks: stet_unixfs::locks::Locks,
    /// Children made by `vfork` that have not yet run `execve` or ended,
    /// and their parents (`vfork`).
    vforks: Vec<(u32, u32)>,
    /// AF_UNIX sockets (`sockets`).
    socks: stet_unixfs::sock::Socks,
    /// The seals of `memfd_create`'s files, by inode (`memfds`).
    seals: Vec<(u32, u32)>,
    /// The host and domain names and other settings (`sysmisc`).
    misc: sysmisc::Misc,
    /// inotify instances, their limits, files unlinked while open and the
    /// last `IN_MOVED_*` cookie (`inotify`).
    inotifies: Vec<Option<stet_unixfs::inotify::Instance>>,
    inotify_limits: inotify::Limits,
    orphans: Vec<inotify::Orphan>,
    cookie: u32,
    /// Traced processes (`ptrace`).
    traces: Vec<ptrace::Trace>,
}

impl Unixd<'_> {
    /// The wall clock at boot (ns since 1970): realtime ↔ since boot.
    pub(crate) fn boot_wall(&self) -> u64 {
        // One reading: two could straddle a clock tick and put the boot
        // a tick early (btime one second off when it falls on a second).
        let a = call(SLEEP, order::sleep::NOW, [0; 4]);
        if a.w[2] != 0 {
            a.w[2].saturating_sub(a.w[0])
        } else {
            self.epoch_ns
        }
    }

    /// The wall clock (ns since 1970): the kernel's, else the system's
    /// start time from the image plus the time since boot.
    pub(crate) fn time(&self) -> u64 {
        let a = call(SLEEP, order::sleep::NOW, [0; 4]);
        if a.w[2] != 0 {
            a.w[2]
        } else {
            self.epoch_ns + a.w[0]
        }
    }

    /// Answers one message: the area that serves its order does.
    fn handle(&mut self, a: &Answer, s: &[u8], out: &mut [u8; 4096]) -> Result<Reply, i64> {
        // The file system checks as the superuser unless an order says
        // whose call it serves (`act_as_caller`).
        self.fs.who = stet_unix::cred::Cred::ROOT;
        self.fs.root = stet_unix::fs::ROOT;
        self.fs.resolve = stet_unixfs::fs::Resolve::NONE;
        // (Orders that only look a path up make the waiting directories
        // only if the path goes through `/proc`: `resolve_seeing_proc`.)
        if self.proc_pending && p::NAMES_FILES.contains(&a.code) && !p::LOOKS_UP.contains(&a.code) {
            self.proc_flush();
        }
        if self.self_moves() && p::NAMES_FILES.contains(&a.code) {
            self.point_self();
        }
        match a.code {
            // Only a process (through its forwarder) may ask these.
            p::FORK
            | p::UNFORK
            | p::KEEPER_KEY
            | p::EXIT
            | p::WAIT4
            | p::JOBCTL
            | p::GETPPID
            | p::HELLO
            | p::KILL
            | p::SIG_SENDER
            | p::SETPGID
            | p::GETPGID
            | p::SETSID
            | p::SLEEP
            | p::ALARM
            | p::PAUSE
            | p::FUTEX_WAIT
            | p::FUTEX_WAKE
            | p::PROCINFO
            | p::CRED
            | p::CAPS
            | p::SYSMISC
            | p::TID
            | p::PRIO
            | p::SCHED
            | p::PTIMER
            | p::METER
            | p::LOCK
            | p::VFORK
            | p::SOCKET..=p::SOCKOPT
            | p::FD_DIR
            | p::PROC_CTL
            | p::FUTEX_REQUEUE
            | p::PIDFD
            | p::PROC_SPACE
            | p::STATUS_PAGE
            | p::PROCVM
            | p::KEYCTL
            | p::KEY_STAGE
            | p::TRACE
            | p::TRACE_STOP
            | p::TRACE_REPLY
                if a.source != Source::Forwarded =>
            {
                Err(EPERM)
            }
            p::OPEN
            | p::CLOSE
            | p::LSEEK
            | p::FSTAT
            | p::STAT
            | p::GETDENTS
            | p::MKDIR
            | p::UNLINK
            | p::RENAME
            | p::LINK
            | p::SYMLINK
            | p::READLINK
            | p::CHMOD
            | p::UTIMENS
            | p::TRUNCATE
            | p::ACCESS
            | p::GETCWD
            | p::DUP
            | p::FLAGS
            | p::CHOWN
            | p::XATTR
            | p::OPEN_HANDLE
            | p::EXEC => self.file_order(a, s, out),
            p::CHROOT if a.source != Source::Forwarded => Err(EPERM),
            p::CHROOT => self.chroot(a.w[0], s),
            p::MEMFD_CREATE if a.source != Source::Forwarded => Err(EPERM),
            p::MEMFD_CREATE | p::SEALS => self.memfd_order(a),
            p::CRED => self.cred_order(a, s, out),
            p::CAPS => self.caps_order(a),
            p::VM_STATS if a.source != Source::Forwarded => Err(EPERM),
            p::VM_STATS => {
                let i = self.proc_of(a.label)?;
                let w = a.w;
                let v = &mut self.procs[i].vm;
                let peak = v[4].max(w[0]);
                *v = [w[0], w[1], w[2], w[3], peak];
                word(Ok(0))
            }
            p::SYSMISC => self.sysmisc_order(a, s, out),
            p::EVENTFD | p::TIMERFD | p::TIMERFD_SET | p::TIMERFD_GET => {
                self.fdobj_order(a, s, out)
            }
            p::EPOLL_CREATE | p::EPOLL_CTL | p::EPOLL_WAIT | p::SIGNALFD | p::POLL_WAIT => {
                self.epoll_order(a, s, out)
            }
            p::INOTIFY_INIT..=p::INOTIFY_RM => self.inotify_order(a, s),
            p::TID => word(self.tid_order(a.label, a.w[0], a.w[1])),
            p::PRIO => word(self.prio(a.label, a.w[0], a.w[1], a.w[2])),
            p::SCHED => self.sched_order(a.label, a.w, s, out),
            p::PTIMER => self.ptimer_order(a, s, out),
            p::FLOCK => self.flock_order(a, s, out),
            p::READ
            | p::PREAD
            | p::WRITE
            | p::PWRITE
            | p::PIPE
            | p::POLL
            | p::INPUT
            | p::TTY
            | p::ISATTY => self.io_order(a, s, out),
            p::FORK
            | p::UNFORK
            | p::EXIT
            | p::WAIT4
            | p::GETPPID
            | p::HELLO
            | p::SETPGID
            | p::GETPGID
            | p::SETSID
            | p::PROCINFO
            | p::ENOSYS
            | p::STATUS
            | p::JOBCTL
            | p::SYSINFO => self.process_order(a, s, out),
            p::KILL | p::ALARM | p::SIG_SENDER => self.signal_order(a),
            p::KEEPER_KEY => self.keeper_key(),
            p::STATFS => self.statfs_order(a, s, out),
            p::KEYCTL | p::KEY_STAGE => self.key_order(a, s, out),
            p::SYSLOG => self.syslog_order(a, out),
            p::METER => self.meter_order(),
            p::SHMGET..=p::IPC_MORE => self.sysv_order(a, s, out),
            p::LOCK => self.lock_order(a, s, out),
            p::FIFO_WAIT..=p::FD_DIR => self.fifo_order(a, s, out),
            p::VFORK => self.vfork_wait(a.w[0]),
            p::SOCKET..=p::SOCKOPT => self.sock_order(a, s, out),
            p::TICK | p::SLEEP | p::PAUSE => self.wait_order(a),
            p::MAP_PAGE
            | p::MEMFD
            | p::SHARE
            | p::UNSHARE
            | p::FUTEX_WAIT
            | p::FUTEX_WAKE
            | p::FUTEX_REQUEUE
            | p::PAGES => self.memory_order(a, s, out),
            p::PROC_CTL => self.proc_ctl_order(a, s),
            p::PIDFD => self.pidfd_order(a),
            p::PROC_SPACE => self.proc_space(a.label, a.w[0] & 1 != 0),
            p::STATUS_PAGE => self.status_page(a.label),
            p::PROCVM => self.procvm(a.label, a.w[0], a.w[1] == 1),
            p::TRACE | p::TRACE_STOP | p::TRACE_REPLY => self.trace_order(a, s, out),
            _ => Err(ENOSYS),
        }
    }
}

fn main(arg: u64) -> i64 {
    let epoch = arg & 0xffff_ffff;
    let file_shares = limits::Shares::from_arg(arg);
    let mut fs = Fs::new(0);
    let mut content = Content::new();
    let mut tty = Tty::new();
    let mut shares = stet_unixfs::share::Shares::new();
    let mut infos = [procfs::NO_INFO; procfs::MAX_INFO];
    // The terminal's first foreground group: the first process's.
    tty.fg = 1;
    let mut d = Unixd {
        fs: &mut fs,
        content: &mut content,
        open: Vec::new(),
        pipes: Vec::new(),
        extras: Vec::new(),
        waiters: Vec::new(),
        keys: keys::directory(),
        procs: Vec::new(),
        senders: Vec::new(),
        next_pid: 2,
        pid_max: procgen::PID_MAX,
        caller: 0,
        intr: 0,
        resume: RESUME,
        tick_at: [0; 2],
        keeper_entry: 0,
        files_limit: Unixd::make_files_bank(file_shares),
        file_share: file_shares.process,
        tty: &mut tty,
        epoch_ns: epoch * 1_000_000_000,
        gen: Vec::new(),
        sys: procgen::Sys::new(),
        enosys: [0; 512],
        shares: &mut shares,
        infos: &mut infos,
        proc_pending: false,
        notify: 0,
        tids: Vec::new(),
        ns: [0; procctl::NS_KINDS],
        events: Vec::new(),
        timers: Vec::new(),
        epolls: Vec::new(),
        sigfds: Vec::new(),
        max_user_watches: 0,
        claims: Vec::new(),
        changes: 0,
        ptimers: Vec::new(),
        flocks: stet_unixfs::flocks::Locks::new(),
        ipc: stet_unixfs::ipc::Ipc::default(),
        keyring: stet_unixfs::keyrings::Keys::new(),
        locks: stet_unixfs::locks::Locks::new(),
        vforks: Vec::new(),
        socks: stet_unixfs::sock::Socks::new(),
        seals: Vec::new(),
        misc: sysmisc::Misc::new(),
        inotifies: Vec::new(),
        inotify_limits: inotify::Limits::new(0),
        orphans: Vec::new(),
        cookie: 0,
        traces: Vec::new(),
    };
    // As Linux: 4% of memory, at 160 bytes an entry (an `Entry` and its
    // share of the list), for each user.
    d.inotify_limits = inotify::Limits::new(d.files_limit);
    d.max_user_watches = (d.files_limit.saturating_mul(4096) / 25 / 160).clamp(1024, 1 << 22);
    // The keepers' domain keeper (`faults`), if the image gave one (in
    // `K0`, free until the first message).
    let _ = d.put_key(keys::FAULT_KEY, K0);
    // The kernel log's first line, as Linux's.
    let mut v = [0u8; 128];
    let mut t = stet_unix::procgen::Text::new(&mut v);
    stet_unix::procgen::version(&mut t);
    let n = t.len().saturating_sub(1);
    let version = core::str::from_utf8(&v[..n]).unwrap_or("Linux");
    d.klog(klog::NOTICE, false, format_args!("{version}"));
    match boot::build(&mut d) {
        Ok(s) => d.klog(
            klog::INFO,
            true,
            format_args!(
                "unixd: {} files, {} directories, {} links from the archive; {} KiB of file data",
                s.files,
                s.dirs,
                s.links,
                s.bytes / 1024
            ),
        ),
        Err(e) => d.klog(
            klog::ERR,
            true,
            format_args!("unixd: the initial file system is incomplete: {e}"),
        ),
    }
    d.proc_boot();
    // Published for the native shell's `unix` command, when slot 3 is a
    // data store publisher key (`make run`); otherwise the call fails and
    // nothing is published.
    let mut name = [0u8; 8];
    name[..p::STORE_NAME.len()].copy_from_slice(p::STORE_NAME);
    Msg::new(STORE, order_store::PUT)
        .string(&name[..p::STORE_NAME.len() + 1])
        .keys([SELF, 0, 0, 0])
        .call();
    let mut inbuf = [0u8; 4096];
    let mut out = [0u8; 4096];
    d.resume = RESUME;
    let mut a = wait([K0, 0, 0, 0], d.resume, &mut inbuf);
    loop {
        let n = a.len.min(inbuf.len());
        let s = &inbuf[..n];
        let forwarded = a.source == Source::Forwarded;
        // A threaded process's keeper names the thread in the order's
        // upper half: a wait of it must not hold the keeper.
        d.notify = if forwarded {
            (a.code >> p::NOTIFY_SHIFT) as u16
        } else {
            0
        };
        a.code &= (1 << p::NOTIFY_SHIFT) - 1;
        d.caller = if forwarded { a.label } else { 0 };
        d.intr = a.w[p::INTR_WORD];
        let reply = if a.source == Source::Start && a.info == p::KEEPER_FAULT {
            d.keeper_fault(&a)
        } else {
            match d.charged(a.code, |d| d.handle(&a, s, &mut out)) {
                Ok(r) => r,
                Err(e) => Reply::Now(ret(Err(e)), 0, false),
            }
        };
        a = match reply {
            Reply::Now(w, len, key) => Msg::new(d.resume, Code::Ok.into())
                .words([
                    w[0],
                    w[1],
                    // Ready threads ride on the answers that use only w0
                    // and may be what made them ready.
                    if forwarded && d.notify != 0 && p::CARRIES_READY.contains(&a.code) {
                        d.take_ready(a.label)
                    } else {
                        w[2]
                    },
                    if forwarded {
                        d.take_pending(a.label)
                    } else {
                        0
                    },
                ])
                .string(&out[..len])
                .keys([if key { T } else { 0 }, 0, 0, 0])
                .recv([K0, 0, 0, 0])
                .resume_into(d.resume)
                .ret_into(&mut inbuf),
            Reply::Parked | Reply::Kept => wait([K0, 0, 0, 0], d.resume, &mut inbuf),
        };
    }
}

stet_rt::main!(main);
