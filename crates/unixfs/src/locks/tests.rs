use super::*;
use proptest::prelude::*;
use std::vec::Vec;

fn flock(t: u64, whence: i16, start: i64, len: i64) -> [u8; fl::SIZE] {
    let mut b = [0u8; fl::SIZE];
    b[fl::L_TYPE..fl::L_TYPE + 2].copy_from_slice(&(t as i16).to_le_bytes());
    b[fl::L_WHENCE..fl::L_WHENCE + 2].copy_from_slice(&whence.to_le_bytes());
    b[fl::L_START..fl::L_START + 8].copy_from_slice(&start.to_le_bytes());
    b[fl::L_LEN..fl::L_LEN + 8].copy_from_slice(&len.to_le_bytes());
    b
}

fn req(kind: Kind, start: u64, end: u64) -> Request {
    Request { kind, start, end }
}

fn lock(file: u32, pid: u32, start: u64, end: u64, write: bool) -> Lock {
    Lock {
        file,
        pid,
        start,
        end,
        write,
    }
}

#[test]
fn parse_ranges_as_linux() {
    let w = fl::F_WRLCK;
    assert_eq!(
        parse(&flock(w, 0, 10, 5,), 0, 0),
        Ok(req(Kind::Write, 10, 14))
    );
    // 0 is "to the end, however far".
    assert_eq!(
        parse(&flock(fl::F_RDLCK, 0, 3, 0), 0, 0),
        Ok(req(Kind::Read, 3, OFFSET_MAX))
    );
    // A negative length: the bytes before the start.
    assert_eq!(
        parse(&flock(w, 0, 10, -4), 0, 0),
        Ok(req(Kind::Write, 6, 9))
    );
    assert_eq!(parse(&flock(w, 0, 4, -5), 0, 0), Err(EINVAL));
    // SEEK_CUR and SEEK_END.
    assert_eq!(
        parse(&flock(w, 1, -2, 1), 100, 7),
        Ok(req(Kind::Write, 98, 98))
    );
    assert_eq!(
        parse(&flock(fl::F_UNLCK, 2, 1, 2), 100, 7),
        Ok(req(Kind::Unlock, 8, 9))
    );
    assert_eq!(parse(&flock(w, 2, -8, 1), 100, 7), Err(EINVAL));
    // Bad type or whence.
    assert_eq!(parse(&flock(3, 0, 0, 1), 0, 0), Err(EINVAL));
    assert_eq!(parse(&flock(w, 3, 0, 1), 0, 0), Err(EINVAL));
    assert_eq!(parse(&flock(w, -1, 0, 1), 0, 0), Err(EINVAL));
    // Past OFFSET_MAX.
    assert_eq!(parse(&flock(w, 1, i64::MAX, 1), 1, 0), Err(EOVERFLOW));
    assert_eq!(parse(&flock(w, 0, i64::MAX, 2), 0, 0), Err(EOVERFLOW));
    assert_eq!(
        parse(&flock(w, 0, i64::MAX, 1), 0, 0),
        Ok(req(Kind::Write, OFFSET_MAX, OFFSET_MAX))
    );
    assert_eq!(parse(&flock(w, 0, i64::MIN, -1), 0, 0), Err(EINVAL));
    // Too short a struct.
    assert_eq!(parse(&[0u8; 31], 0, 0), Err(EINVAL));
}

#[test]
fn conflicts_and_getlk() {
    let mut l = Locks::new();
    assert_eq!(l.set(1, 10, &req(Kind::Write, 0, 9)), Ok(true));
    // Another process: a read or a write over it conflicts, next to it not.
    assert_eq!(l.set(1, 20, &req(Kind::Read, 5, 5)), Err(EAGAIN));
    assert_eq!(
        l.conflict(1, 20, &req(Kind::Read, 9, 20)),
        Some(lock(1, 10, 0, 9, true))
    );
    assert_eq!(l.conflict(1, 20, &req(Kind::Write, 10, 20)), None);
    assert_eq!(l.conflict(2, 20, &req(Kind::Write, 0, 20)), None);
    // The owner itself never conflicts; an unlock never does.
    assert_eq!(l.conflict(1, 10, &req(Kind::Write, 0, 20)), None);
    assert_eq!(l.conflict(1, 20, &req(Kind::Unlock, 0, 20)), None);
    // Two readers share.
    assert_eq!(l.set(1, 10, &req(Kind::Read, 0, 9)), Ok(true));
    assert_eq!(l.set(1, 20, &req(Kind::Read, 0, OFFSET_MAX)), Ok(true));
    assert_eq!(l.set(1, 30, &req(Kind::Write, 100, 100)), Err(EAGAIN));
    let b = l
        .conflict(1, 30, &req(Kind::Write, 100, 100))
        .unwrap()
        .flock();
    assert_eq!(parse(&b, 0, 0), Ok(req(Kind::Read, 0, OFFSET_MAX)));
    assert_eq!(b[fl::L_PID], 20);
    assert_eq!(
        i64::from_le_bytes(b[fl::L_LEN..fl::L_LEN + 8].try_into().unwrap()),
        0
    );
}

