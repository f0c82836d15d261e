//! Tracing (`ptrace`): who traces whom, the stops, and the relay between
//! a tracer and its stopped tracee. A tracee's keeper, which sees every
//! system call and signal of its process, stops it by parking its
//! `TRACE_STOP` here with the registers; the tracer's requests are served
//! from that copy (registers, debug registers, `siginfo`) or relayed to
//! the parked keeper (memory: the parked call is answered with the
//! request, the keeper answers with `TRACE_REPLY` and parks again). No
//! step waits on anyone: unixd only answers parked calls (docs/UNIX.md,
//! "Tracing").

use crate::wait::{resume_key, Wait, NO_WAITER};
use crate::{word, Reply, Unixd};
use stet_rt::abi::code::Code;
use stet_rt::key::{Answer, Msg};
use stet_unix::proto::{self as p, trace};
use stet_unix::ptrace::{self as pt, opt, req, UserWord, NUSER_REGS, USER_REGS_SIZE};
use stet_unix::sys::errno::*;
use stet_unix::sys::sig::{SIGCHLD, SIGKILL, SIGSTOP, SIGTRAP};

/// A traced process.
#[derive(Clone, Copy)]
pub(crate) struct Trace {
    /// The tracee (its `Proc::tracer` names the tracer).
    pub(crate) pid: u32,
    /// `PTRACE_O_*`.
    opts: u64,
    /// In a stop, its registers here (its keeper's call parked as
    /// `Wait::Traced`, or serving a relayed request).
    stopped: bool,
    /// The stop not yet seen by the tracer's `wait4` (status >> 8; 0:
    /// none).
    report: u16,
    /// The stop's `si_signo` and `si_code` (`GETSIGINFO`).
    sig: u32,
    code: i32,
    /// `GETEVENTMSG`.
    msg: u64,
    /// The debug registers (kept: the kernel does not arm them).
    dr: [u64; 8],
    /// `user_regs_struct` of the stop.
    regs: [u64; NUSER_REGS],
    /// The tracer changed them.
    changed: bool,
}

const NO_TRACE: Trace = Trace {
    pid: 0,
    opts: 0,
    stopped: false,
    report: 0,
    sig: 0,
    code: 0,
    msg: 0,
    dr: [0; 8],
    regs: [0; NUSER_REGS],
    changed: false,
};

