//! Signals: the keeper keeps the process's actions, mask and pending set,
//! and delivers a signal by building Linux's `rt_sigframe` on the
//! process's stack and pointing it at the handler (`rt_sigreturn` takes the
//! frame back). Signals from other processes come through unixd: with the
//! answer to any call (`w3`), or as a `SIGNAL` message when this keeper is
//! idle, in which case the running process is stopped, redirected and
//! started again.

use crate::slots::{PROC, UNIXD};
use crate::space::Touch;
use crate::Keeper;
use core::sync::atomic::{AtomicU64, Ordering};
use stet_rt::abi::domain::{Reg, NREGS};
use stet_rt::abi::order::domain;
use stet_rt::key::Msg;
use stet_unix::proto;
use stet_unix::sys::errno::*;
use stet_unix::sys::rlimit::RLIMIT_SIGPENDING;
use stet_unix::sys::sig::*;

/// Signals sent to the process and not yet delivered (unixd's answers add
/// to it wherever they arrive).
pub static PENDING: AtomicU64 = AtomicU64::new(0);

/// Makes signal `sig` pending for the process itself.
pub fn raise(sig: u64) {
    PENDING.fetch_or(1 << (sig - 1), Ordering::Relaxed);
}

/// Records signals unixd handed over with an answer.
pub fn note(sigs: u64) {
    if sigs != 0 {
        PENDING.fetch_or(sigs, Ordering::Relaxed);
    }
}

/// Sends `m` to unixd and keeps the signals its answer carries (`w3`):
/// for the calls whose answer is otherwise not looked at (a `CLOSE`, a
/// thread's parked wait), which would lose them — unixd hands each signal
/// over once.
pub fn tell_unixd(m: Msg) {
    let a = m.call();
    if a.code == stet_rt::abi::code::Code::Ok {
        note(a.w[proto::INTR_WORD]);
    }
}

/// `SIGKILL` and `SIGSTOP` cannot be caught, blocked or ignored.
pub const UNBLOCKABLE: u64 = 1 << (SIGKILL - 1) | 1 << (SIGSTOP - 1);

/// What a signal's default action is.
enum Default {
    Ignore,
    Terminate,
    /// Job control: the process stops until `SIGCONT` (`job_stop`).
    Stop,
}

/// Whether handler `h` ignores signal `sig` (never `SIGKILL`, `SIGSTOP`).
fn ignores(sig: u64, h: u64) -> bool {
    UNBLOCKABLE & (1 << (sig - 1)) == 0
        && (h == SIG_IGN || (h == SIG_DFL && matches!(default_of(sig), Default::Ignore)))
}

/// The signals ignored while every action is `SIG_DFL`.
pub const fn ignored_by_default() -> u64 {
    let mut m = 0;
    let mut sig = 1;
    while sig <= NSIG {
        if UNBLOCKABLE & (1 << (sig - 1)) == 0 && matches!(default_of(sig), Default::Ignore) {
            m |= 1 << (sig - 1);
        }
        sig += 1;
    }
    m
}

const fn default_of(sig: u64) -> Default {
    match sig {
        SIGCHLD | SIGCONT | SIGURG | SIGWINCH => Default::Ignore,
        SIGSTOP | SIGTSTP | SIGTTIN | SIGTTOU => Default::Stop,
        _ => Default::Terminate,
    }
}

/// Bytes of the frame: `pretcode`, `ucontext` (304), `siginfo` (128).
const FRAME: u64 = 8 + 304 + 128;
/// Offsets in the frame.
const UC: u64 = 8;
const MCONTEXT: u64 = UC + 40;
const SIGMASK: u64 = UC + 296;
const INFO: u64 = UC + 304;
/// `sigcontext`'s registers in order, as `Reg` indices.
const SIGCONTEXT: [Reg; 18] = [
    Reg::R8,
    Reg::R9,
    Reg::R10,
    Reg::R11,
    Reg::R12,
    Reg::R13,
    Reg::R14,
    Reg::R15,
    Reg::Rdi,
    Reg::Rsi,
    Reg::Rbp,
    Reg::Rbx,
    Reg::Rdx,
    Reg::Rax,
    Reg::Rcx,
    Reg::Rsp,
    Reg::Rip,
    Reg::Rflags,
];

