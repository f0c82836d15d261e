//! Deciding whether a system test passed.

use std::time::Duration;

use crate::matcher::Verdict;
use crate::runner::Exit;
use crate::spec::{Outcome, Spec};

/// What the spec asks of the run, reduced to what judging needs.
#[derive(Clone, Copy, Debug)]
pub struct Expected {
    /// Exit by itself, or hang.
    pub outcome: Outcome,
    /// The status when exiting by itself.
    pub exit_code: i32,
    /// The timeout, for the message.
    pub timeout: Duration,
}

impl From<&Spec> for Expected {
    fn from(spec: &Spec) -> Self {
        Expected {
            outcome: spec.outcome,
            exit_code: spec.exit_code,
            timeout: Duration::from_secs(spec.timeout_secs),
        }
    }
}

/// `Ok` if the test passed, else the failure reason.
///
/// Reasons are checked in this order: spec error, forbidden line, how the
/// guest ended, unmet expectation.
pub fn judge(expected: Expected, exit: Exit, verdict: &Verdict) -> Result<(), String> {
    match verdict {
        Verdict::SpecError(e) => return Err(format!("spec error: {e}")),
        Verdict::Forbidden(line) => return Err(format!("forbidden line: {line}")),
        Verdict::Ok | Verdict::Unmet(_) => {}
    }
    match (expected.outcome, exit) {
        (Outcome::Pass, Exit::Timeout) => {
            return Err(format!("timeout after {}s", expected.timeout.as_secs()));
        }
        (Outcome::Pass, Exit::Code(c)) if c == expected.exit_code => {}
        (Outcome::Pass, other) => {
            return Err(format!(
                "exit status {other} (expected {})",
                expected.exit_code
            ));
        }
        (Outcome::Timeout, Exit::Timeout) => {}
        (Outcome::Timeout, other) => {
            return Err(format!(
                "exit status {other} (expected a timeout after {}s)",
                expected.timeout.as_secs()
            ));
        }
    }
    match verdict {
        Verdict::Unmet(pattern) => Err(format!("expectation not met: {pattern}")),
        _ => Ok(()),
    }
}

/// `Ok` if a boot that should end by being killed at a line matching
/// `kill_on` did so: killed on that line (`killed_on`), no forbidden line,
/// every expectation met.
pub fn judge_kill_on(
    kill_on: &str,
    timeout: Duration,
    exit: Exit,
    killed_on: Option<&str>,
    verdict: &Verdict,
) -> Result<(), String> {
    match verdict {
        Verdict::SpecError(e) => return Err(format!("spec error: {e}")),
        Verdict::Forbidden(line) => return Err(format!("forbidden line: {line}")),
        Verdict::Ok | Verdict::Unmet(_) => {}
    }
    match (exit, killed_on) {
        (Exit::Killed, Some(_)) => {}
        (Exit::Timeout, _) | (Exit::Killed, None) => {
            return Err(format!(
                "timeout after {}s: no line matched '{kill_on}'",
                timeout.as_secs()
            ))
        }
        (other, _) => {
            return Err(format!(
                "QEMU exited (status {other}) before a line matched '{kill_on}'"
            ))
        }
    }
    match verdict {
        Verdict::Unmet(pattern) => Err(format!("expectation not met: {pattern}")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kill_on_boots() {
        let t = Duration::from_secs(30);
        let j = |exit, killed: Option<&str>, v: &Verdict| {
            judge_kill_on("check: ok", t, exit, killed, v)
        };
        assert_eq!(j(Exit::Killed, Some("check: ok"), &Verdict::Ok), Ok(()));
        assert_eq!(
            j(Exit::Killed, Some("check: ok"), &Verdict::Unmet("x".into())),
            Err("expectation not met: x".into())
        );
        assert_eq!(
            j(Exit::Timeout, None, &Verdict::Ok),
            Err("timeout after 30s: no line matched 'check: ok'".into())
        );
        assert_eq!(
            j(Exit::Code(33), None, &Verdict::Ok),
            Err("QEMU exited (status 33) before a line matched 'check: ok'".into())
        );
        assert_eq!(
            j(Exit::Killed, None, &Verdict::Forbidden("PANIC".into())),
            Err("forbidden line: PANIC".into())
        );
        assert_eq!(
            j(Exit::Killed, Some("c"), &Verdict::SpecError("bad".into())),
            Err("spec error: bad".into())
        );
    }

    fn expected(outcome: Outcome) -> Expected {
        Expected {
            outcome,
            exit_code: 33,
            timeout: Duration::from_secs(30),
        }
    }

    #[test]
    fn pass_needs_the_exit_code_and_all_expectations() {
        let e = expected(Outcome::Pass);
        assert_eq!(judge(e, Exit::Code(33), &Verdict::Ok), Ok(()));
        assert_eq!(
            judge(e, Exit::Code(35), &Verdict::Ok),
            Err("exit status 35 (expected 33)".into())
        );
        assert_eq!(
            judge(e, Exit::Signal(9), &Verdict::Ok),
            Err("exit status signal 9 (expected 33)".into())
        );
        assert_eq!(
            judge(e, Exit::Timeout, &Verdict::Ok),
            Err("timeout after 30s".into())
        );
        assert_eq!(
            judge(e, Exit::Code(33), &Verdict::Unmet("x".into())),
            Err("expectation not met: x".into())
        );
        assert_eq!(
            judge(e, Exit::Code(33), &Verdict::Forbidden("PANIC".into())),
            Err("forbidden line: PANIC".into())
        );
        assert_eq!(
            judge(e, Exit::Code(33), &Verdict::SpecError("bad".into())),
            Err("spec error: bad".into())
        );
    }

    #[test]
    fn timeout_outcome_needs_a_timeout() {
        let e = expected(Outcome::Timeout);
        assert_eq!(judge(e, Exit::Timeout, &Verdict::Ok), Ok(()));
        assert!(judge(e, Exit::Code(33), &Verdict::Ok).is_err());
        assert_eq!(
            judge(e, Exit::Timeout, &Verdict::Unmet("spin".into())),
            Err("expectation not met: spin".into())
        );
    }

    #[test]
    fn custom_exit_code() {
        let e = Expected {
            exit_code: 35,
            ..expected(Outcome::Pass)
        };
        assert_eq!(judge(e, Exit::Code(35), &Verdict::Ok), Ok(()));
        assert!(judge(e, Exit::Code(33), &Verdict::Ok).is_err());
    }
}
