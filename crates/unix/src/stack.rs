//! The initial stack of a Linux x86_64 process: what `execve` leaves
//! between the stack pointer and the top of the stack, which static glibc
//! and musl read before `main` (the System V x86-64 psABI §3.4.1, and the
//! order Linux's `create_elf_tables` uses).
//!
//! ```text
//! stack_top →  8 zero bytes (end marker)
//!              the strings: argv[0] … argv[n-1], envp[0] … envp[m-1], execfn
//!              "x86_64\0" (AT_PLATFORM), 16 random bytes (AT_RANDOM)
//!              (down to a multiple of 16)
//!              AT_NULL pair; auxv pairs (type, value), first entry lowest
//!              NULL; envp pointers
//!              NULL; argv pointers
//! rsp       →  argc                 (rsp is a multiple of 16)
//! ```
//!
//! [`build`] writes it into a buffer that stands for the memory just below
//! the stack top, and never allocates.

/// Auxiliary vector entry types (`<elf.h>` `AT_*`) that [`build`] writes.
pub mod at {
    /// End of the vector.
    pub const NULL: u64 = 0;
    /// Program headers' address in memory.
    pub const PHDR: u64 = 3;
    /// Size of one program header.
    pub const PHENT: u64 = 4;
    /// Number of program headers.
    pub const PHNUM: u64 = 5;
    /// Page size.
    pub const PAGESZ: u64 = 6;
    /// The interpreter's base (0: a static program has none).
    pub const BASE: u64 = 7;
    /// Flags (0).
    pub const FLAGS: u64 = 8;
    /// The program's entry point.
    pub const ENTRY: u64 = 9;
    /// Real user id.
    pub const UID: u64 = 11;
    /// Effective user id.
    pub const EUID: u64 = 12;
    /// Real group id.
    pub const GID: u64 = 13;
    /// Effective group id.
    pub const EGID: u64 = 14;
    /// Address of the platform string.
    pub const PLATFORM: u64 = 15;
    /// CPU feature bits (CPUID 1 EDX on x86).
    pub const HWCAP: u64 = 16;
    /// Clock ticks per second (`times`).
    pub const CLKTCK: u64 = 17;
    /// Whether the program runs set-id (0).
    pub const SECURE: u64 = 23;
    /// Address of 16 random bytes (stack protector and pointer guard).
    pub const RANDOM: u64 = 25;
    /// More CPU feature bits.
    pub const HWCAP2: u64 = 26;
    /// Address of the executed file's name.
    pub const EXECFN: u64 = 31;
}

/// Most auxv entries [`build`] writes, AT_NULL included.
pub const AUXV_ENTRIES: usize = 19;

/// Where the loaded program is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loaded {
    /// Address of the program headers in memory (AT_PHDR).
    pub phdr: u64,
    /// Size of a program header (AT_PHENT: 56 for ELF64).
    pub phent: u64,
    /// Number of program headers (AT_PHNUM).
    pub phnum: u64,
    /// Entry point (AT_ENTRY).
    pub entry: u64,
    /// Interpreter base (AT_BASE; 0 for a static program).
    pub base: u64,
}

/// Everything the initial stack says.
#[derive(Clone, Copy, Debug)]
pub struct Start<'a> {
    /// The arguments, each without its terminating NUL.
    pub argv: &'a [&'a [u8]],
    /// The environment (`NAME=value`), each without its NUL.
    pub envp: &'a [&'a [u8]],
    /// The file executed, as given to `execve` (AT_EXECFN).
    pub execfn: &'a [u8],
    /// The program.
    pub loaded: Loaded,
    /// Real and effective user and group ids.
    pub ids: [u64; 4],
    /// `AT_SECURE`: the program runs with ids other than its caller's
    /// (set-user-ID or set-group-ID).
    pub secure: bool,
    /// AT_HWCAP and AT_HWCAP2.
    pub hwcap: [u64; 2],
    /// Clock ticks per second (AT_CLKTCK; Linux says 100).
    pub clktck: u64,
    /// The 16 bytes AT_RANDOM points to.
    pub random: [u8; 16],
}

/// Why the stack cannot be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// It does not fit the space given (`execve` answers `E2BIG`).
    TooBig,
    /// A string holds a NUL byte, so it cannot be a C string.
    Nul,
    /// The stack top is not a multiple of 16.
    Misaligned,
}

const PLATFORM: &[u8] = b"x86_64\0";
const PAGE: u64 = 4096;

