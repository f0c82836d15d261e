//! The block request queue: one split virtqueue divided into fixed slots
//! (see the crate doc), with asynchronous submit/kick/poll and synchronous
//! helpers that keep the completions they meet for `poll`.
//!
//! Ordering: the device may complete requests in any order, and so may
//! requests overlapping on disk be executed in any order; a caller that
//! needs one write to reach the disk before another waits for the first's
//! completion (and, for durability, for a FLUSH submitted after it). `poll`
//! returns completions in the order the device reported them, except that a
//! synchronous request returns before the queued ones it saw complete while
//! it waited (they come out of `poll` afterwards, still in their order).

use crate::{Geometry, Layout, MAX_SLOTS, SECTORS_PER_BLOCK};
use stet_physmem::pool::FrameNumber;

/// A place that names a frame of brand `K` to transfer, or (`None`) holds
/// none: a frame itself, or an `Option` of one (a table slot).
pub trait Frame<K>: Copy + Into<Option<FrameNumber<K>>> {}
impl<K, F: Copy + Into<Option<FrameNumber<K>>>> Frame<K> for F {}

/// The queue's memory and doorbell. Offsets are bytes into the queue area,
/// whose physical address the queue is told separately. The kernel does
/// volatile accesses through the direct map; tests use a fake device.
pub trait Device {
    /// Reads a byte.
    fn read8(&self, off: usize) -> u8;
    /// Reads a little-endian `u16`.
    fn read16(&self, off: usize) -> u16;
    /// Reads a little-endian `u32`.
    fn read32(&self, off: usize) -> u32;
    /// Writes a byte.
    fn write8(&mut self, off: usize, v: u8);
    /// Writes a little-endian `u16`.
    fn write16(&mut self, off: usize, v: u16);
    /// Writes a little-endian `u64`.
    fn write64(&mut self, off: usize, v: u64);
    /// Keeps the device from seeing accesses after this point before those
    /// ahead of it (publishing a request; reading a completion).
    fn barrier(&self);
    /// Rings the queue's doorbell.
    fn notify(&mut self);
    /// Called while a synchronous request spins for its completion.
    fn relax(&mut self);
}

/// What a request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Disk to frames.
    Read,
    /// Frames to disk.
    Write,
    /// Every completed write reaches stable storage before this completes.
    Flush,
}

/// Why a request was not queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubmitError {
    /// No free slot: poll for completions first.
    Full,
    /// More frames than [`BlkQueue::max_frames`].
    TooManyFrames,
    /// The blocks run past the end of the disk.
    OutOfRange,
    /// A read or write without frames, or a flush with some.
    BadRequest,
}

/// Why a request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoError {
    /// The device reported an I/O error (`VIRTIO_BLK_S_IOERR`).
    Io,
    /// The device does not support the request (`VIRTIO_BLK_S_UNSUPP`).
    Unsupported,
    /// The device wrote a status byte virtio does not define (or none).
    BadStatus(u8),
    /// A synchronous request was refused before reaching the device.
    Refused(SubmitError),
}

/// Request types (virtio 1.x §5.2.6).
const T_IN: u64 = 0;
const T_OUT: u64 = 1;
const T_FLUSH: u64 = 4;
/// Descriptor flags.
const F_NEXT: u64 = 1;
const F_WRITE: u64 = 2;
const F_INDIRECT: u64 = 4;
/// Status bytes.
const S_OK: u8 = 0;
const S_IOERR: u8 = 1;
const S_UNSUPP: u8 = 2;
/// Written before a request goes out; a device always overwrites it.
const S_UNSET: u8 = 0xff;

/// The second word of a descriptor: length, flags, next.
fn desc_word(len: u64, flags: u64, next: usize) -> u64 {
    len | flags << 32 | (next as u64) << 48
}

fn result(status: u8) -> Result<(), IoError> {
    match status {
        S_OK => Ok(()),
        S_IOERR => Err(IoError::Io),
        S_UNSUPP => Err(IoError::Unsupported),
        s => Err(IoError::BadStatus(s)),
    }
}

/// A block device's request queue over device `D`.
pub struct BlkQueue<D: Device> {
    dev: D,
    g: Geometry,
    l: Layout,
    /// Physical address of the queue area (descriptors point into it).
    base: u64,
    /// Capacity in 4 KiB blocks.
    blocks: u64,
    /// The device honours FLUSH (else a flush completes at once: nothing is
    /// cached).
    flush: bool,
    /// Next free entry of the available ring (free-running).
    avail_idx: u16,
    /// Next used-ring entry to read (free-running).
    used_idx: u16,
    /// Free queued-request slots (one bit each; the sync slot is never here).
    free: u32,
    /// Slots the device holds.
    inflight: u32,
    /// Each slot's tag.
    tags: [u64; MAX_SLOTS],
    /// Completed slots not yet returned by `poll`, oldest first (a ring).
    stash: [u8; MAX_SLOTS],
    stash_head: usize,
    stash_len: usize,
    /// Requests published since the last doorbell.
    unkicked: bool,
    /// Requests completed (returned by `poll` or a sync helper).
    completed: u64,
    /// Doorbells rung.
    kicks: u64,
}

