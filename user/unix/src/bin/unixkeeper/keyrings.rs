//! The key retention calls: `add_key`, `request_key` and `keyctl`. The
//! keeper checks and copies what the process passes, in Linux's order —
//! the type name (`EFAULT`, `EINVAL` empty or 32 bytes and more, `EPERM`
//! beginning with a dot), the description (`EFAULT`, `EINVAL` past 4095
//! bytes), the payload (`EINVAL` past its limit, `EFAULT`) — and unixd
//! keeps the keys and applies the rest (`proto::KEYCTL`,
//! `stet_unixfs::keyrings`). The operations that need a request-key
//! authorisation key (`INSTANTIATE`, `NEGATE`, `REJECT`) are `EPERM`:
//! nothing ever constructs a key, so no process holds one.

use crate::fds::{result, ux};
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::key::Msg;
use stet_unix::keyctl::{
    op, ADD_PAYLOAD_MAX, DESC_MAX, TYPE_MAX, UPDATE_PAYLOAD_MAX, USER_PAYLOAD_MAX,
};
use stet_unix::proto as p;
use stet_unix::sys::errno::*;
use stet_unix::sys::nr;

type R = Result<u64, i64>;

/// The most bytes one message carries.
const PIECE: usize = 4096;
/// `MAX_ERRNO`: `KEYCTL_REJECT`'s error must be below.
const MAX_ERRNO: u64 = 4095;

impl Keeper {
    /// `add_key`, `request_key` or `keyctl` (`n`) with arguments `a`.
    pub fn keys_call(&mut self, n: u64, a: &[u64; 6]) -> R {
        match n {
            nr::ADD_KEY => self.add_key(a),
            nr::REQUEST_KEY => self.request_key(a),
            _ => self.keyctl(a),
        }
    }

    /// An order to unixd for the current thread.
    fn key_order(&self, what: u64, w: [u64; 3], s: &[u8]) -> R {
        ux(p::KEYCTL, [what | self.tid() << 32, w[0], w[1], w[2]], s).0
    }

    /// Stages `bytes` as the next order's payload (`which` 0) or
    /// description (1).
    fn key_stage(&self, which: u64, at: usize, bytes: &[u8]) -> Result<(), i64> {
        ux(p::KEY_STAGE, [which, at as u64, 0, 0], bytes)
            .0
            .map(|_| ())
    }

    /// A type name from the process (`key_get_type_from_user`).
    fn key_type(&mut self, at: u64, buf: &mut [u8; TYPE_MAX]) -> Result<usize, i64> {
        match self.space.read_cstr(at, buf) {
            Ok(0) | Err(None) => Err(EINVAL),
            Ok(_) if buf[0] == b'.' => Err(EPERM),
            Ok(k) => Ok(k),
            Err(Some(t)) => Err(t.errno()),
        }
    }

    /// A NUL-ended string of at most `buf.len()` bytes with its NUL
    /// (`strndup_user`): `EFAULT`, `EINVAL` when longer.
    fn key_string(&mut self, at: u64, buf: &mut [u8]) -> Result<usize, i64> {
        match self.space.read_cstr(at, buf) {
            Ok(k) => Ok(k),
            Err(None) => Err(EINVAL),
            Err(Some(t)) => Err(t.errno()),
        }
    }

    /// A description from the process, staged for the next order → its
    /// length.
    fn key_desc(&mut self, at: u64) -> Result<usize, i64> {
        let mut d = [0u8; DESC_MAX];
        let n = self.key_string(at, &mut d)?;
        self.key_stage(1, 0, &d[..n])?;
        Ok(n)
    }

    fn add_key(&mut self, a: &[u64; 6]) -> R {
        let (payload, plen) = (a[2], a[3]);
        if plen > ADD_PAYLOAD_MAX as u64 {
            return Err(EINVAL);
        }
        let plen = plen as usize;
        let mut t = [0u8; TYPE_MAX];
        let tl = self.key_type(a[0], &mut t)?;
        let mut d = [0u8; DESC_MAX];
        let dl = if a[1] != 0 {
            self.key_string(a[1], &mut d)?
        } else {
            0
        };
        if dl > 0 && d[0] == b'.' && t[..tl].starts_with(b"keyring") {
            return Err(EPERM);
        }
        // The payload is read all (`EFAULT`), and staged when a type
        // could take it.
        let stage = plen <= USER_PAYLOAD_MAX;
        let mut buf = [0u8; PIECE];
        let mut at = 0;
        if stage {
            self.key_stage(0, 0, &[])?;
        }
        while at < plen {
            let k = (plen - at).min(PIECE);
            let from = payload.checked_add(at as u64).ok_or(EFAULT)?;
            self.space.read(from, &mut buf[..k]).map_err(Touch::errno)?;
            if stage {
                self.key_stage(0, at, &buf[..k])?;
            }
            at += k;
        }
        self.key_stage(1, 0, &d[..dl])?;
        let w = [a[4] as i32 as u64, plen as u64, (dl > 0) as u64];
        self.key_order(op::ADD_KEY, w, &t[..tl])
    }

