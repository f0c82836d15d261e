//! Unit tests and a model-based property test of the bookkeeping.

use super::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::vec;
use std::vec::Vec;

fn banks(pages: u32, nodes: u32, n: u32) -> Banks<Vec<u64>> {
    let l = Layout {
        pages,
        nodes,
        banks: n,
    };
    Banks::format(vec![0xdead_beef; l.words()], l).unwrap()
}

/// Runs a destroy to the end → (objects renewed, banks gone, forwarders).
fn destroy_all(b: &mut Banks<Vec<u64>>, bank: u32) -> (Vec<(Space, u32)>, Vec<u32>, Vec<u32>) {
    let (mut objs, mut gone, mut fwds) = (vec![], vec![], vec![]);
    loop {
        match b.destroy_step(bank).unwrap() {
            Step::Renew(s, i) => objs.push((s, i)),
            Step::BankGone(x, f) => {
                gone.push(x);
                fwds.push(f);
            }
            Step::Done => return (objs, gone, fwds),
        }
    }
}

#[test]
fn format_refuses_small_storage_and_open_finds_it_again() {
    let l = Layout {
        pages: 4,
        nodes: 4,
        banks: 2,
    };
    assert!(Banks::format(vec![0; l.words() - 1], l).is_none());
    assert!(Banks::open(vec![0u64; 64]).is_none());
    let mut b = banks(4, 4, 2);
    assert_eq!(b.alloc(PRIME, Space::Page), Ok(0));
    let w = b.w;
    let b2 = Banks::open(w).unwrap();
    assert_eq!(b2.layout(), l);
    assert_eq!(b2.owner(Space::Page, 0), Some((PRIME, false)));
    assert_eq!(b2.info(PRIME).unwrap().used_pages, 1);
}

#[test]
fn limits_count_the_whole_chain_and_supply_runs_out() {
    let mut b = banks(5, 8, 4);
    let (s, f) = b.create_sub(PRIME, 3, 1).unwrap();
    assert_eq!((s, f), (1, 0));
    assert_eq!(
        b.info(PRIME).unwrap().used_nodes,
        1,
        "forwarder charged to the parent"
    );
    for want in 0..3 {
        assert_eq!(b.alloc(s, Space::Page), Ok(want));
    }
    assert_eq!(b.alloc(s, Space::Page), Err(Error::Limit));
    assert_eq!(b.alloc(s, Space::Node), Ok(1));
    assert_eq!(b.alloc(s, Space::Node), Err(Error::Limit));
    // A grandchild's forwarder counts against s's node limit (full).
    assert_eq!(b.create_sub(s, UNLIMITED, UNLIMITED), Err(Error::Limit));
    b.set_limits(s, 3, 5).unwrap();
    let (g, _) = b.create_sub(s, UNLIMITED, UNLIMITED).unwrap();
    // g is unlimited itself but bounded by s: 3 pages used of 3.
    assert_eq!(b.alloc(g, Space::Page), Err(Error::Limit));
    assert_eq!(b.alloc(PRIME, Space::Page), Ok(3));
    assert_eq!(b.alloc(PRIME, Space::Page), Ok(4));
    assert_eq!(
        b.alloc(PRIME, Space::Page),
        Err(Error::Limit),
        "supply used up"
    );
    let i = b.info(s).unwrap();
    assert_eq!(
        (i.used_pages, i.used_nodes, i.limit_pages, i.limit_nodes),
        (3, 2, 3, 5)
    );
}

#[test]
fn free_needs_the_owner_and_refuses_forwarders() {
    let mut b = banks(8, 8, 4);
    let (s, f) = b.create_sub(PRIME, UNLIMITED, UNLIMITED).unwrap();
    let p = b.alloc(s, Space::Page).unwrap();
    assert_eq!(b.free(PRIME, Space::Page, p), Err(Error::NotOwned));
    assert_eq!(b.free(s, Space::Node, f), Err(Error::NotOwned));
    assert_eq!(b.free(PRIME, Space::Node, f), Err(Error::NotOwned));
    assert_eq!(
        b.free(s, Space::Page, 7),
        Err(Error::NotOwned),
        "never allocated"
    );
    assert_eq!(b.free(s, Space::Page, p), Ok(()));
    assert_eq!(b.free(s, Space::Page, p), Err(Error::NotOwned), "twice");
    assert_eq!(b.alloc(PRIME, Space::Page), Ok(p), "reused first");
    assert_eq!(b.bank_of_forwarder(f), Some(s));
    assert_eq!(b.bank_of_forwarder(f + 1), None);
}

