//! The single-level store (the format is crates/store, the
//! design docs/STORE.md): where objects come from when they are not in the
//! object cache, and how the checkpoint puts them on disk.
//!
//! * `Store` is the object cache's `Backing`: a node or page not in the
//!   cache is read from the disk — from the last committed checkpoint's log
//!   while it has not migrated home, else from its home — or is a zero
//!   object when the system runs without a disk.
//! * `snapshot` is the stop-the-world phase of a checkpoint; `writer` writes
//!   it, commits the root and migrates it home while domains run.
//! * `boot` opens the disk at boot: a blank disk becomes a new store (the
//!   big bang, then checkpoint 1); otherwise the newest valid root is
//!   restarted from.
//! * `memory` keeps the cache from running dry.
//! * `scrub` checks both copies of the homes in the background and
//!   repairs a damaged copy from the good one.
//! * `idle` is the checkpoint key's `WAIT_IDLE`; `bench` the benchmarks'
//!   measurements (restart time, raw writes), only in the test kernel (the
//!   `testing` feature; a user's kernel has `nobench.rs` in its place).

// The benchmark measurements are the test kernel's only (the `testing`
// feature); a user's kernel gets the same names doing nothing.
#[cfg_attr(not(feature = "testing"), path = "nobench.rs")]
pub mod bench;
pub mod boot;
pub mod idle;
pub mod install;
pub mod journal;
pub mod memory;
pub mod scrub;
pub mod snapshot;
pub mod writer;

use crate::arch::phys;
use crate::arch::phys::FrameNumber;
use crate::arch::virtio_blk::Disk;
use crate::kprintln;
use crate::obj::{Backing, Miss, NodeEntry};
use stet_keys::{Key, Space};
use stet_store::ckpt::{DirSlot, Directory};
use stet_store::geometry::Geometry;
use stet_store::node::{self, Record};
use stet_store::root::Root;
use stet_store::versions::{self, Entry, Home, Kind};
use writer::Writer;

/// Checkpoint statistics (the checkpoint key's `STATS`).
#[derive(Clone, Copy, Debug, Default)]
pub struct CkptStats {
    /// Last committed checkpoint.
    pub generation: u64,
    /// Nodes it wrote.
    pub nodes: u64,
    /// Pages it wrote.
    pub pages: u64,
    /// Its stop-the-world pause (TSC ticks).
    pub pause: u64,
    /// TSC ticks from the pause to the commit.
    pub commit: u64,
    /// TSC ticks the kernel spent writing it (excluding waiting for the
    /// disk).
    pub work: u64,
}

/// The store's state.
pub struct Store {
    /// The disk (none: a volatile system; nothing survives a reboot).
    pub disk: Option<Disk>,
    /// Its layout (meaningful with a disk).
    pub geo: Geometry,
    /// The last root written (meaningful with a disk).
    pub root: Root,
    /// The directory of the committed checkpoint while it has not migrated
    /// home (objects are read from the log until then).
    pub dir: Option<Directory<'static>>,
    /// Storage for `dir` and the writer's directory, sized at boot.
    pub dir_slots: Option<&'static mut [DirSlot]>,
    /// Two frames for synchronous reads (faulting objects in; the second
    /// for the other copy of a node or version block), once the disk is
    /// open.
    pub scratch: Option<(FrameNumber, FrameNumber)>,
    /// A bitmap (one frame: version blocks 0..32768) of the version blocks
    /// whose two copies were read blank and not written since: a page of
    /// one is never written, known without reading copy 1 again (every
    /// new page of a fresh block would cost a read otherwise).
    pub blank_versions: Option<FrameNumber>,
    /// The checkpoint writer.
    pub w: Writer,
    /// Statistics of the last committed checkpoint.
    pub stats: CkptStats,
    /// Checkpoint period (ms; 0: only on demand).
    pub period_ms: u64,
    /// When the next periodic checkpoint is due (ns of system time).
    pub due_ns: u64,
    /// Restarts of this store (0 on its first boot).
    pub restarts: u64,
    /// The generation the system last restarted from (0: none).
    pub restarted_from: u64,
    /// Print checkpoint phases (`ckpt_trace`).
    pub trace: bool,
    /// A checkpoint was asked for while the writer was busy: start one as
    /// soon as it is idle (also set when only dirty objects are left in
    /// the cache and a checkpoint must make them evictable).
    pub requested: bool,
    /// The last committed checkpoint's generation.
    pub committed: u64,
    /// The names changed since they were last written.
    pub names_dirty: bool,
    /// The root being written (it becomes `root` when the write completes).
    pub pending_root: Option<Root>,
    /// The journal.
    pub j: journal::JournalState,
    /// Below this many free frames a checkpoint starts early.
    pub pressure_mark: usize,
    /// Checkpoints whose commit root this boot has written.
    pub commits_this_boot: u32,
    /// Disk request slots promised to requests not yet submitted (writes
    /// that follow reads, the journal's flush).
    pub reserved: usize,
    /// Checkpoints migrated this boot (the scrub notices homes that
    /// changed under it).
    pub migrations: u64,
    /// The background check of the homes.
    pub scrub: scrub::Scrub,
    /// The raw-write benchmark (`bench::raw_write`; the test kernel's only).
    #[cfg(feature = "testing")]
    pub bench: bench::Raw,
}

