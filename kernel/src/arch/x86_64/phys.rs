//! Physical memory: the kernel's frame numbers, and access to frames
//! through the direct map.
//!
//! All RAM (and the low 4 GiB) is mapped at [`PHYS_OFFSET`] by `paging::init`.
//!
//! **Frame numbers.** A [`FrameNumber`] carries the brand [`Phys`], which
//! only this module can make: the frame pool (made once, in
//! `Platform::frame_pool`, over what the sealed boot allocator left) hands
//! frame numbers out, and hardware-layer code that reads one back from
//! the hardware (a page-table entry) uses the `unsafe` [`frame_at`]. No
//! other code can turn an integer into a frame. So every frame number names
//! a frame of the pool, never the kernel image, a boot-time table or a
//! stack: the safe functions here, which take frame numbers, cannot write
//! memory that Rust code holds a reference to.
//!
//! **Loans.** [`with_frame`] and [`with_frame_mut`] lend a frame to a
//! closure as a Rust reference. While a frame is lent mutably nothing else
//! may touch any frame, and while frames are lent shared only more shared
//! loans may be made: the accessors check this (a breach is a kernel bug
//! and panics), so a closure cannot create an aliasing reference.
//!
//! **Boot tables** are made here from boot memory by `Platform::table` and
//! `Platform::zeroed` (`start.rs`), which alone hold the boot allocator.

use core::sync::atomic::{AtomicU32, Ordering};
use stet_physmem::range::Range;

/// The kernel's brand for frame numbers: the authority to name physical
/// memory. Its field is private, so only this module can make one.
pub struct Phys(());

/// A frame of the kernel's frame pool.
pub type FrameNumber = stet_physmem::pool::FrameNumber<Phys>;
/// The kernel's frame pool.
pub type FramePool<'a> = stet_physmem::pool::FramePool<'a, Phys>;

/// Virtual base of the direct map of physical memory.
pub const PHYS_OFFSET: u64 = 0xffff_8000_0000_0000;
/// Bytes in a frame.
pub const FRAME: usize = 4096;

/// The direct-map address of physical address `pa`.
pub const fn to_virt(pa: u64) -> u64 {
    PHYS_OFFSET + pa
}

/// The frame at physical address `pa` (page aligned), read back from the
/// hardware (a page-table entry). `None` for frame 0.
///
/// # Safety
/// `pa` must be the address of a frame the kernel's frame pool handed out
/// (and that is not free): in practice, an address the kernel itself wrote
/// into a page-table entry from a [`FrameNumber`].
#[inline]
pub(in crate::arch) unsafe fn frame_at(pa: u64) -> Option<FrameNumber> {
    FrameNumber::new((pa / FRAME as u64) as u32, &Phys(()))
}

/// The frame pool over `ranges` (the sealed boot allocator's free ranges),
/// in `stack` and `map`. Made once, by `Platform::frame_pool`.
///
/// # Safety
/// Every frame in `ranges` must be RAM, mapped by the direct map, that
/// nothing else uses or will use; no other pool may be made over them.
pub(in crate::arch) unsafe fn frame_pool(
    stack: &'static mut [u32],
    map: &'static mut [u8],
    ranges: &[Range],
) -> Result<FramePool<'static>, stet_physmem::pool::PoolError> {
    FramePool::new(stack, map, ranges, &Phys(()))
}

/// Frames lent by `with_frame` (a count) or `with_frame_mut` (`MUT`).
static LOANS: AtomicU32 = AtomicU32::new(0);
const MUT: u32 = 1 << 31;

/// Checks that no frame is lent (before a write through the direct map).
#[inline(always)]
fn unlent() {
    if LOANS.load(Ordering::Relaxed) != 0 {
        lent();
    }
}

/// Checks that no frame is lent mutably (before a read).
#[inline(always)]
fn not_lent_mut() {
    if LOANS.load(Ordering::Relaxed) & MUT != 0 {
        lent();
    }
}

