//! Journal records, the ring, its bookkeeping and the restart scan.

use crate::journal::*;
use crate::{crc32c, seal, Damaged, BLOCK};
use proptest::prelude::*;
use std::collections::{BTreeMap, VecDeque};
use std::vec::Vec;

fn header(seq: u64, base: u64, boot: u64, oid: u64, data: &[u8; BLOCK]) -> Header {
    Header {
        seq,
        base_generation: base,
        boot,
        committed: base.saturating_sub(1),
        oid,
        version: seq as u32 + 100,
        data_crc: crc32c(data),
    }
}

#[test]
fn header_round_trips_and_is_checked() {
    let h = Header {
        seq: 9,
        base_generation: 3,
        boot: 2,
        committed: 1,
        oid: 77,
        version: 5,
        data_crc: 0xabcd,
    };
    let mut b = [0x11u8; BLOCK];
    encode_header(&h, &mut b);
    assert_eq!(&b[0..8], b"STETJRNL");
    assert!(b[HEADER_LEN..].iter().all(|&x| x == 0));
    assert_eq!(decode_header(&b), Ok(h));
    let mut bad = b;
    bad[30] ^= 8;
    assert_eq!(decode_header(&bad), Err(Damaged));
    assert_eq!(decode_header(&[0u8; BLOCK]), Err(Damaged));
    let mut big = b;
    big[29] = 1;
    seal(&mut big, HEADER_LEN - 4);
    assert_eq!(decode_header(&big), Err(Damaged), "oid over 40 bits");
}

#[test]
fn ring_positions() {
    let r = Ring {
        start: 100,
        blocks: 16,
    };
    assert_eq!(r.slots(), 8);
    assert_eq!(r.next(100), 102);
    assert_eq!(r.next(112), 114);
    assert_eq!(r.next(114), 100);
    assert!(r.is_record(114) && !r.is_record(116) && !r.is_record(101) && !r.is_record(98));
    assert_eq!(r.advance(110, 3), 100);
    assert_eq!(r.advance(110, 8), 110);
    // An odd ring leaves its last block unused: no record straddles the end.
    let odd = Ring {
        start: 0,
        blocks: 7,
    };
    assert_eq!(odd.slots(), 3);
    assert_eq!(odd.next(2), 4);
    assert_eq!(odd.next(4), 0);
    assert!(!odd.is_record(6));
}

#[test]
fn journal_space() {
    let r = Ring {
        start: 10,
        blocks: 8,
    };
    let mut j = Journal::new(r, 14, 50);
    assert_eq!(j.space_left(), 4);
    assert_eq!(j.append(), Ok((14, 50)));
    assert_eq!(j.append(), Ok((16, 51)));
    assert_eq!(j.append(), Ok((10, 52)));
    assert_eq!(j.tail(), (12, 53));
    assert_eq!(j.append(), Ok((12, 53)));
    assert_eq!(j.append(), Err(Full));
    assert_eq!(j.live(), 4);
    // A checkpoint whose snapshot came after record 51 frees 50 and 51.
    assert_eq!(
        j.checkpoint_committed(10, 51),
        Err(NotInJournal),
        "wrong place"
    );
    assert_eq!(
        j.checkpoint_committed(10, 49),
        Err(NotInJournal),
        "before the head"
    );
    assert_eq!(
        j.checkpoint_committed(10, 55),
        Err(NotInJournal),
        "after the tail"
    );
    j.checkpoint_committed(10, 52).unwrap();
    assert_eq!(j.head(), (10, 52));
    assert_eq!(j.space_left(), 2);
    assert_eq!(j.append(), Ok((14, 54)));
    // Committing at the tail empties it.
    j.checkpoint_committed(16, 55).unwrap();
    assert_eq!(j.space_left(), 4);
    let rec = Journal::recovered(r, 14, 7, 3);
    assert_eq!(
        (rec.head(), rec.tail(), rec.space_left()),
        ((14, 7), (12, 10), 1)
    );
}

