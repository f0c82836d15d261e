//! `stet-harness test`: runs system tests in parallel, reporting in name order.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use crate::crash;
use crate::crash_spec::{self, Mode};
use crate::image;
use crate::input::{Typing, Typist};
use crate::judge::{judge, Expected};
use crate::matcher::{Matcher, Verdict};
use crate::qemu::{self, Console};
use crate::report;
use crate::root::Layout;
use crate::runner;
use crate::spec::{BootMethod, Spec, TestFile};

/// The result of one system test.
#[derive(Clone, Debug)]
pub struct TestResult {
    /// The test name.
    pub name: String,
    /// `Ok`, or the failure reason.
    pub result: Result<(), String>,
    /// Seconds until QEMU exited or was killed.
    pub secs: f64,
    /// The last console lines.
    pub tail: Vec<String>,
    /// QEMU's stderr (its tail).
    pub stderr: String,
    /// A result line shown after `PASS` (the crash tests' counts).
    pub detail: Option<String>,
}

impl TestResult {
    /// A test that failed before or outside a QEMU run.
    pub fn setup_failure(name: &str, reason: String) -> Self {
        TestResult {
            name: name.to_string(),
            result: Err(reason),
            secs: 0.0,
            tail: Vec::new(),
            stderr: String::new(),
            detail: None,
        }
    }

    /// The `PASS`/`FAIL` line, plus the console tail on failure.
    pub fn render(&self) -> String {
        match &self.result {
            Ok(()) => match &self.detail {
                Some(d) => format!("PASS {} ({:.1}s): {d}\n", self.name, self.secs),
                None => format!("PASS {} ({:.1}s)\n", self.name, self.secs),
            },
            Err(reason) => format!(
                "FAIL {}: {reason}\n{}",
                self.name,
                report::tail(&self.tail, &self.stderr)
            ),
        }
    }
}

/// The QEMU configuration for a test (with its disk, if it has one).
pub fn config(layout: &Layout, name: &str, spec: &Spec) -> qemu::Config {
    let disk = match spec.disk {
        Some(_) => qemu::disk_args(&layout.disk(name)),
        None => Vec::new(),
    };
    config_with_disk(layout, name, spec, disk)
}

/// The QEMU configuration for a test, with `disk` (QEMU arguments) as its
/// disk.
pub fn config_with_disk(
    layout: &Layout,
    name: &str,
    spec: &Spec,
    disk: Vec<String>,
) -> qemu::Config {
    qemu::Config {
        kernel: layout.kernel_of(spec.kernel()),
        image: layout.image(name),
        cmdline: spec.cmdline.clone(),
        mem: spec.mem.clone(),
        extra: {
            let mut extra = spec.qemu_args.clone();
            extra.extend(disk);
            extra
        },
        console: Console::Captured,
        iso: (spec.boot.method() == BootMethod::Grub)
            .then(|| layout.root.join(format!("build/images/{name}.iso"))),
    }
}

/// Runs one test: load spec, build image, boot, judge.
pub fn run_one(layout: &Layout, test: &TestFile) -> TestResult {
    let name = test.name.as_str();
    let spec = match Spec::load(&test.path) {
        Ok(spec) => spec,
        Err(e) => return TestResult::setup_failure(name, format!("spec error: {e:#}")),
    };
    let mode = match crash_spec::mode(&spec) {
        Ok(mode) => mode,
        Err(e) => return TestResult::setup_failure(name, format!("spec error: {e}")),
    };
    let matcher = match Matcher::new(&spec.expect, &spec.forbid)
        .and_then(|m| m.with_contains(&spec.contains))
    {
        Ok(m) => m,
        Err(e) => return TestResult::setup_failure(name, format!("spec error: {e}")),
    };
    let kernel = layout.kernel_of(spec.kernel());
    if !kernel.is_file() {
        let reason = format!(
            "setup error: missing kernel {} (run make?)",
            kernel.display()
        );
        return TestResult::setup_failure(name, reason);
    }
    if let Err(e) = image::build(layout, &spec.image(), &layout.image(name)) {
        return TestResult::setup_failure(name, format!("setup error: {e:#}"));
    }
    if spec.boot.method() == BootMethod::Grub {
        if let Err(e) = image::grub_iso(layout, name, &kernel, &spec.cmdline) {
            return TestResult::setup_failure(name, format!("setup error: {e:#}"));
        }
    }
    if let Some(size) = &spec.disk {
        if let Err(e) = qemu::fresh_disk(&layout.disk(name), size) {
            return TestResult::setup_failure(name, format!("setup error: {e:#}"));
        }
    }
    match mode {
        Mode::Plain => {}
        Mode::Powercut(p) => return crash::powercut(layout, name, &spec, p),
        Mode::Flushpoints(f) => return crash::flushpoints(layout, name, &spec, f),
        Mode::Steps(steps) => return crash::steps(layout, name, &spec, steps),
    }
    let typist = match Typist::new(&spec.input) {
        Ok(t) => t,
        Err(e) => return TestResult::setup_failure(name, format!("spec error: {e}")),
    };
    let (sink, keyboard) = Typing::new(matcher, typist);
    let opts = runner::Options {
        timeout: Duration::from_secs(spec.timeout_secs),
        log: Some(layout.log(name)),
        kill: None,
        term_grace: None,
        keyboard: (!spec.input.is_empty()).then_some(keyboard),
    };
    let output = match runner::run(config(layout, name, &spec).command(), &opts, sink) {
        Ok(output) => output,
        Err(e) => {
            let reason = format!("setup error: cannot run {}: {e}", qemu::QEMU);
            return TestResult::setup_failure(name, reason);
        }
    };
    if let Some(e) = &output.log_error {
        eprintln!(
            "warning: {name}: cannot write {}: {e}",
            layout.log(name).display()
        );
    }
    let verdict = match (output.sink.inner.verdict(), output.sink.untyped()) {
        (Verdict::Ok | Verdict::Unmet(_), Some(untyped)) => Verdict::Unmet(untyped),
        (v, _) => v,
    };
    TestResult {
        name: name.to_string(),
        result: judge(Expected::from(&spec), output.exit, &verdict),
        secs: output.elapsed.as_secs_f64(),
        tail: output.tail,
        stderr: output.stderr,
        detail: None,
    }
}

