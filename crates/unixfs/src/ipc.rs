//! System V IPC's objects, as unixd keeps them (man 7 sysvipc): shared
//! memory segments, semaphore sets ([`sem`]) and message queues ([`msg`]),
//! each kind a table that grows from the heap, and the rules of their
//! system calls; and POSIX message queues ([`mq`]). unixd adds what needs its other tables: a segment's
//! bytes are a nameless file (its inode and a fid of unixd's open-file
//! table live here), a call that must wait is parked there with a ticket
//! this module hands out ([`Ipc::ticket`]), and when a set or a queue
//! changes the waits that can now go on are found here and answered there.
//!
//! Ids are Linux's: `seq * 32768 + index`, the sequence of a table slot
//! counting up each time the slot is used again, so a removed object's id
//! stays invalid (`EINVAL`) for a long while. Nothing is bounded by a
//! system-wide constant but Linux's own limits (`SEMMNI`, `SEMMNS`,
//! `MSGMNI`, `shmmni`, as `/proc/sys/kernel` and `IPC_INFO` report them):
//! a table grows as long as the heap gives room (`try_reserve`:
//! `ENOMEM`/`ENOSPC`, never a panic), and each user (by creator) may
//! hold at most [`Caps`].
//! The limits of one object are Linux's (`SEMMSL`, `SEMOPM`, `SEMVMX`,
//! `MSGMAX`, `MSGMNB`, `SHMMIN`, `SHMMAX`).

pub mod mq;
pub mod msg;
pub mod sem;

use alloc::vec::Vec;
use stet_unix::cred::Cred;
use stet_unix::sys::errno::*;
use stet_unix::sysv::{self, limit, Perm, IPC_CREAT, IPC_EXCL, IPC_PRIVATE};

pub use msg::Queue;
pub use sem::SemSet;

/// What one user (an object's creator) may hold of each kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// Objects of each kind.
    pub objects: usize,
    /// Semaphores in all its sets (a full set of `SEMMSL`).
    pub sems: usize,
    /// Bytes its queues hold, each message counted with
    /// [`msg::OVERHEAD`] more for its header: a full queue is `EAGAIN`
    /// (or a wait) when this is reached.
    pub msg_bytes: u64,
    /// The sizes of its segments in all (their pages are files' pages,
    /// from the file space, made when first touched).
    pub shm_bytes: u64,
}

impl Caps {
    /// As many objects and semaphores as the system-wide limits that
    /// `/proc/sys/kernel/{sem,msgmni,shmmni}` and `IPC_INFO` report (so
    /// one user, as on Linux, may reach them; past that the heap bounds
    /// them, `ENOMEM`), 1 MiB of messages, and no bound of segment sizes
    /// but the file space's (unixd sets it).
    pub const DEFAULT: Caps = Caps {
        objects: limit::IPCMNI as usize,
        sems: limit::SEMMNS as usize,
        msg_bytes: 1 << 20,
        shm_bytes: u64::MAX,
    };
}

/// One object: its permissions and what it is.
#[derive(Clone, Debug)]
pub struct Entry<T> {
    /// Key, owner, creator, mode, sequence.
    pub perm: Perm,
    /// The object.
    pub obj: T,
}

/// A table of one kind of object, by index.
#[derive(Clone, Debug)]
pub struct Table<T> {
    slots: Vec<Option<Entry<T>>>,
    /// Each slot's sequence number for its next object.
    seqs: Vec<u16>,
    /// Each slot's key (`IPC_PRIVATE` when empty or no longer found by
    /// key): a look-up by key reads 4 bytes a slot, not the entries.
    keys: Vec<i32>,
    /// Objects in the table.
    used: usize,
    /// No slot below this is empty (the lowest index is used first).
    free: usize,
}

impl<T> Default for Table<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Table<T> {
    /// An empty table.
    pub const fn new() -> Table<T> {
        Table {
            slots: Vec::new(),
            seqs: Vec::new(),
            keys: Vec::new(),
            used: 0,
            free: 0,
        }
    }

    /// The index of object `id` (`EINVAL`: no such object).
    pub fn index(&self, id: i64) -> Result<usize, i64> {
        let (seq, i) = sysv::split_id(id).ok_or(EINVAL)?;
        match self.slots.get(i as usize) {
            Some(Some(e)) if e.perm.seq == seq => Ok(i as usize),
            _ => Err(EINVAL),
        }
    }

