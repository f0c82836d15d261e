//! `fork`: the keeper replicates itself with its process (KeyNIX).
//!
//! * **The child process** is a new domain from a new bank whose tree has
//!   the parent's exact shape (same shadow indices, so the child keeper's
//!   shadow is a plain copy): every page is the same key, the process's
//!   own pages read-only in both and shared copy-on-write (`Space::
//!   share_own_pages`; unixd counts each page's holders).
//! * **The child keeper** is a new domain that shares this keeper's text,
//!   gets copies of its data and heap pages (the heap holds the whole
//!   `Keeper`, `stet_rt::carry`) and a fresh stack, and starts at `_start`
//!   with `rdi` = `FORKED | pid`. Its general keys are filled in here.
//!
//! Both come from one new bank (a sub-bank of the keepers' bank), the
//! child process's from a sub-bank of that, so reaping the child is one
//! `DESTROY`. During the build the keeper's rarely used keys (console,
//! sleep, discrim, unixd) wait in the `KEYS` node and their slots serve as
//! scratch.

use crate::slots::{keys, DIR, EXEC, KEYS, LEAF, PBANK, PROC, T, T2, T3, UNIXD};
use crate::Keeper;
use stet_factory::plan::{self, Segment, Source, Step};
use stet_keys::KeyType;
use stet_rt::abi::code;
use stet_rt::abi::domain::{state, Reg, NREGS, REGS_SIZE};
use stet_rt::abi::layout::{HEAP_START, STACK_TOP};
use stet_rt::abi::order::{discrim, domain, node, page, segment};
use stet_rt::bank;
use stet_rt::key::{Msg, Slot};
use stet_unix::layout::{EXEC_SLOT, WINDOW_SLOT};
use stet_unix::proto;
use stet_unix::shadow::{self, page as pf};
use stet_unix::sys::errno::{EAGAIN, ENOMEM};
use stet_unix_personality::keydir::{self, fetch, swap, Code, KeyDir};

/// `rdi` of a child keeper: this bit and its pid.
pub const FORKED: u64 = 1 << 63;
/// With [`FORKED`]: a spare woken by `BECOME`, which starts its process
/// itself ([`adopt`]).
pub const REUSED: u64 = 1 << 60;
/// With [`REUSED`]: the spare's own process was kept and has become the
/// child (the process already has the keeper as its keeper).
pub const WARM: u64 = 1 << 59;
/// Stack pages a child keeper gets (its `execve` buffers need about 80 KiB).
const KEEPER_STACK_PAGES: u64 = 48;

// Slots while forking (their usual keys wait in `KEYS`).
const CPB: Slot = 1; // the child process's bank
const CDIR: Slot = 2; // the child's directory root
const CCACHE: Slot = 3; // the child's directory cache
const X: Slot = 4; // scratch for the child's directory
const CPROC: Slot = 6; // the child process's domain key
const KB: Slot = 7; // the child keeper's bank

/// Where the stashed keys go in the `KEYS` node.
const STASH: u64 = 8;
/// The child's forwarder to unixd, its process's bank and its directory
/// root, in the `KEYS` node while forking.
const CHILD_UNIXD: u64 = 12;
const CHILD_PBANK: u64 = 13;
const CHILD_DIR: u64 = 14;
/// The segment key of the 16 text pages `own_page` last walked to.
const TEXT_BLOCK: u64 = 15;
/// The segment key of the 256-page node above them.
const TEXT_PARENT: u64 = 6;

/// Where `own_page` last walked (keys in `KEYS`' `TEXT_BLOCK` and
/// `TEXT_PARENT`): the block's number, the first page of its parent.
struct OwnWalk {
    block: u64,
    parent: Option<u64>,
}

fn ok(a: stet_rt::key::Answer) -> Result<stet_rt::key::Answer, Code> {
    if a.code == code::Code::Ok {
        Ok(a)
    } else {
        Err(a.code)
    }
}

fn make(k: Slot, order: u64, w: [u64; 4], into: Slot) -> Result<(), Code> {
    ok(Msg::new(k, order).words(w).recv([into, 0, 0, 0]).call()).map(|_| ())
}

/// The type of the key in `s`, through the discrim key in `d`.
fn key_type(d: Slot, s: Slot) -> u64 {
    Msg::new(d, discrim::CLASSIFY).keys([s, 0, 0, 0]).call().w[0]
}

