//! `selftest=disk` and `selftest=diskread`: the disk driver exercised through
//! its kernel API only. `disk` writes a distinct pattern to 64 blocks spread
//! over the disk (8 queued requests of 8 scattered frames each, completions
//! by interrupt), flushes, reads them back into other frames and compares
//! every byte; it also checks refusals, that a synchronous request keeps the
//! queued completions it meets, and measures the kernel's instructions per
//! 4 KiB write. `diskread` only reads back and compares (a second boot on the
//! same disk image shows the data persisted).

use crate::arch::phys::FrameNumber;
use crate::arch::virtio_blk::{self, Disk, IoError, Op, SubmitError};
use crate::arch::{self, cpu, phys};
use crate::kernel::Kernel;
use crate::kprintln;

/// Requests and frames per request of the pattern.
const REQS: usize = 8;
const PER: usize = 8;
const FRAMES: usize = REQS * PER;

fn fail(args: core::fmt::Arguments<'_>) -> ! {
    kprintln!("selftest disk: FAILED, {}", args);
    arch::qemu::exit(stet_abi::qemu_exit::FAILURE)
}

/// Word `i` of the pattern of block `b`: distinct for every block and word.
fn word(b: u64, i: usize) -> u64 {
    b.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i as u64) << 3 ^ 0x5354_4554_4449_534b
}

fn fill(f: FrameNumber, b: u64) {
    let mut buf = [0u8; 4096];
    for (i, w) in buf.chunks_exact_mut(8).enumerate() {
        w.copy_from_slice(&word(b, i).to_le_bytes());
    }
    phys::write_frame(f, 0, &buf);
}

fn check(f: FrameNumber, b: u64) {
    let mut buf = [0u8; 4096];
    phys::read_frame(f, 0, &mut buf);
    for (i, w) in buf.chunks_exact(8).enumerate() {
        let got = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        if got != word(b, i) {
            fail(format_args!(
                "block {b} word {i}: read {got:#x}, wrote {:#x}",
                word(b, i)
            ));
        }
    }
}

/// First block of pattern request `r`: spread over the disk, the last one
/// ending at its very end.
fn start(disk: &Disk, r: usize) -> u64 {
    if r == REQS - 1 {
        disk.blocks() - PER as u64
    } else {
        r as u64 * (disk.blocks() / REQS as u64)
    }
}

/// A block for the synchronous checks, outside the pattern.
fn scratch(disk: &Disk) -> u64 {
    disk.blocks() / REQS as u64 / 2
}

/// Requests in flight and the tags completed.
///
/// There is no timeout: under `-icount ... sleep=off` the guest clock leaps
/// ahead whenever the CPU halts, so a host `fdatasync` can take many guest
/// seconds. A completion that never comes is a hang, which the harness
/// reports at its timeout with the last console lines.
struct Flight {
    what: &'static str,
    seen: u64,
    outstanding: usize,
}

impl Flight {
    fn new(what: &'static str) -> Flight {
        Flight {
            what,
            seen: 0,
            outstanding: 0,
        }
    }

    /// Takes every completion there is; any error fails the test.
    fn reap(&mut self, disk: &mut Disk) {
        while let Some((tag, r)) = disk.poll() {
            if let Err(e) = r {
                fail(format_args!("{} request {tag} failed: {e:?}", self.what));
            }
            if tag >= 64 || self.seen & (1 << tag) != 0 || self.outstanding == 0 {
                fail(format_args!(
                    "{}: unexpected or repeated tag {tag}",
                    self.what
                ));
            }
            self.seen |= 1 << tag;
            self.outstanding -= 1;
        }
    }

    /// Idles until an interrupt (the disk's or the timer's).
    fn idle(&self) {
        cpu::wait_for_interrupt();
    }

    /// Submits a request, first waiting for completions while the queue is
    /// full (the doorbell is rung before waiting).
    fn submit(&mut self, disk: &mut Disk, op: Op, block: u64, frames: &[FrameNumber], tag: u64) {
        loop {
            match disk.submit(op, block, frames, tag) {
                Ok(()) => break,
                Err(SubmitError::Full) => {
                    disk.kick();
                    self.reap(disk);
                    if disk.free_slots() == 0 {
                        self.idle();
                    }
                }
                Err(e) => fail(format_args!("{} request {tag} refused: {e:?}", self.what)),
            }
        }
        self.outstanding += 1;
    }

