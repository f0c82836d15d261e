//! The log reader and replay against logs built in memory and logs QEMU wrote.

use super::build::LogBuilder;
use super::*;
use crate::testutil::TempDir;
use std::io::Cursor;
use std::process::Command;

fn reader(bytes: Vec<u8>) -> LogReader<Cursor<Vec<u8>>> {
    LogReader::new(Cursor::new(bytes)).unwrap()
}

/// Every flush point's image, as (ordinal, entry, bytes 0..len).
fn points(bytes: Vec<u8>, size: u64, len: usize) -> Vec<(u64, u64, Vec<u8>)> {
    let mut out = Vec::new();
    replay_from(reader(bytes), size, |p, img| {
        out.push((p.ordinal, p.entry, img.read(0, len)));
        Ok(ControlFlow::Continue(()))
    })
    .unwrap();
    out
}

#[test]
fn parses_superblock_and_entries() {
    let mut b = LogBuilder::new(512);
    b.fill(8, 2, 0xaa, 0)
        .flush()
        .discard(4, 4)
        .mark("boot")
        .fill(1, 1, 0xbb, FUA);
    let mut log = reader(b.bytes(None));
    assert_eq!(
        log.sup(),
        Super {
            nr_entries: 5,
            sector_size: 512
        }
    );
    let mut data = Vec::new();
    let (i, e) = log.next_entry(Some(&mut data)).unwrap().unwrap();
    assert_eq!((i, e.sector, e.nr_sectors, e.flags), (0, 8, 2, 0));
    assert_eq!(data, vec![0xaa; 1024]);
    let (i, e) = log.next_entry(Some(&mut data)).unwrap().unwrap();
    assert_eq!((i, e.flags, e.is_flush()), (1, FLUSH, true));
    assert!(data.is_empty());
    let (_, e) = log.next_entry(Some(&mut data)).unwrap().unwrap();
    assert_eq!((e.sector, e.nr_sectors, e.data_sectors()), (4, 4, 0));
    assert!(data.is_empty(), "a discard carries no data");
    let (_, e) = log.next_entry(None).unwrap().unwrap();
    assert_eq!(e.mark.as_deref(), Some("boot"));
    let (i, e) = log.next_entry(Some(&mut data)).unwrap().unwrap();
    assert_eq!((i, e.sector, e.flags), (4, 1, FUA));
    assert_eq!(data, vec![0xbb; 512]);
    assert_eq!(log.next_entry(None).unwrap(), None);
}

#[test]
fn bad_logs_are_refused() {
    let good = LogBuilder::new(512).fill(0, 1, 1, 0).bytes(None);
    let mut bad = good.clone();
    bad[0] ^= 1;
    let err = LogReader::new(Cursor::new(bad)).err().unwrap();
    assert!(err.to_string().contains("bad magic"), "{err}");
    let mut bad = good.clone();
    bad[8] = 2;
    let err = LogReader::new(Cursor::new(bad)).err().unwrap();
    assert_eq!(err.to_string(), "unsupported log version 2");
    let mut bad = good.clone();
    bad[24..28].copy_from_slice(&500u32.to_le_bytes());
    let err = LogReader::new(Cursor::new(bad)).err().unwrap();
    assert_eq!(err.to_string(), "bad log sector size 500");
    let mut bad = good.clone();
    bad[512 + 16] = 0x10;
    let err = reader(bad).next_entry(None).unwrap_err();
    assert_eq!(err.to_string(), "log entry 0: unknown flags 0x10");
    // Truncated in the data, and in a header.
    let err = reader(good[..1500].to_vec()).next_entry(None).unwrap_err();
    assert_eq!(err.to_string(), "log ends inside the data of entry 0 of 1");
    let err = reader(good[..700].to_vec()).next_entry(None).unwrap_err();
    assert_eq!(err.to_string(), "log ends inside entry 0 of 1");
    assert!(LogReader::new(Cursor::new(vec![0u8; 10])).is_err());
}

#[test]
fn a_damaged_tail_ends_the_scan() {
    let dir = TempDir::new("dmlog");
    let path = dir.path().join("log");
    let mut b = LogBuilder::new(512);
    b.fill(0, 1, 1, 0).flush().fill(3, 2, 2, 0).flush();
    let mut bytes = b.bytes(Some(6));
    bytes.extend([0xee; 512]);
    std::fs::write(&path, &bytes).unwrap();
    let s = scan(&path).unwrap();
    assert_eq!((s.entries, s.flushes.clone(), s.writes), (4, vec![1, 3], 2));
    assert_eq!(
        s.damaged_tail.as_deref(),
        Some("log entry 4: unknown flags 0xeeeeeeeeeeeeeeee")
    );
    std::fs::write(&path, b.bytes(None)).unwrap();
    assert_eq!(scan(&path).unwrap().damaged_tail, None);
}