/// An in-memory disk for scans.
struct Blocks(BTreeMap<u64, [u8; BLOCK]>);

impl Blocks {
    fn put(&mut self, r: &Ring, pos: u64, h: Header, data: &[u8; BLOCK]) {
        assert!(r.is_record(pos));
        let mut b = [0u8; BLOCK];
        encode_header(&h, &mut b);
        self.0.insert(pos, b);
        self.0.insert(pos + 1, *data);
    }

    fn scan(&self, r: Ring, head: u64, seq: u64, gen: u64) -> (Vec<u64>, ScanEnd) {
        let mut seen = Vec::new();
        let end = scan(
            r,
            head,
            seq,
            gen,
            |b, buf: &mut [u8; BLOCK]| -> Result<(), ()> {
                *buf = self.0.get(&b).copied().unwrap_or([0; BLOCK]);
                Ok(())
            },
            |h, data| {
                assert_eq!(crc32c(data), h.data_crc);
                seen.push(h.seq);
            },
        )
        .unwrap();
        (seen, end)
    }
}

fn data(n: u8) -> [u8; BLOCK] {
    [n; BLOCK]
}

#[test]
fn scan_stops_at_the_first_bad_record() {
    let r = Ring {
        start: 20,
        blocks: 10,
    };
    let mut d = Blocks(BTreeMap::new());
    // Records 5..=9 from position 26, wrapping after 28.
    let positions = [26, 28, 20, 22, 24];
    for (i, &p) in positions.iter().enumerate() {
        let s = 5 + i as u64;
        d.put(&r, p, header(s, 3, 1, s, &data(s as u8)), &data(s as u8));
    }
    let (seen, end) = d.scan(r, 26, 5, 3);
    assert_eq!(seen, [5, 6, 7, 8, 9]);
    assert_eq!(
        end,
        ScanEnd {
            pos: 26,
            seq: 10,
            records: 5,
            damaged: None,
        },
        "full ring: stops after one lap"
    );
    // The wrong expected sequence number: nothing.
    assert_eq!(d.scan(r, 26, 6, 3).0, Vec::<u64>::new());
    // A newer checkpoint (generation 4) than the records' base: nothing.
    assert_eq!(d.scan(r, 26, 5, 4).0, Vec::<u64>::new());
    // Torn data of record 7.
    let mut torn = d.0.clone();
    torn.get_mut(&21).unwrap()[4000] ^= 1;
    let (seen, end) = Blocks(torn).scan(r, 26, 5, 3);
    assert_eq!(seen, [5, 6]);
    assert_eq!(
        end,
        ScanEnd {
            pos: 20,
            seq: 7,
            records: 2,
            damaged: Some(Damage::Data),
        }
    );
    // A header with a bad CRC, record 9 after it: damage, reported.
    let mut bad = d.0.clone();
    bad.get_mut(&22).unwrap()[9] ^= 1;
    let (seen, end) = Blocks(bad.clone()).scan(r, 26, 5, 3);
    assert_eq!(seen, [5, 6, 7]);
    assert_eq!(end.damaged, Some(Damage::Header { next_seq: 9 }));
    // The last record's header unreadable: the end (a torn write), unreported.
    let mut last = d.0.clone();
    last.get_mut(&24).unwrap()[9] ^= 1;
    let (seen, end) = Blocks(last).scan(r, 26, 5, 3);
    assert_eq!(seen, [5, 6, 7, 8]);
    assert_eq!(end.damaged, None);
    // A record of an earlier boot after one of a later boot.
    let mut stale = Blocks(d.0.clone());
    stale.put(&r, 20, header(7, 3, 2, 7, &data(70)), &data(70));
    assert_eq!(stale.scan(r, 26, 5, 3).0, [5, 6, 7]);
    // A record written after a checkpoint newer than the scan's committed
    // (the scan falls back to checkpoint 3; 4 committed before record 8):
    // the journal of checkpoint 3 ends before it.
    let mut after = Blocks(d.0.clone());
    let mut h8 = header(8, 4, 1, 8, &data(8));
    h8.committed = 4;
    after.put(&r, 22, h8, &data(8));
    assert_eq!(after.scan(r, 26, 5, 3).0, [5, 6, 7]);
    assert_eq!(after.scan(r, 26, 5, 4).0, Vec::<u64>::new(), "base 3 < 4");
    // Written after snapshot 4 but before it committed: applies on top of 3.
    let mut before = Blocks(d.0.clone());
    let mut h8 = header(8, 4, 1, 8, &data(8));
    h8.committed = 3;
    before.put(&r, 22, h8, &data(8));
    assert_eq!(before.scan(r, 26, 5, 3).0, [5, 6, 7, 8, 9]);
    // Later boots after earlier ones are fine.
    let mut later = Blocks(d.0.clone());
    later.put(&r, 22, header(8, 3, 5, 8, &data(80)), &data(80));
    later.put(&r, 24, header(9, 4, 5, 9, &data(90)), &data(90));
    assert_eq!(later.scan(r, 26, 5, 3).0, [5, 6, 7, 8, 9]);
    // A head that is not a record position finds nothing.
    assert_eq!(
        d.scan(r, 27, 5, 3).1,
        ScanEnd {
            pos: 27,
            seq: 5,
            records: 0,
            damaged: None,
        }
    );
}

