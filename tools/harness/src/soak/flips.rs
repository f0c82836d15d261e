//! Disk damage: a byte flipped in every area of a checkpointed disk, and a
//! restart of each damaged copy.
//!
//! A unit makes a base disk with the store tests' workload
//! (tests/soak/flips.toml: ckptload rewrites 1 MiB epoch after epoch,
//! journals a counter, asks for checkpoints; ckptcheck checks its memory's
//! exact invariant after a restart): `halted` stops the machine right
//! after a checkpoint's commit root is written (`ckpt_halt`: a committed
//! checkpoint in the log, not migrated, the older one at home), `settled`
//! lets the workload finish and checkpoints go on a while (the state at
//! home, read from there), `migrating` kills QEMU while a checkpoint goes
//! home (homes part old, part new). Two control restarts give the states a restart
//! may come back to: the undamaged disk's (the newest checkpoint) and that
//! of the disk with its newest root torn (the older one; a failure if
//! wrong, since that is a damaged root too). Then each flip: one byte of
//! one area ([`flips_areas`]) XORed, the copy restarted and classified
//! ([`flips_classify`]): exactly one of the two states, or a refusal that
//! says why; anything else fails.
//!
//! [`flips_areas`]: super::flips_areas
//! [`flips_classify`]: super::flips_classify

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use stet_storecheck::args::LoadArgs;

use super::flips_areas::{self, Area, AREAS};
use super::flips_classify::{self, Class, Restart, State};
use super::{unit, Campaign, Ctx, Found, Outcome};
use crate::corrupt::{self, Corruption, Target};
use crate::matcher::Matcher;
use crate::prng::Rng;
use crate::qemu;
use crate::spec::Spec;

/// The campaign.
pub struct DiskFlips;

/// Flips per unit (each area twice).
const FLIPS: u64 = 12;
const SPEC: &str = "tests/soak/flips.toml";
/// A restart of a damaged copy reaches its check (or refusal) within this.
const BOOT: Duration = Duration::from_secs(40);

/// Lines a restart is classified by.
const KEEP: &[&str] = &[r"^(check|load|store):", r"KERNEL|^fault:|panicked at"];

struct Unit<'a> {
    ctx: &'a Ctx<'a>,
    spec: Spec,
    name: String,
    /// The damaged copy each restart boots.
    copy: PathBuf,
}

impl Unit<'_> {
    /// Restarts `bytes` (written to the copy); what the console said.
    fn restart(&self, bytes: &[u8], tag: &str) -> Result<Restart, String> {
        unit::write_sparse(bytes, &self.copy).map_err(|e| format!("writing the copy: {e}"))?;
        let m = Matcher::new(&[], &[])?;
        let kill_on = r"^check: (ok|FAILED)|^load: FAILED|KERNEL PANIC|KERNEL FAULT|^fault:|panicked at|store: domain 'ckptcheck' cannot be prepared";
        let sink = unit::Collect::new(m, Some(kill_on), KEEP)?.lenient();
        let cfg = crate::system::config_with_disk(
            self.ctx.layout,
            &self.name,
            &self.spec,
            qemu::disk_args(&self.copy),
        );
        let log = self.ctx.layout.boot_log(&self.name, tag);
        let out = unit::boot(&cfg, &log, BOOT, sink)?;
        let mut r = Restart::default();
        for l in &out.sink.kept {
            flips_classify::feed(&mut r, l);
        }
        Ok(r)
    }
}

