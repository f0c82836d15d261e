//! Locks of open file descriptions as a program asks for them: `fcntl`'s
//! `F_OFD_*` (a `struct flock`) and `flock`. (A process's record locks,
//! `F_GETLK`/`F_SETLK`/`F_SETLKW`, are `locks`'.) unixd keeps them (`FLOCK`); a wait is parked there, asked
//! again when the file's locks change, and ended by a signal (`EINTR`).

use crate::fds::result;
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::abi::code::Code;
use stet_rt::key::Msg;
use stet_unix::proto::{self, flock as op};
use stet_unix::sys::errno::*;

type R = Result<u64, i64>;

/// `fcntl`'s lock commands.
pub const F_GETLK: u64 = 5;
/// See [`F_GETLK`].
pub const F_SETLK: u64 = 6;
/// See [`F_GETLK`].
pub const F_SETLKW: u64 = 7;
/// See [`F_GETLK`].
pub const F_OFD_GETLK: u64 = 36;
/// See [`F_GETLK`].
pub const F_OFD_SETLK: u64 = 37;
/// See [`F_GETLK`].
pub const F_OFD_SETLKW: u64 = 38;

impl Keeper {
    /// `fcntl(fd, F_OFD_*LK*, &flock)`.
    pub fn ofd_lock(&mut self, fid: u64, cmd: u64, arg: u64) -> R {
        let mut b = [0u8; 32];
        self.space.read(arg, &mut b).map_err(Touch::errno)?;
        let ty = i16::from_le_bytes([b[0], b[1]]);
        let whence = i16::from_le_bytes([b[2], b[3]]);
        let pid = i32::from_le_bytes(b[24..28].try_into().unwrap_or_default());
        if !(0..=2).contains(&ty) || !(0..=2).contains(&whence) {
            return Err(EINVAL);
        }
        let what = match cmd {
            F_GETLK => op::GETLK,
            F_SETLK => op::SETLK,
            F_SETLKW => op::SETLKW,
            F_OFD_GETLK => op::OFD_GETLK,
            F_OFD_SETLK => op::OFD_SETLK,
            _ => op::OFD_SETLKW,
        };
        // OFD locks: l_pid must be 0.
        if what >= op::OFD_GETLK && pid != 0 {
            return Err(EINVAL);
        }
        let w2 = ty as u64 | (whence as u64) << 8;
        let mut out = [0u8; 32];
        let r = self.lock_call(fid, what, w2, &b[8..24], &mut out)?;
        if what == op::GETLK || what == op::OFD_GETLK {
            let get =
                |k: usize| i64::from_le_bytes(out[k * 8..k * 8 + 8].try_into().unwrap_or_default());
            let mut f = [0u8; 32];
            f[..2].copy_from_slice(&(get(0) as i16).to_le_bytes());
            f[2..4].copy_from_slice(&0i16.to_le_bytes());
            f[8..16].copy_from_slice(&get(1).to_le_bytes());
            f[16..24].copy_from_slice(&get(2).to_le_bytes());
            f[24..28].copy_from_slice(&(get(3) as i32).to_le_bytes());
            if get(0) == 2 {
                // No conflict: only the type changes (Linux).
                self.space.write(arg, &f[..2]).map_err(Touch::errno)?;
            } else {
                self.space.write(arg, &f).map_err(Touch::errno)?;
            }
        }
        Ok(r)
    }

    /// `flock(fd, operation)`.
    pub fn flock(&mut self, fd: u64, operation: u64) -> R {
        const LOCK_SH: u64 = 1;
        const LOCK_EX: u64 = 2;
        const LOCK_NB: u64 = 4;
        const LOCK_UN: u64 = 8;
        let fid = self.fid(fd)?;
        let ty = match operation & !LOCK_NB {
            LOCK_SH => 0,
            LOCK_EX => 1,
            LOCK_UN => 2,
            _ => return Err(EINVAL),
        };
        let nb = if operation & LOCK_NB != 0 {
            op::NONBLOCK
        } else {
            0
        };
        let mut out = [0u8; 32];
        self.lock_call(fid, op::FLOCK, ty | nb, &[0u8; 16], &mut out)
    }

    /// One `LOCK` call, asked again while unixd says `BUSY` (a waiting
    /// lock whose file's locks changed), until a signal ends the wait.
    fn lock_call(&mut self, fid: u64, what: u64, w2: u64, range: &[u8], out: &mut [u8; 32]) -> R {
        loop {
            if self.interrupted() {
                return Err(EINTR);
            }
            let intr = self.interrupting();
            let a = Msg::new(UNIXD, self.tagged(proto::FLOCK))
                .words([fid, what, w2, intr])
                .string(range)
                .call_into(out);
            if a.code == Code::Busy {
                continue;
            }
            return result(&a).unwrap_or(Err(EIO));
        }
    }
}
