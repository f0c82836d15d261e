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

#[cfg(test)]
pub mod build;

#[cfg(test)]
mod tests;
