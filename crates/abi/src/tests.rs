//! Tests of the control-word encoding and the result codes, against each
//! other and against docs/ABI.md.

use crate::code::{self, Code};
use crate::invoke::{fast, Control, Kind, Source, RESERVED};
use proptest::prelude::*;

use std::vec::Vec;

const ABI_MD: &str = include_str!("../../../docs/ABI.md");

#[test]
fn control_round_trips() {
    let c = Control {
        slot: 9,
        kind: Kind::Return,
        send: [1, 2, 3, 15],
        recv: [4, 0, 6, 7],
        resume: 12,
        len: 4096,
    };
    let w = c.encode();
    assert_eq!(w & RESERVED, 0);
    assert_eq!(Control::decode(w), Some(c));
    assert_eq!(fast::slot(w), 9);
    assert_eq!(fast::kind(w), Kind::Return);
    assert_eq!(fast::resume_slot(w), 12);
    assert_eq!(fast::send_slot(w, 3), 15);
    assert_eq!(fast::recv_slot(w, 2), 6);
    assert!(!fast::words_only(w));
    assert!(fast::receives_keys(w));
    assert!(!fast::first_keys_only(w));
}

#[test]
fn plain_call_is_just_a_slot() {
    let w = Control::call(5).encode();
    assert_eq!(w, 5);
    assert_eq!(Control::default().kind, Kind::Call);
    assert!(fast::words_only(w));
    assert!(!fast::receives_keys(w));
    assert!(fast::first_keys_only(w));
}

