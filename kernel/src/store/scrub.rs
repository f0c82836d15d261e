//! The scrub: reads both copies of every node block and version block, and
//! every page home that was written, a step at a time in the background;
//! reports damage and repairs a damaged copy from the good one
//! (`stet_store::scrub` decides what a pair of copies says and where the
//! pass goes next; this is the I/O).
//!
//! Bounded: at most one step in flight (two reads, then at most two
//! writes), one step started per `scrub_ms` (default 100 ms), and only while
//! the checkpoint writer is idle and the journal has no record in flight,
//! leaving disk slots to the others. The homes are then stable — the copies
//! of every record must be equal — and a migration that starts meanwhile
//! waits for the step in flight to end (`writer::issue`). A page home
//! whose checksum fails has no second copy: it is rewritten from memory
//! when the object cache holds the page clean and whole, else reported
//! (its reads are refused; a dirty cached copy goes home with the next
//! checkpoint).

use crate::arch::phys::{self, FrameNumber};
use crate::arch::virtio_blk::Op;
use crate::kernel::Kernel;
use crate::kprintln;
use stet_store::scrub::{self as plan, Cursor, Step, VersionVerdict};
use stet_store::versions::{self, Home, Kind};

/// Disk tags of the scrub's requests (between the journal's and the raw
/// write's).
pub const TAG: u64 = (1 << 32) + 16;
const TAGS: u64 = 4;

/// The scrub's counters (the checkpoint key's `SCRUB`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Blocks read and checked.
    pub blocks: u64,
    /// Damage found: block copies with damaged records, version block
    /// copies, page homes.
    pub damaged: u64,
    /// Copies rewritten from a good one (or from memory).
    pub repaired: u64,
    /// Passes over the whole disk completed.
    pub passes: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Idle,
    Reading,
    Writing,
    /// A request failed: reported once, no more steps.
    Stopped,
}

/// The scrub's state.
pub struct Scrub {
    cursor: Cursor,
    /// Frame 0: copy 0 (or a page's home); 1: copy 1; 2: the valid copy of
    /// the version block whose pages are being checked.
    frames: Option<[FrameNumber; 3]>,
    state: State,
    step: Step,
    pending: u32,
    /// `Store::migrations` when frame 2 was read.
    epoch: u64,
    period_ns: u64,
    due_ns: u64,
    /// Damage found in this pass (the pass's end is reported if any).
    pass_damage: u64,
    /// The counters.
    pub stats: Stats,
}

impl Scrub {
    /// A scrub that does nothing until `start` gives it frames.
    pub const fn new() -> Scrub {
        Scrub {
            cursor: Cursor::new(),
            frames: None,
            state: State::Idle,
            step: Step::Nodes(0),
            pending: 0,
            epoch: 0,
            period_ns: 0,
            due_ns: 0,
            pass_damage: 0,
            stats: Stats {
                blocks: 0,
                damaged: 0,
                repaired: 0,
                passes: 0,
            },
        }
    }
}

impl Default for Scrub {
    fn default() -> Self {
        Scrub::new()
    }
}

/// At boot, with a disk: the scrub's frames (from the pool, before it is
/// sealed for the kernel) and its rate. False if there are no frames.
pub fn start(k: &mut Kernel, period_ms: u64) -> bool {
    if period_ms == 0 {
        return true;
    }
    let (Some(a), Some(b), Some(c)) = (k.pool.alloc(), k.pool.alloc(), k.pool.alloc()) else {
        return false;
    };
    phys::zero_frame(c);
    let s = &mut k.store.scrub;
    s.frames = Some([a, b, c]);
    s.period_ns = period_ms * 1_000_000;
    true
}

/// Whether a step is in flight (a migration waits for it).
pub fn busy(k: &Kernel) -> bool {
    matches!(k.store.scrub.state, State::Reading | State::Writing)
}

/// Whether `tag` is one of the scrub's requests.
pub fn owns(tag: u64) -> bool {
    (TAG..TAG + TAGS).contains(&tag)
}

