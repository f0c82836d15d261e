//! The system's files in `/proc` (`/proc/cpuinfo`, `stat`, `version`,
//! `filesystems`, `loadavg`, `mounts`, `/proc/sys/kernel/*`,
//! `/proc/sys/fs/*`) and each process's `status` and `mounts`, made again
//! whenever they are opened (`procfs::refresh`); the symbolic links
//! `/proc/self` (pointed at each caller before it names a path),
//! `/proc/mounts` and `/etc/mtab`; and the figures behind them: the
//! processor's busy time from the meter the processes run under
//! (`proto::METER`), the load averages, the count of `fork`s. The text
//! itself is `stet_unix::procgen`'s.

use crate::keys::{MAX_PROCS, METER_KEY};
use crate::procfs::{name_of, Gen};
use crate::procs::Proc;
use crate::slots::{K0, SLEEP, T};
use crate::wait::Wait;
use crate::{word, Reply, Unixd};
use alloc::vec::Vec;
use core::fmt::Write;
use stet_rt::abi::order;
use stet_rt::key::call;
use stet_unix::cpuinfo::{cpuinfo, Cpu};
use stet_unix::fs::mode;
use stet_unix::klog::Klog;
use stet_unix::loadavg::Load;
use stet_unix::procgen::{self as pg, Text, USER_HZ};
use stet_unix::sys::errno::EIO;
use stet_unix::sys::UNAME;
use stet_unix::sysv::limit as lim;

/// A generated file of the system's (not of one process).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum SysFile {
    Cpuinfo,
    Stat,
    Version,
    Filesystems,
    Loadavg,
    /// `/proc/<pid>/mounts` (every process sees the same file systems).
    Mounts,
    PidMax,
    Tainted,
    Hostname,
    OsRelease,
    OsType,
    KernelVersion,
    NgroupsMax,
    FileMax,
    NrOpen,
    PipeMaxSize,
    PipeUserPagesSoft,
    PipeUserPagesHard,
    Printk,
    Domainname,
    Shmmax,
    Shmall,
    Shmmni,
    Msgmax,
    Msgmnb,
    Msgmni,
    Sem,
    CorePattern,
    DmesgRestrict,
    EntropyAvail,
    /// `/proc/sys/fs/epoll/max_user_watches` (`epoll`).
    EpollWatches,
    /// `/proc/sys/fs/inotify/max_user_instances`, `max_user_watches`,
    /// `max_queued_events` (`inotify`).
    InotifyInstances,
    InotifyWatches,
    InotifyQueued,
    /// `/proc/sys/kernel/keys/maxkeys`, `maxbytes`, `root_maxkeys`,
    /// `root_maxbytes`: the key quotas (`keyrings`).
    KeysMaxkeys,
    KeysMaxbytes,
    KeysRootMaxkeys,
    KeysRootMaxbytes,
    /// `/proc/keys` (what the opener may view) and `/proc/key-users`.
    Keys,
    KeyUsers,
    /// `/proc/sysvipc/shm`, `sem`, `msg`.
    SysvShm,
    SysvSem,
    SysvMsg,
}

impl SysFile {
    /// Whether root may write it (`sysctl`: mode 0644, else 0444).
    pub(crate) fn writable(self) -> bool {
        matches!(
            self,
            SysFile::Hostname
                | SysFile::Domainname
                | SysFile::CorePattern
                | SysFile::DmesgRestrict
                | SysFile::Shmmax
                | SysFile::Shmall
                | SysFile::Shmmni
                | SysFile::InotifyInstances
                | SysFile::InotifyWatches
                | SysFile::InotifyQueued
                | SysFile::KeysMaxkeys
                | SysFile::KeysMaxbytes
                | SysFile::KeysRootMaxkeys
                | SysFile::KeysRootMaxbytes
                | SysFile::PidMax
        )
    }
}

