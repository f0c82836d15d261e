//! System V IPC's system calls (man 7 sysvipc): the keeper checks the
//! arguments Linux checks before anything else, moves the process's bytes
//! (`struct sembuf`s, messages, the `*id_ds` structures, `GETALL`'s and
//! `SETALL`'s values) and asks unixd, which keeps the objects
//! (`proto::SHMGET` … `proto::IPC_MORE`). A wait parks in unixd like
//! every other (a signal ends it with `EINTR`, and these calls are never
//! restarted: `sysv::never_restarted`). What does not fit one message (a
//! message's text past 4,096 bytes, a large set's values) goes in pieces.
//!
//! `shmat` maps the fid unixd answers as a shared file mapping, so the
//! segment is a file's pages, shared by every attach and across `fork`
//! (which gives the child a reference to each mapped file: one more
//! attach); `shmdt`, `munmap`, `execve` and the end give the reference
//! back, and the last is the detach.

use crate::calls::{now_ns, result};
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::abi::code::Code;
use stet_rt::key::{Answer, Msg};
use stet_unix::elf::prot;
use stet_unix::layout::{PAGE, USER_MIN};
use stet_unix::proto::{self, ipc_kind};
use stet_unix::sys::errno::*;
use stet_unix::sysv::{self, limit, nr, size};
use stet_unix::vm::{self, Backing, Vma};

type R = Result<u64, i64>;

/// The most bytes one message to unixd carries.
const PIECE: usize = 4096;

/// A C `int` argument, sign-extended.
fn int(v: u64) -> i64 {
    v as u32 as i32 as i64
}

/// Whether system call `n` is one of these (or a POSIX message queue's:
/// `mqueue`).
pub fn handles(n: u64) -> bool {
    matches!(
        n,
        nr::SHMGET
            | nr::SHMAT
            | nr::SHMCTL
            | nr::SHMDT
            | nr::SEMGET
            | nr::SEMOP
            | nr::SEMTIMEDOP
            | nr::SEMCTL
            | nr::MSGGET
            | nr::MSGSND
            | nr::MSGRCV
            | nr::MSGCTL
            | nr::MQ_OPEN..=nr::MQ_GETSETATTR
    )
}

impl Keeper {
    /// System V IPC call `n` with arguments `a`.
    pub(crate) fn sysv(&mut self, n: u64, a: &[u64; 6]) -> R {
        match n {
            nr::SHMGET => self.unixd(
                proto::SHMGET,
                [int(a[0]) as u64, a[1], a[2] as u32 as u64, 0],
            ),
            nr::SHMAT => self.shmat(int(a[0]), a[1], a[2] as u32),
            nr::SHMDT => self.shmdt(a[0]),
            nr::SHMCTL => self.ctl(ipc_kind::SHM, int(a[0]), 0, int(a[1]), a[2]),
            nr::SEMGET => self.unixd(
                proto::SEMGET,
                [int(a[0]) as u64, int(a[1]) as u64, a[2] as u32 as u64, 0],
            ),
            nr::SEMOP => self.semtimedop(int(a[0]), a[1], a[2], 0),
            nr::SEMTIMEDOP => self.semtimedop(int(a[0]), a[1], a[2], a[3]),
            nr::SEMCTL => self.ctl(ipc_kind::SEM, int(a[0]), int(a[1]), int(a[2]), a[3]),
            nr::MSGGET => self.unixd(proto::MSGGET, [int(a[0]) as u64, a[1] as u32 as u64, 0, 0]),
            nr::MSGSND => self.msgsnd(int(a[0]), a[1], a[2], a[3] as u32),
            nr::MSGRCV => self.msgrcv(int(a[0]), a[1], a[2], a[3] as i64, a[4] as u32),
            nr::MSGCTL => self.ctl(ipc_kind::MSG, int(a[0]), 0, int(a[1]), a[2]),
            nr::MQ_OPEN..=nr::MQ_GETSETATTR => self.mq(n, a),
            _ => Err(ENOSYS),
        }
    }