    /// Rings the doorbell and waits for everything in flight; returns the
    /// tags seen, as a bit mask.
    fn wait(mut self, disk: &mut Disk) -> u64 {
        disk.kick();
        loop {
            self.reap(disk);
            if self.outstanding == 0 {
                return self.seen;
            }
            self.idle();
        }
    }
}

fn expect<T: core::fmt::Debug + PartialEq>(what: &str, got: T, want: T) {
    if got != want {
        fail(format_args!("{what}: {got:?}, expected {want:?}"));
    }
}

/// The 64-block pattern as requests of up to eight frames (fewer if the
/// device allows fewer) from `frames`; request `r`'s `j`th frame is
/// `pick(r, j)`: writes take each request's frames in descending order,
/// reads every eighth frame, so no two neighbours are adjacent. All are
/// queued (waiting only when the queue is full), then the doorbell rung.
fn pattern_io(disk: &mut Disk, op: Op, frames: &[FrameNumber; FRAMES]) {
    let pick = |r: usize, j: usize| match op {
        Op::Write => frames[r * PER + PER - 1 - j],
        _ => frames[j * REQS + r],
    };
    let chunk = disk.max_frames().min(PER);
    let mut flight = Flight::new(if op == Op::Write { "write" } else { "read" });
    let mut want = 0u64;
    for r in 0..REQS {
        let list: [FrameNumber; PER] = core::array::from_fn(|j| pick(r, j));
        for j0 in (0..PER).step_by(chunk) {
            let n = chunk.min(PER - j0);
            let tag = (r * PER + j0) as u64;
            flight.submit(disk, op, start(disk, r) + j0 as u64, &list[j0..j0 + n], tag);
            want |= 1 << tag;
        }
    }
    expect("tags", flight.wait(disk), want);
    if op == Op::Read {
        for r in 0..REQS {
            for j in 0..PER {
                check(pick(r, j), start(disk, r) + j as u64);
            }
        }
    }
}

/// Runs the test; `write` false only reads back (`diskread`).
pub fn run(k: &mut Kernel, write: bool) -> ! {
    let name = if write { "disk" } else { "diskread" };
    let Some(mut disk) = k.store.disk.take() else {
        fail(format_args!("no disk"))
    };
    if disk.blocks() < 1024 {
        fail(format_args!("disk too small: {} blocks", disk.blocks()));
    }
    let mut frame = || {
        k.pool
            .alloc()
            .unwrap_or_else(|| fail(format_args!("out of frames")))
    };
    let wf: [FrameNumber; FRAMES] = core::array::from_fn(|_| frame());
    let rf: [FrameNumber; FRAMES] = core::array::from_fn(|_| frame());
    let disk = &mut disk;
    let blocks = disk.blocks();
    if write {
        refusals(disk, wf[0]);
        for r in 0..REQS {
            for j in 0..PER {
                fill(wf[r * PER + PER - 1 - j], start(disk, r) + j as u64);
            }
        }
        pattern_io(disk, Op::Write, &wf);
        // A queued flush, then a synchronous one.
        let mut flush = Flight::new("flush");
        flush.submit(disk, Op::Flush, 0, &[], 9);
        expect("flush tag", flush.wait(disk), 1 << 9);
        expect("flush_sync", disk.flush_sync(), Ok(()));
        // Queued reads in flight while synchronous requests run: their
        // completions must still come out of poll.
        fill(wf[0], scratch(disk));
        let mut queued = Flight::new("queued read");
        for (r, f) in rf.iter().take(4).enumerate() {
            queued.submit(disk, Op::Read, start(disk, r), &[*f], 20 + r as u64);
        }
        disk.kick();
        expect("write_sync", disk.write_sync(scratch(disk), wf[0]), Ok(()));
        expect("flush_sync", disk.flush_sync(), Ok(()));
        expect("read_sync", disk.read_sync(scratch(disk), wf[1]), Ok(()));
        check(wf[1], scratch(disk));
        expect("queued reads", queued.wait(disk), 0xf << 20);
        for (r, f) in rf.iter().take(4).enumerate() {
            check(*f, start(disk, r));
        }
        measure(disk, &wf);
    }
    for f in rf {
        phys::zero_frame(f);
    }
    pattern_io(disk, Op::Read, &rf);
    expect("scratch read", disk.read_sync(scratch(disk), rf[0]), Ok(()));
    check(rf[0], scratch(disk));
    if disk.has_interrupts() {
        // Completions found by polling leave their interrupts pending (the
        // kernel runs with interrupts off): let them in.
        // A missing interrupt is a hang (see `Flight`).
        while virtio_blk::interrupts() == 0 {
            cpu::wait_for_interrupt();
        }
    }
    kprintln!(
        "selftest {}: ok {} requests, {} interrupts ({} doorbells, {} blocks, {} KiB checked)",
        name,
        disk.completed(),
        virtio_blk::interrupts(),
        disk.kicks(),
        blocks,
        (FRAMES + 1) * 4
    );
    arch::qemu::exit(stet_abi::qemu_exit::SUCCESS)
}

