//! The kernel fuzzer over many seeds: tests/system/fuzz.toml and
//! fuzz_store.toml (the fuzz domain's `arg` is its 32-bit seed), each unit
//! 100,000 invocations. The invariant walker (`invariants` on the command
//! line: every kernel invariant checked before every return to user mode)
//! makes a unit about 25 times slower, so one unit in ten runs under it and
//! the others without; `store` units run with a checkpoint every 20 ms.

use regex::Regex;

use super::{unit, Campaign, Ctx, Found, Outcome};
use crate::matcher::Matcher;
use crate::spec::Spec;

/// The campaign.
pub struct KernelFuzz;

/// The spec file of a variant, and whether it keeps the walker.
fn spec_of(variant: &str) -> (&'static str, bool) {
    match variant {
        "plain" => ("tests/system/fuzz.toml", false),
        "store" => ("tests/system/fuzz_store.toml", false),
        "walker" => ("tests/system/fuzz.toml", true),
        _ => ("tests/system/fuzz_store.toml", true),
    }
}

/// `spec` with `seed` and, unless `walker`, without the invariant walker.
pub fn adapt(spec: &mut Spec, seed: u64, walker: bool) -> Result<(), String> {
    let d = spec
        .domain
        .iter_mut()
        .find(|d| d.name == "fuzz")
        .ok_or("the spec has no fuzz domain")?;
    d.arg = Some(seed);
    let seed_1 = Regex::new(r"seed 1\b").expect("a good regex");
    for e in &mut spec.expect {
        *e = seed_1.replace(e, format!("seed {seed}")).into_owned();
    }
    if !walker {
        spec.cmdline = spec
            .cmdline
            .split_whitespace()
            .filter(|w| *w != "invariants")
            .collect::<Vec<_>>()
            .join(" ");
        spec.expect.retain(|e| !e.contains("invariants held"));
    }
    Ok(())
}

impl Campaign for KernelFuzz {
    fn name(&self) -> &'static str {
        "kfuzz"
    }

    fn title(&self) -> &'static str {
        "kernel fuzzer"
    }

    fn counts(&self) -> &'static str {
        "invocations"
    }

    fn variant(&self, index: u64, _: &Ctx<'_>) -> &'static str {
        match (index % 10, index / 10 % 2) {
            (9, 0) => "walker",
            (9, _) => "walker-store",
            (i, _) if i % 2 == 0 => "plain",
            _ => "store",
        }
    }

    fn seed(&self, derived: u64) -> u64 {
        // 32 bits, never 0 (the fuzzer's xorshift would stay at 0).
        (derived & 0xffff_ffff).max(1)
    }

    fn run(&self, ctx: &Ctx<'_>, variant: &str, seed: u64, _: Option<u64>) -> Outcome {
        let fail = |what: String| Outcome {
            failures: vec![Found {
                what,
                ..Found::default()
            }],
            ..Outcome::default()
        };
        let (path, walker) = spec_of(variant);
        let mut spec = match unit::load(ctx.layout, path) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        if let Err(e) = adapt(&mut spec, seed, walker) {
            return fail(e);
        }
        let name = ctx.name(self.name());
        if let Err(e) = unit::prepare(ctx.layout, &name, &spec) {
            return fail(e);
        }
        let matcher = match Matcher::new(&spec.expect, &spec.forbid) {
            Ok(m) => m,
            Err(e) => return fail(format!("spec error: {e}")),
        };
        let keep = [
            r"^fuzz: \d+ invocations",
            r"^kernel: invariants held at",
            r"^fuzz: .*WRONG",
            r"ckpt: migrated",
        ];
        let sink = match unit::Collect::new(matcher, None, &keep) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        let cfg = crate::system::config(ctx.layout, &name, &spec);
        let timeout = std::time::Duration::from_secs(spec.timeout_secs);
        let out = match unit::boot(&cfg, &ctx.layout.log(&name), timeout, sink) {
            Ok(o) => o,
            Err(e) => return fail(e),
        };
        let invocations = Regex::new(r"^fuzz: (\d+) invocations").expect("a good regex");
        let checks = Regex::new(r"^kernel: invariants held at (\d+) checks").expect("a good regex");
        let count = unit::number(&out.sink, &invocations).unwrap_or(0);
        let mut extra = Vec::new();
        if walker {
            extra.push((
                "invariant checks".to_string(),
                unit::number(&out.sink, &checks).unwrap_or(0),
            ));
            extra.push(("invocations under the walker".to_string(), count));
        }
        let migrated = out
            .sink
            .kept
            .iter()
            .filter(|l| l.contains("ckpt: migrated"))
            .count() as u64;
        if migrated > 0 {
            extra.push(("checkpoints under the fuzzer".to_string(), migrated));
        }
        let failure = unit::verdict(&spec, &out).map(|why| {
            let wrong: Vec<&String> = out
                .sink
                .kept
                .iter()
                .filter(|l| l.contains("WRONG"))
                .take(3)
                .collect();
            let mut what = format!("{variant} seed {seed}: {why}");
            for w in wrong {
                what.push_str(&format!("; {w}"));
            }
            what.push_str(&format!(
                " (also: arg = {seed} in {path}{})",
                if walker { "" } else { " without `invariants`" }
            ));
            Found {
                what,
                ..Found::default()
            }
        });
        Outcome {
            count,
            extra,
            failures: failure.into_iter().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> (crate::root::Layout, bool) {
        (
            crate::root::Layout::find(None, std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
                .unwrap(),
            false,
        )
    }

    #[test]
    fn variants_rotate_with_a_walker_unit_in_ten() {
        let (layout, known) = ctx();
        let c = Ctx {
            layout: &layout,
            slot: 0,
            known,
        };
        let v: Vec<&str> = (0..20).map(|i| KernelFuzz.variant(i, &c)).collect();
        assert_eq!(&v[..4], ["plain", "store", "plain", "store"]);
        assert_eq!(v[9], "walker");
        assert_eq!(v[19], "walker-store");
        assert_eq!(v.iter().filter(|x| x.starts_with("walker")).count(), 2);
        assert_eq!(KernelFuzz.seed(0x1_0000_0000), 1);
        assert_eq!(KernelFuzz.seed(0xabcd_1234_5678), 0x1234_5678);
    }

    #[test]
    fn the_specs_take_the_seed_and_lose_the_walker() {
        let (layout, _) = ctx();
        for (variant, walker) in [("plain", false), ("walker-store", true)] {
            let (path, w) = spec_of(variant);
            assert_eq!(w, walker);
            let mut spec = unit::load(&layout, path).unwrap();
            adapt(&mut spec, 777, walker).unwrap();
            let fuzz = spec.domain.iter().find(|d| d.name == "fuzz").unwrap();
            assert_eq!(fuzz.arg, Some(777));
            assert!(spec.expect.iter().any(|e| e == "fuzz: seed 777;"));
            assert!(spec
                .expect
                .iter()
                .any(|e| e.starts_with("fuzz: 100000 invocations, seed 777,")));
            assert_eq!(spec.cmdline.contains("invariants"), walker);
            assert_eq!(
                spec.expect.iter().any(|e| e.contains("invariants held")),
                walker
            );
        }
    }
}
