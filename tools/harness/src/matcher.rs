//! Matching console lines against a spec's `expect` and `forbid` regexes.
//!
//! Expectations are matched in order, each by a line after the one that met
//! the previous expectation; a line meets at most one expectation. A pattern
//! may refer to text captured by a named group of an earlier pattern as
//! `${name}`, which is replaced by the regex-escaped capture just before the
//! pattern is compiled.
//!
//! `contains` patterns are unordered: each must match some line, anywhere.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use regex::Regex;

use crate::runner::LineSink;

/// The result of matching a whole console.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every expectation met, no forbidden line.
    Ok,
    /// The spec itself is wrong.
    SpecError(String),
    /// A forbidden pattern matched this line (the first such line).
    Forbidden(String),
    /// This expectation (the first unmet one) was never met.
    Unmet(String),
}

/// Streaming matcher fed one console line at a time.
#[derive(Debug)]
pub struct Matcher {
    expect: Vec<String>,
    next: usize,
    current: Option<Regex>,
    captures: HashMap<String, String>,
    forbid: Vec<Regex>,
    forbidden: Option<String>,
    error: Option<String>,
    contains: Vec<(String, Regex, bool)>,
}

/// `${name}` references.
static REFERENCE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}").expect("valid regex"));

/// Replaces every `${name}` with `value(name)`; an unknown name is an error.
fn substitute(
    pattern: &str,
    mut value: impl FnMut(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::new();
    let mut last = 0;
    for caps in REFERENCE.captures_iter(pattern) {
        let whole = caps.get(0).expect("group 0 always exists");
        let name = &caps[1];
        let text = value(name).ok_or_else(|| {
            format!("pattern {pattern:?} uses ${{{name}}}, which no earlier pattern captured")
        })?;
        out.push_str(&pattern[last..whole.start()]);
        out.push_str(&text);
        last = whole.end();
    }
    out.push_str(&pattern[last..]);
    Ok(out)
}

fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| format!("bad regex {pattern:?}: {e}"))
}

impl Matcher {
    /// Checks every pattern up front: regex syntax, and that each `${name}`
    /// names a group of an earlier expectation.
    pub fn new(expect: &[String], forbid: &[String]) -> Result<Self, String> {
        let mut known = HashSet::new();
        for pattern in expect {
            let probe = substitute(pattern, |name| known.contains(name).then(|| "x".into()))?;
            let re = compile(&probe)?;
            known.extend(re.capture_names().flatten().map(String::from));
        }
        let forbid = forbid
            .iter()
            .map(|p| compile(p))
            .collect::<Result<Vec<_>, _>>()?;
        let mut matcher = Matcher {
            expect: expect.to_vec(),
            next: 0,
            current: None,
            captures: HashMap::new(),
            forbid,
            forbidden: None,
            error: None,
            contains: Vec::new(),
        };
        matcher.prepare();
        Ok(matcher)
    }

    /// Adds unordered expectations: each must match at least one line.
    pub fn with_contains(mut self, contains: &[String]) -> Result<Self, String> {
        for p in contains {
            self.contains.push((p.clone(), compile(p)?, false));
        }
        Ok(self)
    }

    /// Compiles the next expectation with the captures so far.
    fn prepare(&mut self) {
        self.current = None;
        let Some(pattern) = self.expect.get(self.next) else {
            return;
        };
        let compiled = substitute(pattern, |name| {
            self.captures.get(name).map(|v| regex::escape(v))
        })
        .and_then(|p| compile(&p));
        match compiled {
            Ok(re) => self.current = Some(re),
            Err(e) => self.error = Some(e),
        }
    }

    /// Feeds one line.
    pub fn feed(&mut self, line: &str) {
        if self.forbidden.is_none() && self.forbid.iter().any(|re| re.is_match(line)) {
            self.forbidden = Some(line.to_string());
        }
        for (_, re, seen) in self.contains.iter_mut().filter(|c| !c.2) {
            *seen = re.is_match(line);
        }
        let Some(re) = &self.current else {
            return;
        };
        let Some(caps) = re.captures(line) else {
            return;
        };
        for name in re.capture_names().flatten() {
            if let Some(m) = caps.name(name) {
                self.captures
                    .insert(name.to_string(), m.as_str().to_string());
            }
        }
        self.next += 1;
        self.prepare();
    }

    /// The verdict on the lines fed so far.
    pub fn verdict(&self) -> Verdict {
        if let Some(e) = &self.error {
            Verdict::SpecError(e.clone())
        } else if let Some(line) = &self.forbidden {
            Verdict::Forbidden(line.clone())
        } else if let Some(pattern) = self.expect.get(self.next) {
            Verdict::Unmet(pattern.clone())
        } else if let Some((pattern, _, _)) = self.contains.iter().find(|c| !c.2) {
            Verdict::Unmet(pattern.clone())
        } else {
            Verdict::Ok
        }
    }
}

