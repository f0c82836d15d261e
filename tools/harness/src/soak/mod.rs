//! `stet-harness soak` (`make soak`): long runs with fresh seeds of the
//! five campaigns docs/RELIABILITY.md describes — the kernel fuzzer, power
//! cuts, the UNIX system-call fuzzer, disk damage, driver kills — two QEMUs
//! at a time for a given number of minutes; then a table (campaign, how
//! many, failures) and `build/soak.json`. Every failure comes with the
//! command that replays it (`make soak REPLAY=<token>`).
//!
//! A campaign runs *units* (one QEMU run, or a few boots on one disk), each
//! with its own seed derived from the soak's ([`seeds`]). The scheduler
//! ([`sched`]) gives the next free QEMU to the campaign furthest behind its
//! target, so in any run length every campaign gets its share; a campaign
//! that failed `max_failures` times stops (a bug found once is found again).

mod cuts;
mod flips;
mod flips_areas;
mod flips_classify;
mod kfuzz;
mod kills;
pub mod report;
mod sched;
pub mod seeds;
mod sysfuzz;
mod unit;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::root::Layout;
use report::Soak;
use seeds::Token;

/// What one unit found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// How many of what the campaign counts it did (invocations, cuts, …),
    /// failed or not.
    pub count: u64,
    /// Other figures, added to the campaign's.
    pub extra: Vec<(String, u64)>,
    /// What went wrong, if anything (a unit of several parts, such as the
    /// disk flips, may find several things).
    pub failures: Vec<Found>,
}

/// A failure a unit found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// What, precisely enough to act on.
    pub what: String,
    /// The part of the unit that failed (a batch, a flip), for the replay.
    pub detail: Option<u64>,
    /// Files to keep besides the unit's logs (disk images).
    pub keep: Vec<PathBuf>,
}

/// Where a unit runs: the layout, and which of the QEMU slots (so two
/// units never share an image, disk or log name).
pub struct Ctx<'a> {
    /// The repository.
    pub layout: &'a Layout,
    /// The worker, 0-based.
    pub slot: usize,
    /// The system-call fuzzer steers clear of the known bugs.
    pub known: bool,
}

impl Ctx<'_> {
    /// The name of this worker's images, disks and logs for `campaign`.
    pub fn name(&self, campaign: &str) -> String {
        format!("soak{}-{campaign}", self.slot)
    }
}

