//! Damaging a disk image on purpose before a boot (`corrupt` in a
//! `[[boot]]` step): raw bytes, or a named store object. Everything that
//! knows the store's disk format is in [`resolve`], so a format change
//! touches one function.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use stet_store::geometry::{Geometry, NODE_RECORD};
use stet_store::root::{self, ROOT_LEN};
use stet_store::BLOCK;

/// A `corrupt` table as written in a spec.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CorruptSpec {
    /// A named store object: `root-newest`, `node-copy0`, `node-copy1`,
    /// `version-copy0`, `version-copy1`, `ckpt-block`, `ckpt-page`,
    /// `page-home`. Without it the bytes are given by `block`.
    pub target: Option<String>,
    /// Raw: the disk block (4 KiB).
    pub block: Option<u64>,
    /// Byte offset (in the block, or in the target).
    pub offset: Option<u64>,
    /// Bytes affected.
    pub len: Option<u64>,
    /// XOR mask (default 0xff).
    pub xor: Option<u8>,
    /// `node-copy*`: the node; `ckpt-page`, `page-home`: the page.
    pub oid: Option<u64>,
    /// `ckpt-block`: which block of the newest checkpoint (default 0);
    /// `node-copy*` without `oid`: which node block (all of it);
    /// `version-copy*`: which version block (default 0); `page-home`
    /// without `oid`: the page of the newest checkpoint with the
    /// `index`-th highest oid (default 0: the highest).
    pub index: Option<u64>,
}

/// A store object a corruption names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The newer valid root record: torn (its second half zeroed), or
    /// with `flip`, bytes of it XORed like any other object.
    RootNewest {
        /// XOR bytes (`offset`, `len`, `xor`) instead of tearing it.
        flip: bool,
    },
    /// One copy of a block of node records (8 nodes).
    NodeBlock {
        /// The block (relative to its copy's area).
        index: u64,
        /// Copy 0 or 1.
        copy: u8,
    },
    /// One copy of a node's home record.
    Node {
        /// The node.
        oid: u64,
        /// Copy 0 or 1.
        copy: u8,
    },
    /// One copy of a block of page versions (and page checksums).
    Versions {
        /// The block (relative to its copy's area).
        index: u64,
        /// Copy 0 or 1.
        copy: u8,
    },
    /// The home block of a page: page `oid`, or (`None`) the page of the
    /// newest root's checkpoint (found through its header and directory)
    /// with the `rank`-th highest oid.
    PageHome {
        /// The page.
        oid: Option<u64>,
        /// Without `oid`: 0 the highest page of the checkpoint, 1 the next…
        rank: u64,
    },
    /// A block of the newest root's checkpoint extent in the log.
    CkptBlock {
        /// Which block of the extent.
        index: u64,
    },
    /// The block of a page in the newest root's checkpoint, found through
    /// its header and directory: page `oid`, or (`None`) the page with the
    /// highest oid in it. Unlike a block index, this names the same kind of
    /// object whatever the checkpoint's order of pages (which follows
    /// timing).
    CkptPage {
        /// The page, or the highest.
        oid: Option<u64>,
    },
}

/// What to do to the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corruption {
    /// XOR `len` bytes at byte `offset` of block `block` with `xor`.
    Bytes {
        /// Block.
        block: u64,
        /// Byte in the block (may run past its end).
        offset: u64,
        /// Bytes.
        len: u64,
        /// Mask.
        xor: u8,
    },
    /// Damage a store object: XOR `len` bytes at `offset` within it with
    /// `xor` (default: all of it), except a root, which is torn.
    Object {
        /// Which object.
        target: Target,
        /// Byte within the object.
        offset: u64,
        /// Bytes (`None`: to the object's end).
        len: Option<u64>,
        /// Mask.
        xor: u8,
    },
}

impl TryFrom<CorruptSpec> for Corruption {
    type Error = String;

