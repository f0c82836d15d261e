//! The process table: pids, parents, groups and sessions, `fork` (a
//! forwarder per child, naming this domain and the pid), `exit` and
//! zombies, `wait4` and reaping (a forked keeper may wait as a spare for
//! its parent's next fork), and the system's state for `sysinfo` and the
//! native shell.

use crate::keys::{self, MAX_PROCS};
use crate::signals::SIGCHLD;
use crate::slots::{BANK, K0, SELF, T, T2};
use crate::wait::Wait;
use crate::{word, Reply, Unixd};
use stet_rt::abi::order::node;
use stet_rt::bank;
use stet_rt::key::{Answer, Msg};
use stet_unix::cred::Cred;
use stet_unix::proto as p;
use stet_unix::sys::errno::*;
use stet_unix_personality::keydir::{fetch, swap};

/// A process table entry (`pid` 0: free).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Proc {
    pub(crate) pid: u32,
    /// Its memory as its keeper last said (`VM_STATS`): bytes mapped,
    /// bytes locked, pages resident, most pages resident, most bytes
    /// mapped (all 0: never said).
    pub(crate) vm: [u64; 5],
    pub(crate) ppid: u32,
    pub(crate) pgid: u32,
    pub(crate) sid: u32,
    /// Ended, its status kept for its parent.
    pub(crate) zombie: bool,
    pub(crate) status: u32,
    /// Signals sent and not yet handed to its keeper.
    pub(crate) pending: u64,
    /// Its interval timers `ITIMER_REAL` (`alarm`), `ITIMER_VIRTUAL`,
    /// `ITIMER_PROF`: when each next rings (ns since boot; 0: none) and
    /// its interval (ns; 0: once). The CPU-time ones are timed as wall
    /// time (every process runs under one meter).
    pub(crate) itimer: [[u64; 2]; 3],
    /// Whether its keeper said where it is (`HELLO`).
    pub(crate) keeper: bool,
    /// Whether unixd made its keeper's forwarder (a forked process): the
    /// node is freed when the process is reaped (`release_forwarder`).
    pub(crate) fwd: bool,
    /// Whether unixd made a plain node for a process it did not fork, kept
    /// as its forwarder's is, to hold its space (`proto::FWD_SPACE`);
    /// freed when the process is reaped.
    pub(crate) side: bool,
    /// `PR_SET_DUMPABLE` 0 (or a program run with changed ids), as its
    /// keeper said (`proto::PROC_SPACE`): only `CAP_SYS_PTRACE` reaches
    /// its memory.
    pub(crate) undumpable: bool,
    /// Whether its keeper sent its status page (`proto::STATUS_PAGE`),
    /// kept in its forwarder's node: its threads' futex waits.
    pub(crate) status_page: bool,
    /// Whether its keeper waits as a spare (`proto::EXIT`): its `KEYS`
    /// node is in slot [`FWD_SPARE`] of the forwarder's node, for the
    /// parent's `WAIT4`.
    pub(crate) spare: bool,
    /// And its process too, kept by the spare (`EXIT`'s `w1`: bit 0
    /// kept, bit 1 put aside at `execve`): `WAIT4` passes it on (`w2`
    /// bits 1 and 2).
    pub(crate) kept: u8,
    /// Its `/proc/<pid>/` is not made yet: it would be a copy of its
    /// parent's (`proc_flush` makes it before anything looks).
    pub(crate) proc_pending: bool,
    /// Its threads changed since `/proc/<pid>/task/` was last brought up
    /// to date (`proc_flush` does it before anything looks).
    pub(crate) tasks_stale: bool,
    /// Its program's name (`/proc/<pid>/stat`), NUL-padded.
    pub(crate) comm: [u8; 16],
    /// File pages it made and has not freed (`limits`).
    pub(crate) file_pages: u64,
    /// Its users and groups (`creds`).
    pub(crate) cred: Cred,
    /// Its threads that may go on (`proto::READY`), by keeper slot, not
    /// yet told to its keeper.
    pub(crate) ready: u64,
    /// Its nice value (`prio`).
    pub(crate) nice: i8,
    /// Its root directory's inode (`chroot`).
    pub(crate) root: u32,
    /// The signal it gets when its parent ends (`PR_SET_PDEATHSIG`; 0:
    /// none). Not inherited by a child.
    pub(crate) pdeathsig: u8,
    /// Its descendants' orphans come to it rather than to pid 1
    /// (`PR_SET_CHILD_SUBREAPER`). Not inherited by a child.
    pub(crate) subreaper: bool,
    /// The process whose `fork` made it (its parent, but for
    /// `CLONE_PARENT`): the one that may take it back (`UNFORK`).
    pub(crate) maker: u32,
    /// Its I/O priority (`sysmisc`: `ioprio_set`; class << 13 | level).
    pub(crate) ioprio: u16,
    /// Its scheduling policy and parameters (`prio`, `proto::SCHED`).
    pub(crate) sched: stet_unix::sched::Sched,
    /// It has run `execve` since its `fork` (`setpgid` by its parent is
    /// then `EACCES`).
    pub(crate) execed: bool,
    /// Stopped by a signal (job control, `JOBCTL`), until `SIGCONT`.
    pub(crate) stopped: bool,
    /// A stop (its signal) or a continue not yet reported to the parent
    /// (`wait4` `WUNTRACED`, `waitid` `WSTOPPED`/`WCONTINUED`).
    pub(crate) stop_report: u8,
    pub(crate) cont_report: bool,
    /// Its threads (by keeper slot) whose shared-futex wait a wake ended,
    /// not yet run again (`futex_wait`).
    pub(crate) futex_woken: u64,
    /// The process tracing it (`ptrace`; 0: none).
    pub(crate) tracer: u32,
}