    /// A call to unixd that may wait: asked again when unixd answers
    /// `BUSY` (a wait that ended for another), `EINTR` when a signal is
    /// already here (unless it would not wait).
    fn ipc_wait(
        &mut self,
        order: u64,
        w: [u64; 3],
        s: &[u8],
        out: &mut [u8],
        wait: bool,
    ) -> Answer {
        loop {
            if wait && self.interrupted() {
                return Answer {
                    info: 0,
                    source: 0,
                    buffer_fault: false,
                    label: 0,
                    code: Code::Ok.into(),
                    w: [(-EINTR) as u64, 0, 0, 0],
                    len: 0,
                };
            }
            let intr = self.interrupting();
            let a = Msg::new(UNIXD, self.tagged(order))
                .words([w[0], w[1], w[2], intr])
                .string(s)
                .call_into(out);
            if a.code != Code::Busy {
                return a;
            }
        }
    }

    /// `semop` and `semtimedop`.
    fn semtimedop(&mut self, id: i64, sops: u64, nsops: u64, timeout: u64) -> R {
        let n = nsops as u32 as usize;
        if n < 1 || id < 0 {
            return Err(EINVAL);
        }
        if n > limit::SEMOPM as usize {
            return Err(E2BIG);
        }
        let mut b = [0u8; limit::SEMOPM as usize * size::SEMBUF];
        let b = &mut b[..n * size::SEMBUF];
        self.space.read(sops, b).map_err(Touch::errno)?;
        let deadline = if timeout != 0 {
            now_ns().saturating_add(self.timespec(timeout)?)
        } else {
            u64::MAX
        };
        let deadline = self.keep_deadline(deadline);
        let a = self.ipc_wait(proto::SEMOP, [id as u64, deadline, 0], b, &mut [], true);
        result(&a)
    }

    /// `msgsnd`: the type and text, the text past the first pieces staged.
    fn msgsnd(&mut self, id: i64, msgp: u64, msgsz: u64, flags: u32) -> R {
        if msgsz > limit::MSGMAX as u64 || id < 0 {
            return Err(EINVAL);
        }
        let mut mt = [0u8; 8];
        self.space.read(msgp, &mut mt).map_err(Touch::errno)?;
        let mtype = i64::from_le_bytes(mt);
        if mtype < 1 {
            return Err(EINVAL);
        }
        let mut text = [0u8; limit::MSGMAX as usize];
        let text = &mut text[..msgsz as usize];
        self.space
            .read(msgp.checked_add(8).ok_or(EFAULT)?, text)
            .map_err(Touch::errno)?;
        // All but the last piece are staged, again each time it is asked
        // (unixd takes them with the `MSGSND` it serves).
        let last = text.len().saturating_sub(1) / PIECE * PIECE;
        let wait = flags & sysv::IPC_NOWAIT == 0;
        loop {
            if wait && self.interrupted() {
                return Err(EINTR);
            }
            for at in (0..last).step_by(PIECE) {
                let a = Msg::new(UNIXD, self.tagged(proto::IPC_MORE))
                    .words([0, at as u64, 0, 0])
                    .string(&text[at..at + PIECE])
                    .call();
                result(&a)?;
            }
            let intr = self.interrupting();
            let a = Msg::new(UNIXD, self.tagged(proto::MSGSND))
                .words([id as u64, mtype as u64, msgsz | (flags as u64) << 32, intr])
                .string(&text[last..])
                .call();
            if a.code != Code::Busy {
                return result(&a);
            }
        }
    }

