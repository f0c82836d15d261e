//! System V IPC as Linux x86_64 has it (man 7 sysvipc): the system call
//! numbers, flags, commands and limits, the layouts of the structures
//! `shmctl`, `semctl` and `msgctl` read and write, and the permission
//! rules every object obeys (`ipcperms`: the owner's, group's or others'
//! bits of its mode, or the superuser; the owner or creator, or the
//! superuser, to change or remove it). unixd keeps the objects
//! (`stet_unixfs::ipc`); the keeper reads and writes the process's
//! structures. `tests/sysv_abi.rs` checks every value here against
//! `linux-raw-sys` and `libc`.

use crate::cred::{Cred, EFF};

/// System call numbers.
#[allow(missing_docs)]
pub mod nr {
    pub const SHMGET: u64 = 29;
    pub const SHMAT: u64 = 30;
    pub const SHMCTL: u64 = 31;
    pub const SEMGET: u64 = 64;
    pub const SEMOP: u64 = 65;
    pub const SEMCTL: u64 = 66;
    pub const SHMDT: u64 = 67;
    pub const MSGGET: u64 = 68;
    pub const MSGSND: u64 = 69;
    pub const MSGRCV: u64 = 70;
    pub const MSGCTL: u64 = 71;
    pub const SEMTIMEDOP: u64 = 220;
    pub const MQ_OPEN: u64 = 240;
    pub const MQ_UNLINK: u64 = 241;
    pub const MQ_TIMEDSEND: u64 = 242;
    pub const MQ_TIMEDRECEIVE: u64 = 243;
    pub const MQ_NOTIFY: u64 = 244;
    pub const MQ_GETSETATTR: u64 = 245;
}

/// errno values only these calls answer.
#[allow(missing_docs)]
pub mod errno {
    pub const ENOMSG: i64 = 42;
    pub const EIDRM: i64 = 43;
    pub const EMSGSIZE: i64 = 90;
}

/// POSIX message queues' `struct sigevent` (`mq_notify`) and `struct
/// mq_attr`.
#[allow(missing_docs)]
pub mod mq {
    pub const SIGEV_SIGNAL: u32 = 0;
    pub const SIGEV_NONE: u32 = 1;
    pub const SIGEV_THREAD: u32 = 2;
    /// `struct sigevent`: `sigev_signo` and `sigev_notify`.
    pub const SIGEV_SIGNO: usize = 8;
    pub const SIGEV_NOTIFY: usize = 12;
    pub const SIGEVENT_SIZE: usize = 64;
    /// `struct mq_attr`: four `long`s and four reserved.
    pub const ATTR_SIZE: usize = 64;
}

/// Whether system call `n` answers `EINTR` after a signal handler even
/// with `SA_RESTART` (man 7 signal: the System V IPC calls are never
/// restarted).
pub fn never_restarted(n: u64) -> bool {
    matches!(n, nr::SEMOP | nr::SEMTIMEDOP | nr::MSGSND | nr::MSGRCV)
}

/// `key_t` 0: a new object nobody can find by key.
pub const IPC_PRIVATE: i32 = 0;
/// `*get` flag: create the object if the key has none.
pub const IPC_CREAT: u32 = 0o1000;
/// With `IPC_CREAT`: fail (`EEXIST`) if the key has one.
pub const IPC_EXCL: u32 = 0o2000;
/// Do not wait (`EAGAIN`, or `ENOMSG` for `msgrcv`).
pub const IPC_NOWAIT: u32 = 0o4000;

/// `*ctl` commands every kind has.
pub const IPC_RMID: u32 = 0;
/// Sets owner, group, mode (and a queue's `msg_qbytes`).
pub const IPC_SET: u32 = 1;
/// The object's `*id_ds`.
pub const IPC_STAT: u32 = 2;
/// The system's limits.
pub const IPC_INFO: u32 = 3;

