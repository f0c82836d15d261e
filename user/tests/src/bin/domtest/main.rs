//! Domain keys, exactly: building domains at run time from ranges of nodes
//! and pages, prompt reads of a domain's state whatever it is doing,
//! correct state (a stopped domain copied into a fresh one continues
//! exactly), destroyed objects void everywhere, one-shot resume keys, many
//! callers stalled on one busy server, and every domain order with its
//! error codes (docs/ABI.md "Domain keys").
//!
//! The domains it builds ("threads") share domtest's address space and
//! start at its functions (`domtest/threads.rs`), each on a stack of its
//! own; they report through shared statics.
//!
//! Keys: 1 console, 2 sleep, 3 discrim, 4 range of nodes, 5 range of pages,
//! 6 its own address space, 7 the prime meter, 8 a node key to its own
//! general keys. Slots 9–15 are scratch (`domtest/kit.rs`).
//!
//! Each check prints `domtest: <what>: ok` or `... WRONG (got X, want Y)`;
//! the last line is `domtest: all ok` or `domtest: N checks WRONG`.
//!
//! The argument picks what runs: 0 everything above
//! (tests/system/domain_keys*.toml); 1 MAKE_DOMAIN with parts of a domain
//! that is not prepared (domain_unprepared.toml); 2 a stopped domain
//! receiving a reply (domain_stopped_reply.toml).
#![no_std]
#![no_main]

macro_rules! ck {
    ($got:expr, $want:expr, $($what:tt)+) => {
        kit::check(format_args!($($what)+), ($got) as u64, ($want) as u64)
    };
}

macro_rules! ck_in {
    ($got:expr, $lo:expr, $hi:expr, $($what:tt)+) => {
        kit::check_in(format_args!($($what)+), ($got) as u64, ($lo) as u64, ($hi) as u64)
    };
}

mod kit;
mod threads;

use core::sync::atomic::Ordering::SeqCst;
use kit::*;
use stet_rt::abi::domain::{Reg, NREGS, REGS_SIZE, USER_RFLAGS};
use stet_rt::abi::{code::Code, order};
use stet_rt::key::{Msg, Slot};
use stet_rt::println;
use threads::*;

use order::domain as od;

/// Run states and flags.
const AVAILABLE: u64 = 0;
const WAITING: u64 = 1;
const RUNNING: u64 = 2;
const STOPPED: u64 = 1;

/// Key types as discrim reports them.
const T_VOID: u64 = 0;
const T_PAGE: u64 = 2;
const T_DOMAIN: u64 = 5;
const T_START: u64 = 6;
const T_RESUME: u64 = 7;
const T_SLEEP: u64 = 10;
const T_CONSOLE: u64 = 11;

/// Threads that later parts use.
struct World {
    spinner: Thread,
    sink: Thread,
    waiter: Thread,
}

fn main(arg: u64) -> i64 {
    ck!(
        (S.tag == TAG && kit::loaded()) as u64,
        1,
        "shared statics are loaded"
    );
    let mut b = Bank::new();
    match arg {
        1 => probe_unprepared(&mut b),
        2 => {
            probe_stopped_reply(&mut b, 0);
            probe_stopped_reply(&mut b, 1);
        }
        _ => {
            part1_build(&mut b);
            part7_orders(&mut b);
            let w = part2_prompt(&mut b);
            part5_resume(&mut b, &w);
            part6_callers(&mut b);
            let (old, start) = part3_correct(&mut b);
            part4_void(&mut b, &w, old, start);
        }
    }
    let (n, p) = b.used();
    println!("domtest: used {n} nodes and {p} pages");
    match fails() {
        0 => println!("domtest: all ok"),
        f => println!("domtest: {f} checks WRONG"),
    }
    0
}

/// Part 1. A domain built at run time runs a function of domtest.
fn part1_build(b: &mut Bank) {
    let t = thread(b, t_hello, 0x5eed_0001);
    t.dom(K1);
    ck!(
        classify(K1)[0],
        T_DOMAIN,
        "build: MAKE_DOMAIN gives a domain key"
    );
    let st = t.state();
    ck!(st[0], AVAILABLE, "build: new domain is available");
    ck!(st[1], STOPPED, "build: new domain is stopped");
    let (r, a) = t.regs();
    ck!(a.code, Code::Ok, "build: GET_REGS of the new domain");
    ck!(a.len, REGS_SIZE, "build: register block length");
    ck!(r[Reg::Rip as usize], t.entry, "build: rip is the entry set");
    ck!(
        r[Reg::Rsp as usize],
        t.stack.1 - 8,
        "build: rsp is the stack set"
    );
    ck!(
        r[Reg::Rdi as usize],
        0x5eed_0001,
        "build: rdi is the argument set"
    );
    t.go();
    let ran = poll(2000, || S.hello.load(SeqCst) == 0x5eed_0001);
    ck!(
        ran,
        true,
        "build: the new domain ran and wrote shared memory"
    );
    ck!(
        t.wait_state(AVAILABLE, 2000),
        true,
        "build: the new domain ends available (waiting for messages)"
    );
    ck!(
        t.state()[1],
        0,
        "build: not stopped after SET_STATE running"
    );
}

