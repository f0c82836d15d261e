//! The factory, exactly (tests/system/factory.toml): making factories
//! (fake banks and non-programs refused), installing and sealing, the
//! discreetness verdict for every kind of component (writable pages, start
//! keys, the console, foreign forwarders, nested factories discreet or
//! not, sealed or not), products that hold exactly their components, the
//! argument and their bank, share their text and own their data (page
//! keys compared through a supervisor's domain keys; bank accounting to
//! the object), LIMIT with nothing left allocated, and
//! products destroyed with the requester's bank.
//!
//! Argument 0, the tester. Keys: 1 console, 2 sleep, 3 discrim, 4 the
//! prime bank, 5 the metafactory, 6 the `facprod` program node, 7 the
//! prime meter, 8 a start key to an unrelated domain (the keeper below),
//! 9 a fresh node (a locker for keys), 10–15 scratch.
//!
//! Argument 1, a keeper: a product created with it as its keeper ends
//! with `int3`; it prints what it heard (`factest keeper: ...`) and leaves
//! the product stopped. Keys: 1 console, 2 discrim.
//!
//! Each check prints `factest: <what>: ok` or `... WRONG (got X, want
//! Y)`; the last line is `factest: all ok` or `factest: N checks WRONG`.
#![no_std]
#![no_main]

use core::fmt::Debug;
use stet_factory::plan::{self, Segment, Source};
use stet_keys::{rights, KeyType};
use stet_rt::abi::code::Code;
use stet_rt::abi::order::{discrim, domain, node, page, segment, sleep};
use stet_rt::abi::service::factory::{self as o, why};
use stet_rt::bank;
use stet_rt::checks::Checks;
use stet_rt::key::{Answer, Msg, Slot};
use stet_rt::println;

const CONSOLE: Slot = 1;
const SLEEP: Slot = 2;
const DISCRIM: Slot = 3;
const PRIME: Slot = 4;
const META: Slot = 5;
const PROG: Slot = 6;
const METER: Slot = 7;
const STRANGER: Slot = 8;
const LOCKER: Slot = 9;
const B: Slot = 10;
const R: Slot = 11;
const K: Slot = 12;
const P: Slot = 13;
const BK: Slot = 14;
const X: Slot = 15;

// Locker slots.
const L_FB: u64 = 0; // the factories' storage bank
const L_RA: u64 = 1; // requestor of the discreet factory A
const L_B1: u64 = 2; // the products' bank
const L_P1: u64 = 3;
const L_P2: u64 = 4;
const L_RW: u64 = 5; // requestor of W (a writable page inside)
const L_BA: u64 = 6; // builder of A
const L_D2: u64 = 7; // P2's domain key
const L_D3: u64 = 8; // P3's domain key
const L_COPY: u64 = 14; // keys copied from slot to slot
const L_NUM: u64 = 15; // where number keys are made

const STACK: u64 = 4;
const MAX: u64 = u64::MAX;
const T_FWD: u64 = KeyType::Forwarder as u64;

static CHECKS: Checks = Checks::new("factest");

fn check<G: PartialEq<W> + Debug, W: Debug>(what: impl core::fmt::Display, got: G, want: W) {
    CHECKS.eq(what, got, want);
}

fn put(l: u64, from: Slot) {
    Msg::new(LOCKER, node::SWAP)
        .w0(l)
        .keys([from, 0, 0, 0])
        .call();
}

fn take(l: u64, into: Slot) {
    Msg::new(LOCKER, node::FETCH)
        .w0(l)
        .recv([into, 0, 0, 0])
        .call();
}

/// (type, rights, dangling).
fn classify(s: Slot) -> (u64, u64, u64) {
    let a = Msg::new(DISCRIM, discrim::CLASSIFY)
        .keys([s, 0, 0, 0])
        .call();
    (a.w[0], a.w[1], a.w[2])
}

fn code_of(r: Result<(), u64>) -> u64 {
    r.err().unwrap_or(Code::Ok.into())
}

/// Metafactory NEW_FACTORY → builder into B, requestor into R.
fn new_factory(bank: Slot, prog: Slot) -> u64 {
    Msg::new(META, o::NEW_FACTORY)
        .keys([bank, prog, 0, 0])
        .recv([B, R, 0, 0])
        .call()
        .code
}

fn install(b: Slot, slot: u64, key: Slot) -> u64 {
    Msg::new(b, o::INSTALL)
        .w0(slot)
        .keys([key, 0, 0, 0])
        .call()
        .code
}

