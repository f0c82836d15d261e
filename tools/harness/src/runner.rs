//! Runs a guest process with a timeout, streaming its console.
//!
//! Stdout is read on a thread, split into lines (bounded in length) and fed
//! to a [`LineSink`]; raw bytes are streamed to the log file. Only a bounded
//! tail of lines is kept in memory, so a guest that prints forever (with or
//! without newlines) cannot exhaust memory. The reader threads are joined
//! with a bound, so a grandchild holding the pipe open cannot hang us.
//!
//! A sink may hold a [`KillSwitch`] (passed in [`Options::kill`]) and arm it
//! to have the process killed with SIGKILL at a chosen moment: the crash
//! tests cut the power this way when a console line says it is time.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::input::Keyboard;

/// Longest line handed to the sink; longer output is split.
pub const MAX_LINE: usize = 4096;
/// Lines kept for the failure report.
pub const TAIL_LINES: usize = 25;
/// Bytes of stderr kept.
const MAX_STDERR: usize = 16 * 1024;
/// How often the child is polled.
const POLL: Duration = Duration::from_millis(10);
/// How long to wait for the readers after the child exited by itself.
const JOIN_AFTER_EXIT: Duration = Duration::from_secs(2);
/// How long to wait for the readers after the child was killed.
const JOIN_AFTER_KILL: Duration = Duration::from_millis(500);

/// Receives each console line (without `\n` or `\r`).
pub trait LineSink: Send + 'static {
    /// Called once per line, in order.
    fn line(&mut self, line: &str);
}

/// How the process ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this status code.
    Code(i32),
    /// It was killed by this signal (not by us).
    Signal(i32),
    /// It was still running at the timeout and we killed it.
    Timeout,
    /// We killed it (SIGKILL) because its [`KillSwitch`] was armed.
    Killed,
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "{c}"),
            Exit::Signal(s) => write!(f, "signal {s}"),
            Exit::Timeout => write!(f, "timeout"),
            Exit::Killed => write!(f, "killed"),
        }
    }
}

impl From<ExitStatus> for Exit {
    fn from(status: ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(c), _) => Exit::Code(c),
            (None, Some(s)) => Exit::Signal(s),
            (None, None) => Exit::Code(-1),
        }
    }
}

/// What a run produced.
#[derive(Debug)]
pub struct Output<S> {
    /// How it ended.
    pub exit: Exit,
    /// Wall time until exit or kill.
    pub elapsed: Duration,
    /// The last [`TAIL_LINES`] console lines.
    pub tail: Vec<String>,
    /// The last bytes of stderr.
    pub stderr: String,
    /// The sink, after every line was fed to it.
    pub sink: S,
    /// The first error writing the log, if any.
    pub log_error: Option<String>,
}

impl<S> Output<S> {
    /// The same output around another sink (a wrapper's inner one).
    pub fn map_sink<T>(self, f: impl FnOnce(S) -> T) -> Output<T> {
        Output {
            exit: self.exit,
            elapsed: self.elapsed,
            tail: self.tail,
            stderr: self.stderr,
            sink: f(self.sink),
            log_error: self.log_error,
        }
    }
}

/// Options of one run.
#[derive(Clone, Debug)]
pub struct Options {
    /// Kill the process after this long.
    pub timeout: Duration,
    /// Stream the console (then stderr) to this file.
    pub log: Option<PathBuf>,
    /// Kill the process (SIGKILL) once this switch's moment has come.
    pub kill: Option<KillSwitch>,
    /// At the switch's moment, send SIGTERM first and allow this long for
    /// an orderly exit before SIGKILL (QEMU then finishes its disk
    /// requests and closes its images).
    pub term_grace: Option<Duration>,
    /// Text to type: stdin is a pipe and what arrives here is written to
    /// it (else stdin is null).
    pub keyboard: Option<Keyboard>,
}

/// A moment, settable from any thread, at which the runner kills the
/// process. Clones share the moment.
#[derive(Clone, Debug, Default)]
pub struct KillSwitch(Arc<Mutex<Option<Instant>>>);

