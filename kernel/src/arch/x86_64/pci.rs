//! PCI configuration space through the legacy I/O ports 0xCF8/0xCFC
//! (configuration mechanism #1, on every PC and in QEMU), used at boot to
//! find devices, read their BARs and capabilities and turn on bus mastering.
//! The firmware (SeaBIOS, even under PVH boot) has already assigned BARs.

use x86_64::instructions::port::Port;

/// A PCI function's address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Function {
    /// Bus number.
    pub bus: u8,
    /// Device number (0..32).
    pub dev: u8,
    /// Function number (0..8).
    pub func: u8,
}

/// Command register bits.
pub const CMD_MEMORY: u16 = 1 << 1;
/// Lets the device master the bus (DMA, MSI writes).
pub const CMD_BUS_MASTER: u16 = 1 << 2;
/// Disables the device's INTx line.
pub const CMD_INTX_DISABLE: u16 = 1 << 10;

impl Function {
    fn address(&self, off: u8) -> u32 {
        0x8000_0000
            | (self.bus as u32) << 16
            | (self.dev as u32) << 11
            | (self.func as u32) << 8
            | (off as u32 & 0xfc)
    }

    /// Reads the aligned dword at `off`.
    pub fn read32(&self, off: u8) -> u32 {
        // SAFETY: 0xCF8/0xCFC are the PCI configuration ports on every PC;
        // the kernel is single-threaded with interrupts off, so the address
        // and data accesses are not interleaved with another's.
        unsafe {
            Port::<u32>::new(0xcf8).write(self.address(off));
            Port::<u32>::new(0xcfc).read()
        }
    }

    /// Writes the aligned dword at `off`.
    pub fn write32(&self, off: u8, v: u32) {
        // SAFETY: as in `read32`; the callers write only registers whose
        // meaning they know (command, MSI-X control).
        unsafe {
            Port::<u32>::new(0xcf8).write(self.address(off));
            Port::<u32>::new(0xcfc).write(v);
        }
    }

    /// Reads the byte at `off`.
    pub fn read8(&self, off: u8) -> u8 {
        (self.read32(off) >> (8 * (off & 3))) as u8
    }

    /// Reads the word at `off` (2-aligned).
    pub fn read16(&self, off: u8) -> u16 {
        (self.read32(off) >> (8 * (off & 2))) as u16
    }

    /// Writes the word at `off` (2-aligned), keeping its dword's other half.
    pub fn write16(&self, off: u8, v: u16) {
        let shift = 8 * (off & 2);
        let old = self.read32(off) & !(0xffff << shift);
        self.write32(off, old | (v as u32) << shift);
    }

    /// Vendor and device id.
    pub fn ids(&self) -> (u16, u16) {
        let v = self.read32(0);
        (v as u16, (v >> 16) as u16)
    }

    /// Sets bits in the command register.
    pub fn enable(&self, bits: u16) {
        // The status half is write-1-to-clear: write zeros there.
        let cmd = self.read16(4) | bits;
        self.write32(4, cmd as u32);
    }

    /// The physical address of memory BAR `i` (64-bit BARs span two
    /// registers), or `None` if it is an I/O BAR or unassigned.
    pub fn bar(&self, i: u8) -> Option<u64> {
        if i > 5 {
            return None;
        }
        let lo = self.read32(0x10 + 4 * i);
        if lo & 1 != 0 {
            return None;
        }
        let mut addr = (lo & !0xf) as u64;
        if (lo >> 1) & 3 == 2 && i < 5 {
            addr |= (self.read32(0x14 + 4 * i) as u64) << 32;
        }
        (addr != 0).then_some(addr)
    }

    /// The capability list: (id, offset) of each entry.
    pub fn capabilities(&self) -> Capabilities {
        let has_list = self.read16(6) & (1 << 4) != 0;
        Capabilities {
            f: *self,
            next: if has_list { self.read8(0x34) & 0xfc } else { 0 },
            left: 48,
        }
    }
}

/// Iterator over a function's capabilities.
pub struct Capabilities {
    f: Function,
    next: u8,
    /// A bound, so a malformed (cyclic) list ends.
    left: u8,
}

impl Iterator for Capabilities {
    type Item = (u8, u8);
    fn next(&mut self) -> Option<(u8, u8)> {
        if self.next < 0x40 || self.left == 0 {
            return None;
        }
        self.left -= 1;
        let at = self.next;
        let id = self.f.read8(at);
        self.next = self.f.read8(at + 1) & 0xfc;
        Some((id, at))
    }
}

/// The first function whose vendor is `vendor` and whose device id is one
/// of `devices`: bus 0 first, then the buses behind PCI-to-PCI bridges.
pub fn find(vendor: u16, devices: &[u16]) -> Option<Function> {
    let mut buses = [0u8; 32];
    let mut pending = 1;
    let mut seen = [false; 256];
    while pending > 0 {
        pending -= 1;
        let bus = buses[pending];
        for dev in 0..32u8 {
            let f0 = Function { bus, dev, func: 0 };
            if f0.ids().0 == 0xffff {
                continue;
            }
            let funcs = if f0.read8(0x0e) & 0x80 != 0 { 8 } else { 1 };
            for func in 0..funcs {
                let f = Function { bus, dev, func };
                let (v, d) = f.ids();
                if v == 0xffff {
                    continue;
                }
                if v == vendor && devices.contains(&d) {
                    return Some(f);
                }
                // A bridge: scan its secondary bus too (once; bounded).
                let secondary = f.read8(0x19);
                if f.read8(0x0e) & 0x7f == 1
                    && secondary != 0
                    && pending < buses.len()
                    && !seen[secondary as usize]
                {
                    seen[secondary as usize] = true;
                    buses[pending] = secondary;
                    pending += 1;
                }
            }
        }
    }
    None
}
