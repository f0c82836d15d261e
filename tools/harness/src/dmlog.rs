//! Write logs in the dm-log-writes format, as QEMU's `blklogwrites` block
//! driver records them, and replaying them: the disk image as of each flush.
//!
//! The log is an array of sectors (the superblock gives their size). Sector
//! 0 is the superblock: magic, version, number of entries, sector size
//! (little-endian u64, u64, u64, u32). Entries follow from sector 1, each
//! one header sector (sector, nr_sectors, flags, data_len: four LE u64s,
//! then zeros or, for a mark, the mark's text) followed by `nr_sectors`
//! sectors of data, except for discards, which carry none. Offsets and
//! lengths are in log sectors, as QEMU writes them (the same as Linux's
//! dm-log-writes when the sector size is 512). QEMU rewrites the superblock
//! at every flush, so after a kill its entry count covers every flush.
//!
//! The image "as of flush entry i" has every write of entries `0..i`
//! applied: all a crash right after that flush may leave on the disk, and
//! the least. Writes are applied to a sparse in-memory image while the log is
//! walked once, and each chosen flush point is saved as a sparse file.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::ops::ControlFlow;
use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};

/// The superblock's magic.
pub const MAGIC: u64 = 0x006a_7366_7773_6872;
/// The only format version.
pub const VERSION: u64 = 1;
/// Entry flag: a flush (everything logged before it is durable).
pub const FLUSH: u64 = 1 << 0;
/// Entry flag: a write with forced unit access.
pub const FUA: u64 = 1 << 1;
/// Entry flag: a discard (no data follows).
pub const DISCARD: u64 = 1 << 2;
/// Entry flag: a mark (its text is in the header sector).
pub const MARK: u64 = 1 << 3;
const KNOWN_FLAGS: u64 = FLUSH | FUA | DISCARD | MARK;
/// Bytes of the superblock's fields.
const SUPER_LEN: usize = 28;
/// Bytes of an entry header's fields.
const ENTRY_LEN: usize = 32;
/// Granule of the sparse image.
const CHUNK: u64 = 4096;

/// The log's superblock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Super {
    /// Entries the log holds.
    pub nr_entries: u64,
    /// Bytes per log sector.
    pub sector_size: u32,
}

/// One entry's header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Where on the disk, in sectors.
    pub sector: u64,
    /// How many sectors.
    pub nr_sectors: u64,
    /// `FLUSH`, `FUA`, `DISCARD`, `MARK`.
    pub flags: u64,
    /// A mark's text.
    pub mark: Option<String>,
}

impl Entry {
    /// Whether it is a flush.
    pub fn is_flush(&self) -> bool {
        self.flags & FLUSH != 0
    }

    /// Sectors of data that follow its header in the log.
    pub fn data_sectors(&self) -> u64 {
        if self.flags & DISCARD != 0 {
            0
        } else {
            self.nr_sectors
        }
    }
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Reads a log's entries in order.
pub struct LogReader<R> {
    r: R,
    sup: Super,
    next: u64,
    header: Vec<u8>,
}

impl<R: Read> LogReader<R> {
    /// Reads and checks the superblock.
    pub fn new(mut r: R) -> Result<Self> {
        let mut head = [0u8; SUPER_LEN];
        r.read_exact(&mut head)
            .context("log too short for its superblock")?;
        if le64(&head, 0) != MAGIC {
            bail!("not a dm-log-writes log (bad magic)");
        }
        let version = le64(&head, 8);
        if version != VERSION {
            bail!("unsupported log version {version}");
        }
        let size = u32::from_le_bytes([head[24], head[25], head[26], head[27]]);
        if !size.is_power_of_two() || (size as usize) < ENTRY_LEN || size >= 1 << 24 {
            bail!("bad log sector size {size}");
        }
        skip(&mut r, size as u64 - SUPER_LEN as u64).context("log ends in its superblock")?;
        Ok(LogReader {
            r,
            sup: Super {
                nr_entries: le64(&head, 16),
                sector_size: size,
            },
            next: 0,
            header: vec![0; size as usize],
        })
    }

