//! The Linux side of `make bench`: Debian's stock kernel booted with a
//! static benchmark (`tools/linuxbench`: `build.sh` fetches and builds,
//! `run.sh` boots under the same `-icount` flags as Stet's benchmarks),
//! its `linux_*` rows, and which Stet row each one is the counterpart of.

use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::bench::BenchSink;
use crate::bench_json::BenchRow;
use crate::root::Layout;
use crate::runner::LineSink;

/// Every row the Linux benchmark prints.
pub const ROWS: [&str; 16] = [
    "linux_null_syscall",
    "linux_getpid",
    "linux_futex_rt",
    "linux_pipe_rt",
    "linux_minor_fault",
    "linux_fork_exit_wait",
    "linux_fork_exec_wait",
    "linux_sbrk_touch",
    "linux_open_close",
    "linux_pipe_1mb_echo",
    "linux_file_1mib_x10",
    "linux_exec_dynamic",
    "linux_python_startup",
    "linux_thread_create_join",
    "linux_mutex_pingpong_rt",
    "linux_futex_requeue",
];

/// Stet's operations and their closest Linux counterparts, in table order.
pub const PAIRS: [(&str, &str); 6] = [
    // The shortest trip into the kernel and back.
    ("null_invoke", "linux_null_syscall"),
    // A round trip between two address spaces, nothing carried.
    ("ipc_rt_empty", "linux_futex_rt"),
    // A round trip carrying data.
    ("ipc_rt_4kib_string", "linux_pipe_rt"),
    // First touch of a fresh heap page.
    ("segment_fault_rt", "linux_minor_fault"),
    // A page from the system's allocator, and back.
    ("bank_page_alloc_free", "linux_sbrk_touch"),
    // A new program running from its image, and gone again.
    ("factory_create_destroy", "linux_fork_exec_wait"),
];

/// Builds (cached under build/linux) and boots the Linux benchmark → its
/// rows, all sixteen.
pub fn run(layout: &Layout) -> Result<Vec<BenchRow>> {
    let dir = layout.root.join("tools/linuxbench");
    let status = Command::new("bash")
        .arg(dir.join("build.sh"))
        .status()
        .context("running tools/linuxbench/build.sh")?;
    if !status.success() {
        bail!("tools/linuxbench/build.sh failed ({status})");
    }
    let out = Command::new("bash")
        .arg(dir.join("run.sh"))
        .output()
        .context("running tools/linuxbench/run.sh")?;
    let console = String::from_utf8_lossy(&out.stdout);
    rows_of(&console).with_context(|| {
        let tail: Vec<&str> = console.lines().rev().take(10).collect();
        format!(
            "the Linux benchmark ({}); last lines: {:?}",
            out.status, tail
        )
    })
}

/// The rows of a Linux benchmark console: every row of [`ROWS`] once, and
/// the end line.
pub fn rows_of(console: &str) -> Result<Vec<BenchRow>> {
    let mut sink = BenchSink::default();
    for line in console.lines() {
        sink.line(line.trim_end_matches('\r'));
    }
    if !sink.malformed.is_empty() {
        bail!("malformed BENCH lines: {:?}", sink.malformed);
    }
    if !console.lines().any(|l| l.trim_end() == "linuxbench: done") {
        bail!("no 'linuxbench: done' line");
    }
    for name in ROWS {
        let n = sink.rows.iter().filter(|r| r.name == name).count();
        if n != 1 {
            bail!("row {name} printed {n} times");
        }
    }
    if let Some(r) = sink.rows.iter().find(|r| !ROWS.contains(&r.name.as_str())) {
        bail!("unknown row {}", r.name);
    }
    Ok(sink.rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn console(skip: Option<&str>) -> String {
        let mut s = String::from("Linux version 6.1\r\n");
        for (i, name) in ROWS.iter().enumerate() {
            if Some(*name) != skip {
                s += &format!(
                    "BENCH name={name} instructions={} iterations=20 overhead=4\r\n",
                    100 + i
                );
            }
        }
        s + "linuxbench: done\r\n"
    }

    #[test]
    fn all_sixteen_rows_and_the_end_line() {
        let rows = rows_of(&console(None)).unwrap();
        assert_eq!(rows.len(), 16);
        assert_eq!(rows[2].name, "linux_futex_rt");
        assert_eq!((rows[2].instructions, rows[2].rdtsc_overhead), (102, 4));
        let err = rows_of(&console(Some("linux_getpid"))).unwrap_err();
        assert_eq!(err.to_string(), "row linux_getpid printed 0 times");
        let cut = console(None).replace("linuxbench: done", "");
        assert!(rows_of(&cut).unwrap_err().to_string().contains("done"));
        let odd = console(None) + "BENCH name=linux_x instructions=1 iterations=1 overhead=4\n";
        assert_eq!(
            rows_of(&odd).unwrap_err().to_string(),
            "unknown row linux_x"
        );
    }

    #[test]
    fn every_pair_names_a_linux_row() {
        for (stet, linux) in PAIRS {
            assert!(ROWS.contains(&linux), "{stet} -> {linux}");
            assert!(!stet.starts_with("linux_"));
        }
    }
}
