//! The space bank, exactly (tests/system/bank_basic.toml): allocation from
//! the prime bank and sub-banks, limits along the whole chain, freeing only
//! through the owner, keys voided by free and destroy, sub-banks of
//! sub-banks, limits set only from above, bank keys verified (and a forged
//! forwarder refused), and a runaway domain that keeps creating domains,
//! stopped by its bank's limit while the rest of the system runs on.
//!
//! Argument 0, the tester. Keys: 1 console, 2 sleep, 3 discrim, 4 the prime
//! bank, 5 a start key to the runaway, 6 a start key to itself, 7 a fresh
//! node; 8–15 scratch.
//!
//! Argument 1, the runaway. Keys 1–3 as above; it waits for a bank key,
//! then builds domains from it (3 nodes and a page each) until the bank
//! says `LIMIT`, and answers with the count and the last domain's key.
//!
//! Each check prints `banktest: <what>: ok` or `... WRONG (got X, want
//! Y)`; the last line is `banktest: all ok` or `banktest: N checks WRONG`.
#![no_std]
#![no_main]

use stet_rt::abi::order::{discrim, domain, node, page};
use stet_rt::abi::{code::Code, service::bank as ob};
use stet_rt::bank;
use stet_rt::checks::Checks;
use stet_rt::key::{wait, Msg, Slot};
use stet_rt::println;

const DISCRIM: Slot = 3;
const PRIME: Slot = 4;
const RUNAWAY: Slot = 5;
const SELF: Slot = 6;
const FRESH: Slot = 7;
const SUB: Slot = 8;
const SUBSUB: Slot = 9;
const P1: Slot = 10;
const P2: Slot = 11;
const K: Slot = 12;
const DOMKEY: Slot = 13;
const T: Slot = 14;
const T2: Slot = 15;

const MAX: u64 = u64::MAX;
const T_FORWARDER: u64 = 16;

static CHECKS: Checks = Checks::new("banktest");

fn check<W: core::fmt::Debug>(what: impl core::fmt::Display, got: u64, want: W)
where
    u64: PartialEq<W>,
{
    CHECKS.eq(what, got, want);
}

fn code_of(r: Result<(), u64>) -> u64 {
    match r {
        Ok(()) => Code::Ok.into(),
        Err(c) => c,
    }
}

fn info(b: Slot) -> [u64; 4] {
    bank::info(b).unwrap_or([u64::MAX - 1; 4])
}

fn check_info(what: &str, b: Slot, want: [u64; 4]) {
    let got = info(b);
    for (i, name) in ["pages used", "nodes used", "page limit", "node limit"]
        .iter()
        .enumerate()
    {
        check(format_args!("{what} {name}"), got[i], want[i]);
    }
}

/// (type, dangling) as discrim classifies the key in `slot`.
fn classify(slot: Slot) -> (u64, u64) {
    let a = Msg::new(DISCRIM, discrim::CLASSIFY)
        .keys([slot, 0, 0, 0])
        .call();
    (a.w[0], a.w[2])
}