    /// Object `id`.
    pub fn get(&self, id: i64) -> Result<&Entry<T>, i64> {
        let i = self.index(id)?;
        self.slots[i].as_ref().ok_or(EINVAL)
    }

    /// Object `id`, to change.
    pub fn get_mut(&mut self, id: i64) -> Result<&mut Entry<T>, i64> {
        let i = self.index(id)?;
        self.slots[i].as_mut().ok_or(EINVAL)
    }

    /// The object in slot `i` (`*_STAT`'s index) and its id. As on
    /// Linux (`ipcid_to_idx`), the index is the low bits of the `int`
    /// the caller gave, so an object's id names its own slot too.
    pub fn at(&self, i: i64) -> Result<(i32, &Entry<T>), i64> {
        let i = (i as u32 % limit::IPCMNI) as usize;
        let e = self.slots.get(i).and_then(Option::as_ref).ok_or(EINVAL)?;
        Ok((sysv::make_id(e.perm.seq, i as u32), e))
    }

    /// The id of the object with `key` (never `IPC_PRIVATE`'s).
    pub fn find_key(&self, key: i32) -> Option<i32> {
        if key == IPC_PRIVATE {
            return None;
        }
        let i = self.keys.iter().position(|&k| k == key)?;
        self.slots[i]
            .as_ref()
            .map(|e| sysv::make_id(e.perm.seq, i as u32))
    }

    /// Object `id` is no longer found by its key (a removed segment
    /// still attached).
    pub fn forget_key(&mut self, id: i64) {
        if let Ok(i) = self.index(id) {
            self.keys[i] = IPC_PRIVATE;
        }
    }

    /// Every object and its id.
    pub fn iter(&self) -> impl Iterator<Item = (i32, &Entry<T>)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, e)| e.as_ref().map(|e| (sysv::make_id(e.perm.seq, i as u32), e)))
    }

    /// Every object, to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Entry<T>> + '_ {
        self.slots.iter_mut().flatten()
    }

    /// How many objects there are.
    pub fn in_use(&self) -> usize {
        self.used
    }

    /// The highest index in use, 0 when none (`IPC_INFO`'s answer).
    pub fn max_index(&self) -> u64 {
        self.slots.iter().rposition(Option::is_some).unwrap_or(0) as u64
    }

    /// Enters `obj` with `perm` (its `seq` is the slot's) → its id.
    /// `ENOSPC` past `IPCMNI` slots, `ENOMEM` when the heap has no room.
    pub fn insert(&mut self, mut perm: Perm, obj: T) -> Result<i32, i64> {
        let from = self.free.min(self.slots.len());
        let i = match self.slots[from..].iter().position(Option::is_none) {
            Some(i) => from + i,
            None => {
                if self.slots.len() >= limit::IPCMNI as usize {
                    return Err(ENOSPC);
                }
                self.slots.try_reserve(1).map_err(|_| ENOMEM)?;
                self.seqs.try_reserve(1).map_err(|_| ENOMEM)?;
                self.keys.try_reserve(1).map_err(|_| ENOMEM)?;
                self.slots.push(None);
                self.seqs.push(0);
                self.keys.push(IPC_PRIVATE);
                self.slots.len() - 1
            }
        };
        perm.seq = self.seqs[i];
        self.keys[i] = perm.key;
        self.slots[i] = Some(Entry { perm, obj });
        self.used += 1;
        self.free = i + 1;
        Ok(sysv::make_id(perm.seq, i as u32))
    }

    /// Removes object `id` → it. Its slot's next object has a new sequence.
    pub fn remove(&mut self, id: i64) -> Option<Entry<T>> {
        let i = self.index(id).ok()?;
        // (`SEQ_MAX` is `u16::MAX`: every sequence makes a positive id.)
        self.seqs[i] = self.seqs[i].wrapping_add(1);
        self.keys[i] = IPC_PRIVATE;
        self.used -= 1;
        self.free = self.free.min(i);
        self.slots[i].take()
    }
}

/// A shared memory segment. Its bytes are a nameless regular file of
/// unixd (`ino`), which the table holds open (`fid`) so that it lasts
/// while nothing is attached; each attach is another fid of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shm {
    /// `shm_segsz`: the size asked for (pages are whole pages of it).
    pub segsz: u64,
    /// The file's inode.
    pub ino: u32,
    /// The table's own fid of the file.
    pub fid: u32,
    /// Last attach, detach, change (s since 1970).
    pub atime: u64,
    #[allow(missing_docs)]
    pub dtime: u64,
    #[allow(missing_docs)]
    pub ctime: u64,
    /// Creator's pid, last attacher's or detacher's.
    pub cpid: u32,
    #[allow(missing_docs)]
    pub lpid: u32,
}

