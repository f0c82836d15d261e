//! The debug invariant walker (`invariants` on the command line): before
//! every return to user mode it checks that the kernel's caches agree with
//! each other and with the objects they cache. A violation is a kernel bug:
//! it is reported with what was found and the kernel stops (status 35).
//!
//! What must hold:
//! * every key in every cached node is a well-formed key;
//! * a prepared domain's root, general-keys and annex nodes and FPU page
//!   are marked as its own, and every mark points back at a domain using
//!   the object that way;
//! * every context is on at most one queue, the queue it says; the ready
//!   queue, the sleepers and every stall list are acyclic; waiting and
//!   available domains are on no queue but a stall list's owner;
//! * the current domain and the FPU owner are prepared; the current domain
//!   is on no queue;
//! * every cached page has a frame, and no two cached pages share one;
//! * every page a context's hardware tables map is the page its segment
//!   walk finds at that address, writable only where the walk allows
//!   writes (one context per check, in turn: a stale mapping left by a
//!   segment change is found while it lasts);
//! * the TSS I/O bitmap opens exactly the range the kernel says is open
//!   (checked at its edges and at COM1 and the debug-exit port).

use crate::domain::context::Queue;
use crate::domain::unlink;
use crate::kernel::Kernel;
use stet_abi::domain::RunState;

/// A segment walk over the object cache alone: nothing is read from the
/// store and nothing marked (`gone`: an object on the path is not cached,
/// so the walk says nothing).
struct Peek<'a> {
    objs: &'a crate::obj::Objects,
    gone: bool,
}

impl stet_segment::Store for Peek<'_> {
    fn slot(&mut self, node: stet_keys::Key, slot: usize) -> Option<stet_keys::Key> {
        match self.objs.cached_node(node.oid()) {
            Some(i) if self.objs.node_entry(i).version == node.version() => {
                Some(self.objs.node_entry(i).keys[slot])
            }
            Some(_) => None,
            None => {
                self.gone = true;
                None
            }
        }
    }

    fn page_exists(&mut self, page: stet_keys::Key) -> bool {
        match self.objs.cached_page(page.oid()) {
            Some(i) => self.objs.page_entry(i).version == page.version(),
            None => {
                self.gone = true;
                false
            }
        }
    }
}

/// Context `ci`'s hardware mappings against its segment (see the module
/// doc).
fn check_mappings(k: &Kernel, ci: usize) {
    let c = &k.ctxs[ci];
    let Some(tables) = &c.tables else {
        return;
    };
    let space = k.objs.node_entry(c.root).keys[stet_abi::domain::root::SPACE];
    let mut bad = None;
    tables.for_each_mapping(&mut |va, pa, writable| {
        if bad.is_some() {
            return;
        }
        let mut peek = Peek {
            objs: &k.objs,
            gone: false,
        };
        let found = stet_segment::walk(
            &mut peek,
            space,
            va,
            stet_segment::Access::Read,
            &mut |_| {},
        );
        if peek.gone {
            return;
        }
        let frame = found.as_ref().ok().and_then(|f| {
            let i = k.objs.cached_page(f.page.oid())?;
            k.objs.frame(i).map(|fr| fr.addr())
        });
        match found {
            Ok(f) if frame == Some(pa) && (f.writable || !writable) => {}
            _ => bad = Some((va, pa, writable, frame)),
        }
    });
    if let Some((va, pa, w, frame)) = bad {
        fail(
            k,
            format_args!(
                "context {ci}: {va:#x} mapped to {pa:#x} (writable {w}), its segment gives {frame:#x?}"
            ),
        );
    }
}

/// Times the walker ran (reported at idle).
pub fn checks(k: &Kernel) -> u64 {
    k.invariant_checks
}

fn fail(k: &Kernel, what: core::fmt::Arguments<'_>) -> ! {
    crate::fatal(format_args!(
        "invariant violated after {} checks: {}",
        k.invariant_checks, what
    ))
}

/// The I/O bitmap agrees with `k.io_open`: the open range's ports are
/// open, the ports around it and a few well-known others closed.
fn check_ports(k: &Kernel) {
    let (base, count) = ((k.io_open >> 32) as u32, k.io_open as u32);
    let open = |p: u32| p >= base && p < base + count;
    let mut probe = [
        0x3f8,
        0x3ff,
        0xf4,
        0x2f8,
        0,
        0xffff,
        base,
        base + count,
        0,
        0,
    ];
    probe[8] = base.wrapping_sub(1);
    probe[9] = (base + count).wrapping_sub(1);
    for p in probe.into_iter().filter(|&p| p < 0x1_0000) {
        if crate::arch::gdt::port_open(p as u16) != open(p) {
            fail(
                k,
                format_args!(
                    "port {p:#x} is {} but the open range is {base:#x}+{count}",
                    if open(p) { "closed" } else { "open" }
                ),
            );
        }
    }
}