/// `shmat`: attach read-only.
pub const SHM_RDONLY: u32 = 0o10000;
/// `shmat`: round the address down to `SHMLBA`.
pub const SHM_RND: u32 = 0o20000;
/// `shmat`: replace what is mapped there.
pub const SHM_REMAP: u32 = 0o40000;
/// `shmat`: executable too.
pub const SHM_EXEC: u32 = 0o100000;
/// `shmget`: huge pages (accepted: ordinary pages here).
pub const SHM_HUGETLB: u32 = 0o4000;
/// `shmget`: no swap reservation (accepted: there is no swap).
pub const SHM_NORESERVE: u32 = 0o10000;
/// `shmctl` commands.
pub const SHM_LOCK: u32 = 11;
/// Unlocks.
pub const SHM_UNLOCK: u32 = 12;
/// `IPC_STAT` by table index.
pub const SHM_STAT: u32 = 13;
/// Use in all (`struct shm_info`).
pub const SHM_INFO: u32 = 14;
/// `SHM_STAT` without the read permission check.
pub const SHM_STAT_ANY: u32 = 15;
/// Mode bit: removed, gone when the last attach goes.
pub const SHM_DEST: u32 = 0o1000;
/// Mode bit: `SHM_LOCK`ed.
pub const SHM_LOCKED: u32 = 0o2000;
/// The attach address granularity (a page on x86_64).
pub const SHMLBA: u64 = 4096;

/// `sembuf.sem_flg`: undo at exit.
pub const SEM_UNDO: u32 = 0x1000;
/// `semctl` commands.
pub const GETPID: u32 = 11;
#[allow(missing_docs)]
pub const GETVAL: u32 = 12;
#[allow(missing_docs)]
pub const GETALL: u32 = 13;
#[allow(missing_docs)]
pub const GETNCNT: u32 = 14;
#[allow(missing_docs)]
pub const GETZCNT: u32 = 15;
#[allow(missing_docs)]
pub const SETVAL: u32 = 16;
#[allow(missing_docs)]
pub const SETALL: u32 = 17;
#[allow(missing_docs)]
pub const SEM_STAT: u32 = 18;
#[allow(missing_docs)]
pub const SEM_INFO: u32 = 19;
#[allow(missing_docs)]
pub const SEM_STAT_ANY: u32 = 20;

/// `msgctl` commands.
pub const MSG_STAT: u32 = 11;
#[allow(missing_docs)]
pub const MSG_INFO: u32 = 12;
#[allow(missing_docs)]
pub const MSG_STAT_ANY: u32 = 13;
/// `msgrcv`: truncate a longer message instead of `E2BIG`.
pub const MSG_NOERROR: u32 = 0o10000;
/// `msgrcv`: the first message whose type is not `msgtyp`.
pub const MSG_EXCEPT: u32 = 0o20000;
/// `msgrcv`: a copy of the message at index `msgtyp`, left in the queue.
pub const MSG_COPY: u32 = 0o40000;

/// Linux's limits (`ipc/util.h`, `uapi/linux/{shm,sem,msg}.h`). Those of
/// one object hold here as on Linux, and so do the system-wide counts
/// that `IPC_INFO` and `/proc/sys/kernel` report (`SEMMNI`, `SEMMNS`,
/// `MSGMNI`; `shmmni` may be changed); past them unixd's heap bounds the
/// tables (`stet_unixfs::ipc::Caps` is a cap per user, no lower).
#[allow(missing_docs)]
pub mod limit {
    /// Table indices per kind (an id is `seq * IPCMNI + index`).
    pub const IPCMNI: u32 = 32768;
    pub const SHMMIN: u64 = 1;
    pub const SHMMAX: u64 = u64::MAX - (1 << 24);
    pub const SHMALL: u64 = u64::MAX - (1 << 24);
    pub const SHMMNI: u64 = 4096;
    pub const SEMMSL: u32 = 32000;
    pub const SEMMNI: u32 = 32000;
    pub const SEMMNS: u32 = SEMMNI * SEMMSL;
    pub const SEMOPM: u32 = 500;
    pub const SEMVMX: i32 = 32767;
    pub const SEMAEM: i32 = SEMVMX;
    pub const SEMUME: u32 = SEMOPM;
    pub const SEMMNU: u32 = SEMMNS;
    pub const SEMMAP: u32 = SEMMNS;
    pub const SEMUSZ: u32 = 20;
    pub const MSGMAX: u32 = 8192;
    pub const MSGMNB: u32 = 16384;
    pub const MSGMNI: u32 = 32000;
    pub const MSGSSZ: u32 = 16;
    pub const MSGPOOL: u32 = MSGMNI * MSGMNB / 1024;
    pub const MSGMAP: u32 = MSGMNB;
    pub const MSGTQL: u32 = MSGMNB;
    pub const MSGSEG: u32 = 0xffff;
}