/// Part 2. Prompt: reads answer at once whatever the domain does.
fn part2_prompt(b: &mut Bank) -> World {
    // (a) Spinning.
    let spinner = thread(b, t_spin, 0);
    spinner.go();
    ck!(
        poll(2000, || S.spin.load(SeqCst) > 1000),
        true,
        "prompt: the spinner runs"
    );
    let (r, a) = spinner.regs();
    ck!(a.code, Code::Ok, "prompt: GET_REGS of a spinning domain");
    ck!(
        a.w[0],
        RUNNING,
        "prompt: spinning domain is running (GET_REGS)"
    );
    ck!(a.w[1], 0, "prompt: spinning domain has no flags (GET_REGS)");
    ck_in!(
        r[Reg::Rip as usize],
        spinner.entry,
        spinner.entry + FN_WINDOW,
        "prompt: spinning domain's rip is in its loop"
    );
    ck_in!(
        r[Reg::Rsp as usize],
        spinner.stack.0,
        spinner.stack.1,
        "prompt: spinning domain's rsp is on its stack"
    );
    let st = spinner.state();
    ck!(
        st[0],
        RUNNING,
        "prompt: spinning domain is running (GET_STATE)"
    );
    ck!(
        spinner.order(od::STOP, [0; 4]).code,
        Code::Ok,
        "prompt: STOP a spinning domain"
    );
    let st = spinner.state();
    ck!(st[0], RUNNING, "prompt: stopped spinner is still running");
    ck!(
        st[1],
        STOPPED,
        "prompt: stopped spinner has the stopped flag"
    );
    let c = S.spin.load(SeqCst);
    pause(30);
    ck!(
        S.spin.load(SeqCst),
        c,
        "prompt: a stopped spinner does not run"
    );
    ck!(
        spinner.order(od::START, [0; 4]).code,
        Code::Ok,
        "prompt: START the spinner"
    );
    ck!(
        poll(2000, || S.spin.load(SeqCst) > c),
        true,
        "prompt: the started spinner runs again"
    );
    must(spinner.order(od::STOP, [0; 4]), "STOP the spinner");

    // (b) Waiting for the answer to a call that never comes.
    let sink = thread(b, t_sink, 0);
    sink.go();
    sink.wait_state(AVAILABLE, 2000);
    sink.start_key(0, KEY);
    let waiter = thread(b, t_waiter, 0xabc);
    waiter.give(4, KEY);
    waiter.go();
    ck!(
        waiter.wait_state(WAITING, 2000),
        true,
        "prompt: a caller of a server that never answers is waiting"
    );
    let (r, a) = waiter.regs();
    ck!(a.code, Code::Ok, "prompt: GET_REGS of a waiting domain");
    ck!(
        a.w[0],
        WAITING,
        "prompt: waiting domain's run state (GET_REGS)"
    );
    let rip = r[Reg::Rip as usize];
    ck_in!(
        rip,
        waiter.entry,
        waiter.entry + FN_WINDOW,
        "prompt: waiting domain's rip is in its function"
    );
    ck!(
        is_syscall(rip - 2),
        true,
        "prompt: waiting domain's rip is just after its syscall"
    );
    ck!(
        r[Reg::Rax as usize],
        4,
        "prompt: waiting domain's rax is its control word"
    );
    ck!(
        r[Reg::Rdi as usize],
        7,
        "prompt: waiting domain's rdi is its order"
    );
    ck!(
        r[Reg::Rsi as usize],
        0xabc,
        "prompt: waiting domain's rsi is its w0"
    );
    ck!(S.waiter.load(SeqCst), 1, "prompt: the waiter got no answer");

    // (c) Stalled on a stopped domain.
    let inc = thread(b, t_inc, 0);
    inc.go();
    inc.wait_state(AVAILABLE, 2000);
    ck!(
        inc.order(od::STOP, [0; 4]).code,
        Code::Ok,
        "prompt: STOP a server"
    );
    let st = inc.state();
    ck!(st[0], AVAILABLE, "prompt: stopped server is available");
    ck!(
        st[1],
        STOPPED,
        "prompt: stopped server has the stopped flag"
    );
    inc.start_key(0, KEY);
    let staller = thread(b, t_staller, 41);
    staller.give(4, KEY);
    staller.go();
    let stalled = |t: &Thread| {
        let (r, a) = t.regs();
        a.w[0] == RUNNING && is_syscall(r[Reg::Rip as usize])
    };
    poll(2000, || S.staller[0].load(SeqCst) == 1 && stalled(&staller));
    let (r, a) = staller.regs();
    ck!(a.code, Code::Ok, "prompt: GET_REGS of a stalled domain");
    ck!(
        a.w[0],
        RUNNING,
        "prompt: stalled domain is running (GET_REGS)"
    );
    ck!(a.w[1], 0, "prompt: stalled domain has no flags");
    let rip = r[Reg::Rip as usize];
    ck_in!(
        rip,
        staller.entry,
        staller.entry + FN_WINDOW,
        "prompt: stalled domain's rip is in its function"
    );
    ck!(
        is_syscall(rip),
        true,
        "prompt: stalled domain's rip is on its syscall"
    );
    ck!(
        r[Reg::Rax as usize],
        4,
        "prompt: stalled domain's rax is its control word"
    );
    ck!(
        r[Reg::Rdi as usize],
        9,
        "prompt: stalled domain's rdi is its order"
    );
    ck!(
        r[Reg::Rsi as usize],
        41,
        "prompt: stalled domain's rsi is its w0"
    );
    ck!(
        staller.state()[0],
        RUNNING,
        "prompt: stalled domain is running (GET_STATE)"
    );
    pause(20);
    ck!(
        S.staller[1].load(SeqCst),
        0,
        "prompt: the stalled caller gets nothing while the server is stopped"
    );
    ck!(
        inc.order(od::START, [0; 4]).code,
        Code::Ok,
        "prompt: START the server"
    );
    ck!(
        poll(2000, || S.staller[1].load(SeqCst) == 1),
        true,
        "prompt: the stalled call goes through after START"
    );
    ck!(
        S.staller[2].load(SeqCst),
        0,
        "prompt: the stalled call's answer code"
    );
    ck!(
        S.staller[3].load(SeqCst),
        42,
        "prompt: the stalled call's answer"
    );
    World {
        spinner,
        sink,
        waiter,
    }
}

