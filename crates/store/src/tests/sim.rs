//! Crash-consistency simulation.
//!
//! An in-memory disk with a write cache: writes since the last flush may be
//! lost, applied, or torn (any mix of old and new 512-byte sectors) by a
//! crash; a flush makes every earlier write durable. A reference writer
//! follows the kernel's protocol of docs/STORE.md; a reference recovery
//! uses only the crate's functions. Random object updates, checkpoints
//! (advanced one I/O at a time), journal appends and crashes are driven by
//! proptest; after every crash the recovered state must be exactly the
//! model's: the checkpoint of the durable root plus the journal records
//! that reached the disk (all acknowledged ones, and those of the last
//! unflushed batch whose blocks all landed, in order). Corruption cases
//! follow.

use crate::ckpt::{self, DirError, DirSlot, Directory, Header as CkptHeader, Layout};
use crate::geometry::{Geometry, NODES_PER_BLOCK, NODE_RECORD};
use crate::journal::{self, Header as JHeader, Journal, ScanEnd};
use crate::node::{self, NodeImage, Record};
use crate::root::{block_for, Root, Roots, ROOT_LEN};
use crate::versions::{self, Home};
use crate::{crc32c, BLOCK};
use proptest::prelude::*;
use std::boxed::Box;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::vec;
use std::vec::Vec;
use stet_keys::{rights, Key, Space};
use stet_prng::SplitMix64;

type Blk = [u8; BLOCK];
const SECTOR: usize = 512;
/// The simulated disk: 24 nodes, 48 pages, a journal of 8 records.
const TOTAL: u64 = 128;

/// A small deterministic generator (`stet_prng`'s SplitMix64) for crash
/// outcomes.
struct Rng(SplitMix64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A disk whose unflushed writes a crash may lose, apply or tear.
struct Disk {
    durable: Vec<Blk>,
    pending: Vec<(u64, Box<Blk>)>,
}

impl Disk {
    fn new(total: u64) -> Disk {
        Disk {
            durable: vec![[0; BLOCK]; total as usize],
            pending: Vec::new(),
        }
    }

    /// What the writer sees: its own latest write, else the disk.
    fn read(&self, b: u64) -> Blk {
        match self.pending.iter().rev().find(|(x, _)| *x == b) {
            Some((_, d)) => **d,
            None => self.durable[b as usize],
        }
    }

    fn write(&mut self, b: u64, d: &Blk) {
        assert!(b < self.durable.len() as u64);
        self.pending.push((b, Box::new(*d)));
    }

    fn flush(&mut self) {
        for (b, d) in self.pending.drain(..) {
            self.durable[b as usize] = *d;
        }
    }

    /// A power cut: for each block written since the last flush, the disk
    /// holds the old contents, the last write, any one of the writes, or
    /// any mix of their sectors.
    fn crash(&mut self, rng: &mut Rng) {
        let mut by_block: BTreeMap<u64, Vec<Box<Blk>>> = BTreeMap::new();
        for (b, d) in self.pending.drain(..) {
            by_block.entry(b).or_default().push(d);
        }
        for (b, writes) in by_block {
            let old = self.durable[b as usize];
            let mut cands: Vec<Blk> = vec![old];
            cands.extend(writes.iter().map(|w| **w));
            let out = &mut self.durable[b as usize];
            match rng.below(8) {
                0 | 1 => {}
                2 => *out = *cands.last().unwrap(),
                3 => *out = cands[rng.below(cands.len() as u64) as usize],
                _ => {
                    for s in 0..BLOCK / SECTOR {
                        let c = &cands[rng.below(cands.len() as u64) as usize];
                        out[s * SECTOR..(s + 1) * SECTOR]
                            .copy_from_slice(&c[s * SECTOR..(s + 1) * SECTOR]);
                    }
                }
            }
        }
    }
}

/// The contents of page `oid` written with `seed` (0: the zero page). The
/// seed and oid are in the first bytes so recovery can tell which write a
/// block holds.
fn page_data(oid: u64, seed: u32) -> Blk {
    let mut b = [0u8; BLOCK];
    if seed == 0 {
        return b;
    }
    let mut r = Rng::new(seed as u64 ^ oid << 32);
    for w in b.chunks_mut(8) {
        w.copy_from_slice(&r.next().to_le_bytes());
    }
    b[0..4].copy_from_slice(&seed.to_le_bytes());
    b[4..12].copy_from_slice(&oid.to_le_bytes());
    b
}

fn seed_of(oid: u64, data: &Blk) -> Option<u32> {
    let seed = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    (page_data(oid, seed) == *data).then_some(seed)
}

/// Every object's state: nodes, and pages as (version, seed of contents).
#[derive(Clone, Debug, PartialEq)]
struct State {
    nodes: Vec<NodeImage>,
    pages: Vec<(u32, u32)>,
}

impl State {
    fn zero(g: &Geometry) -> State {
        State {
            nodes: (0..g.nodes).map(NodeImage::zero).collect(),
            pages: vec![(0, 0); g.pages as usize],
        }
    }
}

/// Why the reference recovery refused the disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RecoveryError {
    NoRoot,
    CkptHeader,
    Dir(DirError),
    LogNode(u64),
    LogPage(u64),
    HomeNode(u64),
    HomePage(u64),
    Versions(u64),
    JournalOid(u64),
    /// A page holds bytes the writer never wrote (a test failure).
    Garbage(u64),
}

/// What recovery found.
#[derive(Debug)]
struct Recovered {
    root: Root,
    /// Whether it is the older root (the newest could not be opened).
    fell_back: bool,
    /// The checkpoint's state (homes, and the log if not migrated).
    ckpt: State,
    /// With the journal applied.
    state: State,
    /// Sequence numbers of the journal records applied.
    applied: Vec<u64>,
    end: ScanEnd,
    /// Objects of an unmigrated checkpoint (to migrate at boot).
    in_log: Vec<(Space, u64)>,
}

/// Page 0 stands for the kernel's state page: a restart reads it before
/// anything else, so a root whose page 0 cannot be read is not opened (the
/// kernel falls back to the other root, as for a damaged header or
/// directory).
const STATE_PAGE: u64 = 0;

