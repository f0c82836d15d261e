//! The functions domtest's threads run, and the shared statics through
//! which they report (the threads share domtest's memory). Every thread's
//! general keys: 1 console, 2 sleep, 3 discrim, 4 a key for its role.

use core::sync::atomic::{AtomicU64, Ordering::SeqCst};
use stet_rt::abi::order;
use stet_rt::cpu;
use stet_rt::kernel::{now_ns, sleep_until};
use stet_rt::key::{call, wait, Msg};
use stet_rt::println;

/// Slot of the role key.
const ROLE: u8 = 4;
/// Slot where servers keep a caller's resume key.
const RESUME: u8 = 5;
/// Slot where the one-shot server puts the copy of the resume key.
const COPY: u8 = 6;

/// A tag in [`S`], checked by domtest at start.
pub const TAG: u64 = 0x5eed_da7a;

/// Everything the threads report, shared with domtest. Initialised with a
/// non-zero tag so that it lands in `.data`: the user linker script puts
/// `.bss` on the page after `.data` in a segment of its own, which the
/// image builder refuses (two segments sharing a page).
pub struct Shared {
    /// [`TAG`].
    pub tag: u64,
    /// Set by [`t_hello`] to its argument.
    pub hello: AtomicU64,
    /// Counted by [`t_spin`].
    pub spin: AtomicU64,
    /// Set by [`t_waiter`]: 1 when it starts, result code + 100 if its call
    /// is ever answered.
    pub waiter: AtomicU64,
    /// What a staller got: [started, done, code, w0].
    pub staller: [AtomicU64; 4],
    /// The same for the second staller.
    pub staller2: [AtomicU64; 4],
    /// The worker's progress (iterations done, published every 4096).
    pub progress: AtomicU64,
    /// The worker's results: [done, result, first bad xmm register + 1 (0:
    /// all intact)].
    pub worked: [AtomicU64; 3],
    /// What the one-shot server saw, in order: [done, classify type of the
    /// copy, w2 of it, compare original/copy, code of the reply through the
    /// original, code of the send through the copy, classify type of the copy
    /// afterwards, w2 of it, classify type of the original afterwards, w2 of
    /// it, code of the FETCH].
    pub oneshot: [AtomicU64; 11],
    /// What the one-shot caller got: [replies, code, w0, messages after].
    pub once: [AtomicU64; 4],
    /// Requests the busy server has served.
    pub served: AtomicU64,
    /// Per caller: [answers, code, w0].
    pub answers: [[AtomicU64; 3]; CALLERS],
    /// What [`t_probe`] got: [done, code, w0, string length].
    pub probe: [AtomicU64; 4],
}

const fn zeros<const N: usize>() -> [AtomicU64; N] {
    [const { AtomicU64::new(0) }; N]
}

/// The shared reports.
pub static S: Shared = Shared {
    tag: TAG,
    hello: AtomicU64::new(0),
    spin: AtomicU64::new(0),
    waiter: AtomicU64::new(0),
    staller: zeros::<4>(),
    staller2: zeros::<4>(),
    progress: AtomicU64::new(0),
    worked: zeros::<3>(),
    oneshot: zeros::<11>(),
    once: zeros::<4>(),
    served: AtomicU64::new(0),
    answers: [const { zeros::<3>() }; CALLERS],
    probe: zeros::<4>(),
};

/// Ends a thread: available, ignoring every message.
pub fn park() -> ! {
    loop {
        wait([0; 4], 0, &mut []);
    }
}

/// Part 1: says hello (through the console key it was given) and records
/// its argument.
pub extern "C" fn t_hello(arg: u64) -> ! {
    S.hello.store(arg, SeqCst);
    println!("domtest: hello from a domain built at run time (arg {arg:#x})");
    park()
}

/// Spins forever.
pub extern "C" fn t_spin(_arg: u64) -> ! {
    loop {
        S.spin.fetch_add(1, SeqCst);
    }
}