fn tester() -> i64 {
    // The prime bank.
    check(
        "prime: alloc page",
        code_of(bank::alloc_page(PRIME, P1)),
        Code::Ok,
    );
    Msg::new(P1, page::WRITE_WORD)
        .words([8, 0x1234, 0, 0])
        .call();
    check(
        "prime: page is writable",
        Msg::new(P1, page::READ_WORD).w0(8).call().w[0],
        0x1234,
    );
    check_info("prime", PRIME, [1, 0, MAX, MAX]);

    // A sub-bank: its key is a forwarder, verified as a bank key.
    check(
        "sub: create",
        code_of(bank::create_sub(PRIME, 4, 3, SUB)),
        Code::Ok,
    );
    check("sub: key type", classify(SUB).0, T_FORWARDER);
    check(
        "verify sub",
        bank::verify(PRIME, SUB).unwrap_or(false) as u64,
        1,
    );
    check(
        "verify prime",
        bank::verify(PRIME, PRIME).unwrap_or(false) as u64,
        1,
    );
    check(
        "verify a page key",
        bank::verify(PRIME, P1).unwrap_or(true) as u64,
        0,
    );
    check_info("prime after sub", PRIME, [1, 1, MAX, MAX]);
    check_info("sub", SUB, [0, 0, 4, 3]);

    // IDENTIFY: a read-only key to a sub-bank's page names the same
    // object through the sub-bank and its ancestor, and gives back a
    // full key; another bank's object is refused.
    check(
        "identify: alloc",
        code_of(bank::alloc_page(SUB, T)),
        Code::Ok,
    );
    Msg::new(T, page::MAKE_RO).recv([T2, 0, 0, 0]).call();
    let via_sub = bank::identify(SUB, T2, K);
    let via_prime = bank::identify(PRIME, T2, K);
    check("identify: via sub", via_sub.is_ok() as u64, 1);
    check(
        "identify: same object via prime",
        (via_sub == via_prime) as u64,
        1,
    );
    let w = Msg::new(K, page::WRITE_WORD)
        .words([0, 77, 0, 0])
        .call()
        .code;
    check("identify: the key back is writable", w, Code::Ok);
    check(
        "identify: wrote the page",
        Msg::new(T, page::READ_WORD).w0(0).call().w[0],
        77,
    );
    check(
        "identify: the prime bank's page through the sub-bank",
        code_of(bank::identify(SUB, P1, K).map(|_| ())),
        Code::BadValue,
    );
    check("identify: free", code_of(bank::free(SUB, T)), Code::Ok);
    check_info("sub after identify", SUB, [0, 0, 4, 3]);

    // ALLOC_PAGES_INTO: pages straight into slots 5..8 of a node, all or
    // none.
    check(
        "into: three pages",
        code_of(bank::alloc_pages_into(SUB, FRESH, 5, 3)),
        Code::Ok,
    );
    check_info("into: counted", SUB, [3, 0, 4, 3]);
    let mut distinct = true;
    for s in 5..8u64 {
        Msg::new(FRESH, node::FETCH).w0(s).recv([T, 0, 0, 0]).call();
        let w = Msg::new(T, page::WRITE_WORD)
            .words([8, s, 0, 0])
            .call()
            .code;
        check(format_args!("into: slot {s} a writable page"), w, Code::Ok);
        check(
            format_args!("into: slot {s} was zero"),
            Msg::new(T, page::READ_WORD).w0(0).call().w[0],
            0,
        );
    }
    for s in 5..8u64 {
        Msg::new(FRESH, node::FETCH).w0(s).recv([T, 0, 0, 0]).call();
        distinct &= Msg::new(T, page::READ_WORD).w0(8).call().w[0] == s;
    }
    check("into: three different pages", distinct as u64, 1);
    check(
        "into: two more than the limit allows",
        code_of(bank::alloc_pages_into(SUB, FRESH, 0, 2)),
        Code::Limit,
    );
    check_info("into: none taken", SUB, [3, 0, 4, 3]);
    let prime_before = info(PRIME);
    check(
        "into: slots past 15",
        code_of(bank::alloc_pages_into(PRIME, FRESH, 15, 2)),
        Code::SlotRange,
    );
    check(
        "into: the kernel's refusal gives the pages back",
        (info(PRIME) == prime_before) as u64,
        1,
    );
    Msg::new(FRESH, node::MAKE_SENSE).recv([T2, 0, 0, 0]).call();
    for (what, b, node, count, want) in [
        ("into: a page key is no node", SUB, P1, 1, Code::WrongType),
        ("into: a sense key", SUB, T2, 1, Code::NoRights),
        ("into: count 0", SUB, FRESH, 0, Code::BadValue),
        ("into: count 17", PRIME, FRESH, 17, Code::BadValue),
    ] {
        check(
            what,
            code_of(bank::alloc_pages_into(b, node, 0, count)),
            want,
        );
    }
    check_info("into: failures took none", SUB, [3, 0, 4, 3]);
    for s in 5..8u64 {
        Msg::new(FRESH, node::SWAP).w0(s).recv([T, 0, 0, 0]).call();
        check(
            format_args!("into: free slot {s}'s page"),
            code_of(bank::free(SUB, T)),
            Code::Ok,
        );
    }
    check_info("into: all back", SUB, [0, 0, 4, 3]);

    // Limits.
    for i in 0..4 {
        check(
            format_args!("sub: alloc page {i}"),
            code_of(bank::alloc_page(SUB, P2)),
            Code::Ok,
        );
    }
    check(
        "sub: fifth page",
        code_of(bank::alloc_page(SUB, T)),
        Code::Limit,
    );
    check_info("sub full", SUB, [4, 0, 4, 3]);
    check_info("prime counts sub", PRIME, [5, 1, MAX, MAX]);

    // Freeing: only through the owner; the key goes void; the limit frees.
    check(
        "prime frees sub's page",
        code_of(bank::free(PRIME, P2)),
        Code::BadValue,
    );
    check(
        "sub frees prime's page",
        code_of(bank::free(SUB, P1)),
        Code::BadValue,
    );
    check(
        "free a non-object key",
        code_of(bank::free(SUB, DISCRIM)),
        Code::WrongType,
    );
    check("sub: free", code_of(bank::free(SUB, P2)), Code::Ok);
    check("freed page key is void", classify(P2).1, 1);
    check(
        "free it again",
        code_of(bank::free(SUB, P2)),
        Code::VoidArgument,
    );
    check(
        "sub: alloc after free",
        code_of(bank::alloc_page(SUB, P2)),
        Code::Ok,
    );
    check(
        "fresh page reads zero",
        Msg::new(P2, page::READ_WORD).w0(0).call().w[0],
        0,
    );

    // A sub-bank of the sub-bank: bounded by its parent's limits.
    check(
        "subsub: create",
        code_of(bank::create_sub(SUB, MAX, MAX, SUBSUB)),
        Code::Ok,
    );
    check(
        "subsub: node 1",
        code_of(bank::alloc_node(SUBSUB, K)),
        Code::Ok,
    );
    check(
        "subsub: node 2",
        code_of(bank::alloc_node(SUBSUB, T)),
        Code::Ok,
    );
    check(
        "subsub: node 3 over sub's limit",
        code_of(bank::alloc_node(SUBSUB, T)),
        Code::Limit,
    );
    check(
        "subsub: sub-bank over sub's limit",
        code_of(bank::create_sub(SUBSUB, 1, 1, T)),
        Code::Limit,
    );
    check_info("subsub", SUBSUB, [0, 2, MAX, MAX]);
    check_info("sub with subsub", SUB, [4, 3, 4, 3]);

    // Limits are set from above only.
    check(
        "sub limits subsub",
        code_of(bank::set_limits(SUB, SUBSUB, 1, 1)),
        Code::Ok,
    );
    check_info("subsub limited", SUBSUB, [0, 2, 1, 1]);
    check(
        "prime limits subsub",
        code_of(bank::set_limits(PRIME, SUBSUB, 2, 2)),
        Code::Ok,
    );
    check(
        "subsub limits sub",
        code_of(bank::set_limits(SUBSUB, SUB, 9, 9)),
        Code::BadValue,
    );
    check(
        "sub limits itself",
        code_of(bank::set_limits(SUB, SUB, 9, 9)),
        Code::BadValue,
    );
    check(
        "limits of a non-bank",
        code_of(bank::set_limits(PRIME, P1, 9, 9)),
        Code::BadValue,
    );

    // A forwarder made by someone else is not a bank key.
    Msg::new(FRESH, node::SWAP)
        .w0(0)
        .keys([SELF, 0, 0, 0])
        .call();
    let made = Msg::new(FRESH, node::MAKE_FORWARDER)
        .recv([T2, 0, 0, 0])
        .call()
        .code;
    check("make a forwarder", made, Code::Ok);
    check("forged forwarder type", classify(T2).0, T_FORWARDER);
    check(
        "verify forged forwarder",
        bank::verify(PRIME, T2).unwrap_or(true) as u64,
        0,
    );
    let sense = Msg::new(FRESH, node::MAKE_SENSE)
        .recv([T, 0, 0, 0])
        .call()
        .code;
    check("sense key", sense, Code::Ok);
    check(
        "no forwarder from a sense key",
        Msg::new(T, node::MAKE_FORWARDER)
            .recv([T2, 0, 0, 0])
            .call()
            .code,
        Code::NoRights,
    );

    // Destroying: the prime bank cannot be; a sub-bank takes its tree.
    check(
        "destroy prime",
        code_of(bank::destroy(PRIME)),
        Code::BadState,
    );
    check("destroy sub", code_of(bank::destroy(SUB)), Code::Ok);
    check(
        "sub key void",
        Msg::new(SUB, ob::INFO).call().code,
        Code::Void,
    );
    check(
        "subsub key void",
        Msg::new(SUBSUB, ob::INFO).call().code,
        Code::Void,
    );
    check("sub's page void", classify(P2).1, 1);
    check("subsub's node void", classify(K).1, 1);
    check_info("prime after destroy", PRIME, [1, 0, MAX, MAX]);
    check(
        "prime's page survives",
        Msg::new(P1, page::READ_WORD).w0(8).call().w[0],
        0x1234,
    );

    // The runaway: builds domains until its bank says LIMIT.
    check(
        "runaway bank",
        code_of(bank::create_sub(PRIME, 100, 30, SUB)),
        Code::Ok,
    );
    let a = Msg::new(RUNAWAY, 1)
        .keys([SUB, 0, 0, 0])
        .recv([DOMKEY, 0, 0, 0])
        .call();
    check("runaway stopped by LIMIT", a.code, Code::Limit);
    check("runaway built domains", a.w[0], 10);
    check("runaway's last domain is a domain", classify(DOMKEY).0, 5);
    check_info("runaway bank", SUB, [10, 30, 100, 30]);
    check(
        "system runs on: prime alloc",
        code_of(bank::alloc_page(PRIME, P2)),
        Code::Ok,
    );
    check(
        "destroy runaway bank",
        code_of(bank::destroy(SUB)),
        Code::Ok,
    );
    check("runaway's domains are void", classify(DOMKEY).1, 1);
    check_info("prime at the end", PRIME, [2, 0, MAX, MAX]);

    let fails = CHECKS.failures();
    if fails == 0 {
        println!("banktest: all ok");
    } else {
        println!("banktest: {fails} checks WRONG");
    }
    0
}