impl Keeper {
    /// `clone` of a process with a stack (`posix_spawn`: `CLONE_VM |
    /// CLONE_VFORK`): a `fork` whose child starts on that stack; `vm`:
    /// sharing this process's memory (`Space::share_own_pages`); `vfork`:
    /// this process will wait for the child's `execve` or end
    /// (`Keeper::vfork_wait`).
    pub fn fork_with_stack(
        &mut self,
        regs: &[u64; NREGS],
        stack: u64,
        vm: bool,
        vfork: bool,
    ) -> Result<u64, i64> {
        let mut r = *regs;
        if stack != 0 {
            r[stet_rt::abi::domain::Reg::Rsp as usize] = stack;
        }
        self.fork_as(&r, vm, vfork)
    }

    /// `fork` (and `clone` with only `SIGCHLD`): → the child's pid; the
    /// child process resumes with 0. A thread's `fork` copies that thread
    /// only (the child has one).
    pub fn fork(&mut self, regs: &[u64; NREGS]) -> Result<u64, i64> {
        self.fork_as(regs, false, false)
    }

    /// `fork`, or with `vm` a child that shares this process's memory
    /// until its `execve` or end, while this process waits (`vfork`).
    fn fork_as(&mut self, regs: &[u64; NREGS], vm: bool, vfork: bool) -> Result<u64, i64> {
        // Pages parked by `mprotect(PROT_NONE)` are copied like the rest,
        // then parked again on both sides.
        // The child keeper parks its own before its process runs
        // (`fork_parked`: the child's process is started by its keeper).
        let parked = self.space.any_parked();
        if parked {
            self.space.unpark(0, stet_unix::layout::USER_END);
        }
        self.fork_parked = parked;
        let r = self.fork_inner(regs, vm, vfork);
        self.fork_parked = false;
        if parked {
            self.space.park_none();
        }
        r
    }

    fn fork_inner(&mut self, regs: &[u64; NREGS], vm: bool, vfork: bool) -> Result<u64, i64> {
        self.drop_kept();
        // One memory: the pages the child must see written are made
        // this process's own writable ones first (`Space::own_for_vm`).
        if vm {
            self.space
                .own_for_vm()
                .map_err(|_| stet_unix::sys::errno::ENOMEM)?;
        }
        // The child's pid and its references to the open files.
        let mut fids = [0u8; 4 * (crate::fds::MAX_FDS + 1 + crate::space::MAX_FILES)];
        let mut n = 0;
        let open = self.fds.iter().filter(|f| f.fid != crate::fds::NONE);
        for fid in open.map(|f| f.fid).chain(self.space.file_fids()) {
            fids[n..n + 4].copy_from_slice(&fid.to_le_bytes());
            n += 4;
        }
        fids[n..n + 4].copy_from_slice(&self.cwd.to_le_bytes());
        n += 4;
        let a = Msg::new(UNIXD, proto::FORK)
            .words([
                self.nproc_limit(),
                (vfork as u64 * proto::FORK_VFORK) | self.fork_flags,
                0,
                0,
            ])
            .string(&fids[..n])
            .recv([T3, 0, 0, 0])
            .call();
        crate::signals::note(a.w[proto::INTR_WORD]);
        let v = a.w[0] as i64;
        if !a.ok() || v < 0 {
            return Err(if v < 0 { -v } else { EAGAIN });
        }
        let pid = a.w[0];
        // Copy-on-write: the parent's own pages become shared, read-only
        // in both, before anything is built (slot MEMBANK is still the
        // bank here).
        let copied = self.space.share_own_pages(vm);
        let mut stashed = 0;
        if swap(KEYS, CHILD_UNIXD, T3, 0).is_ok() {
            while stashed < 4 && swap(KEYS, STASH + stashed as u64, stashed + 1, 0).is_ok() {
                stashed += 1;
            }
        }
        let r = if stashed == 4 {
            self.build_child(pid, regs, copied)
        } else {
            Err(code::Code::NoSpace.into())
        };
        // The stashed keys come back whatever happened.
        for i in 0..stashed {
            let _ = fetch(KEYS, STASH + i as u64, i + 1);
        }
        // MEMBANK served as the child keeper's bank.
        let _ = fetch(KEYS, keys::BANK, crate::slots::MEMBANK);
        // (The spare, if there was one, is the child's keeper now.)
        for s in [CHILD_UNIXD, CHILD_PBANK, CHILD_DIR, keys::SPARE] {
            let _ = swap(KEYS, s, 0, 0);
        }
        match r {
            Ok(()) => Ok(pid),
            Err(c) => {
                stet_rt::println!("unix: pid {}: fork failed (code {c})", self.pid);
                let _ = bank::destroy(KB);
                // The references the child was given go back.
                for f in fids[..n].chunks_exact(4) {
                    let fid = u32::from_le_bytes([f[0], f[1], f[2], f[3]]) as u64;
                    crate::signals::tell_unixd(Msg::new(UNIXD, proto::CLOSE).w0(fid));
                }
                // The child never ran: it goes as if it never was (Linux
                // leaves no child to reap after a failed fork).
                crate::signals::tell_unixd(Msg::new(UNIXD, proto::UNFORK).w0(pid));
                Err(ENOMEM)
            }
        }
    }

