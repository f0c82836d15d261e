use super::*;
use crate::elf::prot::{EXEC, READ, WRITE};
use proptest::prelude::*;
use std::vec::Vec;

fn anon(start: u64, end: u64, prot: u8) -> Vma {
    Vma {
        start,
        end,
        prot,
        shared: false,
        grows_down: false,
        locked: false,
        backing: Backing::Anon,
    }
}

fn spans(m: &Map) -> Vec<(u64, u64, u8)> {
    m.vmas().iter().map(|v| (v.start, v.end, v.prot)).collect()
}

#[test]
fn start_reserves_the_stack() {
    let mut m = Map::new();
    m.start(0x406000).unwrap();
    assert_eq!(
        spans(&m),
        [(STACK_TOP - STACK_MAX, STACK_TOP, READ | WRITE)]
    );
    assert!(m.find(STACK_TOP - 8).is_some());
    assert!(m.find(STACK_TOP).is_none());
    assert!(m.find(STACK_TOP - STACK_MAX - 1).is_none());
}

#[test]
fn brk_grows_shrinks_and_refuses() {
    let mut m = Map::new();
    m.start(0x406010).unwrap();
    assert_eq!(m.set_brk(0, |_| {}), 0x406010);
    assert_eq!(m.set_brk(0x406100, |_| {}), 0x406100);
    assert_eq!(spans(&m).len(), 1, "still within the first page");
    assert_eq!(m.set_brk(0x409000, |_| {}), 0x409000);
    assert_eq!(spans(&m)[0], (0x407000, 0x409000, READ | WRITE));
    let mut gone = Vec::new();
    assert_eq!(
        m.set_brk(0x407800, |v| gone.push((v.start, v.end))),
        0x407800
    );
    assert_eq!(gone, [(0x408000, 0x409000)]);
    // Below the start or into another mapping: refused, old break answered.
    assert_eq!(m.set_brk(0x400000, |_| {}), 0x407800);
    m.insert(anon(0x40a000, 0x40b000, READ)).unwrap();
    assert_eq!(m.set_brk(0x40b000, |_| {}), 0x407800);
}

#[test]
fn unmap_splits_and_reports() {
    let mut m = Map::new();
    m.insert(anon(0x10000, 0x20000, READ | WRITE)).unwrap();
    let mut gone = Vec::new();
    m.unmap(0x14000, 0x16000, |v| gone.push((v.start, v.end)))
        .unwrap();
    assert_eq!(gone, [(0x14000, 0x16000)]);
    assert_eq!(spans(&m), [(0x10000, 0x14000, 3), (0x16000, 0x20000, 3)]);
    // Unmapping nothing is fine.
    m.unmap(0x30000, 0x40000, |_| panic!()).unwrap();
    // Across both.
    gone.clear();
    m.unmap(0x12000, 0x18000, |v| gone.push((v.start, v.end)))
        .unwrap();
    assert_eq!(gone, [(0x12000, 0x14000), (0x16000, 0x18000)]);
    assert_eq!(spans(&m), [(0x10000, 0x12000, 3), (0x18000, 0x20000, 3)]);
}

#[test]
fn file_offsets_follow_splits() {
    let mut m = Map::new();
    m.insert(Vma {
        start: 0x400000,
        end: 0x408000,
        prot: READ | EXEC,
        shared: false,
        grows_down: false,
        locked: false,
        backing: Backing::File {
            file: 3,
            offset: 0x1000,
            zero_from: u64::MAX,
        },
    })
    .unwrap();
    m.protect(0x402000, 0x403000, READ).unwrap();
    let offs: Vec<u64> = m
        .vmas()
        .iter()
        .map(|v| match v.backing {
            Backing::File { offset, .. } => offset,
            Backing::Anon => panic!(),
        })
        .collect();
    assert_eq!(offs, [0x1000, 0x3000, 0x4000]);
    // Back to the same protection: the three join again.
    m.protect(0x402000, 0x403000, READ | EXEC).unwrap();
    assert_eq!(spans(&m), [(0x400000, 0x408000, READ | EXEC)]);
}

#[test]
fn protect_needs_all_mapped() {
    let mut m = Map::new();
    m.insert(anon(0x10000, 0x20000, READ)).unwrap();
    assert_eq!(m.protect(0x18000, 0x28000, READ | WRITE), Err(ENOMEM));
    assert_eq!(spans(&m), [(0x10000, 0x20000, READ)]);
    m.protect(0x18000, 0x20000, 0).unwrap();
    assert_eq!(spans(&m), [(0x10000, 0x18000, READ), (0x18000, 0x20000, 0)]);
}

#[test]
fn placement_is_top_down_and_respects_hints() {
    let mut m = Map::new();
    m.start(0x406000).unwrap();
    let a = m.place(0, 0x3000).unwrap();
    assert_eq!(a, MMAP_TOP - 0x3000);
    m.insert(anon(a, a + 0x3000, READ)).unwrap();
    let b = m.place(0, 1).unwrap();
    assert_eq!(b, a - 0x1000);
    // A free hint is taken; a taken one is not.
    assert_eq!(m.place(0x1000_0000, 0x1000).unwrap(), 0x1000_0000);
    assert_eq!(m.place(a, 0x1000).unwrap(), b);
    assert_eq!(m.place(0, USER_END), Err(ENOMEM));
}

#[test]
fn range_checks() {
    assert_eq!(range(0x1001, 1), Err(EINVAL));
    assert_eq!(range(0x1000, 0), Err(EINVAL));
    assert_eq!(range(0x1000, 1), Ok((0x1000, 0x2000)));
    assert_eq!(range(USER_END - 0x1000, 0x2000), Err(ENOMEM));
    assert_eq!(range(0x1000, u64::MAX), Err(EINVAL));
}

