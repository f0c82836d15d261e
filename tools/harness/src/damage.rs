//! Disk-damage trials: flip bits in one area of a checkpointed disk, boot
//! it, and classify the restart. The store's promise (docs/STORE.md,
//! "Damage") is that a restart on a damaged disk is either *consistent* —
//! exactly some committed state that a root on the disk named — or
//! *refuses* what is damaged with a clear message, and never *silently
//! wrong*. This module is how a test (a `[[boot]]` step's `damage`, or
//! `make soak`'s damage campaign) checks that, one flip at a time:
//!
//! ```text
//! let survey = Survey::read(&pristine)?;             // what the disk holds
//! let flip = choose(&pristine, &survey, Area::PageHomes, &mut rng)?;
//! copy pristine to work; flip.apply(&work)?;          // or: trial(...)
//! boot work with kill_on = VERDICT, collect the console lines;
//! let outcome = classify(&survey, &lines);             // Outcome::…
//! assert!(outcome.acceptable());
//! ```
//!
//! [`trial`] does the copy, the flip, the boot (a closure the caller
//! gives: it runs QEMU on the work disk and returns its console lines) and
//! the classification in one call.
//!
//! The classification reads the lines of the store's power-cut workload:
//! `ckptload` writing, `ckptcheck` checking its exact invariant after the
//! restart (`check: ok … gen=G` or `check: FAILED …`), and the kernel's
//! `store:` reports and `KERNEL PANIC` lines. A disk for trials is one
//! that workload ran on (a spec with the `ckptcheck` and `ckptload`
//! domains, stopped quietly, e.g. with `ckpt_halt=N ckpt_halt_at=migrated`).
//!
//! Everything that knows the store's disk format is in [`Survey`] and
//! [`choose`] (through `stet_store`), so a format change touches them only.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use regex::Regex;
use stet_store::geometry::{Geometry, NODES_PER_BLOCK, NODE_RECORD};
use stet_store::journal::Scan;
use stet_store::root::{Root, Roots, ROOT_LEN};
use stet_store::{scrub, versions, BLOCK};

use crate::prng::Rng;

/// An area of the disk a flip goes into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Area {
    /// The two root records (either block, within its 256 encoded bytes).
    Roots,
    /// Copy 0 of the node homes (a record that was written).
    NodeCopy0,
    /// Copy 1 of the node homes.
    NodeCopy1,
    /// Copy 0 of the version blocks (page versions and home checksums).
    VersionCopy0,
    /// Copy 1 of the version blocks.
    VersionCopy1,
    /// Page homes (a page written home).
    PageHomes,
    /// The newest root's checkpoint in the log (whether or not it has
    /// migrated: a flip in a migrated one must change nothing).
    Log,
    /// The journal records that apply on top of the newest root's
    /// checkpoint (or any journal block if there are none).
    Journal,
}

impl Area {
    /// Every area.
    pub const ALL: [Area; 8] = [
        Area::Roots,
        Area::NodeCopy0,
        Area::NodeCopy1,
        Area::VersionCopy0,
        Area::VersionCopy1,
        Area::PageHomes,
        Area::Log,
        Area::Journal,
    ];

    /// Its name in specs and reports.
    pub fn name(self) -> &'static str {
        match self {
            Area::Roots => "roots",
            Area::NodeCopy0 => "node-copy0",
            Area::NodeCopy1 => "node-copy1",
            Area::VersionCopy0 => "version-copy0",
            Area::VersionCopy1 => "version-copy1",
            Area::PageHomes => "page-homes",
            Area::Log => "log",
            Area::Journal => "journal",
        }
    }

    /// The area called `name`.
    pub fn from_name(name: &str) -> Option<Area> {
        Area::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// What a checkpointed disk holds before it is damaged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Survey {
    /// Blocks on the disk.
    pub blocks: u64,
    /// Its layout.
    pub geometry: Geometry,
    /// The valid roots, newest first: the committed states a consistent
    /// restart may come back to.
    pub roots: Vec<Root>,
}

fn read_block(f: &File, block: u64) -> Result<Vec<u8>> {
    let mut b = vec![0u8; BLOCK];
    f.read_exact_at(&mut b, block * BLOCK as u64)
        .with_context(|| format!("reading block {block}"))?;
    Ok(b)
}

