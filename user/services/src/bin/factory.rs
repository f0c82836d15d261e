//! The factory server (KeyKOS's constructor): one domain serving every
//! factory through forwarder keys it makes, as the space bank serves every
//! bank.
//!
//! A factory builds domains of one kind — *products* — from a program
//! template (`program:<name>` in a spec: docs/IMAGE.md), up to 12
//! component keys, and what the requester supplies: a bank (all the
//! product's objects come from a sub-bank of it), a meter, an argument
//! key and optionally a keeper. It tells anyone whether its products are
//! **discreet** (the rule is `stet_factory::discreet`). Protocol:
//! docs/ABI.md "User services", orders `stet_abi::service::factory`.
//!
//! Keys: the metafactory key (`forwarder:factory:0`, made by the image
//! builder) makes factories; each factory is two nodes from the bank its
//! creator gives, each made into a forwarder to this domain: the
//! **builder** key (label 2n) installs components and seals, the
//! **requestor** key (label 2n+1) creates products. The requestor node
//! holds in slot 2 a sense key to the program node and in slots 4..=15
//! the components 1..=12. The server keeps node keys to both nodes in a
//! three-level directory of nodes from its own bank (`books::dir_path`)
//! and its books (`stet_factory::books`) in its heap, which the store
//! makes persistent like everything else.
//!
//! Text is shared: a product's read-only pages are the template's own
//! page keys (fetched through the template's segment, so diminished:
//! read-only); writable pages are fresh pages holding a copy; the stack
//! is fresh pages. Its address space is the smallest tree over them
//! (`stet_factory::plan`), entered through a no-call key, so no keeper a
//! template might hide is ever invoked.
//!
//! General slots: 1 console, 2 discrim, 3 key bits, 4 its own bank (for
//! directory nodes, and to verify bank keys), 5 a start key to itself
//! (what its forwarders hold), 6 the directory's root node, 7 the resume
//! key, 8–11 the keys of a message, 12–15 scratch. Argument: heap pages
//! (low 32 bits), most factories (high 32 bits; 0: 64).
#![no_std]
#![no_main]

use stet_factory::books::{dir_path, Books, Error, New, NodeId, State};
use stet_factory::discreet::{classify, Class, Component};
use stet_factory::plan::{self, Pages, Segment, Source, Step, MAX_SEGMENTS, PAGE, ROOT_LSS};
use stet_keys::{rights, KeyType, MAX_OID};
use stet_rt::abi::domain::{Reg, NREGS, REGS_SIZE};
use stet_rt::abi::invoke;
use stet_rt::abi::order::{discrim, domain, keybits, node, page, segment};
use stet_rt::abi::service::factory as o;
use stet_rt::abi::{code::Code, layout};
use stet_rt::bank;
use stet_rt::key::{wait, Answer, Msg, Slot};
use stet_rt::println;

const DISCRIM: Slot = 2;
const KEYBITS: Slot = 3;
const BANK: Slot = 4;
const SELF: Slot = 5;
const DIR: Slot = 6;
const RESUME: Slot = 7;
const A0: Slot = 8;
const A1: Slot = 9;
const A2: Slot = 10;
const A3: Slot = 11;
const SUB: Slot = 12;
const GEN: Slot = 13;
const CUR: Slot = 14;
const T: Slot = 15;

/// Requestor node slots: the program node, then the components.
const REQ_PROGRAM: u64 = 2;
const REQ_COMPONENT0: u64 = 3;

type Heap = stet_words::Atomic<'static>;

type Fb = Books<Heap>;
type Res<T> = Result<T, u64>;

fn ok(a: Answer) -> Res<Answer> {
    if a.code == Code::Ok {
        Ok(a)
    } else {
        Err(a.code)
    }
}

/// (type, rights, dangling) of the key in `s`.
fn classify_slot(s: Slot) -> (u64, u64, bool) {
    let a = Msg::new(DISCRIM, discrim::CLASSIFY)
        .keys([s, 0, 0, 0])
        .call();
    (a.w[0], a.w[1], a.w[2] == 1)
}

