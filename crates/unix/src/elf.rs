//! The UNIX loader's plan: what an ELF64 x86_64 executable asks to be
//! mapped where, checked so a hostile file cannot make the keeper map
//! anything outside the process's space or read beyond the file.
//!
//! Every kind of program Linux runs is accepted: `ET_EXEC` (linked at
//! fixed addresses, e.g. `musl-gcc -static`, Debian's `busybox-static`),
//! static-PIE `ET_DYN` without an interpreter (`-static-pie`), which is
//! placed at [`crate::layout::PIE_BASE`] and relocates itself, and a
//! dynamically linked program (`PT_INTERP`, [`Plan::interp`]): the keeper
//! loads the interpreter it names (`ld.so`, itself an `ET_DYN` without an
//! interpreter, planned with [`plan_at`] at a base of the keeper's choice)
//! and starts that, which loads the rest.
//!
//! Only the headers are parsed (the `elf` crate's parsers over the first
//! bytes of the file), so the keeper reads one page, not the file.

use crate::layout::{PAGE, PIE_BASE, USER_END, USER_MIN};
use elf::abi::{
    EM_X86_64, ET_DYN, ET_EXEC, PF_R, PF_W, PF_X, PT_GNU_STACK, PT_INTERP, PT_LOAD, PT_PHDR, PT_TLS,
};
use elf::endian::LittleEndian;
use elf::file::{parse_ident, Class, FileHeader};
use elf::segment::SegmentTable;

/// Most `PT_LOAD` segments accepted (static programs have 2 to 5).
pub const MAX_LOADS: usize = 8;
/// Size of an ELF64 program header.
pub const PHENT: u64 = 56;

/// Memory protection bits, as `mmap`'s `PROT_*`.
pub mod prot {
    /// Readable.
    pub const READ: u8 = 1;
    /// Writable.
    pub const WRITE: u8 = 2;
    /// Executable.
    pub const EXEC: u8 = 4;
}

/// One `PT_LOAD` segment, relocated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Load {
    /// First address (not necessarily page aligned).
    pub vaddr: u64,
    /// Bytes of memory; those past `file_len` are zero.
    pub mem_len: u64,
    /// Offset of the initialised bytes in the file.
    pub offset: u64,
    /// Initialised bytes.
    pub file_len: u64,
    /// `prot::*` bits.
    pub prot: u8,
}

impl Load {
    /// The page-aligned span `[start, end)` the segment occupies.
    pub fn span(&self) -> (u64, u64) {
        let start = self.vaddr & !(PAGE - 1);
        let end = (self.vaddr + self.mem_len).div_ceil(PAGE) * PAGE;
        (start, end)
    }

    /// The file offset that backs the page at `start` of [`Load::span`].
    pub fn page_offset(&self) -> u64 {
        self.offset & !(PAGE - 1)
    }

    /// One past the last byte backed by the file, as an address.
    pub fn file_end(&self) -> u64 {
        self.vaddr + self.file_len
    }
}

/// What the loader must do for one executable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Whether it is a static-PIE (`ET_DYN`) program.
    pub pie: bool,
    /// What was added to every address of the file (0 for `ET_EXEC`).
    pub bias: u64,
    /// Entry point (relocated).
    pub entry: u64,
    /// Address of the program headers in memory (`AT_PHDR`).
    pub phdr: u64,
    /// Number of program headers (`AT_PHNUM`).
    pub phnum: u64,
    /// The load segments in address order; `loads[..nloads]` are valid.
    pub loads: [Load; MAX_LOADS],
    /// How many load segments there are.
    pub nloads: usize,
    /// One past the highest byte of any load segment, page-aligned: where
    /// the program break starts.
    pub brk: u64,
    /// Whether `PT_GNU_STACK` asks for an executable stack.
    pub exec_stack: bool,
    /// `PT_INTERP`: the file offset and length (its NUL included) of the
    /// interpreter's path.
    pub interp: Option<(u64, u64)>,
}

