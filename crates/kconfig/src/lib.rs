//! The kernel command line (`-append` under QEMU, the GRUB `multiboot2`
//! line on real machines), parsed into a [`Config`].
//!
//! Words are separated by spaces. Recognised words (those marked *testing*
//! only a kernel built with the `testing` feature carries out; any other
//! kernel says so on the console and ignores them: see
//! [`Config::testing_words`]):
//!
//! | word | meaning |
//! |---|---|
//! | `hz=N` | timer interrupt rate, 10..=10000 (default 100) |
//! | `exit_on_idle` | exit QEMU with success once no domain can run (tests, benchmarks) |
//! | `ckpt_ms=N` | period of checkpoints in milliseconds, 0 = only on demand (default 5000; a restarted store keeps the period it had) |
//! | `ckpt_trace` | print each checkpoint's phases on the console (tests) |
//! | `ckpt_halt=N` | stop the machine (spin, interrupts off) right after the commit root of the N-th checkpoint of this boot is written, before any flush or migration: the disk then holds a committed, unmigrated checkpoint, as a power cut at that moment would leave it (corruption tests) |
//! | `scrub_ms=N` | the store's scrub (a background check of both copies of every home) takes one step every N ms, 0 = never (default 100: one block or page at a time, about 10 a second — a pass over a 256 MiB disk takes minutes, and the scrub costs about 1 % of the CPU under QEMU's TCG) |
//! | `ckpt_halt_at=W` | where `ckpt_halt=N` stops: `commit` (the default, above), `home` (once the first pages of that checkpoint have been written home: the homes are partly migrated) or `migrated` (once it has migrated and the writer is idle: a quiet, checkpointed disk) |
//! | `bench_restart=N` | *testing*: a restart prints `BENCH name=restart_resume_<N>mib instructions=…` when it resumes the first domain (N: the MiB of state the benchmark stored, 1..=65536; benchmarks) |
//! | `bench_raw` | *testing*: allow the checkpoint key's `RAW_WRITE` order, a raw write over the free checkpoint log (benchmarks) |
//! | `invariants` | check the kernel's invariants before every return to user mode (tests) |
//! | `idle_dump` | when nothing can run, print every prepared domain's state (finding deadlocks) |
//! | `selftest=NAME` | *testing*: run a kernel self-test instead of the normal boot: `kfault` (a deliberate kernel page fault), `smep` (kernel jumps into a user page), `smap` (kernel reads a user page), `hang` (spin forever, interrupts off), `alloc` (try to allocate after sealing), `overflow` (overflow the kernel stack), `disk` (write, flush and read back patterns on the virtio-blk disk), `diskread` (only read back and check what `disk` wrote, e.g. on a second boot) |
//!
//! Unknown words are reported back, not fatal: a typo must not stop a boot.
#![cfg_attr(not(test), no_std)]

use core::fmt;

/// Default timer rate.
pub const DEFAULT_HZ: u32 = 100;
/// Default checkpoint period (ms).
pub const DEFAULT_CKPT_MS: u64 = 5000;
/// Default interval of the scrub's steps (ms).
pub const DEFAULT_SCRUB_MS: u64 = 100;

/// Kernel self-tests selectable from the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelfTest {
    /// Dereference an unmapped kernel address.
    KernelFault,
    /// Execute code in a user page from ring 0 (SMEP must stop it).
    Smep,
    /// Read a user page from ring 0 without STAC (SMAP must stop it).
    Smap,
    /// Spin forever with interrupts off (the harness must call this a hang).
    Hang,
    /// Allocate after the boot allocator is sealed (must be refused).
    LateAlloc,
    /// Recurse until the kernel stack hits its guard page (must be
    /// reported as a double fault on its own stack, not silently corrupt).
    StackOverflow,
    /// Write patterns to the disk with queued multi-frame requests, flush,
    /// read them back and compare; check refusals (needs a disk).
    Disk,
    /// Only read back and check the patterns `Disk` wrote (a second boot on
    /// the same disk image).
    DiskRead,
}

impl SelfTest {
    /// Every self-test.
    pub const ALL: [SelfTest; 8] = [
        SelfTest::KernelFault,
        SelfTest::Smep,
        SelfTest::Smap,
        SelfTest::Hang,
        SelfTest::LateAlloc,
        SelfTest::StackOverflow,
        SelfTest::Disk,
        SelfTest::DiskRead,
    ];

    /// Its name on the command line (`selftest=NAME`).
    pub fn name(self) -> &'static str {
        match self {
            SelfTest::KernelFault => "kfault",
            SelfTest::Smep => "smep",
            SelfTest::Smap => "smap",
            SelfTest::Hang => "hang",
            SelfTest::LateAlloc => "alloc",
            SelfTest::StackOverflow => "overflow",
            SelfTest::Disk => "disk",
            SelfTest::DiskRead => "diskread",
        }
    }

    /// The self-test called `name` on the command line.
    pub fn from_name(name: &str) -> Option<SelfTest> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }
}