impl Store {
    /// A store with no disk (yet).
    pub fn volatile(period_ms: u64, trace: bool) -> Store {
        Store {
            disk: None,
            geo: Geometry::for_disk(1 << 20).unwrap_or_else(|_| unreachable!()),
            root: Root::fresh(Geometry::for_disk(1 << 20).unwrap_or_else(|_| unreachable!())),
            dir: None,
            dir_slots: None,
            scratch: None,
            blank_versions: None,
            w: Writer::new(),
            stats: CkptStats::default(),
            period_ms,
            due_ns: period_ms * 1_000_000,
            restarts: 0,
            restarted_from: 0,
            trace,
            requested: false,
            committed: 0,
            names_dirty: true,
            pending_root: None,
            j: journal::JournalState::new(),
            reserved: 0,
            migrations: 0,
            scrub: scrub::Scrub::new(),
            commits_this_boot: 0,
            pressure_mark: 0,
            #[cfg(feature = "testing")]
            bench: bench::Raw::new(),
        }
    }

    /// Whether objects survive a reboot.
    pub fn persistent(&self) -> bool {
        self.disk.is_some()
    }

    /// A lower bound of the next snapshot's generation: any checkpoint
    /// with at least this number was snapshotted from now on (exactly the
    /// next one's number when the writer is idle).
    pub fn next_generation(&self) -> u64 {
        if self.w.is_idle() {
            self.root.next_ckpt_generation()
        } else {
            self.w.generation + 1
        }
    }

    /// Whether checkpoint `g` is being written (snapshot taken, not yet
    /// committed).
    pub fn in_flight(&self, g: u64) -> bool {
        use writer::Phase::*;
        matches!(self.w.phase, Write | FlushLog | Commit | FlushCommit) && self.w.generation == g
    }

    /// Reads `block` into the scratch frame (synchronously).
    fn read(&mut self, block: u64, f: FrameNumber) -> Result<(), Miss> {
        let Some(d) = self.disk.as_mut() else {
            return Err(Miss::Damaged);
        };
        d.read_sync(block, f).map_err(|_| {
            kprintln!("store: I/O error reading block {block}");
            Miss::Damaged
        })
    }

    /// Where the committed, unmigrated checkpoint holds `oid`, if it does.
    fn in_log(&self, space: Space, oid: u64) -> Option<stet_store::ckpt::Found> {
        self.dir.as_ref()?.lookup(space, oid)
    }
}

/// Starts a checkpoint now if the writer is idle, else as soon as it is.
pub fn request_checkpoint(k: &mut crate::kernel::Kernel) {
    if !k.store.persistent() {
        return;
    }
    match snapshot::take(k) {
        Ok(_) => k.store.requested = false,
        Err(_) => k.store.requested = true,
    }
}

/// A checkpoint committed: everyone waiting for one asks again.
pub fn checkpoint_committed(k: &mut crate::kernel::Kernel) {
    k.store.committed = k.store.w.generation;
    wake(k, crate::kobj::checkpoint::WAKE_ON_COMMIT);
}

/// Both root blocks name the last commit: journal records before its
/// snapshot are free, and whoever waits for journal space asks again.
pub fn journal_freed(k: &mut crate::kernel::Kernel) {
    wake(k, crate::kobj::checkpoint::WAKE_ON_COMMIT);
}

