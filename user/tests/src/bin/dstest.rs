//! The data store, exactly (tests/system/datastore.toml): publish, look up,
//! republish (the generation goes up and the new key is returned), blobs,
//! listing, deleting, and the rights of the two kinds of start key.
//!
//! Keys: 1 console, 2 a publisher key (start key, info 1), 3 a lookup key
//! (info 0), 4 discrim, 5 and 6 two different keys to publish (a start key
//! to itself and the console), 7–9 scratch.
#![no_std]
#![no_main]

use stet_rt::abi::code::Code;
use stet_rt::abi::order::discrim;
use stet_rt::abi::service::store as o;
use stet_rt::checks::Checks;
use stet_rt::key::{Msg, Slot};
use stet_rt::println;

const PUB: Slot = 2;
const LOOK: Slot = 3;
const DISCRIM: Slot = 4;
const KA: Slot = 5;
const KB: Slot = 6;
const GOT: Slot = 7;

static CHECKS: Checks = Checks::new("dstest");

fn check<W: core::fmt::Debug>(what: &str, got: u64, want: W)
where
    u64: PartialEq<W>,
{
    CHECKS.eq(what, got, want);
}

fn put(via: Slot, s: &[u8], key: Slot) -> (u64, u64) {
    let a = Msg::new(via, o::PUT).string(s).keys([key, 0, 0, 0]).call();
    (a.code, a.w[0])
}

fn same(a: Slot, b: Slot) -> u64 {
    Msg::new(DISCRIM, discrim::COMPARE)
        .keys([a, b, 0, 0])
        .call()
        .w[0]
}

fn main(_arg: u64) -> i64 {
    check("publish", put(PUB, b"disk\0v1", KA).0, Code::Ok);
    check(
        "lookup key cannot publish",
        put(LOOK, b"x", KA).0,
        Code::NoRights,
    );
    let mut blob = [0u8; 64];
    let a = Msg::new(LOOK, o::GET)
        .string(b"disk")
        .recv([GOT, 0, 0, 0])
        .call_into(&mut blob);
    check("get", a.code, Code::Ok);
    check("get: generation 1", a.w[0], 1);
    check("get: blob length", a.len as u64, 2);
    check("get: blob", (&blob[..2] == b"v1") as u64, 1);
    check("get: the key published", same(GOT, KA), 1);
    // A restart publishes a new key under the same name.
    let (c, g) = put(PUB, b"disk\0v2!", KB);
    check("republish", c, Code::Ok);
    check("republish: generation 2", g, 2);
    let a = Msg::new(LOOK, o::GET)
        .string(b"disk")
        .recv([GOT, 0, 0, 0])
        .call_into(&mut blob);
    check("get after republish", a.w[0], 2);
    check("get: the new key", same(GOT, KB), 1);
    check("get: the new blob", (&blob[..3] == b"v2!") as u64, 1);
    check(
        "get: unknown name",
        Msg::new(LOOK, o::GET).string(b"nope").call().code,
        Code::BadValue,
    );
    check(
        "publish with an empty name",
        put(PUB, b"\0x", KA).0,
        Code::BadValue,
    );
    check(
        "publish a 33-byte name",
        put(PUB, &[b'n'; 33], KA).0,
        Code::BadValue,
    );
    check("publish second", put(PUB, b"net", KA).0, Code::Ok);
    // Listing: both names, in table order.
    let mut name = [0u8; 32];
    let a = Msg::new(LOOK, o::LIST).w0(0).call_into(&mut name);
    check(
        "list 0",
        (a.code == Code::Ok && &name[..a.len] == b"disk") as u64,
        1,
    );
    let a = Msg::new(LOOK, o::LIST).w0(a.w[1]).call_into(&mut name);
    check(
        "list 1",
        (a.code == Code::Ok && &name[..a.len] == b"net") as u64,
        1,
    );
    check(
        "list end",
        Msg::new(LOOK, o::LIST).w0(a.w[1]).call().code,
        Code::BadValue,
    );
    check(
        "lookup key cannot delete",
        Msg::new(LOOK, o::DELETE).string(b"net").call().code,
        Code::NoRights,
    );
    check(
        "delete",
        Msg::new(PUB, o::DELETE).string(b"net").call().code,
        Code::Ok,
    );
    check(
        "deleted",
        Msg::new(LOOK, o::GET).string(b"net").call().code,
        Code::BadValue,
    );
    // Fill the table: 127 more names fit, the next does not.
    let mut n = 0;
    for i in 0..o::MAX_ENTRIES {
        let s = [
            b'k',
            b'0' + (i / 100) as u8,
            b'0' + (i / 10 % 10) as u8,
            b'0' + (i % 10) as u8,
        ];
        if put(PUB, &s, KA).0 == Code::Ok {
            n += 1;
        }
    }
    check(
        "entries that fit besides disk",
        n,
        o::MAX_ENTRIES as u64 - 1,
    );
    let fails = CHECKS.failures();
    if fails == 0 {
        println!("dstest: all ok");
    } else {
        println!("dstest: {fails} checks WRONG");
    }
    0
}

stet_rt::main!(main);