impl Keeper {
    fn action(&self, sig: u64) -> (u64, u64, u64, u64) {
        let a = &self.actions[sig as usize - 1];
        let w = |i: usize| u64::from_le_bytes(a[i * 8..i * 8 + 8].try_into().unwrap_or_default());
        (w(0), w(1), w(2), w(3))
    }

    /// Sets the action of signal `i + 1`.
    pub fn set_action(&mut self, i: usize, a: [u8; 32]) {
        self.actions[i] = a;
        let h = u64::from_le_bytes(a[..8].try_into().unwrap_or_default());
        let bit = 1u64 << i;
        if ignores(i as u64 + 1, h) {
            self.ignored |= bit;
        } else {
            self.ignored &= !bit;
        }
    }

    /// The signals that end a parked call now: neither blocked nor ignored.
    pub fn interrupting(&self) -> u64 {
        (!self.sigmask | UNBLOCKABLE) & !self.ignored
    }

    /// Whether a signal already handed to this keeper ends a wait now (a
    /// call that would park answers `EINTR` instead).
    pub fn interrupted(&self) -> bool {
        (PENDING.load(Ordering::Relaxed) | self.tpending) & self.interrupting() != 0
    }

    /// Delivers the first deliverable pending signal into `regs` (the
    /// registers the process resumes with). `nr` is the system call just
    /// answered, for `SA_RESTART` after `-EINTR`. → the signal that ends
    /// the process, if one does.
    pub fn deliver(&mut self, regs: &mut [u64; NREGS], nr: Option<u64>) -> Option<u8> {
        let mut stopped = false;
        loop {
            let pending = PENDING.load(Ordering::Relaxed) | self.tpending;
            let ready = pending & (!self.sigmask | UNBLOCKABLE);
            if ready == 0 {
                // A call a stop interrupted, with no handler run after:
                // it starts again (Linux restarts it transparently).
                if let Some(n) = nr {
                    if stopped && regs[Reg::Rax as usize] as i64 == -EINTR {
                        regs[Reg::Rax as usize] = n;
                        regs[Reg::Rip as usize] -= 2;
                    }
                }
                return None;
            }
            let sig = ready.trailing_zeros() as u64 + 1;
            // The thread's own first (`tgkill`), else the process's.
            if self.tpending & (1 << (sig - 1)) != 0 {
                self.tpending &= !(1 << (sig - 1));
            } else {
                PENDING.fetch_and(!(1 << (sig - 1)), Ordering::Relaxed);
            }
            // A tracer sees it first, and says what is delivered.
            let sig = if sig == SIGKILL {
                sig
            } else {
                match self.trace_signal(sig, regs, nr) {
                    Err(end) => return Some(end),
                    Ok(0) => continue,
                    Ok(s) if s != sig && self.sigmask & (1 << (s - 1)) & !UNBLOCKABLE != 0 => {
                        // Blocked: pending until unblocked (not shown again
                        // now: it is not ready).
                        raise(s);
                        continue;
                    }
                    Ok(s) => s,
                }
            };
            let (handler, flags, restorer, mask) = self.action(sig);
            if sig == SIGKILL || sig == SIGSTOP || handler == SIG_DFL {
                match default_of(sig) {
                    Default::Ignore if sig != SIGKILL => continue,
                    Default::Stop if sig != SIGKILL => {
                        if let Some(end) = self.job_stop(sig, regs) {
                            return Some(end);
                        }
                        stopped = true;
                        continue;
                    }
                    _ => return Some(sig as u8),
                }
            }
            if handler == SIG_IGN {
                continue;
            }
            if flags & SA_RESTORER == 0 {
                // No way back from the handler: Linux would fault at
                // return; end the process as the signal's default would.
                return Some(sig as u8);
            }
            // A call interrupted by this signal starts again after it.
            let mut saved = *regs;
            if let Some(n) = nr {
                // Waits for time or for a signal itself always answer
                // EINTR (Linux's ERESTARTNOHAND).
                use stet_unix::sys::nr::*;
                let never = matches!(
                    n,
                    PAUSE
                        | RT_SIGSUSPEND
                        | NANOSLEEP
                        | CLOCK_NANOSLEEP
                        | POLL
                        | PPOLL
                        | SELECT
                        | PSELECT6
                        | EPOLL_WAIT
                        | EPOLL_PWAIT
                        | EPOLL_PWAIT2
                ) || stet_unix::sysv::never_restarted(n);
                if regs[Reg::Rax as usize] as i64 == -EINTR && flags & SA_RESTART != 0 && !never {
                    saved[Reg::Rax as usize] = n;
                    saved[Reg::Rip as usize] -= 2;
                }
            }
            let onstack = flags & stet_unix::sys::sig::SA_ONSTACK != 0;
            // A handler that reads its siginfo learns who sent it.
            self.siginfo_wanted = flags & stet_unix::sys::sig::SA_SIGINFO != 0;
            match self.push_frame(&saved, sig, restorer, onstack) {
                Ok(frame) => {
                    regs[Reg::Rsp as usize] = frame;
                    regs[Reg::Rip as usize] = handler;
                    regs[Reg::Rdi as usize] = sig;
                    regs[Reg::Rsi as usize] = frame + INFO;
                    regs[Reg::Rdx as usize] = frame + UC;
                    // The siginfo and context arguments are passed with or
                    // without SA_SIGINFO: a plain handler ignores them.
                    regs[Reg::Rax as usize] = 0;
                    self.sigmask |= mask;
                    if flags & SA_NODEFER == 0 {
                        self.sigmask |= 1 << (sig - 1);
                    }
                    self.sigmask &= !UNBLOCKABLE;
                    if flags & SA_RESETHAND != 0 {
                        // Only the handler goes back to SIG_DFL; the
                        // flags (SA_SIGINFO…) and mask stay (Linux).
                        let mut a = self.actions[sig as usize - 1];
                        a[..8].copy_from_slice(&SIG_DFL.to_le_bytes());
                        self.set_action(sig as usize - 1, a);
                    }
                    return None;
                }
                // No room on the stack: Linux kills with SIGSEGV.
                Err(_) => return Some(SIGSEGV as u8),
            }
        }
    }

