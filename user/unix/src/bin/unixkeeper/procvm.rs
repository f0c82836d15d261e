//! `process_vm_readv` and `process_vm_writev`: bytes between the caller's
//! memory and another process's. unixd checks that the caller may reach
//! the target (Linux's `ptrace_may_access` with real credentials) and
//! hands this keeper a no-call segment key to the target's space
//! (`proto::PROCVM`, read-only for a read); the keeper then copies, a
//! piece at a time that crosses no page on either side, with the key's
//! `READ` and `WRITE` straight between the target's page and its own
//! process's window. The target's keeper takes no part, so a target that
//! never answers cannot hold the caller; the target's tree is never
//! changed (only bytes of pages it has), so its keeper's shadow stays
//! true whatever it is doing. A page the target does not have yet, or
//! may not write without a copy (shared copy-on-write, a private file
//! page not yet written), ends the transfer there, as an unmapped page
//! does. A process that may not be dumped (`PR_SET_DUMPABLE` 0, or a
//! program run with changed ids) is reached only with `CAP_SYS_PTRACE`,
//! as on Linux: its keeper says so with its space. The caller's own memory (or its own pid as the target) goes
//! through the window like any system call's buffer, pages made as the
//! process's own fault would make them.

use crate::fds::result;
use crate::slots::{SLEEP, T3, UNIXD};
use crate::space::Touch;
use crate::Keeper;
use stet_rt::abi::code::Code;
use stet_rt::abi::order::{segment, sleep};
use stet_rt::key::{call, Msg};
use stet_unix::layout::{PAGE, USER_END};
use stet_unix::proto;
use stet_unix::sys::errno::*;

/// `UIO_MAXIOV`: most iovecs on either side.
const IOV_MAX: u64 = 1024;

type R = Result<u64, i64>;
/// Linux's `MAX_RW_COUNT`: the most bytes one call moves.
const MAX_RW_COUNT: u64 = 0x7fff_f000;
/// The end of the user half for `access_ok` (Linux's `TASK_SIZE_MAX`).
const TASK_SIZE: u64 = 0x7fff_ffff_f000;
/// How long (in tries 1 ms apart) a caller waits for a just-forked
/// target's keeper to send its space.
const TRIES: u32 = 1000;

/// Why a copy stopped.
enum Stop {
    /// The caller's memory: the errno.
    Local(i64),
    /// The target's page.
    Remote,
}

/// Sends unixd this process's space (the segment in this keeper's window
/// slot), for another process's `process_vm_readv` (`proto::PROC_SPACE`),
/// and whether it may be dumped (`PR_SET_DUMPABLE`: 0 keeps others out).
pub fn send_space(dumpable: u8) {
    use crate::slots::{keys, KEYS, T};
    use stet_unix::layout::WINDOW_SLOT;
    use stet_unix_personality::keydir::fetch;
    if fetch(KEYS, keys::SELF_SPACE, T).is_ok() && fetch(T, WINDOW_SLOT, T).is_ok() {
        let a = Msg::new(UNIXD, proto::PROC_SPACE)
            .w0((dumpable == 0) as u64)
            .keys([T, 0, 0, 0])
            .call();
        crate::signals::note(a.w[proto::INTR_WORD]);
    }
}

impl Keeper {
    /// Entry `i` of the iovec array at `vec` → (base, length).
    fn iov_at(&mut self, vec: u64, i: u64) -> Result<(u64, u64), i64> {
        let mut v = [0u8; 16];
        let at = vec.checked_add(16 * i).ok_or(EFAULT)?;
        self.space.read(at, &mut v).map_err(Touch::errno)?;
        let w = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
        Ok((w(&v[..8]), w(&v[8..])))
    }

    /// The checks Linux makes of an iovec array before anything moves:
    /// `EFAULT` for an array it cannot read, `EINVAL` for a negative
    /// length, and for the caller's own (`local`) `EFAULT` for a buffer
    /// past the user half → the bytes it names (`MAX_RW_COUNT` at most for
    /// the local side).
    fn iov_check(&mut self, vec: u64, n: u64, local: bool) -> R {
        let mut total = 0u64;
        for i in 0..n {
            let (_, len) = self.iov_at(vec, i)?;
            if (len as i64) < 0 {
                return Err(EINVAL);
            }
            total = total.saturating_add(len);
        }
        if local {
            for i in 0..n {
                let (base, len) = self.iov_at(vec, i)?;
                if !matches!(base.checked_add(len), Some(e) if e <= TASK_SIZE) {
                    return Err(EFAULT);
                }
            }
            total = total.min(MAX_RW_COUNT);
        }
        Ok(total)
    }