#[test]
fn entries_past_the_superblock_count_are_ignored() {
    // QEMU updates the count at flushes; a kill leaves later entries
    // uncounted (and perhaps half written).
    let mut b = LogBuilder::new(512);
    b.fill(0, 1, 1, 0).flush().fill(0, 1, 2, 0);
    let mut bytes = b.bytes(Some(2));
    bytes.extend([0xffu8; 100]);
    let mut log = reader(bytes);
    assert!(log.next_entry(None).unwrap().is_some());
    assert!(log.next_entry(None).unwrap().is_some());
    assert_eq!(log.next_entry(None).unwrap(), None);
}

#[test]
fn an_empty_file_is_an_empty_log() {
    let dir = TempDir::new("dmlog");
    let path = dir.path().join("empty");
    File::create(&path).unwrap();
    assert_eq!(scan(&path).unwrap(), Scan::default());
    replay(&path, 4096, |_, _| panic!("no flush")).unwrap();
    assert!(scan(&dir.path().join("missing")).is_err());
}

#[test]
fn image_at_each_flush_has_exactly_the_earlier_writes() {
    let mut b = LogBuilder::new(512);
    b.flush() // 0: nothing written yet
        .fill(0, 1, 0xaa, 0)
        .fill(2, 2, 0xbb, 0)
        .flush() // 3
        .fill(0, 1, 0xcc, FUA)
        .discard(2, 1)
        .mark("m")
        .flush() // 7
        .fill(1, 1, 0xdd, 0); // after the last flush: never seen
    let pts = points(b.bytes(None), 8192, 2048);
    assert_eq!(pts.len(), 3);
    assert_eq!((pts[0].0, pts[0].1), (0, 0));
    assert_eq!(pts[0].2, vec![0; 2048]);
    assert_eq!((pts[1].0, pts[1].1), (1, 3));
    let mut want = vec![0u8; 2048];
    want[..512].fill(0xaa);
    want[1024..2048].fill(0xbb);
    assert_eq!(pts[1].2, want);
    assert_eq!((pts[2].0, pts[2].1), (2, 7));
    want[..512].fill(0xcc);
    want[1024..1536].fill(0);
    assert_eq!(pts[2].2, want);
}

#[test]
fn a_flush_with_data_is_a_preflush() {
    let mut b = LogBuilder::new(512);
    b.fill(0, 1, 1, 0).fill(0, 1, 2, FLUSH | FUA).flush();
    let pts = points(b.bytes(None), 4096, 1);
    assert_eq!(pts, [(0, 1, vec![1]), (1, 2, vec![2])]);
}

#[test]
fn replay_stops_when_asked_and_checks_bounds() {
    let mut b = LogBuilder::new(512);
    b.flush().flush().flush();
    let mut seen = 0;
    replay_from(reader(b.bytes(None)), 4096, |_, _| {
        seen += 1;
        Ok(ControlFlow::Break(()))
    })
    .unwrap();
    assert_eq!(seen, 1);
    let b = LogBuilder::new(512).fill(8, 1, 1, 0).bytes(None);
    let err = replay_from(reader(b), 4096, |_, _| Ok(ControlFlow::Continue(()))).unwrap_err();
    assert_eq!(
        format!("{err:#}"),
        "log entry 0 (write): access of 512 bytes at 4096 is beyond the disk (4096 bytes)"
    );
}

#[test]
fn larger_log_sectors_scale_offsets() {
    let mut b = LogBuilder::new(4096);
    b.fill(2, 1, 0x5a, 0).flush();
    let pts = points(b.bytes(None), 16384, 16384);
    let img = &pts[0].2;
    assert!(img[..8192].iter().all(|&x| x == 0));
    assert!(img[8192..12288].iter().all(|&x| x == 0x5a));
    assert!(img[12288..].iter().all(|&x| x == 0));
}

