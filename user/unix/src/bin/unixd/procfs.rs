//! `/proc`: real directories and files of the file system, kept up to
//! date by unixd. Each process has `/proc/<pid>/` with `stat`, `status`,
//! `mounts`, `cmdline` and the symlink `exe`, made when its keeper says
//! hello (a copy of its parent's), rewritten at `execve` (`PROCINFO`) and
//! removed when the process is reaped. The generated files (`Gen`: each
//! `stat`, `status` and `mounts`, `/proc/meminfo`, `/proc/uptime` and the
//! system's files of `procgen`) are made again whenever they are opened.
//! `/proc/self` is a symbolic link unixd points at each caller
//! (`procgen`), and the keeper names `/proc/<pid>` itself in the paths it
//! sends.
//!
//! Being ordinary files, they need nothing new from `read`, `stat`,
//! `getdents64` or `ls`.

use crate::Unixd;
use core::fmt::Write;
use stet_unix::fs::{mode, ROOT};
use stet_unix::procgen::Text;

/// What a generated file holds.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Gen {
    /// `/proc/meminfo`.
    Meminfo,
    /// `/proc/uptime`.
    Uptime,
    /// `/proc/<pid>/stat`.
    Stat(u32),
    /// `/proc/<pid>/status`.
    Status(u32),
    /// `/proc/<pid>/comm` (and each `task/<tid>/comm`): its name.
    Comm(u32),
    /// The system's files (`procgen`), `/proc/<pid>/mounts` among them.
    System(crate::procgen::SysFile),
}

/// What `execve` said a process runs (`PROCINFO`), kept while its
/// `/proc/<pid>/` waits to be made: its `exe` target and `cmdline`.
#[derive(Clone, Copy)]
pub struct ExecInfo {
    /// The process (0: a free entry).
    pub pid: u32,
    exe_len: u16,
    cmd_len: u16,
    exe: [u8; 256],
    cmd: [u8; 4096],
}

/// A free [`ExecInfo`].
pub const NO_INFO: ExecInfo = ExecInfo {
    pid: 0,
    exe_len: 0,
    cmd_len: 0,
    exe: [0; 256],
    cmd: [0; 4096],
};

/// How many waiting directories' [`ExecInfo`] unixd keeps (more: made at
/// once, as before).
pub const MAX_INFO: usize = 4;

/// A pid's directory name.
pub(crate) fn name_of(pid: u32, out: &mut [u8; 10]) -> &[u8] {
    let mut n = 0;
    let mut digits = [0u8; 10];
    let mut v = pid;
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in 0..n {
        out[i] = digits[n - 1 - i];
    }
    &out[..n]
}

