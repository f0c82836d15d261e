//! Unit and property tests of the key format.

use super::*;
use proptest::prelude::*;

fn any_key() -> impl Strategy<Value = Key> {
    (
        // Every assigned type number (16 is not assigned in this crate).
        (0u8..18).prop_map(|t| if t >= 16 { t + 1 } else { t }),
        any::<u8>(),
        any::<u8>(),
        any::<u32>(),
        0..=MAX_OID,
        any::<u64>(),
        any::<u32>(),
    )
        .prop_map(|(t, r, info, version, oid, data, hint)| {
            let k = match KeyType::from_u8(t).unwrap() {
                KeyType::Void => Key::VOID,
                KeyType::Number => Key::number(data, version),
                KeyType::Page => Key::page(oid, version, r & 1 != 0),
                KeyType::Node => Key::node(oid, version, r),
                KeyType::Segment => Key::segment(oid, version, info % 12, r),
                KeyType::Domain => Key::domain(oid, version),
                KeyType::Start => Key::start(oid, version, info),
                KeyType::Resume => Key::resume(oid, data, r),
                KeyType::Meter => Key::meter(oid, version),
                KeyType::Range => Key::range(
                    if r & 1 == 0 { Space::Page } else { Space::Node },
                    oid,
                    version,
                ),
                KeyType::IoPorts => {
                    let base = (data as u16) as u32;
                    let count = 1 + (oid as u32) % (IO_PORTS - base);
                    Key::ioports(base as u16, count).unwrap()
                }
                KeyType::Irq => Key::irq(info % IRQ_LINES).unwrap(),
                t => Key::service(t),
            };
            k.with_hint(hint)
        })
}

#[test]
fn void_is_all_zero() {
    assert_eq!(Key::VOID.to_bytes(), [0u8; 16]);
    assert!(Key::VOID.is_void());
    assert_eq!(Key::VOID.key_type(), KeyType::Void);
    assert_eq!(Key::default(), Key::VOID);
}

#[test]
fn layout_is_documented_one() {
    let k = Key::start(0x12_3456_789a, 0xdead_beef, 0x42).with_hint(0x00ab_cdef);
    let (w0, w1) = k.words();
    assert_eq!(w0, 0xdead_beef_0042_0006);
    assert_eq!(w1, 0xabcd_ef12_3456_789a);
    assert_eq!(k.info(), 0x42);
    assert_eq!(k.version(), 0xdead_beef);
    assert_eq!(k.oid(), 0x12_3456_789a);
    assert_eq!(k.hint(), 0xab_cdef);
}

#[test]
fn number_carries_96_bits() {
    let k = Key::number(u64::MAX, 0x1234_5678);
    assert_eq!(k.number_value(), Some((u64::MAX, 0x1234_5678)));
    assert_eq!(k.oid(), 0);
    assert_eq!(k.hint(), 0);
    assert_eq!(k.with_hint(5), k, "a number key has no hint");
}

#[test]
fn resume_count_wraps_to_48_bits() {
    let k = Key::resume(7, (1 << 48) + 5, resume_kind::FAULT);
    assert_eq!(k.resume_parts(), Some((5, resume_kind::FAULT)));
    assert_eq!(k.oid(), 7);
    assert_eq!(k.version(), 0);
}

#[test]
fn segment_size_is_clamped() {
    assert_eq!(Key::segment(1, 0, 0, 0).lss(), 1);
    assert_eq!(Key::segment(1, 0, 99, 0).lss(), MAX_LSS);
}

#[test]
fn sense_key_diminishes_to_itself() {
    let sense = Key::node(3, 1, rights::RO | rights::WEAK);
    assert_eq!(sense.diminish(), sense);
    assert_eq!(Key::node(3, 1, 0).diminish(), sense);
    assert_eq!(Key::page(3, 1, false).diminish(), Key::page(3, 1, true));
    let weak = rights::RO | rights::WEAK | rights::NOCALL;
    assert_eq!(
        Key::segment(3, 1, 2, rights::KEEPER).diminish(),
        Key::segment(3, 1, 2, rights::KEEPER | weak)
    );
    assert!(Key::start(3, 1, 9).diminish().is_void());
    assert!(Key::domain(3, 1).diminish().is_void());
    assert!(Key::service(KeyType::KeyBits).diminish().is_void());
}

#[test]
fn bad_bits_are_rejected() {
    assert!(Key::from_words(99, 0).is_none(), "unknown type");
    assert!(Key::from_words(0, 1).is_none(), "void with data");
    assert!(
        Key::from_words(KeyType::Domain as u64 | 1 << 8, 1).is_none(),
        "domain rights"
    );
    assert!(
        Key::from_words(KeyType::Page as u64 | 1 << 16, 1).is_none(),
        "page info"
    );
    assert!(
        Key::from_words(KeyType::Segment as u64, 1).is_none(),
        "segment size 0"
    );
    assert!(
        Key::from_words(KeyType::Console as u64, 1).is_none(),
        "service with oid"
    );
}

