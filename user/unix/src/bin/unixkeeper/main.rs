//! The UNIX keeper: one per UNIX process (KeyKOS §9, KeyNIX). The process is
//! a foreign domain running an unmodified static Linux x86_64 program; its
//! every `syscall`, exception and invalid memory reference is a fault
//! message to this keeper, which carries the call out and resumes it. A
//! bug here harms only this process.
//!
//! This first keeper starts its process from the executable it is given
//! (`exec`), serves memory (page faults, `brk`, `mmap`, `munmap`,
//! `mprotect`), identity, clocks, randomness, signal bookkeeping and the
//! terminal's output (`calls`), and reports the process's end. The design
//! and what is still to come are in docs/UNIX.md.
//!
//! Keys: see `slots`. Argument: the process id.
#![no_std]
#![no_main]

mod answers;
mod calls;
mod dump;
mod epoll;
mod exec;
mod fds;
mod fifos;
mod filecalls;
mod flocks;
mod fork;
mod ids;
mod inotify;
mod interp;
mod keyrings;
mod limits;
mod locks;
mod memory;
mod misc;
mod mqueue;
mod poll;
mod procctl;
mod procvm;
mod ptimers;
mod ptrace;
mod sched;
mod signals;
mod slots;
mod sockets;
mod space;
mod sysmisc;
mod system;
mod sysv;
mod threads;
mod vfork;
mod xattrs;

use calls::Next;
use slots::{DIR, KEYS, PBANK, PROC, T, UNIXD};
use space::{Space, Touch};
use stet_prng::XorShift64Star;
use stet_rt::abi::domain::{Reg, NREGS, REGS_SIZE};
use stet_rt::abi::fault;
use stet_rt::abi::order::node;
use stet_rt::invoke::Recv;
use stet_rt::key::{Answer, Msg, Slot};
use stet_rt::{bank, println};
use stet_unix::elf::prot;
use stet_unix::layout::{EXEC_SLOT, WINDOW_SLOT};
use stet_unix::sys::sig;
use stet_unix_personality::keydir;

/// Signals the keeper sends itself, as the `u8` a process's end carries.
const SIGILL: u8 = sig::SIGILL as u8;
const SIGFPE: u8 = sig::SIGFPE as u8;
const SIGSEGV: u8 = sig::SIGSEGV as u8;
const SIGBUS: u8 = sig::SIGBUS as u8;