#[cold]
#[inline(never)]
fn lent() -> ! {
    panic!("a frame accessed while a frame is lent (a kernel bug)")
}

#[inline]
fn frame_ptr(f: FrameNumber) -> *mut u8 {
    to_virt(f.addr()) as *mut u8
}

/// Fills a frame with zeros.
#[inline]
pub fn zero_frame(f: FrameNumber) {
    unlent();
    // SAFETY: `f` is a pool frame, mapped by the direct map and never
    // referenced by Rust code while nothing is lent (module doc); 4096
    // bytes is exactly one frame.
    unsafe { core::ptr::write_bytes(frame_ptr(f), 0, FRAME) };
}

/// Copies `bytes` into frame `f` at `offset`. Panics if it would overflow
/// the frame (a kernel bug, never a user-controlled condition).
#[inline]
pub fn write_frame(f: FrameNumber, offset: usize, bytes: &[u8]) {
    assert!(offset <= FRAME && bytes.len() <= FRAME - offset);
    unlent();
    // SAFETY: bounds checked above; a pool frame is never kernel memory,
    // so it does not overlap `bytes`, and no frame is lent (checked).
    unsafe {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), frame_ptr(f).add(offset), bytes.len())
    };
}

/// Copies from frame `f` at `offset` into `out`.
#[inline]
pub fn read_frame(f: FrameNumber, offset: usize, out: &mut [u8]) {
    assert!(offset <= FRAME && out.len() <= FRAME - offset);
    not_lent_mut();
    // SAFETY: bounds checked above; `out` is not a frame (no frame is lent
    // mutably, checked) and the frame is only read.
    unsafe {
        core::ptr::copy_nonoverlapping(frame_ptr(f).add(offset), out.as_mut_ptr(), out.len())
    };
}

/// Copies `len` bytes from frame `src` at `soff` to frame `dst` at `doff`
/// (message strings between two domains' pages).
#[inline]
pub fn copy_frames(src: FrameNumber, soff: usize, dst: FrameNumber, doff: usize, len: usize) {
    assert!(soff + len <= 4096 && doff + len <= 4096);
    unlent();
    // SAFETY: both are pool frames (RAM, direct-mapped, not lent: checked),
    // the ranges are inside them (checked); `copy` allows overlap (src may
    // equal dst).
    unsafe { core::ptr::copy(frame_ptr(src).add(soff), frame_ptr(dst).add(doff), len) }
}

/// Copies the whole of frame `src` into frame `dst`.
#[inline]
pub fn copy_frame(src: FrameNumber, dst: FrameNumber) {
    copy_frames(src, 0, dst, 0, 4096);
}

/// The CRC-32C of frame `f` (a checksum without a closure: no loan is
/// made, since no other code runs while the frame is read).
#[inline]
pub fn frame_crc32c(f: FrameNumber) -> u32 {
    not_lent_mut();
    // SAFETY: a pool frame, direct-mapped, not lent mutably (checked); the
    // reference lives only for this call, in which nothing writes frames.
    let bytes = unsafe { &*(frame_ptr(f) as *const [u8; FRAME]) };
    super::crc32c::crc32c(bytes)
}

/// `frame_crc32c` behind a call, for the checks off the writer's hot path
/// (a page read from home, the scrub): each more inlined copy made LLVM
/// stop inlining the checksum where every page of a checkpoint goes
/// through it (`ckpt_commit_16mib`).
#[inline(never)]
pub fn frame_crc32c_called(f: FrameNumber) -> u32 {
    frame_crc32c(f)
}

