//! Tests of the control-word encoding.

use crate::invoke::{fast, Control, Kind, RESERVED};

#[test]
fn control_round_trips() {
    let c = Control {
        slot: 9,
        kind: Kind::Return as u8,
        send: [1, 2, 3, 15],
        recv: [4, 0, 6, 7],
        resume: 12,
        len: 4096,
    };
    let w = c.encode();
    assert_eq!(w & RESERVED, 0);
    assert_eq!(Control::decode(w), Some(c));
    assert_eq!(fast::slot(w), 9);
    assert_eq!(fast::kind(w), 1);
    assert_eq!(fast::resume_slot(w), 12);
    assert!(!fast::words_only(w));
    assert!(fast::receives_keys(w));
}

#[test]
fn plain_call_is_just_a_slot() {
    let w = Control::call(5).encode();
    assert_eq!(w, 5);
    assert!(fast::words_only(w));
    assert!(!fast::receives_keys(w));
}

#[test]
fn reserved_bits_rejected_and_every_kind_decodes() {
    for bit in [6, 7, 44, 45, 46, 47, 61, 62, 63] {
        assert_eq!(Control::decode(1 << bit), None, "bit {bit}");
    }
    for (bits, kind) in [
        (0, Kind::Call),
        (1, Kind::Return),
        (2, Kind::Send),
        (3, Kind::TrySend),
    ] {
        let c = Control::decode(bits << 4 | 7).unwrap();
        assert_eq!((c.kind(), c.slot), (kind, 7));
        assert_eq!(c.encode(), bits << 4 | 7);
    }
    // Every non-reserved bit is a field.
    for bit in 0..64 {
        if RESERVED & (1 << bit) == 0 {
            assert!(Control::decode(1 << bit).is_some(), "bit {bit}");
        }
    }
}

#[test]
fn long_lengths_decode_for_the_kernel_to_refuse() {
    let w = 8000u64 << 48;
    assert_eq!(Control::decode(w).unwrap().len, 8000);
}
