//! The space bank: the one domain that hands out nodes and pages.
//!
//! It holds range keys to every object it may allocate; its bookkeeping
//! (which bank owns which object, the sub-bank tree, the limits) is
//! `stet-bank`, kept in this domain's heap, which the single-level store
//! makes persistent like everything else. A bank key is a forwarder key
//! labelled with the bank's number: destroying a bank destroys its
//! forwarder node, which voids every copy of its key at once, so a bank's
//! number can be reused safely. Orders: `stet_abi::service::bank`
//! (docs/ABI.md, "User services").
//!
//! Keys: 1 console, 2 sleep, 3 discrim, 4 page range, 5 node range, 6 a
//! start key to itself (what its forwarders send to), 7 the prime bank's
//! key (made by the image builder: `forwarder:spacebank:0`). Argument: heap
//! pages (low 32 bits), bank table size (high 32 bits; 0: 1024).
#![no_std]
#![no_main]

use stet_bank::{Banks, Error, Layout, Space, Step, NIL, PRIME};
use stet_keys::KeyType;
use stet_rt::abi::code::Code;
use stet_rt::abi::invoke::Source;
use stet_rt::abi::order::{discrim, node, range};
use stet_rt::abi::service::bank as o;
use stet_rt::key::{wait, Msg, Slot};
use stet_rt::println;

const DISCRIM: Slot = 3;
const PAGES: Slot = 4;
const NODES: Slot = 5;
const SELF_START: Slot = 6;
const PRIME_KEY: Slot = 7;
const RESUME: Slot = 8;
const ARG0: Slot = 9;
const ARG1: Slot = 10;
const OUT: Slot = 11;
const SCRATCH: Slot = 12;

type Heap = stet_words::Atomic<'static>;

fn range_slot(s: Space) -> Slot {
    match s {
        Space::Page => PAGES,
        Space::Node => NODES,
    }
}

fn err(e: Error) -> u64 {
    match e {
        Error::Limit | Error::TooManyBanks => Code::Limit.into(),
        Error::BadBank => Code::Void.into(),
        Error::NotOwned => Code::BadValue.into(),
    }
}

/// Range GET of object `i` into `into`.
fn get(s: Space, i: u32, into: Slot) -> u64 {
    Msg::new(range_slot(s), range::GET)
        .w0(i as u64)
        .recv([into, 0, 0, 0])
        .call()
        .code
}

/// Destroys object `i` (voids every key to it). `NO_SPACE` from a full
/// kernel cache is transient: wait a little and try again.
fn renew(s: Space, i: u32) {
    loop {
        let c = Msg::new(range_slot(s), range::RENEW)
            .w0(i as u64)
            .call()
            .code;
        if c != Code::NoSpace {
            if c != Code::Ok {
                println!("spacebank: renew {s:?} {i}: code {c}");
            }
            return;
        }
        stet_rt::kernel::yield_now();
    }
}

/// Which object of the ranges the key in `slot` designates.
fn identify(slot: Slot) -> Result<(Space, u32, u64), u64> {
    let a = Msg::new(PAGES, range::IDENTIFY)
        .keys([slot, 0, 0, 0])
        .call();
    if a.code == Code::Ok {
        return Ok((Space::Page, a.w[0] as u32, a.w[1]));
    }
    if a.code != Code::WrongType {
        return Err(a.code);
    }
    let a = Msg::new(NODES, range::IDENTIFY)
        .keys([slot, 0, 0, 0])
        .call();
    if a.code == Code::Ok {
        Ok((Space::Node, a.w[0] as u32, a.w[1]))
    } else {
        Err(a.code)
    }
}

/// The bank the key in `slot` is a key to, if it is a live bank key.
fn bank_of_key(banks: &Banks<Heap>, slot: Slot) -> Option<u32> {
    if let Ok((Space::Node, i, t)) = identify(slot) {
        if t == KeyType::Forwarder as u64 {
            return banks.bank_of_forwarder(i);
        }
    }
    let same = Msg::new(DISCRIM, discrim::COMPARE)
        .keys([slot, PRIME_KEY, 0, 0])
        .call();
    (same.code == Code::Ok && same.w[0] == 1).then_some(PRIME)
}

fn alloc(banks: &mut Banks<Heap>, b: u32, s: Space) -> Result<(), u64> {
    let i = banks.alloc(b, s).map_err(err)?;
    let c = get(s, i, OUT);
    if c != Code::Ok {
        let _ = banks.free(b, s, i);
        return Err(c);
    }
    Ok(())
}