/// A word only a kernel built with the `testing` feature carries out (the
/// self-tests and the benchmarks' measurements, which a user's kernel does
/// not contain). Displayed as it is written on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestingWord {
    /// `selftest=NAME`.
    SelfTest(SelfTest),
    /// `bench_restart=N`.
    BenchRestart(u32),
    /// `bench_raw`.
    BenchRaw,
}

impl fmt::Display for TestingWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TestingWord::SelfTest(t) => write!(f, "selftest={}", t.name()),
            TestingWord::BenchRestart(n) => write!(f, "bench_restart={n}"),
            TestingWord::BenchRaw => f.write_str("bench_raw"),
        }
    }
}

/// Where `ckpt_halt=N` stops the machine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HaltAt {
    /// Right after the commit root is written (before any flush).
    #[default]
    Commit,
    /// Once the first pages of the checkpoint are written home.
    Home,
    /// Once the checkpoint has migrated (the writer is idle).
    Migrated,
}

impl HaltAt {
    fn from_name(name: &str) -> Option<HaltAt> {
        Some(match name {
            "commit" => HaltAt::Commit,
            "home" => HaltAt::Home,
            "migrated" => HaltAt::Migrated,
            _ => return None,
        })
    }
}

/// The parsed command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Timer interrupts per second.
    pub hz: u32,
    /// Exit QEMU once no domain can run.
    pub exit_on_idle: bool,
    /// Check kernel invariants before every return to user mode.
    pub invariants: bool,
    /// Print every prepared domain's state when nothing can run.
    pub idle_dump: bool,
    /// A self-test to run, if any.
    pub selftest: Option<SelfTest>,
    /// Checkpoint period in ms (0: on demand only).
    pub ckpt_ms: u64,
    /// Print checkpoint phases.
    pub ckpt_trace: bool,
    /// Halt after the commit root of this boot's N-th checkpoint (0: never).
    pub ckpt_halt: u32,
    /// Where `ckpt_halt` stops.
    pub ckpt_halt_at: HaltAt,
    /// Milliseconds between the scrub's steps (0: no scrub).
    pub scrub_ms: u64,
    /// Print the restart benchmark line, naming this many MiB (0: no).
    pub bench_restart: u32,
    /// Allow the raw-write benchmark order.
    pub bench_raw: bool,
    /// Number of words not understood.
    pub unknown: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            hz: DEFAULT_HZ,
            exit_on_idle: false,
            invariants: false,
            idle_dump: false,
            selftest: None,
            ckpt_ms: DEFAULT_CKPT_MS,
            ckpt_trace: false,
            ckpt_halt: 0,
            ckpt_halt_at: HaltAt::Commit,
            scrub_ms: DEFAULT_SCRUB_MS,
            bench_restart: 0,
            bench_raw: false,
            unknown: 0,
        }
    }
}

impl Config {
    /// The words of this command line that only a testing kernel carries
    /// out. A kernel without the `testing` feature reports each and
    /// ignores it; the harness boots the testing kernel when there are any.
    pub fn testing_words(&self) -> impl Iterator<Item = TestingWord> {
        [
            self.selftest.map(TestingWord::SelfTest),
            (self.bench_restart != 0).then_some(TestingWord::BenchRestart(self.bench_restart)),
            self.bench_raw.then_some(TestingWord::BenchRaw),
        ]
        .into_iter()
        .flatten()
    }
}

/// Parses `line`; never fails (unknown or malformed words are counted).
pub fn parse(line: &str) -> Config {
    let mut c = Config::default();
    for word in line.split(' ').filter(|w| !w.is_empty()) {
        let (key, value) = match word.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (word, None),
        };
        let ok = match (key, value) {
            ("hz", Some(v)) => match v.parse::<u32>() {
                Ok(hz) if (10..=10_000).contains(&hz) => {
                    c.hz = hz;
                    true
                }
                _ => false,
            },
            ("exit_on_idle", None) => {
                c.exit_on_idle = true;
                true
            }
            ("ckpt_ms", Some(v)) => match v.parse::<u64>() {
                Ok(ms) if ms <= 86_400_000 => {
                    c.ckpt_ms = ms;
                    true
                }
                _ => false,
            },
            ("ckpt_halt", Some(v)) => match v.parse::<u32>() {
                Ok(n) => {
                    c.ckpt_halt = n;
                    true
                }
                _ => false,
            },
            ("scrub_ms", Some(v)) => match v.parse::<u64>() {
                Ok(ms) if ms <= 86_400_000 => {
                    c.scrub_ms = ms;
                    true
                }
                _ => false,
            },
            ("ckpt_halt_at", Some(v)) => match HaltAt::from_name(v) {
                Some(at) => {
                    c.ckpt_halt_at = at;
                    true
                }
                None => false,
            },
            ("ckpt_trace", None) => {
                c.ckpt_trace = true;
                true
            }
            ("bench_restart", Some(v)) => match v.parse::<u32>() {
                Ok(mib) if (1..=65536).contains(&mib) => {
                    c.bench_restart = mib;
                    true
                }
                _ => false,
            },
            ("bench_raw", None) => {
                c.bench_raw = true;
                true
            }
            ("invariants", None) => {
                c.invariants = true;
                true
            }
            ("idle_dump", None) => {
                c.idle_dump = true;
                true
            }
            ("selftest", Some(v)) => {
                c.selftest = SelfTest::from_name(v);
                c.selftest.is_some()
            }
            _ => false,
        };
        if !ok {
            c.unknown += 1;
        }
    }
    c
}

