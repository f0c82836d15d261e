//! The crash-test parts of a spec: `[powercut]`, `[flushpoints]` and
//! `[[boot]]` steps, and which kind of test a spec describes. A spec has at
//! most one of them, and then needs `disk` (a fresh sparse file at the
//! start of the test) and has no top-level `expect`/`contains`; its
//! top-level `forbid` applies to every boot. Regexes come from the spec;
//! the harness knows no console text of its own.
//!
//! ```toml
//! [powercut]
//! kills = 30                  # kills per run (boots: kills + 1)
//! seed = 1                    # default 1; STET_SEED overrides; printed
//! ready = 'check: (ok|fresh)' # each boot must reach it in boot_timeout_secs
//! phases = ['ckpt: snapshot', 'ckpt: committed', 'ckpt: migrating']
//! max_delay_ms = 300          # kill D ms after the next line matching a
//!                             # phase chosen at random, or after ready;
//!                             # D uniform in 0..=max_delay_ms
//! check = 'check: ok epoch=(\d+) journal=(\d+)'
//! promises = ['load: commit E=(\d+)', 'load: journal J=(\d+)']
//! boot_timeout_secs = 60      # also the longest wait for a phase
//! ```
//! Capture 1 of `promises[i]` (a number) is a promise; the first line
//! matching `check` at every later boot must have, in capture `i + 1`, at
//! least the largest number ever promised by `promises[i]`; if anything was
//! promised, the check line must come no later than the ready line. A boot
//! fails on a forbidden line, on missing ready or phase lines, and if QEMU
//! exits by itself. The boot after the last kill is killed at its ready
//! line.
//!
//! ```toml
//! [flushpoints]
//! sample = 200                # boot all flushes if at most this many, else a
//! seed = 1                    # seeded sample with the first and the last
//! run_until = 'load: done'    # the logged run (top-level timeout_secs) ends here
//! check = 'check: (ok|fresh)' # each replayed image must reach it
//! boot_timeout_secs = 30
//! jobs = 2                    # replayed images booted at once
//! ```
//!
//! ```toml
//! [[boot]]                    # in order, on one disk
//! cmdline = "..."             # default: the spec's
//! expect = ['...']            # as at top level; the spec's forbid applies too
//! contains = ['...']
//! forbid = ['...']
//! kill_on = '...'             # kill at the first matching line; without it,
//! kill_delay_ms = 0           # (or that long after it)
//! exit_code = 33              # QEMU must exit by itself with exit_code
//! timeout_secs = 30           # default: the spec's
//! corrupt = { block = 3, offset = 0, len = 16, xor = 0xff }   # raw bytes
//! # or { target = "root-newest" }  (the newer valid root: second half zeroed)
//! # or { target = "node-copy0", oid = 5 }  (node-copy1; whole record xor 0xff,
//! #     or offset/len/xor within it)
//! # or { target = "ckpt-block", index = 0 }  (a block of the newest
//! #     checkpoint's log extent; offset/len/xor within it)
//! [[boot.input]]              # typed into this boot's console after a line
//! after = '...'               # matches (as top-level [[input]] in a plain test)
//! text = "..."
//! ```

use std::fmt;

use regex::Regex;
use serde::de::{self, IntoDeserializer, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};

use crate::corrupt::{CorruptSpec, Corruption};
use crate::input::InputStep;
use crate::spec::{BootMethod, Spec};

fn one() -> u64 {
    1
}

fn default_max_delay_ms() -> u64 {
    300
}

fn default_powercut_boot_timeout() -> u64 {
    60
}

fn default_sample() -> u64 {
    200
}

fn default_flush_boot_timeout() -> u64 {
    30
}

fn default_jobs() -> usize {
    2
}

fn default_exit_code() -> i32 {
    crate::spec::EXIT_SUCCESS
}

