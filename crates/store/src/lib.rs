//! The single-level store's disk format (issue #4; docs/STORE.md).
//!
//! The disk is an array of 4 KiB blocks:
//!
//! ```text
//! block 0, 1      root records A and B (the newer valid one wins)
//! node areas      every node's home, twice (copy 0 area, then copy 1 area)
//! page area       every page's home, one block per page
//! log             the checkpoint log (a ring)
//! ```
//!
//! Object identities map directly to homes (oid = index in its area), so no
//! directory is needed and the object space is the disk's capacity.
//!
//! * `geometry` — where every area is, and every object's home.
//! * `root` — the root record: encoding, CRC-32C, choosing between A and B.
//! * `log` — reserving checkpoint space so a started checkpoint can always
//!   finish without overwriting the last committed one.
#![no_std]
#![deny(unsafe_code)]

pub mod geometry;
pub mod kstate;
pub mod log;
pub mod root;

#[cfg(test)]
mod tests;

/// Bytes in a disk block.
pub const BLOCK: usize = 4096;

/// CRC-32C (Castagnoli), as used for every checksum in the store.
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc::Crc::<u32>::new(&crc::CRC_32_ISCSI).checksum(bytes)
}