impl Unixd<'_> {
    pub(crate) fn proc_root(&self) -> Option<u32> {
        self.fs.lookup(ROOT, b"proc")
    }

    fn proc_dir(&self, pid: u32) -> Option<u32> {
        let mut n = [0u8; 10];
        self.fs.lookup(self.proc_root()?, name_of(pid, &mut n))
    }

    /// Marks inode `ino` generated (the table is kept in inode order, so
    /// an `open` finds out whether it opens one in a few steps).
    pub(crate) fn add_gen(&mut self, ino: u32, g: Gen) {
        match self.gen.binary_search_by_key(&ino, |e| e.0) {
            Ok(i) => self.gen[i].1 = g,
            Err(i) => {
                if self.gen.try_reserve(1).is_ok() {
                    self.gen.insert(i, (ino, g));
                }
            }
        }
    }

    /// What generated inode `ino` holds.
    pub(crate) fn gen_of(&self, ino: u32) -> Option<Gen> {
        let i = self.gen.binary_search_by_key(&ino, |e| e.0).ok()?;
        Some(self.gen[i].1)
    }

    /// Inode `ino` is no longer generated.
    pub(crate) fn drop_gen(&mut self, ino: u32) {
        if let Ok(i) = self.gen.binary_search_by_key(&ino, |e| e.0) {
            self.gen.remove(i);
        }
    }

    /// `/proc/meminfo`, `/proc/uptime` and the system's files
    /// (`procgen`), made at boot if missing.
    pub(crate) fn proc_boot(&mut self) {
        let Some(root) = self.proc_root() else {
            return;
        };
        for (name, g) in [(&b"meminfo"[..], Gen::Meminfo), (b"uptime", Gen::Uptime)] {
            self.gen_file(root, name, g);
        }
        self.procgen_boot(root);
    }

    /// Makes generated file `name` in `dir` (if missing) → its inode.
    pub(crate) fn gen_file(&mut self, dir: u32, name: &[u8], g: Gen) -> Option<u32> {
        let now = self.time();
        let ino = match self.fs.lookup(dir, name) {
            Some(i) => i,
            None => self.fs.create(dir, name, mode::REG | 0o444, now).ok()?,
        };
        self.add_gen(ino, g);
        Some(ino)
    }

    /// Makes every `/proc/<pid>/` still waiting (`Proc::proc_pending`), a
    /// parent's before its children's: called before anything that could
    /// look at `/proc` (a path, a directory listing), before a waiting
    /// one's parent changes its own, and before that parent goes.
    pub(crate) fn proc_flush(&mut self) {
        self.proc_pending = false;
        self.make_waiting();
        for i in 0..self.procs.len() {
            if self.procs[i].tasks_stale {
                self.procs[i].tasks_stale = false;
                let pid = self.procs[i].pid;
                self.sync_tasks(pid);
            }
        }
    }

    /// The waiting `/proc/<pid>/` directories, a waiting parent's first (a
    /// chain of them takes a pass per generation).
    fn make_waiting(&mut self) {
        for _ in 0..self.procs.len() {
            let mut left = false;
            for i in 0..self.procs.len() {
                let p = self.procs[i];
                if !p.proc_pending {
                    continue;
                }
                let parent_waits = self
                    .procs
                    .iter()
                    .any(|q| q.pid == p.ppid && q.pid != 0 && q.proc_pending);
                if parent_waits {
                    left = true;
                    continue;
                }
                self.procs[i].proc_pending = false;
                self.proc_make(p.pid, p.ppid);
            }
            if !left {
                return;
            }
        }
    }

    /// `Fs::resolve`, after making the waiting `/proc/<pid>/` directories
    /// if the path goes through `/proc` (a lookup elsewhere cannot see
    /// them: `exec` of `/bin/true` by a new child makes nothing).
    pub(crate) fn resolve_seeing_proc(
        &mut self,
        dir: u32,
        path: &[u8],
        follow: bool,
    ) -> Result<u32, i64> {
        if self.proc_pending {
            if let Some(root) = self.proc_root() {
                let (r, seen) = self.fs.resolve_watching(dir, path, follow, root);
                if !seen {
                    return r;
                }
                // The system makes them, not the caller.
                let who = core::mem::replace(&mut self.fs.who, stet_unix::cred::Cred::ROOT);
                self.proc_flush();
                self.fs.who = who;
            }
        }
        self.fs.resolve(dir, path, follow)
    }

    /// Makes the waiting directories if one of `pid`'s children's is among
    /// them (its copy of `pid`'s is due before `pid`'s changes or goes).
    pub(crate) fn flush_children_of(&mut self, pid: u32) {
        if self
            .procs
            .iter()
            .any(|q| q.pid != 0 && q.ppid == pid && q.proc_pending)
        {
            self.proc_flush();
        }
    }

    /// Makes `/proc/<pid>/` if it is not there: its files are copies of
    /// `/proc/<ppid>/`'s (a forked child runs its parent's program).
    pub(crate) fn proc_new(&mut self, pid: u32, ppid: u32) {
        if self.proc_dir(pid).is_some() {
            return;
        }
        let Some(root) = self.proc_root() else {
            return;
        };
        let now = self.time();
        let mut n = [0u8; 10];
        let Ok(dir) = self
            .fs
            .create(root, name_of(pid, &mut n), mode::DIR | 0o555, now)
        else {
            return;
        };
        self.gen_file(dir, b"stat", Gen::Stat(pid));
        self.gen_file(dir, b"status", Gen::Status(pid));
        self.gen_file(dir, b"comm", Gen::Comm(pid));
        self.gen_file(dir, b"mounts", Gen::System(crate::procgen::SysFile::Mounts));
        self.ns_dir(dir);
        // `task/`: a directory per thread (its first is the process).
        if let Ok(task) = self.fs.create(dir, b"task", mode::DIR | 0o555, now) {
            self.task_entry(task, pid, pid);
            let tids: alloc::vec::Vec<u32> = self
                .tids
                .iter()
                .filter(|t| t.1 == pid)
                .map(|t| t.0)
                .collect();
            for t in tids {
                self.task_entry(task, pid, t);
            }
        }
        let _ = self.fs.create(dir, b"cmdline", mode::REG | 0o444, now);
        let mut exe = [0u8; 256];
        let mut cmd = [0u8; 4096];
        let (mut elen, mut clen) = (0, 0);
        if let Some(pd) = self.proc_dir(ppid) {
            if let Some(t) = self
                .fs
                .lookup(pd, b"exe")
                .and_then(|l| self.fs.link_target(l))
            {
                elen = t.len().min(exe.len());
                exe[..elen].copy_from_slice(&t[..elen]);
            }
            if let Some(c) = self.fs.lookup(pd, b"cmdline") {
                let size = self.fs.inode(c).map_or(0, |i| i.size) as usize;
                clen = size.min(cmd.len());
                if self.content.read(c, 0, &mut cmd[..clen]).is_err() {
                    clen = 0;
                }
            }
        }
        self.proc_set(dir, &exe[..elen], &cmd[..clen]);
    }

    /// Sets `/proc/<pid>/exe`'s target and `cmdline`'s bytes.
    fn proc_set(&mut self, dir: u32, exe: &[u8], cmdline: &[u8]) {
        let now = self.time();
        if let Ok((ino, true)) = self.fs.unlink(dir, b"exe", now) {
            self.maybe_free(ino);
        }
        if !exe.is_empty() {
            let _ = self.fs.symlink(dir, b"exe", exe, now);
        }
        if let Some(c) = self.fs.lookup(dir, b"cmdline") {
            self.set_content(c, cmdline);
        }
    }

    /// Replaces file `ino`'s bytes.
    pub(crate) fn set_content(&mut self, ino: u32, data: &[u8]) {
        let old = self.fs.inode(ino).map_or(0, |i| i.size);
        let _ = self.content.truncate(ino, old, 0);
        let size = match self.content.write(ino, 0, data) {
            Ok(()) => data.len() as u64,
            Err(_) => 0,
        };
        let now = self.time();
        if let Some(i) = self.fs.inode_mut(ino) {
            i.size = size;
            i.mtime = now;
        }
    }

    /// `PROCINFO`: the caller now runs `path` (relative to directory fid
    /// `base`) with the NUL-terminated arguments `args`.
    /// A directory still waiting gets them when it is made (`ExecInfo`):
    /// a child that runs a program and is reaped before anyone looks
    /// costs `/proc` nothing.
    pub(crate) fn proc_exec(&mut self, pid: u32, base: u64, path: &[u8], args: &[u8]) {
        // A child's directory that would copy this one is made before
        // this one changes.
        if self.proc_pending {
            self.flush_children_of(pid);
        }
        // The absolute path: its directory's path and its name.
        let mut abs = [0u8; 256];
        let mut n = 0;
        if let Ok(par) = self.base(base).and_then(|b| self.fs.parent(b, path)) {
            if let Ok(l) = self.fs.path_of(par.dir, &mut abs) {
                n = l;
                // The root's path is "/", any other lacks the last '/'.
                if n > 1 && n < abs.len() {
                    abs[n] = b'/';
                    n += 1;
                }
                let k = par.name.len().min(abs.len() - n);
                abs[n..n + k].copy_from_slice(&par.name[..k]);
                n += k;
            }
        }
        let comm_src = &abs[..n];
        let base_name = comm_src.rsplit(|&b| b == b'/').next().unwrap_or_default();
        if let Some(i) = (0..self.procs.len()).find(|&i| self.procs[i].pid == pid) {
            let mut c = [0u8; 16];
            let k = base_name.len().min(15);
            c[..k].copy_from_slice(&base_name[..k]);
            self.procs[i].comm = c;
        }
        let me = (0..self.procs.len()).find(|&i| pid != 0 && self.procs[i].pid == pid);
        if me.is_some_and(|i| self.procs[i].proc_pending) && self.keep_info(pid, &abs[..n], args) {
            return;
        }
        // Its own directory needs no copy of its parent's.
        if let Some(i) = me {
            self.procs[i].proc_pending = false;
        }
        self.proc_new(pid, 0);
        if let Some(dir) = self.proc_dir(pid) {
            self.proc_set(dir, &abs[..n], args);
        }
    }

    /// Keeps `exe` and `cmdline` of `pid`, whose directory waits, for when
    /// it is made → whether there was room.
    fn keep_info(&mut self, pid: u32, exe: &[u8], cmdline: &[u8]) -> bool {
        let at = |want: u32| self.infos.iter().position(|e| e.pid == want);
        let Some(j) = at(pid).or_else(|| at(0)) else {
            return false;
        };
        let e = &mut self.infos[j];
        if exe.len() > e.exe.len() || cmdline.len() > e.cmd.len() {
            return false;
        }
        e.pid = pid;
        e.exe[..exe.len()].copy_from_slice(exe);
        e.exe_len = exe.len() as u16;
        e.cmd[..cmdline.len()].copy_from_slice(cmdline);
        e.cmd_len = cmdline.len() as u16;
        true
    }

    /// Makes waiting `/proc/<pid>/`: from what its last `execve` said, if
    /// it ran one, else as a copy of its parent's.
    fn proc_make(&mut self, pid: u32, ppid: u32) {
        let Some(j) = self.infos.iter().position(|e| e.pid == pid) else {
            return self.proc_new(pid, ppid);
        };
        self.infos[j].pid = 0;
        self.proc_new(pid, 0);
        if let Some(dir) = self.proc_dir(pid) {
            let e = self.infos[j];
            let (el, cl) = (e.exe_len as usize, e.cmd_len as usize);
            self.proc_set(dir, &e.exe[..el], &e.cmd[..cl]);
        }
    }

    /// Removes `/proc/<pid>/` (the process was reaped; `made`: its
    /// directory was made, not still waiting).
    pub(crate) fn proc_gone(&mut self, pid: u32, made: bool) {
        if !made {
            for e in self.infos.iter_mut().filter(|e| e.pid == pid) {
                e.pid = 0;
            }
            return;
        }
        let (Some(root), Some(dir)) = (self.proc_root(), self.proc_dir(pid)) else {
            return;
        };
        let now = self.time();
        if let Some(task) = self.fs.lookup(dir, b"task") {
            // Every thread's directory (their ids are free by now).
            while let Some(name) = self.first_name(task) {
                let t =
                    core::str::from_utf8(&name[..name.iter().position(|&b| b == 0).unwrap_or(10)])
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0);
                if !self.task_gone(pid, t) {
                    break;
                }
            }
            let _ = self.fs.rmdir(dir, b"task", now);
        }
        if let Some(fd) = self.fs.lookup(dir, b"fd") {
            self.fd_dir_clear(fd);
            let _ = self.fs.rmdir(dir, b"fd", now);
        }
        self.ns_gone(dir);
        for name in [
            &b"stat"[..],
            b"status",
            b"comm",
            b"mounts",
            b"cmdline",
            b"exe",
        ] {
            if let Some(ino) = self.fs.lookup(dir, name) {
                self.drop_gen(ino);
            }
            if let Ok((ino, true)) = self.fs.unlink(dir, name, now) {
                self.maybe_free(ino);
            }
        }
        let mut n = [0u8; 10];
        let _ = self.fs.rmdir(root, name_of(pid, &mut n), now);
    }

    /// `/proc/<pid>/task/<tid>/` with its `stat`, `status` and `comm` (the
    /// process's: threads share them here).
    fn task_entry(&mut self, task: u32, pid: u32, tid: u32) {
        let now = self.time();
        let mut n = [0u8; 10];
        if let Ok(d) = self
            .fs
            .create(task, name_of(tid, &mut n), mode::DIR | 0o555, now)
        {
            self.gen_file(d, b"stat", Gen::Stat(pid));
            self.gen_file(d, b"status", Gen::Status(pid));
            self.gen_file(d, b"comm", Gen::Comm(pid));
        }
    }

    /// `pid`'s threads changed (a `clone`, a thread's end): its `task/`
    /// is brought up to date when something next looks at `/proc`
    /// (`proc_flush`), not at each change — a thread that starts and ends
    /// unseen costs no directory.
    pub(crate) fn tasks_changed(&mut self, pid: u32) {
        if let Some(p) = self.procs.iter_mut().find(|p| p.pid == pid && pid != 0) {
            p.tasks_stale = true;
            self.proc_pending = true;
        }
    }

    /// `/proc/<pid>/task/` made to hold exactly its threads' entries.
    fn sync_tasks(&mut self, pid: u32) {
        let Some(dir) = self.proc_dir(pid) else {
            return;
        };
        let Some(task) = self.fs.lookup(dir, b"task") else {
            return;
        };
        let mut present: alloc::vec::Vec<u32> = alloc::vec::Vec::new();
        let (mut pos, mut buf) = (0, [0u8; 1024]);
        while let Ok((n, next)) = self.fs.getdents(task, pos, &mut buf) {
            if n == 0 || next == pos {
                break;
            }
            for name in dirent_names(&buf[..n]) {
                let t = core::str::from_utf8(name)
                    .ok()
                    .and_then(|s| s.parse::<u32>().ok());
                if let Some(t) = t {
                    if present.try_reserve(1).is_ok() {
                        present.push(t);
                    }
                }
            }
            pos = next;
        }
        let alive = |u: &Self, t: u32| t == pid || u.tids.iter().any(|x| x.0 == t && x.1 == pid);
        for &t in &present {
            if !alive(self, t) {
                self.task_gone(pid, t);
            }
        }
        let born: alloc::vec::Vec<u32> = self
            .tids
            .iter()
            .filter(|x| x.1 == pid && !present.contains(&x.0))
            .map(|x| x.0)
            .collect();
        for t in born {
            self.task_entry(task, pid, t);
        }
    }

    /// Thread `tid` of `pid` has ended: its `task/` entry goes → whether
    /// there was one.
    pub(crate) fn task_gone(&mut self, pid: u32, tid: u32) -> bool {
        let Some(dir) = self.proc_dir(pid) else {
            return false;
        };
        let Some(task) = self.fs.lookup(dir, b"task") else {
            return false;
        };
        let mut n = [0u8; 10];
        let name = name_of(tid, &mut n);
        let Some(d) = self.fs.lookup(task, name) else {
            return false;
        };
        let now = self.time();
        for f in [&b"stat"[..], b"status", b"comm"] {
            if let Some(ino) = self.fs.lookup(d, f) {
                self.drop_gen(ino);
            }
            if let Ok((ino, true)) = self.fs.unlink(d, f, now) {
                self.maybe_free(ino);
            }
        }
        self.fs.rmdir(task, name, now).is_ok()
    }

    /// The first name in directory `dir`, NUL-padded.
    pub(crate) fn first_name(&self, dir: u32) -> Option<[u8; 256]> {
        let mut buf = [0u8; 512];
        let (n, _) = self.fs.getdents(dir, 0, &mut buf).ok()?;
        let name = dirent_names(&buf[..n]).find(|&m| m != b"." && m != b"..")?;
        let mut out = [0u8; 256];
        let len = name.len().min(255);
        out[..len].copy_from_slice(&name[..len]);
        Some(out)
    }

    /// A generated file is about to be opened: its bytes made now.
    pub(crate) fn refresh(&mut self, ino: u32) {
        let Some(g) = self.gen_of(ino) else {
            return;
        };
        if let Gen::System(
            f @ (crate::procgen::SysFile::SysvShm
            | crate::procgen::SysFile::SysvSem
            | crate::procgen::SysFile::SysvMsg),
        ) = g
        {
            let text = self.sysvipc_text(f);
            self.set_content(ino, text.as_bytes());
            return;
        }
        if let Gen::System(
            f @ (crate::procgen::SysFile::Keys | crate::procgen::SysFile::KeyUsers),
        ) = g
        {
            let text = self.keys_text(f == crate::procgen::SysFile::Keys);
            self.set_content(ino, text.as_bytes());
            return;
        }
        let mut buf = [0u8; 4096];
        let mut t = Text::new(&mut buf);
        let now = crate::now_ns();
        match g {
            Gen::Meminfo => {
                let (_, total, free) = self.sysinfo();
                let (total, free) = (total * 4, free * 4);
                // Stet's own lines: nodes in use by the UNIX system (files,
                // processes, keepers), and unixd's heap in use (its tables),
                // for finding leaks.
                let nodes = stet_rt::bank::info(crate::slots::BANK).map_or(0, |i| i[1]);
                let heap = crate::HEAP.used() / 1024;
                let _ = write!(
                    t,
                    "MemTotal:       {total:8} kB\nMemFree:        {free:8} kB\n\
                     MemAvailable:   {free:8} kB\nBuffers:        {:8} kB\n\
                     Cached:         {:8} kB\nSwapTotal:      {:8} kB\n\
                     SwapFree:       {:8} kB\nStetNodes:      {nodes:8}\n\
                     StetHeap:       {heap:8} kB\n",
                    0, 0, 0, 0
                );
            }
            Gen::Uptime => {
                let (busy, _) = self.busy_ns(now);
                stet_unix::procgen::uptime(&mut t, now, now - busy);
            }
            Gen::Status(pid) => self.status_text(&mut t, pid),
            Gen::Comm(pid) => {
                let Some(p) = self.procs.iter().find(|p| p.pid == pid) else {
                    return;
                };
                let end = p.comm.iter().position(|&b| b == 0).unwrap_or(16);
                let _ = t.write_str(core::str::from_utf8(&p.comm[..end]).unwrap_or("?"));
                let _ = t.write_str("\n");
            }
            Gen::System(f) => self.system_text(&mut t, f),
            Gen::Stat(pid) => {
                let Some(p) = self.procs.iter().find(|p| p.pid == pid).copied() else {
                    return;
                };
                let state = self.state_of(&p) as char;
                let end = p.comm.iter().position(|&b| b == 0).unwrap_or(16);
                let comm = core::str::from_utf8(&p.comm[..end]).unwrap_or("?");
                let tpgid = self.tty.fg;
                // Linux's 52 fields: pid (comm) state ppid pgrp session
                // tty_nr tpgid flags, fault counts, times, priority, nice,
                // threads, itrealvalue, starttime, vsize, rss, ... (zeros
                // for what is not kept).
                let _ = write!(
                    t,
                    "{pid} ({comm}) {state} {} {} {} 1024 {tpgid} 4194304 0 0 0 0 0 0 0 0 {} {} 1 0 0 0 0",
                    p.ppid,
                    p.pgid,
                    p.sid,
                    20 + p.nice as i32,
                    p.nice
                );
                for _ in 24..=52 {
                    let _ = t.write_str(" 0");
                }
                let _ = t.write_str("\n");
            }
        }
        let len = t.len();
        self.set_content(ino, &buf[..len]);
    }
}

/// The names (without their NUL) of the `linux_dirent64` records in `buf`,
/// as `Fs::getdents` writes them.
fn dirent_names(buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut at = 0;
    core::iter::from_fn(move || {
        if at + 19 >= buf.len() {
            return None;
        }
        let reclen = u16::from_le_bytes([buf[at + 16], buf[at + 17]]) as usize;
        let name = &buf[at + 19..(at + reclen).clamp(at + 19, buf.len())];
        let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
        // A zero length ends the walk (no record is that short).
        at = if reclen == 0 { buf.len() } else { at + reclen };
        Some(&name[..end])
    })
}