/// The reference recovery, as the kernel boots: the newest valid root, or,
/// if its checkpoint cannot be opened (header, directory, page 0), the
/// other valid root; then every object from the log or its homes, then the
/// journal. Only the crate's functions decide anything.
fn recover(disk: &[Blk]) -> Result<Recovered, RecoveryError> {
    let total = disk.len() as u64;
    let roots = Roots::read(&disk[0], &disk[1], total);
    let Some((_, newest)) = roots.newest else {
        return Err(RecoveryError::NoRoot);
    };
    match recover_from(disk, newest) {
        Err(
            e @ (RecoveryError::CkptHeader
            | RecoveryError::Dir(_)
            | RecoveryError::LogPage(STATE_PAGE)
            | RecoveryError::HomePage(STATE_PAGE)
            | RecoveryError::Versions(0)),
        ) => match roots.other {
            Some((_, other)) => recover_from(disk, other).map(|r| Recovered {
                fell_back: true,
                ..r
            }),
            None => Err(e),
        },
        r => r,
    }
}

/// Recovery from root `root`.
fn recover_from(disk: &[Blk], root: Root) -> Result<Recovered, RecoveryError> {
    use RecoveryError::*;
    let blk = |b: u64| &disk[b as usize];
    let g = root.geometry;
    let mut slots = vec![DirSlot::EMPTY; g.max_checkpoint().entries() as usize];
    let header = if root.needs_log() {
        let h = ckpt::decode_header(blk(root.ckpt_start)).map_err(|_| CkptHeader)?;
        if h.ckpt_generation != root.ckpt_generation
            || h.layout().total_blocks() != root.ckpt_blocks
        {
            return Err(CkptHeader);
        }
        Some(h)
    } else {
        None
    };
    let mut dir = Directory::new(&mut slots, header.map_or(Layout::new(0, 0), |h| h.layout()));
    if let Some(h) = header {
        let l = h.layout();
        for k in 0..l.dir_blocks {
            dir.add_block(k, h.ckpt_generation, blk(root.ckpt_start + l.dir_block(k)))
                .map_err(Dir)?;
        }
    }
    dir.finish().map_err(Dir)?;
    let mut st = State::zero(&g);
    // Pages first: page 0 (the state page) is what decides a fallback.
    for oid in 0..g.pages {
        let (version, data) = match dir.lookup(Space::Page, oid) {
            Some(f) => {
                let data = blk(root.ckpt_start + f.block);
                f.check_page(data).map_err(|_| LogPage(oid))?;
                (f.version, *data)
            }
            None => {
                let (k, i) = versions::version_block_of(oid);
                let copies = [0, 1].map(|c| blk(g.version_block(k, c).unwrap()));
                let e = match versions::pick(copies[0], copies[1]) {
                    Ok(Some(c)) => versions::entry_at(copies[c as usize], i),
                    Ok(None) => versions::Entry::NEVER,
                    Err(_) => return Err(Versions(k)),
                };
                let home = blk(g.page_home(oid).unwrap());
                match e.judge(crc32c(home)) {
                    Home::Use => (e.version, *home),
                    Home::Zero => (e.version, [0; BLOCK]),
                    Home::Damaged => return Err(HomePage(oid)),
                }
            }
        };
        st.pages[oid as usize] = (version, seed_of(oid, &data).ok_or(Garbage(oid))?);
    }
    for oid in 0..g.nodes {
        st.nodes[oid as usize] = match dir.lookup(Space::Node, oid) {
            Some(f) => f
                .node(blk(root.ckpt_start + f.block))
                .map_err(|_| LogNode(oid))?,
            None => {
                let c0 = g.node_home(oid, 0).unwrap();
                let c1 = g.node_home(oid, 1).unwrap();
                match node::pick(
                    node::decode(&blk(c0.block)[c0.offset..], oid),
                    node::decode(&blk(c1.block)[c1.offset..], oid),
                ) {
                    Record::Valid(n) => n,
                    Record::Blank => NodeImage::zero(oid),
                    Record::Damaged => return Err(HomeNode(oid)),
                }
            }
        };
    }
    let ckpt = st.clone();
    let mut applied = Vec::new();
    let mut bad = None;
    let end = journal::scan(
        g.journal_ring(),
        root.journal_head,
        root.journal_seq,
        root.ckpt_generation,
        |b, buf: &mut Blk| -> Result<(), ()> {
            *buf = *blk(b);
            Ok(())
        },
        |h, data| {
            if h.oid >= g.pages {
                bad.get_or_insert(JournalOid(h.oid));
                return;
            }
            match seed_of(h.oid, data) {
                Some(s) => st.pages[h.oid as usize] = (h.version, s),
                None => {
                    bad.get_or_insert(Garbage(h.oid));
                }
            }
            applied.push(h.seq);
        },
    )
    .unwrap();
    if let Some(e) = bad {
        return Err(e);
    }
    let in_log = (0..dir.len())
        .map(|i| dir.get(i).map(|f| (f.space, f.oid)).unwrap())
        .collect();
    Ok(Recovered {
        root,
        fell_back: false,
        ckpt,
        state: st,
        applied,
        end,
        in_log,
    })
}

/// A checkpoint being written or migrated.
#[derive(Clone, Debug)]
struct Snap {
    gen: u64,
    nodes: Vec<NodeImage>,
    /// (oid, version, seed)
    pages: Vec<(u64, u32, u32)>,
    journal_at: (u64, u64),
}

/// One step of the writer's protocol.
#[derive(Debug)]
enum Act {
    Write(u64, Box<Blk>),
    Flush,
    /// The commit root, first copy (the checkpoint commits when it is
    /// durable).
    CommitRoot,
    Committed,
    /// The same root again, to the other block: only then may migration
    /// overwrite the homes the previous state needs.
    CommitRoot2,
    /// Both blocks name the checkpoint: the journal records before its
    /// snapshot are free.
    Freed,
    Home(u8),
    MigratedRoot,
    /// The "migrated" root again, to the other block: only then may the
    /// next checkpoint overwrite the log.
    MigratedRoot2,
}

/// A journal record written in this boot's timeline.
#[derive(Clone, Debug)]
struct Rec {
    h: JHeader,
    pos: u64,
    seed: u32,
    acked: bool,
}

/// The reference writer: the kernel's protocol, and the model of what
/// must survive.
struct Kernel {
    disk: Disk,
    g: Geometry,
    root: Root,
    durable_root: Root,
    pending_root: Option<Root>,
    mem: State,
    dirty_nodes: BTreeSet<u64>,
    dirty_pages: BTreeSet<u64>,
    journal: Journal,
    boot: u64,
    /// The newest checkpoint whose commit root is durable (journal records
    /// carry it).
    committed: u64,
    snap_gen: u64,
    snap: Option<Snap>,
    queue: VecDeque<Act>,
    states: BTreeMap<u64, State>,
    records: Vec<Rec>,
    crashes: u64,
}

