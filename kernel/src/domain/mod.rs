//! Domains: preparing them into contexts, writing them back, and the
//! queues a running domain can be on (ready, stalled on a busy domain,
//! sleeping). Queues are caches too: a stalled or sleeping domain is simply
//! *running* in its nodes, with its `rip` on the `syscall` it will
//! re-execute, so losing a queue loses nothing.

pub mod context;

use crate::arch::fpu;
use crate::kernel::Kernel;
use context::{Context, Link, PrepareError, Queue};
use stet_abi::domain::state;
use stet_abi::domain::RunState;

/// The ready queue and the sleepers: lists linked through the contexts
/// (`Context::next`), changed only here, so a context is on a list exactly
/// when its `queue` says so (`invariants` checks).
#[derive(Default)]
pub struct RunQueues {
    ready_head: Link,
    ready_tail: Link,
    sleepers: Link,
}

impl RunQueues {
    /// Whether some domain is ready to run.
    #[inline]
    pub fn any_ready(&self) -> bool {
        self.ready_head != 0
    }

    /// The first of the ready queue (0: none), to walk it with `Context::next`.
    pub fn ready_head(&self) -> Link {
        self.ready_head
    }

    /// The first sleeper (0: none), to walk them with `Context::next`.
    pub fn sleepers(&self) -> Link {
        self.sleepers
    }
}

/// The link value for context `ci`.
#[inline]
pub fn link(ci: usize) -> Link {
    ci as Link + 1
}

/// The context a link names.
#[inline]
pub fn unlink(l: Link) -> Option<usize> {
    (l != 0).then(|| l as usize - 1)
}

/// The context of the domain rooted at node slot `root`, preparing it if
/// it is not prepared yet.
pub fn prepare(k: &mut Kernel, root: u32) -> Result<usize, PrepareError> {
    let mark = k.objs.node_entry(root).ctx;
    if let Some(ci) = unlink(mark) {
        if k.ctxs[ci].root == root {
            return Ok(ci);
        }
    }
    if mark != 0 {
        // The node is part of another prepared domain (its general keys or
        // annex): it cannot also be a root.
        return Err(PrepareError::Malformed(0));
    }
    let ci = match k.ctxs.iter().position(|c| !c.used) {
        Some(ci) => ci,
        None => {
            let victim = (0..k.ctxs.len())
                .find(|&i| evictable(k, i))
                .ok_or(PrepareError::NoSpace)?;
            unprepare(k, victim);
            victim
        }
    };
    let oid = k.objs.node_entry(root).oid;
    let mut r = context::load(
        &mut k.ctxs[ci],
        ci,
        &mut k.objs,
        &mut k.pool,
        &mut k.store,
        root,
    );
    if let Err(PrepareError::Shared(other)) = r {
        // Another prepared domain uses one of these nodes: it steps aside
        // if it can (it is re-prepared, and steps the other aside, when it
        // is next used).
        if other != ci && evictable(k, other) {
            unprepare(k, other);
            r = context::load(
                &mut k.ctxs[ci],
                ci,
                &mut k.objs,
                &mut k.pool,
                &mut k.store,
                root,
            );
        }
    }
    if let Err(e) = r {
        k.ctxs[ci].used = false;
        return Err(match e {
            PrepareError::Shared(_) => PrepareError::Malformed(0),
            e => e,
        });
    }
    k.table_gen = k.table_gen.wrapping_add(1);
    let c = &mut k.ctxs[ci];
    if let Some(r) = c.tables.take() {
        r.discard(&mut k.pool);
    }
    c.tgen = k.table_gen;
    c.root_below = false;
    c.queue = Queue::None;
    c.next = 0;
    c.stalled = 0;
    c.reserved = 0;
    c.name = k.names[..k.nnames]
        .iter()
        .position(|(o, _)| *o == oid)
        .map_or(0, |i| i as u16 + 1);
    Ok(ci)
}

/// Whether context `i` can be dropped to make room: not running, not
/// current, nobody stalled on it.
fn evictable(k: &Kernel, i: usize) -> bool {
    let c = &k.ctxs[i];
    c.used
        && c.state != RunState::Running
        && c.queue == Queue::None
        && c.stalled == 0
        && k.current != Some(i)
}

/// Moves the CPU's FPU registers into context `ci` if they are its own.
pub fn save_fpu(k: &mut Kernel, ci: usize) {
    if k.fpu_owner == Some(ci) {
        fpu::save(&mut k.ctxs[ci].fpu);
        k.fpu_owner = None;
    }
}

