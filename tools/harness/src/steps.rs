//! `[[boot]]` steps: boots in order on one disk, each after an optional
//! corruption of the disk, each judged on its own (for the corruption
//! tests: damage the store, then check the kernel notices and survives).

use std::path::Path;
use std::time::Duration;

use regex::Regex;

use std::collections::BTreeMap;

use crate::corrupt;
use crate::crash_spec::{BootStep, DamageSpec};
use crate::damage;
use crate::judge::{judge, judge_kill_on, Expected};
use crate::matcher::Matcher;
use crate::prng;
use crate::runner::Output;
use crate::spec::Outcome;
use crate::watch::Watch;

/// Why a step failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepFailure {
    /// The reason, naming the step.
    pub reason: String,
    /// Its last console lines.
    pub tail: Vec<String>,
    /// QEMU's stderr.
    pub stderr: String,
}

impl StepFailure {
    fn setup(reason: String) -> Self {
        StepFailure {
            reason,
            tail: Vec::new(),
            stderr: String::new(),
        }
    }
}

/// Runs `steps` on the disk at `disk`: for each, applies its corruption,
/// then `boot(i, step, watch, timeout)` runs QEMU with `watch` as its sink.
/// `forbid` (the spec's) applies to every step; `timeout` is the default.
/// Returns the result line.
pub fn run<F>(
    disk: &Path,
    steps: &[BootStep],
    forbid: &[String],
    timeout: Duration,
    mut boot: F,
) -> Result<String, StepFailure>
where
    F: FnMut(usize, &BootStep, Watch, Duration) -> std::io::Result<Output<Watch>>,
{
    let mut damaged = 0;
    let mut tallies = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        if let Some(d) = &step.damage {
            let tally = trials(disk, i, step, d, timeout, &mut boot)?;
            tallies.push(tally);
            continue;
        }
        let mut what = format!("boot step {i}");
        // The roots as they were before this step's damage, for the
        // patterns that name them (`corrupt::Facts`).
        let facts = corrupt::Facts::of(disk);
        if let Some(c) = &step.corrupt {
            let done = corrupt::apply(disk, c).map_err(|e| {
                StepFailure::setup(format!("{what}: cannot corrupt the disk: {e:#}"))
            })?;
            what = format!("{what} (after {done})");
            damaged += 1;
        }
        let subst = |ps: &[String]| ps.iter().map(|p| facts.substitute(p)).collect::<Vec<_>>();
        let all_forbid: Vec<String> = forbid.iter().chain(&step.forbid).cloned().collect();
        let matcher = Matcher::new(&subst(&step.expect), &subst(&all_forbid))
            .and_then(|m| m.with_contains(&subst(&step.contains)))
            .map_err(|e| StepFailure::setup(format!("{what}: spec error: {e}")))?;
        let kill_on = match &step.kill_on {
            Some(p) => Some(Regex::new(p).map_err(|e| {
                StepFailure::setup(format!("{what}: spec error: bad kill_on {p:?}: {e}"))
            })?),
            None => None,
        };
        let timeout = step.timeout_secs.map_or(timeout, Duration::from_secs);
        let watch =
            Watch::new(matcher, kill_on).with_kill_delay(Duration::from_millis(step.kill_delay_ms));
        let out = boot(i, step, watch, timeout)
            .map_err(|e| StepFailure::setup(format!("{what}: cannot run QEMU: {e}")))?;
        let verdict = out.sink.verdict();
        let result = match &step.kill_on {
            Some(p) => judge_kill_on(p, timeout, out.exit, out.sink.killed_on(), &verdict),
            None => judge(
                Expected {
                    outcome: Outcome::Pass,
                    exit_code: step.exit_code,
                    timeout,
                },
                out.exit,
                &verdict,
            ),
        };
        if let Err(reason) = result {
            return Err(StepFailure {
                reason: format!("{what}: {reason}"),
                tail: out.tail,
                stderr: out.stderr,
            });
        }
    }
    let mut line = format!(
        "boots: {n} steps passed ({damaged} after damage to the disk)",
        n = steps.len()
    );
    for t in tallies {
        line.push_str("; ");
        line.push_str(&t);
    }
    Ok(line)
}

