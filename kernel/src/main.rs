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
use obj::{NodeEntry, Objects, PageEntry, Sizes, SnapPage, Tables};
use stet_physmem::pool::FramePool;
use stet_store::ckpt::{DirSlot, DIR_ENTRIES};
use store::writer::NodeId;

/// Contexts (prepared domains) the kernel keeps at once.
const CONTEXTS: usize = 256;

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
    let free = FramePool::frames_in(p.alloc.free_ranges());
    let sizes = Sizes {
        nodes: (free / 8).clamp(1024, 1 << 16),
        pages: free,
    };
    let (nb, pb) = sizes.buckets();
    let mut table = |bytes: usize, align: u64| match p.alloc.alloc(bytes as u64, align) {
        Ok(pa) => pa,
        Err(e) => fatal(format_args!("no memory for kernel tables: {e:?}")),
    };
    let nodes_pa = table(sizes.nodes * size_of::<NodeEntry>(), 16);
    let pages_pa = table(sizes.pages * size_of::<PageEntry>(), 8);
    let nb_pa = table(nb * 4, 8);
    let pb_pa = table(pb * 4, 8);
    let ctx_pa = table(CONTEXTS * size_of::<Context>(), 64);
    let lists_pa = [
        sizes.nodes,
        sizes.pages,
        sizes.nodes,
        sizes.pages,
        sizes.nodes,
    ]
    .map(|n| (table(n * 4, 8), n));
    let snap_pa = table(sizes.pages * size_of::<SnapPage>(), 8);
    // The store's tables: a checkpoint holds at most every cached object.
    let dir_n = sizes.nodes + sizes.pages;
    let dir_pa = table(dir_n * size_of::<DirSlot>(), 8);
    let stage_n = 2 + dir_n.div_ceil(DIR_ENTRIES) + sizes.nodes.div_ceil(8);
    let stage_pa = table(stage_n * 4, 8);
    let ids_pa = table(sizes.nodes * size_of::<NodeId>(), 8);
    let objs = Objects::new(Tables {
        nodes: arch::phys::boot_array(nodes_pa, sizes.nodes),
        pages: arch::phys::boot_array(pages_pa, sizes.pages),
        node_buckets: arch::phys::boot_array(nb_pa, nb),
        page_buckets: arch::phys::boot_array(pb_pa, pb),
        lists: lists_pa.map(|(pa, n)| arch::phys::boot_array(pa, n)),
        snap: arch::phys::boot_array(snap_pa, sizes.pages),
    });
    let ctxs = arch::phys::boot_array::<Context>(ctx_pa, CONTEXTS);
    let disk = arch::virtio_blk::probe(&mut p.alloc);
    // The frame pool's storage is the last boot allocation; then the boot
    // allocator is sealed and every later request is refused.
    let frames = FramePool::frames_in(p.alloc.free_ranges());
    let storage = match p.alloc.alloc(frames as u64 * 4, 8) {
        Ok(pa) => arch::phys::boot_array::<u32>(pa, frames),
        Err(e) => fatal(format_args!("no memory for the frame pool: {e:?}")),
    };
    let used = p.alloc.allocated();
    let pool = match FramePool::new(storage, p.alloc.seal()) {
        Ok(pool) => pool,
        Err(e) => fatal(format_args!("frame pool: {e:?}")),
    };
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
        CONTEXTS
    );
    let mut store = store::Store::volatile(config.ckpt_ms, config.ckpt_trace);
    store.disk = disk;
    store.dir_slots = Some(arch::phys::boot_array(dir_pa, dir_n));
    store.w.frames = arch::phys::boot_array(stage_pa, stage_n);
    store.w.node_ids = arch::phys::boot_array(ids_pa, sizes.nodes);
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
        bootmem: Some(p.alloc),
        ticks: 0,
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

/// Reports a fatal boot or kernel error and stops (exit status 35 under QEMU).
pub fn fatal(args: core::fmt::Arguments<'_>) -> ! {
    kprintln!("KERNEL PANIC: {}", args);
    arch::qemu::exit(stet_abi::qemu_exit::FAILURE)
}