/// Writes context `ci` back to its nodes (they become the truth again,
/// while the context stays prepared).
pub fn sync(k: &mut Kernel, ci: usize) {
    save_fpu(k, ci);
    context::write_back(&k.ctxs[ci], &mut k.objs);
}

/// Drops the hardware page tables of context `ci`.
pub fn discard_tables(k: &mut Kernel, ci: usize) {
    k.table_gen = k.table_gen.wrapping_add(1);
    k.ctxs[ci].tgen = k.table_gen;
    k.ctxs[ci].root_below = false;
    if let Some(r) = k.ctxs[ci].tables.take() {
        r.discard(&mut k.pool);
    }
}

/// Drops the hardware page tables of context `ci` under top-level entries
/// `lo..=hi` only (its generation stays: records of the rest still hold).
pub fn discard_top_entries(k: &mut Kernel, ci: usize, lo: u8, hi: u8) {
    if let Some(r) = &k.ctxs[ci].tables {
        r.discard_top(lo as usize, hi as usize, &mut k.pool);
    }
    k.ctxs[ci].leaf.valid = false;
}

/// Drops context `ci`'s mappings of `[start, end)` only (one slot of a
/// node that changed; its generation stays).
pub fn discard_range(k: &mut Kernel, ci: usize, start: u64, end: u64) {
    if let Some(r) = &k.ctxs[ci].tables {
        r.discard_range(start, end, &mut k.pool);
    }
    k.ctxs[ci].leaf.valid = false;
}

/// Writes context `ci` back and frees it. It must not be queued.
pub fn unprepare(k: &mut Kernel, ci: usize) {
    sync(k, ci);
    context::unmark(&k.ctxs[ci], &mut k.objs);
    discard_tables(k, ci);
    if k.current == Some(ci) {
        k.current = None;
    }
    k.ctxs[ci].used = false;
}

/// Re-reads context `ci` from its nodes after someone changed them (through
/// a node or page key). Its queue position is kept; if the domain is now
/// malformed it is dropped from every queue and from the cache.
pub fn reload(k: &mut Kernel, ci: usize) {
    let root = k.ctxs[ci].root;
    context::unmark(&k.ctxs[ci], &mut k.objs);
    discard_tables(k, ci);
    let (queue, next, stalled, name) = {
        let c = &k.ctxs[ci];
        (c.queue, c.next, c.stalled, c.name)
    };
    let ok = context::load(
        &mut k.ctxs[ci],
        ci,
        &mut k.objs,
        &mut k.pool,
        &mut k.store,
        root,
    )
    .is_ok();
    let c = &mut k.ctxs[ci];
    c.queue = queue;
    c.next = next;
    c.stalled = stalled;
    c.name = name;
    if !ok {
        dequeue(k, ci);
        wake_stalled(k, ci);
        if k.current == Some(ci) {
            k.current = None;
        }
        k.ctxs[ci].used = false;
    } else if !runnable(&k.ctxs[ci]) {
        if k.ctxs[ci].queue == Queue::Ready {
            dequeue(k, ci);
        }
    } else if k.ctxs[ci].queue == Queue::None && k.current != Some(ci) {
        ready_push(k, ci);
    }
}

/// Whether a context wants the CPU.
pub fn runnable(c: &Context) -> bool {
    c.used && c.state == RunState::Running && c.flags & state::STOPPED == 0
}

/// Appends `ci` to the ready queue.
pub fn ready_push(k: &mut Kernel, ci: usize) {
    debug_assert_eq!(k.ctxs[ci].queue, Queue::None);
    let c = &mut k.ctxs[ci];
    c.queue = Queue::Ready;
    c.next = 0;
    match unlink(k.queues.ready_tail) {
        Some(t) => k.ctxs[t].next = link(ci),
        None => k.queues.ready_head = link(ci),
    }
    k.queues.ready_tail = link(ci);
}

/// Takes the first context off the ready queue.
pub fn ready_pop(k: &mut Kernel) -> Option<usize> {
    let ci = unlink(k.queues.ready_head)?;
    k.queues.ready_head = k.ctxs[ci].next;
    if k.queues.ready_head == 0 {
        k.queues.ready_tail = 0;
    }
    let c = &mut k.ctxs[ci];
    c.next = 0;
    c.queue = Queue::None;
    Some(ci)
}