    fn try_from(s: CorruptSpec) -> Result<Self, String> {
        let xor = s.xor.unwrap_or(0xff);
        if xor == 0 {
            return Err("corrupt: xor = 0 changes nothing".into());
        }
        let not = |what: &str, given: bool| {
            if given {
                Err(format!("corrupt: `{what}` does not apply here"))
            } else {
                Ok(())
            }
        };
        let Some(target) = s.target.as_deref() else {
            not("oid", s.oid.is_some())?;
            not("index", s.index.is_some())?;
            let (Some(block), Some(len)) = (s.block, s.len) else {
                return Err("corrupt: give `block` and `len` (or a `target`)".into());
            };
            if len == 0 {
                return Err("corrupt: len = 0 changes nothing".into());
            }
            return Ok(Corruption::Bytes {
                block,
                offset: s.offset.unwrap_or(0),
                len,
                xor,
            });
        };
        not("block", s.block.is_some())?;
        let target = match target {
            "root-newest" => {
                not("oid", s.oid.is_some())?;
                not("index", s.index.is_some())?;
                // Bytes named: flipped; else torn.
                let flip = s.offset.is_some() || s.len.is_some() || s.xor.is_some();
                Target::RootNewest { flip }
            }
            "version-copy0" | "version-copy1" => {
                not("oid", s.oid.is_some())?;
                let copy = u8::from(target == "version-copy1");
                Target::Versions {
                    index: s.index.unwrap_or(0),
                    copy,
                }
            }
            "page-home" => {
                if s.oid.is_some() {
                    not("index", s.index.is_some())?;
                }
                Target::PageHome {
                    oid: s.oid,
                    rank: s.index.unwrap_or(0),
                }
            }
            "node-copy0" | "node-copy1" => {
                let copy = u8::from(target == "node-copy1");
                match (s.oid, s.index) {
                    (Some(oid), None) => Target::Node { oid, copy },
                    (None, Some(index)) => Target::NodeBlock { index, copy },
                    _ => {
                        return Err(format!(
                            "corrupt: target {target:?} needs `oid` (a record) or `index` (a block)"
                        ))
                    }
                }
            }
            "ckpt-block" => {
                not("oid", s.oid.is_some())?;
                Target::CkptBlock {
                    index: s.index.unwrap_or(0),
                }
            }
            "ckpt-page" => {
                not("index", s.index.is_some())?;
                Target::CkptPage { oid: s.oid }
            }
            other => {
                return Err(format!(
                    "corrupt: unknown target {other:?} (root-newest, node-copy0, node-copy1, version-copy0, version-copy1, ckpt-block, ckpt-page, page-home)"
                ))
            }
        };
        Ok(Corruption::Object {
            target,
            offset: s.offset.unwrap_or(0),
            len: s.len,
            xor,
        })
    }
}

/// A byte range of the disk and what to do to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    /// First byte.
    pub start: u64,
    /// Bytes.
    pub len: u64,
    /// XOR with this, or (`None`) zero.
    pub xor: Option<u8>,
    /// What it is, for the report.
    pub what: String,
}

fn read_block(f: &File, block: u64) -> Result<Vec<u8>> {
    let mut b = vec![0u8; BLOCK];
    f.read_exact_at(&mut b, block * BLOCK as u64)
        .with_context(|| format!("reading block {block}"))?;
    Ok(b)
}

/// The newer valid root of the disk `f` of `blocks` blocks, and the block
/// it is in.
pub fn newest_root(f: &File, blocks: u64) -> Result<(u8, root::Root)> {
    let (a, b) = (read_block(f, 0)?, read_block(f, 1)?);
    match root::choose(&a, &b, blocks) {
        Ok(found) => Ok(found),
        Err(why) => bail!("no valid root record on the disk ({why:?})"),
    }
}

/// The pages of root `r`'s checkpoint, found through its header and
/// directory in the log: `(oid, absolute block)` in directory order.
pub fn checkpoint_pages(f: &File, r: &root::Root) -> Result<Vec<(u64, u64)>> {
    let g = r.geometry;
    let abs = |rel: u64| g.log_start + (r.ckpt_start - g.log_start + rel) % g.log_blocks;
    let h = stet_store::ckpt::decode_header(&read_block(f, abs(0))?)
        .map_err(|_| anyhow::anyhow!("the newest checkpoint's header is damaged"))?;
    let l = h.layout();
    // Directory entries list the nodes, then the pages in the order of
    // their blocks.
    let mut out = Vec::new();
    let mut at = 0u64;
    for k in 0..l.dir_blocks {
        let (entries, n) = stet_store::ckpt::decode_dir_block(
            h.ckpt_generation,
            &read_block(f, abs(l.dir_block(k)))?,
        )
        .map_err(|_| anyhow::anyhow!("directory block {k} is damaged"))?;
        for e in &entries[..n] {
            if e.space == stet_keys::Space::Page {
                let j = at - l.nodes as u64;
                out.push((e.oid, abs(l.page_block(j as u32))));
            }
            at += 1;
        }
    }
    Ok(out)
}