/// A checkpoint reached its homes: the writer is idle; start the next one
/// if it was asked for meanwhile.
pub fn checkpoint_migrated(k: &mut crate::kernel::Kernel) {
    if k.store.requested {
        request_checkpoint(k);
    }
    idle::wake(k);
}

/// A journal record became durable (or failed): its invoker, and everyone
/// waiting for a turn, asks again.
pub fn wake_journal(k: &mut crate::kernel::Kernel) {
    wake(k, crate::kobj::journal::WAKE_ON_JOURNAL);
}

/// Readies every domain parked with `wake_at == what`.
fn wake(k: &mut crate::kernel::Kernel, what: u64) {
    let mut l = k.queues.sleepers();
    while let Some(ci) = crate::domain::unlink(l) {
        l = k.ctxs[ci].next();
        if k.ctxs[ci].wake_at == what {
            crate::domain::dequeue(k, ci);
            crate::domain::ready_push(k, ci);
        }
    }
}

/// The timer ticked: periodic checkpoints, and the writer's progress.
pub fn tick(k: &mut crate::kernel::Kernel) {
    if !k.store.persistent() {
        return;
    }
    let now = k.now_ns();
    if k.store.period_ms > 0 && now >= k.store.due_ns {
        k.store.due_ns = now + k.store.period_ms * 1_000_000;
        // Nothing changed, nothing to write (the kernel's state changes
        // only with the nodes of the domains that run).
        if k.objs.dirty_node_count() != 0 || k.objs.dirty_page_count() != 0 {
            request_checkpoint(k);
        }
    } else if k.store.requested && k.store.w.is_idle() {
        request_checkpoint(k);
    }
    writer::pump(k);
    scrub::tick(k);
}

/// The disk interrupted (or the idle loop woke): collect completions.
pub fn on_disk(k: &mut crate::kernel::Kernel) {
    writer::pump(k);
}

/// Strips cache hints from keys going to disk.
pub fn image_keys(keys: &[Key; 16]) -> [Key; 16] {
    core::array::from_fn(|i| keys[i].canonical())
}

impl Backing for Store {
    fn read_node(&mut self, oid: u64, e: &mut NodeEntry) -> Result<(), Miss> {
        if !self.persistent() {
            return Ok(());
        }
        if oid >= self.geo.nodes {
            return Err(Miss::Void);
        }
        let Some((scratch, _)) = self.scratch else {
            return Err(Miss::Damaged);
        };
        let rec = if let Some(f) = self.in_log(Space::Node, oid) {
            self.read(self.root.ckpt_start + f.block, scratch)?;
            let mut b = [0u8; stet_store::geometry::NODE_RECORD];
            phys::read_frame(scratch, f.offset, &mut b);
            node::decode(&b, oid)
        } else {
            let mut copies = [Record::Damaged, Record::Damaged];
            for (c, rec) in copies.iter_mut().enumerate() {
                let Some(p) = self.geo.node_home(oid, c as u8) else {
                    return Err(Miss::Void);
                };
                self.read(p.block, scratch)?;
                let mut b = [0u8; stet_store::geometry::NODE_RECORD];
                phys::read_frame(scratch, p.offset, &mut b);
                *rec = node::decode(&b, oid);
                if matches!(rec, Record::Valid(_)) {
                    break;
                }
            }
            let [a, b] = copies;
            if matches!(a, Record::Damaged) && !matches!(b, Record::Damaged) {
                kprintln!("store: node {oid}: copy 0 is damaged; using copy 1");
            }
            node::pick(a, b)
        };
        match rec {
            Record::Blank => Ok(()),
            Record::Valid(img) => {
                e.keys = img.keys;
                e.version = img.version;
                e.calls = img.calls;
                Ok(())
            }
            Record::Damaged => {
                kprintln!("store: node {oid} is damaged (no valid copy); not used");
                Err(Miss::Damaged)
            }
        }
    }

