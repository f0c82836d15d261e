//! Runs the crash tests under QEMU: wires the power-cut, flush-point and
//! boot-step logic (`powercut`, `flushpoints`, `steps`) to QEMU, the test's
//! disk and its log files, and turns the outcome into a [`TestResult`].
//! Called by `system::run_one` after the boot image and a fresh disk exist.

use std::fs::{self, File};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use regex::Regex;

use crate::crash_spec::{BootStep, FlushpointsSpec, PowercutSpec};
use crate::dmlog;
use crate::flushpoints::{self, BootFailure};
use crate::input::{Typing, Typist};
use crate::judge::judge_kill_on;
use crate::matcher::Matcher;
use crate::powercut::{self, Powercut};
use crate::prng;
use crate::qemu;
use crate::root::Layout;
use crate::runner::{self, LineSink, Options, Output};
use crate::spec::Spec;
use crate::steps;
use crate::system::{config, config_with_disk, TestResult};
use crate::watch::Watch;

/// Extra time the runner allows beyond what a boot's own deadlines allow.
const SLACK: Duration = Duration::from_secs(30);

fn failed(
    name: &str,
    start: Instant,
    reason: String,
    tail: Vec<String>,
    stderr: String,
) -> TestResult {
    TestResult {
        name: name.to_string(),
        result: Err(reason),
        secs: start.elapsed().as_secs_f64(),
        tail,
        stderr,
        detail: None,
    }
}

fn passed(name: &str, start: Instant, detail: String) -> TestResult {
    TestResult {
        name: name.to_string(),
        result: Ok(()),
        secs: start.elapsed().as_secs_f64(),
        tail: Vec::new(),
        stderr: String::new(),
        detail: Some(detail),
    }
}

/// How long a logged run's QEMU may take to exit after SIGTERM.
const TERM_GRACE: Duration = Duration::from_secs(10);

/// Runs QEMU once with `sink`, logging the console to `log`.
fn boot<S: LineSink>(
    cfg: &qemu::Config,
    log: &Path,
    timeout: Duration,
    kill: runner::KillSwitch,
    sink: S,
) -> std::io::Result<Output<S>> {
    boot_with(cfg, log, timeout, kill, None, sink)
}

/// [`boot`], ending with SIGTERM first if `term_grace` is given.
fn boot_with<S: LineSink>(
    cfg: &qemu::Config,
    log: &Path,
    timeout: Duration,
    kill: runner::KillSwitch,
    term_grace: Option<Duration>,
    sink: S,
) -> std::io::Result<Output<S>> {
    let opts = Options {
        timeout,
        log: Some(log.to_path_buf()),
        kill: Some(kill),
        term_grace,
        keyboard: None,
    };
    let out = runner::run(cfg.command(), &opts, sink)?;
    if let Some(e) = &out.log_error {
        eprintln!("warning: cannot write {}: {e}", log.display());
    }
    Ok(out)
}

/// `[powercut]`: boots on the test's (fresh) disk, killed as planned.
pub fn powercut(layout: &Layout, name: &str, spec: &Spec, p: &PowercutSpec) -> TestResult {
    let start = Instant::now();
    let setup = |e: String| TestResult::setup_failure(name, e);
    let seed = match prng::seed_from_env(p.seed) {
        Ok(s) => s,
        Err(e) => return setup(format!("setup error: {e}")),
    };
    let pc = match Powercut::new(p, &spec.forbid, seed) {
        Ok(pc) => Arc::new(pc),
        Err(e) => return setup(format!("spec error: {e}")),
    };
    let cfg = config(layout, name, spec);
    let timeout = pc.boot_timeout * 2 + Duration::from_millis(pc.max_delay_ms) + SLACK;
    let result = powercut::run(&pc, |n, watch| {
        let kill = watch.switch();
        boot(
            &cfg,
            &layout.boot_log(name, &n.to_string()),
            timeout,
            kill,
            watch,
        )
    });
    match result {
        Ok(line) => passed(name, start, line),
        Err(f) => {
            let logs = match f.boot {
                0 => layout.boot_log(name, "0").display().to_string(),
                n => format!(
                    "{} (before the kill), {}",
                    layout.boot_log(name, &(n - 1).to_string()).display(),
                    layout.boot_log(name, &n.to_string()).display()
                ),
            };
            let reason = format!("{}\n    logs: {logs}", f.reason);
            failed(name, start, reason, f.tail, f.stderr)
        }
    }
}

