//! The domain spec: what the image holds, as written in TOML (`[[meter]]`
//! and `[[domain]]` tables). See `docs/IMAGE.md` for the prose version.

use anyhow::{Context, Result};
use serde::Deserialize;

/// The name of the meter that always exists (unlimited time).
pub const PRIME: &str = "prime";
/// Default stack pages.
pub const DEFAULT_STACK_PAGES: u64 = 16;
/// Keys the `programs = [..]` shorthand gives each domain (slots 1, 2, 3).
pub const SHORTHAND_KEYS: [&str; 3] = ["console", "sleep", "discrim"];

/// A whole image: meters and domains.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Meters besides the prime meter.
    #[serde(default)]
    pub meter: Vec<MeterSpec>,
    /// Domains, in order (a domain's default `arg` is its index here).
    #[serde(default)]
    pub domain: Vec<DomainSpec>,
}

/// A `[[meter]]` table.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct MeterSpec {
    /// Unique among meters; not `prime`.
    pub name: String,
    /// The superior meter's name.
    #[serde(default = "prime")]
    pub superior: String,
    /// Ticks; `None`: unlimited (`u64::MAX`).
    #[serde(default)]
    pub time: Option<u64>,
    /// Meter keeper: `<domain>` or `<domain>:<info>` (a start key).
    #[serde(default)]
    pub keeper: Option<String>,
}

/// What a domain does first.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// Runs from its entry point at boot.
    #[default]
    Running,
    /// Waits for a message through a start key.
    Available,
}

/// A `[[domain]]` table.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DomainSpec {
    /// Unique among domains, 1..=23 bytes, no `:`.
    pub name: String,
    /// The ELF file name, looked up by the caller.
    pub program: String,
    /// Key specs for general key slots 1, 2, … (slot 0 is always void).
    #[serde(default)]
    pub keys: Vec<String>,
    /// Initial run state.
    #[serde(default)]
    pub state: RunState,
    /// Stopped (neither runs nor accepts messages).
    #[serde(default)]
    pub stopped: bool,
    /// A foreign (Linux ABI) domain.
    #[serde(default)]
    pub foreign: bool,
    /// Its meter's name.
    #[serde(default = "prime")]
    pub meter: String,
    /// Domain keeper: `<domain>` or `<domain>:<info>`.
    #[serde(default)]
    pub keeper: Option<String>,
    /// Segment keeper of the address space: `<domain>` or `<domain>:<info>`.
    #[serde(default)]
    pub segment_keeper: Option<String>,
    /// Zero pages just below `layout::STACK_TOP`.
    #[serde(default = "default_stack_pages")]
    pub stack_pages: u64,
    /// Zero pages from `layout::HEAP_START` up.
    #[serde(default)]
    pub heap_pages: u64,
    /// Initial `rdi`; default: the domain's index in the spec.
    #[serde(default)]
    pub arg: Option<u64>,
    /// Its I/O-port key (root slot 12): an `ioports:<base>:<count>` key
    /// spec. Default: none (every port closed).
    #[serde(default)]
    pub ioports: Option<String>,
}

fn prime() -> String {
    PRIME.to_string()
}

fn default_stack_pages() -> u64 {
    DEFAULT_STACK_PAGES
}

impl DomainSpec {
    /// A running domain called `name` running `program`, with every other
    /// field at its default.
    pub fn new(name: &str, program: &str) -> Self {
        DomainSpec {
            name: name.into(),
            program: program.into(),
            keys: Vec::new(),
            state: RunState::Running,
            stopped: false,
            foreign: false,
            meter: prime(),
            keeper: None,
            segment_keeper: None,
            stack_pages: DEFAULT_STACK_PAGES,
            heap_pages: 0,
            arg: None,
            ioports: None,
        }
    }
}

impl Spec {
    /// Parses a spec from TOML text.
    pub fn parse(text: &str) -> Result<Self> {
        toml::from_str(text).context("bad image spec")
    }

    /// The `programs = [..]` shorthand: one running domain per program,
    /// named after it (a repeated program gets `.<index>` appended), with
    /// [`SHORTHAND_KEYS`] in slots 1-3 and its index as `arg`.
    pub fn from_programs(programs: &[String]) -> Self {
        let mut domain: Vec<DomainSpec> = Vec::new();
        for (i, p) in programs.iter().enumerate() {
            let name = if domain.iter().any(|d| d.name == *p) {
                format!("{p}.{i}")
            } else {
                p.clone()
            };
            let mut d = DomainSpec::new(&name, p);
            d.keys = SHORTHAND_KEYS.iter().map(|k| k.to_string()).collect();
            domain.push(d);
        }
        Spec {
            meter: Vec::new(),
            domain,
        }
    }
}
