//! Calls a program expects of Linux that need little of the system:
//! `getrlimit`/`setrlimit`, `capget`/`capset`, `fadvise64`, the `mlock`
//! family, `clock_getres`, `getrusage`, `times`, `sigaltstack` and
//! `mremap`. Each checks its arguments as Linux does and answers Linux's
//! errno.

use crate::calls::result;
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::key::Msg;
use stet_unix::cred::cap;
use stet_unix::layout::PAGE;
use stet_unix::proto::{self, caps_op};
use stet_unix::sys::errno::*;
use stet_unix::vm::{self, Backing};

type R = Result<u64, i64>;

/// `_LINUX_CAPABILITY_VERSION_3` (and 2, the same layout): two 32-bit
/// words of each set.
const CAP_V3: u32 = 0x2008_0522;
const CAP_V2: u32 = 0x2007_1026;
/// `_LINUX_CAPABILITY_VERSION_1`: one word.
const CAP_V1: u32 = 0x1998_0330;

/// `sigaltstack`'s `SS_ONSTACK` and `SS_DISABLE`; `MINSIGSTKSZ`.
const SS_ONSTACK: u64 = 1;
const SS_DISABLE: u64 = 2;
const SS_AUTODISARM: u64 = 1 << 31;
const MINSIGSTKSZ: u64 = 2048;

impl Keeper {
    /// `getrlimit(res, rlim)` and `setrlimit(res, rlim)`: `prlimit64` of
    /// the caller.
    pub fn getrlimit(&mut self, res: u64, rlim: u64) -> R {
        self.prlimit(0, res, 0, rlim)
    }

    /// See [`Keeper::getrlimit`].
    pub fn setrlimit(&mut self, res: u64, rlim: u64) -> R {
        self.prlimit(0, res, rlim, 0)
    }

