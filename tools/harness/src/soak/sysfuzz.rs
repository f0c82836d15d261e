//! The UNIX system-call fuzzer (user/unix/c/sysfuzz.c) as pid 1 of
//! tests/soak/sysfuzz.toml: a unit is `BATCHES` batches of `CALLS` calls
//! with the unit's seed. A failure names its batch; the replay runs that
//! batch alone with each call printed before it is made.

use std::time::Duration;

use regex::Regex;

use super::{unit, Campaign, Ctx, Found, Outcome};
use crate::matcher::Matcher;
use crate::spec::Spec;

/// The campaign.
pub struct SysFuzz;

/// Batches per unit.
const BATCHES: u64 = 25;
/// Calls per batch.
const CALLS: u64 = 200;
/// A unit that printed nothing for this long hangs (a batch prints at
/// least every 3 + 5 s of reaping and a check, and a busybox pipeline).
const IDLE: Duration = Duration::from_secs(30);

const SPEC: &str = "tests/soak/sysfuzz.toml";

/// The keeper's command line for a unit.
pub fn command(seed: u64, batches: u64, first: u64, flags: &str) -> String {
    let flags = if flags.is_empty() { "-" } else { flags };
    format!("/bin/sysfuzz {seed:#x} {batches} {CALLS} {first} {flags}")
}

/// `spec` running `cmd` as pid 1.
pub fn adapt(spec: &mut Spec, cmd: &str) -> Result<(), String> {
    let k = spec
        .domain
        .iter_mut()
        .find(|d| d.name == "unixkeeper")
        .and_then(|d| {
            d.keys
                .iter_mut()
                .find(|k| k.starts_with("text:/bin/sysfuzz"))
        })
        .ok_or("the spec's unixkeeper has no text:/bin/sysfuzz key")?;
    *k = format!("text:{cmd}");
    Ok(())
}

/// What the console says about a unit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reading {
    /// Calls made in the batches that ended.
    pub calls: u64,
    /// The last batch that ended, if any.
    pub last_batch: Option<u64>,
    /// Batches whose child was killed after the time limit.
    pub killed: u64,
    /// Batches whose child ended by a signal.
    pub signalled: u64,
    /// Forged rt_sigreturn frames that resumed where they said (exit 77).
    pub resumed: u64,
    /// The fuzzer's own failure line.
    pub failed: Option<String>,
    /// A keeper's or server's panic line.
    pub panic: Option<String>,
    /// The last call with a time before a sleep took too long.
    pub timed: Option<String>,
    /// The last call a replay printed before making it.
    pub last_call: Option<String>,
    /// The last one of those that sets a timer or waits with a time.
    pub last_timed_call: Option<String>,
}

/// Calls that set a timer or wait with a time (a long one can stall other
/// processes' sleeps: issue 22's first bug): alarm, setitimer, nanosleep,
/// clock_nanosleep, poll, select, ppoll, pselect6, futex, rt_sigtimedwait,
/// timer_settime, timerfd_settime, epoll_wait, epoll_pwait.
const TIMED: [u64; 14] = [
    37, 38, 35, 230, 7, 23, 271, 270, 202, 128, 223, 286, 232, 281,
];

/// Reads the kept lines of a unit.
pub fn read(lines: &[String]) -> Reading {
    let batch = Regex::new(r"^sysfuzz: batch (\d+): (\d+) calls, (.*); check ok").expect("regex");
    let mut r = Reading::default();
    let mut panic_next = false;
    for l in lines {
        let was_panic = panic_next;
        panic_next = false;
        if was_panic && !l.starts_with("sysfuzz: ") {
            if let Some(p) = r.panic.as_mut() {
                p.push(' ');
                p.push_str(l.trim());
            }
            continue;
        }
        if let Some(c) = batch.captures(l) {
            r.last_batch = c[1].parse().ok();
            r.calls += c[2].parse::<u64>().unwrap_or(0);
            let how = &c[3];
            r.killed += u64::from(how.starts_with("killed"));
            r.signalled += u64::from(how.starts_with("signal"));
            r.resumed += u64::from(how.starts_with("exit 77 "));
        } else if l.starts_with("sysfuzz: FAILED") && r.failed.is_none() {
            r.failed = Some(l.clone());
        } else if l.contains("panicked at") && r.panic.is_none() {
            r.panic = Some(l.clone());
            // Its message is on the next line.
            panic_next = true;
        } else if let Some(t) = l.strip_prefix("sysfuzz:   the last call with a time: ") {
            r.timed = Some(t.to_string());
        } else if let Some(call) = l.strip_prefix("sysfuzz: #") {
            let nr = call
                .split_once(' ')
                .and_then(|(_, rest)| rest.split_once('('))
                .and_then(|(nr, _)| nr.parse::<u64>().ok());
            if nr.is_some_and(|n| TIMED.contains(&n)) {
                r.last_timed_call = Some(format!("#{call}"));
            }
            r.last_call = Some(format!("#{call}"));
        }
    }
    r
}

