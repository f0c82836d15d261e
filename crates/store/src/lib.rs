//! The single-level store's disk format (docs/STORE.md).
//!
//! The disk is an array of 4 KiB blocks:
//!
//! ```text
//! block 0, 1        root records A and B (the newer valid one wins)
//! node areas        every node's home, twice (copy 0 area, then copy 1 area)
//! version areas     every page's version, twice (copy 0, then copy 1)
//! page area         every page's home, one block per page
//! journal           a ring of two-block records (header, page)
//! log               the checkpoint being written or not yet migrated home
//! ```
//!
//! Object identities map directly to homes (oid = index in its area), so the
//! homes need no directory and the object space is the disk's capacity.
//!
//! * `geometry` — where every area is, and every object's home.
//! * `root` — the root record: encoding, CRC-32C, choosing between A and B.
//! * `node` — the 512-byte node record (homes and checkpoints alike).
//! * `versions` — blocks of page entries: versions and home checksums.
//! * `ckpt` — a checkpoint in the log: header, directory, node and page
//!   blocks, and the in-memory directory used to find objects in it.
//! * `journal` — journal records, the ring, its space, and the restart scan.
//! * `scrub` — the background check of the homes: which block comes next,
//!   what a pair of copies says, and how the good copy repairs the bad.
//!
//! Everything here is pure: the kernel does the I/O, these functions say
//! what the bytes are and whether they can be trusted.
#![no_std]

pub mod ckpt;
pub mod geometry;
pub mod journal;
pub mod kstate;
pub mod node;
pub mod root;
pub mod scrub;
pub mod versions;

#[cfg(test)]
extern crate std;
#[cfg(test)]
mod tests;

/// Bytes in a disk block.
pub const BLOCK: usize = 4096;

/// Format version of every record in the store (roots, checkpoint
/// headers). 3: page homes carry checksums (in the version blocks), journal
/// records the newest committed checkpoint, and roots that change the
/// state are written to both blocks (docs/STORE.md). A disk of another
/// format is refused as a whole, never read as this one.
pub const FORMAT: u32 = 3;

/// A record that failed its checks (bad magic, checksum or contents).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Damaged;

/// CRC-32C with a slice-by-16 table built at compile time.
static CASTAGNOLI: crc::Crc<u32, crc::Table<16>> =
    crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISCSI);

/// CRC-32C (Castagnoli), as used for every checksum in the store.
pub fn crc32c(bytes: &[u8]) -> u32 {
    CASTAGNOLI.checksum(bytes)
}

pub(crate) fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

pub(crate) fn get64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

pub(crate) fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

pub(crate) fn get32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

/// Writes the CRC-32C of `b[..at]` at `b[at..at + 4]`.
pub(crate) fn seal(b: &mut [u8], at: usize) {
    let crc = crc32c(&b[..at]);
    put32(b, at, crc);
}

/// Whether `b[at..at + 4]` holds the CRC-32C of `b[..at]`.
pub(crate) fn sealed(b: &[u8], at: usize) -> bool {
    crc32c(&b[..at]) == get32(b, at)
}
