//! Tests: negotiation and geometry with exact values, layouts by property,
//! and the queue against the fake device (which checks every chain),
//! including a model-checked property test of random request mixes.

use crate::fake::{Fake, FRAMES_PA, QUEUE_PA};
use crate::*;
use proptest::prelude::*;

/// The tests' brand for frame numbers (the kernel's is its own).
struct Test;
type FrameNumber = stet_physmem::pool::FrameNumber<Test>;
/// No frames (a flush), typed.
const NONE: &[FrameNumber] = &[];

#[test]
fn negotiation_keeps_what_the_driver_uses() {
    use feature::*;
    assert_eq!(negotiate(FLUSH | SEG_MAX), Err(Unusable::NotVersion1));
    let offered = VERSION_1 | FLUSH | SEG_MAX | INDIRECT_DESC | (1 << 29) | (1 << 13);
    assert_eq!(
        negotiate(offered),
        Ok(VERSION_1 | FLUSH | SEG_MAX | INDIRECT_DESC)
    );
    assert_eq!(negotiate(u64::MAX), Ok(WANTED));
}

#[test]
fn geometry_choices() {
    let g = |max, seg, size, ind| Geometry::choose(max, seg, size, ind);
    // QEMU's virtio-blk-pci: 256 entries, seg_max 254, indirect.
    assert_eq!(
        g(256, Some(254), None, true),
        Ok(Geometry {
            queue_size: 256,
            slots: 32,
            max_frames: 254,
            indirect: true
        })
    );
    assert_eq!(
        g(256, Some(254), None, false),
        Ok(Geometry {
            queue_size: 256,
            slots: 8,
            max_frames: 30,
            indirect: false
        })
    );
    // Bigger queues are cut to 256, odd sizes rounded down to a power of two.
    assert_eq!(g(1024, None, None, true).unwrap().queue_size, 256);
    assert_eq!(g(1024, None, None, true).unwrap().max_frames, 254);
    let odd = g(200, Some(1000), None, true).unwrap();
    assert_eq!((odd.queue_size, odd.slots, odd.max_frames), (128, 32, 126));
    let small = g(8, None, None, false).unwrap();
    assert_eq!((small.slots, small.max_frames), (2, 2));
    let small = g(8, Some(64), None, true).unwrap();
    assert_eq!((small.slots, small.max_frames), (8, 6));
    // seg_max 0 still allows one frame.
    assert_eq!(g(64, Some(0), None, true).unwrap().max_frames, 1);
    assert_eq!(g(7, None, None, true), Err(Unusable::QueueTooSmall));
    assert_eq!(
        g(256, None, Some(512), true),
        Err(Unusable::SegmentTooSmall)
    );
    assert!(g(256, None, Some(4096), true).is_ok());
}

#[test]
fn qemu_layout_is_exact() {
    let g = Geometry::choose(256, Some(254), None, true).unwrap();
    let l = g.layout();
    assert_eq!(
        l,
        Layout {
            desc: 0,
            avail: 4096,
            used: 8192,
            headers: 12288,
            status: 12288 + 512,
            tables: 16384,
            table_bytes: 4096,
            bytes: 16384 + 32 * 4096,
        }
    );
}

proptest! {
    #[test]
    fn layouts_are_disjoint_and_aligned(
        max in 8u16..2048,
        seg in proptest::option::of(0u32..600),
        ind in any::<bool>(),
    ) {
        let g = Geometry::choose(max, seg, None, ind).unwrap();
        let n = g.queue_size as usize;
        prop_assert!(n.is_power_of_two() && n <= 256 && n as u16 <= max);
        prop_assert!(g.slots >= 2 && g.slots <= MAX_SLOTS && g.max_frames >= 1);
        prop_assert!(g.stride() <= n);
        if !ind {
            prop_assert!(g.slots * g.stride() <= n);
        }
        let l = g.layout();
        let parts = [
            (l.desc, 16 * n),
            (l.avail, 6 + 2 * n),
            (l.used, 6 + 8 * n),
            (l.headers, 16 * g.slots),
            (l.status, g.slots),
            (l.tables, if ind { g.slots * l.table_bytes } else { 0 }),
        ];
        for (i, a) in parts.iter().enumerate() {
            prop_assert!(a.0 + a.1 <= l.bytes);
            for b in &parts[i + 1..] {
                prop_assert!(a.0 + a.1 <= b.0, "{:?} overlaps {:?}", a, b);
            }
        }
        prop_assert_eq!(l.desc % 16 + l.avail % 2 + l.used % 4 + l.headers % 16 + l.tables % 16, 0);
        prop_assert_eq!(l.bytes % 4096, 0);
    }
}

