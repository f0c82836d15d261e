//! Open file descriptions (what a file id names) and pipes.

use stet_unix::ring::Ring;

/// What an open file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A free entry.
    Free,
    /// A regular file, directory or symlink (`O_PATH`) by inode.
    Inode(u32),
    /// `/dev/null`.
    Null,
    /// `/dev/zero`.
    Zero,
    /// `/dev/urandom` and `/dev/random`.
    Random,
    /// The terminal (`/dev/tty`, `/dev/console`, the first descriptors).
    Tty,
    /// The read end of pipe `n`.
    PipeRead(u16),
    /// The write end of pipe `n`.
    PipeWrite(u16),
    /// Eventfd `n` (`fdobjs`).
    Event(u16),
    /// Timerfd `n` (`fdobjs`).
    Timer(u16),
    /// A pidfd of process `pid` (`procctl`): readable once it has ended.
    Pidfd(u32),
}

/// An open file description.
#[derive(Clone, Copy, Debug)]
pub struct Open {
    /// What it is.
    pub kind: Kind,
    /// References (descriptors in all processes).
    pub refs: u32,
    /// `O_*` status flags (access mode, `O_APPEND`, `O_NONBLOCK`).
    pub flags: u64,
    /// The offset.
    pub off: u64,
}

/// A pipe's buffer (Linux: 16 pages; POSIX's `PIPE_BUF` is 4096).
pub const PIPE_BUF: usize = 4096;

/// A free entry.
pub const FREE: Open = Open {
    kind: Kind::Free,
    refs: 0,
    flags: 0,
    off: 0,
};

/// A pipe: a ring buffer and how many ends are open.
#[derive(Clone, Copy)]
pub struct Pipe {
    /// Whether it is in use.
    pub used: bool,
    buf: Ring<PIPE_BUF>,
    /// Open read ends (file ids referring to it, counted by references).
    pub readers: u32,
    /// Open write ends.
    pub writers: u32,
}

/// An unused pipe.
pub const NO_PIPE: Pipe = Pipe {
    used: false,
    buf: Ring::new(),
    readers: 0,
    writers: 0,
};

impl Pipe {
    /// Bytes waiting.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// Room left.
    pub fn room(&self) -> usize {
        self.buf.room()
    }

    /// Takes up to `out.len()` bytes → how many.
    pub fn take(&mut self, out: &mut [u8]) -> usize {
        self.buf.take(out)
    }

    /// Puts as much of `data` as fits → how many.
    pub fn put(&mut self, data: &[u8]) -> usize {
        self.buf.put(data)
    }

    /// The next bytes, at most `max`, without copying (`Ring::front`).
    pub fn front(&self, max: usize) -> &[u8] {
        self.buf.front(max)
    }

    /// Drops the first `n` bytes.
    pub fn consume(&mut self, n: usize) {
        self.buf.consume(n)
    }
}
