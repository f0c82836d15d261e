//! Threads: the domains of one process that share its address space, all
//! served by this one keeper (docs/UNIX.md, "Threads").
//!
//! * **Which thread.** Each thread's domain has as its keeper a start key
//!   to this keeper whose key info is the thread's slot here (made with
//!   `MAKE_START` on the keeper's own domain key, kept in slot
//!   [`SELF_DOMAIN_SLOT`] of its address-space root); a fault arrives with
//!   that info, and the keeper switches to the thread (`switch_to`): its
//!   domain key into `PROC`, its signal mask into `Keeper::sigmask`.
//! * **A blocked thread never holds the keeper.** A call of a threaded
//!   process that must wait in unixd is sent with the thread's slot in the
//!   order code (`proto::NOTIFY_SHIFT`): unixd answers it at once
//!   `-ERESTARTSYS` and keeps the wait; the keeper keeps the thread's
//!   resume key (directory entry [`RESUMES`] + slot) and its registers and
//!   serves the other threads. When the wait ends unixd says `READY`
//!   (a try-send when the keeper is idle; else with the keeper's next
//!   answer that can carry it, or at the clock's next tick), and the keeper
//!   runs the thread's call again (every blocking call is written to be
//!   run again: what it did before it waited it does not do twice, and its
//!   deadline is kept, `keep_deadline`).
//! * **Private futexes are the keeper's** (`stet_unix::futexq`): a wait
//!   compares the word and queues the thread in one step of the keeper,
//!   which serves every thread of the process, so no wake can fall in
//!   between; a wake resumes the waiters through their resume keys. A
//!   timed wait also parks a `SLEEP` in unixd for the thread, whose `READY`
//!   times it out; an untimed one parks nothing there: the keeper's status
//!   page (`install_status`, `publish_sleepers`) tells unixd it sleeps.
//! * Thread ids are numbers of the pid space from unixd (`TID`).

use crate::calls::Next;
use crate::fds::ux;
use crate::slots::{keys, KEYS, LEAF, PBANK, PROC, RESUME, RESUME2, T, T2, T3, UNIXD};
use crate::space::Touch;
use crate::Keeper;
use stet_rt::abi::domain::{state, Reg, NREGS};
use stet_rt::abi::order::{domain, node};
use stet_rt::bank;
use stet_rt::key::Msg;
use stet_unix::futexq::{Queue, MATCH_ANY};
use stet_unix::proto;
use stet_unix::sys::errno::*;
use stet_unix_personality::keydir::fetch;

/// Most threads of one process (the futex queue holds as many).
pub const MAX_THREADS: usize = stet_unix::futexq::MAX_WAITERS;

/// Slot of the keeper's own address-space root holding its own domain key
/// (the image's `domain:unixkeeper`, or its parent's when forked): threads
/// need start keys to the keeper with their slot as key info.
pub const SELF_DOMAIN_SLOT: u64 = 14;

/// Directory entries (`Space::dir_*`) of each thread's domain key…
pub const DOMAINS: u16 = 1024;
/// …and of a blocked thread's resume key.
pub const RESUMES: u16 = 1024 + MAX_THREADS as u16;

/// One thread.
#[derive(Clone, Copy)]
pub struct Thread {
    /// Its id (0: a free slot).
    pub tid: u32,
    /// Waiting (its resume key kept; its registers are its domain's) for
    /// `READY` or a wake.
    pub blocked: bool,
    /// Its signal mask while another thread is served.
    pub sigmask: u64,
    /// Signals sent to this thread (`tgkill`) and not yet delivered.
    pub pending: u64,
    /// `CLONE_CHILD_CLEARTID` / `set_tid_address`: zeroed and woken at
    /// its end.
    pub clear_tid: u64,
    /// `set_robust_list`'s head.
    pub robust: u64,
    /// The deadline of its waiting call, kept across runs of it.
    pub deadline: u64,
    /// Whether `deadline` was set by this call.
    pub has_deadline: bool,
    /// `sigaltstack`: base, size (0: none), flags.
    pub altstack: (u64, u64, u64),
}

/// A free slot.
pub const FREE: Thread = Thread {
    tid: 0,
    blocked: false,
    sigmask: 0,
    pending: 0,
    clear_tid: 0,
    robust: 0,
    deadline: 0,
    has_deadline: false,
    altstack: (0, 0, 0),
};

