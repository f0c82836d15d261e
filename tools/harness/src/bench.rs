//! `stet-harness bench`: boots every benchmark image, one after the other,
//! and collects their `BENCH` lines: `tests/system/bench_rows.toml` (IPC
//! and faults; also a system test) and each `tests/bench/*.toml` (the
//! store: checkpoints, journal, restart, write throughput; these need a
//! disk and take too long for `make test`). Each is judged like a system
//! test (its `expect`, `forbid`, exit status, or its `[[boot]]` steps on
//! one disk); any failure fails the benchmark. The runs are sequential: the
//! throughput row measures host time, which a parallel run would disturb.

use std::fmt::Write;
use std::path::Path;
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use regex::Regex;

use crate::bench_json::{self, BenchRow};
use crate::chart;
use crate::crash_spec::{self, Mode};
use crate::image;
use crate::judge::{judge, Expected};
use crate::linux;
use crate::matcher::Matcher;
use crate::qemu;
use crate::report;
use crate::root::Layout;
use crate::runner::{self, LineSink, Options};
use crate::spec::{Spec, TestFile};
use crate::steps;
use crate::system;

static BENCH_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bBENCH name=(\S+) (instructions|percent)=(\d+) iterations=(\d+) overhead=(\d+)\b")
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
    pub(crate) fn parse(line: &str) -> Option<BenchRow> {
        let caps = BENCH_LINE.captures(line)?;
        let value: u64 = caps[3].parse().ok()?;
        let percent = &caps[2] == "percent";
        Some(BenchRow {
            name: caps[1].to_string(),
            instructions: if percent { 0 } else { value },
            iterations: caps[4].parse().ok()?,
            rdtsc_overhead: caps[5].parse().ok()?,
            percent: percent.then_some(value),
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

/// Feeds every line to a judging sink and to a [`BenchSink`].
struct Tee<S> {
    inner: S,
    bench: BenchSink,
}

impl<S: LineSink> LineSink for Tee<S> {
    fn line(&mut self, line: &str) {
        self.inner.line(line);
        self.bench.line(line);
    }
}

/// The image, disk and log name of benchmark `test` (`bench` for
/// `bench_rows`, as before the store's benchmarks existed).
pub fn run_name(test: &str) -> String {
    if test == "bench_rows" {
        "bench".into()
    } else {
        format!("bench-{test}")
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
                match r.percent {
                    Some(p) => format!("{p}%"),
                    None => r.instructions.to_string(),
                },
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
    let mut overheads: Vec<u64> = rows
        .iter()
        .map(|r| r.rdtsc_overhead)
        .filter(|&o| o > 0)
        .collect();
    overheads.sort_unstable();
    overheads.dedup();
    let overhead = match overheads.is_empty() {
        true => String::new(),
        false => format!(
            "; RDTSC overhead {} subtracted",
            overheads
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let _ = writeln!(
        out,
        "unit: guest instructions retired under QEMU TCG with -icount shift=0 (not cycles){overhead}"
    );
    if rows.iter().any(|r| r.percent.is_some()) {
        let _ = writeln!(
            out,
            "%: a ratio of host wall-clock times, measured without -icount (docs/STORE.md \"Benchmarks\")"
        );
    }
    out
}

/// Runs benchmark `test`: builds its image (and a fresh disk if it asks
/// for one), boots it (or its `[[boot]]` steps), judges the run and
/// returns the rows it printed.
pub fn run_one(layout: &Layout, test: &TestFile) -> Result<Vec<BenchRow>> {
    let spec = Spec::load(&test.path)?;
    let name = run_name(&test.name);
    image::build(layout, &spec.image(), &layout.image(&name))?;
    if let Some(size) = &spec.disk {
        qemu::fresh_disk(&layout.disk(&name), size)?;
    }
    let mode = crash_spec::mode(&spec).map_err(|e| anyhow::anyhow!("spec error: {e}"))?;
    let timeout = Duration::from_secs(spec.timeout_secs);
    let sink = match mode {
        Mode::Plain => {
            let matcher = Matcher::new(&spec.expect, &spec.forbid)
                .and_then(|m| m.with_contains(&spec.contains))
                .map_err(|e| anyhow::anyhow!("spec error: {e}"))?;
            let opts = Options {
                timeout,
                log: Some(layout.log(&name)),
                kill: None,
                term_grace: None,
                keyboard: None,
            };
            let cfg = system::config(layout, &name, &spec);
            let sink = Tee {
                inner: matcher,
                bench: BenchSink::default(),
            };
            let out = runner::run(cfg.command(), &opts, sink)
                .with_context(|| format!("cannot start {}", qemu::QEMU))?;
            let verdict = out.sink.inner.verdict();
            if let Err(why) = judge(Expected::from(&spec), out.exit, &verdict) {
                eprint!("{}", report::tail(&out.tail, &out.stderr));
                bail!("{why} (console in {})", layout.log(&name).display());
            }
            out.sink.bench
        }
        Mode::Steps(boots) => {
            let mut bench = BenchSink::default();
            let result = steps::run(
                &layout.disk(&name),
                boots,
                &spec.forbid,
                timeout,
                |i, step, watch, timeout| {
                    let mut cfg = system::config(layout, &name, &spec);
                    if let Some(cmdline) = &step.cmdline {
                        cfg.cmdline = cmdline.clone();
                    }
                    let opts = Options {
                        timeout,
                        log: Some(layout.boot_log(&name, &i.to_string())),
                        kill: Some(watch.switch()),
                        term_grace: None,
                        keyboard: None,
                    };
                    let sink = Tee {
                        inner: watch,
                        bench: BenchSink::default(),
                    };
                    let out = runner::run(cfg.command(), &opts, sink)?;
                    Ok(out.map_sink(|t| {
                        bench.rows.extend(t.bench.rows);
                        bench.malformed.extend(t.bench.malformed);
                        t.inner
                    }))
                },
            );
            if let Err(f) = result {
                eprint!("{}", report::tail(&f.tail, &f.stderr));
                bail!(
                    "{} (console in {})",
                    f.reason,
                    layout.boot_log(&name, "<step>").display()
                );
            }
            bench
        }
        _ => bail!("a benchmark is one boot or [[boot]] steps, not a crash test"),
    };
    if let Some(line) = sink.malformed.first() {
        bail!("malformed line: {line}");
    }
    if sink.rows.is_empty() {
        bail!("no BENCH lines");
    }
    // An instruction count means something only under -icount.
    let icount = spec
        .qemu_args
        .windows(qemu::ICOUNT_ARGS.len())
        .any(|w| w.iter().zip(qemu::ICOUNT_ARGS).all(|(a, b)| a == b));
    if let Some(r) = sink.rows.iter().find(|r| r.percent.is_none() && !icount) {
        bail!(
            "row {} counts instructions, but the spec's qemu_args lack {:?}",
            r.name,
            qemu::ICOUNT_ARGS
        );
    }
    let mut rows = sink.rows;
    if let Some((from, to)) = &spec.rename_rows {
        for r in &mut rows {
            if let Some(rest) = r.name.strip_prefix(from.as_str()) {
                r.name = format!("{to}{rest}");
            }
        }
    }
    Ok(rows)
}

/// Each Stet operation next to its Linux counterpart (`linux::PAIRS`, and
/// every `unix_*` row next to its `linux_*` row),
/// with the ratio Stet / Linux; pairs missing either row are left out.
pub fn comparison(rows: &[BenchRow]) -> String {
    let get = |n: &str| rows.iter().find(|r| r.name == n && r.percent.is_none());
    // The fixed pairs, then each UNIX personality row next to the same
    // binary's row on Linux.
    let unix = rows.iter().filter_map(|r| {
        let rest = r.name.strip_prefix("unix_")?;
        Some((r.name.clone(), format!("linux_{rest}")))
    });
    let pairs: Vec<(String, String)> = linux::PAIRS
        .iter()
        .map(|(s, l)| (s.to_string(), l.to_string()))
        .chain(unix)
        .collect();
    let lines: Vec<[String; 5]> = pairs
        .iter()
        .filter_map(|(s, l)| {
            let (a, b) = (get(s)?, get(l)?);
            let ratio = a.instructions as f64 / b.instructions.max(1) as f64;
            Some([
                s.to_string(),
                a.instructions.to_string(),
                l.to_string(),
                b.instructions.to_string(),
                format!("{ratio:.2}"),
            ])
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    let head = [
        "Stet",
        "instructions",
        "Linux 6.1",
        "instructions",
        "Stet/Linux",
    ];
    let w: Vec<usize> = (0..5)
        .map(|i| {
            lines
                .iter()
                .map(|c| c[i].len())
                .chain([head[i].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    let row = |c: &[String; 5]| {
        format!(
            "{:<a$} | {:>b$} | {:<c$} | {:>d$} | {:>e$}\n",
            c[0],
            c[1],
            c[2],
            c[3],
            c[4],
            a = w[0],
            b = w[1],
            c = w[2],
            d = w[3],
            e = w[4]
        )
    };
    out += &row(&head.map(String::from));
    out += &format!(
        "{}\n",
        w.iter()
            .map(|n| "-".repeat(*n))
            .collect::<Vec<_>>()
            .join("-+-")
    );
    for c in &lines {
        out += &row(c);
    }
    out += "instructions per operation, both under the same QEMU TCG -icount flags; below 1.00 Stet runs fewer\n";
    out
}

/// Runs every benchmark (or only `only`; with `linux`, Debian's kernel
/// too), writes `out` and prints the tables.
pub fn run(layout: &Layout, out: &Path, only: Option<&str>, linux: bool) -> Result<()> {
    let mut tests = layout.bench_specs()?;
    let linux = linux && only.is_none_or(|o| o == "linux");
    if let Some(only) = only {
        tests.retain(|t| t.name == only);
        if tests.is_empty() && only != "linux" {
            bail!("no benchmark named {only:?}");
        }
    }
    let mut rows: Vec<BenchRow> = Vec::new();
    for t in &tests {
        let start = Instant::now();
        let got = run_one(layout, t).with_context(|| format!("bench {} failed", t.name))?;
        println!(
            "bench {}: {} rows ({:.1}s)",
            t.name,
            got.len(),
            start.elapsed().as_secs_f64()
        );
        for r in got {
            if rows.iter().any(|x| x.name == r.name) {
                bail!("row {} printed twice", r.name);
            }
            rows.push(r);
        }
    }
    if linux {
        let start = Instant::now();
        let got = linux::run(layout).context("bench linux failed")?;
        println!(
            "bench linux: {} rows ({:.1}s)",
            got.len(),
            start.elapsed().as_secs_f64()
        );
        rows.extend(got);
    }
    bench_json::write(out, &rows)?;
    print!("{}", table(&rows));
    print!("{}", comparison(&rows));
    println!("wrote {}", out.display());
    if let Some(svg) = chart::svg(&rows) {
        let path = out.with_extension("svg");
        std::fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmarks_run_under_tcg_counting_instructions() {
        let layout = Layout::find(None, Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
        let tests = layout.bench_specs().unwrap();
        let names: Vec<_> = tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "bench_rows",
                "service_restart",
                "services",
                "store_bench",
                "store_restart",
                "store_write_pct",
                "unix",
                "unix_python"
            ]
        );
        for t in &tests {
            let spec = Spec::load(&t.path).unwrap();
            let name = run_name(&t.name);
            let args = system::config(&layout, &name, &spec).args();
            let at = |flag: &str| {
                let i = args.iter().position(|a| a == flag)?;
                Some(args[i + 1].clone())
            };
            assert_eq!(at("-accel").as_deref(), Some("tcg"), "{}", t.name);
            assert!(!args.iter().any(|a| a.contains("kvm")));
            assert_eq!(at("-cpu").as_deref(), Some("max"));
            assert!(at("-initrd")
                .unwrap()
                .ends_with(&format!("build/images/{name}.img")));
            if t.name == "store_write_pct" {
                // Host time: the one row measured without -icount.
                assert_eq!(at("-icount"), None);
            } else {
                assert_eq!(
                    at("-icount").as_deref(),
                    Some("shift=0,align=off,sleep=off")
                );
                // As tools/linuxbench/run.sh: the same flags on both sides.
                assert_eq!(at("-seed").as_deref(), Some("1"), "{}", t.name);
                assert_eq!(
                    at("-rtc").as_deref(),
                    Some("base=2024-01-01T00:00:00,clock=vm")
                );
            }
            // The store's benchmarks need a disk; the others run without.
            assert_eq!(
                spec.disk.is_some(),
                t.name.starts_with("store_"),
                "{}",
                t.name
            );
        }
        assert_eq!(run_name("bench_rows"), "bench");
        assert_eq!(run_name("store_bench"), "bench-store_bench");
    }

    #[test]
    fn sink_collects_rows_in_order() {
        let mut sink = BenchSink::default();
        for line in [
            "Stet 0.1.0",
            "BENCH name=null_syscall instructions=120 iterations=1000 overhead=30",
            "[bench] BENCH name=ipc_call instructions=900 iterations=500 overhead=30",
            "BENCH name=broken instructions=x",
            "BENCH name=ckpt_write_pct_of_raw percent=87 iterations=5 overhead=0",
        ] {
            sink.line(line);
        }
        let names: Vec<_> = sink.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["null_syscall", "ipc_call", "ckpt_write_pct_of_raw"]);
        assert_eq!(sink.rows[1].instructions, 900);
        assert_eq!(sink.rows[1].iterations, 500);
        assert_eq!(sink.rows[1].rdtsc_overhead, 30);
        assert_eq!(sink.rows[1].percent, None);
        assert_eq!(sink.rows[2].percent, Some(87));
        assert_eq!(sink.rows[2].instructions, 0);
        assert_eq!(sink.rows[2].iterations, 5);
        assert_eq!(sink.malformed, ["BENCH name=broken instructions=x"]);
    }

    fn row(name: &str, instructions: u64, overhead: u64, percent: Option<u64>) -> BenchRow {
        BenchRow {
            name: name.into(),
            instructions,
            iterations: 1000,
            rdtsc_overhead: overhead,
            percent,
        }
    }

    #[test]
    fn table_lines_up() {
        let rows = [row("null_syscall", 120, 30, None)];
        assert_eq!(
            table(&rows),
            "operation    | instructions/op | iterations\n\
             -------------+-----------------+-----------\n\
             null_syscall |             120 |       1000\n\
             unit: guest instructions retired under QEMU TCG with -icount shift=0 \
             (not cycles); RDTSC overhead 30 subtracted\n"
        );
        let rows = [
            row("null_syscall", 120, 4, None),
            row("ckpt_pause_1mib", 48382, 0, None),
            row("ckpt_write_pct", 0, 0, Some(7)),
        ];
        assert_eq!(
            table(&rows),
            "operation       | instructions/op | iterations\n\
             ----------------+-----------------+-----------\n\
             null_syscall    |             120 |       1000\n\
             ckpt_pause_1mib |           48382 |       1000\n\
             ckpt_write_pct  |              7% |       1000\n\
             unit: guest instructions retired under QEMU TCG with -icount shift=0 \
             (not cycles); RDTSC overhead 4 subtracted\n\
             %: a ratio of host wall-clock times, measured without -icount \
             (docs/STORE.md \"Benchmarks\")\n"
        );
    }

    #[test]
    fn comparison_pairs_stet_with_linux() {
        let rows = [
            row("null_invoke", 113, 4, None),
            row("ipc_rt_empty", 771, 4, None),
            row("linux_null_syscall", 214, 4, None),
            row("linux_futex_rt", 11202, 4, None),
            row("segment_fault_rt", 10071, 4, None),
        ];
        assert_eq!(
            comparison(&rows),
            "Stet         | instructions | Linux 6.1          | instructions | Stet/Linux\n\
             -------------+--------------+--------------------+--------------+-----------\n\
             null_invoke  |          113 | linux_null_syscall |          214 |       0.53\n\
             ipc_rt_empty |          771 | linux_futex_rt     |        11202 |       0.07\n\
             instructions per operation, both under the same QEMU TCG -icount flags; \
             below 1.00 Stet runs fewer\n"
        );
        assert_eq!(comparison(&rows[..2]), "", "no Linux rows: no table");
    }

    #[test]
    fn comparison_pairs_unix_rows_with_the_same_linux_row() {
        let rows = [
            row("unix_getpid", 2736, 4, None),
            row("linux_getpid", 311, 4, None),
            row("unix_sbrk_touch", 99, 4, None),
        ];
        assert_eq!(
            comparison(&rows),
            "Stet        | instructions | Linux 6.1    | instructions | Stet/Linux\n\
             ------------+--------------+--------------+--------------+-----------\n\
             unix_getpid |         2736 | linux_getpid |          311 |       8.80\n\
             instructions per operation, both under the same QEMU TCG -icount flags; \
             below 1.00 Stet runs fewer\n"
        );
    }
}
