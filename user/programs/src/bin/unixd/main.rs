//! The UNIX file-system domain: one domain holding every directory, inode,
//! open file description and pipe of the UNIX personality (Workplace OS's
//! and KeyNIX's hindsight: not a domain per inode, no queue domains on
//! pipes). Regular files are segments (`content`), so a keeper maps an
//! executable's pages straight into its process. It needs no journal and
//! no fsck: all of it is in this domain's memory and its objects, which the
//! single-level store checkpoints like everything else.
//!
//! Keepers call it with the orders of `stet_unix::proto`; every answer is
//! `OK` with the system call's `rax` in `w0`. A call that must wait (a
//! pipe with nothing to read, or no room) is parked: its resume key stays
//! where it arrived if one of the `RESUME_SLOTS` is free for the next
//! message (no invocation at all), else goes in the `WAITS` node. When the
//! pipe changes, a parked read is answered with its bytes; other calls are
//! answered `BUSY`, on which they ask again (restartable, as in Fluke).
//!
//! On its first start it builds the file system from a `newc` cpio
//! archive (`boot`), adds `/dev`, `/tmp` and `/proc`, and prints a line.
//!
//! Keys: see `slots`. Argument: the system's start time (s since 1970).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

mod boot;
mod content;
mod memory;
mod open;
mod procfs;
mod slots;

use content::Content;
use open::{Kind, Open, Pipe, FREE, MAX_OPEN, MAX_PIPES, NO_PIPE, PIPE_BUF};
use slots::{ARCHIVE, BANK, CONSOLE, K0, KEEPERS, RESUME, SELF, SLEEP, STORE, T, T2, WAITS};
use stet_programs::keydir::{fetch, swap};
use stet_rt::abi::invoke::source;
use stet_rt::abi::order::node;
use stet_rt::abi::service::store as order_store;
use stet_rt::abi::{code, order};
use stet_rt::bank;
use stet_rt::key::Slot;
use stet_rt::key::{call, wait, Answer, Msg};
use stet_rt::println;
use stet_unix::fs::{self, mode, Fs, ROOT};
use stet_unix::proto::{self as p, at, o};
use stet_unix::sys::errno::*;
use stet_unix::tty::Tty;

/// Most calls parked at once.
const MAX_WAITERS: usize = 16;

/// What a parked call waits for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// Nothing: a free entry.
    Free,
    /// A change of this pipe.
    Pipe(u16),
    /// The end of a child of this process.
    Child(u32),
    /// A time (ns since boot).
    Sleep(u64),
    /// Only a signal.
    Pause,
    /// The clock helper, until there is something to time.
    Ticker,
    /// Terminal input.
    Tty,
    /// A futex: (inode, or `u32::MAX` for the caller's private one;
    /// offset or address; deadline, ns since boot, `u64::MAX`: none).
    Futex(u32, u64, u64),
}

/// A parked call.
#[derive(Clone, Copy)]
struct Waiter {
    on: Wait,
    /// The process whose call it is.
    pid: u32,
    /// The signals that end it (`-EINTR`).
    intr: u64,
    /// A pipe read's most bytes (0: not a read): it is answered with the
    /// bytes when they come, not woken to ask again.
    read_len: u32,
    /// The general slot holding its resume key (one of `RESUME_SLOTS`), or
    /// 0: the key is in slot `i` of the `WAITS` node.
    slot: Slot,
}

const NO_WAITER: Waiter = Waiter {
    on: Wait::Free,
    pid: 0,
    intr: 0,
    read_len: 0,
    slot: 0,
};

/// General slots a resume key can wait in: `RESUME`, and two used only at
/// boot (the archive, and the data store publisher) and free after.
const RESUME_SLOTS: [Slot; 3] = [RESUME, ARCHIVE, STORE];

/// Signal numbers unixd sends itself.
const SIGCHLD: u64 = 17;
const SIGALRM: u64 = 14;

fn bit(sig: u64) -> u64 {
    1 << (sig - 1)
}

/// Most processes.
const MAX_PROCS: usize = 128;
/// `KEEPERS` slots 0..8 hold nodes of keepers' start keys, slots 8..16
/// nodes of forwarder node keys, 16 processes each.
const FWD_NODES: u64 = (MAX_PROCS / 16) as u64;

/// A process table entry (`pid` 0: free).
#[derive(Clone, Copy, Debug)]
struct Proc {
    pid: u32,
    ppid: u32,
    pgid: u32,
    sid: u32,
    /// Ended, its status kept for its parent.
    zombie: bool,
    status: u32,
    /// Signals sent and not yet handed to its keeper.
    pending: u64,
    /// When its alarm rings (ns since boot; 0: none).
    alarm: u64,
    /// Whether its keeper said where it is (`HELLO`).
    keeper: bool,
    /// Whether unixd made its keeper's forwarder (a forked process): the
    /// node is freed when the process is reaped (`release_forwarder`).
    fwd: bool,
    /// Whether its keeper waits as a spare (`proto::EXIT`): its `KEYS`
    /// node is in slot [`FWD_SPARE`] of the forwarder's node, for the
    /// parent's `WAIT4`.
    spare: bool,
    /// And its process too, kept by the spare (`EXIT`'s `w1`: bit 0
    /// kept, bit 1 put aside at `execve`): `WAIT4` passes it on (`w2`
    /// bits 1 and 2).
    kept: u8,
    /// Its `/proc/<pid>/` is not made yet: it would be a copy of its
    /// parent's (`proc_flush` makes it before anything looks).
    proc_pending: bool,
    /// Its program's name (`/proc/<pid>/stat`), NUL-padded.
    comm: [u8; 16],
}

const NO_PROC: Proc = Proc {
    pid: 0,
    ppid: 0,
    pgid: 0,
    sid: 0,
    zombie: false,
    status: 0,
    pending: 0,
    alarm: 0,
    keeper: false,
    fwd: false,
    spare: false,
    kept: 0,
    proc_pending: false,
    comm: [0; 16],
};

/// The slot of a forked process's forwarder node (slots 2–15 are free)
/// holding its keeper's `KEYS` node while the keeper waits as a spare.
const FWD_SPARE: u64 = 2;

/// What to answer.
enum Reply {
    /// `w0`..`w2`, and `n` bytes of the out buffer as the string; with a
    /// key in `T` when `key`.
    Now([u64; 3], usize, bool),
    /// The call is parked.
    Parked,
    /// The call is never answered here (its resume key went elsewhere).
    Kept,
}

fn now_ns() -> u64 {
    call(SLEEP, order::sleep::NOW, [0; 4]).w[0]
}

fn ret(r: Result<u64, i64>) -> [u64; 3] {
    [stet_unix::sys::ret(r), 0, 0]
}

/// Where parked call `i`'s resume key is: general slot `slot`, or (0)
/// fetched from the `WAITS` node into `T`.
fn resume_key(i: usize, slot: Slot) -> Option<Slot> {
    if slot != 0 {
        return Some(slot);
    }
    fetch(WAITS, i as u64, T).ok().map(|_| T)
}

