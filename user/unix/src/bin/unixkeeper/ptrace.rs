//! `ptrace`: the tracer's requests (relayed by unixd, `proto::TRACE`) and
//! the tracee's stops. This keeper sees every system call and signal of
//! its process, so it is the one that stops it for a tracer: it parks its
//! `TRACE_STOP` in unixd with the registers (as `user_regs_struct`), reads
//! or writes the process's memory when unixd relays a tracer's
//! `PEEK`/`POKE` to it, and goes on with the registers and the signal the
//! tracer gave when resumed (docs/UNIX.md, "Tracing").

use crate::signals::{note, PENDING};
use crate::slots::{PROC, UNIXD};
use crate::Keeper;
use core::sync::atomic::Ordering;
use stet_rt::abi::domain::{Reg, NREGS};
use stet_rt::abi::order::domain;
use stet_rt::key::Msg;
use stet_unix::proto::{self, trace};
use stet_unix::ptrace::{self as pt, req, NUSER_REGS, USER_REGS_SIZE};
use stet_unix::sys::errno::*;
use stet_unix::sys::sig::{SIGKILL, SIGTRAP};

/// How a stop for the tracer ended.
pub enum Stop {
    /// Not traced: nothing happened.
    NotTraced,
    /// Resumed with this signal (0: none) and `proto::trace` flags.
    Resume(u64, u64),
    /// Killed while stopped.
    Killed,
}

const KILL_BIT: u64 = 1 << (SIGKILL - 1);

/// `siginfo_t`'s size.
const SIGINFO: usize = 128;

impl Keeper {
    /// `ptrace(request, pid, addr, data)`: unixd checks and serves it; the
    /// data buffers are this process's.
    pub fn ptrace(&mut self, request: u64, pid: u64, addr: u64, data: u64) -> Result<u64, i64> {
        // A request no Linux has (past 32 bits) is one unixd refuses.
        let request = request.min(0xffff_ffff);
        let mut w = [request | (pid & 0xffff_ffff) << 32, addr, data, KILL_BIT];
        let mut sbuf = [0u8; USER_REGS_SIZE];
        let mut n = 0;
        let want = match request {
            req::SETREGS => USER_REGS_SIZE,
            req::SETSIGINFO => SIGINFO,
            _ => 0,
        };
        if want != 0 {
            w[2] = match self.space.read(data, &mut sbuf[..want]) {
                Ok(()) => {
                    n = want;
                    0
                }
                Err(_) => trace::BAD_BUFFER,
            };
        }
        let mut inb = [0u8; USER_REGS_SIZE];
        let a = Msg::new(UNIXD, proto::TRACE)
            .words(w)
            .string(&sbuf[..n])
            .call_into(&mut inb);
        note(a.w[proto::INTR_WORD]);
        if !a.ok() {
            return Err(EIO);
        }
        let v = a.w[0] as i64;
        if v < 0 {
            return Err(-v);
        }
        let put = |k: &mut Keeper, b: &[u8]| k.space.write(data, b).map(|_| 0).map_err(|_| EFAULT);
        match request {
            req::TRACEME => {
                self.traced = true;
                Ok(0)
            }
            req::PEEKTEXT | req::PEEKDATA | req::PEEKUSER | req::GETEVENTMSG => {
                put(self, &a.w[1].to_le_bytes())
            }
            req::GETREGS => put(self, &inb[..USER_REGS_SIZE.min(a.len)]),
            req::GETSIGINFO => put(self, &inb[..SIGINFO.min(a.len)]),
            _ => Ok(0),
        }
    }

    /// Stops the process for its tracer, if it has one: `why`
    /// (`proto::trace::SIGNAL`…), the signal, the registers and
    /// `orig_rax` (the tracer may change both), until the tracer resumes
    /// it. Meanwhile serves the tracer's memory requests.
    pub fn trace_stop(
        &mut self,
        why: u64,
        sig: u64,
        regs: &mut [u64; NREGS],
        orig: &mut u64,
    ) -> Stop {
        let u = pt::to_user(regs, *orig);
        let mut ub = [0u8; USER_REGS_SIZE];
        for (c, v) in ub.chunks_exact_mut(8).zip(u.iter()) {
            c.copy_from_slice(&v.to_le_bytes());
        }
        let again = [why, sig, 1, KILL_BIT];
        let mut order = proto::TRACE_STOP;
        let mut w = [why, sig, 0, KILL_BIT];
        loop {
            let mut inb = [0u8; USER_REGS_SIZE];
            let s: &[u8] = if order == proto::TRACE_STOP { &ub } else { &[] };
            let a = Msg::new(UNIXD, order)
                .words(w)
                .string(s)
                .call_into(&mut inb);
            note(a.w[proto::INTR_WORD]);
            if (PENDING.load(Ordering::Relaxed) | self.tpending) & KILL_BIT != 0 {
                return Stop::Killed;
            }
            order = proto::TRACE_STOP;
            w = again;
            if !a.ok() {
                // Woken to ask again.
                continue;
            }
            match a.w[0] {
                trace::NOT_TRACED => {
                    self.traced = false;
                    self.trace_sys = false;
                    return Stop::NotTraced;
                }
                trace::RESUME => {
                    self.traced = a.w[2] & trace::DETACHED == 0;
                    self.trace_sys = a.w[2] & trace::SYSCALLS != 0;
                    if self.trace_sys {
                        // The kernel's answers would hide calls from it.
                        self.collect_enosys();
                    }
                    if a.w[2] & trace::REGS != 0 && a.len >= USER_REGS_SIZE {
                        let mut uu = [0u64; NUSER_REGS];
                        for (v, c) in uu.iter_mut().zip(inb.chunks_exact(8)) {
                            *v = u64::from_le_bytes(c.try_into().unwrap_or_default());
                        }
                        if let Ok(o) = pt::from_user(&uu, regs) {
                            *orig = o;
                        }
                    }
                    return Stop::Resume(a.w[1], a.w[2]);
                }
                trace::PEEK => {
                    self.traced = true;
                    let mut b = [0u8; 8];
                    let r = self.space.read(a.w[1], &mut b);
                    order = proto::TRACE_REPLY;
                    w = [
                        if r.is_ok() { 0 } else { (-EIO) as u64 },
                        u64::from_le_bytes(b),
                        0,
                        KILL_BIT,
                    ];
                }
                trace::POKE => {
                    self.traced = true;
                    let r = self.space.write(a.w[1], &a.w[2].to_le_bytes());
                    order = proto::TRACE_REPLY;
                    w = [if r.is_ok() { 0 } else { (-EIO) as u64 }, 0, 0, KILL_BIT];
                }
                // A signal ended the wait (not SIGKILL): stay stopped.
                _ => {}
            }
        }
    }