    /// Stops the process for `sig` (job control): unixd tells the parent
    /// (`JOBCTL`), and this keeper waits in unixd until `SIGCONT` or
    /// `SIGKILL` comes (other signals stay pending). → `SIGKILL` if that
    /// ended the stop.
    fn job_stop(&mut self, sig: u64, regs: &mut [u64; NREGS]) -> Option<u8> {
        let a = Msg::new(UNIXD, proto::JOBCTL).w0(sig).call();
        note(a.w[proto::INTR_WORD]);
        let cont = 1u64 << (SIGCONT - 1);
        let kill = 1u64 << (SIGKILL - 1);
        loop {
            let p = PENDING.load(Ordering::Relaxed) | self.tpending;
            if p & kill != 0 {
                return Some(SIGKILL as u8);
            }
            if p & cont != 0 {
                // Continued; SIGCONT itself is delivered as any signal.
                return None;
            }
            let a = Msg::new(UNIXD, proto::PAUSE)
                .words([0, 0, 0, cont | kill])
                .call();
            note(a.w[proto::INTR_WORD]);
            if a.ok() && a.w[0] == 0 && a.w[1] == proto::trace::ATTACHED {
                // A tracer attached: the stop is shown to it; its resume
                // goes on unless the process stays stopped (`DETACH`).
                PENDING.fetch_and(!(1 << (SIGSTOP - 1)), Ordering::Relaxed);
                let mut orig = u64::MAX;
                match self.trace_stop(proto::trace::SIGNAL, SIGSTOP, regs, &mut orig) {
                    crate::ptrace::Stop::Killed => return Some(SIGKILL as u8),
                    crate::ptrace::Stop::Resume(s, f) if f & proto::trace::STILL_STOPPED == 0 => {
                        if s != 0 {
                            raise(s);
                        }
                        return None;
                    }
                    _ => {}
                }
            }
        }
    }