/// Where a store object is on the disk `f` of `blocks` blocks: the one
/// place that knows the store's format. Returns the object's first byte,
/// its length, and its name for the report.
fn resolve(f: &File, blocks: u64, target: Target) -> Result<(u64, u64, String)> {
    let block = BLOCK as u64;
    let geometry = || {
        Geometry::for_disk(blocks)
            .map_err(|e| anyhow::anyhow!("no store geometry for {blocks} blocks: {e:?}"))
    };
    match target {
        Target::RootNewest { .. } => {
            let (which, r) = newest_root(f, blocks)?;
            let what = format!("root block {which} (generation {})", r.generation);
            Ok((which as u64 * block, ROOT_LEN as u64, what))
        }
        Target::Node { oid, copy } => {
            let g = geometry()?;
            let Some(home) = g.node_home(oid, copy) else {
                bail!("node {oid} is beyond the disk's {} nodes", g.nodes);
            };
            let start = home.block * block + home.offset as u64;
            let what = format!("node {oid} copy {copy} (block {})", home.block);
            Ok((start, NODE_RECORD as u64, what))
        }
        Target::NodeBlock { index, copy } => {
            let g = geometry()?;
            if index >= g.node_blocks {
                bail!(
                    "the disk has {} node blocks; no block {index}",
                    g.node_blocks
                );
            }
            let b = g.node_area + copy as u64 * g.node_blocks + index;
            let what = format!("node block {index} copy {copy} (block {b})");
            Ok((b * block, block, what))
        }
        Target::Versions { index, copy } => {
            let g = geometry()?;
            let Some(b) = g.version_block(index, copy) else {
                bail!(
                    "the disk has {} version blocks; no block {index}",
                    g.version_blocks
                );
            };
            let what = format!("version block {index} copy {copy} (block {b})");
            Ok((b * block, block, what))
        }
        Target::PageHome { oid, rank } => {
            let g = geometry()?;
            let oid = match oid {
                Some(o) => o,
                None => {
                    let (_, r) = newest_root(f, blocks)?;
                    let mut pages: Vec<u64> = checkpoint_pages(f, &r)?
                        .into_iter()
                        .map(|(o, _)| o)
                        .collect();
                    pages.sort_unstable_by(|a, b| b.cmp(a));
                    let Some(&o) = pages.get(rank as usize) else {
                        bail!(
                            "the newest checkpoint (generation {}) holds {} pages; no page of rank {rank}",
                            r.ckpt_generation,
                            pages.len()
                        );
                    };
                    o
                }
            };
            let Some(b) = g.page_home(oid) else {
                bail!("page {oid} is beyond the disk's {} pages", g.pages);
            };
            Ok((
                b * block,
                block,
                format!("the home of page {oid} (block {b})"),
            ))
        }
        Target::CkptBlock { index } => {
            let (_, r) = newest_root(f, blocks)?;
            if index >= r.ckpt_blocks {
                bail!(
                    "the newest checkpoint (generation {}) has {} blocks; no block {index}",
                    r.generation,
                    r.ckpt_blocks
                );
            }
            let g = r.geometry;
            let at = g.log_start + (r.ckpt_start - g.log_start + index) % g.log_blocks;
            let what = format!(
                "checkpoint block {index} of generation {} (block {at})",
                r.generation
            );
            Ok((at * block, block, what))
        }
        Target::CkptPage { oid } => {
            let (_, r) = newest_root(f, blocks)?;
            let pages = checkpoint_pages(f, &r)?;
            let best = match oid {
                Some(o) => pages.iter().find(|(p, _)| *p == o),
                None => pages.iter().max_by_key(|(p, _)| *p),
            };
            let Some(&(page, b)) = best else {
                bail!(
                    "the newest checkpoint (generation {}) holds no such page",
                    r.ckpt_generation
                );
            };
            let what = format!(
                "page {page} in checkpoint {} (block {b})",
                r.ckpt_generation
            );
            Ok((b * block, block, what))
        }
    }
}