/// Makes the base disk at `disk`; returns its bytes.
fn make_base(
    ctx: &Ctx<'_>,
    spec: &Spec,
    name: &str,
    variant: &str,
    rng: &mut Rng,
) -> Result<Vec<u8>, String> {
    unit::prepare(ctx.layout, name, spec)?;
    let mut cfg = crate::system::config(ctx.layout, name, spec);
    let (kill_on, nth, delay) = match variant {
        "halted" => {
            cfg.cmdline = format!("{} ckpt_halt={}", cfg.cmdline, 2 + rng.below(8));
            (
                "ckpt: halted after writing the commit root",
                1,
                Duration::ZERO,
            )
        }
        // A power cut while a checkpoint goes home: QEMU killed 0-40 ms
        // after its 3rd to 10th checkpoint started migrating.
        "migrating" => (
            "^ckpt: migrating",
            3 + rng.below(8) as usize,
            Duration::from_millis(rng.below(41)),
        ),
        // Checkpoints every 200 ms go on after the workload is done.
        _ => (
            "^load: done",
            1,
            Duration::from_millis(1200 + rng.below(800)),
        ),
    };
    let m = Matcher::new(&[], &spec.forbid)?;
    let sink = unit::Collect::new(m, Some(kill_on), &[r"^(check|load):"])?
        .with_kill_delay(delay)
        .with_kill_at(nth);
    let out = unit::boot(
        &cfg,
        &ctx.layout.boot_log(name, "base"),
        Duration::from_secs(90),
        sink,
    )?;
    match (&out.sink.killed_on, out.sink.matcher.verdict()) {
        (Some(l), crate::matcher::Verdict::Ok | crate::matcher::Verdict::Unmet(_))
            if !l.contains("FAILED") => {}
        (Some(l), _) => return Err(format!("the base run: {l}")),
        (None, _) => {
            return Err(format!(
                "the base run never reached '{kill_on}' (QEMU: {})",
                out.exit
            ))
        }
    }
    fs::read(ctx.layout.disk(name)).map_err(|e| format!("reading the base disk: {e}"))
}

/// The workload's argument: a few to a few dozen epochs, a checkpoint
/// every 1 to 4.
fn load_arg(rng: &mut Rng) -> u64 {
    LoadArgs {
        epochs: 6 + rng.below(30),
        take_every: 1 + rng.below(4),
    }
    .encode()
}

impl Campaign for DiskFlips {
    fn name(&self) -> &'static str {
        "flips"
    }

    fn title(&self) -> &'static str {
        "disk damage"
    }

    fn counts(&self) -> &'static str {
        "flips"
    }

    fn variant(&self, index: u64, _: &Ctx<'_>) -> &'static str {
        ["halted", "settled", "migrating"][(index % 3) as usize]
    }

    fn run(&self, ctx: &Ctx<'_>, variant: &str, seed: u64, detail: Option<u64>) -> Outcome {
        let mut out = Outcome::default();
        let fail = |what: String| Outcome {
            failures: vec![Found {
                what,
                ..Found::default()
            }],
            ..Outcome::default()
        };
        let mut rng = Rng::new(seed);
        let mut spec = match unit::load(ctx.layout, SPEC) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        let arg = load_arg(&mut rng);
        match spec.domain.iter_mut().find(|d| d.name == "ckptload") {
            Some(d) => d.arg = Some(arg),
            None => return fail(format!("{SPEC} has no ckptload domain")),
        }
        let name = ctx.name(self.name());
        let base = match make_base(ctx, &spec, &name, variant, &mut rng) {
            Ok(b) => b,
            Err(e) => return fail(format!("{variant} base (load arg {arg:#x}): {e}")),
        };
        let disks = ctx.layout.root.join("build/disks");
        let u = Unit {
            ctx,
            spec,
            name: name.clone(),
            copy: disks.join(format!("{name}-copy.disk")),
        };
        let base_file = disks.join(format!("{name}-base.disk"));
        let keep = |damaged: &[u8]| -> Vec<PathBuf> {
            let failed = disks.join(format!("{name}-damaged.disk"));
            let _ = unit::write_sparse(&base, &base_file);
            let _ = unit::write_sparse(damaged, &failed);
            vec![base_file.clone(), failed]
        };

        // The controls: the undamaged disk, and the disk with its newest
        // root torn (its older checkpoint).
        let newest = match u.restart(&base, "control") {
            Ok(Restart { ok: Some(s), .. }) => s,
            Ok(r) => {
                let why = flips_classify::classify(
                    &r,
                    &State {
                        epoch: 0,
                        journal: 0,
                        gen: u64::MAX,
                    },
                    None,
                );
                return Outcome {
                    failures: vec![Found {
                        what: format!(
                            "{variant}: the undamaged disk does not restart consistently: {}",
                            why.describe()
                        ),
                        detail: Some(0),
                        keep: keep(&base),
                    }],
                    ..Outcome::default()
                };
            }
            Err(e) => return fail(e),
        };
        let mut torn = base.clone();
        let older = match tear_newest_root(&mut torn, &disks.join(format!("{name}-torn.disk"))) {
            Err(e) => return fail(e),
            Ok(what) => match u.restart(&torn, "flip0") {
                Err(e) => return fail(e),
                Ok(r) => {
                    let older = r.ok.filter(|s| s.gen != newest.gen);
                    let class = flips_classify::classify(&r, &newest, older.as_ref());
                    self.tally(&mut out, Area::Root, &class, &r, true);
                    if class.failed() {
                        out.failures.push(Found {
                            what: format!("{variant} flip 0, {what}: {}", class.describe()),
                            detail: Some(0),
                            keep: keep(&torn),
                        });
                    }
                    older
                }
            },
        };

        let first_area = rng.below(AREAS.len() as u64);
        for k in 1..=FLIPS {
            let area = AREAS[((first_area + k) % AREAS.len() as u64) as usize];
            let flip = match flips_areas::locate(&base, area, &mut rng) {
                Ok(f) => f,
                Err(e) => return fail(format!("choosing flip {k}: {e}")),
            };
            if detail.is_some_and(|d| d != k) {
                continue;
            }
            let mut bytes = base.clone();
            flip.apply(&mut bytes);
            let r = match u.restart(&bytes, &format!("flip{k}")) {
                Ok(r) => r,
                Err(e) => return fail(e),
            };
            let class = flips_classify::classify(&r, &newest, older.as_ref());
            self.tally(&mut out, area, &class, &r, false);
            if class.failed() {
                out.failures.push(Found {
                    what: format!(
                        "{variant} flip {k}, {}: byte {} ^= {:#04x}: {}{}",
                        flip.what,
                        flip.offset,
                        flip.xor,
                        class.describe(),
                        r.reported
                            .as_deref()
                            .map_or(" (the store said nothing)".to_string(), |l| format!(
                                " (the store said: {l})"
                            ))
                    ),
                    detail: Some(k),
                    keep: keep(&bytes),
                });
            }
        }
        let _ = fs::remove_file(&u.copy);
        out
    }
}

