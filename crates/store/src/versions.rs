//! Blocks of page versions: 1023 little-endian u32 versions, then a
//! CRC-32C of the first 4092 bytes. Two copies of the area, written one
//! after the other with a flush between, so a torn write damages at most
//! one. An all-zero block was never written: every version in it is 0.
//! The kernel reads one version with [`pick`] and [`version_at`] and
//! updates one with [`set_version`], without a 4 KiB array on its stack.

use crate::geometry::VERSIONS_PER_BLOCK;
use crate::{get32, put32, seal, sealed, Damaged, BLOCK};

const N: usize = VERSIONS_PER_BLOCK as usize;
const CRC_AT: usize = N * 4;

/// The block of the version area (relative to one copy's first block) and
/// the index in it of page `page_oid`'s version.
pub fn version_block_of(page_oid: u64) -> (u64, usize) {
    (
        page_oid / VERSIONS_PER_BLOCK,
        (page_oid % VERSIONS_PER_BLOCK) as usize,
    )
}

/// Encodes 1023 versions into `out` (one block).
pub fn encode_versions(v: &[u32; N], out: &mut [u8]) {
    let out = &mut out[..BLOCK];
    for (i, x) in v.iter().enumerate() {
        put32(out, i * 4, *x);
    }
    seal(out, CRC_AT);
}

/// What a version block holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// All zero: never written.
    Blank,
    /// Its CRC-32C matches.
    Valid,
    /// Anything else.
    Damaged,
}

/// Classifies a version block.
pub fn classify(block: &[u8]) -> Kind {
    let block = &block[..BLOCK];
    if block.iter().all(|&b| b == 0) {
        Kind::Blank
    } else if sealed(block, CRC_AT) {
        Kind::Valid
    } else {
        Kind::Damaged
    }
}

/// Decodes a version block (all zero: every version 0).
pub fn decode_versions(block: &[u8]) -> Result<[u32; N], Damaged> {
    match classify(block) {
        Kind::Damaged => Err(Damaged),
        _ => {
            let mut v = [0u32; N];
            for (i, x) in v.iter_mut().enumerate() {
                *x = get32(block, i * 4);
            }
            Ok(v)
        }
    }
}

/// Which copy to read: the first valid one (copy 0 preferred), `None` when
/// there is no valid one and copy 1 is blank (every version is 0), else
/// `Damaged`.
///
/// Unlike node records, a damaged copy 0 with a blank copy 1 means "never
/// migrated": copy 1 is written only after copy 0 is durable, so a blank
/// copy 1 means no migration of this block ever finished, and a torn first
/// write of copy 0 (a version block is eight sectors, not one) leaves
/// exactly this. Every version in it is then 0 at home; pages of the
/// block in an unmigrated checkpoint take their versions from its
/// directory.
pub fn pick(copy0: &[u8], copy1: &[u8]) -> Result<Option<u8>, Damaged> {
    match (classify(copy0), classify(copy1)) {
        (Kind::Valid, _) => Ok(Some(0)),
        (_, Kind::Valid) => Ok(Some(1)),
        (_, Kind::Blank) => Ok(None),
        (_, Kind::Damaged) => Err(Damaged),
    }
}

/// Version `index` of a block already checked (by [`pick`] or
/// [`classify`]), without decoding the rest.
pub fn version_at(block: &[u8], index: usize) -> u32 {
    assert!(index < N);
    get32(block, index * 4)
}

/// Sets version `index` of a block and reseals it (a blank block becomes
/// a valid one): for writing one page's version home without a 4 KiB array.
pub fn set_version(block: &mut [u8], index: usize, version: u32) {
    assert!(index < N);
    put32(block, index * 4, version);
    seal(block, CRC_AT);
}
