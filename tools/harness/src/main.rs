//! `stet-harness`: boots Stet under QEMU (TCG) to run the system tests, the
//! benchmark, or an interactive session.

mod bench;
mod bench_json;
mod chart;
mod corrupt;
mod crash;
mod crash_spec;
mod damage;
mod dmlog;
mod flushpoints;
mod host_results;
mod image;
mod input;
mod interactive;
mod judge;
mod linux;
mod matcher;
mod powercut;
mod prng;
mod qemu;
mod report;
mod root;
mod runner;
mod soak;
mod spec;
mod steps;
mod system;
#[cfg(test)]
mod testutil;
mod watch;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};

use crate::host_results::Totals;
use crate::root::Layout;

/// QEMU system-test harness and benchmark driver for Stet.
#[derive(Debug, Parser)]
#[command(name = "stet-harness", version)]
struct Cli {
    /// Repository root (default: nearest ancestor holding rust-toolchain.toml).
    #[arg(long, global = true)]
    root: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    command: Cmd,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run the system tests in tests/system/*.toml.
    Test {
        /// Run only the test with this exact name.
        #[arg(long)]
        only: Option<String>,
        /// Run the spec in this file instead (anywhere: e.g. one written
        /// by tools/insnprof/profile.sh).
        #[arg(long, value_name = "FILE", conflicts_with = "only")]
        spec: Option<PathBuf>,
        /// Tests run at once.
        #[arg(long, default_value_t = 2)]
        jobs: usize,
        /// Captured `cargo test` output whose results count in the totals.
        #[arg(long = "host-results", value_name = "FILE")]
        host_results: Vec<PathBuf>,
    },
    /// Run the benchmarks (tests/system/bench_rows.toml, tests/bench/*.toml)
    /// and write the results as JSON.
    Bench {
        /// Output file (default: build/bench.json under the root).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Run only the benchmark with this name (`bench_rows`, a file
        /// stem in tests/bench, or `linux`).
        #[arg(long)]
        only: Option<String>,
        /// Skip the Linux side (Debian's kernel with the same operations).
        #[arg(long = "no-linux")]
        no_linux: bool,
    },
    /// Long runs with fresh seeds (`make soak`): the kernel fuzzer, power
    /// cuts, the UNIX system-call fuzzer, disk damage and driver kills
    /// (docs/RELIABILITY.md); a table and build/soak.json.
    Soak {
        /// Minutes to run.
        #[arg(long, default_value_t = 3.0)]
        minutes: f64,
        /// QEMUs at once.
        #[arg(long, default_value_t = 2)]
        jobs: usize,
        /// Only these campaigns (kfuzz, cuts, sysfuzz, flips, kills).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Run the one unit a failure's token names instead.
        #[arg(long)]
        replay: Option<String>,
        /// The soak's seed (default: a fresh one).
        #[arg(long, value_parser = parse_seed)]
        seed: Option<u64>,
        /// The system-call fuzzer steers clear of issue 22's known bugs.
        #[arg(long)]
        avoid_known: bool,
        /// A campaign stops after this many units failed.
        #[arg(long, default_value_t = 5)]
        max_failures: usize,
        /// Output file (default: build/soak.json under the root).
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Boot programs interactively (-nographic; Ctrl-A X quits) on the
    /// persistent disk build/stet.disk (created if missing).
    Run {
        /// Delete the persistent disk first and start with a new one.
        #[arg(long)]
        fresh: bool,
        /// Programs started at boot, comma-separated (default: the image
        /// described by tests/run.toml).
        #[arg(long, value_delimiter = ',')]
        programs: Option<Vec<String>>,
        /// Kernel command line (default: the cmdline of tests/run.toml, or
        /// empty with --programs).
        #[arg(long)]
        append: Option<String>,
    },
}

/// A seed: decimal or 0x hex.
fn parse_seed(s: &str) -> Result<u64, String> {
    prng::seed(Some(s), 0)
}

/// Exit status for usage and environment errors.
const EXIT_ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn dispatch(cli: Cli) -> Result<ExitCode> {
    let layout = Layout::find(cli.root, &std::env::current_dir()?)?;
    match cli.command {
        Cmd::Test {
            only,
            spec,
            jobs,
            host_results,
        } => test(&layout, only.as_deref(), spec, jobs, &host_results),
        Cmd::Bench {
            out,
            only,
            no_linux,
        } => {
            let out = out.unwrap_or_else(|| layout.bench_json());
            bench::run(&layout, &out, only.as_deref(), !no_linux)?;
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Soak {
            minutes,
            jobs,
            only,
            replay,
            seed,
            avoid_known,
            max_failures,
            out,
        } => {
            let opts = soak::Options {
                minutes,
                jobs,
                only,
                replay,
                seed,
                known: avoid_known,
                max_failures,
                out: out.unwrap_or_else(|| layout.root.join("build/soak.json")),
            };
            let ok = soak::run(&layout, &opts)?;
            Ok(if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        Cmd::Run {
            fresh,
            programs,
            append,
        } => {
            let code = interactive::run(&layout, programs.as_deref(), append.as_deref(), fresh)?;
            Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
        }
    }
}

fn test(
    layout: &Layout,
    only: Option<&str>,
    file: Option<PathBuf>,
    jobs: usize,
    host: &[PathBuf],
) -> Result<ExitCode> {
    let mut totals = Totals::default();
    for path in host {
        totals += host_results::read(path)?;
    }
    let mut tests = match file {
        Some(path) => vec![spec::TestFile {
            name: path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("spec")
                .to_string(),
            path,
        }],
        None => spec::discover(&layout.specs())?,
    };
    if let Some(only) = only {
        tests.retain(|t| t.name == only);
        if tests.is_empty() {
            let names: Vec<_> = spec::discover(&layout.specs())?
                .into_iter()
                .map(|t| t.name)
                .collect();
            bail!(
                "no system test named {only:?}; available: {}",
                if names.is_empty() {
                    "(none)".to_string()
                } else {
                    names.join(", ")
                }
            );
        }
    }
    if !host.is_empty() {
        println!(
            "host tests: {} passed, {} failed",
            totals.passed, totals.failed
        );
    }
    let results = system::run_all(
        &tests,
        jobs,
        |t| system::run_one(layout, t),
        |r| print!("{}", r.render()),
    );
    let failed: Vec<&str> = results
        .iter()
        .filter(|r| r.result.is_err())
        .map(|r| r.name.as_str())
        .collect();
    if !failed.is_empty() {
        println!("failed system tests: {}", failed.join(", "));
    }
    totals.failed += failed.len() as u64;
    totals.passed += (results.len() - failed.len()) as u64;
    println!("{} passed, {} failed", totals.passed, totals.failed);
    let ok = totals.failed == 0 && totals.passed > 0;
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
