//! The terminal's line discipline: what the file-system domain does with
//! the bytes typed at the console before a process reads them — canonical
//! mode (a line at a time, with erase, kill and end-of-file) or raw mode,
//! echo, CR→NL, and the characters that send signals (`^C` `SIGINT`, `^\`
//! `SIGQUIT`, `^Z` `SIGTSTP`) to the foreground process group. The
//! settings are Linux's `struct termios` (`TCGETS`/`TCSETS`).

use crate::sys::sig::{SIGINT, SIGQUIT, SIGTSTP};

/// `c_iflag`: map CR to NL on input.
pub const ICRNL: u32 = 0o400;
/// `c_lflag`: signal characters.
pub const ISIG: u32 = 0o1;
/// `c_lflag`: canonical mode.
pub const ICANON: u32 = 0o2;
/// `c_lflag`: echo.
pub const ECHO: u32 = 0o10;
/// `c_lflag`: erase echoes as backspace-space-backspace.
pub const ECHOE: u32 = 0o20;
/// `c_lflag`: kill erases the line on the screen.
pub const ECHOK: u32 = 0o40;
/// `c_lflag`: control characters echo as `^X`.
pub const ECHOCTL: u32 = 0o1000;

/// Indices of `c_cc`.
#[allow(missing_docs)]
pub mod cc {
    pub const VINTR: usize = 0;
    pub const VQUIT: usize = 1;
    pub const VERASE: usize = 2;
    pub const VKILL: usize = 3;
    pub const VEOF: usize = 4;
    pub const VTIME: usize = 5;
    pub const VMIN: usize = 6;
    pub const VSUSP: usize = 10;
}

/// The kernel's `struct termios` (36 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Termios {
    /// Input modes.
    pub iflag: u32,
    /// Output modes.
    pub oflag: u32,
    /// Control modes.
    pub cflag: u32,
    /// Local modes.
    pub lflag: u32,
    /// Line discipline (0).
    pub line: u8,
    /// Control characters.
    pub cc: [u8; 19],
}

impl Termios {
    /// Linux's defaults for a console: canonical, echo, signals.
    pub const DEFAULT: Termios = Termios {
        iflag: ICRNL | 0o2000,      // ICRNL | IXON
        oflag: 0o1 | 0o4,           // OPOST | ONLCR
        cflag: 0o17 | 0o60 | 0o200, // B38400 | CS8 | CREAD
        lflag: ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | 0o4000 | 0o100000,
        line: 0,
        cc: [
            3, 0x1c, 0x7f, 0x15, 4, 0, 1, 0, 0x11, 0x13, 0x1a, 0, 0x12, 0x0f, 0x17, 0x16, 0, 0, 0,
        ],
    };