impl Survey {
    /// Reads the roots of the disk image at `path`.
    pub fn read(path: &Path) -> Result<Survey> {
        let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let blocks = f.metadata()?.len() / BLOCK as u64;
        let r = Roots::read(&read_block(&f, 0)?, &read_block(&f, 1)?, blocks);
        let Some((_, newest)) = r.newest else {
            bail!(
                "{} holds no valid root: not a checkpointed disk",
                path.display()
            );
        };
        Ok(Survey {
            blocks,
            geometry: newest.geometry,
            roots: std::iter::once(newest)
                .chain(r.other.map(|(_, o)| o))
                .collect(),
        })
    }

    /// The checkpoints a consistent restart may come back to: those the
    /// valid roots name.
    pub fn allowed(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.roots.iter().map(|r| r.ckpt_generation).collect();
        v.dedup();
        v
    }

    fn newest(&self) -> Root {
        self.roots[0]
    }
}

/// One flip: bits `xor` of byte `offset` of block `block`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flip {
    /// The area it is in.
    pub area: Area,
    /// The block.
    pub block: u64,
    /// The byte in it.
    pub offset: usize,
    /// The bits flipped (one bit, as media damage goes).
    pub xor: u8,
    /// What the block is, for the report.
    pub what: String,
}

impl Flip {
    /// A line for the report: what was flipped where.
    pub fn describe(&self) -> String {
        format!(
            "{}: bit {:#04x} of byte {} of block {} ({})",
            self.area.name(),
            self.xor,
            self.offset,
            self.block,
            self.what
        )
    }

    /// Flips the bits in the disk image at `path`.
    pub fn apply(&self, path: &Path) -> Result<()> {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        let at = self.block * BLOCK as u64 + self.offset as u64;
        let mut b = [0u8; 1];
        f.read_exact_at(&mut b, at)?;
        b[0] ^= self.xor;
        f.write_all_at(&b, at)?;
        f.sync_all()?;
        Ok(())
    }
}

/// The places of `area` on the disk `f` that hold something: `(block,
/// first byte, bytes, what)`. A flip anywhere else changes nothing anyone
/// reads.
fn places(f: &File, s: &Survey, area: Area) -> Result<Vec<(u64, usize, usize, String)>> {
    let g = s.geometry;
    let mut out = Vec::new();
    match area {
        Area::Roots => {
            for b in 0..2 {
                let blk = read_block(f, b)?;
                if blk.iter().any(|&x| x != 0) {
                    out.push((b, 0, ROOT_LEN, format!("root block {b}")));
                }
            }
        }
        Area::NodeCopy0 | Area::NodeCopy1 => {
            let copy = u8::from(area == Area::NodeCopy1);
            for k in 0..g.node_blocks {
                let Some(home) = g.node_home(k * NODES_PER_BLOCK, copy) else {
                    continue;
                };
                let blk = read_block(f, home.block)?;
                for r in 0..NODES_PER_BLOCK as usize {
                    let rec = &blk[r * NODE_RECORD..(r + 1) * NODE_RECORD];
                    if rec.iter().any(|&x| x != 0) {
                        let oid = k * NODES_PER_BLOCK + r as u64;
                        out.push((
                            home.block,
                            r * NODE_RECORD,
                            NODE_RECORD,
                            format!("node {oid} copy {copy}"),
                        ));
                    }
                }
            }
        }
        Area::VersionCopy0 | Area::VersionCopy1 => {
            let copy = u8::from(area == Area::VersionCopy1);
            for k in 0..g.version_blocks {
                let Some(b) = g.version_block(k, copy) else {
                    continue;
                };
                if read_block(f, b)?.iter().any(|&x| x != 0) {
                    out.push((b, 0, BLOCK, format!("version block {k} copy {copy}")));
                }
            }
        }
        Area::PageHomes => {
            for k in 0..g.version_blocks {
                let (Some(b0), Some(b1)) = (g.version_block(k, 0), g.version_block(k, 1)) else {
                    continue;
                };
                let (c0, c1) = (read_block(f, b0)?, read_block(f, b1)?);
                let entries = match versions::pick(&c0, &c1) {
                    Ok(Some(0)) => c0,
                    Ok(Some(_)) => c1,
                    _ => continue,
                };
                let first = k * stet_store::geometry::VERSIONS_PER_BLOCK;
                for i in 0..stet_store::geometry::VERSIONS_PER_BLOCK as usize {
                    let oid = first + i as u64;
                    if scrub::written(&entries, i) {
                        if let Some(home) = g.page_home(oid) {
                            out.push((home, 0, BLOCK, format!("the home of page {oid}")));
                        }
                    }
                }
            }
        }
        Area::Log => {
            let r = s.newest();
            for i in 0..r.ckpt_blocks {
                let b = r.ckpt_start + i;
                let what = format!("block {i} of checkpoint {}", r.ckpt_generation);
                out.push((b, 0, BLOCK, what));
            }
        }
        Area::Journal => {
            let r = s.newest();
            let ring = g.journal_ring();
            let mut scan = Scan::new(ring, r.journal_head, r.journal_seq, r.ckpt_generation);
            let mut data = [0u8; BLOCK];
            let mut read = |b: u64, out: &mut [u8; BLOCK]| -> Result<()> {
                out.copy_from_slice(&read_block(f, b)?);
                Ok(())
            };
            while let Some(h) = scan.next(&mut read, &mut data)? {
                // The scan's position moved past the record: find it again.
                let at = ring.advance(r.journal_head, h.seq - r.journal_seq);
                out.push((at, 0, BLOCK, format!("journal record {} header", h.seq)));
                out.push((at + 1, 0, BLOCK, format!("journal record {} page", h.seq)));
            }
            if out.is_empty() {
                for b in ring.start..ring.start + ring.blocks {
                    out.push((b, 0, BLOCK, "an unused journal block".into()));
                }
            }
        }
    }
    Ok(out)
}