/// A sink that ends the boot at `until` (or a forbidden line).
fn watch_until(forbid: &[String], until: &str) -> Result<Watch, String> {
    let matcher = Matcher::new(&[], forbid)?;
    let re = Regex::new(until).map_err(|e| format!("bad regex {until:?}: {e}"))?;
    Ok(Watch::new(matcher, Some(re)))
}

/// `[flushpoints]`: a logged run, then a boot of the disk as of each
/// sampled flush.
pub fn flushpoints(layout: &Layout, name: &str, spec: &Spec, f: &FlushpointsSpec) -> TestResult {
    let start = Instant::now();
    let setup = |e: String| TestResult::setup_failure(name, e);
    let seed = match prng::seed_from_env(f.seed) {
        Ok(s) => s,
        Err(e) => return setup(format!("setup error: {e}")),
    };
    let size = match spec.disk.as_deref().map(qemu::parse_size) {
        Some(Ok(size)) => size,
        _ => return setup("spec error: [flushpoints] needs a disk size".into()),
    };
    let (base, wlog) = (layout.disk(name), layout.write_log(name));
    if let Err(e) = File::create(&wlog) {
        return setup(format!("setup error: creating {}: {e}", wlog.display()));
    }

    // The logged run.
    let watch = match watch_until(&spec.forbid, &f.run_until) {
        Ok(w) => w,
        Err(e) => return setup(format!("spec error: {e}")),
    };
    let cfg = config_with_disk(layout, name, spec, qemu::logged_disk_args(&base, &wlog));
    let timeout = Duration::from_secs(spec.timeout_secs);
    let kill = watch.switch();
    // SIGTERM, not SIGKILL: QEMU then completes the requests in flight, so
    // every entry the log's superblock counts is whole. (If the guest wrote
    // after its last flush, QEMU's own flush at exit adds a last flush
    // point with every write applied: also a state a power cut can leave.)
    let log = layout.boot_log(name, "run");
    let runner_timeout = timeout + TERM_GRACE;
    let out = match boot_with(&cfg, &log, runner_timeout, kill, Some(TERM_GRACE), watch) {
        Ok(out) => out,
        Err(e) => return setup(format!("setup error: cannot run {}: {e}", qemu::QEMU)),
    };
    let verdict = out.sink.verdict();
    if let Err(why) = judge_kill_on(
        &f.run_until,
        timeout,
        out.exit,
        out.sink.killed_on(),
        &verdict,
    ) {
        let reason = format!(
            "the logged run: {why}\n    log: {}",
            layout.boot_log(name, "run").display()
        );
        return failed(name, start, reason, out.tail, out.stderr);
    }
    let scan = match dmlog::scan(&wlog) {
        Ok(scan) => scan,
        Err(e) => {
            return failed(
                name,
                start,
                format!("write log: {e:#}"),
                out.tail,
                out.stderr,
            )
        }
    };
    let total = scan.flushes.len() as u64;
    if total == 0 {
        let reason = format!(
            "the logged run issued no flush ({} writes logged)",
            scan.writes
        );
        return failed(name, start, reason, out.tail, out.stderr);
    }
    let points = prng::sample(total, f.sample, seed);

    // Every chosen flush point.
    let boot_point = |point: &flushpoints::Point, image: &Path| {
        boot_flush_point(layout, name, spec, f, point, image)
    };
    let replay_dir = layout.replay_dir(name);
    let result =
        flushpoints::replay_and_boot(&wlog, size, &points, &replay_dir, f.jobs, boot_point);
    let k = points.len();
    match result {
        Err(e) => failed(
            name,
            start,
            format!("replaying the write log: {e:#}"),
            Vec::new(),
            String::new(),
        ),
        Ok(Err(pf)) => {
            let reason = format!(
                "seed {seed} (STET_SEED={seed} replays it): flush {} of {total} (log entry {}, sample {} of {k}): {}\n    image kept: {}",
                pf.point.flush,
                pf.point.entry,
                pf.point.sample + 1,
                pf.failure.reason,
                pf.image.display()
            );
            failed(name, start, reason, pf.failure.tail, pf.failure.stderr)
        }
        Ok(Ok(booted)) => {
            // The logged run's disk and log can be large; keep them only
            // when something failed.
            let _ = fs::remove_file(&wlog);
            let _ = fs::remove_file(&base);
            let mut line = format!(
                "flushpoints: {k} of {total} flushes (seed {seed}): {booted} images consistent"
            );
            if let Some(why) = &scan.damaged_tail {
                line.push_str(&format!(" (the log ends in a damaged entry: {why})"));
            }
            passed(name, start, line)
        }
    }
}