/// Runs `tests` on `jobs` threads with `run`, calling `report` on each
/// result in the order of `tests` as soon as it and all before it are done.
pub fn run_all<T, F, R>(tests: &[T], jobs: usize, run: F, mut report: R) -> Vec<TestResult>
where
    T: Sync,
    F: Fn(&T) -> TestResult + Sync,
    R: FnMut(&TestResult),
{
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    let mut done = BTreeMap::new();
    let mut results = Vec::with_capacity(tests.len());
    thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, tests.len().max(1)) {
            let tx = tx.clone();
            let (next, run) = (&next, &run);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(test) = tests.get(i) else { break };
                if tx.send((i, run(test))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, result) in rx {
            done.insert(i, result);
            while let Some(result) = done.remove(&results.len()) {
                report(&result);
                results.push(result);
            }
        }
    });
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn fake(name: &str, ok: bool) -> TestResult {
        TestResult {
            name: name.into(),
            result: if ok { Ok(()) } else { Err("boom".into()) },
            secs: 1.25,
            tail: vec!["last".into()],
            stderr: String::new(),
            detail: None,
        }
    }

    #[test]
    fn reports_in_order_while_running_in_parallel() {
        // Earlier tests finish later, so completion order is reversed.
        let tests: Vec<(String, u64)> = (0..6).map(|i| (format!("t{i}"), 300 - i * 50)).collect();
        let start = Instant::now();
        let mut seen = Vec::new();
        let results = run_all(
            &tests,
            3,
            |(name, ms)| {
                thread::sleep(Duration::from_millis(*ms));
                fake(name, true)
            },
            |r| seen.push(r.name.clone()),
        );
        let names: Vec<_> = results.iter().map(|r| r.name.clone()).collect();
        assert_eq!(names, ["t0", "t1", "t2", "t3", "t4", "t5"]);
        assert_eq!(seen, names);
        assert!(start.elapsed() < Duration::from_millis(1200));
    }

    #[test]
    fn no_tests_no_threads() {
        let results = run_all(&[] as &[u8], 2, |_| unreachable!(), |_| {});
        assert!(results.is_empty());
    }

    #[test]
    fn render_pass_and_fail() {
        assert_eq!(fake("a", true).render(), "PASS a (1.2s)\n");
        let detailed = TestResult {
            detail: Some("powercut: 1 kills".into()),
            ..fake("c", true)
        };
        assert_eq!(detailed.render(), "PASS c (1.2s): powercut: 1 kills\n");
        assert_eq!(
            fake("b", false).render(),
            "FAIL b: boom\n    last console lines:\n    last\n"
        );
    }

    #[test]
    fn spec_and_setup_errors_fail_the_test() {
        let dir = crate::testutil::TempDir::new("system");
        let layout = Layout {
            root: dir.path().to_path_buf(),
        };
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "programs = [\"x\"]\nexpect = ['${nope}']\n").unwrap();
        let test = TestFile {
            name: "bad".into(),
            path: path.clone(),
        };
        let r = run_one(&layout, &test);
        assert!(
            matches!(&r.result, Err(e) if e.starts_with("spec error:") && e.contains("${nope}"))
        );
        std::fs::write(&path, "programs = [\"x\"]\n").unwrap();
        let r = run_one(&layout, &test);
        assert!(matches!(&r.result, Err(e) if e.contains("missing kernel")));
    }
}
