//! The Stet boot image: the user programs that the boot loader hands to the
//! kernel as a module (PVH `modlist` entry or Multiboot2 module tag).
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! Header   32 bytes  magic "STETIMG1", version, entry count, total length,
//!                    CRC-32C of bytes [32, total length), reserved
//! Entry    48 bytes  × count: NUL-padded name (32 bytes), offset, length,
//!                    kind, reserved
//! Payload            each entry's bytes at its offset (8-byte aligned)
//! ```
//!
//! The parser never panics on any input: every malformed image is an
//! [`Error`]. The kernel trusts nothing about the module the loader gave it.
#![cfg_attr(not(test), no_std)]
#![deny(unsafe_code)]

#[cfg(any(feature = "alloc", test))]
extern crate alloc;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Magic bytes at offset 0.
pub const MAGIC: [u8; 8] = *b"STETIMG1";
/// Format version understood by this crate.
pub const VERSION: u32 = 1;
/// Longest entry name in bytes.
pub const NAME_LEN: usize = 32;
/// Most entries an image may hold (keeps the kernel's tables fixed-size).
pub const MAX_ENTRIES: usize = 64;

const CRC32C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);

/// On-disk image header.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct Header {
    /// [`MAGIC`].
    pub magic: [u8; 8],
    /// [`VERSION`].
    pub version: u32,
    /// Number of entries following the header.
    pub count: u32,
    /// Length of the whole image in bytes.
    pub total_len: u32,
    /// CRC-32C of bytes `[size_of::<Header>(), total_len)`.
    pub crc: u32,
    /// Zero.
    pub reserved: [u8; 8],
}

/// On-disk entry descriptor.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
pub struct RawEntry {
    /// NUL-padded UTF-8 name.
    pub name: [u8; NAME_LEN],
    /// Offset of the payload from the start of the image.
    pub offset: u32,
    /// Payload length in bytes.
    pub len: u32,
    /// [`Kind`] as a number.
    pub kind: u32,
    /// Zero.
    pub reserved: u32,
}

const HEADER_LEN: usize = core::mem::size_of::<Header>();
const ENTRY_LEN: usize = core::mem::size_of::<RawEntry>();

/// What an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A user program (ELF64) that the kernel starts at boot.
    Program,
    /// A user program that is packed but not started at boot.
    Dormant,
}

impl Kind {
    fn from_u32(v: u32) -> Option<Self> {
        match v {
            1 => Some(Kind::Program),
            2 => Some(Kind::Dormant),
            _ => None,
        }
    }
    #[cfg(any(feature = "alloc", test))]
    fn to_u32(self) -> u32 {
        match self {
            Kind::Program => 1,
            Kind::Dormant => 2,
        }
    }
}

/// Why an image was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Shorter than its header or its stated length.
    Truncated,
    /// Wrong magic bytes.
    BadMagic,
    /// A version this kernel does not understand.
    BadVersion(u32),
    /// More entries than [`MAX_ENTRIES`].
    TooManyEntries(u32),
    /// The checksum does not match the contents.
    BadChecksum,
    /// Entry `n` points outside the image, has a bad name or an unknown kind.
    BadEntry(usize),
}

/// A validated image borrowed from memory.
#[derive(Clone, Copy, Debug)]
pub struct Image<'a> {
    bytes: &'a [u8],
    count: usize,
}

/// One validated entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// The program's name.
    pub name: &'a str,
    /// What it is.
    pub kind: Kind,
    /// Its bytes.
    pub data: &'a [u8],
}

impl<'a> Image<'a> {
    /// Validates `bytes` as an image: header, checksum and every entry.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, Error> {
        let (header, _) = Header::read_from_prefix(bytes).map_err(|_| Error::Truncated)?;
        if header.magic != MAGIC {
            return Err(Error::BadMagic);
        }
        if header.version != VERSION {
            return Err(Error::BadVersion(header.version));
        }
        if header.count as usize > MAX_ENTRIES {
            return Err(Error::TooManyEntries(header.count));
        }
        let total = header.total_len as usize;
        if total < HEADER_LEN || total > bytes.len() {
            return Err(Error::Truncated);
        }
        let bytes = &bytes[..total];
        if CRC32C.checksum(&bytes[HEADER_LEN..]) != header.crc {
            return Err(Error::BadChecksum);
        }
        let count = header.count as usize;
        if HEADER_LEN + count * ENTRY_LEN > total {
            return Err(Error::Truncated);
        }
        let image = Image { bytes, count };
        for i in 0..count {
            image.entry(i).ok_or(Error::BadEntry(i))?;
        }
        Ok(image)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when the image holds no entries.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Entry `i`, or `None` if out of range or malformed.
    pub fn entry(&self, i: usize) -> Option<Entry<'a>> {
        if i >= self.count {
            return None;
        }
        let at = HEADER_LEN + i * ENTRY_LEN;
        let raw = RawEntry::read_from_bytes(self.bytes.get(at..at + ENTRY_LEN)?).ok()?;
        let end = (raw.offset as usize).checked_add(raw.len as usize)?;
        let data = self.bytes.get(raw.offset as usize..end)?;
        let name_len = raw.name.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
        if name_len == 0 || raw.name[name_len..].iter().any(|&b| b != 0) {
            return None;
        }
        let name = core::str::from_utf8(&self.bytes[at..at + name_len]).ok()?;
        Some(Entry {
            name,
            kind: Kind::from_u32(raw.kind)?,
            data,
        })
    }

    /// All entries in order.
    pub fn entries(&self) -> impl Iterator<Item = Entry<'a>> + '_ {
        (0..self.count).filter_map(|i| self.entry(i))
    }

    /// The entry called `name`.
    pub fn find(&self, name: &str) -> Option<Entry<'a>> {
        self.entries().find(|e| e.name == name)
    }
}

