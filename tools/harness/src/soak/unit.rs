//! What every campaign's unit does: load a spec, build its image under the
//! worker's own name, boot it with a sink that keeps the lines the
//! campaign reads, and keep the logs of a failure.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use regex::Regex;

use crate::image;
use crate::matcher::{Matcher, Verdict};
use crate::qemu;
use crate::root::Layout;
use crate::runner::{self, KillSwitch, LineSink, Options, Output};
use crate::spec::Spec;

/// Lines kept at most (the rest are counted, not kept).
const MAX_KEPT: usize = 100_000;

/// A console sink: a matcher for the spec's lines, the lines matching
/// `keep` (in order), and a kill at the first line matching `kill_on` or
/// a forbidden one, or when no line came for `idle`.
#[derive(Debug)]
pub struct Collect {
    /// The spec's expectations and forbidden lines.
    pub matcher: Matcher,
    kill_on: Option<Regex>,
    keep: Vec<Regex>,
    /// The lines kept.
    pub kept: Vec<String>,
    /// Lines seen.
    pub lines: u64,
    idle: Option<Duration>,
    switch: KillSwitch,
    /// The line that matched `kill_on`, if one did.
    pub killed_on: Option<String>,
    /// No line came for the idle time: the guest was killed.
    pub went_quiet: bool,
    /// A forbidden line does not end the boot (a later line says more).
    lenient: bool,
    /// The kill comes this long after the `kill_on` line.
    kill_delay: Duration,
    /// `kill_on` lines to let pass before the one that kills.
    kill_skip: usize,
}

impl Collect {
    /// A sink keeping lines that match any of `keep`, killing at `kill_on`.
    pub fn new(matcher: Matcher, kill_on: Option<&str>, keep: &[&str]) -> Result<Self, String> {
        let re = |p: &str| Regex::new(p).map_err(|e| format!("bad regex {p:?}: {e}"));
        Ok(Collect {
            matcher,
            kill_on: kill_on.map(re).transpose()?,
            keep: keep.iter().map(|p| re(p)).collect::<Result<_, _>>()?,
            kept: Vec::new(),
            lines: 0,
            idle: None,
            switch: KillSwitch::default(),
            killed_on: None,
            went_quiet: false,
            lenient: false,
            kill_delay: Duration::ZERO,
            kill_skip: 0,
        })
    }

    /// Kill at the `n`-th line matching `kill_on` (1: the first).
    pub fn with_kill_at(mut self, n: usize) -> Self {
        self.kill_skip = n.saturating_sub(1);
        self
    }

    /// Kill this long after the `kill_on` line (the guest goes on a while).
    pub fn with_kill_delay(mut self, delay: Duration) -> Self {
        self.kill_delay = delay;
        self
    }

    /// Let a forbidden line go on to the end (or to `kill_on`, or the idle
    /// time): the lines after it say more.
    pub fn lenient(mut self) -> Self {
        self.lenient = true;
        self
    }

    /// Kill the guest when no line came for `idle` (a hang, found sooner
    /// than the run's timeout).
    pub fn with_idle(mut self, idle: Duration) -> Self {
        self.idle = Some(idle);
        self.switch.arm(Instant::now() + idle);
        self
    }

    /// The switch for the runner.
    pub fn switch(&self) -> KillSwitch {
        self.switch.clone()
    }

    /// The kept lines matching `re`'s pattern, with their captures.
    pub fn captures<'a>(&'a self, re: &'a Regex) -> impl Iterator<Item = regex::Captures<'a>> {
        self.kept.iter().filter_map(move |l| re.captures(l))
    }

    /// Whether the guest was killed because it went quiet (set by the
    /// caller from the runner's result).
    fn note_quiet(&mut self, killed: bool) {
        self.went_quiet = killed && self.killed_on.is_none() && self.idle.is_some();
    }
}