/// Sizes of the structures (x86_64: `struct *id64_ds`, which glibc's and
/// musl's `struct *id_ds` are).
pub mod size {
    /// `struct ipc64_perm`.
    pub const PERM: usize = 48;
    /// `struct shmid64_ds`.
    pub const SHMID_DS: usize = 112;
    /// `struct semid64_ds`.
    pub const SEMID_DS: usize = 104;
    /// `struct msqid64_ds`.
    pub const MSQID_DS: usize = 120;
    /// `struct shminfo64`.
    pub const SHMINFO: usize = 72;
    /// `struct shm_info`.
    pub const SHM_INFO: usize = 48;
    /// `struct seminfo`.
    pub const SEMINFO: usize = 40;
    /// `struct msginfo`.
    pub const MSGINFO: usize = 32;
    /// `struct sembuf`.
    pub const SEMBUF: usize = 6;
}

/// Offsets in the structures.
#[allow(missing_docs)]
pub mod off {
    // struct ipc64_perm
    pub const KEY: usize = 0;
    pub const UID: usize = 4;
    pub const GID: usize = 8;
    pub const CUID: usize = 12;
    pub const CGID: usize = 16;
    pub const MODE: usize = 20;
    pub const SEQ: usize = 24;
    // struct shmid64_ds
    pub const SHM_SEGSZ: usize = 48;
    pub const SHM_ATIME: usize = 56;
    pub const SHM_DTIME: usize = 64;
    pub const SHM_CTIME: usize = 72;
    pub const SHM_CPID: usize = 80;
    pub const SHM_LPID: usize = 84;
    pub const SHM_NATTCH: usize = 88;
    // struct semid64_ds
    pub const SEM_OTIME: usize = 48;
    pub const SEM_CTIME: usize = 64;
    pub const SEM_NSEMS: usize = 80;
    // struct msqid64_ds
    pub const MSG_STIME: usize = 48;
    pub const MSG_RTIME: usize = 56;
    pub const MSG_CTIME: usize = 64;
    pub const MSG_CBYTES: usize = 72;
    pub const MSG_QNUM: usize = 80;
    pub const MSG_QBYTES: usize = 88;
    pub const MSG_LSPID: usize = 96;
    pub const MSG_LRPID: usize = 100;
}

/// An object's `struct ipc64_perm`, and the mode's extra bits
/// ([`SHM_DEST`], [`SHM_LOCKED`]) above the nine permission bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Perm {
    /// The key it was made with (`IPC_PRIVATE` once a segment is removed).
    pub key: i32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Creator.
    pub cuid: u32,
    /// Creator's group.
    pub cgid: u32,
    /// Permission bits (`0o777`) and flags.
    pub mode: u32,
    /// The slot's sequence number (the id's upper part).
    pub seq: u16,
}

impl Perm {
    /// A new object's: owner and creator the effective ids, the low nine
    /// bits of `flags`.
    pub fn new(key: i32, c: &Cred, flags: u32, seq: u16) -> Perm {
        let (u, g) = (c.uid[EFF], c.gid[EFF]);
        Perm {
            key,
            uid: u,
            gid: g,
            cuid: u,
            cgid: g,
            mode: flags & 0o777,
            seq,
        }
    }

    /// Linux's `ipcperms`: may `c` have the access `flag`'s permission
    /// bits ask (read 4, write 2, in any of the three classes)? Owner or
    /// creator uses the owner's bits, a member of the group or creator's
    /// group (file-system group or supplementary) the group's, others the
    /// rest; the superuser (`CAP_IPC_OWNER`) always.
    pub fn allows(&self, c: &Cred, flag: u32) -> bool {
        let want = ((flag >> 6) | (flag >> 3) | flag) & 7;
        let euid = c.uid[EFF];
        let granted = if euid == self.cuid || euid == self.uid {
            self.mode >> 6
        } else if c.in_group(self.cgid) || c.in_group(self.gid) {
            self.mode >> 3
        } else {
            self.mode
        };
        want & !granted & 7 == 0 || c.capable(crate::cred::cap::IPC_OWNER)
    }

    /// [`Perm::allows`] as a result: `EACCES` when not.
    pub fn check(&self, c: &Cred, flag: u32) -> Result<(), i64> {
        if self.allows(c, flag) {
            Ok(())
        } else {
            Err(crate::sys::errno::EACCES)
        }
    }

    /// May `c` change or remove the object (`IPC_SET`, `IPC_RMID`,
    /// `SHM_LOCK`)? Its owner or creator, or the superuser
    /// (`CAP_SYS_ADMIN`); else `EPERM`.
    pub fn owner(&self, c: &Cred) -> Result<(), i64> {
        let euid = c.uid[EFF];
        if euid == self.cuid || euid == self.uid || c.capable(crate::cred::cap::SYS_ADMIN) {
            Ok(())
        } else {
            Err(crate::sys::errno::EPERM)
        }
    }

