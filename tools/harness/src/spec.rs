//! System test specs: one TOML file per test under `tests/system/`.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use stet_mkimage::{DomainSpec, MeterSpec};

use crate::crash_spec::{Boot, FlushpointsSpec, PowercutSpec};
use crate::input::InputStep;

/// What a test expects the guest to do.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// QEMU exits by itself with the expected status.
    #[default]
    Pass,
    /// The guest hangs and the harness must kill it at the timeout.
    Timeout,
}

/// How the guest is booted.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BootMethod {
    /// QEMU `-kernel` (the PVH entry).
    #[default]
    Pvh,
    /// A GRUB CD image (the Multiboot2 entry, as on a real machine).
    Grub,
}

/// Which kernel a run boots (docs/ARCHITECTURE.md, "Test-only code").
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum KernelKind {
    /// The kernel users boot (`build/stet-kernel`, what `make run` boots).
    User,
    /// The test kernel (`build/stet-kernel-test`, the `testing` feature):
    /// the user kernel plus the self-tests and the benchmark measurements.
    Testing,
}

/// One system test, as written in its TOML file.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Free text; not used by the harness.
    #[serde(default)]
    pub description: Option<String>,
    /// Shorthand for the image: one running domain per program, in order,
    /// with the console, sleep and discrim keys in general slots 1-3 (see
    /// `stet_mkimage::Spec::from_programs`). Exclusive with `[[domain]]`.
    #[serde(default)]
    pub programs: Option<Vec<String>>,
    /// `[[domain]]` tables: the image's domains (the stet-mkimage schema).
    #[serde(default)]
    pub domain: Vec<DomainSpec>,
    /// The image of another spec, by path from this spec's directory
    /// (`"../run.toml"`: what `make run` boots): its domains and meters
    /// become this spec's. Exclusive with `programs` and `[[domain]]`.
    #[serde(default)]
    pub image_of: Option<PathBuf>,
    /// `[[meter]]` tables: meters besides the prime meter.
    #[serde(default)]
    pub meter: Vec<MeterSpec>,
    /// The kernel command line.
    #[serde(default)]
    pub cmdline: String,
    /// The kernel to boot (`"user"`, `"testing"`); default: see
    /// [`Spec::kernel`]. Only a test of what the user kernel does with a
    /// test-only word needs to say.
    #[serde(default)]
    pub kernel: Option<KernelKind>,
    /// Extra QEMU arguments.
    #[serde(default)]
    pub qemu_args: Vec<String>,
    /// Guest memory size.
    #[serde(default = "default_mem")]
    pub mem: String,
    /// Seconds before the guest is killed.
    #[serde(default = "default_timeout")]
    pub timeout_secs: u64,
    /// QEMU's expected exit status.
    #[serde(default = "default_exit_code")]
    pub exit_code: i32,
    /// Whether the guest should exit or hang.
    #[serde(default)]
    pub outcome: Outcome,
    /// Regexes that must match console lines in order.
    #[serde(default)]
    pub expect: Vec<String>,
    /// How to boot (`"pvh"`, `"grub"`), or `[[boot]]` tables: boots in
    /// order on one disk (see `crash_spec::BootStep`).
    #[serde(default)]
    pub boot: Boot,
    /// Regexes that must each match some console line, in any order.
    #[serde(default)]
    pub contains: Vec<String>,
    /// Regexes that must match no console line.
    #[serde(default)]
    pub forbid: Vec<String>,
    /// Attach a fresh, zeroed virtio-blk disk of this size (`"64M"`,
    /// `"1G"`; a sparse file, created anew for every run).
    #[serde(default)]
    pub disk: Option<String>,
    /// Power-cut test: kill and reboot at seeded random moments.
    #[serde(default)]
    pub powercut: Option<PowercutSpec>,
    /// Every-flush-point test: replay a logged run's writes up to each
    /// flush and boot each image.
    #[serde(default)]
    pub flushpoints: Option<FlushpointsSpec>,
    /// `[[input]]` tables: text typed into the guest's serial console, each
    /// after a console line matches (plain tests only; see `input.rs`).
    #[serde(default)]
    pub input: Vec<InputStep>,
    /// Benchmarks only: rows whose names start with the first string are
    /// renamed to start with the second (`["linux_", "unix_"]`: the Linux
    /// benchmark's binary run unchanged on the UNIX personality).
    #[serde(default)]
    pub rename_rows: Option<(String, String)>,
}

