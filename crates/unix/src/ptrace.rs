//! `ptrace(2)`'s ABI as Stet's UNIX personality serves it: the requests,
//! the options, `struct user_regs_struct` to and from the register block
//! a keeper holds, and the offsets of `struct user` (`PTRACE_PEEKUSER`,
//! `PTRACE_POKEUSER`). Pure logic, host-tested; the keeper and unixd use
//! it (docs/UNIX.md, "Tracing").

/// Requests (`<sys/ptrace.h>`).
#[allow(missing_docs)]
pub mod req {
    pub const TRACEME: u64 = 0;
    pub const PEEKTEXT: u64 = 1;
    pub const PEEKDATA: u64 = 2;
    pub const PEEKUSER: u64 = 3;
    pub const POKETEXT: u64 = 4;
    pub const POKEDATA: u64 = 5;
    pub const POKEUSER: u64 = 6;
    pub const CONT: u64 = 7;
    pub const KILL: u64 = 8;
    pub const SINGLESTEP: u64 = 9;
    pub const GETREGS: u64 = 12;
    pub const SETREGS: u64 = 13;
    pub const ATTACH: u64 = 16;
    pub const DETACH: u64 = 17;
    pub const SYSCALL: u64 = 24;
    pub const SETOPTIONS: u64 = 0x4200;
    pub const GETEVENTMSG: u64 = 0x4201;
    pub const GETSIGINFO: u64 = 0x4202;
    pub const SETSIGINFO: u64 = 0x4203;
    pub const SEIZE: u64 = 0x4206;
}

/// Options (`PTRACE_SETOPTIONS`, `PTRACE_SEIZE`'s data).
pub mod opt {
    /// Syscall stops report `SIGTRAP | 0x80`.
    pub const TRACESYSGOOD: u64 = 1;
    /// A stop at `execve` reports `PTRACE_EVENT_EXEC`.
    pub const TRACEEXEC: u64 = 0x10;
    /// The tracee is killed when its tracer ends.
    pub const EXITKILL: u64 = 0x10_0000;
    /// Every option Linux knows (others: `EINVAL`).
    pub const LINUX_MASK: u64 = 0x3000ff;
    /// The options served (a known one not served is `EINVAL` too: a
    /// tracer must not believe it gets events that never come).
    pub const SERVED: u64 = TRACESYSGOOD | TRACEEXEC | EXITKILL;
}

/// `PTRACE_EVENT_EXEC` (status `SIGTRAP | EVENT_EXEC << 8`).
pub const EVENT_EXEC: u64 = 4;

/// Words of `struct user_regs_struct`.
pub const NUSER_REGS: usize = 27;
/// Its bytes.
pub const USER_REGS_SIZE: usize = NUSER_REGS * 8;
/// `sizeof(struct user)` on x86_64.
pub const USER_SIZE: u64 = 912;
/// `offsetof(struct user, u_debugreg)`.
pub const DEBUGREG: u64 = 848;
/// `struct user_regs_struct`'s words, by name.
#[allow(missing_docs)]
pub mod ur {
    pub const R15: usize = 0;
    pub const R14: usize = 1;
    pub const R13: usize = 2;
    pub const R12: usize = 3;
    pub const RBP: usize = 4;
    pub const RBX: usize = 5;
    pub const R11: usize = 6;
    pub const R10: usize = 7;
    pub const R9: usize = 8;
    pub const R8: usize = 9;
    pub const RAX: usize = 10;
    pub const RCX: usize = 11;
    pub const RDX: usize = 12;
    pub const RSI: usize = 13;
    pub const RDI: usize = 14;
    pub const ORIG_RAX: usize = 15;
    pub const RIP: usize = 16;
    pub const CS: usize = 17;
    pub const EFLAGS: usize = 18;
    pub const RSP: usize = 19;
    pub const SS: usize = 20;
    pub const FS_BASE: usize = 21;
    pub const GS_BASE: usize = 22;
    pub const DS: usize = 23;
    pub const ES: usize = 24;
    pub const FS: usize = 25;
    pub const GS: usize = 26;
}

/// The register block's words (Stet's order: rax rbx rcx rdx rsi rdi rbp
/// rsp r8–r15 rip rflags fs_base gs_base) as `user_regs_struct` indices.
const BLOCK_TO_USER: [usize; 20] = [
    ur::RAX,
    ur::RBX,
    ur::RCX,
    ur::RDX,
    ur::RSI,
    ur::RDI,
    ur::RBP,
    ur::RSP,
    ur::R8,
    ur::R9,
    ur::R10,
    ur::R11,
    ur::R12,
    ur::R13,
    ur::R14,
    ur::R15,
    ur::RIP,
    ur::EFLAGS,
    ur::FS_BASE,
    ur::GS_BASE,
];

