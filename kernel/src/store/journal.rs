//! The journal: one page committed to disk synchronously, before the next
//! checkpoint (KeyKOS §6). A record is a header block and the page's data,
//! written into the journal ring and followed by a FLUSH; the invoker is
//! answered when the flush completes. Records carry the generation of the
//! last snapshot taken before them, so a restart applies exactly those
//! newer than the checkpoint it restarts from (`restore`). One record is
//! in flight at a time; others wait their turn (parked, re-executing).
//!
//! The commit of checkpoint G moves the journal's head to the first record
//! written after G's snapshot: older records are in the checkpoint.

use crate::arch::phys::FrameNumber;
use crate::arch::virtio_blk::{Op, NO_FRAMES};
use crate::arch::{cpu, phys};
use crate::kernel::Kernel;
use crate::kprintln;
use stet_store::journal::{self as fmt, Header, Journal, Scan};

/// Disk tags of journal requests (the writer's are below `JOBS`).
pub const TAG_WRITE: u64 = 1 << 32;
/// The flush that follows a record.
pub const TAG_FLUSH: u64 = (1 << 32) + 1;

/// Where the record in flight is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing in flight.
    Idle,
    /// Header and data being written.
    Writing,
    /// Flushing them.
    Flushing,
}

/// The journal's state in the kernel.
pub struct JournalState {
    /// Space bookkeeping (absent on a volatile system).
    pub ring: Option<Journal>,
    /// The record in flight.
    pub step: Step,
    /// Its sequence number.
    pub seq: u64,
    /// Frames holding its header and data.
    pub frames: [Option<FrameNumber>; 2],
    /// Every record up to this sequence number (exclusive) is durable.
    pub durable: u64,
    /// The journal's tail when the last snapshot was taken: where the
    /// records that must survive that checkpoint's commit begin.
    pub at_snapshot: (u64, u64),
    /// TSC ticks the kernel spent on the last record (not waiting): the
    /// order that started it (set by `kobj::journal`) and the handling of
    /// its completions.
    pub work: u64,
}

impl JournalState {
    /// No journal (yet).
    pub const fn new() -> JournalState {
        JournalState {
            ring: None,
            step: Step::Idle,
            seq: 0,
            frames: [None; 2],
            durable: 0,
            at_snapshot: (0, 0),
            work: 0,
        }
    }
}

/// Why a record could not be started now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Busy {
    /// Another record is in flight.
    InFlight,
    /// The ring is full until the next checkpoint commits.
    Full,
    /// No frames or disk slots right now.
    NoRoom,
}

/// Starts journaling page slot `page`. Returns its sequence number.
pub fn start(k: &mut Kernel, page: u32) -> Result<u64, Busy> {
    let t = cpu::rdtsc();
    if k.store.j.step != Step::Idle {
        return Err(Busy::InFlight);
    }
    // Its frames are the writer's own (so a journal commit never waits
    // for memory the domains hold); they come back when the write is done.
    if k.store.disk.as_ref().map_or(0, |d| d.free_slots()) < 2 + k.store.reserved
        || super::writer::spare_frames(k) < 2
    {
        return Err(Busy::NoRoom);
    }
    let e = k.objs.page_entry(page);
    let (Some(src), oid, version) = (e.frame, e.oid, e.version) else {
        return Err(Busy::NoRoom);
    };
    let Some(ring) = k.store.j.ring.as_mut() else {
        return Err(Busy::NoRoom);
    };
    let (pos, seq) = ring.append().map_err(|_| Busy::Full)?;
    let (Some(hf), Some(df)) = (super::writer::take(k), super::writer::take(k)) else {
        // `spare_frames` said two were free.
        crate::fatal(format_args!("journal: the writer's frames ran out"));
    };
    phys::copy_frame(src, df);
    let h = Header {
        seq,
        base_generation: k.store.next_generation() - 1,
        boot: k.store.restarts,
        committed: k.store.committed,
        oid,
        version,
        data_crc: phys::frame_crc32c(df),
    };
    phys::with_frame_mut(hf, |b| {
        b.fill(0);
        fmt::encode_header_with(&h, b, crate::arch::crc32c::crc32c_called);
    });
    let ok = k
        .store
        .disk
        .as_mut()
        .is_some_and(|d| d.submit(Op::Write, pos, &[hf, df], TAG_WRITE).is_ok());
    if !ok {
        crate::fatal(format_args!("journal: the disk refused a record"));
    }
    if let Some(d) = k.store.disk.as_mut() {
        d.kick();
    }
    // The flush that follows is promised its slot.
    k.store.reserved += 1;
    let j = &mut k.store.j;
    j.step = Step::Writing;
    j.seq = seq;
    j.frames = [Some(hf), Some(df)];
    j.work = cpu::rdtsc() - t;
    Ok(seq)
}

