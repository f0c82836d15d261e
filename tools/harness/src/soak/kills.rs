//! Driver kills: the demo block service crashed by the reincarnation
//! service every 2 ms while a client streams 10 MiB through it and checks
//! every byte (tests/system/rs_supervise.toml), and the console driver
//! killed between requests every few ms while a writer sends numbered
//! lines through it (tests/soak/console_kills.toml, user/tests conkill):
//! every line must come out once, whole and in order.

use std::time::Duration;

use regex::Regex;

use super::{unit, Campaign, Ctx, Found, Outcome};
use crate::matcher::Matcher;
use crate::spec::Spec;

/// The campaign.
pub struct DriverKills;

/// Lines the console writer sends per unit.
const LINES: u64 = 12_000;

/// Line `n`'s payload, as the writer makes it (user/tests conkill's
/// `payload`): 8 to 107 letters from the SplitMix64 finalizer.
pub fn payload(n: u64) -> String {
    let len = 8 + (stet_prng::mix(n) % 100) as usize;
    (0..len)
        .map(|i| char::from(b'a' + (stet_prng::mix(n << 16 | i as u64) % 26) as u8))
        .collect()
}

/// Checks the writer's lines among `kept` (in order): `cw: 1 …` to
/// `cw: <lines> …`, each once and whole, then `cw: done`. Returns how
/// many times the driver started again (its `COM1 ready` lines but the
/// first).
pub fn check_stream(kept: &[String], lines: u64) -> Result<u64, String> {
    let mut next = 1u64;
    let mut done = false;
    let mut ready = 0u64;
    for l in kept {
        if l.starts_with("consoled: COM1 ready") {
            ready += 1;
            continue;
        }
        let Some(rest) = l.strip_prefix("cw: ") else {
            continue;
        };
        if let Some(d) = rest.strip_prefix("done ") {
            if d != format!("{lines} lines") {
                return Err(format!("the writer ended with {l:?}, not {lines} lines"));
            }
            done = true;
            continue;
        }
        if done {
            return Err(format!("a line after the end: {l:?}"));
        }
        let want = format!("{next} {}", payload(next));
        if rest != want {
            let (n, _) = rest.split_once(' ').unwrap_or((rest, ""));
            let why = match n.parse::<u64>() {
                Ok(n) if n < next => format!("line {n} again (after line {})", next - 1),
                Ok(n) if n > next => format!("lines {next} to {} lost", n - 1),
                _ => format!("line {next} garbled"),
            };
            return Err(format!("{why}: {l:?}"));
        }
        next += 1;
    }
    if next != lines + 1 || !done {
        return Err(format!(
            "{} of {lines} lines came out{}",
            next - 1,
            if done { "" } else { ", and no end line" }
        ));
    }
    Ok(ready.saturating_sub(1))
}

/// `spec` with the killer's seed and the writer's line count.
pub fn adapt(spec: &mut Spec, seed: u64, lines: u64) -> Result<(), String> {
    for (name, arg) in [
        ("conkill", (seed & 0xffff_ffff) << 1),
        ("cwriter", lines << 1 | 1),
    ] {
        spec.domain
            .iter_mut()
            .find(|d| d.name == name)
            .ok_or(format!("the spec has no {name} domain"))?
            .arg = Some(arg);
    }
    Ok(())
}