#[cfg(test)]
mod tests {

    #[test]
    fn checkpoint_words() {
        let c = parse("ckpt_ms=200 ckpt_trace ckpt_halt=3");
        assert_eq!(
            (c.ckpt_ms, c.ckpt_trace, c.ckpt_halt, c.unknown),
            (200, true, 3, 0)
        );
        assert_eq!(parse("").ckpt_ms, DEFAULT_CKPT_MS);
        assert_eq!(parse("").ckpt_halt_at, HaltAt::Commit);
        let c = parse("ckpt_halt=2 ckpt_halt_at=home");
        assert_eq!(
            (c.ckpt_halt, c.ckpt_halt_at, c.unknown),
            (2, HaltAt::Home, 0)
        );
        let c = parse("scrub_ms=0 scrub_ms=x");
        assert_eq!((c.scrub_ms, c.unknown), (0, 1));
        assert_eq!(parse("").scrub_ms, DEFAULT_SCRUB_MS);
        let c = parse("ckpt_halt_at=migrated ckpt_halt_at=later");
        assert_eq!((c.ckpt_halt_at, c.unknown), (HaltAt::Migrated, 1));
        let bad = parse("ckpt_ms=x ckpt_ms=99999999999 ckpt_trace=1");
        assert_eq!(
            (bad.ckpt_ms, bad.ckpt_trace, bad.unknown),
            (DEFAULT_CKPT_MS, false, 3)
        );
        let c = parse("exit_on_idle bench_restart=64 bench_raw");
        assert_eq!((c.bench_restart, c.bench_raw, c.unknown), (64, true, 0));
        let bad = parse("bench_restart=0 bench_restart=x bench_restart bench_raw=1");
        assert_eq!(
            (bad.bench_restart, bad.bench_raw, bad.unknown),
            (0, false, 4)
        );
        assert_eq!((parse("").bench_restart, parse("").bench_raw), (0, false));
    }

    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_known_words() {
        assert_eq!(
            parse("selftest=overflow").selftest,
            Some(SelfTest::StackOverflow)
        );
        assert_eq!(parse("selftest=disk").selftest, Some(SelfTest::Disk));
        assert_eq!(
            parse("selftest=diskread").selftest,
            Some(SelfTest::DiskRead)
        );
        let c = parse("hz=250  exit_on_idle selftest=smep invariants");
        assert_eq!(c.hz, 250);
        assert!(c.invariants);
        assert!(c.exit_on_idle);
        assert_eq!(c.selftest, Some(SelfTest::Smep));
        assert_eq!(c.unknown, 0);
        assert_eq!(parse(""), Config::default());
    }

    #[test]
    fn counts_bad_words_and_keeps_defaults() {
        let c = parse("hz=0 hz=abc selftest=nope bogus exit_on_idle=1");
        assert_eq!(c.hz, DEFAULT_HZ);
        assert_eq!(c.selftest, None);
        assert!(!c.exit_on_idle);
        assert_eq!(c.unknown, 5);
    }

    #[test]
    fn testing_words_are_listed_as_written() {
        let words = |line: &str| {
            parse(line)
                .testing_words()
                .map(|w| w.to_string())
                .collect::<Vec<_>>()
        };
        assert!(words("exit_on_idle invariants ckpt_halt=3 ckpt_trace").is_empty());
        assert_eq!(
            words("bench_raw selftest=diskread bench_restart=64"),
            ["selftest=diskread", "bench_restart=64", "bench_raw"]
        );
        for t in SelfTest::ALL {
            let name = t.name();
            assert_eq!(SelfTest::from_name(name), Some(t));
            assert_eq!(
                words(&format!("selftest={name}")),
                [format!("selftest={name}")]
            );
        }
    }

    proptest! {
        #[test]
        fn never_panics(s in ".{0,200}") {
            let c = parse(&s);
            prop_assert!((10..=10_000).contains(&c.hz));
        }
    }
}
