//! The temporary system calls (see `stet_abi::sys` and docs/ABI.md).
//! Issue #3 replaces them with key invocations; they are kept few.

use crate::kernel::Kernel;
use crate::{arch, kprintln, sched, trap};
use stet_abi::{err, sys, MAX_WRITE};

/// Entered from `syscall`: the caller's registers are in its frame.
///
/// The fast path (the null call) touches only the caller's frame: same
/// program, same address space, same FPU state, so it leaves at once. This is
/// the floor of every kernel call, and what `null_syscall` measures.
pub fn on_syscall(k: &mut Kernel) -> ! {
    let Some(cur) = k.current else {
        crate::fatal(format_args!("syscall with no current program"));
    };
    let f = &mut k.tasks[cur].frame;
    if f.rax == sys::NOP {
        f.rax = 0;
        arch::entry::enter_user(f)
    }
    slow_path(k, cur)
}

#[inline(never)]
fn slow_path(k: &mut Kernel, cur: usize) -> ! {
    let f = &k.tasks[cur].frame;
    let (nr, a0, a1) = (f.rax, f.rdi, f.rsi);
    let ret: i64 = match nr {
        sys::WRITE => write(k, cur, a0, a1),
        sys::EXIT => {
            let t = &k.tasks[cur];
            kprintln!(
                "kernel: program {} '{}' exited with code {} ({} ticks, {} preemptions)",
                cur,
                t.name,
                a0 as i64,
                t.ticks,
                t.preemptions
            );
            trap::end_task(k, cur);
            sched::schedule(k)
        }
        sys::YIELD => {
            k.tasks[cur].frame.rax = 0;
            sched::schedule(k)
        }
        sys::RELEASE => {
            let pool = k.pool.as_mut().expect("pool exists once programs run");
            match k.tasks[cur].space.as_mut() {
                Some(s) => s.release(a0, a1, pool) as i64,
                None => err::BAD_ADDRESS,
            }
        }
        _ => err::NO_SUCH_CALL,
    };
    k.tasks[cur].frame.rax = ret as u64;
    sched::run(k, cur)
}

/// `write(buffer, length)`: copies the bytes out of the caller's memory and
/// prints them.
fn write(k: &mut Kernel, cur: usize, va: u64, len: u64) -> i64 {
    if len > MAX_WRITE {
        return err::TOO_LONG;
    }
    let mut buf = [0u8; MAX_WRITE as usize];
    let out = &mut buf[..len as usize];
    let pool = k.pool.as_mut().expect("pool exists once programs run");
    let Some(space) = k.tasks[cur].space.as_mut() else {
        return err::BAD_ADDRESS;
    };
    if space.read(va, out, pool).is_err() {
        return err::BAD_ADDRESS;
    }
    arch::serial::write_bytes(out);
    len as i64
}
