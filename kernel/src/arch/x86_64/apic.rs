//! The local APIC (xAPIC through MMIO, or x2APIC through MSRs) and its timer.
//!
//! The timer's input clock differs between machines, so it is measured at
//! boot against the PIT (a fixed 1.193182 MHz), then programmed periodic at
//! the configured rate.

use super::idt::{SPURIOUS_VECTOR, TIMER_VECTOR};
use super::kcell::KCell;
use x86_64::instructions::port::Port;
use x86_64::registers::model_specific::Msr;

const IA32_APIC_BASE: u32 = 0x1b;
const REG_ID: u32 = 0x20;
const REG_TPR: u32 = 0x80;
const REG_EOI: u32 = 0xb0;
const REG_SVR: u32 = 0xf0;
const REG_LVT_TIMER: u32 = 0x320;
const REG_TIMER_INIT: u32 = 0x380;
const REG_TIMER_CURRENT: u32 = 0x390;
const REG_TIMER_DIVIDE: u32 = 0x3e0;

#[derive(Clone, Copy)]
enum Access {
    Mmio(u64),
    X2apic,
}

static ACCESS: KCell<Access> = KCell::new(Access::X2apic);

fn access() -> Access {
    // SAFETY: written once at boot, read-only afterwards.
    unsafe { *ACCESS.as_ptr() }
}

fn write(reg: u32, v: u32) {
    match access() {
        // SAFETY: `base` is the APIC page mapped uncached by `map_mmio`;
        // `reg` is a register offset inside it.
        Access::Mmio(base) => unsafe { ((base + reg as u64) as *mut u32).write_volatile(v) },
        // SAFETY: x2APIC mode is enabled; MSR 0x800 + reg/16 is the register.
        Access::X2apic => unsafe { Msr::new(0x800 + (reg >> 4)).write(v as u64) },
    }
}

fn read(reg: u32) -> u32 {
    match access() {
        // SAFETY: as in `write`.
        Access::Mmio(base) => unsafe { ((base + reg as u64) as *const u32).read_volatile() },
        // SAFETY: as in `write`.
        Access::X2apic => unsafe { Msr::new(0x800 + (reg >> 4)).read() as u32 },
    }
}

/// Enables the local APIC, measures its timer and starts it at `hz`.
/// Returns (mode name, timer ticks per second).
pub(in crate::arch) fn init(x2apic: bool, hz: u32) -> (&'static str, u64) {
    let mut base = Msr::new(IA32_APIC_BASE);
    // SAFETY: the APIC base MSR exists on every x86_64 CPU; setting the
    // enable (and x2APIC, when supported) bits is the documented way in.
    let raw = unsafe { base.read() };
    let mode = if x2apic {
        // SAFETY: see above.
        unsafe { base.write(raw | (1 << 11) | (1 << 10)) };
        Access::X2apic
    } else {
        // SAFETY: see above.
        unsafe { base.write(raw | (1 << 11)) };
        // SAFETY: boot; the APIC base MSR names the local APIC's register
        // page, device memory.
        Access::Mmio(unsafe { super::paging::map_mmio(raw & 0x000f_ffff_ffff_f000) })
    };
    // SAFETY: boot, single-threaded.
    unsafe { *ACCESS.get() = mode };
    write(REG_TPR, 0);
    write(REG_SVR, 0x100 | SPURIOUS_VECTOR as u32);
    write(REG_TIMER_DIVIDE, 0x3); // divide by 16
    let per_sec = calibrate();
    let count = (per_sec / hz as u64).max(1) as u32;
    write(REG_LVT_TIMER, TIMER_VECTOR as u32 | (1 << 17)); // periodic
    write(REG_TIMER_INIT, count);
    let name = match mode {
        Access::X2apic => "x2apic",
        Access::Mmio(_) => "xapic",
    };
    (name, per_sec)
}

/// APIC timer ticks per second, measured over 10 ms of PIT channel 2.
fn calibrate() -> u64 {
    const PIT_HZ: u64 = 1_193_182;
    const DIV: u64 = 100; // 10 ms
    let reload = (PIT_HZ / DIV) as u16;
    let mut gate = Port::<u8>::new(0x61);
    let mut cmd = Port::<u8>::new(0x43);
    let mut ch2 = Port::<u8>::new(0x42);
    // SAFETY: ports 0x42/0x43/0x61 are the PIT and its gate on every PC.
    unsafe {
        let g = gate.read();
        gate.write((g & !0x02) | 0x01); // gate on, speaker off
        cmd.write(0b1011_0000); // channel 2, lo/hi, mode 0
        ch2.write(reload as u8);
        ch2.write((reload >> 8) as u8);
        let g = gate.read();
        gate.write(g & !0x01);
        gate.write(g | 0x01); // restart the count
    }
    write(REG_LVT_TIMER, 1 << 16); // masked, one-shot
    write(REG_TIMER_INIT, u32::MAX);
    // SAFETY: reading the gate port has no side effect.
    while unsafe { gate.read() } & 0x20 == 0 {
        core::hint::spin_loop();
    }
    let elapsed = u32::MAX - read(REG_TIMER_CURRENT);
    write(REG_TIMER_INIT, 0);
    elapsed as u64 * DIV
}

/// This CPU's local APIC id (where MSIs are sent).
pub fn id() -> u32 {
    match access() {
        Access::Mmio(_) => read(REG_ID) >> 24,
        Access::X2apic => read(REG_ID),
    }
}

/// Signals end of interrupt.
pub fn eoi() {
    write(REG_EOI, 0);
}