/// Chooses a flip of one bit in `area` of the disk image at `path`
/// (surveyed as `s`), among the places that hold something. `None` if the
/// area holds nothing.
pub fn choose(path: &Path, s: &Survey, area: Area, rng: &mut Rng) -> Result<Option<Flip>> {
    let f = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let p = places(&f, s, area)?;
    if p.is_empty() {
        return Ok(None);
    }
    let (block, first, len, what) = p[rng.below(p.len() as u64) as usize].clone();
    Ok(Some(Flip {
        area,
        block,
        offset: first + rng.below(len as u64) as usize,
        xor: 1 << rng.below(8),
        what,
    }))
}

/// How a restart on a damaged disk went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The checker found the workload's invariant whole, restarted from a
    /// checkpoint a root named before the damage (`report`: the kernel's
    /// report of damage it survived, if it said anything).
    Consistent {
        /// The checkpoint restarted from.
        generation: u64,
        /// The first `store:` report of damage, if any.
        report: Option<String>,
    },
    /// The kernel reported damage and refused the object: the checker
    /// could not read (or run) what it needed, and said so — never a wrong
    /// value.
    Reported {
        /// The kernel's report.
        report: String,
        /// What the checker could not do (or why there was no check).
        failure: String,
    },
    /// The kernel refused the disk with a clear `store:` message.
    Refused {
        /// The message.
        message: String,
    },
    /// Silently wrong: a wrong state (the checker's invariant broken, or a
    /// checkpoint no root named), a crash, or no verdict at all.
    Wrong {
        /// Why.
        why: String,
    },
}

impl Outcome {
    /// Its kind: `consistent`, `reported`, `refused`, `wrong`.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Consistent { .. } => "consistent",
            Outcome::Reported { .. } => "reported",
            Outcome::Refused { .. } => "refused",
            Outcome::Wrong { .. } => "wrong",
        }
    }

    /// Whether the store kept its promise.
    pub fn acceptable(&self) -> bool {
        !matches!(self, Outcome::Wrong { .. })
    }
}

/// The lines after which a restart's outcome is known (`kill_on`): the
/// checker's verdict, the kernel stopping, or the checker unable to run
/// (it faulted, or could not be prepared) — then no verdict will come.
pub const VERDICT: &str = r"check: (ok|FAILED)|KERNEL PANIC|KERNEL FAULT|^fault: domain \d+ 'ckptcheck'|store: domain 'ckptcheck' cannot be prepared";

