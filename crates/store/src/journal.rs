//! The journal: pages committed synchronously between checkpoints.
//!
//! A record is two blocks of the journal ring: a header block, then the
//! page's 4096 bytes. Records sit at even offsets from the ring's start and
//! never straddle its end. Each has a sequence number one more than the
//! previous record's; the root names where the records that apply on top of
//! its checkpoint begin (`journal_head`) and the sequence number expected
//! there (`journal_seq`).
//!
//! Header block:
//!
//! ```text
//! 0  magic "STETJRNL"     8  seq u64          16 base_generation u64
//! 24 page oid u64         32 page version u32 36 data CRC-32C u32
//! 40 boot u64             48 committed u64    56 CRC-32C of bytes 0..56;
//!                                                the rest zero
//! ```
//!
//! `base_generation` is the number of the newest checkpoint whose snapshot
//! was taken before the record was written (committed or not; after a
//! restart, the root's `ckpt_generation`); `boot` is the root's `restarts`
//! count of the boot that wrote it; `committed` is the number of the newest
//! checkpoint whose commit root was durable when it was written (see
//! [`Scan`] for why all three).

use crate::{get32, get64, put32, put64, sealed, Damaged, BLOCK};
use stet_keys::MAX_OID;

/// The journal header's magic.
pub const MAGIC: [u8; 8] = *b"STETJRNL";
/// Bytes of the encoded header.
pub const HEADER_LEN: usize = 60;
const CRC_AT: usize = HEADER_LEN - 4;
/// Blocks per record.
pub const RECORD_BLOCKS: u64 = 2;

/// A journal record's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Sequence number.
    pub seq: u64,
    /// The newest checkpoint whose snapshot preceded this record.
    pub base_generation: u64,
    /// The boot that wrote it (the root's `restarts` in that boot).
    pub boot: u64,
    /// The newest checkpoint committed (its commit root durable) when it
    /// was written.
    pub committed: u64,
    /// The page.
    pub oid: u64,
    /// Its version.
    pub version: u32,
    /// CRC-32C of its 4096 bytes.
    pub data_crc: u32,
}

/// Encodes a header into `out` (one block: the rest is zeroed).
pub fn encode_header(h: &Header, out: &mut [u8]) {
    encode_header_with(h, out, crate::crc32c);
}

/// [`encode_header`] with the caller's CRC-32C (`crc` must compute exactly
/// [`crate::crc32c`]): the kernel seals journal records with the CPU's
/// `crc32` instruction, which the table this crate uses cannot match for
/// speed on the journal's critical path.
pub fn encode_header_with(h: &Header, out: &mut [u8], crc: impl FnOnce(&[u8]) -> u32) {
    let out = &mut out[..BLOCK];
    out.fill(0);
    out[0..8].copy_from_slice(&MAGIC);
    put64(out, 8, h.seq);
    put64(out, 16, h.base_generation);
    put64(out, 24, h.oid);
    put32(out, 32, h.version);
    put32(out, 36, h.data_crc);
    put64(out, 40, h.boot);
    put64(out, 48, h.committed);
    let c = crc(&out[..CRC_AT]);
    put32(out, CRC_AT, c);
}

/// Decodes and checks a header block (magic, CRC-32C, oid in range).
pub fn decode_header(b: &[u8]) -> Result<Header, Damaged> {
    if b.len() < HEADER_LEN || b[0..8] != MAGIC || !sealed(b, CRC_AT) {
        return Err(Damaged);
    }
    let h = Header {
        seq: get64(b, 8),
        base_generation: get64(b, 16),
        oid: get64(b, 24),
        version: get32(b, 32),
        data_crc: get32(b, 36),
        boot: get64(b, 40),
        committed: get64(b, 48),
    };
    if h.oid > MAX_OID {
        return Err(Damaged);
    }
    Ok(h)
}

/// The journal's ring of blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ring {
    /// First block.
    pub start: u64,
    /// Blocks.
    pub blocks: u64,
}

impl Ring {
    /// Records the ring holds.
    pub fn slots(&self) -> u64 {
        self.blocks / RECORD_BLOCKS
    }

    /// Whether a record can start at block `pos`.
    pub fn is_record(&self, pos: u64) -> bool {
        pos >= self.start
            && (pos - self.start).is_multiple_of(RECORD_BLOCKS)
            && (pos - self.start) / RECORD_BLOCKS < self.slots()
    }

    /// Where the record after the one at `pos` goes: the next two blocks,
    /// or the ring's start when fewer than two remain.
    pub fn next(&self, pos: u64) -> u64 {
        let n = pos + RECORD_BLOCKS;
        if n + RECORD_BLOCKS > self.start + self.blocks {
            self.start
        } else {
            n
        }
    }