/// The user code and stack selectors every process runs with.
pub const USER_CS: u64 = 0x33;
/// (`ss`).
pub const USER_SS: u64 = 0x2b;
/// Linux's `TASK_SIZE_MAX`: no base register may point above it.
pub const TASK_SIZE_MAX: u64 = (1 << 47) - 4096;
/// The `rflags` bits a process may change (CF PF AF ZF SF TF DF OF, AC,
/// ID: the kernel's `USER_RFLAGS`).
pub const USER_RFLAGS: u64 = 0x0024_0dd5;

/// The register block `r` as `user_regs_struct`, with `orig_rax` (the
/// system call's number in a syscall stop, else `u64::MAX`).
pub fn to_user(r: &[u64; 20], orig_rax: u64) -> [u64; NUSER_REGS] {
    let mut u = [0u64; NUSER_REGS];
    for (i, &to) in BLOCK_TO_USER.iter().enumerate() {
        u[to] = r[i];
    }
    u[ur::ORIG_RAX] = orig_rax;
    u[ur::CS] = USER_CS;
    u[ur::SS] = USER_SS;
    u
}

/// Whether `v` may be written to word `i` of `user_regs_struct` (Linux's
/// `putreg`: a selector must be a user one, a base below
/// [`TASK_SIZE_MAX`]); else `EIO`.
pub fn reg_ok(i: usize, v: u64) -> bool {
    match i {
        ur::CS | ur::SS => v & 3 == 3 && v <= 0xffff,
        ur::DS | ur::ES | ur::FS | ur::GS => v == 0 || (v & 3 == 3 && v <= 0xffff),
        ur::FS_BASE | ur::GS_BASE => v < TASK_SIZE_MAX,
        _ => i < NUSER_REGS,
    }
}

/// `user_regs_struct` `u` into the register block `r` (the selectors are
/// checked and not kept: every process runs with the same; `rflags`
/// changes only in [`USER_RFLAGS`]) → `orig_rax`, or `Err(EIO)` for a
/// word [`reg_ok`] refuses.
pub fn from_user(u: &[u64; NUSER_REGS], r: &mut [u64; 20]) -> Result<u64, i64> {
    if !(0..NUSER_REGS).all(|i| reg_ok(i, u[i])) {
        return Err(crate::sys::errno::EIO);
    }
    for (i, &from) in BLOCK_TO_USER.iter().enumerate() {
        r[i] = if from == ur::EFLAGS {
            (r[i] & !USER_RFLAGS) | (u[from] & USER_RFLAGS)
        } else {
            u[from]
        };
    }
    Ok(u[ur::ORIG_RAX])
}

/// A word of `struct user` named by a `PEEKUSER`/`POKEUSER` offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserWord {
    /// A word of `user_regs_struct`.
    Reg(usize),
    /// Debug register `n` (`u_debugreg[n]`).
    Debug(usize),
    /// Any other word: reads 0, a write is `EIO` (Linux).
    Other,
}

/// The word at offset `off` of `struct user`: `Err(EIO)` when it is not
/// 8-aligned or past the structure.
pub fn user_word(off: u64) -> Result<UserWord, i64> {
    if !off.is_multiple_of(8) || off >= USER_SIZE {
        return Err(crate::sys::errno::EIO);
    }
    if off < USER_REGS_SIZE as u64 {
        return Ok(UserWord::Reg(off as usize / 8));
    }
    if off >= DEBUGREG {
        return Ok(UserWord::Debug((off - DEBUGREG) as usize / 8));
    }
    Ok(UserWord::Other)
}

