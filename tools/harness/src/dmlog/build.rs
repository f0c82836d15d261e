//! Builds dm-log-writes logs in memory, for tests.

use super::{DISCARD, FLUSH, MAGIC, MARK, VERSION};

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