/// Part 3. Correct: a stopped worker's whole state, written into a fresh
/// domain, continues exactly. Returns the old worker (destroyed) and where
/// a start key to it is kept.
fn part3_correct(b: &mut Bank) -> (Thread, u64) {
    let seed = 0x1234_5678;
    let t0 = stet_rt::kernel::now_ns();
    let want = work(seed, WORK, false);
    let took = (stet_rt::kernel::now_ns() - t0) / 1_000_000;
    let wk = thread(b, t_worker, seed);
    // A page key in slot 4, to see keys carried over.
    b.page(KEY);
    wk.give(4, KEY);
    wk.go();
    poll(20_000, || S.progress.load(SeqCst) >= WORK / 8);
    ck!(
        wk.order(od::STOP, [0; 4]).code,
        Code::Ok,
        "correct: STOP the worker"
    );
    let p = S.progress.load(SeqCst);
    println!("domtest: correct: the work takes {took} ms here; worker stopped at {p} of {WORK}");
    ck_in!(p, WORK / 8, WORK, "correct: the worker was stopped mid-run");
    ck!(
        S.worked[0].load(SeqCst),
        0,
        "correct: the worker had not finished"
    );
    pause(30);
    ck!(
        S.progress.load(SeqCst),
        p,
        "correct: the stopped worker makes no progress"
    );

    // Everything the old domain is.
    let st = wk.state();
    ck!(st[0], RUNNING, "correct: stopped worker is running");
    ck!(st[1], STOPPED, "correct: stopped worker is stopped");
    wk.dom(DOM);
    let mut rb = [0u8; REGS_SIZE];
    let a = Msg::new(DOM, od::GET_REGS).call_into(&mut rb);
    ck!(a.len, REGS_SIZE, "correct: GET_REGS length");
    ck!(
        (a.w == st) as u64,
        1,
        "correct: GET_REGS words are the state"
    );
    let mut fpu = [0u8; 1024];
    let a = Msg::new(DOM, od::GET_FPU).call_into(&mut fpu);
    ck!(a.code, Code::Ok, "correct: GET_FPU");
    ck!(a.w[0], 1024, "correct: GET_FPU w0");
    ck!(a.len, 1024, "correct: GET_FPU length");

    // A fresh domain, and everything written into it. The new domain key
    // goes to KEY, the old stays in DOM.
    let (parts, a) = make_domain(b, KEY);
    ck!(a.code, Code::Ok, "correct: MAKE_DOMAIN for the copy");
    let new = Thread {
        parts,
        key: b.stash(KEY),
        ..wk
    };
    wk.dom(DOM);
    for s in 1..16u64 {
        must(
            Msg::new(DOM, od::GET_SLOT).w0(s).recv([K1, 0, 0, 0]).call(),
            "GET_SLOT",
        );
        must(
            Msg::new(KEY, od::SET_SLOT).w0(s).keys([K1, 0, 0, 0]).call(),
            "SET_SLOT",
        );
    }
    for (get, set) in [
        (od::GET_SPACE, od::SET_SPACE),
        (od::GET_METER, od::SET_METER),
        (od::GET_KEEPER, od::SET_KEEPER),
    ] {
        must(Msg::new(DOM, get).recv([K1, 0, 0, 0]).call(), "GET part");
        must(Msg::new(KEY, set).keys([K1, 0, 0, 0]).call(), "SET part");
    }
    ck!(
        Msg::new(KEY, od::SET_REGS).string(&rb).call().code,
        Code::Ok,
        "correct: SET_REGS with what GET_REGS gave"
    );
    ck!(
        Msg::new(KEY, od::SET_FPU).string(&fpu).call().code,
        Code::Ok,
        "correct: SET_FPU with what GET_FPU gave"
    );
    ck!(
        Msg::new(KEY, od::SET_STATE).words(st).call().code,
        Code::Ok,
        "correct: SET_STATE with what GET_STATE gave"
    );

    // The copy reads back the same.
    let mut rb2 = [0u8; REGS_SIZE];
    let a = Msg::new(KEY, od::GET_REGS).call_into(&mut rb2);
    let (r1, r2) = (regs_words(&rb), regs_words(&rb2));
    let diff = (0..NREGS).find(|&i| r1[i] != r2[i]);
    ck!(
        diff.map_or(0, |i| i + 1),
        0,
        "correct: copy's registers equal (first differing register + 1)"
    );
    ck!((a.w == st) as u64, 1, "correct: copy's state equals");
    let mut fpu2 = [0u8; 1024];
    Msg::new(KEY, od::GET_FPU).call_into(&mut fpu2);
    let diff = (0..1024).find(|&i| fpu[i] != fpu2[i]);
    ck!(
        diff.map_or(0, |i| i + 1),
        0,
        "correct: copy's FPU area equals (first differing byte + 1)"
    );
    let mut slots_same = 0;
    for s in 1..16u64 {
        Msg::new(DOM, od::GET_SLOT).w0(s).recv([K1, 0, 0, 0]).call();
        Msg::new(KEY, od::GET_SLOT).w0(s).recv([K2, 0, 0, 0]).call();
        slots_same += same(K1, K2);
    }
    ck!(slots_same, 15, "correct: copy's general keys equal");
    Msg::new(KEY, od::GET_SLOT).w0(4).recv([K1, 0, 0, 0]).call();
    ck!(
        classify(K1)[0],
        T_PAGE,
        "correct: copy's slot 4 is the page key"
    );
    for (get, what) in [
        (od::GET_SPACE, "space"),
        (od::GET_METER, "meter"),
        (od::GET_KEEPER, "keeper"),
    ] {
        Msg::new(DOM, get).recv([K1, 0, 0, 0]).call();
        Msg::new(KEY, get).recv([K2, 0, 0, 0]).call();
        ck!(same(K1, K2), 1, "correct: copy's {what} equals");
    }

    // Keys to the old domain, kept to check they die with it.
    wk.start_key(3, KEY);
    let start = b.stash(KEY);
    // Destroy the old domain (its root node).
    ck!(
        Msg::new(NODES, order::range::RENEW)
            .w0(wk.parts.root)
            .call()
            .code,
        Code::Ok,
        "correct: RENEW the old worker's root node"
    );
    pause(20);
    ck!(
        S.progress.load(SeqCst),
        p,
        "correct: nothing runs the destroyed worker"
    );
    ck!(
        new.order(od::START, [0; 4]).code,
        Code::Ok,
        "correct: START the copy"
    );
    let done = poll(30_000, || S.worked[0].load(SeqCst) == 1);
    ck!(done, true, "correct: the copy finished the work");
    ck!(
        S.worked[1].load(SeqCst),
        want,
        "correct: the copy's result is the undisturbed result"
    );
    ck!(
        S.worked[2].load(SeqCst),
        0,
        "correct: the copy's xmm0-15 are intact (first bad + 1)"
    );
    ck!(
        new.wait_state(AVAILABLE, 2000),
        true,
        "correct: the copy ends available"
    );
    (wk, start)
}