/// The contents a write tagged `stamp` gives a block (0: never written).
fn pattern(stamp: u64) -> Vec<u8> {
    if stamp == 0 {
        return vec![0; 4096];
    }
    (0..512u64)
        .flat_map(|i| (stamp ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).to_le_bytes())
        .collect()
}

fn frame(i: usize) -> FrameNumber {
    FrameNumber::new(((FRAMES_PA >> 12) + i) as u32, &Test).unwrap()
}

fn fill(q: &mut BlkQueue<Fake>, f: FrameNumber, stamp: u64) {
    let pa = f.addr() as usize;
    q.device_mut().ram[pa..pa + 4096].copy_from_slice(&pattern(stamp));
}

fn content(q: &mut BlkQueue<Fake>, f: FrameNumber) -> Vec<u8> {
    let pa = f.addr() as usize;
    q.device_mut().ram[pa..pa + 4096].to_vec()
}

fn queue(g: Geometry, frames: usize, blocks: u64, flush: bool, seed: u64) -> BlkQueue<Fake> {
    let fake = Fake::new(g, frames, blocks, seed);
    BlkQueue::new(fake, g, QUEUE_PA as u64, blocks * 8 + 7, flush)
}

fn qemu_like(indirect: bool) -> Geometry {
    Geometry::choose(256, Some(254), None, indirect).unwrap()
}

#[test]
fn write_flush_read_round_trip() {
    for indirect in [true, false] {
        let mut q = queue(qemu_like(indirect), 64, 100, true, 1);
        // A partial trailing sector does not make a block.
        assert_eq!(q.blocks(), 100);
        assert_eq!(q.free_slots(), if indirect { 31 } else { 7 });
        // Frames 0,2,4,... (not contiguous) to blocks 10..20.
        let wf: Vec<_> = (0..10).map(|i| frame(2 * i)).collect();
        for (j, f) in wf.iter().enumerate() {
            fill(&mut q, *f, 100 + j as u64);
        }
        q.submit(Op::Write, 10, &wf, 7).unwrap();
        q.submit(Op::Flush, 0, NONE, 8).unwrap();
        assert_eq!(q.device_mut().pending.len(), 0, "submit must not notify");
        q.kick();
        q.kick();
        assert_eq!(q.kicks(), 1, "a second kick with nothing new is silent");
        assert_eq!(q.poll(), None);
        q.device_mut().complete(0);
        assert_eq!(q.poll(), Some((7, Ok(()))));
        let d = q.device_mut();
        assert_ne!(d.durable, d.disk);
        q.device_mut().complete(0);
        assert_eq!(q.poll(), Some((8, Ok(()))));
        let d = q.device_mut();
        assert_eq!(d.durable, d.disk);
        // Read them back into frames 41,39,...,23.
        let rf: Vec<_> = (0..10).map(|i| frame(41 - 2 * i)).collect();
        q.submit(Op::Read, 10, &rf, 9).unwrap();
        q.kick();
        q.device_mut().complete_all();
        assert_eq!(q.poll(), Some((9, Ok(()))));
        for (j, f) in rf.iter().enumerate() {
            assert_eq!(content(&mut q, *f), pattern(100 + j as u64));
        }
        let disk = &q.device_mut().disk;
        assert!(disk[..10 * 4096].iter().all(|&b| b == 0));
        assert_eq!(&disk[15 * 4096..16 * 4096], &pattern(105)[..]);
        assert_eq!(q.completed(), 3);
        assert_eq!(q.device_mut().flushes, 1);
    }
}