fn is_void(s: Slot) -> bool {
    let (t, _, dangling) = classify_slot(s);
    dangling || t == KeyType::Void as u64
}

/// Node (or segment) FETCH of `slot` of the key in `from` into `into`.
fn fetch(from: Slot, order: u64, slot: u64, into: Slot) -> Res<()> {
    ok(Msg::new(from, order).w0(slot).recv([into, 0, 0, 0]).call()).map(|_| ())
}

fn swap(n: Slot, slot: u64, key: Slot) -> Res<()> {
    ok(Msg::new(n, node::SWAP).w0(slot).keys([key, 0, 0, 0]).call()).map(|_| ())
}

fn write_number(n: Slot, slot: u64, v: u64) -> Res<()> {
    ok(Msg::new(n, node::WRITE_NUMBER)
        .words([slot, v, 0, 0])
        .call())
    .map(|_| ())
}

/// An order that answers one key into `into`.
fn make(k: Slot, order: u64, w: [u64; 4], into: Slot) -> Res<()> {
    ok(Msg::new(k, order).words(w).recv([into, 0, 0, 0]).call()).map(|_| ())
}

/// The node the key in `s` designates, from its bits.
fn node_id(s: Slot) -> NodeId {
    let a = Msg::new(KEYBITS, keybits::GET).keys([s, 0, 0, 0]).call();
    NodeId {
        oid: a.w[1] & MAX_OID,
        version: (a.w[0] >> 32) as u32,
    }
}

/// Whether the key in `s` is a live bank key of the space bank.
fn is_bank(s: Slot) -> bool {
    bank::verify(BANK, s) == Ok(true)
}

fn book_err(e: Error) -> u64 {
    match e {
        Error::NoFactory => Code::Void.into(),
        Error::Sealed => Code::BadState.into(),
        Error::BadValue => Code::BadValue.into(),
        Error::Full => Code::Limit.into(),
    }
}

/// Factory `n`'s requestor node key (`builder`: its builder node key)
/// into `into`, through the directory.
fn dir_node(n: u32, builder: bool, into: Slot) -> Res<()> {
    let [a, b, c] = dir_path(n);
    fetch(DIR, node::FETCH, a as u64, into)?;
    fetch(into, node::FETCH, b as u64, into)?;
    fetch(into, node::FETCH, c as u64 + builder as u64, into)
}

/// Puts factory `n`'s node keys (requestor in `req`, builder in `bld`)
/// into the directory, making its nodes as needed. Uses CUR and T.
fn dir_put(n: u32, req: Slot, bld: Slot) -> Res<()> {
    let [a, b, c] = dir_path(n);
    fetch(DIR, node::FETCH, a as u64, CUR)?;
    if is_void(CUR) {
        bank::alloc_node(BANK, CUR)?;
        swap(DIR, a as u64, CUR)?;
    }
    fetch(CUR, node::FETCH, b as u64, T)?;
    if is_void(T) {
        bank::alloc_node(BANK, T)?;
        swap(CUR, b as u64, T)?;
    }
    swap(T, c as u64, req)?;
    swap(T, c as u64 + 1, bld)
}

/// Forgets every factory both of whose nodes are gone (their creator's
/// bank was destroyed, or freed them), so their numbers can be reused.
fn sweep(books: &mut Fb) {
    for n in 1..=books.max() {
        if books.record(n).is_none() {
            continue;
        }
        let gone = |builder| dir_node(n, builder, T).is_err() || is_void(T);
        if gone(false) && gone(true) {
            let _ = books.free(n);
        }
    }
}

