use super::*;
use proptest::prelude::*;

#[test]
fn splitmix64_reference_values() {
    // The published outputs of SplitMix64 from seed 0.
    let mut r = SplitMix64::new(0);
    assert_eq!(r.next_u64(), 0xe220_a839_7b1d_cdaf);
    assert_eq!(r.next_u64(), 0x6e78_9e6a_a1b9_65f4);
    assert_eq!(r.next_u64(), 0x06c4_5d18_8009_454f);
}

#[test]
fn mix_known_values() {
    assert_eq!(mix(0), 0);
    // splitmix64's first output for seed 0 is mix(GOLDEN).
    assert_eq!(mix(GOLDEN), 0xe220_a839_7b1d_cdaf);
}

#[test]
fn xorshift64star_pinned_values() {
    // Pinned: the fuzzer's seed 1 replays these (a change here changes
    // every fuzz run a printed seed names).
    let mut r = XorShift64Star::new(1);
    assert_eq!(r, XorShift64Star(GOLDEN | 1));
    assert_eq!(r.next_u64(), 0x0d83_b3e2_9a21_487a);
    assert_eq!(r.next_u64(), 0x54c4_4c79_f1fe_9d67);
    assert_eq!(r.next_u64(), 0xa845_f342_007a_0e78);
}

#[test]
fn xorshift64star_matches_its_definition() {
    // The state steps by x ^= x >> 12; x ^= x << 25; x ^= x >> 27 and the
    // output is the state times 0x2545f4914f6cdd1d, from state 1.
    let mut r = XorShift64Star(1);
    let mut x: u64 = 1;
    for _ in 0..1000 {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        assert_eq!(r.next_u64(), x.wrapping_mul(0x2545_f491_4f6c_dd1d));
    }
}

#[test]
fn fill_takes_whole_words_then_a_part() {
    let mut a = XorShift64Star::new(9);
    let mut b = a.clone();
    let mut out = [0u8; 13];
    a.fill(&mut out);
    assert_eq!(out[..8], b.next_u64().to_le_bytes());
    assert_eq!(out[8..], b.next_u64().to_le_bytes()[..5]);
    assert_eq!(a, b, "a part word uses up a whole one");
    a.fill(&mut []);
    assert_eq!(a, b);
}

#[test]
fn below_covers_its_range() {
    let mut r = XorShift64Star::new(42);
    let mut seen = [0u32; 7];
    for _ in 0..7000 {
        seen[r.below(7) as usize] += 1;
    }
    // Each of 7 values about 1000 times.
    assert!(seen.iter().all(|&c| (850..1150).contains(&c)), "{seen:?}");
    assert_eq!(XorShift64Star::new(3).below(1), 0);
}

proptest! {
    #[test]
    fn mix_is_injective_on_samples(a: u64, b: u64) {
        prop_assume!(a != b);
        prop_assert_ne!(mix(a), mix(b));
    }

    #[test]
    fn xorshift_state_never_zero(seed: u64, steps in 0usize..64) {
        let mut r = XorShift64Star::new(seed);
        for _ in 0..steps {
            r.next_u64();
        }
        prop_assert_ne!(r.0, 0);
    }

    #[test]
    fn same_seed_same_numbers(seed: u64) {
        let mut a = XorShift64Star::new(seed);
        let mut b = XorShift64Star::new(seed);
        let mut c = SplitMix64::new(seed);
        let mut d = SplitMix64::new(seed);
        for _ in 0..16 {
            prop_assert_eq!(a.next_u64(), b.next_u64());
            prop_assert_eq!(c.next_u64(), d.next_u64());
        }
    }
}