impl<D: Device> BlkQueue<D> {
    /// Takes over a zeroed queue area at physical address `base` (laid out as
    /// `g.layout()`, reached through `dev`) for a disk of `sectors` 512-byte
    /// sectors, and writes the descriptors that never change. The caller
    /// then hands the ring addresses to the device and enables the queue.
    pub fn new(mut dev: D, g: Geometry, base: u64, sectors: u64, flush: bool) -> Self {
        let l = g.layout();
        let stride = g.stride();
        for s in 0..g.slots {
            // Each slot's first entry is its header, always followed by the
            // next entry of the same table.
            let (table, first) = if g.indirect {
                // Ring descriptor `s` points at slot `s`'s table for good;
                // only its length changes per request.
                let t = l.tables + s * l.table_bytes;
                dev.write64(l.desc + 16 * s, base + t as u64);
                (t, 0)
            } else {
                (l.desc + 16 * s * stride, s * stride)
            };
            dev.write64(table, base + (l.headers + 16 * s) as u64);
            dev.write64(table + 8, desc_word(16, F_NEXT, first + 1));
        }
        let sync = g.slots - 1;
        BlkQueue {
            dev,
            g,
            l,
            base,
            blocks: sectors / SECTORS_PER_BLOCK,
            flush,
            avail_idx: 0,
            used_idx: 0,
            free: (1u32 << sync) - 1,
            inflight: 0,
            tags: [0; MAX_SLOTS],
            stash: [0; MAX_SLOTS],
            stash_head: 0,
            stash_len: 0,
            unkicked: false,
            completed: 0,
            kicks: 0,
        }
    }

    /// Capacity in 4 KiB blocks.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Most frames in one request.
    pub fn max_frames(&self) -> usize {
        self.g.max_frames
    }

    /// Requests that can be queued now.
    pub fn free_slots(&self) -> usize {
        self.free.count_ones() as usize
    }

    /// The geometry chosen at setup.
    pub fn geometry(&self) -> Geometry {
        self.g
    }

    /// Requests completed so far (returned by `poll` or a sync helper).
    pub fn completed(&self) -> u64 {
        self.completed
    }

    /// Doorbells rung so far.
    pub fn kicks(&self) -> u64 {
        self.kicks
    }

    /// The device (tests drive the fake one through it).
    pub fn device_mut(&mut self) -> &mut D {
        &mut self.dev
    }

    fn check<K, F: Frame<K>>(&self, op: Op, block: u64, frames: &[F]) -> Result<(), SubmitError> {
        match op {
            Op::Flush if !frames.is_empty() => Err(SubmitError::BadRequest),
            Op::Flush => Ok(()),
            _ if frames.is_empty() => Err(SubmitError::BadRequest),
            _ if frames.len() > self.g.max_frames => Err(SubmitError::TooManyFrames),
            _ => match block.checked_add(frames.len() as u64) {
                Some(end) if end <= self.blocks => Ok(()),
                _ => Err(SubmitError::OutOfRange),
            },
        }
    }

    /// Queues a request without ringing the doorbell. Read/Write: `frames`
    /// are the data, blocks `block..block + frames.len()`. Flush: no frames,
    /// `block` ignored. `tag` comes back from [`poll`](Self::poll). A place
    /// in `frames` without a frame makes the request a `BadRequest`.
    pub fn submit<K, F: Frame<K>>(
        &mut self,
        op: Op,
        block: u64,
        frames: &[F],
        tag: u64,
    ) -> Result<(), SubmitError> {
        self.check(op, block, frames)?;
        if self.free == 0 {
            return Err(SubmitError::Full);
        }
        let s = self.free.trailing_zeros() as usize;
        if op == Op::Flush && !self.flush {
            // Nothing is cached: done already, reported in turn by `poll`.
            self.free &= !(1 << s);
            self.tags[s] = tag;
            self.dev.write8(self.l.status + s, S_OK);
            self.stash_push(s);
        } else {
            self.post(s, op, block, frames)?;
            self.free &= !(1 << s);
            self.tags[s] = tag;
        }
        Ok(())
    }