#[test]
fn scan_reports_read_errors() {
    let r = Ring {
        start: 0,
        blocks: 4,
    };
    let mut s = Scan::new(r, 0, 0, 0);
    let mut buf = [0u8; BLOCK];
    let got = s.next(&mut |_b, _buf: &mut [u8; BLOCK]| Err("io"), &mut buf);
    assert_eq!(got, Err("io"));
}

proptest! {
    /// The bookkeeping against a model: live records never share a place,
    /// appends fail exactly when the ring is full, and a scan of what was
    /// appended finds exactly the live records.
    #[test]
    fn journal_bookkeeping(blocks in 2u64..40, ops in proptest::collection::vec((any::<bool>(), any::<u8>()), 1..300)) {
        let r = Ring { start: 1000, blocks };
        let mut j = Journal::new(r, 1000, 1);
        let mut live: VecDeque<(u64, u64)> = VecDeque::new();
        let mut disk = Blocks(BTreeMap::new());
        let mut last = (1000u64, 1u64);
        for (append, n) in ops {
            if append {
                match j.append() {
                    Ok((pos, seq)) => {
                        prop_assert!(live.len() < r.slots() as usize);
                        prop_assert!(live.iter().all(|&(p, _)| p != pos), "overwrote a live record");
                        prop_assert!(r.is_record(pos));
                        prop_assert_eq!(seq, last.1 + live.len() as u64);
                        disk.put(&r, pos, header(seq, 1, 0, seq, &data(seq as u8)), &data(seq as u8));
                        live.push_back((pos, seq));
                    }
                    Err(Full) => prop_assert_eq!(live.len() as u64, r.slots()),
                }
            } else {
                // Commit a checkpoint whose snapshot saw `k` of the live records.
                let k = n as usize % (live.len() + 1);
                let (pos, seq) = if k < live.len() { live[k] } else { j.tail() };
                j.checkpoint_committed(pos, seq).unwrap();
                live.drain(..k);
                last = (pos, seq);
            }
            prop_assert_eq!(j.space_left(), r.slots() - live.len() as u64);
            let (seen, end) = disk.scan(r, last.0, last.1, 1);
            let want: Vec<u64> = live.iter().map(|&(_, s)| s).collect();
            prop_assert_eq!(seen, want);
            prop_assert_eq!(end.seq, j.tail().1);
            if (live.len() as u64) < r.slots() {
                prop_assert_eq!(end.pos, j.tail().0);
            }
            let again = Journal::recovered(r, last.0, last.1, end.records);
            prop_assert_eq!(again, j);
        }
    }
}