    /// The position `k` records after `pos`.
    pub fn advance(&self, pos: u64, k: u64) -> u64 {
        let slot = (pos - self.start) / RECORD_BLOCKS;
        self.start + (slot + k % self.slots()) % self.slots() * RECORD_BLOCKS
    }
}

/// The journal has no room: a checkpoint must commit first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Full;

/// A committed checkpoint named a journal position that does not hold the
/// record with the given sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotInJournal;

/// The journal's space: records from `head` (the first one the committed
/// root needs) up to `tail` (where the next goes) are live and must not be
/// overwritten. The kernel forces a checkpoint before the ring fills.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Journal {
    ring: Ring,
    head: u64,
    head_seq: u64,
    tail: u64,
    tail_seq: u64,
}

impl Journal {
    /// An empty journal whose next record goes at `head` with `seq` (a
    /// committed root's `journal_head` and `journal_seq`).
    pub fn new(ring: Ring, head: u64, seq: u64) -> Journal {
        Journal::recovered(ring, head, seq, 0)
    }

    /// The journal after a restart found `records` records to apply from
    /// `head` (they stay live until a checkpoint commits past them).
    pub fn recovered(ring: Ring, head: u64, seq: u64, records: u64) -> Journal {
        assert!(ring.is_record(head) && records <= ring.slots());
        Journal {
            ring,
            head,
            head_seq: seq,
            tail: ring.advance(head, records),
            tail_seq: seq + records,
        }
    }

    /// The ring.
    pub fn ring(&self) -> Ring {
        self.ring
    }

    /// The first live record's position and sequence number.
    pub fn head(&self) -> (u64, u64) {
        (self.head, self.head_seq)
    }

    /// Where the next record goes and its sequence number: what a
    /// checkpoint's root records when its snapshot is taken.
    pub fn tail(&self) -> (u64, u64) {
        (self.tail, self.tail_seq)
    }

    /// Live records.
    pub fn live(&self) -> u64 {
        self.tail_seq - self.head_seq
    }

    /// Records that can be appended before a checkpoint must commit.
    pub fn space_left(&self) -> u64 {
        self.ring.slots() - self.live()
    }

    /// Takes the next record's place: `(position, sequence number)`.
    pub fn append(&mut self) -> Result<(u64, u64), Full> {
        if self.space_left() == 0 {
            return Err(Full);
        }
        let at = (self.tail, self.tail_seq);
        self.tail = self.ring.next(self.tail);
        self.tail_seq += 1;
        Ok(at)
    }

    /// A checkpoint whose root names `(new_head, new_seq)` is durable: the
    /// records before it are free. The position must be a live record's or
    /// the tail.
    pub fn checkpoint_committed(
        &mut self,
        new_head: u64,
        new_seq: u64,
    ) -> Result<(), NotInJournal> {
        if new_seq < self.head_seq
            || new_seq > self.tail_seq
            || self.ring.advance(self.head, new_seq - self.head_seq) != new_head
        {
            return Err(NotInJournal);
        }
        self.head = new_head;
        self.head_seq = new_seq;
        Ok(())
    }
}

/// The restart scan: which journal records apply on top of the committed
/// checkpoint, in order. From the root's `journal_head`, each record must
/// have
///
/// * a valid header (magic, CRC-32C),
/// * the next sequence number (`journal_seq`, then one more each time),
/// * `base_generation >= ckpt_generation` (written after the snapshot),
/// * `committed <= ckpt_generation` (written before any later checkpoint
///   committed),
/// * a `boot` no smaller than the previous record's, and
/// * page data matching the header's CRC-32C;
///
/// the first record that fails any of these ends the journal. A record
/// whose page fails its CRC, or whose header is unreadable while the next
/// slot holds the next record, ends it too, but is reported
/// ([`ScanEnd::damaged`]): the restart must not use the damage silently.
///
/// Sequence numbers alone are not enough, because a crash can lose a
/// record and keep the next one (both unacknowledged), and the next boot
/// reuses the lost record's place and number:
///
/// * `base_generation` refuses, at the head, a record written after the
///   snapshot of a checkpoint that the crash lost (its root never became
///   durable): checkpoint numbers never repeat
///   ([`crate::root::Root::next_ckpt_generation`]), so its base is smaller
///   than the number of any checkpoint committed after the restart.
/// * `boot` refuses such a record after a record of a later boot: the
///   kernel writes a root with `restarts` + 1 before its first journal
///   record of a boot, so every record of a later boot has a larger
///   `boot`, and within one boot a number is never written twice.
///
/// `committed` matters only when a restart falls back to an older root
/// because the newest is damaged (docs/STORE.md, "Damage"): a record
/// written after a later checkpoint committed belongs to that checkpoint's
/// world (its writer may have seen the commit: a `TAKE` answered), so it
/// is not applied on top of the older one. A record written before that
/// commit is, exactly as a crash just before the commit would have left
/// it. With the newest root, every record from its head passes: the
/// kernel's count of committed checkpoints never runs ahead of the newest
/// durable root.
#[derive(Clone, Copy, Debug)]
pub struct Scan {
    ring: Ring,
    pos: u64,
    seq: u64,
    ckpt_generation: u64,
    last_boot: u64,
    found: u64,
    done: bool,
    damaged: Option<Damage>,
}

