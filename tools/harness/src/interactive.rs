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

/// What `prepare_disk` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Prepared {
    /// A new, empty disk.
    Created,
    /// The disk as it was: the system resumes from it.
    Kept,
    /// The disk held a store of another format, which this kernel refuses
    /// (docs/STORE.md, "Format changes"): moved to `kept_as`, and a new
    /// disk created.
    Replaced {
        /// The format it held.
        format: u32,
        /// Where it is now.
        kept_as: std::path::PathBuf,
    },
}

/// The format of the store on the disk image at `disk` when it is not this
/// kernel's: a root block with the root magic and another format number,
/// and no root of this format.
fn other_format(disk: &Path) -> Option<u32> {
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(disk).ok()?;
    let mut formats = Vec::new();
    for b in 0..2u64 {
        let mut block = vec![0u8; stet_store::BLOCK];
        f.read_exact_at(&mut block, b * stet_store::BLOCK as u64)
            .ok()?;
        formats.extend(stet_store::root::format_of(&block));
    }
    if formats.contains(&stet_store::FORMAT) {
        return None;
    }
    formats.first().copied()
}

/// Makes sure the persistent disk exists: deleted first if `fresh`,
/// created (sparse, `size`) if missing, moved aside and created anew if it
/// holds a store of another format, else kept as it is.
pub fn prepare_disk(disk: &Path, size: &str, fresh: bool) -> Result<Prepared> {
    if fresh {
        match std::fs::remove_file(disk) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("deleting {}", disk.display())),
        }
    }
    let mut done = Prepared::Created;
    if disk.exists() {
        let Some(format) = other_format(disk) else {
            return Ok(Prepared::Kept);
        };
        let kept_as = disk.with_extension(format!("disk.format{format}"));
        std::fs::rename(disk, &kept_as)
            .with_context(|| format!("moving {} aside", disk.display()))?;
        done = Prepared::Replaced { format, kept_as };
    }
    qemu::fresh_disk(disk, size).with_context(|| format!("creating {}", disk.display()))?;
    Ok(done)
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
    match prepare_disk(&disk, &size, fresh)? {
        Prepared::Created => eprintln!("disk: {} (new, {size})", disk.display()),
        Prepared::Kept => eprintln!(
            "disk: {} (kept: the system resumes from its last checkpoint; make run FRESH=1 starts over)",
            disk.display()
        ),
        Prepared::Replaced { format, kept_as } => eprintln!(
            "disk: {} held a store of format {format}, which this kernel (format {}) does not read: moved to {}; a new store starts on a new disk ({size})",
            disk.display(),
            stet_store::FORMAT,
            kept_as.display()
        ),
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
        assert_eq!(prepare_disk(&disk, "1M", false).unwrap(), Prepared::Created);
        assert_eq!(std::fs::metadata(&disk).unwrap().len(), 1 << 20);
        std::fs::write(&disk, b"state").unwrap();
        assert_eq!(prepare_disk(&disk, "1M", false).unwrap(), Prepared::Kept);
        assert_eq!(std::fs::read(&disk).unwrap(), b"state");
        assert_eq!(prepare_disk(&disk, "2M", true).unwrap(), Prepared::Created);
        let bytes = std::fs::read(&disk).unwrap();
        assert_eq!(bytes.len(), 2 << 20);
        assert!(bytes.iter().all(|&b| b == 0));
    }

    #[test]
    fn a_disk_of_another_format_is_moved_aside_and_replaced() {
        use std::os::unix::fs::FileExt;
        let dir = crate::testutil::TempDir::new("interactive");
        let disk = dir.path().join("stet.disk");
        assert_eq!(prepare_disk(&disk, "1M", false).unwrap(), Prepared::Created);
        // A root of this format: kept.
        let g = stet_store::geometry::Geometry::for_disk(256).unwrap();
        let mut root = stet_store::root::Root::fresh(g).encode();
        let f = std::fs::OpenOptions::new().write(true).open(&disk).unwrap();
        f.write_all_at(&root, 0).unwrap();
        assert_eq!(prepare_disk(&disk, "1M", false).unwrap(), Prepared::Kept);
        // Format 2 (an older kernel's): moved aside, a new disk made.
        root[8] = 2;
        f.write_all_at(&root, 0).unwrap();
        let old = std::fs::read(&disk).unwrap();
        let kept_as = dir.path().join("stet.disk.format2");
        assert_eq!(
            prepare_disk(&disk, "1M", false).unwrap(),
            Prepared::Replaced {
                format: 2,
                kept_as: kept_as.clone()
            }
        );
        assert_eq!(std::fs::read(&kept_as).unwrap(), old);
        assert!(std::fs::read(&disk).unwrap().iter().all(|&b| b == 0));
    }
}