/// SEAL's answer: (code, words).
fn seal(b: Slot) -> (u64, [u64; 4]) {
    let a = Msg::new(b, o::SEAL).call();
    (a.code, a.w)
}

fn is_discreet(k: Slot) -> (u64, [u64; 4]) {
    let a = Msg::new(k, o::IS_DISCREET).call();
    (a.code, a.w)
}

/// Requestor CREATE → the product's start key into P, its domain key (if
/// a keeper was named) into X.
fn create(r: Slot, bank: Slot, meter: Slot, arg: Slot, keeper: Slot, rdi: u64) -> u64 {
    Msg::new(r, o::CREATE)
        .w0(rdi)
        .keys([bank, meter, arg, keeper])
        .recv([P, X, 0, 0])
        .call()
        .code
}

fn compare(a: Slot, b: Slot) -> u64 {
    Msg::new(DISCRIM, discrim::COMPARE)
        .keys([a, b, 0, 0])
        .call()
        .w[0]
}

/// Walks the segment key in `at` down to page `page` of the smallest tree
/// over `pages` (segment FETCH, slot by slot), leaving the page key there.
fn walk(pages: &plan::Pages, page: u64, at: Slot) -> u64 {
    let Some(path) = plan::path(pages, page) else {
        return Code::BadValue.into();
    };
    for h in path.hops() {
        let c = Msg::new(at, segment::FETCH)
            .w0(h.slot as u64)
            .recv([at, 0, 0, 0])
            .call()
            .code;
        if c != Code::Ok {
            return c;
        }
    }
    Code::Ok.into()
}

fn ask(p: Slot, order: u64) -> Answer {
    Msg::new(p, order).call()
}

/// A number key into `into`.
fn number(v: u64, into: Slot) {
    Msg::new(LOCKER, node::WRITE_NUMBER)
        .words([L_NUM, v, 0, 0])
        .call();
    take(L_NUM, into);
}

/// A new factory from the storage bank with the given components
/// installed and sealed → its seal answer; builder in B, requestor in R.
fn sealed_factory(comps: &[(u64, Slot)]) -> (u64, [u64; 4]) {
    take(L_FB, BK);
    let c = new_factory(BK, PROG);
    if c != Code::Ok {
        return (c, [0; 4]);
    }
    for &(slot, key) in comps {
        let c = install(B, slot, key);
        if c != Code::Ok {
            return (c, [0; 4]);
        }
    }
    seal(B)
}

/// The program's load segments, read through the program node.
fn segments(segs: &mut [Segment; plan::MAX_SEGMENTS]) -> usize {
    let mut n = 0;
    for slot in 2..16u64 {
        let a = Msg::new(PROG, node::READ_NUMBER).w0(slot).call();
        if a.code != Code::Ok {
            break;
        }
        if let Ok(s) = Segment::from_number(a.w[0], a.w[1]) {
            segs[n] = s;
            n += 1;
        }
    }
    n
}