    /// `process_vm_readv` (`write` false) and `process_vm_writev`.
    #[allow(clippy::too_many_arguments)]
    pub fn process_vm(
        &mut self,
        pid: u64,
        lvec: u64,
        lcnt: u64,
        rvec: u64,
        rcnt: u64,
        flags: u64,
        write: bool,
    ) -> R {
        // In Linux's order: flags, the local array, nothing to move, the
        // remote array, no remote bytes, the target.
        if flags != 0 || lcnt > IOV_MAX {
            return Err(EINVAL);
        }
        let ltotal = self.iov_check(lvec, lcnt, true)?;
        if ltotal == 0 {
            return Ok(0);
        }
        if rcnt > IOV_MAX {
            return Err(EINVAL);
        }
        if self.iov_check(rvec, rcnt, false)? == 0 {
            return Ok(0);
        }
        let t = pid as u32 as i32;
        let own = t > 0 && self.is_mine(t as u64);
        if !own {
            self.procvm_key(pid as u32 as u64, write)?;
        }
        let mut done = 0u64;
        let mut left = ltotal;
        // The local cursor: entry, its base and length, bytes used of it.
        let (mut li, mut lb, mut ll, mut lo) = (0u64, 0u64, 0u64, 0u64);
        let stop = |done: u64, e: i64| if done > 0 { Ok(done) } else { Err(e) };
        for ri in 0..rcnt {
            if left == 0 {
                break;
            }
            // Read again (another thread may have changed it: then what
            // it says now).
            let Ok((rb, rl)) = self.iov_at(rvec, ri) else {
                return stop(done, EFAULT);
            };
            if (rl as i64) < 0 {
                return stop(done, EINVAL);
            }
            let mut ro = 0u64;
            while ro < rl && left > 0 {
                while lo >= ll {
                    if li >= lcnt {
                        return Ok(done);
                    }
                    let Ok((b, l)) = self.iov_at(lvec, li) else {
                        return stop(done, EFAULT);
                    };
                    (lb, ll, lo) = (b, l.min(left), 0);
                    li += 1;
                }
                let (Some(ra), Some(la)) = (rb.checked_add(ro), lb.checked_add(lo)) else {
                    return stop(done, EFAULT);
                };
                let n = (rl - ro)
                    .min(ll - lo)
                    .min(left)
                    .min(PAGE - ra % PAGE)
                    .min(PAGE - la % PAGE);
                match self.move_piece(own, ra, la, n, write) {
                    Ok(()) => {
                        ro += n;
                        lo += n;
                        done += n;
                        left -= n;
                    }
                    Err(Stop::Remote) => return stop(done, EFAULT),
                    Err(Stop::Local(e)) => return stop(done, e),
                }
            }
        }
        Ok(done)
    }

    /// The target's space from unixd into `T3`, waiting a little for a
    /// child so new that its keeper has not sent it yet.
    fn procvm_key(&mut self, pid: u64, write: bool) -> Result<(), i64> {
        for _ in 0..TRIES {
            let a = Msg::new(UNIXD, proto::PROCVM)
                .words([pid, write as u64, 0, 0])
                .recv([T3, 0, 0, 0])
                .call();
            crate::signals::note(a.w[proto::INTR_WORD]);
            match result(&a).unwrap_or(Err(EIO)) {
                Ok(_) => return Ok(()),
                Err(EAGAIN) => {
                    let now = call(SLEEP, sleep::NOW, [0; 4]).w[0];
                    call(SLEEP, sleep::UNTIL, [now + 1_000_000, 0, 0, 0]);
                }
                Err(e) => return Err(e),
            }
        }
        Err(ESRCH)
    }

    /// Moves `n` bytes (within one page on each side) between the target's
    /// `ra` (this process's own when `own`, else through the key in `T3`)
    /// and this process's `la`: into `la` for a read, from it for a write.
    fn move_piece(&mut self, own: bool, ra: u64, la: u64, n: u64, write: bool) -> Result<(), Stop> {
        if own {
            self.space.touch(ra, n, write).map_err(|_| Stop::Remote)?;
            self.space
                .touch(la, n, !write)
                .map_err(|e| Stop::Local(e.errno()))?;
            let mut buf = [0u8; PAGE as usize];
            let b = &mut buf[..n as usize];
            if write {
                self.space.win.read(la, b);
                self.space.win.write(ra, b);
            } else {
                self.space.win.read(ra, b);
                self.space.win.write(la, b);
            }
            return Ok(());
        }
        if ra >= USER_END {
            return Err(Stop::Remote);
        }
        self.space
            .touch(la, n, !write)
            .map_err(|e| Stop::Local(e.errno()))?;
        let a = if write {
            Msg::new(T3, segment::WRITE)
                .w0(ra)
                .raw_string(self.space.win.addr(la), n)
                .call()
        } else {
            Msg::new(T3, segment::READ)
                .words([ra, n, 0, 0])
                .call_to(self.space.win.recv(la, n))
        };
        if a.code != Code::Ok {
            return Err(Stop::Remote);
        }
        Ok(())
    }
}
