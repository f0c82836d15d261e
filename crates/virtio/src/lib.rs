//! Virtio block devices as pure logic: which features to accept, how big the
//! queue and its requests are, and the split virtqueue that carries requests
//! to the device and completions back (virtio 1.x, §2.7 and §5.2).
//!
//! The kernel's driver (`kernel/src/arch/x86_64/virtio_blk.rs`) finds the
//! device on PCI, maps its registers and owns the queue memory; everything
//! that decides *what* is written into that memory lives here, behind the
//! [`Device`] trait (volatile accesses to the queue area and the doorbell), so
//! that the host tests can run it against a fake device that checks every
//! descriptor chain it is given.
//!
//! Shape of the queue. Requests occupy fixed **slots**; each slot owns a
//! request header, a status byte and a descriptor table of
//! `max_frames + 2` entries (header, one entry per 4 KiB frame, status):
//! an indirect table when the device offers `VIRTIO_F_INDIRECT_DESC` (one
//! ring descriptor per slot), else a fixed stretch of the ring's own
//! descriptor table. Fixed slots mean no descriptor free list and a simple
//! promise: while [`BlkQueue::free_slots`] is non-zero, any request of up to
//! [`BlkQueue::max_frames`] frames is accepted. The last slot is kept for the
//! synchronous helpers, so they never wait for a slot and can always run.
#![cfg_attr(not(test), no_std)]

#[cfg(test)]
mod fake;
mod queue;
#[cfg(test)]
mod tests;

pub use queue::{BlkQueue, Device, Frame, IoError, Op, SubmitError};

/// Bytes in one block of the kernel's disk interface (a frame).
pub const BLOCK: u64 = 4096;
/// Virtio sectors (always 512 bytes) per block.
pub const SECTORS_PER_BLOCK: u64 = BLOCK / 512;
/// Most slots a queue has (one bit each in a `u32`).
pub const MAX_SLOTS: usize = 32;
/// Largest queue the driver sets up (a 4 KiB descriptor table).
pub const MAX_QUEUE: u16 = 256;

/// Feature bits (virtio 1.x §5.2.3 and §6).
pub mod feature {
    /// The device reports the largest data segment (`size_max`).
    pub const SIZE_MAX: u64 = 1 << 1;
    /// The device reports the most data segments in one request.
    pub const SEG_MAX: u64 = 1 << 2;
    /// The device is read-only.
    pub const RO: u64 = 1 << 5;
    /// The device reports its logical block size.
    pub const BLK_SIZE: u64 = 1 << 6;
    /// The device has a write cache and honours FLUSH.
    pub const FLUSH: u64 = 1 << 9;
    /// Descriptors may point at indirect tables.
    pub const INDIRECT_DESC: u64 = 1 << 28;
    /// Virtio 1.x (not the legacy interface).
    pub const VERSION_1: u64 = 1 << 32;
    /// Device accesses go through a platform IOMMU (none here: addresses are
    /// physical either way, so accepting it is harmless and some devices
    /// require it).
    pub const ACCESS_PLATFORM: u64 = 1 << 33;
    /// Everything the driver uses.
    pub const WANTED: u64 =
        SIZE_MAX | SEG_MAX | RO | BLK_SIZE | FLUSH | INDIRECT_DESC | VERSION_1 | ACCESS_PLATFORM;
}

/// Why a device cannot be driven.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unusable {
    /// It does not offer `VIRTIO_F_VERSION_1`.
    NotVersion1,
    /// Its queue is too small (fewer than 8 entries).
    QueueTooSmall,
    /// Its segments may not hold a whole 4 KiB frame (`size_max`).
    SegmentTooSmall,
}

/// The features to accept from those `offered`.
pub fn negotiate(offered: u64) -> Result<u64, Unusable> {
    if offered & feature::VERSION_1 == 0 {
        return Err(Unusable::NotVersion1);
    }
    Ok(offered & feature::WANTED)
}

/// How a queue is divided into request slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Entries in the ring (a power of two).
    pub queue_size: u16,
    /// Request slots, including the one kept for synchronous requests.
    pub slots: usize,
    /// Most frames (data segments) in one request.
    pub max_frames: usize,
    /// Slots use indirect descriptor tables.
    pub indirect: bool,
}

/// Frames per request without indirect descriptors: with a 256-entry ring
/// this gives 8 slots of 32 descriptors.
const DIRECT_FRAMES: usize = 30;

impl Geometry {
    /// Chooses a geometry for a device whose queue holds at most
    /// `device_max` entries, which allows `seg_max` data segments per
    /// request and segments of `size_max` bytes (when it says) and may offer
    /// indirect descriptors.
    pub fn choose(
        device_max: u16,
        seg_max: Option<u32>,
        size_max: Option<u32>,
        indirect: bool,
    ) -> Result<Self, Unusable> {
        if size_max.is_some_and(|s| (s as u64) < BLOCK) {
            return Err(Unusable::SegmentTooSmall);
        }
        let cap = device_max.min(MAX_QUEUE);
        if cap < 8 {
            return Err(Unusable::QueueTooSmall);
        }
        // Split rings must be a power of two.
        let n = 1u16 << (15 - cap.leading_zeros());
        let nu = n as usize;
        // A chain (indirect or not) may not be longer than the queue.
        let seg = seg_max.map_or(nu - 2, |s| (s as usize).max(1));
        if indirect {
            Ok(Geometry {
                queue_size: n,
                slots: nu.min(MAX_SLOTS),
                max_frames: seg.min(nu - 2),
                indirect: true,
            })
        } else {
            // At least two slots: one for queued requests, one for sync.
            let frames = seg.min(DIRECT_FRAMES).min(nu / 2 - 2);
            Ok(Geometry {
                queue_size: n,
                slots: (nu / (frames + 2)).min(MAX_SLOTS),
                max_frames: frames,
                indirect: false,
            })
        }
    }

    /// Entries in one slot's descriptor table.
    pub fn stride(&self) -> usize {
        self.max_frames + 2
    }

    /// Where everything sits in the queue area.
    pub fn layout(&self) -> Layout {
        let n = self.queue_size as usize;
        let page = |x: usize| x.div_ceil(BLOCK as usize) * BLOCK as usize;
        let desc = 0;
        let avail = page(desc + 16 * n);
        let used = page(avail + 6 + 2 * n);
        let headers = page(used + 6 + 8 * n);
        let status = headers + 16 * self.slots;
        let tables = page(status + self.slots);
        let table_bytes = 16 * self.stride();
        let end = if self.indirect {
            tables + self.slots * table_bytes
        } else {
            tables
        };
        Layout {
            desc,
            avail,
            used,
            headers,
            status,
            tables,
            table_bytes,
            bytes: page(end),
        }
    }
}

/// Byte offsets of the parts of a queue area (all 16-byte aligned but the
/// status bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The ring's descriptor table.
    pub desc: usize,
    /// The available (driver) ring.
    pub avail: usize,
    /// The used (device) ring.
    pub used: usize,
    /// One 16-byte request header per slot.
    pub headers: usize,
    /// One status byte per slot.
    pub status: usize,
    /// The indirect tables, one per slot (indirect geometries only).
    pub tables: usize,
    /// Bytes in one indirect table.
    pub table_bytes: usize,
    /// Size of the whole area, in whole 4 KiB pages.
    pub bytes: usize,
}