/// The domain's state.
pub struct Unixd<'a> {
    fs: &'a mut Fs,
    content: &'a mut Content,
    open: &'a mut [Open; MAX_OPEN],
    pipes: &'a mut [Pipe; MAX_PIPES],
    waiters: [Waiter; MAX_WAITERS],
    procs: [Proc; MAX_PROCS],
    next_pid: u32,
    /// The caller of the message being served (0: not a process) and the
    /// signals that end its wait if it parks.
    caller: u32,
    intr: u64,
    /// The slot the message being served brought its resume key in, which
    /// is where the next one's goes unless `park` leaves a call there.
    resume: Slot,
    /// Which nodes of the keepers' start-key directory exist.
    keeper_nodes: [bool; MAX_PROCS / 16],
    /// Which of `KEEPERS`' forwarder-node groups exist.
    fwd_nodes: [bool; MAX_PROCS / 16],
    /// The terminal.
    tty: &'a mut Tty,
    /// Seconds since 1970 at boot: file times are `epoch + now`.
    epoch_ns: u64,
    /// The generated files of `/proc` (inode, what).
    gen: [(u32, procfs::Gen); procfs::MAX_GEN],
    /// Unimplemented calls of every process that has ended, by number
    /// (the last counts all higher numbers).
    enosys: [u32; 512],
    /// Pages shared copy-on-write after fork, and their holders.
    shares: &'a mut stet_unix::share::Shares,
    /// Some process's `/proc` directory waits to be made
    /// (`Proc::proc_pending`).
    proc_pending: bool,
    /// What waiting directories of processes that ran `execve` will hold.
    infos: &'a mut [procfs::ExecInfo; procfs::MAX_INFO],
}