/// `[powercut]`: kill QEMU at seeded random moments, reboot, check.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct PowercutSpec {
    /// Kills per run.
    pub kills: u32,
    /// The seed (the environment's `STET_SEED` wins).
    #[serde(default = "one")]
    pub seed: u64,
    /// After each boot, wait for this line before arming the kill.
    pub ready: String,
    /// A kill waits for the next line matching one of these (chosen at
    /// random), or for none.
    #[serde(default)]
    pub phases: Vec<String>,
    /// The delay from that line to the kill is uniform in `0..=this`.
    #[serde(default = "default_max_delay_ms")]
    pub max_delay_ms: u64,
    /// The checker's line; capture `i + 1` is compared with promise `i`.
    /// A group named `gen` ties the line to a restart (see `restart`).
    pub check: String,
    /// The kernel's restart line, its capture 1 the generation restarted
    /// from. With it, a check line whose `gen` differs is ignored: it is
    /// output the checker computed before the checkpoint this boot resumed
    /// (the restart caught it between checking and printing), not a check
    /// of this restart.
    #[serde(default)]
    pub restart: Option<String>,
    /// Durability promises, one capture group (a number) each.
    #[serde(default)]
    pub promises: Vec<String>,
    /// Seconds a boot may take to reach `ready`, and a phase to come.
    #[serde(default = "default_powercut_boot_timeout")]
    pub boot_timeout_secs: u64,
}

/// `[flushpoints]`: log a run's writes, boot the disk as of each flush.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FlushpointsSpec {
    /// Boot every flush point if there are at most this many, else a
    /// seeded sample of this many that includes the first and the last.
    #[serde(default = "default_sample")]
    pub sample: u64,
    /// The seed of the sample (the environment's `STET_SEED` wins).
    #[serde(default = "one")]
    pub seed: u64,
    /// The logged run ends (QEMU is killed) when this line appears.
    pub run_until: String,
    /// Every replayed image must boot to this line.
    pub check: String,
    /// Seconds each replayed image may take to reach `check`.
    #[serde(default = "default_flush_boot_timeout")]
    pub boot_timeout_secs: u64,
    /// Replayed images booted at once.
    #[serde(default = "default_jobs")]
    pub jobs: usize,
}

/// One `[[boot]]` step: a boot on the test's disk, after an optional
/// corruption of it.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct BootStep {
    /// The kernel command line (default: the spec's).
    #[serde(default)]
    pub cmdline: Option<String>,
    /// Regexes that must match console lines in order.
    #[serde(default)]
    pub expect: Vec<String>,
    /// Regexes that must each match some line.
    #[serde(default)]
    pub contains: Vec<String>,
    /// Regexes that must match no line (the spec's `forbid` applies too).
    #[serde(default)]
    pub forbid: Vec<String>,
    /// Kill QEMU as soon as a line matches this; without it, QEMU must exit
    /// by itself with `exit_code`.
    #[serde(default)]
    pub kill_on: Option<String>,
    /// With `kill_on`: kill this many milliseconds after the line (the
    /// guest runs on meanwhile), not at once.
    #[serde(default)]
    pub kill_delay_ms: u64,
    /// QEMU's expected exit status (without `kill_on`).
    #[serde(default = "default_exit_code")]
    pub exit_code: i32,
    /// Seconds before the boot fails (default: the spec's `timeout_secs`).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Damage applied to the disk before this boot.
    #[serde(default, deserialize_with = "corruption")]
    pub corrupt: Option<Corruption>,
    /// Text typed into this boot's console, each after a line matches
    /// (`[[boot.input]]`; see `input.rs`): how a test drives an interactive
    /// program across a power cut.
    #[serde(default)]
    pub input: Vec<InputStep>,
    /// Damage trials instead of one boot (`damage.rs`): each flips a bit
    /// in an area of a copy of the disk as it is, restarts it and
    /// classifies the restart; the disk is left as it was.
    #[serde(default)]
    pub damage: Option<DamageSpec>,
}

/// A `damage` table: trials of one flip each in one area of the disk.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct DamageSpec {
    /// The area (`damage::Area` names: roots, node-copy0, node-copy1,
    /// version-copy0, version-copy1, page-homes, log, journal).
    pub area: String,
    /// Trials (each a restart of the undamaged disk with one flip).
    #[serde(default = "default_trials")]
    pub trials: u32,
    /// Seed of the flips' places (`STET_SEED` overrides it).
    #[serde(default = "default_damage_seed")]
    pub seed: u64,
    /// Outcomes each trial may have (`consistent`, `reported`, `refused`;
    /// `wrong` never passes).
    #[serde(default = "default_allow")]
    pub allow: Vec<String>,
}

fn default_trials() -> u32 {
    1
}

fn default_damage_seed() -> u64 {
    1
}

fn default_allow() -> Vec<String> {
    ["consistent", "reported", "refused"]
        .map(String::from)
        .to_vec()
}

