//! Totals from captured `cargo test` output (`--host-results`).

use std::fs;
use std::path::Path;
use std::sync::LazyLock;

use anyhow::{Context, Result};
use regex::Regex;

static RESULT_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed;")
        .expect("valid regex")
});

/// Passed and failed test counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Tests that passed.
    pub passed: u64,
    /// Tests that failed.
    pub failed: u64,
}

impl std::ops::AddAssign for Totals {
    fn add_assign(&mut self, other: Self) {
        self.passed += other.passed;
        self.failed += other.failed;
    }
}

static EXIT_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^host-tests-exit: (\d+)$").expect("valid regex"));

/// Sums every `test result:` line in `text`. A `host-tests-exit: N` line
/// (written by the Makefile after `cargo test`) with N != 0 and no failed
/// test counted means the tests did not even build: that counts as one
/// failure, so a compile error can never pass as "0 failed".
pub fn parse(text: &str) -> Totals {
    let mut totals = Totals::default();
    let mut exit_failed = false;
    for line in text.lines() {
        if let Some(caps) = EXIT_LINE.captures(line) {
            exit_failed = &caps[1] != "0";
        }
        if let Some(caps) = RESULT_LINE.captures(line) {
            // The pattern admits only digits; saturate on absurd lengths.
            totals += Totals {
                passed: caps[1].parse().unwrap_or(u64::MAX),
                failed: caps[2].parse().unwrap_or(u64::MAX),
            };
        }
    }
    if exit_failed && totals.failed == 0 {
        totals.failed = 1;
    }
    totals
}

/// Reads `path` and sums its `test result:` lines.
pub fn read(path: &Path) -> Result<Totals> {
    let bytes = fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    Ok(parse(&String::from_utf8_lossy(&bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_failure_counts_as_a_failure() {
        let t = parse("test result: ok. 3 passed; 0 failed; 0 ignored\nhost-tests-exit: 101\n");
        assert_eq!(
            t,
            Totals {
                passed: 3,
                failed: 1
            }
        );
        let t = parse("test result: ok. 3 passed; 0 failed; 0 ignored\nhost-tests-exit: 0\n");
        assert_eq!(
            t,
            Totals {
                passed: 3,
                failed: 0
            }
        );
        let t = parse("test result: FAILED. 3 passed; 2 failed; 0 ignored\nhost-tests-exit: 101\n");
        assert_eq!(
            t,
            Totals {
                passed: 3,
                failed: 2
            }
        );
    }

    const SAMPLE: &str = "\
   Compiling stet-bootimage v0.1.0 (/work/main/crates/bootimage)
    Finished `test` profile [optimized + debuginfo] target(s) in 3.10s
     Running unittests src/lib.rs (target/debug/deps/stet_bootimage-0123)

running 6 tests
test tests::round_trip ... ok
test result: ok. 6 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.52s

     Running unittests src/main.rs (target/debug/deps/stet_harness-4567)

running 30 tests
test runner::tests::x ... FAILED
test result: FAILED. 28 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out; finished in 2.01s

   Doc-tests stet_bootimage

running 0 tests
test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

";

    #[test]
    fn sums_ok_and_failed_lines() {
        assert_eq!(
            parse(SAMPLE),
            Totals {
                passed: 34,
                failed: 2
            }
        );
    }

    #[test]
    fn ignores_everything_else() {
        assert_eq!(parse(""), Totals::default());
        assert_eq!(
            parse("test foo ... ok\ntest result: maybe. 3 passed; 0 failed;"),
            Totals::default()
        );
        assert_eq!(
            parse("test result: ok. 1 passed; 0 failed; 0 ignored\r\n"),
            Totals {
                passed: 1,
                failed: 0
            }
        );
    }
}