/// Walks everything; stops the kernel at the first violation.
pub fn check(k: &mut Kernel) {
    k.invariant_checks += 1;
    check_ports(k);
    let n = k.ctxs.len();
    // Nodes: keys well formed, marks point at a domain that uses the node.
    for (i, node) in k
        .objs
        .node_slots()
        .iter()
        .enumerate()
        .filter(|(_, n)| n.used)
    {
        for (s, key) in node.keys.iter().enumerate() {
            if !key.is_valid() {
                fail(
                    k,
                    format_args!(
                        "node {} slot {s} holds bad key bits {:?}",
                        node.oid,
                        key.words()
                    ),
                );
            }
        }
        if let Some(ci) = unlink(node.ctx) {
            let c = &k.ctxs[ci];
            let i = i as u32;
            if !c.used || !crate::domain::context::uses_node(c, i) {
                fail(
                    k,
                    format_args!(
                        "node {} marked for context {ci} which does not use it",
                        node.oid
                    ),
                );
            }
        }
    }
    // Pages: marks and frames.
    for p in k.objs.page_slots().iter().filter(|p| p.used) {
        if let Some(ci) = unlink(p.ctx) {
            let c = &k.ctxs[ci];
            if !c.used || k.objs.page_entry(c.fpu_page).oid != p.oid {
                fail(
                    k,
                    format_args!(
                        "page {} marked for context {ci} which does not use it",
                        p.oid
                    ),
                );
            }
        }
    }
    let mut seen = [0u8; 4096];
    for p in k.objs.page_slots().iter().filter(|p| p.used) {
        let Some(f) = p.frame else {
            fail(k, format_args!("cached page {} has no frame", p.oid));
        };
        // A cheap duplicate test: a 32768-bit filter, then an exact check on a hit.
        let h = (f.number() as usize).wrapping_mul(0x9e37_79b9) >> 7 & 0x7fff;
        if seen[h / 8] & (1 << (h % 8)) != 0
            && k.objs
                .page_slots()
                .iter()
                .filter(|q| q.used && q.frame == p.frame)
                .count()
                > 1
        {
            fail(k, format_args!("two pages share {f:?}"));
        }
        seen[h / 8] |= 1 << (h % 8);
    }
    // One context's mappings, in turn.
    let start = (k.invariant_checks % n.max(1) as u64) as usize;
    if let Some(ci) = (start..n).chain(0..start).find(|&ci| k.ctxs[ci].used) {
        check_mappings(k, ci);
    }
    // Contexts: marks, states.
    for ci in 0..n {
        let c = &k.ctxs[ci];
        if !c.used {
            if k.current == Some(ci) || k.fpu_owner == Some(ci) {
                fail(
                    k,
                    format_args!("context {ci} is free but current or FPU owner"),
                );
            }
            continue;
        }
        let me = ci as u16 + 1;
        if k.objs.node_entry(c.root).ctx != me
            || k.objs.node_entry(c.general).ctx != me
            || k.objs.node_entry(c.annex).ctx != me
            || k.objs.page_entry(c.fpu_page).ctx != me
            || (c.answers != 0 && k.objs.node_entry(c.answers - 1).ctx != me)
        {
            fail(
                k,
                format_args!("context {ci}: its objects are not marked as its own"),
            );
        }
        let queued = c.queue() != Queue::None;
        if queued && c.state != RunState::Running {
            fail(
                k,
                format_args!(
                    "context {ci}: queued ({:?}) but state {:?}",
                    c.queue(),
                    c.state
                ),
            );
        }
        if k.current == Some(ci) && queued {
            fail(
                k,
                format_args!("context {ci}: current and queued ({:?})", c.queue()),
            );
        }
    }
    // Queues: acyclic, members say so, each member on one queue.
    let mut on = [0u8; 1024];
    let walk = |k: &Kernel, head: u16, want: Queue, on: &mut [u8; 1024]| {
        let mut l = head;
        let mut steps = 0;
        while let Some(ci) = unlink(l) {
            steps += 1;
            if steps > n || ci >= n {
                fail(k, format_args!("queue {want:?} is cyclic or out of range"));
            }
            if !k.ctxs[ci].used || k.ctxs[ci].queue() != want {
                fail(
                    k,
                    format_args!(
                        "context {ci} on queue {want:?} says {:?}",
                        k.ctxs[ci].queue()
                    ),
                );
            }
            if ci < on.len() {
                on[ci] += 1;
            }
            l = k.ctxs[ci].next();
        }
    };
    walk(k, k.queues.ready_head(), Queue::Ready, &mut on);
    walk(k, k.queues.sleepers(), Queue::Sleeping, &mut on);
    for t in 0..n {
        if k.ctxs[t].used && k.ctxs[t].stalled() != 0 {
            walk(k, k.ctxs[t].stalled(), Queue::Stalled, &mut on);
        }
    }
    for (ci, &count) in on.iter().enumerate().take(n) {
        let queued = k.ctxs[ci].used && k.ctxs[ci].queue() != Queue::None;
        if count != queued as u8 {
            let q = k.ctxs[ci].queue();
            fail(
                k,
                format_args!("context {ci} is on {count} queues but says {q:?}"),
            );
        }
    }
}