/// `ALLOC_PAGES_INTO`: `count` pages, their keys straight into the node in
/// `ARG0` from slot `first` (one kernel invocation for all of them).
fn alloc_into(banks: &mut Banks<Heap>, b: u32, first: u64, count: u64) -> Result<(), u64> {
    if count == 0 || count > 16 {
        return Err(Code::BadValue.into());
    }
    let count = count as usize;
    let mut got = [0u32; 16];
    let mut indices = [0u8; 64];
    for n in 0..count {
        match banks.alloc(b, Space::Page) {
            Ok(i) => {
                got[n] = i;
                indices[n * 4..n * 4 + 4].copy_from_slice(&i.to_le_bytes());
            }
            Err(e) => {
                for &i in &got[..n] {
                    let _ = banks.free(b, Space::Page, i);
                }
                return Err(err(e));
            }
        }
    }
    let c = Msg::new(PAGES, range::GET_INTO)
        .w0(first)
        .string(&indices[..count * 4])
        .keys([ARG0, 0, 0, 0])
        .call()
        .code;
    if c != Code::Ok {
        // The kernel changed nothing: no key to them ever left.
        for &i in &got[..count] {
            let _ = banks.free(b, Space::Page, i);
        }
        return Err(c);
    }
    Ok(())
}

fn create_sub(banks: &mut Banks<Heap>, b: u32, pages: u64, nodes: u64) -> Result<(), u64> {
    let (nb, fwd) = banks.create_sub(b, pages, nodes).map_err(err)?;
    let built = (|| {
        let c = get(Space::Node, fwd, SCRATCH);
        if c != Code::Ok {
            return c;
        }
        let c = Msg::new(SCRATCH, node::SWAP)
            .w0(0)
            .keys([SELF_START, 0, 0, 0])
            .call()
            .code;
        if c != Code::Ok {
            return c;
        }
        let c = Msg::new(SCRATCH, node::WRITE_NUMBER)
            .words([1, nb as u64, 0, 0])
            .call()
            .code;
        if c != Code::Ok {
            return c;
        }
        Msg::new(SCRATCH, node::MAKE_FORWARDER)
            .recv([OUT, 0, 0, 0])
            .call()
            .code
    })();
    if built != Code::Ok {
        destroy(banks, nb);
        return Err(built);
    }
    Ok(())
}

fn destroy(banks: &mut Banks<Heap>, b: u32) {
    // The objects go 16 at a time (`RENEW_MANY`), by space; nothing can
    // take their numbers before (this order runs to its end first).
    let mut batch = Renewals {
        space: None,
        n: 0,
        indices: [0; 64],
    };
    loop {
        match banks.destroy_step(b) {
            Ok(Step::Renew(s, i)) => batch.add(s, i),
            Ok(Step::BankGone(_, fwd)) if fwd != NIL => batch.add(Space::Node, fwd),
            Ok(Step::BankGone(..)) => {}
            Ok(Step::Done) | Err(_) => return batch.flush(),
        }
    }
}

/// Objects to destroy, all of one space.
struct Renewals {
    space: Option<Space>,
    n: usize,
    indices: [u8; 64],
}

impl Renewals {
    fn add(&mut self, s: Space, i: u32) {
        if self.space != Some(s) || self.n == 16 {
            self.flush();
            self.space = Some(s);
        }
        self.indices[self.n * 4..self.n * 4 + 4].copy_from_slice(&i.to_le_bytes());
        self.n += 1;
    }

    /// Destroys them; what the kernel cannot do yet for want of memory is
    /// asked again after the checkpoint has made room.
    fn flush(&mut self) {
        let (Some(s), n) = (self.space, core::mem::take(&mut self.n)) else {
            return;
        };
        let mut done = 0;
        while done < n {
            let a = Msg::new(range_slot(s), range::RENEW_MANY)
                .string(&self.indices[done * 4..n * 4])
                .call();
            if a.code != Code::Ok {
                println!("spacebank: renew {s:?}: code {}", a.code);
                return;
            }
            done += a.w[0] as usize;
            if done < n {
                stet_rt::kernel::yield_now();
            }
        }
    }
}