impl Kernel {
    /// A new disk, formatted (a fresh root) and booted.
    fn format(total: u64) -> Kernel {
        let g = Geometry::for_disk(total).unwrap();
        let mut disk = Disk::new(total);
        let mut b = [0u8; BLOCK];
        b[..ROOT_LEN].copy_from_slice(&Root::fresh(g).encode());
        disk.write(block_for(0), &b);
        disk.flush();
        let mut states = BTreeMap::new();
        states.insert(0, State::zero(&g));
        let rec = recover(&disk.durable).unwrap();
        Kernel::boot(disk, rec, states, Vec::new(), 0)
    }

    /// Resumes from what recovery found: writes a root counting the boot
    /// (before any journal record of this boot), then migrates an
    /// unmigrated checkpoint.
    fn boot(
        disk: Disk,
        rec: Recovered,
        states: BTreeMap<u64, State>,
        records: Vec<Rec>,
        crashes: u64,
    ) -> Kernel {
        let r = rec.root;
        let g = r.geometry;
        let mut k = Kernel {
            disk,
            g,
            root: r,
            durable_root: r,
            pending_root: None,
            dirty_nodes: BTreeSet::new(),
            dirty_pages: records.iter().map(|x| x.h.oid).collect(),
            mem: rec.state,
            journal: Journal::recovered(
                g.journal_ring(),
                r.journal_head,
                r.journal_seq,
                rec.end.records,
            ),
            boot: r.restarts + 1,
            committed: r.ckpt_generation,
            snap_gen: r.ckpt_generation,
            snap: None,
            queue: VecDeque::new(),
            states,
            records,
            crashes,
        };
        k.write_root(Root {
            generation: r.generation + 1,
            restarts: r.restarts + 1,
            ..r
        });
        k.flush();
        // The boot's root names the state restarted from, in the block
        // that did not hold it: both blocks now name it.
        if r.needs_log() {
            let c = &rec.ckpt;
            k.snap = Some(Snap {
                gen: r.ckpt_generation,
                nodes: rec
                    .in_log
                    .iter()
                    .filter(|(s, _)| *s == Space::Node)
                    .map(|&(_, o)| c.nodes[o as usize])
                    .collect(),
                pages: rec
                    .in_log
                    .iter()
                    .filter(|(s, _)| *s == Space::Page)
                    .map(|&(_, o)| (o, c.pages[o as usize].0, c.pages[o as usize].1))
                    .collect(),
                journal_at: (r.journal_head, r.journal_seq),
            });
            k.queue.extend([
                Act::Home(0),
                Act::Flush,
                Act::Home(1),
                Act::Flush,
                Act::MigratedRoot,
                Act::Flush,
                Act::MigratedRoot2,
                Act::Flush,
            ]);
        }
        k
    }

    fn write_root(&mut self, r: Root) {
        assert!(
            self.pending_root.is_none(),
            "a root write is always flushed before the next"
        );
        assert_eq!(r.generation, self.root.generation + 1);
        let mut b = [0u8; BLOCK];
        b[..ROOT_LEN].copy_from_slice(&r.encode());
        self.disk.write(block_for(r.generation), &b);
        self.root = r;
        self.pending_root = Some(r);
    }

    fn flush(&mut self) {
        self.disk.flush();
        for r in &mut self.records {
            r.acked = true;
        }
        if let Some(r) = self.pending_root.take() {
            self.durable_root = r;
        }
    }

    fn set_node(&mut self, sel: u8, seed: u32, bump: bool) {
        let oid = sel as u64 % self.g.nodes;
        let n = &mut self.mem.nodes[oid as usize];
        if bump {
            n.version += 1;
        }
        n.calls = (n.calls + seed as u64) & stet_keys::CALL_COUNT_MASK;
        let slot = seed as usize % 16;
        n.keys[slot] = match seed % 4 {
            0 => Key::VOID,
            1 => Key::number(seed as u64, oid as u32),
            2 => Key::page(seed as u64 % 48, seed >> 8, seed & 1 != 0).with_hint(seed >> 4),
            _ => Key::node(seed as u64 % 24, seed >> 8, rights::WEAK).with_hint(seed),
        };
        self.dirty_nodes.insert(oid);
    }

    fn set_page(&mut self, sel: u8, seed: u32, bump: bool) -> u64 {
        let oid = sel as u64 % self.g.pages;
        let p = &mut self.mem.pages[oid as usize];
        if bump {
            p.0 += 1;
        }
        p.1 = seed | 1;
        self.dirty_pages.insert(oid);
        oid
    }

    /// Domains write pages and commit them through the journal; the
    /// records are acknowledged by the next flush (now if `flush`).
    fn journal(&mut self, pages: &[(u8, u32)], flush: bool) {
        for &(sel, seed) in pages {
            let oid = self.set_page(sel, seed, false);
            let Ok((pos, seq)) = self.journal.append() else {
                continue; // full: the kernel would wait for a checkpoint
            };
            let (version, seed) = self.mem.pages[oid as usize];
            let data = page_data(oid, seed);
            let h = JHeader {
                seq,
                base_generation: self.snap_gen,
                boot: self.boot,
                committed: self.committed,
                oid,
                version,
                data_crc: crc32c(&data),
            };
            let mut hb = [0u8; BLOCK];
            journal::encode_header(&h, &mut hb);
            self.disk.write(pos, &hb);
            self.disk.write(pos + 1, &data);
            self.records.push(Rec {
                h,
                pos,
                seed,
                acked: false,
            });
        }
        if flush {
            self.flush();
        }
    }