/// The system's files: directory under `/proc`, name, what.
const FILES: [(&[u8], &[u8], SysFile); 42] = [
    (b"", b"cpuinfo", SysFile::Cpuinfo),
    (b"", b"stat", SysFile::Stat),
    (b"", b"version", SysFile::Version),
    (b"", b"filesystems", SysFile::Filesystems),
    (b"", b"loadavg", SysFile::Loadavg),
    (b"sys/kernel", b"pid_max", SysFile::PidMax),
    (b"sys/kernel", b"tainted", SysFile::Tainted),
    (b"sys/kernel", b"hostname", SysFile::Hostname),
    (b"sys/kernel", b"osrelease", SysFile::OsRelease),
    (b"sys/kernel", b"ostype", SysFile::OsType),
    (b"sys/kernel", b"version", SysFile::KernelVersion),
    (b"sys/kernel", b"ngroups_max", SysFile::NgroupsMax),
    (b"sys/fs", b"file-max", SysFile::FileMax),
    (b"sys/fs", b"nr_open", SysFile::NrOpen),
    (b"sys/fs", b"pipe-max-size", SysFile::PipeMaxSize),
    (
        b"sys/fs",
        b"pipe-user-pages-soft",
        SysFile::PipeUserPagesSoft,
    ),
    (
        b"sys/fs",
        b"pipe-user-pages-hard",
        SysFile::PipeUserPagesHard,
    ),
    (b"sys/fs/epoll", b"max_user_watches", SysFile::EpollWatches),
    (
        b"sys/fs/inotify",
        b"max_user_instances",
        SysFile::InotifyInstances,
    ),
    (
        b"sys/fs/inotify",
        b"max_user_watches",
        SysFile::InotifyWatches,
    ),
    (
        b"sys/fs/inotify",
        b"max_queued_events",
        SysFile::InotifyQueued,
    ),
    (b"sys/kernel", b"printk", SysFile::Printk),
    (b"sys/kernel", b"domainname", SysFile::Domainname),
    (b"sys/kernel", b"shmmax", SysFile::Shmmax),
    (b"sys/kernel", b"shmall", SysFile::Shmall),
    (b"sys/kernel", b"shmmni", SysFile::Shmmni),
    (b"sys/kernel", b"msgmax", SysFile::Msgmax),
    (b"sys/kernel", b"msgmnb", SysFile::Msgmnb),
    (b"sys/kernel", b"msgmni", SysFile::Msgmni),
    (b"sys/kernel", b"sem", SysFile::Sem),
    (b"sys/kernel", b"core_pattern", SysFile::CorePattern),
    (b"sys/kernel", b"dmesg_restrict", SysFile::DmesgRestrict),
    (
        b"sys/kernel/random",
        b"entropy_avail",
        SysFile::EntropyAvail,
    ),
    (b"sys/kernel/keys", b"maxkeys", SysFile::KeysMaxkeys),
    (b"sys/kernel/keys", b"maxbytes", SysFile::KeysMaxbytes),
    (
        b"sys/kernel/keys",
        b"root_maxkeys",
        SysFile::KeysRootMaxkeys,
    ),
    (
        b"sys/kernel/keys",
        b"root_maxbytes",
        SysFile::KeysRootMaxbytes,
    ),
    (b"", b"keys", SysFile::Keys),
    (b"", b"key-users", SysFile::KeyUsers),
    (b"sysvipc", b"shm", SysFile::SysvShm),
    (b"sysvipc", b"sem", SysFile::SysvSem),
    (b"sysvipc", b"msg", SysFile::SysvMsg),
];

/// Pids run from 2 to 32767 (`procs::fork`): Linux's default `pid_max`
/// (root may change it: `pid_max` of unixd).
pub(crate) const PID_MAX: u32 = 32768;
/// `pid_max`'s bounds on 64-bit Linux: `RESERVED_PIDS + 1` and
/// `PID_MAX_LIMIT` (4 Mi).
pub(crate) const PID_MAX_BOUNDS: core::ops::RangeInclusive<i128> = 301..=4 * 1024 * 1024;
/// Descriptors per process: the keeper's table, and the most
/// `RLIMIT_NOFILE` may be (`nr_open`).
const FDS: u64 = 256;

