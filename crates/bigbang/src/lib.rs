//! The big bang image: Stet's primordial nodes, pages and running domains,
//! built on the host (by `tools/mkimage`) and handed to the kernel as its
//! boot module. The kernel parses it with [`Image::parse`], which checks
//! everything and allocates nothing; host tools write it with [`Builder`]
//! (feature `alloc`). `docs/IMAGE.md` is the prose version of this crate.
//!
//! Layout, all integers little-endian; every section starts on a 16-byte
//! boundary because every record size is a multiple of 16 (except the run
//! list, whose 8-byte records are followed only by 8-aligned names):
//!
//! ```text
//! offset size  header (HEADER_LEN = 80 bytes)
//!  0      8    magic            b"STETBB01"
//!  8      8    total_len        the whole image in bytes
//! 16      4    crc32c           CRC-32C (Castagnoli) of bytes [80, total_len)
//! 20      4    flags            0
//! 24      4    node_count
//! 28      4    page_count
//! 32      4    run_count
//! 36      4    name_count
//! 40      8    first_free_node  first node oid the image does not use: fresh
//!                               objects are handed out from here up
//! 48      8    first_free_page  the same for pages
//! 56      8    object_nodes     one past the highest node oid the image
//!                               lists or any key refers to (a range key
//!                               refers to all of its span): the kernel needs
//!                               at least this many node objects
//! 64      8    object_pages     the same for pages
//! 72      8    reserved         0
//!
//! nodes  node_count × 272 bytes: oid u64, version u32, pad u32 = 0,
//!                                16 keys × 16 bytes (stet-keys format)
//! pages  page_count × 4112 bytes: oid u64, version u32, pad u32 = 0,
//!                                 4096 bytes of data
//! run    run_count × 8 bytes:     oid u64 of a domain root node that runs
//! names  name_count × 32 bytes:   oid u64 (a domain root node),
//!                                 name [u8; 24]: 1..=23 bytes of UTF-8,
//!                                 NUL-padded (so always NUL-terminated)
//! ```
//!
//! Rules [`Image::parse`] enforces:
//!
//! * the magic, `flags == 0`, `reserved == 0`;
//! * `total_len` equals both the length the counts imply and the length of
//!   the byte slice given (no trailing bytes);
//! * the CRC-32C;
//! * `object_nodes ≤ first_free_node ≤ 2^40` and the same for pages (oids
//!   are 40 bits, see [`stet_keys::MAX_OID`]);
//! * node oids, page oids, run oids and name oids are each strictly
//!   increasing (hence no duplicates), and every listed oid is below its
//!   space's `object_*` bound;
//! * every pad word is zero;
//! * every key decodes with [`Key::from_bytes`] and its hint bits are zero;
//!   every object it designates (and every oid of a range key's span) is
//!   below its space's `object_*` bound;
//! * every run and name oid is a node listed in the image; names are valid.
//!
//! Objects the image does not list are all-zero objects at version 0 (void
//! keys, zero bytes). Names are for kernel reports only; they convey no
//! authority. The image says nothing about what the nodes mean: whether a
//! run oid is a well-formed domain is the kernel's business.
#![no_std]

/// Page oids below this hold the kernel's own persistent state (the running
/// set, domain names, the clock: see crates/store `kstate`); images never
/// use them.
pub const KERNEL_PAGES: u64 = 2;

#[cfg(any(feature = "alloc", test))]
extern crate alloc;

#[cfg(any(feature = "alloc", test))]
mod builder;
#[cfg(any(feature = "alloc", test))]
pub use builder::{BuildError, Builder};

#[cfg(test)]
mod tests;

use core::fmt;

use stet_keys::{Key, Space, KEY_SIZE, MAX_OID};

/// Magic bytes at offset 0.
pub const MAGIC: [u8; 8] = *b"STETBB01";
/// Bytes in the header.
pub const HEADER_LEN: usize = 80;
/// Key slots in a node.
pub const SLOTS: usize = 16;
/// Bytes in a page.
pub const PAGE_SIZE: usize = 4096;
/// Bytes in a node record: oid, version, pad, 16 keys.
pub const NODE_RECORD: usize = 16 + SLOTS * KEY_SIZE;
/// Bytes in a page record: oid, version, pad, data.
pub const PAGE_RECORD: usize = 16 + PAGE_SIZE;
/// Bytes in a run record (an oid).
pub const RUN_RECORD: usize = 8;
/// Bytes of the name field of a name record.
pub const NAME_FIELD: usize = 24;
/// Longest name in bytes (the field always holds a terminating NUL).
pub const MAX_NAME: usize = NAME_FIELD - 1;
/// Bytes in a name record: oid, name.
pub const NAME_RECORD: usize = 8 + NAME_FIELD;
/// One past the largest oid: the largest value `first_free_*` and
/// `object_*` may take.
pub const OID_LIMIT: u64 = MAX_OID + 1;