/// What a `*get` found for a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// The object with this id, which the caller may use.
    Existing(i32),
    /// None: make one (the caller may).
    Create,
}

/// What a parked call waits for (by ticket: unixd's parked call).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Wants {
    /// `semop` on set `id`: its operations, and the one it waits on.
    Sem {
        /// The set.
        id: i32,
        /// The operations.
        sops: Vec<sysv::SemBuf>,
        /// The operation that cannot be done yet (`GETNCNT`, `GETZCNT`).
        blocking: usize,
    },
    /// `msgrcv` from queue `id`.
    Recv {
        /// The queue.
        id: i32,
        /// `msgtyp`.
        typ: i64,
        /// `msgflg`.
        flags: u32,
        /// The buffer's text length.
        max: u64,
    },
    /// `msgsnd` to queue `id`, full.
    Send {
        /// The queue.
        id: i32,
    },
    /// `mq_timedreceive` from the POSIX queue of file `ino`.
    MqRecv {
        /// The queue's file.
        ino: u32,
    },
    /// `mq_timedsend` to the POSIX queue of file `ino`, full.
    MqSend {
        /// The queue's file.
        ino: u32,
    },
}

/// A parked call of process `pid`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pending {
    /// unixd's name for the wait.
    pub ticket: u32,
    /// The caller.
    pub pid: u32,
    /// What it waits for.
    pub wants: Wants,
}

/// Whether a parked call can be answered with its outcome (`Answer`), or
/// only told to ask again (`Retry`: a thread whose keeper went on, which
/// will send the call again), or is gone (`Gone`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Live {
    #[allow(missing_docs)]
    Answer,
    #[allow(missing_docs)]
    Retry,
    #[allow(missing_docs)]
    Gone,
}

/// Bytes one message cannot carry: what a thread of process `pid` stages
/// for its next call, or the rest of what its last call received.
#[derive(Clone, Debug)]
struct Buf {
    pid: u32,
    thread: u16,
    rest: bool,
    data: Vec<u8>,
}

/// The most bytes staged for one call (`SETALL` of `SEMMSL` values).
pub const MAX_STAGED: usize = 2 * limit::SEMMSL as usize;

/// Every System V IPC object of the system.
#[derive(Clone, Debug)]
pub struct Ipc {
    /// Shared memory segments.
    pub shm: Table<Shm>,
    /// Semaphore sets.
    pub sem: Table<SemSet>,
    /// Message queues.
    pub msg: Table<Queue>,
    /// `SEM_UNDO` adjustments, by process and set.
    pub undo: Vec<sem::Undo>,
    /// POSIX message queues, by file.
    pub mq: Vec<mq::MqQueue>,
    /// Parked calls, in the order they began.
    pub pending: Vec<Pending>,
    /// What each user may hold.
    pub caps: Caps,
    /// Semaphores in all sets.
    pub sem_count: usize,
    /// `shmmax`, `shmall`, `shmmni` (root sets them through `/proc/sys`).
    pub shm_limits: sysv::ShmLimits,
    next_ticket: u32,
    bufs: Vec<Buf>,
}

impl Default for Ipc {
    fn default() -> Self {
        Self::new(Caps::DEFAULT)
    }
}

impl Ipc {
    /// No objects.
    pub const fn new(caps: Caps) -> Ipc {
        Ipc {
            shm: Table::new(),
            sem: Table::new(),
            msg: Table::new(),
            undo: Vec::new(),
            mq: Vec::new(),
            pending: Vec::new(),
            caps,
            sem_count: 0,
            shm_limits: sysv::ShmLimits::LINUX,
            next_ticket: 0,
            bufs: Vec::new(),
        }
    }

    /// A new ticket for a parked call (never 0).
    pub fn ticket(&mut self) -> u32 {
        self.next_ticket = self.next_ticket.wrapping_add(1).max(1);
        self.next_ticket
    }

    /// Records a parked call (`ENOMEM`: no room).
    pub fn wait(&mut self, ticket: u32, pid: u32, wants: Wants) -> Result<(), i64> {
        self.pending.try_reserve(1).map_err(|_| ENOMEM)?;
        self.pending.push(Pending { ticket, pid, wants });
        Ok(())
    }

