//! The services under power cuts (tests/system/services_powercut.toml):
//! a workload over the space bank, the factory and the reincarnation
//! service whose every round checks exact invariants, and which checks
//! itself after every restart from a checkpoint.
//!
//! Round r: a sub-bank S of the workload's own bank L; `r % 7 + 1` pages
//! and as many nodes from S; S's INFO must be exactly that; S destroyed;
//! L's INFO must be back to what it was before the first round (S's
//! forwarder node included, all of it reclaimed). Every third round the
//! supervised block service `blk` is crashed through a client's call
//! (`blk::CRASH`): the call must answer `RESTARTED` and the replacement,
//! looked up in the data store under a higher generation, must serve a
//! block with every byte right. Every fourth round a checkpoint is taken
//! and `svcload: commit R=<r>` printed: a promise that round r survives
//! any power cut from then on.
//!
//! The books that make this hold live in four domains' memory (the bank's,
//! the factory's, the reincarnation service's, the data store's) and this
//! one's; a restart resumes all of them from one snapshot, so after every
//! restart the invariants hold again and the round is at least the last
//! promised: `svc: ok round=<r> gen=<g>` (`g`: the generation restarted
//! from), or `svc: FAILED <what>`. On a new store: `svc: fresh`.
//!
//! Keys: 1 console, 2 sleep, 3 checkpoint, 4 the reincarnation service
//! (client), 5 the metafactory, 6 the data store (lookup), 7 the prime
//! bank, 8 the blocksvc program.
#![no_std]
#![no_main]

use stet_rt::abi::code::Code;
use stet_rt::abi::service::{blk, store as so};
use stet_rt::key::{Msg, Slot};
use stet_rt::supervised::{self, Registration};
use stet_rt::{bank, checkpoint, println};

const CHECKPOINT: Slot = 3;
const RS: Slot = 4;
const META: Slot = 5;
const LOOKUP: Slot = 6;
const PRIME: Slot = 7;
const PROGRAM: Slot = 8;
const L: Slot = 9;
const S: Slot = 10;
const X: Slot = 11;
const SVC: Slot = 12;
const T1: Slot = 13;
const T2: Slot = 14;

/// Why a round failed: what, and the code or value found.
type Fail = (&'static str, u64);

fn ok(what: &'static str, c: u64) -> Result<(), Fail> {
    if c == Code::Ok {
        Ok(())
    } else {
        Err((what, c))
    }
}

fn want(what: &'static str, got: u64, want: u64) -> Result<(), Fail> {
    if got == want {
        Ok(())
    } else {
        Err((what, got))
    }
}

/// `blk`'s current key into SVC → its generation.
fn lookup() -> Result<u64, Fail> {
    let a = Msg::new(LOOKUP, so::GET)
        .string(b"blk")
        .recv([SVC, 0, 0, 0])
        .call();
    ok("lookup blk", a.code).map(|_| a.w[0])
}

/// What survives in this domain's memory with everything else.
struct State {
    round: u64,
    /// L's INFO (pages, nodes) before the first round.
    base: [u64; 2],
    /// `blk`'s generation as last seen.
    generation: u64,
    /// The store's restart count as last seen.
    restarts: u64,
}

fn setup(st: &mut State) -> Result<(), Fail> {
    supervised::register(&Registration {
        rs: RS,
        meta: META,
        bank: PRIME,
        program: PROGRAM,
        component1: 1,
        scratch: [T1, T2],
        name: b"blk",
        policy: [1, 0, 0, 0],
    })?;
    st.generation = lookup()?;
    bank::create_sub(PRIME, u64::MAX, u64::MAX, L).map_err(|c| ("L", c))?;
    let i = bank::info(L).map_err(|c| ("INFO L", c))?;
    st.base = [i[0], i[1]];
    Ok(())
}

/// The invariants between rounds.
fn check(st: &State) -> Result<(), Fail> {
    let i = bank::info(L).map_err(|c| ("INFO L", c))?;
    want("L's pages", i[0], st.base[0])?;
    want("L's nodes", i[1], st.base[1])?;
    // A supervised service may be replaced at any moment (a hang detected,
    // say): a client asks again, of the replacement, as any client must.
    let mut b = [0u8; 4096];
    let mut tries = 0;
    let a = loop {
        let g = lookup()?;
        if g < st.generation {
            return Err(("blk's generation went back", g));
        }
        let a = Msg::new(SVC, blk::READ).w0(3).call_into(&mut b);
        tries += 1;
        if !matches!(Code::decode(a.code), Some(Code::Void | Code::Restarted)) || tries > 1000 {
            break a;
        }
        stet_rt::kernel::sleep_until(stet_rt::kernel::now_ns() + 100_000);
    };
    ok("READ", a.code)?;
    want("READ's bytes", a.len as u64, 4096)?;
    let bad = (0..4096).filter(|&i| b[i] != blk::byte(3, i)).count();
    want("wrong bytes", bad as u64, 0)
}

fn round(st: &mut State) -> Result<(), Fail> {
    let r = st.round + 1;
    bank::create_sub(L, 64, 64, S).map_err(|c| ("S", c))?;
    let k = r % 7 + 1;
    for _ in 0..k {
        bank::alloc_page(S, X).map_err(|c| ("ALLOC_PAGE", c))?;
        bank::alloc_node(S, X).map_err(|c| ("ALLOC_NODE", c))?;
    }
    let i = bank::info(S).map_err(|c| ("INFO S", c))?;
    want("S's pages", i[0], k)?;
    want("S's nodes", i[1], k)?;
    bank::destroy(S).map_err(|c| ("DESTROY S", c))?;
    if r.is_multiple_of(3) {
        lookup()?;
        let c = Msg::new(SVC, blk::CRASH).call().code;
        // VOID: the service was already being replaced (a restart caught
        // the crash half handled); either way a new generation comes.
        if c != Code::Restarted && c != Code::Void {
            return Err(("CRASH answered", c));
        }
        let mut tries = 0;
        loop {
            let g = lookup()?;
            if g > st.generation {
                st.generation = g;
                break;
            }
            tries += 1;
            if tries > 100_000 {
                return Err(("no new generation after", g));
            }
            stet_rt::kernel::sleep_until(stet_rt::kernel::now_ns() + 100_000);
        }
    }
    check(st)?;
    st.round = r;
    if r.is_multiple_of(4) {
        checkpoint::take_retrying(CHECKPOINT).map_err(|c| ("TAKE", c))?;
        println!("svcload: commit R={r}");
    }
    Ok(())
}

fn main(_arg: u64) -> i64 {
    let mut st = State {
        round: 0,
        base: [0; 2],
        generation: 0,
        restarts: 0,
    };
    let info = checkpoint::info(CHECKPOINT);
    st.restarts = info.map_or(0, |i| i.restarts);
    if let Err((what, c)) = setup(&mut st) {
        println!("svc: FAILED setting up: {what} ({c})");
        return 1;
    }
    println!("svc: fresh");
    loop {
        // A restart from a checkpoint since the last round: check first.
        if let Ok(i) = checkpoint::info(CHECKPOINT) {
            if i.restarts != st.restarts {
                st.restarts = i.restarts;
                match check(&st) {
                    Ok(()) => println!("svc: ok round={} gen={}", st.round, i.restart_generation),
                    Err((what, c)) => {
                        println!("svc: FAILED after the restart: {what} ({c})");
                        return 1;
                    }
                }
            }
        }
        if let Err((what, c)) = round(&mut st) {
            println!("svc: FAILED in round {}: {what} ({c})", st.round + 1);
            return 1;
        }
    }
}

stet_rt::main!(main);
