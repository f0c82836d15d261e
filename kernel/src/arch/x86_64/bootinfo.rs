//! Reads what the boot loader tells the kernel — memory map, command line,
//! boot module — from either protocol, into one [`BootInfo`].
//!
//! * PVH (`hvm_start_info`, Xen's public ABI; QEMU `-kernel` uses it for
//!   ELF kernels with a `XEN_ELFNOTE_PHYS32_ENTRY` note).
//! * Multiboot2 (GRUB): a list of tagged records.
//!
//! Everything is copied into kernel memory here, except the module, which
//! stays in place and is reserved from the allocator.

use super::phys::read_boot;
use stet_physmem::range::{Range, RangeSet};

const PVH_MAGIC: u32 = 0x336e_c578;
const MB2_MAGIC: u32 = 0x36d7_6289;
const CMDLINE_MAX: usize = 256;

/// The boot protocol that started the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// Xen PVH direct boot.
    Pvh,
    /// Multiboot2.
    Multiboot2,
}

/// What the boot loader handed over.
pub struct BootInfo {
    /// Which protocol.
    pub protocol: Protocol,
    /// Usable RAM.
    pub usable: RangeSet,
    /// Physical memory the boot structures occupy (keep until parsed).
    pub reserved: RangeSet,
    /// One past the highest RAM byte.
    pub max_phys: u64,
    /// The first boot module (the program image), if any.
    pub module: Option<Range>,
    /// Where the ACPI RSDP is, if the loader said (PVH `rsdp_paddr`, or
    /// the copy in a Multiboot2 ACPI tag).
    pub rsdp: Option<u64>,
    cmdline: [u8; CMDLINE_MAX],
    cmdline_len: usize,
}

impl BootInfo {
    /// The kernel command line (truncated to 256 bytes; invalid UTF-8 is
    /// treated as empty).
    pub fn cmdline(&self) -> &str {
        core::str::from_utf8(&self.cmdline[..self.cmdline_len]).unwrap_or("")
    }
}

/// Why the boot information could not be used.
#[derive(Clone, Copy, Debug)]
pub enum BootError {
    /// Neither protocol's magic number was found.
    UnknownProtocol(u32),
    /// The memory map is missing or empty.
    NoMemoryMap,
}

/// Parses the boot information at physical address `info`.
///
/// # Safety
/// `magic` and `info` are what the boot loader passed: with the Multiboot2
/// magic, `info` is its information structure; otherwise it is read as
/// PVH's `hvm_start_info` once its magic is checked. Either way it is in
/// the low GiB that the boot page tables map.
pub(in crate::arch) unsafe fn parse(magic: u32, info: u64) -> Result<BootInfo, BootError> {
    let mut b = BootInfo {
        protocol: Protocol::Pvh,
        usable: RangeSet::new(),
        reserved: RangeSet::new(),
        max_phys: 0,
        module: None,
        rsdp: None,
        cmdline: [0; CMDLINE_MAX],
        cmdline_len: 0,
    };
    // Boot structures live below 1 GiB (the early map); reading the magic at
    // `info` is valid for both protocols.
    if magic == MB2_MAGIC {
        b.protocol = Protocol::Multiboot2;
        parse_mb2(&mut b, info);
    } else {
        // SAFETY: PVH passes a pointer to hvm_start_info in the low GiB.
        let m: u32 = unsafe { read_boot(info) };
        if m != PVH_MAGIC {
            return Err(BootError::UnknownProtocol(magic));
        }
        parse_pvh(&mut b, info);
    }
    if b.usable.as_slice().is_empty() {
        return Err(BootError::NoMemoryMap);
    }
    Ok(b)
}

fn copy_cmdline(b: &mut BootInfo, pa: u64) {
    if pa == 0 {
        return;
    }
    for i in 0..CMDLINE_MAX {
        // SAFETY: the loader gives a NUL-terminated string in low memory.
        let c: u8 = unsafe { read_boot(pa + i as u64) };
        if c == 0 {
            break;
        }
        b.cmdline[i] = c;
        b.cmdline_len = i + 1;
    }
}

