//! Physical memory bookkeeping for the kernel, as pure logic.
//!
//! * [`boot::BootAllocator`] carves the boot-time structures (page tables,
//!   the frame pool's own array, kernel caches) out of the firmware memory
//!   map, then is **sealed**: every later request is refused. This is how the
//!   kernel keeps its rule of no dynamic allocation after boot.
//! * [`pool::FramePool`] is a fixed-capacity stack of free 4 KiB frames sized
//!   at boot from what the boot allocator left over. Frames move between the
//!   pool and the kernel's caches; the pool never grows, and refuses a
//!   frame freed twice. Its [`pool::FrameNumber`]s are *branded*: only the
//!   holder of the brand's key (for the kernel, its hardware layer) can
//!   make one from an integer or make a pool that hands them out.
#![cfg_attr(not(test), no_std)]

pub mod boot;
pub mod pool;
pub mod range;

/// Size of a frame (a 4 KiB page of physical memory).
pub const FRAME_SIZE: u64 = 4096;