/// The state behind the system's files and the kernel log.
pub(crate) struct Sys {
    /// The kernel log (`klog`).
    pub(crate) klog: Klog<Vec<u8>>,
    /// Log lines below this level are printed on the console too
    /// (`SYSLOG_ACTION_CONSOLE_LEVEL`).
    pub(crate) console_level: u8,
    /// The level `CONSOLE_ON` gives back (0: none saved).
    pub(crate) saved_level: u8,
    /// The pid `/proc/self` names now, and its inode.
    self_pid: u32,
    self_link: u32,
    /// `fork`s since boot, and the last pid given.
    pub(crate) forks: u64,
    pub(crate) last_pid: u32,
    load: Load,
    /// Whether the key directory holds the processes' meter.
    meter: bool,
}

impl Sys {
    pub(crate) fn new() -> Sys {
        Sys {
            klog: crate::klog::new_log(),
            console_level: crate::klog::QUIET,
            saved_level: 0,
            self_pid: 0,
            self_link: 0,
            forks: 0,
            last_pid: 1,
            load: Load::new(),
            meter: false,
        }
    }
}

fn cpuid(leaf: u32, sub: u32) -> [u32; 4] {
    let r = core::arch::x86_64::__cpuid_count(leaf, sub);
    [r.eax, r.ebx, r.ecx, r.edx]
}

