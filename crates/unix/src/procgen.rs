//! The text and records of `/proc`'s generated files and of the calls
//! that describe the system as a whole, in Linux's formats: `/proc/version`,
//! `/proc/filesystems`, `/proc/mounts`, `/proc/stat`, `/proc/uptime`,
//! `/proc/loadavg`, `/proc/<pid>/status`, and the records `statfs` and
//! `sysinfo` write. unixd gathers the figures; this formats them (into a
//! fixed buffer: nothing here allocates).

use crate::sys::{statfs, UNAME};
use core::fmt::Write;

/// A fixed buffer that formats text; what does not fit is cut.
pub struct Text<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl<'a> Text<'a> {
    /// An empty text in `buf`.
    pub fn new(buf: &'a mut [u8]) -> Self {
        Text { buf, len: 0 }
    }

    /// The bytes so far.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is written yet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends bytes (as many as fit).
    pub fn bytes(&mut self, b: &[u8]) {
        let n = b.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
    }

    /// Ends the text with a newline, over its last byte if it is full →
    /// its length.
    pub fn end_line(&mut self) -> usize {
        if self.len < self.buf.len() {
            self.buf[self.len] = b'\n';
            self.len += 1;
        } else if self.len > 0 {
            self.buf[self.len - 1] = b'\n';
        }
        self.len
    }
}

impl Write for Text<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        self.bytes(s.as_bytes());
        Ok(())
    }
}

/// `/proc/version` (and the kernel log's first line, without `\n`).
pub fn version(t: &mut Text) {
    let _ = writeln!(
        t,
        "{} version {} (stet@{}) (rustc) {}",
        UNAME[0], UNAME[2], UNAME[1], UNAME[3]
    );
}

/// The file systems there are (`/proc/filesystems`): the root file
/// system, unixd's memory made persistent by the store, is the nearest
/// thing Linux has, `tmpfs`; `/proc` is `proc`.
pub fn filesystems(t: &mut Text) {
    let _ = t.write_str("nodev\ttmpfs\nnodev\tproc\n");
}

/// `/proc/<pid>/mounts` (and so `/proc/mounts`, `/etc/mtab`): the root
/// file system and `/proc`. `/dev` and `/tmp` are directories of the root
/// file system, not file systems of their own.
pub fn mounts(t: &mut Text) {
    let _ = t.write_str("stet / tmpfs rw 0 0\nproc /proc proc rw,nosuid,nodev,noexec 0 0\n");
}

/// Clock ticks per second in `/proc` (Linux's `USER_HZ`).
pub const USER_HZ: u64 = 100;

/// `/proc/stat`'s figures.
#[derive(Clone, Copy, Debug, Default)]
pub struct KStat {
    /// Processors.
    pub cpus: u32,
    /// Time the processor ran something (`USER_HZ` ticks since boot).
    pub busy: u64,
    /// Time it idled.
    pub idle: u64,
    /// Boot time, seconds since 1970.
    pub btime: u64,
    /// Processes made since boot (`fork`s).
    pub processes: u64,
    /// Processes running now.
    pub running: u64,
    /// Processes blocked in an uninterruptible wait.
    pub blocked: u64,
}

/// `/proc/stat`: the `cpu` lines (time that ran counts as user time: the
/// kernel does not tell user from system time; the rest is idle),
/// interrupts and context switches (not counted: 0), `btime`, `processes`,
/// `procs_running`, `procs_blocked`.
pub fn kstat(t: &mut Text, s: &KStat) {
    let cpus = s.cpus.max(1) as u64;
    let line = |t: &mut Text, name: &str, busy: u64, idle: u64| {
        let _ = writeln!(t, "{name} {busy} 0 0 {idle} 0 0 0 0 0 0");
    };
    line(t, "cpu ", s.busy, s.idle);
    for c in 0..cpus {
        let mut name = [0u8; 16];
        let mut n = Text::new(&mut name);
        let _ = write!(n, "cpu{c}");
        let l = n.len();
        let name = core::str::from_utf8(&name[..l]).unwrap_or("cpu");
        line(t, name, s.busy / cpus, s.idle / cpus);
    }
    let _ = write!(
        t,
        "intr 0\nctxt 0\nbtime {}\nprocesses {}\nprocs_running {}\nprocs_blocked {}\n\
         softirq 0 0 0 0 0 0 0 0 0 0 0\n",
        s.btime, s.processes, s.running, s.blocked
    );
}