    /// Forgets the parked calls `live` says are gone (a signal, a
    /// timeout, or the process's end answered them).
    pub fn prune(&mut self, live: impl Fn(u32) -> Live) {
        self.pending.retain(|p| live(p.ticket) != Live::Gone);
    }

    /// Forgets parked call `ticket`.
    pub fn forget(&mut self, ticket: u32) {
        self.pending.retain(|p| p.ticket != ticket);
    }

    /// The parked calls on object `id` of the kind `on` says: taken (the
    /// object is gone: each answers `EIDRM`).
    pub fn take_waits(&mut self, on: impl Fn(&Wants) -> bool) -> Vec<u32> {
        let mut out = Vec::new();
        self.pending.retain(|p| {
            if on(&p.wants) && out.try_reserve(1).is_ok() {
                out.push(p.ticket);
                false
            } else {
                true
            }
        });
        out
    }

    /// Process `pid` has ended: its `SEM_UNDO` adjustments are applied
    /// (each value kept within 0 and `SEMVMX`) → the sets that changed,
    /// whose waits may go on now. Its staged bytes and waits go.
    pub fn exit(&mut self, pid: u32, now: u64) -> Vec<i32> {
        self.mq_exit(pid);
        self.bufs.retain(|b| b.pid != pid);
        self.pending.retain(|p| p.pid != pid);
        let mut changed = Vec::new();
        let mut i = 0;
        while i < self.undo.len() {
            if self.undo[i].pid != pid {
                i += 1;
                continue;
            }
            let u = self.undo.swap_remove(i);
            if let Ok(e) = self.sem.get_mut(u.semid as i64) {
                if e.obj.undo(&u.adj, pid, now) && changed.try_reserve(1).is_ok() {
                    changed.push(u.semid);
                }
            }
        }
        changed
    }

    // Bytes past one message.

    fn buf(&mut self, pid: u32, thread: u16, rest: bool) -> Option<&mut Buf> {
        self.bufs
            .iter_mut()
            .find(|b| b.pid == pid && b.thread == thread && b.rest == rest)
    }

    /// Stages `data` at byte `at` of thread `thread` of `pid`'s next call
    /// (`at` 0 starts again; any other must be where the last ended:
    /// `EINVAL`; more than [`MAX_STAGED`]: `E2BIG`).
    pub fn stage(&mut self, pid: u32, thread: u16, at: u64, data: &[u8]) -> Result<(), i64> {
        if self.buf(pid, thread, false).is_none() {
            self.bufs.try_reserve(1).map_err(|_| ENOMEM)?;
            self.bufs.push(Buf {
                pid,
                thread,
                rest: false,
                data: Vec::new(),
            });
        }
        let b = self.buf(pid, thread, false).ok_or(ENOMEM)?;
        if at == 0 {
            b.data.clear();
        }
        if at != b.data.len() as u64 {
            return Err(EINVAL);
        }
        if b.data.len() + data.len() > MAX_STAGED {
            return Err(E2BIG);
        }
        b.data.try_reserve(data.len()).map_err(|_| ENOMEM)?;
        b.data.extend_from_slice(data);
        Ok(())
    }

    /// The bytes staged for this call, with `tail` after them (taken).
    pub fn staged(&mut self, pid: u32, thread: u16, tail: &[u8]) -> Result<Vec<u8>, i64> {
        let i = self
            .bufs
            .iter()
            .position(|b| b.pid == pid && b.thread == thread && !b.rest);
        let mut v = match i {
            Some(i) => self.bufs.swap_remove(i).data,
            None => Vec::new(),
        };
        v.try_reserve(tail.len()).map_err(|_| ENOMEM)?;
        v.extend_from_slice(tail);
        Ok(v)
    }

    /// Keeps `data` for thread `thread` of `pid` to fetch ([`Ipc::rest`]).
    pub fn keep_rest(&mut self, pid: u32, thread: u16, data: Vec<u8>) -> Result<(), i64> {
        self.bufs
            .retain(|b| !(b.pid == pid && b.thread == thread && b.rest));
        self.bufs.try_reserve(1).map_err(|_| ENOMEM)?;
        self.bufs.push(Buf {
            pid,
            thread,
            rest: true,
            data,
        });
        Ok(())
    }

