//! `inotify_init`, `inotify_init1`, `inotify_add_watch` and
//! `inotify_rm_watch`: the instance, its watches and its queue live in
//! unixd (`INOTIFY_*`, unixd's `inotify.rs`); reads, `poll`, epoll and
//! `FIONREAD` of the descriptor are those of any unixd file.

use crate::fds::ux;
use crate::Keeper;
use stet_unix::proto::{self, o};
use stet_unix::sys::errno::*;

type R = Result<u64, i64>;

/// `IN_MASK_CREATE` and `IN_MASK_ADD`, which exclude each other.
const MASK_CREATE: u32 = 0x1000_0000;
const MASK_ADD: u32 = 0x2000_0000;
/// Every bit `inotify_add_watch` knows (`stet_unixfs::inotify::mask::
/// ALL_BITS`): a mask with none is `EINVAL`.
const ALL_BITS: u32 = 0xf700_efff;

impl Keeper {
    /// `inotify_init1(flags)` (and `inotify_init`, flags 0): `IN_NONBLOCK`
    /// and `IN_CLOEXEC` (`O_*`'s values), anything else `EINVAL`.
    pub fn inotify_init(&mut self, flags: u64) -> R {
        let flags = flags as u32 as u64;
        if flags & !(o::CLOEXEC | o::NONBLOCK) != 0 {
            return Err(EINVAL);
        }
        let fid = ux(proto::INOTIFY_INIT, [flags & o::NONBLOCK, 0, 0, 0], &[]).0?;
        self.install_fid(fid, flags & o::CLOEXEC != 0)
    }

    /// `inotify_add_watch(fd, path, mask)`, checked in Linux's order: the
    /// mask's bits (`EINVAL`), the descriptor (`EBADF`), the path
    /// (`EFAULT`, then the walk's errors in unixd).
    pub fn inotify_add_watch(&mut self, fd: u64, path: u64, mask: u64) -> R {
        let m = mask as u32;
        if m & ALL_BITS == 0 {
            return Err(EINVAL);
        }
        let fid = self.fid(fd)?;
        if m & MASK_ADD != 0 && m & MASK_CREATE != 0 {
            return Err(EINVAL);
        }
        let mut b = [0u8; 4096];
        let path = self.path(path, &mut b)?;
        if path.is_empty() {
            return Err(ENOENT);
        }
        // Relative to the working directory (an absolute path ignores it).
        let base = self.cwd as u64;
        ux(proto::INOTIFY_ADD, [fid, base, m as u64, 0], path).0
    }

    /// `inotify_rm_watch(fd, wd)`.
    pub fn inotify_rm_watch(&mut self, fd: u64, wd: u64) -> R {
        let fid = self.fid(fd)?;
        ux(
            proto::INOTIFY_RM,
            [fid, wd as u32 as i32 as i64 as u64, 0, 0],
            &[],
        )
        .0
    }
}
