//! The kernel's state: one structure, reached once per trap. Every table in
//! it is a cache of nodes and pages, sized at boot.

use crate::arch::kcell::KCell;
use crate::arch::phys::FramePool;
use crate::domain::context::Context;
use crate::domain::RunQueues;
use crate::obj::{Miss, Objects};
use crate::store::Store;
use stet_kconfig::Config;
use stet_keys::Key;

/// Longest domain name kept for reports.
pub const NAME_LEN: usize = 24;
/// Most named domains (names come from the big bang image; reports only).
pub const MAX_NAMES: usize = 64;

/// Everything the kernel keeps. Fixed size; nothing in it grows after boot.
pub struct Kernel {
    /// The command-line configuration.
    pub config: Config,
    /// The object cache.
    pub objs: Objects,
    /// Where objects come from and go to (the disk).
    pub store: Store,
    /// The context cache (prepared domains).
    pub ctxs: &'static mut [Context],
    /// The domain on the CPU (whose frame the entry paths save into).
    pub current: Option<usize>,
    /// The domain whose FPU state is in the CPU's registers.
    pub fpu_owner: Option<usize>,
    /// The ready queue and the sleepers (only `domain` links and unlinks).
    pub queues: RunQueues,
    /// Free physical frames (page objects and page tables).
    pub pool: FramePool<'static>,
    /// The boot allocator, sealed: kept to show it refuses (the `alloc`
    /// self-test, in the test kernel only).
    #[cfg(feature = "testing")]
    pub bootmem: Option<stet_physmem::boot::BootAllocator>,
    /// Timer interrupts taken.
    pub ticks: u64,
    /// The wall clock (ns since 1970) less `now_ns`: 0 when unknown
    /// (`sleep` `NOW`, `SET_WALL`).
    pub wall_base_ns: u64,
    /// Nanoseconds per tick.
    pub tick_ns: u64,
    /// Domain names for reports: (root oid, name).
    pub names: [(u64, [u8; NAME_LEN]); MAX_NAMES],
    /// Names in use.
    pub nnames: usize,
    /// Times all hardware page tables were discarded.
    pub flushes: u64,
    /// The last page-table generation handed out (`Context::tgen`).
    pub table_gen: u32,
    /// Discards of one context's tables because an object it mapped
    /// changed (the rest keep theirs).
    pub targeted_flushes: u64,
    /// The `fs` and `gs` bases loaded in the CPU.
    pub user_bases: (u64, u64),
    /// The ports open in the TSS I/O bitmap (`Context::io` form: the
    /// range of the last domain dispatched that had one; 0: none).
    pub io_open: u64,
    /// Bumped whenever a meter may have run out or changed (a tick emptied
    /// one, or a node was written through a key): a context whose meter
    /// chain was checked at this generation need not be checked again.
    pub meter_gen: u64,
    /// Times the invariant walker ran.
    pub invariant_checks: u64,
    /// The big bang image until it is loaded.
    pub module: Option<&'static [u8]>,
}

/// The one instance, installed by `kmain` once boot has built it. Reached
/// only through trap entry points (`arch`).
pub static KERNEL: KCell<Option<Kernel>> = KCell::new(None);

impl Kernel {
    /// The node slot a key designates (faulting it in; checks the version).
    #[inline]
    pub fn node_of(&mut self, key: Key) -> Result<u32, Miss> {
        self.objs.node_of(key, &mut self.store)
    }

    /// The page slot a page key designates (faulting it in).
    #[inline]
    pub fn page_of(&mut self, key: Key) -> Result<u32, Miss> {
        self.objs.page_of(key, &mut self.pool, &mut self.store)
    }

    /// The node slot of node `oid` (faulting it in).
    pub fn node(&mut self, oid: u64) -> Result<u32, Miss> {
        self.objs.node(oid, &mut self.store)
    }

    /// The page slot of page `oid` (faulting it in).
    pub fn page(&mut self, oid: u64) -> Result<u32, Miss> {
        self.objs.page(oid, &mut self.pool, &mut self.store)
    }

    /// Page slot `i`'s frame, to write it (copy on write for the
    /// checkpoint; marks it dirty).
    #[inline]
    pub fn page_write(&mut self, i: u32) -> Result<crate::arch::phys::FrameNumber, Miss> {
        self.objs.page_write(i, &mut self.pool)
    }

    /// Page slot `i` as of `version`, to write its contents (a journal
    /// record, the big bang image: `Objects::page_restore`).
    pub fn page_restore(
        &mut self,
        i: u32,
        version: u32,
    ) -> Result<crate::arch::phys::FrameNumber, Miss> {
        self.objs.page_restore(i, version, &mut self.pool)
    }

    /// The name of the domain rooted at `oid` ("?" if unnamed).
    pub fn name_of(&self, oid: u64) -> &str {
        self.names[..self.nnames]
            .iter()
            .find(|(o, _)| *o == oid)
            .map_or("?", |(_, n)| {
                let len = n.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
                core::str::from_utf8(&n[..len]).unwrap_or("?")
            })
    }

    /// The root oid of context `ci`.
    pub fn ctx_oid(&self, ci: usize) -> u64 {
        self.objs.node_entry(self.ctxs[ci].root).oid
    }

    /// The name of context `ci`'s domain.
    pub fn ctx_name(&self, ci: usize) -> &str {
        self.name_of(self.ctx_oid(ci))
    }

    /// Nanoseconds since boot (tick resolution).
    pub fn now_ns(&self) -> u64 {
        self.ticks * self.tick_ns
    }

    /// The wall clock, ns since 1970 (0: unknown).
    pub fn wall_ns(&self) -> u64 {
        if self.wall_base_ns == 0 {
            0
        } else {
            self.wall_base_ns + self.now_ns()
        }
    }
}
