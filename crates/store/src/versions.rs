//! Blocks of page records: 511 entries of 8 bytes — a page's version
//! (u32) and the CRC-32C of the contents of its home block (u32) — then
//! four zero bytes, then a CRC-32C of the first 4092 bytes. Two copies of
//! the area, written one after the other with a flush between, so a torn
//! write damages at most one. An all-zero block was never written: every
//! entry in it is [`Entry::NEVER`].
//!
//! The checksum is what makes a page's home trustworthy: every read of a
//! page from its home is checked against it ([`Entry::judge`]), so a
//! damaged home block is reported, never used. It lives here, beside the
//! version, because the kernel reads the version block anyway to fault a
//! page in (no extra disk read), and because the version block has two
//! copies and its own checksum (a damaged entry is survived like a damaged
//! version). The kernel reads one entry with [`pick`] and [`entry_at`] and
//! updates one with [`set_entry`], without a 4 KiB array on its stack.

use crate::geometry::VERSIONS_PER_BLOCK;
use crate::{get32, put32, seal, sealed, Damaged, BLOCK};

const N: usize = VERSIONS_PER_BLOCK as usize;
/// Bytes of an entry.
pub const ENTRY: usize = 8;
const CRC_AT: usize = BLOCK - 4;

/// One page's record at home: its version and its home block's checksum.
/// Make one with [`Entry::new`] or [`Entry::of`]: the checksum field is
/// never 0 for a page written home (a CRC of 0 is kept as 1), so the
/// all-zero entry unambiguously means "never written" and such a page is
/// not read at all.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Entry {
    /// The page's version (keys with another version are void).
    pub version: u32,
    /// CRC-32C of the page's 4096 bytes as written home (1 for a CRC of
    /// 0).
    pub crc: u32,
}

/// The checksum field for a CRC: 0 is reserved for pages never written.
fn field(crc: u32) -> u32 {
    if crc == 0 {
        1
    } else {
        crc
    }
}

/// What a page's home block holds, judged against its [`Entry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Home {
    /// The contents written home: use them.
    Use,
    /// The page was never written home: it is a zero page (whatever the
    /// block holds is not a page's).
    Zero,
    /// The block does not hold what was written: damaged, never used.
    Damaged,
}

impl Entry {
    /// The entry of a page never written home (all of a blank block's).
    pub const NEVER: Entry = Entry { version: 0, crc: 0 };

    /// The entry of a page whose entry was lost (a migration found both
    /// copies of its version block damaged and rebuilt the block): its
    /// home is never trusted again until a checkpoint writes it. (A page
    /// really written at version `u32::MAX` with this checksum would be
    /// refused too: a one-in-2^32 chance on a version no page reaches.)
    pub const LOST: Entry = Entry {
        version: u32::MAX,
        crc: u32::MAX,
    };

    /// The entry of a page written home at `version` whose contents have
    /// the CRC-32C `crc`.
    pub fn new(version: u32, crc: u32) -> Entry {
        Entry {
            version,
            crc: field(crc),
        }
    }

    /// The entry for `data` written home at `version`.
    pub fn of(version: u32, data: &[u8]) -> Entry {
        Entry::new(version, crate::crc32c(&data[..BLOCK]))
    }

    /// Whether the page was never written home: it is a zero page of
    /// version 0, and its home block need not be read.
    pub fn never_written(&self) -> bool {
        *self == Entry::NEVER
    }

    /// What a home block whose CRC-32C is `home_crc` holds.
    pub fn judge(&self, home_crc: u32) -> Home {
        if self.never_written() {
            Home::Zero
        } else if *self != Entry::LOST && field(home_crc) == self.crc {
            Home::Use
        } else {
            Home::Damaged
        }
    }
}

/// The block of the version area (relative to one copy's first block) and
/// the index in it of page `page_oid`'s entry.
pub fn version_block_of(page_oid: u64) -> (u64, usize) {
    (
        page_oid / VERSIONS_PER_BLOCK,
        (page_oid % VERSIONS_PER_BLOCK) as usize,
    )
}

/// Encodes 511 entries into `out` (one block).
pub fn encode_entries(v: &[Entry; N], out: &mut [u8]) {
    let out = &mut out[..BLOCK];
    out.fill(0);
    for (i, e) in v.iter().enumerate() {
        put32(out, i * ENTRY, e.version);
        put32(out, i * ENTRY + 4, e.crc);
    }
    seal(out, CRC_AT);
}

/// What a version block holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// All zero: never written.
    Blank,
    /// Its CRC-32C matches and its unused bytes are zero.
    Valid,
    /// Anything else.
    Damaged,
}

/// Classifies a version block.
pub fn classify(block: &[u8]) -> Kind {
    let block = &block[..BLOCK];
    if block.iter().all(|&b| b == 0) {
        Kind::Blank
    } else if sealed(block, CRC_AT) && block[N * ENTRY..CRC_AT].iter().all(|&b| b == 0) {
        Kind::Valid
    } else {
        Kind::Damaged
    }
}

/// Decodes a version block (all zero: every entry [`Entry::NEVER`]).
pub fn decode_entries(block: &[u8]) -> Result<[Entry; N], Damaged> {
    match classify(block) {
        Kind::Damaged => Err(Damaged),
        _ => {
            let mut v = [Entry::NEVER; N];
            for (i, e) in v.iter_mut().enumerate() {
                *e = entry_at(block, i);
            }
            Ok(v)
        }
    }
}

/// Which copy to read: the first valid one (copy 0 preferred), `None` when
/// there is no valid one and copy 1 is blank (every entry is
/// [`Entry::NEVER`]), else `Damaged`.
///
/// Unlike node records, a damaged copy 0 with a blank copy 1 means "never
/// migrated": copy 1 is written only after copy 0 is durable, so a blank
/// copy 1 means no migration of this block ever finished, and a torn first
/// write of copy 0 (a version block is eight sectors, not one) leaves
/// exactly this. No page of the block is then at home; pages of the block
/// in an unmigrated checkpoint take their versions from its directory.
pub fn pick(copy0: &[u8], copy1: &[u8]) -> Result<Option<u8>, Damaged> {
    match (classify(copy0), classify(copy1)) {
        (Kind::Valid, _) => Ok(Some(0)),
        (_, Kind::Valid) => Ok(Some(1)),
        (_, Kind::Blank) => Ok(None),
        (_, Kind::Damaged) => Err(Damaged),
    }
}

/// Entry `index` of a block already checked (by [`pick`] or [`classify`]),
/// without decoding the rest.
pub fn entry_at(block: &[u8], index: usize) -> Entry {
    assert!(index < N);
    Entry {
        version: get32(block, index * ENTRY),
        crc: get32(block, index * ENTRY + 4),
    }
}

/// Sets entry `index` of a block and reseals it (a blank block becomes a
/// valid one): for writing one page's entry home without a 4 KiB array.
pub fn set_entry(block: &mut [u8], index: usize, e: Entry) {
    set_entries(block, core::iter::once((index, e)));
}

/// Sets the entries `(index, entry)` of a block and reseals it once.
pub fn set_entries(block: &mut [u8], entries: impl Iterator<Item = (usize, Entry)>) {
    for (index, e) in entries {
        assert!(index < N);
        put32(block, index * ENTRY, e.version);
        put32(block, index * ENTRY + 4, e.crc);
    }
    seal(block, CRC_AT);
}
