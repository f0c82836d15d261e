//! Formatting of the console tail shown for a failure.

use std::fmt::Write;

/// Stderr lines shown at most.
const STDERR_LINES: usize = 10;

/// The `last console lines:` block (and QEMU's stderr, if any), each line
/// indented by four spaces.
pub fn tail(lines: &[String], stderr: &str) -> String {
    let mut out = String::from("    last console lines:\n");
    if lines.is_empty() {
        out.push_str("    (none)\n");
    }
    for line in lines {
        let _ = writeln!(out, "    {line}");
    }
    let err: Vec<&str> = stderr.lines().collect();
    if !err.is_empty() {
        out.push_str("    qemu stderr:\n");
        for line in &err[err.len().saturating_sub(STDERR_LINES)..] {
            let _ = writeln!(out, "    {line}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_every_line() {
        let text = tail(&["a".into(), "b".into()], "oops\n");
        assert_eq!(
            text,
            "    last console lines:\n    a\n    b\n    qemu stderr:\n    oops\n"
        );
        assert_eq!(tail(&[], ""), "    last console lines:\n    (none)\n");
    }
}