/// A process and everything its keeper knows about it.
pub struct Keeper {
    /// Its address space.
    pub space: Space,
    /// Its process id.
    pub pid: u64,
    /// Its parent's.
    pub ppid: u64,
    /// Calls answered `ENOSYS`, by number (the last counts all higher
    /// numbers).
    pub enosys: [u16; 512],
    /// Whether any of `enosys` is nonzero (so the common end, with none,
    /// need not look at 512 counts).
    pub enosys_any: bool,
    /// The descriptors.
    pub fds: [fds::Fd; fds::MAX_FDS],
    /// The working directory (a file id of the file-system domain).
    pub cwd: u32,
    /// The file-creation mask.
    pub umask: u64,
    /// The mask before `rt_sigsuspend` changed it, until a handler's frame
    /// keeps it.
    pub suspend_mask: Option<u64>,
    /// `personality`'s persona (`procctl`).
    pub persona: u32,
    /// Timer slack (ns): the current and the default `PR_SET_TIMERSLACK`
    /// 0 goes back to (the creating process's current at `fork`).
    pub slack: [u64; 2],
    /// `clone`'s `CLONE_CHILD_SETTID` and `CLONE_CHILD_CLEARTID`
    /// addresses for the child being made (0: none): its keeper, a copy
    /// of this one, writes the first and keeps the second.
    pub clone_child: (u64, u64),
    /// `FORK`'s flags for the child being made (`FORK_PARENT`).
    pub fork_flags: u64,
    /// `PR_SET_NO_NEW_PRIVS`: `execve` does not apply set-id bits
    /// (inherited, never cleared).
    pub no_new_privs: bool,
    /// `PR_SET_DUMPABLE` (0 or 1; 1 at start).
    pub dumpable: u8,
    /// `PR_SET_THP_DISABLE` (a flag only: no huge pages here).
    pub thp_disable: bool,
    /// `membarrier`'s registrations: bit 0 private expedited, bit 1 its
    /// `SYNC_CORE` form (dropped at `execve`).
    pub membarrier: u8,
    /// Print every system call and its result (argument bit 62 of the
    /// first keeper; children inherit it).
    pub trace: bool,
    /// Print nothing when a process ends but a crash (argument bit 61 of
    /// the first keeper, `make run`; children inherit it).
    pub quiet: bool,
    /// Fault injection for tests (argument bit 57 of the first keeper;
    /// children inherit it): system call [`calls::PANIC_KEEPER`] makes
    /// this keeper panic, to show that its process still ends.
    pub testing: bool,
    /// `struct sigaction` of each signal, as the process gave it (written
    /// only through `Keeper::set_action`, which keeps `ignored` true).
    pub actions: [[u8; 32]; 64],
    /// The signals whose action is to ignore them (`SIG_IGN`, or `SIG_DFL`
    /// of a signal ignored by default): every read, write and wait asks.
    pub ignored: u64,
    /// The blocked signals.
    pub sigmask: u64,
    /// How many calls the kernel could answer the keeper has answered for
    /// this process domain, up to [`answers::AFTER`], when it leaves the
    /// answers with the kernel (`answers`): a process that asks once
    /// (musl's child asks its tid after `fork`) costs nothing more.
    pub answered: u8,
    /// Whether the `KEYS` node's `SPARE` slot holds a spare keeper: the
    /// keeper of an ended child, waiting to serve the next `fork`'s child
    /// (its domain, pages and page tables are kept instead of built).
    pub spare: bool,
    /// The spare's own process was kept (`KEYS` node slots `KEPT_*`):
    /// a copy of this process's tree at this generation
    /// (`Tree::generation`). A `fork` while the tree is still there is
    /// *warm*: it rewrites the kept process's own pages and registers
    /// instead of building a process.
    pub spare_kept: Option<u64>,
    /// The spare's kept process was put aside at the child's `execve`
    /// (`Keeper::kept_at_exec`): the spare's windows show another.
    pub spare_moved: bool,
    /// The last child `fork` made, and the generation of this tree its
    /// process is a copy of (`None`: not a plain copy).
    pub last_fork: (u64, Option<u64>),
    /// A forked keeper: its process's tree generation when it was a plain
    /// copy of the parent's (`None`: it was not). Unchanged at the end,
    /// the process is kept for the parent's next `fork`.
    pub kept_gen: Option<u64>,
    /// The plain copy was put aside at `execve` (`KEYS` slots `KEPT_*`)
    /// rather than destroyed: `fork` then `execve` keeps the copy too.
    pub kept_at_exec: bool,
    /// `AT_RANDOM` and `getrandom` (seeded from the time-stamp counter;
    /// not for cryptography).
    rng: XorShift64Star,
    /// Resource limits, (soft, hard) by resource (`limits`).
    pub rlimits: [[u64; 2]; limits::RESOURCES],
    /// A copy of the process's users and groups, which unixd holds
    /// (`ids`).
    pub cred: stet_unix::cred::Cred,
    /// The fault behind the signal being delivered: (signal, `si_code`,
    /// `si_addr`), for its frame's `siginfo` (signal 0: none).
    pub fault_si: (u64, u64, u64),
    /// A `fork` whose process had pages out of its tree (`PROT_NONE`):
    /// the child keeper parks them too, then starts its process itself.
    pub fork_parked: bool,
    /// The process's threads (`threads`).
    pub th: threads::Threads,
    /// The slot holding the resume key of the call being served, and
    /// where the next one arrives: `slots::RESUME` or `slots::RESUME2`
    /// (the other may hold a blocked thread's, `Threads::parked`).
    pub rs: stet_rt::key::Slot,
    /// Signals sent to the thread being served alone (`tgkill`).
    pub tpending: u64,
    /// What `rt_sigqueueinfo` to this process said with each signal
    /// (`si_code` | `si_pid` << 32, `si_uid`, `si_value`), for the
    /// `siginfo` it is delivered with.
    pub queued_si: [[u64; 3]; 64],
    /// The signals whose `queued_si` entry holds one.
    pub queued_si_mask: u64,
    /// The handler being given a frame has `SA_SIGINFO` (`push_frame`
    /// then asks unixd who sent the signal).
    pub siginfo_wanted: bool,
    /// A signal that ends the process, found while serving another thread.
    pub fatal: Option<u8>,
    /// The most pages the process has had (`getrusage`'s `ru_maxrss`).
    pub peak_pages: u64,
    /// It made a POSIX timer (unixd is asked to delete them at `execve`).
    pub ptimers_made: bool,
    /// It is traced, as far as this keeper knows (`ptrace`: `TRACEME`, or
    /// a stop its tracer answered); its `execve` stops for the tracer.
    pub traced: bool,
    /// Its tracer asked for system-call stops (`PTRACE_SYSCALL`).
    pub trace_sys: bool,
}