/// Classifies a restart on a damaged disk, surveyed before the damage as
/// `s`, from its console lines:
///
/// * `KERNEL PANIC: store: …` — refused, with that message;
/// * any other panic or kernel fault — wrong (damage was used);
/// * `check: ok … gen=G` — consistent if a root named checkpoint G, else
///   wrong;
/// * `check: FAILED` with the invariant broken (`data`, `journal`,
///   `header` words) — wrong;
/// * `check: FAILED` because a read or an order failed, after the kernel
///   reported damage (`store: … fails its checksum`, `… is damaged`, `… no
///   valid copy`, `… not used`) — reported; without such a report, wrong;
/// * no verdict — reported if the kernel reported damage, else wrong.
pub fn classify(s: &Survey, lines: &[String]) -> Outcome {
    let report_re = Regex::new(
        r"store: .*(fails its checksum|is damaged|no valid copy|not used|cannot be used|unusable)",
    )
    .expect("a valid regex");
    let report = lines
        .iter()
        .find(|l| report_re.is_match(l))
        .map(|l| l.trim().to_string());
    for line in lines {
        let l = line.trim();
        if let Some(m) = l.find("KERNEL PANIC: store: ") {
            return Outcome::Refused {
                message: l[m..].to_string(),
            };
        }
        if l.contains("KERNEL PANIC") || l.contains("KERNEL FAULT") {
            return Outcome::Wrong {
                why: format!("the kernel stopped: {l}"),
            };
        }
        if let Some(rest) = l.strip_prefix("check: ok ") {
            let generation = rest
                .split_whitespace()
                .find_map(|w| w.strip_prefix("gen="))
                .and_then(|g| g.parse::<u64>().ok());
            return match generation {
                Some(g) if s.allowed().contains(&g) => Outcome::Consistent {
                    generation: g,
                    report,
                },
                _ => Outcome::Wrong {
                    why: format!(
                        "restarted from a checkpoint no root named (roots named {:?}): {l}",
                        s.allowed()
                    ),
                },
            };
        }
        if let Some(what) = l.strip_prefix("check: FAILED ") {
            let invariant = ["data ", "journal ", "header "]
                .iter()
                .any(|w| what.starts_with(w));
            return match (&report, invariant) {
                (Some(r), false) => Outcome::Reported {
                    report: r.clone(),
                    failure: l.to_string(),
                },
                _ => Outcome::Wrong {
                    why: format!("the state is wrong: {l}"),
                },
            };
        }
    }
    match report {
        Some(r) => Outcome::Reported {
            report: r,
            failure: "no check came".into(),
        },
        None => Outcome::Wrong {
            why: "no verdict: the restart printed neither a check nor a report".into(),
        },
    }
}

/// One trial's flip and outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trial {
    /// What was flipped.
    pub flip: Flip,
    /// How the restart went.
    pub outcome: Outcome,
}