/// Whether `v` may be written to debug register `n` (Linux's
/// `ptrace_set_debugreg`): `dr0`–`dr3` hold user addresses, `dr4` and
/// `dr5` do not exist, `dr7`'s enabled breakpoints need a length of 1, 2,
/// 4 or 8 bytes, aligned, and no I/O breakpoints; else the errno.
pub fn debugreg_ok(n: usize, v: u64, dr: &[u64; 8]) -> Result<(), i64> {
    use crate::sys::errno::{EINVAL, EIO};
    match n {
        0..=3 => {
            if v >= TASK_SIZE_MAX {
                return Err(EINVAL);
            }
            Ok(())
        }
        6 => Ok(()),
        7 => {
            for (b, &addr) in dr.iter().enumerate().take(4) {
                if v & (3 << (2 * b)) == 0 {
                    continue;
                }
                let rw = (v >> (16 + 4 * b)) & 3;
                let len = match (v >> (18 + 4 * b)) & 3 {
                    0 => 1,
                    1 => 2,
                    2 => 8,
                    _ => 4,
                };
                // I/O breakpoints (rw 2) are not for user space; an
                // execution breakpoint has length 1; the address must be
                // aligned to the length.
                if rw == 2 || (rw == 0 && len != 1) || !addr.is_multiple_of(len) {
                    return Err(EINVAL);
                }
            }
            Ok(())
        }
        _ => Err(EIO),
    }
}

/// Whether a process with credentials `me` may trace one with `t`
/// (Linux's `__ptrace_may_access` with real credentials): its real user
/// and group must be the target's real, effective and saved ones, or it
/// has `CAP_SYS_PTRACE`.
pub fn may_access(me: &crate::cred::Cred, t: &crate::cred::Cred) -> bool {
    use crate::cred::{cap, EFF, REAL, SAVED};
    let (u, g) = (me.uid[REAL], me.gid[REAL]);
    let same = [REAL, EFF, SAVED]
        .iter()
        .all(|&k| t.uid[k] == u && t.gid[k] == g);
    same || me.capable(cap::SYS_PTRACE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regs_round_trip() {
        let mut r = [0u64; 20];
        for (i, v) in r.iter_mut().enumerate() {
            *v = 0x1000 + i as u64;
        }
        r[17] = 0x246;
        let u = to_user(&r, 39);
        assert_eq!(u[ur::RAX], 0x1000);
        assert_eq!(u[ur::R15], 0x1000 + 15);
        assert_eq!(u[ur::RIP], 0x1000 + 16);
        assert_eq!(u[ur::ORIG_RAX], 39);
        assert_eq!(u[ur::CS], USER_CS);
        let mut back = [0u64; 20];
        back[17] = 0x202;
        assert_eq!(from_user(&u, &mut back), Ok(39));
        assert_eq!(back, r);
    }

    #[test]
    fn bad_words_refused() {
        let r = [0u64; 20];
        let mut u = to_user(&r, 0);
        u[ur::CS] = 0x10;
        assert_eq!(from_user(&u, &mut [0; 20]), Err(crate::sys::errno::EIO));
        let mut u = to_user(&r, 0);
        u[ur::FS_BASE] = 1 << 63;
        assert_eq!(from_user(&u, &mut [0; 20]), Err(crate::sys::errno::EIO));
        let mut u = to_user(&r, 0);
        u[ur::EFLAGS] = u64::MAX;
        let mut out = [0u64; 20];
        assert!(from_user(&u, &mut out).is_ok());
        assert_eq!(out[17], USER_RFLAGS);
    }

    #[test]
    fn user_offsets() {
        assert_eq!(user_word(0), Ok(UserWord::Reg(0)));
        assert_eq!(user_word(8 * 15), Ok(UserWord::Reg(ur::ORIG_RAX)));
        assert_eq!(user_word(216), Ok(UserWord::Other));
        assert_eq!(user_word(DEBUGREG + 56), Ok(UserWord::Debug(7)));
        assert_eq!(user_word(USER_SIZE), Err(crate::sys::errno::EIO));
        assert_eq!(user_word(3), Err(crate::sys::errno::EIO));
        assert_eq!(user_word(u64::MAX - 3), Err(crate::sys::errno::EIO));
    }

    #[test]
    fn debug_registers() {
        let mut dr = [0u64; 8];
        assert_eq!(debugreg_ok(0, 0x1000, &dr), Ok(()));
        assert!(debugreg_ok(4, 0, &dr).is_err());
        assert!(debugreg_ok(0, 1 << 63, &dr).is_err());
        dr[0] = 0x1001;
        // Enabled, read/write, 1 byte: any address.
        assert_eq!(debugreg_ok(7, 0x30001, &dr), Ok(()));
        let root = crate::cred::Cred::ROOT;
        let mut user = root;
        user.uid = [1000; 4];
        user.gid = [1000; 4];
        user.caps = crate::cred::Caps::NONE;
        assert!(may_access(&root, &user));
        assert!(!may_access(&user, &root));
        assert!(may_access(&user, &user));
        // 4 bytes at an odd address.
        assert!(debugreg_ok(7, 0xf0001, &dr).is_err());
    }
}