impl DiskFlips {
    /// Counts a flip: by area and class, and whether the store said so.
    fn tally(&self, out: &mut Outcome, area: Area, class: &Class, r: &Restart, torn: bool) {
        out.count += 1;
        let a = if torn { "root (torn)" } else { area.name() };
        out.extra.push((format!("{a}: {}", class.name()), 1));
        if r.reported.is_some() {
            out.extra.push((format!("{a}: the store reported it"), 1));
        }
    }
}

/// Tears the newest root of `bytes` (as `corrupt`'s `root-newest` does:
/// its second half zeroed), through a file at `scratch`.
fn tear_newest_root(bytes: &mut Vec<u8>, scratch: &std::path::Path) -> Result<String, String> {
    unit::write_sparse(bytes, scratch)
        .map_err(|e| format!("writing {}: {e}", scratch.display()))?;
    let c = Corruption::Object {
        target: Target::RootNewest { flip: false },
        offset: 0,
        len: None,
        xor: 0xff,
    };
    let what =
        corrupt::apply(scratch, &c).map_err(|e| format!("tearing the newest root: {e:#}"))?;
    *bytes = fs::read(scratch).map_err(|e| format!("reading {}: {e}", scratch.display()))?;
    let _ = fs::remove_file(scratch);
    Ok(what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_and_arguments() {
        let layout =
            crate::root::Layout::find(None, std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        let spec = unit::load(&layout, SPEC).unwrap();
        assert!(spec.domain.iter().any(|d| d.name == "ckptload"));
        assert!(spec.disk.is_some());
        let mut rng = Rng::new(5);
        for _ in 0..100 {
            let a = LoadArgs::decode(load_arg(&mut rng));
            assert!((6..36).contains(&a.epochs) && (1..5).contains(&a.take_every));
        }
    }
}