    /// `IPC_SET`: the new owner, group and permission bits from the
    /// caller's `struct ipc64_perm` (the flags stay).
    pub fn set_from(&mut self, b: &[u8]) {
        self.uid = get32(b, off::UID);
        self.gid = get32(b, off::GID);
        self.mode = (self.mode & !0o777) | (get32(b, off::MODE) & 0o777);
    }

    /// Writes `struct ipc64_perm` at the start of `b` (at least
    /// [`size::PERM`] bytes).
    pub fn write(&self, b: &mut [u8]) {
        put32(b, off::KEY, self.key as u32);
        put32(b, off::UID, self.uid);
        put32(b, off::GID, self.gid);
        put32(b, off::CUID, self.cuid);
        put32(b, off::CGID, self.cgid);
        put32(b, off::MODE, self.mode);
        put16(b, off::SEQ, self.seq);
    }
}

/// The id of the object in table slot `index` with sequence `seq`.
pub fn make_id(seq: u16, index: u32) -> i32 {
    (seq as u32 * limit::IPCMNI + index) as i32
}

/// (sequence, index) of an id (`None`: negative, never an id).
pub fn split_id(id: i64) -> Option<(u16, u32)> {
    if !(0..=i32::MAX as i64).contains(&id) {
        return None;
    }
    let id = id as u32;
    Some(((id / limit::IPCMNI) as u16, id % limit::IPCMNI))
}

/// The highest sequence number (ids stay positive `int`s): all of `u16`.
pub const SEQ_MAX: u16 = (i32::MAX as u32 / limit::IPCMNI) as u16;
const _: () = assert!(SEQ_MAX == u16::MAX);

/// One `struct sembuf`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SemBuf {
    /// Which semaphore.
    pub num: u16,
    /// What to add (negative: wait until it can be taken; 0: wait for zero).
    pub op: i16,
    /// `IPC_NOWAIT`, `SEM_UNDO`.
    pub flg: u16,
}

impl SemBuf {
    /// The `struct sembuf`s of `b` (6 bytes each; a short tail is ignored).
    pub fn parse(b: &[u8]) -> impl Iterator<Item = SemBuf> + '_ {
        b.chunks_exact(size::SEMBUF).map(|c| SemBuf {
            num: u16::from_le_bytes([c[0], c[1]]),
            op: i16::from_le_bytes([c[2], c[3]]),
            flg: u16::from_le_bytes([c[4], c[5]]),
        })
    }
}

/// `struct shmid64_ds`'s figures besides the permissions (times in s
/// since 1970), named as its fields.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShmStat {
    pub segsz: u64,
    pub atime: u64,
    pub dtime: u64,
    pub ctime: u64,
    pub cpid: u32,
    pub lpid: u32,
    pub nattch: u64,
}

/// Writes `struct shmid64_ds` into `b` (at least [`size::SHMID_DS`]).
pub fn write_shmid_ds(b: &mut [u8], p: &Perm, s: &ShmStat) {
    b[..size::SHMID_DS].fill(0);
    p.write(b);
    put64(b, off::SHM_SEGSZ, s.segsz);
    put64(b, off::SHM_ATIME, s.atime);
    put64(b, off::SHM_DTIME, s.dtime);
    put64(b, off::SHM_CTIME, s.ctime);
    put32(b, off::SHM_CPID, s.cpid);
    put32(b, off::SHM_LPID, s.lpid);
    put64(b, off::SHM_NATTCH, s.nattch);
}

/// Writes `struct semid64_ds` into `b` (at least [`size::SEMID_DS`]).
pub fn write_semid_ds(b: &mut [u8], p: &Perm, otime: u64, ctime: u64, nsems: u64) {
    b[..size::SEMID_DS].fill(0);
    p.write(b);
    put64(b, off::SEM_OTIME, otime);
    put64(b, off::SEM_CTIME, ctime);
    put64(b, off::SEM_NSEMS, nsems);
}

/// `struct msqid64_ds`'s figures besides the permissions (times in s
/// since 1970), named as its fields.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsqStat {
    pub stime: u64,
    pub rtime: u64,
    pub ctime: u64,
    pub cbytes: u64,
    pub qnum: u64,
    pub qbytes: u64,
    pub lspid: u32,
    pub lrpid: u32,
}