impl LineSink for Collect {
    fn line(&mut self, line: &str) {
        self.lines += 1;
        self.matcher.feed(line);
        if self.kept.len() < MAX_KEPT && self.keep.iter().any(|re| re.is_match(line)) {
            self.kept.push(line.to_string());
        }
        if self.killed_on.is_some() {
            return;
        }
        let forbidden = !self.lenient && matches!(self.matcher.verdict(), Verdict::Forbidden(_));
        if forbidden {
            self.killed_on = Some(line.to_string());
            self.switch.arm(Instant::now());
        } else if self.kill_on.as_ref().is_some_and(|re| re.is_match(line)) {
            if self.kill_skip > 0 {
                self.kill_skip -= 1;
                return;
            }
            self.killed_on = Some(line.to_string());
            self.switch.arm(Instant::now() + self.kill_delay);
        } else if let Some(idle) = self.idle {
            self.switch.arm(Instant::now() + idle);
        }
    }
}

/// Loads the spec at `path` (relative to the root).
pub fn load(layout: &Layout, path: &str) -> Result<Spec, String> {
    Spec::load(&layout.root.join(path)).map_err(|e| format!("spec error: {e:#}"))
}

/// Builds `spec`'s image as `name`'s, and a fresh disk if it has one.
pub fn prepare(layout: &Layout, name: &str, spec: &Spec) -> Result<(), String> {
    let kernel = layout.kernel_of(spec.kernel());
    if !kernel.is_file() {
        return Err(format!("missing kernel {} (run make?)", kernel.display()));
    }
    image::build(layout, &spec.image(), &layout.image(name))
        .map_err(|e| format!("setup error: {e:#}"))?;
    if let Some(size) = &spec.disk {
        qemu::fresh_disk(&layout.disk(name), size).map_err(|e| format!("setup error: {e:#}"))?;
    }
    Ok(())
}

/// Boots `cfg` once with `sink`, the console logged to `log`; a kill at
/// the sink's moment, or at `timeout`.
pub fn boot(
    cfg: &qemu::Config,
    log: &Path,
    timeout: Duration,
    sink: Collect,
) -> Result<Output<Collect>, String> {
    let opts = Options {
        timeout,
        log: Some(log.to_path_buf()),
        kill: Some(sink.switch()),
        term_grace: None,
        keyboard: None,
    };
    let mut out = runner::run(cfg.command(), &opts, sink)
        .map_err(|e| format!("cannot run {}: {e}", qemu::QEMU))?;
    let killed = out.exit == runner::Exit::Killed;
    out.sink.note_quiet(killed);
    Ok(out)
}

/// Where a failure's files are kept.
pub fn failure_dir(layout: &Layout, token: &str) -> PathBuf {
    let safe: String = token
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    layout.root.join("build/soak/failures").join(safe)
}

/// Copies the logs of unit `name` (`build/logs/<name>.log`,
/// `<name>.<tag>.log`) written since `since` (not an earlier unit's) and
/// the `extra` files into `dir`; returns `dir` as text (or why it could
/// not).
pub fn keep(
    layout: &Layout,
    name: &str,
    extra: &[PathBuf],
    dir: &Path,
    since: std::time::SystemTime,
) -> String {
    let copy = || -> std::io::Result<()> {
        fs::create_dir_all(dir)?;
        let logs = layout.root.join("build/logs");
        for entry in fs::read_dir(&logs)? {
            let path = entry?.path();
            let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
            let fresh = fs::metadata(&path)
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= since);
            if fresh && (file == format!("{name}.log") || file.starts_with(&format!("{name}."))) {
                fs::copy(&path, dir.join(file))?;
            }
        }
        for p in extra {
            if let Some(f) = p.file_name() {
                sparse_copy(p, &dir.join(f))?;
            }
        }
        Ok(())
    };
    match copy() {
        Ok(()) => dir.display().to_string(),
        Err(e) => format!("{} (incomplete: {e})", dir.display()),
    }
}

/// Copies `from` to `to` writing only the 4 KiB blocks that are not all
/// zero (disk images are mostly holes).
pub fn sparse_copy(from: &Path, to: &Path) -> std::io::Result<()> {
    let bytes = fs::read(from)?;
    write_sparse(&bytes, to)
}

