//! A pipe's buffer: bytes in order, a capacity `fcntl(F_SETPIPE_SZ)` can
//! change, and `O_DIRECT` packets (`pipe2(2)`'s "packet mode": each write
//! of at most `PIPE_BUF` bytes is a packet, a read takes at most one, and
//! what it leaves of it is dropped).
//!
//! Linux counts a pipe's room in page-sized slots; here it is bytes, with
//! each packet taking a whole page as a slot of its own does, so a pipe
//! of 16 pages holds 65,536 bytes of a stream or 16 packets. The bytes
//! live in the heap and grow as they come (`try_reserve`: a full heap
//! takes fewer bytes, never a panic); an emptied buffer gives back all
//! but a page, so an idle pipe holds little.

use alloc::collections::VecDeque;
use stet_unix::sys::errno::*;

/// A page: the unit of a pipe's capacity.
pub const PAGE: usize = 4096;
/// POSIX's `PIPE_BUF`: writes up to this are atomic, and the largest
/// packet.
pub const PIPE_BUF: usize = 4096;
/// A new pipe's capacity (Linux's 16 pages).
pub const DEFAULT_CAP: usize = 16 * PAGE;
/// `/proc/sys/fs/pipe-max-size`: the most an unprivileged
/// `F_SETPIPE_SZ` may ask (Linux's default).
pub const MAX_SIZE: usize = 1 << 20;
/// `/proc/sys/fs/pipe-user-pages-soft`: once a user's pipes hold more
/// pages than this, its new pipes get [`MIN_CAP`] and none may grow
/// (root is exempt; Linux's default).
pub const USER_PAGES_SOFT: usize = 16384;
/// `/proc/sys/fs/pipe-user-pages-hard`: 0, no hard limit (Linux's
/// default).
pub const USER_PAGES_HARD: usize = 0;
/// A new pipe's capacity past the soft limit (Linux's
/// `PIPE_MIN_DEF_BUFFERS`, 2 pages).
pub const MIN_CAP: usize = 2 * PAGE;

/// `F_SETPIPE_SZ`'s rounding (Linux's `round_pipe_size`): at least a
/// page, else the next power of two; over 2^31 is `EINVAL`.
pub fn round_size(size: u64) -> Result<usize, i64> {
    if size > 1 << 31 {
        return Err(EINVAL);
    }
    Ok((size as usize).max(PAGE).next_power_of_two())
}

/// One run of bytes: a stream (merged with the writes after it) or a
/// packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Seg {
    len: u32,
    packet: bool,
}

/// The buffer.
#[derive(Clone, Debug)]
pub struct PipeBuf {
    data: VecDeque<u8>,
    segs: VecDeque<Seg>,
    cap: usize,
}

impl Default for PipeBuf {
    fn default() -> Self {
        Self::new()
    }
}

impl PipeBuf {
    /// An empty buffer of [`DEFAULT_CAP`] (no heap yet).
    pub const fn new() -> PipeBuf {
        PipeBuf {
            data: VecDeque::new(),
            segs: VecDeque::new(),
            cap: DEFAULT_CAP,
        }
    }

    /// Bytes waiting.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The capacity in bytes (`F_GETPIPE_SZ`).
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// What the waiting bytes take of the capacity: a packet a page.
    pub fn used(&self) -> usize {
        self.segs
            .iter()
            .map(|s| if s.packet { PAGE } else { s.len as usize })
            .sum()
    }

    /// Room left for a stream's bytes.
    pub fn room(&self) -> usize {
        self.cap.saturating_sub(self.used())
    }

    /// Room for a write of `n` bytes as packets (`packet`) or a stream:
    /// what of it would fit now.
    pub fn fits(&self, n: usize, packet: bool) -> usize {
        if packet {
            (self.room() / PAGE * PIPE_BUF).min(n)
        } else {
            self.room().min(n)
        }
    }

    /// Sets the capacity to `size` bytes (already rounded: [`round_size`])
    /// → `EBUSY` if the waiting bytes take more pages than that.
    pub fn set_cap(&mut self, size: usize) -> Result<(), i64> {
        if self.used().div_ceil(PAGE) > size / PAGE {
            return Err(EBUSY);
        }
        self.cap = size;
        Ok(())
    }

    /// Puts as much of `data` as fits (and the heap holds) → how many; as
    /// packets of at most [`PIPE_BUF`] when `packet`.
    pub fn put(&mut self, data: &[u8], packet: bool) -> usize {
        let n = self.fits(data.len(), packet);
        if n == 0
            || self.data.try_reserve(n).is_err()
            || self.segs.try_reserve(n.div_ceil(PIPE_BUF)).is_err()
        {
            return 0;
        }
        self.data.extend(&data[..n]);
        if packet {
            for c in data[..n].chunks(PIPE_BUF) {
                self.segs.push_back(Seg {
                    len: c.len() as u32,
                    packet: true,
                });
            }
        } else {
            match self.segs.back_mut() {
                Some(s) if !s.packet => s.len += n as u32,
                _ => self.segs.push_back(Seg {
                    len: n as u32,
                    packet: false,
                }),
            }
        }
        n
    }

    /// The next waiting bytes, at most `max`, as one slice: up to where
    /// the buffer wraps and within the first run. `consume` them.
    pub fn front(&self, max: usize) -> &[u8] {
        let Some(s) = self.segs.front() else {
            return &[];
        };
        let a = self.data.as_slices().0;
        &a[..a.len().min(max).min(s.len as usize)]
    }