/// Reads the program node in `prog`: entry and load segments.
fn read_program(prog: Slot, segs: &mut [Segment; MAX_SEGMENTS]) -> Res<(u64, usize)> {
    let (t, _, dangling) = classify_slot(prog);
    if dangling || t != KeyType::Node as u64 {
        return Err(Code::WrongType.into());
    }
    fetch(prog, node::FETCH, 0, T)?;
    // Classified before it is invoked: a client's key is never called.
    if classify_slot(T).0 != KeyType::Segment as u64
        || Msg::new(T, segment::INFO).call().w[0] != ROOT_LSS as u64
    {
        return Err(Code::BadValue.into());
    }
    let number = |slot: u64| Msg::new(prog, node::READ_NUMBER).w0(slot).call();
    let e = number(1);
    if e.code != Code::Ok {
        return Err(Code::BadValue.into());
    }
    let entry = e.w[0];
    let mut n = 0;
    for slot in 2..16u64 {
        let a = number(slot);
        if a.code != Code::Ok {
            break;
        }
        segs[n] = Segment::from_number(a.w[0], a.w[1]).map_err(|_| Code::BadValue)?;
        n += 1;
    }
    let pages = plan::product(&segs[..n], plan::DEFAULT_STACK_PAGES).map_err(|_| Code::BadValue)?;
    if pages.source(entry / PAGE) != Some(Source::Text) {
        return Err(Code::BadValue.into());
    }
    Ok((entry, n))
}

/// Metafactory NEW_FACTORY: key 0 (A0) the creator's bank, key 1 (A1)
/// the program node → builder key in A2, requestor key in A3.
fn new_factory(books: &mut Fb) -> Res<()> {
    if !is_bank(A0) {
        return Err(Code::WrongType.into());
    }
    let mut segs = [Segment {
        first: 0,
        count: 0,
        writable: false,
    }; MAX_SEGMENTS];
    let (entry, nseg) = read_program(A1, &mut segs)?;
    if books.next_free().is_none() {
        sweep(books);
    }
    let n = books.next_free().ok_or(Code::Limit)?;
    bank::alloc_node(A0, A2)?;
    if let Err(c) = bank::alloc_node(A0, A3) {
        let _ = bank::free(A0, A2);
        return Err(c);
    }
    let built = (|| {
        swap(A3, 0, SELF)?;
        write_number(A3, 1, 2 * n as u64 + 1)?;
        make(A1, node::MAKE_SENSE, [0; 4], T)?;
        swap(A3, REQ_PROGRAM, T)?;
        swap(A2, 0, SELF)?;
        write_number(A2, 1, 2 * n as u64)?;
        dir_put(n, A3, A2)
    })();
    let new = New {
        requestor: node_id(A3),
        builder: node_id(A2),
        entry,
        segments: &segs[..nseg],
    };
    let made = built
        .and_then(|_| books.create(n, &new).map_err(book_err))
        .and_then(|_| {
            make(A2, node::MAKE_FORWARDER, [0; 4], A2)?;
            make(A3, node::MAKE_FORWARDER, [0; 4], A3)
        });
    if let Err(c) = made {
        if books.record(n).is_some() {
            let _ = books.free(n);
        }
        let _ = bank::free(A0, A2);
        let _ = bank::free(A0, A3);
        return Err(c);
    }
    Ok(())
}

/// What the discreetness rule says of the key in `s`.
fn component(books: &Fb, s: Slot) -> Component {
    let (ty, r, dangling) = classify_slot(s);
    if dangling || ty == KeyType::Void as u64 {
        return Component::Empty;
    }
    match classify(ty, r, dangling) {
        Class::Discreet => Component::Discreet { ty: ty as u8 },
        Class::NotDiscreet => Component::NotDiscreet {
            ty: ty as u8,
            why: o::why::KEY as u8,
        },
        Class::Forwarder => match books.by_requestor(node_id(s)) {
            Some((n, gen)) => Component::Factory { n, gen },
            None => Component::NotDiscreet {
                ty: ty as u8,
                why: o::why::FORWARDER as u8,
            },
        },
    }
}