/// Requests the driver must refuse, and why.
fn refusals(disk: &mut Disk, f: FrameNumber) {
    let n = disk.blocks();
    let two = [f, f];
    expect(
        "past the end",
        disk.submit(Op::Write, n - 1, &two, 0),
        Err(SubmitError::OutOfRange),
    );
    expect(
        "at the end",
        disk.submit(Op::Read, n, &[f], 0),
        Err(SubmitError::OutOfRange),
    );
    expect(
        "wrapping",
        disk.submit(Op::Read, u64::MAX, &[f], 0),
        Err(SubmitError::OutOfRange),
    );
    expect(
        "no frames",
        disk.submit(Op::Read, 0, virtio_blk::NO_FRAMES, 0),
        Err(SubmitError::BadRequest),
    );
    let many = [f; 256];
    if let Some(too_many) = many.get(..disk.max_frames() + 1) {
        expect(
            "too many",
            disk.submit(Op::Read, 0, too_many, 0),
            Err(SubmitError::TooManyFrames),
        );
    }
    expect(
        "sync past the end",
        disk.read_sync(n, f),
        Err(IoError::Refused(SubmitError::OutOfRange)),
    );
    expect("nothing queued", disk.poll(), None);
}

/// Kernel instructions (under `-icount`) to submit, kick and poll one 4 KiB
/// write, and one of 64 KiB, not counting the wait for the device: the
/// median of 16 of each.
fn measure(disk: &mut Disk, frames: &[FrameNumber; FRAMES]) {
    let overhead = {
        let a = cpu::rdtsc();
        cpu::rdtsc() - a
    };
    let block = scratch(disk) + 1;
    let big = 16.min(disk.max_frames());
    let mut one = |n: usize| {
        let mut costs = [0u64; 16];
        for c in costs.iter_mut() {
            let t0 = cpu::rdtsc();
            if disk.submit(Op::Write, block, &frames[..n], 1).is_err() {
                fail(format_args!("measure: refused"));
            }
            disk.kick();
            let t1 = cpu::rdtsc();
            *c = loop {
                let t2 = cpu::rdtsc();
                let r = disk.poll();
                let t3 = cpu::rdtsc();
                match r {
                    Some((1, Ok(()))) => {
                        break ((t1 - t0) + (t3 - t2)).saturating_sub(2 * overhead)
                    }
                    Some(other) => fail(format_args!("measure: {other:?}")),
                    None => cpu::wait_for_interrupt(),
                }
            };
        }
        costs.sort_unstable();
        costs[8]
    };
    let (a, b) = (one(1), one(big));
    kprintln!(
        "selftest disk: kernel cost per write request (submit+kick+poll, rdtsc units = instructions under -icount): 4 KiB {a}, {} KiB {b}",
        big * 4
    );
}