const CRC32C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);

/// CRC-32C of `body` (the image from [`HEADER_LEN`] on).
pub fn checksum(body: &[u8]) -> u32 {
    CRC32C.checksum(body)
}

/// Byte offsets of the header fields.
pub mod offset {
    /// `magic: [u8; 8]`.
    pub const MAGIC: usize = 0;
    /// `total_len: u64`.
    pub const TOTAL_LEN: usize = 8;
    /// `crc32c: u32`.
    pub const CRC32C: usize = 16;
    /// `flags: u32`.
    pub const FLAGS: usize = 20;
    /// `node_count: u32`.
    pub const NODE_COUNT: usize = 24;
    /// `page_count: u32`.
    pub const PAGE_COUNT: usize = 28;
    /// `run_count: u32`.
    pub const RUN_COUNT: usize = 32;
    /// `name_count: u32`.
    pub const NAME_COUNT: usize = 36;
    /// `first_free_node: u64`.
    pub const FIRST_FREE_NODE: usize = 40;
    /// `first_free_page: u64`.
    pub const FIRST_FREE_PAGE: usize = 48;
    /// `object_nodes: u64`.
    pub const OBJECT_NODES: usize = 56;
    /// `object_pages: u64`.
    pub const OBJECT_PAGES: usize = 64;
    /// `reserved: u64`.
    pub const RESERVED: usize = 72;
}

fn le32(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(s) = b.get(at..at + 4) {
        w.copy_from_slice(s);
    }
    u32::from_le_bytes(w)
}

fn le64(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    if let Some(s) = b.get(at..at + 8) {
        w.copy_from_slice(s);
    }
    u64::from_le_bytes(w)
}

/// The header fields (see the crate documentation for their meaning).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// The whole image in bytes.
    pub total_len: u64,
    /// CRC-32C of bytes `[HEADER_LEN, total_len)`.
    pub crc32c: u32,
    /// Zero.
    pub flags: u32,
    /// Node records.
    pub node_count: u32,
    /// Page records.
    pub page_count: u32,
    /// Run records.
    pub run_count: u32,
    /// Name records.
    pub name_count: u32,
    /// First node oid the image does not use.
    pub first_free_node: u64,
    /// First page oid the image does not use.
    pub first_free_page: u64,
    /// Node objects the kernel must have (one past the highest node oid
    /// listed or referred to).
    pub object_nodes: u64,
    /// Page objects the kernel must have.
    pub object_pages: u64,
    /// Zero.
    pub reserved: u64,
}

impl Header {
    /// Reads the header of `bytes`, checking only its length and magic.
    pub fn read(bytes: &[u8]) -> Result<Header, Error> {
        if bytes.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        if bytes[..8] != MAGIC {
            return Err(Error::BadMagic);
        }
        Ok(Header {
            total_len: le64(bytes, offset::TOTAL_LEN),
            crc32c: le32(bytes, offset::CRC32C),
            flags: le32(bytes, offset::FLAGS),
            node_count: le32(bytes, offset::NODE_COUNT),
            page_count: le32(bytes, offset::PAGE_COUNT),
            run_count: le32(bytes, offset::RUN_COUNT),
            name_count: le32(bytes, offset::NAME_COUNT),
            first_free_node: le64(bytes, offset::FIRST_FREE_NODE),
            first_free_page: le64(bytes, offset::FIRST_FREE_PAGE),
            object_nodes: le64(bytes, offset::OBJECT_NODES),
            object_pages: le64(bytes, offset::OBJECT_PAGES),
            reserved: le64(bytes, offset::RESERVED),
        })
    }