/// Builder INSTALL: `slot` gets the key in A0.
fn install(books: &mut Fb, n: u32, slot: u64) -> Res<()> {
    let r = books.record(n).ok_or(Code::Void)?;
    if r.state == State::Sealed {
        return Err(Code::BadState.into());
    }
    if slot == 0 || slot > o::COMPONENTS as u64 {
        return Err(Code::BadValue.into());
    }
    let c = component(books, A0);
    dir_node(n, false, CUR)?;
    swap(CUR, REQ_COMPONENT0 + slot, A0)?;
    books.install(n, slot, c).map_err(book_err)
}

/// Builder SET_STACK_PAGES.
fn set_stack(books: &mut Fb, n: u32, pages: u64) -> Res<()> {
    let r = books.record(n).ok_or(Code::Void)?;
    if r.state == State::Sealed {
        return Err(Code::BadState.into());
    }
    plan::product(r.segments(), pages).map_err(|_| Code::BadValue)?;
    books.set_stack(n, pages).map_err(book_err)
}

/// Where the template walk stands: the node whose slots hold pages last
/// reached (in A1), as (size code, first page).
struct Walk {
    tpl: Pages,
    leaf: Option<(u8, u64)>,
}

/// The template's key for `page` into A3 (the template's root segment key
/// is in A2; A1 caches the node holding the last page found).
fn template_page(w: &mut Walk, page: u64) -> Res<()> {
    let path = plan::path(&w.tpl, page).ok_or(Code::BadValue)?;
    let hops = path.hops();
    let last = hops[hops.len() - 1].slot as u64;
    let bad = |_| Code::BadValue.into();
    if hops.len() > 1 && w.leaf == Some((path.leaf_lss, path.leaf_base)) {
        return fetch(A1, segment::FETCH, last, A3).map_err(bad);
    }
    w.leaf = None;
    let mut from = A2;
    for h in &hops[..hops.len() - 1] {
        fetch(from, segment::FETCH, h.slot as u64, A1).map_err(bad)?;
        from = A1;
    }
    fetch(from, segment::FETCH, last, A3).map_err(bad)?;
    if hops.len() > 1 {
        w.leaf = Some((path.leaf_lss, path.leaf_base));
    }
    Ok(())
}

/// The product's address space, step by step (`plan::steps`): node keys
/// of the path being built in GEN's slots by depth, the current node in
/// CUR. The domain key is in A0, the template's root in A2.
fn build_space(pages: &Pages, w: &mut Walk) -> Res<()> {
    let mut cur_depth = u8::MAX;
    let mut buf = [0u8; PAGE as usize];
    let to = |d: u8, cur_depth: &mut u8| -> Res<()> {
        if *cur_depth != d {
            fetch(GEN, node::FETCH, d as u64, CUR)?;
            *cur_depth = d;
        }
        Ok(())
    };
    plan::steps(pages, &mut |s| match s {
        Step::Node { depth: 0, .. } => {
            bank::alloc_node(SUB, CUR)?;
            swap(GEN, 0, CUR)?;
            cur_depth = 0;
            make(
                CUR,
                node::MAKE_SEGMENT,
                [ROOT_LSS as u64, rights::NOCALL as u64, 0, 0],
                T,
            )?;
            ok(Msg::new(A0, domain::SET_SPACE).keys([T, 0, 0, 0]).call()).map(|_| ())
        }
        Step::Node {
            depth, lss, slot, ..
        } => {
            to(depth - 1, &mut cur_depth)?;
            bank::alloc_node(SUB, T)?;
            swap(GEN, depth as u64, T)?;
            make(T, node::MAKE_SEGMENT, [lss as u64, 0, 0, 0], T)?;
            swap(CUR, slot as u64, T)
        }
        Step::Page {
            depth,
            slot,
            page,
            source,
        } => {
            to(depth, &mut cur_depth)?;
            match source {
                Source::Text => {
                    template_page(w, page)?;
                    swap(CUR, slot as u64, A3)
                }
                Source::Data => {
                    bank::alloc_page(SUB, T)?;
                    template_page(w, page)?;
                    let a = Msg::new(A3, page::READ)
                        .words([0, PAGE, 0, 0])
                        .call_into(&mut buf);
                    if a.code != Code::Ok {
                        return Err(Code::BadValue.into());
                    }
                    if buf.iter().any(|&b| b != 0) {
                        ok(Msg::new(T, page::WRITE).w0(0).string(&buf).call())?;
                    }
                    swap(CUR, slot as u64, T)
                }
                Source::Stack => {
                    bank::alloc_page(SUB, T)?;
                    swap(CUR, slot as u64, T)
                }
            }
        }
    })
}

