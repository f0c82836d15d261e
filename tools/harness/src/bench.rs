//! `stet-harness bench`: boots the benchmark domains (the image of
//! `tests/system/bench_rows.toml`) under deterministic instruction counting
//! and collects their `BENCH` lines.

use std::fmt::Write;
use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use regex::Regex;

use crate::bench_json::{self, BenchRow};
use crate::image;
use crate::qemu::{self, Console};
use crate::report;
use crate::root::Layout;
use crate::runner::{self, Exit, LineSink};
use crate::spec::{Spec, DEFAULT_MEM, EXIT_SUCCESS};

/// The image and log name.
const NAME: &str = "bench";
/// The kernel command line.
const CMDLINE: &str = "exit_on_idle";
/// How long the benchmark may take.
const TIMEOUT: Duration = Duration::from_secs(300);

static BENCH_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bBENCH name=(\S+) instructions=(\d+) iterations=(\d+) overhead=(\d+)\b")
        .expect("valid regex")
});

/// Collects `BENCH` lines from the console.
#[derive(Debug, Default)]
pub struct BenchSink {
    /// Rows in the order printed.
    pub rows: Vec<BenchRow>,
    /// Lines that mention `BENCH name=` but do not parse.
    pub malformed: Vec<String>,
}

impl BenchSink {
    fn parse(line: &str) -> Option<BenchRow> {
        let caps = BENCH_LINE.captures(line)?;
        Some(BenchRow {
            name: caps[1].to_string(),
            instructions: caps[2].parse().ok()?,
            iterations: caps[3].parse().ok()?,
            rdtsc_overhead: caps[4].parse().ok()?,
        })
    }
}

impl LineSink for BenchSink {
    fn line(&mut self, line: &str) {
        match Self::parse(line) {
            Some(row) => self.rows.push(row),
            None if line.contains("BENCH name=") => self.malformed.push(line.to_string()),
            None => {}
        }
    }
}

/// The QEMU configuration of a benchmark run.
pub fn config(layout: &Layout) -> qemu::Config {
    qemu::Config {
        kernel: layout.kernel(),
        image: layout.image(NAME),
        cmdline: CMDLINE.into(),
        mem: DEFAULT_MEM.into(),
        extra: qemu::ICOUNT_ARGS.iter().map(|s| s.to_string()).collect(),
        console: Console::Captured,
        iso: None,
    }
}

/// The table printed after a run.
pub fn table(rows: &[BenchRow]) -> String {
    let head = ["operation", "instructions/op", "iterations"];
    let cells: Vec<[String; 3]> = rows
        .iter()
        .map(|r| {
            [
                r.name.clone(),
                r.instructions.to_string(),
                r.iterations.to_string(),
            ]
        })
        .collect();
    let width = |i: usize| {
        cells
            .iter()
            .map(|c| c[i].len())
            .chain([head[i].len()])
            .max()
            .unwrap_or(0)
    };
    let (w0, w1, w2) = (width(0), width(1), width(2));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<w0$} | {:>w1$} | {:>w2$}",
        head[0], head[1], head[2]
    );
    let _ = writeln!(
        out,
        "{}-+-{}-+-{}",
        "-".repeat(w0),
        "-".repeat(w1),
        "-".repeat(w2)
    );
    for [a, b, c] in &cells {
        let _ = writeln!(out, "{a:<w0$} | {b:>w1$} | {c:>w2$}");
    }
    let mut overheads: Vec<u64> = rows.iter().map(|r| r.rdtsc_overhead).collect();
    overheads.sort_unstable();
    overheads.dedup();
    let overhead = overheads
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let _ = writeln!(
        out,
        "unit: guest instructions retired under QEMU TCG with -icount shift=0 (not cycles); \
         RDTSC overhead {overhead} subtracted"
    );
    out
}

/// Builds the image, boots the benchmark, writes `out` and prints the table.
pub fn run(layout: &Layout, out: &Path) -> Result<()> {
    let spec = Spec::load(&layout.bench_spec())?;
    image::build(layout, &spec.image(), &layout.image(NAME))?;
    let opts = runner::Options {
        timeout: TIMEOUT,
        log: Some(layout.log(NAME)),
        kill: None,
        term_grace: None,
    };
    let output = runner::run(config(layout).command(), &opts, BenchSink::default())
        .with_context(|| format!("cannot start {}", qemu::QEMU))?;
    if let Some(e) = &output.log_error {
        eprintln!("warning: cannot write {}: {e}", layout.log(NAME).display());
    }
    let problem = match (output.exit, &output.sink) {
        (Exit::Timeout, _) => Some(format!("timeout after {}s", TIMEOUT.as_secs())),
        (exit, _) if exit != Exit::Code(EXIT_SUCCESS) => {
            Some(format!("exit status {exit} (expected {EXIT_SUCCESS})"))
        }
        (_, sink) if !sink.malformed.is_empty() => {
            Some(format!("malformed line: {}", sink.malformed[0]))
        }
        (_, sink) if sink.rows.is_empty() => Some("no BENCH lines".into()),
        _ => None,
    };
    if let Some(problem) = problem {
        eprint!("{}", report::tail(&output.tail, &output.stderr));
        bail!(
            "bench failed: {problem} (console in {})",
            layout.log(NAME).display()
        );
    }
    bench_json::write(out, &output.sink.rows)?;
    print!("{}", table(&output.sink.rows));
    println!("wrote {}", out.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_config_counts_instructions_under_tcg() {
        let layout = Layout { root: "/r".into() };
        let args = config(&layout).args();
        let at = |flag: &str| {
            let i = args.iter().position(|a| a == flag).unwrap();
            args[i + 1].clone()
        };
        assert_eq!(at("-accel"), "tcg");
        assert!(!args.iter().any(|a| a.contains("kvm")));
        assert_eq!(at("-icount"), "shift=0,align=off,sleep=off");
        assert_eq!(at("-cpu"), "max");
        assert_eq!(at("-rtc"), "base=2024-01-01T00:00:00,clock=vm");
        assert_eq!(at("-append"), "exit_on_idle");
        assert_eq!(at("-initrd"), "/r/build/images/bench.img");
    }

    #[test]
    fn sink_collects_rows_in_order() {
        let mut sink = BenchSink::default();
        for line in [
            "Stet 0.1.0",
            "BENCH name=null_syscall instructions=120 iterations=1000 overhead=30",
            "[bench] BENCH name=ipc_call instructions=900 iterations=500 overhead=30",
            "BENCH name=broken instructions=x",
        ] {
            sink.line(line);
        }
        let names: Vec<_> = sink.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["null_syscall", "ipc_call"]);
        assert_eq!(sink.rows[1].instructions, 900);
        assert_eq!(sink.rows[1].iterations, 500);
        assert_eq!(sink.rows[1].rdtsc_overhead, 30);
        assert_eq!(sink.malformed, ["BENCH name=broken instructions=x"]);
    }

    #[test]
    fn table_lines_up() {
        let rows = [BenchRow {
            name: "null_syscall".into(),
            instructions: 120,
            iterations: 1000,
            rdtsc_overhead: 30,
        }];
        assert_eq!(
            table(&rows),
            "operation    | instructions/op | iterations\n\
             -------------+-----------------+-----------\n\
             null_syscall |             120 |       1000\n\
             unit: guest instructions retired under QEMU TCG with -icount shift=0 \
             (not cycles); RDTSC overhead 30 subtracted\n"
        );
    }
}