/// Part 4. Destroyed objects are void everywhere.
fn part4_void(b: &mut Bank, w: &World, old: Thread, start: u64) {
    // The old worker (root renewed in part 3): its domain key, from the
    // store (a copy in another node).
    old.dom(K1);
    ck!(
        Msg::new(K1, od::GET_STATE).call().code,
        Code::Void,
        "void: domain key of a destroyed domain"
    );
    let c = classify(K1);
    ck!(
        c[0],
        T_VOID,
        "void: discrim type of a destroyed domain's key"
    );
    ck!(c[2], 1, "void: discrim w2 of a destroyed domain's key");
    fetch(start, K2);
    ck!(
        Msg::new(K2, 5).words([1, 2, 3, 4]).call().code,
        Code::Void,
        "void: start key of a destroyed domain (call)"
    );
    ck!(
        Msg::new(K2, 5).send().code,
        Code::Void,
        "void: start key of a destroyed domain (send)"
    );
    let c = classify(K2);
    ck!(
        c[0],
        T_VOID,
        "void: discrim type of a destroyed domain's start key"
    );
    ck!(
        c[2],
        1,
        "void: discrim w2 of a destroyed domain's start key"
    );

    // A copy in another domain's general keys.
    w.spinner.dom(KEY);
    w.sink.give(9, KEY);
    ck!(
        Msg::new(NODES, order::range::RENEW)
            .w0(w.spinner.parts.root)
            .call()
            .code,
        Code::Ok,
        "void: RENEW the (stopped) spinner's root"
    );
    ck!(
        Msg::new(KEY, od::GET_STATE).call().code,
        Code::Void,
        "void: my copy of the spinner's domain key"
    );
    w.sink.dom(DOM);
    Msg::new(DOM, od::GET_SLOT).w0(9).recv([K1, 0, 0, 0]).call();
    let c = classify(K1);
    ck!(
        c[0],
        T_VOID,
        "void: the copy in another domain's slot (type)"
    );
    ck!(c[2], 1, "void: the copy in another domain's slot (w2)");
    ck!(
        Msg::new(K1, od::START).call().code,
        Code::Void,
        "void: the copy in another domain's slot (invoked)"
    );

    // A caller stalled on a domain that is destroyed gets VOID.
    let server = thread(b, t_inc, 0);
    server.go();
    server.wait_state(AVAILABLE, 2000);
    must(server.order(od::STOP, [0; 4]), "STOP a server");
    server.start_key(0, KEY);
    let staller = thread(b, t_staller, 1 << 32 | 5);
    staller.give(4, KEY);
    staller.go();
    poll(2000, || {
        let (r, a) = staller.regs();
        S.staller2[0].load(SeqCst) == 1 && a.w[0] == RUNNING && is_syscall(r[Reg::Rip as usize])
    });
    ck!(
        S.staller2[1].load(SeqCst),
        0,
        "void: a caller is stalled on a stopped server"
    );
    must(
        Msg::new(NODES, order::range::RENEW)
            .w0(server.parts.root)
            .call(),
        "RENEW the stopped server's root",
    );
    ck!(
        poll(2000, || S.staller2[1].load(SeqCst) == 1),
        true,
        "void: the stalled caller is answered when its server is destroyed"
    );
    ck!(
        S.staller2[2].load(SeqCst),
        Code::Void,
        "void: ... with VOID"
    );

    // Pages.
    let pi = b.page(K1);
    must(
        Msg::new(K1, order::page::WRITE_WORD)
            .words([8, 0x1234, 0, 0])
            .call(),
        "WRITE_WORD",
    );
    ck!(
        Msg::new(K1, order::page::READ_WORD).w0(8).call().w[0],
        0x1234,
        "void: a page holds what was written"
    );
    let kept = b.stash(K1);
    must(
        Msg::new(PAGES, order::range::RENEW)
            .w0(pi)
            .recv([K2, 0, 0, 0])
            .call(),
        "RENEW the page",
    );
    ck!(
        Msg::new(K1, order::page::READ_WORD).w0(8).call().code,
        Code::Void,
        "void: old page key after RENEW"
    );
    let c = classify(K1);
    ck!(c[0], T_VOID, "void: discrim type of the old page key");
    ck!(c[2], 1, "void: discrim w2 of the old page key");
    fetch(kept, K3);
    ck!(
        Msg::new(K3, order::page::READ_WORD).w0(8).call().code,
        Code::Void,
        "void: the copy of the old page key in the store"
    );
    let a = Msg::new(K2, order::page::READ_WORD).w0(8).call();
    ck!(a.code, Code::Ok, "void: the fresh page key works");
    ck!(a.w[0], 0, "void: the fresh page is zero");
    let c = classify(K2);
    ck!(c[0], T_PAGE, "void: discrim type of the fresh page key");
    ck!(c[2], 0, "void: discrim w2 of the fresh page key");

    // Nodes.
    let ni = b.node(K1);
    b.stash(K1);
    must(
        Msg::new(NODES, order::range::RENEW).w0(ni).call(),
        "RENEW a node",
    );
    ck!(
        Msg::new(K1, order::node::FETCH).w0(0).call().code,
        Code::Void,
        "void: old node key after RENEW"
    );
}

/// Part 5. Resume keys are one-shot; setting a waiting domain's state abandons
/// its call.
fn part5_resume(b: &mut Bank, w: &World) {
    let server = thread(b, t_oneshot, 0);
    node_key(server.parts.general, KEY);
    server.give(4, KEY);
    server.go();
    server.wait_state(AVAILABLE, 2000);
    server.start_key(0, KEY);
    let caller = thread(b, t_once, 0x77);
    caller.give(4, KEY);
    caller.go();
    let done = poll(2000, || S.oneshot[0].load(SeqCst) == 1);
    ck!(done, true, "resume: the server took the call and finished");
    let r = |i: usize| S.oneshot[i].load(SeqCst);
    ck!(
        r(10),
        Code::Ok,
        "resume: FETCH of the resume key into another slot"
    );
    ck!(r(1), T_RESUME, "resume: the copy is a resume key");
    ck!(r(2), 0, "resume: the copy is live");
    ck!(r(3), 1, "resume: the copy conveys the same authority");
    ck!(r(4), Code::Ok, "resume: reply (send) through the original");
    ck!(r(5), Code::Void, "resume: the copy after the reply");
    ck!(r(6), T_VOID, "resume: discrim type of the used copy");
    ck!(r(7), 1, "resume: discrim w2 of the used copy");
    ck!(r(8), T_VOID, "resume: discrim type of the used original");
    ck!(r(9), 1, "resume: discrim w2 of the used original");
    poll(2000, || S.once[0].load(SeqCst) >= 1);
    pause(20);
    ck!(
        S.once[0].load(SeqCst),
        1,
        "resume: the caller got one reply"
    );
    ck!(S.once[1].load(SeqCst), 0, "resume: the reply's code");
    ck!(S.once[2].load(SeqCst), 0x78, "resume: the reply's w0");
    ck!(
        S.once[3].load(SeqCst),
        0,
        "resume: nothing else reached the caller"
    );

    // The waiter of part 2 waits on the sink, whose slot 5 holds the
    // resume key. SET_STATE on the waiter abandons the call.
    node_key(w.sink.parts.general, K1);
    let resume_in_sink = || {
        Msg::new(K1, order::node::FETCH)
            .w0(5)
            .recv([K2, 0, 0, 0])
            .call();
        classify(K2)
    };
    let c = resume_in_sink();
    ck!(
        c[0],
        T_RESUME,
        "resume: the sink holds the waiter's resume key"
    );
    ck!(c[2], 0, "resume: ... live");
    ck!(
        w.waiter.order(od::SET_STATE, [RUNNING, STOPPED, 0, 0]).code,
        Code::Ok,
        "resume: SET_STATE running+stopped on a waiting domain"
    );
    let st = w.waiter.state();
    ck!(st[0], RUNNING, "resume: the waiter is running now");
    ck!(st[1], STOPPED, "resume: the waiter is stopped");
    let c = resume_in_sink();
    ck!(
        c[0],
        T_VOID,
        "resume: the abandoned call's resume key is void"
    );
    ck!(c[2], 1, "resume: ... discrim w2");
}