    /// `msgrcv`: the type and the text, written once unixd has chosen the
    /// message (a buffer that turns out bad loses it, as on Linux).
    fn msgrcv(&mut self, id: i64, msgp: u64, msgsz: u64, typ: i64, flags: u32) -> R {
        if id < 0 || (msgsz as i64) < 0 {
            return Err(EINVAL);
        }
        let max = msgsz.min(limit::MSGMAX as u64);
        let wait = flags & sysv::IPC_NOWAIT == 0;
        let mut buf = [0u8; PIECE];
        let w = [id as u64, typ as u64, max | (flags as u64) << 32];
        let a = self.ipc_wait(proto::MSGRCV, w, &[], &mut buf, wait);
        let n = result(&a)? as usize;
        let text = msgp.checked_add(8).ok_or(EFAULT)?;
        self.space
            .write(msgp, &a.w[1].to_le_bytes())
            .map_err(Touch::errno)?;
        let first = n.min(PIECE).min(a.len);
        self.space
            .write(text, &buf[..first])
            .map_err(Touch::errno)?;
        let mut at = first;
        while at < n {
            let a = Msg::new(UNIXD, self.tagged(proto::IPC_MORE))
                .words([1, at as u64, 0, 0])
                .call_into(&mut buf);
            let got = (result(&a)? as usize).min(a.len).min(n - at);
            if got == 0 {
                return Err(EIO);
            }
            self.space
                .write(text.saturating_add(at as u64), &buf[..got])
                .map_err(Touch::errno)?;
            at += got;
        }
        Ok(n as u64)
    }

    /// `shmat`: unixd checks the segment and the caller and answers a fid
    /// of it, which is mapped shared at the address asked (rounded down
    /// with `SHM_RND`; `EINVAL` over another mapping without `SHM_REMAP`)
    /// or one chosen as `mmap` chooses.
    fn shmat(&mut self, id: i64, addr: u64, flags: u32) -> R {
        if id < 0 {
            return Err(EINVAL);
        }
        let mut at = addr;
        if at != 0 {
            if !at.is_multiple_of(sysv::SHMLBA) {
                if flags & sysv::SHM_RND == 0 {
                    return Err(EINVAL);
                }
                at &= !(sysv::SHMLBA - 1);
                if at == 0 && flags & sysv::SHM_REMAP != 0 {
                    return Err(EINVAL);
                }
            }
        } else if flags & sysv::SHM_REMAP != 0 {
            return Err(EINVAL);
        }
        let a = Msg::new(UNIXD, proto::SHMAT)
            .words([id as u64, flags as u64, 0, 0])
            .call();
        let fid = result(&a)?;
        let len = a.w[1].checked_next_multiple_of(PAGE).ok_or(ENOMEM);
        let start = len.and_then(|len| self.shm_place(at, len, flags).map(|s| (s, len)));
        let file = start.and_then(|_| self.space.add_file(fid as u32).ok_or(ENOMEM));
        let (start, len, file) = match (start, file) {
            (Ok((s, len)), Ok(f)) => (s, len, f),
            (Err(e), _) | (_, Err(e)) => {
                crate::signals::tell_unixd(Msg::new(UNIXD, proto::CLOSE).w0(fid));
                return Err(e);
            }
        };
        let mut p = prot::READ;
        if flags & sysv::SHM_RDONLY == 0 {
            p |= prot::WRITE;
        }
        if flags & sysv::SHM_EXEC != 0 {
            p |= prot::EXEC;
        }
        let r = self.space.map.insert(Vma {
            start,
            end: start + len,
            prot: p,
            shared: true,
            grows_down: false,
            locked: false,
            backing: Backing::File {
                file,
                offset: 0,
                zero_from: u64::MAX,
            },
        });
        if let Err(e) = r {
            // (The file's reference goes back: nothing maps it.)
            self.space.release_files();
            return Err(e);
        }
        Ok(start)
    }