/// The threads of the process and what the keeper keeps for them.
#[derive(Clone)]
pub struct Threads {
    /// By slot; slot 0 is the first thread (whose domain is the process's).
    pub t: [Thread; MAX_THREADS],
    /// The thread being served.
    pub cur: usize,
    /// How many are alive.
    pub count: usize,
    /// Private futex waiters.
    pub futex: Queue,
    /// Blocked threads to run again (their waits may have ended).
    pub retry: u64,
    /// The call being served is a run again of a blocked one.
    pub retrying: bool,
    /// The first thread's domain key is in the directory too.
    pub saved_first: bool,
    /// Slots whose domain (in the directory) this process image set up:
    /// its keeper, meter and space are this process's, so a new thread
    /// there needs only its registers (nine kernel calls fewer a
    /// `clone`). Cleared with the rest at `execve` and in a new process.
    pub configured: u64,
    /// The status page (`proto::STATUS_PAGE`) is in root slot
    /// `STATUS_SLOT` and unixd has it: an untimed futex wait parks nothing
    /// in unixd, the page says how many wait (`publish_sleepers`).
    pub status: bool,
    /// What the page says now.
    pub published: u32,
    /// The message just taken put its key 0 into `PROC` (`wait_regs`).
    pub proc_received: bool,
    /// A blocked thread whose resume key stayed in the general slot it
    /// arrived in (slot, thread, its id) instead of going to the
    /// directory: the next fault arrives in the other slot. Stale once
    /// that thread is no longer blocked (checked at each use).
    pub parked: Option<(stet_rt::key::Slot, usize, u32)>,
}

impl Threads {
    /// The entries a forked keeper's copy of this state need not have (its
    /// `only_thread` resets them): every slot but the first, and the futex
    /// queue, as addresses.
    pub fn unused(&self) -> core::ops::Range<u64> {
        let all = self.t.as_ptr_range();
        all.start as u64 + core::mem::size_of::<Thread>() as u64..all.end as u64
    }
}

impl Threads {
    /// One thread, `tid`, in slot 0.
    pub const fn one(tid: u32) -> Threads {
        let mut t = [FREE; MAX_THREADS];
        t[0].tid = tid;
        Threads {
            t,
            cur: 0,
            count: 1,
            futex: Queue::new(),
            retry: 0,
            retrying: false,
            saved_first: false,
            configured: 0,
            status: false,
            published: 0,
            proc_received: false,
            parked: None,
        }
    }
}

impl Keeper {
    /// Whether the process has more than one thread (its waits must not
    /// hold the keeper).
    pub fn threaded(&self) -> bool {
        self.th.count > 1
    }

    /// `order` as a call of the current thread: with its slot when the
    /// process is threaded (`proto::NOTIFY_SHIFT`).
    pub fn tagged(&self, order: u64) -> u64 {
        if self.threaded() {
            order | ((self.th.cur as u64 + 1) << proto::NOTIFY_SHIFT)
        } else {
            order
        }
    }

    /// The current thread's id.
    pub fn tid(&self) -> u64 {
        self.th.t[self.th.cur].tid as u64
    }

    /// Whether `tid` is one of the process's threads.
    pub fn tid_of(&self, tid: u64) -> bool {
        tid != 0 && (0..MAX_THREADS).any(|i| self.th.t[i].tid as u64 == tid)
    }

    /// A blocking call's deadline: the one it had when it first waited if
    /// this is a run again of it, else `d` (kept for the next run).
    pub fn keep_deadline(&mut self, d: u64) -> u64 {
        let t = &mut self.th.t[self.th.cur];
        if self.th.retrying && t.has_deadline {
            return t.deadline;
        }
        t.deadline = d;
        t.has_deadline = true;
        d
    }

    /// Serves thread `t` from now on: its domain in `PROC`, its mask.
    pub fn switch_to(&mut self, t: usize) -> bool {
        if t >= MAX_THREADS || self.th.t[t].tid == 0 {
            return false;
        }
        if t == self.th.cur {
            return true;
        }
        if self.space.dir_get(DOMAINS + t as u16, PROC).is_err() {
            // Its domain is gone (cannot be: the keeper made it); serve the
            // one before.
            self.restore_proc();
            return false;
        }
        self.make_current(t);
        true
    }