impl Keeper {
    fn new(pid: u64) -> Keeper {
        Keeper {
            space: Space::new(),
            pid,
            ppid: 0,
            enosys: [0; 512],
            enosys_any: false,
            fds: [fds::CLOSED; fds::MAX_FDS],
            cwd: fds::NONE,
            umask: 0o022,
            trace: false,
            quiet: false,
            testing: false,
            persona: 0,
            slack: [procctl::DEFAULT_SLACK; 2],
            membarrier: 0,
            no_new_privs: false,
            dumpable: 1,
            thp_disable: false,
            clone_child: (0, 0),
            fork_flags: 0,
            suspend_mask: None,
            actions: [[0; 32]; 64],
            ignored: signals::ignored_by_default(),
            sigmask: 0,
            answered: 0,
            spare: false,
            spare_kept: None,
            spare_moved: false,
            last_fork: (0, None),
            kept_gen: None,
            kept_at_exec: false,
            rng: XorShift64Star::new(stet_rt::cpu::rdtsc()),
            rlimits: limits::defaults(),
            cred: ids::FIRST,
            fault_si: (0, 0, 0),
            fork_parked: false,
            th: threads::Threads::one(pid as u32),
            rs: slots::RESUME,
            tpending: 0,
            queued_si: [[0; 3]; 64],
            queued_si_mask: 0,
            siginfo_wanted: false,
            fatal: None,
            peak_pages: 0,
            ptimers_made: false,
            traced: false,
            trace_sys: false,
        }
    }