/// Carries out one order for bank `b` → (code, words, key slot to send).
fn order(banks: &mut Banks<Heap>, b: u32, ord: u64, w: [u64; 4]) -> Result<([u64; 4], Slot), u64> {
    if !banks.alive(b) {
        return Err(Code::Void.into());
    }
    match ord {
        o::ALLOC_PAGE => alloc(banks, b, Space::Page).map(|_| ([0; 4], OUT)),
        o::ALLOC_NODE => alloc(banks, b, Space::Node).map(|_| ([0; 4], OUT)),
        o::ALLOC_PAGES_INTO => alloc_into(banks, b, w[0], w[1]).map(|_| ([0; 4], 0)),
        o::FREE => {
            let (s, i, _) = identify(ARG0)?;
            banks.free(b, s, i).map_err(err)?;
            renew(s, i);
            Ok(([0; 4], 0))
        }
        o::CREATE_SUB => create_sub(banks, b, w[0], w[1]).map(|_| ([0; 4], OUT)),
        o::DESTROY => {
            if b == PRIME {
                return Err(Code::BadState.into());
            }
            destroy(banks, b);
            Ok(([0; 4], 0))
        }
        o::INFO => {
            let i = banks.info(b).map_err(err)?;
            Ok((
                [i.used_pages, i.used_nodes, i.limit_pages, i.limit_nodes],
                0,
            ))
        }
        o::CAPACITY => {
            let (l, i) = (banks.layout(), banks.info(PRIME).map_err(err)?);
            Ok((
                [l.pages as u64, l.nodes as u64, i.used_pages, i.used_nodes],
                0,
            ))
        }
        o::SET_LIMITS => match bank_of_key(banks, ARG0) {
            Some(sub) if sub != b && banks.is_descendant(sub, b) => {
                banks.set_limits(sub, w[0], w[1]).map_err(err)?;
                Ok(([0; 4], 0))
            }
            _ => Err(Code::BadValue.into()),
        },
        o::VERIFY => Ok(([bank_of_key(banks, ARG0).is_some() as u64, 0, 0, 0], 0)),
        o::IDENTIFY => {
            let (s, i, _) = identify(ARG0)?;
            match banks.owner(s, i) {
                Some((owner, false)) if owner == b || banks.is_descendant(owner, b) => {}
                _ => return Err(Code::BadValue.into()),
            }
            let c = get(s, i, OUT);
            if c != Code::Ok {
                return Err(c);
            }
            Ok(([i as u64, (s == Space::Node) as u64, 0, 0], OUT))
        }
        _ => Err(Code::NoSuchOrder.into()),
    }
}

fn range_count(slot: Slot) -> u32 {
    let a = Msg::new(slot, range::INFO).call();
    if a.code != Code::Ok {
        println!("spacebank: range key in slot {slot} answers {}", a.code);
        return 0;
    }
    a.w[1].min(u32::MAX as u64 - 1) as u32
}

fn main(arg: u64) -> i64 {
    let heap_pages = arg & 0xffff_ffff;
    let table = match arg >> 32 {
        0 => 1024,
        n => n as u32,
    };
    let words = stet_rt::mem::heap_words(heap_pages);
    let mut banks = match Banks::open(stet_words::Atomic(words)) {
        Some(b) => b,
        None => {
            let l = Layout {
                pages: range_count(PAGES),
                nodes: range_count(NODES),
                banks: table,
            };
            let Some(b) = Banks::format(stet_words::Atomic(words), l) else {
                println!(
                    "spacebank: {} heap pages hold {} words; {l:?} needs {}",
                    heap_pages,
                    words.len(),
                    l.words()
                );
                return 1;
            };
            println!(
                "spacebank: {} pages, {} nodes, {} banks",
                l.pages, l.nodes, l.banks
            );
            b
        }
    };
    let mut a = wait([ARG0, ARG1, 0, 0], RESUME, &mut []);
    loop {
        let r = if a.source != Source::Forwarded {
            // Only forwarders made by this bank (and the image builder's
            // prime forwarder) reach it with a label.
            Err(Code::NoRights.into())
        } else {
            order(&mut banks, a.label, a.code, a.w)
        };
        let (c, w, key) = match r {
            Ok((w, k)) => (Code::Ok.into(), w, k),
            Err(c) => (c, [0; 4], 0),
        };
        a = Msg::new(RESUME, c)
            .words(w)
            .keys([key, 0, 0, 0])
            .recv([ARG0, ARG1, 0, 0])
            .resume_into(RESUME)
            .ret_into(&mut []);
    }
}

stet_rt::main!(main);