/// Runs `op` on the bytes of frame `f` (checksums, decoding in place
/// without a copy on the kernel stack). Other shared loans may be made
/// inside `op`; nothing may write a frame there.
#[inline]
pub fn with_frame<R>(f: FrameNumber, op: impl FnOnce(&[u8; FRAME]) -> R) -> R {
    let loans = LOANS.load(Ordering::Relaxed);
    if loans & MUT != 0 {
        lent();
    }
    LOANS.store(loans + 1, Ordering::Relaxed);
    // SAFETY: `f` is a pool frame, direct-mapped; no mutable loan exists
    // (checked) and none can be made, nor any write through the direct
    // map, until this loan ends (the accessors check `LOANS`). The kernel
    // runs one trap at a time with interrupts off, so nothing else runs.
    let bytes = unsafe { &*(frame_ptr(f) as *const [u8; FRAME]) };
    let r = op(bytes);
    LOANS.store(loans, Ordering::Relaxed);
    r
}

/// Runs `op` on the bytes of frame `f`, writable (encoding in place).
/// No other frame access may happen inside `op`.
#[inline]
pub fn with_frame_mut<R>(f: FrameNumber, op: impl FnOnce(&mut [u8; FRAME]) -> R) -> R {
    unlent();
    LOANS.store(MUT, Ordering::Relaxed);
    // SAFETY: as in `with_frame`; no loan exists (checked) and no other
    // access to any frame can happen until this one ends.
    let bytes = unsafe { &mut *(frame_ptr(f) as *mut [u8; FRAME]) };
    let r = op(bytes);
    LOANS.store(0, Ordering::Relaxed);
    r
}

/// A byte slice over physical memory that the boot allocator reserved for
/// the kernel's lifetime (the boot module).
///
/// # Safety
/// `[pa, pa + len)` must be RAM, mapped by the direct map, and never handed
/// to the frame pool or written while the slice lives.
pub(in crate::arch) unsafe fn reserved_slice(pa: u64, len: usize) -> &'static [u8] {
    // SAFETY: the caller's contract.
    unsafe { core::slice::from_raw_parts(to_virt(pa) as *const u8, len) }
}

/// Reads a `T` from physical memory during boot (boot information).
///
/// # Safety
/// `pa` must be mapped (the boot tables map the first 1 GiB) and hold a
/// valid `T`.
pub(in crate::arch) unsafe fn read_boot<T: Copy>(pa: u64) -> T {
    // SAFETY: the caller's contract; unaligned reads are allowed.
    unsafe { core::ptr::read_unaligned(to_virt(pa) as *const T) }
}

/// The array of `n` `T`s at `pa`, each made by `init` (a fixed kernel
/// table sized at boot).
///
/// # Safety
/// `[pa, pa + n * size_of::<T>())` must be RAM mapped by the direct map,
/// aligned for `T`, just handed out by the boot allocator for this table
/// alone (so nothing else refers to it, now or later).
pub(in crate::arch) unsafe fn boot_array<T>(
    pa: u64,
    n: usize,
    mut init: impl FnMut() -> T,
) -> &'static mut [T] {
    let p = to_virt(pa) as *mut T;
    for i in 0..n {
        // SAFETY: inside the table (the caller's contract); writing does not
        // drop the uninitialised old contents.
        unsafe { p.add(i).write(init()) };
    }
    // SAFETY: every element was just initialised; this is the only reference.
    unsafe { core::slice::from_raw_parts_mut(p, n) }
}

/// The array of `n` zeroed `T`s at `pa`.
///
/// # Safety
/// As for [`boot_array`].
pub(in crate::arch) unsafe fn boot_zeroed<T: zerocopy::FromZeros>(
    pa: u64,
    n: usize,
) -> &'static mut [T] {
    let p = to_virt(pa) as *mut u8;
    // SAFETY: the table's bytes (the caller's contract).
    unsafe { core::ptr::write_bytes(p, 0, n * size_of::<T>()) };
    // SAFETY: all-zero bytes are a valid `T` (`FromZeros`); this is the
    // only reference.
    unsafe { core::slice::from_raw_parts_mut(p as *mut T, n) }
}