/// What `c` does to the disk `f` of `blocks` blocks.
pub fn plan(f: &File, blocks: u64, c: &Corruption) -> Result<Damage> {
    match *c {
        Corruption::Bytes {
            block,
            offset,
            len,
            xor,
        } => Ok(Damage {
            start: block * BLOCK as u64 + offset,
            len,
            xor: Some(xor),
            what: format!("block {block}"),
        }),
        Corruption::Object {
            target: Target::RootNewest { flip: false },
            ..
        } => {
            let (start, len, what) = resolve(f, blocks, Target::RootNewest { flip: false })?;
            // A torn write: the first half made it, the second did not.
            Ok(Damage {
                start: start + len / 2,
                len: len - len / 2,
                xor: None,
                what,
            })
        }
        Corruption::Object {
            target,
            offset,
            len,
            xor,
        } => {
            let (start, size, what) = resolve(f, blocks, target)?;
            let len = len.unwrap_or(size.saturating_sub(offset));
            if offset.checked_add(len).is_none_or(|end| end > size) || len == 0 {
                bail!("bytes {offset}+{len} are outside {what} ({size} bytes)");
            }
            Ok(Damage {
                start: start + offset,
                len,
                xor: Some(xor),
                what,
            })
        }
    }
}

/// The root records a disk held before a corruption: what the names
/// `${newest_ckpt}` and `${older_ckpt}` in the patterns of the boot that
/// follows stand for (the checkpoint numbers of the newer and the older
/// valid root), so a test can say which committed state a restart must
/// come back to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// The newer valid root.
    pub newest: Option<root::Root>,
    /// The other root, if valid.
    pub older: Option<root::Root>,
}

impl Facts {
    /// Reads the roots of the disk image at `path` (none if it holds no
    /// valid root, or cannot be read).
    pub fn of(path: &Path) -> Facts {
        let read = || -> Result<Facts> {
            let f = File::open(path)?;
            let blocks = f.metadata()?.len() / BLOCK as u64;
            let (a, b) = (read_block(&f, 0)?, read_block(&f, 1)?);
            let (which, newest) = match root::choose(&a, &b, blocks) {
                Ok(x) => x,
                Err(_) => return Ok(Facts::default()),
            };
            let other = if which == 0 { &b } else { &a };
            Ok(Facts {
                newest: Some(newest),
                older: root::Root::decode(other, blocks).ok(),
            })
        };
        read().unwrap_or_default()
    }

    /// `pattern` with `${newest_ckpt}` and `${older_ckpt}` replaced by the
    /// checkpoint numbers (left as they are when that root is missing: the
    /// pattern then fails to compile, which says so).
    pub fn substitute(&self, pattern: &str) -> String {
        fill(
            pattern,
            self.newest.map(|r| r.ckpt_generation),
            self.older.map(|r| r.ckpt_generation),
        )
    }
}

/// `pattern` with `${newest_ckpt}` and `${older_ckpt}` replaced by these
/// numbers (a name whose number is `None` is left as it is).
pub fn fill(pattern: &str, newest: Option<u64>, older: Option<u64>) -> String {
    let mut out = pattern.to_string();
    for (name, n) in [("${newest_ckpt}", newest), ("${older_ckpt}", older)] {
        if let Some(n) = n {
            out = out.replace(name, &n.to_string());
        }
    }
    out
}

