//! A fake virtio-blk device for the host tests: it owns a model of physical
//! memory (the queue area and data frames) and a disk, takes requests from
//! the available ring when the doorbell rings, completes them when the test
//! says (or at random while a sync request spins), and asserts that every
//! descriptor chain is well formed as virtio 1.x requires.

use crate::{Device, Geometry, Layout, BLOCK};
use stet_prng::XorShift64Star;

/// Physical address of the queue area in the fake memory.
pub const QUEUE_PA: usize = 1 << 20;
/// Physical address of the first data frame.
pub const FRAMES_PA: usize = 2 << 20;

pub struct Fake {
    /// Physical memory from address 0.
    pub ram: Vec<u8>,
    g: Geometry,
    l: Layout,
    /// The disk as the device sees it.
    pub disk: Vec<u8>,
    /// The disk as of the last FLUSH.
    pub durable: Vec<u8>,
    /// Heads taken from the available ring, not yet completed.
    pub pending: Vec<u16>,
    last_avail: u16,
    used_idx: u16,
    /// Doorbells heard.
    pub notifies: u64,
    /// FLUSH requests executed.
    pub flushes: u64,
    /// A request touching this block fails with IOERR.
    pub fail_block: Option<u64>,
    rng: XorShift64Star,
}

impl Fake {
    /// A device for geometry `g` with `frames` data frames and a disk of
    /// `blocks` 4 KiB blocks; `seed` drives the completions `relax` makes.
    pub fn new(g: Geometry, frames: usize, blocks: u64, seed: u64) -> Self {
        let l = g.layout();
        assert!(QUEUE_PA + l.bytes <= FRAMES_PA);
        let disk = vec![0; (blocks * BLOCK) as usize];
        Fake {
            ram: vec![0; FRAMES_PA + frames * BLOCK as usize],
            g,
            l,
            durable: disk.clone(),
            disk,
            pending: Vec::new(),
            last_avail: 0,
            used_idx: 0,
            notifies: 0,
            flushes: 0,
            fail_block: None,
            rng: XorShift64Star::new(seed),
        }
    }

