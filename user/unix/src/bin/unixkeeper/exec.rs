//! Starting a program in the process: `execve`, and the first start of a
//! process the image made. The executable comes from the file-system
//! domain as a read-only segment; its text pages are the file's own pages
//! (shared by every process running it), its data private copies. A new
//! process image is a new domain from a new bank: the old image's bank is
//! destroyed whole, so nothing of it can leak into the new one.

use crate::calls::Next;
use crate::slots::{keys, ARGS, DIR, EXEC, KEYS, LEAF, PBANK, PROC, T, T2, T3, UNIXD};
use crate::space::{Touch, ROOT_LSS};
use crate::Keeper;
use stet_rt::abi::domain::{state, Reg, NREGS, REGS_SIZE};
use stet_rt::abi::order::{domain, node, page, segment};
use stet_rt::bank;
use stet_rt::key::Msg;
use stet_unix::layout::{EXEC_SLOT, STACK_TOP, WINDOW_SLOT};
use stet_unix::proto;
use stet_unix::stack::{self, Loaded, Start};
use stet_unix::sys::errno::*;
use stet_unix::vm::{Backing, Vma};
use stet_unix_personality::keydir::{fetch, swap};

/// Bytes of argument and environment strings `execve` accepts (Linux
/// allows more; 32 KiB is what the start-up stack here holds).
const ARG_BYTES: usize = 24 * 1024;
/// Most arguments plus environment strings.
const MAX_STRINGS: usize = 512;
/// The start-up stack's buffer.
const STACK_BUF: usize = 32 * 1024;
/// What an `execve` tries first: buffers this small (most programs' strings
/// and stacks fit) cost little to clear, and clearing a big one costs
/// more than the rest of building the stack (a 32 KiB buffer is 4,096
/// stores). Past them, the full sizes above.
const SMALL_BYTES: usize = 3 * 1024;
/// See [`SMALL_BYTES`].
const SMALL_STRINGS: usize = 64;
/// See [`SMALL_BYTES`].
const SMALL_STACK: usize = 2 * 1024;

/// The environment of a process the image starts.
const ENV: [&[u8]; 3] = [b"HOME=/", b"PATH=/bin:/usr/bin", b"TERM=vt100"];

fn ok(a: stet_rt::key::Answer) -> Result<(), i64> {
    if a.ok() {
        Ok(())
    } else {
        Err(ENOMEM)
    }
}

/// Strings gathered for a new image (`N` bytes, `M` strings at most):
/// bytes and where each ends.
struct Strings<const N: usize, const M: usize> {
    bytes: [u8; N],
    used: usize,
    ends: [u16; M],
    argc: usize,
    envc: usize,
}

impl<const N: usize, const M: usize> Strings<N, M> {
    fn new() -> Self {
        Strings {
            bytes: [0; N],
            used: 0,
            ends: [0; M],
            argc: 0,
            envc: 0,
        }
    }

    fn push(&mut self, s: &[u8], arg: bool) -> Result<(), i64> {
        if self.used + s.len() > N {
            return Err(E2BIG);
        }
        self.bytes[self.used..self.used + s.len()].copy_from_slice(s);
        self.end(s.len(), arg)
    }

    /// The `len` bytes past the last string are one more.
    fn end(&mut self, len: usize, arg: bool) -> Result<(), i64> {
        let n = self.argc + self.envc;
        if n == M {
            return Err(E2BIG);
        }
        self.used += len;
        self.ends[n] = self.used as u16;
        if arg {
            self.argc += 1;
        } else {
            self.envc += 1;
        }
        Ok(())
    }

    fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }
}

