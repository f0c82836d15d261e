//! The node record: 512 bytes, the same in a node's two homes and in a
//! checkpoint.
//!
//! ```text
//! 0    magic "STETNODE"
//! 8    oid u64
//! 16   version u32
//! 20   zero u32
//! 24   calls u64 (the low 48 bits of the call count; the rest zero)
//! 32   16 keys of 16 bytes (w0, w1 little-endian; hints zero)
//! 288  zero
//! 508  CRC-32C of bytes 0..508
//! ```
//!
//! An all-zero record was never written: it is a node of version 0 with
//! void keys and no calls (the state of every node on a new disk).

use crate::geometry::NODE_RECORD;
use crate::{get32, get64, put32, put64, seal, sealed};
use stet_keys::{Key, CALL_COUNT_MASK, KEY_SIZE};

/// The node record's magic.
pub const MAGIC: [u8; 8] = *b"STETNODE";
/// Keys in a node.
pub const SLOTS: usize = 16;
const KEYS_AT: usize = 32;
const CRC_AT: usize = NODE_RECORD - 4;

/// A node as the disk holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeImage {
    /// The node's identity.
    pub oid: u64,
    /// Its version (keys with another version are void).
    pub version: u32,
    /// Its call count (48 bits are kept).
    pub calls: u64,
    /// Its slots.
    pub keys: [Key; SLOTS],
}

impl NodeImage {
    /// Node `oid` as a new disk holds it: version 0, void keys, no calls.
    pub fn zero(oid: u64) -> NodeImage {
        NodeImage {
            oid,
            version: 0,
            calls: 0,
            keys: [Key::VOID; SLOTS],
        }
    }
}

/// What a record slot holds.
// Only `Valid` carries data, and there is no heap to box it in (no_std).
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// All zero: never written (a zero node at version 0).
    Blank,
    /// A record that passed every check.
    Valid(NodeImage),
    /// Bad magic or CRC, the wrong oid, or impossible contents.
    Damaged,
}

/// Encodes `n` into `out[..512]`, with the keys' hints cleared and the
/// call count cut to 48 bits.
pub fn encode(n: &NodeImage, out: &mut [u8]) {
    let out = &mut out[..NODE_RECORD];
    out.fill(0);
    out[0..8].copy_from_slice(&MAGIC);
    put64(out, 8, n.oid);
    put32(out, 16, n.version);
    put64(out, 24, n.calls & CALL_COUNT_MASK);
    for (i, k) in n.keys.iter().enumerate() {
        let at = KEYS_AT + i * KEY_SIZE;
        out[at..at + KEY_SIZE].copy_from_slice(&k.canonical().to_bytes());
    }
    seal(out, CRC_AT);
}

/// Decodes the record in `b[..512]`, which must be node `expect_oid`'s.
pub fn decode(b: &[u8], expect_oid: u64) -> Record {
    let b = &b[..NODE_RECORD];
    if b.iter().all(|&x| x == 0) {
        return Record::Blank;
    }
    if b[0..8] != MAGIC
        || !sealed(b, CRC_AT)
        || get64(b, 8) != expect_oid
        || get32(b, 20) != 0
        || get64(b, 24) & !CALL_COUNT_MASK != 0
        || b[KEYS_AT + SLOTS * KEY_SIZE..CRC_AT]
            .iter()
            .any(|&x| x != 0)
    {
        return Record::Damaged;
    }
    let mut keys = [Key::VOID; SLOTS];
    for (i, k) in keys.iter_mut().enumerate() {
        let at = KEYS_AT + i * KEY_SIZE;
        let mut kb = [0u8; KEY_SIZE];
        kb.copy_from_slice(&b[at..at + KEY_SIZE]);
        match Key::from_bytes(&kb) {
            Some(key) if key == key.canonical() => *k = key,
            _ => return Record::Damaged,
        }
    }
    Record::Valid(NodeImage {
        oid: expect_oid,
        version: get32(b, 16),
        calls: get64(b, 24),
        keys,
    })
}

/// The node from its two home copies: the first valid one (copy 0
/// preferred); `Blank` if both are blank; otherwise `Damaged`.
pub fn pick(copy0: Record, copy1: Record) -> Record {
    match (copy0, copy1) {
        (Record::Valid(n), _) | (_, Record::Valid(n)) => Record::Valid(n),
        (Record::Blank, Record::Blank) => Record::Blank,
        _ => Record::Damaged,
    }
}