fn making_factories() {
    // Fake banks and things that are not programs are refused.
    check(
        "fresh page from prime",
        code_of(bank::alloc_page(PRIME, K)),
        Code::Ok,
    );
    check(
        "page key as the bank",
        new_factory(K, PROG),
        Code::WrongType,
    );
    check("void as the bank", new_factory(0, PROG), Code::WrongType);
    check(
        "a node for a forgery",
        code_of(bank::alloc_node(PRIME, X)),
        Code::Ok,
    );
    Msg::new(X, node::SWAP)
        .w0(0)
        .keys([STRANGER, 0, 0, 0])
        .call();
    let made = Msg::new(X, node::MAKE_FORWARDER)
        .recv([K, 0, 0, 0])
        .call()
        .code;
    check(
        "a forged forwarder",
        (made, classify(K).0),
        (Code::Ok.into(), T_FWD),
    );
    check(
        "forged forwarder as the bank",
        new_factory(K, PROG),
        Code::WrongType,
    );
    check(
        "storage bank",
        code_of(bank::create_sub(PRIME, MAX, MAX, BK)),
        Code::Ok,
    );
    put(L_FB, BK);
    check(
        "discrim as the program",
        new_factory(BK, DISCRIM),
        Code::WrongType,
    );
    check(
        "a node that is no program",
        new_factory(BK, X),
        Code::BadValue,
    );
    check_info("storage bank after refusals", BK, [0, 0, MAX, MAX]);

    check("make factory A", new_factory(BK, PROG), Code::Ok);
    check("builder key type", classify(B).0, T_FWD);
    check("requestor key type", classify(R).0, T_FWD);
    check_info("storage bank holds A's two nodes", BK, [0, 2, MAX, MAX]);
    put(L_RA, R);
    put(L_BA, B);
    let unsealed = [0, 0, why::UNSEALED, 0];
    check(
        "A unsealed: not discreet",
        is_discreet(R),
        (Code::Ok.into(), unsealed),
    );
    check(
        "A unsealed: CREATE refused",
        create(R, PRIME, METER, 0, 0, 0),
        Code::BadState,
    );

    // Components: discrim, sleep, a number, a read-only page, a sense node.
    check("install discrim", install(B, 1, DISCRIM), Code::Ok);
    check("install sleep", install(B, 2, SLEEP), Code::Ok);
    number(42, K);
    check("install a number", install(B, 3, K), Code::Ok);
    bank::alloc_page(PRIME, X).ok();
    Msg::new(X, page::WRITE_WORD).words([0, 77, 0, 0]).call();
    Msg::new(X, page::MAKE_RO).recv([K, 0, 0, 0]).call();
    check("install a read-only page", install(B, 4, K), Code::Ok);
    bank::alloc_node(PRIME, X).ok();
    Msg::new(X, node::MAKE_SENSE).recv([K, 0, 0, 0]).call();
    check("install a sense node", install(B, 5, K), Code::Ok);
    check("install slot 0", install(B, 0, K), Code::BadValue);
    check("install slot 13", install(B, 13, K), Code::BadValue);
    check(
        "install through the requestor",
        install(R, 6, K),
        Code::NoSuchOrder,
    );
    check("seal through the requestor", seal(R).0, Code::NoSuchOrder);
    check(
        "create through the builder",
        create(B, PRIME, METER, 0, 0, 0),
        Code::NoSuchOrder,
    );
    let stack = |k: Slot, n: u64| Msg::new(k, o::SET_STACK_PAGES).w0(n).call().code;
    check("stack of 0 pages", stack(B, 0), Code::BadValue);
    check("stack of 257 pages", stack(B, 257), Code::BadValue);
    check("stack of 4 pages", stack(B, STACK), Code::Ok);
    check("seal A", seal(B), (Code::Ok.into(), [1, 0, 0, 0]));
    check(
        "A is discreet (requestor)",
        is_discreet(R),
        (Code::Ok.into(), [1, 0, 0, 0]),
    );
    check(
        "A is discreet (builder)",
        is_discreet(B),
        (Code::Ok.into(), [1, 0, 0, 0]),
    );
    check("install after seal", install(B, 6, DISCRIM), Code::BadState);
    check("stack after seal", stack(B, 8), Code::BadState);
    check("seal again", seal(B).0, Code::BadState);
    check("unknown builder order", ask(B, 99).code, Code::NoSuchOrder);
    check(
        "unknown metafactory order",
        ask(META, 99).code,
        Code::NoSuchOrder,
    );
}

fn check_info(what: &str, b: Slot, want: [u64; 4]) {
    check(
        format_args!("{what}: bank INFO"),
        bank::info(b).unwrap_or([u64::MAX - 1; 4]),
        want,
    );
}

fn byte(t: u64, slot: u64) -> u64 {
    t << (((slot - 1) % 8) * 8)
}