/// Starts the process the image made: keys into their node, the terminal
/// as descriptors 0-2, then the program the command line in `ARGS` names
/// (words separated by spaces, "double quotes" keeping spaces; the first
/// is the path).
pub fn start(k: &mut Keeper) -> Result<(), &'static str> {
    let mut line = [0u8; 4096];
    let a = Msg::new(ARGS, page::READ)
        .words([0, 4096, 0, 0])
        .call_into(&mut line);
    if !a.ok() {
        return Err("no command line");
    }
    for (s, i) in keys::AT_START {
        swap(KEYS, i, s, 0).map_err(|_| "no keys node")?;
    }
    // The keeper's own domain key (the image's `domain:unixkeeper`, in
    // slot 13), kept in its space's root for its threads' keeper keys.
    if fetch(KEYS, keys::SELF_SPACE, T).is_ok() {
        let _ = swap(T, crate::threads::SELF_DOMAIN_SLOT, 13, 0);
        // Discrim (general slot 3, which resume keys take from now on).
        let _ = swap(T, stet_unix::layout::DISCRIM_SLOT, crate::slots::RESUME2, 0);
    }
    k.open_terminal().map_err(|_| "no terminal")?;
    let end = line.iter().position(|&b| b == 0).unwrap_or(line.len());
    let mut st = Strings::<ARG_BYTES, MAX_STRINGS>::new();
    // Words separated by spaces; "double quotes" keep spaces in a word.
    let mut word = [0u8; 4096];
    let (mut n, mut quoted, mut any) = (0, false, false);
    for &b in line[..end].iter().chain([b' '].iter()) {
        match b {
            b'"' => {
                quoted = !quoted;
                any = true;
            }
            b' ' if !quoted => {
                if any || n > 0 {
                    st.push(&word[..n], true)
                        .map_err(|_| "command line too long")?;
                }
                n = 0;
                any = false;
            }
            _ => {
                word[n] = b;
                n += 1;
            }
        }
    }
    for e in ENV {
        st.push(e, false).map_err(|_| "environment too long")?;
    }
    if st.argc == 0 {
        return Err("empty command line");
    }
    let mut path = [0u8; 4096];
    let p = st.get(0);
    path[..p.len()].copy_from_slice(p);
    let plen = p.len();
    load(k, &path[..plen], &st).map_err(|e| match e {
        ENOENT => "no such program (ENOENT)",
        ENOEXEC => "not an executable (ENOEXEC)",
        EACCES => "not executable (EACCES)",
        _ => "cannot load the program",
    })
}

impl Keeper {
    /// `execve(path, argv, envp)`: on success the process runs the new
    /// program (nothing to resume); on failure the old one gets `-errno`.
    pub fn execve(&mut self, regs: &mut [u64; NREGS], path: u64, argv: u64, envp: u64) -> Next {
        let r = self.execve_inner(path, argv, envp);
        match r {
            Ok(()) => match self.trace_exec() {
                Some(sig) => Next::Killed(sig),
                None => Next::Started,
            },
            Err(e) => {
                regs[Reg::Rax as usize] = (-e) as u64;
                Next::Resume
            }
        }
    }

    fn execve_inner(&mut self, path: u64, argv: u64, envp: u64) -> Result<(), i64> {
        let mut pb = [0u8; 4096];
        let n = match self.space.read_cstr(path, &mut pb) {
            Ok(n) => n,
            Err(Some(t)) => return Err(t.errno()),
            Err(None) => return Err(ENAMETOOLONG),
        };
        if n == 0 {
            return Err(ENOENT);
        }
        // Small buffers first; the full ones only if the strings do not
        // fit them (nothing has changed yet then).
        let path = &pb[..n];
        match self.exec_with::<SMALL_BYTES, SMALL_STRINGS>(path, argv, envp) {
            Some(r) => r,
            None => self
                .exec_with::<ARG_BYTES, MAX_STRINGS>(path, argv, envp)
                .unwrap_or(Err(E2BIG)),
        }?;
        self.close_all(true);
        // `membarrier` registrations belong to the old memory.
        self.membarrier = 0;
        // Caught signals go back to their defaults; ignored stay ignored.
        for i in 0..self.actions.len() {
            let h = u64::from_le_bytes(self.actions[i][..8].try_into().unwrap_or_default());
            if h > 1 {
                self.set_action(i, [0; 32]);
            }
        }
        Ok(())
    }

    /// Gathers `execve`'s strings into a buffer of `N` bytes and `M`
    /// strings and loads the program: `None` if they do not fit (nothing
    /// changed).
    fn exec_with<const N: usize, const M: usize>(
        &mut self,
        path: &[u8],
        argv: u64,
        envp: u64,
    ) -> Option<Result<(), i64>> {
        let mut st = Strings::<N, M>::new();
        for (list, arg) in [(argv, true), (envp, false)] {
            // An empty `argv` gets `argv[0]` = "" (Linux 5.18 on), so a
            // program always has `argc` ≥ 1.
            if !arg && st.argc == 0 {
                st.end(0, true).ok()?;
            }
            if list == 0 {
                continue;
            }
            for i in 0.. {
                let mut w = [0u8; 8];
                if let Err(t) = self.space.read(list + 8 * i, &mut w) {
                    return Some(Err(t.errno()));
                }
                let ptr = u64::from_le_bytes(w);
                if ptr == 0 {
                    break;
                }
                // Straight into the free bytes.
                let len = match self.space.read_cstr(ptr, &mut st.bytes[st.used..]) {
                    Ok(l) => l,
                    Err(Some(t)) => return Some(Err(t.errno())),
                    Err(None) => return None,
                };
                st.end(len, arg).ok()?;
            }
        }
        Some(load(self, path, &st))
    }
}