    /// The header as bytes (with [`MAGIC`]).
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        let mut put = |at: usize, v: &[u8]| b[at..at + v.len()].copy_from_slice(v);
        put(offset::MAGIC, &MAGIC);
        put(offset::TOTAL_LEN, &self.total_len.to_le_bytes());
        put(offset::CRC32C, &self.crc32c.to_le_bytes());
        put(offset::FLAGS, &self.flags.to_le_bytes());
        put(offset::NODE_COUNT, &self.node_count.to_le_bytes());
        put(offset::PAGE_COUNT, &self.page_count.to_le_bytes());
        put(offset::RUN_COUNT, &self.run_count.to_le_bytes());
        put(offset::NAME_COUNT, &self.name_count.to_le_bytes());
        put(offset::FIRST_FREE_NODE, &self.first_free_node.to_le_bytes());
        put(offset::FIRST_FREE_PAGE, &self.first_free_page.to_le_bytes());
        put(offset::OBJECT_NODES, &self.object_nodes.to_le_bytes());
        put(offset::OBJECT_PAGES, &self.object_pages.to_le_bytes());
        put(offset::RESERVED, &self.reserved.to_le_bytes());
        b
    }

    /// The image length the counts imply. Cannot overflow: the counts are
    /// 32-bit.
    pub fn expected_len(&self) -> u64 {
        self.names_offset() + self.name_count as u64 * NAME_RECORD as u64
    }

    /// Offset of the node section.
    pub fn nodes_offset(&self) -> u64 {
        HEADER_LEN as u64
    }

    /// Offset of the page section.
    pub fn pages_offset(&self) -> u64 {
        self.nodes_offset() + self.node_count as u64 * NODE_RECORD as u64
    }

    /// Offset of the run list.
    pub fn run_offset(&self) -> u64 {
        self.pages_offset() + self.page_count as u64 * PAGE_RECORD as u64
    }

    /// Offset of the name section.
    pub fn names_offset(&self) -> u64 {
        self.run_offset() + self.run_count as u64 * RUN_RECORD as u64
    }
}

/// Why an image was rejected. Oids and slots say where, for the kernel's
/// report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Shorter than a header.
    Truncated,
    /// Wrong magic bytes.
    BadMagic,
    /// Nonzero flags (a format this kernel does not know).
    BadFlags(u32),
    /// The reserved header word is not zero.
    BadReserved,
    /// `total_len` is not the length the counts imply.
    BadLength {
        /// `total_len`.
        stated: u64,
        /// What the counts imply.
        expected: u64,
    },
    /// The byte slice is not `total_len` long.
    SizeMismatch {
        /// `total_len`.
        stated: u64,
        /// The slice's length.
        actual: u64,
    },
    /// The checksum does not match the contents.
    BadChecksum {
        /// In the header.
        stated: u32,
        /// Of the contents.
        computed: u32,
    },
    /// `object_*` exceeds `first_free_*`, or `first_free_*` exceeds
    /// [`OID_LIMIT`].
    BadBounds(Space),
    /// Record `index` of a section is not in strictly increasing oid order.
    Order {
        /// Which section.
        section: Section,
        /// The record's index.
        index: u32,
        /// Its oid.
        oid: u64,
    },
    /// A listed object's oid is not below its space's `object_*` bound.
    ObjectOutOfBounds {
        /// Which space.
        space: Space,
        /// The oid.
        oid: u64,
    },
    /// A record's pad word is not zero.
    BadPadding {
        /// Which space.
        space: Space,
        /// The record's oid.
        oid: u64,
    },
    /// A key does not decode, or has hint bits set.
    BadKey {
        /// The node holding it.
        node: u64,
        /// Its slot.
        slot: u8,
    },
    /// A key refers to an object at or beyond its space's `object_*` bound.
    KeyOutOfBounds {
        /// The node holding it.
        node: u64,
        /// Its slot.
        slot: u8,
    },
    /// A run oid is not a node in the image.
    RunNotNode(u64),
    /// A name oid is not a node in the image.
    NameNotNode(u64),
    /// A name is empty, not NUL-padded or not UTF-8.
    BadName(u64),
}

/// The sections of an image, for [`Error::Order`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// Node records.
    Nodes,
    /// Page records.
    Pages,
    /// The run list.
    Run,
    /// Name records.
    Names,
}