impl Campaign for DriverKills {
    fn name(&self) -> &'static str {
        "kills"
    }

    fn title(&self) -> &'static str {
        "driver kills"
    }

    fn counts(&self) -> &'static str {
        "kills"
    }

    fn variant(&self, index: u64, _: &Ctx<'_>) -> &'static str {
        ["console", "blk"][(index % 2) as usize]
    }

    fn seed(&self, derived: u64) -> u64 {
        derived & 0xffff_ffff
    }

    fn run(&self, ctx: &Ctx<'_>, variant: &str, seed: u64, _: Option<u64>) -> Outcome {
        let fail = |what: String| Outcome {
            failures: vec![Found {
                what,
                ..Found::default()
            }],
            ..Outcome::default()
        };
        let console = variant == "console";
        let path = if console {
            "tests/soak/console_kills.toml"
        } else {
            "tests/system/rs_supervise.toml"
        };
        let mut spec = match unit::load(ctx.layout, path) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        if console {
            if let Err(e) = adapt(&mut spec, seed, LINES) {
                return fail(e);
            }
        }
        let name = ctx.name(self.name());
        if let Err(e) = unit::prepare(ctx.layout, &name, &spec) {
            return fail(e);
        }
        let matcher = match Matcher::new(&spec.expect, &spec.forbid)
            .and_then(|m| m.with_contains(&spec.contains))
        {
            Ok(m) => m,
            Err(e) => return fail(format!("spec error: {e}")),
        };
        let (kill_on, keep): (Option<&str>, &[&str]) = if console {
            (
                Some(r"^cw: done \d+ lines$"),
                &[r"^cw: ", r"^consoled: COM1 ready", r"^conkill: "],
            )
        } else {
            (None, &[r"^killer: ", r"^streamer: "])
        };
        let sink = match unit::Collect::new(matcher, kill_on, keep) {
            Ok(s) => s.with_idle(Duration::from_secs(60)),
            Err(e) => return fail(e),
        };
        let cfg = crate::system::config(ctx.layout, &name, &spec);
        let timeout = Duration::from_secs(spec.timeout_secs);
        let out = match unit::boot(&cfg, &ctx.layout.log(&name), timeout, sink) {
            Ok(o) => o,
            Err(e) => return fail(e),
        };
        let verdict = unit::verdict(&spec, &out);
        if console {
            let stream = check_stream(&out.sink.kept, LINES);
            let kills = match &stream {
                Ok(k) => *k,
                Err(_) => out
                    .sink
                    .kept
                    .iter()
                    .filter(|l| l.starts_with("consoled: COM1 ready"))
                    .count()
                    .saturating_sub(1) as u64,
            };
            let tries =
                Regex::new(r"^conkill: \d+ kills, (\d+) tries in a request").expect("regex");
            let busy = out
                .sink
                .captures(&tries)
                .filter_map(|c| c[1].parse::<u64>().ok())
                .last()
                .unwrap_or(0);
            let failure = match (verdict, stream) {
                (Some(why), _) => Some(why),
                (None, Err(why)) => Some(format!("the console stream: {why}")),
                (None, Ok(_)) => None,
            };
            return Outcome {
                count: kills,
                extra: vec![
                    ("console kills".to_string(), kills),
                    ("console lines checked".to_string(), LINES),
                    ("console kills put off (mid-request)".to_string(), busy),
                ],
                failures: failure
                    .map(|what| Found {
                        what: format!("console, killer seed {seed}: {what}"),
                        ..Found::default()
                    })
                    .into_iter()
                    .collect(),
            };
        }
        let killer = Regex::new(r"^killer: (\d+) kills").expect("regex");
        let kills = unit::number(&out.sink, &killer).unwrap_or(0);
        Outcome {
            count: kills,
            extra: vec![
                ("blk kills".to_string(), kills),
                (
                    "blk bytes checked".to_string(),
                    if verdict.is_none() { 10 << 20 } else { 0 },
                ),
            ],
            failures: verdict
                .map(|what| Found {
                    what: format!("blk (rs_supervise; its timing is not seeded): {what}"),
                    ..Found::default()
                })
                .into_iter()
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(n: u64) -> Vec<String> {
        let mut v = vec!["consoled: COM1 ready, input by interrupt 4".to_string()];
        for i in 1..=n {
            v.push(format!("cw: {i} {}", payload(i)));
            if i % 2 == 0 {
                v.push("consoled: COM1 ready, input by interrupt 4".into());
            }
        }
        v.push(format!("cw: done {n} lines"));
        v
    }

    #[test]
    fn payloads_are_pinned() {
        // The writer (user/tests/src/bin/conkill.rs) makes the same bytes:
        // these are lines 1 and 2 of a run.
        assert_eq!(
            payload(1),
            "ljsrdcwjwygaiuhlkgmnwhvorouxhmufckiuqlzqznlkrmhlgglaiixpmhrrnlkzugyxliknaaetzrmrojryxdaijnuvcbjrr"
        );
        assert_eq!(payload(2), "ebtltlkbjndcmrbdebwimbcgimnefoiizuwsjc");
    }

    #[test]
    fn a_whole_stream_passes_and_counts_restarts() {
        assert_eq!(check_stream(&stream(6), 6), Ok(3));
    }

    #[test]
    fn lost_duplicated_and_garbled_lines_fail() {
        let s = stream(6);
        let mut lost = s.clone();
        lost.remove(2); // line 2
        assert!(check_stream(&lost, 6)
            .unwrap_err()
            .starts_with("lines 2 to 2 lost"));
        let mut dup = s.clone();
        dup.insert(3, s[2].clone());
        assert!(check_stream(&dup, 6)
            .unwrap_err()
            .starts_with("line 2 again"));
        let mut garbled = s.clone();
        garbled[4].pop();
        assert!(check_stream(&garbled, 6)
            .unwrap_err()
            .starts_with("line 3 garbled"));
        let short: Vec<String> = s[..s.len() - 1].to_vec();
        assert_eq!(
            check_stream(&short, 6).unwrap_err(),
            "6 of 6 lines came out, and no end line"
        );
        assert!(check_stream(&s, 7)
            .unwrap_err()
            .starts_with("the writer ended with"));
    }

    #[test]
    fn the_spec_takes_seed_and_lines() {
        let layout =
            crate::root::Layout::find(None, std::path::Path::new(env!("CARGO_MANIFEST_DIR")))
                .unwrap();
        let mut spec = unit::load(&layout, "tests/soak/console_kills.toml").unwrap();
        adapt(&mut spec, 0x1_0000_0005, 10).unwrap();
        let arg = |n: &str| spec.domain.iter().find(|d| d.name == n).unwrap().arg;
        assert_eq!(arg("conkill"), Some(10));
        assert_eq!(arg("cwriter"), Some(21));
    }
}
