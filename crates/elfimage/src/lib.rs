//! Validates a user program (ELF64, x86_64, statically linked) and turns it
//! into a list of load segments the kernel can map without trusting the file.
//!
//! Parsing uses the `elf` crate; this crate adds the policy: every segment
//! lies in the user half, inside the file, page-congruent, disjoint from the
//! others, and never writable and executable at once (W^X).
#![cfg_attr(not(test), no_std)]

use elf::abi::{EM_X86_64, ET_EXEC, PF_R, PF_W, PF_X, PT_LOAD};
use elf::endian::LittleEndian;
use elf::ElfBytes;

/// Page size the segments are checked against.
pub const PAGE: u64 = 4096;
/// Lowest address a segment may use (page 0 stays unmapped to catch nulls).
pub const USER_MIN: u64 = 0x1000;
/// One past the highest user address (the canonical lower half).
pub const USER_END: u64 = 0x0000_8000_0000_0000;
/// Most load segments accepted.
pub const MAX_SEGMENTS: usize = 8;

/// Access a segment allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Perm {
    /// Readable.
    pub read: bool,
    /// Writable.
    pub write: bool,
    /// Executable.
    pub exec: bool,
}

/// One loadable segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Segment {
    /// First virtual address (not necessarily page aligned).
    pub vaddr: u64,
    /// Bytes of memory (the tail beyond `file_len` is zero).
    pub mem_len: u64,
    /// Offset of the initialised bytes in the file.
    pub file_offset: u64,
    /// Initialised bytes.
    pub file_len: u64,
    /// Access rights.
    pub perm: Perm,
}

impl Segment {
    /// The page-aligned span `[start, end)` this segment occupies.
    pub fn page_span(&self) -> (u64, u64) {
        let start = self.vaddr & !(PAGE - 1);
        let end = (self.vaddr + self.mem_len).div_ceil(PAGE) * PAGE;
        (start, end)
    }
}

/// A validated program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Program {
    /// Entry point.
    pub entry: u64,
    segments: [Segment; MAX_SEGMENTS],
    count: usize,
}

impl Program {
    /// The load segments, in file order.
    pub fn segments(&self) -> &[Segment] {
        &self.segments[..self.count]
    }
}

/// Why a program was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Not a parsable ELF64 little-endian file.
    Malformed,
    /// Not an x86_64 static executable (ET_EXEC).
    WrongKind,
    /// No load segments, or more than [`MAX_SEGMENTS`].
    SegmentCount,
    /// A segment's file bytes lie outside the file or exceed its memory size.
    BadFileRange,
    /// A segment lies outside user space or wraps.
    BadAddress,
    /// A segment's address and offset are not congruent modulo the page size.
    Misaligned,
    /// Two segments share a page.
    Overlap,
    /// A segment is writable and executable.
    WriteExecute,
    /// The entry point is not inside an executable segment.
    BadEntry,
}

/// Validates `file` as a user program.
pub fn parse(file: &[u8]) -> Result<Program, Error> {
    let elf = ElfBytes::<LittleEndian>::minimal_parse(file).map_err(|_| Error::Malformed)?;
    if elf.ehdr.class != elf::file::Class::ELF64
        || elf.ehdr.e_machine != EM_X86_64
        || elf.ehdr.e_type != ET_EXEC
    {
        return Err(Error::WrongKind);
    }
    let phdrs = elf.segments().ok_or(Error::Malformed)?;
    let mut segments = [Segment::default(); MAX_SEGMENTS];
    let mut count = 0;
    for ph in phdrs.iter().filter(|p| p.p_type == PT_LOAD) {
        if ph.p_memsz == 0 {
            continue;
        }
        if count == MAX_SEGMENTS {
            return Err(Error::SegmentCount);
        }
        let file_end = ph
            .p_offset
            .checked_add(ph.p_filesz)
            .ok_or(Error::BadFileRange)?;
        if file_end > file.len() as u64 || ph.p_filesz > ph.p_memsz {
            return Err(Error::BadFileRange);
        }
        let end = ph
            .p_vaddr
            .checked_add(ph.p_memsz)
            .ok_or(Error::BadAddress)?;
        if ph.p_vaddr < USER_MIN || end > USER_END {
            return Err(Error::BadAddress);
        }
        if ph.p_vaddr % PAGE != ph.p_offset % PAGE {
            return Err(Error::Misaligned);
        }
        let perm = Perm {
            read: ph.p_flags & PF_R != 0,
            write: ph.p_flags & PF_W != 0,
            exec: ph.p_flags & PF_X != 0,
        };
        if perm.write && perm.exec {
            return Err(Error::WriteExecute);
        }
        let seg = Segment {
            vaddr: ph.p_vaddr,
            mem_len: ph.p_memsz,
            file_offset: ph.p_offset,
            file_len: ph.p_filesz,
            perm,
        };
        let (s, e) = seg.page_span();
        if segments[..count].iter().any(|o| {
            let (os, oe) = o.page_span();
            s < oe && os < e
        }) {
            return Err(Error::Overlap);
        }
        segments[count] = seg;
        count += 1;
    }
    if count == 0 {
        return Err(Error::SegmentCount);
    }
    let entry = elf.ehdr.e_entry;
    if !segments[..count]
        .iter()
        .any(|s| s.perm.exec && s.vaddr <= entry && entry < s.vaddr + s.mem_len)
    {
        return Err(Error::BadEntry);
    }
    Ok(Program {
        entry,
        segments,
        count,
    })
}

#[cfg(test)]
mod tests;
