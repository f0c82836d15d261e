//! The soak's books: per campaign what it counted, its units, its
//! failures; the table printed at the end and `build/soak.json`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

/// A failure, with what replays it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FailureRecord {
    /// The unit's replay token (`seeds::Token`).
    pub token: String,
    /// What went wrong.
    pub what: String,
    /// The command that replays it.
    pub replay: String,
    /// Where its logs (and disks) were kept.
    pub kept: String,
}

/// One campaign's books.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Tally {
    /// The campaign's name (`kfuzz`, …).
    pub name: String,
    /// What it is, for people.
    pub title: String,
    /// What `count` counts.
    pub counts: String,
    /// How many.
    pub count: u64,
    /// What the run was asked for (the 30-minute target, scaled to the
    /// run's length).
    pub target: u64,
    /// Units run (QEMU runs or runs of several boots).
    pub units: u64,
    /// Seconds of QEMU time its units took (two at a time: wall time is
    /// about half the sum over campaigns).
    pub busy_secs: f64,
    /// Counted per variant.
    pub variants: BTreeMap<String, u64>,
    /// Other figures (invariant checks, flips by area and outcome, …).
    pub extra: BTreeMap<String, u64>,
    /// What failed.
    pub failures: Vec<FailureRecord>,
}

impl Tally {
    /// Counted per minute of QEMU time (one QEMU).
    pub fn rate_per_min(&self) -> f64 {
        if self.busy_secs > 0.0 {
            self.count as f64 * 60.0 / self.busy_secs
        } else {
            0.0
        }
    }

    /// The QEMU minutes this campaign would need for `target` at its rate.
    pub fn minutes_for(&self, target: u64) -> Option<f64> {
        let r = self.rate_per_min();
        (r > 0.0).then(|| target as f64 / r)
    }
}

/// The whole soak.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Soak {
    /// The soak's seed (every unit's seed derives from it).
    pub seed: String,
    /// The run's length asked for, minutes.
    pub minutes: f64,
    /// Wall seconds it took.
    pub elapsed_secs: f64,
    /// QEMUs at once.
    pub jobs: usize,
    /// The commit soaked (`git describe`), if known.
    pub commit: String,
    /// When it started (UTC, RFC 3339), if known.
    pub started: String,
    /// Whether the system-call fuzzer steered clear of the known bugs.
    pub known_bugs_avoided: bool,
    /// The campaigns.
    pub campaigns: Vec<Tally>,
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Soak {
    /// Failures over every campaign.
    pub fn failures(&self) -> usize {
        self.campaigns.iter().map(|c| c.failures.len()).sum()
    }

    /// The table: campaign, how many, failures, then the rates.
    pub fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "{:<34} {:>12} {:>9} {:>6} {:>9} {:>10} {:>12}",
            "campaign", "how many", "failures", "units", "qemu s", "per min", "30-min goal"
        );
        for c in &self.campaigns {
            let what = format!("{} ({})", c.title, c.counts);
            let _ = writeln!(
                t,
                "{:<34} {:>12} {:>9} {:>6} {:>9.0} {:>10} {:>12}",
                what,
                thousands(c.count),
                c.failures.len(),
                c.units,
                c.busy_secs,
                thousands(c.rate_per_min().round() as u64),
                thousands(c.target_30min())
            );
        }
        let _ = writeln!(
            t,
            "{} failures in {:.1} min (seed {}, {} QEMUs at once)",
            self.failures(),
            self.elapsed_secs / 60.0,
            self.seed,
            self.jobs
        );
        t
    }

    /// Per campaign: its variants and other figures, and its failures with
    /// their replay commands.
    pub fn details(&self) -> String {
        let mut t = String::new();
        for c in &self.campaigns {
            let _ = write!(t, "{}:", c.name);
            for (v, n) in &c.variants {
                let _ = write!(t, " {v} {}", thousands(*n));
            }
            for (k, n) in &c.extra {
                let _ = write!(t, "; {k} {}", thousands(*n));
            }
            if let Some(m) = c.minutes_for(c.target_30min()) {
                let _ = write!(
                    t,
                    "; the 30-minute goal takes {m:.1} QEMU minutes at this rate"
                );
            }
            t.push('\n');
            for f in &c.failures {
                let _ = writeln!(t, "  FAIL {}: {}", f.token, f.what);
                let _ = writeln!(t, "       replay: {}", f.replay);
                let _ = writeln!(t, "       kept: {}", f.kept);
            }
        }
        t
    }

    /// `build/soak.json`'s text.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("the books always serialize");
        s.push('\n');
        s
    }
}

