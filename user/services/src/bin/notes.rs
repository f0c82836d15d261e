//! The notes service: a list of notes and a counter for the shell, kept
//! in this domain's own memory — the single-level store makes that
//! persistent, so notes and count survive killing QEMU with no file
//! system and no save. Orders: `stet_abi::service::notes`.
//!
//! Keys: 1 console.
#![no_std]
#![no_main]

use stet_rt::abi::code::Code;
use stet_rt::abi::service::notes as o;
use stet_rt::key::{wait, Msg};

struct Notes {
    text: [[u8; o::MAX_NOTE]; o::MAX_NOTES],
    len: [u8; o::MAX_NOTES],
    n: usize,
    count: u64,
}

fn main(_arg: u64) -> i64 {
    let mut s = Notes {
        text: [[0; o::MAX_NOTE]; o::MAX_NOTES],
        len: [0; o::MAX_NOTES],
        n: 0,
        count: 0,
    };
    let mut buf = [0u8; o::MAX_NOTE];
    let mut a = wait([0; 4], 15, &mut buf);
    loop {
        let mut out: &[u8] = &[];
        let (c, w0) = match a.code {
            o::ADD if a.len == 0 || a.len > o::MAX_NOTE => (Code::BadValue, 0),
            o::ADD if s.n == o::MAX_NOTES => (Code::NoSpace, 0),
            o::ADD => {
                s.text[s.n][..a.len].copy_from_slice(&buf[..a.len]);
                s.len[s.n] = a.len as u8;
                s.n += 1;
                (Code::Ok, s.n as u64)
            }
            o::GET if a.w[0] as usize >= s.n => (Code::BadValue, 0),
            o::GET => {
                let i = a.w[0] as usize;
                out = &s.text[i][..s.len[i] as usize];
                (Code::Ok, i as u64)
            }
            o::COUNT => {
                s.count += 1;
                (Code::Ok, s.count)
            }
            _ => (Code::NoSuchOrder, 0),
        };
        let mut reply = [0u8; o::MAX_NOTE];
        reply[..out.len()].copy_from_slice(out);
        let n = out.len();
        a = Msg::new(15, c.into())
            .w0(w0)
            .string(&reply[..n])
            .resume_into(15)
            .ret_into(&mut buf);
    }
}

stet_rt::main!(main);