/// A journal request completed.
pub fn completed(k: &mut Kernel, tag: u64, ok: bool) {
    let t = cpu::rdtsc();
    if !ok {
        if k.store.j.step == Step::Writing {
            k.store.reserved -= 1;
        }
        kprintln!("journal: record {} failed to write", k.store.j.seq);
        k.store.j.step = Step::Idle;
        free_frames(k);
        super::wake_journal(k);
        return;
    }
    match (tag, k.store.j.step) {
        (TAG_WRITE, Step::Writing) => {
            free_frames(k);
            k.store.reserved -= 1;
            let submitted = k
                .store
                .disk
                .as_mut()
                .is_some_and(|d| d.submit(Op::Flush, 0, NO_FRAMES, TAG_FLUSH).is_ok());
            if submitted {
                if let Some(d) = k.store.disk.as_mut() {
                    d.kick();
                }
                k.store.j.step = Step::Flushing;
            } else {
                crate::fatal(format_args!("journal: the disk refused a flush"));
            }
        }
        (TAG_FLUSH, Step::Flushing) => {
            k.store.j.durable = k.store.j.seq + 1;
            k.store.j.step = Step::Idle;
            super::wake_journal(k);
        }
        _ => {}
    }
    k.store.j.work += cpu::rdtsc() - t;
}

fn free_frames(k: &mut Kernel) {
    for f in core::mem::take(&mut k.store.j.frames).into_iter().flatten() {
        super::writer::give(k, f);
    }
}

/// A snapshot is being taken: remember where the records it does not
/// contain begin.
pub fn snapshot_taken(k: &mut Kernel) {
    if let Some(r) = k.store.j.ring.as_ref() {
        k.store.j.at_snapshot = r.tail();
    }
}

/// Checkpoint committed, and both root blocks name it: records before its
/// snapshot are no longer needed (no root on disk starts before them).
/// Returns the journal head and sequence number for the root.
pub fn committed(k: &mut Kernel) -> (u64, u64) {
    let (head, seq) = k.store.j.at_snapshot;
    if let Some(r) = k.store.j.ring.as_mut() {
        if r.checkpoint_committed(head, seq).is_err() {
            kprintln!("journal: head {head} seq {seq} not in the ring; kept");
            return r.head();
        }
    }
    (head, seq)
}

/// At boot: the journal of a new store.
pub fn fresh(k: &mut Kernel) {
    let g = k.store.geo;
    let ring = g.journal_ring();
    k.store.j.ring = Some(Journal::new(ring, ring.start, 0));
    k.store.j.at_snapshot = (ring.start, 0);
}

/// At restart: applies the records newer than the checkpoint, in order,
/// to the pages they name (which become dirty: the next checkpoint holds
/// them). Returns how many were applied.
pub fn restore(k: &mut Kernel) -> u64 {
    let r = k.store.root;
    let ring = k.store.geo.journal_ring();
    let mut scan = Scan::new(ring, r.journal_head, r.journal_seq, r.ckpt_generation);
    let mut applied = 0;
    let mut data = [0u8; 4096];
    loop {
        let Some((s0, _)) = k.store.scratch else {
            kprintln!("journal: no frame to read the journal into; records not applied");
            break;
        };
        let disk = &mut k.store.disk;
        let mut read = |block: u64, out: &mut [u8; 4096]| -> Result<(), ()> {
            let d = disk.as_mut().ok_or(())?;
            d.read_sync(block, s0).map_err(|_| ())?;
            phys::read_frame(s0, 0, out);
            Ok(())
        };
        let h = match scan.next(&mut read, &mut data) {
            Ok(Some(h)) => h,
            Ok(None) => break,
            Err(()) => {
                kprintln!("journal: cannot read the journal; records after {applied} not applied");
                break;
            }
        };
        if h.oid >= k.store.geo.pages {
            kprintln!(
                "journal: record {} names page {}, beyond the disk; skipped",
                h.seq,
                h.oid
            );
            continue;
        }
        // The record holds the whole page: its older copy is not read (a
        // damaged one must not keep the newer from being applied).
        let cached = k.objs.page(h.oid, &mut k.pool, &mut super::Overwritten);
        let Ok(slot) = cached else {
            kprintln!(
                "journal: page {} of record {} has no room in the cache; skipped",
                h.oid,
                h.seq
            );
            continue;
        };
        let Ok(f) = k.page_restore(slot, h.version) else {
            kprintln!("journal: no memory to apply record {}", h.seq);
            break;
        };
        phys::write_frame(f, 0, &data);
        applied += 1;
    }
    let end = scan.end();
    // A record that was written but does not read back whole ends the
    // journal; the restart says so rather than use it, or hide it.
    match end.damaged {
        Some(stet_store::journal::Damage::Data) => kprintln!(
            "store: journal record {} fails its data checksum; it and any after it are not applied (damage, or a write the power failure cut short)",
            end.seq
        ),
        Some(stet_store::journal::Damage::Header { next_seq }) => kprintln!(
            "store: journal record {} fails its header checksum, and record {next_seq} follows it; neither is applied, nor any after them (damage, or writes the power failure cut short)",
            end.seq
        ),
        None => {}
    }
    k.store.j.ring = Some(Journal::recovered(
        ring,
        r.journal_head,
        r.journal_seq,
        end.records,
    ));
    k.store.j.at_snapshot = (r.journal_head, r.journal_seq);
    k.store.j.durable = end.seq;
    applied
}

/// Sequence numbers below this are durable.
pub fn durable(k: &Kernel) -> u64 {
    k.store.j.durable
}
