//! The reincarnation service (MINIX 3's reincarnation server, built from
//! keys): starts each registered service from its factory, publishes its
//! start key in the data store, and watches it —
//!
//! * **crashes**: every service's domain keeper is a start key to this
//!   domain whose key info is the service's index, so a fault arrives here
//!   as a message naming the service;
//! * **exits**: a service that ends traps with `int3` (`stet_rt::service`),
//!   which arrives the same way (exception 3);
//! * **hangs**: on every tick of its timer domain it reads each service's
//!   run state through its domain key (prompt: it never waits on a
//!   service) and sends a heartbeat (`PING`, a *send*, only when the
//!   service is available, so it never stalls); a service that has not been
//!   available again within the timeout is hung;
//!
//! and replaces it by its policy (`stet-supervise`: restart or hold,
//! exponential back-off, a restart-rate cap), logging every event. Each
//! incarnation's objects come from its own sub-bank, so killing one is
//! destroying that bank. Orders: `stet_abi::service::rs` (docs/ABI.md).
//!
//! Argument 0: the service. Keys: 1 console, 2 sleep, 3 discrim, 4 a bank,
//! 5 the data store (publisher), 6 its own domain key (to make keeper
//! keys), 7 the meter for services. Argument 1: its timer — keys 1
//! console, 2 sleep, 3 a start key to the service (key info `TIMER`).
#![no_std]
#![no_main]

use stet_rt::abi::domain::{Reg, REGS_SIZE};
use stet_rt::abi::order::{domain, node};
use stet_rt::abi::service::factory as fo;
use stet_rt::abi::service::rs::{self as o, state};
use stet_rt::abi::service::store as so;
use stet_rt::abi::{code::Code, fault};
use stet_rt::kernel::{now_ns, sleep_until};
use stet_rt::key::{wait, Msg, Slot};
use stet_rt::{bank, println};
use stet_supervise::{Decision, Failure, Policy, Record};

const BANK: Slot = 4;
const STORE: Slot = 5;
const SELF: Slot = 6;
const METER: Slot = 7;
const RESUME: Slot = 8;
const ARG0: Slot = 9;
const DIR: Slot = 10;
const SVC: Slot = 11;
const T1: Slot = 12;
const T2: Slot = 13;
const T3: Slot = 14;
const T4: Slot = 15;

// Service node slots.
const S_FACTORY: u64 = 0;
const S_START: u64 = 1;
const S_DOMAIN: u64 = 2;
const S_BANK: u64 = 3;
const S_KEEPER: u64 = 4;

const N: usize = o::MAX_SERVICES;
const TICK_NS: u64 = 1_000_000;
const PING_EVERY_NS: u64 = 10_000_000;
/// Not available again for this long: hung. Generous because RAM is a
/// cache of the store: right after a restart a service's pages fault in
/// from disk, and 50 ms was once exceeded that way (services_powercut).
const HANG_AFTER_NS: u64 = 250_000_000;

#[derive(Clone, Copy)]
struct Service {
    used: bool,
    name: [u8; 32],
    name_len: usize,
    arg: u64,
    policy: Policy,
    record: Record,
    state: u64,
    restart_at: u64,
    generation: u64,
    last_ok: u64,
    ping_at: u64,
}

impl Service {
    fn name(&self) -> &str {
        core::str::from_utf8(&self.name[..self.name_len]).unwrap_or("?")
    }
}

const FREE: Service = Service {
    used: false,
    name: [0; 32],
    name_len: 0,
    arg: 0,
    policy: Policy::DEFAULT,
    record: Record::new(0),
    state: state::HELD,
    restart_at: 0,
    generation: 0,
    last_ok: 0,
    ping_at: 0,
};

fn ok(c: u64) -> Result<(), u64> {
    if c == Code::Ok {
        Ok(())
    } else {
        Err(c)
    }
}

fn fetch(from: Slot, slot: u64, into: Slot) -> Result<(), u64> {
    ok(Msg::new(from, node::FETCH)
        .w0(slot)
        .recv([into, 0, 0, 0])
        .call()
        .code)
}

fn swap(into: Slot, slot: u64, key: Slot) -> Result<(), u64> {
    ok(Msg::new(into, node::SWAP)
        .w0(slot)
        .keys([key, 0, 0, 0])
        .call()
        .code)
}