/// `/proc/uptime`: seconds since boot and seconds idle, to hundredths.
pub fn uptime(t: &mut Text, up_ns: u64, idle_ns: u64) {
    let (u, i) = (up_ns / 10_000_000, idle_ns / 10_000_000);
    let _ = writeln!(t, "{}.{:02} {}.{:02}", u / 100, u % 100, i / 100, i % 100);
}

/// `/proc/loadavg`: the three averages (`loadavg::Load`'s fixed point),
/// running and all processes, the last pid given.
pub fn loadavg(t: &mut Text, avgs: [u64; 3], running: u64, total: u64, last_pid: u32) {
    for a in avgs {
        let (i, f) = crate::loadavg::Load::figures(a);
        let _ = write!(t, "{i}.{f:02} ");
    }
    let _ = writeln!(t, "{running}/{total} {last_pid}");
}

/// What `/proc/<pid>/status` says of a process.
#[derive(Clone, Copy, Debug)]
pub struct Status<'a> {
    /// Its program's name (`comm`).
    pub name: &'a [u8],
    /// `R`, `S` or `Z`.
    pub state: u8,
    /// Its pid.
    pub pid: u32,
    /// Its parent's.
    pub ppid: u32,
    /// Its process group.
    pub pgid: u32,
    /// Its session.
    pub sid: u32,
    /// Real, effective, saved and file-system user ids.
    pub uids: [u32; 4],
    /// Real, effective, saved and file-system group ids.
    pub gids: [u32; 4],
    /// Supplementary groups.
    pub groups: &'a [u32],
    /// Descriptor slots.
    pub fdsize: u32,
    /// Signals pending.
    pub pending: u64,
    /// Its threads.
    pub threads: u32,
    /// Its memory as its keeper last reported it: bytes mapped, bytes
    /// locked, pages resident, most pages resident, most bytes mapped
    /// (all 0: no `Vm*` lines).
    pub vm: [u64; 5],
    /// The process tracing it (0: none).
    pub tracer: u32,
}

/// `/proc/<pid>/status`: the lines unixd knows (no signal masks: they are
/// the keeper's). The `Vm*` lines are the figures the process's keeper
/// sent when the process last opened its own file (a process's memory is
/// its keeper's business): `VmPeak`, `VmSize`, `VmLck`, `VmPin` (0),
/// `VmHWM`, `VmRSS` (all resident pages counted as anonymous), `VmSwap`
/// (0), in Linux's `%8lu kB` format.
pub fn status(t: &mut Text, s: &Status) {
    let _ = t.write_str("Name:\t");
    for &c in s.name {
        // Linux escapes what would break the line; unprintable bytes are
        // shown as '?'.
        match c {
            b'\n' => t.bytes(b"\\n"),
            b'\\' => t.bytes(b"\\\\"),
            0x20..=0x7e => t.bytes(&[c]),
            _ => t.bytes(b"?"),
        }
    }
    let state = match s.state {
        b'R' => "R (running)",
        b'S' => "S (sleeping)",
        b'Z' => "Z (zombie)",
        b't' => "t (tracing stop)",
        _ => "D (disk sleep)",
    };
    let [u0, u1, u2, u3] = s.uids;
    let [g0, g1, g2, g3] = s.gids;
    let _ = write!(
        t,
        "\nState:\t{state}\nTgid:\t{pid}\nNgid:\t0\nPid:\t{pid}\nPPid:\t{}\nTracerPid:\t{}\n\
         Uid:\t{u0}\t{u1}\t{u2}\t{u3}\nGid:\t{g0}\t{g1}\t{g2}\t{g3}\nFDSize:\t{}\nGroups:\t",
        s.ppid,
        s.tracer,
        s.fdsize,
        pid = s.pid
    );
    for (i, g) in s.groups.iter().enumerate() {
        let _ = write!(t, "{}{g}", if i > 0 { " " } else { "" });
    }
    let _ = write!(
        t,
        "\nNStgid:\t{pid}\nNSpid:\t{pid}\nNSpgid:\t{}\nNSsid:\t{}\n",
        s.pgid,
        s.sid,
        pid = s.pid
    );
    if s.vm != [0; 5] {
        let [size, lck, rss, hwm, peak] = s.vm;
        let (size, lck, peak) = (size / 1024, lck / 1024, peak / 1024);
        let (rss, hwm) = (rss * 4, hwm * 4);
        let _ = write!(
            t,
            "VmPeak:\t{peak:8} kB\nVmSize:\t{size:8} kB\nVmLck:\t{lck:8} kB\n\
             VmPin:\t{:8} kB\nVmHWM:\t{hwm:8} kB\nVmRSS:\t{rss:8} kB\n\
             RssAnon:\t{rss:8} kB\nRssFile:\t{:8} kB\nRssShmem:\t{:8} kB\n\
             VmSwap:\t{:8} kB\n",
            0, 0, 0, 0
        );
    }
    let _ = write!(
        t,
        "Threads:\t{}\n\
         SigPnd:\t{:016x}\nShdPnd:\t{:016x}\nCpus_allowed:\t1\nCpus_allowed_list:\t0\n",
        s.threads, s.pending, s.pending,
    );
}