/// A campaign: a kind of unit, run again and again with fresh seeds.
pub trait Campaign: Sync {
    /// Its name in tokens and the JSON (`kfuzz`, …).
    fn name(&self) -> &'static str;
    /// What it is, for the table.
    fn title(&self) -> &'static str;
    /// What it counts.
    fn counts(&self) -> &'static str;
    /// The variant of unit `index` (units rotate through them).
    fn variant(&self, index: u64, ctx: &Ctx<'_>) -> &'static str;
    /// The seed a unit runs with, from the derived one (the kernel fuzzer
    /// takes 32 bits).
    fn seed(&self, derived: u64) -> u64 {
        derived
    }
    /// Runs one unit of `variant` with `seed` (`detail`: only that part,
    /// for a replay).
    fn run(&self, ctx: &Ctx<'_>, variant: &str, seed: u64, detail: Option<u64>) -> Outcome;
}

/// The campaigns, in the table's order.
pub fn campaigns() -> Vec<Box<dyn Campaign>> {
    vec![
        Box::new(kfuzz::KernelFuzz),
        Box::new(cuts::PowerCuts),
        Box::new(sysfuzz::SysFuzz),
        Box::new(flips::DiskFlips),
        Box::new(kills::DriverKills),
    ]
}

/// What issue 22 asks of a 30-minute soak, per campaign.
pub fn campaign_target(name: &str) -> u64 {
    match name {
        "kfuzz" => 5_000_000,
        "cuts" => 500,
        "sysfuzz" => 200_000,
        "flips" => 300,
        "kills" => 1_000,
        _ => 0,
    }
}

/// `stet-harness soak`'s options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Minutes to run (units under way when time is up finish).
    pub minutes: f64,
    /// QEMUs at once.
    pub jobs: usize,
    /// Only these campaigns (empty: all).
    pub only: Vec<String>,
    /// Run this one unit instead.
    pub replay: Option<String>,
    /// The soak's seed (default: a fresh one).
    pub seed: Option<u64>,
    /// The system-call fuzzer steers clear of the bugs issue 22 lists.
    pub known: bool,
    /// A campaign stops after this many failures.
    pub max_failures: usize,
    /// Where the JSON goes.
    pub out: PathBuf,
}

/// Runs the soak (or one replay); `Ok(true)` if nothing failed.
pub fn run(layout: &Layout, opts: &Options) -> Result<bool> {
    let all = campaigns();
    if let Some(r) = &opts.replay {
        return replay(layout, &all, r, opts.known);
    }
    for o in &opts.only {
        if !all.iter().any(|c| c.name() == o) {
            let names: Vec<_> = all.iter().map(|c| c.name()).collect();
            bail!("no campaign {o:?}; there are {}", names.join(", "));
        }
    }
    let chosen: Vec<Box<dyn Campaign>> = all
        .into_iter()
        .filter(|c| opts.only.is_empty() || opts.only.iter().any(|o| o == c.name()))
        .collect();
    let seed = opts.seed.unwrap_or_else(seeds::fresh);
    let start = Instant::now();
    println!(
        "soak: seed {seed:#x}, {} min, {} QEMUs at once, campaigns {}{}",
        opts.minutes,
        opts.jobs,
        chosen
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(" "),
        if opts.known {
            " (the system-call fuzzer steers clear of issue 22's known bugs)"
        } else {
            ""
        }
    );
    let plan = sched::Plan {
        layout,
        campaigns: &chosen,
        soak_seed: seed,
        start,
        deadline: start + Duration::from_secs_f64(opts.minutes * 60.0),
        minutes: opts.minutes,
        max_failures: opts.max_failures,
        known: opts.known,
    };
    let tallies = sched::run(&plan, opts.jobs);
    let soak = Soak {
        seed: format!("{seed:#x}"),
        minutes: opts.minutes,
        elapsed_secs: start.elapsed().as_secs_f64(),
        jobs: opts.jobs,
        commit: git_describe(&layout.root),
        started: String::new(),
        known_bugs_avoided: opts.known,
        campaigns: tallies,
    };
    println!();
    print!("{}", soak.table());
    println!();
    print!("{}", soak.details());
    write_json(&opts.out, &soak)?;
    println!("soak: figures in {}", opts.out.display());
    Ok(soak.failures() == 0)
}

fn write_json(path: &Path, soak: &Soak) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    std::fs::write(path, soak.to_json()).with_context(|| format!("writing {}", path.display()))
}

fn git_describe(root: &Path) -> String {
    std::process::Command::new("git")
        .args(["describe", "--always", "--dirty"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// A unit's other figures, summed by name.
fn print_extra(out: &Outcome) {
    let mut sums = std::collections::BTreeMap::new();
    for (k, v) in &out.extra {
        *sums.entry(k.as_str()).or_insert(0u64) += v;
    }
    for (k, v) in sums {
        println!("  {k}: {v}");
    }
}

/// Runs the one unit `token` names, on worker slot 0.
fn replay(layout: &Layout, all: &[Box<dyn Campaign>], token: &str, known: bool) -> Result<bool> {
    let t: Token = token.parse().map_err(anyhow::Error::msg)?;
    let Some(c) = all.iter().find(|c| c.name() == t.campaign) else {
        bail!("no campaign {:?}", t.campaign);
    };
    let ctx = Ctx {
        layout,
        slot: 0,
        // The system-call fuzzer's variant says it.
        known: known || t.variant == "known",
    };
    let variant: &'static str = (0..64)
        .map(|i| c.variant(i, &ctx))
        .find(|v| *v == t.variant)
        .with_context(|| format!("campaign {} has no variant {:?}", t.campaign, t.variant))?;
    println!("soak: replaying {t}");
    let start = Instant::now();
    let out = c.run(&ctx, variant, t.seed, t.detail);
    let secs = start.elapsed().as_secs_f64();
    match out.failures.first() {
        None => {
            println!(
                "soak: {t}: {} {} ok ({secs:.1}s); logs under build/logs/{}*",
                out.count,
                c.counts(),
                ctx.name(c.name())
            );
            print_extra(&out);
            Ok(true)
        }
        Some(_) => {
            for f in &out.failures {
                println!("soak: {t}: FAILED ({secs:.1}s): {}", f.what);
            }
            println!("  logs under build/logs/{}*", ctx.name(c.name()));
            print_extra(&out);
            Ok(false)
        }
    }
}
