//! The file system's shapes, shared by the file-system domain (`unixd`,
//! whose tables are `stet_unixfs::fs::Fs`) and the keepers: file types,
//! the limits on names and paths, an inode, and `struct stat` as Linux
//! lays it out. Nothing here allocates; the tables that grow from a heap
//! are in `stet-unixfs`, which only unixd links.

/// Longest name in bytes (Linux's `NAME_MAX`; longer answers
/// `ENAMETOOLONG`).
pub const MAX_NAME: usize = 255;
/// Longest path (Linux's `PATH_MAX` less its NUL).
pub const MAX_PATH: usize = 4095;
/// Longest symbolic-link target: a path.
pub const MAX_LINK: usize = MAX_PATH;
/// Symbolic links followed in one resolution before `ELOOP`.
pub const MAX_FOLLOW: usize = 40;
/// The root directory's inode.
pub const ROOT: u32 = 1;

/// File types (the `S_IFMT` bits of `st_mode`).
pub mod mode {
    /// Mask of the type bits.
    pub const FMT: u32 = 0o170000;
    /// Directory.
    pub const DIR: u32 = 0o040000;
    /// Regular file.
    pub const REG: u32 = 0o100000;
    /// Symbolic link.
    pub const LNK: u32 = 0o120000;
    /// Character device.
    pub const CHR: u32 = 0o020000;
    /// FIFO.
    pub const FIFO: u32 = 0o010000;
    /// Block device.
    pub const BLK: u32 = 0o060000;
    /// Socket (an AF_UNIX socket's name).
    pub const SOCK: u32 = 0o140000;
    /// Set-user-ID.
    pub const SUID: u32 = 0o4000;
    /// Set-group-ID (on a directory: new entries take its group).
    pub const SGID: u32 = 0o2000;
    /// Sticky (on a directory: only owners remove names).
    pub const VTX: u32 = 0o1000;
}

/// One inode. `mode` 0: free.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inode {
    /// Type and permission bits.
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Names that refer to it (a directory counts its "." and each
    /// subdirectory's "..", as on Linux).
    pub nlink: u32,
    /// Bytes (a directory: 4096 per 64 entries, at least one block).
    pub size: u64,
    /// Modification, status change and access times (ns since 1970).
    pub mtime: u64,
    /// Status change time.
    pub ctime: u64,
    /// Access time.
    pub atime: u64,
    /// Device number of a character device (`major << 8 | minor`).
    pub rdev: u32,
    /// A directory's parent; a symlink's target index; else the domain's
    /// handle for the file's bytes (`u32::MAX`: none yet). A free inode:
    /// the next free one.
    pub aux: u32,
    /// A directory's first entry (the file system's own: `u32::MAX` none).
    pub first: u32,
    /// A directory's entries.
    pub entries: u32,
}

impl Inode {
    /// Its owner, group and mode, as [`crate::cred`]'s rules take them.
    pub fn owner(&self) -> crate::cred::Owner {
        crate::cred::Owner {
            uid: self.uid,
            gid: self.gid,
            mode: self.mode,
        }
    }

    /// A free inode.
    pub const FREE: Inode = Inode {
        mode: 0,
        uid: 0,
        gid: 0,
        nlink: 0,
        size: 0,
        mtime: 0,
        ctime: 0,
        atime: 0,
        rdev: 0,
        aux: u32::MAX,
        first: u32::MAX,
        entries: 0,
    };
}

/// `struct stat` for an inode (dev 1, blksize 4096).
pub fn stat_bytes(ino: u32, i: &Inode) -> [u8; 144] {
    let mut b = [0u8; 144];
    let mut put =
        |off: usize, v: u64, len: usize| b[off..off + len].copy_from_slice(&v.to_le_bytes()[..len]);
    put(0, 1, 8); // st_dev
    put(8, ino as u64, 8);
    put(16, i.nlink as u64, 8);
    put(24, i.mode as u64, 4);
    put(28, i.uid as u64, 4);
    put(32, i.gid as u64, 4);
    put(40, i.rdev as u64, 8);
    put(48, i.size, 8);
    put(56, 4096, 8);
    put(64, i.size.div_ceil(512), 8);
    for (off, t) in [(72, i.atime), (88, i.mtime), (104, i.ctime)] {
        put(off, t / 1_000_000_000, 8);
        put(off + 8, t % 1_000_000_000, 8);
    }
    b
}
