//! The calls that describe the system as a whole: `statfs` and `fstatfs`
//! (unixd says which file system and how full), `syslog` (the kernel log
//! unixd keeps: `dmesg`), and `sysinfo`. Each is one message to unixd, or
//! a few for a log longer than one message's string.

use crate::calls::{now_ns, result};
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::abi::code::Code;
use stet_rt::key::Msg;
use stet_unix::klog::LOG_BYTES;
use stet_unix::procgen::Sysinfo;
use stet_unix::proto;
use stet_unix::sys::errno::*;
use stet_unix::sys::statfs::SIZE;
use stet_unix::sys::syslog as s;

type R = Result<u64, i64>;

/// What one message carries of the log.
const CHUNK: u64 = 4096;

impl Keeper {
    /// `statfs(path, buf)`.
    pub(crate) fn statfs(&mut self, path: u64, buf: u64) -> R {
        let mut pb = [0u8; 4096];
        let p = self.path(path, &mut pb)?;
        if p.is_empty() {
            return Err(ENOENT);
        }
        // Relative to the working directory.
        let base = self.cwd as u64;
        self.statfs_out(base, p, buf)
    }

    /// `fstatfs(fd, buf)`.
    pub(crate) fn fstatfs(&mut self, fd: u64, buf: u64) -> R {
        let fid = self.fid(fd)?;
        self.statfs_out(fid, &[], buf)
    }

    fn statfs_out(&mut self, base: u64, path: &[u8], buf: u64) -> R {
        let mut st = [0u8; SIZE];
        let a = Msg::new(UNIXD, proto::STATFS)
            .words([base, 0, 0, 0])
            .string(path)
            .call_into(&mut st);
        result(&a)?;
        self.space.write(buf, &st).map_err(Touch::errno)?;
        Ok(0)
    }

    /// `syslog(type, buf, len)` (glibc's `klogctl`).
    pub(crate) fn syslog(&mut self, ty: u64, buf: u64, len: u64) -> R {
        // Who may (Linux's `check_syslog_permissions`), before anything:
        // with `dmesg_restrict` only `CAP_SYSLOG` (or `CAP_SYS_ADMIN`),
        // without it anyone may read the whole log and its size.
        use stet_unix::cred::cap;
        if !self.cred.capable(cap::SYSLOG) && !self.cred.capable(cap::SYS_ADMIN) {
            let restrict =
                self.unixd(proto::SYSMISC, [proto::sysmisc::DMESG_RESTRICT, 0, 0, 0])? != 0;
            if restrict || !matches!(ty as u32 as u64, s::READ_ALL | s::SIZE_BUFFER) {
                return Err(EPERM);
            }
        }
        // Both are C `int`s.
        let ty = ty as u32 as i32 as i64;
        let len = len as u32 as i32 as i64;
        if !(0..=s::SIZE_BUFFER as i64).contains(&ty) {
            return Err(EINVAL);
        }
        let ty = ty as u64;
        if !matches!(ty, s::READ | s::READ_ALL | s::READ_CLEAR) {
            return self.unixd(proto::SYSLOG, [ty, len as u64, 0, 0]);
        }
        if buf == 0 || len < 0 {
            return Err(EINVAL);
        }
        if len == 0 {
            return Ok(0);
        }
        // Never more than the whole log.
        let len = (len as u64).min(LOG_BYTES as u64);
        let mut done = 0;
        // `READ_ALL`'s position and end, after its first message.
        let mut span = (u64::MAX, len);
        loop {
            let n = (len - done).min(CHUNK);
            // The buffer is touched a part at a time, as it is filled.
            if let Err(t) = self.space.touch(buf + done, n, true) {
                return match (ty, done) {
                    (s::READ, 1..) => Ok(done),
                    _ => Err(t.errno()),
                };
            }
            let intr = self.interrupting();
            let w = match (ty, done) {
                (s::READ, 0) => [ty, n, 0, intr],
                // Later parts of a read never wait.
                (s::READ, _) => [ty, n, 1, intr],
                _ => [ty, span.1, span.0, intr],
            };
            if ty == s::READ && done == 0 && self.interrupted() {
                return Err(EINTR);
            }
            let a = Msg::new(UNIXD, proto::SYSLOG)
                .words(w)
                .call_to(self.space.win.recv(buf + done, n));
            if a.code == Code::Busy {
                // Something was logged: ask again.
                continue;
            }
            let got = result(&a)?.min(n);
            done += got;
            if ty != s::READ {
                span = (a.w[1], a.w[2]);
            }
            if got == 0 || done >= len || (ty != s::READ && span.0 >= span.1) {
                return Ok(done);
            }
        }
    }

    /// `sysinfo`: uptime, the load averages, memory from unixd's bank,
    /// the process count.
    pub(crate) fn sysinfo(&mut self, at: u64) -> R {
        let mut loads = [0u8; 24];
        let a = Msg::new(UNIXD, proto::SYSINFO).call_into(&mut loads);
        result(&a)?;
        let load =
            |i: usize| u64::from_le_bytes(loads[8 * i..8 * i + 8].try_into().unwrap_or_default());
        let info = Sysinfo {
            uptime: now_ns() / 1_000_000_000,
            loads: [load(0), load(1), load(2)],
            totalram: a.w[1],
            freeram: a.w[2],
            procs: a.w[0],
        };
        self.space.write(at, &info.bytes()).map_err(Touch::errno)?;
        Ok(0)
    }
}