/// Writes the initial stack of `s` into `mem`, the bytes just below
/// `stack_top` (`mem[mem.len() - 1]` is the byte at `stack_top - 1`) →
/// the stack pointer for the program's entry (the address of `argc`).
/// Bytes of `mem` below it are left as they were.
pub fn build(s: &Start<'_>, stack_top: u64, mem: &mut [u8]) -> Result<u64, Error> {
    if !stack_top.is_multiple_of(16) {
        return Err(Error::Misaligned);
    }
    let all = || s.argv.iter().chain(s.envp).chain([&s.execfn]);
    if all().any(|a| a.contains(&0)) {
        return Err(Error::Nul);
    }
    let strings: usize = all().map(|a| a.len() + 1).sum();
    let info = 8 + strings + PLATFORM.len() + 16;
    let words = 1 + s.argv.len() + 1 + s.envp.len() + 1 + 2 * AUXV_ENTRIES;
    // The vector starts at a multiple of 16 below the information block.
    let vector_top = stack_top.checked_sub(info as u64).ok_or(Error::TooBig)? & !15;
    let rsp = vector_top
        .checked_sub(8 * words as u64)
        .ok_or(Error::TooBig)?
        & !15;
    if stack_top - rsp > mem.len() as u64 {
        return Err(Error::TooBig);
    }
    let base = stack_top
        .checked_sub(mem.len() as u64)
        .ok_or(Error::TooBig)?;
    let mut w = Writer { mem, base };

    // The information block: the end marker at the top, the strings below
    // it in ascending order (the lowest is argv[0]), then the platform
    // string and the random bytes.
    w.bytes(stack_top - 8, &[0; 8]);
    let mut next = stack_top - 8 - strings as u64;
    let platform = next - PLATFORM.len() as u64;
    let random = platform - 16;
    debug_assert!(random >= vector_top);
    w.bytes(platform, PLATFORM);
    w.bytes(random, &s.random);
    let mut place = |w: &mut Writer<'_>, text: &[u8]| {
        let a = next;
        w.bytes(a, text);
        w.bytes(a + text.len() as u64, &[0]);
        next += text.len() as u64 + 1;
        a
    };

    // The vector, each pointer written as its string is placed.
    let argv_base = rsp + 8;
    let envp_base = argv_base + 8 * (s.argv.len() as u64 + 1);
    let aux_base = envp_base + 8 * (s.envp.len() as u64 + 1);
    w.word(rsp, s.argv.len() as u64);
    for (i, a) in s.argv.iter().enumerate() {
        let p = place(&mut w, a);
        w.word(argv_base + 8 * i as u64, p);
    }
    w.word(argv_base + 8 * s.argv.len() as u64, 0);
    for (i, e) in s.envp.iter().enumerate() {
        let p = place(&mut w, e);
        w.word(envp_base + 8 * i as u64, p);
    }
    w.word(envp_base + 8 * s.envp.len() as u64, 0);
    let execfn = place(&mut w, s.execfn);

    let l = s.loaded;
    let aux: [(u64, u64); AUXV_ENTRIES] = [
        (at::HWCAP, s.hwcap[0]),
        (at::PAGESZ, PAGE),
        (at::CLKTCK, s.clktck),
        (at::PHDR, l.phdr),
        (at::PHENT, l.phent),
        (at::PHNUM, l.phnum),
        (at::BASE, l.base),
        (at::FLAGS, 0),
        (at::ENTRY, l.entry),
        (at::UID, s.ids[0]),
        (at::EUID, s.ids[1]),
        (at::GID, s.ids[2]),
        (at::EGID, s.ids[3]),
        (at::SECURE, s.secure as u64),
        (at::RANDOM, random),
        (at::HWCAP2, s.hwcap[1]),
        (at::EXECFN, execfn),
        (at::PLATFORM, platform),
        (at::NULL, 0),
    ];
    for (i, (t, v)) in aux.iter().enumerate() {
        w.word(aux_base + 16 * i as u64, *t);
        w.word(aux_base + 16 * i as u64 + 8, *v);
    }
    Ok(rsp)
}

/// Writes into `mem`, which holds the addresses from `base` up.
struct Writer<'a> {
    mem: &'a mut [u8],
    base: u64,
}

impl Writer<'_> {
    fn bytes(&mut self, addr: u64, b: &[u8]) {
        let i = (addr - self.base) as usize;
        self.mem[i..i + b.len()].copy_from_slice(b);
    }

    fn word(&mut self, addr: u64, v: u64) {
        self.bytes(addr, &v.to_le_bytes());
    }
}

#[cfg(test)]
mod tests;