impl Unixd<'_> {
    fn time(&self) -> u64 {
        self.epoch_ns + now_ns()
    }

    fn fid(&self, fid: u64) -> Result<usize, i64> {
        match self.open.get(fid as usize) {
            Some(o) if o.kind != Kind::Free => Ok(fid as usize),
            _ => Err(EBADF),
        }
    }

    fn new_fid(&mut self, kind: Kind, flags: u64) -> Result<u64, i64> {
        let i = (0..MAX_OPEN)
            .find(|&i| self.open[i].kind == Kind::Free)
            .ok_or(ENFILE)?;
        self.open[i] = Open {
            kind,
            refs: 1,
            flags,
            off: 0,
        };
        Ok(i as u64)
    }

    /// The directory a path is relative to (`u64::MAX`: the root, for a
    /// process that has no working directory yet).
    fn base(&self, fid: u64) -> Result<u32, i64> {
        if fid == u64::MAX {
            return Ok(ROOT);
        }
        match self.open.get(fid as usize).map(|o| o.kind) {
            Some(Kind::Inode(ino)) if self.fs.is_dir(ino) => Ok(ino),
            Some(Kind::Free) | None => Err(EBADF),
            Some(_) => Err(ENOTDIR),
        }
    }

    fn inode_of(&self, fid: usize) -> Option<u32> {
        match self.open[fid].kind {
            Kind::Inode(i) => Some(i),
            _ => None,
        }
    }

    /// Frees an inode that has no names once no open file holds it.
    fn maybe_free(&mut self, ino: u32) {
        let held = self.open.iter().any(|o| o.kind == Kind::Inode(ino));
        let named = self.fs.inode(ino).is_some_and(|i| i.nlink > 0);
        if !held && !named {
            if self
                .fs
                .inode(ino)
                .is_some_and(|i| i.mode & mode::FMT == mode::REG)
            {
                self.content.free(ino);
            }
            self.fs.free(ino);
        }
    }

    fn open_path(
        &mut self,
        base: u64,
        flags: u64,
        perm: u64,
        path: &[u8],
    ) -> Result<[u64; 3], i64> {
        let dir = self.base(base)?;
        let follow = flags & o::NOFOLLOW == 0;
        let now = self.time();
        let ino = match self.fs.resolve(dir, path, follow) {
            Ok(ino) => {
                if flags & o::CREAT != 0 && flags & o::EXCL != 0 {
                    return Err(EEXIST);
                }
                ino
            }
            Err(ENOENT) if flags & o::CREAT != 0 => {
                let par = self.fs.parent(dir, path)?;
                self.fs
                    .create(par.dir, par.name, mode::REG | (perm as u32 & 0o7777), now)?
            }
            Err(e) => return Err(e),
        };
        self.refresh(ino);
        let i = *self.fs.inode(ino).ok_or(ENOENT)?;
        let fmt = i.mode & mode::FMT;
        let acc = flags & o::ACCMODE;
        if flags & o::PATH == 0 {
            if fmt == mode::LNK {
                return Err(ELOOP);
            }
            if fmt == mode::DIR && acc != o::RDONLY {
                return Err(EISDIR);
            }
        }
        if flags & o::DIRECTORY != 0 && fmt != mode::DIR {
            return Err(ENOTDIR);
        }
        let kind = if fmt == mode::CHR {
            match i.rdev {
                0x103 => Kind::Null,
                0x105 => Kind::Zero,
                0x108 | 0x109 => Kind::Random,
                _ => Kind::Tty,
            }
        } else {
            Kind::Inode(ino)
        };
        if fmt == mode::REG && flags & o::TRUNC != 0 && acc != o::RDONLY {
            self.content.truncate(ino, i.size, 0)?;
            if let Some(m) = self.fs.inode_mut(ino) {
                m.size = 0;
                m.mtime = now;
            }
        }
        let fid = self.new_fid(kind, flags & !(o::CREAT | o::EXCL | o::TRUNC | o::CLOEXEC))?;
        Ok([fid, ino as u64, i.mode as u64])
    }

    fn close(&mut self, fid: u64) -> Result<u64, i64> {
        let f = self.fid(fid)?;
        let o = &mut self.open[f];
        o.refs -= 1;
        let (kind, last) = (o.kind, o.refs == 0);
        if last {
            *o = FREE;
        }
        // A pipe counts its ends by references: a reader sees end of file
        // when the last reference to a write end is gone.
        match kind {
            Kind::Inode(ino) if last => self.maybe_free(ino),
            Kind::PipeRead(n) => {
                self.pipes[n as usize].readers -= 1;
                self.pipe_changed(n);
            }
            Kind::PipeWrite(n) => {
                self.pipes[n as usize].writers -= 1;
                self.pipe_changed(n);
            }
            _ => {}
        }
        Ok(0)
    }

    /// A pipe changed: its parked callers ask again; a pipe with no ends
    /// left is freed.
    fn pipe_changed(&mut self, n: u16) {
        for i in 0..MAX_WAITERS {
            if self.waiters[i].on != Wait::Pipe(n) {
                continue;
            }
            let len = self.waiters[i].read_len as usize;
            let pi = &mut self.pipes[n as usize];
            if len == 0 {
                self.wake(i);
            } else if pi.len() > 0 {
                // A parked read gets its bytes now: one message, where
                // waking it to read again took a second call. The bytes go
                // straight from the ring (as far as it wraps: a pipe read
                // may return fewer bytes than asked).
                let (pid, to) = (self.waiters[i].pid, self.waiters[i].slot);
                self.waiters[i] = NO_WAITER;
                let sigs = self.take_pending(pid);
                let pi = &mut self.pipes[n as usize];
                let s = pi.front(len);
                if let Some(r) = resume_key(i, to) {
                    Msg::new(r, code::OK)
                        .words([s.len() as u64, 0, 0, sigs])
                        .string(s)
                        .send();
                }
                let got = s.len();
                pi.consume(got);
            } else if pi.writers == 0 {
                self.answer(i, 0); // end of file
            }
        }
        let pi = &mut self.pipes[n as usize];
        if pi.readers == 0 && pi.writers == 0 {
            *pi = NO_PIPE;
        }
    }

    /// Answers parked call `i` `BUSY`: its keeper asks again.
    fn wake(&mut self, i: usize) {
        let to = self.waiters[i].slot;
        self.waiters[i] = NO_WAITER;
        if let Some(r) = resume_key(i, to) {
            Msg::new(r, code::BUSY).send();
        }
    }

    /// Answers parked call `i` with `w0` (and the process's signals).
    fn answer(&mut self, i: usize, w0: u64) {
        let (pid, to) = (self.waiters[i].pid, self.waiters[i].slot);
        self.waiters[i] = NO_WAITER;
        let sigs = self.take_pending(pid);
        if let Some(r) = resume_key(i, to) {
            Msg::new(r, code::OK).words([w0, 0, 0, sigs]).send();
        }
    }

    /// Parks a pipe read of at most `len` bytes (answered with its bytes,
    /// `pipe_changed`).
    fn park_read(&mut self, on: Wait, len: usize) -> Result<Reply, i64> {
        let r = self.park(on)?;
        if let Some(w) = self
            .waiters
            .iter_mut()
            .find(|w| w.on == on && w.pid == self.caller && self.caller != 0)
        {
            // A process has one call at a time: this is the one parked.
            w.read_len = len as u32;
        }
        Ok(r)
    }

    fn park(&mut self, on: Wait) -> Result<Reply, i64> {
        // A signal that ends the wait is already here: no wait at all.
        if let Some(p) = self
            .procs
            .iter()
            .find(|p| self.caller != 0 && p.pid == self.caller)
        {
            if p.pending & self.intr != 0 {
                return Err(EINTR);
            }
        }
        let i = (0..MAX_WAITERS)
            .find(|&i| self.waiters[i].on == Wait::Free)
            .ok_or(EAGAIN)?;
        // The key stays in its slot if another is free for the next
        // message's; else it goes to the node.
        let cur = self.resume;
        let free = RESUME_SLOTS.into_iter().find(|&s| {
            s != cur
                && !self
                    .waiters
                    .iter()
                    .any(|w| w.on != Wait::Free && w.slot == s)
        });
        let slot = match free {
            Some(next) => {
                self.resume = next;
                cur
            }
            None => {
                swap(WAITS, i as u64, cur, 0).map_err(|_| EIO)?;
                0
            }
        };
        self.waiters[i] = Waiter {
            on,
            pid: self.caller,
            intr: self.intr,
            read_len: 0,
            slot,
        };
        Ok(Reply::Parked)
    }

    /// The signals sent to `pid` since it last heard, now handed over.
    fn take_pending(&mut self, pid: u32) -> u64 {
        match (0..MAX_PROCS).find(|&i| pid != 0 && self.procs[i].pid == pid) {
            Some(i) => core::mem::take(&mut self.procs[i].pending),
            None => 0,
        }
    }

    /// Hands process `i`'s pending signals to it: through its parked
    /// call if one of them ends it (`-EINTR`), else to its keeper (a
    /// try-send: a busy keeper gets them with its next answer, or at the
    /// next tick).
    fn deliver(&mut self, i: usize) {
        let p = self.procs[i];
        if p.pending == 0 || p.zombie {
            return;
        }
        if let Some(w) = (0..MAX_WAITERS).find(|&w| {
            self.waiters[w].on != Wait::Free
                && self.waiters[w].pid == p.pid
                && self.waiters[w].intr & p.pending != 0
        }) {
            self.answer(w, (-EINTR) as u64);
            return;
        }
        if !p.keeper
            || fetch(KEEPERS, i as u64 / 16, T).is_err()
            || fetch(T, i as u64 % 16, T).is_err()
        {
            // Its keeper has not said where it is yet: the clock retries.
            self.kick();
            return;
        }
        let a = Msg::new(T, p::SIGNAL).w0(p.pending).try_send();
        if a.ok() {
            self.procs[i].pending = 0;
        } else {
            // Its keeper is busy: the clock retries.
            self.kick();
        }
    }

    /// Sends `sig` to process `i`.
    fn signal(&mut self, i: usize, sig: u64) {
        if self.procs[i].zombie {
            return;
        }
        self.procs[i].pending |= bit(sig);
        self.deliver(i);
    }

    /// `KILL`: Linux's targets.
    fn kill(&mut self, from: u32, which: i64, sig: u64) -> Result<u64, i64> {
        if sig > 64 {
            return Err(EINVAL);
        }
        let me = self.proc_of(from)?;
        let my_pgid = self.procs[me].pgid;
        let mut found = false;
        for i in 0..MAX_PROCS {
            let p = self.procs[i];
            if p.pid == 0 || p.zombie {
                continue;
            }
            let hit = match which {
                -1 => p.pid != 1 || from == 1,
                0 => p.pgid == my_pgid,
                w if w < -1 => p.pgid as i64 == -w,
                w => p.pid as i64 == w,
            };
            if hit {
                found = true;
                if sig != 0 {
                    self.signal(i, sig);
                }
            }
        }
        if found {
            Ok(0)
        } else {
            Err(ESRCH)
        }
    }

    /// The clock helper is needed: answer it if it is parked.
    fn kick(&mut self) {
        if let Some(w) = (0..MAX_WAITERS).find(|&w| self.waiters[w].on == Wait::Ticker) {
            self.answer(w, 0);
        }
    }

    /// When the clock helper should tick next (0: nothing to time).
    fn next_tick(&self) -> u64 {
        let mut next = u64::MAX;
        for w in &self.waiters {
            match w.on {
                Wait::Sleep(t) => next = next.min(t),
                Wait::Futex(_, _, t) if t != u64::MAX => next = next.min(t),
                _ => {}
            }
        }
        for p in &self.procs {
            if p.pid != 0 && p.alarm != 0 {
                next = next.min(p.alarm);
            }
            if p.pid != 0 && p.pending != 0 && !p.zombie {
                next = next.min(now_ns() + 10_000_000);
            }
        }
        if next == u64::MAX {
            0
        } else {
            next
        }
    }

    /// `TICK`: alarms, sleeps and signals a busy keeper could not take.
    fn tick(&mut self) {
        let now = now_ns();
        for w in 0..MAX_WAITERS {
            match self.waiters[w].on {
                Wait::Sleep(t) if t <= now => self.answer(w, 0),
                Wait::Futex(_, _, t) if t <= now => self.answer(w, (-ETIMEDOUT) as u64),
                _ => {}
            }
        }
        for i in 0..MAX_PROCS {
            if self.procs[i].pid == 0 {
                continue;
            }
            if self.procs[i].alarm != 0 && self.procs[i].alarm <= now {
                self.procs[i].alarm = 0;
                self.signal(i, SIGALRM);
            } else if self.procs[i].pending != 0 {
                self.deliver(i);
            }
        }
    }

    /// `HELLO`: the caller's keeper's start key (in `K0`).
    fn hello(&mut self, pid: u32) -> Result<u64, i64> {
        let i = self.proc_of(pid)?;
        let a = i / 16;
        if !self.keeper_nodes[a] {
            bank::alloc_node(BANK, T).map_err(|_| EAGAIN)?;
            swap(KEEPERS, a as u64, T, 0).map_err(|_| EIO)?;
            self.keeper_nodes[a] = true;
        }
        fetch(KEEPERS, a as u64, T).map_err(|_| EIO)?;
        swap(T, i as u64 % 16, K0, 0).map_err(|_| EIO)?;
        self.procs[i].keeper = true;
        Ok(0)
    }

    /// The table entry of `pid`; a process the image started (not forked)
    /// is entered on its first call, as a child of nobody.
    fn proc_of(&mut self, pid: u32) -> Result<usize, i64> {
        if pid == 0 {
            return Err(EPERM);
        }
        if let Some(i) = (0..MAX_PROCS).find(|&i| self.procs[i].pid == pid) {
            return Ok(i);
        }
        let i = (0..MAX_PROCS)
            .find(|&i| self.procs[i].pid == 0)
            .ok_or(EAGAIN)?;
        self.procs[i] = Proc {
            pid,
            pgid: pid,
            sid: pid,
            ..NO_PROC
        };
        self.next_pid = self.next_pid.max(pid + 1);
        Ok(i)
    }

    /// `FORK`: a new pid, the fids' references, a forwarder into `T`.
    fn fork(&mut self, parent: u32, fids: &[u8]) -> Result<Reply, i64> {
        let pi = self.proc_of(parent)?;
        let (pgid, sid) = (self.procs[pi].pgid, self.procs[pi].sid);
        let slot = (0..MAX_PROCS)
            .find(|&i| self.procs[i].pid == 0)
            .ok_or(EAGAIN)?;
        let mut pid = self.next_pid;
        while pid == 0 || self.procs.iter().any(|p| p.pid == pid) {
            pid = if pid >= 32767 { 2 } else { pid + 1 };
        }
        for c in fids.chunks_exact(4) {
            let f = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64;
            self.fid(f)?;
        }
        // The child's forwarder (into `T`): a node of the UNIX bank naming
        // this domain and the pid, its node key kept by table index until
        // the child is reaped.
        let group = FWD_NODES + slot as u64 / 16;
        if !self.fwd_nodes[slot / 16] {
            bank::alloc_node(BANK, T).map_err(|_| EAGAIN)?;
            swap(KEEPERS, group, T, 0).map_err(|_| EIO)?;
            self.fwd_nodes[slot / 16] = true;
        }
        bank::alloc_node(BANK, T2).map_err(|_| EAGAIN)?;
        let made = |a: Answer| if a.ok() { Ok(()) } else { Err(a.code) };
        let fwd = swap(T2, 0, SELF, 0)
            .and_then(|_| {
                made(
                    Msg::new(T2, node::WRITE_NUMBER)
                        .words([1, pid as u64, 0, 0])
                        .call(),
                )
            })
            .and_then(|_| made(Msg::new(T2, node::MAKE_FORWARDER).recv([T, 0, 0, 0]).call()))
            .and_then(|_| fetch(KEEPERS, group, K0))
            .and_then(|_| swap(K0, slot as u64 % 16, T2, 0));
        if fwd.is_err() {
            let _ = bank::free(BANK, T2);
            return Err(EAGAIN);
        }
        for c in fids.chunks_exact(4) {
            let f = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize;
            self.open[f].refs += 1;
            match self.open[f].kind {
                Kind::PipeRead(n) => self.pipes[n as usize].readers += 1,
                Kind::PipeWrite(n) => self.pipes[n as usize].writers += 1,
                _ => {}
            }
        }
        // Its /proc directory is made when someone could see it (most
        // forked children are gone before anyone does): its name now.
        self.procs[slot] = Proc {
            pid,
            ppid: parent,
            pgid,
            sid,
            fwd: true,
            comm: self.procs[pi].comm,
            proc_pending: true,
            ..NO_PROC
        };
        self.proc_pending = true;
        self.next_pid = if pid >= 32767 { 2 } else { pid + 1 };
        Ok(Reply::Now([pid as u64, 0, 0], 0, true))
    }

    /// `EXIT`: the caller becomes a zombie; its parent's waits wake.
    fn exit(&mut self, pid: u32, status: u32) -> Result<u64, i64> {
        let i = self.proc_of(pid)?;
        let ppid = self.procs[i].ppid;
        self.procs[i].zombie = true;
        self.procs[i].status = status;
        // A child's /proc directory still to be copied from this one's is
        // made before the child changes parents.
        if self.proc_pending {
            self.flush_children_of(pid);
        }
        // Orphans go to pid 1; zombies among them wait for it too.
        for p in self.procs.iter_mut() {
            if p.pid != 0 && p.ppid == pid {
                p.ppid = 1;
            }
        }
        // A process whose parent is gone (or never existed) is reaped now.
        let parent_alive = ppid != 0 && self.procs.iter().any(|p| p.pid == ppid && !p.zombie);
        if !parent_alive {
            self.reap(i, false);
        }
        for w in 0..MAX_WAITERS {
            if self.waiters[w].on == Wait::Child(ppid) || self.waiters[w].on == Wait::Child(1) {
                self.wake(w);
            }
        }
        // Its parked calls (there are none: it called) and its alarm go.
        self.procs[i].alarm = 0;
        self.procs[i].pending = 0;
        if parent_alive {
            if let Some(pp) = (0..MAX_PROCS).find(|&x| self.procs[x].pid == ppid) {
                self.signal(pp, SIGCHLD);
            }
        }
        Ok(0)
    }

    /// `EXIT` from forked process `pid`'s keeper with its `KEYS` node in
    /// `K0`: the call's resume key goes into that node's `SPARE` slot and
    /// the node into the forwarder's node → whether it did (the call is
    /// then not answered).
    fn keep_spare(&mut self, pid: u32, with_process: u64) -> bool {
        let Ok(i) = self.proc_of(pid) else {
            return false;
        };
        let kept = self.procs[i].fwd
            && swap(K0, p::SPARE, self.resume, 0).is_ok()
            && fetch(KEEPERS, FWD_NODES + i as u64 / 16, T).is_ok()
            && fetch(T, i as u64 % 16, T).is_ok()
            && swap(T, FWD_SPARE, K0, 0).is_ok();
        self.procs[i].spare = kept;
        self.procs[i].kept = if kept { with_process as u8 & 3 } else { 0 };
        kept
    }

    /// Process `i` is gone for good: its entry, its /proc files, and the
    /// node of its keeper's forwarder (which voids every copy of that key,
    /// so a later process given the pid cannot be named by it). Its spare
    /// keeper goes to the caller (`KEYS` node into `T` → true) when
    /// `to_caller`, else its bank is destroyed (only a bank of this space
    /// bank: any other key could be a domain that never answers).
    fn reap(&mut self, i: usize, to_caller: bool) -> bool {
        let p = self.procs[i];
        if self.proc_pending {
            self.flush_children_of(p.pid);
        }
        let made = !self.procs[i].proc_pending;
        self.procs[i] = NO_PROC;
        self.proc_gone(p.pid, made);
        if !p.fwd
            || fetch(KEEPERS, FWD_NODES + i as u64 / 16, K0).is_err()
            || fetch(K0, i as u64 % 16, T2).is_err()
        {
            return false;
        }
        let spare = p.spare && fetch(T2, FWD_SPARE, T).is_ok();
        let _ = bank::free(BANK, T2);
        if spare && to_caller {
            return true;
        }
        if spare && fetch(T, p::KEEPER_BANK, T).is_ok() && bank::verify(BANK, T) == Ok(true) {
            let _ = bank::destroy(T);
        }
        false
    }

    /// `WAIT4` for the caller `pid`.
    fn wait4(&mut self, pid: u32, which: i64, options: u64) -> Result<Reply, i64> {
        const WNOHANG: u64 = 1;
        self.proc_of(pid)?;
        let matches = |p: &Proc| {
            p.pid != 0
                && p.ppid == pid
                && (which == -1 || which == p.pid as i64 || which == 0 || which < -1)
        };
        let mut any = false;
        for i in 0..MAX_PROCS {
            let p = self.procs[i];
            if !matches(&p) {
                continue;
            }
            any = true;
            if p.zombie {
                let spare = self.reap(i, true);
                let kept = if spare { p.kept as u64 } else { 0 };
                return Ok(Reply::Now(
                    [p.pid as u64, p.status as u64, spare as u64 | kept << 1],
                    0,
                    spare,
                ));
            }
        }
        if !any {
            return Err(ECHILD);
        }
        if options & WNOHANG != 0 {
            return Ok(Reply::Now([0, 0, 0], 0, false));
        }
        self.park(Wait::Child(pid))
    }

    fn read(&mut self, fid: u64, len: u64, out: &mut [u8], at: Option<u64>) -> Result<Reply, i64> {
        let f = self.fid(fid)?;
        let o = self.open[f];
        if o.flags & o::ACCMODE == o::WRONLY || o.flags & o::PATH != 0 {
            return Err(EBADF);
        }
        let len = (len as usize).min(out.len());
        let n = match o.kind {
            Kind::Inode(ino) => {
                let i = *self.fs.inode(ino).ok_or(EBADF)?;
                if i.mode & mode::FMT == mode::DIR {
                    return Err(EISDIR);
                }
                let off = at.unwrap_or(o.off);
                let n = (len as u64).min(i.size.saturating_sub(off)) as usize;
                self.content.read(ino, off, &mut out[..n])?;
                if at.is_none() {
                    self.open[f].off = off + n as u64;
                }
                n
            }
            Kind::Null => 0,
            Kind::Tty => match self.tty.read(&mut out[..len]) {
                Some(n) => n,
                None if o.flags & o::NONBLOCK != 0 => return Err(EAGAIN),
                None => return self.park(Wait::Tty),
            },
            Kind::Zero => {
                out[..len].fill(0);
                len
            }
            Kind::Random => {
                let mut x = now_ns() | 1;
                for b in out[..len].iter_mut() {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    *b = (x >> 24) as u8;
                }
                len
            }
            Kind::PipeRead(n) => {
                if at.is_some() {
                    return Err(ESPIPE);
                }
                let pi = &mut self.pipes[n as usize];
                if pi.len() == 0 {
                    if pi.writers == 0 || len == 0 {
                        0
                    } else if o.flags & o::NONBLOCK != 0 {
                        return Err(EAGAIN);
                    } else {
                        return self.park_read(Wait::Pipe(n), len);
                    }
                } else {
                    let got = pi.take(&mut out[..len]);
                    self.pipe_changed(n);
                    got
                }
            }
            Kind::PipeWrite(_) | Kind::Free => return Err(EBADF),
        };
        Ok(Reply::Now([n as u64, 0, 0], n, false))
    }

    fn write(&mut self, fid: u64, data: &[u8], at: Option<u64>) -> Result<Reply, i64> {
        let f = self.fid(fid)?;
        let o = self.open[f];
        if o.flags & o::ACCMODE == o::RDONLY || o.flags & o::PATH != 0 {
            return Err(EBADF);
        }
        let n = match o.kind {
            Kind::Inode(ino) => {
                let i = *self.fs.inode(ino).ok_or(EBADF)?;
                if i.mode & mode::FMT != mode::REG {
                    return Err(EISDIR);
                }
                let off = match at {
                    Some(a) => a,
                    None if o.flags & o::APPEND != 0 => i.size,
                    None => o.off,
                };
                self.content.write(ino, off, data)?;
                let now = self.time();
                if let Some(m) = self.fs.inode_mut(ino) {
                    m.size = m.size.max(off + data.len() as u64);
                    m.mtime = now;
                }
                if at.is_none() {
                    self.open[f].off = off + data.len() as u64;
                }
                data.len()
            }
            Kind::Null | Kind::Zero | Kind::Random => data.len(),
            Kind::Tty => {
                for c in data.chunks(4096) {
                    Msg::new(CONSOLE, order::console::WRITE).string(c).call();
                }
                data.len()
            }
            Kind::PipeWrite(n) => {
                if at.is_some() {
                    return Err(ESPIPE);
                }
                let pi = &mut self.pipes[n as usize];
                if pi.readers == 0 {
                    return Err(EPIPE);
                }
                // Writes of at most PIPE_BUF bytes are all or nothing.
                if pi.room() == 0 || (data.len() <= PIPE_BUF && pi.room() < data.len()) {
                    if o.flags & o::NONBLOCK != 0 {
                        return Err(EAGAIN);
                    }
                    return self.park(Wait::Pipe(n));
                }
                let put = pi.put(data);
                self.pipe_changed(n);
                put
            }
            Kind::PipeRead(_) | Kind::Free => return Err(EBADF),
        };
        Ok(Reply::Now([n as u64, 0, 0], 0, false))
    }

    fn lseek(&mut self, fid: u64, off: u64, whence: u64) -> Result<u64, i64> {
        let f = self.fid(fid)?;
        let size = match self.open[f].kind {
            Kind::Inode(ino) => self.fs.inode(ino).map_or(0, |i| i.size),
            Kind::PipeRead(_) | Kind::PipeWrite(_) | Kind::Tty => return Err(ESPIPE),
            _ => 0,
        };
        let base = match whence {
            0 => 0,
            1 => self.open[f].off,
            2 => size,
            _ => return Err(EINVAL),
        };
        let new = (base as i64).checked_add(off as i64).ok_or(EINVAL)?;
        if new < 0 {
            return Err(EINVAL);
        }
        self.open[f].off = new as u64;
        Ok(new as u64)
    }

    fn stat_of(&self, kind: Kind) -> Result<[u8; 144], i64> {
        match kind {
            Kind::Inode(ino) => self.fs.stat(ino),
            Kind::PipeRead(n) | Kind::PipeWrite(n) => {
                let mut i = *self.fs.inode(ROOT).ok_or(EIO)?;
                i.mode = mode::FIFO | 0o600;
                i.nlink = 1;
                i.size = 0;
                Ok(fs::stat_bytes(0x1000_0000 + n as u32, &i))
            }
            _ => {
                let rdev = match kind {
                    Kind::Null => 0x103,
                    Kind::Zero => 0x105,
                    Kind::Random => 0x109,
                    _ => 0x500,
                };
                let mut i = *self.fs.inode(ROOT).ok_or(EIO)?;
                i.mode = mode::CHR | 0o666;
                i.nlink = 1;
                i.size = 0;
                i.rdev = rdev;
                Ok(fs::stat_bytes(0x2000_0000 + rdev, &i))
            }
        }
    }

    /// Answers one message.
    fn handle(&mut self, a: &Answer, s: &[u8], out: &mut [u8; 4096]) -> Result<Reply, i64> {
        let w = a.w;
        let now = self.time();
        let r = |v: Result<u64, i64>| Ok(Reply::Now(ret(v), 0, false));
        // (Orders that only look a path up make the waiting directories
        // only if the path goes through `/proc`: `resolve_seeing_proc`.)
        if self.proc_pending && p::NAMES_FILES.contains(&a.code) && !p::LOOKS_UP.contains(&a.code) {
            self.proc_flush();
        }
        match a.code {
            p::OPEN => match self.open_path(w[0], w[1], w[2], s) {
                Ok(v) => Ok(Reply::Now(v, 0, false)),
                Err(e) => r(Err(e)),
            },
            p::CLOSE => r(self.close(w[0])),
            p::READ => self.read(w[0], w[1], out, None),
            p::PREAD => self.read(w[0], w[1], out, Some(w[2])),
            p::WRITE => self.write(w[0], s, None),
            p::PWRITE => self.write(w[0], s, Some(w[1])),
            p::LSEEK => r(self.lseek(w[0], w[1], w[2])),
            p::FSTAT => {
                let f = self.fid(w[0])?;
                let st = self.stat_of(self.open[f].kind)?;
                out[..144].copy_from_slice(&st);
                Ok(Reply::Now([0, 0, 0], 144, false))
            }
            p::STAT => {
                let kind = if s.is_empty() && w[1] & at::EMPTY_PATH != 0 {
                    self.open[self.fid(w[0])?].kind
                } else {
                    let dir = self.base(w[0])?;
                    Kind::Inode(self.resolve_seeing_proc(
                        dir,
                        s,
                        w[1] & at::SYMLINK_NOFOLLOW == 0,
                    )?)
                };
                let st = self.stat_of(kind)?;
                out[..144].copy_from_slice(&st);
                Ok(Reply::Now([0, 0, 0], 144, false))
            }
            p::GETDENTS => {
                let f = self.fid(w[0])?;
                let ino = self.inode_of(f).ok_or(ENOTDIR)?;
                let len = (w[1] as usize).min(out.len());
                let (n, next) = self.fs.getdents(ino, self.open[f].off, &mut out[..len])?;
                self.open[f].off = next;
                Ok(Reply::Now([n as u64, 0, 0], n, false))
            }
            p::MKDIR => {
                let par = self.fs.parent(self.base(w[0])?, s)?;
                self.fs
                    .create(par.dir, par.name, mode::DIR | (w[1] as u32 & 0o7777), now)?;
                r(Ok(0))
            }
            p::UNLINK => {
                let par = self.fs.parent(self.base(w[0])?, s)?;
                if w[1] & at::REMOVEDIR != 0 {
                    self.fs.rmdir(par.dir, par.name, now)?;
                } else {
                    let (ino, gone) = self.fs.unlink(par.dir, par.name, now)?;
                    if gone {
                        self.maybe_free(ino);
                    }
                }
                r(Ok(0))
            }
            p::RENAME | p::LINK => {
                let z = s.iter().position(|&b| b == 0).ok_or(EINVAL)?;
                let (from, to) = (&s[..z], &s[z + 1..]);
                let p1 = self.fs.parent(self.base(w[0])?, from)?;
                let p2 = self.fs.parent(self.base(w[1])?, to)?;
                if a.code == p::RENAME {
                    if w[2] & 1 != 0 && self.fs.lookup(p2.dir, p2.name).is_some() {
                        return Err(EEXIST);
                    }
                    if let Some((ino, true)) =
                        self.fs.rename(p1.dir, p1.name, p2.dir, p2.name, now)?
                    {
                        self.maybe_free(ino);
                    }
                } else {
                    let follow = w[2] & at::SYMLINK_FOLLOW != 0;
                    let ino = self.fs.resolve(self.base(w[0])?, from, follow)?;
                    self.fs.link(p2.dir, p2.name, ino, now)?;
                }
                r(Ok(0))
            }
            p::SYMLINK => {
                let z = s.iter().position(|&b| b == 0).ok_or(EINVAL)?;
                let par = self.fs.parent(self.base(w[0])?, &s[z + 1..])?;
                self.fs.symlink(par.dir, par.name, &s[..z], now)?;
                r(Ok(0))
            }
            p::READLINK => {
                let ino = self.resolve_seeing_proc(self.base(w[0])?, s, false)?;
                let t = self.fs.link_target(ino).ok_or(EINVAL)?;
                out[..t.len()].copy_from_slice(t);
                Ok(Reply::Now([t.len() as u64, 0, 0], t.len(), false))
            }
            p::CHMOD | p::UTIMENS => {
                let ino = if s.is_empty() {
                    let f = self.fid(w[0])?;
                    self.inode_of(f).ok_or(EPERM)?
                } else {
                    self.fs.resolve(self.base(w[0])?, s, true)?
                };
                let i = self.fs.inode_mut(ino).ok_or(ENOENT)?;
                if a.code == p::CHMOD {
                    i.mode = (i.mode & mode::FMT) | (w[1] as u32 & 0o7777);
                } else {
                    let pick = |v: u64, old: u64| match v {
                        u64::MAX => now,
                        x if x == u64::MAX - 1 => old,
                        x => x,
                    };
                    i.atime = pick(w[1], i.atime);
                    i.mtime = pick(w[2], i.mtime);
                }
                i.ctime = now;
                r(Ok(0))
            }
            p::TRUNCATE => {
                let ino = if s.is_empty() {
                    let f = self.fid(w[0])?;
                    if self.open[f].flags & o::ACCMODE == o::RDONLY {
                        return Err(EINVAL);
                    }
                    self.inode_of(f).ok_or(EINVAL)?
                } else {
                    self.fs.resolve(self.base(w[0])?, s, true)?
                };
                let i = *self.fs.inode(ino).ok_or(ENOENT)?;
                if i.mode & mode::FMT == mode::DIR {
                    return Err(EISDIR);
                }
                if i.mode & mode::FMT != mode::REG {
                    return Err(EINVAL);
                }
                self.content.truncate(ino, i.size, w[1])?;
                if let Some(m) = self.fs.inode_mut(ino) {
                    m.size = w[1];
                    m.mtime = now;
                }
                r(Ok(0))
            }
            p::ACCESS => {
                let ino = self.resolve_seeing_proc(self.base(w[0])?, s, true)?;
                let i = self.fs.inode(ino).ok_or(ENOENT)?;
                // Everyone is root: X needs some execute bit.
                if w[1] & 1 != 0 && i.mode & 0o111 == 0 && i.mode & mode::FMT != mode::DIR {
                    return Err(EACCES);
                }
                r(Ok(0))
            }
            p::GETCWD => {
                let dir = self.base(w[0])?;
                let n = self.fs.path_of(dir, &mut out[..4095])?;
                out[n] = 0;
                Ok(Reply::Now([n as u64 + 1, 0, 0], n + 1, false))
            }
            p::PIPE => {
                let n = (0..MAX_PIPES)
                    .find(|&i| !self.pipes[i].used)
                    .ok_or(ENFILE)?;
                let rd =
                    self.new_fid(Kind::PipeRead(n as u16), o::RDONLY | (w[0] & o::NONBLOCK))?;
                let wr = match self
                    .new_fid(Kind::PipeWrite(n as u16), o::WRONLY | (w[0] & o::NONBLOCK))
                {
                    Ok(f) => f,
                    Err(e) => {
                        self.open[rd as usize] = FREE;
                        return Err(e);
                    }
                };
                self.pipes[n] = NO_PIPE;
                self.pipes[n].used = true;
                self.pipes[n].readers = 1;
                self.pipes[n].writers = 1;
                Ok(Reply::Now([0, rd, wr], 0, false))
            }
            p::DUP => {
                let f = self.fid(w[0])?;
                self.open[f].refs += 1;
                match self.open[f].kind {
                    Kind::PipeRead(n) => self.pipes[n as usize].readers += 1,
                    Kind::PipeWrite(n) => self.pipes[n as usize].writers += 1,
                    _ => {}
                }
                r(Ok(0))
            }
            p::FLAGS => {
                let f = self.fid(w[0])?;
                if w[1] == 0 {
                    r(Ok(self.open[f].flags))
                } else {
                    let keep = o::APPEND | o::NONBLOCK;
                    let fl = &mut self.open[f].flags;
                    *fl = (*fl & !keep) | (w[2] & keep);
                    r(Ok(0))
                }
            }
            p::POLL => {
                let f = self.fid(w[0])?;
                const IN: u64 = 1;
                const OUT: u64 = 4;
                const ERR: u64 = 8;
                const HUP: u64 = 0x10;
                let ev = match self.open[f].kind {
                    Kind::PipeRead(n) => {
                        let pi = &self.pipes[n as usize];
                        (if pi.len() > 0 { IN } else { 0 })
                            | (if pi.writers == 0 { HUP } else { 0 })
                    }
                    Kind::PipeWrite(n) => {
                        let pi = &self.pipes[n as usize];
                        if pi.readers == 0 {
                            ERR
                        } else if pi.room() > 0 {
                            OUT
                        } else {
                            0
                        }
                    }
                    Kind::Tty => OUT | if self.tty.readable() { IN } else { 0 },
                    _ => IN | OUT,
                };
                r(Ok(ev))
            }
            p::INPUT => {
                let mut sigs = [0u64; 8];
                let mut ns = 0;
                let woke = self.tty.input(
                    s,
                    &mut |e| {
                        Msg::new(CONSOLE, order::console::WRITE).string(e).call();
                    },
                    &mut |sig| {
                        if ns < sigs.len() {
                            sigs[ns] = sig;
                            ns += 1;
                        }
                    },
                );
                let fg = self.tty.fg;
                for &sig in &sigs[..ns] {
                    for i in 0..MAX_PROCS {
                        if self.procs[i].pid != 0 && self.procs[i].pgid == fg {
                            self.signal(i, sig);
                        }
                    }
                }
                if woke || ns > 0 {
                    for w in 0..MAX_WAITERS {
                        if self.waiters[w].on == Wait::Tty {
                            self.wake(w);
                        }
                    }
                }
                r(Ok(0))
            }
            p::TTY => {
                let f = self.fid(w[0])?;
                if self.open[f].kind != Kind::Tty {
                    return Err(ENOTTY);
                }
                use stet_unix::sys::ioctl as io;
                match w[1] {
                    io::TCGETS => {
                        out[..36].copy_from_slice(&self.tty.termios.to_bytes());
                        Ok(Reply::Now([0, 0, 0], 36, false))
                    }
                    io::TCSETS | io::TCSETSW | io::TCSETSF => {
                        let b: [u8; 36] =
                            s.get(..36).and_then(|b| b.try_into().ok()).ok_or(EFAULT)?;
                        self.tty.set(stet_unix::tty::Termios::from_bytes(&b));
                        for x in 0..MAX_WAITERS {
                            if self.waiters[x].on == Wait::Tty {
                                self.wake(x);
                            }
                        }
                        r(Ok(0))
                    }
                    io::TIOCGPGRP => r(Ok(self.tty.fg as u64)),
                    io::TIOCSPGRP => {
                        self.tty.fg = w[2] as u32;
                        r(Ok(0))
                    }
                    io::TIOCGWINSZ => r(Ok(24 << 16 | 80)),
                    io::TIOCSWINSZ => r(Ok(0)),
                    io::FIONREAD => r(Ok(self.tty.readable() as u64)),
                    _ => Err(EINVAL),
                }
            }
            p::ISATTY => {
                let f = self.fid(w[0])?;
                r(if self.open[f].kind == Kind::Tty {
                    Ok(0)
                } else {
                    Err(ENOTTY)
                })
            }
            p::TICK => {
                self.tick();
                let next = self.next_tick();
                if next == 0 && w[0] == 1 {
                    self.park(Wait::Ticker)
                } else {
                    r(Ok(next))
                }
            }
            p::FORK
            | p::EXIT
            | p::WAIT4
            | p::GETPPID
            | p::HELLO
            | p::KILL
            | p::SETPGID
            | p::GETPGID
            | p::SETSID
            | p::SLEEP
            | p::ALARM
            | p::PAUSE
            | p::FUTEX_WAIT
            | p::FUTEX_WAKE
            | p::PROCINFO
                if a.source as u64 != source::FORWARDED =>
            {
                Err(EPERM)
            }
            p::HELLO => r(self.hello(a.label)),
            p::KILL => r(self.kill(a.label, w[0] as i64, w[1])),
            p::SLEEP => {
                if w[0] <= now_ns() {
                    r(Ok(0))
                } else {
                    let parked = self.park(Wait::Sleep(w[0]));
                    self.kick();
                    parked
                }
            }
            p::PAUSE => self.park(Wait::Pause),
            p::MAP_PAGE => self.map_page(w[0], w[1]),
            p::MEMFD => r(self.memfd(w[0])),
            p::ENOSYS => {
                for c in s.chunks_exact(6) {
                    let n = u16::from_le_bytes([c[0], c[1]]) as usize;
                    let v = u32::from_le_bytes([c[2], c[3], c[4], c[5]]);
                    let i = n.min(self.enosys.len() - 1);
                    self.enosys[i] = self.enosys[i].saturating_add(v);
                }
                r(Ok(0))
            }
            p::SHARE | p::UNSHARE => {
                let mut n = 0;
                let mut counted = 0;
                for c in s.chunks_exact(4).take(out.len()) {
                    let page = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                    let b = if a.code == p::SHARE {
                        self.shares.add(page).is_some()
                    } else if w[0] == 1 {
                        // Only a question: is the caller its only holder?
                        self.shares.holders(page) == 1
                    } else {
                        self.shares.release(page)
                    };
                    out[n] = b as u8;
                    counted += b as u64;
                    n += 1;
                }
                Ok(Reply::Now([counted, 0, 0], n, false))
            }
            p::STATUS => {
                let (procs, total, free) = self.sysinfo();
                let mut n = 0;
                for (nr, &v) in self.enosys.iter().enumerate().filter(|(_, &v)| v > 0) {
                    out[n..n + 2].copy_from_slice(&(nr as u16).to_le_bytes());
                    out[n + 2..n + 6].copy_from_slice(&v.to_le_bytes());
                    n += 6;
                    if n + 6 > out.len() {
                        break;
                    }
                }
                Ok(Reply::Now([procs, total, free], n, false))
            }
            p::SYSINFO => {
                let (procs, total, free) = self.sysinfo();
                Ok(Reply::Now([procs, total, free], 0, false))
            }
            p::FUTEX_WAIT => {
                let deadline = s.get(..8).map_or(u64::MAX, |d| {
                    u64::from_le_bytes(d.try_into().unwrap_or_default())
                });
                self.futex_wait(w[0], w[1], w[2], deadline)
            }
            p::FUTEX_WAKE => r(self.futex_wake(w[0], w[1], w[2])),
            p::PROCINFO => {
                let z = s.iter().position(|&b| b == 0).ok_or(EINVAL)?;
                self.proc_of(a.label)?;
                self.proc_exec(a.label, w[0], &s[..z], &s[z + 1..]);
                r(Ok(0))
            }
            p::ALARM => {
                let i = self.proc_of(a.label)?;
                let now = now_ns();
                let old = self.procs[i].alarm;
                self.procs[i].alarm = if w[0] == 0 { 0 } else { now + w[0] };
                self.kick();
                r(Ok(if old == 0 { 0 } else { old.saturating_sub(now) }))
            }
            p::SETPGID => {
                let me = self.proc_of(a.label)?;
                let target = if w[0] == 0 { a.label } else { w[0] as u32 };
                let t = (0..MAX_PROCS)
                    .find(|&i| self.procs[i].pid == target && !self.procs[i].zombie)
                    .ok_or(ESRCH)?;
                if target != a.label && self.procs[t].ppid != a.label {
                    return Err(ESRCH);
                }
                if self.procs[t].sid != self.procs[me].sid {
                    return Err(EPERM);
                }
                self.procs[t].pgid = if w[1] == 0 { target } else { w[1] as u32 };
                r(Ok(0))
            }
            p::GETPGID => {
                let target = if w[0] == 0 { a.label } else { w[0] as u32 };
                if target == a.label {
                    self.proc_of(a.label)?;
                }
                let t = (0..MAX_PROCS)
                    .find(|&i| self.procs[i].pid == target)
                    .ok_or(ESRCH)?;
                r(Ok(if w[1] == 1 {
                    self.procs[t].sid
                } else {
                    self.procs[t].pgid
                } as u64))
            }
            p::SETSID => {
                let me = self.proc_of(a.label)?;
                let pid = a.label;
                if self
                    .procs
                    .iter()
                    .any(|p| p.pid != 0 && p.pgid == pid && p.pid != pid)
                {
                    return Err(EPERM);
                }
                self.procs[me].sid = pid;
                self.procs[me].pgid = pid;
                r(Ok(pid as u64))
            }
            p::FORK => self.fork(a.label, s),
            p::EXIT => {
                // A forked keeper sends its `KEYS` node and waits as a
                // spare for its parent's next fork (its process's memory
                // is back, or kept whole under the keeper's bank: `w1`);
                // `exit` destroys it at once if nobody will wait.
                let kept = self.keep_spare(a.label, w[1]);
                let done = self.exit(a.label, w[0] as u32);
                if kept {
                    return Ok(Reply::Kept);
                }
                r(done)
            }
            p::WAIT4 => self.wait4(a.label, w[0] as i64, w[1]),
            p::GETPPID => {
                let i = self.proc_of(a.label)?;
                r(Ok(self.procs[i].ppid as u64))
            }
            p::EXEC => {
                let ino = self.resolve_seeing_proc(self.base(w[0])?, s, true)?;
                let i = *self.fs.inode(ino).ok_or(ENOENT)?;
                if i.mode & mode::FMT == mode::DIR {
                    return Err(EACCES);
                }
                if i.mode & mode::FMT != mode::REG || i.mode & 0o111 == 0 {
                    return Err(EACCES);
                }
                self.content.segment(ino, T)?;
                Ok(Reply::Now([0, i.size, ino as u64], 0, true))
            }
            _ => Err(ENOSYS),
        }
    }
}