/// Builds factory `n`'s product from the sub-bank in SUB: A1 the meter,
/// A2 the argument, A3 the keeper (or void), `rdi` its argument word →
/// its start key in T.
fn build_product(books: &Fb, n: u32, rdi: u64) -> Res<()> {
    let r = books.record(n).ok_or(Code::Void)?;
    let pages = plan::product(r.segments(), r.stack_pages).map_err(|_| Code::BadValue)?;
    let tpl = plan::template(r.segments()).map_err(|_| Code::BadValue)?;
    // The domain: root in CUR, general keys in GEN, annex in T, FPU page
    // in A0 (the requester's bank key is no longer needed).
    bank::alloc_node(SUB, CUR)?;
    bank::alloc_node(SUB, GEN)?;
    bank::alloc_node(SUB, T)?;
    bank::alloc_page(SUB, A0)?;
    ok(Msg::new(CUR, node::MAKE_DOMAIN)
        .keys([GEN, T, A0, 0])
        .recv([A0, 0, 0, 0])
        .call())?;
    ok(Msg::new(A0, domain::SET_METER).keys([A1, 0, 0, 0]).call())?;
    if !is_void(A3) {
        ok(Msg::new(A0, domain::SET_KEEPER).keys([A3, 0, 0, 0]).call())?;
    }
    swap(GEN, o::ARG_SLOT as u64, A2)?;
    swap(GEN, o::BANK_SLOT as u64, SUB)?;
    // The template: its root segment in A2.
    dir_node(n, false, A1)?;
    fetch(A1, node::FETCH, REQ_PROGRAM, A2)?;
    fetch(A2, node::FETCH, 0, A2)?;
    let mut w = Walk { tpl, leaf: None };
    build_space(&pages, &mut w)?;
    // The components, over the scratch slots of the tree's path.
    dir_node(n, false, A1)?;
    swap(GEN, 0, 0)?;
    for (i, c) in r.components.iter().enumerate() {
        let slot = i as u64 + 1;
        if *c == Component::Empty {
            if slot as usize <= plan::MAX_DEPTH {
                swap(GEN, slot, 0)?;
            }
            continue;
        }
        fetch(A1, node::FETCH, REQ_COMPONENT0 + slot, T)?;
        swap(GEN, slot, T)?;
    }
    let mut regs = [0u64; NREGS];
    regs[Reg::Rip as usize] = r.entry;
    regs[Reg::Rsp as usize] = layout::STACK_TOP;
    regs[Reg::Rdi as usize] = rdi;
    regs[Reg::Rflags as usize] = 0x202;
    let mut bytes = [0u8; REGS_SIZE];
    for (b, v) in bytes.chunks_exact_mut(8).zip(regs) {
        b.copy_from_slice(&v.to_le_bytes());
    }
    ok(Msg::new(A0, domain::SET_REGS).string(&bytes).call())?;
    make(A0, domain::MAKE_START, [0; 4], T)?;
    ok(Msg::new(A0, domain::SET_STATE)
        .words([stet_rt::abi::domain::state::RUNNING, 0, 0, 0])
        .call())
    .map(|_| ())
}