    /// The next random word (see `rng`).
    pub fn random(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// A memory fault at `addr`: makes the page (growing a `MAP_GROWSDOWN`
    /// range down to it first, as Linux's `expand_stack`), or ends the
    /// process.
    fn memory_fault(&mut self, addr: u64, access: u64, why: u64) -> Result<(), u8> {
        // Below a `MAP_GROWSDOWN` range: it grows to here if it may.
        let stack_max = self.rlimits[stet_unix::sys::rlimit::RLIMIT_STACK as usize][0];
        let found = self.space.map.find(addr).copied();
        let Some(v) = found.or_else(|| {
            let gap = stet_unix::layout::STACK_GUARD_GAP;
            self.space.map.grow_down(addr, gap, stack_max)
        }) else {
            return Err(SIGSEGV);
        };
        let need = match access {
            fault::access::WRITE => prot::WRITE,
            fault::access::EXECUTE => prot::EXEC,
            _ => prot::READ,
        };
        if v.prot & need == 0 {
            return Err(SIGSEGV);
        }
        let write = access == fault::access::WRITE;
        // Past the end of a node smaller than its slot (the shadow makes
        // nodes as small as it can) is a missing page too.
        let missing = why == fault::why::NOT_PRESENT || why == fault::why::OUT_OF_RANGE;
        if !(missing || why == fault::why::PROTECTION && write) {
            return Err(SIGSEGV);
        }
        // A page this keeper put there and the kernel finds missing was
        // destroyed under the process (a bug elsewhere): a bus error, not
        // the same fault forever.
        if missing && self.space.tree.page(addr / 4096).is_some() {
            return Err(SIGBUS);
        }
        self.space.make_page(&v, addr, write).map_err(|e| match e {
            Touch::Fault => SIGSEGV,
            Touch::NoMemory => SIGBUS,
        })
    }

    /// A fault that is signal `sig`: delivered to a handler if the process
    /// has one (the answer then sets the registers), else the end. →
    /// the signal that ends the process, if it does.
    fn fault_signal(
        &mut self,
        sig: u8,
        regs: &mut [u64; NREGS],
        with_regs: &mut bool,
    ) -> Option<u8> {
        let (h, ..) = {
            let a = &self.actions[sig as usize - 1];
            (u64::from_le_bytes(a[..8].try_into().unwrap_or_default()), 0)
        };
        // A blocked or ignored fault signal cannot be left pending: the
        // instruction would fault again. Linux kills then too.
        if h <= 1 || self.sigmask & (1 << (sig - 1)) != 0 {
            // A tracer sees it first and may drop it (Linux's
            // signal-delivery stop): the process then goes on from the
            // registers (after an `int3`; a faulting instruction again).
            return match self.trace_signal(sig as u64, regs, None) {
                Err(end) => Some(end),
                Ok(0) => {
                    *with_regs = true;
                    None
                }
                Ok(s) if s == sig as u64 => Some(sig),
                Ok(s) => {
                    signals::raise(s);
                    *with_regs = true;
                    self.deliver(regs, None)
                }
            };
        }
        signals::raise(sig as u64);
        *with_regs = true;
        self.deliver(regs, None)
    }

    /// Leaves the answers of the calls the kernel can answer with it, if
    /// not done yet for this process domain (failing, the keeper goes on
    /// answering them itself).
    pub fn leave_answers(&mut self) {
        // Only the first thread's domain has them (its tid is the pid);
        // a tracer that asked for system-call stops must see them all.
        if self.th.cur != 0 || self.th.count > 1 || self.trace_sys {
            return;
        }
        if self.answered < answers::AFTER {
            self.answered += 1;
            if self.answered == answers::AFTER {
                let c = &self.cred;
                let ids = [c.uid[0], c.uid[1], c.gid[0], c.gid[1]].map(u64::from);
                let _ = answers::install(slots::PROC, PBANK, T, self.pid, ids);
            }
        }
    }

    /// Takes the answers left with the kernel back from the process
    /// domain (`answers`), adding the calls it answered `ENOSYS` to the
    /// tally: before that domain goes, or is kept for another process.
    pub fn collect_enosys(&mut self) {
        if core::mem::take(&mut self.answered) < answers::AFTER {
            return;
        }
        let n = answers::remove(slots::PROC, PBANK, T);
        let last = self.enosys.len() - 1;
        self.enosys[last] = self.enosys[last].saturating_add(n.min(u16::MAX as u64) as u16);
        self.enosys_any |= n > 0;
    }

    /// The process has ended: its objects go back to the bank.
    fn end(&mut self, how: End) {
        self.end_other_threads();
        self.collect_enosys();
        let status = match how {
            End::Exit(s) => (s as u64) << 8,
            // A core dump's bit (WCOREDUMP) when it left one (`dump`).
            End::Signal(s, ..) if self.dump_core(s as u64) => s as u64 | 0x80,
            End::Signal(s, ..) => s as u64,
        };
        // Quiet (`make run`): the terminal is the user's; only a program's
        // crash is worth a line there (its shell reports the rest).
        let crashed =
            matches!(how, End::Signal(s, ..) if matches!(s, SIGILL | SIGFPE | SIGSEGV | SIGBUS));
        if !self.quiet || crashed {
            match how {
                End::Exit(s) => println!("unix: pid {} exited with status {s}", self.pid),
                End::Signal(s, what, addr, rip) => println!(
                    "unix: pid {} killed by signal {s} ({what} {addr:#x} at rip {rip:#x})",
                    self.pid
                ),
            }
        }
        // The unimplemented calls go to unixd's tally (the native shell's
        // `unix` command), and are printed unless quiet.
        let mut tally = [0u8; 6 * 64];
        let mut n = 0;
        let counts = if self.enosys_any {
            &self.enosys[..]
        } else {
            &[]
        };
        for (nr, &c) in counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            if n + 6 <= tally.len() {
                tally[n..n + 2].copy_from_slice(&(nr as u16).to_le_bytes());
                tally[n + 2..n + 6].copy_from_slice(&(c as u32).to_le_bytes());
                n += 6;
            }
        }
        if n > 0 {
            let _ = Msg::new(UNIXD, stet_unix::proto::ENOSYS)
                .string(&tally[..n])
                .call();
        }
        if n > 0 && !self.quiet {
            stet_rt::print!("unix: pid {} unimplemented calls:", self.pid);
            for c in tally[..n].chunks_exact(6) {
                let t = stet_unix::sysnames::Tally::decode(c.try_into().unwrap_or(&[0; 6]));
                stet_rt::print!(" {t}");
            }
            println!();
        }
        // A forked keeper whose process is still the plain copy its parent
        // made keeps it, for the parent's next `fork` (`spare_kept`) — or
        // has kept it already, at `execve`.
        let forked = self.ppid != 0;
        let keep = self.keepable();
        self.close_all(false);
        self.space.close_files();
        if !keep {
            // Its own pages come from the common bank: each back (shared
            // ones by their last holder) before the process's bank goes.
            self.space.release_pages(0, stet_unix::layout::USER_END);
        }
        let _ = Msg::new(UNIXD, stet_unix::proto::CLOSE)
            .w0(self.cwd as u64)
            .call();
        let kept_now = keep && self.keep_process();
        if !kept_now {
            let _ = bank::destroy(PBANK);
        }
        // `EXIT` `w1`: bit 0 kept, bit 1 put aside at `execve`.
        let kept = if self.kept_at_exec {
            3
        } else {
            kept_now as u64
        };
        // The windows onto the process are closed, unless this keeper
        // goes too (a forked keeper: its bank is destroyed below, and
        // clearing a slot of its own space would only discard its page
        // tables for nothing).
        if !forked && keydir::fetch(KEYS, slots::keys::SELF_SPACE, T).is_ok() {
            for slot in [WINDOW_SLOT, EXEC_SLOT] {
                let _ = Msg::new(T, node::SWAP).w0(slot).call();
            }
        }
        self.drop_spare();
        // A forked keeper offers itself as a spare for its parent's next
        // `fork` (`proto::EXIT`): the call is then answered by that fork
        // (`BECOME`: its keys arrive in the slots they serve in), or never
        // (unixd destroys this keeper's bank when nobody will wait). Should
        // it be answered otherwise, the keeper ends itself.
        if !forked {
            let _ = Msg::new(UNIXD, stet_unix::proto::EXIT).w0(status).call();
            return;
        }
        let a = Msg::new(UNIXD, stet_unix::proto::EXIT)
            .words([status, kept, 0, 0])
            .keys([KEYS, 0, 0, 0])
            .recv([PROC, UNIXD, PBANK, DIR])
            .call();
        if a.code == stet_unix::proto::BECOME {
            let warm = if a.w[1] == 1 { fork::WARM } else { 0 };
            stet_rt::start::restart(fork::FORKED | fork::REUSED | warm | a.w[0]);
        }
        if keydir::fetch(KEYS, slots::keys::OWN_BANK, T).is_ok() {
            let _ = bank::destroy(T);
        }
    }