    /// `copied`: the parent's own pages are all copied (not shared), so
    /// the child's tree is a copy of this one that a spare's kept process
    /// can be (`Keeper::spare_kept`).
    fn build_child(&mut self, pid: u64, regs: &[u64; NREGS], copied: bool) -> Result<(), Code> {
        // Banks: the child keeper's (the spare's, if there is one), and
        // its process's under it. From here a failure destroys `KB`.
        let reuse = core::mem::take(&mut self.spare);
        let kept = core::mem::take(&mut self.spare_kept);
        let moved = core::mem::take(&mut self.spare_moved);
        // The spare's kept process is a copy of this process's tree as it
        // is now: only its own pages' bytes and the registers are new.
        let warm = reuse && copied && kept == Some(self.space.tree.generation());
        if reuse {
            fetch(KEYS, keys::SPARE, T)?;
            fetch(T, keys::OWN_BANK, KB)?;
        } else {
            fetch(KEYS, keys::BANK, T)?;
            bank::create_sub(T, u64::MAX, u64::MAX, KB)?;
        }
        if warm {
            fetch(T, keys::KEPT_PROC, CPROC)?;
            fetch(T, keys::KEPT_PBANK, CPB)?;
            fetch(T, keys::KEPT_DIR, CDIR)?;
            self.rewrite_own_pages()?;
        } else {
            if reuse && kept.is_some() && fetch(T, keys::KEPT_PBANK, CPB).is_ok() {
                // Kept, but this tree has changed since: it goes.
                let _ = bank::destroy(CPB);
            }
            self.build_process()?;
        }
        self.copy_fpu()?;

        // It resumes after the `fork` with 0.
        let mut r = *regs;
        r[Reg::Rax as usize] = 0;
        let mut b = [0u8; REGS_SIZE];
        for (c, v) in b.chunks_exact_mut(8).zip(r) {
            c.copy_from_slice(&v.to_le_bytes());
        }
        ok(Msg::new(CPROC, domain::SET_REGS).string(&b).call())?;

        // The child keeper starts from a copy of this state (and marks the
        // pages copied from its process's bank itself: `mark_copies_local`).
        self.note_fork(pid, copied);
        if reuse {
            let woken = self.wake_spare(pid, warm, !warm || moved);
            // The spare starts its process itself (`adopt`).
            return woken;
        }
        // The child keeper (CPB and CDIR are reused for it).
        swap(KEYS, CHILD_PBANK, CPB, 0)?;
        swap(KEYS, CHILD_DIR, CDIR, 0)?;
        self.build_keeper(pid)?;
        // Its keeper starts it itself when it must first park pages or
        // write the child's tid into its memory (`CLONE_CHILD_SETTID`:
        // the child may read it at once).
        if !self.fork_parked && self.clone_child.0 == 0 {
            ok(Msg::new(CPROC, domain::SET_STATE)
                .words([state::RUNNING, state::FOREIGN as u64, 0, 0])
                .call())?;
        }
        Ok(())
    }

    /// What a process kept by child `pid` would be a copy of: this tree
    /// as it is now (if `copied`: see `build_child`).
    fn note_fork(&mut self, pid: u64, copied: bool) {
        self.last_fork = (pid, copied.then(|| self.space.tree.generation()));
    }

    /// The parent's FPU, SSE and AVX state is the child's too (Linux).
    fn copy_fpu(&mut self) -> Result<(), Code> {
        let mut b = [0u8; 4096];
        let a = ok(Msg::new(PROC, domain::GET_FPU).call_into(&mut b))?;
        let n = (a.w[0] as usize).min(b.len());
        ok(Msg::new(CPROC, domain::SET_FPU).string(&b[..n]).call()).map(|_| ())
    }

    /// A warm fork: the parent's writable own pages' bytes over the kept
    /// process's copies of them (the same pages at the same places),
    /// through a segment key to its space; nothing else of it changes. (A
    /// read-only own page changes in neither process without a new key,
    /// which would have changed its tree's generation: its copy is still
    /// a copy.)
    fn rewrite_own_pages(&mut self) -> Result<(), Code> {
        make(CPROC, domain::GET_SPACE, [0; 4], X)?;
        let mut pages = [0u64; 64];
        let mut from = 0u64;
        loop {
            let mut got = 0;
            self.space.tree.pages(from, u64::MAX, |p, _, _, flags| {
                if got < pages.len()
                    && flags & (pf::OWNED | pf::WRITABLE) == pf::OWNED | pf::WRITABLE
                {
                    pages[got] = p;
                    got += 1;
                }
            });
            for &p in &pages[..got] {
                ok(Msg::new(X, segment::WRITE)
                    .w0(p * 4096)
                    .raw_string(self.space.win.addr(p * 4096), 4096)
                    .call())?;
                from = p + 1;
            }
            if got < pages.len() {
                return Ok(());
            }
        }
    }