    /// The kept bytes from `at` on, at most `max` into `out` → how many.
    /// The last piece lets them go.
    pub fn rest(&mut self, pid: u32, thread: u16, at: u64, out: &mut [u8]) -> usize {
        let Some(i) = self
            .bufs
            .iter()
            .position(|b| b.pid == pid && b.thread == thread && b.rest)
        else {
            return 0;
        };
        let d = &self.bufs[i].data;
        let from = (at as usize).min(d.len());
        let n = (d.len() - from).min(out.len());
        out[..n].copy_from_slice(&d[from..from + n]);
        if from + n >= d.len() {
            self.bufs.swap_remove(i);
        }
        n
    }

    // Getting an object by key: Linux's `ipcget`.

    /// `*get`'s lookup in `table` for `key` with `flags`: a new object
    /// for `IPC_PRIVATE` or a key with none (`IPC_CREAT`; else
    /// `ENOENT`), else the key's — `EEXIST` with `IPC_CREAT|IPC_EXCL`,
    /// then the kind's own check (`more`), then the permission the
    /// flags' mode asks (`EACCES`).
    pub fn lookup<T>(
        table: &Table<T>,
        key: i32,
        flags: u32,
        c: &Cred,
        more: impl Fn(&T) -> Result<(), i64>,
    ) -> Result<Found, i64> {
        let Some(id) = table.find_key(key) else {
            return if key == IPC_PRIVATE || flags & IPC_CREAT != 0 {
                Ok(Found::Create)
            } else {
                Err(ENOENT)
            };
        };
        if flags & (IPC_CREAT | IPC_EXCL) == IPC_CREAT | IPC_EXCL {
            return Err(EEXIST);
        }
        let e = table.get(id as i64)?;
        more(&e.obj)?;
        e.perm.check(c, flags)?;
        Ok(Found::Existing(id))
    }

    /// How many objects of `table` user `uid` made.
    fn count<T>(table: &Table<T>, uid: u32) -> usize {
        table.iter().filter(|(_, e)| e.perm.cuid == uid).count()
    }

    // Shared memory.

    /// `shmget`'s checks before a segment is made: `EINVAL` for a size
    /// out of `SHMMIN..=shmmax` (making one) or bigger than the key's
    /// segment; `ENOSPC` past `shmall` pages in all segments, `shmmni`
    /// segments or the caller's cap of segments, `ENOMEM` past its cap of
    /// their sizes.
    pub fn shm_lookup(&self, key: i32, size: u64, flags: u32, c: &Cred) -> Result<Found, i64> {
        let f = Self::lookup(&self.shm, key, flags, c, |s| {
            if size > s.segsz {
                Err(EINVAL)
            } else {
                Ok(())
            }
        })?;
        if f == Found::Create {
            let l = self.shm_limits;
            if !(limit::SHMMIN..=l.max).contains(&size) {
                return Err(EINVAL);
            }
            let (n, pages) = self.shm_usage();
            if pages.saturating_add(size.div_ceil(4096)) > l.all || n as u64 >= l.mni {
                return Err(ENOSPC);
            }
            let uid = c.uid[stet_unix::cred::EFF];
            let bytes: u64 = self
                .shm
                .iter()
                .filter(|(_, e)| e.perm.cuid == uid)
                .map(|(_, e)| e.obj.segsz.next_multiple_of(4096))
                .fold(0, u64::saturating_add);
            if Self::count(&self.shm, uid) >= self.caps.objects {
                return Err(ENOSPC);
            }
            // Linux: `ENOMEM` when the memory cannot be committed.
            if bytes.saturating_add(size.next_multiple_of(4096)) > self.caps.shm_bytes {
                return Err(ENOMEM);
            }
        }
        Ok(f)
    }

    /// Enters a new segment (its file made: `ino`, `fid`) → its id.
    #[allow(clippy::too_many_arguments)]
    pub fn shm_create(
        &mut self,
        key: i32,
        size: u64,
        flags: u32,
        c: &Cred,
        ino: u32,
        fid: u32,
        pid: u32,
        now: u64,
    ) -> Result<i32, i64> {
        let s = Shm {
            segsz: size,
            ino,
            fid,
            atime: 0,
            dtime: 0,
            ctime: now,
            cpid: pid,
            lpid: 0,
        };
        self.shm.insert(Perm::new(key, c, flags, 0), s)
    }