fn corruption<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Corruption>, D::Error> {
    let spec = CorruptSpec::deserialize(d)?;
    Corruption::try_from(spec)
        .map(Some)
        .map_err(de::Error::custom)
}

/// The spec's `boot` key: a boot method (`boot = "grub"`) or `[[boot]]`
/// steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Boot {
    /// One boot by this method.
    Method(BootMethod),
    /// Boots in order on one disk (PVH).
    Steps(Vec<BootStep>),
}

impl Default for Boot {
    fn default() -> Self {
        Boot::Method(BootMethod::Pvh)
    }
}

impl Boot {
    /// How QEMU boots the kernel.
    pub fn method(&self) -> BootMethod {
        match self {
            Boot::Method(m) => *m,
            Boot::Steps(_) => BootMethod::Pvh,
        }
    }
}

impl<'de> Deserialize<'de> for Boot {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Boot;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"pvh\", \"grub\", or [[boot]] tables")
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<Boot, E> {
                BootMethod::deserialize(s.into_deserializer()).map(Boot::Method)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Boot, A::Error> {
                let mut steps = Vec::new();
                while let Some(step) = seq.next_element()? {
                    steps.push(step);
                }
                Ok(Boot::Steps(steps))
            }
        }
        d.deserialize_any(V)
    }
}