/// `struct statfs`'s figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Statfs {
    /// The file system's magic number.
    pub kind: u64,
    /// Blocks (of [`BLOCK`] bytes) in all.
    pub blocks: u64,
    /// Blocks free.
    pub bfree: u64,
    /// Blocks the caller may still fill.
    pub bavail: u64,
    /// Inodes in all.
    pub files: u64,
    /// Inodes free.
    pub ffree: u64,
    /// `ST_*` mount flags (`ST_VALID` is added).
    pub flags: u64,
}

/// The block size `statfs` reports: a page.
pub const BLOCK: u64 = 4096;

/// The longest name (`f_namelen`).
pub const NAME_MAX: u64 = crate::fs::MAX_NAME as u64;

impl Statfs {
    /// The root file system (`tmpfs`'s number).
    pub fn root(blocks: u64, bfree: u64, bavail: u64, files: u64, ffree: u64) -> Statfs {
        Statfs {
            kind: statfs::TMPFS_MAGIC,
            blocks,
            bfree: bfree.min(blocks),
            bavail: bavail.min(bfree).min(blocks),
            files,
            ffree: ffree.min(files),
            flags: 0,
        }
    }

    /// `/proc`.
    pub fn proc() -> Statfs {
        Statfs {
            kind: statfs::PROC_SUPER_MAGIC,
            flags: statfs::ST_NOSUID | statfs::ST_NODEV | statfs::ST_NOEXEC,
            ..Statfs::default()
        }
    }

    /// A pipe's (`pipefs`).
    pub fn pipe() -> Statfs {
        Statfs {
            kind: statfs::PIPEFS_MAGIC,
            ..Statfs::default()
        }
    }

    /// The record `statfs` writes (x86_64's `struct statfs`).
    pub fn bytes(&self) -> [u8; statfs::SIZE] {
        let mut b = [0u8; statfs::SIZE];
        let fields = [
            self.kind,
            BLOCK,
            self.blocks,
            self.bfree,
            self.bavail,
            self.files,
            self.ffree,
            0, // f_fsid
            NAME_MAX,
            BLOCK, // f_frsize
            self.flags | statfs::ST_VALID,
        ];
        for (c, v) in b.chunks_exact_mut(8).zip(fields) {
            c.copy_from_slice(&v.to_le_bytes());
        }
        b
    }
}

/// `struct sysinfo`'s figures.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sysinfo {
    /// Seconds since boot.
    pub uptime: u64,
    /// The load averages (`loadavg::Load`'s fixed point).
    pub loads: [u64; 3],
    /// Memory in all, in pages.
    pub totalram: u64,
    /// Memory free, in pages.
    pub freeram: u64,
    /// Processes.
    pub procs: u64,
}

/// The size of `struct sysinfo` on x86_64.
pub const SYSINFO_SIZE: usize = 112;

impl Sysinfo {
    /// The record `sysinfo` writes: sizes in pages (`mem_unit` 4096),
    /// loads shifted to `SI_LOAD_SHIFT` (16).
    pub fn bytes(&self) -> [u8; SYSINFO_SIZE] {
        let mut b = [0u8; SYSINFO_SIZE];
        let mut put = |off: usize, v: &[u8]| b[off..off + v.len()].copy_from_slice(v);
        put(0, &self.uptime.to_le_bytes());
        for (i, l) in self.loads.iter().enumerate() {
            put(8 + 8 * i, &crate::loadavg::Load::si_load(*l).to_le_bytes());
        }
        put(32, &self.totalram.to_le_bytes());
        put(40, &self.freeram.to_le_bytes());
        put(80, &(self.procs.min(u16::MAX as u64) as u16).to_le_bytes());
        put(104, &4096u32.to_le_bytes());
        b
    }
}

#[cfg(test)]
mod tests;