/// Service node `i` into `SVC`.
fn svc(i: usize) -> Result<(), u64> {
    fetch(DIR, i as u64, SVC)
}

struct Rs {
    s: [Service; N],
}

impl Rs {
    fn find(&self, name: &[u8]) -> Option<usize> {
        self.s
            .iter()
            .position(|s| s.used && &s.name[..s.name_len] == name)
    }

    /// Starts an incarnation of service `i` now.
    fn start(&mut self, i: usize, now: u64) -> Result<(), u64> {
        svc(i)?;
        bank::create_sub(BANK, u64::MAX, u64::MAX, T1)?;
        swap(SVC, S_BANK, T1)?;
        fetch(SVC, S_FACTORY, T2)?;
        fetch(SVC, S_KEEPER, T3)?;
        let a = Msg::new(T2, fo::CREATE)
            .w0(self.s[i].arg)
            .keys([T1, METER, 0, T3])
            .recv([T4, T2, 0, 0])
            .call();
        if a.code != Code::Ok {
            let _ = bank::destroy(T1);
            return Err(a.code);
        }
        swap(SVC, S_START, T4)?;
        swap(SVC, S_DOMAIN, T2)?;
        let s = &mut self.s[i];
        let mut put = [0u8; 32];
        put[..s.name_len].copy_from_slice(&s.name[..s.name_len]);
        let p = Msg::new(STORE, so::PUT)
            .string(&put[..s.name_len])
            .keys([T4, 0, 0, 0])
            .call();
        ok(p.code)?;
        s.generation = p.w[0];
        s.state = state::RUNNING;
        s.last_ok = now;
        s.ping_at = now;
        Ok(())
    }

    /// Destroys service `i`'s current incarnation (its bank). A caller it
    /// was serving would wait forever on a resume key that no longer
    /// exists, so that key (supervised services keep it in slot 15, the
    /// `stet_rt::service` convention) is answered `RESTARTED` first: the
    /// client asks again, of the replacement.
    fn kill(&mut self, i: usize) {
        if svc(i).is_err() {
            return;
        }
        if fetch(SVC, S_DOMAIN, T1).is_ok()
            && Msg::new(T1, domain::GET_SLOT)
                .w0(15)
                .recv([T3, 0, 0, 0])
                .call()
                .code
                == Code::Ok
        {
            // A try-send: if it is not a live resume key this is answered
            // VOID; if the service put a start key there, never waiting on
            // whatever it names.
            Msg::new(T3, Code::Restarted.into()).try_send();
        }
        if fetch(SVC, S_BANK, T1).is_ok() {
            let _ = bank::destroy(T1);
        }
    }

    /// Service `i` failed: clean up and decide.
    fn failed(&mut self, i: usize, why: Failure, detail: core::fmt::Arguments<'_>, now: u64) {
        self.kill(i);
        let s = &mut self.s[i];
        let d = s.record.on_failure(now, &s.policy, why);
        match d {
            Decision::RestartAt(t) => {
                s.state = state::BACKOFF;
                s.restart_at = t;
                println!(
                    "rs: {} {detail}; restart {} in {} us",
                    s.name(),
                    s.record.restarts + 1,
                    (t - now) / 1000
                );
                if t <= now {
                    // No back-off: replace it now rather than at the next
                    // tick (what service_restart measures).
                    self.restart_now(i, now);
                    if self.s[i].state == state::RUNNING {
                        println!(
                            "rs: {} restarted (generation {})",
                            self.s[i].name(),
                            self.s[i].generation
                        );
                    }
                }
            }
            Decision::HoldByPolicy => {
                s.state = state::HELD;
                println!("rs: {} {detail}; held (policy)", s.name());
            }
            Decision::HoldRateCap => {
                s.state = state::HELD;
                println!(
                    "rs: {} {detail}; held after {} restarts (rate cap)",
                    s.name(),
                    s.record.restarts
                );
            }
        }
    }

    fn restart_now(&mut self, i: usize, now: u64) {
        // An attempt counts for the rate cap even if it fails, so a service
        // that cannot be built is held rather than retried forever.
        self.s[i].record.on_restarted(now);
        match self.start(i, now) {
            Ok(()) => {}
            Err(c) => {
                let d = format_args!("could not be started (code {c})");
                self.failed(i, Failure::Crash, d, now);
            }
        }
    }