    /// The superblock.
    pub fn sup(&self) -> Super {
        self.sup
    }

    /// The next entry and its index, or `None` after the last one the
    /// superblock counts. Its data is read into `data` if given (resized to
    /// fit), else skipped.
    pub fn next_entry(&mut self, data: Option<&mut Vec<u8>>) -> Result<Option<(u64, Entry)>> {
        let i = self.next;
        if i >= self.sup.nr_entries {
            return Ok(None);
        }
        let n = self.sup.nr_entries;
        self.r
            .read_exact(&mut self.header)
            .with_context(|| format!("log ends inside entry {i} of {n}"))?;
        let h = &self.header;
        let flags = le64(h, 16);
        if flags & !KNOWN_FLAGS != 0 {
            bail!("log entry {i}: unknown flags {flags:#x}");
        }
        let data_len = le64(h, 24);
        let mark = (flags & MARK != 0).then(|| {
            let end = (ENTRY_LEN as u64 + data_len).min(h.len() as u64) as usize;
            String::from_utf8_lossy(&h[ENTRY_LEN..end]).into_owned()
        });
        let entry = Entry {
            sector: le64(h, 0),
            nr_sectors: le64(h, 8),
            flags,
            mark,
        };
        let bytes = entry
            .data_sectors()
            .checked_mul(self.sup.sector_size as u64)
            .ok_or_else(|| anyhow!("log entry {i}: absurd length"))?;
        match data {
            Some(buf) => {
                let len = usize::try_from(bytes).context("entry too large")?;
                buf.resize(len, 0);
                self.r.read_exact(buf)
            }
            None => skip(&mut self.r, bytes),
        }
        .with_context(|| format!("log ends inside the data of entry {i} of {n}"))?;
        self.next += 1;
        Ok(Some((i, entry)))
    }
}

/// Reads and drops exactly `n` bytes.
fn skip<R: Read>(r: &mut R, n: u64) -> io::Result<()> {
    let got = io::copy(&mut r.by_ref().take(n), &mut io::sink())?;
    if got < n {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(())
}

/// What a whole log holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scan {
    /// Entries.
    pub entries: u64,
    /// Index of every flush entry, in order.
    pub flushes: Vec<u64>,
    /// Entries that carry data (writes, FUA writes, write-zeroes).
    pub writes: u64,
    /// Discard entries.
    pub discards: u64,
    /// Bytes of data written.
    pub bytes: u64,
    /// Why the walk stopped before the superblock's count: a damaged or
    /// missing tail, as a kill in the middle of logging can leave (QEMU
    /// also rewrites the count every 4096 entries, not only at flushes).
    pub damaged_tail: Option<String>,
}

fn open(path: &Path) -> Result<LogReader<BufReader<File>>> {
    let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    LogReader::new(BufReader::with_capacity(1 << 20, f))
        .with_context(|| format!("reading {}", path.display()))
}

/// Whether the log at `path` is an empty file: QEMU writes the superblock
/// at the first flush, so a run that never flushed leaves nothing.
fn is_empty(path: &Path) -> Result<bool> {
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(meta.len() == 0)
}

/// Walks the log at `path` without keeping data. An empty file is a log
/// without entries; a damaged entry ends the walk (`damaged_tail`).
pub fn scan(path: &Path) -> Result<Scan> {
    if is_empty(path)? {
        return Ok(Scan::default());
    }
    let mut log = open(path)?;
    let sector = log.sup().sector_size as u64;
    let mut scan = Scan::default();
    loop {
        let (i, e) = match log.next_entry(None) {
            Ok(Some(entry)) => entry,
            Ok(None) => break,
            Err(e) => {
                scan.damaged_tail = Some(format!("{e:#}"));
                break;
            }
        };
        scan.entries += 1;
        if e.is_flush() {
            scan.flushes.push(i);
        }
        if e.flags & DISCARD != 0 {
            scan.discards += 1;
        } else if e.nr_sectors > 0 {
            scan.writes += 1;
            scan.bytes += e.nr_sectors * sector;
        }
    }
    Ok(scan)
}

/// A disk image held as its non-zero 4 KiB chunks.
#[derive(Clone, Debug)]
pub struct SparseImage {
    size: u64,
    chunks: BTreeMap<u64, Box<[u8]>>,
}

impl SparseImage {
    /// An all-zero image of `size` bytes.
    pub fn new(size: u64) -> Self {
        SparseImage {
            size,
            chunks: BTreeMap::new(),
        }
    }

