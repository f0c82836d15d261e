//! CPU features, control registers and model-specific registers.

use core::sync::atomic::{AtomicU64, Ordering};
use x86_64::registers::control::{Cr0, Cr0Flags, Cr4, Cr4Flags};
use x86_64::registers::model_specific::{Efer, EferFlags, Msr};
use x86_64::registers::xcontrol::{XCr0, XCr0Flags};

/// What this CPU offers that the kernel uses.
#[derive(Clone, Copy, Debug, Default)]
pub struct Features {
    /// Supervisor-mode execution prevention.
    pub smep: bool,
    /// Supervisor-mode access prevention.
    pub smap: bool,
    /// No-execute pages.
    pub nx: bool,
    /// Global pages.
    pub pge: bool,
    /// 1 GiB pages.
    pub huge_1g: bool,
    /// XSAVE (else FXSAVE is used).
    pub xsave: bool,
    /// XSAVEOPT.
    pub xsaveopt: bool,
    /// AVX state.
    pub avx: bool,
    /// x2APIC mode.
    pub x2apic: bool,
    /// Protection keys for user pages.
    pub pku: bool,
    /// FSGSBASE instructions.
    pub fsgsbase: bool,
    /// SSE4.2 (for the `crc32` instruction).
    pub sse42: bool,
}

fn cpuid(leaf: u32, sub: u32) -> (u32, u32, u32, u32) {
    let r = core::arch::x86_64::__cpuid_count(leaf, sub);
    (r.eax, r.ebx, r.ecx, r.edx)
}

/// Reads the feature flags.
pub fn detect() -> Features {
    let (max, ..) = cpuid(0, 0);
    let (_, _, ecx1, edx1) = cpuid(1, 0);
    let (_, ebx7, ecx7, _) = if max >= 7 { cpuid(7, 0) } else { (0, 0, 0, 0) };
    let (_, _, _, edx81) = cpuid(0x8000_0001, 0);
    let xsave = ecx1 & (1 << 26) != 0;
    let xsaveopt = xsave && max >= 0xd && cpuid(0xd, 1).0 & 1 != 0;
    Features {
        smep: ebx7 & (1 << 7) != 0,
        smap: ebx7 & (1 << 20) != 0,
        nx: edx81 & (1 << 20) != 0,
        pge: edx1 & (1 << 13) != 0,
        huge_1g: edx81 & (1 << 26) != 0,
        xsave,
        xsaveopt,
        avx: xsave && ecx1 & (1 << 28) != 0,
        x2apic: ecx1 & (1 << 21) != 0,
        pku: ecx7 & (1 << 3) != 0,
        fsgsbase: ebx7 & 1 != 0,
        sse42: ecx1 & (1 << 20) != 0,
    }
}

/// Size of the XSAVE area for the state components in `XCR0` (CPUID 0xD).
pub fn xsave_size() -> u32 {
    cpuid(0xd, 0).1
}

/// Turns on what the kernel relies on: write protection in ring 0, NX,
/// global pages, SSE for user programs (the kernel itself never uses it:
/// its target is soft-float), XSAVE, SMEP and SMAP when present.
///
/// # Safety
/// Boot, once; `f` is what [`detect`] found on this CPU (a bit it does not
/// support would fault the write).
pub(in crate::arch) unsafe fn enable(f: &Features) {
    // SAFETY: each bit is supported (the caller's `f`) and the kernel is
    // written for it: the kernel never touches user memory directly, so SMAP
    // costs nothing; the kernel never executes user pages, so SMEP neither.
    unsafe {
        Cr0::update(|c| {
            c.insert(Cr0Flags::WRITE_PROTECT | Cr0Flags::MONITOR_COPROCESSOR);
            c.remove(Cr0Flags::EMULATE_COPROCESSOR | Cr0Flags::TASK_SWITCHED);
        });
        let mut efer = Efer::read() | EferFlags::SYSTEM_CALL_EXTENSIONS;
        if f.nx {
            efer |= EferFlags::NO_EXECUTE_ENABLE;
        }
        Efer::write(efer);
        let mut cr4 = Cr4::read() | Cr4Flags::OSFXSR | Cr4Flags::OSXMMEXCPT_ENABLE;
        if f.pge {
            cr4 |= Cr4Flags::PAGE_GLOBAL;
        }
        if f.xsave {
            cr4 |= Cr4Flags::OSXSAVE;
        }
        if f.smep {
            cr4 |= Cr4Flags::SUPERVISOR_MODE_EXECUTION_PROTECTION;
        }
        if f.smap {
            cr4 |= Cr4Flags::SUPERVISOR_MODE_ACCESS_PREVENTION;
        }
        Cr4::write(cr4);
        if f.xsave {
            let mut x = XCr0Flags::X87 | XCr0Flags::SSE;
            if f.avx {
                x |= XCr0Flags::AVX;
            }
            XCr0::write(x);
        }
    }
}