/// Builds one domain from the bank in slot 4 into slots 6–11.
fn build_one() -> Result<(), u64> {
    bank::alloc_node(4, 6)?;
    bank::alloc_node(4, 7)?;
    bank::alloc_node(4, 8)?;
    bank::alloc_page(4, 9)?;
    let c = Msg::new(6, node::MAKE_DOMAIN)
        .keys([7, 8, 9, 0])
        .recv([10, 0, 0, 0])
        .call()
        .code;
    if c != Code::Ok {
        return Err(c);
    }
    let c = Msg::new(10, domain::MAKE_START)
        .recv([11, 0, 0, 0])
        .call()
        .code;
    if c != Code::Ok {
        return Err(c);
    }
    Ok(())
}

fn runaway() -> i64 {
    const RESUME: Slot = 5;
    let mut a = wait([4, 0, 0, 0], RESUME, &mut []);
    loop {
        let mut n = 0u64;
        let why = loop {
            match build_one() {
                Ok(()) => n += 1,
                Err(c) => break c,
            }
        };
        println!("runaway: built {n} domains, then code {why}");
        // Key 0 of the answer: the last domain built.
        let _ = a;
        a = Msg::new(RESUME, why)
            .words([n, 0, 0, 0])
            .keys([10, 0, 0, 0])
            .recv([4, 0, 0, 0])
            .resume_into(RESUME)
            .ret_into(&mut []);
    }
}

fn main(arg: u64) -> i64 {
    match arg {
        1 => runaway(),
        _ => tester(),
    }
}

stet_rt::main!(main);