#[test]
fn refusals() {
    let mut q = queue(qemu_like(false), 64, 100, true, 1);
    let f = [frame(0), frame(1)];
    assert_eq!(q.submit(Op::Write, 99, &f, 0), Err(SubmitError::OutOfRange));
    assert_eq!(
        q.submit(Op::Read, 100, &f[..1], 0),
        Err(SubmitError::OutOfRange)
    );
    assert_eq!(
        q.submit(Op::Read, u64::MAX, &f[..1], 0),
        Err(SubmitError::OutOfRange)
    );
    assert_eq!(q.submit(Op::Read, 5, NONE, 0), Err(SubmitError::BadRequest));
    assert_eq!(q.submit(Op::Flush, 0, &f, 0), Err(SubmitError::BadRequest));
    // A table slot without a frame is refused, not sent to some address,
    // and takes no slot.
    let free = q.free_slots();
    assert_eq!(
        q.submit(Op::Write, 5, &[Some(frame(0)), None], 0),
        Err(SubmitError::BadRequest)
    );
    assert_eq!(q.free_slots(), free);
    assert_eq!(
        q.submit(Op::Flush, 0, &[None::<FrameNumber>], 0),
        Err(SubmitError::BadRequest)
    );
    let many = vec![frame(0); 31];
    assert_eq!(
        q.submit(Op::Read, 0, &many, 0),
        Err(SubmitError::TooManyFrames)
    );
    assert_eq!(q.submit(Op::Read, 0, &many[..30], 0), Ok(()));
    assert_eq!(q.submit(Op::Write, 98, &f, 0), Ok(()));
    assert_eq!(
        q.read_sync(100, frame(3)),
        Err(IoError::Refused(SubmitError::OutOfRange))
    );
    for t in 0..5 {
        q.submit(Op::Flush, 0, NONE, t).unwrap();
    }
    assert_eq!(q.free_slots(), 0);
    assert_eq!(q.submit(Op::Flush, 0, NONE, 0), Err(SubmitError::Full));
    // The sync slot is still free: a sync request runs while the queue is full.
    q.kick();
    assert_eq!(q.flush_sync(), Ok(()));
    q.device_mut().complete_all();
    let mut n = 0;
    while q.poll().is_some() {
        n += 1;
    }
    assert_eq!((n, q.free_slots()), (7, 7));
    assert_eq!(q.submit(Op::Read, 0, NONE, 0), Err(SubmitError::BadRequest));
}

#[test]
fn device_errors_come_back() {
    let mut q = queue(qemu_like(true), 8, 32, true, 1);
    q.device_mut().fail_block = Some(6);
    let f = [frame(0), frame(1), frame(2)];
    q.submit(Op::Write, 4, &f, 1).unwrap();
    q.submit(Op::Write, 7, &f, 2).unwrap();
    q.kick();
    q.device_mut().complete(1);
    q.device_mut().complete(0);
    assert_eq!(q.poll(), Some((2, Ok(()))));
    assert_eq!(q.poll(), Some((1, Err(IoError::Io))));
    assert_eq!(q.write_sync(6, frame(3)), Err(IoError::Io));
    assert_eq!(q.read_sync(5, frame(3)), Ok(()));
}

#[test]
fn sync_keeps_other_completions_in_order() {
    for seed in 1..20 {
        let mut q = queue(qemu_like(seed % 2 == 0), 16, 64, true, seed);
        for t in 0..6 {
            q.submit(Op::Read, t, &[frame(t as usize)], 100 + t)
                .unwrap();
        }
        q.kick();
        // The device completes some queued ones (at random) before the sync one.
        fill(&mut q, frame(10), 77);
        assert_eq!(q.write_sync(40, frame(10)), Ok(()));
        q.device_mut().complete_all();
        let mut seen = Vec::new();
        while let Some((t, r)) = q.poll() {
            assert_eq!(r, Ok(()));
            seen.push(t);
        }
        seen.sort();
        assert_eq!(seen, (100..106).collect::<Vec<_>>());
        assert_eq!(q.read_sync(40, frame(11)), Ok(()));
        assert_eq!(content(&mut q, frame(11)), pattern(77));
        assert_eq!(q.completed(), 8);
    }
}