    /// Serves thread `t`, whose fault just put its domain key in `PROC`
    /// (`wait_regs`) → false if `t` is no thread (`PROC` is then the
    /// current one's again).
    pub fn took_fault(&mut self, t: usize) -> bool {
        if t >= MAX_THREADS || self.th.t[t].tid == 0 {
            self.restore_proc();
            return false;
        }
        if t != self.th.cur {
            self.make_current(t);
        }
        true
    }

    /// The current thread's domain key into `PROC` again (a message
    /// other than its fault filled it).
    pub fn restore_proc(&mut self) {
        let _ = self.space.dir_get(DOMAINS + self.th.cur as u16, PROC);
    }

    /// Thread `t`'s mask and pending signals become the keeper's; the
    /// current one's are kept with it.
    fn make_current(&mut self, t: usize) {
        let c = self.th.cur;
        self.th.t[c].sigmask = self.sigmask;
        self.th.t[c].pending = core::mem::take(&mut self.tpending);
        self.th.cur = t;
        self.sigmask = self.th.t[t].sigmask;
        self.tpending = self.th.t[t].pending;
    }

    /// `clone` of a thread (`CLONE_VM | CLONE_THREAD | …`, as glibc's and
    /// musl's `pthread_create`): a new domain in the process's space, its
    /// registers the caller's but `rax` 0, `rsp` `stack` and, with
    /// `CLONE_SETTLS`, `fs` `tls` → its id.
    pub fn clone_thread(
        &mut self,
        regs: &[u64; NREGS],
        flags: u64,
        stack: u64,
        ptid: u64,
        ctid: u64,
        tls: u64,
    ) -> Result<u64, i64> {
        use stet_unix::sys::clone::*;
        let slot = (1..MAX_THREADS)
            .find(|&i| self.th.t[i].tid == 0)
            .ok_or(EAGAIN)?;
        // The first thread's domain, by entry, before any switch needs it.
        if !self.th.saved_first {
            if self.th.cur != 0 {
                return Err(EAGAIN);
            }
            self.space.dir_put(DOMAINS, PROC).map_err(|_| ENOMEM)?;
            self.th.saved_first = true;
        }
        if !self.th.status {
            self.th.status = self.install_status().is_ok();
        }
        let tid = ux(proto::TID, [0, 0, 0, 0], &[]).0? as u32;
        match self.make_thread_domain(slot, regs, stack, flags & CLONE_SETTLS != 0, tls) {
            Ok(()) => {}
            Err(e) => {
                let _ = ux(proto::TID, [1, tid as u64, 0, 0], &[]);
                return Err(e);
            }
        }
        let tidb = tid.to_le_bytes();
        if flags & CLONE_PARENT_SETTID != 0 {
            let _ = self.space.write(ptid, &tidb);
        }
        if flags & CLONE_CHILD_SETTID != 0 {
            let _ = self.space.write(ctid, &tidb);
        }
        self.th.t[slot] = Thread {
            tid,
            sigmask: self.sigmask,
            clear_tid: if flags & CLONE_CHILD_CLEARTID != 0 {
                ctid
            } else {
                0
            },
            ..FREE
        };
        self.th.count += 1;
        // Started only now that it is known.
        let started = self.space.dir_get(DOMAINS + slot as u16, T3).map(|_| {
            Msg::new(T3, domain::SET_STATE)
                .words([state::RUNNING, state::FOREIGN as u64, 0, 0])
                .call()
                .ok()
        });
        if started != Ok(true) {
            self.th.t[slot] = FREE;
            self.th.count -= 1;
            let _ = ux(proto::TID, [1, tid as u64, 0, 0], &[]);
            return Err(ENOMEM);
        }
        Ok(tid as u64)
    }