    /// Takes a snapshot (the stop-the-world part) and queues its writes.
    /// Refused while the previous checkpoint is still in progress.
    fn checkpoint(&mut self) -> bool {
        if !self.queue.is_empty() {
            return false;
        }
        let gen = self.root.next_ckpt_generation();
        let snap = Snap {
            gen,
            nodes: self
                .dirty_nodes
                .iter()
                .map(|&o| self.mem.nodes[o as usize])
                .collect(),
            pages: self
                .dirty_pages
                .iter()
                .map(|&o| {
                    (
                        o,
                        self.mem.pages[o as usize].0,
                        self.mem.pages[o as usize].1,
                    )
                })
                .collect(),
            journal_at: self.journal.tail(),
        };
        self.dirty_nodes.clear();
        self.dirty_pages.clear();
        self.snap_gen = gen;
        // The disk holds keys without hints.
        let mut st = self.mem.clone();
        for n in &mut st.nodes {
            n.keys = n.keys.map(Key::canonical);
        }
        self.states.insert(gen, st);
        let l = Layout::new(snap.nodes.len() as u32, snap.pages.len() as u32);
        assert!(l.total_blocks() <= self.g.log_blocks);
        let base = self.g.log_start;
        let mut b = [0u8; BLOCK];
        ckpt::encode_header(
            &CkptHeader {
                ckpt_generation: gen,
                nodes: l.nodes,
                pages: l.pages,
            },
            &mut b,
        );
        self.queue.push_back(Act::Write(base, Box::new(b)));
        let entries: Vec<ckpt::DirEntry> = snap
            .nodes
            .iter()
            .map(|n| ckpt::DirEntry {
                space: Space::Node,
                oid: n.oid,
                version: n.version,
                crc: 0,
            })
            .chain(
                snap.pages
                    .iter()
                    .map(|&(oid, version, seed)| ckpt::DirEntry {
                        space: Space::Page,
                        oid,
                        version,
                        crc: crc32c(&page_data(oid, seed)),
                    }),
            )
            .collect();
        for (k, chunk) in entries.chunks(ckpt::DIR_ENTRIES).enumerate() {
            ckpt::encode_dir_block(gen, chunk, &mut b);
            self.queue
                .push_back(Act::Write(base + l.dir_block(k as u32), Box::new(b)));
        }
        for (i, chunk) in snap.nodes.chunks(NODES_PER_BLOCK as usize).enumerate() {
            b.fill(0);
            for (r, n) in chunk.iter().enumerate() {
                node::encode(n, &mut b[r * NODE_RECORD..]);
            }
            let (rel, _) = l.node_block(i as u32 * NODES_PER_BLOCK as u32);
            self.queue.push_back(Act::Write(base + rel, Box::new(b)));
        }
        for (j, &(oid, _, seed)) in snap.pages.iter().enumerate() {
            self.queue.push_back(Act::Write(
                base + l.page_block(j as u32),
                Box::new(page_data(oid, seed)),
            ));
        }
        self.queue.extend([
            Act::Flush,
            Act::CommitRoot,
            Act::Flush,
            Act::Committed,
            Act::CommitRoot2,
            Act::Flush,
            Act::Freed,
            Act::Home(0),
            Act::Flush,
            Act::Home(1),
            Act::Flush,
            Act::MigratedRoot,
            Act::Flush,
            Act::MigratedRoot2,
            Act::Flush,
        ]);
        self.snap = Some(snap);
        true
    }

    /// Does the next I/O step of the checkpoint in progress.
    fn step(&mut self) {
        let Some(act) = self.queue.pop_front() else {
            return;
        };
        match act {
            Act::Write(b, d) => self.disk.write(b, &d),
            Act::Flush => self.flush(),
            Act::CommitRoot => {
                let s = self.snap.as_ref().unwrap();
                let l = Layout::new(s.nodes.len() as u32, s.pages.len() as u32);
                let r = Root {
                    generation: self.root.generation + 1,
                    ckpt_generation: s.gen,
                    ckpt_start: self.g.log_start,
                    ckpt_blocks: l.total_blocks(),
                    migrated: false,
                    journal_head: s.journal_at.0,
                    journal_seq: s.journal_at.1,
                    ..self.root
                };
                self.write_root(r);
            }
            Act::Committed => {
                let s = self.snap.as_ref().unwrap();
                assert_eq!(self.durable_root.ckpt_generation, s.gen);
                self.committed = s.gen;
            }
            Act::CommitRoot2 | Act::MigratedRoot2 => {
                self.write_root(Root {
                    generation: self.root.generation + 1,
                    ..self.root
                });
                if matches!(act, Act::MigratedRoot2) {
                    self.snap = None;
                }
            }
            Act::Freed => {
                let s = self.snap.as_ref().unwrap();
                assert_eq!(self.durable_root.ckpt_generation, s.gen);
                self.journal
                    .checkpoint_committed(s.journal_at.0, s.journal_at.1)
                    .unwrap();
                let head = self.durable_root.journal_seq;
                self.records.retain(|r| r.h.seq >= head);
            }
            Act::Home(copy) => {
                let writes = self.home_writes(copy);
                for w in writes.into_iter().rev() {
                    self.queue.push_front(w);
                }
            }
            Act::MigratedRoot => {
                self.write_root(Root {
                    generation: self.root.generation + 1,
                    migrated: true,
                    ..self.root
                });
            }
        }
    }

    /// The writes that migrate the checkpoint to copy `copy` of the homes:
    /// node blocks and version blocks rebuilt from the copies on disk
    /// (read, pick, patch), and, with copy 0, the pages.
    fn home_writes(&self, copy: u8) -> Vec<Act> {
        let g = &self.g;
        let s = self.snap.as_ref().unwrap();
        let mut out = Vec::new();
        let node_blocks: BTreeSet<u64> = s.nodes.iter().map(|n| n.oid / NODES_PER_BLOCK).collect();
        for k in node_blocks {
            let c = [0, 1].map(|c| {
                self.disk
                    .read(g.node_home(k * NODES_PER_BLOCK, c).unwrap().block)
            });
            let mut img = [0u8; BLOCK];
            for r in 0..NODES_PER_BLOCK as usize {
                let oid = k * NODES_PER_BLOCK + r as u64;
                if oid >= g.nodes {
                    break;
                }
                let at = r * NODE_RECORD;
                match node::pick(
                    node::decode(&c[0][at..], oid),
                    node::decode(&c[1][at..], oid),
                ) {
                    Record::Valid(n) => node::encode(&n, &mut img[at..]),
                    Record::Blank => {}
                    Record::Damaged => panic!("node {oid} damaged at home during migration"),
                }
            }
            for n in s.nodes.iter().filter(|n| n.oid / NODES_PER_BLOCK == k) {
                node::encode(
                    n,
                    &mut img[(n.oid % NODES_PER_BLOCK) as usize * NODE_RECORD..],
                );
            }
            out.push(Act::Write(
                g.node_home(k * NODES_PER_BLOCK, copy).unwrap().block,
                Box::new(img),
            ));
        }
        let version_blocks: BTreeSet<u64> = s
            .pages
            .iter()
            .map(|p| versions::version_block_of(p.0).0)
            .collect();
        for k in version_blocks {
            let c = [0, 1].map(|c| self.disk.read(g.version_block(k, c).unwrap()));
            let mut img = match versions::pick(&c[0], &c[1]) {
                Ok(Some(x)) => c[x as usize],
                Ok(None) => [0u8; BLOCK],
                Err(_) => panic!("version block {k} damaged during migration"),
            };
            for &(oid, version, seed) in s
                .pages
                .iter()
                .filter(|p| versions::version_block_of(p.0).0 == k)
            {
                let e = versions::Entry::of(version, &page_data(oid, seed));
                versions::set_entry(&mut img, versions::version_block_of(oid).1, e);
            }
            out.push(Act::Write(g.version_block(k, copy).unwrap(), Box::new(img)));
        }
        if copy == 0 {
            for &(oid, _, seed) in &s.pages {
                out.push(Act::Write(
                    g.page_home(oid).unwrap(),
                    Box::new(page_data(oid, seed)),
                ));
            }
        }
        out
    }

