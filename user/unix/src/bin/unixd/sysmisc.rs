//! The system's own settings that processes read and change
//! (`proto::SYSMISC`): the host and domain names `uname` shows
//! (`sethostname`, `setdomainname`), each process's I/O priority
//! (`ioprio_get`, `ioprio_set`), `reboot`'s Ctrl-Alt-Del setting, and
//! `vhangup`. Each checks the capability Linux checks (`CAP_SYS_ADMIN`,
//! `CAP_SYS_NICE`, `CAP_SYS_BOOT`, `CAP_SYS_TTY_CONFIG`) with the caller's
//! credentials. Like everything in unixd they persist.

use crate::procgen::SysFile;
use crate::{word, Reply, Unixd};
use stet_rt::key::Answer;
use stet_unix::cred::cap;
use stet_unix::proto::sysmisc as op;
use stet_unix::sys::errno::*;
use stet_unix::sys::sig::{SIGCONT, SIGHUP};
use stet_unix::sys::{UNAME, UTSNAME_FIELD};

/// `__NEW_UTS_LEN`: the longest host or domain name.
pub(crate) const UTS_LEN: usize = 64;

/// `IOPRIO_WHO_PROCESS`, `IOPRIO_WHO_PGRP`, `IOPRIO_WHO_USER`.
const WHO_PROCESS: u64 = 1;
const WHO_PGRP: u64 = 2;
const WHO_USER: u64 = 3;
/// The I/O priority classes, and the levels of the first two.
const CLASS_NONE: u16 = 0;
const CLASS_RT: u16 = 1;
const CLASS_BE: u16 = 2;
const CLASS_IDLE: u16 = 3;
const CLASS_SHIFT: u32 = 13;
const LEVELS: u16 = 8;

/// The `ioctl`s of the random devices.
pub(crate) const RNDGETENTCNT: u32 = 0x8004_5200;
const RNDADDTOENTCNT: u32 = 0x4004_5201;
const RNDADDENTROPY: u32 = 0x4008_5203;
const RNDZAPENTCNT: u32 = 0x5204;
const RNDCLEARPOOL: u32 = 0x5206;
const RNDRESEEDCRNG: u32 = 0x5207;

/// `LINUX_REBOOT_CMD_CAD_ON` and `_OFF`.
const CAD_ON: u64 = 0x89AB_CDEF;
const CAD_OFF: u64 = 0;
/// `RESTART`, `HALT`, `POWER_OFF`, `RESTART2`.
const STOPS: [u64; 4] = [0x0123_4567, 0xCDEF_0123, 0x4321_FEDC, 0xA1B2_C3D4];

/// The settings.
pub(crate) struct Misc {
    host: [u8; UTS_LEN],
    host_len: u8,
    domain: [u8; UTS_LEN],
    domain_len: u8,
    /// Whether Ctrl-Alt-Del would restart at once (`CAD_ON`) or signal
    /// pid 1 (`CAD_OFF`, Linux's default). Stet's console has no such key:
    /// kept, and only `reboot` reads and writes it.
    pub(crate) cad: bool,
    /// `/proc/sys/kernel/core_pattern` (at most 127 bytes): what a core
    /// dump is named.
    core: [u8; CORE_MAX],
    core_len: u8,
    /// `/proc/sys/kernel/dmesg_restrict`: whether reading the kernel log
    /// needs `CAP_SYSLOG` (Debian's default, 1).
    pub(crate) dmesg_restrict: bool,
    /// The clock's NTP parameters (`adjtimex`).
    ntp: stet_unix::timex::Ntp,
}

/// `CORENAME_MAX_SIZE` less its NUL.
const CORE_MAX: usize = 127;

/// What `RNDGETENTCNT` and `/proc/sys/kernel/random/entropy_avail` say:
/// Linux 6.1's pool is always full (256 bits) once seeded, and Stet's
/// randomness comes from the processor's generator.
pub(crate) const ENTROPY: u64 = 256;

impl Misc {
    pub(crate) fn new() -> Misc {
        let mut m = Misc {
            host: [0; UTS_LEN],
            host_len: 0,
            domain: [0; UTS_LEN],
            domain_len: 0,
            cad: false,
            core: [0; CORE_MAX],
            core_len: 4,
            dmesg_restrict: true,
            ntp: stet_unix::timex::Ntp::new(),
        };
        m.core[..4].copy_from_slice(b"core");
        m.set(false, UNAME[1].as_bytes());
        m.set(true, UNAME[5].as_bytes());
        m
    }