    /// Builds (or, for a slot used before, reuses) thread `slot`'s domain:
    /// the process's space and meter, this keeper with key info `slot`,
    /// the caller's registers and FPU state; stopped.
    fn make_thread_domain(
        &mut self,
        slot: usize,
        regs: &[u64; NREGS],
        stack: u64,
        settls: bool,
        tls: u64,
    ) -> Result<(), i64> {
        let nomem = |_| ENOMEM;
        let entry = DOMAINS + slot as u16;
        let bit = 1u64 << slot;
        // (A failure means not the domain it was: it is made again below.)
        if self.th.configured & bit != 0
            && self.space.dir_get(entry, T3).is_ok()
            && self.set_thread_start(regs, stack, settls, tls).is_ok()
        {
            return Ok(());
        }
        self.th.configured &= !bit;
        if self.space.dir_get(entry, T3).is_err() || !is_domain(T3) {
            // Root, general and annex nodes and an FPU page, as `execve`
            // makes the process's (LEAF is the shadow's cache: forgotten).
            self.space.forget_cache();
            bank::alloc_node(PBANK, T3).map_err(nomem)?;
            bank::alloc_node(PBANK, T).map_err(nomem)?;
            bank::alloc_node(PBANK, T2).map_err(nomem)?;
            bank::alloc_page(PBANK, LEAF).map_err(nomem)?;
            ok(Msg::new(T3, node::MAKE_DOMAIN)
                .keys([T, T2, LEAF, 0])
                .recv([T3, 0, 0, 0])
                .call())?;
            self.space.dir_put(entry, T3).map_err(nomem)?;
            self.space.dir_get(entry, T3).map_err(nomem)?;
        }
        // Its keeper: this keeper, key info `slot`.
        fetch(KEYS, keys::SELF_SPACE, T).map_err(|_| EAGAIN)?;
        fetch(T, SELF_DOMAIN_SLOT, T).map_err(|_| EAGAIN)?;
        ok(Msg::new(T, domain::MAKE_START)
            .w0(slot as u64)
            .recv([T, 0, 0, 0])
            .call())
        .map_err(|_| EAGAIN)?;
        ok(Msg::new(T3, domain::SET_KEEPER).keys([T, 0, 0, 0]).call())?;
        fetch(KEYS, keys::METER, T).map_err(|_| EIO)?;
        ok(Msg::new(T3, domain::SET_METER).keys([T, 0, 0, 0]).call())?;
        ok(Msg::new(PROC, domain::GET_SPACE).recv([T, 0, 0, 0]).call())?;
        ok(Msg::new(T3, domain::SET_SPACE).keys([T, 0, 0, 0]).call())?;
        self.set_thread_start(regs, stack, settls, tls)?;
        self.th.configured |= bit;
        Ok(())
    }

    /// The new thread's FPU state (the caller's) and registers (the
    /// caller's but `rax` 0, `rsp` `stack`, and `fs` `tls` with
    /// `CLONE_SETTLS`), its domain in `T3`.
    fn set_thread_start(
        &mut self,
        regs: &[u64; NREGS],
        stack: u64,
        settls: bool,
        tls: u64,
    ) -> Result<(), i64> {
        let mut fpu = [0u8; 1024];
        let a = Msg::new(PROC, domain::GET_FPU).call_into(&mut fpu);
        let n = (a.w[0] as usize).min(fpu.len());
        if a.ok() {
            let _ = Msg::new(T3, domain::SET_FPU).string(&fpu[..n]).call();
        }
        let mut r = *regs;
        r[Reg::Rax as usize] = 0;
        r[Reg::Rsp as usize] = stack;
        if settls {
            r[Reg::FsBase as usize] = tls;
        }
        let b = crate::bytes_of(&r);
        ok(Msg::new(T3, domain::SET_REGS).string(&b).call())
    }

    /// The current thread ends (`exit`, or a thread killed alone): its
    /// `clear_tid` word is zeroed and woken, its robust futexes released;
    /// the last thread's end is the process's.
    pub fn thread_exit(&mut self, status: u8) -> Next {
        if !self.threaded() {
            return Next::Exit(status);
        }
        let c = self.th.cur;
        let t = self.th.t[c];
        self.release_robust(t.robust, t.tid);
        if t.clear_tid != 0 && self.space.write(t.clear_tid, &0u32.to_le_bytes()).is_ok() {
            let _ = self.futex_wake_any(t.clear_tid, 1);
        }
        self.th.futex.cancel(c as u16);
        let _ = ux(proto::TID, [1, t.tid as u64, 0, 0], &[]);
        // Its domain waits for an answer it never gets; the slot's domain
        // is reused by a later thread (or goes with the process's bank).
        self.th.t[c] = FREE;
        self.th.count -= 1;
        self.th.retry &= !(1 << c);
        if c == 0 {
            // The first thread's domain is the process's: it stays, its
            // call unanswered.
            let _ = Msg::new(PROC, domain::STOP).call();
        }
        Next::Gone
    }