    /// Writes the frame (and the FPU state below it) → its address.
    fn push_frame(
        &mut self,
        r: &[u64; NREGS],
        sig: u64,
        restorer: u64,
        onstack: bool,
    ) -> Result<u64, Touch> {
        let mut fpu = [0u8; 1024];
        Msg::new(PROC, domain::GET_FPU).call_into(&mut fpu);
        let rsp = r[Reg::Rsp as usize];
        // `SA_ONSTACK` with an alternate stack set and not on it yet: the
        // frame goes at its top (no red zone there).
        let (alt_base, alt_size, alt_flags) = self.th.t[self.th.cur].altstack;
        let switch = onstack && alt_size != 0 && !self.on_altstack(rsp);
        let sp = if switch {
            alt_base + alt_size
        } else {
            rsp.wrapping_sub(128)
        };
        let fpstate = (sp - 1024) & !63;
        let frame = ((fpstate - FRAME) & !15) - 8;
        let mut f = [0u8; FRAME as usize];
        let mut put =
            |off: u64, v: u64| f[off as usize..off as usize + 8].copy_from_slice(&v.to_le_bytes());
        put(0, restorer);
        // uc_stack: the alternate stack as it was (SS_DISABLE if none).
        if alt_size == 0 {
            put(UC + 16, 0);
            put(UC + 24, 2);
        } else {
            put(UC + 16, alt_base);
            put(UC + 24, if self.on_altstack(rsp) { 1 } else { alt_flags });
            put(UC + 32, alt_size);
        }
        for (i, reg) in SIGCONTEXT.iter().enumerate() {
            put(MCONTEXT + 8 * i as u64, r[*reg as usize]);
        }
        put(MCONTEXT + 144, 0x33); // cs
                                   // The mask to restore: the one before sigsuspend, if it set one.
        let old = self.suspend_mask.take().unwrap_or(self.sigmask);
        put(MCONTEXT + 168, old); // oldmask
        put(MCONTEXT + 184, fpstate);
        put(SIGMASK, old);
        // A queued signal says what its sender said (`rt_sigqueueinfo`);
        // one sent by `kill` who sent it (`SI_USER`, `si_pid`, `si_uid`).
        if let Some([code, uid, value]) = self.take_queued_si(sig) {
            put(INFO + 8, code as u32 as u64);
            put(INFO + 16, code >> 32 | uid << 32);
            put(INFO + 24, value);
        } else if core::mem::take(&mut self.siginfo_wanted) {
            let (pid, uid) = sig_sender(sig);
            put(INFO + 16, pid | uid << 32);
        }
        // A fault's signal says why and where (`si_code`, `si_addr`).
        if self.fault_si.0 == sig {
            let (_, code, addr) = core::mem::take(&mut self.fault_si);
            put(INFO + 8, code);
            put(INFO + 16, addr);
        }
        f[INFO as usize..INFO as usize + 4].copy_from_slice(&(sig as u32).to_le_bytes());
        self.space.write(fpstate, &fpu)?;
        self.space.write(frame, &f)?;
        Ok(frame)
    }