fn products() {
    take(L_RA, R);
    // What a product should cost, from the template: its data pages,
    // STACK stack pages and an FPU page; root, general keys and annex
    // nodes and its address-space tree. Never its text.
    let mut segs = [Segment {
        first: 0,
        count: 0,
        writable: false,
    }; plan::MAX_SEGMENTS];
    let n = segments(&mut segs);
    let product = plan::product(&segs[..n], STACK).expect("facprod's template plans");
    let text = product.count(Source::Text);
    let data = product.count(Source::Data);
    let pages = data + STACK + 1;
    let nodes = 3 + plan::node_count(&product);
    println!(
        "factest: facprod: {n} segments, {text} text pages (shared), {data} data pages; a product takes {pages} pages and {nodes} nodes"
    );
    check(
        "facprod has text and data",
        (text > 0, data > 0),
        (true, true),
    );

    check(
        "product bank",
        code_of(bank::create_sub(PRIME, MAX, MAX, BK)),
        Code::Ok,
    );
    put(L_B1, BK);
    check(
        "create P1",
        create(R, BK, METER, STRANGER, 0, 0x1234),
        Code::Ok,
    );
    put(L_P1, P);
    check("P1 is a start key", classify(P).0, KeyType::Start as u64);
    check(
        "no keeper: no domain key",
        classify(X).0,
        KeyType::Void as u64,
    );
    // Exactly its components (discrim, sleep, number, read-only page,
    // sense node), void, the argument (a start key), its bank, and the
    // resume key of this very call.
    let types = [9, 10, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 6, T_FWD, 7];
    let mut want = [0u64; 4];
    for (i, &t) in types.iter().enumerate() {
        let slot = i as u64 + 1;
        want[(slot > 8) as usize] |= byte(t, slot);
    }
    want[2] = byte(rights::RO as u64, 4) | byte((rights::RO | rights::WEAK) as u64, 5);
    let a = ask(P, 1);
    check(
        "P1 classifies its slots 1..=15",
        (a.code, a.w),
        (Code::Ok.into(), want),
    );
    check_info(
        "the products' bank after P1",
        BK,
        [pages, nodes + 1, MAX, MAX],
    );
    let a = ask(P, 2);
    check(
        "P1: rdi, counter, its bank's pages and nodes",
        (a.code, a.w),
        (Code::Ok.into(), [0x1234, 1000, pages, nodes]),
    );
    for i in 1..=3 {
        check(format_args!("P1 counts {i}"), ask(P, 3).w[0], 1000 + i);
    }
    check("create P2", create(R, BK, METER, 0, STRANGER, 7), Code::Ok);
    put(L_P2, P);
    check(
        "a keeper: a domain key too",
        classify(X).0,
        KeyType::Domain as u64,
    );
    put(L_D2, X);
    check("P2 counts from its own data", ask(P, 3).w[0], 1001);
    check("P2: rdi and counter", ask(P, 2).w[..2] == [7, 1001], true);
    take(L_P1, P);
    check("P1's counter is its own", ask(P, 2).w[1], 1003);
    check_info("two products", BK, [2 * pages, 2 * (nodes + 1), MAX, MAX]);

    // Bad requests leave nothing behind.
    bank::alloc_page(PRIME, X).ok();
    check(
        "page key as the bank",
        create(R, X, METER, 0, 0, 0),
        Code::WrongType,
    );
    take(L_FB, K);
    bank::alloc_node(PRIME, X).ok();
    Msg::new(X, node::SWAP)
        .w0(0)
        .keys([STRANGER, 0, 0, 0])
        .call();
    Msg::new(X, node::MAKE_FORWARDER).recv([K, 0, 0, 0]).call();
    check(
        "forged bank to CREATE",
        create(R, K, METER, 0, 0, 0),
        Code::WrongType,
    );
    check(
        "discrim as the meter",
        create(R, BK, DISCRIM, 0, 0, 0),
        Code::WrongType,
    );
    check(
        "discrim as the keeper",
        create(R, BK, METER, 0, DISCRIM, 0),
        Code::WrongType,
    );
    check_info(
        "refused CREATEs took nothing",
        BK,
        [2 * pages, 2 * (nodes + 1), MAX, MAX],
    );

    // LIMIT: a bank one page short, one node short, with no node at all.
    for (what, lp, ln) in [
        ("one page short", pages - 1, MAX),
        ("one node short", MAX, nodes),
        ("no nodes", MAX, 0),
    ] {
        check(
            format_args!("bank {what}"),
            code_of(bank::create_sub(PRIME, lp, ln, K)),
            Code::Ok,
        );
        check(
            format_args!("CREATE from a bank {what}"),
            create(R, K, METER, 0, 0, 0),
            Code::Limit,
        );
        check_info(what, K, [0, 0, lp, ln]);
        bank::destroy(K).ok();
    }
    check(
        "CREATE from a bank that just fits",
        code_of(bank::create_sub(PRIME, pages, nodes + 1, K)),
        Code::Ok,
    );
    check(
        "CREATE when it just fits",
        create(R, K, METER, 0, 0, 9),
        Code::Ok,
    );
    check("that product answers", ask(P, 2).w[..2] == [9, 1000], true);
    bank::destroy(K).ok();
    check("its bank destroyed: start key void", classify(P).2, 1);

    // A keeper: the product's end is a fault its keeper hears (the
    // keeper prints it; tests/system/factory.toml expects the line).
    check(
        "create P3 with a keeper",
        create(R, BK, METER, 0, STRANGER, 3),
        Code::Ok,
    );
    check("P3 ends", Msg::new(P, 5).send().code, Code::Ok);
    // Time for it to run and its keeper to report, before its bank goes.
    let now = Msg::new(SLEEP, sleep::NOW).call().w[0];
    Msg::new(SLEEP, sleep::UNTIL).w0(now + 20_000_000).call();
    let products = 3;

    // Text shared, data not, seen through the domain keys the two
    // supervised products' requester got: the same read-only page as the
    // template's at the program's first text page, different pages at its
    // first data page.
    put(L_D3, X);
    let tpl = plan::template(&segs[..n]).expect("facprod's template");
    let first = |writable: bool| {
        segs[..n]
            .iter()
            .find(|s| s.writable == writable)
            .map_or(0, |s| s.first)
    };
    let (text_page, data_page) = (first(false), first(true));
    let template_key = |page: u64, into: Slot| {
        Msg::new(PROG, node::FETCH)
            .w0(0)
            .recv([into, 0, 0, 0])
            .call();
        walk(&tpl, page, into)
    };
    let product_key = |dom: u64, page: u64, into: Slot| {
        take(dom, into);
        Msg::new(into, domain::GET_SPACE)
            .recv([into, 0, 0, 0])
            .call();
        walk(&product, page, into)
    };
    check("template text key", template_key(text_page, K), Code::Ok);
    check("P2 text key", product_key(L_D2, text_page, X), Code::Ok);
    check("P2's text page is the template's", compare(K, X), 1);
    check(
        "a shared text page is read-only",
        classify(X),
        (KeyType::Page as u64, rights::RO as u64, 0),
    );
    check("P3 text key", product_key(L_D3, text_page, X), Code::Ok);
    check("P3's text page is the template's", compare(K, X), 1);
    check("P2 data key", product_key(L_D2, data_page, K), Code::Ok);
    check("P3 data key", product_key(L_D3, data_page, X), Code::Ok);
    check("P2's and P3's data pages differ", compare(K, X), 0);
    let probe = |dom: u64, page: u64| {
        take(dom, X);
        Msg::new(X, domain::GET_SPACE).recv([X, 0, 0, 0]).call();
        let a = Msg::new(X, segment::PROBE).w0(page * plan::PAGE).call();
        (a.code, a.w[0], a.w[1])
    };
    check(
        "P3 maps its data page writable",
        probe(L_D3, data_page),
        (Code::Ok.into(), 1, 1),
    );
    check(
        "P3 maps its text page read-only",
        probe(L_D3, text_page),
        (Code::Ok.into(), 1, 0),
    );
    product_key(L_D3, data_page, X);
    check("template data key", template_key(data_page, K), Code::Ok);
    check("P3's data page is not the template's", compare(K, X), 0);

    // Destroying the requester's bank destroys the products.
    let before = bank::info(PRIME).unwrap_or([0; 4]);
    check(
        "destroy the products' bank",
        code_of(bank::destroy(BK)),
        Code::Ok,
    );
    take(L_P1, P);
    check("P1's start key is void", classify(P).2, 1);
    check("calling P1", ask(P, 2).code, Code::Void);
    take(L_P2, P);
    check("P2's start key is void", classify(P).2, 1);
    let after = bank::info(PRIME).unwrap_or([0; 4]);
    check(
        "prime bank got everything back",
        (before[0] - after[0], before[1] - after[1]),
        (products * pages, products * (nodes + 1) + 1),
    );
}

