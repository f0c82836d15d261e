//! Calls about the system as a whole that change or show its settings:
//! `uname` with the host and domain names unixd keeps, `sethostname`,
//! `setdomainname`, `reboot`, `ioprio_get`/`ioprio_set`, `vhangup`,
//! `sysfs` (the file-system types of `/proc/filesystems`) and `ustat`.
//! The keeper checks the arguments as Linux does, in Linux's order; unixd
//! keeps the settings and checks the caller's capabilities
//! (`unixd/sysmisc.rs`).

use crate::calls::result;
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::key::Msg;
use stet_unix::cred::cap;
use stet_unix::proto::{self, sysmisc as op};
use stet_unix::sys::errno::*;
use stet_unix::sys::{UNAME, UTSNAME_FIELD};

type R = Result<u64, i64>;

/// The file-system types, in `/proc/filesystems`' order
/// (`stet_unix::procgen::filesystems`): `sysfs`'s indices.
const FS_TYPES: [&[u8]; 2] = [b"tmpfs", b"proc"];

/// `reboot`'s magic numbers: `LINUX_REBOOT_MAGIC1` and the four the
/// second may be.
const MAGIC1: u32 = 0xfee1_dead;
const MAGIC2: [u32; 4] = [0x2812_1969, 0x0512_1996, 0x1604_1998, 0x2011_2000];

/// `st_dev` of every file (`stet_unix::fs`): the one device `ustat` knows.
const ROOT_DEV: u64 = 1;

impl Keeper {
    /// `uname(buf)`: the fixed fields, and the host and domain names from
    /// unixd; under `personality(UNAME26)` a 2.6 release.
    pub(crate) fn uname(&mut self, buf: u64) -> R {
        let mut b = [0u8; 6 * UTSNAME_FIELD];
        for (i, s) in UNAME.iter().enumerate() {
            b[i * UTSNAME_FIELD..i * UTSNAME_FIELD + s.len()].copy_from_slice(s.as_bytes());
        }
        let mut names = [0u8; 2 * UTSNAME_FIELD];
        let a = Msg::new(UNIXD, proto::SYSMISC)
            .words([op::UTS, 0, 0, 0])
            .call_into(&mut names);
        if result(&a).is_ok() {
            let f = UTSNAME_FIELD;
            b[f..2 * f].copy_from_slice(&names[..f]);
            b[5 * f..6 * f].copy_from_slice(&names[f..]);
        }
        if self.persona & crate::procctl::UNAME26 != 0 {
            // Linux's `override_release`: 2.6.(60 + minor) and what
            // follows the release's numbers ("6.1.0-stet" → "2.6.61-stet"),
            // the rest of the field zero.
            let rel = UNAME[2].as_bytes();
            let mut dots = 0;
            let mut at = 0;
            while at < rel.len() {
                let c = rel[at];
                if c == b'.' {
                    dots += 1;
                    if dots >= 3 {
                        break;
                    }
                } else if !c.is_ascii_digit() {
                    break;
                }
                at += 1;
            }
            let minor = rel
                .split(|&c| c == b'.')
                .nth(1)
                .and_then(|m| core::str::from_utf8(m).ok())
                .and_then(|m| m.parse::<u32>().ok())
                .unwrap_or(0);
            let f = &mut b[2 * UTSNAME_FIELD..3 * UTSNAME_FIELD];
            f.fill(0);
            let mut t = stet_unix::procgen::Text::new(f);
            let _ = core::fmt::Write::write_fmt(&mut t, format_args!("2.6.{}", minor + 60));
            let n = t.len();
            let rest = &rel[at..];
            let end = (n + rest.len()).min(UTSNAME_FIELD - 1);
            f[n..end].copy_from_slice(&rest[..end - n]);
        }
        self.space.write(buf, &b).map_err(Touch::errno)?;
        Ok(0)
    }

    /// `sethostname(name, len)` and `setdomainname` (`domain`):
    /// `CAP_SYS_ADMIN` (`EPERM`), then a length of 0–64 (`EINVAL`), then
    /// the bytes (`EFAULT`).
    pub(crate) fn set_uts_name(&mut self, name: u64, len: u64, domain: bool) -> R {
        if !self.cred.capable(cap::SYS_ADMIN) {
            return Err(EPERM);
        }
        let len = len as u32 as i32;
        if !(0..=64).contains(&len) {
            return Err(EINVAL);
        }
        let mut b = [0u8; 64];
        let b = &mut b[..len as usize];
        self.space.read(name, b).map_err(Touch::errno)?;
        let what = if domain {
            op::SET_DOMAINNAME
        } else {
            op::SET_HOSTNAME
        };
        result(
            &Msg::new(UNIXD, proto::SYSMISC)
                .words([what, 0, 0, 0])
                .string(b)
                .call(),
        )
    }