    /// `rt_sigreturn`: the registers, mask and FPU state the frame at
    /// `rsp - 8` saved.
    pub fn sigreturn(&mut self, regs: &mut [u64; NREGS]) -> Result<(), u8> {
        let frame = regs[Reg::Rsp as usize].wrapping_sub(8);
        let mut f = [0u8; FRAME as usize];
        self.space.read(frame, &mut f).map_err(|_| 11u8)?;
        let get = |off: u64| {
            u64::from_le_bytes(
                f[off as usize..off as usize + 8]
                    .try_into()
                    .unwrap_or_default(),
            )
        };
        for (i, reg) in SIGCONTEXT.iter().enumerate() {
            regs[*reg as usize] = get(MCONTEXT + 8 * i as u64);
        }
        self.sigmask = get(SIGMASK) & !UNBLOCKABLE;
        // A forged frame: a `rip` in the upper half (or not canonical)
        // cannot be returned to; Linux's return faults and the process
        // gets SIGSEGV, which the kernel here would refuse to resume.
        if regs[Reg::Rip as usize] >= 1 << 47 {
            return Err(11);
        }
        let fpstate = get(MCONTEXT + 184);
        if fpstate != 0 {
            let mut fpu = [0u8; 1024];
            self.space.read(fpstate, &mut fpu).map_err(|_| 11u8)?;
            // A save area that would not load (reserved bits): SIGSEGV,
            // as Linux's `restore_fpregs` gives.
            if !Msg::new(PROC, domain::SET_FPU).string(&fpu).call().ok() {
                return Err(11);
            }
        }
        Ok(())
    }

    /// `kill`, `tkill`, `tgkill`: to itself directly, to others via unixd.
    pub fn kill(&mut self, pid: i64, sig: u64) -> Result<u64, i64> {
        if sig > 64 {
            return Err(EINVAL);
        }
        // A thread id of this process names the process (Linux).
        let own_thread = pid > 0 && self.th.t.iter().any(|t| t.tid != 0 && t.tid as i64 == pid);
        if pid == self.pid as i64 || own_thread {
            if sig != 0 {
                // Its siginfo names this process (`SI_USER`), unless a
                // queued one says more.
                let bit = 1u64 << (sig - 1);
                if self.queued_si_mask & bit == 0 {
                    let uid = self.cred.uid[stet_unix::cred::REAL] as u64;
                    self.queued_si[sig as usize - 1] = [self.pid << 32, uid, 0];
                    self.queued_si_mask |= bit;
                }
                PENDING.fetch_or(1 << (sig - 1), Ordering::Relaxed);
                // A thread that blocks it leaves it to one that does not.
                if self.threaded() && self.sigmask & (1 << (sig - 1)) != 0 {
                    if let Some(s) = self.signal_threads() {
                        self.fatal = Some(s);
                    }
                }
            }
            return Ok(0);
        }
        let a = Msg::new(UNIXD, self.tagged(proto::KILL))
            .words([pid as u64, sig, 0, 0])
            .call();
        note(a.w[3]);
        self.carried_ready(&a);
        let v = a.w[0] as i64;
        if v < 0 {
            Err(-v)
        } else {
            Ok(0)
        }
    }