    /// `capget(hdr, data)`: the sets of the caller or of process `pid`
    /// (unixd's: `Cred::caps`).
    pub fn capget(&mut self, hdr: u64, data: u64) -> R {
        let words = match self.cap_header(hdr) {
            // A null `data` only asks for the version.
            Err(EINVAL) if data == 0 => return Ok(0),
            r => r?,
        };
        if data == 0 {
            return Ok(0);
        }
        let pid = self.cap_pid(hdr)?;
        if pid < 0 {
            return Err(EINVAL);
        }
        let me = pid == 0 || pid as u64 == self.pid || self.tid_of(pid as u64);
        let a = Msg::new(UNIXD, proto::CAPS)
            .words([caps_op::GET, if me { 0 } else { pid as u64 }, 0, 0])
            .call();
        let e = result(&a)?;
        let sets = [e, a.w[1], a.w[2]];
        let mut b = [0u8; 24];
        for w in 0..words {
            for (k, set) in sets.iter().enumerate() {
                let v = (set >> (32 * w)) as u32;
                b[w * 12 + 4 * k..w * 12 + 4 * k + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        self.space
            .write(data, &b[..words * 12])
            .map_err(Touch::errno)?;
        Ok(0)
    }

    /// `capset(hdr, data)`: the caller's own sets only (`EPERM` for
    /// another process), by Linux's rules (`Caps::set`, in unixd).
    pub fn capset(&mut self, hdr: u64, data: u64) -> R {
        let words = self.cap_header(hdr)?;
        let pid = self.cap_pid(hdr)?;
        if pid != 0 && pid as u64 != self.tid() {
            return Err(EPERM);
        }
        let mut b = [0u8; 24];
        self.space
            .read(data, &mut b[..words * 12])
            .map_err(Touch::errno)?;
        let mut sets = [0u64; 3];
        for w in 0..words {
            for (k, set) in sets.iter_mut().enumerate() {
                let o = w * 12 + 4 * k;
                let v = u32::from_le_bytes(b[o..o + 4].try_into().unwrap_or_default());
                *set |= (v as u64) << (32 * w);
            }
        }
        let r = self.unixd(proto::CAPS, [caps_op::SET, sets[0], sets[1], sets[2]]);
        self.sync_caps();
        r
    }

    /// Takes the caller's capability sets from unixd into the copy the
    /// keeper checks with (after anything that may have changed them).
    pub fn sync_caps(&mut self) {
        let a = Msg::new(UNIXD, proto::CAPS)
            .words([caps_op::GET, 0, 0, 0])
            .call();
        if let Ok(e) = result(&a) {
            self.cred.caps.effective = e;
            self.cred.caps.permitted = a.w[1];
            self.cred.caps.inheritable = a.w[2];
        }
    }

    /// Checks a `cap_user_header_t`'s version → words per set. An
    /// unknown version is `EINVAL` with the preferred one written back.
    fn cap_header(&mut self, hdr: u64) -> Result<usize, i64> {
        let mut h = [0u8; 4];
        self.space.read(hdr, &mut h).map_err(Touch::errno)?;
        match u32::from_le_bytes(h) {
            CAP_V3 | CAP_V2 => Ok(2),
            CAP_V1 => Ok(1),
            _ => {
                self.space
                    .write(hdr, &CAP_V3.to_le_bytes())
                    .map_err(Touch::errno)?;
                Err(EINVAL)
            }
        }
    }

    /// The header's pid.
    fn cap_pid(&mut self, hdr: u64) -> Result<i32, i64> {
        let mut h = [0u8; 4];
        self.space
            .read(hdr.wrapping_add(4), &mut h)
            .map_err(Touch::errno)?;
        Ok(i32::from_le_bytes(h))
    }

    /// `fadvise64(fd, offset, len, advice)`: advice only (every page is
    /// already where the single-level store keeps it).
    pub fn fadvise(&mut self, fd: u64, _off: u64, len: u64, advice: u64) -> R {
        let fid = self.fid(fd)?;
        if (len as i64) < 0 || advice > 5 {
            return Err(EINVAL);
        }
        if !self.fds[fd as u32 as usize].regular {
            // A pipe (Linux: ESPIPE); the terminal and devices accept it.
            let mut st = [0u8; 144];
            let a = stet_rt::key::Msg::new(crate::slots::UNIXD, stet_unix::proto::FSTAT)
                .words([fid, 0, 0, 0])
                .call_into(&mut st);
            let mode = u32::from_le_bytes(st[24..28].try_into().unwrap_or_default());
            if a.ok() && mode & 0o170000 == 0o010000 {
                return Err(ESPIPE);
            }
        }
        Ok(0)
    }

    /// `mlock(addr, len)` / `munlock` / `mlock2`: the range must be mapped
    /// (`ENOMEM`); a process's pages are never paged out from under it by
    /// anything but a checkpoint, which does not take them away, so
    /// locking them changes nothing else. `RLIMIT_MEMLOCK` binds users.
    pub fn mlock(&mut self, addr: u64, len: u64, flags: u64, lock: bool) -> R {
        if flags & !1 != 0 {
            return Err(EINVAL);
        }
        let start = addr & !(PAGE - 1);
        let end = addr.checked_add(len).ok_or(ENOMEM)?.next_multiple_of(PAGE);
        let mut at = start;
        while at < end {
            let v = self.space.map.find(at).ok_or(ENOMEM)?;
            at = v.end;
        }
        if lock && !self.cred.capable(cap::IPC_LOCK) {
            let limit = self.rlimits[stet_unix::sys::rlimit::RLIMIT_MEMLOCK as usize][0];
            if end - start > limit {
                return Err(if limit == 0 { EPERM } else { ENOMEM });
            }
        }
        // The ranges remember it (`VmLck`, `msync`'s `EBUSY`); a range
        // locked again counts once.
        self.space.map.lock(start, end, lock)?;
        // Locked pages are resident: made now, as Linux faults them in
        // (pages are never paged out here, so they stay), unless
        // `MLOCK_ONFAULT` asks for them at their first touch.
        if lock && flags & 1 == 0 {
            self.populate(start, end);
        }
        Ok(0)
    }

    /// `mlockall(flags)` / `munlockall`.
    pub fn mlockall(&mut self, flags: u64) -> R {
        // MCL_CURRENT 1, MCL_FUTURE 2, MCL_ONFAULT 4 (not alone).
        if flags == 0 || flags & !7 != 0 || flags == 4 {
            return Err(EINVAL);
        }
        let limit = self.rlimits[stet_unix::sys::rlimit::RLIMIT_MEMLOCK as usize][0];
        if !self.cred.capable(cap::IPC_LOCK) && limit == 0 {
            return Err(EPERM);
        }
        // MCL_CURRENT locks what is mapped now: more than the limit is
        // `ENOMEM`. (The pages are not made at once: a stack's reserve
        // would be; every page here stays resident once touched.)
        if flags & 1 != 0 {
            let mapped: u64 = self.space.map.vmas().iter().map(|v| v.end - v.start).sum();
            if !self.cred.capable(cap::IPC_LOCK) && mapped > limit {
                return Err(ENOMEM);
            }
            self.lock_all(true);
        }
        Ok(0)
    }

    /// Locks or unlocks every range (`mlockall(MCL_CURRENT)`,
    /// `munlockall`).
    pub fn lock_all(&mut self, lock: bool) {
        // Range by range (locking one may merge it with the one before);
        // only those that change: a fork's child unlocks all, and almost
        // never has any locked (`Map::lock` costs ~1,500 instructions).
        let mut at = 0;
        while let Some(&v) = self.space.map.vmas().iter().find(|v| v.end > at) {
            if v.locked != lock {
                let _ = self.space.map.lock(v.start, v.end, lock);
            }
            at = v.end;
        }
    }

    /// `clock_getres(clock, res)`: 1 ns for the clocks read from the
    /// time-stamp counter, a tick (10 ms) for the coarse ones.
    pub fn clock_getres(&mut self, clk: u64, res: u64) -> R {
        self.clock_of(clk)?;
        let ns: u64 = if stet_unix::clockid::coarse(clk) {
            10_000_000
        } else {
            1
        };
        if res != 0 {
            let mut b = [0u8; 16];
            b[8..].copy_from_slice(&ns.to_le_bytes());
            self.space.write(res, &b).map_err(Touch::errno)?;
        }
        Ok(0)
    }

    /// `getrusage(who, usage)`: its peak resident size; times it does not
    /// keep per process (every process runs under one meter) are 0.
    pub fn getrusage(&mut self, who: u64, usage: u64) -> R {
        match who as u32 as i32 {
            0 | 1 => {} // RUSAGE_SELF, RUSAGE_THREAD
            -1 => {}    // RUSAGE_CHILDREN
            _ => return Err(EINVAL),
        }
        let mut b = [0u8; 144];
        if who as u32 as i32 != -1 {
            let kib = self.peak_rss() * (PAGE / 1024);
            b[32..40].copy_from_slice(&kib.to_le_bytes()); // ru_maxrss
        }
        self.space.write(usage, &b).map_err(Touch::errno)?;
        Ok(0)
    }

    /// The most pages the process has had at once.
    fn peak_rss(&mut self) -> u64 {
        self.peak_pages = self.peak_pages.max(self.space.tree.present());
        self.peak_pages
    }

    /// `times(buf)`: clock ticks (100 a second) since boot; the process
    /// times as `getrusage`'s.
    pub fn times(&mut self, buf: u64) -> R {
        let ticks = crate::calls::now_ns() / 10_000_000;
        if buf != 0 {
            self.space.write(buf, &[0u8; 32]).map_err(Touch::errno)?;
        }
        Ok(ticks)
    }

    /// `sigaltstack(ss, old)`: the current thread's alternate signal
    /// stack, used by handlers with `SA_ONSTACK` (`signals::push_frame`).
    pub fn sigaltstack(&mut self, ss: u64, old: u64, sp: u64) -> R {
        let on = self.on_altstack(sp);
        if old != 0 {
            let (base, size, flags) = self.th.t[self.th.cur].altstack;
            let f = if on {
                SS_ONSTACK
            } else if size == 0 {
                SS_DISABLE
            } else {
                flags
            };
            let mut b = [0u8; 24];
            b[..8].copy_from_slice(&base.to_le_bytes());
            b[8..12].copy_from_slice(&(f as u32).to_le_bytes());
            b[16..].copy_from_slice(&size.to_le_bytes());
            self.space.write(old, &b).map_err(Touch::errno)?;
        }
        if ss != 0 {
            let mut b = [0u8; 24];
            self.space.read(ss, &mut b).map_err(Touch::errno)?;
            let base = u64::from_le_bytes(b[..8].try_into().unwrap_or_default());
            let flags = u32::from_le_bytes(b[8..12].try_into().unwrap_or_default()) as u64;
            let size = u64::from_le_bytes(b[16..].try_into().unwrap_or_default());
            if on {
                return Err(EPERM);
            }
            if flags & !(SS_DISABLE | SS_ONSTACK | SS_AUTODISARM) != 0 {
                return Err(EINVAL);
            }
            if flags & SS_DISABLE != 0 {
                self.th.t[self.th.cur].altstack = (0, 0, SS_DISABLE);
            } else {
                if size < MINSIGSTKSZ {
                    return Err(ENOMEM);
                }
                self.th.t[self.th.cur].altstack = (base, size, flags & SS_AUTODISARM);
            }
        }
        Ok(0)
    }

    /// Whether `sp` is on the alternate signal stack.
    pub fn on_altstack(&self, sp: u64) -> bool {
        let (base, size, _) = self.th.t[self.th.cur].altstack;
        size != 0 && sp > base && sp <= base + size
    }

    /// `mremap(old, old_len, new_len, flags, new)`: shrinking gives the
    /// tail back; growing takes the pages after it when they are free;
    /// else, with `MREMAP_MAYMOVE`, the range moves (its bytes copied to a
    /// fresh mapping of the same kind, the old one unmapped) — or to
    /// `new` with `MREMAP_FIXED`.
    pub fn mremap(&mut self, old: u64, old_len: u64, new_len: u64, flags: u64, new: u64) -> R {
        const MAYMOVE: u64 = 1;
        const FIXED: u64 = 2;
        const DONTUNMAP: u64 = 4;
        if !old.is_multiple_of(PAGE) || flags & !(MAYMOVE | FIXED | DONTUNMAP) != 0 {
            return Err(EINVAL);
        }
        if flags & FIXED != 0 && flags & MAYMOVE == 0 || flags & DONTUNMAP != 0 {
            return Err(EINVAL);
        }
        let new_len = new_len.checked_next_multiple_of(PAGE).ok_or(ENOMEM)?;
        let old_len = old_len.checked_next_multiple_of(PAGE).ok_or(ENOMEM)?;
        if new_len == 0 || old_len == 0 {
            return Err(EINVAL);
        }
        let v = *self.space.map.find(old).ok_or(EFAULT)?;
        if old + old_len > v.end {
            return Err(EFAULT);
        }
        if flags & FIXED == 0 {
            if new_len <= old_len {
                if new_len < old_len {
                    self.unmap(old + new_len, old + old_len)?;
                }
                return Ok(old);
            }
            // In place, if the pages after it are free.
            let (a, b) = (old + old_len, old + new_len);
            if old + old_len == v.end && self.space.map.place(a, b - a) == Ok(a) {
                let mut grown = v;
                grown.start = a;
                grown.end = b;
                if let Backing::File { offset, .. } = &mut grown.backing {
                    *offset += a - v.start;
                }
                if self.space.map.insert(grown).is_ok() {
                    return Ok(old);
                }
            }
            if flags & MAYMOVE == 0 {
                return Err(ENOMEM);
            }
        } else {
            if !new.is_multiple_of(PAGE) {
                return Err(EINVAL);
            }
            let (na, nb) = vm::range(new, new_len)?;
            if na < old + old_len && old < nb {
                return Err(EINVAL);
            }
            self.unmap(na, nb)?;
        }
        // Moved: a fresh mapping like it, the bytes copied.
        let prot = v.prot as u64;
        let map_flags = if v.shared { 1 } else { 2 } | if flags & FIXED != 0 { 0x10 } else { 0 };
        let (fd_like, off) = match v.backing {
            Backing::File { file, offset, .. } if v.shared && file != 0 => {
                (Some(file), offset + (old - v.start))
            }
            _ => (None, 0),
        };
        let to = match fd_like {
            Some(file) => self.mmap_file_index(new, new_len, prot, map_flags, file, off)?,
            None => self.mmap(new, new_len, prot | 3, map_flags | 0x20, u64::MAX, 0)?,
        };
        if fd_like.is_none() {
            let mut buf = [0u8; 1024];
            let mut at = 0;
            let n = old_len.min(new_len);
            while at < n {
                let k = (n - at).min(buf.len() as u64) as usize;
                // Pages never touched read as zeros without being made.
                if self.space.read(old + at, &mut buf[..k]).is_ok() {
                    self.space.write(to + at, &buf[..k]).map_err(Touch::errno)?;
                }
                at += k as u64;
            }
            if prot & 3 != 3 {
                self.mprotect(to, new_len, prot)?;
            }
        }
        self.unmap(old, old + old_len)?;
        Ok(to)
    }

    /// `waitid(idtype, id, infop, options)`: `P_ALL`, `P_PID`, `P_PGID`
    /// (and `P_PIDFD`: not supported, `EINVAL`), `WEXITED` with `WNOHANG`
    /// and `WNOWAIT`; the child's end in a `siginfo_t` (`CLD_EXITED`,
    /// `CLD_KILLED`). No child here ever stops or continues, so a wait for
    /// only those waits for a signal.
    pub fn waitid(&mut self, idtype: u64, id: u64, infop: u64, options: u64) -> R {
        const WNOHANG: u64 = 1;
        const WSTOPPED: u64 = 2;
        const WEXITED: u64 = 4;
        const WCONTINUED: u64 = 8;
        const WNOWAIT: u64 = 0x0100_0000;
        const WALL: u64 = 0x4000_0000;
        const WCLONE: u64 = 0x8000_0000;
        const WNOTHREAD: u64 = 0x2000_0000;
        let known = WNOHANG | WSTOPPED | WEXITED | WCONTINUED | WNOWAIT | WALL | WCLONE | WNOTHREAD;
        if options & !known != 0 || options & (WEXITED | WSTOPPED | WCONTINUED) == 0 {
            return Err(EINVAL);
        }
        // P_PIDFD: its process; a nonblocking pidfd waits as `WNOHANG`
        // does but answers `EAGAIN` for nothing yet.
        let mut options = options;
        let mut eagain = false;
        let which = match idtype {
            0 => u64::MAX, // P_ALL: -1
            1 if id as u32 as i32 > 0 => id as u32 as u64,
            3 => {
                let (pid, _, nonblock) = self.pidfd_pid(id as u32 as u64)?;
                if nonblock && options & WNOHANG == 0 {
                    options |= WNOHANG;
                    eagain = true;
                }
                pid
            }
            2 if id as u32 as i32 >= 0 => {
                if id as u32 == 0 {
                    0
                } else {
                    (-(id as u32 as i64)) as u64
                }
            }
            _ => return Err(EINVAL),
        };
        // wait_child's options: WUNTRACED is WSTOPPED's value; waitid
        // without WEXITED reports no ends.
        let opts = options & (WNOHANG | WSTOPPED | WCONTINUED)
            | if options & WEXITED == 0 { 1 << 40 } else { 0 };
        let (pid, status) = self.wait_child(which, 0, opts, options & WNOWAIT != 0)?;
        if pid == 0 && eagain {
            return Err(EAGAIN);
        }
        if pid == 0 {
            self.write_siginfo(infop, 0, 0, 0)?;
            return Ok(0);
        }
        let (code, st) = if status == 0xffff {
            (6, 18) // CLD_CONTINUED, SIGCONT
        } else if status & 0xff == 0x7f {
            (5, (status >> 8) & 0xff) // CLD_STOPPED
        } else if status & 0x7f == 0 {
            (1, (status >> 8) & 0xff) // CLD_EXITED
        } else if status & 0x80 != 0 {
            (3, status & 0x7f) // CLD_DUMPED
        } else {
            (2, status & 0x7f) // CLD_KILLED
        };
        self.write_siginfo(infop, pid, code, st as u64)?;
        Ok(0)
    }

    /// A `SIGCHLD` `siginfo_t` at `at` (0: none wanted): pid 0 clears it.
    fn write_siginfo(&mut self, at: u64, pid: u64, code: u64, status: u64) -> Result<(), i64> {
        if at == 0 {
            return Ok(());
        }
        let mut b = [0u8; 128];
        if pid != 0 {
            b[..4].copy_from_slice(&17u32.to_le_bytes()); // SIGCHLD
            b[8..12].copy_from_slice(&(code as u32).to_le_bytes());
            b[16..20].copy_from_slice(&(pid as u32).to_le_bytes());
            b[24..28].copy_from_slice(&(status as u32).to_le_bytes());
        }
        self.space.write(at, &b).map_err(Touch::errno)
    }

    /// Installs unixd's new fid `fid` as the lowest free descriptor.
    pub(crate) fn install_fid(&mut self, fid: u64, cloexec: bool) -> R {
        match self.lowest_free_fd() {
            Ok(fd) => {
                self.set_fd(fd, fid as u32, cloexec);
                Ok(fd as u64)
            }
            Err(e) => {
                let _ = crate::fds::ux(stet_unix::proto::CLOSE, [fid, 0, 0, 0], &[]);
                Err(e)
            }
        }
    }

    /// `eventfd2(initval, flags)` (and `eventfd`, flags 0).
    pub fn eventfd(&mut self, init: u64, flags: u64) -> R {
        const EFD_SEMAPHORE: u64 = 1;
        use stet_unix::proto::o::{CLOEXEC, NONBLOCK};
        if flags & !(EFD_SEMAPHORE | CLOEXEC | NONBLOCK) != 0 {
            return Err(EINVAL);
        }
        let fid = crate::fds::ux(
            stet_unix::proto::EVENTFD,
            [init as u32 as u64, flags & (EFD_SEMAPHORE | NONBLOCK), 0, 0],
            &[],
        )
        .0?;
        self.install_fid(fid, flags & CLOEXEC != 0)
    }

    /// `timerfd_create(clock, flags)`.
    pub fn timerfd_create(&mut self, clock: u64, flags: u64) -> R {
        use stet_unix::proto::o::{CLOEXEC, NONBLOCK};
        match clock as u32 {
            0 | 1 | 7 => {}
            8 | 9 if !self.cred.capable(cap::WAKE_ALARM) => return Err(EPERM),
            8 | 9 => {}
            _ => return Err(EINVAL),
        }
        if flags & !(CLOEXEC | NONBLOCK) != 0 {
            return Err(EINVAL);
        }
        let fid = crate::fds::ux(
            stet_unix::proto::TIMERFD,
            [flags & NONBLOCK, clock as u32 as u64, 0, 0],
            &[],
        )
        .0?;
        self.install_fid(fid, flags & CLOEXEC != 0)
    }

    /// `timerfd_settime(fd, flags, new, old)` and `timerfd_gettime(fd,
    /// cur)` (`new` 0).
    pub fn timerfd_settime(&mut self, fd: u64, flags: u64, new: u64, old: u64) -> R {
        let fid = self.fid(fd)?;
        if flags & !3 != 0 {
            return Err(EINVAL);
        }
        let mut set = None;
        if new != 0 {
            let interval = self.timespec(new)?;
            let value = self.timespec(new + 16)?;
            set = Some((interval, value));
        }
        let (order, w1, w2, s) = match set {
            Some((i, v)) => (stet_unix::proto::TIMERFD_SET, v, flags & 1, i.to_le_bytes()),
            None => (stet_unix::proto::TIMERFD_GET, 0, 0, [0u8; 8]),
        };
        let mut out = [0u8; 16];
        let a = stet_rt::key::Msg::new(crate::slots::UNIXD, order)
            .words([fid, w1, w2, 0])
            .string(if set.is_some() { &s[..] } else { &[] })
            .call_into(&mut out);
        crate::fds::result(&a).unwrap_or(Err(EIO))?;
        if old != 0 {
            let left = u64::from_le_bytes(out[..8].try_into().unwrap_or_default());
            let iv = u64::from_le_bytes(out[8..].try_into().unwrap_or_default());
            let b = stet_unix::clockid::itimerspec(iv, left);
            self.space.write(old, &b).map_err(Touch::errno)?;
        }
        Ok(0)
    }

    /// `clock_settime(clock, tp)`: the realtime clock, by root (`EPERM`);
    /// the kernel's wall clock goes on from it, for every process.
    pub fn clock_settime(&mut self, clk: u64, tp: u64) -> R {
        if clk as u32 != 0 {
            // The other clocks cannot be set (Linux: EINVAL).
            return Err(EINVAL);
        }
        let mut b = [0u8; 16];
        self.space.read(tp, &mut b).map_err(Touch::errno)?;
        let s = i64::from_le_bytes(b[..8].try_into().unwrap_or_default());
        let ns = i64::from_le_bytes(b[8..].try_into().unwrap_or_default());
        if s < 0 || !(0..1_000_000_000).contains(&ns) {
            return Err(EINVAL);
        }
        if !self.cred.capable(cap::SYS_TIME) {
            return Err(EPERM);
        }
        let t = (s as u64)
            .saturating_mul(1_000_000_000)
            .saturating_add(ns as u64);
        stet_rt::key::call(
            crate::slots::SLEEP,
            stet_rt::abi::order::sleep::SET_WALL,
            [t, 0, 0, 0],
        );
        Ok(0)
    }

    /// `settimeofday(tv, tz)`: as `clock_settime` (the time zone is not
    /// kept: Linux keeps it only for old programs).
    pub fn settimeofday(&mut self, tv: u64, _tz: u64) -> R {
        if tv == 0 {
            return if self.cred.capable(cap::SYS_TIME) {
                Ok(0)
            } else {
                Err(EPERM)
            };
        }
        let mut b = [0u8; 16];
        self.space.read(tv, &mut b).map_err(Touch::errno)?;
        let s = i64::from_le_bytes(b[..8].try_into().unwrap_or_default());
        let us = i64::from_le_bytes(b[8..].try_into().unwrap_or_default());
        if s < 0 || !(0..1_000_000).contains(&us) {
            return Err(EINVAL);
        }
        if !self.cred.capable(cap::SYS_TIME) {
            return Err(EPERM);
        }
        let t = (s as u64)
            .saturating_mul(1_000_000_000)
            .saturating_add(us as u64 * 1000);
        stet_rt::key::call(
            crate::slots::SLEEP,
            stet_rt::abi::order::sleep::SET_WALL,
            [t, 0, 0, 0],
        );
        Ok(0)
    }

    /// `fallocate(fd, mode, offset, len)`: mode 0 makes the file at least
    /// `offset + len` long (its pages come at the first write, as every
    /// page here); `FALLOC_FL_KEEP_SIZE` has nothing to do;
    /// `FALLOC_FL_PUNCH_HOLE` (with `KEEP_SIZE`, as Linux requires) writes
    /// zeros over the range within the file (a write: a write seal is
    /// `EPERM`; the pages stay); other modes are `EOPNOTSUPP`.
    pub fn fallocate(&mut self, fd: u64, mode: u64, off: u64, len: u64) -> R {
        const KEEP_SIZE: u64 = 1;
        const PUNCH_HOLE: u64 = 2;
        let fid = self.fid(fd)?;
        if (off as i64) < 0 || (len as i64) <= 0 {
            return Err(EINVAL);
        }
        let punch = mode == KEEP_SIZE | PUNCH_HOLE;
        if mode & !KEEP_SIZE != 0 && !punch {
            return Err(EOPNOTSUPP);
        }
        // Written through a descriptor open for writing (`EBADF`).
        let fl = crate::fds::ux(stet_unix::proto::FLAGS, [fid, 0, 0, 0], &[]).0?;
        if fl & stet_unix::proto::o::ACCMODE == stet_unix::proto::o::RDONLY
            || fl & stet_unix::proto::o::PATH != 0
        {
            return Err(EBADF);
        }
        if !self.fds[fd as u32 as usize].regular {
            return Err(ESPIPE);
        }
        let end = off
            .checked_add(len)
            .filter(|&e| e <= i64::MAX as u64)
            .ok_or(EFBIG)?;
        let mut st = [0u8; 144];
        let a = stet_rt::key::Msg::new(crate::slots::UNIXD, stet_unix::proto::FSTAT)
            .words([fid, 0, 0, 0])
            .call_into(&mut st);
        crate::fds::result(&a).unwrap_or(Err(EIO))?;
        let size = u64::from_le_bytes(st[48..56].try_into().unwrap_or_default());
        if punch {
            let zeros = [0u8; 4096];
            let mut at = off;
            while at < end.min(size) {
                let n = (end.min(size) - at).min(4096);
                crate::fds::ux(
                    stet_unix::proto::PWRITE,
                    [fid, at, 0, 0],
                    &zeros[..n as usize],
                )
                .0?;
                at += n;
            }
            return Ok(0);
        }
        if mode & KEEP_SIZE == 0 && end > size {
            let r = crate::fds::ux(stet_unix::proto::TRUNCATE, [fid, end, self.fsize(), 0], &[]).0;
            self.over_fsize(r)?;
        }
        Ok(0)
    }

    /// `copy_file_range(in, off_in, out, off_out, len, flags)`: through
    /// the keeper, a page at a time (`sendfile` with two offsets).
    pub fn copy_file_range(
        &mut self,
        fin: u64,
        offin: u64,
        fout: u64,
        offout: u64,
        len: u64,
        flags: u64,
    ) -> R {
        if flags != 0 {
            return Err(EINVAL);
        }
        let (fi, fo) = (self.fid(fin)?, self.fid(fout)?);
        if !self.fds[fin as u32 as usize].regular || !self.fds[fout as u32 as usize].regular {
            return Err(EINVAL);
        }
        let read_off = |k: &mut Keeper, p: u64| -> Result<Option<u64>, i64> {
            if p == 0 {
                return Ok(None);
            }
            let mut b = [0u8; 8];
            k.space.read(p, &mut b).map_err(Touch::errno)?;
            let v = i64::from_le_bytes(b);
            if v < 0 {
                return Err(EINVAL);
            }
            Ok(Some(v as u64))
        };
        let mut oi = read_off(self, offin)?;
        let mut oo = read_off(self, offout)?;
        let mut done = 0u64;
        let mut buf = [0u8; 4096];
        while done < len {
            let n = (len - done).min(4096);
            let (order, w) = match oi {
                Some(o) => (stet_unix::proto::PREAD, [fi, n, o, 0]),
                None => (stet_unix::proto::READ, [fi, n, 0, 0]),
            };
            let a = stet_rt::key::Msg::new(crate::slots::UNIXD, order)
                .words(w)
                .call_into(&mut buf);
            let got = match crate::fds::result(&a).unwrap_or(Err(EIO)) {
                Ok(0) => break,
                Ok(g) => g,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            };
            let data = buf.get(..got as usize).ok_or(EIO)?;
            let put = match oo {
                Some(o) => crate::fds::ux(stet_unix::proto::PWRITE, [fo, o, 0, 0], data).0,
                None => crate::fds::ux(stet_unix::proto::WRITE, [fo, 0, 0, 0], data).0,
            };
            let k = match put {
                Ok(k) => k,
                Err(e) if done == 0 => return Err(e),
                Err(_) => break,
            };
            done += k;
            oi = oi.map(|o| o + k);
            oo = oo.map(|o| o + k);
            if k < got {
                break;
            }
        }
        for (p, o) in [(offin, oi), (offout, oo)] {
            if let (true, Some(v)) = (p != 0, o) {
                self.space
                    .write(p, &v.to_le_bytes())
                    .map_err(Touch::errno)?;
            }
        }
        Ok(done)
    }

    /// Whether address `a` is in a file mapping whose file has the page
    /// (unixd's [`stet_unix::proto::PAGES`]).
    fn file_page_resident(&self, a: u64) -> bool {
        use stet_unix::vm::Backing;
        let Some(v) = self.space.map.find(a) else {
            return false;
        };
        let Backing::File { file, offset, .. } = v.backing else {
            return false;
        };
        let Some(fid) = self.space.file_fid(file) else {
            return false;
        };
        let page = (offset + (a - v.start)) / PAGE;
        let mut b = [0u8; 1];
        let r = stet_rt::key::Msg::new(crate::slots::UNIXD, stet_unix::proto::PAGES)
            .words([fid as u64, page, 1, 0])
            .call_into(&mut b);
        crate::fds::result(&r).unwrap_or(Err(EIO)).is_ok() && b[0] == 1
    }

    /// `mincore(addr, len, vec)`: a byte per page, 1 where the page exists
    /// in the process or, for a file mapping, in the file (`ENOMEM` where
    /// nothing is mapped, `EINVAL` unaligned).
    pub fn mincore(&mut self, addr: u64, len: u64, vec: u64) -> R {
        if !addr.is_multiple_of(PAGE) {
            return Err(EINVAL);
        }
        let end = addr.checked_add(len).ok_or(ENOMEM)?.next_multiple_of(PAGE);
        let mut at = addr;
        while at < end {
            let v = self.space.map.find(at).ok_or(ENOMEM)?;
            at = v.end;
        }
        let mut b = [0u8; 256];
        let mut p = addr;
        while p < end {
            let n = (((end - p) / PAGE) as usize).min(b.len());
            for (i, x) in b[..n].iter_mut().enumerate() {
                *x = self.space.tree.page((p / PAGE) + i as u64).is_some() as u8;
            }
            // A file mapping's page the process has not touched is still
            // resident if the file has it (another process made it: Linux's
            // page cache).
            for (i, x) in b[..n].iter_mut().enumerate() {
                if *x == 0 {
                    *x = self.file_page_resident(p + i as u64 * PAGE) as u8;
                }
            }
            self.space
                .write(vec + (p - addr) / PAGE, &b[..n])
                .map_err(Touch::errno)?;
            p += n as u64 * PAGE;
        }
        Ok(0)
    }
}