    fn request_key(&mut self, a: &[u64; 6]) -> R {
        let mut t = [0u8; TYPE_MAX];
        let tl = self.key_type(a[0], &mut t)?;
        self.key_desc(a[1])?;
        if a[2] != 0 {
            let mut c = [0u8; PIECE];
            self.key_string(a[2], &mut c)?;
        }
        let w = [a[3] as i32 as u64, (a[2] != 0) as u64, 0];
        self.key_order(op::REQUEST_KEY, w, &t[..tl])
    }

    /// `DESCRIBE`, `READ`, `GET_SECURITY` of key `id` into `buf` of
    /// `len` bytes: the whole length; the bytes only when they all fit
    /// (Linux's `keyctl_read_key` copies nothing into a short buffer).
    fn key_read(&mut self, what: u64, id: u64, buf: u64, len: u64) -> R {
        let mut piece = [0u8; PIECE];
        let tid = self.tid();
        let ask = |at: usize, piece: &mut [u8; PIECE]| -> Result<(usize, usize), i64> {
            let a = Msg::new(UNIXD, p::KEYCTL)
                .words([what | tid << 32, id, at as u64, 0])
                .call_into(piece);
            let n = result(&a).unwrap_or(Err(EIO))? as usize;
            Ok((n, a.len.min(PIECE)))
        };
        let (n, got) = ask(0, &mut piece)?;
        if buf == 0 || len < n as u64 {
            return Ok(n as u64);
        }
        let mut at = 0;
        let mut got = got;
        while at < n {
            let k = got.min(n - at);
            if k == 0 {
                return Err(EIO);
            }
            let to = buf.checked_add(at as u64).ok_or(EFAULT)?;
            self.space.write(to, &piece[..k]).map_err(Touch::errno)?;
            at += k;
            if at < n {
                let (n2, g) = ask(at, &mut piece)?;
                if n2 != n {
                    return Err(EAGAIN);
                }
                got = g;
            }
        }
        Ok(n as u64)
    }

    fn keyctl(&mut self, a: &[u64; 6]) -> R {
        let id = a[1] as i32 as u64;
        match a[0] {
            op::GET_KEYRING_ID => self.key_order(a[0], [id, (a[2] != 0) as u64, 0], &[]),
            op::JOIN_SESSION_KEYRING => {
                let named = a[1] != 0;
                if named {
                    let mut d = [0u8; DESC_MAX];
                    let n = self.key_string(a[1], &mut d)?;
                    if d[..n].first() == Some(&b'.') {
                        return Err(EPERM);
                    }
                    self.key_stage(1, 0, &d[..n])?;
                }
                self.key_order(a[0], [named as u64, 0, 0], &[])
            }
            op::UPDATE => {
                if a[3] > UPDATE_PAYLOAD_MAX as u64 {
                    return Err(EINVAL);
                }
                let mut b = [0u8; UPDATE_PAYLOAD_MAX];
                let n = a[3] as usize;
                if n > 0 {
                    self.space.read(a[2], &mut b[..n]).map_err(Touch::errno)?;
                }
                self.key_order(a[0], [id, n as u64, 0], &b[..n])
            }
            op::REVOKE
            | op::CLEAR
            | op::INVALIDATE
            | op::SESSION_TO_PARENT
            | op::SET_REQKEY_KEYRING => self.key_order(a[0], [id, 0, 0], &[]),
            op::CHOWN => self.key_order(a[0], [id, a[2] as u32 as u64, a[3] as u32 as u64], &[]),
            op::SETPERM | op::SET_TIMEOUT => self.key_order(a[0], [id, a[2] as u32 as u64, 0], &[]),
            op::LINK | op::UNLINK => self.key_order(a[0], [id, a[2] as i32 as u64, 0], &[]),
            op::DESCRIBE | op::READ | op::GET_SECURITY => self.key_read(a[0], id, a[2], a[3]),
            op::SEARCH => {
                let mut t = [0u8; TYPE_MAX];
                let tl = self.key_type(a[2], &mut t)?;
                self.key_desc(a[3])?;
                self.key_order(a[0], [id, a[4] as i32 as u64, 0], &t[..tl])
            }
            op::INSTANTIATE | op::INSTANTIATE_IOV => {
                if a[0] == op::INSTANTIATE && a[3] > ADD_PAYLOAD_MAX as u64 {
                    return Err(EINVAL);
                }
                Err(EPERM)
            }
            op::REJECT => {
                let e = a[3] as u32 as u64;
                if e == 0 || e >= MAX_ERRNO || (512..=516).contains(&e) {
                    return Err(EINVAL);
                }
                Err(EPERM)
            }
            op::NEGATE => Err(EPERM),
            op::ASSUME_AUTHORITY => match a[1] as i32 {
                i if i < 0 => Err(EINVAL),
                0 => Ok(0),
                _ => Err(ENOKEY),
            },
            // No persistent keyrings (`CONFIG_PERSISTENT_KEYRINGS`), no
            // Diffie-Hellman, public keys, restrictions, moves,
            // notifications.
            _ => Err(EOPNOTSUPP),
        }
    }
}
