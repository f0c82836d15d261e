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
#[derive(Clone, zerocopy::FromZeros)]
pub struct FpuState(pub [u8; AREA_SIZE]);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Fxsave,
    Xsave,
    Xsaveopt,
}

static MODE: KCell<Mode> = KCell::new(Mode::Fxsave);

/// Chooses the save instruction. Returns its name for the boot log.
pub(in crate::arch) fn init(f: &Features) -> &'static str {
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
#[inline]
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

/// Makes an FPU image from outside the kernel (a domain's FPU page, or a
/// domain key holder's string) safe to load: FXRSTOR and XRSTOR fault on
/// reserved MXCSR bits or a malformed XSAVE header, and a fault in the
/// kernel is never the user's to cause. Returns whether it was changed.
pub fn sanitize(s: &mut FpuState) -> bool {
    let b = &mut s.0;
    let before = *b;
    let mxcsr = u32::from_le_bytes([b[24], b[25], b[26], b[27]]) & 0xffff;
    b[24..28].copy_from_slice(&mxcsr.to_le_bytes());
    if mode() != Mode::Fxsave {
        // XSTATE_BV only names components XCR0 enables; XCOMP_BV zero
        // (standard form); the rest of the 64-byte header zero.
        let xcr0 = super::cpu::xcr0();
        let mut bv = u64::from_le_bytes(b[512..520].try_into().unwrap_or([0; 8]));
        bv &= xcr0;
        b[512..520].copy_from_slice(&bv.to_le_bytes());
        b[520..576].fill(0);
    }
    *b != before
}
