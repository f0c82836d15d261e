//! FPU/SSE/AVX state, saved and restored per program.
//!
//! Switching is eager: when the CPU moves from one program to another the
//! kernel saves the old program's state and loads the new one's (lazy
//! switching with CR0.TS leaks state across programs, the LazyFP attack).
//! A `syscall` that returns to the same program touches no FPU state. The
//! kernel itself is compiled soft-float and never uses these registers.

use super::cpu::Features;
use super::kcell::KCell;

/// Bytes reserved per program for saved FPU state.
pub const AREA_SIZE: usize = 1024;

/// A program's saved FPU state (XSAVE or FXSAVE image).
#[repr(C, align(64))]
#[derive(Clone)]
pub struct FpuState([u8; AREA_SIZE]);

impl FpuState {
    /// The state a new program starts with: x87 control word 0x37f, MXCSR
    /// 0x1f80 (all exceptions masked), every register zero.
    pub const fn initial() -> Self {
        let mut b = [0u8; AREA_SIZE];
        b[0] = 0x7f;
        b[1] = 0x03;
        b[24] = 0x80;
        b[25] = 0x1f;
        FpuState(b)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Fxsave,
    Xsave,
    Xsaveopt,
}

static MODE: KCell<Mode> = KCell::new(Mode::Fxsave);

/// Chooses the save instruction. Returns its name for the boot log.
pub fn init(f: &Features) -> &'static str {
    let mode = if f.xsave && (super::cpu::xsave_size() as usize) <= AREA_SIZE {
        if f.xsaveopt {
            Mode::Xsaveopt
        } else {
            Mode::Xsave
        }
    } else {
        Mode::Fxsave
    };
    // SAFETY: boot, single-threaded.
    unsafe { *MODE.get() = mode };
    match mode {
        Mode::Fxsave => "fxsave",
        Mode::Xsave => "xsave",
        Mode::Xsaveopt => "xsaveopt",
    }
}

fn mode() -> Mode {
    // SAFETY: written once at boot, read-only afterwards.
    unsafe { *MODE.as_ptr() }
}

/// Saves the CPU's FPU state into `s`.
pub fn save(s: &mut FpuState) {
    let p = s.0.as_mut_ptr();
    // SAFETY: `s` is 64-byte aligned and AREA_SIZE covers the XSAVE size
    // (checked in `init`) or the 512-byte FXSAVE image; CR4.OSFXSR/OSXSAVE
    // are set by `cpu::enable`.
    unsafe {
        match mode() {
            Mode::Fxsave => core::arch::asm!("fxsave64 [{}]", in(reg) p, options(nostack)),
            Mode::Xsave => {
                core::arch::asm!("xsave64 [{}]", in(reg) p, in("eax") u32::MAX, in("edx") u32::MAX, options(nostack))
            }
            Mode::Xsaveopt => {
                core::arch::asm!("xsaveopt64 [{}]", in(reg) p, in("eax") u32::MAX, in("edx") u32::MAX, options(nostack))
            }
        }
    }
}

/// Loads `s` into the CPU.
pub fn restore(s: &FpuState) {
    let p = s.0.as_ptr();
    // SAFETY: as in `save`; the image was produced by `save` or is
    // `FpuState::initial` (whose XSAVE header is zero: every component in
    // its initial state, which XRSTOR accepts).
    unsafe {
        match mode() {
            Mode::Fxsave => core::arch::asm!("fxrstor64 [{}]", in(reg) p, options(nostack)),
            _ => {
                core::arch::asm!("xrstor64 [{}]", in(reg) p, in("eax") u32::MAX, in("edx") u32::MAX, options(nostack))
            }
        }
    }
}
