//! Locating the repository root and the build paths under it.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// The file that marks the repository root.
const MARKER: &str = "rust-toolchain.toml";

/// Paths of the inputs and outputs of the harness, all under one root.
#[derive(Clone, Debug)]
pub struct Layout {
    /// The repository root.
    pub root: PathBuf,
}

impl Layout {
    /// Uses `root` if given, else the nearest ancestor of `cwd` holding
    /// `rust-toolchain.toml`.
    pub fn find(root: Option<PathBuf>, cwd: &Path) -> Result<Self> {
        if let Some(root) = root {
            return Ok(Layout { root });
        }
        match cwd.ancestors().find(|dir| dir.join(MARKER).is_file()) {
            Some(dir) => Ok(Layout {
                root: dir.to_path_buf(),
            }),
            None => bail!(
                "no {MARKER} in {} or any parent; pass --root",
                cwd.display()
            ),
        }
    }

    /// The kernel ELF users boot (`make run`).
    pub fn kernel(&self) -> PathBuf {
        self.root.join("build/stet-kernel")
    }

    /// The kernel ELF of `kind`: the user kernel, or the test kernel (the
    /// `testing` feature, for self-tests and benchmark measurements).
    pub fn kernel_of(&self, kind: crate::spec::KernelKind) -> PathBuf {
        match kind {
            crate::spec::KernelKind::User => self.kernel(),
            crate::spec::KernelKind::Testing => self.root.join("build/stet-kernel-test"),
        }
    }

    /// The ELF of user program `name`.
    pub fn program(&self, name: &str) -> PathBuf {
        self.root.join("build/user").join(name)
    }

    /// Where the boot image called `name` is written.
    pub fn image(&self, name: &str) -> PathBuf {
        self.root.join("build/images").join(format!("{name}.img"))
    }

    /// The disk image of test `name` (when its spec asks for one).
    pub fn disk(&self, name: &str) -> PathBuf {
        self.root.join("build/disks").join(format!("{name}.disk"))
    }

    /// Where the console log of run `name` is written.
    pub fn log(&self, name: &str) -> PathBuf {
        self.root.join("build/logs").join(format!("{name}.log"))
    }

    /// The console log of one of several boots of test `name` (`tag`: the
    /// boot's number, `run`, `flush<k>`).
    pub fn boot_log(&self, name: &str, tag: &str) -> PathBuf {
        self.root
            .join("build/logs")
            .join(format!("{name}.{tag}.log"))
    }

    /// The write log (dm-log-writes) of test `name`'s logged run.
    pub fn write_log(&self, name: &str) -> PathBuf {
        self.root.join("build/disks").join(format!("{name}.wlog"))
    }

    /// Where test `name`'s replayed disk images are written.
    pub fn replay_dir(&self, name: &str) -> PathBuf {
        self.root.join("build/disks").join(format!("{name}.replay"))
    }

    /// The disk `make run` keeps between runs.
    pub fn run_disk(&self) -> PathBuf {
        self.root.join("build/stet.disk")
    }

    /// The directory of system test specs.
    pub fn specs(&self) -> PathBuf {
        self.root.join("tests/system")
    }

    /// The spec `stet-harness run` boots when no programs are given.
    pub fn run_spec(&self) -> PathBuf {
        self.root.join("tests/run.toml")
    }

    /// The system test `stet-harness bench` boots first (IPC and faults).
    pub fn bench_spec(&self) -> PathBuf {
        self.specs().join("bench_rows.toml")
    }

    /// The directory of the benchmarks that are not system tests (the
    /// store's).
    pub fn bench_dir(&self) -> PathBuf {
        self.root.join("tests/bench")
    }

    /// Every benchmark `stet-harness bench` runs, in order: `bench_rows`,
    /// then `tests/bench/*.toml` by name.
    pub fn bench_specs(&self) -> anyhow::Result<Vec<crate::spec::TestFile>> {
        let mut v = vec![crate::spec::TestFile {
            name: "bench_rows".into(),
            path: self.bench_spec(),
        }];
        v.extend(crate::spec::discover(&self.bench_dir())?);
        Ok(v)
    }

    /// The default benchmark output file.
    pub fn bench_json(&self) -> PathBuf {
        self.root.join("build/bench.json")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_nearest_marked_ancestor() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let layout = Layout::find(None, &here.join("src")).unwrap();
        assert!(layout.root.join(MARKER).is_file());
        assert!(here.starts_with(&layout.root));
        assert!(layout.image("x").ends_with("build/images/x.img"));
        assert!(layout.bench_spec().is_file());
        assert!(layout.bench_dir().is_dir());
        assert!(layout.run_spec().is_file());
    }

    #[test]
    fn explicit_root_wins() {
        let layout = Layout::find(Some("/r".into()), Path::new("/")).unwrap();
        assert_eq!(layout.kernel(), Path::new("/r/build/stet-kernel"));
        assert_eq!(
            layout.kernel_of(crate::spec::KernelKind::User),
            Path::new("/r/build/stet-kernel")
        );
        assert_eq!(
            layout.kernel_of(crate::spec::KernelKind::Testing),
            Path::new("/r/build/stet-kernel-test")
        );
        assert_eq!(
            layout.boot_log("t", "3"),
            Path::new("/r/build/logs/t.3.log")
        );
        assert_eq!(layout.write_log("t"), Path::new("/r/build/disks/t.wlog"));
        assert_eq!(layout.replay_dir("t"), Path::new("/r/build/disks/t.replay"));
        assert_eq!(layout.run_disk(), Path::new("/r/build/stet.disk"));
    }
}
