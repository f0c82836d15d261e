//! The Stet nanokernel.
//!
//! Where to look:
//! * boot and bring-up: `arch/x86_64/boot.rs`, `arch/x86_64/start.rs`, `kmain` below
//! * every kernel entry and exit (syscall, interrupts, faults): `arch/x86_64/entry.rs`
//! * the invocation path (IPC): `invoke/` (`fast.rs` first); kernel objects' orders: `kobj/`
//! * objects and the object cache: `obj/` (its index is `crates/oidindex`);
//!   prepared domains and run queues: `domain/`
//! * faults, keepers and segment faults: `trap.rs`, `fault.rs`, `memory.rs`
//!   (segment walks are `crates/segment`)
//! * the scheduler and meters: `sched.rs`; the big bang image: `bigbang.rs`
//! * the single-level store: `store/` — the checkpoint is `store/snapshot.rs`
//!   (stop the world) and `store/writer/` (`mod.rs` the phases, `log.rs`
//!   write, `commit.rs` commit, `migrate.rs` migrate, `jobs.rs` the disk
//!   requests), restart is `store/boot.rs`; the disk format is
//!   `crates/store`, and `crates/storecheck` holds the store tests' workloads
//! * the only unsafe code: `arch/x86_64/` (physical frames: `phys.rs`)
//! * the second line of defence: `invariants.rs`
//! * test-only code, compiled only with the `testing` feature (the test
//!   kernel, build/stet-kernel-test): the self-tests `selftest.rs`,
//!   `selftest/`, `arch/x86_64/selftest.rs`, and the store's benchmark
//!   measurements `store/bench.rs` (`store/nobench.rs` stands in for it)
//!
//! The kernel follows the interrupt model: one kernel stack per CPU, every
//! trap runs to completion with interrupts off and leaves by resuming some
//! domain. After boot it allocates nothing: every table is sized at boot.
#![no_std]
#![no_main]

mod arch;
mod bigbang;
mod console;
mod domain;
mod fault;
mod invariants;
mod invoke;
mod kernel;
mod kobj;
mod memory;
mod obj;
mod panic;
mod sched;
#[cfg(feature = "testing")]
mod selftest;
mod store;
mod trap;

use arch::start::Platform;
use domain::context::Context;
use kernel::{Kernel, MAX_NAMES, NAME_LEN};
use obj::{Objects, PageEntry, Sizes, SnapPage, Tables};
use stet_store::ckpt::{DirSlot, DIR_ENTRIES};
use store::writer::NodeId;

/// Contexts (prepared domains) the kernel keeps at once: one per 128
/// free frames (a context is about 1.5 KiB: well under 1 % of memory),
/// at least 256, at most 4,096. A UNIX process is two domains (it and
/// its keeper), and unixd holds up to 1,024 processes; with 256 contexts a
/// group of 250 processes woken at once (`unix_killgroup`) held every context ready or stalled, and the
/// reply to a domain outside the cache found no context to load it into
/// (`domain::prepare`: `NoSpace`) and was lost.
fn contexts(free: usize) -> usize {
    (free / 128).clamp(256, 4096)
}

