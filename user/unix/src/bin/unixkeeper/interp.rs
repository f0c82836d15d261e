//! A dynamically linked program's interpreter (`PT_INTERP`: glibc's
//! `ld-linux-x86-64.so.2`, musl's `ld-musl-x86_64.so.1`), loaded beside
//! the program as Linux's `binfmt_elf` does: opened (and its headers
//! checked) before the old image goes, so a missing or broken interpreter
//! is an `execve` error; then mapped privately from its file, as an
//! `mmap` of it would be, at the top of the `mmap` area, and started
//! instead of the program, with `AT_BASE` saying where it is and
//! `AT_ENTRY` where the program starts. Everything else — the shared
//! libraries, relocation, TLS — is the interpreter's own work through
//! ordinary system calls.

use crate::fds::{result, ux};
use crate::slots::{T3, UNIXD};
use crate::Keeper;
use stet_rt::abi::order::segment;
use stet_rt::key::Msg;
use stet_unix::elf::{self, Plan};
use stet_unix::layout::{PAGE, PIE_BASE};
use stet_unix::proto::{self, at, o};
use stet_unix::sys::errno::*;
use stet_unix::vm::{Backing, Vma};

/// An interpreter opened for `execve` (small: it lives in `execve`'s
/// frame while the start-up stack is built).
pub struct Interp {
    /// Its open file (a reference the space takes over once mapped).
    pub fid: u64,
    /// Its length.
    pub len: u64,
    /// Its span at `PIE_BASE`.
    pub extent: (u64, u64),
}

/// Opens the interpreter whose path is at `off` (`n` bytes) of the
/// executable (its segment key in `T3`).
#[inline(never)]
pub fn open(k: &Keeper, off: u64, n: u64) -> Result<Interp, i64> {
    let mut buf = [0u8; 4096];
    let n = n.min(buf.len() as u64) as usize;
    let r = Msg::new(T3, segment::READ)
        .words([off, n as u64, 0, 0])
        .call_into(&mut buf[..n]);
    if !r.ok() {
        return Err(ENOEXEC);
    }
    let path = elf::interp_path(&buf[..n]).map_err(|e| e.errno())?;
    let base = k.cwd as u64;
    // Linux opens it as it opens the program: it must be executable.
    ux(proto::ACCESS, [base, 1, at::EACCESS, 0], path).0?;
    let fid = ux(proto::OPEN, [base, o::RDONLY, 0, 0], path).0?;
    match read_head(fid) {
        Ok(i) => Ok(i),
        Err(e) => {
            crate::signals::tell_unixd(Msg::new(UNIXD, proto::CLOSE).w0(fid));
            Err(e)
        }
    }
}

/// Its length and its plan at `base`.
#[inline(never)]
fn plan_of(fid: u64, base: u64) -> Result<(u64, Plan), i64> {
    let mut st = [0u8; 144];
    let a = Msg::new(UNIXD, proto::FSTAT)
        .words([fid, 0, 0, 0])
        .call_into(&mut st);
    result(&a).unwrap_or(Err(EIO))?;
    let len = u64::from_le_bytes(st[48..56].try_into().unwrap_or_default());
    let mut head = [0u8; PAGE as usize];
    let hl = len.min(PAGE) as usize;
    let a = Msg::new(UNIXD, proto::PREAD)
        .words([fid, hl as u64, 0, 0])
        .call_into(&mut head[..hl]);
    let got = result(&a).unwrap_or(Err(EIO))? as usize;
    let plan = elf::plan_at(&head[..got.min(hl)], len, base).map_err(|e| e.errno())?;
    // An interpreter is position-independent and needs none of its own.
    if !plan.pie || plan.interp.is_some() {
        return Err(ELIBBAD);
    }
    Ok((len, plan))
}

fn read_head(fid: u64) -> Result<Interp, i64> {
    let (len, plan) = plan_of(fid, PIE_BASE)?;
    Ok(Interp {
        fid,
        len,
        extent: plan.extent(),
    })
}

impl Keeper {
    /// Maps interpreter `i` into the new image (whose map has the
    /// program) → its base (`AT_BASE`) and entry. Its file's reference
    /// goes to the space.
    pub fn map_interp(&mut self, i: &Interp) -> Result<(u64, u64), i64> {
        let (s, e) = i.extent;
        let base = self.space.map.place(0, e - s)?;
        // Its headers again, checked again (kept, they would fill the
        // frame that builds the start-up stack).
        let (_, p) = plan_of(i.fid, base)?;
        let file = self.space.add_file(i.fid as u32).ok_or(ENOMEM)?;
        for l in p.loads() {
            let (start, end) = l.span();
            // The file's pages up to its last byte (the page holding it
            // zeroed past it), anonymous memory (its bss) after.
            let file_end = l.file_end().next_multiple_of(PAGE).min(end);
            if file_end > start {
                self.space.map.insert(Vma {
                    start,
                    end: file_end,
                    prot: l.prot,
                    shared: false,
                    grows_down: false,
                    locked: false,
                    backing: Backing::File {
                        file,
                        offset: l.page_offset(),
                        zero_from: l.file_end(),
                    },
                })?;
            }
            if end > file_end.max(start) {
                self.space.map.insert(Vma {
                    start: file_end.max(start),
                    end,
                    prot: l.prot,
                    shared: false,
                    grows_down: false,
                    locked: false,
                    backing: Backing::Anon,
                })?;
            }
        }
        Ok((base, p.entry))
    }
}