/// Part 6. Eight callers stalled on one busy server: all served, none lost.
fn part6_callers(b: &mut Bank) {
    let server = thread(b, t_busy, 0);
    server.go();
    server.wait_state(AVAILABLE, 2000);
    server.start_key(0, KEY);
    let callers: [Thread; CALLERS] = core::array::from_fn(|id| {
        let t = thread(b, t_caller, id as u64);
        t.give(4, KEY);
        t
    });
    for t in &callers {
        t.go();
    }
    stet_rt::kernel::yield_now();
    let mut stalled = 0;
    for t in &callers {
        let (r, a) = t.regs();
        if a.w[0] == RUNNING && is_syscall(r[Reg::Rip as usize]) {
            stalled += 1;
        }
    }
    ck_in!(
        stalled,
        1,
        CALLERS,
        "callers: some callers stalled on the busy server ({stalled} seen)"
    );
    let all = poll(10_000, || {
        S.answers.iter().map(|a| a[0].load(SeqCst)).sum::<u64>() >= CALLERS as u64
    });
    ck!(all, true, "callers: all callers answered");
    pause(20);
    let mut seen = 0u64;
    for (id, a) in S.answers.iter().enumerate() {
        ck!(a[0].load(SeqCst), 1, "callers: caller {id} answered once");
        ck!(a[1].load(SeqCst), 0, "callers: caller {id}'s answer code");
        ck!(
            a[2].load(SeqCst),
            id,
            "callers: caller {id} got its own id back"
        );
        seen |= 1 << (a[2].load(SeqCst) & 63);
    }
    ck!(seen, 0xff, "callers: all 8 ids answered");
    ck!(
        S.served.load(SeqCst),
        CALLERS,
        "callers: requests the server served"
    );
    ck!(
        server.wait_state(AVAILABLE, 2000),
        true,
        "callers: the server ends available"
    );
}