/// Second half of boot: sizes and builds the kernel's tables from the
/// memory map, then seals the boot allocator.
fn kmain(mut p: Platform) -> Kernel {
    let config = p.config;
    if config.unknown > 0 {
        kprintln!(
            "boot: {} unrecognised command-line word(s) ignored",
            config.unknown
        );
    }
    // A user's kernel has no self-tests and no benchmark measurements: it
    // says so rather than silently booting as if it had done them.
    #[cfg(not(feature = "testing"))]
    for w in config.testing_words() {
        kprintln!("boot: {w} needs a kernel built with the testing feature; ignored");
    }
    // Every table is sized here, from the memory map, and never grows.
    let free = p.free_frames();
    let sizes = Sizes {
        nodes: (free / 8).clamp(1024, 1 << 16),
        pages: free,
    };
    let (nb, pb) = sizes.buckets();
    let nodes = boot_table(p.zeroed(sizes.nodes));
    let pages = boot_table(p.table(sizes.pages, PageEntry::empty));
    let node_buckets = boot_table(p.zeroed(nb));
    let page_buckets = boot_table(p.zeroed(pb));
    let ncontexts = contexts(free);
    let ctxs = boot_table(p.table(ncontexts, Context::empty));
    let lists = [
        sizes.nodes,
        sizes.pages,
        sizes.nodes,
        sizes.pages,
        sizes.nodes,
    ]
    .map(|n| boot_table(p.zeroed(n)));
    let snap = boot_table(p.table(sizes.pages, || SnapPage::EMPTY));
    // The store's tables: a checkpoint holds at most every cached object.
    let dir_n = sizes.nodes + sizes.pages;
    let dir_slots = boot_table(p.zeroed::<DirSlot>(dir_n));
    let stage_n = 2 + dir_n.div_ceil(DIR_ENTRIES) + sizes.nodes.div_ceil(8);
    let stage = boot_table(p.table(stage_n, || None));
    let node_ids = boot_table(p.zeroed::<NodeId>(sizes.nodes));
    let objs = Objects::new(Tables {
        nodes,
        pages,
        node_buckets,
        page_buckets,
        lists,
        snap,
    });
    let disk = p.disk();
    // The frame pool's storage is the last boot allocation; then the boot
    // allocator is sealed and every later request is refused.
    let pool = match p.frame_pool() {
        Ok(pool) => pool,
        Err(e) => fatal(format_args!("frame pool: {e:?}")),
    };
    let used = p.allocated();
    kprintln!(
        "memory: {} frames in the pool ({} MiB), {} KiB used by kernel tables; boot allocator sealed",
        pool.capacity(),
        pool.capacity() >> 8,
        used >> 10
    );
    kprintln!(
        "objects: cache of {} nodes and {} pages, {} contexts",
        sizes.nodes,
        sizes.pages,
        ncontexts
    );
    let mut store = store::Store::volatile(config.ckpt_ms, config.ckpt_trace);
    store.disk = disk;
    store.dir_slots = Some(dir_slots);
    store.w.frames = stage;
    store.w.node_ids = node_ids;
    Kernel {
        config,
        objs,
        store,
        ctxs,
        current: None,
        fpu_owner: None,
        queues: domain::RunQueues::default(),
        pool,
        #[cfg(feature = "testing")]
        bootmem: p.sealed_allocator(),
        ticks: 0,
        wall_base_ns: 0,
        tick_ns: 1_000_000_000 / config.hz as u64,
        names: [(0, [0; NAME_LEN]); MAX_NAMES],
        nnames: 0,
        flushes: 0,
        table_gen: 0,
        targeted_flushes: 0,
        module: p.module,
        user_bases: (0, 0),
        io_open: 0,
        invariant_checks: 0,
        meter_gen: 1,
    }
}

/// Third part of boot, with the kernel installed: self-tests (in the test
/// kernel), the big bang, the first schedule.
fn start(k: &mut Kernel) -> ! {
    #[cfg(feature = "testing")]
    if let Some(t) = k.config.selftest {
        selftest::run(k, t);
    }
    let mark = store::bench::mark(k);
    let opened = store::boot::open(k);
    // The wall clock: the battery clock now, less the time since boot the
    // store restored (which goes on from the checkpoint).
    if let Some(s) = arch::rtc::read_seconds() {
        k.wall_base_ns = (s * 1_000_000_000).saturating_sub(k.now_ns());
    }
    if opened == store::boot::Opened::Restarted {
        store::bench::restarted(k, mark);
        if k.module.take().is_some() {
            kprintln!("boot: the store was restarted; the big bang image is not used");
        }
    } else {
        match k.module.take() {
            Some(m) => bigbang::load(k, m),
            None => kprintln!("boot: no big bang image was supplied"),
        }
        if opened == store::boot::Opened::Fresh {
            // The big bang's objects are dirty: checkpoint 1 makes them
            // the store's first committed state.
            store::request_checkpoint(k);
        }
    }
    sched::schedule(k)
}

/// A boot table, or a fatal error if boot memory ran out.
fn boot_table<T>(t: Result<T, stet_physmem::boot::AllocError>) -> T {
    t.unwrap_or_else(|e| fatal(format_args!("no memory for kernel tables: {e:?}")))
}

/// Reports a fatal boot or kernel error and stops (exit status 35 under QEMU).
pub fn fatal(args: core::fmt::Arguments<'_>) -> ! {
    kprintln!("KERNEL PANIC: {}", args);
    arch::qemu::exit(stet_abi::qemu_exit::FAILURE)
}