    fn set(&mut self, domain: bool, name: &[u8]) {
        let n = name.len().min(UTS_LEN);
        let (b, l) = if domain {
            (&mut self.domain, &mut self.domain_len)
        } else {
            (&mut self.host, &mut self.host_len)
        };
        *b = [0; UTS_LEN];
        b[..n].copy_from_slice(&name[..n]);
        *l = n as u8;
    }

    /// The host name.
    pub(crate) fn hostname(&self) -> &[u8] {
        &self.host[..self.host_len as usize]
    }

    /// `core_pattern`.
    pub(crate) fn core_pattern(&self) -> &[u8] {
        &self.core[..self.core_len as usize]
    }

    /// The NIS domain name.
    pub(crate) fn domainname(&self) -> &[u8] {
        &self.domain[..self.domain_len as usize]
    }
}

/// A written `sysctl` value: the bytes before the first newline.
fn line(data: &[u8]) -> &[u8] {
    let end = data.iter().position(|&b| b == b'\n').unwrap_or(data.len());
    &data[..end]
}

/// A written integer, as Linux's `proc_dointvec` reads one (leading
/// blanks, a sign, digits, then a blank or the end) → `EINVAL`.
fn int_of(data: &[u8]) -> Result<i128, i64> {
    let s = core::str::from_utf8(data).map_err(|_| EINVAL)?;
    let s = s.trim_start();
    let end = s.find(|c: char| c.is_ascii_whitespace()).unwrap_or(s.len());
    s[..end].parse::<i128>().map_err(|_| EINVAL)
}

/// Checks an I/O priority as Linux's `ioprio_check_cap` (`rt` whether the
/// caller may take the real-time class) → the value to keep.
fn check_ioprio(v: u64, rt: bool) -> Result<u16, i64> {
    let v = v as u32;
    if v > 0xffff {
        return Err(EINVAL);
    }
    let class = (v >> CLASS_SHIFT) as u16;
    let level = (v & ((1 << CLASS_SHIFT) - 1)) as u16;
    match class {
        CLASS_RT if !rt => Err(EPERM),
        CLASS_RT | CLASS_BE if level >= LEVELS => Err(EINVAL),
        CLASS_RT | CLASS_BE | CLASS_IDLE => Ok(v as u16),
        CLASS_NONE if level != 0 => Err(EINVAL),
        CLASS_NONE => Ok(0),
        _ => Err(EINVAL),
    }
}