    /// Every thread but the current one ends (`execve`, `exit_group`, a
    /// fatal signal, `fork`'s child): stopped and forgotten.
    pub fn end_other_threads(&mut self) {
        if self.th.count <= 1 {
            return;
        }
        for i in 0..MAX_THREADS {
            if i == self.th.cur || self.th.t[i].tid == 0 {
                continue;
            }
            if self.space.dir_get(DOMAINS + i as u16, T3).is_ok() {
                let _ = Msg::new(T3, domain::STOP).call();
            }
            let _ = ux(proto::TID, [1, self.th.t[i].tid as u64, 0, 0], &[]);
            self.th.t[i] = FREE;
        }
        self.th.count = 1;
        self.th.retry = 0;
        self.th.futex = Queue::new();
    }

    /// After `execve` or in a forked child: the current thread is the
    /// only one, in slot 0, with id `tid` (its domain is in `PROC`).
    pub fn only_thread(&mut self, tid: u32) {
        // Linux too forgets `clear_child_tid` and the robust list here.
        self.th = Threads::one(tid);
    }

    /// The current thread's call must wait (`ERESTARTSYS` from unixd, or
    /// a private futex): its resume key (in `rs`) and registers are kept
    /// until its wait may have ended — the key where it is if no other
    /// blocked thread's is parked (the next fault then arrives in the
    /// other slot), else in the directory.
    pub fn block(&mut self) -> bool {
        let c = self.th.cur;
        if self.parked_slot_of(None).is_none() {
            self.th.parked = Some((self.rs, c, self.th.t[c].tid));
            self.rs = if self.rs == RESUME { RESUME2 } else { RESUME };
        } else if self.space.dir_put(RESUMES + c as u16, self.rs).is_err() {
            return false;
        }
        self.th.t[c].blocked = true;
        true
    }

    /// The slot of the parked resume key, if it is still a blocked
    /// thread's (`Some(t)`: only if it is thread `t`'s).
    fn parked_slot_of(&self, t: Option<usize>) -> Option<stet_rt::key::Slot> {
        let (s, p, tid) = self.th.parked?;
        let th = self.th.t.get(p)?;
        (th.tid == tid && tid != 0 && th.blocked && t.is_none_or(|t| t == p)).then_some(s)
    }

    /// The next blocked thread to run again, now the current one: its
    /// resume key in `rs`, its registers → `None` if none.
    pub fn take_retry(&mut self) -> Option<[u64; NREGS]> {
        while self.th.retry != 0 {
            let t = self.th.retry.trailing_zeros() as usize;
            self.th.retry &= !(1 << t);
            if t >= MAX_THREADS || !self.th.t[t].blocked || !self.switch_to(t) {
                continue;
            }
            // Its registers: its domain's, as at its call (it waits for
            // this keeper's answer).
            let mut b = [0u8; stet_rt::abi::domain::REGS_SIZE];
            if !Msg::new(PROC, domain::GET_REGS).call_into(&mut b).ok() {
                continue;
            }
            // Its resume key becomes the one answered (the call before
            // was answered: `rs` is free).
            if let Some(s) = self.parked_slot_of(Some(t)) {
                self.th.parked = None;
                self.rs = s;
            } else if self.space.dir_get(RESUMES + t as u16, self.rs).is_err() {
                continue;
            }
            self.th.t[t].blocked = false;
            self.th.retrying = true;
            return Some(crate::regs_of(&b));
        }
        None
    }

    /// An answer of unixd that carries ready threads (`proto::CARRIES_READY`).
    pub fn carried_ready(&mut self, a: &stet_rt::key::Answer) {
        if self.threaded() && a.ok() {
            self.th.retry |= a.w[2];
        }
    }