    /// A cold fork: the child process's bank (under `KB`), domain and tree
    /// of the parent's shape, its own pages copied and the rest shared.
    fn build_process(&mut self) -> Result<(), Code> {
        bank::create_sub(KB, u64::MAX, u64::MAX, CPB)?;
        bank::alloc_node(CPB, CDIR)?;
        // Nothing else writes `X` while the tree is built.
        let mut cdir = KeyDir::private_scratch(keydir::Slots {
            root: CDIR,
            bank: CPB,
            scratch: X,
            cache: CCACHE,
        });

        // The child process's domain.
        bank::alloc_node(CPB, T)?;
        bank::alloc_node(CPB, T2)?;
        bank::alloc_node(CPB, CPROC)?;
        bank::alloc_page(CPB, X)?;
        ok(Msg::new(T, node::MAKE_DOMAIN)
            .keys([T2, CPROC, X, 0])
            .recv([CPROC, 0, 0, 0])
            .call())?;
        fetch(KEYS, keys::METER, T)?;
        ok(Msg::new(CPROC, domain::SET_METER).keys([T, 0, 0, 0]).call())?;

        // Its tree: the parent's shape, node by node (a parent before its
        // children), then every page.
        bank::alloc_node(CPB, T)?;
        cdir.put(shadow::ROOT, T)?;
        make(T, node::MAKE_SEGMENT, [crate::space::ROOT_LSS, 0, 0, 0], T)?;
        ok(Msg::new(CPROC, domain::SET_SPACE).keys([T, 0, 0, 0]).call())?;
        let mut built = Ok(());
        self.space.tree.parents_first(|idx, level, parent, slot| {
            if built.is_ok() {
                built = (|| {
                    bank::alloc_node(CPB, T)?;
                    cdir.put(idx, T)?;
                    make(T, node::MAKE_SEGMENT, [level as u64, 0, 0, 0], T)?;
                    let c = cdir.cached(parent)?;
                    swap(c, slot as u64, T, 0)
                })();
            }
        });
        built?;
        let mut err = None;
        let mut pages = [(0u64, 0u16, 0u8, 0u8); 64];
        let mut from = 0u64;
        loop {
            let mut got = 0;
            self.space
                .tree
                .pages(from, u64::MAX, |p, leaf, slot, flags| {
                    if got < pages.len() {
                        pages[got] = (p, leaf, slot, flags);
                        got += 1;
                    }
                });
            if got == 0 {
                break;
            }
            for &(p, leaf, slot, flags) in &pages[..got] {
                if let Err(e) = self.copy_page(&mut cdir, p, leaf, slot, flags) {
                    err = Some(e);
                    break;
                }
                from = p + 1;
            }
            if err.is_some() || got < pages.len() {
                break;
            }
        }
        // The parent's leaf cache slot was used for shared pages.
        self.space.forget_cache();
        match err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Page `p` of the parent into the child's leaf.
    fn copy_page(
        &mut self,
        cdir: &mut KeyDir,
        p: u64,
        leaf: u16,
        slot: u8,
        flags: u8,
    ) -> Result<(), Code> {
        if flags & (pf::OWNED | pf::SHARED) == pf::OWNED {
            // Not shared (unixd's table was full): a copy, from the child
            // process's bank.
            bank::alloc_page(CPB, T)?;
            ok(Msg::new(T, page::WRITE)
                .w0(0)
                .raw_string(self.space.win.addr(p * 4096), 4096)
                .call())?;
            if flags & pf::WRITABLE == 0 {
                make(T, page::MAKE_RO, [0; 4], T)?;
            }
        } else {
            self.space.leaf_key(leaf)?;
            fetch(LEAF, slot as u64, T)?;
        }
        let c = cdir.cached(leaf)?;
        swap(c, slot as u64, T, 0)
    }

    /// The spare keeper (its `KEYS` node in ours) becomes the child's: this
    /// keeper's data and heap are written over its own (the pages, and
    /// the page tables that map them, stay), its windows are set, and the
    /// resume key of its `EXIT` call wakes it with the child's keys
    /// (`proto::BECOME`). The child process is in `CPROC`, its bank in
    /// `CPB`, its directory root in `CDIR`.
    /// `warm`: its own process, kept, is the child (`CPROC`); unless
    /// `windows` (set always when cold), its windows already show it and
    /// the executable (they show another when it ran another program
    /// after putting the process aside: `Keeper::kept_at_exec`).
    fn wake_spare(&mut self, pid: u64, warm: bool, windows: bool) -> Result<(), Code> {
        fetch(KEYS, keys::SPARE, X)?;
        fetch(X, keys::SELF_SPACE, CCACHE)?;
        make(
            CCACHE,
            node::MAKE_SEGMENT,
            [plan::ROOT_LSS as u64, 0, 0, 0],
            T,
        )?;
        let guard = stet_rt::image::carry_guard();
        // Pages holding only state the child never reads are not copied
        // (the spare's stale ones there stay): shadow nodes and map ranges
        // not in use, the other threads' slots (the child has one), the
        // parked-page table when empty.
        let unused = [
            self.space.tree.unused(),
            self.space.map.unused(),
            self.th.unused(),
            self.space.unused_parked(),
        ];
        for (first, count) in keeper_state() {
            for p in first..first + count {
                let addr = p * 4096;
                if unused
                    .iter()
                    .any(|u| u.start <= addr && addr + 4096 <= u.end)
                {
                    continue;
                }
                ok(Msg::new(T, segment::WRITE)
                    .w0(addr)
                    .raw_string(addr, 4096)
                    .call())?;
                if (addr..addr + 4096).contains(&guard) {
                    ok(Msg::new(T, segment::WRITE).w0(guard).string(&[0]).call())?;
                }
            }
        }
        if windows {
            // (Changing a window slot discards the spare's page tables
            // under it.)
            swap(CCACHE, EXEC_SLOT, EXEC, 0)?;
            make(CPROC, domain::GET_SPACE, [0; 4], T)?;
            swap(CCACHE, WINDOW_SLOT, T, 0)?;
        }
        fetch(X, keys::SPARE, T)?;
        fetch(KEYS, CHILD_UNIXD, T2)?;
        ok(Msg::new(T, proto::BECOME)
            .words([pid, warm as u64, 0, 0])
            .keys([CPROC, T2, CPB, CDIR])
            .send())
        .map(|_| ())
    }

    /// The child keeper's domain: text shared with this keeper, data and
    /// heap copied, a fresh stack; its keys; started.
    fn build_keeper(&mut self, pid: u64) -> Result<(), Code> {
        let [(data, ndata), (heap, nheap)] = keeper_state();
        let mut segs = [
            Segment {
                first: 0x400,
                count: stet_rt::image::read_only_end() / 4096 - 0x400,
                writable: false,
            },
            Segment {
                first: data,
                count: ndata,
                writable: true,
            },
            Segment {
                first: heap,
                count: nheap,
                writable: true,
            },
        ];
        let nsegs = if ndata == 0 {
            segs[1] = segs[2];
            2
        } else {
            3
        };
        let pages =
            plan::product(&segs[..nsegs], KEEPER_STACK_PAGES).map_err(|_| code::Code::BadValue)?;
        // The domain's nodes first: its general node holds the path of
        // the tree being built (by depth), as the factory does.
        bank::alloc_node(KB, CPB)?; // root (CPB's key is no longer needed here)
        bank::alloc_node(KB, CDIR)?; // general keys
        bank::alloc_node(KB, CCACHE)?; // annex
        bank::alloc_page(KB, X)?; // FPU
        ok(Msg::new(CPB, node::MAKE_DOMAIN)
            .keys([CDIR, CCACHE, X, 0])
            .recv([CPB, 0, 0, 0])
            .call())?;
        let mut b = Build {
            pages: &pages,
            guard: stet_rt::image::carry_guard(),
            cur_depth: u8::MAX,
            own: OwnWalk {
                block: u64::MAX,
                parent: None,
            },
            lss_at: [0; 16],
            skip: None,
            run: None,
        };
        plan::steps(&pages, &mut |s| b.step(s))?;
        b.flush()?;
        // The child keeper's general keys (CDIR holds its general node).
        fetch(CDIR, 15, X)?; // its space root node key
        for s in (0..=plan::MAX_DEPTH as u64).chain([15]) {
            swap(CDIR, s, 0, 0)?;
        }
        // Its KEYS node: bank, own space, own start key, meter. No domain
        // order on it before its general node (`CDIR`) is complete: the
        // first prepares it, and every later change to that node would
        // write the whole domain back first.
        bank::alloc_node(KB, CCACHE)?;
        fetch(KEYS, keys::BANK, T)?;
        swap(CCACHE, keys::BANK, T, 0)?;
        swap(CCACHE, keys::SELF_SPACE, X, 0)?;
        fetch(KEYS, keys::METER, T)?;
        swap(CCACHE, keys::METER, T, 0)?;
        swap(CCACHE, keys::OWN_BANK, KB, 0)?;
        fetch(KEYS, keys::CHECKPOINT, T2)?;
        swap(CCACHE, keys::CHECKPOINT, T2, 0)?;
        swap(CDIR, KEYS as u64, CCACHE, 0)?;
        for (i, s) in [1u64, 2].into_iter().enumerate() {
            fetch(KEYS, STASH + i as u64, T)?;
            swap(CDIR, s, T, 0)?;
        }
        // Discrim, from this keeper's space root (its general slot 3 may
        // hold a resume key): the child's slot 3 and its root's.
        fetch(KEYS, keys::SELF_SPACE, T)?;
        fetch(T, stet_unix::layout::DISCRIM_SLOT, T)?;
        swap(CDIR, crate::slots::RESUME2 as u64, T, 0)?;
        swap(X, stet_unix::layout::DISCRIM_SLOT, T, 0)?;
        fetch(KEYS, CHILD_UNIXD, T)?;
        swap(CDIR, UNIXD as u64, T, 0)?;
        swap(CDIR, EXEC as u64, EXEC, 0)?;
        swap(CDIR, PROC as u64, CPROC, 0)?;
        fetch(KEYS, CHILD_PBANK, T)?;
        swap(CDIR, PBANK as u64, T, 0)?;
        fetch(KEYS, CHILD_DIR, T)?;
        swap(CDIR, DIR as u64, T, 0)?;
        fetch(KEYS, keys::BANK, T)?;
        swap(CDIR, crate::slots::MEMBANK as u64, T, 0)?;

        // Its own domain key, for its threads' keeper keys (`threads`).
        swap(X, crate::threads::SELF_DOMAIN_SLOT, CPB, 0)?;
        // Now the domain: its space, meter, start key (its process's
        // keeper), registers, state.
        make(X, node::MAKE_SEGMENT, [plan::ROOT_LSS as u64, 0, 0, 0], T)?;
        ok(Msg::new(CPB, domain::SET_SPACE).keys([T, 0, 0, 0]).call())?;
        fetch(KEYS, keys::METER, T)?;
        ok(Msg::new(CPB, domain::SET_METER).keys([T, 0, 0, 0]).call())?;
        make(CPB, domain::MAKE_START, [0; 4], T)?;
        swap(CCACHE, keys::SELF_START, T, 0)?;
        ok(Msg::new(CPROC, domain::SET_KEEPER)
            .keys([T, 0, 0, 0])
            .call())?;
        // Its own keeper: unixd, which starts it again should it fault, so
        // that it ends its process (`proto::KEEPER_FAULT`). Asked through
        // the child's forwarder (this keeper's is stashed); a system whose
        // unixd has no such key goes without.
        fetch(KEYS, CHILD_UNIXD, T)?;
        let a = Msg::new(T, proto::KEEPER_KEY).recv([T, 0, 0, 0]).call();
        if a.ok() && a.w[0] == 0 {
            ok(Msg::new(CPB, domain::SET_KEEPER).keys([T, 0, 0, 0]).call())?;
        }

        // Registers: `_start`, the stack top, rdi = FORKED | pid.
        let mut r = [0u64; NREGS];
        r[Reg::Rip as usize] = stet_rt::image::entry();
        r[Reg::Rsp as usize] = STACK_TOP;
        r[Reg::Rdi as usize] = FORKED | pid;
        r[Reg::Rflags as usize] = 0x202;
        let mut b = [0u8; REGS_SIZE];
        for (c, v) in b.chunks_exact_mut(8).zip(r) {
            c.copy_from_slice(&v.to_le_bytes());
        }
        ok(Msg::new(CPB, domain::SET_REGS).string(&b).call())?;
        ok(Msg::new(CPB, domain::SET_STATE)
            .words([state::RUNNING, 0, 0, 0])
            .call())
        .map(|_| ())
    }
}

/// The pages a child keeper gets copies of (first page, count): its data
/// and the heap holding the `Keeper` (`stet_rt::carry`).
fn keeper_state() -> [(u64, u64); 2] {
    let (data, end) = stet_rt::image::writable();
    let heap_bytes = 64 + core::mem::size_of::<Keeper>() as u64;
    [
        (data / 4096, (end - data) / 4096),
        (HEAP_START / 4096, heap_bytes.div_ceil(4096)),
    ]
}

/// A woken spare's own part of taking its child process (`REUSED`): its
/// executable's key from its window slot, and the process gets this
/// keeper as its keeper (the process's keys arrived with `BECOME`). The
/// keeper then starts it (`start_process`).
pub fn adopt(warm: bool) -> Result<(), Code> {
    fetch(KEYS, keys::SELF_SPACE, T)?;
    fetch(T, EXEC_SLOT, EXEC)?;
    if !warm {
        fetch(KEYS, keys::SELF_START, T)?;
        ok(Msg::new(PROC, domain::SET_KEEPER).keys([T, 0, 0, 0]).call())?;
    }
    Ok(())
}

/// The forked process, stopped until now, runs (as a foreign domain).
pub fn start_process() -> Result<(), Code> {
    ok(Msg::new(PROC, domain::SET_STATE)
        .words([state::RUNNING, state::FOREIGN as u64, 0, 0])
        .call())
    .map(|_| ())
}

/// This keeper's own page at `addr` (read-only: text) into `into`, by
/// walking its own tree from its space root (`d`: scratch for discrim).
/// The segment key of the last 16-page block walked to waits in the
/// `KEYS` node (`TEXT_BLOCK`; `*block` says which block), so the next
/// page of that block is two calls, not a walk.
/// Builds the child keeper's address space from the plan's steps (the
/// nodes by depth in `CDIR`, the node being filled in `CCACHE`): text
/// blocks of 16 read-only pages are this keeper's own nodes, shared
/// read-only (the first keeper's, which never go away); runs of fresh
/// (stack) or copied (data) pages come from the bank 16 at a time
/// (`ALLOC_PAGES_INTO`), the copies written through a segment key.
struct Build<'a> {
    pages: &'a plan::Pages,
    /// The byte `carry` checks: zero in the child's copy.
    guard: u64,
    /// The depth whose node is in `CCACHE`.
    cur_depth: u8,
    /// What `own_page` keeps from walk to walk.
    own: OwnWalk,
    /// Size code of the node at each depth.
    lss_at: [u8; 16],
    /// A shared text block's depth: its page steps are skipped.
    skip: Option<u8>,
    /// Pages waiting for one allocation: (depth, first slot, count,
    /// first page, copied).
    run: Option<(u8, u8, u8, u64, bool)>,
}