impl Tally {
    /// The 30-minute target (the run's target scaled back).
    pub fn target_30min(&self) -> u64 {
        crate::soak::campaign_target(&self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn soak() -> Soak {
        let mut kfuzz = Tally {
            name: "kfuzz".into(),
            title: "kernel fuzzer".into(),
            counts: "invocations".into(),
            count: 5_300_000,
            target: 5_000_000,
            units: 53,
            busy_secs: 300.0,
            ..Tally::default()
        };
        kfuzz.variants.insert("plain".into(), 2_700_000);
        kfuzz.extra.insert("invariant checks".into(), 1_234_567);
        let mut cuts = Tally {
            name: "cuts".into(),
            title: "power cuts".into(),
            counts: "cuts".into(),
            count: 12,
            target: 10,
            units: 1,
            busy_secs: 8.0,
            ..Tally::default()
        };
        cuts.failures.push(FailureRecord {
            token: "cuts/store:0x5".into(),
            what: "lost a durable promise".into(),
            replay: "make soak REPLAY=cuts/store:0x5".into(),
            kept: "build/soak/failures/cuts-store-0x5".into(),
        });
        Soak {
            seed: "0xabc".into(),
            minutes: 30.0,
            elapsed_secs: 1815.0,
            jobs: 2,
            campaigns: vec![kfuzz, cuts],
            ..Soak::default()
        }
    }

    #[test]
    fn numbers_get_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(5_300_000), "5,300,000");
    }

    #[test]
    fn the_table_has_a_row_per_campaign() {
        let t = soak().table();
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "{t}");
        assert!(lines[0].starts_with("campaign"));
        assert!(lines[1].starts_with("kernel fuzzer (invocations)"));
        assert!(lines[1].contains("5,300,000"));
        assert!(
            lines[1].contains("1,060,000"),
            "per QEMU minute: {}",
            lines[1]
        );
        assert!(lines[1].ends_with("5,000,000"));
        assert!(lines[2].starts_with("power cuts (cuts)"));
        assert_eq!(
            lines[3],
            "1 failures in 30.2 min (seed 0xabc, 2 QEMUs at once)"
        );
        let d = soak().details();
        assert!(d.contains(
            "kfuzz: plain 2,700,000; invariant checks 1,234,567; the 30-minute goal takes 4.7 QEMU minutes at this rate\n"
        ));
        assert!(d.contains("  FAIL cuts/store:0x5: lost a durable promise\n"));
        assert!(d.contains("replay: make soak REPLAY=cuts/store:0x5\n"));
    }

    #[test]
    fn json_holds_every_figure() {
        let v: serde_json::Value = serde_json::from_str(&soak().to_json()).unwrap();
        assert_eq!(v["seed"], "0xabc");
        assert_eq!(v["campaigns"][0]["count"], 5_300_000);
        assert_eq!(v["campaigns"][0]["extra"]["invariant checks"], 1_234_567);
        assert_eq!(v["campaigns"][1]["failures"][0]["token"], "cuts/store:0x5");
        assert_eq!(soak().failures(), 1);
        let t = &soak().campaigns[0];
        assert_eq!(t.rate_per_min(), 1_060_000.0);
        assert_eq!(t.minutes_for(5_300_000), Some(5.0));
        assert_eq!(Tally::default().minutes_for(1), None);
    }
}