/// The batch a failed unit failed in: the one its failure line names, else
/// the one after the last that ended.
pub fn failed_batch(r: &Reading, first: u64) -> u64 {
    let named = Regex::new(r"batch (\d+):").expect("regex");
    r.failed
        .as_deref()
        .and_then(|l| named.captures(l))
        .and_then(|c| c[1].parse().ok())
        .unwrap_or_else(|| r.last_batch.map_or(first, |b| b + 1))
}

impl Campaign for SysFuzz {
    fn name(&self) -> &'static str {
        "sysfuzz"
    }

    fn title(&self) -> &'static str {
        "UNIX system-call fuzzer"
    }

    fn counts(&self) -> &'static str {
        "calls"
    }

    fn variant(&self, _: u64, ctx: &Ctx<'_>) -> &'static str {
        if ctx.known {
            "known"
        } else {
            "full"
        }
    }

    fn run(&self, ctx: &Ctx<'_>, variant: &str, seed: u64, detail: Option<u64>) -> Outcome {
        let fail = |what: String| Outcome {
            failures: vec![Found {
                what,
                ..Found::default()
            }],
            ..Outcome::default()
        };
        let known = variant == "known";
        let (batches, first) = match detail {
            Some(b) => (1, b),
            None => (BATCHES, 0),
        };
        let run = match boot(ctx, seed, batches, first, known, detail.is_some()) {
            Ok(r) => r,
            Err(e) => return fail(e),
        };
        let r = &run.reading;
        let extra = vec![
            (
                "batches".to_string(),
                r.last_batch.map_or(0, |b| b + 1 - first),
            ),
            ("children killed after the time limit".to_string(), r.killed),
            ("children ended by a signal".to_string(), r.signalled),
            ("forged frames that resumed".to_string(), r.resumed),
        ];
        let failure = run.verdict.as_ref().map(|why| {
            let b = failed_batch(r, first);
            let mut what = format!("seed {seed:#x} batch {b}: ");
            match &r.failed {
                Some(f) => what.push_str(f.trim_start_matches("sysfuzz: ")),
                None => what.push_str(why),
            }
            if let Some(p) = &r.panic {
                what.push_str(&format!("; {p}"));
            }
            if let Some(t) = &r.timed {
                what.push_str(&format!("; the last call with a time: {t}"));
            }
            if r.failed.is_none() && run.quiet {
                what.push_str(" (the fuzzer's parent printed nothing more: its sleeps or waits stopped)");
                // Which call: the batch again, alone, its calls printed.
                if detail.is_none() {
                    what.push_str(&match boot(ctx, seed, 1, b, known, true) {
                        Ok(again) => {
                            let a = &again.reading;
                            let last = a.last_call.as_deref().unwrap_or("none");
                            let how = if again.verdict.is_some() { "failed again" } else { "passed" };
                            let timed = a.last_timed_call.as_deref().unwrap_or("none");
                            format!("; the batch alone {how}, its last call printed: {last}, its last call with a time: {timed}")
                        }
                        Err(e) => format!("; the batch alone could not run: {e}"),
                    });
                }
            }
            if let Some(c) = &r.last_call {
                what.push_str(&format!("; the last call printed: {c}"));
            }
            what.push_str(&format!("; `{}`", run.cmd));
            Found {
                what,
                detail: Some(b),
                keep: Vec::new(),
            }
        });
        Outcome {
            count: r.calls,
            extra,
            failures: failure.into_iter().collect(),
        }
    }
}

/// A boot of the fuzzer and what it said.
struct Run {
    cmd: String,
    reading: Reading,
    /// Why it failed, if it did.
    verdict: Option<String>,
    /// It went quiet (a hang).
    quiet: bool,
}

