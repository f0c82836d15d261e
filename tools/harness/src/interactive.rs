//! `stet-harness run`: boots programs with QEMU on the terminal, on a disk
//! that persists between runs (`build/stet.disk`), so the system resumes
//! from its last checkpoint.

use std::path::Path;
use std::process::Stdio;

use anyhow::{Context, Result};

use crate::image;
use crate::qemu::{self, Console};
use crate::root::Layout;
use crate::spec::{Spec, DEFAULT_MEM};

/// The image name.
const NAME: &str = "run";

/// The size of the disk when `run` creates it (unless `tests/run.toml`
/// gives `disk`).
pub const DISK_SIZE: &str = "256M";

/// The QEMU configuration for an interactive run on `disk`: always the
/// kernel users boot (a test-only word in `append` is reported and ignored
/// by it).
pub fn config(layout: &Layout, append: &str, disk: &Path) -> qemu::Config {
    // The richest CPU QEMU's TCG offers, so the kernel shows SMEP, SMAP
    // and XSAVE in use.
    let mut extra = vec!["-cpu".to_string(), "max".to_string()];
    extra.extend(qemu::disk_args(disk));
    qemu::Config {
        kernel: layout.kernel(),
        image: layout.image(NAME),
        cmdline: append.to_string(),
        mem: DEFAULT_MEM.into(),
        extra,
        console: Console::Interactive,
        iso: None,
    }
}

/// Makes sure the persistent disk exists: deleted first if `fresh`,
/// created (sparse, `size`) if missing, else kept as it is. Returns whether
/// it was created.
pub fn prepare_disk(disk: &Path, size: &str, fresh: bool) -> Result<bool> {
    if fresh {
        match std::fs::remove_file(disk) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("deleting {}", disk.display())),
        }
    }
    if disk.exists() {
        return Ok(false);
    }
    qemu::fresh_disk(disk, size).with_context(|| format!("creating {}", disk.display()))?;
    Ok(true)
}

/// Builds the image of `programs` (or, if `None`, of `tests/run.toml`),
/// runs QEMU with inherited stdio on the persistent disk (recreated if
/// `fresh`) and returns its exit status (128 + signal if it was killed).
/// The kernel command line is `append`, else the spec's `cmdline`.
pub fn run(
    layout: &Layout,
    programs: Option<&[String]>,
    append: Option<&str>,
    fresh: bool,
) -> Result<i32> {
    let (image, cmdline, size) = match programs {
        Some(programs) => (
            stet_mkimage::Spec::from_programs(programs),
            String::new(),
            DISK_SIZE.to_string(),
        ),
        None => {
            let spec = Spec::load(&layout.run_spec())?;
            let size = spec.disk.clone().unwrap_or_else(|| DISK_SIZE.into());
            (spec.image(), spec.cmdline, size)
        }
    };
    let summary = image::build(layout, &image, &layout.image(NAME))?;
    eprint!("{summary}");
    let disk = layout.run_disk();
    if prepare_disk(&disk, &size, fresh)? {
        eprintln!("disk: {} (new, {size})", disk.display());
    } else {
        eprintln!(
            "disk: {} (kept: the system resumes from its last checkpoint; make run FRESH=1 starts over)",
            disk.display()
        );
    }
    let status = config(layout, append.unwrap_or(&cmdline), &disk)
        .command()
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .with_context(|| format!("cannot start {}", qemu::QEMU))?;
    use std::os::unix::process::ExitStatusExt;
    Ok(status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interactive_config_is_nographic_tcg() {
        let layout = Layout { root: "/r".into() };
        let args = config(&layout, "", &layout.run_disk()).args();
        assert!(args
            .windows(2)
            .any(|w| w[0] == "-drive" && w[1].starts_with("file=/r/build/stet.disk,")));
        assert!(args.contains(&"-nographic".to_string()));
        assert!(args.windows(2).any(|w| w == ["-accel", "tcg"]));
        assert!(args.windows(2).any(|w| w == ["-append", ""]));
        assert!(args
            .windows(2)
            .any(|w| w == ["-initrd", "/r/build/images/run.img"]));
    }

    #[test]
    fn the_disk_is_created_once_kept_and_recreated_when_fresh() {
        let dir = crate::testutil::TempDir::new("interactive");
        let disk = dir.path().join("build/stet.disk");
        assert!(prepare_disk(&disk, "1M", false).unwrap());
        assert_eq!(std::fs::metadata(&disk).unwrap().len(), 1 << 20);
        std::fs::write(&disk, b"state").unwrap();
        assert!(!prepare_disk(&disk, "1M", false).unwrap());
        assert_eq!(std::fs::read(&disk).unwrap(), b"state");
        assert!(prepare_disk(&disk, "2M", true).unwrap());
        let bytes = std::fs::read(&disk).unwrap();
        assert_eq!(bytes.len(), 2 << 20);
        assert!(bytes.iter().all(|&b| b == 0));
    }
}
