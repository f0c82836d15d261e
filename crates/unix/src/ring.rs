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
    }

    proptest! {
        /// Any sequence of puts and takes gives the bytes a queue would.
        #[test]
        fn behaves_as_a_queue(ops in proptest::collection::vec((any::<bool>(), 0usize..40, any::<u8>()), 0..200)) {
            let mut r = Ring::<32>::new();
            let mut model = VecDeque::new();
            for (put, n, seed) in ops {
                if put {
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