impl Build<'_> {
    fn step(&mut self, s: Step) -> Result<(), Code> {
        match s {
            Step::Page { depth, .. } if self.skip == Some(depth) => return Ok(()),
            Step::Page {
                depth,
                slot,
                page: pg,
                source: source @ (Source::Stack | Source::Data),
            } => {
                let data = source == Source::Data;
                if let Some((d, first, n, _, copied)) = self.run.as_mut() {
                    if *d == depth && *first + *n == slot && *copied == data {
                        *n += 1;
                        return Ok(());
                    }
                }
                self.flush()?;
                self.at_depth(depth)?;
                self.run = Some((depth, slot, 1, pg, data));
                return Ok(());
            }
            _ => {}
        }
        self.flush()?;
        self.skip = None;
        match s {
            Step::Node { depth: 0, .. } => {
                self.lss_at[0] = plan::ROOT_LSS;
                bank::alloc_node(KB, CCACHE)?;
                swap(CDIR, 0, CCACHE, 0)?;
                self.cur_depth = 0;
                // Its own space root, for its KEYS node; its windows
                // onto its process and the executable.
                swap(CDIR, 15, CCACHE, 0)?;
                make(CPROC, domain::GET_SPACE, [0; 4], T)?;
                swap(CCACHE, WINDOW_SLOT, T, 0)?;
                swap(CCACHE, EXEC_SLOT, EXEC, 0)
            }
            Step::Node {
                depth,
                lss: 1,
                base,
                slot,
            } if (base..base + 16).all(|p| self.pages.source(p) == Some(Source::Text)) => {
                // A whole block of text: this keeper's node, read-only —
                // if its own space has the block as one node (`own_page`
                // caches it), else page by page.
                own_page(base * 4096, T, X, &mut self.own)?;
                if self.own.block != base / 16 {
                    return self.new_node(depth, 1, slot);
                }
                self.at_depth(depth - 1)?;
                fetch(KEYS, TEXT_BLOCK, T)?;
                make(
                    T,
                    segment::RESTRICT,
                    [stet_keys::rights::RO as u64, 0, 0, 0],
                    T,
                )?;
                swap(CCACHE, slot as u64, T, 0)?;
                self.skip = Some(depth);
                Ok(())
            }
            Step::Node {
                depth, lss, slot, ..
            } => self.new_node(depth, lss, slot),
            Step::Page {
                depth,
                slot,
                page: pg,
                ..
            } => {
                self.at_depth(depth)?;
                own_page(pg * 4096, T, X, &mut self.own)?;
                swap(CCACHE, slot as u64, T, 0)
            }
        }
    }

    /// A new node of size `lss` at `depth`, in slot `slot` of its parent;
    /// then in `CCACHE`.
    fn new_node(&mut self, depth: u8, lss: u8, slot: u8) -> Result<(), Code> {
        self.at_depth(depth - 1)?;
        bank::alloc_node(KB, T)?;
        swap(CDIR, depth as u64, T, 0)?;
        make(T, node::MAKE_SEGMENT, [lss as u64, 0, 0, 0], T)?;
        swap(CCACHE, slot as u64, T, 0)?;
        fetch(CDIR, depth as u64, CCACHE)?;
        self.cur_depth = depth;
        self.lss_at[depth as usize] = lss;
        Ok(())
    }

    /// The node at `depth` into `CCACHE`.
    fn at_depth(&mut self, depth: u8) -> Result<(), Code> {
        if self.cur_depth != depth {
            fetch(CDIR, depth as u64, CCACHE)?;
            self.cur_depth = depth;
        }
        Ok(())
    }

    /// Allocates the waiting run into its node (in `CCACHE`), and writes
    /// this keeper's bytes into copied pages.
    fn flush(&mut self) -> Result<(), Code> {
        let Some((depth, first, n, page0, copied)) = self.run.take() else {
            return Ok(());
        };
        self.at_depth(depth)?;
        bank::alloc_pages_into(KB, CCACHE, first as u64, n as u64)?;
        if !copied {
            return Ok(());
        }
        let lss = self.lss_at[depth as usize];
        make(CCACHE, node::MAKE_SEGMENT, [lss as u64, 0, 0, 0], T)?;
        // Slot `s` of a node of size `lss` starts 16^(lss-1) pages after
        // slot `s - 1` (a page alone in a bigger node's slot is that
        // span's first page).
        let span = 1u64 << (4 * (lss as u32 - 1));
        for i in 0..n as u64 {
            let addr = (page0 + i * span) * 4096;
            let at = (first as u64 + i) * span * 4096;
            ok(Msg::new(T, segment::WRITE)
                .w0(at)
                .raw_string(addr, 4096)
                .call())?;
            if (addr..addr + 4096).contains(&self.guard) {
                ok(Msg::new(T, segment::WRITE)
                    .w0(at + (self.guard - addr))
                    .string(&[0])
                    .call())?;
            }
        }
        Ok(())
    }
}

