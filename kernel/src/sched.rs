//! The scheduler and meters: which domain runs, and charging its time.
//!
//! Mechanism only: a FIFO ready queue, one timer tick per slice, and meters
//! (KeyKOS §3): a domain runs only while every meter on its chain up to the
//! prime meter has time; each tick is charged to the whole chain; a meter
//! that runs out invokes its keeper, where policy lives.

use crate::domain::context::{Context, Queue};
use crate::domain::{self};
use crate::kernel::Kernel;
use crate::memory;
use crate::{arch, fault, kprintln};
use stet_abi::domain::RunState;
use stet_abi::domain::{meter, root};
use stet_keys::{Key, KeyType};

/// Longest meter chain followed (a cycle made through node keys is cut here).
const MAX_CHAIN: usize = 16;

/// Leaves the kernel into context `ci`, switching address space, frame and
/// FPU state if it is not the current one.
pub fn run(k: &mut Kernel, ci: usize) -> ! {
    if k.config.invariants {
        crate::invariants::check(k);
    }
    let c = &k.ctxs[ci];
    if k.current == Some(ci)
        && k.fpu_owner == Some(ci)
        && c.tables.is_some()
        && c.fault_code == 0
        && c.io == k.io_open
    {
        // Still on the CPU with everything in place (a kernel object's
        // answer): straight back.
        arch::entry::enter_user(&c.frame)
    }
    if k.ctxs[ci].fault_code != 0 && k.ctxs[ci].state == RunState::Running {
        // A fault whose delivery to a keeper was pending.
        fault::deliver_pending(k, ci)
    }
    if k.current != Some(ci) || k.ctxs[ci].tables.is_none() {
        let oid = k.ctx_oid(ci);
        let c = &k.ctxs[ci];
        arch::entry::activate(&k.ctxs, ci, oid);
        let bases = (c.fs_base, c.gs_base);
        if bases != k.user_bases {
            arch::cpu::set_user_bases(bases.0, bases.1);
            k.user_bases = bases;
        }
        k.current = Some(ci);
        if let Some(r) = &c.tables {
            r.activate();
        } else {
            match memory::ensure_tables(k, ci) {
                Ok(r) => r.activate(),
                Err(_) => crate::fatal(format_args!("no frames for page tables")),
            }
        }
    }
    if k.fpu_owner != Some(ci) {
        if let Some(o) = k.fpu_owner {
            arch::fpu::save(&mut k.ctxs[o].fpu);
        }
        arch::fpu::restore(&k.ctxs[ci].fpu);
        k.fpu_owner = Some(ci);
    }
    if k.ctxs[ci].io != k.io_open {
        open_ports(k, k.ctxs[ci].io);
    }
    arch::entry::enter_user(&k.ctxs[ci].frame)
}

/// Makes `io` (a `Context::io` word) the only ports open in the TSS I/O
/// bitmap: closes the previous domain's range, opens this one's. Only the
/// bytes of the two ranges are written; a switch between domains without
/// ports never comes here.
#[inline(never)]
pub fn open_ports(k: &mut Kernel, io: u64) {
    let (old_base, old_count) = ((k.io_open >> 32) as u16, k.io_open as u32);
    arch::gdt::set_ports(old_base, old_count, false);
    arch::gdt::set_ports((io >> 32) as u16, io as u32, true);
    k.io_open = io;
}

/// Leaves into `t`, a different domain than the current one, after a
/// fast-path message: the commonest switch, kept short. Falls back to
/// [`run`] for anything unusual (invariant checks, no page tables yet, a
/// pending fault).
#[inline(always)]
pub fn switch_fast(k: &mut Kernel, t: usize) -> ! {
    let c = &k.ctxs[t];
    // A domain with I/O ports on either side of the switch takes the
    // general path (`run` flips the bitmap): the common switch pays one
    // comparison.
    if k.config.invariants
        || c.tables.is_none()
        || c.fault_code != 0
        || c.meter_ok != k.meter_gen
        || c.io != k.io_open
    {
        k.current = None;
        dispatch(k, t)
    }
    if let Some(r) = &c.tables {
        r.activate();
    }
    let oid = k.objs.node_entry(c.root).oid;
    arch::entry::activate(&k.ctxs, t, oid);
    let bases = (c.fs_base, c.gs_base);
    if bases != k.user_bases {
        arch::cpu::set_user_bases(bases.0, bases.1);
        k.user_bases = bases;
    }
    k.current = Some(t);
    let owner = k.fpu_owner.replace(t);
    fpu_switch_and_enter(k.ctxs, owner, t)
}