    /// Whether the process is still the plain copy of its parent's that
    /// `fork` made (and not kept already): it may be kept for the
    /// parent's next `fork`.
    pub fn keepable(&self) -> bool {
        self.ppid != 0 && !self.kept_at_exec && self.kept_gen == Some(self.space.tree.generation())
    }

    /// Keeps the process (its domain, bank and tree's directory into the
    /// `KEYS` slots `KEPT_*`) for the parent's next `fork`: at its end,
    /// or when `execve` replaces it (its answers already taken away:
    /// `collect_enosys`). → whether it did.
    pub fn keep_process(&self) -> bool {
        [
            (slots::keys::KEPT_PROC, PROC),
            (slots::keys::KEPT_PBANK, PBANK),
            (slots::keys::KEPT_DIR, DIR),
        ]
        .into_iter()
        .all(|(at, s)| keydir::swap(KEYS, at, s, 0).is_ok())
    }

    /// The process kept at `execve` goes (its bank destroyed): this
    /// keeper's own `fork` needs those `KEYS` slots.
    pub fn drop_kept(&mut self) {
        if core::mem::take(&mut self.kept_at_exec)
            && keydir::fetch(KEYS, slots::keys::KEPT_PBANK, T).is_ok()
        {
            let _ = bank::destroy(T);
        }
    }

    /// The spare keeper goes (its bank destroyed), if there is one.
    pub fn drop_spare(&mut self) {
        self.spare_kept = None;
        if core::mem::take(&mut self.spare)
            && keydir::fetch(KEYS, slots::keys::SPARE, T).is_ok()
            && keydir::fetch(T, slots::keys::OWN_BANK, T).is_ok()
        {
            let _ = bank::destroy(T);
        }
    }

    /// The keeper of reaped child `pid` (its `KEYS` node in `k`; `kept`:
    /// its `EXIT`'s `w1`, bit 0 with its process, bit 1 put aside at
    /// `execve`) becomes the spare, or goes if there is one already.
    pub fn keep_spare(&mut self, k: Slot, pid: u64, kept: u64) {
        if !self.spare && keydir::swap(KEYS, slots::keys::SPARE, k, 0).is_ok() {
            self.spare = true;
            self.spare_kept = match self.last_fork {
                (p, gen) if kept & 1 != 0 && p == pid => gen,
                _ => None,
            };
            self.spare_moved = kept & 2 != 0;
        } else if keydir::fetch(k, slots::keys::OWN_BANK, k).is_ok() {
            let _ = bank::destroy(k);
        }
    }
}