fn add_ram(b: &mut BootInfo, addr: u64, len: u64) {
    let end = addr.saturating_add(len);
    let _ = b.usable.insert(Range::new(addr, end));
    b.max_phys = b.max_phys.max(end);
}

#[derive(Clone, Copy)]
#[repr(C)]
struct HvmStartInfo {
    magic: u32,
    version: u32,
    flags: u32,
    nr_modules: u32,
    modlist_paddr: u64,
    cmdline_paddr: u64,
    rsdp_paddr: u64,
    memmap_paddr: u64,
    memmap_entries: u32,
    reserved: u32,
}

#[derive(Clone, Copy)]
#[repr(C)]
struct HvmModlistEntry {
    paddr: u64,
    size: u64,
    cmdline_paddr: u64,
    reserved: u64,
}

#[derive(Clone, Copy)]
#[repr(C)]
struct HvmMemmapEntry {
    addr: u64,
    size: u64,
    kind: u32,
    reserved: u32,
}

fn parse_pvh(b: &mut BootInfo, info: u64) {
    // SAFETY: checked magic above; the structure is in low memory.
    let si: HvmStartInfo = unsafe { read_boot(info) };
    copy_cmdline(b, si.cmdline_paddr);
    if si.rsdp_paddr != 0 {
        b.rsdp = Some(si.rsdp_paddr);
    }
    let _ = b.reserved.insert(Range::new(info, info + 64));
    if si.version >= 1 && si.memmap_paddr != 0 {
        for i in 0..si.memmap_entries.min(128) as u64 {
            // SAFETY: `memmap_entries` entries follow `memmap_paddr`.
            let e: HvmMemmapEntry = unsafe { read_boot(si.memmap_paddr + i * 24) };
            if e.kind == 1 {
                add_ram(b, e.addr, e.size);
            }
        }
    }
    if si.nr_modules > 0 && si.modlist_paddr != 0 {
        // SAFETY: at least one entry at `modlist_paddr`.
        let m: HvmModlistEntry = unsafe { read_boot(si.modlist_paddr) };
        if m.size > 0 {
            b.module = Some(Range::new(m.paddr, m.paddr + m.size));
        }
    }
}

fn parse_mb2(b: &mut BootInfo, info: u64) {
    // SAFETY: Multiboot2 passes an 8-aligned info block: total size, then tags.
    let total: u32 = unsafe { read_boot(info) };
    let end = info + total as u64;
    let _ = b.reserved.insert(Range::new(info, end));
    let mut at = info + 8;
    while at + 8 <= end {
        // SAFETY: tags lie within [info, end).
        let (kind, size): (u32, u32) = unsafe { (read_boot(at), read_boot(at + 4)) };
        if kind == 0 || size < 8 {
            break;
        }
        match kind {
            1 => copy_cmdline(b, at + 8),
            3 if b.module.is_none() => {
                // SAFETY: a module tag holds start and end addresses.
                let (s, e): (u32, u32) = unsafe { (read_boot(at + 8), read_boot(at + 12)) };
                if e > s {
                    b.module = Some(Range::new(s as u64, e as u64));
                }
            }
            6 => {
                // SAFETY: a memory-map tag: entry size, version, entries.
                let esize: u32 = unsafe { read_boot(at + 8) };
                let mut e = at + 16;
                while esize >= 24 && e + esize as u64 <= at + size as u64 {
                    // SAFETY: within the tag.
                    let (addr, len, t): (u64, u64, u32) =
                        unsafe { (read_boot(e), read_boot(e + 8), read_boot(e + 16)) };
                    if t == 1 {
                        add_ram(b, addr, len);
                    }
                    e += esize as u64;
                }
            }
            // ACPI 2.0+ RSDP copy (15) is preferred to the 1.0 one (14).
            14 if b.rsdp.is_none() => b.rsdp = Some(at + 8),
            15 => b.rsdp = Some(at + 8),
            _ => {}
        }
        at += (size as u64).div_ceil(8) * 8;
    }
}
