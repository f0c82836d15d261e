//! Root records. Two live at blocks 0 and 1; each root write goes to the
//! block the current root is not in, and only after a flush of everything
//! it points to. At boot the newer *valid* one wins: a torn or corrupt root
//! (bad magic, bad CRC-32C, impossible fields) is ignored, so a crash while
//! writing a root leaves the previous one in charge.
//!
//! ```text
//! 0   magic "STETROOT"     8   format u32 (3)     12  zero u32
//! 16  generation u64
//! 24  geometry: total, nodes, node_area, node_blocks, pages, version_area,
//!     version_blocks, page_area, journal_start, journal_blocks, log_start,
//!     log_blocks (12 u64, to byte 120)
//! 120 ckpt_generation u64  128 ckpt_start u64     136 ckpt_blocks u64
//! 144 migrated u64 (0, 1)  152 journal_head u64   160 journal_seq u64
//! 168 restarts u64         176..252 zero          252 CRC-32C of 0..252
//! ```

use crate::geometry::Geometry;
use crate::{get32, get64, put32, put64, seal, sealed};

/// The root record's magic.
pub const MAGIC: [u8; 8] = *b"STETROOT";
/// Format version.
pub const FORMAT: u32 = crate::FORMAT;
/// Bytes of an encoded root (the rest of the block is zero).
pub const ROOT_LEN: usize = 256;
const CRC_AT: usize = ROOT_LEN - 4;
const FIELDS_END: usize = 176;

/// The committed state of the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Root {
    /// Root write counter: +1 on every root write; the newer root has the
    /// larger one.
    pub generation: u64,
    /// The disk's layout.
    pub geometry: Geometry,
    /// The last committed checkpoint's number (0: none yet); never more
    /// than `generation` (see [`Root::next_ckpt_generation`]).
    pub ckpt_generation: u64,
    /// Its first block (absolute, in the log).
    pub ckpt_start: u64,
    /// Its length in blocks (0: none yet).
    pub ckpt_blocks: u64,
    /// Whether it has been copied to the objects' homes (then the log is
    /// not needed; always true when there is no checkpoint).
    pub migrated: bool,
    /// First block (absolute, in the journal ring) of the journal records
    /// that apply on top of the checkpoint.
    pub journal_head: u64,
    /// The sequence number expected there.
    pub journal_seq: u64,
    /// Boots from this store (informational; journal records carry it).
    pub restarts: u64,
}

/// Why a root record was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootError {
    /// Wrong magic (never written, or not a Stet disk).
    Magic,
    /// Another format version (this one: an older store's, or a newer
    /// kernel's).
    Format(u32),
    /// The checksum does not match (torn or damaged).
    Checksum,
    /// Fields that cannot describe this disk.
    Geometry,
}

impl Root {
    /// The root of a new store on a disk of geometry `g`: generation 0, no
    /// checkpoint, an empty journal at the ring's start. Write it to block
    /// `block_for(0)` (and zero the other root block).
    pub fn fresh(g: Geometry) -> Root {
        Root {
            generation: 0,
            geometry: g,
            ckpt_generation: 0,
            ckpt_start: g.log_start,
            ckpt_blocks: 0,
            migrated: true,
            journal_head: g.journal_start,
            journal_seq: 0,
            restarts: 0,
        }
    }

    /// The number of a checkpoint whose snapshot is taken now, when `self`
    /// is the newest root written (and flushed): one more than its
    /// generation. Checkpoint numbers thus never repeat, even when a crash
    /// loses a checkpoint before its root (the boot's root write advances
    /// the generation past any number used before the crash), which is
    /// what lets the journal scan refuse a record left over from a lost
    /// checkpoint (see `journal::Scan`). They are increasing, not dense.
    pub fn next_ckpt_generation(&self) -> u64 {
        self.generation + 1
    }

    /// Whether recovery must read the checkpoint from the log (it is
    /// committed but not migrated home).
    pub fn needs_log(&self) -> bool {
        !self.migrated && self.ckpt_blocks > 0
    }

