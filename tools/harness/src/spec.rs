//! System test specs: one TOML file per test under `tests/system/`.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

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

/// One system test, as written in its TOML file.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Free text; not used by the harness.
    #[serde(default)]
    pub description: Option<String>,
    /// Programs started at boot, in order.
    pub programs: Vec<String>,
    /// Programs packed but not started.
    #[serde(default)]
    pub dormant: Vec<String>,
    /// The kernel command line.
    #[serde(default)]
    pub cmdline: String,
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
    /// How to boot.
    #[serde(default)]
    pub boot: BootMethod,
    /// Regexes that must each match some console line, in any order.
    #[serde(default)]
    pub contains: Vec<String>,
    /// Regexes that must match no console line.
    #[serde(default)]
    pub forbid: Vec<String>,
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
    /// Parses a spec from TOML text.
    pub fn parse(text: &str) -> Result<Self> {
        Ok(toml::from_str(text)?)
    }

    /// Reads and parses the spec at `path`.
    pub fn load(path: &Path) -> Result<Self> {
        let text =
            fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        Self::parse(&text).with_context(|| format!("parsing {}", path.display()))
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
        assert!(spec.expect.is_empty() && spec.forbid.is_empty() && spec.dormant.is_empty());
    }

    #[test]
    fn full_spec_parses() {
        let spec = Spec::parse(
            r#"
            description = "d"
            programs = ["a", "b"]
            dormant = ["c"]
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
        assert_eq!(spec.programs, ["a", "b"]);
        assert_eq!(spec.outcome, Outcome::Timeout);
        assert_eq!(spec.expect[2], "x ${rip}");
        assert_eq!(spec.exit_code, 35);
    }

    #[test]
    fn typos_are_errors() {
        assert!(Spec::parse("programs = []\nexpcet = []").is_err());
        assert!(Spec::parse("programs = []\noutcome = \"hang\"").is_err());
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