/// Default guest memory.
pub const DEFAULT_MEM: &str = "256M";
/// QEMU status when the kernel reports success through isa-debug-exit.
pub const EXIT_SUCCESS: i32 = 33;

fn default_mem() -> String {
    DEFAULT_MEM.to_string()
}

fn default_timeout() -> u64 {
    30
}

fn default_exit_code() -> i32 {
    EXIT_SUCCESS
}

impl Spec {
    /// Parses a spec from TOML text. It must give `programs` or
    /// `[[domain]]` tables, not both, and its crash-test parts must fit
    /// together (`crash_spec::mode`).
    pub fn parse(text: &str) -> Result<Self> {
        let spec: Spec = toml::from_str(text)?;
        match (&spec.programs, spec.domain.is_empty(), &spec.image_of) {
            (Some(_), false, _) => {
                bail!("give either `programs` or `[[domain]]` tables, not both")
            }
            (None, true, None) => bail!("no `programs`, `image_of` or `[[domain]]` tables"),
            (Some(_), _, Some(_)) | (_, false, Some(_)) => {
                bail!("`image_of` takes the place of `programs` and `[[domain]]` tables")
            }
            _ => {}
        }
        if let Err(e) = crate::crash_spec::mode(&spec) {
            bail!("{e}");
        }
        Ok(spec)
    }

    /// What the big bang image holds.
    pub fn image(&self) -> stet_mkimage::Spec {
        let mut spec = match &self.programs {
            Some(programs) => stet_mkimage::Spec::from_programs(programs),
            None => stet_mkimage::Spec {
                meter: Vec::new(),
                domain: self.domain.clone(),
            },
        };
        spec.meter = self.meter.clone();
        spec
    }

    /// The kernel this spec boots: `kernel` if it says, else the test
    /// kernel if one of its command lines (its own, its `[[boot]]` steps')
    /// has a word only the test kernel carries out (`selftest=`,
    /// `bench_restart=`, `bench_raw`: `stet_kconfig::Config::testing_words`),
    /// else the kernel users boot. So every test of the normal boot tests
    /// what users run.
    pub fn kernel(&self) -> KernelKind {
        if let Some(k) = self.kernel {
            return k;
        }
        let steps = match &self.boot {
            crate::crash_spec::Boot::Steps(steps) => steps.as_slice(),
            crate::crash_spec::Boot::Method(_) => &[],
        };
        let mut lines =
            std::iter::once(&self.cmdline).chain(steps.iter().filter_map(|s| s.cmdline.as_ref()));
        if lines.any(|l| stet_kconfig::parse(l).testing_words().next().is_some()) {
            KernelKind::Testing
        } else {
            KernelKind::User
        }
    }

    /// Reads and parses the spec at `path`.
    pub fn load(path: &Path) -> Result<Self> {
        let text =
            fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let mut spec = Self::parse(&text).with_context(|| format!("parsing {}", path.display()))?;
        if let Some(of) = &spec.image_of {
            let other_path = path.parent().unwrap_or(Path::new(".")).join(of);
            let other = Self::load(&other_path)
                .with_context(|| format!("image_of in {}", path.display()))?;
            if other.image_of.is_some() {
                bail!(
                    "{}: image_of names a spec that has image_of",
                    path.display()
                );
            }
            spec.image_of = None;
            spec.programs = other.programs;
            spec.domain = other.domain;
            spec.meter = other.meter;
        }
        Ok(spec)
    }
}

/// A test found on disk: its name (the file stem) and its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestFile {
    /// The test name.
    pub name: String,
    /// The spec file.
    pub path: PathBuf,
}