impl Unixd<'_> {
    /// A write of `data` to the writable file of `/proc/sys` `f` (its
    /// permission to write checked at `open`): the setting changes, as
    /// Linux's `sysctl` files (a bad value is `EINVAL`) → the bytes taken.
    pub(crate) fn sysctl_write(&mut self, f: SysFile, data: &[u8], off: u64) -> Result<u64, i64> {
        // As Linux's `sysctl_writes_strict`: only a write from the start
        // sets the value; one further on is taken and changes nothing.
        if off != 0 {
            return Ok(data.len() as u64);
        }
        match f {
            SysFile::Hostname | SysFile::Domainname => {
                let v = line(data);
                if v.len() > UTS_LEN {
                    return Err(EINVAL);
                }
                self.misc.set(f == SysFile::Domainname, v);
            }
            SysFile::CorePattern => {
                let v = line(data);
                let n = v.len().min(CORE_MAX);
                self.misc.core = [0; CORE_MAX];
                self.misc.core[..n].copy_from_slice(&v[..n]);
                self.misc.core_len = n as u8;
            }
            // `proc_doulongvec_minmax` (no negative value) and
            // `proc_dointvec_minmax` up to `IPCMNI`.
            SysFile::Shmmax | SysFile::Shmall => {
                let v = u64::try_from(int_of(data)?).map_err(|_| EINVAL)?;
                let l = &mut self.ipc.shm_limits;
                if f == SysFile::Shmmax {
                    l.max = v;
                } else {
                    l.all = v;
                }
            }
            SysFile::Shmmni => match int_of(data)? {
                v @ 0..=0x8000 => self.ipc.shm_limits.mni = v as u64,
                _ => return Err(EINVAL),
            },
            // `proc_dointvec_minmax` from 0 to `INT_MAX`.
            SysFile::InotifyInstances | SysFile::InotifyWatches | SysFile::InotifyQueued => {
                let v = match int_of(data)? {
                    v @ 0..=0x7fff_ffff => v as u64,
                    _ => return Err(EINVAL),
                };
                let l = &mut self.inotify_limits;
                match f {
                    SysFile::InotifyInstances => l.instances = v,
                    SysFile::InotifyWatches => l.watches = v,
                    _ => l.queued = v,
                }
            }
            // `proc_dointvec_minmax` from 1 to `INT_MAX`.
            SysFile::KeysMaxkeys
            | SysFile::KeysMaxbytes
            | SysFile::KeysRootMaxkeys
            | SysFile::KeysRootMaxbytes => {
                let v = match int_of(data)? {
                    v @ 1..=0x7fff_ffff => v as u32,
                    _ => return Err(EINVAL),
                };
                let l = &mut self.keyring.limits;
                match f {
                    SysFile::KeysMaxkeys => l.maxkeys = v,
                    SysFile::KeysMaxbytes => l.maxbytes = v,
                    SysFile::KeysRootMaxkeys => l.root_maxkeys = v,
                    _ => l.root_maxbytes = v,
                }
            }
            SysFile::PidMax => match int_of(data)? {
                v if crate::procgen::PID_MAX_BOUNDS.contains(&v) => self.pid_max = v as u32,
                _ => return Err(EINVAL),
            },
            SysFile::DmesgRestrict => match int_of(data)? {
                v @ 0..=1 => self.misc.dmesg_restrict = v == 1,
                _ => return Err(EINVAL),
            },
            _ => return Err(EINVAL),
        }
        Ok(data.len() as u64)
    }

    /// `SYSMISC`.
    pub(crate) fn sysmisc_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let me = self.proc_of(a.label)?;
        let c = self.procs[me].cred;
        let w = a.w;
        match w[0] {
            op::UTS => {
                out[..2 * UTSNAME_FIELD].fill(0);
                let h = self.misc.hostname();
                out[..h.len()].copy_from_slice(h);
                let d = self.misc.domainname();
                out[UTSNAME_FIELD..UTSNAME_FIELD + d.len()].copy_from_slice(d);
                Ok(Reply::Now([0, 0, 0], 2 * UTSNAME_FIELD, false))
            }
            op::SET_HOSTNAME | op::SET_DOMAINNAME => {
                if !c.capable(cap::SYS_ADMIN) {
                    return word(Err(EPERM));
                }
                if s.len() > UTS_LEN {
                    return word(Err(EINVAL));
                }
                self.misc.set(w[0] == op::SET_DOMAINNAME, s);
                word(Ok(0))
            }
            op::IOPRIO_GET => word(self.ioprio_get(me, w[1], w[2])),
            op::IOPRIO_SET => word(self.ioprio_set(me, w[1], w[2], w[3])),
            op::REBOOT => word(self.reboot(me, w[1])),
            op::VHANGUP => word(self.vhangup(me)),
            op::DMESG_RESTRICT => word(Ok(self.misc.dmesg_restrict as u64)),
            op::RANDOM => word(self.random_ioctl(me, w[1], w[2])),
            op::ADJTIME => {
                use stet_unix::timex::{Timex, SIZE};
                let b: &[u8; SIZE] = s
                    .get(..SIZE)
                    .and_then(|b| b.try_into().ok())
                    .ok_or(EINVAL)?;
                let mut t = Timex::from_bytes(b);
                let may = c.capable(cap::SYS_TIME);
                let (state, step) = self.misc.ntp.adjtimex(&mut t, may, self.time())?;
                if step != 0 {
                    let wall = self.time().saturating_add_signed(step);
                    stet_rt::key::call(
                        crate::slots::SLEEP,
                        stet_rt::abi::order::sleep::SET_WALL,
                        [wall, 0, 0, 0],
                    );
                }
                out[..SIZE].copy_from_slice(&t.to_bytes());
                Ok(Reply::Now([state as u64, 0, 0], SIZE, false))
            }
            _ => word(Err(EINVAL)),
        }
    }

    /// The processes `which`/`who` names, as `ioprio_get`/`ioprio_set`
    /// see them (`who` 0: the caller, its group, its real user).
    fn ioprio_targets(
        &self,
        me: usize,
        which: u64,
        who: u64,
    ) -> Result<alloc::vec::Vec<usize>, i64> {
        let my = &self.procs[me];
        let who = who as u32;
        let want = |p: &crate::procs::Proc| match which {
            WHO_PROCESS => p.pid == if who == 0 { my.pid } else { who },
            WHO_PGRP => p.pgid == if who == 0 { my.pgid } else { who },
            _ => p.cred.uid[0] == if who == 0 { my.cred.uid[0] } else { who },
        };
        if !matches!(which, WHO_PROCESS | WHO_PGRP | WHO_USER) {
            return Err(EINVAL);
        }
        let mut v = alloc::vec::Vec::new();
        for (i, p) in self.procs.iter().enumerate() {
            if p.pid != 0 && !p.zombie && want(p) {
                v.try_reserve(1).map_err(|_| ENOMEM)?;
                v.push(i);
            }
        }
        if v.is_empty() {
            return Err(ESRCH);
        }
        Ok(v)
    }

    /// `ioprio_get`: the best (numerically least) priority of those named.
    fn ioprio_get(&mut self, me: usize, which: u64, who: u64) -> Result<u64, i64> {
        let t = self.ioprio_targets(me, which, who)?;
        Ok(t.iter().map(|&i| self.procs[i].ioprio).min().unwrap_or(0) as u64)
    }

    /// `ioprio_set`: each process named, if the caller's effective or real
    /// user is its real one or it has `CAP_SYS_NICE` (`EPERM`).
    fn ioprio_set(&mut self, me: usize, which: u64, who: u64, prio: u64) -> Result<u64, i64> {
        let c = self.procs[me].cred;
        let rt = c.capable(cap::SYS_NICE) || c.capable(cap::SYS_ADMIN);
        let v = check_ioprio(prio, rt)?;
        let t = self.ioprio_targets(me, which, who)?;
        for i in t {
            let owner = self.procs[i].cred.uid[0];
            if owner != c.uid[1] && owner != c.uid[0] && !c.capable(cap::SYS_NICE) {
                return Err(EPERM);
            }
            self.procs[i].ioprio = v;
        }
        Ok(0)
    }

    /// `reboot(cmd)`, the magic numbers already checked: `CAP_SYS_BOOT`
    /// (`EPERM`); Ctrl-Alt-Del on or off is kept. Stopping or restarting
    /// the machine is not the UNIX personality's to do (it is one
    /// subsystem of a persistent system, which outlives its processes):
    /// `EPERM`, as to a process without the capability. Anything else is
    /// `EINVAL`.
    fn reboot(&mut self, me: usize, cmd: u64) -> Result<u64, i64> {
        if !self.procs[me].cred.capable(cap::SYS_BOOT) {
            return Err(EPERM);
        }
        match cmd as u32 as u64 {
            CAD_ON => self.misc.cad = true,
            CAD_OFF => self.misc.cad = false,
            c if STOPS.contains(&c) => return Err(EPERM),
            _ => return Err(EINVAL),
        }
        Ok(0)
    }

    /// The `ioctl`s of `/dev/random` and `/dev/urandom` on fid `fid`:
    /// `RNDGETENTCNT` → the entropy count; adding entropy or clearing the
    /// pool needs `CAP_SYS_ADMIN` (`EPERM`) and changes nothing (the
    /// processor's generator needs no pool). Another file: `ENOTTY`.
    fn random_ioctl(&mut self, me: usize, fid: u64, req: u64) -> Result<u64, i64> {
        let f = self.fid(fid)?;
        if self.open[f].kind != crate::open::Kind::Random {
            return Err(ENOTTY);
        }
        match req as u32 {
            RNDGETENTCNT => Ok(ENTROPY),
            RNDADDTOENTCNT | RNDADDENTROPY | RNDZAPENTCNT | RNDCLEARPOOL | RNDRESEEDCRNG => {
                if self.procs[me].cred.capable(cap::SYS_ADMIN) {
                    Ok(0)
                } else {
                    Err(EPERM)
                }
            }
            _ => Err(EINVAL),
        }
    }

    /// `vhangup`: `CAP_SYS_TTY_CONFIG` (`EPERM`). The terminal (there is
    /// one) is the controlling terminal of the session of its foreground
    /// group; a caller in that session hangs it up: the foreground group
    /// gets `SIGHUP` and `SIGCONT`. A caller in another session (after
    /// `setsid`) has no controlling terminal, and nothing happens.
    fn vhangup(&mut self, me: usize) -> Result<u64, i64> {
        if !self.procs[me].cred.capable(cap::SYS_TTY_CONFIG) {
            return Err(EPERM);
        }
        let fg = self.tty.fg;
        let sid = self.procs[me].sid;
        let ours = self
            .procs
            .iter()
            .any(|p| p.pid != 0 && !p.zombie && p.pgid == fg && p.sid == sid);
        if !ours {
            return Ok(0);
        }
        for i in 0..self.procs.len() {
            let p = &self.procs[i];
            if p.pid != 0 && !p.zombie && p.pgid == fg {
                self.signal(i, SIGHUP);
                self.signal(i, SIGCONT);
            }
        }
        Ok(0)
    }
}
