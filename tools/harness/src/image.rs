//! Building a test's big bang image (stet-mkimage) from its spec and the
//! program ELFs in `build/user/`.

use std::fs;
use std::path::Path;

use anyhow::{anyhow, Context, Result};

use crate::root::Layout;

/// Builds the big bang image of `spec`, reading programs from
/// `build/user/`, and writes it to `out` and its summary next to it (`.txt`).
/// Returns the summary.
pub fn build(layout: &Layout, spec: &stet_mkimage::Spec, out: &Path) -> Result<String> {
    let built = stet_mkimage::build(spec, |name: &str| {
        let path = layout.program(name);
        fs::read(&path).with_context(|| format!("missing program {} (run make?)", path.display()))
    })
    .with_context(|| format!("cannot build big bang image {}", out.display()))?;
    if let Some(dir) = out.parent() {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    fs::write(out, &built.image).with_context(|| format!("writing {}", out.display()))?;
    let summary = built.summary();
    let txt = out.with_extension("txt");
    fs::write(&txt, &summary).with_context(|| format!("writing {}", txt.display()))?;
    Ok(summary)
}

/// Builds `build/images/<name>.iso`: a GRUB CD that loads `kernel` through
/// Multiboot2 with the test's boot image as its module, as GRUB would on a
/// real machine.
pub fn grub_iso(layout: &Layout, name: &str, kernel: &Path, cmdline: &str) -> Result<()> {
    let dir = layout.root.join(format!("build/images/{name}.grub"));
    let boot = dir.join("boot");
    fs::create_dir_all(boot.join("grub")).with_context(|| format!("creating {}", dir.display()))?;
    fs::copy(kernel, boot.join("stet-kernel")).context("copying the kernel")?;
    fs::copy(layout.image(name), boot.join("programs.img")).context("copying the boot image")?;
    let cfg = format!(
        "set timeout=0\nset default=0\nmenuentry \"Stet\" {{\n  multiboot2 /boot/stet-kernel {cmdline}\n  module2 /boot/programs.img\n  boot\n}}\n"
    );
    fs::write(boot.join("grub/grub.cfg"), cfg).context("writing grub.cfg")?;
    let iso = layout.root.join(format!("build/images/{name}.iso"));
    let out = std::process::Command::new("grub-mkrescue")
        .arg("-o")
        .arg(&iso)
        .arg(&dir)
        .output()
        .context("running grub-mkrescue (apt-get install grub-pc-bin xorriso mtools)")?;
    if !out.status.success() {
        return Err(anyhow!(
            "grub-mkrescue failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;
    use stet_bigbang::Image;
    use stet_mkimage::fixture;

    #[test]
    fn builds_the_image_from_build_user() {
        let dir = TempDir::new("image");
        let layout = Layout {
            root: dir.path().to_path_buf(),
        };
        fs::create_dir_all(dir.path().join("build/user")).unwrap();
        for (name, byte) in [("b", 0xb), ("a", 0xa)] {
            fs::write(layout.program(name), fixture::program(&[byte], &[], 0)).unwrap();
        }
        let out = layout.image("t");
        let spec = stet_mkimage::Spec::from_programs(&["b".into(), "a".into()]);
        let summary = build(&layout, &spec, &out).unwrap();
        assert!(summary.contains("domain b (b)"), "{summary}");
        assert_eq!(
            fs::read_to_string(out.with_extension("txt")).unwrap(),
            summary
        );
        let bytes = fs::read(&out).unwrap();
        let image = Image::parse(&bytes).unwrap();
        let names: Vec<_> = image.names().map(|n| n.name).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(image.run().len(), 2);
        let spec = stet_mkimage::Spec::from_programs(&["missing".into()]);
        let err = build(&layout, &spec, &out).unwrap_err();
        assert!(format!("{err:#}").contains("missing program"), "{err:#}");
    }
}