pub(crate) const NO_PROC: Proc = Proc {
    pid: 0,
    vm: [0; 5],
    ppid: 0,
    pgid: 0,
    sid: 0,
    zombie: false,
    status: 0,
    pending: 0,
    itimer: [[0; 2]; 3],
    keeper: false,
    status_page: false,
    fwd: false,
    side: false,
    undumpable: false,
    spare: false,
    kept: 0,
    proc_pending: false,
    tasks_stale: false,
    comm: [0; 16],
    file_pages: 0,
    cred: Cred::ROOT,
    ready: 0,
    nice: 0,
    root: stet_unix::fs::ROOT,
    pdeathsig: 0,
    subreaper: false,
    maker: 0,
    ioprio: 0,
    execed: false,
    stopped: false,
    stop_report: 0,
    cont_report: false,
    futex_woken: 0,
    tracer: 0,
    sched: stet_unix::sched::Sched {
        policy: 0,
        prio: 0,
        reset_on_fork: false,
        dl: [0; 3],
    },
};

/// The slot of a forked process's forwarder node (slots 2–15 are free)
/// holding its keeper's `KEYS` node while the keeper waits as a spare.
pub(crate) const FWD_SPARE: u64 = 2;

impl Unixd<'_> {
    /// The table entry of `pid`; a process the image started (not forked)
    /// is entered on its first call, as a child of nobody.
    pub(crate) fn proc_of(&mut self, pid: u32) -> Result<usize, i64> {
        if pid == 0 {
            return Err(EPERM);
        }
        if let Some(i) = self.procs.iter().position(|p| p.pid == pid) {
            return Ok(i);
        }
        let i = self.new_proc()?;
        self.procs[i] = Proc {
            pid,
            pgid: pid,
            sid: pid,
            ..NO_PROC
        };
        self.next_pid = self.next_pid.max(pid + 1);
        Ok(i)
    }

    /// A free process-table entry (its `pid` still 0): `EAGAIN` when the
    /// table is at `MAX_PROCS` or the heap has no room.
    fn new_proc(&mut self) -> Result<usize, i64> {
        crate::table::take(&mut self.procs, |p| p.pid == 0, NO_PROC)
            .filter(|&i| i < MAX_PROCS)
            .ok_or(EAGAIN)
    }

    /// `HELLO`: the caller's keeper's start key (in `K0`).
    fn hello(&mut self, pid: u32, entry: u64) -> Result<u64, i64> {
        let i = self.proc_of(pid)?;
        if entry != 0 {
            self.keeper_entry = entry;
        }
        self.put_key(keys::keeper(i), K0).map_err(|_| EIO)?;
        self.procs[i].keeper = true;
        Ok(self.wants_meter() as u64)
    }

    /// `FORK`: a new pid, the fids' references, a forwarder into `T`.
    fn fork(&mut self, caller: u32, nproc: u64, fids: &[u8], flags: u64) -> Result<Reply, i64> {
        let pi = self.proc_of(caller)?;
        // `CLONE_PARENT`: the caller's parent is the child's (not for pid
        // 1, as Linux's init may not).
        let parent = if flags & p::FORK_PARENT != 0 {
            if caller == 1 {
                return Err(EINVAL);
            }
            self.procs[pi].ppid
        } else {
            caller
        };
        // `RLIMIT_NPROC` (0: none, from an older keeper): every process
        // counts, zombies too, as Linux counts a user's until reaped.
        // Per user as on Linux (the processes of the caller's real user),
        // and for root every process, so that a fork bomb always stops.
        let ruid = self.procs[pi].cred.uid[0];
        let counted = self
            .procs
            .iter()
            .filter(|p| p.pid != 0 && (ruid == 0 || p.cred.uid[0] == ruid))
            .count() as u64;
        if nproc != 0 && counted >= nproc {
            return Err(EAGAIN);
        }
        let (pgid, sid) = (self.procs[pi].pgid, self.procs[pi].sid);
        let slot = self.new_proc()?;
        let pid = self.free_id()?;
        for c in fids.chunks_exact(4) {
            let f = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64;
            self.fid(f)?;
        }
        // The child's forwarder (into `T`): a node of the UNIX bank naming
        // this domain and the pid, its node key kept by table index until
        // the child is reaped.
        bank::alloc_node(BANK, T2).map_err(|_| EAGAIN)?;
        let made = |a: Answer| if a.ok() { Ok(()) } else { Err(a.code) };
        let fwd = swap(T2, 0, SELF, 0)
            .and_then(|_| {
                made(
                    Msg::new(T2, node::WRITE_NUMBER)
                        .words([1, pid as u64, 0, 0])
                        .call(),
                )
            })
            .and_then(|_| self.put_key(keys::forwarder(slot), T2))
            .and_then(|_| made(Msg::new(T2, node::MAKE_FORWARDER).recv([T, 0, 0, 0]).call()));
        if fwd.is_err() {
            let _ = bank::free(BANK, T2);
            return Err(EAGAIN);
        }
        for c in fids.chunks_exact(4) {
            let f = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize;
            self.open[f].refs += 1;
            self.pipe_ref(self.open[f].kind);
        }
        // Its /proc directory is made when someone could see it (most
        // forked children are gone before anyone does): its name now.
        let (sched, reset_nice) = self.procs[pi].sched.at_fork();
        self.procs[slot] = Proc {
            pid,
            ppid: parent,
            maker: caller,
            pgid,
            sid,
            fwd: true,
            comm: self.procs[pi].comm,
            cred: self.procs[pi].cred,
            root: self.procs[pi].root,
            ioprio: self.procs[pi].ioprio,
            nice: if reset_nice {
                self.procs[pi].nice.max(0)
            } else {
                self.procs[pi].nice
            },
            sched,
            proc_pending: true,
            ..NO_PROC
        };
        self.proc_pending = true;
        // Its session keyring is its parent's (nothing else is kept).
        let _ = self.keyring.fork(caller, pid);
        self.next_pid = self.after(pid);
        self.sys.forks += 1;
        self.sys.last_pid = pid;
        Ok(Reply::Now([pid as u64, 0, 0], 0, true))
    }

    /// `UNFORK`: the caller's `fork` of `child` failed after `FORK`; the
    /// child goes as if it never was (Linux's failed `fork` leaves no
    /// child to reap). Its references to open files went back with the
    /// keeper's `CLOSE`s.
    fn unfork(&mut self, maker: u32, child: u64) -> Result<u64, i64> {
        let i = (0..self.procs.len())
            .find(|&i| {
                let p = &self.procs[i];
                p.pid != 0 && p.pid as u64 == child && p.maker == maker && !p.keeper && !p.zombie
            })
            .ok_or(ESRCH)?;
        for w in 0..self.waiters.len() {
            if self.waiters[w].on != Wait::Free && self.waiters[w].pid == self.procs[i].pid {
                self.wake(w);
            }
        }
        self.reap(i, false);
        Ok(0)
    }

    /// A child's stop or continue is news for its parent: `SIGCHLD` and
    /// its waits wake.
    pub(crate) fn tell_parent(&mut self, i: usize) {
        let ppid = self.procs[i].ppid;
        for w in 0..self.waiters.len() {
            if self.waiters[w].on == Wait::Child(ppid) {
                self.wake(w);
            }
        }
        if let Some(pp) = (0..self.procs.len()).find(|&x| self.procs[x].pid == ppid && ppid != 0) {
            self.signal(pp, SIGCHLD);
        }
    }

    /// `JOBCTL`: the caller's keeper stopped it for signal `sig` (the
    /// keeper then waits for `SIGCONT` or `SIGKILL`).
    fn job_stop(&mut self, pid: u32, sig: u64) -> Result<u64, i64> {
        let i = self.proc_of(pid)?;
        if sig == 0 || sig > 64 {
            return Err(EINVAL);
        }
        self.procs[i].stopped = true;
        self.procs[i].stop_report = sig as u8;
        self.procs[i].cont_report = false;
        self.tell_parent(i);
        Ok(0)
    }

    /// `EXIT`: the caller becomes a zombie; its parent's waits wake.
    fn exit(&mut self, pid: u32, status: u32) -> Result<u64, i64> {
        let i = self.proc_of(pid)?;
        let ppid = self.procs[i].ppid;
        self.procs[i].zombie = true;
        self.procs[i].status = status;
        self.locks_exit(pid);
        self.keyring.exit(pid);
        self.vfork_done(pid);
        self.trace_exit(pid);
        if status & 0x7f != 0 {
            let p = self.procs[i];
            let end = p.comm.iter().position(|&b| b == 0).unwrap_or(16);
            let comm = core::str::from_utf8(&p.comm[..end]).unwrap_or("?");
            self.klog(
                crate::klog::INFO,
                false,
                format_args!("pid {pid} ({comm}) ended by signal {}", status & 0x7f),
            );
        }
        // A child's /proc directory still to be copied from this one's is
        // made before the child changes parents.
        if self.proc_pending {
            self.flush_children_of(pid);
        }
        // Orphans go to the nearest living subreaper among its ancestors
        // (`PR_SET_CHILD_SUBREAPER`), else to pid 1; zombies among them
        // wait for it too. A child that asked (`PR_SET_PDEATHSIG`) gets
        // its signal.
        let reaper = self.reaper_for(pid);
        let mut zombies = false;
        for c in 0..self.procs.len() {
            let p = self.procs[c];
            if p.pid == 0 || p.ppid != pid {
                continue;
            }
            self.procs[c].ppid = reaper;
            zombies |= p.zombie;
            if p.pdeathsig != 0 && !p.zombie {
                self.signal(c, p.pdeathsig as u64);
            }
        }
        if reaper != 1 {
            for w in 0..self.waiters.len() {
                if self.waiters[w].on == Wait::Child(reaper) {
                    self.wake(w);
                }
            }
            if zombies {
                if let Some(r) = (0..self.procs.len()).find(|&x| self.procs[x].pid == reaper) {
                    self.signal(r, SIGCHLD);
                }
            }
        }
        // A process whose parent is gone (or never existed) is reaped now.
        let parent_alive = ppid != 0 && self.procs.iter().any(|p| p.pid == ppid && !p.zombie);
        if !parent_alive {
            self.reap(i, false);
        }
        for w in 0..self.waiters.len() {
            if self.waiters[w].on == Wait::Child(ppid) || self.waiters[w].on == Wait::Child(1) {
                self.wake(w);
            }
        }
        // Its parked calls (there are none: it called) and its alarm go.
        self.procs[i].itimer = [[0; 2]; 3];
        self.procs[i].pending = 0;
        if parent_alive {
            if let Some(pp) = (0..self.procs.len()).find(|&x| self.procs[x].pid == ppid) {
                self.signal(pp, SIGCHLD);
            }
        }
        Ok(0)
    }

    /// Where `pid`'s orphans go: its nearest living ancestor that is a
    /// subreaper, else pid 1 (Linux's `find_new_reaper`).
    fn reaper_for(&self, pid: u32) -> u32 {
        let mut at = pid;
        // Each step goes to a parent; a table's worth of steps ends any
        // cycle a bug could make.
        for _ in 0..self.procs.len() {
            let Some(p) = self.procs.iter().find(|p| p.pid == at && p.pid != 0) else {
                break;
            };
            at = p.ppid;
            if at <= 1 {
                break;
            }
            if let Some(a) = self.procs.iter().find(|q| q.pid == at) {
                if a.subreaper && !a.zombie {
                    return at;
                }
            }
        }
        1
    }

    /// `EXIT` from forked process `pid`'s keeper with its `KEYS` node in
    /// `K0`: the call's resume key goes into that node's `SPARE` slot and
    /// the node into the forwarder's node → whether it did (the call is
    /// then not answered).
    fn keep_spare(&mut self, pid: u32, with_process: u64) -> bool {
        let Ok(i) = self.proc_of(pid) else {
            return false;
        };
        let kept = self.procs[i].fwd
            && swap(K0, p::SPARE, self.resume, 0).is_ok()
            && self.keys.get(keys::forwarder(i), T).is_ok()
            && swap(T, FWD_SPARE, K0, 0).is_ok();
        self.procs[i].spare = kept;
        self.procs[i].kept = if kept { with_process as u8 & 3 } else { 0 };
        kept
    }

    /// Process `i` is gone for good: its entry, its /proc files, and the
    /// node of its keeper's forwarder (which voids every copy of that key,
    /// so a later process given the pid cannot be named by it). Its spare
    /// keeper goes to the caller (`KEYS` node into `T` → true) when
    /// `to_caller`, else its bank is destroyed (only a bank of this space
    /// bank: any other key could be a domain that never answers).
    fn reap(&mut self, i: usize, to_caller: bool) -> bool {
        let p = self.procs[i];
        if self.proc_pending {
            self.flush_children_of(p.pid);
        }
        let made = !self.procs[i].proc_pending;
        self.procs[i] = NO_PROC;
        self.free_tids(p.pid);
        // (A child whose fork failed never sent `EXIT`.)
        self.keyring.exit(p.pid);
        self.ptimers_gone(p.pid);
        self.proc_gone(p.pid, made);
        if p.side && self.keys.get(keys::forwarder(i), T2).is_ok() {
            let _ = bank::free(BANK, T2);
        }
        if !p.fwd || self.keys.get(keys::forwarder(i), T2).is_err() {
            return false;
        }
        let spare = p.spare && fetch(T2, FWD_SPARE, T).is_ok();
        let _ = bank::free(BANK, T2);
        if spare && to_caller {
            return true;
        }
        if spare && fetch(T, p::KEEPER_BANK, T).is_ok() && bank::verify(BANK, T) == Ok(true) {
            let _ = bank::destroy(T);
        }
        false
    }

    /// `WAIT4` for the caller `pid`.
    fn wait4(&mut self, pid: u32, which: i64, options: u64) -> Result<Reply, i64> {
        const WNOHANG: u64 = 1;
        // `waitid`'s WNOWAIT: the child stays a zombie.
        const WNOWAIT: u64 = 2;
        // Report stops (`WUNTRACED`), continues (`WCONTINUED`); not ends
        // (`waitid` without `WEXITED`).
        const STOPS: u64 = 4;
        const CONTINUES: u64 = 8;
        const NOT_ENDS: u64 = 16;
        let me = self.proc_of(pid)?;
        let my_pgid = self.procs[me].pgid;
        let matches = |p: &Proc| {
            p.pid != 0
                && p.ppid == pid
                && match which {
                    -1 => true,
                    0 => p.pgid == my_pgid,
                    w if w < -1 => p.pgid as i64 == -w,
                    w => p.pid as i64 == w,
                }
        };
        // A tracee's stops go to its tracer, reported without `WUNTRACED`.
        let which_one = |p: &Proc| match which {
            -1 => true,
            0 => p.pgid == my_pgid,
            w if w < -1 => p.pgid as i64 == -w,
            w => p.pid as i64 == w,
        };
        if let Some((tpid, st)) = self.trace_report(pid, which_one, options & WNOWAIT != 0) {
            return Ok(Reply::Now([tpid as u64, st, 0], 0, false));
        }
        let mut any = self.traces_any(pid, which_one);
        for i in 0..self.procs.len() {
            let p = self.procs[i];
            if !matches(&p) {
                continue;
            }
            any = true;
            if !p.zombie && options & STOPS != 0 && p.stop_report != 0 {
                if options & WNOWAIT == 0 {
                    self.procs[i].stop_report = 0;
                }
                let st = 0x7f | (p.stop_report as u64) << 8;
                return Ok(Reply::Now([p.pid as u64, st, 0], 0, false));
            }
            if !p.zombie && options & CONTINUES != 0 && p.cont_report {
                if options & WNOWAIT == 0 {
                    self.procs[i].cont_report = false;
                }
                return Ok(Reply::Now([p.pid as u64, 0xffff, 0], 0, false));
            }
            if options & NOT_ENDS != 0 {
                continue;
            }
            if p.zombie && options & WNOWAIT != 0 {
                return Ok(Reply::Now([p.pid as u64, p.status as u64, 0], 0, false));
            }
            if p.zombie {
                let spare = self.reap(i, true);
                let kept = if spare { p.kept as u64 } else { 0 };
                return Ok(Reply::Now(
                    [p.pid as u64, p.status as u64, spare as u64 | kept << 1],
                    0,
                    spare,
                ));
            }
        }
        if !any {
            return Err(ECHILD);
        }
        if options & WNOHANG != 0 {
            return Ok(Reply::Now([0, 0, 0], 0, false));
        }
        self.park(Wait::Child(pid))
    }

    /// The orders on processes: `fork`, `exit`, `wait4`, ids and groups, and the system's state (`STATUS`, `SYSINFO`, `ENOSYS` tallies, `/proc` at `execve`).
    pub(crate) fn process_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let w = a.w;
        match a.code {
            p::FORK => {
                let r = self.fork(a.label, w[0], s, w[1]);
                if w[1] & p::FORK_VFORK != 0 {
                    if let Ok(Reply::Now(v, ..)) = &r {
                        self.vfork_begin(v[0], a.label);
                    }
                }
                r
            }
            p::UNFORK => {
                let r = self.unfork(a.label, w[0]);
                if r.is_ok() {
                    self.vfork_done(w[0] as u32);
                }
                word(r)
            }
            p::EXIT => {
                // A forked keeper sends its `KEYS` node and waits as a
                // spare for its parent's next fork (its process's memory
                // is back, or kept whole under the keeper's bank: `w1`);
                // `exit` destroys it at once if nobody will wait.
                self.sysv_exit(a.label);
                let kept = self.keep_spare(a.label, w[1]);
                let done = self.exit(a.label, w[0] as u32);
                if kept {
                    return Ok(Reply::Kept);
                }
                word(done)
            }
            p::WAIT4 => self.wait4(a.label, w[0] as i64, w[1]),
            p::JOBCTL => word(self.job_stop(a.label, w[0])),
            p::GETPPID => {
                let i = self.proc_of(a.label)?;
                word(Ok(self.procs[i].ppid as u64))
            }
            p::HELLO => word(self.hello(a.label, w[0])),
            p::SETPGID => {
                let me = self.proc_of(a.label)?;
                // Linux's order: a negative group first (EINVAL), then the
                // process (ESRCH: not the caller or its child), a child in
                // another session or the session's leader (EPERM), a
                // child that has run `execve` (EACCES), the group (EPERM).
                if (w[1] as i64) < 0 || (w[0] as i64) < 0 {
                    return Err(if (w[1] as i64) < 0 { EINVAL } else { ESRCH });
                }
                let target = if w[0] == 0 { a.label } else { w[0] as u32 };
                let t = (0..self.procs.len())
                    .find(|&i| self.procs[i].pid == target && !self.procs[i].zombie)
                    .ok_or(ESRCH)?;
                if target != a.label && self.procs[t].ppid != a.label {
                    return Err(ESRCH);
                }
                if self.procs[t].sid != self.procs[me].sid || self.procs[t].sid == target {
                    return Err(EPERM);
                }
                if target != a.label && self.procs[t].execed {
                    return Err(EACCES);
                }
                let pgid = if w[1] == 0 { target } else { w[1] as u32 };
                // Another group must exist, in the same session (Linux).
                let sid = self.procs[me].sid;
                if pgid != target
                    && !self
                        .procs
                        .iter()
                        .any(|p| p.pid != 0 && !p.zombie && p.pgid == pgid && p.sid == sid)
                {
                    return Err(EPERM);
                }
                self.procs[t].pgid = pgid;
                word(Ok(0))
            }
            p::GETPGID => {
                let target = if w[0] == 0 { a.label } else { w[0] as u32 };
                if target == a.label {
                    self.proc_of(a.label)?;
                }
                let t = (0..self.procs.len())
                    .find(|&i| self.procs[i].pid == target)
                    .ok_or(ESRCH)?;
                word(Ok(if w[1] == 1 {
                    self.procs[t].sid
                } else {
                    self.procs[t].pgid
                } as u64))
            }
            p::SETSID => {
                let me = self.proc_of(a.label)?;
                let pid = a.label;
                if self
                    .procs
                    .iter()
                    .any(|p| p.pid != 0 && p.pgid == pid && p.pid != pid)
                {
                    return Err(EPERM);
                }
                self.procs[me].sid = pid;
                self.procs[me].pgid = pid;
                word(Ok(pid as u64))
            }
            p::PROCINFO => {
                let z = s.iter().position(|&b| b == 0).ok_or(EINVAL)?;
                self.proc_of(a.label)?;
                self.proc_exec(a.label, w[0], &s[..z], &s[z + 1..]);
                let i = self.proc_of(a.label)?;
                self.procs[i].execed = true;
                self.keyring.exec(a.label);
                self.vfork_done(a.label);
                word(Ok(0))
            }
            p::ENOSYS => {
                for c in s.chunks_exact(6) {
                    let n = u16::from_le_bytes([c[0], c[1]]) as usize;
                    let v = u32::from_le_bytes([c[2], c[3], c[4], c[5]]);
                    let i = n.min(self.enosys.len() - 1);
                    self.enosys[i] = self.enosys[i].saturating_add(v);
                }
                word(Ok(0))
            }
            p::STATUS => {
                let (procs, total, free) = self.sysinfo();
                let mut n = 0;
                for (nr, &v) in self.enosys.iter().enumerate().filter(|(_, &v)| v > 0) {
                    out[n..n + 2].copy_from_slice(&(nr as u16).to_le_bytes());
                    out[n + 2..n + 6].copy_from_slice(&v.to_le_bytes());
                    n += 6;
                    if n + 6 > out.len() {
                        break;
                    }
                }
                Ok(Reply::Now([procs, total, free], n, false))
            }
            p::SYSINFO => {
                let (procs, total, free) = self.sysinfo();
                for (i, l) in self.loads().into_iter().enumerate() {
                    out[8 * i..8 * i + 8].copy_from_slice(&l.to_le_bytes());
                }
                Ok(Reply::Now([procs, total, free], 24, false))
            }
            _ => Err(ENOSYS),
        }
    }
}
