//! File calls the keeper answers from what it already has: `futimesat`
//! (`utimensat` with microseconds), `close_range` (the descriptor table
//! is the keeper's), `sync_file_range` (a checkpoint, as `fsync`) and
//! `/proc/<pid>/maps` (the memory map is the keeper's: opening the file
//! writes the process's ranges into a nameless file, `stet_unix::maps`)
//! and `memfd_create` (unixd's nameless files with seals, `memfds`), and
//! `openat2`'s checks (the walk's `RESOLVE_*` limits are unixd's), and
//! file handles (`name_to_handle_at`: the inode number;
//! `open_by_handle_at`: unixd's `OPEN_HANDLE`).
//! Each refuses bad arguments with Linux's errno before it does anything.

use crate::fds::ux;
use crate::space::Touch;
use crate::Keeper;
use core::fmt::Write;
use stet_rt::key::Msg;
use stet_unix::fs::mode;
use stet_unix::layout::STACK_TOP;
use stet_unix::maps::{self, Source};
use stet_unix::procgen::Text;
use stet_unix::proto as p;
use stet_unix::sys::errno::*;
use stet_unix::vm::Backing;

type R = Result<u64, i64>;

/// `close_range`'s flags.
const CLOSE_RANGE_UNSHARE: u64 = 2;
const CLOSE_RANGE_CLOEXEC: u64 = 4;

/// `sync_file_range`'s flags: `WAIT_BEFORE`, `WRITE`, `WAIT_AFTER`.
const SYNC_FILE_RANGE_ALL: u64 = 7;

impl Keeper {
    /// `futimesat(dirfd, path, times)`: `times` null (now) or two
    /// `struct timeval`s (microseconds below 1,000,000, not negative:
    /// `EINVAL`); a null path is the descriptor itself.
    pub fn futimesat(&mut self, dirfd: u64, path: u64, times: u64) -> R {
        let (mut a, mut m) = (u64::MAX, u64::MAX);
        if times != 0 {
            let mut b = [0u8; 32];
            self.space.read(times, &mut b).map_err(Touch::errno)?;
            let conv = |s: &[u8]| {
                let sec = i64::from_le_bytes(s[..8].try_into().unwrap_or_default());
                let us = i64::from_le_bytes(s[8..16].try_into().unwrap_or_default());
                if !(0..1_000_000).contains(&us) || sec < 0 {
                    return Err(EINVAL);
                }
                (sec as u64)
                    .checked_mul(1_000_000_000)
                    .and_then(|ns| ns.checked_add(us as u64 * 1000))
                    // The two values that are not times.
                    .filter(|&ns| ns < u64::MAX - 1)
                    .ok_or(EINVAL)
            };
            a = conv(&b[..16])?;
            m = conv(&b[16..])?;
        }
        if path == 0 {
            let fid = self.fid(dirfd)?;
            return ux(p::UTIMENS, [fid, a, m, 0], &[]).0;
        }
        self.path_call(p::UTIMENS, dirfd, path, a, m)
    }

    /// `close_range(first, last, flags)`: closes (or, with
    /// `CLOSE_RANGE_CLOEXEC`, marks close-on-exec) every open descriptor
    /// from `first` to `last`. `CLOSE_RANGE_UNSHARE` has nothing to do:
    /// the table is this process's own (its threads share it, and it is
    /// changed for all of them, as without the flag).
    pub fn close_range(&mut self, first: u64, last: u64, flags: u64) -> R {
        let (first, last) = (first as u32 as u64, last as u32 as u64);
        if flags & !(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC) != 0 || first > last {
            return Err(EINVAL);
        }
        let end = last.min(crate::fds::MAX_FDS as u64 - 1);
        for fd in first..=end {
            if self.fds[fd as usize].fid == crate::fds::NONE {
                continue;
            }
            if flags & CLOSE_RANGE_CLOEXEC != 0 {
                self.fds[fd as usize].cloexec = true;
            } else {
                let _ = self.close(fd);
            }
        }
        Ok(0)
    }