    /// `shmat`'s check of segment `id` → the segment (its attach time and
    /// pid set). Read permission, and write unless `SHM_RDONLY`, execute
    /// with `SHM_EXEC` (`EACCES`).
    pub fn shm_attach(
        &mut self,
        id: i64,
        flags: u32,
        c: &Cred,
        pid: u32,
        now: u64,
    ) -> Result<Shm, i64> {
        let e = self.shm.get_mut(id)?;
        let mut want = 0o444;
        if flags & sysv::SHM_RDONLY == 0 {
            want |= 0o222;
        }
        if flags & sysv::SHM_EXEC != 0 {
            want |= 0o111;
        }
        e.perm.check(c, want)?;
        e.obj.atime = now;
        e.obj.lpid = pid;
        Ok(e.obj)
    }

    /// The segment whose file is `ino`.
    pub fn shm_of_inode(&self, ino: u32) -> Option<i32> {
        self.shm
            .iter()
            .find(|(_, e)| e.obj.ino == ino)
            .map(|(id, _)| id)
    }

    /// An attach of the segment of file `ino` went (`nattch` left): its
    /// detach time and pid → the table's fid to close when it was
    /// removed and this was its last attach (the entry is gone then).
    pub fn shm_detached(&mut self, ino: u32, nattch: u64, pid: u32, now: u64) -> Option<u32> {
        let id = self.shm_of_inode(ino)?;
        let e = self.shm.get_mut(id as i64).ok()?;
        e.obj.dtime = now;
        if pid != 0 {
            e.obj.lpid = pid;
        }
        if nattch == 0 && e.perm.mode & sysv::SHM_DEST != 0 {
            return self.shm.remove(id as i64).map(|e| e.obj.fid);
        }
        None
    }

    /// `shmctl(id, cmd)` for every command but the information ones
    /// (`IPC_INFO`, `SHM_INFO`; the caller answers those), `buf` the
    /// caller's structure for `IPC_SET` and the answer's for the stat
    /// ones, `nattch` the attaches of a segment's file → the call's
    /// result and the table's fid to close (a removed segment with no
    /// attaches).
    #[allow(clippy::too_many_arguments)]
    pub fn shm_ctl(
        &mut self,
        id: i64,
        cmd: u32,
        buf: &mut [u8],
        c: &Cred,
        now: u64,
        nattch: impl Fn(u32) -> u64,
    ) -> Result<(u64, Option<u32>), i64> {
        use sysv::*;
        match cmd {
            IPC_STAT | SHM_STAT | SHM_STAT_ANY => {
                let (ret, e) = if cmd == IPC_STAT {
                    (0, self.shm.get(id)?)
                } else {
                    let (i, e) = self.shm.at(id)?;
                    (i as u64, e)
                };
                if cmd != SHM_STAT_ANY {
                    e.perm.check(c, 0o444)?;
                }
                let s = ShmStat {
                    segsz: e.obj.segsz,
                    atime: e.obj.atime,
                    dtime: e.obj.dtime,
                    ctime: e.obj.ctime,
                    cpid: e.obj.cpid,
                    lpid: e.obj.lpid,
                    nattch: nattch(e.obj.ino),
                };
                write_shmid_ds(buf, &e.perm, &s);
                Ok((ret, None))
            }
            IPC_SET => {
                let e = self.shm.get_mut(id)?;
                e.perm.owner(c)?;
                e.perm.set_from(buf);
                e.obj.ctime = now;
                Ok((0, None))
            }
            IPC_RMID => {
                let e = self.shm.get_mut(id)?;
                e.perm.owner(c)?;
                if nattch(e.obj.ino) == 0 {
                    let fid = e.obj.fid;
                    self.shm.remove(id);
                    return Ok((0, Some(fid)));
                }
                // Gone with its last attach; nobody finds it by key now.
                e.perm.mode |= SHM_DEST;
                e.perm.key = IPC_PRIVATE;
                self.shm.forget_key(id);
                Ok((0, None))
            }
            SHM_LOCK | SHM_UNLOCK => {
                let e = self.shm.get_mut(id)?;
                e.perm.owner(c)?;
                if cmd == SHM_LOCK {
                    e.perm.mode |= SHM_LOCKED;
                } else {
                    e.perm.mode &= !SHM_LOCKED;
                }
                Ok((0, None))
            }
            _ => Err(EINVAL),
        }
    }

    /// `SHM_INFO`'s figures: segments, their pages in all.
    pub fn shm_usage(&self) -> (u32, u64) {
        let pages = self
            .shm
            .iter()
            .map(|(_, e)| e.obj.segsz.div_ceil(4096))
            .fold(0, u64::saturating_add);
        (self.shm.in_use() as u32, pages)
    }
}

#[cfg(test)]
#[path = "ipc/tests.rs"]
mod tests;
