//! A console sink for boots that end when a line says so: it matches the
//! spec's expectations and kills QEMU (through a [`KillSwitch`]) as soon as
//! a line matches `kill_on`, or a forbidden line appears.

use std::time::{Duration, Instant};

use regex::Regex;

use crate::matcher::{Matcher, Verdict};
use crate::runner::{KillSwitch, LineSink};

/// Matches lines and pulls the plug on `kill_on`.
#[derive(Debug)]
pub struct Watch {
    matcher: Matcher,
    kill_on: Option<Regex>,
    kill_delay: Duration,
    switch: KillSwitch,
    killed_on: Option<String>,
    /// Every line, when asked to keep them (`recording`).
    lines: Option<Vec<String>>,
}

/// Most lines a recording watch keeps (a restart that prints more is
/// judged on its first ones).
const MAX_RECORDED: usize = 100_000;

impl Watch {
    /// A watch that feeds `matcher` and kills at the first line matching
    /// `kill_on` (if any) or at a forbidden line.
    pub fn new(matcher: Matcher, kill_on: Option<Regex>) -> Self {
        Watch {
            matcher,
            kill_on,
            kill_delay: Duration::ZERO,
            switch: KillSwitch::default(),
            killed_on: None,
            lines: None,
        }
    }

    /// Keeps every line (up to a bound), for a caller that judges the
    /// whole console (damage trials).
    pub fn recording(mut self) -> Self {
        self.lines = Some(Vec::new());
        self
    }

    /// The lines kept (none unless `recording`).
    pub fn lines(&self) -> &[String] {
        self.lines.as_deref().unwrap_or(&[])
    }

    /// Kill this long after the `kill_on` line instead of at once (to let
    /// the guest go on a while: time for checkpoints while it idles).
    pub fn with_kill_delay(mut self, delay: Duration) -> Self {
        self.kill_delay = delay;
        self
    }

    /// The switch to hand to the runner.
    pub fn switch(&self) -> KillSwitch {
        self.switch.clone()
    }

    /// The line that matched `kill_on`, if one did.
    pub fn killed_on(&self) -> Option<&str> {
        self.killed_on.as_deref()
    }

    /// The matcher's verdict.
    pub fn verdict(&self) -> Verdict {
        self.matcher.verdict()
    }
}

impl LineSink for Watch {
    fn line(&mut self, line: &str) {
        if let Some(v) = self.lines.as_mut().filter(|v| v.len() < MAX_RECORDED) {
            v.push(line.to_string());
        }
        self.matcher.feed(line);
        if self.killed_on.is_none() && self.kill_on.as_ref().is_some_and(|re| re.is_match(line)) {
            self.killed_on = Some(line.to_string());
            self.switch.arm(Instant::now() + self.kill_delay);
        }
        if matches!(self.matcher.verdict(), Verdict::Forbidden(_)) {
            self.switch.arm(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(expect: &[&str], forbid: &[&str], kill_on: Option<&str>) -> Watch {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let m = Matcher::new(&s(expect), &s(forbid)).unwrap();
        Watch::new(m, kill_on.map(|k| Regex::new(k).unwrap()))
    }

    #[test]
    fn kill_on_arms_at_the_first_match() {
        let mut w = watch(&["a", "check: ok"], &[], Some("check: (ok|fresh)"));
        w.line("a");
        assert_eq!(w.switch().deadline(), None);
        w.line("check: ok epoch=1");
        let armed = w.switch().deadline().unwrap();
        assert!(armed <= Instant::now());
        w.line("check: fresh");
        assert_eq!(w.killed_on(), Some("check: ok epoch=1"));
        assert_eq!(w.switch().deadline(), Some(armed));
        assert_eq!(w.verdict(), Verdict::Ok);
    }

    #[test]
    fn a_kill_delay_arms_later() {
        let mut w = watch(&[], &[], Some("idle")).with_kill_delay(Duration::from_secs(60));
        let before = Instant::now();
        w.line("idle now");
        let armed = w.switch().deadline().unwrap();
        assert!(armed >= before + Duration::from_secs(60));
        assert_eq!(w.killed_on(), Some("idle now"));
    }

    #[test]
    fn forbidden_lines_kill_too() {
        let mut w = watch(&[], &["PANIC"], None);
        w.line("fine");
        assert_eq!(w.switch().deadline(), None);
        w.line("PANIC: x");
        assert!(w.switch().deadline().is_some());
        assert_eq!(w.killed_on(), None);
        assert_eq!(w.verdict(), Verdict::Forbidden("PANIC: x".into()));
    }
}
