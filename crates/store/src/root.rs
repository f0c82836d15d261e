//! Root records. Two live at blocks 0 and 1; each commit writes the older
//! one, last, after a flush of everything it points to. At boot the newer
//! *valid* one wins: a torn or corrupt root (bad magic, bad CRC-32C,
//! impossible geometry) is ignored, so a crash while writing a root leaves
//! the previous one in charge.

use crate::crc32c;
use crate::geometry::Geometry;

/// The root record's magic.
pub const MAGIC: [u8; 8] = *b"STETROOT";
/// Format version.
pub const FORMAT: u32 = 1;
/// Bytes of an encoded root (the rest of the block is zero).
pub const ROOT_LEN: usize = 128;

/// The committed state of the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Root {
    /// Commit counter: the newer root has the larger one.
    pub generation: u64,
    /// The disk's layout.
    pub geometry: Geometry,
    /// First log block of the last committed checkpoint.
    pub ckpt_start: u64,
    /// Its length in blocks (0: none yet).
    pub ckpt_blocks: u64,
    /// Whether it has been copied to the objects' homes.
    pub migrated: bool,
    /// First log block of journal records newer than the checkpoint.
    pub journal_start: u64,
}

/// Why a root record was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootError {
    /// Wrong magic (never written, or not a Stet disk).
    Magic,
    /// Unknown format version.
    Format,
    /// The checksum does not match (torn or damaged).
    Checksum,
    /// Fields that cannot describe this disk.
    Geometry,
}

fn put(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

impl Root {
    /// The encoded record (`ROOT_LEN` bytes; the CRC covers the rest).
    pub fn encode(&self) -> [u8; ROOT_LEN] {
        let mut b = [0u8; ROOT_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&FORMAT.to_le_bytes());
        put(&mut b, 16, self.generation);
        let g = &self.geometry;
        for (i, v) in [
            g.total,
            g.nodes,
            g.node_area,
            g.node_blocks,
            g.pages,
            g.page_area,
            g.log_start,
            g.log_blocks,
        ]
        .iter()
        .enumerate()
        {
            put(&mut b, 24 + 8 * i, *v);
        }
        put(&mut b, 88, self.ckpt_start);
        put(&mut b, 96, self.ckpt_blocks);
        put(&mut b, 104, self.migrated as u64);
        put(&mut b, 112, self.journal_start);
        let crc = crc32c(&b[..ROOT_LEN - 4]);
        b[ROOT_LEN - 4..].copy_from_slice(&crc.to_le_bytes());
        b
    }

    /// Decodes and checks a record read from disk (at least `ROOT_LEN`
    /// bytes), for a disk of `disk_blocks` blocks.
    pub fn decode(b: &[u8], disk_blocks: u64) -> Result<Root, RootError> {
        if b.len() < ROOT_LEN || b[0..8] != MAGIC {
            return Err(RootError::Magic);
        }
        let crc = u32::from_le_bytes([b[124], b[125], b[126], b[127]]);
        if crc32c(&b[..ROOT_LEN - 4]) != crc {
            return Err(RootError::Checksum);
        }
        if u32::from_le_bytes([b[8], b[9], b[10], b[11]]) != FORMAT {
            return Err(RootError::Format);
        }
        let geometry = Geometry {
            total: get(b, 24),
            nodes: get(b, 32),
            node_area: get(b, 40),
            node_blocks: get(b, 48),
            pages: get(b, 56),
            page_area: get(b, 64),
            log_start: get(b, 72),
            log_blocks: get(b, 80),
        };
        let r = Root {
            generation: get(b, 16),
            geometry,
            ckpt_start: get(b, 88),
            ckpt_blocks: get(b, 96),
            migrated: get(b, 104) != 0,
            journal_start: get(b, 112),
        };
        let in_log = |start: u64, len: u64| {
            len <= geometry.log_blocks && (start >= geometry.log_start && start < geometry.total)
        };
        if !geometry.is_sane()
            || geometry.total != disk_blocks
            || get(b, 104) > 1
            || !in_log(r.ckpt_start, r.ckpt_blocks)
            || !in_log(r.journal_start, 0)
        {
            return Err(RootError::Geometry);
        }
        Ok(r)
    }
}

/// Which root record to use, given the contents of blocks 0 and 1: the
/// valid one with the larger generation (A on a tie, which a correct writer
/// never produces). `Err` carries why each was refused.
pub fn choose(a: &[u8], b: &[u8], disk_blocks: u64) -> Result<(u8, Root), [RootError; 2]> {
    match (Root::decode(a, disk_blocks), Root::decode(b, disk_blocks)) {
        (Ok(x), Ok(y)) => Ok(if y.generation > x.generation {
            (1, y)
        } else {
            (0, x)
        }),
        (Ok(x), Err(_)) => Ok((0, x)),
        (Err(_), Ok(y)) => Ok((1, y)),
        (Err(e), Err(f)) => Err([e, f]),
    }
}

/// The block a commit of generation `g` writes: the one the previous
/// generation did not, so the last committed root is never overwritten.
pub fn block_for(generation: u64) -> u64 {
    generation % 2
}
