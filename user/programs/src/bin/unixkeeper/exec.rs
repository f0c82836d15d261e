//! Starting a process: a foreign domain from the process's own bank, its
//! address space mapped from the executable (`stet_unix::elf::plan`), and
//! the initial stack Linux would give it (`stet_unix::stack`).

use crate::slots::{
    ARGS, BANK, DIR, EXEC, LEAF, METER, PBANK, PROC, SELF_SPACE, SELF_START, T, T2,
};
use crate::space::ROOT_LSS;
use crate::Keeper;
use stet_rt::abi::domain::{state, Reg, NREGS, REGS_SIZE};
use stet_rt::abi::order::{domain, node, page};
use stet_rt::bank;
use stet_rt::key::{Answer, Msg};
use stet_unix::layout::{EXEC_SLOT, PAGE, STACK_TOP, WINDOW_SLOT};
use stet_unix::stack::{self, Loaded, Start};
use stet_unix::vm::{Backing, Vma};

/// Bytes of argv and envp strings (and the vectors) the start-up stack may
/// take, as Linux's `execve` allows at least.
const STACK_BUF: usize = 32 * 1024;

fn ok(a: Answer, what: &'static str) -> Result<Answer, &'static str> {
    if a.ok() {
        Ok(a)
    } else {
        Err(what)
    }
}

/// The environment every process starts with, until a parent gives one.
const ENV: [&[u8]; 3] = [b"HOME=/", b"PATH=/bin:/usr/bin", b"TERM=vt100"];

/// Starts the process from the executable in `EXEC` with the command line
/// in the page in `ARGS` (words separated by spaces).
pub fn start(k: &mut Keeper) -> Result<(), &'static str> {
    // The command line first: ARGS is a scratch slot from here on.
    let mut line = [0u8; 4096];
    ok(
        Msg::new(ARGS, page::READ)
            .words([0, 4096, 0, 0])
            .call_into(&mut line),
        "no command line",
    )?;
    let end = line.iter().position(|&b| b == 0).unwrap_or(line.len());
    let mut argv: [&[u8]; 64] = [&[]; 64];
    let mut argc = 0;
    for w in line[..end].split(|&b| b == b' ').filter(|w| !w.is_empty()) {
        if argc == argv.len() {
            return Err("too many arguments");
        }
        argv[argc] = w;
        argc += 1;
    }
    if argc == 0 {
        return Err("empty command line");
    }

    // The executable: its length, its bytes in the keeper's exec window.
    let len = ok(
        Msg::new(EXEC, node::READ_NUMBER).w0(1).call(),
        "no executable",
    )?
    .w[0];
    k.space.exec_len = len;
    ok(
        Msg::new(EXEC, node::FETCH).w0(0).recv([T, 0, 0, 0]).call(),
        "no executable",
    )?;
    ok(
        Msg::new(SELF_SPACE, node::SWAP)
            .w0(EXEC_SLOT)
            .keys([T, 0, 0, 0])
            .call(),
        "cannot map the executable",
    )?;
    let mut head = [0u8; 4096];
    let hl = (len as usize).min(head.len());
    k.space.exec.read(0, &mut head[..hl]);
    let plan = stet_unix::elf::plan(&head[..hl], len).map_err(|_| "not an executable (ENOEXEC)")?;

    // The process's bank, its domain (stopped until it is ready) and its
    // address space, seen by the keeper in its window.
    bank::create_sub(BANK, u64::MAX, u64::MAX, PBANK).map_err(|_| "no bank")?;
    let nospace = |_| "out of space";
    bank::alloc_node(PBANK, DIR).map_err(nospace)?;
    bank::alloc_node(PBANK, PROC).map_err(nospace)?;
    bank::alloc_node(PBANK, T).map_err(nospace)?;
    bank::alloc_node(PBANK, T2).map_err(nospace)?;
    bank::alloc_page(PBANK, LEAF).map_err(nospace)?;
    ok(
        Msg::new(PROC, node::MAKE_DOMAIN)
            .keys([T, T2, LEAF, 0])
            .recv([PROC, 0, 0, 0])
            .call(),
        "cannot make the domain",
    )?;
    ok(
        Msg::new(PROC, domain::SET_METER)
            .keys([METER, 0, 0, 0])
            .call(),
        "meter",
    )?;
    ok(
        Msg::new(PROC, domain::SET_KEEPER)
            .keys([SELF_START, 0, 0, 0])
            .call(),
        "keeper",
    )?;
    bank::alloc_node(PBANK, T).map_err(nospace)?;
    k.space.put_root(T).map_err(|_| "directory")?;
    ok(
        Msg::new(T, node::MAKE_SEGMENT)
            .words([ROOT_LSS, 0, 0, 0])
            .recv([T, 0, 0, 0])
            .call(),
        "segment",
    )?;
    ok(
        Msg::new(PROC, domain::SET_SPACE).keys([T, 0, 0, 0]).call(),
        "space",
    )?;
    ok(
        Msg::new(SELF_SPACE, node::SWAP)
            .w0(WINDOW_SLOT)
            .keys([T, 0, 0, 0])
            .call(),
        "window",
    )?;

    // The memory map: each load segment backed by the file (zero past its
    // file bytes), the break after the last, the stack.
    k.space.map.start(plan.brk).map_err(|_| "map")?;
    for l in plan.loads() {
        let (start, end) = l.span();
        k.space
            .map
            .insert(Vma {
                start,
                end,
                prot: l.prot,
                shared: false,
                backing: Backing::File {
                    file: 0,
                    offset: l.page_offset(),
                    zero_from: l.file_end(),
                },
            })
            .map_err(|_| "map")?;
    }

    // The initial stack.
    let mut random = [0u8; 16];
    random[..8].copy_from_slice(&k.random().to_le_bytes());
    random[8..].copy_from_slice(&k.random().to_le_bytes());
    let s = Start {
        argv: &argv[..argc],
        envp: &ENV,
        execfn: argv[0],
        loaded: Loaded {
            phdr: plan.phdr,
            phent: stet_unix::elf::PHENT,
            phnum: plan.phnum,
            entry: plan.entry,
            base: 0,
        },
        ids: [0; 4],
        hwcap: [hwcap(), 0],
        clktck: 100,
        random,
    };
    let mut mem = [0u8; STACK_BUF];
    let sp = stack::build(&s, STACK_TOP, &mut mem).map_err(|_| "arguments too long (E2BIG)")?;
    let used = (STACK_TOP - sp) as usize;
    k.space
        .write(sp, &mem[STACK_BUF - used..])
        .map_err(|_| "cannot write the stack")?;
    let _ = PAGE;

    // Registers as Linux leaves them at a static program's entry: rsp at
    // argc, rdx 0 (no function for atexit), the rest zero.
    let mut r = [0u64; NREGS];
    r[Reg::Rip as usize] = plan.entry;
    r[Reg::Rsp as usize] = sp;
    r[Reg::Rflags as usize] = 0x202;
    let mut b = [0u8; REGS_SIZE];
    for (c, v) in b.chunks_exact_mut(8).zip(r) {
        c.copy_from_slice(&v.to_le_bytes());
    }
    ok(
        Msg::new(PROC, domain::SET_REGS).string(&b).call(),
        "registers",
    )?;
    ok(
        Msg::new(PROC, domain::SET_STATE)
            .words([state::RUNNING, state::FOREIGN as u64, 0, 0])
            .call(),
        "state",
    )?;
    Ok(())
}

/// `AT_HWCAP`: CPUID leaf 1's EDX, as Linux reports on x86.
fn hwcap() -> u64 {
    let r = core::arch::x86_64::__cpuid(1);
    r.edx as u64
}