impl KillSwitch {
    /// Kill at `at` (replacing any earlier setting; a moment in the past
    /// kills at once).
    pub fn arm(&self, at: Instant) {
        *self.lock() = Some(at);
    }

    /// The moment set, if any.
    pub fn deadline(&self) -> Option<Instant> {
        *self.lock()
    }

    fn lock(&self) -> MutexGuard<'_, Option<Instant>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The state shared with the reader threads.
struct Capture<S> {
    sink: S,
    partial: Vec<u8>,
    tail: VecDeque<String>,
    stderr: VecDeque<u8>,
    log: Option<BufWriter<File>>,
    log_error: Option<String>,
}

impl<S: LineSink> Capture<S> {
    fn stdout(&mut self, bytes: &[u8]) {
        self.write_log(bytes);
        for &b in bytes {
            if b == b'\n' {
                self.emit();
            } else {
                self.partial.push(b);
                if self.partial.len() >= MAX_LINE {
                    self.emit();
                }
            }
        }
    }

    fn stderr(&mut self, bytes: &[u8]) {
        self.stderr.extend(bytes);
        let excess = self.stderr.len().saturating_sub(MAX_STDERR);
        self.stderr.drain(..excess);
    }

    fn emit(&mut self) {
        self.partial.retain(|&b| b != b'\r');
        let line = String::from_utf8_lossy(&self.partial).into_owned();
        self.partial.clear();
        self.sink.line(&line);
        if self.tail.len() == TAIL_LINES {
            self.tail.pop_front();
        }
        self.tail.push_back(line);
    }

    fn write_log(&mut self, bytes: &[u8]) {
        if let (Some(log), None) = (&mut self.log, &self.log_error) {
            if let Err(e) = log.write_all(bytes) {
                self.log_error = Some(e.to_string());
            }
        }
    }

    fn finish(mut self, exit: Exit, elapsed: Duration) -> Output<S> {
        if !self.partial.is_empty() {
            self.emit();
        }
        let stderr = String::from_utf8_lossy(&Vec::from(self.stderr.clone())).into_owned();
        if !stderr.is_empty() {
            let note = format!("\n--- stderr ---\n{stderr}");
            self.write_log(note.as_bytes());
        }
        if let Some(mut log) = self.log.take() {
            if let Err(e) = log.flush() {
                self.log_error.get_or_insert(e.to_string());
            }
        }
        Output {
            exit,
            elapsed,
            tail: self.tail.into(),
            stderr,
            sink: self.sink,
            log_error: self.log_error,
        }
    }
}

type Shared<S> = Arc<Mutex<Option<Capture<S>>>>;

fn lock<S>(shared: &Shared<S>) -> MutexGuard<'_, Option<Capture<S>>> {
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Reads `from` until EOF, handing chunks to `feed` while the capture exists.
fn reader<S, R>(mut from: R, shared: Shared<S>, feed: fn(&mut Capture<S>, &[u8])) -> JoinHandle<()>
where
    S: LineSink,
    R: Read + Send + 'static,
{
    thread::spawn(move || {
        let mut buf = [0u8; 8192];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            match lock(&shared).as_mut() {
                Some(capture) => feed(capture, &buf[..n]),
                None => return,
            }
        }
    })
}

/// Waits for `child` until `deadline` or the moment of `switch`; kills it
/// (SIGKILL, or SIGTERM first if `term_grace` is given) if it is still
/// running then.
fn wait_until(
    child: &mut Child,
    deadline: Instant,
    switch: Option<&KillSwitch>,
    term_grace: Option<Duration>,
) -> io::Result<Exit> {
    let mut termed: Option<Instant> = None;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(match termed {
                Some(_) => Exit::Killed,
                None => status.into(),
            });
        }
        let now = Instant::now();
        let armed = switch.and_then(KillSwitch::deadline);
        // It may exit between try_wait and kill; that still counts as ours.
        if armed.is_some_and(|at| now >= at) {
            match (term_grace, termed) {
                (Some(_), None) => {
                    terminate(child.id());
                    termed = Some(now);
                }
                (Some(grace), Some(since)) if now < since + grace => {}
                _ => {
                    let _ = child.kill();
                    child.wait()?;
                    return Ok(Exit::Killed);
                }
            }
        }
        if now >= deadline {
            let _ = child.kill();
            child.wait()?;
            return Ok(Exit::Timeout);
        }
        let next = armed.map_or(deadline, |at| at.min(deadline));
        let nap = match termed {
            Some(_) => POLL,
            None => POLL.min(next.saturating_duration_since(now)),
        };
        thread::sleep(nap);
    }
}