#[test]
fn sync_reports_stashed_completions_in_device_order() {
    let mut q = queue(qemu_like(true), 16, 64, true, 3);
    for t in 0..4 {
        q.submit(Op::Read, t, &[frame(t as usize)], t).unwrap();
    }
    q.kick();
    // Complete in the order 2, 0 before the sync request can finish.
    q.device_mut().complete(2);
    q.device_mut().complete(0);
    q.device_mut().complete_all(); // 1 and 3
    assert_eq!(q.read_sync(9, frame(9)), Ok(()));
    let order: Vec<_> = core::iter::from_fn(|| q.poll().map(|p| p.0)).collect();
    assert_eq!(order, vec![2, 0, 1, 3]);
}

#[test]
fn flush_without_a_write_cache_completes_at_once() {
    let mut q = queue(qemu_like(true), 8, 16, false, 1);
    q.submit(Op::Flush, 0, NONE, 5).unwrap();
    q.kick();
    assert_eq!(q.kicks(), 0);
    assert_eq!(q.poll(), Some((5, Ok(()))));
    assert_eq!(q.flush_sync(), Ok(()));
    assert_eq!(q.device_mut().notifies, 0);
    assert_eq!(q.completed(), 2);
}

/// One step of a random request mix.
#[derive(Clone, Debug)]
enum Step {
    Submit { write: bool, block: u64, n: usize },
    Flush,
    Kick,
    Complete(usize),
    Poll,
    Sync { kind: u8, block: u64 },
}

fn step(max_frames: usize) -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (any::<bool>(), 0u64..ASYNC_BLOCKS + 8, 1..=max_frames + 1)
            .prop_map(|(write, block, n)| Step::Submit { write, block, n }),
        1 => Just(Step::Flush),
        2 => Just(Step::Kick),
        3 => any::<usize>().prop_map(Step::Complete),
        3 => Just(Step::Poll),
        1 => (0u8..3, ASYNC_BLOCKS..DISK_BLOCKS).prop_map(|(kind, block)| Step::Sync { kind, block }),
    ]
}

