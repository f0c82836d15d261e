//! Access to physical memory through the direct map.
//!
//! All RAM (and the low 4 GiB) is mapped at [`PHYS_OFFSET`] by `paging::init`.
//! Frames handed out by the frame pool are owned by exactly one kernel
//! structure at a time, so the safe functions here, which take a frame
//! number, cannot alias memory that Rust code holds a reference to: the
//! kernel image and boot-time tables are never in the pool.

use stet_physmem::pool::FrameNumber;

/// Virtual base of the direct map of physical memory.
pub const PHYS_OFFSET: u64 = 0xffff_8000_0000_0000;
/// Bytes in a frame.
pub const FRAME: usize = 4096;

/// The direct-map address of physical address `pa`.
pub const fn to_virt(pa: u64) -> u64 {
    PHYS_OFFSET + pa
}

fn frame_ptr(f: FrameNumber) -> *mut u8 {
    to_virt(f.addr()) as *mut u8
}

/// Fills a frame with zeros.
pub fn zero_frame(f: FrameNumber) {
    // SAFETY: `f` is a pool frame, mapped by the direct map and owned by the
    // caller (module doc); 4096 bytes is exactly one frame.
    unsafe { core::ptr::write_bytes(frame_ptr(f), 0, FRAME) };
}

/// Copies `bytes` into frame `f` at `offset`. Panics if it would overflow
/// the frame (a kernel bug, never a user-controlled condition).
pub fn write_frame(f: FrameNumber, offset: usize, bytes: &[u8]) {
    assert!(offset <= FRAME && bytes.len() <= FRAME - offset);
    // SAFETY: bounds checked above; the frame is owned by the caller and
    // does not overlap `bytes`, which lives in kernel memory or a module.
    unsafe {
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), frame_ptr(f).add(offset), bytes.len())
    };
}

/// Copies from frame `f` at `offset` into `out`.
pub fn read_frame(f: FrameNumber, offset: usize, out: &mut [u8]) {
    assert!(offset <= FRAME && out.len() <= FRAME - offset);
    // SAFETY: bounds checked above; see `write_frame`.
    unsafe {
        core::ptr::copy_nonoverlapping(frame_ptr(f).add(offset), out.as_mut_ptr(), out.len())
    };
}

/// A byte slice over physical memory that the boot allocator reserved for
/// the kernel's lifetime (the boot module).
///
/// # Safety
/// `[pa, pa + len)` must be RAM, mapped by the direct map, and never handed
/// to the frame pool or written while the slice lives.
pub unsafe fn reserved_slice(pa: u64, len: usize) -> &'static [u8] {
    // SAFETY: the caller's contract.
    unsafe { core::slice::from_raw_parts(to_virt(pa) as *const u8, len) }
}

/// Reads a `T` from physical memory during boot (boot information).
///
/// # Safety
/// `pa` must be mapped (the boot tables map the first 1 GiB) and hold a
/// valid `T`.
pub unsafe fn read_boot<T: Copy>(pa: u64) -> T {
    // SAFETY: the caller's contract; unaligned reads are allowed.
    unsafe { core::ptr::read_unaligned(to_virt(pa) as *const T) }
}

/// The boot-allocated array of `n` zeroed `T`s at `pa` (a fixed kernel table
/// sized at boot: the object cache, the context cache).
pub fn boot_array<T: zerocopy::FromZeros>(pa: u64, n: usize) -> &'static mut [T] {
    let bytes = n * core::mem::size_of::<T>();
    let p = to_virt(pa) as *mut u8;
    // `pa` was just returned by the boot allocator for `bytes` bytes aligned
    // for `T`, is RAM mapped by the direct map, and is handed out once.
    // SAFETY: see above; the range is writable and owned by the caller.
    unsafe { core::ptr::write_bytes(p, 0, bytes) };
    // SAFETY: all-zero bytes are a valid `T` (`FromZeros`); this is the only reference.
    unsafe { core::slice::from_raw_parts_mut(p as *mut T, n) }
}

/// Copies `len` bytes from frame `src` at `soff` to frame `dst` at `doff`
/// (message strings between two domains' pages).
pub fn copy_frames(src: FrameNumber, soff: usize, dst: FrameNumber, doff: usize, len: usize) {
    assert!(soff + len <= 4096 && doff + len <= 4096);
    // SAFETY: both are pool frames (RAM, direct-mapped), the ranges are
    // inside them (checked); `copy` allows overlap (src may equal dst).
    unsafe { core::ptr::copy(frame_ptr(src).add(soff), frame_ptr(dst).add(doff), len) }
}

/// Copies the whole of frame `src` into frame `dst`.
pub fn copy_frame(src: FrameNumber, dst: FrameNumber) {
    copy_frames(src, 0, dst, 0, 4096);
}

/// Runs `op` on the bytes of frame `f` (checksums, encoding in place
/// without a copy on the kernel stack).
pub fn with_frame<R>(f: FrameNumber, op: impl FnOnce(&[u8; FRAME]) -> R) -> R {
    // `f` is a pool frame owned by the caller and direct-mapped; the kernel
    // runs one trap at a time with interrupts off, so no other reference to
    // it exists during `op`, and the caller has no disk read in flight into
    // it.
    // SAFETY: an owned, mapped frame with no other reference (above).
    let bytes = unsafe { &*(frame_ptr(f) as *const [u8; FRAME]) };
    op(bytes)
}

/// Runs `op` on the bytes of frame `f`, writable (see `with_frame`).
pub fn with_frame_mut<R>(f: FrameNumber, op: impl FnOnce(&mut [u8; FRAME]) -> R) -> R {
    // SAFETY: as in `with_frame`; the caller owns the frame and has no disk
    // transfer in flight from or into it.
    let bytes = unsafe { &mut *(frame_ptr(f) as *mut [u8; FRAME]) };
    op(bytes)
}
