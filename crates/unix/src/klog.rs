//! The kernel log: a bounded ring of text records, each a line in Linux's
//! format (`<6>[    1.234567] text\n`), and the positions `syslog(2)`
//! reads from. unixd keeps one (its storage from its heap) and writes its
//! own events into it; `dmesg` reads it back (`SYSLOG_ACTION_READ_ALL`).
//!
//! Positions are absolute byte counts since the log began (they never
//! wrap in practice: 2^64 bytes), so a reader that continues where it
//! stopped can tell what the ring has dropped meanwhile. When a record
//! does not fit, whole records are dropped from the oldest end.

/// The size of the log unixd keeps (a small kernel's `__LOG_BUF_LEN`).
pub const LOG_BYTES: usize = 64 * 1024;

/// The log over storage `B` (its length is the capacity).
pub struct Klog<B> {
    buf: B,
    /// Where the next byte goes.
    head: u64,
    /// The oldest byte still held (always a record's start).
    tail: u64,
    /// Where `SYSLOG_ACTION_READ` goes on from.
    read: u64,
    /// Where `SYSLOG_ACTION_READ_ALL` starts after a `CLEAR`.
    clear: u64,
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> Klog<B> {
    /// An empty log in `buf`.
    pub fn new(buf: B) -> Self {
        Klog {
            buf,
            head: 0,
            tail: 0,
            read: 0,
            clear: 0,
        }
    }

    /// Its capacity in bytes (`SYSLOG_ACTION_SIZE_BUFFER`).
    pub fn capacity(&self) -> usize {
        self.buf.as_ref().len()
    }

    /// The position after the newest byte.
    pub fn head(&self) -> u64 {
        self.head
    }

    /// The position of the oldest byte held.
    pub fn oldest(&self) -> u64 {
        self.tail
    }

    fn byte(&self, pos: u64) -> u8 {
        let b = self.buf.as_ref();
        b[(pos % b.len() as u64) as usize]
    }

    /// Drops the oldest record.
    fn drop_oldest(&mut self) {
        while self.tail < self.head {
            let b = self.byte(self.tail);
            self.tail += 1;
            if b == b'\n' {
                break;
            }
        }
        self.read = self.read.max(self.tail);
        self.clear = self.clear.max(self.tail);
    }

    /// Appends one record (a line ending in `\n`). One longer than the
    /// whole ring is not kept.
    pub fn push(&mut self, line: &[u8]) {
        let cap = self.capacity() as u64;
        if line.is_empty() || line.len() as u64 > cap {
            return;
        }
        while self.head + line.len() as u64 - self.tail > cap {
            self.drop_oldest();
        }
        let b = self.buf.as_mut();
        for (i, &c) in line.iter().enumerate() {
            b[((self.head + i as u64) % cap) as usize] = c;
        }
        self.head += line.len() as u64;
    }

    /// Bytes not yet read by `SYSLOG_ACTION_READ` (`SIZE_UNREAD`).
    pub fn unread(&self) -> u64 {
        self.head - self.read
    }

    /// `SYSLOG_ACTION_READ`: up to `out.len()` unread bytes, which are
    /// then read → how many.
    pub fn read(&mut self, out: &mut [u8]) -> usize {
        let n = self.copy(self.read, self.head, out);
        self.read += n as u64;
        n
    }

    /// Where `SYSLOG_ACTION_READ_ALL` with a buffer of `len` bytes starts:
    /// the oldest record since the last `CLEAR` from which the rest fits.
    pub fn all_from(&self, len: u64) -> u64 {
        let mut at = self.clear.max(self.tail);
        while self.head - at > len {
            // Skip a record.
            while at < self.head {
                let b = self.byte(at);
                at += 1;
                if b == b'\n' {
                    break;
                }
            }
        }
        at
    }

    /// Copies the bytes from `from` (or the oldest held, if the ring has
    /// dropped it) up to `end` (at most the head) into `out` → how many.
    pub fn copy(&self, from: u64, end: u64, out: &mut [u8]) -> usize {
        let from = from.max(self.tail);
        let end = end.min(self.head);
        if from >= end {
            return 0;
        }
        let n = ((end - from) as usize).min(out.len());
        for (i, o) in out[..n].iter_mut().enumerate() {
            *o = self.byte(from + i as u64);
        }
        n
    }

    /// `SYSLOG_ACTION_CLEAR`: `READ_ALL` shows only what comes after.
    pub fn clear(&mut self) {
        self.clear = self.head;
    }
}

/// Formats one record: `<level>[sssss.uuuuuu] text\n` (the time since
/// boot, `ns`) into `out` → its length (a text too long is cut, and the
/// record still ends with a newline).
pub fn line(level: u8, ns: u64, text: &[u8], out: &mut [u8]) -> usize {
    use core::fmt::Write;
    let mut t = crate::procgen::Text::new(out);
    let _ = write!(
        t,
        "<{}>[{:5}.{:06}] ",
        level.min(7),
        ns / 1_000_000_000,
        ns % 1_000_000_000 / 1000
    );
    t.bytes(text);
    t.end_line()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn all(k: &Klog<[u8; 32]>, len: u64) -> Vec<u8> {
        let mut out = [0u8; 64];
        let from = k.all_from(len);
        let n = k.copy(from, k.head(), &mut out);
        out[..n].to_vec()
    }

    #[test]
    fn a_line_has_linux_s_format() {
        let mut b = [0u8; 64];
        let n = line(6, 1_234_567_891, b"unixd: started", &mut b);
        assert_eq!(&b[..n], b"<6>[    1.234567] unixd: started\n");
        let n = line(3, 123_456_000_000_000, b"x", &mut b);
        assert_eq!(&b[..n], b"<3>[123456.000000] x\n");
    }

    #[test]
    fn a_long_text_is_cut_and_still_ends_a_line() {
        let mut b = [0u8; 24];
        let n = line(6, 0, b"0123456789abcdef", &mut b);
        assert_eq!(n, 24);
        assert_eq!(&b[..n], b"<6>[    0.000000] 01234\n");
    }

    #[test]
    fn read_all_gives_the_last_whole_records_that_fit() {
        let mut k = Klog::new([0u8; 32]);
        k.push(b"one\n");
        k.push(b"two\n");
        k.push(b"three\n");
        assert_eq!(all(&k, 100), b"one\ntwo\nthree\n");
        assert_eq!(all(&k, 10), b"two\nthree\n");
        assert_eq!(all(&k, 9), b"three\n");
        assert_eq!(all(&k, 5), b"");
        k.clear();
        assert_eq!(all(&k, 100), b"");
        k.push(b"four\n");
        assert_eq!(all(&k, 100), b"four\n");
    }

    #[test]
    fn the_oldest_records_go_when_the_ring_is_full() {
        let mut k = Klog::new([0u8; 32]);
        for i in 0..20u8 {
            k.push(&[b'a' + i, b'a' + i, b'a' + i, b'\n']);
        }
        // 8 records of 4 bytes fit in 32.
        let got = all(&k, 100);
        assert_eq!(got, b"mmm\nnnn\nooo\nppp\nqqq\nrrr\nsss\nttt\n");
        assert_eq!(k.capacity(), 32);
        // A record longer than the ring is not kept.
        k.push(&[b'x'; 33]);
        assert_eq!(all(&k, 100), got);
        // A longer record drops as many old ones as it needs.
        k.push(b"0123456789\n");
        assert_eq!(all(&k, 100), b"ppp\nqqq\nrrr\nsss\nttt\n0123456789\n");
    }

    #[test]
    fn read_consumes_and_counts_unread_bytes() {
        let mut k = Klog::new([0u8; 32]);
        k.push(b"one\n");
        k.push(b"two\n");
        assert_eq!(k.unread(), 8);
        let mut out = [0u8; 6];
        assert_eq!(k.read(&mut out), 6);
        assert_eq!(&out, b"one\ntw");
        assert_eq!(k.unread(), 2);
        let mut out = [0u8; 16];
        assert_eq!(k.read(&mut out), 2);
        assert_eq!(&out[..2], b"o\n");
        assert_eq!(k.read(&mut out), 0);
        // Bytes dropped before they were read are skipped.
        for _ in 0..10 {
            k.push(b"abcdef\n");
        }
        assert_eq!(k.unread(), 28);
        // A copy from a dropped position starts at the oldest held.
        let n = k.copy(0, k.head(), &mut out);
        assert_eq!(&out[..n], b"abcdef\nabcdef\nab");
    }

    #[test]
    fn an_empty_ring_holds_nothing() {
        let mut k = Klog::new([0u8; 0]);
        k.push(b"x\n");
        assert_eq!(k.unread(), 0);
        assert_eq!(k.all_from(100), 0);
        assert_eq!(k.capacity(), 0);
    }
}