impl Plan {
    /// The load segments.
    pub fn loads(&self) -> &[Load] {
        &self.loads[..self.nloads]
    }

    /// The page-aligned span `[start, end)` all load segments occupy.
    pub fn extent(&self) -> (u64, u64) {
        let l = self.loads();
        match (l.first(), l.last()) {
            (Some(a), Some(b)) => (a.span().0, b.span().1),
            _ => (0, 0),
        }
    }
}

/// The interpreter's path from the bytes of its `PT_INTERP` (`bytes`,
/// as [`Plan::interp`] locates them): up to the first NUL, which must be
/// there, and not empty.
pub fn interp_path(bytes: &[u8]) -> Result<&[u8], Error> {
    let end = bytes.iter().position(|&b| b == 0).ok_or(Error::Dynamic)?;
    if end == 0 {
        return Err(Error::Dynamic);
    }
    Ok(&bytes[..end])
}

/// Why a file cannot be executed (each maps to an errno for `execve`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Not an ELF64 little-endian x86_64 executable (`ENOEXEC`).
    NotElf,
    /// An interpreter that itself asks for one, or an unusable
    /// `PT_INTERP` (`ENOEXEC`).
    Dynamic,
    /// The headers are malformed or lie outside the bytes given (`ENOEXEC`).
    Malformed,
    /// A segment is outside the process's space, overlaps another, or is
    /// not page-congruent (`ENOEXEC`).
    BadSegment,
    /// More load segments than [`MAX_LOADS`] (`ENOEXEC`).
    TooManySegments,
}

impl Error {
    /// The errno `execve` answers.
    pub fn errno(self) -> i64 {
        crate::sys::errno::ENOEXEC
    }
}

/// Plans the loading of the executable whose first bytes are `head` and
/// whose full length is `file_len`. The ELF and program headers must lie
/// within `head` (they do in every linker's output: right after the
/// 64-byte file header).
pub fn plan(head: &[u8], file_len: u64) -> Result<Plan, Error> {
    plan_at(head, file_len, PIE_BASE)
}

