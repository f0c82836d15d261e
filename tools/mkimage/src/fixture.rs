//! Small valid ELF64 executables made in memory, for tests (of this crate
//! and of tools that use it) that need a program without building one.

/// Where [`program`] puts its text.
pub const TEXT_ADDR: u64 = 0x40_0000;
/// Where [`program`] puts its data (and bss).
pub const DATA_ADDR: u64 = 0x60_0000;

/// One load segment of a fixture program.
#[derive(Clone, Debug)]
pub struct Seg {
    /// First address.
    pub vaddr: u64,
    /// Its file bytes.
    pub data: Vec<u8>,
    /// Its memory size (at least `data.len()`; the rest is zero).
    pub mem_len: u64,
    /// Writable.
    pub write: bool,
    /// Executable.
    pub exec: bool,
}

/// An x86_64 `ET_EXEC` file with one `PT_LOAD` per segment. Segment `k`'s
/// bytes sit at file offset `0x1000·(k+1) + vaddr % 0x1000`, so offsets and
/// addresses are congruent modulo the page size.
pub fn elf(entry: u64, segs: &[Seg]) -> Vec<u8> {
    assert!(64 + 56 * segs.len() <= 0x1000, "too many segments");
    let mut f = vec![0u8; 0x1000];
    f[..4].copy_from_slice(b"\x7fELF");
    f[4] = 2; // ELFCLASS64
    f[5] = 1; // little endian
    f[6] = 1; // EV_CURRENT
    f[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    f[18..20].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    f[20..24].copy_from_slice(&1u32.to_le_bytes());
    f[24..32].copy_from_slice(&entry.to_le_bytes());
    f[32..40].copy_from_slice(&64u64.to_le_bytes()); // e_phoff
    f[52..54].copy_from_slice(&64u16.to_le_bytes()); // e_ehsize
    f[54..56].copy_from_slice(&56u16.to_le_bytes()); // e_phentsize
    f[56..58].copy_from_slice(&(segs.len() as u16).to_le_bytes());
    f[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
    for (k, s) in segs.iter().enumerate() {
        let offset = 0x1000 * (k as u64 + 1) + s.vaddr % 0x1000;
        let flags = 4 | if s.write { 2 } else { 0 } | if s.exec { 1 } else { 0 };
        let o = 64 + 56 * k;
        f[o..o + 4].copy_from_slice(&1u32.to_le_bytes()); // PT_LOAD
        f[o + 4..o + 8].copy_from_slice(&(flags as u32).to_le_bytes());
        f[o + 8..o + 16].copy_from_slice(&offset.to_le_bytes());
        f[o + 16..o + 24].copy_from_slice(&s.vaddr.to_le_bytes());
        f[o + 24..o + 32].copy_from_slice(&s.vaddr.to_le_bytes());
        f[o + 32..o + 40].copy_from_slice(&(s.data.len() as u64).to_le_bytes());
        f[o + 40..o + 48].copy_from_slice(&s.mem_len.max(s.data.len() as u64).to_le_bytes());
        f[o + 48..o + 56].copy_from_slice(&0x1000u64.to_le_bytes());
        let end = offset as usize + s.data.len();
        if f.len() < end {
            f.resize(end, 0);
        }
        f[offset as usize..end].copy_from_slice(&s.data);
    }
    f
}

/// A program with `text` (read-execute) at [`TEXT_ADDR`], entered at its
/// first byte, and `data` followed by `bss` zero bytes (read-write) at
/// [`DATA_ADDR`]. `text` must be under 2 MiB.
pub fn program(text: &[u8], data: &[u8], bss: u64) -> Vec<u8> {
    let text_seg = Seg {
        vaddr: TEXT_ADDR,
        data: text.to_vec(),
        mem_len: text.len() as u64,
        write: false,
        exec: true,
    };
    let data_seg = Seg {
        vaddr: DATA_ADDR,
        data: data.to_vec(),
        mem_len: data.len() as u64 + bss,
        write: true,
        exec: false,
    };
    if data_seg.mem_len == 0 {
        elf(TEXT_ADDR, &[text_seg])
    } else {
        elf(TEXT_ADDR, &[text_seg, data_seg])
    }
}