/// Moves the FPU from `owner` to `t` and leaves into `t`. The table is
/// borrowed once, so its place and length stay in registers across the
/// FPU instructions.
#[inline(always)]
fn fpu_switch_and_enter(ctxs: &mut [Context], owner: Option<usize>, t: usize) -> ! {
    if let Some(o) = owner {
        arch::fpu::save(&mut ctxs[o].fpu);
    }
    let c = &ctxs[t];
    arch::fpu::restore(&c.fpu);
    arch::entry::enter_user(&c.frame)
}

/// Hands the CPU from `from` to `to` directly (a message between them):
/// `from` goes to the back of the ready queue if it still wants to run.
pub fn switch(k: &mut Kernel, from: usize, to: usize) -> ! {
    if domain::runnable(&k.ctxs[from]) && k.ctxs[from].queue() == Queue::None {
        domain::ready_push(k, from);
    }
    if k.current == Some(from) {
        k.current = None;
    }
    if !domain::runnable(&k.ctxs[to]) {
        // A stopped domain got its reply: it keeps it until started.
        schedule(k)
    }
    if k.ctxs[to].queue() != Queue::None {
        domain::dequeue(k, to);
    }
    dispatch(k, to)
}

/// Runs `ci` if its meters have time, else invokes the meter keeper.
fn dispatch(k: &mut Kernel, ci: usize) -> ! {
    match meter_ready(k, ci) {
        Ok(()) => run(k, ci),
        Err(m) => fault::meter_out(k, ci, m),
    }
}

/// [`meter_check`], remembered until a meter may have changed.
pub fn meter_ready(k: &mut Kernel, ci: usize) -> Result<(), Option<u32>> {
    if k.ctxs[ci].meter_ok == k.meter_gen {
        return Ok(());
    }
    meter_check(k, ci)?;
    k.ctxs[ci].meter_ok = k.meter_gen;
    Ok(())
}

/// Runs the next ready domain whose meters have time, or idles.
pub fn schedule(k: &mut Kernel) -> ! {
    if let Some(c) = k.current.take() {
        if domain::runnable(&k.ctxs[c]) && k.ctxs[c].queue() == Queue::None {
            domain::ready_push(k, c);
        }
    }
    while let Some(ci) = domain::ready_pop(k) {
        if !domain::runnable(&k.ctxs[ci]) {
            continue;
        }
        dispatch(k, ci)
    }
    idle(k)
}

/// The meter node slot of the first meter key in a chain.
fn meter_node(k: &mut Kernel, key: Key) -> Option<u32> {
    if key.key_type() != KeyType::Meter {
        return None;
    }
    let m = k.node_of(key).ok()?;
    k.objs.set_meter(m);
    Some(m)
}

fn time_left(k: &Kernel, m: u32) -> u64 {
    k.objs.node_entry(m).keys[meter::TIME]
        .number_value()
        .map_or(0, |(v, _)| v)
}

/// Whether every meter on `ci`'s chain has time. `Err(Some(m))`: meter
/// node `m` ran out; `Err(None)`: the chain is broken (no meter).
pub fn meter_check(k: &mut Kernel, ci: usize) -> Result<(), Option<u32>> {
    let mut key = k.objs.node_entry(k.ctxs[ci].root).keys[root::METER];
    for _ in 0..MAX_CHAIN {
        let Some(m) = meter_node(k, key) else {
            return Err(None);
        };
        if time_left(k, m) == 0 {
            return Err(Some(m));
        }
        key = k.objs.node_entry(m).keys[meter::SUPERIOR];
        if key.is_void() {
            return Ok(());
        }
    }
    Err(None)
}