/// The timer ticked: start the next step if it is due and the disk is the
/// scrub's to use.
pub fn tick(k: &mut Kernel) {
    let s = &k.store.scrub;
    let Some([f0, f1, _]) = s.frames else {
        return;
    };
    if s.state != State::Idle
        || !k.store.w.is_idle()
        || k.store.j.step != super::journal::Step::Idle
        || super::bench::busy(k)
    {
        return;
    }
    let now = k.now_ns();
    if now < s.due_ns {
        return;
    }
    k.store.scrub.due_ns = now + k.store.scrub.period_ns;
    let step = k.store.scrub.cursor.step();
    if matches!(step, Step::Page { .. }) && k.store.scrub.epoch != k.store.migrations {
        // A migration rewrote homes since the entries were read.
        k.store.scrub.cursor.restart_block();
        return;
    }
    let Some((a, b)) = plan::places(&k.store.geo, step) else {
        return;
    };
    let reads = plan::blocks_read(step) as usize;
    // Leave slots to the journal and the writer (their promised ones too).
    let free = k.store.disk.as_ref().map_or(0, |d| d.free_slots());
    if free < k.store.reserved + reads + 4 {
        return;
    }
    let blocks = [(a, f0), (b, f1)];
    for (i, &(blk, f)) in blocks.iter().take(reads).enumerate() {
        let ok = k
            .store
            .disk
            .as_mut()
            .is_some_and(|d| d.submit(Op::Read, blk, &[f], TAG + i as u64).is_ok());
        if !ok {
            // Slots were checked: a refusal is a driver's error.
            stop(k, "the disk refused a read");
            return;
        }
        k.store.scrub.pending += 1;
    }
    k.store.scrub.state = State::Reading;
    k.store.scrub.step = step;
    if let Some(d) = k.store.disk.as_mut() {
        d.kick();
    }
}

fn stop(k: &mut Kernel, why: &str) {
    kprintln!("store: scrub: {why}; the scrub stops");
    k.store.scrub.state = State::Stopped;
}

/// One of the scrub's requests completed.
pub fn completed(k: &mut Kernel, ok: bool) {
    let s = &mut k.store.scrub;
    s.pending = s.pending.saturating_sub(1);
    if !ok {
        stop(k, "a disk request failed");
        return;
    }
    if s.pending > 0 {
        return;
    }
    match s.state {
        State::Reading => judge(k),
        State::Writing => {
            k.store.scrub.state = State::Idle;
            advance(k);
        }
        State::Idle | State::Stopped => {}
    }
}