    fn read_page(&mut self, oid: u64, f: FrameNumber) -> Result<u32, Miss> {
        if !self.persistent() {
            phys::zero_frame(f);
            return Ok(0);
        }
        if oid >= self.geo.pages {
            return Err(Miss::Void);
        }
        if let Some(found) = self.in_log(Space::Page, oid) {
            self.read(self.root.ckpt_start + found.block, f)?;
            if phys::frame_crc32c(f) != found.crc {
                kprintln!(
                    "store: page {oid} in checkpoint {} fails its checksum; not used",
                    self.root.ckpt_generation
                );
                return Err(Miss::Damaged);
            }
            return Ok(found.version);
        }
        let home = self.geo.page_home(oid).ok_or(Miss::Void)?;
        let entry = self.page_entry(oid)?;
        if entry.never_written() {
            // A zero page: whatever its home block holds is not a page's.
            phys::zero_frame(f);
            return Ok(0);
        }
        self.read(home, f)?;
        // Every read from home is checked: a damaged home block is
        // reported and refused, like a damaged page in the log.
        match entry.judge(phys::frame_crc32c_called(f)) {
            Home::Use => Ok(entry.version),
            Home::Zero => {
                phys::zero_frame(f);
                Ok(entry.version)
            }
            Home::Damaged => {
                kprintln!("store: page {oid} fails its checksum at home; not used");
                Err(Miss::Damaged)
            }
        }
    }
}

/// A backing for a page about to be overwritten whole (a journal record
/// applied at restart): it is not read from disk, so a damaged older copy
/// does not stand in the way of the newer one.
pub struct Overwritten;

impl Backing for Overwritten {
    fn read_node(&mut self, _oid: u64, _e: &mut NodeEntry) -> Result<(), Miss> {
        Err(Miss::Damaged)
    }

    fn read_page(&mut self, _oid: u64, f: FrameNumber) -> Result<u32, Miss> {
        phys::zero_frame(f);
        Ok(0)
    }
}

impl Store {
    /// Whether both copies of version block `k` were read blank and have
    /// not been written since (`blank_versions`).
    fn known_blank(&self, k: u64) -> bool {
        let Some(f) = self.blank_versions else {
            return false;
        };
        k < 8 * 4096 && phys::with_frame(f, |b| b[(k / 8) as usize] & (1 << (k % 8)) != 0)
    }

    /// Records that version block `k` is blank (both copies), or that it is
    /// being written (a migration, the scrub, the install): then it is
    /// read again.
    pub fn set_blank(&mut self, k: u64, blank: bool) {
        let Some(f) = self.blank_versions.filter(|_| k < 8 * 4096) else {
            return;
        };
        phys::with_frame_mut(f, |b| {
            let (at, bit) = ((k / 8) as usize, 1u8 << (k % 8));
            if blank {
                b[at] |= bit;
            } else {
                b[at] &= !bit;
            }
        });
    }

    /// Page `oid`'s entry at home: its version and its home's checksum.
    fn page_entry(&mut self, oid: u64) -> Result<Entry, Miss> {
        let (k, idx) = versions::version_block_of(oid);
        let Some((s0, s1)) = self.scratch else {
            return Err(Miss::Damaged);
        };
        let b0 = self.geo.version_block(k, 0).ok_or(Miss::Void)?;
        let b1 = self.geo.version_block(k, 1).ok_or(Miss::Void)?;
        self.read(b0, s0)?;
        match phys::with_frame(s0, |b| versions::classify(&b[..])) {
            Kind::Valid => return Ok(phys::with_frame(s0, |b| versions::entry_at(&b[..], idx))),
            Kind::Blank if self.known_blank(k) => return Ok(Entry::NEVER),
            _ => {}
        }
        self.read(b1, s1)?;
        let pick = phys::with_frame(s0, |a| phys::with_frame(s1, |b| versions::pick(a, b)));
        if pick == Ok(None) && phys::with_frame(s0, |a| phys::with_frame(s1, |b| a == b)) {
            // Both blank (a blank copy 0 is all that equals a blank copy 1).
            self.set_blank(k, true);
        }
        match pick {
            Ok(Some(_)) => {
                kprintln!("store: version block {k}: copy 0 is damaged; using copy 1");
                Ok(phys::with_frame(s1, |b| versions::entry_at(&b[..], idx)))
            }
            // Never migrated (a torn first write of copy 0): never home.
            Ok(None) => Ok(Entry::NEVER),
            Err(_) => {
                kprintln!(
                    "store: version block {k} is damaged (no valid copy); page {oid} not used"
                );
                Err(Miss::Damaged)
            }
        }
    }
}
