//! Prepared domains: the context cache (KeyKOS/EROS "process table").
//!
//! A domain *is* its nodes (root, general keys, registers annex) and its FPU
//! page. To run one, the kernel loads it into a context: registers in the
//! layout the entry paths save, plus the cache slots of its parts. The
//! context is then the truth, and the nodes are stale until
//! [`write_back`]; every node and page that belongs to a prepared domain is
//! marked, so that anyone touching it through a key first writes the
//! domain back (and reloads it after a change).

use crate::arch::entry::{TrapFrame, FRESH_VECTOR};
use crate::arch::fpu::{self, FpuState};
use crate::arch::paging::UserRoot;
use crate::arch::phys;
use crate::arch::phys::FramePool;
use crate::obj::{Backing, Miss, Objects};
use stet_abi::domain::answers::NO_LIMIT;
use stet_abi::domain::RunState;
use stet_abi::domain::{root, state, Reg, NREGS};
use stet_keys::{Key, KeyType};
use zerocopy::FromZeros;

/// A queue link: context index + 1, 0 for none.
pub type Link = u16;

/// Where a context is queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, FromZeros)]
#[repr(u8)]
pub enum Queue {
    /// Not queued (available, waiting, current, or cannot run).
    #[default]
    None = 0,
    /// On the ready queue.
    Ready,
    /// Stalled on another domain (`stalled_on`).
    Stalled,
    /// Sleeping until `wake_at`.
    Sleeping,
}

/// The node (of size 1: 16 pages) where a context's last walk found its
/// page: a fault on another of those 16 pages reads the node's slot
/// instead of walking from the root. Valid while `tgen` is the context's:
/// every node the walk passed is marked as mapped by the context, so a
/// change to any of them (but filling a void slot, which the cache reads
/// afresh) discards its tables and changes its `tgen`.
#[derive(Clone, Copy, Default, FromZeros)]
pub struct LeafCache {
    /// The context's `tgen` when it was filled.
    pub tgen: u32,
    /// The node's cache slot and identity.
    pub node: u32,
    pub oid: u64,
    /// The first address of its 16 pages.
    pub base: u64,
    /// A key above it is read-only; it is red (slot 15 its keeper).
    pub ro: bool,
    pub red: bool,
    /// Filled at all.
    pub valid: bool,
}

/// One prepared domain.
#[repr(C)]
pub struct Context {
    /// User registers (the entry paths save here while it runs).
    pub frame: TrapFrame,
    /// FPU/SSE/AVX registers.
    pub fpu: FpuState,
    /// `fs` base.
    pub fs_base: u64,
    /// `gs` base.
    pub gs_base: u64,
    /// Pending fault code (0: none) and its information.
    pub fault_code: u64,
    /// Fault information (an address, or vector and error code).
    pub fault_info: u64,
    /// Hardware page tables (`None`: none built yet).
    pub tables: Option<UserRoot>,
    /// Which generation of page tables it has: a new value (from the
    /// kernel's counter) each time its tables are discarded, so a record
    /// "context c mapped this object in generation g" is stale once
    /// c's `tgen` is not g (`obj::Mappers`).
    pub tgen: u32,
    /// The leaf node of its last page fault's walk (`memory::walk`).
    pub leaf: LeafCache,
    /// A walk met the space's root node again below the root since these
    /// tables were built: a change to one of the root's slots may then
    /// reach mappings under other slots, so it discards every entry the
    /// root's records name (`memory::discard_mappers`).
    pub root_below: bool,
    /// Cache slots of the root node, general keys node, annex, FPU page.
    pub root: u32,
    /// General keys node slot.
    pub general: u32,
    /// Annex node slot.
    pub annex: u32,
    /// FPU page slot.
    pub fpu_page: u32,
    /// Run state (`stet_abi::domain::state`).
    pub state: RunState,
    /// Whether this context is in use.
    pub used: bool,
    /// Which queue it is on.
    pub(in crate::domain) queue: Queue,
    /// Flags (`state::STOPPED`, `state::FOREIGN`).
    pub flags: u32,
    /// Next on its queue.
    pub(in crate::domain) next: Link,
    /// First domain stalled on this one.
    pub(in crate::domain) stalled: Link,
    /// The first of the domains last woken from this one's stall list: it
    /// gets this domain first (see `domain::may_deliver`).
    pub(in crate::domain) reserved: Link,
    /// Time to wake (sleeping), ns since boot.
    pub wake_at: u64,
    /// Ticks charged while it ran.
    pub ticks: u64,
    /// Index into the kernel's domain-name table + 1 (0: unnamed).
    pub name: u16,
    /// The meter generation at which its meter chain last had time (0: never).
    pub meter_ok: u64,
    /// Its I/O ports (root slot 12): `base << 32 | count`, 0 for none.
    pub io: u64,
    /// Its answers node's cache slot + 1 (0: none), read at each foreign
    /// `syscall` (`stet_abi::domain::answers`).
    pub answers: u32,
    /// The limit rule: the first call number it answers (`NO_LIMIT`:
    /// none), the answer, how many calls it has answered.
    pub limit: u64,
    pub limit_answer: u64,
    pub limited: u64,
}

