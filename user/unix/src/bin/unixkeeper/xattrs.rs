//! The `*xattr` calls: `setxattr`, `getxattr`, `listxattr`, `removexattr`
//! and their `l*` (the link itself) and `f*` (an open file) forms. The
//! keeper checks and copies what the process passes — the name (`ERANGE`
//! when empty or over 255 bytes), the value (`E2BIG` over 64 KiB), the
//! buffers (`EFAULT`) — and unixd keeps the attributes (`XATTR`).

use crate::fds::ux;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::key::Msg;
use stet_unix::proto::xattr::PER_FILE;
use stet_unix::proto::{self as p, at, o, xattr as op};
use stet_unix::sys::errno::*;
use stet_unix::sys::nr;
use stet_unix::sys::xattr::{NAME_MAX, SIZE_MAX};

type R = Result<u64, i64>;

impl Keeper {
    /// One of the twelve calls `n` with its arguments `a`.
    pub fn xattr(&mut self, n: u64, a: &[u64; 6]) -> R {
        let (what, value, size, flags) = match n {
            nr::SETXATTR | nr::LSETXATTR | nr::FSETXATTR => (op::SET, a[2], a[3], a[4]),
            nr::GETXATTR | nr::LGETXATTR | nr::FGETXATTR => (op::GET, a[2], a[3], 0),
            nr::LISTXATTR | nr::LLISTXATTR | nr::FLISTXATTR => (op::LIST, a[1], a[2], 0),
            _ => (op::REMOVE, 0, 0, 0),
        };
        let mut s = [0u8; 4096];
        let mut len = 0;
        if what != op::LIST {
            // The name: at most 255 bytes and a NUL (`XATTR_NAME_MAX`).
            let mut name = [0u8; NAME_MAX + 1];
            let k = match self.space.read_cstr(a[1], &mut name) {
                Ok(0) | Err(None) => return Err(ERANGE),
                Ok(k) => k,
                Err(Some(t)) => return Err(t.errno()),
            };
            s[..k].copy_from_slice(&name[..k]);
            len = k;
        }
        len += 1;
        let (base, mode) = match n {
            nr::FSETXATTR | nr::FGETXATTR | nr::FLISTXATTR | nr::FREMOVEXATTR => {
                (self.fid(a[0])?, op::BY_FID)
            }
            _ => {
                let nofollow = matches!(
                    n,
                    nr::LSETXATTR | nr::LGETXATTR | nr::LLISTXATTR | nr::LREMOVEXATTR
                );
                let mut b = [0u8; 4096];
                let path = self.path(a[0], &mut b)?;
                if path.is_empty() {
                    return Err(ENOENT);
                }
                if len + path.len() + 1 > s.len() {
                    return Err(ENAMETOOLONG);
                }
                s[len..len + path.len()].copy_from_slice(path);
                len += path.len() + 1;
                (
                    self.cwd as u64,
                    if nofollow { at::SYMLINK_NOFOLLOW } else { 0 },
                )
            }
        };
        match what {
            op::SET => {
                if size as usize > SIZE_MAX {
                    return Err(E2BIG);
                }
                // More than a file holds in all is ENOSPC, as unixd would
                // say (and could not fit a message).
                if size as usize > PER_FILE {
                    return Err(ENOSPC);
                }
                let size = size as usize;
                if len + size <= s.len() {
                    self.space
                        .read(value, &mut s[len..len + size])
                        .map_err(Touch::errno)?;
                    return ux(p::XATTR, [base, what | mode, flags, 0], &s[..len + size]).0;
                }
                // The path, the name and the value do not fit one
                // message: name the file by an `O_PATH` open of it.
                let k = s.iter().position(|&b| b == 0).unwrap_or(0);
                let path_at = k + 1;
                let mut path = [0u8; 4096];
                let pl = len - 1 - path_at;
                path[..pl].copy_from_slice(&s[path_at..len - 1]);
                let nofollow = if mode & at::SYMLINK_NOFOLLOW != 0 {
                    o::NOFOLLOW
                } else {
                    0
                };
                let (fid, _) = self.open_fid(base, &path[..pl], o::PATH | nofollow, 0)?;
                // By file: `name\0value`, which fits when the file could
                // hold it.
                let r = match s.get_mut(k + 1..k + 1 + size) {
                    None => Err(ENOSPC),
                    Some(v) => match self.space.read(value, v) {
                        Ok(()) => {
                            let m = &s[..k + 1 + size];
                            ux(p::XATTR, [fid, what | op::BY_FID, flags, 0], m).0
                        }
                        Err(t) => Err(t.errno()),
                    },
                };
                ux(p::CLOSE, [fid, 0, 0, 0], &[]).0?;
                r
            }
            op::REMOVE => ux(p::XATTR, [base, what | mode, 0, 0], &s[..len]).0,
            _ => {
                // `XATTR_SIZE_MAX` and `XATTR_LIST_MAX` are both 64 KiB;
                // no file holds more than a message.
                let want = size.min(SIZE_MAX as u64);
                let mut out = [0u8; 4096];
                let ans = Msg::new(crate::slots::UNIXD, p::XATTR)
                    .words([base, what | mode, want, 0])
                    .string(&s[..len])
                    .call_into(&mut out);
                let got = crate::fds::result(&ans).unwrap_or(Err(EIO))?;
                if want > 0 {
                    let data = out.get(..got as usize).ok_or(EIO)?;
                    self.space.write(value, data).map_err(Touch::errno)?;
                }
                Ok(got)
            }
        }
    }
}