    /// A fault message from service `i`'s domain.
    fn on_fault(&mut self, i: usize, order: u64, w: [u64; 4], regs: &[u8]) {
        let now = now_ns();
        if i >= N || !self.s[i].used || self.s[i].state != state::RUNNING {
            return;
        }
        let rdi = regs
            .get(Reg::Rdi as usize * 8..Reg::Rdi as usize * 8 + 8)
            .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
        if order == fault::code::EXCEPTION && w[0] == 3 {
            self.failed(i, Failure::Exit, format_args!("exited (code {rdi})"), now);
        } else if order == fault::code::EXCEPTION {
            let d = format_args!("crashed (exception {} at rip {:#x})", w[0], w[2]);
            self.failed(i, Failure::Crash, d, now);
        } else if order == fault::code::MEMORY {
            let d = format_args!("crashed (page fault at {:#x}, rip {:#x})", w[0], w[3]);
            self.failed(i, Failure::Crash, d, now);
        } else {
            self.failed(
                i,
                Failure::Crash,
                format_args!("crashed (fault {order})"),
                now,
            );
        }
    }

    fn tick(&mut self) {
        let now = now_ns();
        for i in 0..N {
            let s = self.s[i];
            if !s.used {
                continue;
            }
            match s.state {
                state::BACKOFF if now >= s.restart_at => {
                    self.restart_now(i, now);
                    if self.s[i].state == state::RUNNING {
                        println!(
                            "rs: {} restarted (generation {})",
                            self.s[i].name(),
                            self.s[i].generation
                        );
                    }
                }
                state::RUNNING => self.watch(i, now),
                _ => {}
            }
        }
    }

    /// Heartbeat and hang detection for running service `i`.
    fn watch(&mut self, i: usize, now: u64) {
        if svc(i).is_err() || fetch(SVC, S_DOMAIN, T1).is_err() {
            return;
        }
        let st = Msg::new(T1, domain::GET_STATE).call();
        if st.code == Code::Void {
            self.failed(i, Failure::Exit, format_args!("vanished"), now);
            return;
        }
        let s = &mut self.s[i];
        if st.w[0] == 0 {
            // Available: it answered the last heartbeat (or is idle).
            s.last_ok = now;
            if now - s.ping_at >= PING_EVERY_NS && fetch(SVC, S_START, T2).is_ok() {
                // A try-send: the service may have become busy since
                // GET_STATE (or be promised to a stalled caller), and the
                // supervisor must never wait on what it supervises (a plain
                // send stalled here while the service's fault waited for
                // this very domain: a deadlock services_powercut found).
                Msg::new(T2, o::PING).try_send();
                s.ping_at = now;
            }
        } else if now - s.last_ok > HANG_AFTER_NS {
            let ms = (now - s.last_ok) / 1_000_000;
            self.failed(
                i,
                Failure::Hang,
                format_args!("hung (no answer for {ms} ms)"),
                now,
            );
        }
    }

    fn register(&mut self, s: &[u8], w: [u64; 4]) -> Result<[u64; 4], u64> {
        let (name, rest) = match s.iter().position(|&b| b == 0) {
            Some(z) => (&s[..z], &s[z + 1..]),
            None => (s, &[][..]),
        };
        if name.is_empty() || name.len() > 32 || (!rest.is_empty() && rest.len() != 8) {
            return Err(Code::BadValue.into());
        }
        if self.find(name).is_some() {
            return Err(Code::BadState.into());
        }
        let i = self.s.iter().position(|s| !s.used).ok_or(Code::Limit)?;
        bank::alloc_node(BANK, SVC)?;
        swap(DIR, i as u64, SVC)?;
        swap(SVC, S_FACTORY, ARG0)?;
        ok(Msg::new(SELF, domain::MAKE_START)
            .w0(i as u64)
            .recv([T1, 0, 0, 0])
            .call()
            .code)?;
        swap(SVC, S_KEEPER, T1)?;
        let now = now_ns();
        let e = &mut self.s[i];
        *e = FREE;
        e.used = true;
        e.name[..name.len()].copy_from_slice(name);
        e.name_len = name.len();
        e.arg = rest.try_into().map(u64::from_le_bytes).unwrap_or(0);
        e.policy = Policy {
            restart: w[0] != 0,
            backoff_base_ns: w[1],
            backoff_cap_ns: (w[1] * 64).max(1_000_000),
            stable_ns: 1_000_000_000,
            rate_max: (w[2] as u32).min(stet_supervise::MAX_RATE as u32),
            rate_window_ns: if w[3] == 0 { 1_000_000_000 } else { w[3] },
        };
        e.record = Record::new(now);
        if let Err(c) = self.start(i, now) {
            let d = format_args!("could not be started (code {c})");
            self.failed(i, Failure::Crash, d, now);
        } else {
            println!(
                "rs: {} started (generation {})",
                self.s[i].name(),
                self.s[i].generation
            );
        }
        Ok([i as u64, 0, 0, 0])
    }