#[test]
fn own_locks_split_and_join() {
    let mut l = Locks::new();
    l.set(1, 10, &req(Kind::Read, 0, 99)).unwrap();
    // A write lock in the middle splits the read lock in two.
    l.set(1, 10, &req(Kind::Write, 40, 59)).unwrap();
    let mut h = l.held().to_vec();
    h.sort_by_key(|x| x.start);
    assert_eq!(
        h,
        [
            lock(1, 10, 0, 39, false),
            lock(1, 10, 40, 59, true),
            lock(1, 10, 60, 99, false)
        ]
    );
    // Read again over it: one read lock.
    l.set(1, 10, &req(Kind::Read, 40, 59)).unwrap();
    assert_eq!(l.held(), [lock(1, 10, 0, 99, false)]);
    // Adjacent locks of one type join; of another type they do not.
    l.set(1, 10, &req(Kind::Read, 100, 109)).unwrap();
    assert_eq!(l.held(), [lock(1, 10, 0, 109, false)]);
    l.set(1, 10, &req(Kind::Write, 110, 119)).unwrap();
    assert_eq!(l.held().len(), 2);
    // Unlocking a hole, then everything.
    assert_eq!(l.set(1, 10, &req(Kind::Unlock, 50, 50)), Ok(true));
    assert_eq!(l.held().len(), 3);
    assert_eq!(l.set(1, 10, &req(Kind::Unlock, 500, 600)), Ok(false));
    assert_eq!(l.set(1, 10, &req(Kind::Unlock, 0, OFFSET_MAX)), Ok(true));
    assert!(l.held().is_empty());
}

#[test]
fn release_by_file_and_by_process() {
    let mut l = Locks::new();
    l.set(1, 10, &req(Kind::Write, 0, 0)).unwrap();
    l.set(2, 10, &req(Kind::Write, 0, 0)).unwrap();
    l.set(1, 20, &req(Kind::Read, 5, 5)).unwrap();
    assert!(l.release(10, Some(1)));
    assert!(!l.release(10, Some(1)));
    assert_eq!(
        l.held(),
        [lock(2, 10, 0, 0, true), lock(1, 20, 5, 5, false)]
    );
    assert!(l.release(10, None));
    assert_eq!(l.held(), [lock(1, 20, 5, 5, false)]);
}

#[test]
fn deadlocks_through_a_chain() {
    let mut l = Locks::new();
    // 10 holds byte 0, 20 byte 1, 30 byte 2.
    for (pid, b) in [(10, 0), (20, 1), (30, 2)] {
        l.set(7, pid, &req(Kind::Write, b, b)).unwrap();
    }
    // 20 waits for byte 2 (30's), 30 for byte 0 (10's).
    let waits = |pid: u32| match pid {
        20 => Some((7, req(Kind::Write, 2, 2))),
        30 => Some((7, req(Kind::Write, 0, 0))),
        _ => None,
    };
    // 10 asking for byte 1 (20's) would close the circle.
    let b = l.conflict(7, 10, &req(Kind::Write, 1, 1)).unwrap();
    assert!(l.deadlock(10, &b, waits));
    // Without 30's wait there is none.
    let waits2 = |pid: u32| (pid == 20).then_some((7, req(Kind::Write, 2, 2)));
    assert!(!l.deadlock(10, &b, waits2));
    // A circle not through the caller is followed only so far.
    let b30 = l.conflict(7, 40, &req(Kind::Write, 2, 2)).unwrap();
    let circle = |pid: u32| match pid {
        20 => Some((7, req(Kind::Write, 2, 2))),
        30 => Some((7, req(Kind::Write, 1, 1))),
        _ => None,
    };
    assert!(!l.deadlock(40, &b30, circle));
}

/// The model: each process's lock on each byte of one file (0..TAIL; byte
/// TAIL stands for every byte from there to OFFSET_MAX).
const TAIL: usize = 48;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Byte {
    Free,
    Read,
    Write,
}

