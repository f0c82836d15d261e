//! `stet-harness run`: boots programs with QEMU on the terminal.

use std::process::Stdio;

use anyhow::{Context, Result};

use crate::image;
use crate::qemu::{self, Console};
use crate::root::Layout;
use crate::spec::{Spec, DEFAULT_MEM};

/// The image name.
const NAME: &str = "run";

/// The QEMU configuration for an interactive run.
pub fn config(layout: &Layout, append: &str) -> qemu::Config {
    qemu::Config {
        kernel: layout.kernel(),
        image: layout.image(NAME),
        cmdline: append.to_string(),
        mem: DEFAULT_MEM.into(),
        // The richest CPU QEMU's TCG offers, so the kernel shows SMEP, SMAP
        // and XSAVE in use.
        extra: vec!["-cpu".into(), "max".into()],
        console: Console::Interactive,
        iso: None,
    }
}

/// Builds the image of `programs` (or, if `None`, of `tests/run.toml`),
/// runs QEMU with inherited stdio and returns its exit status (128 + signal
/// if it was killed). The kernel command line is `append`, else the spec's
/// `cmdline`.
pub fn run(layout: &Layout, programs: Option<&[String]>, append: Option<&str>) -> Result<i32> {
    let (image, cmdline) = match programs {
        Some(programs) => (stet_mkimage::Spec::from_programs(programs), String::new()),
        None => {
            let spec = Spec::load(&layout.run_spec())?;
            (spec.image(), spec.cmdline)
        }
    };
    let summary = image::build(layout, &image, &layout.image(NAME))?;
    eprint!("{summary}");
    let status = config(layout, append.unwrap_or(&cmdline))
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
        let args = config(&layout, "").args();
        assert!(args.contains(&"-nographic".to_string()));
        assert!(args.windows(2).any(|w| w == ["-accel", "tcg"]));
        assert!(args.windows(2).any(|w| w == ["-append", ""]));
        assert!(args
            .windows(2)
            .any(|w| w == ["-initrd", "/r/build/images/run.img"]));
    }
}