    /// The encoded record (`ROOT_LEN` bytes; the CRC covers the rest).
    pub fn encode(&self) -> [u8; ROOT_LEN] {
        let mut b = [0u8; ROOT_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        put32(&mut b, 8, FORMAT);
        put64(&mut b, 16, self.generation);
        let g = &self.geometry;
        for (i, v) in [
            g.total,
            g.nodes,
            g.node_area,
            g.node_blocks,
            g.pages,
            g.version_area,
            g.version_blocks,
            g.page_area,
            g.journal_start,
            g.journal_blocks,
            g.log_start,
            g.log_blocks,
        ]
        .iter()
        .enumerate()
        {
            put64(&mut b, 24 + 8 * i, *v);
        }
        for (i, v) in [
            self.ckpt_generation,
            self.ckpt_start,
            self.ckpt_blocks,
            self.migrated as u64,
            self.journal_head,
            self.journal_seq,
            self.restarts,
        ]
        .iter()
        .enumerate()
        {
            put64(&mut b, 120 + 8 * i, *v);
        }
        seal(&mut b, CRC_AT);
        b
    }

    /// Decodes and checks a record read from disk (at least `ROOT_LEN`
    /// bytes), for a disk of `disk_blocks` blocks.
    pub fn decode(b: &[u8], disk_blocks: u64) -> Result<Root, RootError> {
        if b.len() < ROOT_LEN || b[0..8] != MAGIC {
            return Err(RootError::Magic);
        }
        if !sealed(b, CRC_AT) {
            return Err(RootError::Checksum);
        }
        if get32(b, 8) != FORMAT {
            return Err(RootError::Format(get32(b, 8)));
        }
        let f = |i: usize| get64(b, 24 + 8 * i);
        let geometry = Geometry {
            total: f(0),
            nodes: f(1),
            node_area: f(2),
            node_blocks: f(3),
            pages: f(4),
            version_area: f(5),
            version_blocks: f(6),
            page_area: f(7),
            journal_start: f(8),
            journal_blocks: f(9),
            log_start: f(10),
            log_blocks: f(11),
        };
        let r = Root {
            generation: get64(b, 16),
            geometry,
            ckpt_generation: get64(b, 120),
            ckpt_start: get64(b, 128),
            ckpt_blocks: get64(b, 136),
            migrated: get64(b, 144) != 0,
            journal_head: get64(b, 152),
            journal_seq: get64(b, 160),
            restarts: get64(b, 168),
        };
        let ckpt_in_log = r.ckpt_start >= geometry.log_start
            && r.ckpt_start < geometry.total
            && r.ckpt_blocks <= geometry.total - r.ckpt_start;
        if get32(b, 12) != 0
            || b[FIELDS_END..CRC_AT].iter().any(|&x| x != 0)
            || !geometry.is_sane()
            || geometry.total != disk_blocks
            || get64(b, 144) > 1
            || !ckpt_in_log
            || (r.ckpt_blocks == 0 && !r.migrated)
            || r.ckpt_generation > r.generation
            || !geometry.journal_ring().is_record(r.journal_head)
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
    let r = Roots::read(a, b, disk_blocks);
    match (r.newest, r.refused) {
        (Some(n), _) => Ok(n),
        (None, [Some(e), Some(f)]) => Err([e, f]),
        // A valid root is never missing from `newest`.
        (None, _) => Err([RootError::Magic; 2]),
    }
}

/// Both root blocks judged: the valid roots, newest first.
///
/// A restart uses `newest`. If its state cannot be opened (the header,
/// directory or kernel state page of its unmigrated checkpoint is damaged,
/// or its kernel state page is damaged at home), it may use `other`
/// instead, which always names a state whose objects are intact on disk,
/// because the kernel writes every root that changes the state twice, once
/// to each block, with a flush after each, and starts what destroys the
/// previous state only once both blocks name the new one (docs/STORE.md,
/// "The write protocol"):
///
/// * migration overwrites the homes only after both blocks name the
///   committed checkpoint, so while a root older than a checkpoint's commit
///   root is on disk, the homes hold exactly what that older root names;
/// * a new checkpoint writes the log only after both blocks say the last
///   one has migrated, so a root that names a checkpoint in the log is on
///   disk only while that log is intact;
/// * a boot writes one root, naming the state it restarted from, into the
///   block not holding that state's root.
///
/// So `other` names either the same state as `newest` (possibly read from
/// the log rather than the homes) or the state just before it, whose
/// objects nothing has overwritten yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Roots {
    /// The valid root with the larger generation, and its block.
    pub newest: Option<(u8, Root)>,
    /// The other valid root, if both are valid, and its block.
    pub other: Option<(u8, Root)>,
    /// Why block 0 and block 1 were refused (`None`: valid).
    pub refused: [Option<RootError>; 2],
}

impl Roots {
    /// Judges the contents of blocks 0 and 1 of a disk of `disk_blocks`.
    pub fn read(a: &[u8], b: &[u8], disk_blocks: u64) -> Roots {
        let (x, y) = (Root::decode(a, disk_blocks), Root::decode(b, disk_blocks));
        let refused = [x.err(), y.err()];
        let (newest, other) = match (x, y) {
            (Ok(x), Ok(y)) if y.generation > x.generation => (Some((1, y)), Some((0, x))),
            (Ok(x), Ok(y)) => (Some((0, x)), Some((1, y))),
            (Ok(x), Err(_)) => (Some((0, x)), None),
            (Err(_), Ok(y)) => (Some((1, y)), None),
            (Err(_), Err(_)) => (None, None),
        };
        Roots {
            newest,
            other,
            refused,
        }
    }

    /// The format both blocks hold, when neither is valid and both carry
    /// the root magic with the same other format: a store written by
    /// another version of the kernel, refused as a whole.
    pub fn other_format(&self) -> Option<u32> {
        match self.refused {
            [Some(RootError::Format(a)), Some(RootError::Format(b))] if a == b => Some(a),
            [Some(RootError::Format(a)), Some(RootError::Magic)]
            | [Some(RootError::Magic), Some(RootError::Format(a))] => Some(a),
            _ => None,
        }
    }
}

/// The format number of a root block that carries the root magic (`None`:
/// not a root record at all), whatever its checksum: how a tool recognises
/// a store of another format.
pub fn format_of(b: &[u8]) -> Option<u32> {
    (b.len() >= ROOT_LEN && b[0..8] == MAGIC).then(|| get32(b, 8))
}

/// The block a root of generation `g` is written to: the one the previous
/// generation did not use, so the last durable root is never overwritten.
pub fn block_for(generation: u64) -> u64 {
    generation % 2
}