/// Writes `bytes` to `to` as a sparse file.
pub fn write_sparse(bytes: &[u8], to: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt as _;
    let f = fs::File::create(to)?;
    f.set_len(bytes.len() as u64)?;
    for (i, block) in bytes.chunks(4096).enumerate() {
        if block.iter().any(|&b| b != 0) {
            f.write_all_at(block, (i * 4096) as u64)?;
        }
    }
    Ok(())
}

/// The first kept line matching `re`'s capture 1 as a number.
pub fn number(sink: &Collect, re: &Regex) -> Option<u64> {
    sink.captures(re)
        .find_map(|c| c.get(1)?.as_str().parse().ok())
}

/// The verdict on a plain boot of `spec` (its expectations, its forbidden
/// lines, how QEMU ended) in words, `None` if it passed.
pub fn verdict(spec: &Spec, out: &Output<Collect>) -> Option<String> {
    let expected = crate::judge::Expected::from(spec);
    if out.sink.went_quiet {
        return Some(format!(
            "no console line for a while: hung (after {} lines)",
            out.sink.lines
        ));
    }
    let exit = match (&out.sink.killed_on, out.exit) {
        // Killed by us at the line we waited for: as if it had exited.
        (Some(_), runner::Exit::Killed) => runner::Exit::Code(spec.exit_code),
        (_, e) => e,
    };
    crate::judge::judge(expected, exit, &out.sink.matcher.verdict()).err()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    fn collect(kill_on: Option<&str>) -> Collect {
        let m = Matcher::new(&["^a".into(), "^b".into()], &["PANIC".into()]).unwrap();
        Collect::new(m, kill_on, &["^k", "^b"]).unwrap()
    }

    #[test]
    fn keeps_matching_lines_and_kills_on_its_line() {
        let mut c = collect(Some("^b"));
        for l in ["x", "a1", "k1", "b1", "k2"] {
            c.line(l);
        }
        assert_eq!(c.kept, ["k1", "b1", "k2"]);
        assert_eq!(c.killed_on.as_deref(), Some("b1"));
        assert!(c.switch().deadline().is_some());
        assert_eq!(c.matcher.verdict(), Verdict::Ok);
        assert_eq!(c.lines, 5);
        let re = Regex::new(r"^k(\d)").unwrap();
        assert_eq!(number(&c, &re), Some(1));
    }

    #[test]
    fn the_nth_kill_on_line_kills() {
        let mut c = collect(Some("^b")).with_kill_at(2);
        c.line("b1");
        assert_eq!(c.killed_on, None);
        c.line("b2");
        assert_eq!(c.killed_on.as_deref(), Some("b2"));
    }

    #[test]
    fn a_forbidden_line_kills() {
        let mut c = collect(None);
        c.line("KERNEL PANIC: x");
        assert_eq!(c.killed_on.as_deref(), Some("KERNEL PANIC: x"));
        assert!(matches!(c.matcher.verdict(), Verdict::Forbidden(_)));
    }

    #[test]
    fn idle_rearms_on_every_line() {
        let c = collect(None).with_idle(Duration::from_secs(60));
        let first = c.switch().deadline().unwrap();
        let mut c = c;
        std::thread::sleep(Duration::from_millis(5));
        c.line("x");
        assert!(c.switch().deadline().unwrap() > first);
    }

    #[test]
    fn sparse_copies_keep_bytes_and_holes() {
        let dir = TempDir::new("soak-unit");
        let mut bytes = vec![0u8; 5 * 4096];
        bytes[4096 + 7] = 9;
        bytes[4 * 4096] = 1;
        let a = dir.path().join("a");
        fs::write(&a, &bytes).unwrap();
        let b = dir.path().join("b");
        sparse_copy(&a, &b).unwrap();
        assert_eq!(fs::read(&b).unwrap(), bytes);
        assert_eq!(
            failure_dir(&Layout { root: "/r".into() }, "flips/halted:0x1f:3"),
            Path::new("/r/build/soak/failures/flips-halted-0x1f-3")
        );
    }
}