    /// A signal about to be delivered, shown to the tracer first (Linux's
    /// signal-delivery stop, ignored signals too): → the signal to
    /// deliver instead (0: none), or `Err` when the process was killed.
    pub fn trace_signal(
        &mut self,
        sig: u64,
        regs: &mut [u64; NREGS],
        nr: Option<u64>,
    ) -> Result<u64, u8> {
        let mut orig = nr.unwrap_or(u64::MAX);
        match self.trace_stop(trace::SIGNAL, sig, regs, &mut orig) {
            Stop::NotTraced => Ok(sig),
            Stop::Killed => Err(SIGKILL as u8),
            Stop::Resume(s, _) => Ok(s),
        }
    }

    /// A system call's entry with syscall stops asked for: the tracer sees
    /// it (`rax` `-ENOSYS`, `orig_rax` the number) and may change the call
    /// (`orig_rax`) and its arguments. → `Err` when the process was
    /// killed; `Ok(false)` when the tracer skipped the call (`orig_rax`
    /// -1): `rax` is what it left.
    pub fn trace_entry(&mut self, regs: &mut [u64; NREGS]) -> Result<bool, u8> {
        let rax = Reg::Rax as usize;
        let mut orig = regs[rax];
        regs[rax] = (-ENOSYS) as u64;
        match self.trace_stop(trace::SYSCALL_ENTRY, SIGTRAP, regs, &mut orig) {
            Stop::Killed => return Err(SIGKILL as u8),
            Stop::NotTraced => {}
            Stop::Resume(s, _) => {
                if s != 0 {
                    crate::signals::raise(s);
                }
            }
        }
        if orig as i64 == -1 {
            return Ok(false);
        }
        regs[rax] = orig;
        Ok(true)
    }

    /// A system call's exit with syscall stops asked for (`rax` the
    /// result, which the tracer may change). → `Err` when killed.
    pub fn trace_exit(&mut self, nr: u64, regs: &mut [u64; NREGS]) -> Result<(), u8> {
        let mut orig = nr;
        match self.trace_stop(trace::SYSCALL_EXIT, SIGTRAP, regs, &mut orig) {
            Stop::Killed => Err(SIGKILL as u8),
            Stop::Resume(s, _) if s != 0 => {
                crate::signals::raise(s);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// A traced process's `execve` succeeded: it stops (`SIGTRAP`, or
    /// `PTRACE_EVENT_EXEC`) before the new program goes on. → the signal
    /// that ends it, if one does.
    pub fn trace_exec(&mut self) -> Option<u8> {
        if !self.traced {
            return None;
        }
        let mut b = [0u8; stet_rt::abi::domain::REGS_SIZE];
        Msg::new(PROC, domain::STOP).call();
        let a = Msg::new(PROC, domain::GET_REGS).call_into(&mut b);
        if !a.ok() {
            Msg::new(PROC, domain::START).call();
            return None;
        }
        let mut regs = crate::regs_of(&b);
        let mut orig = stet_unix::sys::nr::EXECVE;
        let r = self.trace_stop(trace::EXEC, SIGTRAP, &mut regs, &mut orig);
        match r {
            Stop::Killed => return Some(SIGKILL as u8),
            Stop::Resume(s, flags) => {
                if s != 0 {
                    crate::signals::raise(s);
                }
                if flags & trace::REGS != 0 {
                    let out = crate::bytes_of(&regs);
                    Msg::new(PROC, domain::SET_REGS).string(&out).call();
                }
            }
            Stop::NotTraced => {}
        }
        Msg::new(PROC, domain::START).call();
        None
    }
}
