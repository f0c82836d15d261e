//! Global descriptor table and task-state segment.
//!
//! Selector layout is fixed by `syscall`/`sysret`: `STAR` names the kernel
//! code selector (data follows it) and a user base from which `sysret`
//! derives user data (+8) and user 64-bit code (+16).
//!
//! | selector | use |
//! |---|---|
//! | 0x08 | kernel code |
//! | 0x10 | kernel data |
//! | 0x18 | user base for `sysret` (unused placeholder) |
//! | 0x20 | user data (`0x23` with RPL 3) |
//! | 0x28 | user code (`0x2b` with RPL 3) |
//! | 0x30 | TSS (two slots) |
//!
//! The TSS holds `rsp0`, which the CPU uses on an interrupt from user mode.
//! Stet points it at the *current program's register frame*, so the CPU
//! pushes the interrupted state straight into the frame (the seL4 trick):
//! no copy, and the kernel stack stays empty between traps.
//!
//! It also carries the **I/O permission bitmap** for all 65536 ports (8 KiB,
//! one bit a port, 1 = closed) and the terminating `0xff` byte the CPU
//! needs. Every bit is 1 except the range of the domain on the CPU (its
//! ioports key): a switch flips only the bytes of the outgoing and incoming
//! ranges, so a switch between domains without ports touches nothing
//! (KLOS §2.3.2: per-process I/O bitmaps).

use super::kcell::KCell;
use x86_64::instructions::segmentation::{Segment, CS, DS, ES, SS};
use x86_64::instructions::tables::load_tss;
use x86_64::structures::gdt::{Descriptor, GlobalDescriptorTable, SegmentSelector};
use x86_64::structures::tss::TaskStateSegment;
use x86_64::{PrivilegeLevel, VirtAddr};

/// Kernel code selector.
pub const KERNEL_CS: u16 = 0x08;
/// Kernel data selector.
pub const KERNEL_DS: u16 = 0x10;
/// Base that `STAR[63:48]` names for `sysret`.
pub const SYSRET_BASE: u16 = 0x18;
/// User data selector with RPL 3.
pub const USER_DS: u16 = 0x23;
/// User code selector with RPL 3.
pub const USER_CS: u16 = 0x2b;

/// IST slot (1-based) for double faults.
pub const IST_DOUBLE_FAULT: u16 = 1;
/// IST slot for NMIs.
pub const IST_NMI: u16 = 2;
/// IST slot for machine checks.
pub const IST_MACHINE_CHECK: u16 = 3;

/// Bytes of the I/O permission bitmap (one bit for each of 65536 ports).
const IOMAP_BYTES: usize = 8192;

/// The TSS followed by its I/O permission bitmap and the `0xff` byte the
/// CPU reads past the last port's bit.
#[repr(C)]
struct Tss {
    tss: TaskStateSegment,
    iomap: [u8; IOMAP_BYTES + 1],
}

static TSS: KCell<Tss> = KCell::new(Tss {
    tss: {
        let mut t = TaskStateSegment::new();
        t.iomap_base = core::mem::size_of::<TaskStateSegment>() as u16;
        t
    },
    iomap: [0xff; IOMAP_BYTES + 1],
});
static GDT: KCell<GlobalDescriptorTable<8>> = KCell::new(GlobalDescriptorTable::empty());