    fn idle(&self) -> bool {
        self.queue.is_empty()
    }

    /// Steps until the checkpoint in progress (if any) has migrated.
    fn finish(&mut self) {
        while !self.idle() {
            self.step();
        }
    }

    /// Steps until the checkpoint in progress is committed (its root
    /// durable), not migrated.
    fn commit(&mut self) {
        let gen = self.snap.as_ref().unwrap().gen;
        while self.durable_root.ckpt_generation != gen {
            assert!(!self.idle());
            self.step();
        }
    }

    /// What recovery must find after the crash that just happened: the
    /// root, the checkpoint's state, the journal records applied, and the
    /// state with them.
    fn expected(&self) -> (Root, State, Vec<Rec>, State) {
        let durable = &self.disk.durable;
        let root = match self.pending_root {
            Some(p) if durable[block_for(p.generation) as usize][..ROOT_LEN] == p.encode() => p,
            _ => self.durable_root,
        };
        self.expected_from(root, false)
    }

    /// What recovery from `root` must give: its checkpoint's state plus the
    /// journal records from its head that reached the disk, in order, up
    /// to the first one written after a later checkpoint committed (only
    /// a fallback root, `fallback`, meets one).
    fn expected_from(&self, root: Root, fallback: bool) -> (Root, State, Vec<Rec>, State) {
        let durable = &self.disk.durable;
        let ckpt = self.states[&root.ckpt_generation].clone();
        let mut st = ckpt.clone();
        let mut applied = Vec::new();
        let live = self.records.iter().filter(|r| r.h.seq >= root.journal_seq);
        for (r, seq) in live.zip(root.journal_seq..) {
            assert_eq!(r.h.seq, seq, "records are consecutive");
            if r.h.committed > root.ckpt_generation {
                assert!(fallback, "record {} is newer than the newest root", r.h.seq);
                break;
            }
            let mut hb = [0u8; BLOCK];
            journal::encode_header(&r.h, &mut hb);
            let intact = durable[r.pos as usize] == hb
                && durable[r.pos as usize + 1] == page_data(r.h.oid, r.seed);
            assert!(intact || !r.acked, "acknowledged record {} lost", r.h.seq);
            if !intact {
                break;
            }
            st.pages[r.h.oid as usize] = (r.h.version, r.seed);
            applied.push(Rec {
                acked: true,
                ..r.clone()
            });
        }
        (root, ckpt, applied, st)
    }

    /// A power cut, then recovery (checked against the model) and a boot.
    fn crash(mut self, seed: u64) -> Kernel {
        let mut rng = Rng::new(seed);
        self.disk.crash(&mut rng);
        let oid = rng.below(self.g.nodes);
        let k = self.check_and_boot();
        k.check_copy_1(oid);
        k
    }

    /// Copy 1 is a real second copy: with node `oid`'s copy 0 damaged, a
    /// disk recovers the same state (if the record was ever written).
    fn check_copy_1(&self, oid: u64) {
        let p = self.g.node_home(oid, 0).unwrap();
        let mut disk = self.disk.durable.clone();
        let rec = &mut disk[p.block as usize][p.offset..p.offset + NODE_RECORD];
        if rec.iter().all(|&b| b == 0) {
            return;
        }
        rec[100] ^= 0x20;
        let want = recover(&self.disk.durable).unwrap().state;
        assert_eq!(recover(&disk).unwrap().state, want, "copy 1 of node {oid}");
    }

    fn check_and_boot(self) -> Kernel {
        let (root, ckpt, applied, state) = self.expected();
        let rec = recover(&self.disk.durable).expect("recovery refused a crashed disk");
        assert!(!rec.fell_back, "a crash alone never needs the other root");
        assert_eq!(rec.root, root, "the durable root");
        assert!(
            root.ckpt_generation == self.durable_root.ckpt_generation
                || Some(root.ckpt_generation) == self.pending_root.map(|p| p.ckpt_generation),
            "never an uncommitted checkpoint"
        );
        assert_eq!(rec.ckpt, ckpt, "the checkpoint's state");
        assert_eq!(
            rec.applied,
            applied.iter().map(|r| r.h.seq).collect::<Vec<_>>()
        );
        assert_eq!(rec.state, state, "the state with the journal");
        assert_eq!(rec.end.seq, root.journal_seq + applied.len() as u64);
        Kernel::boot(self.disk, rec, self.states, applied, self.crashes + 1)
    }
}

/// One thing that happens.
#[derive(Clone, Debug)]
enum Op {
    Node(u8, u32, bool),
    Page(u8, u32, bool),
    Journal(Vec<(u8, u32)>, bool),
    Checkpoint,
    Step(u8),
    Crash(u64),
}

fn any_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<u8>(), any::<u32>(), any::<bool>()).prop_map(|(a, b, c)| Op::Node(a, b, c)),
        3 => (any::<u8>(), any::<u32>(), any::<bool>()).prop_map(|(a, b, c)| Op::Page(a, b, c)),
        3 => (proptest::collection::vec((any::<u8>(), any::<u32>()), 1..4), any::<bool>())
            .prop_map(|(v, f)| Op::Journal(v, f)),
        2 => Just(Op::Checkpoint),
        6 => (1u8..12).prop_map(Op::Step),
        1 => any::<u64>().prop_map(Op::Crash),
    ]
}

fn run(ops: &[Op], last_crash: u64) -> Kernel {
    let mut k = Kernel::format(TOTAL);
    for op in ops {
        match op {
            Op::Node(s, v, b) => k.set_node(*s, *v, *b),
            Op::Page(s, v, b) => {
                k.set_page(*s, *v, *b);
            }
            Op::Journal(v, f) => k.journal(v, *f),
            Op::Checkpoint => {
                k.checkpoint();
            }
            Op::Step(n) => (0..*n).for_each(|_| k.step()),
            Op::Crash(seed) => k = k.crash(*seed),
        }
    }
    k.crash(last_crash)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// After any crash, recovery gives the durable root's checkpoint plus
    /// the journal records that reached the disk, and nothing else.
    #[test]
    fn crashes_recover_a_committed_state(ops in proptest::collection::vec(any_op(), 1..150), last in any::<u64>()) {
        run(&ops, last);
    }
}