/// Why an image could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// A name is empty, longer than [`NAME_LEN`] or contains NUL.
    BadName,
    /// More than [`MAX_ENTRIES`].
    TooManyEntries,
    /// The image would exceed 4 GiB.
    TooLarge,
}

/// Packs `(name, kind, bytes)` triples into an image.
#[cfg(any(feature = "alloc", test))]
pub fn build(entries: &[(&str, Kind, &[u8])]) -> Result<alloc::vec::Vec<u8>, BuildError> {
    use alloc::vec::Vec;
    if entries.len() > MAX_ENTRIES {
        return Err(BuildError::TooManyEntries);
    }
    let mut out: Vec<u8> = alloc::vec![0; HEADER_LEN + entries.len() * ENTRY_LEN];
    let mut raws = Vec::with_capacity(entries.len());
    for (name, kind, data) in entries {
        if name.is_empty() || name.len() > NAME_LEN || name.bytes().any(|b| b == 0) {
            return Err(BuildError::BadName);
        }
        while !out.len().is_multiple_of(8) {
            out.push(0);
        }
        let offset = u32::try_from(out.len()).map_err(|_| BuildError::TooLarge)?;
        let len = u32::try_from(data.len()).map_err(|_| BuildError::TooLarge)?;
        out.extend_from_slice(data);
        let mut raw = RawEntry {
            name: [0; NAME_LEN],
            offset,
            len,
            kind: kind.to_u32(),
            reserved: 0,
        };
        raw.name[..name.len()].copy_from_slice(name.as_bytes());
        raws.push(raw);
    }
    let total_len = u32::try_from(out.len()).map_err(|_| BuildError::TooLarge)?;
    for (i, raw) in raws.iter().enumerate() {
        let at = HEADER_LEN + i * ENTRY_LEN;
        out[at..at + ENTRY_LEN].copy_from_slice(raw.as_bytes());
    }
    let header = Header {
        magic: MAGIC,
        version: VERSION,
        count: entries.len() as u32,
        total_len,
        crc: CRC32C.checksum(&out[HEADER_LEN..]),
        reserved: [0; 8],
    };
    out[..HEADER_LEN].copy_from_slice(header.as_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trip() {
        let img = build(&[
            ("hello", Kind::Program, b"abc"),
            ("spin", Kind::Dormant, b""),
        ])
        .unwrap();
        let parsed = Image::parse(&img).unwrap();
        assert_eq!(parsed.len(), 2);
        let e = parsed.entry(0).unwrap();
        assert_eq!(
            (e.name, e.kind, e.data),
            ("hello", Kind::Program, &b"abc"[..])
        );
        let e = parsed.find("spin").unwrap();
        assert_eq!((e.kind, e.data.len()), (Kind::Dormant, 0));
        assert_eq!(parsed.entry(2), None);
    }

    #[test]
    fn rejects_bad_magic_version_and_checksum() {
        let img = build(&[("a", Kind::Program, b"xyz")]).unwrap();
        let mut bad = img.clone();
        bad[0] = b'X';
        assert_eq!(Image::parse(&bad).unwrap_err(), Error::BadMagic);
        let mut bad = img.clone();
        bad[8] = 9;
        assert_eq!(Image::parse(&bad).unwrap_err(), Error::BadVersion(9));
        let mut bad = img.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert_eq!(Image::parse(&bad).unwrap_err(), Error::BadChecksum);
        assert_eq!(Image::parse(&img[..10]).unwrap_err(), Error::Truncated);
        assert_eq!(
            Image::parse(&img[..img.len() - 1]).unwrap_err(),
            Error::Truncated
        );
    }

    #[test]
    fn rejects_bad_names() {
        assert_eq!(build(&[("", Kind::Program, b"")]), Err(BuildError::BadName));
        let long = "x".repeat(NAME_LEN + 1);
        assert_eq!(
            build(&[(&long, Kind::Program, b"")]),
            Err(BuildError::BadName)
        );
        let max = "y".repeat(NAME_LEN);
        let img = build(&[(&max, Kind::Program, b"1")]).unwrap();
        assert_eq!(Image::parse(&img).unwrap().entry(0).unwrap().name, max);
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = Image::parse(&bytes);
        }

        #[test]
        fn corrupted_images_never_panic(
            data in proptest::collection::vec(any::<u8>(), 0..200),
            flip in 0usize..400,
            value in any::<u8>(),
        ) {
            let mut img = build(&[("p", Kind::Program, &data), ("q", Kind::Dormant, &data)]).unwrap();
            let i = flip % img.len();
            img[i] = value;
            if let Ok(parsed) = Image::parse(&img) {
                // A surviving image must still describe in-bounds entries.
                for e in parsed.entries() {
                    prop_assert!(e.data.len() <= img.len());
                }
            }
        }

        #[test]
        fn round_trip_any(names in proptest::collection::vec("[a-z]{1,32}", 0..8),
                          data in proptest::collection::vec(any::<u8>(), 0..100)) {
            let entries: Vec<(&str, Kind, &[u8])> =
                names.iter().map(|n| (n.as_str(), Kind::Program, &data[..])).collect();
            let img = build(&entries).unwrap();
            let parsed = Image::parse(&img).unwrap();
            prop_assert_eq!(parsed.len(), names.len());
            for (i, n) in names.iter().enumerate() {
                let e = parsed.entry(i).unwrap();
                prop_assert_eq!(e.name, n.as_str());
                prop_assert_eq!(e.data, &data[..]);
            }
        }
    }
}
