//! Writing the snapshot into the log: node-record blocks, pages (each
//! copied into a frame the writer owns and checksummed), then the header
//! and directory.

use super::jobs::{max_frames, slots, spare_frames, submit, take, Kind};
use super::{fail, NodeId, JOB_FRAMES};
use crate::arch::phys;
use crate::arch::virtio_blk::Op;
use crate::kernel::Kernel;
use stet_keys::Space;
use stet_store::ckpt::{self, DirEntry, Header, Layout};
use stet_store::geometry::NODES_PER_BLOCK;

/// Items of the write phase: node-record blocks, then pages, then the
/// header and directory (last: the directory carries the pages' CRCs).
pub(super) fn write_items(l: &Layout) -> u64 {
    l.node_blocks as u64 + l.pages as u64 + 1
}

/// Issues one request of the write phase. False when nothing more can be
/// issued now.
pub(super) fn issue_write(k: &mut Kernel) -> bool {
    let l = k.store.w.layout;
    let next = k.store.w.next;
    if next >= write_items(&l) || slots(k) == 0 {
        return false;
    }
    let Some(j) = k.store.w.free_job() else {
        return false;
    };
    let start = k.store.root.geometry.log_start;
    let mf = max_frames(k);
    let nb = l.node_blocks as u64;
    let first_node = 1 + l.dir_blocks as usize;
    if next < nb {
        // Node-record blocks: already staged, contiguous in the log.
        let n = ((nb - next) as usize).min(mf);
        let mut fs = [None; JOB_FRAMES];
        for (i, f) in fs.iter_mut().enumerate().take(n) {
            *f = k.store.w.frames[first_node + next as usize + i];
        }
        if fs[..n].contains(&None) {
            fail(k, "a staging frame is missing");
            return false;
        }
        let (block, _) = l.node_block(next as u32 * NODES_PER_BLOCK as u32);
        if !submit(k, j, Op::Write, start + block, &fs[..n]) {
            return false;
        }
        k.store.w.jobs[j].kind = Kind::Stage {
            first: next as u32,
            n: n as u32,
        };
        k.store.w.next += n as u64;
        return true;
    }
    if next < nb + l.pages as u64 {
        // Pages: each copied into a frame the writer owns (so the domain
        // may change the page the moment it is copied), and checksummed.
        let p0 = (next - nb) as u32;
        let n = ((l.pages - p0) as usize).min(mf);
        let need = (0..n)
            .filter(|&i| !k.objs.snap[p0 as usize + i].copied)
            .count();
        if spare_frames(k) < need {
            return false;
        }
        let mut fs = [None; JOB_FRAMES];
        for (i, f) in fs.iter_mut().enumerate().take(n) {
            let jx = p0 as usize + i;
            let s = k.objs.snap[jx];
            let Some(page) = s.frame else {
                fail(k, "a snapshot page has no frame");
                return false;
            };
            let frame = if s.copied {
                page
            } else {
                let Some(b) = take(k) else {
                    fail(k, "the writer ran out of its own frames");
                    return false;
                };
                phys::copy_frame(page, b);
                k.objs.snapshot_page_copied(jx);
                k.objs.snap[jx].frame = Some(b);
                k.objs.snap[jx].copied = true;
                k.objs.snap[jx].bounced = true;
                b
            };
            k.objs.snap[jx].crc = phys::frame_crc32c(frame);
            *f = Some(frame);
        }
        if !submit(k, j, Op::Write, start + l.page_block(p0), &fs[..n]) {
            return false;
        }
        k.store.w.jobs[j].kind = Kind::Pages {
            first: p0,
            n: n as u32,
        };
        k.store.w.next += n as u64;
        return true;
    }
    // Header and directory, once every page has its CRC.
    let pages_done = k.objs.snap[..l.pages as usize].iter().all(|s| s.copied);
    if !pages_done {
        return false;
    }
    if !encode_directory(k) {
        fail(k, "a staging frame is missing");
        return false;
    }
    let n = 1 + l.dir_blocks as usize;
    let mut issued = 0;
    while issued < n {
        let Some(jj) = k.store.w.free_job() else {
            return false;
        };
        let m = (n - issued).min(mf);
        let mut fs = [None; JOB_FRAMES];
        for (i, f) in fs.iter_mut().enumerate().take(m) {
            *f = k.store.w.frames[issued + i];
        }
        if slots(k) == 0 || !submit(k, jj, Op::Write, start + issued as u64, &fs[..m]) {
            // Out of slots part way: a later pump re-encodes and resends
            // the whole header and directory (idempotent).
            return false;
        }
        k.store.w.jobs[jj].kind = Kind::Stage {
            first: issued as u32,
            n: m as u32,
        };
        issued += m;
    }
    k.store.w.next += 1;
    true
}

/// Encodes the header and directory blocks into their staging frames.
/// False if one is missing.
fn encode_directory(k: &mut Kernel) -> bool {
    let l = k.store.w.layout;
    let generation = k.store.w.generation;
    let h = Header {
        ckpt_generation: generation,
        nodes: l.nodes,
        pages: l.pages,
    };
    let Some(hf) = k.store.w.frames[0] else {
        return false;
    };
    phys::with_frame_mut(hf, |b| {
        b.fill(0);
        ckpt::encode_header(&h, b);
    });
    for d in 0..l.dir_blocks {
        let mut entries = [DirEntry::EMPTY; ckpt::DIR_ENTRIES];
        let first = d as u64 * ckpt::DIR_ENTRIES as u64;
        let n = l.dir_entries_in(d);
        for (i, e) in entries.iter_mut().enumerate().take(n) {
            let x = first + i as u64;
            *e = if x < l.nodes as u64 {
                let NodeId { oid, version } = k.store.w.node_ids[x as usize];
                DirEntry {
                    space: Space::Node,
                    oid,
                    version,
                    crc: 0,
                }
            } else {
                let s = k.objs.snap[(x - l.nodes as u64) as usize];
                DirEntry {
                    space: Space::Page,
                    oid: s.oid,
                    version: s.version,
                    crc: s.crc,
                }
            };
        }
        let Some(f) = k.store.w.frames[1 + d as usize] else {
            return false;
        };
        phys::with_frame_mut(f, |b| ckpt::encode_dir_block(generation, &entries[..n], b));
    }
    true
}