    /// `reboot(magic1, magic2, cmd, arg)`: `CAP_SYS_BOOT` first (`EPERM`),
    /// then the magic numbers (`EINVAL`); unixd does the command.
    pub(crate) fn reboot(&mut self, m1: u64, m2: u64, cmd: u64) -> R {
        if !self.cred.capable(cap::SYS_BOOT) {
            return Err(EPERM);
        }
        if m1 as u32 != MAGIC1 || !MAGIC2.contains(&(m2 as u32)) {
            return Err(EINVAL);
        }
        self.unixd(proto::SYSMISC, [op::REBOOT, cmd as u32 as u64, 0, 0])
    }

    /// `ioprio_get(which, who)` and `ioprio_set(which, who, ioprio)`.
    pub(crate) fn ioprio(&mut self, set: bool, which: u64, who: u64, prio: u64) -> R {
        let (which, who) = (which as u32 as u64, who as u32 as u64);
        // A thread of this process names the process.
        let who = if which == 1 && self.tid_of(who) {
            self.pid
        } else {
            who
        };
        if set {
            self.unixd(
                proto::SYSMISC,
                [op::IOPRIO_SET, which, who, prio as u32 as u64],
            )
        } else {
            self.unixd(proto::SYSMISC, [op::IOPRIO_GET, which, who, 0])
        }
    }

    /// `clock_adjtime(clock, buf)` (`adjtimex(buf)`: `CLOCK_REALTIME`):
    /// only the realtime clock is adjusted (another valid clock
    /// `EOPNOTSUPP`, an unknown one `EINVAL`), by unixd's `stet_unix::
    /// timex::Ntp` → the clock state.
    pub(crate) fn clock_adjtime(&mut self, clk: u64, buf: u64) -> R {
        use stet_unix::timex::SIZE;
        match clk as u32 as i32 {
            0 => {}
            1..=9 | 11 => return Err(EOPNOTSUPP),
            _ => return Err(EINVAL),
        }
        let mut t = [0u8; SIZE];
        self.space.read(buf, &mut t).map_err(Touch::errno)?;
        let mut out = [0u8; SIZE];
        let a = Msg::new(UNIXD, proto::SYSMISC)
            .words([op::ADJTIME, 0, 0, 0])
            .string(&t)
            .call_into(&mut out);
        let state = result(&a)?;
        self.space.write(buf, &out).map_err(Touch::errno)?;
        Ok(state)
    }

    /// `vhangup()`.
    pub(crate) fn vhangup(&mut self) -> R {
        self.unixd(proto::SYSMISC, [op::VHANGUP, 0, 0, 0])
    }

    /// `sysfs(option, arg1, arg2)`: 1 a type's index by name, 2 the name
    /// of index `arg1` into `arg2`, 3 how many types.
    pub(crate) fn sysfs(&mut self, option: u64, a1: u64, a2: u64) -> R {
        match option as u32 {
            1 => {
                let mut b = [0u8; 256];
                let n = match self.space.read_cstr(a1, &mut b) {
                    Ok(n) => n,
                    Err(Some(t)) => return Err(t.errno()),
                    Err(None) => return Err(EINVAL),
                };
                FS_TYPES
                    .iter()
                    .position(|t| *t == &b[..n])
                    .map(|i| i as u64)
                    .ok_or(EINVAL)
            }
            2 => {
                let t = FS_TYPES.get(a1 as u32 as usize).ok_or(EINVAL)?;
                let mut b = [0u8; 16];
                b[..t.len()].copy_from_slice(t);
                self.space
                    .write(a2, &b[..t.len() + 1])
                    .map_err(Touch::errno)?;
                Ok(0)
            }
            3 => Ok(FS_TYPES.len() as u64),
            _ => Err(EINVAL),
        }
    }

    /// `ustat(dev, ubuf)`: the root file system's free blocks and inodes
    /// (`statfs`'s); any other device is `EINVAL`.
    pub(crate) fn ustat(&mut self, dev: u64, ubuf: u64) -> R {
        if dev as u32 as u64 != ROOT_DEV {
            return Err(EINVAL);
        }
        let mut st = [0u8; stet_unix::sys::statfs::SIZE];
        let a = Msg::new(UNIXD, proto::STATFS)
            .words([self.cwd as u64, 0, 0, 0])
            .string(b"/")
            .call_into(&mut st);
        result(&a)?;
        let word = |o: usize| u64::from_le_bytes(st[o..o + 8].try_into().unwrap_or_default());
        // struct ustat: f_tfree (int), f_tinode (ino_t), f_fname[6],
        // f_fpack[6].
        let mut u = [0u8; 32];
        let free = word(24).min(i32::MAX as u64) as u32;
        u[..4].copy_from_slice(&free.to_le_bytes());
        u[8..16].copy_from_slice(&word(48).to_le_bytes());
        self.space.write(ubuf, &u).map_err(Touch::errno)?;
        Ok(0)
    }
}