fn verdicts() {
    bank::alloc_page(PRIME, K).ok();
    let w = seal_of(&[(1, DISCRIM), (3, K)]);
    check(
        "W: a writable page in slot 3",
        w,
        (Code::Ok.into(), [0, 3, why::KEY, 2]),
    );
    check("W asked again", is_discreet(R), w);
    put(L_RW, R);
    check(
        "S: a start key to an unrelated domain in slot 2",
        seal_of(&[(2, STRANGER)]),
        (Code::Ok.into(), [0, 2, why::KEY, KeyType::Start as u64]),
    );
    check(
        "the console in slot 12",
        seal_of(&[(12, CONSOLE)]),
        (Code::Ok.into(), [0, 12, why::KEY, KeyType::Console as u64]),
    );
    check(
        "a meter in slot 1",
        seal_of(&[(1, METER)]),
        (Code::Ok.into(), [0, 1, why::KEY, KeyType::Meter as u64]),
    );
    bank::alloc_node(PRIME, K).ok();
    Msg::new(K, node::MAKE_RO).recv([K, 0, 0, 0]).call();
    check(
        "a read-only (not weak) node in slot 7",
        seal_of(&[(7, K)]),
        (Code::Ok.into(), [0, 7, why::KEY, KeyType::Node as u64]),
    );
    check(
        "a bank key in slot 4",
        seal_of(&[(4, PRIME)]),
        (Code::Ok.into(), [0, 4, why::FORWARDER, T_FWD]),
    );
    take(L_BA, K);
    check(
        "a builder key in slot 5",
        seal_of(&[(5, K)]),
        (Code::Ok.into(), [0, 5, why::FORWARDER, T_FWD]),
    );
    check(
        "the metafactory key in slot 6",
        seal_of(&[(6, META)]),
        (Code::Ok.into(), [0, 6, why::FORWARDER, T_FWD]),
    );
    // The last install decides: a writable key replaced by a sense one.
    bank::alloc_node(PRIME, K).ok();
    take(L_FB, BK);
    new_factory(BK, PROG);
    install(B, 2, K);
    Msg::new(K, node::MAKE_SENSE).recv([K, 0, 0, 0]).call();
    install(B, 2, K);
    check(
        "a slot reinstalled",
        seal(B),
        (Code::Ok.into(), [1, 0, 0, 0]),
    );

    // Nested factories.
    take(L_RA, K);
    check(
        "N1 nests A",
        seal_of(&[(1, DISCRIM), (2, K)]),
        (Code::Ok.into(), [1, 0, 0, 0]),
    );
    copy_r(X);
    check(
        "N2 nests N1",
        seal_of(&[(9, X)]),
        (Code::Ok.into(), [1, 0, 0, 0]),
    );
    take(L_RW, K);
    check(
        "N3 nests W",
        seal_of(&[(1, DISCRIM), (4, K)]),
        (Code::Ok.into(), [0, 4, why::NESTED_NOT_DISCREET, T_FWD]),
    );
    copy_r(X);
    check(
        "N4 nests N3",
        seal_of(&[(2, X)]),
        (Code::Ok.into(), [0, 2, why::NESTED_NOT_DISCREET, T_FWD]),
    );
    take(L_FB, BK);
    new_factory(BK, PROG); // U: never sealed
    copy_r(X);
    check(
        "N5 nests an unsealed factory",
        seal_of(&[(3, X)]),
        (Code::Ok.into(), [0, 3, why::NESTED_UNSEALED, T_FWD]),
    );
    // A factory holding its own requestor key.
    take(L_FB, BK);
    new_factory(BK, PROG);
    install(B, 1, R);
    check(
        "a factory nesting itself",
        seal(B),
        (Code::Ok.into(), [0, 1, why::NESTED_UNSEALED, T_FWD]),
    );
}