/// Requestor CREATE: A0 the requester's bank, A1 a meter, A2 the
/// argument, A3 the keeper → the product's start key in T, its domain key
/// in A0; whether a keeper was named (then the requester gets the domain
/// key too: the keeper would get it with the product's first fault).
fn create(books: &Fb, n: u32, rdi: u64) -> Res<bool> {
    let r = books.record(n).ok_or(Code::Void)?;
    if r.state != State::Sealed {
        return Err(Code::BadState.into());
    }
    if !is_bank(A0) {
        return Err(Code::WrongType.into());
    }
    let (mt, _, dead) = classify_slot(A1);
    if dead || mt != KeyType::Meter as u64 {
        return Err(Code::WrongType.into());
    }
    let (kt, _, dead) = classify_slot(A3);
    let supervised = !dead && kt == KeyType::Start as u64;
    if !dead && kt != KeyType::Void as u64 && !supervised {
        return Err(Code::WrongType.into());
    }
    bank::create_sub(A0, u64::MAX, u64::MAX, SUB)?;
    if let Err(c) = build_product(books, n, rdi) {
        // Everything made so far came from the sub-bank.
        let _ = bank::destroy(SUB);
        return Err(c);
    }
    Ok(supervised)
}

/// One order → (words, keys to send).
fn order(books: &mut Fb, label: u32, ord: u64, w: [u64; 4]) -> Res<([u64; 4], [Slot; 4])> {
    if label == 0 {
        return match ord {
            o::NEW_FACTORY => new_factory(books).map(|_| ([0; 4], [A2, A3, 0, 0])),
            _ => Err(Code::NoSuchOrder.into()),
        };
    }
    let n = label / 2;
    let requestor = label % 2 == 1;
    let r = books.record(n).ok_or(Code::Void)?;
    let none = [0; 4];
    match (requestor, ord) {
        (_, o::IS_DISCREET) => Ok((r.verdict.words(), none)),
        (false, o::INSTALL) => install(books, n, w[0]).map(|_| ([0; 4], none)),
        (false, o::SET_STACK_PAGES) => set_stack(books, n, w[0]).map(|_| ([0; 4], none)),
        (false, o::SEAL) => books.seal(n).map(|v| (v.words(), none)).map_err(book_err),
        (true, o::CREATE) => {
            create(books, n, w[0]).map(|sup| ([0; 4], [T, if sup { A0 } else { 0 }, 0, 0]))
        }
        _ => Err(Code::NoSuchOrder.into()),
    }
}

fn main(arg: u64) -> i64 {
    let heap_pages = arg & 0xffff_ffff;
    let max = match arg >> 32 {
        0 => 64,
        m => m as u32,
    };
    let words = stet_rt::mem::heap_words(heap_pages);
    let mut books = match Books::open(stet_words::Atomic(words)) {
        Some(b) => b,
        None => match Books::format(stet_words::Atomic(words), max) {
            Some(b) => {
                println!("factory: {max} factories");
                b
            }
            None => {
                println!(
                    "factory: {heap_pages} heap pages hold {} words; {max} factories need {}",
                    words.len(),
                    Fb::words_for(max)
                );
                return 1;
            }
        },
    };
    let recv = [A0, A1, A2, A3];
    let mut a = wait(recv, RESUME, &mut []);
    loop {
        let r = if a.source != invoke::Source::Forwarded {
            // Only the forwarders it made (and the image builder's
            // metafactory key) reach it with a label.
            Err(Code::NoRights.into())
        } else {
            order(&mut books, a.label, a.code, a.w)
        };
        let (c, w, keys) = match r {
            Ok((w, k)) => (Code::Ok.into(), w, k),
            Err(c) => (c, [0; 4], [0; 4]),
        };
        a = Msg::new(RESUME, c)
            .words(w)
            .keys(keys)
            .recv(recv)
            .resume_into(RESUME)
            .ret_into(&mut []);
    }
}

stet_rt::main!(main);