/// Charges one tick to every meter on `ci`'s chain.
pub fn charge(k: &mut Kernel, ci: usize) {
    k.ctxs[ci].ticks += 1;
    let mut key = k.objs.node_entry(k.ctxs[ci].root).keys[root::METER];
    for _ in 0..MAX_CHAIN {
        let Some(m) = meter_node(k, key) else {
            return;
        };
        let n = k.objs.node_mut(m);
        let left = n.keys[meter::TIME].number_value().map_or(0, |(v, _)| v);
        if left != u64::MAX {
            n.keys[meter::TIME] = Key::number(left.saturating_sub(1), 0);
            if left <= 1 {
                k.meter_gen += 1;
            }
        }
        let used = n.keys[meter::USED].number_value().map_or(0, |(v, _)| v);
        n.keys[meter::USED] = Key::number(used.wrapping_add(1), 0);
        key = n.keys[meter::SUPERIOR];
        if key.is_void() {
            return;
        }
    }
}

/// The timer ticked while `ci` ran.
pub fn tick(k: &mut Kernel, ci: usize) -> ! {
    k.ticks += 1;
    charge(k, ci);
    domain::wake_sleepers(k);
    crate::store::tick(k);
    if let Err(m) = meter_ready(k, ci) {
        fault::meter_out(k, ci, m)
    }
    if k.queues.any_ready() {
        schedule(k)
    }
    run(k, ci)
}

/// Whether every sleeper waits for a device event that cannot come while
/// the system idles (a restart, or a checkpoint nobody is taking). A
/// domain waiting on an interrupt line (`kobj::irq`) is not such a waiter:
/// input can arrive while the CPU idles, so it keeps the system up.
fn only_device_waiters(k: &Kernel) -> bool {
    let mut l = k.queues.sleepers();
    while let Some(ci) = domain::unlink(l) {
        if k.ctxs[ci].wake_at < crate::kobj::checkpoint::WAKE_ON_COMMIT {
            return false;
        }
        l = k.ctxs[ci].next();
    }
    true
}

/// Prints every prepared domain (`idle_dump`): what each is doing.
fn dump_contexts(k: &Kernel) {
    for ci in 0..k.ctxs.len() {
        let c = &k.ctxs[ci];
        if !c.used {
            continue;
        }
        kprintln!(
            "idle: ctx {} '{}' state {} flags {} fault {} queue {:?} rip {:#x} call {:#x} order {:#x} w0 {:#x}",
            ci,
            k.ctx_name(ci),
            c.state.bits(),
            c.flags,
            c.fault_code,
            c.queue(),
            c.frame.rip,
            c.frame.rax,
            c.frame.rdi,
            c.frame.rsi
        );
    }
}

/// Nothing is ready. With `exit_on_idle` and nobody asleep, stop QEMU with
/// success; otherwise wait for the timer (sleepers) or forever.
fn idle(k: &mut Kernel) -> ! {
    k.current = None;
    let mut said = false;
    loop {
        if only_device_waiters(k) && k.store.w.is_idle() && !k.store.requested {
            if k.config.idle_dump && !said {
                dump_contexts(k);
            }
            if k.config.invariants {
                kprintln!(
                    "kernel: invariants held at {} checks",
                    crate::invariants::checks(k)
                );
            }
            if k.config.exit_on_idle {
                kprintln!("kernel: no domain can run; idle");
                arch::qemu::exit(stet_abi::qemu_exit::SUCCESS);
            }
            if !said {
                kprintln!("kernel: no domain can run; idle (Ctrl-A X quits QEMU)");
                said = true;
            }
        }
        let before = crate::trap::idle_ticks();
        arch::cpu::wait_for_interrupt();
        let after = crate::trap::idle_ticks();
        crate::store::on_disk(k);
        crate::kobj::irq::deliver(k);
        if after != before {
            k.ticks += after - before;
            domain::wake_sleepers(k);
            crate::store::tick(k);
        }
        if k.queues.any_ready() {
            schedule(k)
        }
    }
}