/// A fixed workload that reaches every phase, with many crashes.
#[test]
fn crash_at_every_step_of_a_checkpoint() {
    // Crash after 0, 1, 2, ... steps of the second checkpoint, with journal
    // records before and during it.
    for at in 0..80 {
        for seed in 0..8 {
            let mut k = Kernel::format(TOTAL);
            for i in 0..30 {
                k.set_node(i, i as u32 * 7 + 1, i % 3 == 0);
                k.set_page(i, i as u32 * 13 + 1, i % 5 == 0);
            }
            k.checkpoint();
            k.finish();
            for i in 0..12 {
                k.set_page(i * 3, 1000 + i as u32, i % 2 == 0);
                k.set_node(i * 2, 1000 + i as u32, true);
            }
            k.journal(&[(5, 1), (6, 2)], true);
            k.checkpoint();
            for s in 0..at {
                k.step();
                if s == 20 {
                    k.journal(&[(7, 3), (5, 4), (9, 5)], s % 2 == 0);
                }
            }
            let gen_before = k.durable_root.ckpt_generation;
            let k = k.crash(seed * 1000 + at);
            assert!(k.root.ckpt_generation >= gen_before);
            // And again, during the recovery's own migration.
            let mut k = k;
            for _ in 0..(at * 7 + seed) % 26 {
                k.step();
            }
            let mut k = k.crash(seed + 77);
            k.finish();
            k.crash(0);
        }
    }
}

/// A store with two migrated checkpoints and journal records since.
fn two_checkpoints() -> Kernel {
    let mut k = Kernel::format(TOTAL);
    for i in 0..24 {
        k.set_node(i, i as u32 + 1, true);
    }
    for i in 0..48 {
        k.set_page(i, i as u32 + 100, true);
    }
    k.checkpoint();
    k.finish();
    for i in 0..8 {
        k.set_node(i, 500 + i as u32, true);
        k.set_page(i * 2, 500 + i as u32, true);
    }
    k.checkpoint();
    k.finish();
    k.journal(&[(1, 9), (2, 10)], true);
    k
}

fn state_of(k: &Kernel) -> State {
    k.expected().3
}

#[test]
fn a_damaged_node_copy_is_survived() {
    let k = two_checkpoints();
    let want = state_of(&k);
    let g = k.g;
    let mut disk = k.disk.durable.clone();
    let p = g.node_home(3, 0).unwrap();
    disk[p.block as usize][p.offset + 40] ^= 0x10;
    assert_eq!(recover(&disk).unwrap().state, want, "copy 1 used");
    let mut other = k.disk.durable.clone();
    let p1 = g.node_home(3, 1).unwrap();
    other[p1.block as usize][p1.offset + 40] ^= 0x10;
    assert_eq!(recover(&other).unwrap().state, want, "copy 0 used");
    disk[p1.block as usize][p1.offset + 40] ^= 0x10;
    assert_eq!(
        recover(&disk).unwrap_err(),
        RecoveryError::HomeNode(3),
        "both damaged: said, not guessed"
    );
    // A whole block of copy 0 lost (zeroed): copy 1 serves all eight.
    let mut zeroed = k.disk.durable.clone();
    zeroed[p.block as usize].fill(0);
    assert_eq!(recover(&zeroed).unwrap().state, want);
}

#[test]
fn a_damaged_version_copy_is_survived() {
    let k = two_checkpoints();
    let want = state_of(&k);
    let mut disk = k.disk.durable.clone();
    let b0 = k.g.version_block(0, 0).unwrap() as usize;
    disk[b0][100] ^= 1;
    assert_eq!(recover(&disk).unwrap().state, want);
    let b1 = k.g.version_block(0, 1).unwrap() as usize;
    disk[b1][100] ^= 1;
    assert_eq!(recover(&disk).unwrap_err(), RecoveryError::Versions(0));
}

#[test]
fn a_torn_root_falls_back_to_the_other() {
    // The newest root is checkpoint 2's second "migrated" root; the other
    // is its first: the same state.
    let k = two_checkpoints();
    let want = state_of(&k);
    let newest = block_for(k.durable_root.generation) as usize;
    let mut disk = k.disk.durable.clone();
    disk[newest][100..ROOT_LEN].fill(0);
    let rec = recover(&disk).unwrap();
    assert_eq!(rec.root.generation, k.durable_root.generation - 1);
    assert!(rec.root.migrated);
    assert_eq!(rec.state, want);

    // Checkpoint 3 committed (its first commit root), not migrated; that
    // root torn: checkpoint 2, whose homes nothing has touched.
    let mut k = two_checkpoints();
    let prev = k.durable_root.ckpt_generation;
    let before = k.states[&prev].clone();
    k.set_page(40, 4242, true);
    k.checkpoint();
    k.commit();
    let mut disk = k.disk.durable.clone();
    disk[block_for(k.durable_root.generation) as usize][8..16].fill(0xff);
    let rec = recover(&disk).unwrap();
    assert_eq!(rec.root.ckpt_generation, prev);
    assert_eq!(rec.ckpt, before);
    // The journal records after checkpoint 2's snapshot apply on top.
    assert_eq!(rec.applied.len(), 2);
    // Both roots torn: nothing is guessed.
    disk[block_for(k.durable_root.generation + 1) as usize][20] ^= 1;
    assert_eq!(recover(&disk).unwrap_err(), RecoveryError::NoRoot);
}

#[test]
fn a_damaged_root_beside_a_new_log_gives_the_same_state() {
    // Checkpoint 2 migrated (both roots say so); checkpoint 3's log blocks
    // are durable (a journal flush) but not committed. The newest root
    // damaged: the other says "migrated" too, so the new log is not read.
    let mut k = two_checkpoints();
    k.set_node(0, 77, true);
    k.checkpoint();
    k.step(); // the header
    k.journal(&[(3, 1)], true);
    let mut disk = k.disk.durable.clone();
    disk[block_for(k.durable_root.generation) as usize][30] ^= 4;
    let rec = recover(&disk).unwrap();
    assert!(!rec.root.needs_log());
    assert_eq!(rec.state, state_of(&k));
    assert_eq!(recover(&k.disk.durable).unwrap().state, state_of(&k));
}

/// The valid root in the block that does not hold the newest.
fn other_root(disk: &[Blk]) -> Root {
    Roots::read(&disk[0], &disk[1], disk.len() as u64)
        .other
        .expect("two valid roots")
        .1
}

/// A store whose last checkpoint is committed (its first commit root
/// durable) but not migrated: the other root still names checkpoint 2.
fn unmigrated() -> (Kernel, Layout) {
    let mut k = two_checkpoints();
    for i in 0..10 {
        k.set_node(i + 10, 900 + i as u32, false);
    }
    for i in 0..30 {
        k.set_page(i, 900 + i as u32, false);
    }
    k.checkpoint();
    k.commit();
    assert!(k.durable_root.needs_log());
    (k, Layout::new(10, 30))
}