/// Whether SMEP and SMAP are on right now (from CR4, not CPUID).
pub fn smep_smap_active() -> (bool, bool) {
    let cr4 = Cr4::read();
    (
        cr4.contains(Cr4Flags::SUPERVISOR_MODE_EXECUTION_PROTECTION),
        cr4.contains(Cr4Flags::SUPERVISOR_MODE_ACCESS_PREVENTION),
    )
}

const IA32_GS_BASE: u32 = 0xc000_0101;
const IA32_KERNEL_GS_BASE: u32 = 0xc000_0102;
const IA32_STAR: u32 = 0xc000_0081;
const IA32_LSTAR: u32 = 0xc000_0082;
const IA32_FMASK: u32 = 0xc000_0084;

/// Sets the kernel's GS base and the (swapped-out) user GS base.
///
/// # Safety
/// `kernel` must point at this CPU's `PerCpu` for the kernel's lifetime:
/// the entry paths read and write through `gs`.
pub(in crate::arch) unsafe fn set_gs_bases(kernel: u64, user: u64) {
    // SAFETY: these MSRs exist on every x86_64 CPU; the per-CPU pointer is
    // valid for the kernel's lifetime.
    unsafe {
        Msr::new(IA32_GS_BASE).write(kernel);
        Msr::new(IA32_KERNEL_GS_BASE).write(user);
    }
}

/// Programs `syscall`/`sysret`: entry point, selectors, and the flags that
/// entry clears (IF so the kernel runs with interrupts off, DF for the ABI,
/// TF, AC so SMAP stays armed, NT, IOPL).
///
/// # Safety
/// `entry` must be `syscall_entry` and the selectors the GDT's (`gdt.rs`):
/// every `syscall` jumps there in ring 0.
pub(in crate::arch) unsafe fn init_syscall(entry: u64, kernel_cs: u16, sysret_base: u16) {
    let star = ((sysret_base as u64) << 48) | ((kernel_cs as u64) << 32);
    // SAFETY: the entry point is `syscall_entry`, which expects exactly this
    // selector layout (gdt.rs) and these masked flags.
    unsafe {
        Msr::new(IA32_STAR).write(star);
        Msr::new(IA32_LSTAR).write(entry);
        Msr::new(IA32_FMASK).write(0x0004_7700);
    }
}

/// The faulting address of the last page fault.
pub fn read_cr2() -> u64 {
    x86_64::registers::control::Cr2::read_raw()
}

/// Stops this CPU until the next interrupt, with interrupts enabled during
/// the wait and disabled again after.
pub fn wait_for_interrupt() {
    // SAFETY: `sti; hlt` is atomic with respect to interrupts (the STI
    // shadow), so no wake-up is lost; the handler returns here with IF
    // restored by `iretq`, and we disable again.
    unsafe { core::arch::asm!("sti", "hlt", "cli", options(nomem, nostack)) };
}

/// The time-stamp counter, after earlier instructions finished (under
/// QEMU `-icount shift=0` it counts guest instructions).
pub fn rdtsc() -> u64 {
    // SAFETY: LFENCE and RDTSC only read the counter; RDTSC is allowed in
    // ring 0 whatever CR4.TSD says.
    unsafe {
        core::arch::x86_64::_mm_lfence();
        core::arch::x86_64::_rdtsc()
    }
}

/// The time-stamp counter at the kernel's first instruction.
static BOOT_TSC: AtomicU64 = AtomicU64::new(0);

/// Remembers the time-stamp counter read by the first boot instruction.
pub fn set_boot_tsc(tsc: u64) {
    BOOT_TSC.store(tsc, Ordering::Relaxed);
}

/// The time-stamp counter at the kernel's first instruction (`boot.rs`
/// reads it before anything else); the restart benchmark's start.
#[cfg(feature = "testing")]
pub fn boot_tsc() -> u64 {
    BOOT_TSC.load(Ordering::Relaxed)
}

/// The enabled XSAVE components (XCR0); only read when XSAVE is on.
pub fn xcr0() -> u64 {
    XCr0::read_raw()
}

const IA32_FS_BASE: u32 = 0xc000_0100;

/// Loads a domain's `fs` and `gs` bases (the user `gs` base is the one
/// `swapgs` brings in on the way out). A non-canonical base (which would
/// fault the `wrmsr`) loads as 0.
pub fn set_user_bases(fs: u64, gs: u64) {
    let user = |v: u64| if v < 0x0000_8000_0000_0000 { v } else { 0 };
    let (fs, gs) = (user(fs), user(gs));
    // SAFETY: the MSRs exist on every x86_64 CPU; user-half values are
    // canonical and cannot fault; the kernel does not use `fs`, and its own
    // `gs` base is the other one while it runs.
    unsafe {
        Msr::new(IA32_FS_BASE).write(fs);
        Msr::new(IA32_KERNEL_GS_BASE).write(gs);
    }
}
