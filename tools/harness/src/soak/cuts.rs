//! Power cuts: the `[powercut]` specs (tests/system/store_powercut.toml,
//! services_powercut.toml, and tests/soak/busybox_powercut.toml) run by
//! the power-cut machinery (`powercut::run`) with a fresh seed and a
//! number of kills per unit; every restart must keep every promise made
//! durable before its kill.

use std::sync::Arc;
use std::time::Duration;

use super::{unit, Campaign, Ctx, Found, Outcome};
use crate::powercut::{self, Powercut};
use crate::runner::{self, Options};

/// The campaign.
pub struct PowerCuts;

/// A variant's spec and its kills per unit (about 20 s of QEMU each).
fn spec_of(variant: &str) -> (&'static str, u32) {
    match variant {
        "store" => ("tests/system/store_powercut.toml", 30),
        "services" => ("tests/system/services_powercut.toml", 30),
        _ => ("tests/soak/busybox_powercut.toml", 10),
    }
}

impl Campaign for PowerCuts {
    fn name(&self) -> &'static str {
        "cuts"
    }

    fn title(&self) -> &'static str {
        "power cuts"
    }

    fn counts(&self) -> &'static str {
        "cuts"
    }

    fn variant(&self, index: u64, _: &Ctx<'_>) -> &'static str {
        ["store", "services", "busybox"][(index % 3) as usize]
    }

    fn run(&self, ctx: &Ctx<'_>, variant: &str, seed: u64, _: Option<u64>) -> Outcome {
        let fail = |what: String| Outcome {
            failures: vec![Found {
                what,
                ..Found::default()
            }],
            ..Outcome::default()
        };
        let (path, kills) = spec_of(variant);
        let spec = match unit::load(ctx.layout, path) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        let Some(mut p) = spec.powercut.clone() else {
            return fail(format!("{path} has no [powercut] table"));
        };
        p.kills = kills;
        p.seed = seed;
        let pc = match Powercut::new(&p, &spec.forbid, seed) {
            Ok(pc) => Arc::new(pc),
            Err(e) => return fail(format!("spec error: {e}")),
        };
        let name = ctx.name(self.name());
        if let Err(e) = unit::prepare(ctx.layout, &name, &spec) {
            return fail(e);
        }
        let cfg = crate::system::config(ctx.layout, &name, &spec);
        let timeout =
            pc.boot_timeout * 2 + Duration::from_millis(pc.max_delay_ms) + Duration::from_secs(30);
        let result = powercut::run(&pc, |n, watch| {
            let opts = Options {
                timeout,
                log: Some(ctx.layout.boot_log(&name, &n.to_string())),
                kill: Some(watch.switch()),
                term_grace: None,
                keyboard: None,
            };
            runner::run(cfg.command(), &opts, watch)
        });
        match result {
            Ok(_) => Outcome {
                count: u64::from(kills),
                ..Outcome::default()
            },
            // Boot n is the restart after kill n: n kills were made.
            Err(f) => Outcome {
                count: u64::from(f.boot),
                extra: Vec::new(),
                failures: vec![Found {
                    what: format!(
                        "{variant}: {} (logs {name}.{}.log and the boot before)",
                        f.reason, f.boot
                    ),
                    ..Found::default()
                }],
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_has_a_powercut_spec() {
        let layout =
            crate::root::Layout::find(None, std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        for v in ["store", "services", "busybox"] {
            let (path, kills) = spec_of(v);
            let spec = unit::load(&layout, path).unwrap();
            let p = spec.powercut.unwrap();
            assert!(kills > 0);
            Powercut::new(&p, &spec.forbid, 1).unwrap();
        }
    }
}