/// Builds and loads the GDT and TSS. `ist_base` points at three stacks of
/// `ist_size` bytes each.
///
/// # Safety
/// Boot, once, before any trap. `kstack_top` is the top of the kernel
/// stack and `[ist_base, ist_base + 3 * ist_size)` the interrupt stacks,
/// memory the CPU may push onto for the kernel's lifetime and that holds
/// nothing else.
pub(in crate::arch) unsafe fn init(kstack_top: u64, ist_base: u64, ist_size: u64) {
    // SAFETY: boot, single CPU, before any trap: nothing else references
    // these statics yet, and afterwards only `set_rsp0` writes the TSS.
    let (tss, gdt) = unsafe { (&mut TSS.get().tss, GDT.get()) };
    tss.privilege_stack_table[0] = VirtAddr::new(kstack_top);
    for i in 0..3 {
        tss.interrupt_stack_table[i] = VirtAddr::new(ist_base + (i as u64 + 1) * ist_size);
    }
    let kcs = gdt.append(Descriptor::kernel_code_segment());
    let kds = gdt.append(Descriptor::kernel_data_segment());
    let _placeholder = gdt.append(Descriptor::user_data_segment());
    let uds = gdt.append(Descriptor::user_data_segment());
    let ucs = gdt.append(Descriptor::user_code_segment());
    // SAFETY: the TSS is a static that lives forever; the references only
    // tell the descriptor where the TSS and its bitmap are.
    let (t, map) = unsafe { (&(*TSS.as_ptr()).tss, &(*TSS.as_ptr()).iomap) };
    let desc = match Descriptor::tss_segment_with_iomap(t, map) {
        Ok(d) => d,
        Err(_) => crate::fatal(format_args!("the TSS I/O bitmap is malformed")),
    };
    let tss_sel = gdt.append(desc);
    debug_assert_eq!(kcs.0, KERNEL_CS);
    debug_assert_eq!(kds.0, KERNEL_DS);
    debug_assert_eq!(uds.0, USER_DS);
    debug_assert_eq!(ucs.0, USER_CS);
    // SAFETY: the GDT is a static; the selectors index valid descriptors
    // just appended; loading the TSS once at boot is required.
    unsafe {
        (*GDT.as_ptr()).load_unsafe();
        CS::set_reg(SegmentSelector::new(1, PrivilegeLevel::Ring0));
        DS::set_reg(SegmentSelector::new(2, PrivilegeLevel::Ring0));
        ES::set_reg(SegmentSelector::new(2, PrivilegeLevel::Ring0));
        SS::set_reg(SegmentSelector::new(2, PrivilegeLevel::Ring0));
        load_tss(tss_sel);
    }
}

/// Sets the stack the CPU switches to on an interrupt from user mode.
///
/// # Safety
/// `top` must be one past a [`TrapFrame`](super::entry::TrapFrame) that
/// stays where it is, and holds nothing else, until the next call: the
/// next interrupt from user mode pushes the user state below `top`.
pub(in crate::arch) unsafe fn set_rsp0(top: u64) {
    // SAFETY: single CPU, interrupts off in the kernel; the CPU reads rsp0
    // only on the next user→kernel transition.
    unsafe { (*TSS.as_ptr()).tss.privilege_stack_table[0] = VirtAddr::new(top) };
}

/// Opens (`open`) or closes the ports `[base, base + count)` in the I/O
/// permission bitmap; `count` 0 does nothing. Whole bytes are written at
/// once, so an 8-aligned range of 8 ports (a UART) is one byte.
pub fn set_ports(base: u16, count: u32, open: bool) {
    let start = base as usize;
    let end = (start + count as usize).min(IOMAP_BYTES * 8);
    if start >= end {
        return;
    }
    // SAFETY: single CPU, interrupts off in the kernel; the CPU reads the
    // bitmap only for `in`/`out` in user mode, never while the kernel runs.
    let map = unsafe { &mut (*TSS.as_ptr()).iomap };
    let mut p = start;
    while p < end {
        let (byte, bit) = (p / 8, p % 8);
        if bit == 0 && end - p >= 8 {
            // A whole byte of the range (and the next ones, 8 ports each).
            let full = (end - p) / 8;
            map[byte..byte + full].fill(if open { 0 } else { 0xff });
            p += full * 8;
        } else {
            if open {
                map[byte] &= !(1 << bit);
            } else {
                map[byte] |= 1 << bit;
            }
            p += 1;
        }
    }
}

/// Whether port `port` is open in the bitmap now (for the invariant
/// walker).
pub fn port_open(port: u16) -> bool {
    // SAFETY: a read of the static bitmap; see `set_ports`.
    let map = unsafe { &(*TSS.as_ptr()).iomap };
    map[port as usize / 8] & (1 << (port % 8)) == 0
}
