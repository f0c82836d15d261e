//! `statfs` and `fstatfs` (`proto::STATFS`): which file system a file is
//! on and how full it is. The root file system (`tmpfs`'s number) has the
//! space the `FILES` bank may still give (`limits`): blocks are pages,
//! free ones the bank's limit less its pages in use (and no more than the
//! space bank has), those available to the caller no more than its own
//! share of the file space left. Inodes live in unixd's heap, bounded by
//! memory rather than a table: free ones are how many more an inode and
//! its name (112 bytes) the space bank's free pages would hold. `/proc`
//! (`proc`'s number) has no blocks, like Linux's; a pipe is `pipefs`'s.

use crate::open::Kind;
use crate::slots::{BANK, FILES};
use crate::{Reply, Unixd};
use stet_rt::bank;
use stet_rt::key::Answer;
use stet_unix::fs::ROOT;
use stet_unix::procgen::Statfs;
use stet_unix::sys::statfs::SIZE;

/// Heap bytes an inode and its name take (`stet_unixfs`'s sizes).
const INODE_BYTES: u64 = 112;

impl Unixd<'_> {
    /// `STATFS`: of the path `s` relative to fid `w0`, or of fid `w0`
    /// when `s` is empty.
    pub(crate) fn statfs_order(
        &mut self,
        a: &Answer,
        s: &[u8],
        out: &mut [u8; 4096],
    ) -> Result<Reply, i64> {
        // The walk checks the caller's search permission.
        self.act_as_caller();
        let st = if s.is_empty() {
            let f = self.fid(a.w[0])?;
            match self.open[f].kind {
                Kind::PipeRead(n) | Kind::PipeWrite(n) | Kind::PipeBoth(n)
                    if self.pipes[n as usize].fifo == 0 =>
                {
                    Statfs::pipe()
                }
                Kind::Inode(ino) if self.in_proc(ino, None) => Statfs::proc(),
                // Device nodes are in the root file system's `/dev`.
                _ => self.root_statfs(),
            }
        } else {
            let dir = self.base(a.w[0])?;
            let ino = self.resolve_seeing_proc(dir, s, true)?;
            // The directory holding the name, when the name is the file
            // itself (not a symbolic link followed elsewhere).
            let holder = self
                .fs
                .parent(dir, s)
                .ok()
                .filter(|p| self.fs.lookup(p.dir, p.name) == Some(ino))
                .map(|p| p.dir);
            if self.in_proc(ino, holder) {
                Statfs::proc()
            } else {
                self.root_statfs()
            }
        };
        out[..SIZE].copy_from_slice(&st.bytes());
        Ok(Reply::Now([0, 0, 0], SIZE, false))
    }

    /// Whether inode `ino` (in directory `holder`, if known) is in
    /// `/proc`: a generated file, or a directory (or a file of one) whose
    /// parents lead to `/proc` before the root.
    pub(crate) fn in_proc(&self, ino: u32, holder: Option<u32>) -> bool {
        if self.gen_of(ino).is_some() {
            return true;
        }
        let Some(proc) = self.proc_root() else {
            return false;
        };
        let mut at = match holder {
            _ if self.fs.is_dir(ino) => ino,
            Some(h) => h,
            None => return false,
        };
        // A directory's `aux` is its parent; the root's is itself.
        for _ in 0..stet_unix::fs::MAX_PATH {
            if at == proc {
                return true;
            }
            match self.fs.inode(at) {
                Some(i) if at != ROOT => at = i.aux,
                _ => return false,
            }
        }
        false
    }

    /// The root file system's figures, as the caller sees them.
    fn root_statfs(&self) -> Statfs {
        // The space bank: pages it can still give anyone.
        let bank_free = match bank::capacity(BANK) {
            Ok([pages, _, used, _]) => pages.saturating_sub(used),
            Err(_) => 0,
        };
        let (blocks, used) = match bank::info(FILES) {
            Ok([used, _, limit, _]) if limit != u64::MAX => (limit, used),
            Ok([used, ..]) => (used + bank_free, used),
            Err(_) => (0, 0),
        };
        let bfree = blocks.saturating_sub(used).min(bank_free);
        // The caller's share of the file space (`limits`).
        let share = self.files_limit / 100 * self.file_share;
        let bavail = match self
            .procs
            .iter()
            .find(|p| p.pid == self.caller && p.pid != 0)
        {
            Some(p) => share.saturating_sub(p.file_pages),
            None => bfree,
        };
        let ffree = bank_free.saturating_mul(4096) / INODE_BYTES;
        let files = (self.fs.inodes_in_use() as u64).saturating_add(ffree);
        Statfs::root(blocks, bfree, bavail, files, ffree)
    }
}