/// A server that takes calls and never answers (the resume key of the
/// latest caller stays in slot 5).
pub extern "C" fn t_sink(_arg: u64) -> ! {
    loop {
        wait([0; 4], RESUME, &mut []);
    }
}

/// Calls its role key (the sink) with order 7 and `arg` in w0.
pub extern "C" fn t_waiter(arg: u64) -> ! {
    S.waiter.store(1, SeqCst);
    let a = call(ROLE, 7, [arg, 0, 0, 0]);
    S.waiter.store(100 + a.code, SeqCst);
    park()
}

/// A server answering order 0 with `w0 + 1` and the order in w1.
pub extern "C" fn t_inc(_arg: u64) -> ! {
    let mut a = wait([0; 4], RESUME, &mut []);
    loop {
        a = Msg::new(RESUME, 0)
            .words([a.w[0].wrapping_add(1), a.code, 0, 0])
            .resume_into(RESUME)
            .ret();
    }
}

/// Calls its role key with order 9 and `arg` in w0, recording the answer
/// in [`Shared::staller`] (or [`Shared::staller2`] when `arg` has bit 32 set).
pub extern "C" fn t_staller(arg: u64) -> ! {
    let r = if arg >> 32 != 0 {
        &S.staller2
    } else {
        &S.staller
    };
    r[0].store(1, SeqCst);
    let a = call(ROLE, 9, [arg, 0, 0, 0]);
    r[2].store(a.code, SeqCst);
    r[3].store(a.w[0], SeqCst);
    r[1].store(1, SeqCst);
    park()
}

/// Iterations of the worker's computation.
pub const WORK: u64 = 24_000_000;
/// Seed of the worker's SSE registers.
pub const XMM_SEED: u64 = 0x0123_4567_89ab_cdef;

/// A deterministic computation in registers and stack memory: `n`
/// iterations of a generator, folded with a 32-word table on the stack.
#[inline(never)]
pub fn work(seed: u64, n: u64, publish: bool) -> u64 {
    let mut mem = [0u64; 32];
    let mut x = seed;
    let mut acc = seed.rotate_left(17);
    let mut i = 0u64;
    while i < n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(i | 1);
        acc ^= x.rotate_left((i & 63) as u32);
        let m = &mut mem[(x >> 59) as usize];
        *m = m.wrapping_add(acc);
        i += 1;
        if i & 4095 == 0 {
            mem = core::hint::black_box(mem);
            if publish {
                S.progress.store(i, SeqCst);
            }
        }
    }
    mem.iter().enumerate().fold(acc ^ x, |h, (j, v)| {
        h.rotate_left(7) ^ v.wrapping_mul(j as u64 | 1)
    })
}

/// Loads its SSE registers, computes [`work`], checks the SSE registers,
/// reports in [`Shared::worked`].
pub extern "C" fn t_worker(arg: u64) -> ! {
    cpu::load_xmm(XMM_SEED);
    let r = work(arg, WORK, true);
    let bad = cpu::check_xmm(XMM_SEED).map_or(0, |r| r as u64 + 1);
    S.worked[1].store(r, SeqCst);
    S.worked[2].store(bad, SeqCst);
    S.worked[0].store(1, SeqCst);
    park()
}