fn space_name(s: Space) -> &'static str {
    match s {
        Space::Node => "node",
        Space::Page => "page",
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::Truncated => write!(f, "shorter than the {HEADER_LEN}-byte header"),
            Error::BadMagic => write!(f, "bad magic (not a STETBB01 image)"),
            Error::BadFlags(v) => write!(f, "unknown flags {v:#x}"),
            Error::BadReserved => write!(f, "reserved header word is not zero"),
            Error::BadLength { stated, expected } => {
                write!(f, "total_len {stated} but the counts imply {expected}")
            }
            Error::SizeMismatch { stated, actual } => {
                write!(f, "total_len {stated} but {actual} bytes were given")
            }
            Error::BadChecksum { stated, computed } => {
                write!(f, "checksum {stated:#010x}, contents have {computed:#010x}")
            }
            Error::BadBounds(s) => write!(
                f,
                "bad {} bounds: object count above first free oid, or beyond 2^40",
                space_name(s)
            ),
            Error::Order {
                section,
                index,
                oid,
            } => write!(
                f,
                "{section:?} record {index} (oid {oid}) is not in increasing oid order"
            ),
            Error::ObjectOutOfBounds { space, oid } => {
                write!(f, "{} {oid} is beyond the object count", space_name(space))
            }
            Error::BadPadding { space, oid } => {
                write!(f, "{} {oid} has a nonzero pad word", space_name(space))
            }
            Error::BadKey { node, slot } => write!(f, "node {node} slot {slot}: malformed key"),
            Error::KeyOutOfBounds { node, slot } => write!(
                f,
                "node {node} slot {slot}: key refers beyond the object count"
            ),
            Error::RunNotNode(oid) => write!(f, "run oid {oid} is not a node in the image"),
            Error::NameNotNode(oid) => write!(f, "name oid {oid} is not a node in the image"),
            Error::BadName(oid) => write!(f, "name of node {oid} is malformed"),
        }
    }
}

/// A node record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    /// Its identity.
    pub oid: u64,
    /// Its version.
    pub version: u32,
    /// Its 16 slots.
    pub keys: [Key; SLOTS],
}

/// A page record, borrowed from the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page<'a> {
    /// Its identity.
    pub oid: u64,
    /// Its version.
    pub version: u32,
    /// Its contents.
    pub data: &'a [u8; PAGE_SIZE],
}

/// A name record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Name<'a> {
    /// The domain root node it names.
    pub oid: u64,
    /// The name.
    pub name: &'a str,
}

/// Decodes a NUL-padded name field: 1..=[`MAX_NAME`] bytes of UTF-8, then
/// only NULs.
pub fn decode_name(field: &[u8]) -> Option<&str> {
    if field.len() != NAME_FIELD {
        return None;
    }
    let len = field.iter().position(|&b| b == 0)?;
    if len == 0 || field[len..].iter().any(|&b| b != 0) {
        return None;
    }
    core::str::from_utf8(&field[..len]).ok()
}

/// A validated image borrowed from memory.
#[derive(Clone, Copy, Debug)]
pub struct Image<'a> {
    bytes: &'a [u8],
    header: Header,
}

impl<'a> Image<'a> {
    /// Validates `bytes` (exactly one image, nothing after it) against
    /// every rule of the format. Never panics and never allocates; time is
    /// linear in the image size (plus a binary search per run and name
    /// record).
    pub fn parse(bytes: &'a [u8]) -> Result<Self, Error> {
        let h = Header::read(bytes)?;
        if h.flags != 0 {
            return Err(Error::BadFlags(h.flags));
        }
        if h.reserved != 0 {
            return Err(Error::BadReserved);
        }
        let expected = h.expected_len();
        if h.total_len != expected {
            return Err(Error::BadLength {
                stated: h.total_len,
                expected,
            });
        }
        if bytes.len() as u64 != h.total_len {
            return Err(Error::SizeMismatch {
                stated: h.total_len,
                actual: bytes.len() as u64,
            });
        }
        let computed = checksum(&bytes[HEADER_LEN..]);
        if computed != h.crc32c {
            return Err(Error::BadChecksum {
                stated: h.crc32c,
                computed,
            });
        }
        if h.object_nodes > h.first_free_node || h.first_free_node > OID_LIMIT {
            return Err(Error::BadBounds(Space::Node));
        }
        if h.object_pages > h.first_free_page || h.first_free_page > OID_LIMIT {
            return Err(Error::BadBounds(Space::Page));
        }
        let image = Image { bytes, header: h };
        image.check_nodes()?;
        image.check_pages()?;
        image.check_run()?;
        image.check_names()?;
        Ok(image)
    }

