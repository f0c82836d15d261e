//! The sysinfo key under test (tests/system/sysinfo.toml): every field of
//! a DOMAINS record for two domains whose oids, meters and keepers the
//! image fixes, the walk's end, OBJECTS, and NAME with every bad argument.
//!
//! The image: meter `m1` (node 1, 5000 ticks), this domain (root node 2,
//! prime meter, no keeper), `k` (root node 6: `hello` on `m1` with keeper
//! `sitest:7`; it prints and ends, so it is available).
//!
//! Keys: 1 console, 2 sleep, 3 sysinfo, 4 a domain key to `k`, 5 a number
//! key.
#![no_std]
#![no_main]

use stet_rt::abi::code::Code;
use stet_rt::abi::order::sysinfo as o;
use stet_rt::checks::Checks;
use stet_rt::kernel::{now_ns, sleep_until};
use stet_rt::key::{Msg, Slot};
use stet_rt::println;

const SYSINFO: Slot = 3;
const K: Slot = 4;
const NUMBER: Slot = 5;
const NONE: u64 = u64::MAX;

static CHECKS: Checks = Checks::new("sitest");

fn check<W: core::fmt::Debug>(what: &str, got: u64, want: W)
where
    u64: PartialEq<W>,
{
    CHECKS.eq(what, got, want);
}

fn word(r: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(r[i * 8..i * 8 + 8].try_into().unwrap_or([0xff; 8]))
}

/// The DOMAINS record of the domain with root `oid` → (record, its index).
fn record_of(oid: u64) -> Option<([u8; o::DOMAIN_RECORD], u64)> {
    let mut next = 0;
    let mut rec = [0u8; o::DOMAIN_RECORD];
    loop {
        let a = Msg::new(SYSINFO, o::DOMAINS).w0(next).call_into(&mut rec);
        if a.code != Code::Ok {
            return None;
        }
        if a.len != o::DOMAIN_RECORD || a.w[0] <= next {
            CHECKS.fail(format_args!(
                "DOMAINS answered {} bytes, next {}: WRONG",
                a.len, a.w[0]
            ));
            return None;
        }
        if word(&rec, 0) == oid {
            return Some((rec, a.w[0] - 1));
        }
        next = a.w[0];
    }
}

fn name_of(rec: &[u8]) -> &[u8] {
    let n = rec[56..80].iter().position(|&b| b == 0).unwrap_or(24);
    &rec[56..56 + n]
}

fn name(key: Slot, s: &[u8]) -> u64 {
    Msg::new(SYSINFO, o::NAME)
        .string(s)
        .keys([key, 0, 0, 0])
        .call()
        .code
}

fn main(_arg: u64) -> i64 {
    // Let `k` run to its end.
    sleep_until(now_ns() + 20_000_000);

    // This domain: running, the prime meter (unlimited), no keeper.
    let Some((me, _)) = record_of(2) else {
        println!("sitest: no record for this domain: WRONG");
        return 1;
    };
    check("self state", word(&me, 1), 2);
    check("self meter", word(&me, 3), 0);
    check("self time left", word(&me, 4), u64::MAX);
    check("self keeper", word(&me, 5), NONE);
    check("self keeper info", word(&me, 6), NONE);
    check("self name", (name_of(&me) == b"sitest") as u64, 1);

    // k: available, on m1, kept by this domain with key info 7.
    let Some((k, ki)) = record_of(6) else {
        println!("sitest: no record for k: WRONG");
        return 1;
    };
    check("k state", word(&k, 1), 0);
    check("k meter", word(&k, 3), 1);
    let left = word(&k, 4);
    let charged = word(&k, 2);
    check("k time left + ticks charged", left + charged, 5000);
    check("k keeper", word(&k, 5), 2);
    check("k keeper info", word(&k, 6), 7);
    check("k name", (name_of(&k) == b"k") as u64, 1);

    // The walk ends: past the last, and far past it.
    let mut rec = [0u8; o::DOMAIN_RECORD];
    let mut last = ki;
    let mut next = ki + 1;
    loop {
        let a = Msg::new(SYSINFO, o::DOMAINS).w0(next).call_into(&mut rec);
        if a.code != Code::Ok {
            check("past the last", a.code, Code::BadValue);
            break;
        }
        last = a.w[0] - 1;
        next = a.w[0];
    }
    check("walk ended after the last used", (last >= ki) as u64, 1);
    let far = Msg::new(SYSINFO, o::DOMAINS)
        .w0(u64::MAX)
        .call_into(&mut rec);
    check("DOMAINS at 2^64-1", far.code, Code::BadValue);

    // OBJECTS: used within capacity.
    let mut b = [0u8; 32];
    let a = Msg::new(SYSINFO, o::OBJECTS).call_into(&mut b);
    check("OBJECTS", a.code, Code::Ok);
    check("OBJECTS string", a.len as u64, 32);
    let (nu, nc) = (a.w[0] >> 32, a.w[0] & 0xffff_ffff);
    let (pu, pc) = (a.w[1] >> 32, a.w[1] & 0xffff_ffff);
    check(
        "nodes used within the cache",
        (nu > 0 && nu <= nc) as u64,
        1,
    );
    check(
        "pages used within the cache",
        (pu > 0 && pu <= pc) as u64,
        1,
    );
    check("free frames", (a.w[3] > 0) as u64, 1);
    // Without a disk, "read" counts the objects loaded from the big bang
    // image; nothing is evicted with this much memory.
    check(
        "nodes read at most those cached",
        (word(&b, 0) <= nu) as u64,
        1,
    );
    check(
        "pages read at most those cached",
        (word(&b, 1) <= pu) as u64,
        1,
    );
    check("nodes evicted", word(&b, 2), 0);
    check("pages evicted", word(&b, 3), 0);

    // NAME: renames k, and refuses every bad argument.
    check("NAME k worker", name(K, b"worker"), Code::Ok);
    let (k, _) = record_of(6).unwrap_or(([0; o::DOMAIN_RECORD], 0));
    check("k renamed", (name_of(&k) == b"worker") as u64, 1);
    let longest = [b'n'; 23];
    check("NAME 23 bytes", name(K, &longest), Code::Ok);
    let (k, _) = record_of(6).unwrap_or(([0; o::DOMAIN_RECORD], 0));
    check("23-byte name kept", (name_of(&k) == longest) as u64, 1);
    check("NAME 24 bytes", name(K, &[b'n'; 24]), Code::BadValue);
    check("NAME empty", name(K, b""), Code::BadValue);
    check("NAME with a NUL", name(K, b"a\0b"), Code::BadValue);
    check("NAME not UTF-8", name(K, b"\xff\xfe"), Code::BadValue);
    check("NAME void key", name(0, b"x"), Code::VoidArgument);
    check("NAME number key", name(NUMBER, b"x"), Code::WrongType);
    check(
        "order 99",
        Msg::new(SYSINFO, 99).call().code,
        Code::NoSuchOrder,
    );
    let (k, _) = record_of(6).unwrap_or(([0; o::DOMAIN_RECORD], 0));
    check(
        "refused names change nothing",
        (name_of(&k) == longest) as u64,
        1,
    );

    match CHECKS.failures() {
        0 => println!("sitest: all ok"),
        n => println!("sitest: {n} checks FAILED"),
    }
    0
}

stet_rt::main!(main);