/// [`plan`], with an `ET_DYN` file placed at `dyn_base` (an interpreter:
/// wherever the keeper finds room; see [`Plan::extent`]).
pub fn plan_at(head: &[u8], file_len: u64, dyn_base: u64) -> Result<Plan, Error> {
    // `parse_ident` indexes the 16 identification bytes unchecked.
    let id = head.get(..16).ok_or(Error::NotElf)?;
    let ident = parse_ident::<LittleEndian>(id).map_err(|_| Error::NotElf)?;
    if ident.1 != Class::ELF64 {
        return Err(Error::NotElf);
    }
    let tail = head.get(16..64).ok_or(Error::NotElf)?;
    let eh = FileHeader::parse_tail(ident, tail).map_err(|_| Error::NotElf)?;
    if eh.e_machine != EM_X86_64 {
        return Err(Error::NotElf);
    }
    let pie = match eh.e_type {
        ET_EXEC => false,
        ET_DYN => true,
        _ => return Err(Error::NotElf),
    };
    if eh.e_phentsize as u64 != PHENT || eh.e_phnum == 0 {
        return Err(Error::Malformed);
    }
    let phnum = eh.e_phnum as u64;
    let ph_end = eh
        .e_phoff
        .checked_add(phnum * PHENT)
        .ok_or(Error::Malformed)?;
    if ph_end > file_len {
        return Err(Error::Malformed);
    }
    let table = head
        .get(eh.e_phoff as usize..ph_end as usize)
        .ok_or(Error::Malformed)?;
    let phdrs = SegmentTable::new(LittleEndian, Class::ELF64, table);
    let bias = if pie { dyn_base } else { 0 };

    let mut p = Plan {
        pie,
        bias,
        entry: 0,
        phdr: 0,
        phnum,
        loads: [Load::default(); MAX_LOADS],
        nloads: 0,
        brk: 0,
        exec_stack: false,
        interp: None,
    };
    let mut phdr_vaddr = None;
    for ph in phdrs.iter() {
        match ph.p_type {
            // A path of at most PATH_MAX bytes, NUL-terminated, in the file.
            PT_INTERP => {
                if p.interp.is_some()
                    || !(2..=4096).contains(&ph.p_filesz)
                    || ph
                        .p_offset
                        .checked_add(ph.p_filesz)
                        .is_none_or(|e| e > file_len)
                {
                    return Err(Error::Dynamic);
                }
                p.interp = Some((ph.p_offset, ph.p_filesz));
            }
            PT_PHDR => phdr_vaddr = Some(ph.p_vaddr),
            PT_GNU_STACK => p.exec_stack = ph.p_flags & PF_X != 0,
            // The program sets up its own TLS from these headers (AT_PHDR);
            // the loader only checks they are in the file.
            PT_TLS
                if ph
                    .p_offset
                    .checked_add(ph.p_filesz)
                    .is_none_or(|e| e > file_len) =>
            {
                return Err(Error::Malformed);
            }
            PT_LOAD if ph.p_memsz > 0 => {
                if p.nloads == MAX_LOADS {
                    return Err(Error::TooManySegments);
                }
                let vaddr = ph.p_vaddr.checked_add(bias).ok_or(Error::BadSegment)?;
                let end = vaddr.checked_add(ph.p_memsz).ok_or(Error::BadSegment)?;
                let fend = ph.p_offset.checked_add(ph.p_filesz);
                if ph.p_filesz > ph.p_memsz
                    || fend.is_none_or(|e| e > file_len)
                    || vaddr % PAGE != ph.p_offset % PAGE
                    || vaddr < USER_MIN
                    || end > USER_END
                {
                    return Err(Error::BadSegment);
                }
                let mut prot = 0;
                if ph.p_flags & PF_R != 0 {
                    prot |= prot::READ;
                }
                if ph.p_flags & PF_W != 0 {
                    prot |= prot::WRITE;
                }
                if ph.p_flags & PF_X != 0 {
                    prot |= prot::EXEC;
                }
                p.loads[p.nloads] = Load {
                    vaddr,
                    mem_len: ph.p_memsz,
                    offset: ph.p_offset,
                    file_len: ph.p_filesz,
                    prot,
                };
                p.nloads += 1;
            }
            _ => {}
        }
    }
    if p.nloads == 0 {
        return Err(Error::Malformed);
    }
    let loads = &mut p.loads[..p.nloads];
    loads.sort_unstable_by_key(|l| l.vaddr);
    // Page spans must not overlap: each page has one owner.
    for w in loads.windows(2) {
        if w[0].span().1 > w[1].span().0 {
            return Err(Error::BadSegment);
        }
    }
    p.brk = loads[loads.len() - 1].span().1;
    p.entry = eh.e_entry.checked_add(bias).ok_or(Error::Malformed)?;
    if !loads
        .iter()
        .any(|l| l.prot & prot::EXEC != 0 && (l.vaddr..l.vaddr + l.mem_len).contains(&p.entry))
    {
        return Err(Error::BadSegment);
    }
    // AT_PHDR: PT_PHDR if present, else the load segment holding the
    // headers' file bytes (what Linux does).
    p.phdr = match phdr_vaddr {
        Some(v) => v.checked_add(bias).ok_or(Error::Malformed)?,
        None => loads
            .iter()
            .find(|l| l.offset <= eh.e_phoff && ph_end <= l.offset + l.file_len)
            .map(|l| l.vaddr + (eh.e_phoff - l.offset))
            .ok_or(Error::Malformed)?,
    };
    Ok(p)
}

#[cfg(test)]
#[path = "elf/tests.rs"]
mod tests;