/// Every `*.toml` in `dir`, sorted by name. A missing directory holds none.
pub fn discover(dir: &Path) -> Result<Vec<TestFile>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("listing {}", dir.display())),
    };
    let mut tests = Vec::new();
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                tests.push(TestFile {
                    name: stem.to_string(),
                    path: path.clone(),
                });
            }
        }
    }
    tests.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(tests)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    #[test]
    fn defaults_apply() {
        let spec = Spec::parse(r#"programs = ["hello"]"#).unwrap();
        assert_eq!(spec.mem, "256M");
        assert_eq!(spec.timeout_secs, 30);
        assert_eq!(spec.exit_code, 33);
        assert_eq!(spec.outcome, Outcome::Pass);
        assert_eq!(spec.cmdline, "");
        assert!(spec.expect.is_empty() && spec.forbid.is_empty());
        assert!(spec.domain.is_empty() && spec.meter.is_empty());
        assert_eq!(spec.kernel(), KernelKind::User);
    }

    #[test]
    fn test_only_words_choose_the_test_kernel() {
        let kernel = |text: &str| Spec::parse(text).unwrap().kernel();
        let plain = "programs = []\ncmdline = 'exit_on_idle invariants ckpt_halt=2'\n";
        assert_eq!(kernel(plain), KernelKind::User);
        for word in ["selftest=disk", "bench_restart=64", "bench_raw"] {
            let text = format!("programs = []\ncmdline = 'exit_on_idle {word}'\n");
            assert_eq!(kernel(&text), KernelKind::Testing, "{word}");
            // A step's command line counts too.
            let step =
                format!("programs = []\ndisk = '64M'\n[[boot]]\n[[boot]]\ncmdline = '{word}'\n");
            assert_eq!(kernel(&step), KernelKind::Testing, "{word}");
        }
        // A misspelt word asks for nothing (the kernel reports it unknown).
        assert_eq!(
            kernel("programs = []\ncmdline = 'selftest=nope'\n"),
            KernelKind::User
        );
        // The spec may say.
        let user = "programs = []\nkernel = 'user'\ncmdline = 'selftest=kfault'\n";
        assert_eq!(kernel(user), KernelKind::User);
        let testing = "programs = []\nkernel = 'testing'\n";
        assert_eq!(kernel(testing), KernelKind::Testing);
        assert!(Spec::parse("programs = []\nkernel = 'test'\n").is_err());
    }

    #[test]
    fn full_spec_parses() {
        let spec = Spec::parse(
            r#"
            description = "d"
            programs = ["a", "b"]
            cmdline = "exit_on_idle"
            qemu_args = ["-cpu", "max"]
            mem = "512M"
            timeout_secs = 5
            exit_code = 35
            outcome = "timeout"
            expect = ['Stet \d+', 'rip=(?P<rip>0x[0-9a-f]+)', 'x ${rip}']
            forbid = ['PANIC']
            "#,
        )
        .unwrap();
        assert_eq!(spec.programs, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(spec.outcome, Outcome::Timeout);
        assert_eq!(spec.expect[2], "x ${rip}");
        assert_eq!(spec.exit_code, 35);
    }

    #[test]
    fn typos_are_errors() {
        assert!(Spec::parse("programs = []\nexpcet = []").is_err());
        assert!(Spec::parse("programs = []\noutcome = \"hang\"").is_err());
        assert!(Spec::parse("programs = []\ndormant = [\"x\"]").is_err());
        let typo = "[[domain]]\nname = \"a\"\nprogram = \"a\"\nstak_pages = 1\n";
        assert!(Spec::parse(typo).is_err());
    }

    #[test]
    fn image_of_takes_another_specs_image() {
        let dir = TempDir::new("image-of");
        let run = dir.path().join("run.toml");
        fs::write(
            &run,
            "[[meter]]\nname = \"m\"\n[[domain]]\nname = \"a\"\nprogram = \"hello\"\n",
        )
        .unwrap();
        fs::create_dir(dir.path().join("system")).unwrap();
        let test = dir.path().join("system/t.toml");
        fs::write(&test, "image_of = \"../run.toml\"\nexpect = ['x']\n").unwrap();
        let spec = Spec::load(&test).unwrap();
        assert_eq!(spec.image_of, None);
        assert_eq!(spec.domain.len(), 1);
        assert_eq!(spec.domain[0].name, "a");
        assert_eq!(spec.meter.len(), 1);
        assert_eq!(spec.expect, vec!["x".to_string()]);

        let both = "image_of = \"r.toml\"\nprograms = [\"a\"]";
        assert!(Spec::parse(both)
            .unwrap_err()
            .to_string()
            .contains("takes the place"));
        fs::write(&test, "image_of = \"../nothing.toml\"\n").unwrap();
        let err = format!("{:#}", Spec::load(&test).unwrap_err());
        assert!(err.contains("nothing.toml"), "{err}");
    }

    #[test]
    fn programs_shorthand_makes_domains() {
        let spec = Spec::parse("programs = [\"hello\", \"spin-a\"]").unwrap();
        let image = spec.image();
        assert!(image.meter.is_empty());
        let names: Vec<_> = image.domain.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["hello", "spin-a"]);
        assert_eq!(image.domain[1].program, "spin-a");
        assert_eq!(image.domain[0].keys, ["console", "sleep", "discrim"]);
        assert_eq!(image.domain[0].state, stet_mkimage::RunState::Running);
        assert!(Spec::parse("programs = []")
            .unwrap()
            .image()
            .domain
            .is_empty());
    }

    #[test]
    fn domain_and_meter_tables() {
        let spec = Spec::parse(
            r#"
            cmdline = "exit_on_idle"
            expect = ['echo: ok']

            [[meter]]
            name = "slow"
            time = 500
            keeper = "sched:1"

            [[domain]]
            name = "echo"
            program = "echo-server"
            state = "available"
            meter = "slow"
            keys = ["console"]

            [[domain]]
            name = "sched"
            program = "sched"
            keys = ["start:echo:7", "meter-node:slow"]
            stack_pages = 4
            "#,
        )
        .unwrap();
        assert_eq!(spec.cmdline, "exit_on_idle");
        assert_eq!(spec.programs, None);
        let image = spec.image();
        assert_eq!(image.meter.len(), 1);
        assert_eq!(image.meter[0].time, Some(500));
        assert_eq!(image.meter[0].keeper.as_deref(), Some("sched:1"));
        assert_eq!(image.domain.len(), 2);
        assert_eq!(image.domain[0].state, stet_mkimage::RunState::Available);
        assert_eq!(image.domain[0].meter, "slow");
        assert_eq!(image.domain[1].keys, ["start:echo:7", "meter-node:slow"]);
        assert_eq!(image.domain[1].stack_pages, 4);
    }

    #[test]
    fn input_steps() {
        let spec = Spec::parse(
            r#"
            programs = ["a"]
            [[input]]
            after = 'ready'
            text = "hello\n"
            [[input]]
            after = 'again'
            text = ""
            "#,
        )
        .unwrap();
        assert_eq!(spec.input.len(), 2);
        assert_eq!(spec.input[0].after, "ready");
        assert_eq!(spec.input[0].text, "hello\n");
        assert!(Spec::parse("programs = []").unwrap().input.is_empty());
        let typo = "programs = []\n[[input]]\nafter = 'x'\ntxt = 'y'\n";
        assert!(Spec::parse(typo).is_err());
        let missing = "programs = []\n[[input]]\nafter = 'x'\n";
        assert!(Spec::parse(missing).is_err());
        let crash = "programs = []\ndisk = '64M'\n[[boot]]\n[[input]]\nafter = 'x'\ntext = 'y'\n";
        let err = Spec::parse(crash).unwrap_err().to_string();
        assert!(err.contains("[[input]] works only in plain tests"), "{err}");
    }

    #[test]
    fn programs_and_domains_are_exclusive() {
        let both = "programs = [\"a\"]\n[[domain]]\nname = \"b\"\nprogram = \"b\"\n";
        let err = Spec::parse(both).unwrap_err().to_string();
        assert!(err.contains("not both"), "{err}");
        let err = Spec::parse("cmdline = \"x\"").unwrap_err().to_string();
        assert!(err.contains("no `programs`"), "{err}");
    }

    #[test]
    fn repository_specs_parse() {
        let layout =
            crate::root::Layout::find(None, Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
        let tests = discover(&layout.specs()).unwrap();
        assert!(!tests.is_empty());
        // Specs waiting for kernel work, and the benchmarks, must parse too.
        let pending = discover(&layout.specs().join("pending")).unwrap();
        let bench = discover(&layout.bench_dir()).unwrap();
        assert!(!bench.is_empty());
        for t in tests
            .iter()
            .chain(&pending)
            .chain(&bench)
            .map(|t| t.path.clone())
            .chain([layout.run_spec()])
        {
            Spec::load(&t).unwrap_or_else(|e| panic!("{e:#}"));
        }
        // `make run` boots the user kernel: what it boots must not need
        // the test kernel.
        let run = Spec::load(&layout.run_spec()).unwrap();
        assert_eq!(run.kernel(), KernelKind::User);
    }

    #[test]
    fn discovers_toml_files_sorted() {
        let dir = TempDir::new("spec");
        for f in ["b.toml", "a.toml", "notes.md"] {
            fs::write(dir.path().join(f), "").unwrap();
        }
        let names: Vec<_> = discover(dir.path())
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert!(discover(&dir.path().join("none")).unwrap().is_empty());
    }
}