/// Steps `k` until both root blocks name its checkpoint in progress.
fn second_commit_root(k: &mut Kernel) {
    while !matches!(k.queue.front(), Some(Act::Freed)) {
        k.step();
    }
}

#[test]
fn a_damaged_directory_falls_back_while_the_previous_state_is_whole() {
    let (mut k, l) = unmigrated();
    assert_eq!(recover(&k.disk.durable).unwrap().state, state_of(&k));
    let before = other_root(&k.disk.durable);
    let want = k.expected_from(before, true).3;
    for (b, at) in [(l.dir_block(0), 17), (0, 20)] {
        let mut disk = k.disk.durable.clone();
        disk[(k.g.log_start + b) as usize][at] ^= 2;
        let rec = recover(&disk).unwrap();
        assert!(rec.fell_back);
        assert_eq!(rec.root, before);
        assert_eq!(rec.state, want);
    }
    // Once both roots name checkpoint 3, migration may start: its
    // directory is then the only way to it, and its damage is reported.
    second_commit_root(&mut k);
    let mut disk = k.disk.durable.clone();
    disk[(k.g.log_start + l.dir_block(0)) as usize][17] ^= 2;
    assert_eq!(
        recover(&disk).unwrap_err(),
        RecoveryError::Dir(DirError::Damaged)
    );
    let mut disk = k.disk.durable.clone();
    disk[k.g.log_start as usize][20] ^= 2;
    assert_eq!(recover(&disk).unwrap_err(), RecoveryError::CkptHeader);
}

#[test]
fn a_damaged_state_page_in_the_log_falls_back_while_it_can() {
    let (mut k, l) = unmigrated();
    let before = other_root(&k.disk.durable);
    // Page 0 is the first page entry (dirty pages in oid order).
    let at = (k.g.log_start + l.page_block(0)) as usize;
    let mut disk = k.disk.durable.clone();
    disk[at][123] ^= 8;
    let rec = recover(&disk).unwrap();
    assert!(rec.fell_back);
    assert_eq!(rec.root, before);
    assert_eq!(rec.state, k.expected_from(before, true).3);
    second_commit_root(&mut k);
    let mut disk = k.disk.durable.clone();
    disk[at][123] ^= 8;
    assert_eq!(
        recover(&disk).unwrap_err(),
        RecoveryError::LogPage(STATE_PAGE)
    );
}

#[test]
fn a_damaged_page_or_node_in_the_log_is_reported() {
    let (k, l) = unmigrated();
    let mut disk = k.disk.durable.clone();
    // Page 5 is the sixth page entry (dirty pages in oid order).
    disk[(k.g.log_start + l.page_block(5)) as usize][999] ^= 1;
    assert_eq!(recover(&disk).unwrap_err(), RecoveryError::LogPage(5));
    let mut disk = k.disk.durable.clone();
    let (b, off) = l.node_block(2);
    disk[(k.g.log_start + b) as usize][off + 100] ^= 1;
    assert_eq!(recover(&disk).unwrap_err(), RecoveryError::LogNode(12));
    // Damage at a page's home does not matter while the log has it.
    let mut disk = k.disk.durable.clone();
    disk[k.g.page_home(5).unwrap() as usize][999] ^= 1;
    assert_eq!(recover(&disk).unwrap().state, state_of(&k));
}

#[test]
fn recovery_migrates_an_unmigrated_checkpoint_at_boot() {
    let (k, _) = unmigrated();
    let want = state_of(&k);
    let mut k = k.crash(0);
    assert!(!k.idle(), "migration queued");
    k.finish();
    assert!(!k.durable_root.needs_log());
    let rec = recover(&k.disk.durable).unwrap();
    assert_eq!(rec.state, want);
    assert_eq!(rec.root.restarts, 2);
}

#[test]
fn a_stale_record_after_a_gap_is_not_applied() {
    // Boot 1 writes records s, s+1 without a flush; s is lost, s+1 lands.
    // Boot 2 writes a new s and crashes: the old s+1 follows it with the
    // right sequence number, but an older boot: not applied.
    let mut k = two_checkpoints();
    let (pos, s) = k.journal.tail();
    k.journal(&[(20, 1), (21, 2)], false);
    let next = k.g.journal_ring().next(pos);
    land_only(&mut k, &[next, next + 1]);
    let mut k = k.check_and_boot();
    assert_eq!(k.journal.tail(), (pos, s));
    k.journal(&[(22, 3)], true);
    let rec = recover(&k.disk.durable).unwrap();
    assert_eq!(rec.applied.last(), Some(&s));
    assert_eq!(rec.end.seq, s + 1);
    k.crash(1);
}

/// Lands only the unflushed writes to `blocks`; loses the others.
fn land_only(k: &mut Kernel, blocks: &[u64]) {
    for (b, d) in k.disk.pending.drain(..) {
        if blocks.contains(&b) {
            k.disk.durable[b as usize] = *d;
        }
    }
}

#[test]
fn a_record_of_a_lost_checkpoint_is_not_applied() {
    // Boot 1 takes a snapshot (checkpoint number n), then writes records
    // s, s+1 after it; the crash loses the checkpoint and record s but
    // keeps s+1. Boot 2 writes a new s, then commits a checkpoint whose
    // journal starts at s+1 — where the leftover s+1 is, with the right
    // number. Its base (n) is older than the new checkpoint: not applied.
    let mut k = Kernel::format(TOTAL);
    k.set_page(9, 5, true);
    assert!(k.checkpoint());
    let lost = k.snap.as_ref().unwrap().gen;
    let (pos, s) = k.journal.tail();
    k.journal(&[(20, 1), (21, 2)], false);
    let next = k.g.journal_ring().next(pos);
    land_only(&mut k, &[next, next + 1]);
    let mut k = k.check_and_boot();
    assert_eq!(k.journal.tail(), (pos, s));
    k.journal(&[(22, 3)], true);
    assert!(k.checkpoint());
    k.commit();
    let now = k.durable_root.ckpt_generation;
    assert!(now > lost, "{now} > {lost}");
    assert_eq!(k.durable_root.journal_head, next);
    let rec = recover(&k.disk.durable).unwrap();
    assert_eq!(rec.applied, Vec::<u64>::new());
    assert_eq!(rec.state, state_of(&k));
    k.crash(5);
}