fn main(epoch: u64) -> i64 {
    let mut fs = Fs::new(0);
    let mut content = Content::new();
    let mut open = [FREE; MAX_OPEN];
    let mut pipes = [NO_PIPE; MAX_PIPES];
    let mut tty = Tty::new();
    let mut shares = stet_unix::share::Shares::new();
    let mut infos = [procfs::NO_INFO; procfs::MAX_INFO];
    // The terminal's first foreground group: the first process's.
    tty.fg = 1;
    let mut d = Unixd {
        fs: &mut fs,
        content: &mut content,
        open: &mut open,
        pipes: &mut pipes,
        waiters: [NO_WAITER; MAX_WAITERS],
        procs: [NO_PROC; MAX_PROCS],
        next_pid: 2,
        caller: 0,
        intr: 0,
        resume: RESUME,
        keeper_nodes: [false; MAX_PROCS / 16],
        fwd_nodes: [false; MAX_PROCS / 16],
        tty: &mut tty,
        epoch_ns: epoch * 1_000_000_000,
        gen: [(0, procfs::Gen::None); procfs::MAX_GEN],
        enosys: [0; 512],
        shares: &mut shares,
        infos: &mut infos,
        proc_pending: false,
    };
    match boot::build(&mut d) {
        Ok(s) => println!(
            "unixd: {} files, {} directories, {} links from the archive; {} KiB of file data",
            s.files,
            s.dirs,
            s.links,
            s.bytes / 1024
        ),
        Err(e) => println!("unixd: the initial file system is incomplete: {e}"),
    }
    d.proc_boot();
    // The node of the keepers' start-key nodes (the image leaves the slot
    // void: without it no keeper could say where it is, and a signal
    // reached a running process only with its next call's answer).
    if bank::alloc_node(BANK, KEEPERS).is_err() {
        println!("unixd: no node for the keepers' start keys");
    }
    // Published for the native shell's `unix` command, when slot 3 is a
    // data store publisher key (`make run`); otherwise the call fails and
    // nothing is published.
    let mut name = [0u8; 8];
    name[..p::STORE_NAME.len()].copy_from_slice(p::STORE_NAME);
    Msg::new(STORE, order_store::PUT)
        .string(&name[..p::STORE_NAME.len() + 1])
        .keys([SELF, 0, 0, 0])
        .call();
    let mut inbuf = [0u8; 4096];
    let mut out = [0u8; 4096];
    d.resume = RESUME;
    let mut a = wait([K0, 0, 0, 0], d.resume, &mut inbuf);
    loop {
        let n = a.len.min(inbuf.len());
        let s = &inbuf[..n];
        let forwarded = a.source as u64 == source::FORWARDED;
        d.caller = if forwarded { a.label } else { 0 };
        d.intr = a.w[p::INTR_WORD];
        let reply = match d.handle(&a, s, &mut out) {
            Ok(r) => r,
            Err(e) => Reply::Now(ret(Err(e)), 0, false),
        };
        a = match reply {
            Reply::Now(w, len, key) => Msg::new(d.resume, code::OK)
                .words([
                    w[0],
                    w[1],
                    w[2],
                    if forwarded {
                        d.take_pending(a.label)
                    } else {
                        0
                    },
                ])
                .string(&out[..len])
                .keys([if key { T } else { 0 }, 0, 0, 0])
                .recv([K0, 0, 0, 0])
                .resume_into(d.resume)
                .ret_into(&mut inbuf),
            Reply::Parked | Reply::Kept => wait([K0, 0, 0, 0], d.resume, &mut inbuf),
        };
    }
}

stet_rt::main!(main);