impl Unixd<'_> {
    /// Makes `/proc`'s system files, directories and links (first start).
    pub(crate) fn procgen_boot(&mut self, root: u32) {
        let now = self.time();
        for (dir, name, f) in FILES {
            let mut at = root;
            for part in dir.split(|&b| b == b'/').filter(|p| !p.is_empty()) {
                at = match self.fs.lookup(at, part) {
                    Some(i) => i,
                    None => match self.fs.create(at, part, mode::DIR | 0o555, now) {
                        Ok(i) => i,
                        Err(_) => break,
                    },
                };
            }
            if let Some(ino) = self.gen_file(at, name, Gen::System(f)) {
                if let Some(i) = self.fs.inode_mut(ino) {
                    let perm = if f.writable() { 0o644 } else { 0o444 };
                    i.mode = mode::REG | perm;
                }
            }
        }
        // `/proc/self` names the caller; `/proc/mounts` and `/etc/mtab`
        // are links to its `mounts`, as on Linux.
        if let Ok(l) = self.fs.symlink(root, b"self", b"1", now) {
            self.sys.self_link = l;
            self.sys.self_pid = 1;
        }
        let _ = self.fs.symlink(root, b"mounts", b"self/mounts", now);
        if let Some(etc) = self.fs.lookup(stet_unix::fs::ROOT, b"etc") {
            if self.fs.lookup(etc, b"mtab").is_none() {
                let _ = self.fs.symlink(etc, b"mtab", b"../proc/self/mounts", now);
            }
        }
    }

    /// Points `/proc/self` at the caller (before an order that names a
    /// path: a symbolic link through it, `/etc/mtab`, must find the
    /// caller's directory; the keeper names its own directory directly).
    pub(crate) fn point_self(&mut self) {
        let pid = self.caller;
        self.sys.self_pid = pid;
        let mut n = [0u8; 10];
        let target = name_of(pid, &mut n);
        if self.fs.set_link_target(self.sys.self_link, target).is_ok() {
            return;
        }
        // Removed (`/proc` is not read-only yet): made again.
        if let Some(root) = self.proc_root() {
            if self.fs.lookup(root, b"self").is_none() {
                let now = self.time();
                if let Ok(l) = self.fs.symlink(root, b"self", target, now) {
                    self.sys.self_link = l;
                }
            }
        }
    }

    /// Inode `ino` is freed: if it was generated (or `/proc/self`), it is
    /// not any more (a file made later in its place is a plain one).
    pub(crate) fn forget_generated(&mut self, ino: u32) {
        self.drop_gen(ino);
        if ino == self.sys.self_link {
            // Made again before the next path is looked up.
            self.sys.self_link = 0;
            self.sys.self_pid = 0;
        }
    }

    /// Whether `/proc/self` must be pointed at the caller first.
    pub(crate) fn self_moves(&self) -> bool {
        self.caller != 0 && self.caller != self.sys.self_pid
    }

    /// `R` (not waiting), `S` (a call parked, or a thread in a futex wait)
    /// or `Z`.
    pub(crate) fn state_of(&self, p: &Proc) -> u8 {
        if p.zombie {
            b'Z'
        } else if self
            .waiters
            .iter()
            .any(|w| w.on == Wait::Traced && w.pid == p.pid)
        {
            // Stopped for its tracer (`ptrace`).
            b't'
        } else if self
            .waiters
            .iter()
            .any(|w| w.on != Wait::Free && w.pid == p.pid)
            || (p.status_page
                && (0..self.procs.len())
                    .find(|&i| self.procs[i].pid == p.pid)
                    .is_some_and(|i| self.futex_sleepers(i) > 0))
        {
            // A call parked here, or a thread waiting on a private futex
            // in its keeper (its status page).
            b'S'
        } else {
            b'R'
        }
    }

    /// Processes running (not waiting in unixd), and all of them.
    fn run_queue(&self) -> (u64, u64) {
        let live = self.procs.iter().filter(|p| p.pid != 0);
        let running = live.clone().filter(|p| self.state_of(p) == b'R').count();
        (running as u64, live.count() as u64)
    }

    /// A process's user and group ids (real, effective, saved, file
    /// system) and its supplementary groups, from the process table
    /// (`creds`).
    pub(crate) fn creds_of(&self, pid: u32) -> ([u32; 4], [u32; 4], &[u32]) {
        match self.procs.iter().find(|p| p.pid == pid && pid != 0) {
            Some(p) => (p.cred.uid, p.cred.gid, p.cred.groups()),
            None => ([0; 4], [0; 4], &[]),
        }
    }

    /// The time the processor ran something since boot, as of `now` (the
    /// meter's ticks over all ticks) → (ns, [busy ticks, ticks]); no time
    /// at all before a keeper has given the meter.
    pub(crate) fn busy_ns(&mut self, now: u64) -> (u64, [u64; 2]) {
        let ticks = call(SLEEP, order::sleep::NOW, [0; 4]).w[1];
        let used = if self.sys.meter && self.keys.get(METER_KEY, T).is_ok() {
            let a = call(T, order::meter::QUERY, [0; 4]);
            if a.ok() {
                a.w[1].min(ticks)
            } else {
                0
            }
        } else {
            0
        };
        let busy = if ticks == 0 {
            0
        } else {
            (now as u128 * used as u128 / ticks as u128) as u64
        };
        (busy.min(now), [used, ticks])
    }

    /// The load averages, brought up to now.
    pub(crate) fn loads(&mut self) -> [u64; 3] {
        let now = crate::now_ns();
        let (_, [used, ticks]) = self.busy_ns(now);
        self.sys.load.update(now, used, ticks);
        self.sys.load.avgs
    }

    /// `METER`: the meter processes run under (in `K0`).
    pub(crate) fn meter_order(&mut self) -> Result<Reply, i64> {
        if call(K0, order::meter::QUERY, [0; 4]).ok() {
            self.put_key(METER_KEY, K0).map_err(|_| EIO)?;
            self.sys.meter = true;
        }
        word(Ok(0))
    }

    /// Whether unixd wants the meter (`HELLO`'s answer).
    pub(crate) fn wants_meter(&self) -> bool {
        !self.sys.meter
    }

    /// `/proc/<pid>/status`.
    pub(crate) fn status_text(&self, t: &mut Text, pid: u32) {
        let Some(p) = self.procs.iter().find(|p| p.pid == pid && pid != 0) else {
            return;
        };
        let end = p.comm.iter().position(|&b| b == 0).unwrap_or(16);
        let (uids, gids, groups) = self.creds_of(pid);
        pg::status(
            t,
            &pg::Status {
                name: &p.comm[..end],
                state: self.state_of(p),
                pid,
                ppid: p.ppid,
                pgid: p.pgid,
                sid: p.sid,
                uids,
                gids,
                groups,
                fdsize: FDS as u32,
                pending: p.pending,
                threads: self.thread_count(pid) as u32,
                vm: p.vm,
                tracer: p.tracer,
            },
        );
    }

    /// One of the system's files.
    pub(crate) fn system_text(&mut self, t: &mut Text, f: SysFile) {
        let _ = match f {
            SysFile::Cpuinfo => {
                cpuinfo(t, &Cpu::read(cpuid), 1);
                Ok(())
            }
            SysFile::Stat => {
                let now = crate::now_ns();
                let (busy, _) = self.busy_ns(now);
                let (running, _) = self.run_queue();
                let jiffy = 1_000_000_000 / USER_HZ;
                pg::kstat(
                    t,
                    &pg::KStat {
                        cpus: 1,
                        busy: busy / jiffy,
                        idle: (now - busy) / jiffy,
                        btime: self.boot_wall() / 1_000_000_000,
                        processes: self.sys.forks,
                        running,
                        blocked: 0,
                    },
                );
                Ok(())
            }
            SysFile::Version => {
                pg::version(t);
                Ok(())
            }
            SysFile::Filesystems => {
                pg::filesystems(t);
                Ok(())
            }
            SysFile::Mounts => {
                pg::mounts(t);
                Ok(())
            }
            SysFile::Loadavg => {
                let avgs = self.loads();
                let (running, total) = self.run_queue();
                pg::loadavg(t, avgs, running, total, self.sys.last_pid);
                Ok(())
            }
            SysFile::PidMax => writeln!(t, "{}", self.pid_max),
            SysFile::Tainted => writeln!(t, "0"),
            SysFile::Hostname => {
                let _ = t.write_str(core::str::from_utf8(self.misc.hostname()).unwrap_or("?"));
                t.write_str("\n")
            }
            SysFile::OsRelease => writeln!(t, "{}", UNAME[2]),
            SysFile::OsType => writeln!(t, "{}", UNAME[0]),
            SysFile::KernelVersion => writeln!(t, "{}", UNAME[3]),
            // `stet_unix::cred::NGROUPS`.
            SysFile::NgroupsMax => writeln!(t, "{}", stet_unix::cred::NGROUPS),
            // Open files are bounded by the processes' descriptors.
            SysFile::FileMax => writeln!(t, "{}", MAX_PROCS as u64 * FDS),
            SysFile::NrOpen => writeln!(t, "{FDS}"),
            // The most `F_SETPIPE_SZ` gives a process without privilege.
            SysFile::PipeMaxSize => writeln!(t, "{}", stet_unixfs::pipe::MAX_SIZE),
            SysFile::PipeUserPagesSoft => writeln!(t, "{}", stet_unixfs::pipe::USER_PAGES_SOFT),
            SysFile::PipeUserPagesHard => writeln!(t, "{}", stet_unixfs::pipe::USER_PAGES_HARD),
            // Console level 4 (unixd's log prints below it), Linux's defaults.
            SysFile::Printk => writeln!(t, "4\t4\t1\t7"),
            SysFile::Shmmax => writeln!(t, "{}", self.ipc.shm_limits.max),
            SysFile::Shmall => writeln!(t, "{}", self.ipc.shm_limits.all),
            SysFile::Shmmni => writeln!(t, "{}", self.ipc.shm_limits.mni),
            SysFile::KeysMaxkeys => writeln!(t, "{}", self.keyring.limits.maxkeys),
            SysFile::KeysMaxbytes => writeln!(t, "{}", self.keyring.limits.maxbytes),
            SysFile::KeysRootMaxkeys => writeln!(t, "{}", self.keyring.limits.root_maxkeys),
            SysFile::KeysRootMaxbytes => writeln!(t, "{}", self.keyring.limits.root_maxbytes),
            SysFile::Msgmax => writeln!(t, "{}", lim::MSGMAX),
            SysFile::Msgmnb => writeln!(t, "{}", lim::MSGMNB),
            SysFile::Msgmni => writeln!(t, "{}", lim::MSGMNI),
            SysFile::Sem => writeln!(
                t,
                "{}\t{}\t{}\t{}",
                lim::SEMMSL,
                lim::SEMMNS,
                lim::SEMOPM,
                lim::SEMMNI
            ),
            // Longer than `Text`'s page: `sysvipc_text`.
            SysFile::SysvShm | SysFile::SysvSem | SysFile::SysvMsg => Ok(()),
            // Longer than `Text`'s page too: `keys_text`.
            SysFile::Keys | SysFile::KeyUsers => Ok(()),
            SysFile::CorePattern => {
                let _ =
                    t.write_str(core::str::from_utf8(self.misc.core_pattern()).unwrap_or("core"));
                t.write_str("\n")
            }
            SysFile::DmesgRestrict => writeln!(t, "{}", self.misc.dmesg_restrict as u8),
            // Linux 6.1's pool, always full once seeded.
            SysFile::EntropyAvail => writeln!(t, "{}", crate::sysmisc::ENTROPY),
            SysFile::Domainname => {
                let _ = t.write_str(core::str::from_utf8(self.misc.domainname()).unwrap_or("?"));
                t.write_str("\n")
            }
            SysFile::EpollWatches => writeln!(t, "{}", self.max_user_watches),
            SysFile::InotifyInstances => writeln!(t, "{}", self.inotify_limits.instances),
            SysFile::InotifyWatches => writeln!(t, "{}", self.inotify_limits.watches),
            SysFile::InotifyQueued => writeln!(t, "{}", self.inotify_limits.queued),
        };
    }
}