impl LineSink for Matcher {
    fn line(&mut self, line: &str) {
        self.feed(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn verdict(expect: &[&str], forbid: &[&str], lines: &[&str]) -> Verdict {
        let mut m = Matcher::new(&strings(expect), &strings(forbid)).unwrap();
        for line in lines {
            m.feed(line);
        }
        m.verdict()
    }

    #[test]
    fn expectations_match_in_order() {
        let lines = ["Stet 0.1.0", "a", "b"];
        assert_eq!(
            verdict(&[r"Stet \d+\.\d+\.\d+", "b"], &[], &lines),
            Verdict::Ok
        );
        assert_eq!(
            verdict(&["b", "a"], &[], &lines),
            Verdict::Unmet("a".into())
        );
        assert_eq!(verdict(&[], &[], &[]), Verdict::Ok);
        assert_eq!(verdict(&["x"], &[], &[]), Verdict::Unmet("x".into()));
    }

    #[test]
    fn one_line_meets_one_expectation() {
        assert_eq!(
            verdict(&["hello", "hello"], &[], &["hello"]),
            Verdict::Unmet("hello".into())
        );
        assert_eq!(
            verdict(&["hello", "hello"], &[], &["hello", "hello"]),
            Verdict::Ok
        );
        assert_eq!(verdict(&["a", "b"], &[], &["a b", "b"]), Verdict::Ok);
        assert_eq!(
            verdict(&["a", "b"], &[], &["a b"]),
            Verdict::Unmet("b".into())
        );
    }

    #[test]
    fn captures_are_substituted_escaped() {
        let expect = [
            r"expecting rip=(?P<rip>0x[0-9a-f]+)",
            r"fault .* rip=${rip}$",
        ];
        let ok = ["expecting rip=0x1234", "fault #PF rip=0x1234"];
        assert_eq!(verdict(&expect, &[], &ok), Verdict::Ok);
        let bad = ["expecting rip=0x1234", "fault #PF rip=0x12345"];
        assert_eq!(
            verdict(&expect, &[], &bad),
            Verdict::Unmet(expect[1].into())
        );
        // Regex metacharacters in the capture are taken literally.
        let expect = [r"name=(?P<n>\S+)", r"^got ${n}$"];
        assert_eq!(
            verdict(&expect, &[], &["name=a.b+", "got axb+", "got a.b+"]),
            Verdict::Ok
        );
        assert_eq!(
            verdict(&expect, &[], &["name=a.b+", "got axbb"]),
            Verdict::Unmet(expect[1].into())
        );
    }

    #[test]
    fn later_captures_replace_earlier_ones() {
        let expect = [r"v=(?P<v>\d+)", r"v=(?P<v>\d+)", r"^again ${v}$"];
        assert_eq!(
            verdict(&expect, &[], &["v=1", "v=2", "again 1", "again 2"]),
            Verdict::Ok
        );
    }

    #[test]
    fn contains_is_unordered() {
        let m = |lines: &[&str]| {
            let mut m = Matcher::new(&[], &[])
                .unwrap()
                .with_contains(&strings(&["b", "a"]))
                .unwrap();
            for l in lines {
                m.feed(l);
            }
            m.verdict()
        };
        assert_eq!(m(&["a", "b"]), Verdict::Ok);
        assert_eq!(m(&["b", "x", "a"]), Verdict::Ok);
        assert_eq!(m(&["a"]), Verdict::Unmet("b".into()));
    }

    #[test]
    fn forbid_matches_any_line() {
        let lines = ["ok", "PANIC: oh no", "ok"];
        assert_eq!(
            verdict(&["ok"], &["PANIC", "kernel fault"], &lines),
            Verdict::Forbidden("PANIC: oh no".into())
        );
        assert_eq!(verdict(&["ok"], &["kernel fault"], &lines), Verdict::Ok);
    }

    #[test]
    fn unknown_capture_is_a_spec_error() {
        let err = Matcher::new(&strings(&["a ${nope}"]), &[]).unwrap_err();
        assert!(err.contains("${nope}"), "{err}");
        // A name captured only by a later pattern is unknown too.
        let err = Matcher::new(&strings(&["${x}", "(?P<x>a)"]), &[]).unwrap_err();
        assert!(err.contains("${x}"), "{err}");
    }

    #[test]
    fn optional_group_not_captured_is_a_spec_error_at_run_time() {
        let mut m = Matcher::new(&strings(&["a(?P<x>b)?", "${x}"]), &[]).unwrap();
        m.feed("a");
        assert!(matches!(m.verdict(), Verdict::SpecError(e) if e.contains("${x}")));
    }

    #[test]
    fn bad_regexes_are_spec_errors() {
        assert!(Matcher::new(&strings(&["("]), &[]).is_err());
        assert!(Matcher::new(&[], &strings(&["["])).is_err());
    }
}