/// One trial: copies the checkpointed disk `pristine` (left untouched) to
/// `work`, flips a bit in `area` of it, restarts it with `boot(work)`
/// (which runs QEMU on it, killed at a [`VERDICT`] line or a timeout, and
/// returns its console lines) and classifies the restart. `None` if the
/// area holds nothing to flip.
pub fn trial<B>(
    pristine: &Path,
    work: &Path,
    area: Area,
    rng: &mut Rng,
    boot: B,
) -> Result<Option<Trial>>
where
    B: FnOnce(&Path) -> Result<Vec<String>>,
{
    let survey = Survey::read(pristine)?;
    let Some(flip) = choose(pristine, &survey, area, rng)? else {
        return Ok(None);
    };
    std::fs::copy(pristine, work)
        .with_context(|| format!("copying {} to {}", pristine.display(), work.display()))?;
    flip.apply(work)?;
    let lines = boot(work)?;
    let outcome = classify(&survey, &lines);
    Ok(Some(Trial { flip, outcome }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;
    use stet_store::journal::{encode_header, Header};

    const BLOCKS: u64 = 256;

    fn root(generation: u64, ckpt: u64, migrated: bool) -> Root {
        let geometry = Geometry::for_disk(BLOCKS).unwrap();
        Root {
            generation,
            geometry,
            ckpt_generation: ckpt,
            ckpt_start: geometry.log_start,
            ckpt_blocks: 3,
            migrated,
            journal_head: geometry.journal_start,
            journal_seq: 10,
            restarts: 1,
        }
    }

    /// A small disk: two roots, a node record in each copy, a version block
    /// naming two written pages, and two journal records.
    fn disk(dir: &TempDir) -> std::path::PathBuf {
        let p = dir.path().join("d.disk");
        let f = File::create(&p).unwrap();
        f.set_len(BLOCKS * BLOCK as u64).unwrap();
        let g = Geometry::for_disk(BLOCKS).unwrap();
        for r in [root(6, 5, true), root(7, 5, true)] {
            let b = stet_store::root::block_for(r.generation);
            f.write_all_at(&r.encode(), b * BLOCK as u64).unwrap();
        }
        for c in 0..2 {
            let h = g.node_home(3, c).unwrap();
            let mut rec = [0u8; NODE_RECORD];
            stet_store::node::encode(&stet_store::node::NodeImage::zero(3), &mut rec);
            f.write_all_at(&rec, h.block * BLOCK as u64 + h.offset as u64)
                .unwrap();
        }
        let mut vb = [0u8; BLOCK];
        let page = [9u8; BLOCK];
        for oid in [2usize, 7] {
            versions::set_entry(&mut vb, oid, versions::Entry::of(1, &page));
            f.write_all_at(&page, g.page_home(oid as u64).unwrap() * BLOCK as u64)
                .unwrap();
        }
        for c in 0..2 {
            let b = g.version_block(0, c).unwrap();
            f.write_all_at(&vb, b * BLOCK as u64).unwrap();
        }
        let ring = g.journal_ring();
        for (i, seq) in [10u64, 11].into_iter().enumerate() {
            let pos = ring.advance(ring.start, i as u64);
            let mut hb = [0u8; BLOCK];
            let data = [seq as u8; BLOCK];
            let h = Header {
                seq,
                base_generation: 5,
                boot: 1,
                committed: 5,
                oid: 2,
                version: 1,
                data_crc: stet_store::crc32c(&data),
            };
            encode_header(&h, &mut hb);
            f.write_all_at(&hb, pos * BLOCK as u64).unwrap();
            f.write_all_at(&data, (pos + 1) * BLOCK as u64).unwrap();
        }
        p
    }

    #[test]
    fn areas_have_names() {
        for a in Area::ALL {
            assert_eq!(Area::from_name(a.name()), Some(a));
        }
        assert_eq!(Area::from_name("nowhere"), None);
    }

    #[test]
    fn flips_land_in_what_the_area_holds() {
        let dir = TempDir::new("damage");
        let p = disk(&dir);
        let s = Survey::read(&p).unwrap();
        assert_eq!(s.allowed(), [5]);
        let g = s.geometry;
        let mut rng = Rng::new(3);
        for _ in 0..40 {
            for area in Area::ALL {
                let f = choose(&p, &s, area, &mut rng).unwrap().unwrap();
                assert_eq!(f.xor.count_ones(), 1);
                let node = |c| g.node_home(3, c).unwrap();
                let ok = match area {
                    Area::Roots => f.block < 2 && f.offset < ROOT_LEN,
                    Area::NodeCopy0 | Area::NodeCopy1 => {
                        let h = node(u8::from(area == Area::NodeCopy1));
                        f.block == h.block && (h.offset..h.offset + NODE_RECORD).contains(&f.offset)
                    }
                    Area::VersionCopy0 => Some(f.block) == g.version_block(0, 0),
                    Area::VersionCopy1 => Some(f.block) == g.version_block(0, 1),
                    Area::PageHomes => [2, 7].map(|o| g.page_home(o).unwrap()).contains(&f.block),
                    Area::Log => (g.log_start..g.log_start + 3).contains(&f.block),
                    Area::Journal => (g.journal_start..g.journal_start + 4).contains(&f.block),
                };
                assert!(ok, "{}", f.describe());
            }
        }
        // The flip changes exactly one bit.
        let f = choose(&p, &s, Area::PageHomes, &mut rng).unwrap().unwrap();
        let before = std::fs::read(&p).unwrap();
        f.apply(&p).unwrap();
        let after = std::fs::read(&p).unwrap();
        let diff: Vec<usize> = (0..before.len())
            .filter(|&i| before[i] != after[i])
            .collect();
        assert_eq!(diff, [f.block as usize * BLOCK + f.offset]);
        assert_eq!(before[diff[0]] ^ after[diff[0]], f.xor);
    }

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn restarts_are_classified() {
        let s = Survey {
            blocks: BLOCKS,
            geometry: Geometry::for_disk(BLOCKS).unwrap(),
            roots: vec![root(7, 5, false), root(6, 3, true)],
        };
        assert_eq!(s.allowed(), [5, 3]);
        let c = |v: &[&str]| classify(&s, &lines(v));
        assert_eq!(
            c(&[
                "store: restarted from gen=3",
                "check: ok epoch=4 journal=2 gen=3"
            ]),
            Outcome::Consistent {
                generation: 3,
                report: None
            }
        );
        assert_eq!(
            c(&[
                "store: root 0 is unusable (Checksum); using root 1",
                "check: ok epoch=4 journal=2 gen=5"
            ])
            .kind(),
            "consistent"
        );
        assert!(matches!(
            c(&["check: ok epoch=4 journal=2 gen=4"]),
            Outcome::Wrong { .. }
        ));
        assert_eq!(
            c(&[
                "store: page 288 fails its checksum at home; not used",
                "check: FAILED segment read of heap page 257: invalid address (13)"
            ]),
            Outcome::Reported {
                report: "store: page 288 fails its checksum at home; not used".into(),
                failure: "check: FAILED segment read of heap page 257: invalid address (13)".into()
            }
        );
        assert!(matches!(
            c(&["check: FAILED data page 255 word 125: expected 0x1 (epoch 6), found 0x2"]),
            Outcome::Wrong { .. }
        ));
        assert!(matches!(
            c(&[
                "store: node 3: copy 0 is damaged; using copy 1",
                "check: FAILED data page 1 word 0: expected 0x1 (epoch 6), found 0x2"
            ]),
            Outcome::Wrong { .. }
        ));
        assert!(matches!(
            c(&["check: FAILED segment read of heap page 3: invalid address (13)"]),
            Outcome::Wrong { .. }
        ));
        assert_eq!(
            c(&["KERNEL PANIC: store: the disk holds no valid root (root 0: Checksum, root 1: Magic); refusing to use it"]).kind(),
            "refused"
        );
        assert!(matches!(
            c(&["KERNEL PANIC: panicked at kernel/src/x.rs:1:1"]),
            Outcome::Wrong { .. }
        ));
        assert!(matches!(c(&["boot: nothing"]), Outcome::Wrong { .. }));
        assert_eq!(
            c(&["store: node 9 is damaged (no valid copy); not used"]).kind(),
            "reported"
        );
        let v = Regex::new(VERDICT).unwrap();
        assert!(v.is_match("check: FAILED x"));
        assert!(v.is_match("fault: domain 7 'ckptcheck' page fault at rip=0x1"));
        assert!(!v.is_match("fault: domain 7 'ckptload' page fault at rip=0x1"));
    }

    #[test]
    fn a_trial_damages_a_copy_and_classifies_its_boot() {
        let dir = TempDir::new("damage");
        let p = disk(&dir);
        let work = dir.path().join("w.disk");
        let before = std::fs::read(&p).unwrap();
        let mut rng = Rng::new(11);
        let t = trial(&p, &work, Area::NodeCopy1, &mut rng, |w| {
            assert_ne!(
                std::fs::read(w).unwrap(),
                before,
                "the work copy is damaged"
            );
            Ok(lines(&["check: ok epoch=2 journal=1 gen=5"]))
        })
        .unwrap()
        .unwrap();
        assert_eq!(
            std::fs::read(&p).unwrap(),
            before,
            "the pristine disk is untouched"
        );
        assert_eq!(t.flip.area, Area::NodeCopy1);
        assert_eq!(
            t.outcome,
            Outcome::Consistent {
                generation: 5,
                report: None
            }
        );
    }
}