    /// unixd says these threads' waits may have ended.
    pub fn ready(&mut self, mask: u64) {
        self.th.retry |= mask;
    }

    /// Thread `t`, blocked, is answered `rax` now (a futex wake): through
    /// its kept resume key; it leaves the blocked set.
    fn answer_blocked(&mut self, t: usize, rax: u64) {
        if !self.th.t[t].blocked {
            return;
        }
        let parked = self.parked_slot_of(Some(t));
        self.th.t[t].blocked = false;
        self.th.t[t].has_deadline = false;
        let from = match parked {
            Some(s) => {
                self.th.parked = None;
                s
            }
            None if self.space.dir_get(RESUMES + t as u16, T3).is_ok() => T3,
            None => return,
        };
        Msg::new(from, stet_rt::abi::fault::RESUME_SYSCALL)
            .w0(rax)
            .send();
    }

    /// Wakes up to `n` waiters of the private futex at `addr` (any
    /// bitset) → how many.
    pub fn futex_wake_any(&mut self, addr: u64, n: u32) -> u32 {
        self.futex_wake(addr, n, MATCH_ANY).unwrap_or(0)
    }

    /// `FUTEX_WAKE(_BITSET)` of a private futex → how many woke.
    pub fn futex_wake(&mut self, addr: u64, n: u32, bitset: u32) -> Result<u32, i64> {
        let mut woke = [0u16; MAX_THREADS];
        let mut k = 0;
        let r = self.th.futex.wake(addr, n, bitset, |t| {
            woke[k] = t;
            k += 1;
        })?;
        for &t in &woke[..k] {
            self.answer_blocked(t as usize, 0);
        }
        Ok(r)
    }

    /// `FUTEX_REQUEUE`/`CMP_REQUEUE` of private futexes.
    pub fn futex_requeue(&mut self, from: u64, to: u64, nwake: u32, nmove: u32) -> u32 {
        let mut woke = [0u16; MAX_THREADS];
        let mut k = 0;
        let r = self.th.futex.requeue(from, to, nwake, nmove, |t| {
            woke[k] = t;
            k += 1;
        });
        for &t in &woke[..k] {
            self.answer_blocked(t as usize, 0);
        }
        r
    }

    /// `FUTEX_WAIT(_BITSET)` of a private futex in a threaded process, the
    /// word already compared (first run) → `ERESTARTSYS` (the thread
    /// waits), or its end when run again: `ETIMEDOUT`, `EINTR`, or 0.
    pub fn futex_wait_private(
        &mut self,
        addr: u64,
        bitset: u32,
        deadline: u64,
    ) -> Result<u64, i64> {
        let c = self.th.cur as u16;
        let queued = self.th.futex.of(c);
        if self.th.retrying && queued.is_some() {
            let now = crate::calls::now_ns();
            if deadline <= now {
                self.th.futex.cancel(c);
                return Err(ETIMEDOUT);
            }
            if self.interrupted() {
                self.th.futex.cancel(c);
                return Err(EINTR);
            }
        } else {
            if self.interrupted() {
                return Err(EINTR);
            }
            self.th.futex.wait(c, addr, bitset, deadline)?;
        }
        if deadline == u64::MAX && self.th.status {
            // No clock to keep: the status page tells unixd it sleeps,
            // and a signal reaches the idle keeper (`signal_threads`).
            return Err(proto::ERESTARTSYS);
        }
        // Its clock (and a signal's way in): a sleep in unixd for this
        // thread, whose `READY` runs this again.
        let intr = self.interrupting();
        let order = self.tagged(if deadline == u64::MAX {
            proto::PAUSE
        } else {
            proto::SLEEP
        });
        crate::signals::tell_unixd(Msg::new(UNIXD, order).words([deadline, 0, 0, intr]));
        Err(proto::ERESTARTSYS)
    }