/// Where a scan ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanEnd {
    /// Where the next record goes.
    pub pos: u64,
    /// Its sequence number.
    pub seq: u64,
    /// Records found (to apply).
    pub records: u64,
    /// The journal ended on a record that looks damaged, not at its end:
    /// the restart must say so (nothing from it on is applied).
    pub damaged: Option<Damage>,
}

/// A journal record the scan stopped at that was written but does not
/// read back whole. Damage, or writes a power failure cut short (an
/// unacknowledged record): a scan cannot tell them apart, so it reports
/// both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Damage {
    /// Its header is sound and names the record expected, but its page
    /// fails the header's CRC-32C.
    Data,
    /// Its header fails its own CRC-32C (or magic), and the next slot
    /// holds the record after it: the journal went on past it.
    Header {
        /// The sequence number of the record found after it.
        next_seq: u64,
    },
}

impl Scan {
    /// A scan from a root's `journal_head`, `journal_seq` and
    /// `ckpt_generation`.
    pub fn new(ring: Ring, journal_head: u64, journal_seq: u64, ckpt_generation: u64) -> Scan {
        Scan {
            ring,
            pos: journal_head,
            seq: journal_seq,
            ckpt_generation,
            last_boot: 0,
            found: 0,
            done: !ring.is_record(journal_head),
            damaged: None,
        }
    }

    /// Whether `h` is the record the scan expects next.
    fn expected(&self, h: &Header, seq: u64) -> bool {
        h.seq == seq
            && h.base_generation >= self.ckpt_generation
            && h.committed <= self.ckpt_generation
            && h.boot >= self.last_boot
    }

    /// The next record to apply: its header, with its page read into
    /// `data`; `None` at the end of the journal. `read(block, buf)` reads a
    /// disk block.
    pub fn next<E>(
        &mut self,
        read: &mut impl FnMut(u64, &mut [u8; BLOCK]) -> Result<(), E>,
        data: &mut [u8; BLOCK],
    ) -> Result<Option<Header>, E> {
        if self.done || self.found >= self.ring.slots() {
            self.done = true;
            return Ok(None);
        }
        read(self.pos, data)?;
        let h = match decode_header(data) {
            Ok(h) if self.expected(&h, self.seq) => h,
            // A sound header of another record: the journal's end.
            Ok(_) => {
                self.done = true;
                return Ok(None);
            }
            // An unreadable header is the end too, unless the next slot
            // holds the next record: then this one was written and is
            // damaged (or torn while the next one was not).
            Err(_) => {
                self.done = true;
                let next = self.ring.next(self.pos);
                if self.found + 1 < self.ring.slots() && next != self.pos {
                    read(next, data)?;
                    if let Ok(n) = decode_header(data) {
                        if self.expected(&n, self.seq + 1) {
                            self.damaged = Some(Damage::Header { next_seq: n.seq });
                        }
                    }
                }
                return Ok(None);
            }
        };
        read(self.pos + 1, data)?;
        if crate::crc32c(data) != h.data_crc {
            self.done = true;
            self.damaged = Some(Damage::Data);
            return Ok(None);
        }
        self.last_boot = h.boot;
        self.found += 1;
        self.seq += 1;
        self.pos = self.ring.next(self.pos);
        Ok(Some(h))
    }

    /// Where the journal ends (meaningful once `next` gave `None`).
    pub fn end(&self) -> ScanEnd {
        ScanEnd {
            pos: self.pos,
            seq: self.seq,
            records: self.found,
            damaged: self.damaged,
        }
    }
}

/// Runs a whole [`Scan`], calling `apply` with each record to apply, in
/// order, and gives where the journal ends.
pub fn scan<E>(
    ring: Ring,
    journal_head: u64,
    journal_seq: u64,
    ckpt_generation: u64,
    mut read: impl FnMut(u64, &mut [u8; BLOCK]) -> Result<(), E>,
    mut apply: impl FnMut(&Header, &[u8; BLOCK]),
) -> Result<ScanEnd, E> {
    let mut s = Scan::new(ring, journal_head, journal_seq, ckpt_generation);
    let mut data = [0u8; BLOCK];
    while let Some(h) = s.next(&mut read, &mut data)? {
        apply(&h, &data);
    }
    Ok(s.end())
}