    fn inject(&mut self, name: &[u8], kind: u64) -> Result<(), u64> {
        let i = self.find(name).ok_or(Code::BadValue)?;
        if self.s[i].state != state::RUNNING {
            return Err(Code::BadState.into());
        }
        match kind {
            0 => {
                svc(i)?;
                fetch(SVC, S_DOMAIN, T1)?;
                let mut regs = [0u8; REGS_SIZE];
                let a = Msg::new(T1, domain::GET_REGS).call_into(&mut regs);
                ok(a.code)?;
                let at = Reg::Rip as usize * 8;
                regs[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
                ok(Msg::new(T1, domain::SET_REGS).string(&regs).call().code)?;
                // Running from address 0: it faults to us at once.
                ok(Msg::new(T1, domain::SET_STATE)
                    .words([2, a.w[1], 0, 0])
                    .call()
                    .code)
            }
            1 => {
                let now = now_ns();
                self.failed(i, Failure::Exit, format_args!("killed"), now);
                Ok(())
            }
            _ => Err(Code::BadValue.into()),
        }
    }
}

fn server() -> i64 {
    if let Err(c) = bank::alloc_node(BANK, DIR) {
        println!("rs: no node for the service table (code {c})");
        return 1;
    }
    let mut rs = Rs { s: [FREE; N] };
    println!("rs: ready");
    let mut buf = [0u8; REGS_SIZE];
    let mut out = [0u8; 32];
    let mut a = wait([ARG0, 0, 0, 0], RESUME, &mut buf);
    loop {
        let len = a.len.min(buf.len());
        let mut olen = 0;
        let r: Result<[u64; 4], u64> = match a.info {
            o::TIMER => {
                rs.tick();
                Ok([0; 4])
            }
            o::CLIENT => match a.code {
                o::REGISTER => rs.register(&buf[..len], a.w),
                o::STATUS => {
                    let from = a.w[0] as usize;
                    match (from..N).find(|&i| rs.s[i].used) {
                        Some(i) => {
                            let s = &rs.s[i];
                            out[..s.name_len].copy_from_slice(&s.name[..s.name_len]);
                            olen = s.name_len;
                            Ok([s.state, s.record.restarts, s.generation, i as u64 + 1])
                        }
                        None => Err(Code::BadValue.into()),
                    }
                }
                o::INJECT => rs.inject(&buf[..len], a.w[0]).map(|_| [0; 4]),
                o::RESTART => match rs.find(&buf[..len]) {
                    Some(i) if rs.s[i].state == state::HELD => {
                        let now = now_ns();
                        rs.s[i].record = Record::new(now);
                        rs.restart_now(i, now);
                        println!("rs: {} restarted by request", rs.s[i].name());
                        Ok([0; 4])
                    }
                    Some(_) => Err(Code::BadState.into()),
                    None => Err(Code::BadValue.into()),
                },
                _ => Err(Code::NoSuchOrder.into()),
            },
            i => {
                // A keeper message: the fault of service `i`. Its resume
                // key is void once the incarnation is destroyed.
                rs.on_fault(i as usize, a.code, a.w, &buf[..len]);
                Ok([0; 4])
            }
        };
        let (c, w) = match r {
            Ok(w) => (Code::Ok.into(), w),
            Err(c) => (c, [0; 4]),
        };
        a = Msg::new(RESUME, c)
            .words(w)
            .string(&out[..olen])
            .recv([ARG0, 0, 0, 0])
            .resume_into(RESUME)
            .ret_into(&mut buf);
    }
}

fn timer() -> i64 {
    let mut next = now_ns();
    loop {
        next += TICK_NS;
        sleep_until(next);
        Msg::new(3, o::TICK).call();
    }
}

fn main(arg: u64) -> i64 {
    match arg {
        1 => timer(),
        _ => server(),
    }
}

stet_rt::main!(main);