/// Takes one call, copies its resume key from slot 5 to slot 6 (FETCH
/// through the node key to its own general keys in slot 4), replies
/// through slot 5 with `w0 + 1`, then tries slot 6.
pub extern "C" fn t_oneshot(_arg: u64) -> ! {
    let r = &S.oneshot;
    let a = wait([0; 4], RESUME, &mut []);
    let f = Msg::new(ROLE, order::node::FETCH)
        .w0(RESUME as u64)
        .recv([COPY, 0, 0, 0])
        .call();
    r[10].store(f.code, SeqCst);
    let c = classify(COPY);
    r[1].store(c[0], SeqCst);
    r[2].store(c[2], SeqCst);
    let s = Msg::new(3, order::discrim::COMPARE)
        .keys([RESUME, COPY, 0, 0])
        .call();
    r[3].store(s.w[0], SeqCst);
    let first = Msg::new(RESUME, 0)
        .words([a.w[0].wrapping_add(1), 0, 0, 0])
        .send();
    r[4].store(first.code, SeqCst);
    let second = Msg::new(COPY, 0)
        .words([a.w[0].wrapping_add(2), 0, 0, 0])
        .send();
    r[5].store(second.code, SeqCst);
    let c = classify(COPY);
    r[6].store(c[0], SeqCst);
    r[7].store(c[2], SeqCst);
    let c = classify(RESUME);
    r[8].store(c[0], SeqCst);
    r[9].store(c[2], SeqCst);
    r[0].store(1, SeqCst);
    park()
}

fn classify(slot: u8) -> [u64; 3] {
    let a = Msg::new(3, order::discrim::CLASSIFY)
        .keys([slot, 0, 0, 0])
        .call();
    [a.w[0], a.w[1], a.w[2]]
}

/// Calls its role key once with `arg`, then counts anything else that
/// ever arrives.
pub extern "C" fn t_once(arg: u64) -> ! {
    let a = call(ROLE, 3, [arg, 0, 0, 0]);
    S.once[1].store(a.code, SeqCst);
    S.once[2].store(a.w[0], SeqCst);
    S.once[0].fetch_add(1, SeqCst);
    loop {
        wait([0; 4], 0, &mut []);
        S.once[3].fetch_add(1, SeqCst);
    }
}

/// How long the busy server takes per request, in ns.
pub const BUSY_NS: u64 = 2_000_000;

/// A slow server: each request takes [`BUSY_NS`] (the sleep key), then it
/// answers with the caller's w0 and its count of requests served.
pub extern "C" fn t_busy(_arg: u64) -> ! {
    let mut a = wait([0; 4], RESUME, &mut []);
    loop {
        sleep_until(now_ns() + BUSY_NS);
        let n = S.served.fetch_add(1, SeqCst) + 1;
        a = Msg::new(RESUME, 0)
            .words([a.w[0], n, 0, 0])
            .resume_into(RESUME)
            .ret();
    }
}

/// Callers of the busy server.
pub const CALLERS: usize = 8;

/// Calls its role key (the busy server) once with its id.
pub extern "C" fn t_caller(id: u64) -> ! {
    let a = call(ROLE, 1, [id, 0, 0, 0]);
    let r = &S.answers[id as usize % CALLERS];
    r[1].store(a.code, SeqCst);
    r[2].store(a.w[0], SeqCst);
    r[0].fetch_add(1, SeqCst);
    park()
}

/// Calls its role key once with `arg` in w0, recording the answer in
/// [`Shared::probe`].
pub extern "C" fn t_probe(arg: u64) -> ! {
    let mut buf = [0u8; 8];
    let a = Msg::new(ROLE, 1).w0(arg).call_into(&mut buf);
    S.probe[1].store(a.code, SeqCst);
    S.probe[2].store(a.w[0], SeqCst);
    S.probe[3].store(a.len as u64, SeqCst);
    S.probe[0].fetch_add(1, SeqCst);
    park()
}

/// How long [`t_slow`] takes per request, in ns.
pub const SLOW_NS: u64 = 20_000_000;

/// A slow server: answers each request after [`SLOW_NS`] with `w0 + 1`,
/// words only (the kernel's fast return path) when `arg` is 0, with a
/// one-byte string (the general path) otherwise.
pub extern "C" fn t_slow(arg: u64) -> ! {
    let mut a = wait([0; 4], RESUME, &mut []);
    loop {
        sleep_until(now_ns() + SLOW_NS);
        let s: &[u8] = if arg == 0 { &[] } else { b"x" };
        a = Msg::new(RESUME, 0)
            .words([a.w[0].wrapping_add(1), 0, 0, 0])
            .string(s)
            .resume_into(RESUME)
            .ret();
    }
}