#[test]
fn sparse_image_writes_zeroes_and_saves_sparsely() {
    let mut img = SparseImage::new(1 << 20);
    img.write(4090, &[7; 10]).unwrap();
    assert_eq!(img.chunks(), 2);
    img.write(65536, &[0; 8192]).unwrap();
    assert_eq!(img.chunks(), 2, "zeros allocate nothing");
    assert_eq!(
        img.read(4088, 14),
        [0, 0, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 0, 0]
    );
    img.zero(4092, 4).unwrap();
    assert_eq!(
        img.read(4088, 14),
        [0, 0, 7, 7, 0, 0, 0, 0, 7, 7, 7, 7, 0, 0]
    );
    img.zero(4096, 4096).unwrap();
    assert_eq!(img.chunks(), 1);
    assert!(img.write(1 << 20, &[1]).is_err());
    assert!(img.zero(u64::MAX, 2).is_err());
    let dir = TempDir::new("dmlog");
    let path = dir.path().join("img");
    img.save(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len(), 1 << 20);
    assert_eq!(&bytes[4088..4100], [0, 0, 7, 7, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(bytes.iter().filter(|&&b| b != 0).count(), 2);
    use std::os::unix::fs::MetadataExt;
    let blocks = std::fs::metadata(&path).unwrap().blocks();
    assert!(blocks * 512 <= 64 * 1024, "sparse: {blocks} blocks");
}

/// Runs qemu-io on a blklogwrites node over `base` logging to `log`.
fn qemu_io(base: &Path, log: &Path, sector: u32, cmds: &[&str]) {
    let opts = format!(
        "driver=blklogwrites,log-sector-size={sector},file.driver=file,file.filename={},log.driver=file,log.filename={}",
        base.display(),
        log.display()
    );
    let mut cmd = Command::new("qemu-io");
    cmd.arg("--image-opts").arg(opts);
    for c in cmds {
        cmd.arg("-c").arg(c);
    }
    let out = cmd.output().expect("qemu-io (apt-get install qemu-utils)");
    // qemu-io reports command errors on stdout and still exits 0.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && !text.contains("error"),
        "qemu-io failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn fresh(dir: &TempDir, size: u64) -> (std::path::PathBuf, std::path::PathBuf) {
    let base = dir.path().join("base.img");
    let log = dir.path().join("log.bin");
    File::create(&base).unwrap().set_len(size).unwrap();
    File::create(&log).unwrap();
    (base, log)
}

/// Checks that the images at the flush points are `states`, in order,
/// each at least once (qemu-io may flush more often than asked).
fn assert_states(at: &[Vec<u8>], states: &[Vec<u8>]) {
    let mut j = 0;
    let mut hits = vec![0; states.len()];
    for (i, img) in at.iter().enumerate() {
        while j < states.len() && *img != states[j] {
            j += 1;
        }
        assert!(
            j < states.len(),
            "image at flush {i} is no expected state in order"
        );
        hits[j] += 1;
    }
    assert!(hits.iter().all(|&h| h > 0), "every state seen: {hits:?}");
}

fn images(log: &Path, size: u64) -> Vec<Vec<u8>> {
    let mut at = Vec::new();
    replay(log, size, |_, img| {
        at.push(img.read(0, size as usize));
        Ok(ControlFlow::Continue(()))
    })
    .unwrap();
    at
}

#[test]
fn replays_a_log_written_by_qemu() {
    let dir = TempDir::new("dmlog-qemu");
    let (base, log) = fresh(&dir, 1 << 20);
    qemu_io(
        &base,
        &log,
        512,
        &[
            "write -P 0xaa 0 4k",
            "flush",
            "write -P 0xbb 8k 512",
            "write -P 0xcc 512 1k",
            "flush",
            "write -z 0 1k",
            "write -P 0xdd 1044480 4k",
            "flush",
        ],
    );
    let s = scan(&log).unwrap();
    assert_eq!(s.writes, 5);
    assert_eq!(s.discards, 0);
    assert_eq!(s.bytes, 4096 + 512 + 1024 + 1024 + 4096);
    // The first write is entry 0 and the first flush entry 1.
    assert_eq!(s.flushes[0], 1);
    assert!(s.flushes.len() >= 3);
    let at = images(&log, 1 << 20);
    assert_eq!(at.len(), s.flushes.len());
    let mut states = Vec::new();
    let mut want = vec![0u8; 1 << 20];
    want[..4096].fill(0xaa);
    states.push(want.clone());
    want[8192..8704].fill(0xbb);
    want[512..1536].fill(0xcc);
    states.push(want.clone());
    want[..1024].fill(0);
    want[(1 << 20) - 4096..].fill(0xdd);
    states.push(want.clone());
    assert_states(&at, &states);
    // The last flush point is the disk QEMU left.
    assert!(at.last().unwrap() == &std::fs::read(&base).unwrap());
}

#[test]
fn replays_a_qemu_log_with_4k_sectors_and_discards() {
    let dir = TempDir::new("dmlog-qemu4k");
    let (base, log) = fresh(&dir, 1 << 20);
    qemu_io(
        &base,
        &log,
        4096,
        &[
            "write -P 0x11 0 8k",
            "write -P 0x22 64k 4k",
            "flush",
            "discard 0 4k",
            "flush",
        ],
    );
    let s = scan(&log).unwrap();
    assert_eq!((s.discards, s.writes, s.bytes), (1, 2, 12288));
    assert_eq!(s.flushes[0], 2);
    let mut f = File::open(&log).unwrap();
    let mut r = LogReader::new(BufReader::new(&mut f)).unwrap();
    assert_eq!(r.sup().sector_size, 4096);
    let (_, e) = r.next_entry(None).unwrap().unwrap();
    assert_eq!((e.sector, e.nr_sectors, e.flags), (0, 2, 0));
    let (_, e) = r.next_entry(None).unwrap().unwrap();
    assert_eq!((e.sector, e.nr_sectors), (16, 1));
    let at = images(&log, 1 << 20);
    let mut want = vec![0u8; 1 << 20];
    want[..8192].fill(0x11);
    want[65536..69632].fill(0x22);
    let before = want.clone();
    want[..4096].fill(0);
    // A replayed discard reads as zeros.
    assert_states(&at, &[before, want]);
}
