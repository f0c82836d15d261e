//! The data store (MINIX 3's): a table of names, each with a key and a
//! small blob, where the reincarnation service publishes the key of every
//! service it starts and clients look them up — again after a restart,
//! which publishes a new key under a higher generation.
//!
//! Keys: 1 console, 2 a bank key (for the nodes that hold the keys). The
//! table (names, blobs, generations) lives in this domain's memory, the
//! published keys in a two-level tree of nodes from the bank: slot 4 holds
//! the directory node, whose slot i holds a node with the keys of entries
//! 16·i … 16·i+15. Everything is persistent like any domain. Orders:
//! `stet_abi::service::store` (docs/ABI.md, "User services").
#![no_std]
#![no_main]

use stet_rt::abi::code::Code;
use stet_rt::abi::order::node;
use stet_rt::abi::service::store as o;
use stet_rt::key::{wait, Msg, Slot};
use stet_rt::{bank, println};

const BANK: Slot = 2;
const DIR: Slot = 4;
const RESUME: Slot = 5;
const ARG: Slot = 6;
const LEAF: Slot = 7;
const OUT: Slot = 8;

const N: usize = o::MAX_ENTRIES;

#[derive(Clone, Copy)]
struct Entry {
    used: bool,
    generation: u64,
    name_len: u8,
    name: [u8; o::MAX_NAME],
    blob_len: u16,
    blob: [u8; o::MAX_BLOB],
}

const EMPTY: Entry = Entry {
    used: false,
    generation: 0,
    name_len: 0,
    name: [0; o::MAX_NAME],
    blob_len: 0,
    blob: [0; o::MAX_BLOB],
};

struct Table {
    e: [Entry; N],
    /// Leaf nodes made so far (each holds 16 entries' keys).
    leaves: usize,
}

impl Table {
    fn find(&self, name: &[u8]) -> Option<usize> {
        self.e
            .iter()
            .position(|e| e.used && &e.name[..e.name_len as usize] == name)
    }
}

/// Fetches leaf node `i / 16` of the key tree into `LEAF`, making it (and
/// the tree) as needed.
fn leaf(t: &mut Table, i: usize) -> Result<(), u64> {
    let l = i / 16;
    while t.leaves <= l {
        bank::alloc_node(BANK, LEAF)?;
        let c = Msg::new(DIR, node::SWAP)
            .w0(t.leaves as u64)
            .keys([LEAF, 0, 0, 0])
            .call()
            .code;
        if c != Code::Ok {
            return Err(c);
        }
        t.leaves += 1;
    }
    let c = Msg::new(DIR, node::FETCH)
        .w0(l as u64)
        .recv([LEAF, 0, 0, 0])
        .call()
        .code;
    if c == Code::Ok {
        Ok(())
    } else {
        Err(c)
    }
}

fn split(s: &[u8]) -> (&[u8], &[u8]) {
    match s.iter().position(|&b| b == 0) {
        Some(z) => (&s[..z], &s[z + 1..]),
        None => (s, &[]),
    }
}

/// One order → (code, words, reply string length in `out`, key slot).
fn order(
    t: &mut Table,
    publisher: bool,
    ord: u64,
    w: [u64; 4],
    s: &[u8],
    out: &mut [u8],
) -> Result<([u64; 4], usize, Slot), u64> {
    let (name, blob) = split(s);
    match ord {
        o::PUT | o::DELETE if !publisher => Err(Code::NoRights.into()),
        o::PUT => {
            if name.is_empty() || name.len() > o::MAX_NAME || blob.len() > o::MAX_BLOB {
                return Err(Code::BadValue.into());
            }
            let i = match t.find(name) {
                Some(i) => i,
                None => t.e.iter().position(|e| !e.used).ok_or(Code::NoSpace)?,
            };
            leaf(t, i)?;
            let c = Msg::new(LEAF, node::SWAP)
                .w0((i % 16) as u64)
                .keys([ARG, 0, 0, 0])
                .call()
                .code;
            if c != Code::Ok {
                return Err(c);
            }
            let e = &mut t.e[i];
            if !e.used {
                *e = EMPTY;
                e.used = true;
                e.name_len = name.len() as u8;
                e.name[..name.len()].copy_from_slice(name);
            }
            e.generation += 1;
            e.blob_len = blob.len() as u16;
            e.blob[..blob.len()].copy_from_slice(blob);
            Ok(([e.generation, 0, 0, 0], 0, 0))
        }
        o::GET => {
            let i = t.find(name).ok_or(Code::BadValue)?;
            leaf(t, i)?;
            let c = Msg::new(LEAF, node::FETCH)
                .w0((i % 16) as u64)
                .recv([OUT, 0, 0, 0])
                .call()
                .code;
            if c != Code::Ok {
                return Err(c);
            }
            let e = &t.e[i];
            let n = e.blob_len as usize;
            out[..n].copy_from_slice(&e.blob[..n]);
            Ok(([e.generation, 0, 0, 0], n, OUT))
        }
        o::DELETE => {
            let i = t.find(name).ok_or(Code::BadValue)?;
            leaf(t, i)?;
            Msg::new(LEAF, node::SWAP)
                .w0((i % 16) as u64)
                .keys([0, 0, 0, 0])
                .call();
            // The generation stays with the slot's next owner only if the
            // name comes back: a fresh entry starts at 1 again.
            t.e[i] = EMPTY;
            Ok(([0; 4], 0, 0))
        }
        o::LIST => {
            let from = w[0] as usize;
            let i = (from..N).find(|&i| t.e[i].used).ok_or(Code::BadValue)?;
            let e = &t.e[i];
            let n = e.name_len as usize;
            out[..n].copy_from_slice(&e.name[..n]);
            Ok(([e.generation, i as u64 + 1, 0, 0], n, 0))
        }
        _ => Err(Code::NoSuchOrder.into()),
    }
}

fn main(_arg: u64) -> i64 {
    if let Err(c) = bank::alloc_node(BANK, DIR) {
        println!("datastore: no node for the key tree (code {c})");
        return 1;
    }
    // On the stack (about 22 KiB of the 64): the domain's memory is as
    // persistent as anything else.
    let mut t = Table {
        e: [EMPTY; N],
        leaves: 0,
    };
    println!("datastore: ready ({N} entries)");
    let mut buf = [0u8; o::MAX_NAME + 1 + o::MAX_BLOB];
    let mut out = [0u8; o::MAX_BLOB];
    let mut a = wait([ARG, 0, 0, 0], RESUME, &mut buf);
    loop {
        let len = a.len.min(buf.len());
        let r = if a.len > buf.len() {
            Err(Code::BadValue.into())
        } else {
            let publisher = a.info == o::PUBLISHER;
            order(&mut t, publisher, a.code, a.w, &buf[..len], &mut out)
        };
        let (c, w, n, key) = match r {
            Ok((w, n, k)) => (Code::Ok.into(), w, n, k),
            Err(c) => (c, [0; 4], 0, 0),
        };
        a = Msg::new(RESUME, c)
            .words(w)
            .string(&out[..n])
            .keys([key, 0, 0, 0])
            .recv([ARG, 0, 0, 0])
            .resume_into(RESUME)
            .ret_into(&mut buf);
    }
}

stet_rt::main!(main);