/// What kind of test a spec describes.
#[derive(Clone, Copy, Debug)]
pub enum Mode<'a> {
    /// One boot, judged by `expect`, `contains`, `forbid`, `exit_code`.
    Plain,
    /// Power cuts.
    Powercut(&'a PowercutSpec),
    /// Every flush point.
    Flushpoints(&'a FlushpointsSpec),
    /// `[[boot]]` steps.
    Steps(&'a [BootStep]),
}

fn regexes<'a>(what: &str, ps: impl IntoIterator<Item = &'a String>) -> Result<(), String> {
    for p in ps {
        Regex::new(p).map_err(|e| format!("{what}: bad regex {p:?}: {e}"))?;
    }
    Ok(())
}

/// The kind of test `spec` is, after checking that its crash-test parts fit
/// together: at most one of `[powercut]`, `[flushpoints]`, `[[boot]]`; each
/// needs a `disk`, takes no top-level `expect` or `contains`, and has valid
/// regexes.
pub fn mode(spec: &Spec) -> Result<Mode<'_>, String> {
    let steps = match &spec.boot {
        Boot::Steps(s) => Some(s.as_slice()),
        Boot::Method(_) => None,
    };
    let mode = match (&spec.powercut, &spec.flushpoints, steps) {
        (None, None, None) => return Ok(Mode::Plain),
        (Some(p), None, None) => Mode::Powercut(p),
        (None, Some(f), None) => Mode::Flushpoints(f),
        (None, None, Some(s)) => Mode::Steps(s),
        _ => return Err("give at most one of [powercut], [flushpoints] and [[boot]]".into()),
    };
    if !spec.input.is_empty() {
        return Err(
            "[[input]] works only in plain tests (a [[boot]] step takes [[boot.input]])".into(),
        );
    }
    let name = match mode {
        Mode::Powercut(_) => "[powercut]",
        Mode::Flushpoints(_) => "[flushpoints]",
        _ => "[[boot]]",
    };
    if spec.disk.is_none() {
        return Err(format!("{name} needs a disk (disk = \"64M\")"));
    }
    if !spec.expect.is_empty() || !spec.contains.is_empty() {
        return Err(format!(
            "{name}: top-level expect and contains do not apply (forbid does, to every boot)"
        ));
    }
    regexes("forbid", &spec.forbid)?;
    match mode {
        Mode::Powercut(p) => {
            crate::powercut::Powercut::new(p, &spec.forbid, p.seed)?;
        }
        Mode::Flushpoints(f) => {
            if f.sample < 2 {
                return Err(
                    "[flushpoints] sample must be at least 2 (the first and last flush)".into(),
                );
            }
            if f.jobs == 0 {
                return Err("[flushpoints] jobs must be at least 1".into());
            }
            regexes("[flushpoints] run_until", [&f.run_until])?;
            regexes("[flushpoints] check", [&f.check])?;
        }
        Mode::Steps(steps) => {
            if steps.is_empty() {
                return Err("[[boot]]: no steps".into());
            }
            for (i, s) in steps.iter().enumerate() {
                let what = format!("[[boot]] step {i}");
                // Patterns may name the roots found before the step's
                // damage (`corrupt::Facts`): checked with a number there.
                let fill = |ps: &[String]| -> Vec<String> {
                    ps.iter()
                        .map(|p| crate::corrupt::fill(p, Some(0), Some(0)))
                        .collect()
                };
                regexes(&what, fill(&s.contains).iter().chain(&fill(&s.forbid)))?;
                regexes(&what, &s.kill_on)?;
                if let Some(d) = &s.damage {
                    if crate::damage::Area::from_name(&d.area).is_none() {
                        return Err(format!("{what}: damage: unknown area {:?}", d.area));
                    }
                    if let Some(a) = d
                        .allow
                        .iter()
                        .find(|a| !["consistent", "reported", "refused"].contains(&a.as_str()))
                    {
                        return Err(format!(
                            "{what}: damage: {a:?} is not an outcome a trial may have (consistent, reported, refused)"
                        ));
                    }
                    if s.corrupt.is_some() || !s.expect.is_empty() || !s.contains.is_empty() {
                        return Err(format!(
                            "{what}: damage trials take no corrupt, expect or contains (each restart is classified)"
                        ));
                    }
                    if d.trials == 0 {
                        return Err(format!("{what}: damage: trials must be at least 1"));
                    }
                }
                crate::matcher::Matcher::new(&fill(&s.expect), &[])
                    .map_err(|e| format!("{what}: {e}"))?;
            }
        }
        Mode::Plain => {}
    }
    Ok(mode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corrupt::Target;

    fn err(text: &str) -> String {
        format!("{:#}", Spec::parse(text).unwrap_err())
    }

    const POWERCUT: &str = r#"
        programs = ["x"]
        disk = "64M"
        forbid = ['PANIC']
        [powercut]
        kills = 30
        ready = 'check: (ok|fresh)'
        phases = ['ckpt: snapshot', 'ckpt: committed', 'ckpt: migrating']
        check = 'check: ok epoch=(\d+) journal=(\d+)'
        promises = ['load: commit E=(\d+)', 'load: journal J=(\d+)']
    "#;

    #[test]
    fn powercut_section_and_defaults() {
        let spec = Spec::parse(POWERCUT).unwrap();
        let p = spec.powercut.as_ref().unwrap();
        assert_eq!(p.kills, 30);
        assert_eq!(p.seed, 1);
        assert_eq!(p.max_delay_ms, 300);
        assert_eq!(p.boot_timeout_secs, 60);
        assert_eq!(p.phases.len(), 3);
        assert!(matches!(mode(&spec), Ok(Mode::Powercut(_))));
        let bad = POWERCUT.replace("kills = 30", "kills = 30\nkils = 1");
        assert!(err(&bad).contains("unknown field `kils`"), "{}", err(&bad));
        let bad = POWERCUT.replace("J=(\\d+)", "J=\\d+");
        assert!(
            err(&bad).contains("exactly one capture group"),
            "{}",
            err(&bad)
        );
        let bad = POWERCUT.replace("disk = \"64M\"", "");
        assert_eq!(err(&bad), "[powercut] needs a disk (disk = \"64M\")");
        let bad = POWERCUT.replace("forbid = ['PANIC']", "expect = ['x']");
        assert!(err(&bad).starts_with("[powercut]: top-level expect"));
    }

    #[test]
    fn flushpoints_section_and_defaults() {
        let text = r#"
            programs = ["x"]
            disk = "64M"
            [flushpoints]
            run_until = 'load: done'
            check = 'check: (ok|fresh)'
        "#;
        let spec = Spec::parse(text).unwrap();
        let f = spec.flushpoints.as_ref().unwrap();
        assert_eq!(
            (f.sample, f.seed, f.boot_timeout_secs, f.jobs),
            (200, 1, 30, 2)
        );
        assert!(matches!(mode(&spec), Ok(Mode::Flushpoints(_))));
        let bad = text.replace("[flushpoints]", "[flushpoints]\nsample = 1");
        assert_eq!(
            err(&bad),
            "[flushpoints] sample must be at least 2 (the first and last flush)"
        );
        let bad = text.replace("'load: done'", "'('");
        assert!(err(&bad).starts_with("[flushpoints] run_until: bad regex"));
        let both = format!("{text}\n[powercut]\nkills = 1\nready = 'a'\ncheck = 'b'\n");
        assert_eq!(
            err(&both),
            "give at most one of [powercut], [flushpoints] and [[boot]]"
        );
    }

    #[test]
    fn boot_steps_and_boot_method_share_the_key() {
        let spec = Spec::parse("programs = [\"x\"]\nboot = \"grub\"").unwrap();
        assert_eq!(spec.boot, Boot::Method(BootMethod::Grub));
        assert_eq!(spec.boot.method(), BootMethod::Grub);
        assert!(matches!(mode(&spec), Ok(Mode::Plain)));
        assert!(err("programs = [\"x\"]\nboot = \"uefi\"").contains("unknown variant"));
        let spec = Spec::parse(
            r#"
            programs = ["x"]
            disk = "64M"
            cmdline = "a"
            forbid = ['PANIC']

            [[boot]]
            expect = ['store: new store']
            kill_on = 'check: fresh'
            timeout_secs = 20

            [[boot]]
            cmdline = "b"
            corrupt = { target = "node-copy0", oid = 5 }
            contains = ['copy 0 of node 5 damaged']
            forbid = ['FAILED']
            exit_code = 35

            [[boot.input]]
            after = 'ready'
            text = "count\n"
            "#,
        )
        .unwrap();
        let Boot::Steps(steps) = &spec.boot else {
            panic!("steps expected")
        };
        assert_eq!(spec.boot.method(), BootMethod::Pvh);
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].kill_on.as_deref(), Some("check: fresh"));
        assert_eq!(steps[0].timeout_secs, Some(20));
        assert_eq!(steps[0].exit_code, 33);
        assert_eq!(steps[0].corrupt, None);
        assert_eq!(steps[1].cmdline.as_deref(), Some("b"));
        assert_eq!(steps[1].exit_code, 35);
        assert!(steps[0].input.is_empty());
        assert_eq!(steps[1].input.len(), 1);
        assert_eq!(steps[1].input[0].after, "ready");
        assert_eq!(steps[1].input[0].text, "count\n");
        assert_eq!(
            steps[1].corrupt,
            Some(Corruption::Object {
                target: Target::Node { oid: 5, copy: 0 },
                offset: 0,
                len: None,
                xor: 0xff
            })
        );
        assert!(matches!(mode(&spec), Ok(Mode::Steps(s)) if s.len() == 2));
    }

    #[test]
    fn the_store_specs_are_crash_tests() {
        let layout =
            crate::root::Layout::find(None, std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        let dir = layout.specs();
        let pc = Spec::load(&dir.join("store_powercut.toml")).unwrap();
        let Ok(Mode::Powercut(p)) = mode(&pc) else {
            panic!("store_powercut is not a power-cut test")
        };
        assert_eq!((p.kills, p.seed, p.max_delay_ms), (30, 1, 300));
        assert_eq!(pc.disk.as_deref(), Some("64M"));
        assert_eq!(pc.cmdline, "ckpt_trace ckpt_ms=200");
        let fp = Spec::load(&dir.join("store_flushpoints.toml")).unwrap();
        let Ok(Mode::Flushpoints(f)) = mode(&fp) else {
            panic!("store_flushpoints is not a flush-point test")
        };
        assert_eq!(
            (f.sample, f.seed, f.run_until.as_str()),
            (200, 1, "load: done")
        );
        let names: Vec<_> = fp.domain.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["ckptcheck", "ckptload"]);
    }

    #[test]
    fn boot_step_errors_are_reported() {
        let base = "programs = [\"x\"]\ndisk = \"1M\"\n[[boot]]\n";
        assert!(err(&format!("{base}kil_on = 'x'")).contains("unknown field `kil_on`"));
        let e = err(&format!("{base}corrupt = {{ target = \"node-copy0\" }}"));
        assert!(
            e.contains("corrupt: target \"node-copy0\" needs `oid`"),
            "{e}"
        );
        let e = err(&format!("{base}expect = ['${{nope}}']"));
        assert!(e.starts_with("[[boot]] step 0: pattern"), "{e}");
        let e = err("programs = [\"x\"]\n[[boot]]\nkill_on = 'x'\n");
        assert_eq!(e, "[[boot]] needs a disk (disk = \"64M\")");
    }
}