/// Loads `path` with strings `st` into a new process image, replacing the
/// old one (if any) once the new program is known to be loadable.
fn load<const N: usize, const M: usize>(
    k: &mut Keeper,
    path: &[u8],
    st: &Strings<N, M>,
) -> Result<(), i64> {
    // The executable, and its headers through its segment key.
    let a = Msg::new(UNIXD, proto::EXEC)
        .words([k.cwd as u64, 0, 0, 0])
        .string(path)
        .recv([T3, 0, 0, 0])
        .call();
    crate::signals::note(a.w[proto::INTR_WORD]);
    let v = a.w[0] as i64;
    if !a.ok() {
        return Err(EIO);
    }
    if v < 0 {
        return Err(-v);
    }
    let (len, ino, setid) = (a.w[1], a.w[2], a.w[0] == 1);
    let mut head = [0u8; 4096];
    let hl = (len as usize).min(head.len());
    let r = Msg::new(T3, segment::READ)
        .words([0, hl as u64, 0, 0])
        .call_into(&mut head[..hl]);
    if !r.ok() {
        return Err(ENOEXEC);
    }
    let plan = stet_unix::elf::plan(&head[..hl], len).map_err(|e| e.errno())?;
    // A dynamically linked program: its interpreter, opened while the old
    // image can still take an error.
    let interp = match plan.interp {
        Some((off, n)) => Some(crate::interp::open(k, off, n)?),
        None => None,
    };

    // Past this point the old image goes: kept, if it is a forked child's
    // plain copy of its parent (for the parent's next `fork`: a shell's
    // `fork` then `execve` need build no copy next time), else destroyed.
    k.collect_enosys();
    // The other threads go (Linux's de_thread); this one becomes the
    // process's only thread, with its pid.
    k.end_other_threads();
    k.retire_status();
    k.only_thread(k.pid as u32);
    // POSIX timers do not survive `execve`.
    if core::mem::take(&mut k.ptimers_made) {
        let _ = crate::fds::ux(proto::PTIMER, [proto::ptimer::DELETE_ALL, 0, 0, 0], &[]);
    }
    // Set-id bits, or ids an exec changes (the saved ones become the
    // effective): unixd applies Linux's rules; else nothing changes.
    let c = &k.cred;
    let same = c.uid[1] == c.uid[2]
        && c.uid[1] == c.uid[3]
        && c.gid[1] == c.gid[2]
        && c.gid[1] == c.gid[3];
    let secure = if setid || !same {
        k.exec_ids(ino)
    } else {
        false
    };
    // Linux's `setup_new_exec`: a program run with changed ids may not
    // be dumped (`PR_GET_DUMPABLE` 0), any other may.
    k.dumpable = !secure as u8;
    if k.keepable() && k.keep_process() {
        k.kept_at_exec = true;
    } else {
        k.space.release_pages(0, stet_unix::layout::USER_END);
        let _ = bank::destroy(PBANK);
    }
    k.space.close_files();
    k.space.reset();
    k.space.exec_len = len;
    fetch(KEYS, keys::SELF_SPACE, T2).map_err(|_| EIO)?;
    swap(T2, EXEC_SLOT, T3, 0).map_err(|_| EIO)?;
    ok(Msg::new(T3, segment::RESTRICT)
        .w0(0)
        .recv([EXEC, 0, 0, 0])
        .call())?;

    // The process's bank, domain (stopped until ready) and space.
    fetch(KEYS, keys::BANK, T).map_err(|_| EIO)?;
    bank::create_sub(T, u64::MAX, u64::MAX, PBANK).map_err(|_| ENOMEM)?;
    let nomem = |_| ENOMEM;
    bank::alloc_node(PBANK, DIR).map_err(nomem)?;
    bank::alloc_node(PBANK, PROC).map_err(nomem)?;
    bank::alloc_node(PBANK, T).map_err(nomem)?;
    bank::alloc_node(PBANK, T2).map_err(nomem)?;
    bank::alloc_page(PBANK, LEAF).map_err(nomem)?;
    ok(Msg::new(PROC, node::MAKE_DOMAIN)
        .keys([T, T2, LEAF, 0])
        .recv([PROC, 0, 0, 0])
        .call())?;
    fetch(KEYS, keys::METER, T).map_err(|_| EIO)?;
    ok(Msg::new(PROC, domain::SET_METER).keys([T, 0, 0, 0]).call())?;
    fetch(KEYS, keys::SELF_START, T).map_err(|_| EIO)?;
    ok(Msg::new(PROC, domain::SET_KEEPER).keys([T, 0, 0, 0]).call())?;
    bank::alloc_node(PBANK, T).map_err(nomem)?;
    k.space.put_root(T).map_err(|_| ENOMEM)?;
    ok(Msg::new(T, node::MAKE_SEGMENT)
        .words([ROOT_LSS, 0, 0, 0])
        .recv([T, 0, 0, 0])
        .call())?;
    ok(Msg::new(PROC, domain::SET_SPACE).keys([T, 0, 0, 0]).call())?;
    fetch(KEYS, keys::SELF_SPACE, T2).map_err(|_| EIO)?;
    swap(T2, WINDOW_SLOT, T, 0).map_err(|_| EIO)?;

    // The memory map: each load segment backed by the file, the break
    // after the last, the stack.
    k.space.map.start(plan.brk)?;
    for l in plan.loads() {
        let (start, end) = l.span();
        k.space.map.insert(Vma {
            start,
            end,
            prot: l.prot,
            shared: false,
            grows_down: false,
            locked: false,
            backing: Backing::File {
                file: 0,
                offset: l.page_offset(),
                zero_from: l.file_end(),
            },
        })?;
    }

    // The interpreter, which starts first.
    let (base, start) = match &interp {
        Some(i) => k.map_interp(i)?,
        None => (0, plan.entry),
    };

    // The start-up stack.
    let mut random = [0u8; 16];
    random[..8].copy_from_slice(&k.random().to_le_bytes());
    random[8..].copy_from_slice(&k.random().to_le_bytes());
    let mut argv: [&[u8]; M] = [&[]; M];
    for (i, a) in argv.iter_mut().enumerate().take(st.argc + st.envc) {
        *a = st.get(i);
    }
    let s = Start {
        argv: &argv[..st.argc],
        envp: &argv[st.argc..st.argc + st.envc],
        execfn: path,
        loaded: Loaded {
            phdr: plan.phdr,
            phent: stet_unix::elf::PHENT,
            phnum: plan.phnum,
            entry: plan.entry,
            base,
        },
        ids: [k.cred.uid[0], k.cred.uid[1], k.cred.gid[0], k.cred.gid[1]].map(u64::from),
        secure,
        hwcap: [hwcap(), 0],
        clktck: 100,
        random,
    };
    let sp = match write_stack::<SMALL_STACK>(k, &s) {
        Err(StackError::Build(stack::Error::TooBig)) => write_stack::<STACK_BUF>(k, &s),
        r => r,
    }
    .map_err(|e| match e {
        StackError::Touch(t) => t.errno(),
        StackError::Build(_) => E2BIG,
    })?;

    // Registers as Linux leaves them at a static program's entry.
    let mut r = [0u64; NREGS];
    r[Reg::Rip as usize] = start;
    r[Reg::Rsp as usize] = sp;
    r[Reg::Rflags as usize] = 0x202;
    let mut b = [0u8; REGS_SIZE];
    for (c, v) in b.chunks_exact_mut(8).zip(r) {
        c.copy_from_slice(&v.to_le_bytes());
    }
    ok(Msg::new(PROC, domain::SET_REGS).string(&b).call())?;
    // /proc/<pid>/exe and cmdline.
    let mut info = [0u8; 4096];
    let mut n = 0;
    for part in core::iter::once(path).chain((0..st.argc).map(|i| st.get(i))) {
        if n + part.len() < info.len() {
            info[n..n + part.len()].copy_from_slice(part);
            info[n + part.len()] = 0;
            n += part.len() + 1;
        }
    }
    let a = Msg::new(UNIXD, proto::PROCINFO)
        .w0(k.cwd as u64)
        .string(&info[..n])
        .call();
    crate::signals::note(a.w[proto::INTR_WORD]);
    // The new tree is the process's space now (`process_vm_readv`).
    crate::procvm::send_space(k.dumpable);
    ok(Msg::new(PROC, domain::SET_STATE)
        .words([state::RUNNING, state::FOREIGN as u64, 0, 0])
        .call())
}

/// Why the start-up stack was not written.
enum StackError {
    /// It did not fit the buffer, or is not a valid stack.
    Build(stack::Error),
    /// The process's stack pages could not be made.
    Touch(Touch),
}

/// Builds the start-up stack `s` in a buffer of `N` bytes and writes it
/// below `STACK_TOP` → the stack pointer.
fn write_stack<const N: usize>(k: &mut Keeper, s: &Start<'_>) -> Result<u64, StackError> {
    let mut mem = [0u8; N];
    let sp = stack::build(s, STACK_TOP, &mut mem).map_err(StackError::Build)?;
    let used = (STACK_TOP - sp) as usize;
    k.space
        .write(sp, &mem[N - used..])
        .map_err(StackError::Touch)?;
    Ok(sp)
}

/// `AT_HWCAP`: CPUID leaf 1's EDX, as Linux reports on x86.
fn hwcap() -> u64 {
    let r = core::arch::x86_64::__cpuid(1);
    r.edx as u64
}
