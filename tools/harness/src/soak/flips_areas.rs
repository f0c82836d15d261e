//! Where a disk-damage flip goes: the store's areas (docs/STORE.md "Disk
//! layout") and a byte in use in one of them. This is the "area → flip"
//! half of the campaign's interface (the other half, "restart → class", is
//! `flips_classify`); a module that knows the store's format better (a
//! harness `damage` module) can stand in for [`locate`] with the same
//! arguments and result.

use stet_store::geometry::Geometry;
use stet_store::root::{Root, ROOT_LEN};
use stet_store::BLOCK;

use crate::prng::Rng;

/// The store's areas on a disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Area {
    /// The two root records (blocks 0 and 1).
    Root,
    /// Node homes, copy 0 and copy 1.
    Node,
    /// Page version blocks, copy 0 and copy 1.
    Version,
    /// Page homes.
    Page,
    /// The checkpoint log (the newest checkpoint's extent most of the time).
    Log,
    /// The journal ring.
    Journal,
}

/// Every area, in disk order.
pub const AREAS: [Area; 6] = [
    Area::Root,
    Area::Node,
    Area::Version,
    Area::Page,
    Area::Log,
    Area::Journal,
];

impl Area {
    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Area::Root => "root",
            Area::Node => "node",
            Area::Version => "version",
            Area::Page => "page",
            Area::Log => "log",
            Area::Journal => "journal",
        }
    }
}

/// One flipped byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flip {
    /// The area.
    pub area: Area,
    /// The byte's offset on the disk.
    pub offset: u64,
    /// What it is XORed with (never 0).
    pub xor: u8,
    /// What the byte belongs to, for the report.
    pub what: String,
}

impl Flip {
    /// Applies the flip to a disk image in memory.
    pub fn apply(&self, disk: &mut [u8]) {
        disk[self.offset as usize] ^= self.xor;
    }
}

fn block(disk: &[u8], b: u64) -> &[u8] {
    let at = b as usize * BLOCK;
    &disk[at..at + BLOCK]
}

fn zero(disk: &[u8], b: u64) -> bool {
    block(disk, b).iter().all(|&x| x == 0)
}

/// The roots a disk holds (each that decodes), with their blocks.
pub fn roots(disk: &[u8]) -> Vec<(u64, Root)> {
    let blocks = (disk.len() / BLOCK) as u64;
    (0..2)
        .filter_map(|b| Root::decode(block(disk, b), blocks).ok().map(|r| (b, r)))
        .collect()
}

/// A block of `start..start + len` not all zero (any, if all are).
fn live_block(disk: &[u8], start: u64, len: u64, rng: &mut Rng) -> (u64, bool) {
    let live: Vec<u64> = (start..start + len).filter(|&b| !zero(disk, b)).collect();
    match live.len() {
        0 => (start + rng.below(len.max(1)), false),
        n => (live[rng.below(n as u64) as usize], true),
    }
}

/// Chooses a byte of `area` on `disk` (an image of a store) and a mask.
pub fn locate(disk: &[u8], area: Area, rng: &mut Rng) -> Result<Flip, String> {
    let rs = roots(disk);
    let Some(&(_, newest)) = rs.iter().max_by_key(|(_, r)| r.generation) else {
        return Err("no valid root on the disk".into());
    };
    let g: Geometry = newest.geometry;
    let xor = if rng.below(2) == 0 {
        1u8 << rng.below(8)
    } else {
        1 + rng.below(255) as u8
    };
    let in_block = |b: u64, rng: &mut Rng| b * BLOCK as u64 + rng.below(BLOCK as u64);
    let copy = rng.below(2);
    let (offset, what) = match area {
        Area::Root => {
            let (b, r) = rs[rng.below(rs.len() as u64) as usize];
            let which = if r.generation == newest.generation {
                "newest"
            } else {
                "older"
            };
            (
                b * BLOCK as u64 + rng.below(ROOT_LEN as u64),
                format!("root block {b} ({which}, generation {})", r.generation),
            )
        }
        Area::Node => {
            let (b, live) =
                live_block(disk, g.node_area + copy * g.node_blocks, g.node_blocks, rng);
            (
                in_block(b, rng),
                format!("node copy {copy} block {b}{}", unused(live)),
            )
        }
        Area::Version => {
            let (b, live) = live_block(
                disk,
                g.version_area + copy * g.version_blocks,
                g.version_blocks,
                rng,
            );
            (
                in_block(b, rng),
                format!("version copy {copy} block {b}{}", unused(live)),
            )
        }
        Area::Page => {
            let (b, live) = live_block(disk, g.page_area, g.pages, rng);
            (
                in_block(b, rng),
                format!("page {} home (block {b}){}", b - g.page_area, unused(live)),
            )
        }
        Area::Log => {
            // Mostly the newest checkpoint's extent (what a restart reads
            // when it has not migrated), else anywhere the log was written.
            let extent = newest.ckpt_blocks > 0 && rng.below(4) != 0;
            let (b, live) = if extent {
                let k = rng.below(newest.ckpt_blocks);
                (
                    g.log_start + (newest.ckpt_start - g.log_start + k) % g.log_blocks,
                    true,
                )
            } else {
                live_block(disk, g.log_start, g.log_blocks, rng)
            };
            let part = if extent {
                format!(
                    "block {} of checkpoint {}{}",
                    (b + g.log_blocks - newest.ckpt_start) % g.log_blocks,
                    newest.ckpt_generation,
                    if newest.migrated {
                        ", migrated"
                    } else {
                        ", not migrated"
                    }
                )
            } else {
                "an older checkpoint's".into()
            };
            (
                in_block(b, rng),
                format!("log block {b} ({part}){}", unused(live)),
            )
        }
        Area::Journal => {
            let (b, live) = live_block(disk, g.journal_start, g.journal_blocks, rng);
            (
                in_block(b, rng),
                format!("journal block {b}{}", unused(live)),
            )
        }
    };
    Ok(Flip {
        area,
        offset,
        xor,
        what,
    })
}