/// Judges what the step read; repairs what it can.
fn judge(k: &mut Kernel) {
    let Some([f0, f1, fe]) = k.store.scrub.frames else {
        return;
    };
    let step = k.store.scrub.step;
    k.store.scrub.stats.blocks += plan::blocks_read(step);
    let Some((a, b)) = plan::places(&k.store.geo, step) else {
        return;
    };
    let mut writes: [Option<(u64, FrameNumber)>; 2] = [None; 2];
    let mut damaged = 0;
    match step {
        Step::Nodes(kb) => {
            let g = k.store.geo;
            let v = phys::with_frame(f0, |x| {
                phys::with_frame(f1, |y| plan::judge_nodes(&g, kb, &x[..], &y[..]))
            });
            for (copy, bad) in [(0u8, v.bad0), (1, v.bad1)] {
                if bad == 0 {
                    continue;
                }
                damaged += 1;
                let (into, from, place) = if copy == 0 { (f0, f1, a) } else { (f1, f0, b) };
                kprintln!(
                    "store: scrub: node block {kb} copy {copy}: {} damaged records; rewritten from copy {}",
                    bad.count_ones(),
                    1 - copy
                );
                for at in plan::records(bad) {
                    phys::copy_frames(from, at.start, into, at.start, at.len());
                }
                writes[copy as usize] = Some((place, into));
            }
            if v.lost != 0 {
                damaged += 1;
                kprintln!(
                    "store: scrub: node block {kb}: {} records with no valid copy; not repaired",
                    v.lost.count_ones()
                );
            }
        }
        Step::Versions(kb) => {
            let verdict = phys::with_frame(f0, |x| {
                phys::with_frame(f1, |y| plan::judge_versions(&x[..], &y[..]))
            });
            match verdict {
                VersionVerdict::Clean => {
                    if phys::with_frame(f0, |x| versions::classify(&x[..])) == Kind::Valid {
                        phys::copy_frame(f0, fe);
                    } else {
                        phys::zero_frame(fe);
                    }
                }
                VersionVerdict::Repair { bad } => {
                    damaged += 1;
                    let (good, place) = if bad == 0 { (f1, a) } else { (f0, b) };
                    kprintln!(
                        "store: scrub: version block {kb} copy {bad}: damaged; rewritten from copy {}",
                        1 - bad
                    );
                    phys::copy_frame(good, fe);
                    writes[0] = Some((place, good));
                    k.store.set_blank(kb, false);
                }
                VersionVerdict::Lost => {
                    damaged += 1;
                    kprintln!("store: scrub: version block {kb}: no valid copy; not repaired");
                    phys::zero_frame(fe);
                }
            }
            k.store.scrub.epoch = k.store.migrations;
        }
        Step::Page { index, oid, .. } => {
            let e = phys::with_frame(fe, |x| versions::entry_at(&x[..], index));
            if e.judge(phys::frame_crc32c_called(f0)) == Home::Damaged {
                damaged += 1;
                if from_memory(k, oid, e, f0) {
                    kprintln!(
                        "store: scrub: page {oid}: its home fails its checksum; rewritten from memory"
                    );
                    writes[0] = Some((a, f0));
                } else {
                    kprintln!(
                        "store: scrub: page {oid}: its home fails its checksum; no good copy (reads refuse it)"
                    );
                }
            }
        }
    }
    let s = &mut k.store.scrub;
    s.stats.damaged += damaged;
    s.pass_damage += damaged;
    let mut n = 0;
    for (i, &(place, f)) in writes.iter().flatten().enumerate() {
        let ok = k
            .store
            .disk
            .as_mut()
            .is_some_and(|d| d.submit(Op::Write, place, &[f], TAG + 2 + i as u64).is_ok());
        if ok {
            n += 1;
        } else {
            kprintln!("store: scrub: no disk slot to write block {place}; not repaired now");
        }
    }
    if n > 0 {
        k.store.scrub.pending = n;
        k.store.scrub.state = State::Writing;
        k.store.scrub.stats.repaired += n as u64;
        if let Some(d) = k.store.disk.as_mut() {
            d.kick();
        }
    } else {
        k.store.scrub.state = State::Idle;
        advance(k);
    }
}

/// Copies page `oid` into `f` from the object cache if it holds it clean,
/// at the entry's version and with the entry's checksum: the contents
/// written home. False if it does not.
fn from_memory(k: &Kernel, oid: u64, e: versions::Entry, f: FrameNumber) -> bool {
    let Some(i) = k.objs.cached_page(oid) else {
        return false;
    };
    let p = k.objs.page_entry(i);
    match p.frame {
        Some(src) if p.used && !p.dirty && p.version == e.version => {
            phys::copy_frame(src, f);
            phys::frame_crc32c_called(f) == e.crc
        }
        _ => false,
    }
}

/// On to the next step; reports the end of a pass that found damage.
fn advance(k: &mut Kernel) {
    let Some([_, _, fe]) = k.store.scrub.frames else {
        return;
    };
    let g = k.store.geo;
    let s = &mut k.store.scrub;
    let before = s.cursor.passes();
    phys::with_frame(fe, |x| s.cursor.advance(&g, |i| plan::written(&x[..], i)));
    if s.cursor.passes() != before {
        s.stats.passes += 1;
        if s.pass_damage > 0 {
            kprintln!(
                "store: scrub: pass {} done: {} blocks checked, {} damaged, {} repaired (so far)",
                s.stats.passes,
                s.stats.blocks,
                s.stats.damaged,
                s.stats.repaired
            );
        }
        s.pass_damage = 0;
    }
}
