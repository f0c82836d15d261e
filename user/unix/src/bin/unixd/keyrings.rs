//! The key retention service (`proto::KEYCTL`, `proto::KEY_STAGE`): unixd
//! keeps every key (`stet_unixfs::keyrings`, which has Linux's rules);
//! here the caller's ids and the clock are found, staged descriptions and
//! payloads taken, and answers that may be longer than a message given a
//! piece at a time. Processes' keyrings follow `fork` (`procs`), `execve`
//! (`PROCINFO`), a thread's end (`TID`) and the process's end (`EXIT`).

use crate::{now_ns, Reply, Unixd};
use alloc::vec::Vec;
use stet_rt::key::Answer;
use stet_unix::cred::cap;
use stet_unix::keyctl::op;
use stet_unix::proto as p;
use stet_unix::sys::errno::*;
use stet_unixfs::keyrings::Caller;

/// The most bytes one answer carries.
const PIECE: usize = 4096;

impl Unixd<'_> {
    /// `/proc/keys` as the caller sees it (`keys`), or `/proc/key-users`.
    pub(crate) fn keys_text(&self, keys: bool) -> alloc::string::String {
        let mut t = alloc::string::String::new();
        if !keys {
            let _ = self.keyring.proc_key_users_text(&mut t);
            return t;
        }
        let Some(p) = self
            .procs
            .iter()
            .find(|p| p.pid == self.caller && p.pid != 0)
        else {
            return t;
        };
        let cred = p.cred;
        let ng = (cred.ngroups as usize).min(cred.groups.len());
        let c = Caller {
            pid: p.pid,
            tid: p.pid,
            ruid: cred.uid[0],
            fsuid: cred.uid[3],
            fsgid: cred.gid[3],
            groups: &cred.groups[..ng],
            admin: cred.capable(cap::SYS_ADMIN),
            now: now_ns(),
        };
        let _ = self.keyring.proc_keys_text(&c, &mut t);
        t
    }

    /// `KEYCTL` and `KEY_STAGE`.
    pub(crate) fn key_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        let pid = a.label;
        let i = self.proc_of(pid)?;
        if a.code == p::KEY_STAGE {
            let which = (a.w[0] != 0) as u8;
            let at = usize::try_from(a.w[1]).map_err(|_| EINVAL)?;
            self.keyring.stage(pid, which, at, s)?;
            return Ok(Reply::Now([0, 0, 0], 0, false));
        }
        let cred = self.procs[i].cred;
        let groups = cred.groups;
        let ng = (cred.ngroups as usize).min(groups.len());
        let c = Caller {
            pid,
            tid: match (a.w[0] >> 32) as u32 {
                0 => pid,
                t => t,
            },
            ruid: cred.uid[0],
            fsuid: cred.uid[3],
            fsgid: cred.gid[3],
            groups: &groups[..ng],
            admin: cred.capable(cap::SYS_ADMIN),
            now: now_ns(),
        };
        let w = a.w;
        let id = w[1] as i32;
        let k = &mut self.keyring;
        let n = |r: Result<i32, i64>| r.map(|v| v as u64);
        let z = |r: Result<(), i64>| r.map(|_| 0u64);
        let r = match w[0] & 0xffff_ffff {
            op::ADD_KEY => {
                let payload = k.take_stage(pid, 0);
                let desc = k.take_stage(pid, 1);
                let plen = w[2] as usize;
                let payload: &[u8] = if plen <= payload.len() { &payload } else { &[] };
                let d = if w[3] & 1 != 0 { Some(&desc[..]) } else { None };
                n(k.add_key(&c, s, d, payload, plen, id))
            }
            op::REQUEST_KEY => {
                let desc = k.take_stage(pid, 1);
                n(k.request_key(&c, s, &desc, w[2] != 0, id))
            }
            op::GET_KEYRING_ID => n(k
                .lookup(&c, id, w[2] != 0, stet_unixfs::keyrings::Check::Any, 0)
                .map(|r| r.0)),
            op::JOIN_SESSION_KEYRING => {
                let desc = k.take_stage(pid, 1);
                let name = if w[1] != 0 { Some(&desc[..]) } else { None };
                n(k.join_session(&c, name))
            }
            op::UPDATE => z(k.update(&c, id, s)),
            op::REVOKE => z(k.revoke(&c, id)),
            op::CHOWN => z(k.chown(&c, id, w[2] as u32, w[3] as u32)),
            op::SETPERM => z(k.setperm(&c, id, w[2] as u32)),
            op::CLEAR => z(k.clear(&c, id)),
            op::LINK => z(k.link(&c, id, w[2] as i32)),
            op::UNLINK => z(k.unlink(&c, id, w[2] as i32)),
            op::SEARCH => {
                let desc = k.take_stage(pid, 1);
                n(k.search_ring(&c, id, s, &desc, w[2] as i32))
            }
            op::SET_REQKEY_KEYRING => n(k.set_reqkey(&c, id)),
            op::SET_TIMEOUT => z(k.set_timeout(&c, id, w[2] as u32)),
            op::INVALIDATE => z(k.invalidate(&c, id)),
            op::SESSION_TO_PARENT => {
                let ppid = self.procs[i].ppid;
                let pcred = self
                    .procs
                    .iter()
                    .find(|q| q.pid == ppid && ppid != 0 && !q.zombie)
                    .map(|q| q.cred);
                match pcred {
                    // Init's session is not another process's to set.
                    Some(pc) if ppid != 1 => {
                        let u = [pc.uid[0], pc.uid[1], pc.uid[2]];
                        z(self.keyring.session_to_parent(&c, ppid, u))
                    }
                    _ => Err(EPERM),
                }
            }
            what @ (op::DESCRIBE | op::READ | op::GET_SECURITY) => {
                let mut v = Vec::new();
                match what {
                    op::DESCRIBE => k.describe(&c, id, &mut v)?,
                    op::READ => k.read(&c, id, &mut v)?,
                    _ => k.get_security(&c, id, &mut v)?,
                }
                let at = (w[2] as usize).min(v.len());
                let m = (v.len() - at).min(PIECE);
                out[..m].copy_from_slice(&v[at..at + m]);
                return Ok(Reply::Now([v.len() as u64, 0, 0], m, false));
            }
            _ => Err(EOPNOTSUPP),
        };
        Ok(Reply::Now([stet_unix::sys::ret(r), 0, 0], 0, false))
    }
}