    /// `sync_file_range(fd, offset, nbytes, flags)`: checked as Linux
    /// checks it (`EINVAL` for a negative offset or length, a range past
    /// 2^63 or an unknown flag; `ESPIPE` for a pipe, socket or device);
    /// all three flags together make the file durable (a checkpoint, as
    /// `fsync`), anything less starts nothing that must be waited for.
    pub fn sync_file_range(&mut self, fd: u64, off: u64, len: u64, flags: u64) -> R {
        let flags = flags as u32 as u64;
        if flags & !SYNC_FILE_RANGE_ALL != 0
            || (off as i64) < 0
            || (len as i64) < 0
            || off.checked_add(len).is_none_or(|e| e > i64::MAX as u64)
        {
            return Err(EINVAL);
        }
        let fid = self.fid(fd)?;
        if self.unixd(p::FLAGS, [fid, 0, 0, 0])? & p::o::PATH != 0 {
            return Err(EBADF);
        }
        let mut st = [0u8; 144];
        let a = Msg::new(crate::slots::UNIXD, p::FSTAT)
            .words([fid, 0, 0, 0])
            .call_into(&mut st);
        crate::fds::result(&a).unwrap_or(Err(EIO))?;
        let m = u32::from_le_bytes(st[24..28].try_into().unwrap_or_default());
        if !matches!(m & mode::FMT, mode::REG | mode::DIR | mode::LNK) {
            return Err(ESPIPE);
        }
        if flags == SYNC_FILE_RANGE_ALL {
            return self.sync();
        }
        Ok(0)
    }

    /// Whether `path` is this process's `/proc/<pid>/maps` (`/proc/self/`
    /// already made `/proc/<pid>/` by [`Keeper::path`]).
    pub fn is_own_maps(&self, path: &[u8]) -> bool {
        self.is_own_file(path, "maps")
    }

    /// Whether `path` is this process's `/proc/<pid>/<name>`.
    pub fn is_own_file(&self, path: &[u8], name: &str) -> bool {
        let mut b = [0u8; 48];
        let mut t = Text::new(&mut b);
        let _ = write!(t, "/proc/{}/{name}", self.pid);
        let n = t.len();
        path == &b[..n]
    }

    /// Whether this process maps the file of `fid` shared and writable.
    pub fn maps_shared_writable(&self, fid: u64) -> bool {
        let ino = |f: u64| {
            let mut st = [0u8; 144];
            let a = Msg::new(crate::slots::UNIXD, p::FSTAT)
                .words([f, 0, 0, 0])
                .call_into(&mut st);
            match crate::fds::result(&a) {
                Some(Ok(_)) => {
                    let mut id = [0u8; 16];
                    id.copy_from_slice(&st[..16]);
                    Some(id)
                }
                _ => None,
            }
        };
        let Some(me) = ino(fid) else {
            return false;
        };
        self.space.map.vmas().iter().any(|v| match v.backing {
            Backing::File { file, .. } if v.shared && v.prot & stet_unix::elf::prot::WRITE != 0 => {
                self.space
                    .file_fid(file)
                    .is_some_and(|f| ino(f as u64).as_ref() == Some(&me))
            }
            _ => false,
        })
    }

    /// Tells unixd this process's memory figures ([`p::VM_STATS`]), for
    /// the `Vm*` lines of its `/proc/<pid>/status`.
    pub fn send_vm_stats(&mut self) {
        let size: u64 = self.space.map.vmas().iter().map(|v| v.end - v.start).sum();
        let locked = self.space.map.locked_bytes();
        let rss = self.space.tree.present();
        self.peak_pages = self.peak_pages.max(rss);
        let _ = self.unixd(p::VM_STATS, [size, locked, rss, self.peak_pages]);
    }

    /// Opens `/proc/<pid>/maps`: a nameless file holding the map as it is
    /// now (Linux makes the text at each read; a reader here sees the map
    /// of the moment it opened the file). Read-only, as Linux's 0444 file
    /// is to its owner (`EACCES` for writing).
    pub fn open_maps(&mut self, flags: u64) -> R {
        if flags & p::o::ACCMODE != p::o::RDONLY {
            return Err(EACCES);
        }
        let fd = self.lowest_free_fd()?;
        let fid = self.unixd(p::MEMFD, [0, 0, 0, 0])?;
        let r = self.write_maps(fid);
        if let Err(e) = r {
            let _ = ux(p::CLOSE, [fid, 0, 0, 0], &[]);
            return Err(e);
        }
        self.fds[fd] = crate::fds::Fd {
            fid: fid as u32,
            cloexec: flags & p::o::CLOEXEC != 0,
            regular: true,
        };
        Ok(fd as u64)
    }