/// Writes `struct msqid64_ds` into `b` (at least [`size::MSQID_DS`]).
pub fn write_msqid_ds(b: &mut [u8], p: &Perm, s: &MsqStat) {
    b[..size::MSQID_DS].fill(0);
    p.write(b);
    put64(b, off::MSG_STIME, s.stime);
    put64(b, off::MSG_RTIME, s.rtime);
    put64(b, off::MSG_CTIME, s.ctime);
    put64(b, off::MSG_CBYTES, s.cbytes);
    put64(b, off::MSG_QNUM, s.qnum);
    put64(b, off::MSG_QBYTES, s.qbytes);
    put32(b, off::MSG_LSPID, s.lspid);
    put32(b, off::MSG_LRPID, s.lrpid);
}

/// `struct msqid64_ds`'s `msg_qbytes` in an `IPC_SET` buffer.
pub fn qbytes_of(b: &[u8]) -> u64 {
    get64(b, off::MSG_QBYTES)
}

/// The shared-memory limits root may change (`/proc/sys/kernel/shmmax`,
/// `shmall`, `shmmni`): the largest segment (bytes), all segments' pages,
/// how many segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShmLimits {
    /// `SHMMAX`.
    pub max: u64,
    /// `SHMALL` (pages).
    pub all: u64,
    /// `SHMMNI` (at most [`limit::IPCMNI`]).
    pub mni: u64,
}

impl ShmLimits {
    /// Linux's defaults.
    pub const LINUX: ShmLimits = ShmLimits {
        max: limit::SHMMAX,
        all: limit::SHMALL,
        mni: limit::SHMMNI,
    };
}

impl Default for ShmLimits {
    fn default() -> Self {
        Self::LINUX
    }
}

/// Writes `IPC_INFO`'s `struct shminfo64` for limits `l`.
pub fn write_shminfo(b: &mut [u8], l: &ShmLimits) {
    b[..size::SHMINFO].fill(0);
    put64(b, 0, l.max);
    put64(b, 8, limit::SHMMIN);
    put64(b, 16, l.mni);
    put64(b, 24, l.mni);
    put64(b, 32, l.all);
}

/// Writes `SHM_INFO`'s `struct shm_info`: segments in use, their pages in
/// all, the pages that exist.
pub fn write_shm_info(b: &mut [u8], used: u32, tot: u64, rss: u64) {
    b[..size::SHM_INFO].fill(0);
    put32(b, 0, used);
    put64(b, 8, tot);
    put64(b, 16, rss);
}

/// Writes `struct seminfo`: `IPC_INFO`'s limits, or with `usage` (`SEM_INFO`)
/// the sets in use as `semusz` and the semaphores as `semaem`.
pub fn write_seminfo(b: &mut [u8], usage: Option<(u32, u32)>) {
    use limit::*;
    let (usz, aem) = usage.unwrap_or((SEMUSZ, SEMAEM as u32));
    let v = [
        SEMMAP,
        SEMMNI,
        SEMMNS,
        SEMMNU,
        SEMMSL,
        SEMOPM,
        SEMUME,
        usz,
        SEMVMX as u32,
        aem,
    ];
    for (i, x) in v.into_iter().enumerate() {
        put32(b, 4 * i, x);
    }
}

/// Writes `struct msginfo`: `IPC_INFO`'s limits, or with `usage`
/// (`MSG_INFO`) the queues in use as `msgpool`, the messages as `msgmap`
/// and their bytes as `msgtql`.
pub fn write_msginfo(b: &mut [u8], usage: Option<(u32, u32, u32)>) {
    use limit::*;
    let (pool, map, tql) = usage.unwrap_or((MSGPOOL, MSGMAP, MSGTQL));
    b[..size::MSGINFO].fill(0);
    for (i, x) in [pool, map, MSGMAX, MSGMNB, MSGMNI, MSGSSZ, tql]
        .into_iter()
        .enumerate()
    {
        put32(b, 4 * i, x);
    }
    put16(b, 28, MSGSEG as u16);
}

fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// A little-endian `u32` of `b` at `at` (0 past its end).
pub fn get32(b: &[u8], at: usize) -> u32 {
    b.get(at..at.saturating_add(4))
        .map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// A little-endian `u64` of `b` at `at` (0 past its end).
pub fn get64(b: &[u8], at: usize) -> u64 {
    b.get(at..at.saturating_add(8)).map_or(0, |s| {
        let mut w = [0u8; 8];
        w.copy_from_slice(s);
        u64::from_le_bytes(w)
    })
}

#[cfg(test)]
#[path = "sysv/tests.rs"]
mod tests;