/// Part 7. Every domain order and its error codes; MAKE_DOMAIN's errors.
fn part7_orders(b: &mut Bank) {
    let (e, a) = make_domain(b, DOM);
    ck!(a.code, Code::Ok, "orders: MAKE_DOMAIN");
    let ek = b.stash(DOM);
    let call = |o: u64, w: [u64; 4]| {
        fetch(ek, DOM);
        Msg::new(DOM, o).words(w).call()
    };
    let with_key = |o: u64, w0: u64, k: Slot, into: Slot| {
        fetch(ek, DOM);
        Msg::new(DOM, o)
            .w0(w0)
            .keys([k, 0, 0, 0])
            .recv([into, 0, 0, 0])
            .call()
    };
    let with_string = |o: u64, s: &[u8]| {
        fetch(ek, DOM);
        Msg::new(DOM, o).string(s).call()
    };

    // State of a fresh domain.
    let a = call(od::GET_STATE, [0; 4]);
    ck!(a.code, Code::Ok, "orders: GET_STATE");
    ck!(
        (a.w == [AVAILABLE, STOPPED, 0, 0]) as u64,
        1,
        "orders: fresh domain: available, stopped, fault code 0"
    );
    fetch(ek, DOM);
    let mut rb = [0u8; REGS_SIZE];
    let a = Msg::new(DOM, od::GET_REGS).call_into(&mut rb);
    ck!(a.code, Code::Ok, "orders: GET_REGS");
    ck!(a.len, REGS_SIZE, "orders: GET_REGS string length");
    ck!(
        (a.w == [AVAILABLE, STOPPED, 0, 0]) as u64,
        1,
        "orders: GET_REGS words are the state"
    );
    let r = regs_words(&rb);
    let nonzero = (0..NREGS)
        .filter(|&i| i != Reg::Rflags as usize && r[i] != 0)
        .count();
    ck!(nonzero, 0, "orders: fresh domain's registers are zero");
    ck!(
        r[Reg::Rflags as usize],
        0x202,
        "orders: fresh domain's rflags"
    );
    let mut fpu = [0u8; 1024];
    let a = Msg::new(DOM, od::GET_FPU).call_into(&mut fpu);
    ck!(a.code, Code::Ok, "orders: GET_FPU");
    ck!(a.w[0], 1024, "orders: GET_FPU w0");
    ck!(a.len, 1024, "orders: GET_FPU string length");
    ck!(
        u16::from_le_bytes([fpu[0], fpu[1]]),
        0x37f,
        "orders: fresh x87 control word"
    );
    ck!(
        u32::from_le_bytes([fpu[24], fpu[25], fpu[26], fpu[27]]),
        0x1f80,
        "orders: fresh MXCSR"
    );

    // SET_REGS.
    let mut good = [0u64; NREGS];
    for (i, v) in good.iter_mut().enumerate() {
        *v = 0x1111_0000_0000_0000 ^ (i as u64 * 0x0101_0101);
    }
    good[Reg::Rip as usize] = 0x40_1000;
    good[Reg::Rsp as usize] = 0x7fff_0000;
    good[Reg::FsBase as usize] = 0x7fff_ffff_f000;
    good[Reg::GsBase as usize] = 0x1000;
    good[Reg::Rflags as usize] = u64::MAX;
    let gb = regs_bytes(&good);
    ck!(
        with_string(od::SET_REGS, &gb[..159]).code,
        Code::BadValue,
        "orders: SET_REGS of 159 bytes"
    );
    let mut long = [0u8; REGS_SIZE + 1];
    long[..REGS_SIZE].copy_from_slice(&gb);
    ck!(
        with_string(od::SET_REGS, &long).code,
        Code::BadValue,
        "orders: SET_REGS of 161 bytes"
    );
    ck!(
        with_string(od::SET_REGS, &[]).code,
        Code::BadValue,
        "orders: SET_REGS of 0 bytes"
    );
    for (reg, v, what) in [
        (Reg::Rip, 0x0000_8000_0000_0000, "rip 2^47"),
        (Reg::Rip, 0xffff_8000_0000_0000, "rip in the kernel half"),
        (Reg::Rip, 0x0001_0000_0000_0000, "rip non-canonical"),
        (Reg::FsBase, 0x0000_8000_0000_0000, "fs base 2^47"),
        (
            Reg::GsBase,
            0xffff_ffff_ffff_f000,
            "gs base in the kernel half",
        ),
    ] {
        let mut bad = good;
        bad[reg as usize] = v;
        ck!(
            with_string(od::SET_REGS, &regs_bytes(&bad)).code,
            Code::BadValue,
            "orders: SET_REGS with {what}"
        );
    }
    fetch(ek, DOM);
    let mut rb = [0u8; REGS_SIZE];
    Msg::new(DOM, od::GET_REGS).call_into(&mut rb);
    ck!(
        regs_words(&rb)[Reg::Rip as usize],
        0,
        "orders: a refused SET_REGS changed nothing"
    );
    ck!(
        with_string(od::SET_REGS, &gb).code,
        Code::Ok,
        "orders: SET_REGS"
    );
    fetch(ek, DOM);
    Msg::new(DOM, od::GET_REGS).call_into(&mut rb);
    let back = regs_words(&rb);
    let mut want = good;
    want[Reg::Rflags as usize] = USER_RFLAGS | 0x202;
    let diff = (0..NREGS).find(|&i| back[i] != want[i]);
    ck!(
        diff.map_or(0, |i| i + 1),
        0,
        "orders: GET_REGS reads back SET_REGS (first differing + 1)"
    );
    ck!(
        back[Reg::Rflags as usize],
        USER_RFLAGS | 0x202,
        "orders: rflags keeps only user bits, IF set"
    );

    // SET_FPU.
    ck!(
        with_string(od::SET_FPU, &fpu[..1023]).code,
        Code::BadValue,
        "orders: SET_FPU of 1023 bytes"
    );
    ck!(
        with_string(od::SET_FPU, &[]).code,
        Code::BadValue,
        "orders: SET_FPU of 0 bytes"
    );
    for (bits, what) in [(1u32 << 16, "MXCSR bit 16"), (1 << 31, "MXCSR bit 31")] {
        let mut bad = fpu;
        let m = 0x1f80u32 | bits;
        bad[24..28].copy_from_slice(&m.to_le_bytes());
        ck!(
            with_string(od::SET_FPU, &bad).code,
            Code::BadValue,
            "orders: SET_FPU with reserved {what}"
        );
    }
    let mut f2 = fpu;
    for (i, v) in f2[160..176].iter_mut().enumerate() {
        *v = 0xa0 + i as u8; // xmm0
    }
    f2[24..28].copy_from_slice(&0x1f80u32.to_le_bytes());
    f2[0..2].copy_from_slice(&0x027fu16.to_le_bytes()); // x87 control word
    ck!(
        with_string(od::SET_FPU, &f2).code,
        Code::Ok,
        "orders: SET_FPU"
    );
    fetch(ek, DOM);
    let mut f3 = [0u8; 1024];
    Msg::new(DOM, od::GET_FPU).call_into(&mut f3);
    let diff = (0..1024).find(|&i| f2[i] != f3[i]);
    ck!(
        diff.map_or(0, |i| i + 1),
        0,
        "orders: GET_FPU reads back SET_FPU (first differing byte + 1)"
    );

    // GET/SET_SLOT.
    ck!(
        call(od::GET_SLOT, [16, 0, 0, 0]).code,
        Code::SlotRange,
        "orders: GET_SLOT 16"
    );
    ck!(
        call(od::GET_SLOT, [u64::MAX, 0, 0, 0]).code,
        Code::SlotRange,
        "orders: GET_SLOT 2^64-1"
    );
    ck!(
        with_key(od::SET_SLOT, 16, CONSOLE, K1).code,
        Code::SlotRange,
        "orders: SET_SLOT 16"
    );
    let a = with_key(od::SET_SLOT, 0, CONSOLE, K1);
    ck!(a.code, Code::Ok, "orders: SET_SLOT 0 is accepted");
    ck!(
        classify(K1)[0],
        T_VOID,
        "orders: SET_SLOT 0 gives back void"
    );
    let a = with_key(od::GET_SLOT, 0, 0, K1);
    ck!(a.code, Code::Ok, "orders: GET_SLOT 0");
    ck!(classify(K1)[0], T_VOID, "orders: slot 0 stays void");
    copy(CONSOLE, K2);
    ck!(
        with_key(od::SET_SLOT, 5, CONSOLE, K1).code,
        Code::Ok,
        "orders: SET_SLOT 5"
    );
    ck!(
        classify(K1)[0],
        T_VOID,
        "orders: SET_SLOT 5 gives back the old (void) key"
    );
    with_key(od::GET_SLOT, 5, 0, K1);
    ck!(
        classify(K1)[0],
        T_CONSOLE,
        "orders: GET_SLOT 5 gives what was set"
    );
    ck!(
        with_key(od::SET_SLOT, 5, SLEEP, K1).code,
        Code::Ok,
        "orders: SET_SLOT 5 again"
    );
    ck!(
        classify(K1)[0],
        T_CONSOLE,
        "orders: SET_SLOT gives back the old key"
    );
    with_key(od::GET_SLOT, 5, 0, K1);
    ck!(
        classify(K1)[0],
        T_SLEEP,
        "orders: GET_SLOT 5 after the second SET_SLOT"
    );

    // GET/SET_KEEPER, METER, SPACE.
    let kinds = [
        (od::GET_KEEPER, od::SET_KEEPER, "keeper"),
        (od::GET_METER, od::SET_METER, "meter"),
        (od::GET_SPACE, od::SET_SPACE, "space"),
    ];
    // A start key (to the domain itself), a page key.
    fetch(ek, DOM);
    Msg::new(DOM, od::MAKE_START)
        .w0(1)
        .recv([K3, 0, 0, 0])
        .call();
    node_key(0, K4);
    b.page(KEY);
    for (get, set, what) in kinds {
        let wrong: &[Slot] = match set {
            od::SET_KEEPER => &[CONSOLE, METER, SPACE, KEY],
            od::SET_METER => &[CONSOLE, K3, SPACE, K4],
            _ => &[CONSOLE, K3, METER, K4],
        };
        for &k in wrong {
            ck!(
                with_key(set, 0, k, K1).code,
                Code::WrongType,
                "orders: SET_{what} with a key of type {}",
                classify(k)[0]
            );
        }
        let right: &[Slot] = match set {
            od::SET_KEEPER => &[K3],
            od::SET_METER => &[METER],
            _ => &[SPACE, KEY],
        };
        for &k in right {
            ck!(
                with_key(set, 0, k, K1).code,
                Code::Ok,
                "orders: SET_{what} with a key of type {}",
                classify(k)[0]
            );
            ck!(with_key(get, 0, 0, K2).code, Code::Ok, "orders: GET_{what}");
            ck!(same(k, K2), 1, "orders: GET_{what} gives what was set");
        }
        let last = right[right.len() - 1];
        ck!(
            with_key(set, 0, 0, K1).code,
            Code::Ok,
            "orders: SET_{what} void"
        );
        ck!(
            same(K1, last),
            1,
            "orders: SET_{what} gives back the old key"
        );
        with_key(get, 0, 0, K2);
        ck!(
            classify(K2)[0],
            T_VOID,
            "orders: GET_{what} after setting void"
        );
    }

    // MAKE_START.
    ck!(
        call(od::MAKE_START, [256, 0, 0, 0]).code,
        Code::BadValue,
        "orders: MAKE_START info 256"
    );
    ck!(
        call(od::MAKE_START, [u64::MAX, 0, 0, 0]).code,
        Code::BadValue,
        "orders: MAKE_START info 2^64-1"
    );
    let a = with_key(od::MAKE_START, 255, 0, K1);
    ck!(a.code, Code::Ok, "orders: MAKE_START info 255");
    ck!(
        classify(K1)[0],
        T_START,
        "orders: MAKE_START gives a start key"
    );
    with_key(od::MAKE_START, 254, 0, K2);
    ck!(
        same(K1, K2),
        0,
        "orders: start keys with other infos differ"
    );

    // STOP/START, GET/SET_STATE.
    ck!(call(od::START, [0; 4]).code, Code::Ok, "orders: START");
    ck!(
        (call(od::GET_STATE, [0; 4]).w == [AVAILABLE, 0, 0, 0]) as u64,
        1,
        "orders: started: available, no flags"
    );
    ck!(call(od::STOP, [0; 4]).code, Code::Ok, "orders: STOP");
    ck!(
        (call(od::GET_STATE, [0; 4]).w == [AVAILABLE, STOPPED, 0, 0]) as u64,
        1,
        "orders: stopped: available, stopped"
    );
    for (w, what) in [
        ([WAITING, STOPPED, 0, 0], "state 1 (waiting)"),
        ([3, STOPPED, 0, 0], "state 3"),
        ([u64::MAX, STOPPED, 0, 0], "state 2^64-1"),
        ([AVAILABLE, 4, 0, 0], "flag 4"),
        ([AVAILABLE, 1 << 32 | 1, 0, 0], "flag 2^32"),
    ] {
        ck!(
            call(od::SET_STATE, w).code,
            Code::BadValue,
            "orders: SET_STATE with {what}"
        );
    }
    ck!(
        (call(od::GET_STATE, [0; 4]).w == [AVAILABLE, STOPPED, 0, 0]) as u64,
        1,
        "orders: refused SET_STATEs changed nothing"
    );
    let w = [AVAILABLE, STOPPED | 2, 7, 0x1234];
    ck!(
        call(od::SET_STATE, w).code,
        Code::Ok,
        "orders: SET_STATE with fault code, info, foreign flag"
    );
    ck!(
        (call(od::GET_STATE, [0; 4]).w == w) as u64,
        1,
        "orders: GET_STATE reads back SET_STATE"
    );
    ck!(
        call(od::SET_STATE, [AVAILABLE, STOPPED, 0, 0]).code,
        Code::Ok,
        "orders: SET_STATE back"
    );
    ck!(
        (call(od::GET_STATE, [0; 4]).w == [AVAILABLE, STOPPED, 0, 0]) as u64,
        1,
        "orders: state is back"
    );

    // Unknown orders.
    for o in [0, 22, 99, u64::MAX] {
        ck!(
            call(o, [0; 4]).code,
            Code::NoSuchOrder,
            "orders: order {}",
            N(o)
        );
    }

    // MAKE_DOMAIN's errors. Fresh parts in K1 (root), K2, K3, K4 (page).
    let p = Parts {
        root: b.node(K1),
        general: b.node(K2),
        annex: b.node(K3),
        fpu: b.page(K4),
    };
    let md = |inv: Slot, k: [Slot; 3]| {
        Msg::new(inv, order::node::MAKE_DOMAIN)
            .keys([k[0], k[1], k[2], 0])
            .recv([DOM, 0, 0, 0])
            .call()
            .code
    };
    ck!(
        md(K1, [0, K3, K4]),
        Code::VoidArgument,
        "orders: MAKE_DOMAIN with void general keys"
    );
    ck!(
        md(K1, [K2, 0, K4]),
        Code::VoidArgument,
        "orders: MAKE_DOMAIN with void annex"
    );
    ck!(
        md(K1, [K2, K3, 0]),
        Code::VoidArgument,
        "orders: MAKE_DOMAIN with void FPU page"
    );
    ck!(
        md(K1, [K4, K3, K4]),
        Code::WrongType,
        "orders: MAKE_DOMAIN with a page key for general keys"
    );
    ck!(
        md(K1, [K2, K4, K4]),
        Code::WrongType,
        "orders: MAKE_DOMAIN with a page key for the annex"
    );
    ck!(
        md(K1, [K2, K3, K3]),
        Code::WrongType,
        "orders: MAKE_DOMAIN with a node key for the FPU page"
    );
    ck!(
        md(K1, [K2, K3, SPACE]),
        Code::WrongType,
        "orders: MAKE_DOMAIN with a segment key for the FPU page"
    );
    Msg::new(K2, order::node::MAKE_RO)
        .recv([KEY, 0, 0, 0])
        .call();
    ck!(
        md(K1, [KEY, K3, K4]),
        Code::NoRights,
        "orders: MAKE_DOMAIN with read-only general keys"
    );
    Msg::new(K3, order::node::MAKE_SENSE)
        .recv([KEY, 0, 0, 0])
        .call();
    ck!(
        md(K1, [K2, KEY, K4]),
        Code::NoRights,
        "orders: MAKE_DOMAIN with a sense key for the annex"
    );
    Msg::new(K4, order::page::MAKE_RO)
        .recv([KEY, 0, 0, 0])
        .call();
    ck!(
        md(K1, [K2, K3, KEY]),
        Code::NoRights,
        "orders: MAKE_DOMAIN with a read-only FPU page"
    );
    Msg::new(K1, order::node::MAKE_RO)
        .recv([KEY, 0, 0, 0])
        .call();
    ck!(
        md(KEY, [K2, K3, K4]),
        Code::NoRights,
        "orders: MAKE_DOMAIN through a read-only node key"
    );
    // A destroyed node: keep the old key, renew it, then take the new one.
    copy(K2, KEY);
    must(
        Msg::new(NODES, order::range::RENEW)
            .w0(p.general)
            .recv([K2, 0, 0, 0])
            .call(),
        "RENEW",
    );
    ck!(
        md(K1, [KEY, K3, K4]),
        Code::VoidArgument,
        "orders: MAKE_DOMAIN with a destroyed node's key"
    );
    ck!(
        md(K1, [K2, K2, K4]),
        Code::BadValue,
        "orders: MAKE_DOMAIN with the same node twice"
    );
    ck!(
        md(K1, [K1, K3, K4]),
        Code::BadValue,
        "orders: MAKE_DOMAIN with the root as its own general keys"
    );
    // Parts of a domain that exists (e, prepared by the orders above).
    for (which, idx, what) in [(0, e.general, "general keys"), (1, e.annex, "annex")] {
        node_key(idx, KEY);
        let mut k = [K2, K3, K4];
        k[which] = KEY;
        ck!(
            md(K1, k),
            Code::BadState,
            "orders: MAKE_DOMAIN with another domain's {what}"
        );
    }
    page_key(e.fpu, KEY);
    ck!(
        md(K1, [K2, K3, KEY]),
        Code::BadState,
        "orders: MAKE_DOMAIN with another domain's FPU page"
    );
    node_key(e.root, KEY);
    ck!(
        md(KEY, [K2, K3, K4]),
        Code::BadState,
        "orders: MAKE_DOMAIN on another domain's root"
    );
    // Nothing changed in it.
    with_key(od::GET_SLOT, 5, 0, KEY);
    ck!(
        classify(KEY)[0],
        T_SLEEP,
        "orders: refused MAKE_DOMAINs left the other domain's keys"
    );
    ck!(
        (call(od::GET_STATE, [0; 4]).w == [AVAILABLE, STOPPED, 0, 0]) as u64,
        1,
        "orders: ... and its state"
    );
    // Now a good one.
    ck!(
        md(K1, [K2, K3, K4]),
        Code::Ok,
        "orders: MAKE_DOMAIN with good parts"
    );
    ck!(classify(DOM)[0], T_DOMAIN, "orders: ... gives a domain key");
}

