//! Migration: the committed checkpoint's pages, version blocks and node
//! blocks from the log to their homes.

use super::jobs::{slots, spare_frames, submit, take, Kind};
use super::{fail, JOB_FRAMES};
use crate::arch::phys;
use crate::arch::virtio_blk::Op;
use crate::kernel::Kernel;
use crate::kprintln;
use stet_store::ckpt::Found;
use stet_store::geometry::{NODES_PER_BLOCK, NODE_RECORD, VERSIONS_PER_BLOCK};
use stet_store::node::{self, Record};
use stet_store::versions::{self, Entry};

/// Directory entry `x` of the committed checkpoint.
fn entry(k: &Kernel, x: u64) -> Option<Found> {
    k.store.dir.as_ref()?.get(x as usize)
}

/// Issues migration jobs for copy `copy` (copy 0 also moves the pages).
/// The directory is sorted: pages (by oid), then nodes (by oid). `next`
/// walks it three times in copy 0 (pages, versions, nodes) and twice in
/// copy 1; `u64::MAX - 1` means done.
pub(super) fn issue_migration(k: &mut Kernel, copy: u8) -> bool {
    let Some(total) = k.store.dir.as_ref().map(|d| d.len() as u64) else {
        k.store.w.next = u64::MAX - 1;
        return false;
    };
    let pages = k.store.w.layout.pages as u64;
    // Passes: 0 pages home (copy 0 only), 1 version blocks, 2 node blocks.
    let (pass, x) = (k.store.w.next >> 48, k.store.w.next & ((1 << 48) - 1));
    if k.store.w.next == u64::MAX - 1 {
        return false;
    }
    let next_pass = |k: &mut Kernel, p: u64| {
        k.store.w.next = if p > 2 { u64::MAX - 1 } else { p << 48 };
    };
    if pass == 0 && copy == 1 {
        next_pass(k, 1);
        return true;
    }
    let end = if pass == 2 { total } else { pages };
    let begin = if pass == 2 { pages } else { 0 };
    let x = x.max(begin);
    if x >= end {
        next_pass(k, pass + 1);
        return true;
    }
    if slots(k) < 3 {
        return false;
    }
    let Some(j) = k.store.w.free_job() else {
        return false;
    };
    let g = k.store.root.geometry;
    let start = k.store.root.ckpt_start;
    match pass {
        0 => {
            // Up to JOB_FRAMES pages: read each from the log.
            // n reads now and n writes when they complete.
            let n = ((end - x) as usize).min(JOB_FRAMES).min(slots(k) / 2);
            if spare_frames(k) < n {
                return false;
            }
            k.store.reserved += n;
            for i in 0..n {
                let Some(e) = entry(k, x + i as u64) else {
                    return false;
                };
                let Some(f) = take(k) else {
                    fail(k, "the writer ran out of its own frames");
                    return false;
                };
                k.store.w.jobs[j].frames[i] = Some(f);
                k.store.w.jobs[j].nframes = i + 1;
                if !submit(k, j, Op::Read, start + e.block, &[f]) {
                    fail(k, "cannot read the log");
                    return false;
                }
            }
            k.store.w.jobs[j].kind = Kind::Home {
                first: x as u32,
                n: n as u32,
                writing: false,
            };
            k.store.w.next = x + n as u64;
        }
        1 => {
            // One version block: the run of pages whose versions it holds.
            let Some(e0) = entry(k, x) else { return false };
            let (vb, _) = versions::version_block_of(e0.oid);
            let mut n = 1u64;
            while x + n < end
                && entry(k, x + n).is_some_and(|e| versions::version_block_of(e.oid).0 == vb)
            {
                n += 1;
            }
            if !read_both(k, j, g.version_block(vb, 0), g.version_block(vb, 1)) {
                return false;
            }
            k.store.reserved += 1;
            k.store.w.jobs[j].kind = Kind::Versions {
                block: vb,
                first: x as u32,
                n: n as u32,
                copy,
                writing: false,
            };
            k.store.w.next = (1 << 48) | (x + n);
        }
        _ => {
            // One node home block: both copies plus the log blocks holding
            // the checkpoint's records for it.
            let Some(e0) = entry(k, x) else { return false };
            let hb = e0.oid / NODES_PER_BLOCK;
            let mut n = 1u64;
            while x + n < end && entry(k, x + n).is_some_and(|e| e.oid / NODES_PER_BLOCK == hb) {
                n += 1;
            }
            if spare_frames(k) < 2 + n as usize || slots(k) < 3 + n as usize {
                return false;
            }
            k.store.reserved += 1;
            let b0 = Some(g.node_area + hb);
            let b1 = Some(g.node_area + g.node_blocks + hb);
            if !read_both(k, j, b0, b1) {
                return false;
            }
            for i in 0..n {
                let Some(e) = entry(k, x + i) else {
                    return false;
                };
                let Some(f) = take(k) else {
                    fail(k, "the writer ran out of its own frames");
                    return false;
                };
                let job = &mut k.store.w.jobs[j];
                job.frames[job.nframes] = Some(f);
                job.nframes += 1;
                if !submit(k, j, Op::Read, start + e.block, &[f]) {
                    fail(k, "cannot read the log");
                    return false;
                }
            }
            k.store.w.jobs[j].kind = Kind::Nodes {
                block: hb,
                first: x as u32,
                n: n as u32,
                copy,
                writing: false,
            };
            k.store.w.next = (2 << 48) | (x + n);
        }
    }
    true
}