    fn rd(&self, pa: usize, n: usize) -> u64 {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&self.ram[pa..pa + n]);
        u64::from_le_bytes(b)
    }

    fn wr(&mut self, pa: usize, v: u64, n: usize) {
        self.ram[pa..pa + n].copy_from_slice(&v.to_le_bytes()[..n]);
    }

    /// Completes the `i`th pending request (by arrival).
    pub fn complete(&mut self, i: usize) {
        let head = self.pending.remove(i);
        let written = self.execute(head);
        let n = self.g.queue_size;
        let u = QUEUE_PA + self.l.used;
        let e = u + 4 + 8 * (self.used_idx % n) as usize;
        self.wr(e, head as u64, 4);
        self.wr(e + 4, written as u64, 4);
        self.used_idx = self.used_idx.wrapping_add(1);
        self.wr(u + 2, self.used_idx as u64, 2);
    }

    /// Completes everything pending, oldest first.
    pub fn complete_all(&mut self) {
        while !self.pending.is_empty() {
            self.complete(0);
        }
    }

    /// The descriptor chain at `head`: (address, length, flags) each.
    fn chain(&self, head: u16) -> Vec<(usize, usize, u64)> {
        let n = self.g.queue_size as usize;
        let d = QUEUE_PA + self.l.desc;
        let at = |base: usize, i: usize| {
            let w = self.rd(base + 16 * i + 8, 8);
            (
                self.rd(base + 16 * i, 8) as usize,
                (w & 0xffff_ffff) as usize,
                (w >> 32) & 0xffff,
                (w >> 48) as usize,
            )
        };
        let (addr, len, flags, _) = at(d, head as usize);
        let (base, mut i, limit) = if flags & 4 != 0 {
            assert!(self.g.indirect, "indirect descriptor not negotiated");
            assert_eq!(flags, 4, "indirect descriptor with other flags");
            assert!(len % 16 == 0 && len > 0, "indirect table length {len}");
            (addr, 0, len / 16)
        } else {
            assert!(!self.g.indirect, "direct chain in an indirect geometry");
            (d, head as usize, n)
        };
        let mut out = Vec::new();
        loop {
            assert!(i < limit, "descriptor index {i} out of the table");
            let (addr, len, flags, next) = at(base, i);
            assert_eq!(flags & 4, 0, "nested indirect descriptor");
            out.push((addr, len, flags));
            assert!(out.len() <= n, "chain longer than the queue");
            if flags & 1 == 0 {
                break;
            }
            i = next;
        }
        out
    }

    /// Runs request `head`; returns the bytes written into guest memory.
    fn execute(&mut self, head: u16) -> usize {
        let c = self.chain(head);
        assert!(c.len() >= 2, "chain too short");
        let (h, hl, hf) = c[0];
        assert_eq!((hl, hf & 2), (16, 0), "header must be 16 readable bytes");
        let (st, sl, sf) = c[c.len() - 1];
        assert_eq!((sl, sf & 2), (1, 2), "status must be 1 writable byte");
        let data = &c[1..c.len() - 1];
        let writable_seen = data.iter().position(|d| d.2 & 2 != 0);
        if let Some(p) = writable_seen {
            assert!(
                data[p..].iter().all(|d| d.2 & 2 != 0),
                "readable after writable"
            );
        }
        let kind = self.rd(h, 4);
        let sector = self.rd(h + 8, 8);
        let total: usize = data.iter().map(|d| d.1).sum();
        let start = sector as usize * 512;
        let block_range = start as u64 / BLOCK..(start + total).div_ceil(BLOCK as usize) as u64;
        let fails = self.fail_block.is_some_and(|b| block_range.contains(&b));
        let mut written = 1;
        let status = match kind {
            0 | 1 if start + total > self.disk.len() => 1,
            _ if fails => 1,
            0 => {
                assert!(data.iter().all(|d| d.2 & 2 != 0 && d.1 == 4096));
                let mut off = start;
                for &(a, l, _) in data {
                    self.ram[a..a + l].copy_from_slice(&self.disk[off..off + l]);
                    off += l;
                }
                written += total;
                0
            }
            1 => {
                assert!(data.iter().all(|d| d.2 & 2 == 0 && d.1 == 4096));
                let mut off = start;
                for &(a, l, _) in data {
                    self.disk[off..off + l].copy_from_slice(&self.ram[a..a + l]);
                    off += l;
                }
                0
            }
            4 => {
                assert!(data.is_empty(), "flush with data");
                self.durable.copy_from_slice(&self.disk);
                self.flushes += 1;
                0
            }
            _ => 2,
        };
        self.wr(st, status, 1);
        written
    }
}

impl Device for Fake {
    fn read8(&self, off: usize) -> u8 {
        self.rd(QUEUE_PA + off, 1) as u8
    }
    fn read16(&self, off: usize) -> u16 {
        self.rd(QUEUE_PA + off, 2) as u16
    }
    fn read32(&self, off: usize) -> u32 {
        self.rd(QUEUE_PA + off, 4) as u32
    }
    fn write8(&mut self, off: usize, v: u8) {
        assert!(off < self.l.bytes);
        self.wr(QUEUE_PA + off, v as u64, 1)
    }
    fn write16(&mut self, off: usize, v: u16) {
        assert!(off + 2 <= self.l.bytes);
        self.wr(QUEUE_PA + off, v as u64, 2)
    }
    fn write64(&mut self, off: usize, v: u64) {
        assert!(off + 8 <= self.l.bytes);
        self.wr(QUEUE_PA + off, v, 8)
    }
    fn barrier(&self) {}
    fn notify(&mut self) {
        self.notifies += 1;
        let a = QUEUE_PA + self.l.avail;
        let idx = self.rd(a + 2, 2) as u16;
        let n = self.g.queue_size;
        while self.last_avail != idx {
            let head = self.rd(a + 4 + 2 * (self.last_avail % n) as usize, 2) as u16;
            assert!(!self.pending.contains(&head), "head {head} posted twice");
            self.pending.push(head);
            self.last_avail = self.last_avail.wrapping_add(1);
        }
    }
    fn relax(&mut self) {
        assert!(
            !self.pending.is_empty(),
            "sync request spins with nothing pending"
        );
        let i = self.rng.below(self.pending.len() as u64) as usize;
        self.complete(i);
    }
}
