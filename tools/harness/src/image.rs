//! Packing user program ELFs into a boot image file.

use std::fs;
use std::path::Path;

use anyhow::{anyhow, Context, Result};
use stet_bootimage::Kind;

use crate::root::Layout;

/// Packs `programs` (started at boot) then `dormant` (packed only), in
/// order, from `build/user/`, and writes the image to `out`.
pub fn pack(layout: &Layout, programs: &[String], dormant: &[String], out: &Path) -> Result<()> {
    let mut loaded = Vec::new();
    let tagged = programs
        .iter()
        .map(|p| (p, Kind::Program))
        .chain(dormant.iter().map(|p| (p, Kind::Dormant)));
    for (name, kind) in tagged {
        let path = layout.program(name);
        let bytes = fs::read(&path)
            .with_context(|| format!("missing program {} (run make?)", path.display()))?;
        loaded.push((name.as_str(), kind, bytes));
    }
    let entries: Vec<(&str, Kind, &[u8])> = loaded
        .iter()
        .map(|(n, k, b)| (*n, *k, b.as_slice()))
        .collect();
    let image = stet_bootimage::build(&entries)
        .map_err(|e| anyhow!("cannot pack boot image {}: {e:?}", out.display()))?;
    if let Some(dir) = out.parent() {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    fs::write(out, image).with_context(|| format!("writing {}", out.display()))
}

/// Builds `build/images/<name>.iso`: a GRUB CD that loads the kernel through
/// Multiboot2 with the test's boot image as its module, as GRUB would on a
/// real machine.
pub fn grub_iso(layout: &Layout, name: &str, cmdline: &str) -> Result<()> {
    let dir = layout.root.join(format!("build/images/{name}.grub"));
    let boot = dir.join("boot");
    fs::create_dir_all(boot.join("grub")).with_context(|| format!("creating {}", dir.display()))?;
    fs::copy(layout.kernel(), boot.join("stet-kernel")).context("copying the kernel")?;
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
    use stet_bootimage::Image;

    #[test]
    fn packs_programs_then_dormant_in_order() {
        let dir = TempDir::new("image");
        let layout = Layout {
            root: dir.path().to_path_buf(),
        };
        fs::create_dir_all(dir.path().join("build/user")).unwrap();
        for name in ["b", "a", "z"] {
            fs::write(layout.program(name), name.as_bytes()).unwrap();
        }
        let out = layout.image("t");
        pack(&layout, &["b".into(), "a".into()], &["z".into()], &out).unwrap();
        let bytes = fs::read(&out).unwrap();
        let image = Image::parse(&bytes).unwrap();
        let got: Vec<_> = image.entries().map(|e| (e.name, e.kind, e.data)).collect();
        assert_eq!(
            got,
            [
                ("b", Kind::Program, &b"b"[..]),
                ("a", Kind::Program, &b"a"[..]),
                ("z", Kind::Dormant, &b"z"[..]),
            ]
        );
        let err = pack(&layout, &["missing".into()], &[], &out).unwrap_err();
        assert!(format!("{err:#}").contains("missing program"));
    }
}