/// MAKE_DOMAIN with parts of a domain that exists but is not prepared
/// (made, never used): the kernel cannot know they are parts without
/// preparing every domain, so it builds the second domain on them
/// (docs/ABI.md); the two share the node, and the kernel keeps them
/// consistent by never preparing both at once (the invariant walker runs
/// in this test). Each part is tried against a domain of its own.
fn probe_unprepared(b: &mut Bank) {
    for (which, what) in [
        (0usize, "general keys"),
        (1, "annex"),
        (2, "FPU page"),
        (3, "root"),
    ] {
        let (f, a) = make_domain(b, DOM);
        must(a, "MAKE_DOMAIN of a first domain");
        let fk = b.stash(DOM);
        b.node(K1);
        b.node(K2);
        b.node(K3);
        b.page(K4);
        let (inv, k) = match which {
            0 => {
                node_key(f.general, KEY);
                (K1, [KEY, K3, K4])
            }
            1 => {
                node_key(f.annex, KEY);
                (K1, [K2, KEY, K4])
            }
            2 => {
                page_key(f.fpu, KEY);
                (K1, [K2, K3, KEY])
            }
            _ => {
                node_key(f.root, KEY);
                (KEY, [K2, K3, K4])
            }
        };
        let c = Msg::new(inv, order::node::MAKE_DOMAIN)
            .keys([k[0], k[1], k[2], 0])
            .recv([KEY, 0, 0, 0])
            .call()
            .code;
        ck!(
            c,
            Code::Ok,
            "unprepared: MAKE_DOMAIN with the {what} of a domain made and not used since"
        );
        if which == 0 && c == Code::Ok {
            // Both domains now have the same general-keys node: a key set
            // in the new one appears in the first (each domain key works,
            // the other domain stepping aside each time).
            must(
                Msg::new(KEY, od::SET_SLOT)
                    .w0(7)
                    .keys([CONSOLE, 0, 0, 0])
                    .call(),
                "SET_SLOT in the new domain",
            );
            fetch(fk, DOM);
            Msg::new(DOM, od::GET_SLOT).w0(7).recv([K1, 0, 0, 0]).call();
            ck!(
                classify(K1)[0],
                T_CONSOLE,
                "unprepared: the first domain sees the key set through the shared node"
            );
        }
    }
}