impl crate::arch::entry::HasFrame for Context {
    #[inline(always)]
    fn frame(&self) -> &TrapFrame {
        &self.frame
    }
}

impl Context {
    /// A free context (what the table starts with).
    pub fn empty() -> Context {
        Context {
            frame: TrapFrame::ZERO,
            fpu: FpuState::new_zeroed(),
            fs_base: 0,
            gs_base: 0,
            fault_code: 0,
            fault_info: 0,
            tables: None,
            tgen: 0,
            leaf: LeafCache::new_zeroed(),
            root_below: false,
            root: 0,
            general: 0,
            annex: 0,
            fpu_page: 0,
            state: RunState::Available,
            used: false,
            queue: Queue::None,
            flags: 0,
            next: 0,
            stalled: 0,
            reserved: 0,
            wake_at: 0,
            ticks: 0,
            name: 0,
            meter_ok: 0,
            io: 0,
            answers: 0,
            limit: 0,
            limit_answer: 0,
            limited: 0,
        }
    }
}

/// The `Context::io` word of the key in a domain's I/O-port slot (anything
/// but an ioports key opens nothing).
pub fn io_word(k: Key) -> u64 {
    k.ioports_parts()
        .map_or(0, |(base, count)| (base as u64) << 32 | count as u64)
}

/// Why a domain could not be prepared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrepareError {
    /// A part is missing or of the wrong type; the root slot that is bad.
    Malformed(usize),
    /// The object cache is full.
    NoSpace,
    /// A part already belongs to another prepared domain (context index):
    /// two domains built on shared nodes take turns being prepared.
    Shared(usize),
}

fn number(k: Key) -> u64 {
    k.number_value().map_or(0, |(lo, _)| lo)
}

/// The annex slot of each general register (`Reg` order).
const ANNEX_REGS: usize = 16;

impl Context {
    /// Which queue it is on (changed only by `domain`'s queue functions).
    #[inline(always)]
    pub fn queue(&self) -> Queue {
        self.queue
    }

    /// The next context on its queue (0: the last).
    #[inline(always)]
    pub fn next(&self) -> Link {
        self.next
    }

    /// The first domain stalled on this one (0: none).
    #[inline(always)]
    pub fn stalled(&self) -> Link {
        self.stalled
    }

    /// The first of the domains last woken from its stall list, which
    /// gets this domain first (0: none; see `domain::may_deliver`).
    #[inline(always)]
    pub fn reserved(&self) -> Link {
        self.reserved
    }

    /// Reads register `r` from the frame.
    pub fn reg(&self, r: usize) -> u64 {
        let f = &self.frame;
        match r {
            0 => f.rax,
            1 => f.rbx,
            2 => f.rcx,
            3 => f.rdx,
            4 => f.rsi,
            5 => f.rdi,
            6 => f.rbp,
            7 => f.rsp,
            8 => f.r8,
            9 => f.r9,
            10 => f.r10,
            11 => f.r11,
            12 => f.r12,
            13 => f.r13,
            14 => f.r14,
            15 => f.r15,
            16 => f.rip,
            17 => f.rflags(),
            18 => self.fs_base,
            19 => self.gs_base,
            _ => 0,
        }
    }

    /// Writes register `r`; `rflags` keeps only user bits (IF always set),
    /// and `rip`/`rsp`/bases are checked canonical by [`Context::set_regs`].
    pub fn set_reg(&mut self, r: usize, v: u64) {
        let f = &mut self.frame;
        match r {
            0 => f.rax = v,
            1 => f.rbx = v,
            2 => f.rcx = v,
            3 => f.rdx = v,
            4 => f.rsi = v,
            5 => f.rdi = v,
            6 => f.rbp = v,
            7 => f.rsp = v,
            8 => f.r8 = v,
            9 => f.r9 = v,
            10 => f.r10 = v,
            11 => f.r11 = v,
            12 => f.r12 = v,
            13 => f.r13 = v,
            14 => f.r14 = v,
            15 => f.r15 = v,
            16 => f.rip = v,
            17 => f.set_rflags(v),
            18 => self.fs_base = v,
            19 => self.gs_base = v,
            _ => {}
        }
        // Registers written from outside: leave by iretq, which restores
        // all of them (sysret would take rcx and r11 for rip and rflags).
        f.vector = FRESH_VECTOR;
    }