    fn write_maps(&mut self, fid: u64) -> Result<(), i64> {
        let mut off = 0;
        let n = self.space.map.vmas().len();
        for i in 0..n {
            let Some(&v) = self.space.map.vmas().get(i) else {
                break;
            };
            let mut src = Source::default();
            if let Backing::File { file, offset, .. } = v.backing {
                src.offset = offset;
                if let Some(f) = self.space.file_fid(file) {
                    let mut st = [0u8; 144];
                    let a = Msg::new(crate::slots::UNIXD, p::FSTAT)
                        .words([f as u64, 0, 0, 0])
                        .call_into(&mut st);
                    if crate::fds::result(&a).unwrap_or(Err(EIO)).is_ok() {
                        src.dev = u64::from_le_bytes(st[..8].try_into().unwrap_or_default());
                        src.ino = u64::from_le_bytes(st[8..16].try_into().unwrap_or_default());
                    }
                }
            }
            // The break's range begins at the page the program's end is
            // on, or the next.
            let brk = self.space.map.brk_start;
            let heap = (v.start <= brk && brk < v.end) || v.start == brk.next_multiple_of(4096);
            if v.backing == Backing::Anon && heap {
                src.name = b"[heap]";
            } else if v.end == STACK_TOP {
                src.name = b"[stack]";
            }
            let mut b = [0u8; 160];
            let len = maps::line(&mut b, &v, &src);
            ux(p::PWRITE, [fid, off, 0, 0], &b[..len]).0?;
            off += len as u64;
        }
        Ok(())
    }

    /// `memfd_create(name, flags)`: a nameless file in unixd
    /// ([`p::MEMFD_CREATE`]). The name (at most 249 bytes: `EINVAL`) is
    /// checked, not kept; `MFD_HUGETLB` and unknown flags are `EINVAL`.
    pub fn memfd_create(&mut self, name: u64, flags: u64) -> R {
        const MFD_CLOEXEC: u64 = 1;
        const MFD_ALLOW_SEALING: u64 = 2;
        let flags = flags as u32 as u64;
        if flags & !(MFD_CLOEXEC | MFD_ALLOW_SEALING) != 0 {
            return Err(EINVAL);
        }
        let mut b = [0u8; 250];
        match self.space.read_cstr(name, &mut b) {
            Ok(_) => {}
            Err(Some(t)) => return Err(t.errno()),
            Err(None) => return Err(EINVAL),
        }
        let fd = self.lowest_free_fd()?;
        let fid = self.unixd(p::MEMFD_CREATE, [flags, 0, 0, 0])?;
        self.fds[fd] = crate::fds::Fd {
            fid: fid as u32,
            cloexec: flags & MFD_CLOEXEC != 0,
            regular: true,
        };
        Ok(fd as u64)
    }