/// Sends SIGTERM to `pid` (with kill(1): std has no way, and this crate
/// has no unsafe code). If that fails, the grace period ends in SIGKILL.
fn terminate(pid: u32) {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Writes what arrives on `rx` to the guest's stdin until the run is
/// `done` (or the pipe breaks: QEMU exited).
fn typer(
    rx: mpsc::Receiver<Vec<u8>>,
    mut stdin: ChildStdin,
    done: Arc<AtomicBool>,
) -> JoinHandle<()> {
    thread::spawn(move || {
        while !done.load(Ordering::Relaxed) {
            match rx.recv_timeout(POLL) {
                Ok(text) => {
                    if stdin.write_all(&text).and_then(|()| stdin.flush()).is_err() {
                        return;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
    })
}

/// Joins the readers, giving up after `bound` (they then exit on their own).
fn join_bounded(handles: Vec<JoinHandle<()>>, bound: Duration) {
    let deadline = Instant::now() + bound;
    while handles.iter().any(|h| !h.is_finished()) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(5));
    }
    for h in handles.into_iter().filter(|h| h.is_finished()) {
        let _ = h.join();
    }
}

/// Runs `cmd` (stdin null, stdout and stderr captured) for at most
/// `opts.timeout`, feeding each stdout line to `sink`.
pub fn run<S: LineSink>(mut cmd: Command, opts: &Options, sink: S) -> io::Result<Output<S>> {
    let log = match &opts.log {
        Some(path) => {
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir)?;
            }
            Some(BufWriter::new(File::create(path)?))
        }
        None => None,
    };
    let typed = opts.keyboard.as_ref().and_then(Keyboard::take);
    cmd.stdin(match typed {
        Some(_) => Stdio::piped(),
        None => Stdio::null(),
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let done = Arc::new(AtomicBool::new(false));
    let typist = match (typed, child.stdin.take()) {
        (Some(rx), Some(stdin)) => Some(typer(rx, stdin, done.clone())),
        _ => None,
    };
    let shared: Shared<S> = Arc::new(Mutex::new(Some(Capture {
        sink,
        partial: Vec::new(),
        tail: VecDeque::new(),
        stderr: VecDeque::new(),
        log,
        log_error: None,
    })));
    let mut handles = Vec::new();
    if let Some(out) = child.stdout.take() {
        handles.push(reader(out, shared.clone(), Capture::stdout));
    }
    if let Some(err) = child.stderr.take() {
        handles.push(reader(err, shared.clone(), Capture::stderr));
    }
    let exit = wait_until(
        &mut child,
        start + opts.timeout,
        opts.kill.as_ref(),
        opts.term_grace,
    )?;
    let elapsed = start.elapsed();
    done.store(true, Ordering::Relaxed);
    let bound = match exit {
        Exit::Timeout | Exit::Killed => JOIN_AFTER_KILL,
        _ => JOIN_AFTER_EXIT,
    };
    handles.extend(typist);
    join_bounded(handles, bound);
    let capture = lock(&shared)
        .take()
        .expect("the capture is taken only here");
    Ok(capture.finish(exit, elapsed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    /// A sink that ignores everything.
    struct NoSink;

    impl LineSink for NoSink {
        fn line(&mut self, _line: &str) {}
    }

    fn sh(script: &str) -> Command {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(script);
        cmd
    }

    fn opts(secs: u64) -> Options {
        Options {
            timeout: Duration::from_secs(secs),
            log: None,
            kill: None,
            term_grace: None,
            keyboard: None,
        }
    }

    /// Counts lines and records the longest.
    #[derive(Default)]
    struct Count {
        lines: usize,
        longest: usize,
    }

    impl LineSink for Count {
        fn line(&mut self, line: &str) {
            self.lines += 1;
            self.longest = self.longest.max(line.len());
        }
    }

    /// Collects lines.
    #[derive(Default)]
    struct Lines(Vec<String>);

    impl LineSink for Lines {
        fn line(&mut self, line: &str) {
            self.0.push(line.to_string());
        }
    }

    #[test]
    fn typed_text_reaches_stdin_after_its_line() {
        use crate::input::{InputStep, Typing, Typist};
        let steps = [
            InputStep {
                after: "^ready$".into(),
                text: "hello stet\n".into(),
            },
            InputStep {
                after: "^got hello stet$".into(),
                text: "second\n".into(),
            },
        ];
        let (sink, keyboard) = Typing::new(Lines::default(), Typist::new(&steps).unwrap());
        let opts = Options {
            keyboard: Some(keyboard),
            ..opts(10)
        };
        let script = "echo ready; read a; echo \"got $a\"; read b; echo \"then $b\"";
        let out = run(sh(script), &opts, sink).unwrap();
        assert_eq!(out.exit, Exit::Code(0));
        assert_eq!(out.sink.inner.0, ["ready", "got hello stet", "then second"]);
        assert!(out.sink.untyped().is_none());
    }

    #[test]
    fn without_a_keyboard_stdin_is_empty() {
        let out = run(sh("read a || echo eof"), &opts(5), Lines::default()).unwrap();
        assert_eq!(out.exit, Exit::Code(0));
        assert_eq!(out.sink.0, ["eof"]);
    }

    #[test]
    fn hung_guest_is_killed_at_the_timeout() {
        let start = Instant::now();
        let out = run(sh("echo hello; sleep 60"), &opts(2), NoSink).unwrap();
        let took = start.elapsed();
        assert_eq!(out.exit, Exit::Timeout);
        assert!(took < Duration::from_millis(3500), "took {took:?}");
        assert!(took >= Duration::from_secs(2));
        assert_eq!(out.tail, ["hello"]);
    }

    #[test]
    fn endless_output_without_newline_is_bounded() {
        let dir = TempDir::new("runner");
        let log = dir.path().join("logs/endless.log");
        let start = Instant::now();
        let opts = Options {
            timeout: Duration::from_secs(2),
            log: Some(log.clone()),
            kill: None,
            term_grace: None,
            keyboard: None,
        };
        let out = run(sh("while true; do printf x; done"), &opts, Count::default()).unwrap();
        assert!(start.elapsed() < Duration::from_millis(3500));
        assert_eq!(out.exit, Exit::Timeout);
        assert!(out.tail.len() <= TAIL_LINES);
        assert!(out.tail.iter().all(|l| l.len() <= MAX_LINE));
        assert!(out.sink.longest <= MAX_LINE);
        assert!(out.tail.iter().all(|l| l.bytes().all(|b| b == b'x')));
        let logged = fs::metadata(&log).unwrap().len();
        assert!(logged > 0);
        assert_eq!(out.log_error, None);
    }

    #[test]
    fn exit_status_is_the_process_code() {
        let out = run(sh("echo a; echo b; exit 16"), &opts(10), Count::default()).unwrap();
        assert_eq!(out.exit, Exit::Code(16));
        assert_eq!(out.tail, ["a", "b"]);
        assert_eq!(out.sink.lines, 2);
        let out = run(sh("exit 33"), &opts(10), NoSink).unwrap();
        assert_eq!(out.exit, Exit::Code(33));
        assert!(out.elapsed < Duration::from_secs(5));
    }

    #[test]
    fn signals_are_reported() {
        let out = run(sh("kill -9 $$"), &opts(10), NoSink).unwrap();
        assert_eq!(out.exit, Exit::Signal(9));
    }

    #[test]
    fn carriage_returns_and_last_partial_line() {
        let out = run(sh("printf 'a\\r\\nb\\r\\nno newline'"), &opts(10), NoSink).unwrap();
        assert_eq!(out.tail, ["a", "b", "no newline"]);
    }

    #[test]
    fn tail_keeps_the_last_lines_and_log_gets_everything() {
        let dir = TempDir::new("runner");
        let log = dir.path().join("t.log");
        let opts = Options {
            timeout: Duration::from_secs(10),
            log: Some(log.clone()),
            kill: None,
            term_grace: None,
            keyboard: None,
        };
        let out = run(
            sh("i=0; while [ $i -lt 100 ]; do echo line$i; i=$((i+1)); done; echo oops >&2"),
            &opts,
            NoSink,
        )
        .unwrap();
        assert_eq!(out.tail.len(), TAIL_LINES);
        assert_eq!(out.tail[0], "line75");
        assert_eq!(out.tail[TAIL_LINES - 1], "line99");
        assert_eq!(out.stderr, "oops\n");
        let text = fs::read_to_string(&log).unwrap();
        assert!(text.starts_with("line0\nline1\n"));
        assert!(text.contains("line99\n"));
        assert!(text.ends_with("--- stderr ---\noops\n"));
    }

    /// Arms its switch `delay` after the line `go`, and records every line.
    struct ArmOnGo {
        switch: KillSwitch,
        delay: Duration,
        lines: Vec<String>,
    }

    impl LineSink for ArmOnGo {
        fn line(&mut self, line: &str) {
            if line == "go" {
                self.switch.arm(Instant::now() + self.delay);
            }
            self.lines.push(line.to_string());
        }
    }

    #[test]
    fn an_armed_switch_kills_at_its_moment() {
        let switch = KillSwitch::default();
        let sink = ArmOnGo {
            switch: switch.clone(),
            delay: Duration::from_millis(300),
            lines: Vec::new(),
        };
        let opts = Options {
            timeout: Duration::from_secs(20),
            log: None,
            kill: Some(switch.clone()),
            term_grace: None,
            keyboard: None,
        };
        let start = Instant::now();
        let out = run(
            sh("echo a; echo go; echo b; sleep 30; echo never"),
            &opts,
            sink,
        )
        .unwrap();
        let took = start.elapsed();
        assert_eq!(out.exit, Exit::Killed);
        assert!(took >= Duration::from_millis(300), "took {took:?}");
        assert!(took < Duration::from_secs(5), "took {took:?}");
        assert_eq!(out.sink.lines, ["a", "go", "b"]);
        assert!(switch.deadline().is_some());
    }

    #[test]
    fn a_gentle_kill_sends_sigterm_first() {
        let run_with = |script: &str| {
            let switch = KillSwitch::default();
            let sink = ArmOnGo {
                switch: switch.clone(),
                delay: Duration::ZERO,
                lines: Vec::new(),
            };
            let opts = Options {
                timeout: Duration::from_secs(20),
                log: None,
                kill: Some(switch),
                term_grace: Some(Duration::from_secs(2)),
                keyboard: None,
            };
            let start = Instant::now();
            let out = run(sh(script), &opts, sink).unwrap();
            (out, start.elapsed())
        };
        // It cleans up and exits on SIGTERM.
        let (out, took) = run_with(
            "trap 'echo cleaned up; exit 0' TERM; echo go; while true; do sleep 0.1; done",
        );
        assert_eq!(out.exit, Exit::Killed);
        assert_eq!(out.sink.lines, ["go", "cleaned up"]);
        assert!(took < Duration::from_secs(2), "took {took:?}");
        // It ignores SIGTERM: SIGKILL after the grace period.
        let (out, took) = run_with("trap '' TERM; echo go; while true; do sleep 0.1; done");
        assert_eq!(out.exit, Exit::Killed);
        assert_eq!(out.sink.lines, ["go"]);
        assert!(took >= Duration::from_secs(2), "took {took:?}");
        assert!(took < Duration::from_secs(5), "took {took:?}");
    }

    #[test]
    fn an_unarmed_switch_changes_nothing() {
        let opts = Options {
            kill: Some(KillSwitch::default()),
            ..opts(10)
        };
        let out = run(sh("echo a; exit 33"), &opts, NoSink).unwrap();
        assert_eq!(out.exit, Exit::Code(33));
        assert_eq!(Exit::Killed.to_string(), "killed");
    }

    #[test]
    fn missing_program_is_an_error() {
        assert!(run(Command::new("/nonexistent/qemu"), &opts(1), NoSink).is_err());
    }
}