/// Boots the replayed `image` of `point`: it must reach `check` within
/// `boot_timeout_secs`, with no forbidden line.
pub fn boot_flush_point(
    layout: &Layout,
    name: &str,
    spec: &Spec,
    f: &FlushpointsSpec,
    point: &flushpoints::Point,
    image: &Path,
) -> Result<(), BootFailure> {
    let fail = |reason: String| BootFailure {
        reason,
        tail: Vec::new(),
        stderr: String::new(),
    };
    let timeout = Duration::from_secs(f.boot_timeout_secs);
    let watch = watch_until(&spec.forbid, &f.check).map_err(fail)?;
    let cfg = config_with_disk(layout, name, spec, qemu::disk_args(image));
    let log = layout.boot_log(name, &format!("flush{}", point.flush));
    let kill = watch.switch();
    let out = boot(&cfg, &log, timeout, kill, watch)
        .map_err(|e| fail(format!("cannot run {}: {e}", qemu::QEMU)))?;
    let verdict = out.sink.verdict();
    judge_kill_on(&f.check, timeout, out.exit, out.sink.killed_on(), &verdict).map_err(|reason| {
        BootFailure {
            reason: format!("{reason}\n    log: {}", log.display()),
            tail: out.tail,
            stderr: out.stderr,
        }
    })
}

/// `[[boot]]` steps on the test's (fresh) disk.
pub fn steps(layout: &Layout, name: &str, spec: &Spec, steps: &[BootStep]) -> TestResult {
    let start = Instant::now();
    let disk = layout.disk(name);
    let default_timeout = Duration::from_secs(spec.timeout_secs);
    let result = steps::run(
        &disk,
        steps,
        &spec.forbid,
        default_timeout,
        |i, step, watch, timeout| {
            let mut cfg = config(layout, name, spec);
            if let Some(cmdline) = &step.cmdline {
                cfg.cmdline = cmdline.clone();
            }
            let kill = watch.switch();
            let log = layout.boot_log(name, &i.to_string());
            if step.input.is_empty() {
                return boot(&cfg, &log, timeout, kill, watch);
            }
            // Type into this boot; an input step whose line never came
            // shows as an unmet expectation of the step.
            let typist = Typist::new(&step.input)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
            let (sink, keyboard) = Typing::new(watch, typist);
            let opts = Options {
                timeout,
                log: Some(log),
                kill: Some(kill),
                term_grace: None,
                keyboard: Some(keyboard),
            };
            let out = runner::run(cfg.command(), &opts, sink)?;
            if let Some(why) = out.sink.untyped() {
                eprintln!("{name}: boot step {i}: {why}");
            }
            Ok(out.map_sink(|t| t.inner))
        },
    );
    match result {
        Ok(line) => passed(name, start, line),
        Err(f) => failed(name, start, f.reason, f.tail, f.stderr),
    }
}