#[test]
fn reserved_bits_rejected_and_every_kind_decodes() {
    for bit in [6, 7, 44, 45, 46, 47, 61, 62, 63] {
        assert_eq!(Control::decode(1 << bit), None, "bit {bit}");
        assert!(fast::malformed(1 << bit));
    }
    for (bits, kind) in [
        (0, Kind::Call),
        (1, Kind::Return),
        (2, Kind::Send),
        (3, Kind::TrySend),
    ] {
        assert_eq!(kind as u64, bits);
        assert_eq!(Kind::from_bits(bits), kind);
        let c = Control::decode(bits << 4 | 7).unwrap();
        assert_eq!((c.kind, c.slot), (kind, 7));
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
    assert_eq!(fast::len(w), 8000);
}

/// Bits `lo..=hi` of every range in a cell such as "6–7, 44–47".
fn bits_of(cell: &str) -> u64 {
    cell.split(',')
        .map(|r| {
            let mut ends = r
                .trim()
                .split('–')
                .map(|n| n.trim().parse::<u32>().unwrap());
            let lo = ends.next().unwrap();
            let hi = ends.next().unwrap_or(lo);
            (lo..=hi).fold(0u64, |m, b| m | 1 << b)
        })
        .fold(0, |m, r| m | r)
}

/// The rows of the markdown table that follows `heading` in docs/ABI.md,
/// as cells (header and rule left out).
fn table_after(heading: &str) -> Vec<Vec<&'static str>> {
    let at = ABI_MD.find(heading).expect("heading in docs/ABI.md");
    ABI_MD[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect()
}

#[test]
fn control_word_matches_docs() {
    let rows = table_after("Control word (");
    assert_eq!(rows.len(), 7);
    let mut all = 0;
    for row in rows {
        let (mask, field) = (bits_of(row[0]), row[1]);
        assert_eq!(all & mask, 0, "{field}: bits overlap");
        all |= mask;
        // The field the row describes, all ones, and nothing else.
        let mut want = Control::default();
        if field.starts_with("reserved") {
            assert_eq!(mask, RESERVED, "{field}");
            continue;
        } else if field.starts_with("slot of the invoked key") {
            want.slot = 15;
        } else if field.starts_with("kind") {
            want.kind = Kind::TrySend;
            // "kind: 0 **call**, 1 **return**, …": every number names its Kind.
            let named: Vec<_> = field["kind:".len()..].split(',').map(str::trim).collect();
            assert_eq!(named.len(), 4, "{field}");
            for n in named {
                let (num, name) = n.split_once(' ').unwrap();
                let kind = Kind::from_bits(num.parse().unwrap());
                assert_eq!(kind as u64, num.parse::<u64>().unwrap());
                let spelled = std::format!("{kind:?}").to_lowercase();
                assert_eq!(name.trim_matches('*').replace('-', ""), spelled, "{field}");
            }
        } else if field.contains("keys to send") {
            want.send = [15; 4];
        } else if field.contains("receive keys") {
            want.recv = [15; 4];
        } else if field.contains("resume key") {
            want.resume = 15;
        } else if field.starts_with("length") {
            want.len = 0x1fff;
        } else {
            panic!("unknown field {field}");
        }
        assert_eq!(Control::decode(mask), Some(want), "{field}");
        assert_eq!(want.encode(), mask, "{field}");
    }
    assert_eq!(all, u64::MAX);
}

/// `NoSuchOrder` → `NO_SUCH_ORDER` (docs/ABI.md's spelling).
fn screaming(c: Code) -> std::string::String {
    let mut s = std::string::String::new();
    for (i, ch) in std::format!("{c:?}").chars().enumerate() {
        if ch.is_uppercase() && i > 0 {
            s.push('_');
        }
        s.push(ch.to_ascii_uppercase());
    }
    s
}

#[test]
fn codes_match_docs() {
    let rows = table_after("### Result codes");
    assert_eq!(rows.len(), Code::ALL.len());
    for row in rows {
        let n: u64 = row[0].parse().unwrap();
        let c = Code::decode(n).unwrap_or_else(|| panic!("code {n}"));
        assert_eq!(std::format!("`{}`", screaming(c)), row[1], "code {n}");
    }
}

#[test]
fn codes_round_trip() {
    for (i, &c) in Code::ALL.iter().enumerate() {
        assert_eq!(c as u64, i as u64);
        assert_eq!(Code::decode(c.into()), Some(c));
        assert!(c as u64 == c);
        assert!(c == c as u64);
        assert_eq!(code::name(c as u64), c.name());
        assert!(Code::ALL[..i].iter().all(|d| d.name() != c.name()));
    }
    for n in [Code::ALL.len() as u64, 100, u64::MAX] {
        assert_eq!(Code::decode(n), None);
        assert_eq!(code::name(n), "?");
    }
}

#[test]
fn sources_decode() {
    for s in [
        Source::Start,
        Source::Resume,
        Source::Kernel,
        Source::Forwarded,
    ] {
        assert_eq!(Source::decode(s as u8), Some(s));
        assert_eq!(s.bits() >> 8, s as u64);
        assert!(s as u8 == s);
    }
    assert_eq!(Source::decode(4), None);
}

/// Control words with fields left out at random (so the tests that need
/// zero fields see them), and sometimes reserved bits.
fn words() -> impl Strategy<Value = u64> {
    let fields: [u64; 8] = [
        0xf,
        0x3 << 4,
        0xf << 8,
        0xfff << 12,
        0xf << 24,
        0xfff << 28,
        0xf << 40,
        0x1fff << 48,
    ];
    (any::<u64>(), any::<u8>(), any::<u8>()).prop_map(move |(w, keep, bad)| {
        let mut w = w & !RESERVED;
        for (i, f) in fields.iter().enumerate() {
            if keep & 1 << i == 0 {
                w &= !f;
            }
        }
        if bad < 16 {
            w |= 1 << [6, 7, 44, 45, 46, 47, 61, 62, 63][bad as usize % 9];
        }
        w
    })
}

proptest! {
    /// Everything the kernel's fast path reads agrees with the full decode.
    #[test]
    fn fast_agrees_with_decode(w in words()) {
        let Some(c) = Control::decode(w) else {
            prop_assert!(fast::malformed(w));
            return Ok(());
        };
        prop_assert!(!fast::malformed(w));
        prop_assert_eq!(c.encode(), w);
        prop_assert_eq!(fast::slot(w), c.slot as usize);
        prop_assert_eq!(fast::kind(w), c.kind);
        for k in [Kind::Call, Kind::Return, Kind::Send, Kind::TrySend] {
            prop_assert_eq!(fast::kind_is(w, k), c.kind == k);
        }
        for i in 0..4 {
            prop_assert_eq!(fast::send_slot(w, i), c.send[i] as usize);
            prop_assert_eq!(fast::recv_slot(w, i), c.recv[i] as usize);
        }
        prop_assert_eq!(fast::resume_slot(w), c.resume as usize);
        prop_assert_eq!(fast::len(w), c.len as usize);
        prop_assert_eq!(fast::words_only(w), c.send == [0; 4] && c.len == 0);
        prop_assert_eq!(fast::receives_keys(w), c.recv != [0; 4]);
        prop_assert_eq!(
            fast::first_keys_only(w),
            c.send[1..] == [0; 3] && c.recv[1..] == [0; 3] && c.resume == 0 && c.len == 0
        );
    }

    /// Every control value encodes to a word that decodes to it.
    #[test]
    fn encode_decode(
        slot in 0u8..16,
        kind in 0u64..4,
        send in any::<[u8; 4]>(),
        recv in any::<[u8; 4]>(),
        resume in 0u8..16,
        len in 0u16..0x2000,
    ) {
        let c = Control {
            slot,
            kind: Kind::from_bits(kind),
            send: send.map(|s| s & 15),
            recv: recv.map(|s| s & 15),
            resume,
            len,
        };
        prop_assert_eq!(Control::decode(c.encode()), Some(c));
    }
}
