//! Keeping the object cache from running dry. Every kernel operation needs
//! at most a bounded number of fresh node slots and frames (`RESERVE`);
//! before one starts, `replenish` makes sure that many are free by evicting
//! clean objects (flushing the hardware page tables once if any evicted
//! object was mapped). Dirty objects cannot be evicted until a checkpoint
//! has written them.

use crate::kernel::Kernel;
use crate::memory;

/// Node slots and frames every operation may count on.
pub const RESERVE: usize = 64;
/// How many to free at once when below the reserve (amortises the flush).
const BATCH: usize = 256;

/// Makes room for an operation of context `ci`: evicts clean objects; if
/// that is not enough, asks for a checkpoint and parks `ci` until it
/// commits (its objects then become evictable). False if `ci` was parked
/// (its `rip` is not rewound here: the caller decides how to retry).
pub fn make_room(k: &mut Kernel, ci: usize) -> bool {
    if replenish(k) {
        return true;
    }
    if !k.store.persistent() {
        // Nothing can be written out: go on; operations answer NO_SPACE.
        return true;
    }
    if k.store.trace {
        crate::kprintln!("store: cache full of dirty objects; domain {ci} waits for a checkpoint");
    }
    crate::store::request_checkpoint(k);
    crate::domain::sleep(k, ci, crate::kobj::checkpoint::WAKE_ON_COMMIT);
    k.current = None;
    false
}

/// Starts a checkpoint early when free frames fall below the pressure mark
/// (an eighth of memory) and dirty pages hold them: the checkpoint then
/// has the frames it needs to stage, and its pages become evictable
/// before anyone has to wait.
#[inline]
pub fn check_pressure(k: &mut Kernel) {
    if k.pool.free_count() >= k.store.pressure_mark {
        return;
    }
    // Clean objects go first (one batch: the page-table flush it may need
    // is amortised over it).
    evict_pages(k);
    if k.pool.free_count() < k.store.pressure_mark
        && k.store.w.is_idle()
        && k.objs.dirty_page_count() >= k.store.pressure_mark / 2
    {
        if k.store.trace {
            crate::kprintln!(
                "store: {} frames free, {} dirty pages: checkpoint early",
                k.pool.free_count(),
                k.objs.dirty_page_count()
            );
        }
        crate::store::request_checkpoint(k);
    }
}

/// Whether the cache is below its reserve.
#[inline]
pub fn low(k: &Kernel) -> bool {
    k.objs.free_node_slots() < RESERVE
        || k.objs.free_page_slots() < RESERVE
        || k.pool.free_count() < RESERVE
}

/// Frees node slots and frames by evicting clean objects until the cache
/// is above its reserve (or nothing clean is left). Returns whether the
/// reserve is met.
pub fn replenish(k: &mut Kernel) -> bool {
    if k.objs.free_node_slots() < RESERVE {
        let (_, mapped) = k.objs.evict_nodes(BATCH);
        // An evicted meter loses its `meter` mark: checks start afresh.
        k.meter_gen += 1;
        if mapped {
            memory::flush_all(k);
        }
    }
    while k.objs.free_page_slots() < RESERVE + BATCH / 2
        || k.pool.free_count() < RESERVE + BATCH / 2
    {
        if evict_pages(k) == 0 {
            break;
        }
    }
    !low(k)
}

/// Evicts one batch of clean pages; returns how many.
fn evict_pages(k: &mut Kernel) -> usize {
    let mut held = [None; BATCH];
    let (got, nheld) = k.objs.evict_pages(BATCH, &mut k.pool, &mut held);
    if nheld > 0 {
        // The frames may still be mapped: discard every page table
        // before anyone can reuse them.
        memory::flush_all(k);
        for f in held[..nheld].iter().flatten() {
            let _ = k.pool.free(*f);
        }
    }
    got
}
