//! Benchmark rows and the `bench.json` file they are written to.
//!
//! Kept apart from the QEMU driver so rows from other sources (e.g. Linux)
//! can be added to the same file.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// One measured operation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BenchRow {
    /// The operation's id.
    pub name: String,
    /// Median instructions per operation, overhead subtracted.
    pub instructions: u64,
    /// How many times the operation ran.
    pub iterations: u64,
    /// The cost of reading the counter, already subtracted.
    pub rdtsc_overhead: u64,
    /// For a row that is a percentage rather than an instruction count
    /// (`instructions` is then 0): the percentage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<u64>,
}

/// The file's text: a pretty-printed JSON array, newline-terminated.
pub fn to_json(rows: &[BenchRow]) -> String {
    let mut text = serde_json::to_string_pretty(rows).expect("rows always serialize");
    text.push('\n');
    text
}

/// Writes `rows` to `path`, creating its directory.
pub fn write(path: &Path, rows: &[BenchRow]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    fs::write(path, to_json(rows)).with_context(|| format!("writing {}", path.display()))
}

/// Reads the rows in `path`.
#[cfg_attr(
    not(test),
    expect(dead_code, reason = "for adding rows from other sources to the file")
)]
pub fn read(path: &Path) -> Result<Vec<BenchRow>> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    fn row(name: &str, instructions: u64) -> BenchRow {
        BenchRow {
            name: name.into(),
            instructions,
            iterations: 1000,
            rdtsc_overhead: 30,
            percent: None,
        }
    }

    #[test]
    fn json_is_a_stable_pretty_array() {
        let text = to_json(&[row("null_syscall", 120)]);
        assert_eq!(
            text,
            "[\n  {\n    \"name\": \"null_syscall\",\n    \"instructions\": 120,\n    \
             \"iterations\": 1000,\n    \"rdtsc_overhead\": 30\n  }\n]\n"
        );
        assert_eq!(to_json(&[]), "[]\n");
    }

    #[test]
    fn a_percentage_row_says_so() {
        let mut r = row("pct", 0);
        r.percent = Some(91);
        assert_eq!(
            to_json(&[r]),
            "[\n  {\n    \"name\": \"pct\",\n    \"instructions\": 0,\n    \
             \"iterations\": 1000,\n    \"rdtsc_overhead\": 30,\n    \"percent\": 91\n  }\n]\n"
        );
    }

    #[test]
    fn write_then_read_round_trips_in_order() {
        let dir = TempDir::new("bench");
        let path = dir.path().join("sub/bench.json");
        let mut pct = row("c", 0);
        pct.percent = Some(50);
        let rows = vec![row("b", 2), row("a", 1), pct];
        write(&path, &rows).unwrap();
        assert_eq!(read(&path).unwrap(), rows);
    }
}