/// Applies `c` to the disk image at `path`; returns what was done.
pub fn apply(path: &Path, c: &Corruption) -> Result<String> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    let size = f.metadata()?.len();
    let d = plan(&f, size / BLOCK as u64, c)?;
    if d.start.checked_add(d.len).is_none_or(|end| end > size) {
        bail!(
            "bytes {}..+{} are beyond the disk ({size} bytes)",
            d.start,
            d.len
        );
    }
    let mut bytes = vec![0u8; usize::try_from(d.len)?];
    f.read_exact_at(&mut bytes, d.start)?;
    let done = match d.xor {
        Some(x) => {
            bytes.iter_mut().for_each(|b| *b ^= x);
            format!(
                "xor {x:#04x} over {} bytes at {} ({})",
                d.len, d.start, d.what
            )
        }
        None => {
            bytes.fill(0);
            format!("zeroed {} bytes at {} (torn {})", d.len, d.start, d.what)
        }
    };
    f.write_all_at(&bytes, d.start)?;
    f.sync_all()?;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;
    use stet_store::root::Root;

    const BLOCKS: u64 = 256;

    fn disk(dir: &TempDir) -> std::path::PathBuf {
        let p = dir.path().join("d.disk");
        File::create(&p)
            .unwrap()
            .set_len(BLOCKS * BLOCK as u64)
            .unwrap();
        p
    }

    fn root(generation: u64) -> Root {
        let geometry = Geometry::for_disk(BLOCKS).unwrap();
        Root {
            generation,
            geometry,
            ckpt_generation: generation,
            ckpt_start: geometry.log_start,
            ckpt_blocks: 5,
            migrated: false,
            journal_head: geometry.journal_start,
            journal_seq: 0,
            restarts: 0,
        }
    }

    fn put_root(p: &Path, r: &Root) {
        let f = OpenOptions::new().write(true).open(p).unwrap();
        let block = root::block_for(r.generation);
        f.write_all_at(&r.encode(), block * BLOCK as u64).unwrap();
    }

    fn spec(text: &str) -> Result<Corruption, String> {
        #[derive(Deserialize)]
        struct W {
            c: CorruptSpec,
        }
        let w: W = toml::from_str(&format!("c = {text}")).map_err(|e| e.to_string())?;
        Corruption::try_from(w.c)
    }

    #[test]
    fn specs_parse_and_check() {
        assert_eq!(
            spec("{ block = 3, offset = 8, len = 4, xor = 0x0f }"),
            Ok(Corruption::Bytes {
                block: 3,
                offset: 8,
                len: 4,
                xor: 0x0f
            })
        );
        assert_eq!(
            spec("{ block = 3, len = 4 }"),
            Ok(Corruption::Bytes {
                block: 3,
                offset: 0,
                len: 4,
                xor: 0xff
            })
        );
        assert_eq!(
            spec("{ target = \"root-newest\" }"),
            Ok(Corruption::Object {
                target: Target::RootNewest { flip: false },
                offset: 0,
                len: None,
                xor: 0xff
            })
        );
        assert_eq!(
            spec("{ target = \"node-copy0\", oid = 9, offset = 100, len = 8 }"),
            Ok(Corruption::Object {
                target: Target::Node { oid: 9, copy: 0 },
                offset: 100,
                len: Some(8),
                xor: 0xff
            })
        );
        assert_eq!(
            spec("{ target = \"ckpt-block\" }"),
            Ok(Corruption::Object {
                target: Target::CkptBlock { index: 0 },
                offset: 0,
                len: None,
                xor: 0xff
            })
        );
        let err = |t: &str| spec(t).unwrap_err();
        assert_eq!(
            err("{ block = 1 }"),
            "corrupt: give `block` and `len` (or a `target`)"
        );
        assert_eq!(
            err("{ target = \"node-copy1\" }"),
            "corrupt: target \"node-copy1\" needs `oid` (a record) or `index` (a block)"
        );
        assert_eq!(
            spec("{ target = \"node-copy1\", index = 2 }"),
            Ok(Corruption::Object {
                target: Target::NodeBlock { index: 2, copy: 1 },
                offset: 0,
                len: None,
                xor: 0xff
            })
        );
        assert_eq!(
            spec("{ target = \"root-newest\", offset = 40, len = 2, xor = 1 }"),
            Ok(Corruption::Object {
                target: Target::RootNewest { flip: true },
                offset: 40,
                len: Some(2),
                xor: 1
            })
        );
        assert_eq!(
            err("{ target = \"root-newest\", oid = 1 }"),
            "corrupt: `oid` does not apply here"
        );
        assert_eq!(
            spec("{ target = \"version-copy1\", index = 2, len = 4 }"),
            Ok(Corruption::Object {
                target: Target::Versions { index: 2, copy: 1 },
                offset: 0,
                len: Some(4),
                xor: 0xff
            })
        );
        assert_eq!(
            spec("{ target = \"page-home\", index = 3, offset = 8, len = 1 }"),
            Ok(Corruption::Object {
                target: Target::PageHome { oid: None, rank: 3 },
                offset: 8,
                len: Some(1),
                xor: 0xff
            })
        );
        assert_eq!(
            err("{ target = \"page-home\", oid = 3, index = 1 }"),
            "corrupt: `index` does not apply here"
        );
        assert_eq!(
            err("{ block = 1, len = 1, oid = 2 }"),
            "corrupt: `oid` does not apply here"
        );
        assert_eq!(
            err("{ block = 1, len = 1, xor = 0 }"),
            "corrupt: xor = 0 changes nothing"
        );
        assert!(err("{ target = \"root\" }").starts_with("corrupt: unknown target"));
        assert!(err("{ blok = 1 }").contains("unknown field"));
    }

    #[test]
    fn raw_bytes_are_xored_in_place() {
        let dir = TempDir::new("corrupt");
        let p = disk(&dir);
        let f = OpenOptions::new().write(true).open(&p).unwrap();
        f.write_all_at(&[1, 2, 3, 4], 3 * 4096 + 8).unwrap();
        let c = spec("{ block = 3, offset = 9, len = 2, xor = 0xf0 }").unwrap();
        assert_eq!(
            apply(&p, &c).unwrap(),
            "xor 0xf0 over 2 bytes at 12297 (block 3)"
        );
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(&bytes[12296..12301], [1, 0xf2, 0xf3, 4, 0]);
        assert_eq!(bytes.iter().filter(|&&b| b != 0).count(), 4);
        let c = spec("{ block = 255, offset = 4090, len = 7 }").unwrap();
        assert!(apply(&p, &c)
            .unwrap_err()
            .to_string()
            .contains("beyond the disk"));
    }

    #[test]
    fn the_newest_root_is_torn_and_the_older_then_wins() {
        let dir = TempDir::new("corrupt");
        let p = disk(&dir);
        let c = spec("{ target = \"root-newest\" }").unwrap();
        let err = apply(&p, &c).unwrap_err().to_string();
        assert!(err.starts_with("no valid root record"), "{err}");
        put_root(&p, &root(3)); // block 1
        put_root(&p, &root(4)); // block 0
        assert_eq!(
            apply(&p, &c).unwrap(),
            "zeroed 128 bytes at 128 (torn root block 0 (generation 4))"
        );
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(&bytes[..128], &root(4).encode()[..128]);
        assert!(bytes[128..4096].iter().all(|&b| b == 0));
        assert_eq!(&bytes[4096..4096 + ROOT_LEN], &root(3).encode()[..]);
        let (which, r) = root::choose(&bytes[..4096], &bytes[4096..8192], BLOCKS).unwrap();
        assert_eq!((which, r.generation), (1, 3));
        // Tearing again now tears generation 3; then no root is left.
        assert_eq!(
            apply(&p, &c).unwrap(),
            "zeroed 128 bytes at 4224 (torn root block 1 (generation 3))"
        );
        assert!(apply(&p, &c).is_err());
    }

    #[test]
    fn a_node_copy_is_flipped_where_geometry_says() {
        let dir = TempDir::new("corrupt");
        let p = disk(&dir);
        let g = Geometry::for_disk(BLOCKS).unwrap();
        let home = g.node_home(13, 0).unwrap();
        let start = home.block * 4096 + home.offset as u64;
        let c = spec("{ target = \"node-copy0\", oid = 13 }").unwrap();
        let done = apply(&p, &c).unwrap();
        assert_eq!(
            done,
            format!(
                "xor 0xff over 512 bytes at {start} (node 13 copy 0 (block {}))",
                home.block
            )
        );
        let bytes = std::fs::read(&p).unwrap();
        let s = start as usize;
        assert!(bytes[s..s + 512].iter().all(|&b| b == 0xff));
        assert_eq!(bytes.iter().filter(|&&b| b != 0).count(), 512);
        // Copy 1 untouched; a part of a record; a node beyond the disk.
        let c1 = g.node_home(13, 1).unwrap();
        let s1 = (c1.block * 4096 + c1.offset as u64) as usize;
        assert!(bytes[s1..s1 + 512].iter().all(|&b| b == 0));
        let c = spec("{ target = \"node-copy1\", oid = 13, offset = 500, len = 12 }").unwrap();
        apply(&p, &c).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        assert!(bytes[s1..s1 + 500].iter().all(|&b| b == 0));
        assert!(bytes[s1 + 500..s1 + 512].iter().all(|&b| b == 0xff));
        let c = spec("{ target = \"node-copy1\", oid = 13, offset = 500, len = 13 }").unwrap();
        assert!(apply(&p, &c)
            .unwrap_err()
            .to_string()
            .contains("outside node 13"));
        let c = spec(&format!("{{ target = \"node-copy0\", oid = {} }}", g.nodes)).unwrap();
        assert!(apply(&p, &c)
            .unwrap_err()
            .to_string()
            .contains("beyond the disk's"));
    }

    #[test]
    fn a_checkpoint_block_is_found_in_the_log() {
        let dir = TempDir::new("corrupt");
        let p = disk(&dir);
        put_root(&p, &root(7));
        let g = root(7).geometry;
        // Every checkpoint starts at the log's first block.
        let c = spec("{ target = \"ckpt-block\", index = 3, offset = 16, len = 4 }").unwrap();
        let at = g.log_start + 3;
        assert_eq!(
            apply(&p, &c).unwrap(),
            format!(
                "xor 0xff over 4 bytes at {} (checkpoint block 3 of generation 7 (block {at}))",
                at * 4096 + 16
            )
        );
        let bytes = std::fs::read(&p).unwrap();
        let s = (at * 4096 + 16) as usize;
        assert_eq!(&bytes[s - 1..s + 5], [0, 0xff, 0xff, 0xff, 0xff, 0]);
        let c = spec("{ target = \"ckpt-block\", index = 5 }").unwrap();
        let err = apply(&p, &c).unwrap_err().to_string();
        assert_eq!(
            err,
            "the newest checkpoint (generation 7) has 5 blocks; no block 5"
        );
    }

    #[test]
    fn a_checkpoint_page_is_found_through_the_directory() {
        use stet_store::ckpt::{encode_dir_block, encode_header, DirEntry, Header};
        let dir = TempDir::new("corrupt");
        let p = disk(&dir);
        put_root(&p, &root(7));
        let g = root(7).geometry;
        let f = OpenOptions::new().write(true).open(&p).unwrap();
        let mut b = vec![0u8; BLOCK];
        let h = Header {
            ckpt_generation: 7,
            nodes: 1,
            pages: 3,
        };
        encode_header(&h, &mut b);
        f.write_all_at(&b, g.log_start * 4096).unwrap();
        let e = |space, oid| DirEntry {
            space,
            oid,
            version: 1,
            crc: 0,
        };
        let entries = [
            e(stet_keys::Space::Node, 500),
            e(stet_keys::Space::Page, 40),
            e(stet_keys::Space::Page, 90),
            e(stet_keys::Space::Page, 7),
        ];
        encode_dir_block(7, &entries, &mut b);
        f.write_all_at(&b, (g.log_start + 1) * 4096).unwrap();
        // header, one directory block, one node block, then pages 40, 90, 7.
        let c = spec("{ target = \"ckpt-page\", len = 2 }").unwrap();
        let at = g.log_start + 4;
        assert_eq!(
            apply(&p, &c).unwrap(),
            format!(
                "xor 0xff over 2 bytes at {} (page 90 in checkpoint 7 (block {at}))",
                at * 4096
            )
        );
        let c = spec("{ target = \"ckpt-page\", oid = 7, len = 2 }").unwrap();
        assert!(apply(&p, &c).unwrap().contains(&format!(
            "page 7 in checkpoint 7 (block {})",
            g.log_start + 5
        )));
        let c = spec("{ target = \"ckpt-page\", oid = 500 }").unwrap();
        assert!(apply(&p, &c)
            .unwrap_err()
            .to_string()
            .contains("holds no such page"));
        assert!(spec("{ target = \"ckpt-page\", index = 1 }").is_err());
    }
}