fn covered(r: &Request) -> core::ops::RangeInclusive<usize> {
    let end = if r.end == OFFSET_MAX {
        TAIL
    } else {
        r.end as usize
    };
    r.start as usize..=end
}

fn lock_bytes(l: &Locks, pid: u32) -> [Byte; TAIL + 1] {
    let mut b = [Byte::Free; TAIL + 1];
    for x in l.held().iter().filter(|x| x.pid == pid) {
        let r = req(Kind::Read, x.start, x.end);
        for i in covered(&r) {
            assert_eq!(b[i], Byte::Free, "own locks overlap: {:?}", l.held());
            b[i] = if x.write { Byte::Write } else { Byte::Read };
        }
    }
    b
}

fn request() -> impl Strategy<Value = (u32, Request)> {
    (
        1u32..4,
        0u8..3,
        0u64..(TAIL as u64 - 8),
        prop_oneof![(1u64..8).prop_map(Some), Just(None)],
    )
        .prop_map(|(pid, k, start, len)| {
            let kind = [Kind::Read, Kind::Write, Kind::Unlock][k as usize];
            let end = len.map_or(OFFSET_MAX, |n| start + n - 1);
            (pid, req(kind, start, end))
        })
}

proptest! {
    /// Any sequence of requests and releases leaves each process with
    /// exactly the bytes the model says, refuses exactly the requests
    /// another process's lock conflicts with (changing nothing), keeps
    /// every process's own locks apart and joined, and never lets two
    /// processes' locks conflict.
    #[test]
    fn locks_follow_the_byte_model(
        ops in proptest::collection::vec((request(), 0u8..10), 1..60)
    ) {
        let mut l = Locks::new();
        let mut model = [[Byte::Free; TAIL + 1]; 4];
        for ((pid, r), release) in ops {
            if release == 0 {
                l.release(pid, Some(9));
                model[pid as usize] = [Byte::Free; TAIL + 1];
            } else {
                let clash = (1..4u32).filter(|&o| o != pid).any(|o| {
                    covered(&r).any(|i| {
                        matches!(
                            (model[o as usize][i], r.kind),
                            (Byte::Write, Kind::Read | Kind::Write) | (Byte::Read, Kind::Write)
                        )
                    })
                });
                let got = l.set(9, pid, &r);
                prop_assert_eq!(got.is_err(), clash);
                if clash {
                    prop_assert_eq!(got, Err(EAGAIN));
                    prop_assert!(l.conflict(9, pid, &r).is_some());
                } else {
                    prop_assert!(l.conflict(9, pid, &r).is_none());
                    let to = match r.kind {
                        Kind::Read => Byte::Read,
                        Kind::Write => Byte::Write,
                        Kind::Unlock => Byte::Free,
                    };
                    for i in covered(&r) {
                        model[pid as usize][i] = to;
                    }
                }
            }
            for p in 1..4u32 {
                prop_assert_eq!(lock_bytes(&l, p), model[p as usize]);
            }
            let h: Vec<Lock> = l.held().to_vec();
            for a in &h {
                for b in &h {
                    prop_assert!(!a.conflicts(b));
                    // A process's locks of one type neither overlap nor touch.
                    if a != b && a.pid == b.pid && a.write == b.write {
                        prop_assert!(a.end.saturating_add(1) < b.start || b.end.saturating_add(1) < a.start);
                    }
                }
            }
        }
    }
}

/// `F_GETLK` reports a holder's lowest-starting conflicting lock, not the
/// one it took first (LTP's `fcntl11`: a write lock at 10, then a read lock
/// at 1; a write lock over everything is refused by the read lock).
#[test]
fn getlk_lowest_start() {
    let mut l = Locks::new();
    l.set(3, 10, &req(Kind::Write, 10, 14)).unwrap();
    l.set(3, 10, &req(Kind::Read, 1, 5)).unwrap();
    let c = l.conflict(3, 20, &req(Kind::Write, 0, u64::MAX)).unwrap();
    assert_eq!((c.start, c.write), (1, false));
    let c = l.conflict(3, 20, &req(Kind::Write, 6, u64::MAX)).unwrap();
    assert_eq!((c.start, c.write), (10, true));
    // A reader conflicts only with the write lock.
    let c = l.conflict(3, 20, &req(Kind::Read, 0, u64::MAX)).unwrap();
    assert_eq!((c.start, c.write), (10, true));
}