    /// A status page for this process image (from its bank, so that it
    /// goes with it) into root slot `STATUS_SLOT` of the keeper's own
    /// space, and a read-only key to it to unixd (`proto::STATUS_PAGE`).
    /// Uses `T`, `T2`.
    fn install_status(&mut self) -> Result<(), i64> {
        use stet_unix::layout::STATUS_SLOT;
        fetch(KEYS, keys::SELF_SPACE, T).map_err(|_| EIO)?;
        bank::alloc_page(PBANK, T2).map_err(|_| ENOMEM)?;
        // (A forked keeper's root came with its parent's page here: it is
        // replaced before anything is written.)
        stet_unix_personality::keydir::swap(T, STATUS_SLOT, T2, 0).map_err(|_| EIO)?;
        ok(Msg::new(T2, stet_rt::abi::order::page::MAKE_RO)
            .recv([T2, 0, 0, 0])
            .call())?;
        let a = Msg::new(UNIXD, proto::STATUS_PAGE)
            .keys([T2, 0, 0, 0])
            .call();
        crate::signals::note(a.w[proto::INTR_WORD]);
        if a.ok() && a.w[0] == 0 {
            self.th.published = 0;
            Ok(())
        } else {
            Err(EIO)
        }
    }

    /// Writes how many threads wait on a private futex into the status
    /// page, if that changed (a plain store: no call).
    pub fn publish_sleepers(&mut self) {
        if !self.th.status {
            return;
        }
        let n = self.th.futex.len();
        if n != self.th.published {
            self.th.published = n;
            status_window().write(proto::STATUS_SLEEPERS, &(n as u64).to_le_bytes());
        }
    }

    /// Process signals handed over with an answer while another thread was
    /// served: a thread waiting on a private futex that takes one runs its
    /// wait again, to end it `EINTR` (it has no wait in unixd that unixd
    /// could end).
    pub fn wake_for_signals(&mut self) {
        let pending = crate::signals::PENDING.load(core::sync::atomic::Ordering::Relaxed);
        if pending == 0 || !self.th.status {
            return;
        }
        for i in 0..MAX_THREADS {
            let th = &self.th.t[i];
            if th.tid == 0 || !th.blocked || self.th.retry & (1 << i) != 0 {
                continue;
            }
            let mask = if i == self.th.cur {
                self.sigmask
            } else {
                th.sigmask
            };
            let takes = pending & (!mask | crate::signals::UNBLOCKABLE) & !self.ignored != 0;
            if takes && self.th.futex.of(i as u16).is_some() {
                self.th.retry |= 1 << i;
            }
        }
    }

    /// At `execve`: the status page says no thread waits (the process
    /// image that had it may be kept for a later `fork`); the new image
    /// makes its own.
    pub fn retire_status(&mut self) {
        if self.th.status && self.th.published != 0 {
            status_window().write(proto::STATUS_SLEEPERS, &0u64.to_le_bytes());
        }
        self.th.status = false;
    }

    /// Robust futexes of a thread that ends (`set_robust_list`): each lock
    /// it holds gets `FUTEX_OWNER_DIED` and one waiter is woken, as Linux's
    /// `exit_robust_list`.
    fn release_robust(&mut self, head: u64, tid: u32) {
        if head == 0 {
            return;
        }
        let mut h = [0u8; 24];
        if self.space.read(head, &mut h).is_err() {
            return;
        }
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
        let offset = word(&h[8..16]) as i64;
        let pending = word(&h[16..24]);
        let mut entry = word(&h[0..8]);
        let mut seen = 0;
        let each = |k: &mut Keeper, e: u64| {
            let addr = (e as i64).wrapping_add(offset) as u64;
            let mut w = [0u8; 4];
            if k.space.read(addr, &mut w).is_err() {
                return;
            }
            let v = u32::from_le_bytes(w);
            if v & 0x3fff_ffff == tid {
                // FUTEX_OWNER_DIED, keeping FUTEX_WAITERS.
                let nv = (v & 0x8000_0000) | 0x4000_0000;
                let _ = k.space.write(addr, &nv.to_le_bytes());
                if v & 0x8000_0000 != 0 {
                    k.futex_wake_any(addr, 1);
                }
            }
        };
        while entry != head && entry != 0 && seen < 2048 {
            let mut n = [0u8; 8];
            if self.space.read(entry & !1, &mut n).is_err() {
                break;
            }
            each(self, entry & !1);
            entry = u64::from_le_bytes(n);
            seen += 1;
        }
        if pending != 0 {
            each(self, pending & !1);
        }
    }