    /// Sets all registers from a register block. Non-canonical `rip` or
    /// segment bases are refused (they would fault in the kernel's exit
    /// path rather than in the domain).
    pub fn set_regs(&mut self, regs: &[u64; NREGS]) -> Result<(), ()> {
        let canonical = |v: u64| v < 0x0000_8000_0000_0000;
        if !canonical(regs[Reg::Rip as usize])
            || !canonical(regs[Reg::FsBase as usize])
            || !canonical(regs[Reg::GsBase as usize])
        {
            return Err(());
        }
        for (i, v) in regs.iter().enumerate() {
            self.set_reg(i, *v);
        }
        Ok(())
    }

    /// The register block.
    pub fn regs(&self) -> [u64; NREGS] {
        // Spelled out (not `from_fn(reg)`): every foreign system call
        // copies this block to its keeper.
        let f = &self.frame;
        [
            f.rax,
            f.rbx,
            f.rcx,
            f.rdx,
            f.rsi,
            f.rdi,
            f.rbp,
            f.rsp,
            f.r8,
            f.r9,
            f.r10,
            f.r11,
            f.r12,
            f.r13,
            f.r14,
            f.r15,
            f.rip,
            f.rflags(),
            self.fs_base,
            self.gs_base,
        ]
    }
}

/// The node slot a node key in `root_keys[slot]` designates.
fn part(
    objs: &mut Objects,
    store: &mut dyn Backing,
    k: Key,
    slot: usize,
) -> Result<u32, PrepareError> {
    if k.key_type() != KeyType::Node {
        return Err(PrepareError::Malformed(slot));
    }
    match objs.node_of(k, store) {
        Ok(i) => Ok(i),
        Err(Miss::Void) => Err(PrepareError::Malformed(slot)),
        Err(Miss::NoSpace | Miss::Damaged) => Err(PrepareError::NoSpace),
    }
}

/// The answers node a domain's root slot names: none unless it is a node
/// key to an existing node (answers only spare the keeper work, so a
/// destroyed or damaged one is simply none).
fn answers_part(
    objs: &mut Objects,
    store: &mut dyn Backing,
    k: Key,
) -> Result<Option<u32>, PrepareError> {
    if k.key_type() != KeyType::Node {
        return Ok(None);
    }
    match objs.node_of(k, store) {
        Ok(i) => Ok(Some(i)),
        Err(Miss::Void | Miss::Damaged) => Ok(None),
        Err(Miss::NoSpace) => Err(PrepareError::NoSpace),
    }
}

/// The limit rule a root's `LIMIT` slot states: `(limit, answer)`.
pub fn limit_rule(k: Key) -> (u64, u64) {
    k.number_value()
        .map_or((NO_LIMIT, 0), |(answer, limit)| (limit as u64, answer))
}

