//! Core dumps: a process ended by a signal whose default action is
//! "Core" (`stet_unix::coredump::dumps`) while its `RLIMIT_CORE` is above
//! 0 leaves a file `core` in its working directory (as Linux's default
//! `core_pattern`), an ELF core file (`stet_unix::coredump`): the
//! `NT_PRSTATUS` note with its registers and every page it has, at most
//! `RLIMIT_CORE` bytes, and its status says so (`WCOREDUMP`, 0x80).

use crate::fds::ux;
use crate::slots::{PROC, UNIXD};
use crate::Keeper;
use stet_rt::abi::domain::Reg;
use stet_rt::abi::order::domain;
use stet_rt::key::Msg;
use stet_unix::coredump::{self, EHDR, NOTE, PHDR};
use stet_unix::layout::USER_END;
use stet_unix::proto::{self, o};
use stet_unix::sys::rlimit::RLIMIT_CORE;

/// At most this many runs of pages get a `PT_LOAD` each (the rest of a
/// larger process is left out).
const MAX_RUNS: usize = 512;

impl Keeper {
    /// Writes the core file for signal `sig` → whether it did (the
    /// status's 0x80).
    pub fn dump_core(&mut self, sig: u64) -> bool {
        let limit = self.rlimits[RLIMIT_CORE as usize][0];
        if limit == 0 || !coredump::dumps(sig) {
            return false;
        }
        // The runs of pages the process has: (first page, pages).
        let mut runs = [(0u64, 0u64); MAX_RUNS];
        let mut n = 0;
        self.space.tree.pages(0, USER_END / 4096, |p, _, _, _| {
            if n > 0 && runs[n - 1].0 + runs[n - 1].1 == p {
                runs[n - 1].1 += 1;
            } else if n < MAX_RUNS {
                runs[n] = (p, 1);
                n += 1;
            }
        });
        let runs = &runs[..n];
        let fid = match ux(
            proto::OPEN,
            [
                self.cwd as u64,
                o::WRONLY | o::CREAT | o::TRUNC | o::NOFOLLOW,
                0o600,
                0,
            ],
            b"core",
        )
        .0
        {
            Ok(f) => f,
            Err(_) => return false,
        };
        let ok = self.write_core(fid, sig, runs, limit);
        crate::signals::tell_unixd(Msg::new(UNIXD, proto::CLOSE).w0(fid));
        ok
    }

    fn write_core(&mut self, fid: u64, sig: u64, runs: &[(u64, u64)], limit: u64) -> bool {
        let put = |off: u64, b: &[u8]| -> bool {
            if off + b.len() as u64 > limit {
                return false;
            }
            matches!(ux(proto::PWRITE, [fid, off, 0, 0], b).0, Ok(w) if w == b.len() as u64)
        };
        let mut head = [0u8; 4096];
        let phnum = runs.len() + 1;
        let note_off = (EHDR + PHDR * phnum) as u64;
        let data_off = (note_off + NOTE as u64).next_multiple_of(4096);
        // The registers where it stopped, in `user_regs_struct`'s order.
        let mut b = [0u8; 160];
        Msg::new(PROC, domain::GET_REGS).call_into(&mut b);
        let r = crate::regs_of(&b);
        let g = |x: Reg| r[x as usize];
        let regs: [u64; 27] = [
            g(Reg::R15),
            g(Reg::R14),
            g(Reg::R13),
            g(Reg::R12),
            g(Reg::Rbp),
            g(Reg::Rbx),
            g(Reg::R11),
            g(Reg::R10),
            g(Reg::R9),
            g(Reg::R8),
            g(Reg::Rax),
            g(Reg::Rcx),
            g(Reg::Rdx),
            g(Reg::Rsi),
            g(Reg::Rdi),
            u64::MAX,
            g(Reg::Rip),
            0x33,
            g(Reg::Rflags),
            g(Reg::Rsp),
            0x2b,
            g(Reg::FsBase),
            g(Reg::GsBase),
            0,
            0,
            0,
            0,
        ];
        let pending = crate::signals::PENDING.load(core::sync::atomic::Ordering::Relaxed);
        let ids = [self.pid as u32, self.ppid as u32, 0, 0];
        let note = coredump::prstatus(sig, ids, pending, self.sigmask, &regs);
        // Headers, written a page at a time.
        let mut hdrs = [0u8; EHDR + PHDR * (MAX_RUNS + 1)];
        hdrs[..EHDR].copy_from_slice(&coredump::ehdr(phnum as u16));
        hdrs[EHDR..EHDR + PHDR].copy_from_slice(&coredump::phdr(4, 0, note_off, 0, NOTE as u64, 0));
        let mut off = data_off;
        for (i, &(p, k)) in runs.iter().enumerate() {
            let flags = match self.space.map.find(p * 4096) {
                Some(v) => {
                    (v.prot as u32 & 1) << 2 | (v.prot as u32 & 2) | (v.prot as u32 & 4) >> 2
                }
                None => 4,
            };
            let at = EHDR + PHDR * (i + 1);
            hdrs[at..at + PHDR].copy_from_slice(&coredump::phdr(
                1,
                flags,
                off,
                p * 4096,
                k * 4096,
                k * 4096,
            ));
            off += k * 4096;
        }
        let hlen = EHDR + PHDR * phnum;
        for (i, c) in hdrs[..hlen].chunks(4096).enumerate() {
            if !put(i as u64 * 4096, c) {
                return false;
            }
        }
        if !put(note_off, &note) {
            return false;
        }
        // The pages, as far as the limit allows (Linux cuts the file
        // there too).
        let mut off = data_off;
        for &(p, k) in runs {
            for j in 0..k {
                if off + 4096 > limit {
                    return true;
                }
                if self.space.read((p + j) * 4096, &mut head).is_err() || !put(off, &head) {
                    return false;
                }
                off += 4096;
            }
        }
        true
    }
}