/// A domain stopped while it waits for a reply must not run when the
/// reply comes (docs/ABI.md: STOP, "the domain neither runs nor accepts
/// messages"); after START it continues with the reply. `string`: the
/// reply carries a string (general path) or only words (fast path).
fn probe_stopped_reply(b: &mut Bank, string: u64) {
    let how = if string == 0 {
        "words-only reply"
    } else {
        "reply with a string"
    };
    for a in &S.probe {
        a.store(0, SeqCst);
    }
    let server = thread(b, t_slow, string);
    server.go();
    server.wait_state(AVAILABLE, 2000);
    server.start_key(0, KEY);
    let waiter = thread(b, t_probe, 100);
    waiter.give(4, KEY);
    waiter.go();
    ck!(
        waiter.wait_state(WAITING, 2000),
        true,
        "stopped reply ({how}): the caller waits for the slow server"
    );
    ck!(
        waiter.order(od::STOP, [0; 4]).code,
        Code::Ok,
        "stopped reply ({how}): STOP the waiting caller"
    );
    let st = waiter.state();
    ck!(st[0], WAITING, "stopped reply ({how}): it is waiting");
    ck!(st[1], STOPPED, "stopped reply ({how}): it is stopped");
    pause(3 * SLOW_NS / 1_000_000);
    ck!(
        S.probe[0].load(SeqCst),
        0,
        "stopped reply ({how}): the stopped caller did not run when the reply came"
    );
    let st = waiter.state();
    println!(
        "domtest: stopped reply ({how}): caller's state after the reply: {} flags {}",
        st[0], st[1]
    );
    ck!(
        waiter.order(od::START, [0; 4]).code,
        Code::Ok,
        "stopped reply ({how}): START the caller"
    );
    ck!(
        poll(2000, || S.probe[0].load(SeqCst) >= 1),
        true,
        "stopped reply ({how}): the started caller continues"
    );
    pause(10);
    ck!(
        S.probe[0].load(SeqCst),
        1,
        "stopped reply ({how}): one answer"
    );
    ck!(
        S.probe[1].load(SeqCst),
        0,
        "stopped reply ({how}): its code"
    );
    ck!(
        S.probe[2].load(SeqCst),
        101,
        "stopped reply ({how}): its w0"
    );
    ck!(
        S.probe[3].load(SeqCst),
        string,
        "stopped reply ({how}): its string length"
    );
}

stet_rt::main!(main);
