//! The kernel log: a ring of [`stet_unix::klog::LOG_BYTES`] in unixd's
//! heap holding the lines unixd writes about the system (its start, the
//! file system it built, keepers that fault, processes that a signal
//! ended), in Linux's format, and `syslog(2)` on it (`proto::SYSLOG`):
//! `dmesg` reads it with `SYSLOG_ACTION_READ_ALL`, a reader of
//! `SYSLOG_ACTION_READ` waits (parked) until there is something new.
//!
//! A line unixd always printed is printed still; the others go only to
//! the log unless their level is below the console level, 4 by default
//! (Linux's `quiet`: warnings and worse), which `SYSLOG_ACTION_CONSOLE_*`
//! change.

use crate::procgen::Sys;
use crate::wait::Wait;
use crate::{now_ns, word, Reply, Unixd};
use alloc::vec::Vec;
use core::fmt::Write;
use stet_rt::key::Answer;
use stet_unix::klog::{line, Klog, LOG_BYTES};
use stet_unix::procgen::Text;
use stet_unix::sys::errno::*;
use stet_unix::sys::syslog as s;

/// The default console level.
pub(crate) const QUIET: u8 = 4;
/// Linux's levels unixd writes at.
pub(crate) const ERR: u8 = 3;
pub(crate) const NOTICE: u8 = 5;
pub(crate) const INFO: u8 = 6;

/// An empty log of [`LOG_BYTES`] (none if the heap has no room).
pub(crate) fn new_log() -> Klog<Vec<u8>> {
    let mut v = Vec::new();
    if v.try_reserve_exact(LOG_BYTES).is_ok() {
        v.resize(LOG_BYTES, 0);
    }
    Klog::new(v)
}

impl Unixd<'_> {
    /// Writes a line to the log at `level`; on the console too when
    /// `console` (a line unixd has always printed) or when the level is
    /// below the console level. A reader waiting for the log wakes.
    pub(crate) fn klog(&mut self, level: u8, console: bool, args: core::fmt::Arguments) {
        let mut text = [0u8; 512];
        let mut t = Text::new(&mut text);
        let _ = t.write_fmt(args);
        let n = t.len();
        if console || level < self.sys.console_level {
            stet_rt::println!("{}", core::str::from_utf8(&text[..n]).unwrap_or("?"));
        }
        let mut rec = [0u8; 560];
        let len = line(level, now_ns(), &text[..n], &mut rec);
        self.sys.klog.push(&rec[..len]);
        for w in 0..self.waiters.len() {
            if self.waiters[w].on == Wait::Log {
                self.wake(w);
            }
        }
    }

    /// `SYSLOG` (the keeper checked the buffer and the length's sign).
    pub(crate) fn syslog_order(&mut self, a: &Answer, out: &mut [u8; 4096]) -> Result<Reply, i64> {
        let [action, len, pos, _] = a.w;
        let Sys { klog, .. } = &mut self.sys;
        match action {
            s::CLOSE | s::OPEN => word(Ok(0)),
            s::READ => {
                let n = (len as usize).min(out.len());
                if n == 0 {
                    return word(Ok(0));
                }
                if klog.unread() == 0 {
                    if pos == 1 {
                        return word(Ok(0));
                    }
                    return self.park(Wait::Log);
                }
                let got = klog.read(&mut out[..n]);
                Ok(Reply::Now([got as u64, 0, 0], got, false))
            }
            s::READ_ALL | s::READ_CLEAR => {
                let (from, end) = if pos == u64::MAX {
                    let span = (klog.all_from(len), klog.head());
                    if action == s::READ_CLEAR {
                        klog.clear();
                    }
                    span
                } else {
                    (pos.max(klog.oldest()), len.min(klog.head()))
                };
                let n = klog.copy(from, end, &mut out[..]);
                Ok(Reply::Now([n as u64, from + n as u64, end], n, false))
            }
            s::CLEAR => {
                klog.clear();
                word(Ok(0))
            }
            s::CONSOLE_OFF => {
                if self.sys.saved_level == 0 {
                    self.sys.saved_level = self.sys.console_level;
                }
                // Linux's least console level: only emergencies.
                self.sys.console_level = 1;
                word(Ok(0))
            }
            s::CONSOLE_ON => {
                if self.sys.saved_level != 0 {
                    self.sys.console_level = self.sys.saved_level;
                    self.sys.saved_level = 0;
                }
                word(Ok(0))
            }
            s::CONSOLE_LEVEL => {
                let level = len as i64;
                if !(1..=8).contains(&level) {
                    return Err(EINVAL);
                }
                self.sys.console_level = level as u8;
                self.sys.saved_level = 0;
                word(Ok(0))
            }
            s::SIZE_UNREAD => word(Ok(klog.unread())),
            s::SIZE_BUFFER => word(Ok(klog.capacity() as u64)),
            _ => Err(EINVAL),
        }
    }
}