    /// Chunks holding data.
    #[cfg(test)]
    pub fn chunks(&self) -> usize {
        self.chunks.len()
    }

    fn check(&self, offset: u64, len: u64) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => Ok(()),
            _ => bail!(
                "access of {len} bytes at {offset} is beyond the disk ({} bytes)",
                self.size
            ),
        }
    }

    /// Writes `data` at byte `offset`. All-zero data does not allocate.
    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        self.check(offset, data.len() as u64)?;
        let mut done = 0usize;
        while done < data.len() {
            let at = offset + done as u64;
            let (chunk, within) = (at / CHUNK, (at % CHUNK) as usize);
            let n = (CHUNK as usize - within).min(data.len() - done);
            let part = &data[done..done + n];
            match self.chunks.get_mut(&chunk) {
                Some(c) => c[within..within + n].copy_from_slice(part),
                None if part.iter().all(|&b| b == 0) => {}
                None => {
                    let mut c = vec![0u8; CHUNK as usize].into_boxed_slice();
                    c[within..within + n].copy_from_slice(part);
                    self.chunks.insert(chunk, c);
                }
            }
            done += n;
        }
        Ok(())
    }

    /// Zeroes `len` bytes at `offset` (what a replayed discard leaves).
    pub fn zero(&mut self, offset: u64, len: u64) -> Result<()> {
        self.check(offset, len)?;
        let end = offset + len;
        let mut at = offset;
        while at < end {
            let (chunk, within) = (at / CHUNK, at % CHUNK);
            let n = (CHUNK - within).min(end - at);
            if n == CHUNK {
                self.chunks.remove(&chunk);
            } else if let Some(c) = self.chunks.get_mut(&chunk) {
                c[within as usize..(within + n) as usize].fill(0);
            }
            at += n;
        }
        Ok(())
    }

    /// `len` bytes at `offset`.
    #[cfg(test)]
    pub fn read(&self, offset: u64, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        for (i, b) in out.iter_mut().enumerate() {
            let at = offset + i as u64;
            if let Some(c) = self.chunks.get(&(at / CHUNK)) {
                *b = c[(at % CHUNK) as usize];
            }
        }
        out
    }

    /// Writes the image to `path` as a sparse file (only chunks with data
    /// are written).
    pub fn save(&self, path: &Path) -> Result<()> {
        let f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
        f.set_len(self.size)?;
        for (&chunk, data) in &self.chunks {
            if data.iter().any(|&b| b != 0) {
                let start = chunk * CHUNK;
                let n = (self.size - start).min(CHUNK) as usize;
                f.write_all_at(&data[..n], start)
                    .with_context(|| format!("writing {}", path.display()))?;
            }
        }
        Ok(())
    }
}

/// A flush entry reached while replaying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushPoint {
    /// Which flush: 0 for the log's first.
    pub ordinal: u64,
    /// The entry's index in the log.
    pub entry: u64,
}

/// Replays the log at `path` onto a zero image of `size` bytes, calling
/// `at_flush` at every flush entry with the image as of that flush (the
/// writes of every earlier entry applied; a flush entry's own data, a
/// pre-flush write, comes after). Stops early when `at_flush` breaks.
pub fn replay<F>(path: &Path, size: u64, at_flush: F) -> Result<()>
where
    F: FnMut(FlushPoint, &SparseImage) -> Result<ControlFlow<()>>,
{
    if is_empty(path)? {
        return Ok(());
    }
    replay_from(open(path)?, size, at_flush)
        .with_context(|| format!("replaying {}", path.display()))
}