    /// `openat2(dirfd, path, how, size)`: `struct open_how` (flags, mode,
    /// resolve) checked as Linux checks it — a size below 24 `EINVAL`,
    /// above a page `E2BIG`, bytes past the known ones not zero `E2BIG`;
    /// unknown open or resolve flags, a mode without `O_CREAT`/`O_TMPFILE`,
    /// `O_PATH` with other than `O_DIRECTORY`/`O_NOFOLLOW`/`O_CLOEXEC`, and
    /// `RESOLVE_BENEATH` with `RESOLVE_IN_ROOT` are `EINVAL` — then opened
    /// as `openat` with the walk's limits ([`p::resolve`]).
    pub fn openat2(&mut self, dirfd: u64, path: u64, how: u64, size: u64) -> R {
        use p::o;
        use p::resolve::*;
        const KNOWN: u64 = 24;
        // Linux's VALID_OPEN_FLAGS (access mode to __O_TMPFILE).
        const VALID: u64 = 0o37777703;
        const TMPFILE: u64 = 0o20200000;
        if size < KNOWN {
            return Err(EINVAL);
        }
        if size > 4096 {
            return Err(E2BIG);
        }
        let mut b = [0u8; 24];
        self.space.read(how, &mut b).map_err(Touch::errno)?;
        let mut at = KNOWN;
        while at < size {
            let mut more = [0u8; 64];
            let n = (size - at).min(64) as usize;
            self.space
                .read(how + at, &mut more[..n])
                .map_err(Touch::errno)?;
            if more[..n].iter().any(|&x| x != 0) {
                return Err(E2BIG);
            }
            at += n as u64;
        }
        let word =
            |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or_default());
        let (flags, mode, resolve) = (word(0), word(1), word(2));
        if flags & !VALID != 0
            || mode & !0o7777 != 0
            || (mode != 0 && flags & o::CREAT == 0 && flags & TMPFILE != TMPFILE)
            || resolve & !(NO_XDEV | NO_MAGICLINKS | NO_SYMLINKS | BENEATH | IN_ROOT | CACHED) != 0
            || resolve & (BENEATH | IN_ROOT) == BENEATH | IN_ROOT
            || (flags & o::PATH != 0
                && flags & !(o::PATH | o::DIRECTORY | o::NOFOLLOW | o::CLOEXEC) != 0)
        {
            return Err(EINVAL);
        }
        // RESOLVE_CACHED: every lookup here is "cached" (in memory), but
        // what may have to write cannot be (Linux: EAGAIN).
        if resolve & CACHED != 0 && flags & (o::CREAT | o::TRUNC | TMPFILE) != 0 {
            return Err(EAGAIN);
        }
        self.open_at(dirfd, path, flags, mode, resolve & !CACHED)
    }

    /// `name_to_handle_at(dirfd, path, handle, mount_id, flags)`: the
    /// handle of a file is its inode number (8 bytes, type 1), the mount id
    /// the root file system's (1). A `handle_bytes` below 8 is `EOVERFLOW`
    /// with the size needed written back; above `MAX_HANDLE_SZ` `EINVAL`.
    /// A link is followed only with `AT_SYMLINK_FOLLOW`.
    pub fn name_to_handle_at(&mut self, dirfd: u64, path: u64, fh: u64, mnt: u64, flags: u64) -> R {
        const AT_SYMLINK_FOLLOW: u64 = 0x400;
        const AT_EMPTY_PATH: u64 = 0x1000;
        const MAX_HANDLE_SZ: u32 = 128;
        const SIZE: u32 = 8;
        let flags = flags as u32 as u64;
        if flags & !(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH) != 0 {
            return Err(EINVAL);
        }
        let mut head = [0u8; 8];
        self.space.read(fh, &mut head).map_err(Touch::errno)?;
        let have = u32::from_le_bytes(head[..4].try_into().unwrap_or_default());
        if have > MAX_HANDLE_SZ {
            return Err(EINVAL);
        }
        let nofollow = if flags & AT_SYMLINK_FOLLOW != 0 {
            0
        } else {
            0x100
        };
        let st = self.stat_at(dirfd, path, nofollow | (flags & AT_EMPTY_PATH))?;
        let ino = u64::from_le_bytes(st[8..16].try_into().unwrap_or_default());
        // Pipes, sockets, devices' own inodes and /proc have no handles.
        let m = u32::from_le_bytes(st[24..28].try_into().unwrap_or_default());
        if !matches!(m & mode::FMT, mode::REG | mode::DIR | mode::LNK) || ino >= 1 << 32 {
            return Err(EOPNOTSUPP);
        }
        let fits = have >= SIZE;
        let mut out = [0u8; 16];
        out[..4].copy_from_slice(&SIZE.to_le_bytes());
        out[4..8].copy_from_slice(&(if fits { 1u32 } else { 255 }).to_le_bytes());
        out[8..].copy_from_slice(&ino.to_le_bytes());
        self.space
            .write(mnt, &1u32.to_le_bytes())
            .map_err(Touch::errno)?;
        let n = if fits { 16 } else { 8 };
        self.space.write(fh, &out[..n]).map_err(Touch::errno)?;
        if fits {
            Ok(0)
        } else {
            Err(EOVERFLOW)
        }
    }

    /// `open_by_handle_at(mount_fd, handle, flags)`: the privileged
    /// caller's (`EPERM`) open of the file a handle names (unixd's
    /// [`p::OPEN_HANDLE`]; `ESTALE` for a file gone).
    pub fn open_by_handle_at(&mut self, mount_fd: u64, fh: u64, flags: u64) -> R {
        if !self.cred.capable(stet_unix::cred::cap::DAC_READ_SEARCH) {
            return Err(EPERM);
        }
        let mount = if mount_fd as u32 as i32 as i64 == p::at::FDCWD {
            u64::MAX
        } else {
            self.fid(mount_fd)?
        };
        let mut head = [0u8; 16];
        self.space.read(fh, &mut head[..8]).map_err(Touch::errno)?;
        let bytes = u32::from_le_bytes(head[..4].try_into().unwrap_or_default());
        if bytes == 0 || bytes > 128 {
            return Err(EINVAL);
        }
        if bytes != 8 {
            return Err(ESTALE);
        }
        self.space
            .read(fh + 8, &mut head[8..])
            .map_err(Touch::errno)?;
        let ino = u64::from_le_bytes(head[8..].try_into().unwrap_or_default());
        let fd = self.lowest_free_fd()?;
        let (r, a) = ux(p::OPEN_HANDLE, [ino, flags & p::OPEN_FLAGS, mount, 0], &[]);
        let fid = r?;
        self.fds[fd] = crate::fds::Fd {
            fid: fid as u32,
            cloexec: flags & p::o::CLOEXEC != 0,
            regular: a.w[2] as u32 & mode::FMT == mode::REG,
        };
        Ok(fd as u64)
    }
}