/// The newest root damaged at any moment of a checkpoint and its
/// migration (with journal records before, during and after its commit):
/// recovery falls back to the other root and gives exactly the state that
/// root names — its checkpoint, whole, plus the journal records written
/// before a later checkpoint committed — never a mix with a partly
/// migrated checkpoint. Damage to the other root changes nothing.
#[test]
fn a_damaged_newest_root_at_any_step_gives_exactly_the_other_roots_state() {
    for at in 0..90 {
        let mut k = two_checkpoints();
        for i in 0..14 {
            k.set_page(i * 3, 2000 + i as u32, i % 4 == 0);
            k.set_node(i, 2000 + i as u32, i % 3 == 0);
        }
        k.checkpoint();
        for s in 0..at {
            if s % 9 == 4 {
                k.journal(&[(s as u8, 3000 + s as u32)], true);
            }
            k.step();
        }
        k.journal(&[(41, 4000)], true);
        k.flush();
        let disk = k.disk.durable.clone();
        let roots = Roots::read(&disk[0], &disk[1], TOTAL);
        let (nb, newest) = roots.newest.unwrap();
        let (ob, other) = roots.other.unwrap();
        let (_, ckpt, _, want) = k.expected_from(other, true);
        let mut d = disk.clone();
        d[nb as usize][40] ^= 0x10;
        let rec = recover(&d).unwrap_or_else(|e| panic!("step {at}: {e:?}"));
        assert_eq!(rec.root, other, "step {at}");
        assert_eq!(
            rec.ckpt, ckpt,
            "step {at}: the other root's checkpoint, whole"
        );
        assert_eq!(rec.state, want, "step {at}");
        let mut d = disk;
        d[ob as usize][40] ^= 0x10;
        let rec = recover(&d).unwrap();
        assert_eq!(rec.root, newest);
        assert_eq!(rec.state, k.expected_from(newest, false).3, "step {at}");
    }
}

/// A full scrub pass over a quiet disk, as the kernel runs it: judges
/// every node and version block pair and every written page home, repairs
/// what it can. Returns (damaged found, repaired, page homes found bad).
fn scrub_pass(disk: &mut [Blk]) -> (u64, u64, Vec<u64>) {
    use crate::scrub::{self, Cursor, Step, VersionVerdict};
    let g = Geometry::for_disk(disk.len() as u64).unwrap();
    let mut c = Cursor::new();
    let (mut found, mut repaired, mut bad_pages) = (0, 0, Vec::new());
    let mut entries = [0u8; BLOCK];
    while c.passes() == 0 {
        let step = c.step();
        let (a, b) = scrub::places(&g, step).unwrap();
        match step {
            Step::Nodes(k) => {
                let v = scrub::judge_nodes(&g, k, &disk[a as usize], &disk[b as usize]);
                found += (v.bad0 != 0) as u64 + (v.bad1 != 0) as u64 + (v.lost != 0) as u64;
                for (bad, into, from) in [(v.bad0, a, b), (v.bad1, b, a)] {
                    if bad != 0 {
                        let src = disk[from as usize];
                        scrub::repair_nodes(&mut disk[into as usize], &src, bad);
                        repaired += 1;
                    }
                }
            }
            Step::Versions(_) => {
                match scrub::judge_versions(&disk[a as usize], &disk[b as usize]) {
                    VersionVerdict::Clean => {}
                    VersionVerdict::Repair { bad } => {
                        let (into, from) = if bad == 0 { (a, b) } else { (b, a) };
                        disk[into as usize] = disk[from as usize];
                        found += 1;
                        repaired += 1;
                    }
                    VersionVerdict::Lost => found += 1,
                }
                entries = match versions::pick(&disk[a as usize], &disk[b as usize]) {
                    Ok(Some(0)) => disk[a as usize],
                    Ok(Some(_)) => disk[b as usize],
                    _ => [0; BLOCK],
                };
            }
            Step::Page { index, oid, .. } => {
                let e = versions::entry_at(&entries, index);
                if e.judge(crc32c(&disk[a as usize])) == Home::Damaged {
                    found += 1;
                    bad_pages.push(oid);
                }
            }
        }
        c.advance(&g, |i| scrub::written(&entries, i));
    }
    (found, repaired, bad_pages)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Damage to one copy of node and version blocks, found and repaired
    /// by a scrub pass: then the other copy can be lost too and recovery
    /// still gives the same state. Damaged page homes are found (they have
    /// one copy: reported, for the reads to refuse).
    #[test]
    fn the_scrub_repairs_one_copy_from_the_other(
        flips in proptest::collection::vec((any::<bool>(), 0u64..4, 0usize..BLOCK, 1u8..=255), 1..6),
        page_flip in proptest::option::of((0u64..48, 0usize..BLOCK)),
    ) {
        let k = two_checkpoints();
        let want = state_of(&k);
        let g = k.g;
        let mut disk = k.disk.durable.clone();
        let mut copies = Vec::new();
        for &(node, k, at, x) in &flips {
            // One copy (which: by k's parity) of a node block or of version block 0.
            let copy = (k % 2) as u8;
            let b = if node {
                g.node_home((k / 2) * NODES_PER_BLOCK, copy).unwrap().block
            } else {
                g.version_block(0, copy).unwrap()
            };
            if copies.iter().any(|&(bb, c)| bb == b && c != copy) {
                continue; // keep one copy of each block whole
            }
            let other = if node {
                g.node_home((k / 2) * NODES_PER_BLOCK, 1 - copy).unwrap().block
            } else {
                g.version_block(0, 1 - copy).unwrap()
            };
            if copies.iter().any(|&(bb, _)| bb == other) {
                continue;
            }
            disk[b as usize][at] ^= x;
            copies.push((b, copy));
        }
        if let Some((oid, at)) = page_flip {
            disk[g.page_home(oid).unwrap() as usize][at] ^= 1;
        }
        let (found, repaired, bad) = scrub_pass(&mut disk);
        prop_assert!(found >= repaired);
        prop_assert_eq!(bad, page_flip.map(|(o, _)| o).into_iter().collect::<Vec<_>>());
        // A second pass finds only the page homes (nothing repairs them).
        let (again, fixed, _) = scrub_pass(&mut disk);
        prop_assert_eq!((again, fixed), (page_flip.is_some() as u64, 0));
        if page_flip.is_none() {
            // Now lose the other copy of every damaged block: still whole.
            for &(b, copy) in &copies {
                let twin = if b < g.version_area {
                    let k = (b - g.node_area) % g.node_blocks;
                    g.node_home(k * NODES_PER_BLOCK, 1 - copy).unwrap().block
                } else {
                    g.version_block(0, 1 - copy).unwrap()
                };
                disk[twin as usize].fill(0x77);
            }
            prop_assert_eq!(recover(&disk).unwrap().state, want);
        } else {
            let (oid, _) = page_flip.unwrap();
            let e = recover(&disk).unwrap_err();
            prop_assert_eq!(e, RecoveryError::HomePage(oid));
        }
    }
}