#[test]
fn destroy_takes_the_whole_tree_deepest_first() {
    let mut b = banks(16, 16, 8);
    let (a, fa) = b.create_sub(PRIME, UNLIMITED, UNLIMITED).unwrap();
    let (c, fc) = b.create_sub(a, UNLIMITED, UNLIMITED).unwrap();
    let pa = b.alloc(a, Space::Page).unwrap();
    let pc = b.alloc(c, Space::Page).unwrap();
    let nc = b.alloc(c, Space::Node).unwrap();
    let keep = b.alloc(PRIME, Space::Page).unwrap();
    assert_eq!(b.destroy_step(PRIME), Err(Error::BadBank));
    let (objs, gone, fwds) = destroy_all(&mut b, a);
    assert_eq!(
        objs,
        vec![(Space::Page, pc), (Space::Node, nc), (Space::Page, pa)]
    );
    assert_eq!(gone, vec![c, a]);
    assert_eq!(fwds, vec![fc, fa]);
    assert!(!b.alive(a) && !b.alive(c));
    assert_eq!(b.alloc(a, Space::Page), Err(Error::BadBank));
    let i = b.info(PRIME).unwrap();
    assert_eq!((i.used_pages, i.used_nodes), (1, 0));
    assert_eq!(b.owner(Space::Page, keep), Some((PRIME, false)));
    // Table entries and objects are reused.
    let (n, _) = b.create_sub(PRIME, 1, 1).unwrap();
    assert_eq!(n, a);
}

#[test]
fn bank_table_fills() {
    let mut b = banks(4, 16, 3);
    b.create_sub(PRIME, 0, 0).unwrap();
    b.create_sub(PRIME, 0, 0).unwrap();
    assert_eq!(b.create_sub(PRIME, 0, 0), Err(Error::TooManyBanks));
}

/// The reference model: owners, the bank tree, limits.
#[derive(Default)]
struct Model {
    owner: BTreeMap<(u8, u32), u32>,
    parent: BTreeMap<u32, u32>,
    limits: BTreeMap<u32, [u64; 2]>,
}

impl Model {
    fn chain(&self, b: u32) -> Vec<u32> {
        let mut v = vec![b];
        let mut x = b;
        while let Some(&p) = self.parent.get(&x) {
            if p == NIL {
                break;
            }
            v.push(p);
            x = p;
        }
        v
    }
    fn subtree(&self, a: u32) -> BTreeSet<u32> {
        self.parent
            .keys()
            .copied()
            .filter(|&d| self.chain(d).contains(&a))
            .collect()
    }
    fn used(&self, a: u32, s: u8) -> u64 {
        let t = self.subtree(a);
        let own = self
            .owner
            .iter()
            .filter(|(k, o)| k.0 == s && t.contains(o))
            .count();
        let fwd = if s == 1 {
            t.iter().filter(|&&d| d != a).count()
        } else {
            0
        };
        (own + fwd) as u64
    }
}

#[derive(Clone, Debug)]
enum Op {
    Alloc(u8, bool),
    Free(u8, bool, u8),
    Sub(u8, u8, u8),
    Destroy(u8),
    Limits(u8, u8, u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u8>(), any::<bool>()).prop_map(|(b, s)| Op::Alloc(b, s)),
        2 => (any::<u8>(), any::<bool>(), any::<u8>()).prop_map(|(b, s, i)| Op::Free(b, s, i)),
        2 => (any::<u8>(), 0u8..12, 0u8..12).prop_map(|(b, p, n)| Op::Sub(b, p, n)),
        1 => any::<u8>().prop_map(Op::Destroy),
        1 => (any::<u8>(), 0u8..12, 0u8..12).prop_map(|(b, p, n)| Op::Limits(b, p, n)),
    ]
}