    /// `set_robust_list(head, len)`.
    pub fn set_robust(&mut self, head: u64, len: u64) -> Result<u64, i64> {
        if len != 24 {
            return Err(EINVAL);
        }
        self.th.t[self.th.cur].robust = head;
        Ok(0)
    }

    /// `get_robust_list(pid, head_ptr, len_ptr)`: this process's threads.
    /// Another process's list is its own keeper's: `ESRCH` if there is no
    /// such process, `EPERM` if the caller may not look at it (the rule
    /// of signals), and `EPERM` too when it may (this keeper cannot read
    /// another's state).
    pub fn get_robust(&mut self, pid: u64, head: u64, len: u64) -> Result<u64, i64> {
        let t = if pid == 0 {
            Some(self.th.cur)
        } else {
            (0..MAX_THREADS).find(|&i| self.th.t[i].tid as u64 == pid && pid != 0)
        };
        let Some(t) = t else {
            if pid as i64 <= 0 {
                return Err(ESRCH);
            }
            self.kill(pid as i64, 0)?;
            return Err(EPERM);
        };
        let h = self.th.t[t].robust;
        self.space
            .write(head, &h.to_le_bytes())
            .map_err(Touch::errno)?;
        self.space
            .write(len, &24u64.to_le_bytes())
            .map_err(Touch::errno)?;
        Ok(0)
    }

    /// `tgkill`/`tkill` of one of this process's threads: → `None` if `tid`
    /// is not one of them (unixd routes it).
    pub fn signal_thread(&mut self, tid: u64, sig: u64) -> Option<Result<u64, i64>> {
        let t = (0..MAX_THREADS).find(|&i| self.th.t[i].tid as u64 == tid && tid != 0)?;
        if sig == 0 {
            return Some(Ok(0));
        }
        if sig > 64 {
            return Some(Err(EINVAL));
        }
        let bit = 1u64 << (sig - 1);
        if t == self.th.cur {
            self.tpending |= bit;
        } else {
            self.th.t[t].pending |= bit;
            if self.th.t[t].blocked {
                // Its wait ends (`EINTR`) when it runs again.
                self.th.retry |= 1 << t;
            } else {
                self.signal_other(t);
            }
        }
        Some(Ok(0))
    }

    /// Delivers the pending signals of running thread `t` (not the one
    /// being served) by stopping it and writing its frame.
    fn signal_other(&mut self, t: usize) {
        let c = self.th.cur;
        if !self.switch_to(t) {
            return;
        }
        if let Some(sig) = self.signal_running() {
            self.fatal = Some(sig);
        }
        self.switch_to(c);
    }

    /// unixd handed signals while the keeper was idle: the thread that
    /// takes them (one that does not block them: a waiting one runs its
    /// call again, to end it `EINTR`; else a running one is stopped for
    /// its frame) → the signal that ends the process, if one does.
    pub fn signal_threads(&mut self) -> Option<u8> {
        let pending = crate::signals::PENDING.load(core::sync::atomic::Ordering::Relaxed);
        for i in 0..MAX_THREADS {
            let th = &self.th.t[i];
            if th.tid == 0 {
                continue;
            }
            let mask = if i == self.th.cur {
                self.sigmask
            } else {
                th.sigmask
            };
            let takes = pending & (!mask | crate::signals::UNBLOCKABLE) != 0;
            if !takes {
                continue;
            }
            if th.blocked {
                self.th.retry |= 1 << i;
                return None;
            }
            let c = self.th.cur;
            if !self.switch_to(i) {
                continue;
            }
            let end = self.signal_running();
            self.switch_to(c);
            return end;
        }
        None
    }
}

/// The status page as this keeper sees it (root slot `STATUS_SLOT`).
fn status_window() -> stet_rt::window::Window {
    match stet_rt::window::Window::new(stet_unix::layout::STATUS_SLOT, 4096) {
        Some(w) => w,
        None => unreachable!("STATUS_SLOT is a window slot"),
    }
}

/// Whether the key in `s` is a domain key.
fn is_domain(s: stet_rt::key::Slot) -> bool {
    let a = Msg::new(s, domain::GET_STATE).call();
    a.ok()
}

fn ok(a: stet_rt::key::Answer) -> Result<(), i64> {
    if a.ok() {
        Ok(())
    } else {
        Err(ENOMEM)
    }
}