    /// `rt_sigtimedwait(set, info, timeout, size)` (`sigwaitinfo`,
    /// `sigtimedwait`, `sigwait`): takes a pending signal of `set` without
    /// running its handler, waiting (the set unblocked for the wait) until
    /// one comes, the timeout passes (`EAGAIN`) or another signal is
    /// handled (`EINTR`).
    pub fn sigtimedwait(
        &mut self,
        set: u64,
        info: u64,
        timeout: u64,
        size: u64,
    ) -> Result<u64, i64> {
        if size != 8 {
            return Err(EINVAL);
        }
        let mut b = [0u8; 8];
        self.space.read(set, &mut b).map_err(Touch::errno)?;
        let set = u64::from_le_bytes(b) & !UNBLOCKABLE;
        let deadline = if timeout == 0 {
            u64::MAX
        } else {
            let mut t = [0u8; 16];
            self.space.read(timeout, &mut t).map_err(Touch::errno)?;
            let s = i64::from_le_bytes(t[..8].try_into().unwrap_or_default());
            let ns = i64::from_le_bytes(t[8..].try_into().unwrap_or_default());
            if s < 0 || !(0..1_000_000_000).contains(&ns) {
                return Err(EINVAL);
            }
            crate::calls::now_ns()
                .saturating_add((s as u64).saturating_mul(1_000_000_000))
                .saturating_add(ns as u64)
        };
        loop {
            let pending = PENDING.load(Ordering::Relaxed) | self.tpending;
            if pending & set != 0 {
                let sig = (pending & set).trailing_zeros() as u64 + 1;
                let bit = 1u64 << (sig - 1);
                if self.tpending & bit != 0 {
                    self.tpending &= !bit;
                } else {
                    PENDING.fetch_and(!bit, Ordering::Relaxed);
                }
                if info != 0 {
                    // si_signo; si_errno and si_code (SI_USER) 0; who
                    // sent it (`kill`: unixd kept it), or what
                    // rt_sigqueueinfo to itself said.
                    let mut si = [0u8; 128];
                    si[..4].copy_from_slice(&(sig as u32).to_le_bytes());
                    if let Some([code, uid, value]) = self.take_queued_si(sig) {
                        si[8..12].copy_from_slice(&(code as u32).to_le_bytes());
                        si[16..20].copy_from_slice(&((code >> 32) as u32).to_le_bytes());
                        si[20..24].copy_from_slice(&(uid as u32).to_le_bytes());
                        si[24..32].copy_from_slice(&value.to_le_bytes());
                    } else {
                        let (pid, uid) = sig_sender(sig);
                        si[16..20].copy_from_slice(&(pid as u32).to_le_bytes());
                        si[20..24].copy_from_slice(&(uid as u32).to_le_bytes());
                    }
                    self.space.write(info, &si).map_err(Touch::errno)?;
                }
                return Ok(sig);
            }
            if self.interrupted() {
                return Err(EINTR);
            }
            if crate::calls::now_ns() >= deadline {
                return Err(EAGAIN);
            }
            match self.wait_until_for(deadline, set) {
                Ok(_) | Err(EINTR) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// `rt_sigqueueinfo(tgid, sig, info)` and `rt_tgsigqueueinfo(tgid,
    /// tid, sig, info)`: as `kill` and `tgkill`, with Linux's rule that
    /// only a negative `si_code` other than `SI_TKILL` (what `sigqueue`
    /// sends) may be sent to another process (`EPERM`). The `siginfo`
    /// itself is not carried: the receiver sees the signal alone.
    pub fn sigqueueinfo(
        &mut self,
        tgid: u64,
        tid: Option<u64>,
        sig: u64,
        info: u64,
    ) -> Result<u64, i64> {
        let mut si = [0u8; 128];
        self.space.read(info, &mut si).map_err(Touch::errno)?;
        let code = i32::from_le_bytes(si[8..12].try_into().unwrap_or_default());
        const SI_TKILL: i32 = -6;
        let own = tgid == self.pid && tid.is_none_or(|t| t == self.tid());
        if (code >= 0 || code == SI_TKILL) && !own {
            return Err(EPERM);
        }
        // To this process (or one of its threads, which names it): what
        // the sender said goes with the signal to its handler.
        let mine = match tid {
            None => {
                tgid == self.pid || self.th.t.iter().any(|t| t.tid != 0 && t.tid as u64 == tgid)
            }
            Some(t) => {
                tgid == self.pid && self.th.t.iter().any(|x| x.tid != 0 && x.tid as u64 == t)
            }
        };
        let sig = sig as u32 as u64;
        if mine && (1..=64).contains(&sig) {
            if sig >= 32 && self.rlimits[RLIMIT_SIGPENDING as usize][0] == 0 {
                // No room to queue a real-time signal (Linux: EAGAIN).
                return Err(EAGAIN);
            }
            let w =
                |o: usize| u32::from_le_bytes(si[o..o + 4].try_into().unwrap_or_default()) as u64;
            let value = u64::from_le_bytes(si[24..32].try_into().unwrap_or_default());
            self.queued_si[sig as usize - 1] = [code as u32 as u64 | w(16) << 32, w(20), value];
            self.queued_si_mask |= 1 << (sig - 1);
            return match tid {
                None => self.kill(self.pid as i64, sig),
                Some(t) => self.signal_thread(t, sig).unwrap_or(Err(ESRCH)),
            };
        }
        match tid {
            // One process only: 0 and the negative ids that `kill` takes
            // for groups name none here (Linux: ESRCH).
            None if (tgid as i64) <= 0 => Err(ESRCH),
            None => self.kill(tgid as i64, sig as u32 as u64),
            Some(t) => {
                if (tgid as i64) <= 0 || (t as i64) <= 0 {
                    return Err(EINVAL);
                }
                self.tgkill(tgid, t, sig as u32 as u64)
            }
        }
    }

    /// `tgkill(tgid, tid, sig)`: to a thread of this process, or to
    /// another process's first thread (whose thread id is its pid);
    /// another's other threads are `ESRCH`.
    pub fn tgkill(&mut self, tgid: u64, tid: u64, sig: u64) -> Result<u64, i64> {
        if sig > 64 {
            return Err(EINVAL);
        }
        if tgid == self.pid {
            // A real-time signal needs room in the queue: none with
            // RLIMIT_SIGPENDING 0 (Linux: EAGAIN).
            if sig >= 32 && self.rlimits[RLIMIT_SIGPENDING as usize][0] == 0 {
                return Err(EAGAIN);
            }
            return self.signal_thread(tid, sig).unwrap_or(Err(ESRCH));
        }
        if tgid != tid {
            return Err(ESRCH);
        }
        self.kill(tid as i64, sig)
    }

    /// What `rt_sigqueueinfo` said with signal `sig`, taken.
    fn take_queued_si(&mut self, sig: u64) -> Option<[u64; 3]> {
        let bit = 1u64 << (sig - 1);
        if self.queued_si_mask & bit == 0 {
            return None;
        }
        self.queued_si_mask &= !bit;
        Some(self.queued_si[sig as usize - 1])
    }

    /// A `SIGNAL` message while the process runs: stop it, deliver, start
    /// it. → the signal that ends it, if one does.
    pub fn signal_running(&mut self) -> Option<u8> {
        let mut b = [0u8; 160];
        Msg::new(PROC, domain::STOP).call();
        let a = Msg::new(PROC, domain::GET_REGS).call_into(&mut b);
        if !a.ok() {
            return None;
        }
        let mut regs = crate::regs_of(&b);
        let end = self.deliver(&mut regs, None);
        if end.is_none() {
            let out = crate::bytes_of(&regs);
            Msg::new(PROC, domain::SET_REGS).string(&out).call();
            Msg::new(PROC, domain::START).call();
        }
        end
    }
}

/// Who sent this process signal `sig` by `kill` (unixd keeps it:
/// `proto::SIG_SENDER`) → (pid, real uid); (0, 0) if unixd kept none
/// (a signal of the system's own: a timer's, a child's end).
fn sig_sender(sig: u64) -> (u64, u64) {
    let a = Msg::new(UNIXD, proto::SIG_SENDER).w0(sig).call();
    note(a.w[proto::INTR_WORD]);
    if a.ok() {
        (a.w[0] as u32 as u64, a.w[1] as u32 as u64)
    } else {
        (0, 0)
    }
}