fn unused(live: bool) -> &'static str {
    if live {
        ""
    } else {
        ", all zero"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCKS: u64 = 256;

    fn disk() -> Vec<u8> {
        let g = Geometry::for_disk(BLOCKS).unwrap();
        let mut d = vec![0u8; BLOCKS as usize * BLOCK];
        for gen in [6u64, 7] {
            let r = Root {
                generation: gen,
                geometry: g,
                ckpt_generation: gen,
                ckpt_start: g.log_start,
                ckpt_blocks: 3,
                migrated: false,
                journal_head: g.journal_start,
                journal_seq: 0,
                restarts: 0,
            };
            let b = stet_store::root::block_for(gen) as usize;
            d[b * BLOCK..b * BLOCK + ROOT_LEN].copy_from_slice(&r.encode());
        }
        // Something in each area.
        for b in [
            g.node_area + 1,
            g.version_area,
            g.page_area + 5,
            g.journal_start + 2,
        ] {
            d[b as usize * BLOCK + 9] = 0x77;
        }
        d
    }

    #[test]
    fn each_area_gets_a_byte_inside_it() {
        let d = disk();
        let g = Geometry::for_disk(BLOCKS).unwrap();
        assert_eq!(roots(&d).len(), 2);
        let mut rng = Rng::new(3);
        for _ in 0..50 {
            for area in AREAS {
                let f = locate(&d, area, &mut rng).unwrap();
                assert_ne!(f.xor, 0);
                let b = f.offset / BLOCK as u64;
                let inside = match area {
                    Area::Root => b < 2 && (f.offset % BLOCK as u64) < ROOT_LEN as u64,
                    Area::Node => (g.node_area..g.version_area).contains(&b),
                    Area::Version => (g.version_area..g.page_area).contains(&b),
                    Area::Page => b == g.page_area + 5,
                    Area::Log => (g.log_start..g.log_start + 3).contains(&b) || b >= g.log_start,
                    Area::Journal => b == g.journal_start + 2,
                };
                assert!(inside, "{area:?}: {f:?}");
            }
        }
        // A block in use is chosen when there is one: copy 0 of the node
        // area has one, copy 1 none.
        for seed in 0..20 {
            let f = locate(&d, Area::Node, &mut Rng::new(seed)).unwrap();
            if f.what.starts_with("node copy 0") {
                assert_eq!(f.offset / BLOCK as u64, g.node_area + 1, "{f:?}");
            } else {
                assert!(f.what.ends_with("all zero"), "{f:?}");
            }
        }
        let f = locate(&d, Area::Node, &mut Rng::new(1)).unwrap();
        let mut d2 = d.clone();
        f.apply(&mut d2);
        assert_eq!(d2.iter().zip(&d).filter(|(a, b)| a != b).count(), 1);
        assert!(locate(&vec![0u8; BLOCKS as usize * BLOCK], Area::Root, &mut rng).is_err());
    }
}
