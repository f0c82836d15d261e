//! Core files (`core(5)`): which signals dump core, and the bytes of an
//! ELF core file as Linux writes it — an ELF header of type `ET_CORE`, a
//! `PT_NOTE` segment holding an `NT_PRSTATUS` note (the signal, the ids
//! and the registers, `struct elf_prstatus`) and a `PT_LOAD` segment for
//! each run of pages the process has, with their bytes. The keeper
//! (`unixkeeper/dump.rs`) writes them into the file.

use crate::sys::sig::*;

/// Bytes of the ELF header.
pub const EHDR: usize = 64;
/// Bytes of a program header.
pub const PHDR: usize = 56;
/// Bytes of the `NT_PRSTATUS` note: header (12), name `CORE\0` padded to
/// 8, `struct elf_prstatus` (336).
pub const NOTE: usize = 12 + 8 + PRSTATUS;
/// Bytes of `struct elf_prstatus` on x86_64.
pub const PRSTATUS: usize = 336;

/// Whether `sig`'s default action dumps core (`signal(7)`: "Core").
pub fn dumps(sig: u64) -> bool {
    matches!(
        sig,
        SIGQUIT
            | SIGILL
            | SIGTRAP
            | SIGABRT
            | SIGBUS
            | SIGFPE
            | SIGSEGV
            | SIGXCPU
            | SIGXFSZ
            | SIGSYS
    )
}

/// The ELF header of a core file with `phnum` program headers.
pub fn ehdr(phnum: u16) -> [u8; EHDR] {
    let mut h = [0u8; EHDR];
    h[..4].copy_from_slice(b"\x7fELF");
    h[4] = 2; // ELFCLASS64
    h[5] = 1; // little-endian
    h[6] = 1; // EV_CURRENT
    h[16..18].copy_from_slice(&4u16.to_le_bytes()); // ET_CORE
    h[18..20].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    h[20..24].copy_from_slice(&1u32.to_le_bytes());
    h[32..40].copy_from_slice(&(EHDR as u64).to_le_bytes()); // e_phoff
    h[52..54].copy_from_slice(&(EHDR as u16).to_le_bytes());
    h[54..56].copy_from_slice(&(PHDR as u16).to_le_bytes());
    h[56..58].copy_from_slice(&phnum.to_le_bytes());
    h
}

/// A program header: `PT_NOTE` (4) or `PT_LOAD` (1) with flags `flags`
/// (`PF_X` 1, `PF_W` 2, `PF_R` 4), at file offset `off`, `filesz` bytes
/// there, `memsz` bytes at address `vaddr`.
pub fn phdr(kind: u32, flags: u32, off: u64, vaddr: u64, filesz: u64, memsz: u64) -> [u8; PHDR] {
    let mut p = [0u8; PHDR];
    p[..4].copy_from_slice(&kind.to_le_bytes());
    p[4..8].copy_from_slice(&flags.to_le_bytes());
    p[8..16].copy_from_slice(&off.to_le_bytes());
    p[16..24].copy_from_slice(&vaddr.to_le_bytes());
    p[32..40].copy_from_slice(&filesz.to_le_bytes());
    p[40..48].copy_from_slice(&memsz.to_le_bytes());
    p[48..56].copy_from_slice(&(if kind == 1 { 4096u64 } else { 4 }).to_le_bytes());
    p
}

/// The `NT_PRSTATUS` note: signal `sig`, ids `[pid, ppid, pgrp, sid]`,
/// pending and blocked signals, and the registers in `user_regs_struct`'s
/// order (`r15` … `gs`; 27 words).
pub fn prstatus(
    sig: u64,
    ids: [u32; 4],
    pending: u64,
    blocked: u64,
    regs: &[u64; 27],
) -> [u8; NOTE] {
    let mut n = [0u8; NOTE];
    n[..4].copy_from_slice(&5u32.to_le_bytes()); // namesz "CORE\0"
    n[4..8].copy_from_slice(&(PRSTATUS as u32).to_le_bytes());
    n[8..12].copy_from_slice(&1u32.to_le_bytes()); // NT_PRSTATUS
    n[12..17].copy_from_slice(b"CORE\0");
    let d = &mut n[20..];
    d[..4].copy_from_slice(&(sig as u32).to_le_bytes()); // si_signo
    d[12..14].copy_from_slice(&(sig as u16).to_le_bytes()); // pr_cursig
    d[16..24].copy_from_slice(&pending.to_le_bytes());
    d[24..32].copy_from_slice(&blocked.to_le_bytes());
    for (i, id) in ids.iter().enumerate() {
        d[32 + 4 * i..36 + 4 * i].copy_from_slice(&id.to_le_bytes());
    }
    for (i, r) in regs.iter().enumerate() {
        d[112 + 8 * i..120 + 8 * i].copy_from_slice(&r.to_le_bytes());
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout() {
        assert!(dumps(SIGQUIT) && dumps(SIGABRT) && dumps(SIGSEGV));
        assert!(!dumps(SIGTERM) && !dumps(SIGKILL) && !dumps(SIGINT));
        let h = ehdr(3);
        assert_eq!(&h[..4], b"\x7fELF");
        assert_eq!(u16::from_le_bytes([h[16], h[17]]), 4);
        assert_eq!(u16::from_le_bytes([h[56], h[57]]), 3);
        let p = phdr(1, 6, 8192, 0x40_0000, 4096, 4096);
        assert_eq!(u64::from_le_bytes(p[8..16].try_into().unwrap()), 8192);
        let mut r = [0u64; 27];
        r[16] = 0x401000; // rip
        let n = prstatus(6, [7, 1, 7, 1], 0, 0, &r);
        assert_eq!(NOTE, 356);
        assert_eq!(&n[12..16], b"CORE");
        assert_eq!(u32::from_le_bytes(n[20..24].try_into().unwrap()), 6);
        assert_eq!(u32::from_le_bytes(n[52..56].try_into().unwrap()), 7);
        assert_eq!(
            u64::from_le_bytes(n[20 + 112 + 128..20 + 120 + 128].try_into().unwrap()),
            0x401000
        );
    }
}