/// Starts reading blocks `a` and `b` into the first two frames of job `j`.
fn read_both(k: &mut Kernel, j: usize, a: Option<u64>, b: Option<u64>) -> bool {
    let (Some(a), Some(b)) = (a, b) else {
        fail(k, "a home outside the disk");
        return false;
    };
    if spare_frames(k) < 2 {
        return false;
    }
    for (i, blk) in [a, b].into_iter().enumerate() {
        let Some(f) = take(k) else {
            fail(k, "the writer ran out of its own frames");
            return false;
        };
        k.store.w.jobs[j].frames[i] = Some(f);
        k.store.w.jobs[j].nframes = i + 1;
        if !submit(k, j, Op::Read, blk, &[f]) {
            fail(k, "cannot read a home block");
            return false;
        }
    }
    true
}

/// Pages read from the log: check each and write it home.
pub(super) fn home_writes(k: &mut Kernel, j: usize, first: u32, n: u32) {
    for i in 0..n as usize {
        let Some(e) = entry(k, first as u64 + i as u64) else {
            return fail(k, "directory changed during migration");
        };
        let Some(f) = k.store.w.jobs[j].frames[i] else {
            return fail(k, "a migration frame is missing");
        };
        if phys::frame_crc32c(f) != e.crc {
            kprintln!(
                "ckpt: page {} of checkpoint {} fails its checksum in the log",
                e.oid,
                k.store.w.generation
            );
            return fail(k, "a damaged log block");
        }
        let Some(home) = k.store.root.geometry.page_home(e.oid) else {
            return fail(k, "a page outside the disk");
        };
        k.store.reserved -= 1;
        if !submit(k, j, Op::Write, home, &[f]) {
            return fail(k, "cannot write a page home");
        }
    }
    k.store.w.jobs[j].kind = Kind::Home {
        first,
        n,
        writing: true,
    };
}

/// Merges the versions of directory entries `first..first+n` into the
/// valid copy of their version block (in frame 0 of job `j`). False if
/// the job lacks a frame.
pub(super) fn merge_versions(k: &mut Kernel, j: usize, first: u32, n: u32) -> bool {
    let (Some(f0), Some(f1)) = (k.store.w.jobs[j].frames[0], k.store.w.jobs[j].frames[1]) else {
        return false;
    };
    // Its copies are about to change: page reads look at them again.
    if let Some(e) = entry(k, first as u64) {
        k.store
            .set_blank(versions::version_block_of(e.oid).0, false);
    }
    let pick = phys::with_frame(f0, |a| phys::with_frame(f1, |b| versions::pick(a, b)));
    match pick {
        Ok(Some(0)) => {}
        Ok(Some(_)) => phys::copy_frame(f1, f0),
        Ok(None) => phys::zero_frame(f0),
        Err(_) => {
            // Rebuilt with every other page's entry lost: their homes are
            // refused from now on, never read as zero or unchecked pages.
            kprintln!(
                "ckpt: both copies of a version block are damaged; rebuilding it (its other pages are lost)"
            );
            phys::with_frame_mut(f0, |b| {
                versions::encode_entries(&[Entry::LOST; VERSIONS_PER_BLOCK as usize], b)
            });
        }
    }
    // Each page's entry: its version and the checksum of what goes home
    // (the directory's, checked when the page was read from the log).
    let mut list = [(0usize, Entry::NEVER); VERSIONS_PER_BLOCK as usize];
    let mut m = 0;
    for i in 0..n as u64 {
        if let Some(e) = entry(k, first as u64 + i) {
            if m < list.len() {
                let idx = versions::version_block_of(e.oid).1;
                list[m] = (idx, Entry::new(e.version, e.crc));
                m += 1;
            }
        }
    }
    phys::with_frame_mut(f0, |b| versions::set_entries(b, list[..m].iter().copied()));
    true
}

/// Builds the new contents of node home block `block` in frame 0 of job
/// `j`: the checkpoint's records (read from the log into frames 2..),
/// and for the other records the valid one of the two copies. False if
/// the job lacks a frame.
pub(super) fn merge_nodes(k: &mut Kernel, j: usize, block: u64, first: u32, n: u32) -> bool {
    let job = k.store.w.jobs[j];
    let (Some(f0), Some(f1)) = (job.frames[0], job.frames[1]) else {
        return false;
    };
    for r in 0..NODES_PER_BLOCK as usize {
        let oid = block * NODES_PER_BLOCK + r as u64;
        let at = r * NODE_RECORD;
        let mut rec = [0u8; NODE_RECORD];
        let from_log = (0..n as usize).find_map(|i| {
            let e = entry(k, first as u64 + i as u64)?;
            (e.oid == oid).then_some((i, e.offset))
        });
        if let Some((i, off)) = from_log {
            let Some(f) = job.frames[2 + i] else {
                return false;
            };
            phys::read_frame(f, off, &mut rec);
        } else {
            phys::read_frame(f0, at, &mut rec);
            if matches!(node::decode(&rec, oid), Record::Damaged) {
                let mut other = [0u8; NODE_RECORD];
                phys::read_frame(f1, at, &mut other);
                if matches!(node::decode(&other, oid), Record::Valid(_)) {
                    rec = other;
                }
            }
        }
        phys::write_frame(f0, at, &rec);
    }
    true
}
