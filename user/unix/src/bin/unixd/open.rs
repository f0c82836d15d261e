//! Open file descriptions (what a file id names) and pipes.

use stet_unixfs::pipe::PipeBuf;

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
    /// Both ends of pipe `n`: a FIFO opened `O_RDWR`.
    PipeBoth(u16),
    /// Eventfd `n` (`fdobjs`).
    Event(u16),
    /// Timerfd `n` (`fdobjs`).
    Timer(u16),
    /// AF_UNIX socket `n` (`sockets`).
    Socket(u32),
    /// Epoll instance `n` (`epoll`).
    Epoll(u16),
    /// Signalfd `n` (`epoll`).
    Signal(u16),
    /// A pidfd of process `pid` (`procctl`): readable once it has ended.
    Pidfd(u32),
    /// inotify instance `n` (`inotify`).
    Inotify(u16),
}

impl Kind {
    /// The pipe it is an end of, and whether it reads and writes it.
    pub fn pipe(self) -> Option<(u16, bool, bool)> {
        match self {
            Kind::PipeRead(n) => Some((n, true, false)),
            Kind::PipeWrite(n) => Some((n, false, true)),
            Kind::PipeBoth(n) => Some((n, true, true)),
            _ => None,
        }
    }
}

impl Kind {
    /// Whether it has an offset (`pread`/`pwrite`/`lseek` may name one):
    /// not a pipe, the terminal, an eventfd, a timerfd, a socket, an epoll,
    /// a signalfd or a pidfd (`ESPIPE`).
    pub fn seekable(self) -> bool {
        !matches!(
            self,
            Kind::PipeRead(_)
                | Kind::PipeWrite(_)
                | Kind::PipeBoth(_)
                | Kind::Tty
                | Kind::Event(_)
                | Kind::Timer(_)
                | Kind::Socket(_)
                | Kind::Epoll(_)
                | Kind::Signal(_)
                | Kind::Pidfd(_)
                | Kind::Inotify(_)
        )
    }
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

/// A free entry.
pub const FREE: Open = Open {
    kind: Kind::Free,
    refs: 0,
    flags: 0,
    off: 0,
};

/// A pipe: its buffer (`stet_unixfs::pipe`), how many ends are open, and,
/// for a FIFO, its inode and how many times each end was opened (an
/// `open` of one end waits for the other's: `FIFO_WAIT`).
#[derive(Clone)]
pub struct Pipe {
    /// Whether it is in use.
    pub used: bool,
    /// The bytes.
    pub buf: PipeBuf,
    /// Open read ends (file ids referring to it, counted by references).
    pub readers: u32,
    /// Open write ends.
    pub writers: u32,
    /// Bumped by each write: what an edge-triggered epoll on the read end
    /// sees change.
    pub wgen: u32,
    /// Bumped by each read (for the write end).
    pub rgen: u32,
    /// The FIFO's inode (0: an anonymous pipe).
    pub fifo: u32,
    /// Opens of the read end so far (a FIFO's writer waits for one).
    pub ropens: u32,
    /// Opens of the write end so far.
    pub wopens: u32,
    /// The real user who made it, whose pipes' pages it counts among
    /// (`pipe-user-pages-soft`).
    pub uid: u32,
}

/// An unused pipe.
pub const NO_PIPE: Pipe = Pipe {
    used: false,
    buf: PipeBuf::new(),
    readers: 0,
    writers: 0,
    wgen: 0,
    rgen: 0,
    fifo: 0,
    ropens: 0,
    wopens: 0,
    uid: 0,
};