impl Unixd<'_> {
    /// `/proc/sysvipc/shm`, `sem` or `msg`: a header and a line per object,
    /// in Linux's format (`ipc/shm.c`'s, `sem.c`'s and `msg.c`'s
    /// `sysvipc_*_proc_show`).
    pub(crate) fn sysvipc_text(&self, f: SysFile) -> alloc::string::String {
        let mut t = alloc::string::String::new();
        let ipc = &self.ipc;
        let _ = match f {
            SysFile::SysvShm => {
                let _ = t.write_str(
                    "       key      shmid perms                  size  cpid  lpid nattch   uid   gid  cuid  cgid      atime      dtime      ctime                   rss                  swap\n",
                );
                for (id, e) in ipc.shm.iter() {
                    let (p, o) = (&e.perm, &e.obj);
                    let nattch = Self::nattch(&self.open, o.ino);
                    let _ = writeln!(
                        t,
                        "{:10} {:10}  {:4o} {:21} {:5} {:5}  {:5} {:5} {:5} {:5} {:5} {:10} {:10} {:10} {:21} {:21}",
                        p.key, id, p.mode & 0o7777, o.segsz, o.cpid, o.lpid, nattch, p.uid, p.gid,
                        p.cuid, p.cgid, o.atime, o.dtime, o.ctime, 0, 0
                    );
                }
                Ok(())
            }
            SysFile::SysvSem => {
                let _ = t.write_str(
                    "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n",
                );
                for (id, e) in ipc.sem.iter() {
                    let (p, o) = (&e.perm, &e.obj);
                    let _ = writeln!(
                        t,
                        "{:10} {:10}  {:4o} {:10} {:5} {:5} {:5} {:5} {:10} {:10}",
                        p.key,
                        id,
                        p.mode & 0o7777,
                        o.vals.len(),
                        p.uid,
                        p.gid,
                        p.cuid,
                        p.cgid,
                        o.otime,
                        o.ctime
                    );
                }
                Ok(())
            }
            SysFile::SysvMsg => {
                let _ = t.write_str(
                    "       key      msqid perms      cbytes       qnum lspid lrpid   uid   gid  cuid  cgid      stime      rtime      ctime\n",
                );
                for (id, e) in ipc.msg.iter() {
                    let (p, o) = (&e.perm, &e.obj);
                    let _ = writeln!(
                        t,
                        "{:10} {:10}  {:4o}  {:10} {:10} {:5} {:5} {:5} {:5} {:5} {:5} {:10} {:10} {:10}",
                        p.key, id, p.mode & 0o7777, o.cbytes, o.msgs.len(), o.lspid, o.lrpid, p.uid,
                        p.gid, p.cuid, p.cgid, o.stime, o.rtime, o.ctime
                    );
                }
                Ok(())
            }
            _ => Err(core::fmt::Error),
        };
        t
    }
}
