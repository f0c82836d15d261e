//! A byte ring (a pipe's buffer): bytes go in at the tail and come out at
//! the head, copied a slice at a time (at most two per call, where the ring
//! wraps). A pipe moves every byte through here, so no per-byte loop.

/// `N` bytes of ring.
#[derive(Clone, Copy)]
pub struct Ring<const N: usize> {
    buf: [u8; N],
    head: usize,
    len: usize,
}

impl<const N: usize> Default for Ring<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Ring<N> {
    /// An empty ring.
    pub const fn new() -> Self {
        Ring {
            buf: [0; N],
            head: 0,
            len: 0,
        }
    }

    /// Bytes waiting.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no bytes wait.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Room left.
    pub fn room(&self) -> usize {
        N - self.len
    }

    /// Takes up to `out.len()` bytes → how many.
    pub fn take(&mut self, out: &mut [u8]) -> usize {
        let n = out.len().min(self.len);
        let first = n.min(N - self.head);
        out[..first].copy_from_slice(&self.buf[self.head..self.head + first]);
        out[first..n].copy_from_slice(&self.buf[..n - first]);
        self.head = (self.head + n) % N;
        self.len -= n;
        n
    }

    /// The next waiting bytes, at most `max`, as one slice (up to where the
    /// ring wraps): to send them without copying first. `consume` them.
    pub fn front(&self, max: usize) -> &[u8] {
        let n = max.min(self.len).min(N - self.head);
        &self.buf[self.head..self.head + n]
    }

    /// Drops the first `n` waiting bytes (at most `len`).
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.len);
        self.head = (self.head + n) % N;
        self.len -= n;
    }

    /// Puts as much of `data` as fits → how many.
    pub fn put(&mut self, data: &[u8]) -> usize {
        let n = data.len().min(self.room());
        let tail = (self.head + self.len) % N;
        let first = n.min(N - tail);
        self.buf[tail..tail + first].copy_from_slice(&data[..first]);
        self.buf[..n - first].copy_from_slice(&data[first..n]);
        self.len += n;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;
    use std::vec;

    #[test]
    fn wraps_around() {
        let mut r = Ring::<8>::new();
        assert_eq!(r.put(b"abcdef"), 6);
        let mut out = [0u8; 4];
        assert_eq!(r.take(&mut out), 4);
        assert_eq!(&out, b"abcd");
        // Tail at 6: two bytes to the end, then from the start.
        assert_eq!(r.put(b"ghijklmn"), 6);
        assert_eq!(r.room(), 0);
        let mut all = [0u8; 10];
        assert_eq!(r.take(&mut all), 8);
        assert_eq!(&all[..8], b"efghijkl");
        assert!(r.is_empty());
        // front stops where the ring wraps; consume moves on.
        r.put(b"0123456");
        assert_eq!(r.front(100), b"0123");
        assert_eq!(r.front(3), b"012");
        r.consume(4);
        assert_eq!(r.front(100), b"456");
        r.consume(100);
        assert!(r.is_empty());
    }

    proptest! {
        /// Any sequence of puts and takes gives the bytes a queue would.
        #[test]
        fn behaves_as_a_queue(ops in proptest::collection::vec((0u8..3, 0usize..40, any::<u8>()), 0..200)) {
            let mut r = Ring::<32>::new();
            let mut model = VecDeque::new();
            for (op, n, seed) in ops {
                if op == 2 {
                    // front + consume: a prefix of what waits, then gone.
                    let got = r.front(n).len();
                    prop_assert!(got <= n.min(model.len()));
                    prop_assert!(got > 0 || n == 0 || model.is_empty());
                    let want: std::vec::Vec<u8> = model.iter().take(got).copied().collect();
                    prop_assert_eq!(r.front(n), &want[..]);
                    r.consume(got);
                    model.drain(..got);
                } else if op == 1 {
                    let data: std::vec::Vec<u8> = (0..n).map(|i| seed.wrapping_add(i as u8)).collect();
                    let got = r.put(&data);
                    prop_assert_eq!(got, n.min(32 - model.len()));
                    model.extend(&data[..got]);
                } else {
                    let mut out = vec![0u8; n];
                    let got = r.take(&mut out);
                    prop_assert_eq!(got, n.min(model.len()));
                    let want: std::vec::Vec<u8> = model.drain(..got).collect();
                    prop_assert_eq!(&out[..got], &want[..]);
                }
                prop_assert_eq!(r.len(), model.len());
            }
        }
    }
}
