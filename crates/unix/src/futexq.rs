//! A process's private futexes: the queue of its threads waiting on words
//! of its own memory, kept by its keeper (a private futex names an address
//! of one process, and every thread of the process faults to the same
//! keeper, which serves one call at a time — so the keeper's compare of
//! the word and its enqueue cannot be split by a `FUTEX_WAKE`, Linux's
//! hash-bucket lock). Shared futexes (a word in a shared file mapping,
//! seen by several processes) are unixd's.
//!
//! Here are the operations' rules: `WAIT`/`WAIT_BITSET` (the caller
//! compares the word first), `WAKE`/`WAKE_BITSET`, `REQUEUE`/`CMP_REQUEUE`
//! and `WAKE_OP`'s arithmetic and comparison, and timeouts. Waking picks
//! the longest waiter first (FIFO, as Linux's plist for equal priority).

use crate::sys::errno::{EINVAL, ENOSYS};

/// Most threads a queue holds (a process's threads: each waits on at most
/// one word).
pub const MAX_WAITERS: usize = 64;

/// `FUTEX_BITSET_MATCH_ANY`: what `WAIT` and `WAKE` use.
pub const MATCH_ANY: u32 = u32::MAX;

/// One waiting thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiter {
    /// The thread (the keeper's slot number).
    pub thread: u16,
    /// The word's address.
    pub addr: u64,
    /// `WAIT_BITSET`'s mask.
    pub bitset: u32,
    /// When it times out (ns since boot; `u64::MAX`: never).
    pub deadline: u64,
    /// Order of arrival (FIFO among equals).
    pub seq: u64,
}

/// The queue.
#[derive(Clone, Debug)]
pub struct Queue {
    /// By thread: a thread waits on one word at a time, so its entry is
    /// found without a search.
    w: [Option<Waiter>; MAX_WAITERS],
    /// Which entries of `w` hold a waiter: every search visits only those
    /// (a process has a waiter or two; a scan of all 64 was 400
    /// instructions a futex call).
    used: u64,
    seq: u64,
}

const _: () = assert!(MAX_WAITERS <= 64, "`used` has a bit per entry");

impl Default for Queue {
    fn default() -> Self {
        Queue::new()
    }
}

impl Queue {
    /// An empty queue.
    pub const fn new() -> Queue {
        Queue {
            w: [None; MAX_WAITERS],
            used: 0,
            seq: 0,
        }
    }