/// A `damage` step: `d.trials` restarts of the disk as it is, each with
/// one bit flipped in `d.area` (`damage.rs`), each classified; every
/// outcome must be one `d.allow` names. The disk is left as it was. The
/// spec's `forbid` does not apply (a refusal is a panic line). Returns
/// the tally.
fn trials<F>(
    disk: &Path,
    i: usize,
    step: &BootStep,
    d: &DamageSpec,
    timeout: Duration,
    boot: &mut F,
) -> Result<String, StepFailure>
where
    F: FnMut(usize, &BootStep, Watch, Duration) -> std::io::Result<Output<Watch>>,
{
    let what = format!("boot step {i} (damage {})", d.area);
    let setup = |e: String| StepFailure::setup(format!("{what}: {e}"));
    let area = damage::Area::from_name(&d.area).ok_or_else(|| setup("unknown area".into()))?;
    let seed = prng::seed(std::env::var(prng::SEED_ENV).ok().as_deref(), d.seed).map_err(setup)?;
    let pristine = disk.with_extension("pristine");
    std::fs::copy(disk, &pristine).map_err(|e| setup(format!("cannot keep the disk: {e}")))?;
    let timeout = step.timeout_secs.map_or(timeout, Duration::from_secs);
    let kill_on = step.kill_on.as_deref().unwrap_or(damage::VERDICT);
    let kill_on = Regex::new(kill_on).map_err(|e| setup(format!("bad kill_on: {e}")))?;
    let mut rng = prng::Rng::new(seed);
    let mut tally: BTreeMap<&'static str, u32> = BTreeMap::new();
    let result = (0..d.trials).try_for_each(|t| {
        let mut report = (Vec::new(), String::new());
        let trial = damage::trial(&pristine, disk, area, &mut rng, |_| {
            let matcher = Matcher::new(&[], &[]).map_err(anyhow::Error::msg)?;
            let watch = Watch::new(matcher, Some(kill_on.clone())).recording();
            let out = boot(i, step, watch, timeout)?;
            report = (out.tail, out.stderr);
            Ok(out.sink.lines().to_vec())
        })
        .map_err(|e| setup(format!("{e:#}")))?
        .ok_or_else(|| setup(format!("the {} area holds nothing to damage", d.area)))?;
        let kind = trial.outcome.kind();
        *tally.entry(kind).or_default() += 1;
        if trial.outcome.acceptable() && d.allow.iter().any(|a| a == kind) {
            return Ok(());
        }
        Err(StepFailure {
            reason: format!(
                "{what}: trial {t} (seed {seed}), {}: {:?}",
                trial.flip.describe(),
                trial.outcome
            ),
            tail: report.0,
            stderr: report.1,
        })
    });
    // The disk as it was, for the steps that follow.
    let restored = std::fs::copy(&pristine, disk);
    let _ = std::fs::remove_file(&pristine);
    result?;
    restored.map_err(|e| setup(format!("cannot restore the disk: {e}")))?;
    let counts: Vec<String> = tally.iter().map(|(k, n)| format!("{n} {k}")).collect();
    Ok(format!(
        "damage {}: {} trials, {}",
        d.area,
        d.trials,
        counts.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{Exit, LineSink};
    use crate::spec::Spec;
    use crate::testutil::TempDir;
    use std::fs;

    fn steps(text: &str) -> Vec<BootStep> {
        let spec = Spec::parse(&format!(
            "programs = [\"x\"]\ndisk = \"1M\"\nforbid = ['PANIC']\n{text}"
        ))
        .unwrap();
        match spec.boot {
            crate::crash_spec::Boot::Steps(s) => s,
            other => panic!("{other:?}"),
        }
    }

    /// A fake QEMU: step `i` prints `lines[i]` and, if the watch armed its
    /// kill, is killed, else exits with `codes[i]`.
    fn fake<'a>(
        lines: Vec<Vec<&'static str>>,
        codes: Vec<i32>,
        seen: &'a mut Vec<(usize, Vec<u8>)>,
        disk: &Path,
    ) -> impl FnMut(usize, &BootStep, Watch, Duration) -> std::io::Result<Output<Watch>> + 'a {
        let disk = disk.to_path_buf();
        move |i, _, mut w, _| {
            seen.push((i, fs::read(&disk).unwrap()[..16].to_vec()));
            for l in &lines[i] {
                w.line(l);
            }
            let exit = if w.switch().deadline().is_some() {
                Exit::Killed
            } else {
                Exit::Code(codes[i])
            };
            Ok(Output {
                exit,
                elapsed: Duration::ZERO,
                tail: lines[i].iter().map(|s| s.to_string()).collect(),
                stderr: String::new(),
                sink: w,
                log_error: None,
            })
        }
    }

    const TWO: &str = r#"
        [[boot]]
        expect = ['store: new']
        kill_on = 'check: fresh'
        [[boot]]
        corrupt = { block = 0, offset = 2, len = 3, xor = 0x0f }
        expect = ['damaged', 'check: ok']
        exit_code = 35
    "#;

    #[test]
    fn steps_run_in_order_with_corruption_before_their_boot() {
        let dir = TempDir::new("steps");
        let disk = dir.path().join("d");
        fs::write(&disk, vec![0u8; 8192]).unwrap();
        let mut seen = Vec::new();
        let lines = vec![
            vec!["store: new store", "check: fresh", "after"],
            vec!["root damaged", "check: ok epoch=1"],
        ];
        let got = run(
            &disk,
            &steps(TWO),
            &["PANIC".into()],
            Duration::from_secs(9),
            fake(lines, vec![0, 35], &mut seen, &disk),
        );
        assert_eq!(
            got,
            Ok("boots: 2 steps passed (1 after damage to the disk)".into())
        );
        assert_eq!(seen[0], (0, vec![0; 16]));
        let mut damaged = vec![0u8; 16];
        damaged[2..5].fill(0x0f);
        assert_eq!(seen[1], (1, damaged));
    }

    #[test]
    fn a_failing_step_names_itself_and_its_damage() {
        let dir = TempDir::new("steps");
        let disk = dir.path().join("d");
        fs::write(&disk, vec![0u8; 8192]).unwrap();
        let mut seen = Vec::new();
        let lines = vec![
            vec!["store: new store", "check: fresh"],
            vec!["PANIC: bad root"],
        ];
        let err = run(
            &disk,
            &steps(TWO),
            &["PANIC".into()],
            Duration::from_secs(9),
            fake(lines, vec![0, 35], &mut seen, &disk),
        )
        .unwrap_err();
        assert_eq!(
            err.reason,
            "boot step 1 (after xor 0x0f over 3 bytes at 2 (block 0)): forbidden line: PANIC: bad root"
        );
        assert_eq!(err.tail, ["PANIC: bad root"]);

        // A step whose kill_on never comes; and a corruption that cannot be done.
        let mut seen = Vec::new();
        let err = run(
            &disk,
            &steps(TWO),
            &[],
            Duration::from_secs(9),
            fake(vec![vec!["store: new store"]], vec![33], &mut seen, &disk),
        )
        .unwrap_err();
        assert_eq!(
            err.reason,
            "boot step 0: QEMU exited (status 33) before a line matched 'check: fresh'"
        );
        let bad = steps("[[boot]]\ncorrupt = { target = \"root-newest\" }\n");
        let mut seen = Vec::new();
        let err = run(
            &disk,
            &bad,
            &[],
            Duration::from_secs(9),
            fake(vec![], vec![], &mut seen, &disk),
        )
        .unwrap_err();
        assert!(
            err.reason
                .starts_with("boot step 0: cannot corrupt the disk: no valid root record"),
            "{}",
            err.reason
        );
        assert!(seen.is_empty());
    }
}
