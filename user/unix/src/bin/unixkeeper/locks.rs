//! `fcntl`'s record locks (`F_GETLK`, `F_SETLK`, `F_SETLKW`): the keeper
//! reads the process's `struct flock` and hands it to unixd (`LOCK`),
//! which keeps every process's locks; `F_GETLK`'s answer is written back.
//! An `F_SETLKW` that must wait is parked in unixd and asks again when a
//! lock of the file changes; a thread's wait does not hold the keeper
//! (`tagged`), and a signal ends it with `EINTR` (restarted under
//! `SA_RESTART`, as on Linux).

use crate::fds::result;
use crate::slots::UNIXD;
use crate::space::Touch;
use crate::Keeper;
use stet_rt::key::Msg;
use stet_unix::proto as p;
use stet_unix::sys::errno::*;
use stet_unix::sys::fcntl::{F_GETLK, F_SETLKW};
use stet_unix::sys::flock as fl;

impl Keeper {
    /// `fcntl(fd, cmd, lock)` for the three record-lock commands.
    pub fn record_lock(&mut self, fd: u64, cmd: u64, lock: u64) -> Result<u64, i64> {
        let fid = self.fid(fd)?;
        let mut b = [0u8; fl::SIZE];
        self.space.read(lock, &mut b).map_err(Touch::errno)?;
        let order = if cmd == F_SETLKW {
            self.tagged(p::LOCK)
        } else {
            p::LOCK
        };
        let intr = self.interrupting();
        let mut back = [0u8; fl::SIZE];
        let r = loop {
            if cmd == F_SETLKW && self.interrupted() {
                break Err(EINTR);
            }
            let a = Msg::new(UNIXD, order)
                .words([fid, cmd, 0, intr])
                .string(&b)
                .call_into(&mut back);
            if let Some(r) = result(&a) {
                break r;
            }
        };
        if cmd == F_GETLK && r.is_ok() {
            self.space.write(lock, &back).map_err(Touch::errno)?;
        }
        r
    }
}
