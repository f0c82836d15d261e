//! Checks messages through the echo server exactly: key info, words, the
//! string (whole, truncated to the receiver's buffer, the full length
//! reported), keys (received only into named slots), and the one-shot
//! resume key. Keys: 1 console, 2 sleep, 3 discrim, 4 start key to echo
//! (key info 7), 5 a number key, 6 start key to echo with key info 200.
#![no_std]
#![no_main]

use stet_rt::abi::{code::Code, order};
use stet_rt::key::{call, Msg};
use stet_rt::println;

fn expect(what: &str, got: u64, want: u64) -> bool {
    let ok = got == want;
    println!(
        "ipc: {what}: {} (got {got}, want {want})",
        if ok { "ok" } else { "WRONG" }
    );
    ok
}

fn number_in(slot: u8) -> (u64, u64) {
    let a = call(slot, 0, [0; 4]);
    (a.w[0], a.w[1])
}

fn main(_arg: u64) -> i64 {
    let mut ok = true;
    // Words and key info.
    let a = call(4, 42, [11, 22, 33, 44]);
    ok &= expect("reply code is the order", a.code, 42);
    ok &= expect("key info of the start key", a.w[0], 7);
    ok &= expect("string length", a.w[1], 0);
    ok &= expect("w0 arrives", a.w[2], 11);
    ok &= expect("w1 arrives", a.w[3], 22);
    ok &= expect("source is a resume key", a.source as u64, 1);
    let a = call(6, 1, [0; 4]);
    ok &= expect("other start key, other info", a.w[0], 200);

    // A string the server accepts whole, and back.
    let msg = *b"the quick brown fox";
    let mut back = [0u8; 64];
    let a = Msg::new(4, 2).string(&msg).call_into(&mut back);
    ok &= expect("server saw the full length", a.w[1], msg.len() as u64);
    ok &= expect("reply string length", a.len as u64, msg.len() as u64);
    ok &= expect("reply string bytes", (back[..msg.len()] == msg) as u64, 1);

    // 4096 bytes: the server accepts 1024 but learns 4096.
    let mut big = [0u8; 4096];
    for (i, b) in big.iter_mut().enumerate() {
        *b = (i * 13) as u8;
    }
    let mut back = [0u8; 4096];
    let a = Msg::new(4, 3).string(&big).call_into(&mut back);
    ok &= expect("full length of 4096 reported", a.w[1], 4096);
    ok &= expect("echoed what it accepted", a.len as u64, 1024);
    ok &= expect(
        "accepted bytes intact",
        (back[..1024] == big[..1024]) as u64,
        1,
    );

    // The caller accepts less than the reply.
    let mut small = [0u8; 10];
    let a = Msg::new(4, 3).string(&big[..100]).call_into(&mut small);
    ok &= expect("reply length beyond my buffer", a.len as u64, 100);
    ok &= expect("my buffer got the prefix", (small == big[..10]) as u64, 1);

    // Keys: send the number key in slot 5 as key 0; receive keys only into
    // the slots named (9 named, 10 not).
    let a = Msg::new(4, 4).keys([5, 0, 0, 0]).recv([9, 0, 0, 0]).call();
    ok &= expect("key call answered", a.code, 4);
    ok &= expect("key came back into slot 9", number_in(9).0, 0x5eed);
    ok &= expect(
        "slot 10 untouched (still void)",
        call(10, 0, [0; 4]).code,
        Code::Void.into(),
    );

    // Discrim: the echoed key is a number key.
    let d = Msg::new(3, order::discrim::CLASSIFY)
        .keys([9, 0, 0, 0])
        .call();
    ok &= expect("discrim says number", d.w[0], 1);

    // An oversize string is refused before anything is sent.
    let a = Msg::new(4, 5).raw_string(big.as_ptr() as u64, 4097).call();
    ok &= expect("4097 bytes refused", a.code, Code::StringTooLong.into());
    println!("ipc: {}", if ok { "all ok" } else { "SOME WRONG" });
    0
}

stet_rt::main!(main);
