//! The one place that builds a QEMU command line.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The QEMU binary.
pub const QEMU: &str = "qemu-system-x86_64";

/// QEMU arguments attaching `path` as the guest's virtio-blk disk (QEMU's
/// default `virtio-blk-pci`, raw format, the host page cache in front: a
/// killed QEMU loses nothing it already wrote, as with a power cut after the
/// drive's cache was flushed).
pub fn disk_args(path: &Path) -> Vec<String> {
    vec![
        "-drive".into(),
        format!(
            "file={},if=none,id=disk0,format=raw,cache=writeback",
            opt_path(path)
        ),
        "-device".into(),
        "virtio-blk-pci,drive=disk0".into(),
    ]
}

/// QEMU arguments attaching `base` as the guest's virtio-blk disk through
/// the `blklogwrites` driver, which records every write and flush in `log`
/// (dm-log-writes format, 512-byte log sectors, a new log: the file is
/// overwritten from the start). QEMU rewrites the log's superblock at every
/// flush, so the log is readable up to the last flush even after a kill.
pub fn logged_disk_args(base: &Path, log: &Path) -> Vec<String> {
    vec![
        "-blockdev".into(),
        format!("driver=file,node-name=stet-base,filename={}", opt_path(base)),
        "-blockdev".into(),
        format!("driver=file,node-name=stet-log,filename={}", opt_path(log)),
        "-blockdev".into(),
        "driver=blklogwrites,node-name=stet-logged,file=stet-base,log=stet-log,log-append=off,log-sector-size=512".into(),
        "-device".into(),
        "virtio-blk-pci,drive=stet-logged".into(),
    ]
}

/// A path as a QEMU option value (a comma is written twice).
fn opt_path(path: &Path) -> String {
    path.display().to_string().replace(',', ",,")
}

/// Bytes in a size such as `"64M"`, `"1G"`, `"4096"`.
pub fn parse_size(size: &str) -> anyhow::Result<u64> {
    let s = size.trim();
    let (num, mul) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&s[..s.len() - 1], 1 << 20),
        Some('G' | 'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| anyhow::anyhow!("bad size {size:?}"))?;
    n.checked_mul(mul)
        .ok_or_else(|| anyhow::anyhow!("size {size:?} too large"))
}

/// Creates (or truncates to zero) a sparse disk image of `size` at `path`.
pub fn fresh_disk(path: &Path, size: &str) -> anyhow::Result<()> {
    let bytes = parse_size(size)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let f = std::fs::File::create(path)?;
    f.set_len(bytes)?;
    Ok(())
}

/// The battery clock of every captured run: 2024-01-01, advancing with
/// the guest's own time.
pub const FIXED_RTC: &str = "base=2024-01-01T00:00:00,clock=vm";

/// Extra arguments that make guest RDTSC count retired instructions exactly.
pub const ICOUNT_ARGS: &[&str] = &[
    "-cpu",
    "max",
    "-icount",
    "shift=0,align=off,sleep=off",
    "-rtc",
    "base=2024-01-01T00:00:00,clock=vm",
];

/// How the console is wired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Console {
    /// Serial on stdio, no display, no monitor: the harness reads stdout.
    Captured,
    /// `-nographic`: serial and monitor multiplexed on the terminal.
    Interactive,
}

/// Everything that varies between QEMU runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// The kernel ELF (`-kernel`).
    pub kernel: PathBuf,
    /// The boot image (`-initrd`).
    pub image: PathBuf,
    /// The kernel command line (`-append`).
    pub cmdline: String,
    /// Guest memory (`-m`).
    pub mem: String,
    /// Appended after the fixed arguments.
    pub extra: Vec<String>,
    /// Console wiring.
    pub console: Console,
    /// Boot this CD image (GRUB) instead of `-kernel`/`-initrd`/`-append`.
    pub iso: Option<PathBuf>,
}

impl Config {
    /// The argument vector, without the program name.
    pub fn args(&self) -> Vec<String> {
        let mut args: Vec<String> = ["-accel", "tcg", "-m", &self.mem, "-smp", "1", "-no-reboot"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        match self.console {
            Console::Captured => args.extend(
                ["-display", "none", "-monitor", "none", "-serial", "stdio"].map(String::from),
            ),
            Console::Interactive => args.push("-nographic".into()),
        }
        // The battery clock: tests keep a fixed one (their outputs and file
        // times do not depend on the day); `make run` follows the host's
        // (QEMU's default).
        if self.console == Console::Captured && !self.extra.iter().any(|a| a == "-rtc") {
            args.extend(["-rtc".into(), FIXED_RTC.into()]);
        }
        args.extend([
            "-device".into(),
            "isa-debug-exit,iobase=0xf4,iosize=0x04".into(),
        ]);
        match &self.iso {
            Some(iso) => args.extend(["-cdrom".into(), iso.display().to_string()]),
            None => args.extend([
                "-kernel".into(),
                self.kernel.display().to_string(),
                "-initrd".into(),
                self.image.display().to_string(),
                "-append".into(),
                self.cmdline.clone(),
            ]),
        }
        args.extend(self.extra.iter().cloned());
        args
    }

    /// The command, with stdio left for the caller to set.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(QEMU);
        cmd.args(self.args());
        cmd
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn sizes() {
        assert_eq!(parse_size("64M").unwrap(), 64 << 20);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("x").is_err());
    }