#[test]
fn ioports_layout_and_bounds() {
    let k = Key::ioports(0x3f8, 8).unwrap();
    assert_eq!(k.words(), (17 | 8 << 32, 0x3f8));
    assert_eq!(k.key_type(), KeyType::IoPorts);
    assert_eq!(k.ioports_parts(), Some((0x3f8, 8)));
    assert_eq!(k.oid(), 0);
    assert_eq!(k.with_hint(7), k, "an ioports key has no hint");
    assert!(k.diminish().is_void(), "port access is authority");
    assert_eq!(
        Key::ioports(0, 65536).unwrap().ioports_parts(),
        Some((0, 65536))
    );
    assert_eq!(
        Key::ioports(0xffff, 1).unwrap().ioports_parts(),
        Some((0xffff, 1))
    );
    assert!(Key::ioports(0x3f8, 0).is_none(), "empty range");
    assert!(Key::ioports(0xffff, 2).is_none(), "past the last port");
    assert!(Key::ioports(1, 65536).is_none());
    assert!(Key::from_words(17, 0x3f8).is_none(), "count 0");
    assert!(Key::from_words(17 | 2 << 32, 0xffff).is_none(), "wraps");
    assert!(
        Key::from_words(17 | 1 << 32, 0x1_0000).is_none(),
        "base too big"
    );
    assert!(
        Key::from_words(17 | 1 << 8 | 1 << 32, 0).is_none(),
        "rights bits"
    );
    assert!(Key::from_words(17 | 1 << 32, 0x3f8).is_some());
    assert_eq!(Key::number(1, 2).ioports_parts(), None);
}

#[test]
fn irq_layout_and_bounds() {
    let k = Key::irq(4).unwrap();
    assert_eq!(k.words(), (18, 4));
    assert_eq!(k.irq_line(), Some(4));
    assert_eq!(k.key_type().name(), "irq");
    assert!(k.diminish().is_void());
    assert!(Key::irq(15).is_some());
    assert!(Key::irq(16).is_none());
    assert!(Key::from_words(18, 16).is_none());
    assert!(Key::from_words(18 | 1 << 32, 4).is_none(), "stray bits");
    assert_eq!(KeyType::from_u8(16), Some(KeyType::Forwarder));
    assert_eq!(KeyType::from_u8(17), Some(KeyType::IoPorts));
    assert_eq!(KeyType::from_u8(18), Some(KeyType::Irq));
    assert_eq!(KeyType::from_u8(19), Some(KeyType::SysInfo));
    assert_eq!(KeyType::from_u8(20), None);
    for t in ALL_TYPES {
        assert_eq!(KeyType::from_u8(t as u8), Some(t));
    }
}

#[test]
fn service_only_for_services() {
    assert!(Key::service(KeyType::Domain).is_void());
    assert_eq!(Key::service(KeyType::Sleep).key_type(), KeyType::Sleep);
}

proptest! {
    #[test]
    fn constructed_keys_are_valid(k in any_key()) {
        prop_assert!(k.is_valid());
    }

    #[test]
    fn bytes_round_trip(k in any_key()) {
        prop_assert_eq!(Key::from_bytes(&k.to_bytes()), Some(k));
    }

    #[test]
    fn arbitrary_bits_decode_only_to_valid_keys(w0 in any::<u64>(), w1 in any::<u64>()) {
        if let Some(k) = Key::from_words(w0, w1) {
            prop_assert_eq!(k.words(), (w0, w1));
            prop_assert!(k.is_valid());
        }
    }

    #[test]
    fn hint_never_changes_identity(k in any_key(), h in any::<u32>()) {
        let h2 = k.with_hint(h);
        prop_assert!(h2.same(k));
        prop_assert_eq!(h2.oid(), k.oid());
        prop_assert_eq!(h2.version(), k.version());
        prop_assert_eq!(h2.key_type(), k.key_type());
        prop_assert_eq!(h2.canonical().hint(), 0);
        if k.key_type().designates_object() {
            prop_assert_eq!(h2.hint(), h & MAX_HINT);
        }
    }

    #[test]
    fn diminish_is_idempotent_and_never_adds(k in any_key()) {
        let d = k.diminish();
        prop_assert!(d.is_valid());
        prop_assert_eq!(d.diminish(), d);
        if !d.is_void() {
            prop_assert_eq!(d.key_type(), k.key_type());
            prop_assert_eq!(d.oid(), k.oid());
            prop_assert_eq!(d.rights() & k.rights(), k.rights(), "rights only grow (restrict)");
        }
        // Nothing that conveys control survives.
        prop_assert!(!matches!(
            d.key_type(),
            KeyType::Domain | KeyType::Start | KeyType::Resume | KeyType::Meter
                | KeyType::Range | KeyType::KeyBits | KeyType::Console | KeyType::Sleep
                | KeyType::IoPorts | KeyType::Irq
        ));
        if matches!(d.key_type(), KeyType::Page | KeyType::Node | KeyType::Segment) {
            prop_assert!(d.is_ro());
        }
    }

    #[test]
    fn restrict_only_restricts(k in any_key(), r in any::<u8>()) {
        let x = k.restrict(r);
        prop_assert!(x.is_valid());
        prop_assert_eq!(x.rights() & k.rights(), k.rights());
        prop_assert_eq!(x.rights() & rights::KEEPER, k.rights() & rights::KEEPER);
        prop_assert_eq!(x.oid(), k.oid());
    }
}