    fn bound(&self, space: Space) -> u64 {
        match space {
            Space::Node => self.header.object_nodes,
            Space::Page => self.header.object_pages,
        }
    }

    fn record(&self, section_offset: u64, size: usize, i: usize) -> &'a [u8] {
        let at = section_offset as usize + i * size;
        self.bytes.get(at..at + size).unwrap_or(&[])
    }

    fn node_record(&self, i: usize) -> &'a [u8] {
        self.record(self.header.nodes_offset(), NODE_RECORD, i)
    }

    fn page_record(&self, i: usize) -> &'a [u8] {
        self.record(self.header.pages_offset(), PAGE_RECORD, i)
    }

    fn run_record(&self, i: usize) -> &'a [u8] {
        self.record(self.header.run_offset(), RUN_RECORD, i)
    }

    fn name_record(&self, i: usize) -> &'a [u8] {
        self.record(self.header.names_offset(), NAME_RECORD, i)
    }

    /// Checks the common part of node and page records: order, bounds and
    /// padding.
    fn check_record(
        &self,
        rec: &[u8],
        space: Space,
        section: Section,
        index: u32,
        prev: &mut Option<u64>,
    ) -> Result<u64, Error> {
        let oid = le64(rec, 0);
        if prev.is_some_and(|p| oid <= p) {
            return Err(Error::Order {
                section,
                index,
                oid,
            });
        }
        *prev = Some(oid);
        if oid >= self.bound(space) {
            return Err(Error::ObjectOutOfBounds { space, oid });
        }
        if le32(rec, 12) != 0 {
            return Err(Error::BadPadding { space, oid });
        }
        Ok(oid)
    }

    fn check_key(&self, key: Key) -> bool {
        if let Some((space, first, count)) = key.range_parts() {
            return first
                .checked_add(count as u64)
                .is_some_and(|end| end <= self.bound(space));
        }
        match key.space() {
            Some(space) => key.oid() < self.bound(space),
            None => true,
        }
    }

    fn check_nodes(&self) -> Result<(), Error> {
        let mut prev = None;
        for i in 0..self.header.node_count {
            let rec = self.node_record(i as usize);
            let oid = self.check_record(rec, Space::Node, Section::Nodes, i, &mut prev)?;
            for slot in 0..SLOTS {
                let key = key_at(rec, slot);
                let slot = slot as u8;
                let key = match key {
                    Some(k) if k.hint() == 0 => k,
                    _ => return Err(Error::BadKey { node: oid, slot }),
                };
                if !self.check_key(key) {
                    return Err(Error::KeyOutOfBounds { node: oid, slot });
                }
            }
        }
        Ok(())
    }

    fn check_pages(&self) -> Result<(), Error> {
        let mut prev = None;
        for i in 0..self.header.page_count {
            let rec = self.page_record(i as usize);
            self.check_record(rec, Space::Page, Section::Pages, i, &mut prev)?;
        }
        Ok(())
    }

    fn check_run(&self) -> Result<(), Error> {
        let mut prev: Option<u64> = None;
        for i in 0..self.header.run_count {
            let oid = le64(self.run_record(i as usize), 0);
            if prev.is_some_and(|p| oid <= p) {
                return Err(Error::Order {
                    section: Section::Run,
                    index: i,
                    oid,
                });
            }
            prev = Some(oid);
            if self.node_index(oid).is_none() {
                return Err(Error::RunNotNode(oid));
            }
        }
        Ok(())
    }

    fn check_names(&self) -> Result<(), Error> {
        let mut prev: Option<u64> = None;
        for i in 0..self.header.name_count {
            let rec = self.name_record(i as usize);
            let oid = le64(rec, 0);
            if prev.is_some_and(|p| oid <= p) {
                return Err(Error::Order {
                    section: Section::Names,
                    index: i,
                    oid,
                });
            }
            prev = Some(oid);
            if self.node_index(oid).is_none() {
                return Err(Error::NameNotNode(oid));
            }
            if decode_name(&rec[8..]).is_none() {
                return Err(Error::BadName(oid));
            }
        }
        Ok(())
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The image's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Node records.
    pub fn node_count(&self) -> usize {
        self.header.node_count as usize
    }

    /// Page records.
    pub fn page_count(&self) -> usize {
        self.header.page_count as usize
    }

    /// Node record `i` (in oid order).
    pub fn node_at(&self, i: usize) -> Option<Node> {
        (i < self.node_count()).then(|| self.decode_node(i))
    }

    /// Page record `i` (in oid order).
    pub fn page_at(&self, i: usize) -> Option<Page<'a>> {
        (i < self.page_count()).then(|| self.decode_page(i))
    }

    fn decode_node(&self, i: usize) -> Node {
        let rec = self.node_record(i);
        let mut keys = [Key::VOID; SLOTS];
        for (slot, key) in keys.iter_mut().enumerate() {
            *key = key_at(rec, slot).unwrap_or(Key::VOID);
        }
        Node {
            oid: le64(rec, 0),
            version: le32(rec, 8),
            keys,
        }
    }

    fn decode_page(&self, i: usize) -> Page<'a> {
        let rec = self.page_record(i);
        Page {
            oid: le64(rec, 0),
            version: le32(rec, 8),
            data: rec
                .get(16..)
                .and_then(|d| d.try_into().ok())
                .unwrap_or(&ZERO_PAGE),
        }
    }

    /// Index of the node record with `oid`.
    pub fn node_index(&self, oid: u64) -> Option<usize> {
        search(self.node_count(), oid, |i| le64(self.node_record(i), 0))
    }

    /// Index of the page record with `oid`.
    pub fn page_index(&self, oid: u64) -> Option<usize> {
        search(self.page_count(), oid, |i| le64(self.page_record(i), 0))
    }

    /// The node `oid`, if the image lists it (otherwise it is all void at
    /// version 0).
    pub fn node(&self, oid: u64) -> Option<Node> {
        self.node_at(self.node_index(oid)?)
    }

    /// The page `oid`, if the image lists it (otherwise it is all zero at
    /// version 0).
    pub fn page(&self, oid: u64) -> Option<Page<'a>> {
        self.page_at(self.page_index(oid)?)
    }

    /// Every node record, in oid order.
    pub fn nodes(&self) -> impl ExactSizeIterator<Item = Node> + 'a {
        let image = *self;
        (0..self.node_count()).map(move |i| image.decode_node(i))
    }

    /// Every page record, in oid order.
    pub fn pages(&self) -> impl ExactSizeIterator<Item = Page<'a>> + 'a {
        let image = *self;
        (0..self.page_count()).map(move |i| image.decode_page(i))
    }

    /// The oids of the domain root nodes that start running, increasing.
    pub fn run(&self) -> impl ExactSizeIterator<Item = u64> + 'a {
        let image = *self;
        (0..self.header.run_count as usize).map(move |i| le64(image.run_record(i), 0))
    }

    /// The name records, in oid order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = Name<'a>> + 'a {
        let image = *self;
        (0..self.header.name_count as usize).map(move |i| {
            let rec = image.name_record(i);
            Name {
                oid: le64(rec, 0),
                name: rec.get(8..).and_then(decode_name).unwrap_or(""),
            }
        })
    }

    /// The name of domain root node `oid`, if the image gives one.
    pub fn name_of(&self, oid: u64) -> Option<&'a str> {
        let image = *self;
        let i = search(self.header.name_count as usize, oid, |i| {
            le64(image.name_record(i), 0)
        })?;
        self.name_record(i).get(8..).and_then(decode_name)
    }
}

/// Decodes the key in `slot` of a node record.
fn key_at(rec: &[u8], slot: usize) -> Option<Key> {
    let at = 16 + slot * KEY_SIZE;
    Key::from_bytes(rec.get(at..at + KEY_SIZE)?.try_into().ok()?)
}

static ZERO_PAGE: [u8; PAGE_SIZE] = [0; PAGE_SIZE];

/// Binary search over `n` records in increasing oid order.
fn search(n: usize, oid: u64, oid_at: impl Fn(usize) -> u64) -> Option<usize> {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match oid_at(mid).cmp(&oid) {
            core::cmp::Ordering::Equal => return Some(mid),
            core::cmp::Ordering::Less => lo = mid + 1,
            core::cmp::Ordering::Greater => hi = mid,
        }
    }
    None
}