/// How a process ended.
enum End {
    Exit(u8),
    /// The signal, what happened, the address or vector, the rip.
    Signal(u8, &'static str, u64, u64),
}

fn regs_of(buf: &[u8]) -> [u64; NREGS] {
    let mut r = [0u64; NREGS];
    for (v, c) in r.iter_mut().zip(buf.chunks_exact(8)) {
        *v = u64::from_le_bytes(c.try_into().unwrap_or_default());
    }
    r
}

/// `EAGAIN`, answered to a thread the keeper cannot keep waiting.
const EAGAIN_: i64 = stet_unix::sys::errno::EAGAIN;

/// Answers the call being served with `reply` (if any) and takes the next
/// event: a blocked thread whose wait may have ended (its call runs again,
/// as if it had just faulted: `threads`), else the next message.
fn next_event(k: &mut Keeper, regs: &mut [u64; NREGS], reply: Option<Msg<'_>>) -> Answer {
    k.wake_for_signals();
    if k.th.retry == 0 {
        return wait_regs(k, regs, reply.unwrap_or(Msg::new(0, 0)));
    }
    if let Some(m) = reply {
        m.send();
    }
    match k.take_retry() {
        Some(r) => {
            *regs = r;
            Answer {
                info: k.th.cur as u8,
                source: 0,
                buffer_fault: false,
                label: 0,
                code: fault::code::SYSCALL,
                w: [0; 4],
                len: 0,
            }
        }
        None => wait_regs(k, regs, Msg::new(0, 0)),
    }
}

/// Sends `m` as a return (the answer to the fault being handled, or
/// nothing to the void key at first) and waits for the next fault: its
/// register block into `regs` (the kernel writes it as little-endian
/// words, which these are: no copy on the way in), its resume key into
/// `k.rs` and, in a threaded process, its key 0 into `PROC`: a fault's
/// is the faulting thread's domain key, so serving another thread costs
/// no directory lookup (`Keeper::took_fault`; any other message leaves
/// `PROC` to be filled again, `Keeper::restore_proc`). The status page is
/// brought up to date first.
#[inline(always)]
fn wait_regs(k: &mut Keeper, regs: &mut [u64; NREGS], m: Msg<'_>) -> Answer {
    k.publish_sleepers();
    let proc_in = if k.threaded() { PROC } else { 0 };
    k.th.proc_received = proc_in != 0;
    m.recv([proc_in, 0, 0, 0])
        .resume_into(k.rs)
        .ret_to(Recv::words(regs))
}

fn bytes_of(r: &[u64; NREGS]) -> [u8; REGS_SIZE] {
    let mut b = [0u8; REGS_SIZE];
    for (c, v) in b.chunks_exact_mut(8).zip(r) {
        c.copy_from_slice(&v.to_le_bytes());
    }
    b
}

/// Argument bit: trace every system call.
const TRACE: u64 = 1 << 62;
/// Argument bit: fault injection for tests (see `Keeper::testing`).
const TESTING: u64 = 1 << 57;
/// Argument bit: quiet (see `Keeper::quiet`).
const QUIET: u64 = 1 << 61;

/// The tag of the keeper's state in its heap (`stet_rt::carry`).
const TAG: u64 = u64::from_le_bytes(*b"UNIXKPR1");

/// Argument bit: this keeper failed and was started again to end its
/// process: after a panic (`stet_rt::start::restart_on_panic`), or, with
/// [`FAULTED`], after a fault its own keeper (unixd:
/// `proto::KEEPER_FAULT`) answered so.
const FAILED: u64 = 1 << 58;
/// Argument bit, with [`FAILED`]: the failure was a fault, not a panic.
const FAULTED: u64 = 1 << 56;
const _: () = assert!(stet_unix::proto::KEEPER_FAILED == FAILED | FAULTED);

/// A keeper that failed (a panic, or a fault unixd answered by starting
/// it again) ends its process as if by SIGKILL: a keeper's bug must harm
/// only its own process, and never leave a parent waiting forever. The
/// first start after the failure runs the ordinary end (descriptors
/// closed, pages back, `EXIT` to unixd, which tells the parent) on the
/// state the failure left; if that fails too, the second does only what
/// needs no state: the process's bank goes and unixd hears of the end;
/// after a third the keeper only waits.
fn failed(arg: u64) -> i64 {
    if arg & FAULTED != 0 {
        stet_rt::start::fault_restarted();
    }
    let n = stet_rt::start::failures();
    if n == 1 {
        if let Some(k) = stet_rt::carry::reclaim_after_failure::<Keeper>(TAG) {
            println!(
                "unix: pid {}: its keeper failed; the process is killed",
                k.pid
            );
            k.end(End::Signal(sig::SIGKILL as u8, "keeper failure", 0, 0));
            return 1;
        }
    }
    if n > 2 {
        return 1;
    }
    println!("unix: a keeper failed again; its process is killed");
    let _ = bank::destroy(PBANK);
    let _ = Msg::new(UNIXD, stet_unix::proto::EXIT)
        .w0(sig::SIGKILL)
        .call();
    // A forked keeper's own bank (void for one the image made) goes too,
    // and this keeper with it.
    if keydir::fetch(KEYS, slots::keys::OWN_BANK, T).is_ok() {
        let _ = bank::destroy(T);
    }
    1
}

fn main(arg: u64) -> i64 {
    if arg & FAILED != 0 && (arg & FAULTED != 0 || stet_rt::start::failures() > 0) {
        return failed(arg);
    }
    let k: &'static mut Keeper = if arg & fork::FORKED != 0 {
        // A copy made by `fork`: the parent's state, a new pid.
        let Some(k) = stet_rt::carry::resume::<Keeper>(TAG) else {
            println!("unix: a forked keeper without its state");
            return 1;
        };
        k.ppid = k.pid;
        k.pid = arg & !(fork::FORKED | fork::REUSED | fork::WARM);
        // The forking thread is the child's only one (the others' keys
        // are not in the child's directory: `forget_parking`).
        k.only_thread(k.pid as u32);
        // A child has no timers of its parent's (Linux), and no memory
        // locks (`mlock`'s are not inherited).
        k.ptimers_made = false;
        k.lock_all(false);
        // Nor its tracer (Linux: a traced process's child is not traced).
        k.traced = false;
        k.trace_sys = false;
        k.space.forget_cache();
        if core::mem::take(&mut k.enosys_any) {
            k.enosys = [0; 512];
        }
        k.answered = 0;
        k.spare = false;
        k.spare_kept = None;
        k.spare_moved = false;
        k.last_fork = (0, None);
        k.kept_at_exec = false;
        k.kept_gen = if k.space.mark_copies_local() {
            Some(k.space.tree.generation())
        } else {
            None
        };
        // Its parent's `PROT_NONE` pages came in place: out they go, before
        // its process runs.
        k.space.forget_parking();
        let parked = core::mem::take(&mut k.fork_parked);
        if parked {
            k.space.park_none();
        }
        // A spare woken by `fork` finishes what a fresh keeper's builder
        // does for it: its process is still stopped.
        let reused = arg & fork::REUSED != 0;
        if reused {
            if let Err(c) = fork::adopt(arg & fork::WARM != 0) {
                println!(
                    "unix: pid {}: a spare keeper cannot start its process (code {c})",
                    k.pid
                );
                let _ = bank::destroy(PBANK);
                return 1;
            }
        }
        // Its default timer slack is its creator's current one (Linux).
        k.slack[1] = k.slack[0];
        // `clone`'s tid words, in the child's own memory before it runs.
        let (settid, cleartid) = core::mem::take(&mut k.clone_child);
        k.fork_flags = 0;
        if settid != 0 {
            let _ = k.space.write(settid, &(k.pid as u32).to_le_bytes());
        }
        if cleartid != 0 {
            let c = k.th.cur;
            k.th.t[c].clear_tid = cleartid;
        }
        // Who starts the process: its parent did, unless this keeper had
        // something to do first (`fork_as`) or is a woken spare.
        if (reused || parked || settid != 0) && fork::start_process().is_err() {
            println!("unix: pid {}: its process cannot start", k.pid);
            let _ = bank::destroy(PBANK);
            return 1;
        }
        // The child starts with no signals pending (Linux).
        signals::PENDING.store(0, core::sync::atomic::Ordering::Relaxed);
        k
    } else {
        let k = stet_rt::carry::place(TAG, Keeper::new(arg & !(TRACE | QUIET | TESTING)));
        k.trace = arg & TRACE != 0;
        k.quiet = arg & QUIET != 0;
        k.testing = arg & TESTING != 0;
        k.size_limits();
        let arg = arg & !(TRACE | QUIET | TESTING);
        if let Err(e) = exec::start(k) {
            println!("unix: cannot start pid {arg}: {e}");
            let _ = bank::destroy(PBANK);
            return 1;
        }
        k
    };
    let pid = k.pid;
    // A panic from here on ends the process (`failed`).
    stet_rt::start::restart_on_panic(FAILED | pid);
    // Where unixd sends this process's signals.
    if keydir::fetch(KEYS, slots::keys::SELF_START, T).is_ok() {
        // With where to start this program again after a fault
        // (`proto::KEEPER_FAULT`).
        let a = Msg::new(UNIXD, stet_unix::proto::HELLO)
            .w0(stet_rt::image::entry())
            .keys([T, 0, 0, 0])
            .call();
        signals::note(a.w[stet_unix::proto::INTR_WORD]);
        // The process's space, for another's `process_vm_readv`.
        procvm::send_space(k.dumpable);
        // unixd asks once for the meter processes run under (`/proc/stat`).
        if a.w[0] == 1 && keydir::fetch(KEYS, slots::keys::METER, T).is_ok() {
            let a = Msg::new(UNIXD, stet_unix::proto::METER)
                .keys([T, 0, 0, 0])
                .call();
            signals::note(a.w[stet_unix::proto::INTR_WORD]);
        }
    }
    // The register block of each fault arrives here (`wait_regs`).
    let mut regs = [0u64; NREGS];
    let mut a: Answer = wait_regs(k, &mut regs, Msg::new(0, 0));
    loop {
        let before = regs;
        // A fault names its thread: the key info of its keeper key.
        let fault = matches!(
            a.code,
            fault::code::SYSCALL | fault::code::MEMORY | fault::code::EXCEPTION
        );
        let served = if core::mem::take(&mut k.th.proc_received) {
            // `PROC` holds what came with the message.
            let t = a.info as usize;
            if fault && k.took_fault(t) {
                true
            } else {
                k.restore_proc();
                !fault
            }
        } else {
            !fault || a.info as usize == k.th.cur || k.switch_to(a.info as usize)
        };
        if !served {
            println!(
                "unix: pid {pid}: a fault from no thread ({}); ignored",
                a.info
            );
            a = next_event(k, &mut regs, None);
            continue;
        }
        // Whether the answer replaces all registers (a system call, or a
        // fault turned into a signal handler's frame).
        let mut with_regs = a.code == fault::code::SYSCALL;
        let end = match a.code {
            fault::code::SYSCALL => match k.syscall(&mut regs) {
                Next::Resume => None,
                Next::Exit(s) => Some(End::Exit(s)),
                Next::Killed(s) => Some(End::Signal(s, "signal", 0, regs[Reg::Rip as usize])),
                Next::Started => {
                    a = wait_regs(k, &mut regs, Msg::new(0, 0));
                    continue;
                }
                Next::Block => {
                    // Its resume key and registers wait for its `READY`.
                    if !k.block() {
                        println!("unix: pid {pid}: a thread cannot wait; it is answered EAGAIN");
                        let m = Msg::new(k.rs, fault::RESUME_SYSCALL).w0((-EAGAIN_) as u64);
                        a = next_event(k, &mut regs, Some(m));
                        continue;
                    }
                    a = next_event(k, &mut regs, None);
                    continue;
                }
                Next::Gone => {
                    a = next_event(k, &mut regs, None);
                    continue;
                }
            },
            fault::code::MEMORY => match k.memory_fault(a.w[0], a.w[1], a.w[2]) {
                Ok(()) => None,
                Err(s) => {
                    // SEGV_MAPERR (1) where nothing is mapped, SEGV_ACCERR
                    // (2) where the access is not allowed; BUS_ADRERR (2).
                    let mapped = k.space.map.find(a.w[0]).is_some();
                    let code = if s == SIGSEGV && !mapped { 1 } else { 2 };
                    k.fault_si = (s as u64, code, a.w[0]);
                    k.fault_signal(s, &mut regs, &mut with_regs)
                        .map(|s| End::Signal(s, "memory fault at", a.w[0], a.w[3]))
                }
            },
            fault::code::EXCEPTION => {
                let s = match a.w[0] {
                    0 | 16 | 19 => SIGFPE,
                    6 => SIGILL,
                    // `int3` and debug traps (Linux: SIGTRAP).
                    1 | 3 => sig::SIGTRAP as u8,
                    _ => SIGSEGV,
                };
                k.fault_signal(s, &mut regs, &mut with_regs)
                    .map(|s| End::Signal(s, "exception", a.w[0], a.w[2]))
            }
            stet_unix::proto::SIGNAL if a.source != stet_rt::abi::invoke::Source::Resume => {
                // From unixd while this keeper was idle: the process runs.
                signals::note(a.w[0]);
                let end = if k.threaded() {
                    k.signal_threads()
                } else {
                    k.signal_running()
                };
                if let Some(s) = end {
                    k.end(End::Signal(s, "signal", 0, 0));
                }
                a = next_event(k, &mut regs, None);
                continue;
            }
            stet_unix::proto::READY if a.source != stet_rt::abi::invoke::Source::Resume => {
                // Threads whose waits in unixd may have ended.
                k.ready(a.w[0]);
                a = next_event(k, &mut regs, None);
                continue;
            }
            _ if a.source == stet_rt::abi::invoke::Source::Kernel => {
                // The kernel refused to resume the process as the keeper
                // asked (registers it cannot load): the process cannot go
                // on, and Linux would have killed it with SIGSEGV.
                Some(End::Signal(
                    SIGSEGV,
                    "registers refused, code",
                    a.code,
                    regs[Reg::Rip as usize],
                ))
            }
            other => {
                println!("unix: pid {pid}: unexpected message {other}; ignored");
                a = wait_regs(k, &mut regs, Msg::new(0, 0));
                continue;
            }
        };
        // A signal that ends the process, met while serving another thread.
        let end = end.or_else(|| k.fatal.take().map(|s| End::Signal(s, "signal", 0, 0)));
        match end {
            None => {
                // A memory fault re-executes the instruction; a system
                // call resumes after it with the result in rax.
                // A call that changed only rax (nearly every one) is
                // answered with rax alone, not the register block.
                let rax = Reg::Rax as usize;
                let only_rax = a.code == fault::code::SYSCALL
                    && (0..NREGS).all(|i| i == rax || regs[i] == before[i]);
                // (The common answer, `rax` alone with no thread to run
                // again, is a return and a wait in one: no `Msg` kept.)
                k.wake_for_signals();
                if only_rax && k.th.retry == 0 {
                    let m = Msg::new(k.rs, fault::RESUME_SYSCALL).w0(regs[rax]);
                    a = wait_regs(k, &mut regs, m);
                    continue;
                }
                let out = if with_regs {
                    bytes_of(&regs)
                } else {
                    [0; REGS_SIZE]
                };
                let m = if only_rax {
                    Msg::new(k.rs, fault::RESUME_SYSCALL).w0(regs[rax])
                } else if with_regs {
                    Msg::new(k.rs, fault::RESUME_WITH_REGS).string(&out)
                } else {
                    Msg::new(k.rs, fault::RESUME)
                };
                a = next_event(k, &mut regs, Some(m));
            }
            Some(how) => {
                k.end(how);
                a = wait_regs(k, &mut regs, Msg::new(0, 0));
            }
        }
    }
}

stet_rt::main!(main);
