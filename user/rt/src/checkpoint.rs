//! The checkpoint key (`stet_abi::order::checkpoint`): take a checkpoint
//! and wait for its commit, read statistics, set the period, learn about
//! restarts, wait for the next restart, wait for a quiet disk, time a raw
//! write (benchmarks). Errors are the kernel's result
//! codes (`stet_abi::code`); a wait the kernel answers `RESTARTED` (the
//! system restarted from a checkpoint meanwhile) may be retried.

use crate::key::{call, Slot};
use stet_abi::{code::Code, order::checkpoint as o};

/// A committed checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Taken {
    /// Its generation.
    pub generation: u64,
    /// Whether the reply came after a restart from this very checkpoint.
    pub restarted: bool,
}

/// The last committed checkpoint's statistics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Its generation.
    pub generation: u64,
    /// Nodes it wrote.
    pub nodes: u32,
    /// Pages it wrote.
    pub pages: u32,
    /// The stop-the-world pause, in TSC ticks.
    pub pause_ticks: u64,
    /// TSC ticks from the pause to the commit.
    pub commit_ticks: u64,
}

/// The checkpointer's settings and restart history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Info {
    /// The period in milliseconds (0: no periodic checkpoints).
    pub period_ms: u64,
    /// Restarts since the store was created.
    pub restarts: u64,
    /// The generation the system last restarted from.
    pub restart_generation: u64,
    /// TSC ticks the kernel spent writing and committing the last
    /// checkpoint, not counting waiting for the disk.
    pub work_ticks: u64,
}

fn ok(code: u64) -> Result<(), u64> {
    if code == Code::Ok {
        Ok(())
    } else {
        Err(code)
    }
}

/// Takes a checkpoint (or joins the one being written) and waits for its
/// commit.
pub fn take(slot: Slot) -> Result<Taken, u64> {
    let a = call(slot, o::TAKE, [0; 4]);
    ok(a.code)?;
    Ok(Taken {
        generation: a.w[0],
        restarted: a.w[1] == 1,
    })
}

/// Like [`take`], asking again while the kernel answers `RESTARTED`.
pub fn take_retrying(slot: Slot) -> Result<Taken, u64> {
    loop {
        match take(slot) {
            Err(c) if c == Code::Restarted => continue,
            r => return r,
        }
    }
}

/// The last committed checkpoint's statistics.
pub fn stats(slot: Slot) -> Result<Stats, u64> {
    let a = call(slot, o::STATS, [0; 4]);
    ok(a.code)?;
    Ok(Stats {
        generation: a.w[0],
        nodes: (a.w[1] >> 32) as u32,
        pages: a.w[1] as u32,
        pause_ticks: a.w[2],
        commit_ticks: a.w[3],
    })
}

/// Sets the period of checkpoints in milliseconds (0: only on demand).
pub fn set_period(slot: Slot, ms: u64) -> Result<(), u64> {
    ok(call(slot, o::SET_PERIOD, [ms, 0, 0, 0]).code)
}

/// The period and the restart history.
pub fn info(slot: Slot) -> Result<Info, u64> {
    let a = call(slot, o::INFO, [0; 4]);
    ok(a.code)?;
    Ok(Info {
        period_ms: a.w[0],
        restarts: a.w[1],
        restart_generation: a.w[2],
        work_ticks: a.w[3],
    })
}

/// Waits until the checkpoint writer is idle (the last checkpoint has
/// migrated home and none is asked for).
pub fn wait_idle(slot: Slot) -> Result<(), u64> {
    ok(call(slot, o::WAIT_IDLE, [0; 4]).code)
}

/// A raw sequential write over the checkpoint log (benchmarks; the kernel
/// needs `bench_raw`): `blocks` blocks (0: as many as the last
/// checkpoint's extent), then a flush. Returns the TSC ticks from its
/// first request to the flush's completion, and the blocks written.
pub fn raw_write(slot: Slot, blocks: u64) -> Result<(u64, u64), u64> {
    let a = call(slot, o::RAW_WRITE, [blocks, 0, 0, 0]);
    ok(a.code)?;
    Ok((a.w[0], a.w[1]))
}

/// Waits until the system restarts from a checkpoint. Returns the reply
/// code: `RESTARTED` when it did; anything else is an error (a void key,
/// no disk).
pub fn wait_restart(slot: Slot) -> u64 {
    call(slot, o::WAIT_RESTART, [0; 4]).code
}

/// Waits until the system has restarted more than `seen` times (answers
/// `RESTARTED` at once if it already has: a restart that happened while
/// the caller was busy is not missed).
pub fn wait_restart_after(slot: Slot, seen: u64) -> u64 {
    call(slot, o::WAIT_RESTART, [seen + 1, 0, 0, 0]).code
}