/// The requestor key in R, copied into `into` (through the locker).
fn copy_r(into: Slot) {
    put(L_COPY, R);
    take(L_COPY, into);
}

/// A new factory with `comps` installed, sealed → its SEAL answer.
fn seal_of(comps: &[(u64, Slot)]) -> (u64, [u64; 4]) {
    sealed_factory(comps)
}

/// Argument 1: the keeper of a product (keys: 1 console, 2 discrim).
fn keeper() -> i64 {
    let mut regs = [0u8; stet_rt::abi::domain::REGS_SIZE];
    let a = stet_rt::key::wait([3, 0, 0, 0], 4, &mut regs);
    let at = stet_rt::abi::domain::Reg::Rdi as usize * 8;
    let mut w = [0u8; 8];
    w.copy_from_slice(&regs[at..at + 8]);
    let t = Msg::new(2, discrim::CLASSIFY).keys([3, 0, 0, 0]).call().w[0];
    println!(
        "factest keeper: fault {}, vector {}, rdi {:#x}, key 0 type {t}",
        a.code,
        a.w[0],
        u64::from_le_bytes(w)
    );
    stet_rt::kernel::exit(0)
}

fn main(arg: u64) -> i64 {
    if arg == 1 {
        return keeper();
    }
    making_factories();
    products();
    verdicts();
    let fails = CHECKS.failures();
    if fails == 0 {
        println!("factest: all ok");
    } else {
        println!("factest: {fails} checks WRONG");
    }
    0
}

stet_rt::main!(main);