#[test]
fn the_table_fills_without_harm() {
    let mut m = Map::new();
    for i in 0..MAX_VMAS as u64 {
        // Alternate protections so nothing merges.
        m.insert(anon(
            0x100000 + i * 0x2000,
            0x101000 + i * 0x2000,
            1 + (i % 2) as u8,
        ))
        .unwrap();
    }
    assert_eq!(m.insert(anon(0x10000, 0x11000, READ)), Err(ENOMEM));
    // Punching a hole in the middle of a range would need one more.
    m.insert(anon(0x80000, 0x84000, READ)).unwrap_err();
    let before = spans(&m);
    assert_eq!(m.protect(0x100000, 0x101000, READ | WRITE | EXEC), Ok(()));
    assert_eq!(spans(&m).len(), before.len());
}

proptest! {
    /// After any sequence of maps, unmaps and protects, the ranges are
    /// sorted, disjoint and non-empty, and a page is mapped exactly when a
    /// simple page-by-page model says so, with the same protection.
    #[test]
    fn matches_a_page_model(ops in proptest::collection::vec((0u8..3, 0u64..64, 1u64..16, 0u8..8), 1..60)) {
        let mut m = Map::new();
        let mut model = [None::<u8>; 80];
        let base = 0x100000u64;
        for (op, p, n, prot) in ops {
            let (a, b) = (base + p * 0x1000, base + (p + n) * 0x1000);
            match op {
                0 => {
                    m.unmap(a, b, |_| {}).unwrap();
                    if m.insert(anon(a, b, prot)).is_ok() {
                        for q in p..p + n { model[q as usize] = Some(prot); }
                    } else {
                        for q in p..p + n { model[q as usize] = None; }
                    }
                }
                1 => {
                    m.unmap(a, b, |_| {}).unwrap();
                    for q in p..p + n { model[q as usize] = None; }
                }
                _ => {
                    let all = (p..p + n).all(|q| model[q as usize].is_some());
                    let r = m.protect(a, b, prot);
                    prop_assert_eq!(r.is_ok(), all);
                    if all { for q in p..p + n { model[q as usize] = Some(prot); } }
                }
            }
            let v = m.vmas();
            for w in v.windows(2) {
                prop_assert!(w[0].end <= w[1].start);
                prop_assert!(!w[0].joins(&w[1]));
            }
            for x in v { prop_assert!(x.start < x.end); }
            for (q, want) in model.iter().enumerate() {
                let got = m.find(base + q as u64 * 0x1000).map(|v| v.prot);
                prop_assert_eq!(got, *want);
            }
        }
    }
}

#[test]
fn a_growsdown_range_grows_to_a_fault_below_it_but_keeps_its_gap() {
    let mut m = Map::new();
    let below = anon(0x100000, 0x101000, READ | WRITE);
    m.insert(below).unwrap();
    let mut stack = anon(0x300000, 0x301000, READ | WRITE);
    stack.grows_down = true;
    m.insert(stack).unwrap();
    let gap = 0x100000;
    // Not below it, or a plain range: nothing grows.
    assert_eq!(m.grow_down(0x302000, gap, u64::MAX), None);
    assert_eq!(m.grow_down(0x0f0000, gap, u64::MAX), None);
    // A fault a few pages down: the range starts at its page.
    let v = m.grow_down(0x2fd123, gap, u64::MAX).unwrap();
    assert_eq!((v.start, v.end), (0x2fd000, 0x301000));
    assert_eq!(m.find(0x2fe000).map(|v| v.start), Some(0x2fd000));
    // Longer than the limit: no.
    assert_eq!(m.grow_down(0x280000, gap, 0x10000), None);
    // Into the guard gap above the range below: no; just outside it: yes.
    assert_eq!(m.grow_down(0x200fff, gap, u64::MAX), None);
    let v = m.grow_down(0x201000, gap, u64::MAX).unwrap();
    assert_eq!(v.start, 0x201000);
    // An inaccessible range below keeps no gap.
    let mut m = Map::new();
    m.insert(anon(0x100000, 0x101000, 0)).unwrap();
    m.insert(stack).unwrap();
    assert_eq!(
        m.grow_down(0x101000, gap, u64::MAX).map(|v| v.start),
        Some(0x101000)
    );
}

#[test]
fn locks_split_merge_and_count_once() {
    let mut m = Map::new();
    m.insert(anon(0x10000, 0x14000, 3)).unwrap();
    assert_eq!(m.locked_bytes(), 0);
    m.lock(0x11000, 0x12000, true).unwrap();
    assert_eq!(m.vmas().len(), 3);
    assert_eq!(m.locked_bytes(), 0x1000);
    // Again: counted once.
    m.lock(0x11000, 0x12000, true).unwrap();
    assert_eq!(m.locked_bytes(), 0x1000);
    assert!(m.any_locked(0x10000, 0x11001));
    assert!(!m.any_locked(0x12000, 0x14000));
    // Not mapped: ENOMEM, nothing changed.
    assert_eq!(m.lock(0x13000, 0x15000, true), Err(ENOMEM));
    assert_eq!(m.locked_bytes(), 0x1000);
    // Unlocked, the pieces join again.
    m.lock(0x10000, 0x14000, false).unwrap();
    assert_eq!(m.vmas().len(), 1);
    assert_eq!(m.locked_bytes(), 0);
    // Unmapping a locked range takes its lock with it.
    m.lock(0x10000, 0x14000, true).unwrap();
    m.unmap(0x10000, 0x12000, |_| {}).unwrap();
    assert_eq!(m.locked_bytes(), 0x2000);
}