    /// Where `shmat` maps `len` bytes: `at`, or a place of its own (0).
    fn shm_place(&mut self, at: u64, len: u64, flags: u32) -> R {
        if at == 0 {
            return self.space.map.place(0, len);
        }
        let (a, b) = vm::range(at, len)?;
        if a < USER_MIN {
            return Err(EINVAL);
        }
        if flags & sysv::SHM_REMAP != 0 {
            self.unmap(a, b)?;
        } else if self.space.map.place(a, len) != Ok(a) {
            return Err(EINVAL);
        }
        Ok(a)
    }

    /// `mprotect` adding write to `[a, b)`: a shared mapping of a file
    /// that is not open for writing may not (`EACCES`, Linux's missing
    /// `VM_MAYWRITE`) — a `SHM_RDONLY` attach, or `MAP_SHARED` of a file
    /// opened read-only.
    pub(crate) fn may_write_shared(&mut self, a: u64, b: u64) -> Result<(), i64> {
        // Each mapped file once (there are at most `MAX_FILES`).
        let mut fids = [0u32; crate::space::MAX_FILES];
        let mut n = 0;
        for v in self.space.map.vmas() {
            if let Backing::File { file, .. } = v.backing {
                let fid = self.space.file_fid(file).unwrap_or(u32::MAX);
                let seen = fids[..n].contains(&fid);
                if v.shared && v.start < b && v.end > a && !seen && n < fids.len() {
                    fids[n] = fid;
                    n += 1;
                }
            }
        }
        for &fid in &fids[..n] {
            let flags = self.unixd(proto::FLAGS, [fid as u64, 0, 0, 0])?;
            if flags & proto::o::ACCMODE != proto::o::RDWR {
                return Err(EACCES);
            }
            // A memfd sealed against writes (F_SEAL_WRITE 8,
            // F_SEAL_FUTURE_WRITE 0x10) is not made writable (Linux: the
            // mapping may not become writable, EACCES).
            if self.unixd(proto::SEALS, [fid as u64, 0, 0, 0]).unwrap_or(0) & 0x18 != 0 {
                return Err(EACCES);
            }
        }
        Ok(())
    }

    /// `shmdt`: the ranges of the segment attached at `addr` (Linux: the
    /// mapping starting there, and the rest of that attach within the
    /// segment's size) are unmapped; the attach's last reference goes
    /// with them.
    fn shmdt(&mut self, addr: u64) -> R {
        if !addr.is_multiple_of(PAGE) {
            return Err(EINVAL);
        }
        let v = *self
            .space
            .map
            .find(addr)
            .filter(|v| v.start == addr && v.shared)
            .ok_or(EINVAL)?;
        let Backing::File {
            file, offset: 0, ..
        } = v.backing
        else {
            return Err(EINVAL);
        };
        let fid = self.space.file_fid(file).ok_or(EINVAL)?;
        let size = self
            .unixd(proto::SHMDT, [fid as u64, 0, 0, 0])
            .map_err(|_| EINVAL)?;
        let end = addr
            .saturating_add(size.next_multiple_of(PAGE))
            .min(stet_unix::layout::USER_END);
        // A piece at a time (an attach `mprotect` split has several).
        loop {
            let next = self.space.map.vmas().iter().find_map(|v| {
                let same = matches!(v.backing, Backing::File { file: f, .. } if f == file);
                (same && v.start < end && v.end > addr).then(|| (v.start.max(addr), v.end.min(end)))
            });
            match next {
                Some((a, b)) => self.unmap(a, b)?,
                None => break,
            }
        }
        Ok(0)
    }

    /// `IPCCTL` → the answer, with the string into `out`.
    fn ctl_call(
        &mut self,
        kind: u64,
        cmd: i64,
        num: i64,
        w: [u64; 2],
        s: &[u8],
        out: &mut [u8],
    ) -> Answer {
        let w0 = kind | ((cmd as u64) & 0xff_ffff) << 8 | (num as u32 as u64) << 32;
        Msg::new(UNIXD, self.tagged(proto::IPCCTL))
            .words([w0, w[0], w[1], 0])
            .string(s)
            .call_into(out)
    }