    /// The 36 bytes of `TCGETS`.
    pub fn to_bytes(&self) -> [u8; 36] {
        let mut b = [0u8; 36];
        for (i, v) in [self.iflag, self.oflag, self.cflag, self.lflag]
            .iter()
            .enumerate()
        {
            b[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        b[16] = self.line;
        b[17..].copy_from_slice(&self.cc);
        b
    }

    /// From `TCSETS`' 36 bytes.
    pub fn from_bytes(b: &[u8; 36]) -> Termios {
        let w = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let mut cc = [0u8; 19];
        cc.copy_from_slice(&b[17..]);
        Termios {
            iflag: w(0),
            oflag: w(4),
            cflag: w(8),
            lflag: w(12),
            line: b[16],
            cc,
        }
    }
}

/// Bytes of typed input a terminal holds.
pub const BUF: usize = 4096;

/// A terminal.
#[derive(Clone)]
pub struct Tty {
    /// Its settings.
    pub termios: Termios,
    /// The line being edited (canonical mode).
    line: [u8; BUF],
    line_len: usize,
    /// Input ready to read: a ring.
    ready: [u8; BUF],
    head: usize,
    len: usize,
    /// End-of-file marks (a `^D` on an empty line): each makes one read
    /// answer 0 bytes, at the position it was typed.
    eofs: usize,
    /// The foreground process group.
    pub fg: u32,
}

impl Default for Tty {
    fn default() -> Self {
        Tty::new()
    }
}

impl Tty {
    /// A terminal with Linux's default settings.
    pub const fn new() -> Tty {
        Tty {
            termios: Termios::DEFAULT,
            line: [0; BUF],
            line_len: 0,
            ready: [0; BUF],
            head: 0,
            len: 0,
            eofs: 0,
            fg: 0,
        }
    }

    fn push(&mut self, b: u8) {
        if self.len < BUF {
            self.ready[(self.head + self.len) % BUF] = b;
            self.len += 1;
        }
    }

    fn commit_line(&mut self) {
        for i in 0..self.line_len {
            let b = self.line[i];
            self.push(b);
        }
        self.line_len = 0;
    }

    /// Takes typed bytes: `echo` gets what to print, `signal` each signal
    /// the foreground group gets. → whether a reader may now get input.
    pub fn input(
        &mut self,
        bytes: &[u8],
        echo: &mut impl FnMut(&[u8]),
        signal: &mut impl FnMut(u64),
    ) -> bool {
        let t = self.termios;
        let canon = t.lflag & ICANON != 0;
        let echo_on = t.lflag & ECHO != 0;
        let mut woke = false;
        for &raw in bytes {
            let b = if raw == b'\r' && t.iflag & ICRNL != 0 {
                b'\n'
            } else {
                raw
            };
            if t.lflag & ISIG != 0 {
                let sig = if b == t.cc[cc::VINTR] && b != 0 {
                    Some(SIGINT)
                } else if b == t.cc[cc::VQUIT] && b != 0 {
                    Some(SIGQUIT)
                } else if b == t.cc[cc::VSUSP] && b != 0 {
                    Some(SIGTSTP)
                } else {
                    None
                };
                if let Some(s) = sig {
                    // The line typed so far is thrown away, as on Linux.
                    self.line_len = 0;
                    if echo_on && t.lflag & ECHOCTL != 0 {
                        echo(&[b'^', b ^ 0x40, b'\n']);
                    }
                    signal(s);
                    continue;
                }
            }
            if canon {
                if b == t.cc[cc::VERASE] || b == 8 {
                    if self.line_len > 0 {
                        self.line_len -= 1;
                        if echo_on {
                            echo(b"\x08 \x08");
                        }
                    }
                } else if b == t.cc[cc::VKILL] {
                    if echo_on {
                        for _ in 0..self.line_len {
                            echo(b"\x08 \x08");
                        }
                    }
                    self.line_len = 0;
                } else if b == t.cc[cc::VEOF] {
                    if self.line_len == 0 {
                        self.eofs += 1;
                    } else {
                        self.commit_line();
                    }
                    woke = true;
                } else if b == b'\n' {
                    if self.line_len < BUF {
                        self.line[self.line_len] = b'\n';
                        self.line_len += 1;
                    }
                    self.commit_line();
                    if echo_on {
                        echo(b"\n");
                    }
                    woke = true;
                } else if self.line_len < BUF - 1 {
                    self.line[self.line_len] = b;
                    self.line_len += 1;
                    if echo_on {
                        echo(&[b]);
                    }
                }
            } else {
                self.push(b);
                if echo_on {
                    echo(&[b]);
                }
                woke = true;
            }
        }
        woke
    }

    /// A read of at most `out.len()` bytes: `Some(n)` (0 at end of file),
    /// or `None` when there is nothing yet (the reader waits). Canonical
    /// mode gives at most one line.
    pub fn read(&mut self, out: &mut [u8]) -> Option<usize> {
        if self.len == 0 {
            if self.eofs > 0 {
                self.eofs -= 1;
                return Some(0);
            }
            return None;
        }
        let canon = self.termios.lflag & ICANON != 0;
        let mut n = 0;
        while n < out.len() && self.len > 0 {
            let b = self.ready[self.head];
            self.head = (self.head + 1) % BUF;
            self.len -= 1;
            out[n] = b;
            n += 1;
            if canon && b == b'\n' {
                break;
            }
        }
        Some(n)
    }

    /// Whether a read would get something now (`poll`).
    pub fn readable(&self) -> bool {
        self.len > 0 || self.eofs > 0
    }

    /// New settings; leaving canonical mode hands over the line so far.
    pub fn set(&mut self, t: Termios) {
        if self.termios.lflag & ICANON != 0 && t.lflag & ICANON == 0 {
            self.commit_line();
        }
        self.termios = t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn feed(t: &mut Tty, s: &[u8]) -> (Vec<u8>, Vec<u64>) {
        let mut e = Vec::new();
        let mut sigs = Vec::new();
        t.input(s, &mut |b| e.extend_from_slice(b), &mut |s| sigs.push(s));
        (e, sigs)
    }

    fn read_all(t: &mut Tty) -> Option<Vec<u8>> {
        let mut b = [0u8; 64];
        t.read(&mut b).map(|n| b[..n].to_vec())
    }

    #[test]
    fn canonical_lines_with_editing() {
        let mut t = Tty::new();
        let (echo, _) = feed(&mut t, b"helx\x7flo\r");
        assert_eq!(echo, b"helx\x08 \x08lo\n");
        feed(&mut t, b"second");
        assert_eq!(read_all(&mut t).unwrap(), b"hello\n");
        assert_eq!(read_all(&mut t), None, "the second line is not finished");
        feed(&mut t, b"\x15again\n");
        assert_eq!(read_all(&mut t).unwrap(), b"again\n");
    }

    #[test]
    fn end_of_file_and_partial_lines() {
        let mut t = Tty::new();
        feed(&mut t, b"ab\x04");
        assert_eq!(read_all(&mut t).unwrap(), b"ab");
        feed(&mut t, b"\x04");
        assert_eq!(read_all(&mut t).unwrap(), b"");
        assert_eq!(read_all(&mut t), None);
    }

    #[test]
    fn signals_drop_the_line() {
        let mut t = Tty::new();
        let (echo, sigs) = feed(&mut t, b"sleep 5\x03");
        assert_eq!(sigs, [2]);
        assert_eq!(&echo[echo.len() - 3..], b"^C\n");
        assert_eq!(read_all(&mut t), None);
        let (_, sigs) = feed(&mut t, b"\x1c\x1a");
        assert_eq!(sigs, [3, 20]);
        // Without ISIG ^C is a byte like any other.
        let mut raw = t.termios;
        raw.lflag &= !(ISIG | ICANON | ECHO);
        t.set(raw);
        let (echo, sigs) = feed(&mut t, b"\x03x");
        assert!(echo.is_empty() && sigs.is_empty());
        assert_eq!(read_all(&mut t).unwrap(), b"\x03x");
    }

    #[test]
    fn raw_mode_gives_bytes_at_once() {
        let mut t = Tty::new();
        feed(&mut t, b"par");
        let mut raw = t.termios;
        raw.lflag &= !(ICANON | ECHO);
        t.set(raw);
        feed(&mut t, b"t");
        assert_eq!(read_all(&mut t).unwrap(), b"part");
        assert_eq!(Termios::from_bytes(&raw.to_bytes()), raw);
    }
}