fn lim(x: u8) -> u64 {
    if x >= 10 {
        UNLIMITED
    } else {
        x as u64
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn agrees_with_a_model(ops in proptest::collection::vec(op(), 1..120)) {
        const P: u32 = 24;
        const N: u32 = 24;
        let mut b = banks(P, N, 8);
        let mut m = Model::default();
        m.parent.insert(PRIME, NIL);
        m.limits.insert(PRIME, [UNLIMITED; 2]);
        let pick = |m: &Model, x: u8| -> u32 {
            let live: Vec<u32> = m.parent.keys().copied().collect();
            // Sometimes a dead or never-made bank.
            if x % 11 == 10 { 7 - (x as u32 % 3) } else { live[x as usize % live.len()] }
        };
        for o in ops {
            match o {
                Op::Alloc(x, node) => {
                    let bank = pick(&m, x);
                    let s = if node { Space::Node } else { Space::Page };
                    let si = node as u8;
                    let r = b.alloc(bank, s);
                    if !m.parent.contains_key(&bank) {
                        prop_assert_eq!(r, Err(Error::BadBank));
                        continue;
                    }
                    let room = m.chain(bank).iter().all(|&a| m.used(a, si) < m.limits[&a][si as usize]);
                    let taken = m.owner.keys().filter(|k| k.0 == si).count() as u32
                        + if node { m.parent.len() as u32 - 1 } else { 0 };
                    if !room || taken == if node { N } else { P } {
                        prop_assert_eq!(r, Err(Error::Limit));
                    } else {
                        let i = r.unwrap();
                        prop_assert!(!m.owner.contains_key(&(si, i)), "handed out twice");
                        m.owner.insert((si, i), bank);
                    }
                }
                Op::Free(x, node, i) => {
                    let bank = pick(&m, x);
                    let si = node as u8;
                    let s = if node { Space::Node } else { Space::Page };
                    let i = i as u32 % P;
                    let r = b.free(bank, s, i);
                    if !m.parent.contains_key(&bank) {
                        prop_assert_eq!(r, Err(Error::BadBank));
                    } else if m.owner.get(&(si, i)) == Some(&bank) {
                        prop_assert_eq!(r, Ok(()));
                        m.owner.remove(&(si, i));
                    } else {
                        prop_assert_eq!(r, Err(Error::NotOwned));
                    }
                }
                Op::Sub(x, p, n) => {
                    let parent = pick(&m, x);
                    let r = b.create_sub(parent, lim(p), lim(n));
                    if !m.parent.contains_key(&parent) {
                        prop_assert_eq!(r, Err(Error::BadBank));
                        continue;
                    }
                    let room = m.chain(parent).iter().all(|&a| m.used(a, 1) < m.limits[&a][1]);
                    let taken = m.owner.keys().filter(|k| k.0 == 1).count() as u32 + m.parent.len() as u32 - 1;
                    match r {
                        Err(Error::TooManyBanks) => prop_assert_eq!(m.parent.len(), 8),
                        Err(Error::Limit) => prop_assert!(!room || taken == N),
                        Ok((nb, fwd)) => {
                            prop_assert!(room && taken < N && m.parent.len() < 8);
                            prop_assert!(!m.parent.contains_key(&nb));
                            prop_assert!(!m.owner.contains_key(&(1, fwd)));
                            prop_assert_eq!(b.bank_of_forwarder(fwd), Some(nb));
                            m.parent.insert(nb, parent);
                            m.limits.insert(nb, [lim(p), lim(n)]);
                        }
                        Err(e) => prop_assert!(false, "unexpected {:?}", e),
                    }
                }
                Op::Destroy(x) => {
                    let bank = pick(&m, x);
                    if bank == PRIME {
                        prop_assert_eq!(b.destroy_step(bank), Err(Error::BadBank));
                        continue;
                    }
                    let (objs, gone, _) = destroy_all(&mut b, bank);
                    if !m.parent.contains_key(&bank) {
                        prop_assert!(objs.is_empty() && gone.is_empty());
                        continue;
                    }
                    let t = m.subtree(bank);
                    let want: BTreeSet<(u8, u32)> = m.owner.iter().filter(|(_, o)| t.contains(o)).map(|(k, _)| *k).collect();
                    let got: BTreeSet<(u8, u32)> = objs.iter().map(|&(s, i)| ((s == Space::Node) as u8, i)).collect();
                    prop_assert_eq!(got, want.clone());
                    prop_assert_eq!(objs.len(), want.len());
                    prop_assert_eq!(gone.iter().copied().collect::<BTreeSet<_>>(), t.clone());
                    m.owner.retain(|_, o| !t.contains(o));
                    for d in t {
                        m.parent.remove(&d);
                        m.limits.remove(&d);
                    }
                }
                Op::Limits(x, p, n) => {
                    let bank = pick(&m, x);
                    let r = b.set_limits(bank, lim(p), lim(n));
                    if m.parent.contains_key(&bank) {
                        prop_assert_eq!(r, Ok(()));
                        m.limits.insert(bank, [lim(p), lim(n)]);
                    } else {
                        prop_assert_eq!(r, Err(Error::BadBank));
                    }
                }
            }
            // Accounts agree with the model everywhere.
            for (&bank, l) in &m.limits {
                let i = b.info(bank).unwrap();
                prop_assert_eq!(i.used_pages, m.used(bank, 0), "pages of bank {}", bank);
                prop_assert_eq!(i.used_nodes, m.used(bank, 1), "nodes of bank {}", bank);
                prop_assert_eq!([i.limit_pages, i.limit_nodes], *l);
            }
            for (&(s, i), &o) in &m.owner {
                let sp = if s == 1 { Space::Node } else { Space::Page };
                prop_assert_eq!(b.owner(sp, i), Some((o, false)));
            }
        }
    }
}