    /// `shmctl`, `semctl` and `msgctl`: `arg` the buffer (or `SETVAL`'s
    /// value).
    fn ctl(&mut self, kind: u64, id: i64, num: i64, cmd: i64, arg: u64) -> R {
        use sysv::*;
        // (No command is above 20: a bigger one is no command, whatever
        // its low bits say.)
        if id < 0 || !(0..=0xff).contains(&cmd) {
            return Err(EINVAL);
        }
        let cmd32 = cmd as u32;
        let ds = match kind {
            ipc_kind::SHM => size::SHMID_DS,
            ipc_kind::SEM => size::SEMID_DS,
            _ => size::MSQID_DS,
        };
        let mut buf = [0u8; PIECE];
        match (kind, cmd32) {
            (ipc_kind::SEM, GETALL) => return self.getall(id, arg),
            (ipc_kind::SEM, SETALL) => return self.setall(id, arg),
            (_, IPC_SET) => {
                let mut inp = [0u8; size::MSQID_DS];
                self.space.read(arg, &mut inp[..ds]).map_err(Touch::errno)?;
                let a = self.ctl_call(kind, cmd, num, [id as u64, 0], &inp[..ds], &mut buf);
                return result(&a);
            }
            _ => {}
        }
        let value = if kind == ipc_kind::SEM && cmd32 == SETVAL {
            arg
        } else {
            0
        };
        let a = self.ctl_call(kind, cmd, num, [id as u64, value], &[], &mut buf);
        let r = result(&a)?;
        let len = a.len.min(buf.len());
        if len > 0 {
            self.space.write(arg, &buf[..len]).map_err(Touch::errno)?;
        }
        Ok(r)
    }

    /// `semctl(GETALL)`: the values, a piece at a time.
    fn getall(&mut self, id: i64, to: u64) -> R {
        let mut buf = [0u8; PIECE];
        let mut first = 0u64;
        loop {
            let a = self.ctl_call(
                ipc_kind::SEM,
                sysv::GETALL as i64,
                0,
                [id as u64, first],
                &[],
                &mut buf,
            );
            result(&a)?;
            let len = a.len.min(buf.len()) & !1;
            let at = to.checked_add(2 * first).ok_or(EFAULT)?;
            self.space.write(at, &buf[..len]).map_err(Touch::errno)?;
            first += len as u64 / 2;
            if len == 0 || first >= a.w[1] {
                return Ok(0);
            }
        }
    }

    /// `semctl(SETALL)`: the set's size first, then the values, staged
    /// but for the last piece.
    fn setall(&mut self, id: i64, from: u64) -> R {
        let mut buf = [0u8; PIECE];
        let cmd = sysv::SETALL as i64;
        let a = self.ctl_call(ipc_kind::SEM, cmd, 0, [id as u64, 0], &[], &mut buf);
        result(&a)?;
        let total = (a.w[1] as usize).min(limit::SEMMSL as usize) * 2;
        let last = total.saturating_sub(1) / PIECE * PIECE;
        for at in (0..last).step_by(PIECE) {
            let src = from.checked_add(at as u64).ok_or(EFAULT)?;
            self.space.read(src, &mut buf).map_err(Touch::errno)?;
            let a = Msg::new(UNIXD, self.tagged(proto::IPC_MORE))
                .words([0, at as u64, 0, 0])
                .string(&buf)
                .call();
            result(&a)?;
        }
        let tail = &mut buf[..total - last];
        let src = from.checked_add(last as u64).ok_or(EFAULT)?;
        self.space.read(src, tail).map_err(Touch::errno)?;
        let mut ignored = [0u8; 0];
        let w = [id as u64, 1 + total as u64];
        let a = self.ctl_call(ipc_kind::SEM, cmd, 0, w, tail, &mut ignored);
        result(&a)
    }
}