    /// Whether the next bytes are a packet.
    pub fn packet_next(&self) -> bool {
        self.segs.front().is_some_and(|s| s.packet)
    }

    /// Drops the first `n` waiting bytes (at most the first run's): a
    /// packet goes whole however few of its bytes were taken.
    pub fn consume(&mut self, n: usize) {
        let Some(s) = self.segs.front_mut() else {
            return;
        };
        let drop = if s.packet {
            s.len as usize
        } else {
            n.min(s.len as usize)
        };
        s.len -= drop as u32;
        if s.len == 0 {
            self.segs.pop_front();
        }
        self.data.drain(..drop);
        if self.data.is_empty() && self.data.capacity() > PAGE {
            self.data.shrink_to(PAGE);
        }
    }

    /// Takes up to `out.len()` bytes → how many: a read stops after a
    /// packet.
    pub fn take(&mut self, out: &mut [u8]) -> usize {
        let mut done = 0;
        while done < out.len() {
            let f = self.front(out.len() - done);
            if f.is_empty() {
                break;
            }
            let n = f.len();
            out[done..done + n].copy_from_slice(f);
            done += n;
            let packet = self.packet_next();
            self.consume(n);
            if packet {
                break;
            }
        }
        done
    }

    /// Copies up to `out.len()` waiting bytes from the `skip`th on without
    /// taking them (`tee`) → how many.
    pub fn peek(&self, skip: usize, out: &mut [u8]) -> usize {
        let mut n = 0;
        for (d, b) in out.iter_mut().zip(self.data.iter().skip(skip)) {
            *d = *b;
            n += 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::vec;
    use std::vec::Vec;

    #[test]
    fn rounding() {
        assert_eq!(round_size(0), Ok(PAGE));
        assert_eq!(round_size(1), Ok(PAGE));
        assert_eq!(round_size(4097), Ok(8192));
        assert_eq!(round_size(65536), Ok(65536));
        assert_eq!(round_size(1 << 31), Ok(1 << 31));
        assert_eq!(round_size((1 << 31) + 1), Err(EINVAL));
        assert_eq!(round_size(u64::MAX), Err(EINVAL));
    }

    #[test]
    fn capacity_and_ebusy() {
        let mut p = PipeBuf::new();
        assert_eq!(p.cap(), 65536);
        assert_eq!(p.put(&vec![7u8; 70000], false), 65536);
        assert_eq!(p.room(), 0);
        assert_eq!(p.set_cap(32768), Err(EBUSY));
        let mut b = vec![0u8; 40000];
        assert_eq!(p.take(&mut b), 40000);
        assert_eq!(p.set_cap(PAGE), Err(EBUSY));
        assert_eq!(p.set_cap(32768), Ok(()));
        assert_eq!(p.room(), 32768 - 25536);
        assert_eq!(p.len(), 25536);
    }

    #[test]
    fn packets() {
        let mut p = PipeBuf::new();
        assert_eq!(p.put(b"hello", true), 5);
        assert_eq!(p.put(b"world!", true), 6);
        assert_eq!(p.put(&[1u8; 5000], true), 5000);
        let mut b = [0u8; 100];
        assert_eq!(p.take(&mut b[..3]), 3);
        assert_eq!(&b[..3], b"hel");
        assert_eq!(p.take(&mut b), 6);
        assert_eq!(&b[..6], b"world!");
        let mut big = [0u8; 8192];
        assert_eq!(p.take(&mut big), 4096);
        assert_eq!(p.take(&mut big), 904);
        assert!(p.is_empty());
        // 16 pages: 16 packets however small.
        for _ in 0..16 {
            assert_eq!(p.put(b"x", true), 1);
        }
        assert_eq!(p.put(b"x", true), 0);
        assert_eq!(p.put(b"x", false), 0);
    }

    #[test]
    fn stream_then_packet() {
        let mut p = PipeBuf::new();
        p.put(b"ab", false);
        p.put(b"cd", true);
        p.put(b"ef", false);
        let mut b = [0u8; 10];
        assert_eq!(p.take(&mut b), 4);
        assert_eq!(&b[..4], b"abcd");
        assert_eq!(p.take(&mut b), 2);
        assert_eq!(p.peek(0, &mut b), 0);
    }

    proptest! {
        /// As a stream, the buffer is a FIFO of bytes bounded by its
        /// capacity.
        #[test]
        fn stream_is_fifo(ops in proptest::collection::vec((any::<bool>(), 0usize..9000), 1..60)) {
            let mut p = PipeBuf::new();
            p.set_cap(16384).unwrap();
            let mut model: std::collections::VecDeque<u8> = Default::default();
            let mut next = 0u8;
            for (write, n) in ops {
                if write {
                    let d: Vec<u8> = (0..n).map(|i| next.wrapping_add(i as u8)).collect();
                    let put = p.put(&d, false);
                    prop_assert_eq!(put, n.min(16384 - model.len()));
                    model.extend(&d[..put]);
                    next = next.wrapping_add(put as u8);
                } else {
                    let mut out = vec![0u8; n];
                    let mut peeked = vec![0u8; n];
                    let k = p.peek(0, &mut peeked);
                    let got = p.take(&mut out);
                    prop_assert_eq!(got, n.min(model.len()));
                    prop_assert_eq!(k, got);
                    prop_assert_eq!(&peeked[..k], &out[..got]);
                    let want: Vec<u8> = model.drain(..got).collect();
                    prop_assert_eq!(&out[..got], &want[..]);
                }
                prop_assert_eq!(p.len(), model.len());
            }
        }
    }
}