impl Unixd<'_> {
    fn trace_of(&self, pid: u32) -> Option<usize> {
        self.traces.iter().position(|t| t.pid == pid && pid != 0)
    }

    /// The parked `TRACE_STOP` of `pid`, if it is parked.
    fn stop_waiter(&self, pid: u32) -> Option<usize> {
        (0..self.waiters.len())
            .find(|&w| self.waiters[w].on == Wait::Traced && self.waiters[w].pid == pid && pid != 0)
    }

    /// Whether `pid` is parked in a trace stop (its signals wait for its
    /// resume rather than for its busy keeper).
    pub(crate) fn trace_parked(&self, pid: u32) -> bool {
        self.stop_waiter(pid).is_some()
    }

    /// Answers parked call `w` with `words` and the string `s`.
    fn answer_with(&mut self, w: usize, words: [u64; 3], s: &[u8]) {
        let (pid, to) = (self.waiters[w].pid, self.waiters[w].slot);
        let key = resume_key(&self.keys, w, to);
        self.waiters[w] = NO_WAITER;
        let sigs = self.take_pending(pid);
        if let Some(r) = key {
            Msg::new(r, Code::Ok.into())
                .words([words[0], words[1], words[2], sigs])
                .string(s)
                .send();
        }
    }

    /// The tracer of `i` hears of its stop: its waits wake, `SIGCHLD`.
    fn tell_tracer(&mut self, i: usize) {
        let tracer = self.procs[i].tracer;
        for w in 0..self.waiters.len() {
            if self.waiters[w].on == Wait::Child(tracer) {
                self.wake(w);
            }
        }
        if let Some(t) = (0..self.procs.len()).find(|&x| self.procs[x].pid == tracer && tracer != 0)
        {
            self.signal(t, SIGCHLD);
        }
    }

    /// A stop of a tracee of `tracer` its `wait4` may report: `(pid,
    /// status)`, taken unless `keep`.
    pub(crate) fn trace_report(
        &mut self,
        tracer: u32,
        matches: impl Fn(&crate::procs::Proc) -> bool,
        keep: bool,
    ) -> Option<(u32, u64)> {
        for t in 0..self.traces.len() {
            let tr = self.traces[t];
            if tr.pid == 0 || tr.report == 0 {
                continue;
            }
            let Some(i) = self.procs.iter().position(|p| p.pid == tr.pid) else {
                continue;
            };
            let pr = self.procs[i];
            if pr.tracer != tracer || pr.zombie || !matches(&pr) {
                continue;
            }
            if !keep {
                self.traces[t].report = 0;
            }
            return Some((tr.pid, 0x7f | (tr.report as u64) << 8));
        }
        None
    }

    /// Whether `tracer` traces a process `matches` accepts.
    pub(crate) fn traces_any(
        &self,
        tracer: u32,
        matches: impl Fn(&crate::procs::Proc) -> bool,
    ) -> bool {
        self.procs
            .iter()
            .any(|p| p.pid != 0 && p.tracer == tracer && tracer != 0 && !p.zombie && matches(p))
    }

    /// Lets go of tracee `i` (`DETACH`, its tracer's end): it runs on
    /// with signal `sig` if it was parked in a stop.
    fn untrace(&mut self, i: usize, sig: u64) {
        let pid = self.procs[i].pid;
        self.procs[i].tracer = 0;
        let Some(t) = self.trace_of(pid) else {
            return;
        };
        let tr = self.traces[t];
        self.traces[t] = NO_TRACE;
        if let Some(w) = self.stop_waiter(pid) {
            let mut flags = trace::DETACHED;
            if self.procs[i].stopped {
                flags |= trace::STILL_STOPPED;
            }
            let mut b = [0u8; USER_REGS_SIZE];
            if tr.changed {
                flags |= trace::REGS;
                for (c, v) in b.chunks_exact_mut(8).zip(tr.regs.iter()) {
                    c.copy_from_slice(&v.to_le_bytes());
                }
            }
            self.answer_with(w, [trace::RESUME, sig, flags], &b);
        }
    }

    /// Process `pid` ends: as a tracee its tracer's relayed request ends
    /// (`ESRCH`) and its record goes; as a tracer its tracees go free
    /// (killed with `PTRACE_O_EXITKILL`).
    pub(crate) fn trace_exit(&mut self, pid: u32) {
        for w in 0..self.waiters.len() {
            if self.waiters[w].on == Wait::TraceReq(pid) {
                self.answer(w, (-ESRCH) as u64);
            }
        }
        if let Some(t) = self.trace_of(pid) {
            self.traces[t] = NO_TRACE;
        }
        for i in 0..self.procs.len() {
            if self.procs[i].pid == 0 || self.procs[i].tracer != pid || pid == 0 {
                continue;
            }
            let kill = self
                .trace_of(self.procs[i].pid)
                .is_some_and(|t| self.traces[t].opts & opt::EXITKILL != 0);
            self.untrace(i, 0);
            if kill {
                self.signal(i, SIGKILL);
            }
        }
    }

    /// The tracing orders.
    pub(crate) fn trace_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8],
    ) -> Result<Reply, i64> {
        match a.code {
            p::TRACE => self.trace_request(a.label, a.w, s, out),
            p::TRACE_STOP => self.trace_stop(a.label, a.w, s),
            p::TRACE_REPLY => {
                let me = a.label;
                if let Some(w) =
                    (0..self.waiters.len()).find(|&w| self.waiters[w].on == Wait::TraceReq(me))
                {
                    let (pid, to) = (self.waiters[w].pid, self.waiters[w].slot);
                    let key = resume_key(&self.keys, w, to);
                    self.waiters[w] = NO_WAITER;
                    let sigs = self.take_pending(pid);
                    if let Some(r) = key {
                        Msg::new(r, Code::Ok.into())
                            .words([a.w[0], a.w[1], 0, sigs])
                            .send();
                    }
                }
                match self.trace_of(me) {
                    Some(_) => self.park(Wait::Traced),
                    None => word(Ok(trace::NOT_TRACED)),
                }
            }
            _ => Err(ENOSYS),
        }
    }

    /// `TRACE_STOP` from `pid`'s keeper.
    fn trace_stop(&mut self, pid: u32, w: [u64; 4], s: &[u8]) -> Result<Reply, i64> {
        let i = self.proc_of(pid)?;
        let Some(t) = self.trace_of(pid) else {
            return word(Ok(trace::NOT_TRACED));
        };
        if w[2] & 1 == 0 || !self.traces[t].stopped {
            let opts = self.traces[t].opts;
            let tr = &mut self.traces[t];
            tr.regs = [0; NUSER_REGS];
            for (v, c) in tr.regs.iter_mut().zip(s.chunks_exact(8)) {
                *v = u64::from_le_bytes(c.try_into().unwrap_or_default());
            }
            tr.stopped = true;
            tr.changed = false;
            let sig = (w[1] & 0x7f).max(1);
            let (report, code) = match w[0] {
                trace::SYSCALL_ENTRY | trace::SYSCALL_EXIT => {
                    let s = SIGTRAP
                        | if opts & opt::TRACESYSGOOD != 0 {
                            0x80
                        } else {
                            0
                        };
                    (s, s as i32)
                }
                trace::EXEC if opts & opt::TRACEEXEC != 0 => {
                    tr.msg = pid as u64;
                    (
                        SIGTRAP | pt::EVENT_EXEC << 8,
                        SIGTRAP as i32 | (pt::EVENT_EXEC << 8) as i32,
                    )
                }
                trace::EXEC => (SIGTRAP, 0),
                _ => (sig, 0),
            };
            tr.report = report as u16;
            tr.sig = if w[0] == trace::SIGNAL {
                sig as u32
            } else {
                SIGTRAP as u32
            };
            tr.code = code;
            self.tell_tracer(i);
        }
        self.park(Wait::Traced)
    }

    /// `TRACE` from tracer `me`.
    fn trace_request(
        &mut self,
        me: u32,
        w: [u64; 4],
        s: &[u8],
        out: &mut [u8],
    ) -> Result<Reply, i64> {
        let request = w[0] & 0xffff_ffff;
        let pid = (w[0] >> 32) as u32 as i32;
        let (addr, data) = (w[1], w[2]);
        let mi = self.proc_of(me)?;
        if request == req::TRACEME {
            let parent = self.procs[mi].ppid;
            let alive = self
                .procs
                .iter()
                .any(|p| p.pid == parent && parent != 0 && !p.zombie);
            if self.procs[mi].tracer != 0 || !alive {
                return Err(EPERM);
            }
            return self.start_trace(mi, parent, 0);
        }
        if pid <= 0 {
            return Err(ESRCH);
        }
        let pid = pid as u32;
        let i = (0..self.procs.len())
            .find(|&i| self.procs[i].pid == pid)
            .ok_or(ESRCH)?;
        if request == req::ATTACH || request == req::SEIZE {
            if request == req::SEIZE {
                if addr != 0 {
                    return Err(EIO);
                }
                // Linux: unknown options are EIO here (EINVAL for
                // SETOPTIONS); known ones not served, EINVAL.
                if data & !opt::LINUX_MASK != 0 {
                    return Err(EIO);
                }
                if data & !opt::SERVED != 0 {
                    return Err(EINVAL);
                }
            }
            let (mine, theirs) = (self.procs[mi].cred, self.procs[i].cred);
            if pid == me
                || pid == 1
                || self.procs[i].zombie
                || self.procs[i].tracer != 0
                || !pt::may_access(&mine, &theirs)
            {
                return Err(EPERM);
            }
            let r = self.start_trace(i, me, if request == req::SEIZE { data } else { 0 });
            if request == req::ATTACH {
                self.signal(i, SIGSTOP);
                // Stopped by job control: its keeper waits in PAUSE; it
                // stops for the tracer instead.
                if self.procs[i].stopped {
                    if let Some(w) = (0..self.waiters.len())
                        .find(|&w| self.waiters[w].on == Wait::Pause && self.waiters[w].pid == pid)
                    {
                        self.answer_with(w, [0, trace::ATTACHED, 0], &[]);
                    }
                }
            }
            return r;
        }
        if self.procs[i].tracer != me || self.procs[i].zombie {
            return Err(ESRCH);
        }
        let t = self.trace_of(pid).ok_or(ESRCH)?;
        if request == req::KILL {
            self.signal(i, SIGKILL);
            return word(Ok(0));
        }
        let parked = self.stop_waiter(pid);
        let stopped = self.traces[t].stopped;
        // Stopped by job control but not yet for the tracer: what unixd
        // keeps may be asked (debug registers), and it may be let go.
        let job = self.procs[i].stopped;
        let here_only = job
            && match request {
                req::DETACH => true,
                req::PEEKUSER | req::POKEUSER => {
                    !matches!(pt::user_word(addr), Ok(UserWord::Reg(_)))
                }
                _ => false,
            };
        if !stopped && !here_only {
            return Err(ESRCH);
        }
        let tr = &mut self.traces[t];
        match request {
            req::PEEKUSER => {
                let v = match pt::user_word(addr).map_err(|_| EIO)? {
                    UserWord::Reg(r) => tr.regs[r],
                    UserWord::Debug(n) if n == 4 || n == 5 => 0,
                    UserWord::Debug(n) => tr.dr[n],
                    UserWord::Other => 0,
                };
                Ok(Reply::Now([0, v, 0], 0, false))
            }
            req::POKEUSER => {
                match pt::user_word(addr).map_err(|_| EIO)? {
                    UserWord::Reg(r) => {
                        if !pt::reg_ok(r, data) {
                            return Err(EIO);
                        }
                        tr.regs[r] = data;
                        tr.changed = true;
                    }
                    UserWord::Debug(n) => {
                        pt::debugreg_ok(n, data, &tr.dr)?;
                        tr.dr[n] = data;
                    }
                    UserWord::Other => return Err(EIO),
                }
                word(Ok(0))
            }
            req::GETREGS => {
                for (c, v) in out.chunks_exact_mut(8).zip(tr.regs.iter()) {
                    c.copy_from_slice(&v.to_le_bytes());
                }
                Ok(Reply::Now([0, 0, 0], USER_REGS_SIZE, false))
            }
            req::SETREGS => {
                if data == trace::BAD_BUFFER || s.len() < USER_REGS_SIZE {
                    return Err(EFAULT);
                }
                let mut u = [0u64; NUSER_REGS];
                for (v, c) in u.iter_mut().zip(s.chunks_exact(8)) {
                    *v = u64::from_le_bytes(c.try_into().unwrap_or_default());
                }
                if !(0..NUSER_REGS).all(|r| pt::reg_ok(r, u[r])) {
                    return Err(EIO);
                }
                tr.regs = u;
                tr.changed = true;
                word(Ok(0))
            }
            req::GETSIGINFO => {
                let n = 128.min(out.len());
                out[..n].fill(0);
                out[..4].copy_from_slice(&tr.sig.to_le_bytes());
                out[8..12].copy_from_slice(&tr.code.to_le_bytes());
                Ok(Reply::Now([0, 0, 0], n, false))
            }
            req::SETSIGINFO => {
                if data == trace::BAD_BUFFER || s.len() < 128 {
                    return Err(EFAULT);
                }
                tr.sig = u32::from_le_bytes(s[..4].try_into().unwrap_or_default());
                tr.code = i32::from_le_bytes(s[8..12].try_into().unwrap_or_default());
                word(Ok(0))
            }
            req::SETOPTIONS => {
                if data & !opt::LINUX_MASK != 0 || data & !opt::SERVED != 0 {
                    return Err(EINVAL);
                }
                tr.opts = data;
                word(Ok(0))
            }
            req::GETEVENTMSG => Ok(Reply::Now([0, tr.msg, 0], 0, false)),
            req::PEEKTEXT | req::PEEKDATA | req::POKETEXT | req::POKEDATA => {
                let Some(w) = parked else {
                    // Its keeper is serving another request.
                    return Err(ESRCH);
                };
                let what = if request == req::PEEKTEXT || request == req::PEEKDATA {
                    trace::PEEK
                } else {
                    trace::POKE
                };
                self.answer_with(w, [what, addr, data], &[]);
                self.park(Wait::TraceReq(pid))
            }
            req::CONT | req::SYSCALL | req::DETACH => {
                // Linux: a signal number past 64 is EIO.
                if data > 64 {
                    return Err(EIO);
                }
                if request == req::DETACH {
                    self.untrace(i, data);
                    return word(Ok(0));
                }
                let Some(w) = parked else {
                    return Err(ESRCH);
                };
                let mut flags = if request == req::SYSCALL {
                    trace::SYSCALLS
                } else {
                    0
                };
                let mut b = [0u8; USER_REGS_SIZE];
                if tr.changed {
                    flags |= trace::REGS;
                    for (c, v) in b.chunks_exact_mut(8).zip(tr.regs.iter()) {
                        c.copy_from_slice(&v.to_le_bytes());
                    }
                }
                tr.stopped = false;
                tr.report = 0;
                tr.changed = false;
                // A tracee the tracer lets go on runs, stopped by job
                // control or not (Linux).
                self.procs[i].stopped = false;
                self.answer_with(w, [trace::RESUME, data, flags], &b);
                word(Ok(0))
            }
            _ => Err(EIO),
        }
    }

    /// Process `i` is traced by `tracer` from now on.
    fn start_trace(&mut self, i: usize, tracer: u32, opts: u64) -> Result<Reply, i64> {
        let t = crate::table::take(&mut self.traces, |t| t.pid == 0, NO_TRACE).ok_or(EAGAIN)?;
        self.traces[t] = Trace {
            pid: self.procs[i].pid,
            opts,
            ..NO_TRACE
        };
        self.procs[i].tracer = tracer;
        word(Ok(0))
    }
}