/// Removes `ci` from a singly linked list starting at `head`.
fn remove_from(k: &mut Kernel, head: Link, ci: usize) -> (Link, bool) {
    let me = link(ci);
    if head == me {
        return (k.ctxs[ci].next, true);
    }
    let mut p = head;
    while let Some(pi) = unlink(p) {
        let n = k.ctxs[pi].next;
        if n == me {
            k.ctxs[pi].next = k.ctxs[ci].next;
            return (head, true);
        }
        p = n;
    }
    (head, false)
}

/// Takes `ci` off whatever queue it is on.
pub fn dequeue(k: &mut Kernel, ci: usize) {
    match k.ctxs[ci].queue {
        Queue::None => return,
        Queue::Ready => {
            let (h, _) = remove_from(k, k.queues.ready_head, ci);
            k.queues.ready_head = h;
            // Recompute the tail (rare path).
            let mut t = 0;
            let mut p = k.queues.ready_head;
            while let Some(pi) = unlink(p) {
                t = p;
                p = k.ctxs[pi].next;
            }
            k.queues.ready_tail = t;
        }
        Queue::Sleeping => {
            let (h, _) = remove_from(k, k.queues.sleepers, ci);
            k.queues.sleepers = h;
        }
        Queue::Stalled => {
            for t in 0..k.ctxs.len() {
                if k.ctxs[t].used && k.ctxs[t].stalled != 0 {
                    let (h, found) = remove_from(k, k.ctxs[t].stalled, ci);
                    if found {
                        k.ctxs[t].stalled = h;
                        break;
                    }
                }
            }
        }
    }
    let c = &mut k.ctxs[ci];
    c.queue = Queue::None;
    c.next = 0;
}

/// Parks `ci` (running, its `rip` rewound to the `syscall`) until `on`
/// becomes available.
pub fn stall(k: &mut Kernel, ci: usize, on: usize) {
    let c = &mut k.ctxs[ci];
    c.queue = Queue::Stalled;
    c.next = 0;
    match unlink(k.ctxs[on].stalled) {
        None => k.ctxs[on].stalled = link(ci),
        Some(mut p) => {
            while let Some(n) = unlink(k.ctxs[p].next) {
                p = n;
            }
            k.ctxs[p].next = link(ci);
        }
    }
}

/// Makes every domain stalled on `on` ready again: each re-executes its
/// invocation (the first one gets through; the others stall again).
pub fn wake_stalled(k: &mut Kernel, on: usize) {
    let mut l = core::mem::take(&mut k.ctxs[on].stalled);
    if l != 0 {
        k.ctxs[on].reserved = l;
    }
    while let Some(ci) = unlink(l) {
        l = k.ctxs[ci].next;
        let c = &mut k.ctxs[ci];
        c.queue = Queue::None;
        c.next = 0;
        ready_push(k, ci);
    }
}

/// Whether `from` may deliver to `to` now. When a domain becomes
/// available and wakes the callers stalled on it, the first of them is
/// promised the next message: until it has run, anyone else (a new caller,
/// a fault on its way to a keeper) queues behind it. Without this a domain
/// that keeps faulting into a keeper could take the keeper every time and
/// starve the callers stalled on it.
pub fn may_deliver(k: &mut Kernel, from: usize, to: usize) -> bool {
    let Some(r) = unlink(k.ctxs[to].reserved) else {
        return true;
    };
    if r != from && k.ctxs[r].used && k.ctxs[r].queue == Queue::Ready {
        return false;
    }
    // The promised domain is here, or has run and gone elsewhere.
    k.ctxs[to].reserved = 0;
    true
}

/// Parks `ci` until `at` (ns since boot).
pub fn sleep(k: &mut Kernel, ci: usize, at: u64) {
    let c = &mut k.ctxs[ci];
    c.queue = Queue::Sleeping;
    c.wake_at = at;
    c.next = k.queues.sleepers;
    k.queues.sleepers = link(ci);
}

/// Readies every sleeper whose time has come.
pub fn wake_sleepers(k: &mut Kernel) {
    let now = k.now_ns();
    let mut l = k.queues.sleepers;
    while let Some(ci) = unlink(l) {
        l = k.ctxs[ci].next;
        if k.ctxs[ci].wake_at <= now {
            dequeue(k, ci);
            ready_push(k, ci);
        }
    }
}
