//! What one process may take of what all share. Regular files' pages and
//! nodes come from the `FILES` sub-bank, whose limit leaves the rest of
//! the space bank to the processes' memory, unixd and the other domains:
//! a full file system is `ENOSPC` for writers, never a fault elsewhere.
//! Within it each process may hold at most a share ([`Shares`]) of the
//! pages it made (less those it freed), so one process filling `/tmp`
//! gets `ENOSPC` while others can still write; the count is the process's
//! own and goes with it (files outlive it and stay in `FILES`: per-user
//! quotas come with users). The number of processes is bounded by each
//! process's `RLIMIT_NPROC`, which its keeper sends with `FORK`.

use crate::slots::{BANK, FILES};
use crate::Unixd;
use stet_rt::bank;
use stet_rt::println;
use stet_unix::proto as p;

/// The shares of the file space, in percent (unixd's argument, bits
/// 32–39, 40–47 and 48–55; 0 means the default of 50 each).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shares {
    /// Of the space bank's free pages at unixd's first start: the `FILES`
    /// bank's page limit.
    pub(crate) pages: u64,
    /// Of its free nodes: the node limit (a node holds 16 pages of a file,
    /// or is the whole tree of a small one).
    pub(crate) nodes: u64,
    /// Of the `FILES` page limit: what one process may hold.
    pub(crate) process: u64,
}

impl Shares {
    /// The shares unixd's argument gives.
    pub(crate) fn from_arg(arg: u64) -> Shares {
        let pct = |shift: u32| match (arg >> shift) & 0xff {
            0 => 50,
            p => p.min(100),
        };
        Shares {
            pages: pct(32),
            nodes: pct(40),
            process: pct(48),
        }
    }
}

/// The orders that can make or free file pages.
const MAKES_PAGES: [u64; 8] = [
    p::WRITE,
    p::PWRITE,
    p::MAP_PAGE,
    p::TRUNCATE,
    p::OPEN,
    p::UNLINK,
    p::RENAME,
    p::CLOSE,
];

impl Unixd<'_> {
    /// Makes the `FILES` bank (first start) → its page limit.
    pub(crate) fn make_files_bank(s: Shares) -> u64 {
        let (pages, nodes) = match bank::capacity(BANK) {
            Ok([cp, cn, up, un]) => (
                cp.saturating_sub(up) * s.pages / 100,
                cn.saturating_sub(un) * s.nodes / 100,
            ),
            // A bank that cannot say: no limit of unixd's own.
            Err(_) => (u64::MAX, u64::MAX),
        };
        if bank::create_sub(BANK, pages, nodes, FILES).is_err() {
            println!("unixd: no bank for files");
        }
        pages
    }

    /// Serves one order with the caller's file-page budget: the pages it
    /// makes are counted to it, those it frees are taken off.
    pub(crate) fn charged<T>(&mut self, order: u64, f: impl FnOnce(&mut Self) -> T) -> T {
        if !MAKES_PAGES.contains(&order) || self.caller == 0 {
            return f(self);
        }
        let Some(i) = self.procs.iter().position(|p| p.pid == self.caller) else {
            return f(self);
        };
        let share = self.files_limit / 100 * self.file_share;
        self.content.budget = share.saturating_sub(self.procs[i].file_pages);
        let before = self.content.pages;
        let r = f(self);
        self.content.budget = u64::MAX;
        let after = self.content.pages;
        // (The entry may have gone: a `CLOSE` never ends a process, but
        // check rather than charge a stranger.)
        if let Some(p) = self.procs.get_mut(i).filter(|p| p.pid == self.caller) {
            p.file_pages = (p.file_pages + after).saturating_sub(before);
        }
        r
    }
}