/// Loads the domain rooted at node slot `rootslot` into `c` (index `ci`).
pub fn load(
    c: &mut Context,
    ci: usize,
    objs: &mut Objects,
    pool: &mut FramePool<'_>,
    store: &mut dyn Backing,
    rootslot: u32,
) -> Result<(), PrepareError> {
    let rk = objs.node_entry(rootslot).keys;
    let general = part(objs, store, rk[root::GENERAL], root::GENERAL)?;
    let annex = part(objs, store, rk[root::ANNEX], root::ANNEX)?;
    let fk = rk[root::FPU];
    if fk.key_type() != KeyType::Page || fk.is_ro() {
        return Err(PrepareError::Malformed(root::FPU));
    }
    let fpu_page = match objs.page_of(fk, pool, store) {
        Ok(i) => i,
        Err(Miss::Void) => return Err(PrepareError::Malformed(root::FPU)),
        Err(Miss::NoSpace | Miss::Damaged) => return Err(PrepareError::NoSpace),
    };
    if objs.page_entry(fpu_page).ckpt != 0 {
        // A prepared domain's FPU page is written in place at every
        // write-back: the checkpoint writer gets its copy now.
        objs.page_write(fpu_page, pool)
            .map_err(|_| PrepareError::NoSpace)?;
    }
    if general == rootslot || annex == rootslot || general == annex {
        return Err(PrepareError::Malformed(root::ANNEX));
    }
    let answers = answers_part(objs, store, rk[root::ANSWERS])?;
    let mark = ci as u16 + 1;
    for m in [
        objs.node_entry(rootslot).ctx,
        objs.node_entry(general).ctx,
        objs.node_entry(annex).ctx,
        objs.page_entry(fpu_page).ctx,
        answers.map_or(0, |a| objs.node_entry(a).ctx),
    ] {
        if m != 0 && m != mark {
            return Err(PrepareError::Shared(m as usize - 1));
        }
    }
    let (st, flags) = rk[root::STATE].number_value().unwrap_or((0, 0));
    c.state = RunState::from_bits(st & 0xff).unwrap_or(RunState::Available);
    c.fault_code = st >> 8;
    c.flags = flags & state::FLAGS;
    c.fault_info = number(rk[root::FAULT_INFO]);
    c.io = io_word(rk[root::IOPORTS]);
    c.answers = answers.map_or(0, |a| a + 1);
    (c.limit, c.limit_answer) = limit_rule(rk[root::LIMIT]);
    c.limited = number(rk[root::LIMITED]);
    c.frame = TrapFrame::FRESH;
    let ak = objs.node_entry(annex).keys;
    for (r, k) in ak.iter().enumerate().take(ANNEX_REGS) {
        c.set_reg(r, number(*k));
    }
    let rip = number(rk[root::RIP]);
    c.frame.rip = if rip < 0x0000_8000_0000_0000 { rip } else { 0 };
    c.set_reg(Reg::Rflags as usize, number(rk[root::RFLAGS]));
    let canon = |v: u64| if v < 0x0000_8000_0000_0000 { v } else { 0 };
    c.fs_base = canon(number(rk[root::FS_BASE]));
    c.gs_base = canon(number(rk[root::GS_BASE]));
    let Some(frame) = objs.frame(fpu_page) else {
        return Err(PrepareError::Malformed(root::FPU));
    };
    phys::read_frame(frame, 0, &mut c.fpu.0);
    fpu::sanitize(&mut c.fpu);
    c.meter_ok = 0;
    c.leaf.valid = false;
    c.root = rootslot;
    c.general = general;
    c.annex = annex;
    c.fpu_page = fpu_page;
    c.used = true;
    objs.set_ctx(rootslot, mark);
    objs.set_ctx(general, mark);
    objs.set_ctx(annex, mark);
    objs.set_page_ctx(fpu_page, mark);
    if let Some(a) = answers {
        objs.set_ctx(a, mark);
    }
    Ok(())
}

/// Writes the context's state into the domain's nodes and FPU page. The
/// caller saves the CPU's FPU registers into `c.fpu` first if they are live.
pub fn write_back(c: &Context, objs: &mut Objects) {
    let st = Key::number(c.state.bits() | c.fault_code << 8, c.flags);
    let r = &mut objs.node_mut(c.root).keys;
    r[root::STATE] = st;
    r[root::RIP] = Key::number(c.frame.rip, 0);
    r[root::RFLAGS] = Key::number(c.frame.rflags(), 0);
    r[root::FS_BASE] = Key::number(c.fs_base, 0);
    r[root::GS_BASE] = Key::number(c.gs_base, 0);
    r[root::FAULT_INFO] = Key::number(c.fault_info, 0);
    if c.limit != NO_LIMIT {
        r[root::LIMITED] = Key::number(c.limited, 0);
    }
    let a = &mut objs.node_mut(c.annex).keys;
    for (i, slot) in a.iter_mut().enumerate().take(ANNEX_REGS) {
        *slot = Key::number(c.reg(i), 0);
    }
    // A prepared domain's FPU page is never left to the checkpoint writer
    // (the snapshot copies it at once), so it can be written in place.
    objs.page_dirty(c.fpu_page);
    if let Some(f) = objs.frame(c.fpu_page) {
        phys::write_frame(f, 0, &c.fpu.0);
    }
}

/// Clears the marks that tie the domain's objects to context `c`.
pub fn unmark(c: &Context, objs: &mut Objects) {
    objs.set_ctx(c.root, 0);
    objs.set_ctx(c.general, 0);
    objs.set_ctx(c.annex, 0);
    objs.set_page_ctx(c.fpu_page, 0);
    if c.answers != 0 {
        objs.set_ctx(c.answers - 1, 0);
    }
}

/// Whether node slot `i` is one of context `c`'s parts.
pub fn uses_node(c: &Context, i: u32) -> bool {
    c.root == i || c.general == i || c.annex == i || c.answers == i + 1
}
