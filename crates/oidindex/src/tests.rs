//! The index against a reference map under random inserts and removals.

use super::Index;
use proptest::prelude::*;
use std::collections::HashMap;
use std::vec::Vec;

extern crate std;

#[derive(Clone, Debug)]
enum Op {
    Insert(u64),
    Remove(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        // Few distinct oids and clustered ones make long probe runs.
        (0u64..64).prop_map(Op::Insert),
        (0u64..1 << 40).prop_map(Op::Insert),
        any::<usize>().prop_map(Op::Remove),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn agrees_with_a_map(ops in proptest::collection::vec(op(), 1..300)) {
        const SLOTS: usize = 32;
        let mut buckets = std::vec![0u32; Index::buckets_for(SLOTS)];
        let mut idx = Index::new(&mut buckets);
        // slot -> oid, and the reference oid -> slot.
        let mut slots: Vec<Option<u64>> = std::vec![None; SLOTS];
        let mut map: HashMap<u64, u32> = HashMap::new();
        for o in ops {
            match o {
                Op::Insert(oid) => {
                    if map.contains_key(&oid) { continue; }
                    let Some(s) = slots.iter().position(|x| x.is_none()) else { continue };
                    slots[s] = Some(oid);
                    idx.insert(oid, s as u32);
                    map.insert(oid, s as u32);
                }
                Op::Remove(n) => {
                    if map.is_empty() { continue; }
                    let mut keys: Vec<u64> = map.keys().copied().collect();
                    keys.sort();
                    let oid = keys[n % keys.len()];
                    let s = map.remove(&oid).unwrap();
                    let view = slots.clone();
                    idx.remove(oid, s, |x| view[x as usize].unwrap());
                    slots[s as usize] = None;
                }
            }
            let view = slots.clone();
            for (oid, s) in &map {
                prop_assert_eq!(idx.find(*oid, |x| view[x as usize].unwrap_or(u64::MAX)), Some(*s));
            }
            for probe in 0..64u64 {
                if !map.contains_key(&probe) {
                    prop_assert_eq!(idx.find(probe, |x| view[x as usize].unwrap_or(u64::MAX)), None);
                }
            }
        }
    }
}

#[test]
fn remove_absent_is_harmless() {
    let mut buckets = [0u32; 8];
    let mut idx = Index::new(&mut buckets);
    idx.insert(5, 0);
    idx.remove(6, 1, |_| 5);
    assert_eq!(idx.find(5, |_| 5), Some(0));
}