    #[test]
    fn disk_arguments() {
        assert_eq!(
            disk_args(Path::new("/b/a,b.disk")),
            [
                "-drive",
                "file=/b/a,,b.disk,if=none,id=disk0,format=raw,cache=writeback",
                "-device",
                "virtio-blk-pci,drive=disk0"
            ]
        );
        let args = logged_disk_args(Path::new("/b/t.disk"), Path::new("/b/t.wlog"));
        assert_eq!(
            args[1],
            "driver=file,node-name=stet-base,filename=/b/t.disk"
        );
        assert_eq!(args[3], "driver=file,node-name=stet-log,filename=/b/t.wlog");
        assert!(args[5]
            .starts_with("driver=blklogwrites,node-name=stet-logged,file=stet-base,log=stet-log,"));
        assert_eq!(args[7], "virtio-blk-pci,drive=stet-logged");
    }

    /// QEMU itself accepts the logged disk (and the plain one): it starts
    /// paused with them and is killed after a moment.
    #[test]
    fn qemu_accepts_the_disk_arguments() {
        use crate::runner::{self, Exit, KillSwitch, LineSink, Options};
        use std::time::{Duration, Instant};
        struct Quiet;
        impl LineSink for Quiet {
            fn line(&mut self, _: &str) {}
        }
        let dir = crate::testutil::TempDir::new("qemu-disk");
        let (base, log) = (dir.path().join("b.disk"), dir.path().join("b.wlog"));
        fresh_disk(&base, "1M").unwrap();
        std::fs::write(&log, b"").unwrap();
        for disk in [logged_disk_args(&base, &log), disk_args(&base)] {
            let mut cmd = Command::new(QEMU);
            cmd.args([
                "-accel", "tcg", "-S", "-display", "none", "-monitor", "none", "-serial", "none",
            ]);
            cmd.args(&disk);
            let kill = KillSwitch::default();
            kill.arm(Instant::now() + Duration::from_millis(1500));
            let opts = Options {
                timeout: Duration::from_secs(20),
                log: None,
                kill: Some(kill),
                term_grace: None,
                keyboard: None,
            };
            let out = runner::run(cmd, &opts, Quiet).unwrap();
            assert_eq!(
                out.exit,
                Exit::Killed,
                "QEMU refused {disk:?}: {}",
                out.stderr
            );
            assert_eq!(out.stderr, "");
        }
    }

    #[test]
    fn fresh_disk_is_sparse_and_sized() {
        let dir = std::env::temp_dir().join(format!("stet-disk-{}", std::process::id()));
        let p = dir.join("t.disk");
        fresh_disk(&p, "1M").unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().len(), 1 << 20);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    use super::*;

    fn config(console: Console) -> Config {
        Config {
            kernel: "/r/build/stet-kernel".into(),
            image: "/r/build/images/t.img".into(),
            cmdline: "exit_on_idle".into(),
            mem: "256M".into(),
            extra: vec!["-cpu".into(), "max".into()],
            console,
            iso: None,
        }
    }

    fn pair(args: &[String], flag: &str) -> Option<String> {
        let i = args.iter().position(|a| a == flag)?;
        args.get(i + 1).cloned()
    }

    #[test]
    fn captured_command_is_tcg_and_headless() {
        let cmd = config(Console::Captured).command();
        assert_eq!(cmd.get_program(), QEMU);
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(pair(&args, "-accel").as_deref(), Some("tcg"));
        assert!(!args.iter().any(|a| a.contains("kvm")));
        assert_eq!(pair(&args, "-serial").as_deref(), Some("stdio"));
        assert_eq!(pair(&args, "-display").as_deref(), Some("none"));
        assert_eq!(pair(&args, "-monitor").as_deref(), Some("none"));
        assert_eq!(pair(&args, "-smp").as_deref(), Some("1"));
        assert_eq!(pair(&args, "-m").as_deref(), Some("256M"));
        assert!(args.contains(&"-no-reboot".to_string()));
        assert!(!args.contains(&"-nographic".to_string()));
        assert_eq!(
            pair(&args, "-device").as_deref(),
            Some("isa-debug-exit,iobase=0xf4,iosize=0x04")
        );
        assert_eq!(
            pair(&args, "-kernel").as_deref(),
            Some("/r/build/stet-kernel")
        );
        assert_eq!(
            pair(&args, "-initrd").as_deref(),
            Some("/r/build/images/t.img")
        );
        assert_eq!(pair(&args, "-append").as_deref(), Some("exit_on_idle"));
        assert_eq!(&args[args.len() - 2..], ["-cpu", "max"]);
    }

    #[test]
    fn interactive_command_uses_nographic() {
        let args = config(Console::Interactive).args();
        assert!(args.contains(&"-nographic".to_string()));
        assert!(!args
            .iter()
            .any(|a| a == "-serial" || a == "-display" || a == "-monitor"));
        assert_eq!(pair(&args, "-accel").as_deref(), Some("tcg"));
    }

    #[test]
    fn empty_append_is_still_passed() {
        let mut c = config(Console::Interactive);
        c.cmdline.clear();
        assert_eq!(pair(&c.args(), "-append").as_deref(), Some(""));
    }
}