    /// Writes slot `s`'s request and publishes it on the available ring.
    /// A place of `frames` without a frame is a `BadRequest`, found before
    /// anything is published (the slot's descriptors are its own, unused
    /// until then).
    fn post<K, F: Frame<K>>(
        &mut self,
        s: usize,
        op: Op,
        block: u64,
        frames: &[F],
    ) -> Result<(), SubmitError> {
        let l = self.l;
        let (kind, sector) = match op {
            Op::Read => (T_IN, block * SECTORS_PER_BLOCK),
            Op::Write => (T_OUT, block * SECTORS_PER_BLOCK),
            Op::Flush => (T_FLUSH, 0),
        };
        let hdr = l.headers + 16 * s;
        self.dev.write64(hdr, kind);
        self.dev.write64(hdr + 8, sector);
        self.dev.write8(l.status + s, S_UNSET);
        let (table, first) = if self.g.indirect {
            (l.tables + s * l.table_bytes, 0)
        } else {
            let first = s * self.g.stride();
            (l.desc + 16 * first, first)
        };
        let data = if op == Op::Read {
            F_NEXT | F_WRITE
        } else {
            F_NEXT
        };
        let mut e = table + 16;
        for (j, &f) in frames.iter().enumerate() {
            let Some(f) = f.into() else {
                return Err(SubmitError::BadRequest);
            };
            self.dev.write64(e, f.addr());
            self.dev
                .write64(e + 8, desc_word(4096, data, first + j + 2));
            e += 16;
        }
        self.dev.write64(e, self.base + (l.status + s) as u64);
        self.dev.write64(e + 8, desc_word(1, F_WRITE, 0));
        let head = if self.g.indirect {
            let len = 16 * (frames.len() as u64 + 2);
            self.dev
                .write64(l.desc + 16 * s + 8, desc_word(len, F_INDIRECT, 0));
            s
        } else {
            first
        };
        let n = self.g.queue_size;
        let slot = l.avail + 4 + 2 * (self.avail_idx % n) as usize;
        self.dev.write16(slot, head as u16);
        self.avail_idx = self.avail_idx.wrapping_add(1);
        // The entry and its descriptors before the index that publishes them.
        self.dev.barrier();
        self.dev.write16(l.avail + 2, self.avail_idx);
        self.inflight |= 1 << s;
        self.unkicked = true;
        Ok(())
    }

    /// Rings the doorbell if anything was submitted since the last time.
    pub fn kick(&mut self) {
        if self.unkicked {
            self.unkicked = false;
            self.kicks += 1;
            self.dev.barrier();
            self.dev.notify();
        }
    }

    /// The next slot the device reports done, if any.
    fn reap(&mut self) -> Option<usize> {
        let l = self.l;
        loop {
            if self.dev.read16(l.used + 2) == self.used_idx {
                return None;
            }
            // The index before the entry it covers.
            self.dev.barrier();
            let n = self.g.queue_size;
            let id =
                self.dev
                    .read32(l.used + 4 + 8 * (self.used_idx % n) as usize) as usize;
            self.used_idx = self.used_idx.wrapping_add(1);
            let s = if self.g.indirect {
                id
            } else {
                id / self.g.stride()
            };
            // A head the driver never posted is the device's bug: skip it.
            if s < self.g.slots && self.inflight & (1 << s) != 0 {
                self.inflight &= !(1 << s);
                return Some(s);
            }
        }
    }

    fn stash_push(&mut self, s: usize) {
        let i = (self.stash_head + self.stash_len) % MAX_SLOTS;
        self.stash[i] = s as u8;
        self.stash_len += 1;
    }

    /// One completed request, `(tag, result)`, in completion order.
    pub fn poll(&mut self) -> Option<(u64, Result<(), IoError>)> {
        let s = if self.stash_len > 0 {
            let s = self.stash[self.stash_head] as usize;
            self.stash_head = (self.stash_head + 1) % MAX_SLOTS;
            self.stash_len -= 1;
            s
        } else {
            self.reap()?
        };
        self.free |= 1 << s;
        self.completed += 1;
        Some((self.tags[s], result(self.dev.read8(self.l.status + s))))
    }

    /// Runs one request in the sync slot to completion, keeping the queued
    /// completions met on the way for `poll`.
    fn sync<K>(&mut self, op: Op, block: u64, frames: &[FrameNumber<K>]) -> Result<(), IoError> {
        self.check(op, block, frames).map_err(IoError::Refused)?;
        self.completed += 1;
        if op == Op::Flush && !self.flush {
            return Ok(());
        }
        let s = self.g.slots - 1;
        self.post(s, op, block, frames).map_err(IoError::Refused)?;
        self.kick();
        loop {
            match self.reap() {
                Some(x) if x == s => break,
                Some(x) => self.stash_push(x),
                None => self.dev.relax(),
            }
        }
        result(self.dev.read8(self.l.status + s))
    }

    /// Reads block `block` into `frame` and waits for it.
    pub fn read_sync<K>(&mut self, block: u64, frame: FrameNumber<K>) -> Result<(), IoError> {
        self.sync(Op::Read, block, &[frame])
    }

    /// Writes `frame` to block `block` and waits for it.
    pub fn write_sync<K>(&mut self, block: u64, frame: FrameNumber<K>) -> Result<(), IoError> {
        self.sync(Op::Write, block, &[frame])
    }

    /// Flushes the device's write cache and waits for it.
    pub fn flush_sync(&mut self) -> Result<(), IoError> {
        self.sync::<()>(Op::Flush, 0, &[])
    }
}