    /// The entries holding a waiter, with it.
    fn waiters(&self) -> impl Iterator<Item = (usize, Waiter)> + '_ {
        let mut bits = self.used;
        core::iter::from_fn(move || {
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if let Some(w) = self.w.get(i).copied().flatten() {
                    return Some((i, w));
                }
            }
            None
        })
    }

    /// Entry `i` taken out.
    fn take(&mut self, i: usize) -> Option<Waiter> {
        self.used &= !(1u64 << i);
        self.w.get_mut(i)?.take()
    }

    /// Thread `thread` waits on `addr` (its word already compared) →
    /// `EINVAL` for an empty bitset or a thread number past
    /// [`MAX_WAITERS`]; a thread waits on one word at a time (a second
    /// wait replaces its first).
    pub fn wait(&mut self, thread: u16, addr: u64, bitset: u32, deadline: u64) -> Result<(), i64> {
        let t = thread as usize;
        if bitset == 0 || t >= MAX_WAITERS {
            return Err(EINVAL);
        }
        self.seq += 1;
        self.w[t] = Some(Waiter {
            thread,
            addr,
            bitset,
            deadline,
            seq: self.seq,
        });
        self.used |= 1u64 << t;
        Ok(())
    }

    /// Takes thread `thread` out (it was woken otherwise: a signal, a
    /// timeout, its end) → whether it was waiting.
    pub fn cancel(&mut self, thread: u16) -> bool {
        self.of(thread).is_some() && self.take(thread as usize).is_some()
    }

    /// Thread `thread`'s wait, if it waits.
    pub fn of(&self, thread: u16) -> Option<Waiter> {
        let t = thread as usize;
        if t >= MAX_WAITERS || self.used & 1 << t == 0 {
            return None;
        }
        self.w[t]
    }

    /// How many wait.
    pub fn len(&self) -> u32 {
        self.used.count_ones()
    }

    /// Whether anyone waits.
    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    /// The oldest waiter on `addr` matching `bitset`.
    fn oldest(&self, addr: u64, bitset: u32) -> Option<usize> {
        self.waiters()
            .filter(|(_, w)| w.addr == addr && w.bitset & bitset != 0)
            .min_by_key(|(_, w)| w.seq)
            .map(|(i, _)| i)
    }

    /// `WAKE`: up to `n` waiters on `addr` whose bitset meets `bitset`
    /// leave the queue, oldest first; each is passed to `woken`. → how
    /// many.
    pub fn wake(
        &mut self,
        addr: u64,
        n: u32,
        bitset: u32,
        mut woken: impl FnMut(u16),
    ) -> Result<u32, i64> {
        if bitset == 0 {
            return Err(EINVAL);
        }
        let mut done = 0;
        while done < n {
            let Some(i) = self.oldest(addr, bitset) else {
                break;
            };
            if let Some(w) = self.take(i) {
                woken(w.thread);
            }
            done += 1;
        }
        Ok(done)
    }

    /// `REQUEUE`: wakes up to `nwake` waiters on `from`, moves up to
    /// `nmove` of the rest to `to` (they wait there as if they had always)
    /// → woken + moved.
    pub fn requeue(
        &mut self,
        from: u64,
        to: u64,
        nwake: u32,
        nmove: u32,
        woken: impl FnMut(u16),
    ) -> u32 {
        let woke = self.wake(from, nwake, MATCH_ANY, woken).unwrap_or(0);
        let left = self.waiters().filter(|(_, w)| w.addr == from).count() as u32;
        if from == to {
            // Onto itself: nothing moves, but Linux counts them.
            return woke + left.min(nmove);
        }
        let mut moved = 0;
        while moved < nmove {
            let Some(i) = self.oldest(from, MATCH_ANY) else {
                break;
            };
            if let Some(w) = self.w[i].as_mut() {
                w.addr = to;
            }
            moved += 1;
        }
        woke + moved
    }

    /// The waiters whose deadline is at or before `now`, taken out; each
    /// is passed to `expired`.
    pub fn expire(&mut self, now: u64, mut expired: impl FnMut(u16)) {
        for i in 0..MAX_WAITERS {
            if self.w[i].is_some_and(|x| x.deadline <= now) {
                if let Some(x) = self.take(i) {
                    expired(x.thread);
                }
            }
        }
    }

    /// The earliest deadline of any waiter (`u64::MAX`: none).
    pub fn next_deadline(&self) -> u64 {
        self.waiters()
            .map(|(_, w)| w.deadline)
            .min()
            .unwrap_or(u64::MAX)
    }
}

/// `FUTEX_WAKE_OP`'s `val3`, decoded: the operation on the second word and
/// the comparison of its old value that decides whether its waiters wake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WakeOp {
    op: u32,
    oparg: u32,
    cmp: u32,
    cmparg: u32,
}

impl WakeOp {
    /// Decodes `val3` (Linux's `FUTEX_OP` layout): `ENOSYS` for an
    /// unknown operation or comparison, as Linux.
    pub fn decode(val3: u32) -> Result<WakeOp, i64> {
        let op = (val3 >> 28) & 7;
        let shift = val3 >> 31 != 0;
        let cmp = (val3 >> 24) & 15;
        let mut oparg = (val3 >> 12) & 0xfff;
        let cmparg = val3 & 0xfff;
        // 12-bit arguments are signed.
        let sext = |v: u32| ((v << 20) as i32 >> 20) as u32;
        oparg = sext(oparg);
        if shift {
            if oparg > 31 {
                // Linux masks a shift count past 31 (and warns).
                oparg &= 31;
            }
            oparg = 1u32 << oparg;
        }
        if op > 4 || cmp > 5 {
            return Err(ENOSYS);
        }
        Ok(WakeOp {
            op,
            oparg,
            cmp,
            cmparg: sext(cmparg),
        })
    }

    /// The new value of the word whose old value is `old`.
    pub fn apply(&self, old: u32) -> u32 {
        match self.op {
            0 => self.oparg,                   // SET
            1 => old.wrapping_add(self.oparg), // ADD
            2 => old | self.oparg,             // OR
            3 => old & !self.oparg,            // ANDN
            _ => old ^ self.oparg,             // XOR
        }
    }

    /// Whether the old value passes the comparison (the second word's
    /// waiters wake then).
    pub fn passes(&self, old: u32) -> bool {
        let (a, b) = (old as i32, self.cmparg as i32);
        match self.cmp {
            0 => a == b,
            1 => a != b,
            2 => a < b,
            3 => a <= b,
            4 => a > b,
            _ => a >= b,
        }
    }
}

#[cfg(test)]
mod tests;