/// Boots the fuzzer for `batches` batches from `first`; `verbose`: the
/// child prints each call before making it.
fn boot(
    ctx: &Ctx<'_>,
    seed: u64,
    batches: u64,
    first: u64,
    known: bool,
    verbose: bool,
) -> Result<Run, String> {
    let flags = format!(
        "{}{}",
        if verbose { "v" } else { "" },
        if known { "k" } else { "" }
    );
    let mut spec = unit::load(ctx.layout, SPEC)?;
    let cmd = command(seed, batches, first, &flags);
    adapt(&mut spec, &cmd)?;
    let name = ctx.name("sysfuzz");
    unit::prepare(ctx.layout, &name, &spec)?;
    let matcher =
        Matcher::new(&spec.expect, &spec.forbid).map_err(|e| format!("spec error: {e}"))?;
    // Every line (a panic's message is on the line after it).
    let keep = [""];
    // Past a forbidden line (a keeper's panic) the fuzzer still says
    // which call it was: its failure line, then its replay line.
    let sink = unit::Collect::new(matcher, Some(r"^sysfuzz: replay:"), &keep)?
        .with_idle(IDLE)
        .lenient();
    let cfg = crate::system::config(ctx.layout, &name, &spec);
    let timeout = Duration::from_secs(spec.timeout_secs);
    let tag = if verbose { "replay" } else { "run" };
    let out = unit::boot(&cfg, &ctx.layout.boot_log(&name, tag), timeout, sink)?;
    Ok(Run {
        cmd,
        reading: read(&out.sink.kept),
        verdict: unit::verdict(&spec, &out),
        quiet: out.sink.went_quiet,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_takes_the_command() {
        let layout =
            crate::root::Layout::find(None, std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        let mut spec = unit::load(&layout, SPEC).unwrap();
        let cmd = command(0xab, 3, 7, "vk");
        assert_eq!(cmd, "/bin/sysfuzz 0xab 3 200 7 vk");
        assert_eq!(command(1, 25, 0, ""), "/bin/sysfuzz 0x1 25 200 0 -");
        adapt(&mut spec, &cmd).unwrap();
        let k = &spec
            .domain
            .iter()
            .find(|d| d.name == "unixkeeper")
            .unwrap()
            .keys;
        assert_eq!(k.last().unwrap(), "text:/bin/sysfuzz 0xab 3 200 7 vk");
    }

    #[test]
    fn lines_are_read_into_figures() {
        let lines: Vec<String> = [
            "sysfuzz: seed 0x2; 25 batches from 0, 200 calls each",
            "sysfuzz: batch 0: 32 calls, exit 0 at #32 (60); check ok",
            "sysfuzz: batch 1: 183 calls, exit 77 at #183 (15); check ok",
            "sysfuzz: batch 2: 200 calls, exit 0; check ok",
            "sysfuzz: batch 3: 171 calls, signal 8 at #171 (234); check ok",
            "sysfuzz: batch 4: 9 calls, killed after 3000 ms at #9 (34); check ok",
            "panic: panicked at user/unix/src/bin/unixkeeper/fds.rs:220:23:",
            "index out of bounds: the len is 256 but the index is 68719476736",
            "sysfuzz: FAILED seed 0x2 batch 5: the batch's child: pid 20 still there 5000 ms after SIGKILL; last call #34: 17(0x100000000000)",
            "sysfuzz: #1 37(0xffffffff, 0x1, 0x2, 0x3, 0x4, 0x5)",
            "sysfuzz: #2 125(0x1, 0x1, 0x2, 0x3, 0x4, 0x5)",
        ]
        .map(String::from)
        .to_vec();
        let r = read(&lines);
        assert_eq!(r.calls, 32 + 183 + 200 + 171 + 9);
        assert_eq!(r.last_batch, Some(4));
        assert_eq!((r.killed, r.signalled, r.resumed), (1, 1, 1));
        assert_eq!(
            r.panic.as_deref(),
            Some("panic: panicked at user/unix/src/bin/unixkeeper/fds.rs:220:23: index out of bounds: the len is 256 but the index is 68719476736")
        );
        assert_eq!(failed_batch(&r, 0), 5);
        assert_eq!(
            r.last_call.as_deref(),
            Some("#2 125(0x1, 0x1, 0x2, 0x3, 0x4, 0x5)")
        );
        assert_eq!(
            r.last_timed_call.as_deref(),
            Some("#1 37(0xffffffff, 0x1, 0x2, 0x3, 0x4, 0x5)")
        );
        // Without a failure line: the batch after the last one that ended.
        let r = read(&lines[..4]);
        assert_eq!(failed_batch(&r, 0), 3);
        assert_eq!(failed_batch(&read(&[]), 9), 9);
    }
}