fn own_page(addr: u64, into: Slot, d: Slot, at: &mut OwnWalk) -> Result<(), Code> {
    let page = addr / 4096;
    if page / 16 == at.block {
        fetch(KEYS, TEXT_BLOCK, into)?;
        ok(Msg::new(into, segment::FETCH)
            .w0(page % 16)
            .recv([into, 0, 0, 0])
            .call())?;
        return make(into, page::MAKE_RO, [0; 4], into);
    }
    fetch(KEYS, keys::SELF_SPACE, d)?;
    fetch(d, stet_unix::layout::DISCRIM_SLOT, d)?;
    // From the last walk's 256-page node if it covers the page, else from
    // the root.
    let (mut lss, mut q, mut order) = match at.parent {
        Some(base) if (base..base + 256).contains(&page) => {
            fetch(KEYS, TEXT_PARENT, into)?;
            (2, page - base, segment::FETCH)
        }
        _ => {
            fetch(KEYS, keys::SELF_SPACE, into)?;
            (plan::ROOT_LSS as u64, page, node::FETCH)
        }
    };
    loop {
        if lss == 1 {
            // The block's node: kept for the pages after this one.
            swap(KEYS, TEXT_BLOCK, into, 0)?;
            at.block = page / 16;
        } else if lss == 2 && order == segment::FETCH {
            swap(KEYS, TEXT_PARENT, into, 0)?;
            at.parent = Some(page - q);
        }
        let span = 1u64 << (4 * (lss - 1));
        ok(Msg::new(into, order)
            .w0(q / span)
            .recv([into, 0, 0, 0])
            .call())?;
        order = segment::FETCH;
        q %= span;
        match key_type(d, into) {
            t if t == KeyType::Page as u64 && q == 0 => {
                return make(into, page::MAKE_RO, [0; 4], into);
            }
            t if t == KeyType::Segment as u64 => {
                lss = ok(Msg::new(into, segment::INFO).call())?.w[0];
            }
            _ => return Err(code::Code::InvalidAddress.into()),
        }
    }
}