/// Queued requests use blocks below this; sync ones the rest.
const ASYNC_BLOCKS: u64 = 40;
const DISK_BLOCKS: u64 = 44;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// Random mixes of queued and sync requests against a model: every tag
    /// comes back exactly once, reads see exactly the writes the device
    /// completed before them, and the disk ends as the model says.
    #[test]
    fn random_mixes_match_the_model(
        qmax in 8u16..=64,
        seg in 1u32..6,
        indirect in any::<bool>(),
        seed in any::<u64>(),
        steps in proptest::collection::vec(step(6), 1..120),
    ) {
        let g = Geometry::choose(qmax, Some(seg), None, indirect).unwrap();
        let frames_total = g.slots * g.max_frames + 1;
        let mut q = queue(g, frames_total, DISK_BLOCKS, true, seed);
        let sync_frame = frame(frames_total - 1);
        let mut free_frames: Vec<FrameNumber> = (0..frames_total - 1).map(frame).collect();
        // Model: the stamp each block holds (0 = zeros).
        let mut model = vec![0u64; DISK_BLOCKS as usize];
        // Tag -> (op, block, frames, stamps).
        let mut inflight: std::collections::HashMap<u64, (Op, u64, Vec<FrameNumber>)> = Default::default();
        let mut next_tag = 1u64;
        let mut returned = 0u64;
        let stamp = |tag: u64, j: usize| tag << 8 | j as u64;
        let check_done = |q: &mut BlkQueue<Fake>, model: &mut Vec<u64>,
                          inflight: &mut std::collections::HashMap<u64, (Op, u64, Vec<FrameNumber>)>,
                          free_frames: &mut Vec<FrameNumber>, tag: u64, r: Result<(), IoError>| {
            assert_eq!(r, Ok(()));
            let (op, block, frames) = inflight.remove(&tag).expect("unknown or repeated tag");
            for (j, f) in frames.iter().enumerate() {
                let b = (block + j as u64) as usize;
                match op {
                    Op::Write => model[b] = stamp(tag, j),
                    Op::Read => assert_eq!(content(q, *f), pattern(model[b]), "block {}", b),
                    Op::Flush => {}
                }
            }
            free_frames.extend(frames);
        };
        for s in steps {
            match s {
                Step::Submit { write, block, n } => {
                    let expect = if n > g.max_frames {
                        Err(SubmitError::TooManyFrames)
                    } else if block + n as u64 > DISK_BLOCKS {
                        Err(SubmitError::OutOfRange)
                    } else if block + n as u64 > ASYNC_BLOCKS {
                        continue; // the sync requests' blocks
                    } else if q.free_slots() == 0 {
                        Err(SubmitError::Full)
                    } else {
                        Ok(())
                    };
                    let op = if write { Op::Write } else { Op::Read };
                    let frames: Vec<_> = if expect.is_ok() {
                        // Take frames from the middle of the free list:
                        // scattered, not contiguous.
                        (0..n).map(|j| free_frames.remove((seed as usize + j) % free_frames.len())).collect()
                    } else {
                        vec![frame(0); n]
                    };
                    let tag = next_tag;
                    if write && expect.is_ok() {
                        for (j, f) in frames.iter().enumerate() {
                            fill(&mut q, *f, stamp(tag, j));
                        }
                    }
                    prop_assert_eq!(q.submit(op, block, &frames, tag), expect);
                    if expect.is_ok() {
                        inflight.insert(tag, (op, block, frames));
                        next_tag += 1;
                    }
                }
                Step::Flush => {
                    if q.submit(Op::Flush, 0, NONE, next_tag).is_ok() {
                        inflight.insert(next_tag, (Op::Flush, 0, Vec::new()));
                        next_tag += 1;
                    }
                }
                Step::Kick => q.kick(),
                Step::Complete(i) => {
                    let p = q.device_mut().pending.len();
                    if p > 0 {
                        q.device_mut().complete(i % p);
                    }
                }
                Step::Poll => {
                    if let Some((tag, r)) = q.poll() {
                        returned += 1;
                        check_done(&mut q, &mut model, &mut inflight, &mut free_frames, tag, r);
                    }
                }
                Step::Sync { kind, block } => {
                    let b = block as usize;
                    match kind {
                        0 => {
                            prop_assert_eq!(q.read_sync(block, sync_frame), Ok(()));
                            prop_assert_eq!(content(&mut q, sync_frame), pattern(model[b]));
                        }
                        1 => {
                            let st = next_tag << 8 | 0xff;
                            next_tag += 1;
                            fill(&mut q, sync_frame, st);
                            prop_assert_eq!(q.write_sync(block, sync_frame), Ok(()));
                            model[b] = st;
                        }
                        _ => {
                            prop_assert_eq!(q.flush_sync(), Ok(()));
                            let d = q.device_mut();
                            prop_assert!(d.durable == d.disk);
                        }
                    }
                }
            }
        }
        // Drain.
        q.kick();
        q.device_mut().complete_all();
        while let Some((tag, r)) = q.poll() {
            returned += 1;
            check_done(&mut q, &mut model, &mut inflight, &mut free_frames, tag, r);
        }
        prop_assert!(inflight.is_empty());
        prop_assert_eq!(q.free_slots(), g.slots - 1);
        prop_assert_eq!(free_frames.len(), frames_total - 1);
        prop_assert!(q.completed() >= returned);
        for (b, st) in model.iter().enumerate() {
            prop_assert_eq!(&q.device_mut().disk[b * 4096..(b + 1) * 4096], &pattern(*st)[..]);
        }
    }
}