/// [`replay`] from an open log.
pub fn replay_from<R, F>(mut log: LogReader<R>, size: u64, mut at_flush: F) -> Result<()>
where
    R: Read,
    F: FnMut(FlushPoint, &SparseImage) -> Result<ControlFlow<()>>,
{
    let sector = log.sup().sector_size as u64;
    let mut image = SparseImage::new(size);
    let mut data = Vec::new();
    let mut ordinal = 0;
    while let Some((i, e)) = log.next_entry(Some(&mut data))? {
        if e.is_flush() {
            let point = FlushPoint { ordinal, entry: i };
            ordinal += 1;
            if at_flush(point, &image)?.is_break() {
                return Ok(());
            }
        }
        let offset = e
            .sector
            .checked_mul(sector)
            .ok_or_else(|| anyhow!("log entry {i}: absurd sector"))?;
        if e.flags & DISCARD != 0 {
            image
                .zero(offset, e.nr_sectors.saturating_mul(sector))
                .with_context(|| format!("log entry {i} (discard)"))?;
        } else if !data.is_empty() {
            image
                .write(offset, &data)
                .with_context(|| format!("log entry {i} (write)"))?;
        }
    }
    Ok(())
}

/// Builds logs in memory, for tests.
#[cfg(test)]
pub mod build {
    use super::*;

    /// A log under construction.
    pub struct LogBuilder {
        sector: usize,
        entries: Vec<u8>,
        count: u64,
    }

    impl LogBuilder {
        /// An empty log with `sector`-byte sectors.
        pub fn new(sector: usize) -> Self {
            LogBuilder {
                sector,
                entries: Vec::new(),
                count: 0,
            }
        }

        fn entry(&mut self, sector: u64, nr: u64, flags: u64, text: &[u8], data: &[u8]) {
            let mut h = vec![0u8; self.sector];
            h[0..8].copy_from_slice(&sector.to_le_bytes());
            h[8..16].copy_from_slice(&nr.to_le_bytes());
            h[16..24].copy_from_slice(&flags.to_le_bytes());
            h[24..32].copy_from_slice(&(text.len() as u64).to_le_bytes());
            h[32..32 + text.len()].copy_from_slice(text);
            self.entries.extend(h);
            self.entries.extend(data);
            self.count += 1;
        }

        /// Writes `nr` sectors of `byte` at `sector`, with `flags`.
        pub fn fill(&mut self, sector: u64, nr: u64, byte: u8, flags: u64) -> &mut Self {
            let data = vec![byte; nr as usize * self.sector];
            self.entry(sector, nr, flags, b"", &data);
            self
        }

        /// A flush.
        pub fn flush(&mut self) -> &mut Self {
            self.entry(0, 0, FLUSH, b"", &[]);
            self
        }

        /// A discard of `nr` sectors at `sector`.
        pub fn discard(&mut self, sector: u64, nr: u64) -> &mut Self {
            self.entry(sector, nr, DISCARD, b"", &[]);
            self
        }

        /// A mark.
        pub fn mark(&mut self, text: &str) -> &mut Self {
            self.entry(0, 0, MARK, text.as_bytes(), &[]);
            self
        }

        /// The log, its superblock counting `count` entries (default all).
        pub fn bytes(&self, count: Option<u64>) -> Vec<u8> {
            let mut out = vec![0u8; self.sector];
            out[0..8].copy_from_slice(&MAGIC.to_le_bytes());
            out[8..16].copy_from_slice(&VERSION.to_le_bytes());
            out[16..24].copy_from_slice(&count.unwrap_or(self.count).to_le_bytes());
            out[24..28].copy_from_slice(&(self.sector as u32).to_le_bytes());
            out.extend(&self.entries);
            out
        }
    }
}

#[cfg(test)]
mod tests {
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
}
