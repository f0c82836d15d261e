//! The soak's scheduler: `jobs` workers, each running one unit at a time,
//! each time of the campaign furthest behind its target (scaled to the
//! run's length), until the time is up.

use std::sync::Mutex;
use std::time::Instant;

use super::report::{FailureRecord, Tally};
use super::seeds::{self, Token};
use super::{unit, Campaign, Ctx};
use crate::root::Layout;

/// What the scheduler needs to know of a campaign's progress.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    /// Units started.
    pub started: u64,
    /// Units under way.
    pub running: u64,
    /// What its finished units counted.
    pub count: u64,
    /// Its units that failed.
    pub failures: usize,
    /// Its target for this run.
    pub target: u64,
    /// QEMU seconds its finished units took.
    pub busy_secs: f64,
    /// Its fair part of the run's QEMU seconds (the run's length times the
    /// QEMUs at once, over the campaigns).
    pub fair_secs: f64,
}

impl Progress {
    /// How far along it is: the larger of its count over its target and
    /// its QEMU time over its fair part (1.0: there), counting each unit
    /// under way as an average finished one. The time part keeps a
    /// campaign whose units count little (they fail, or hang until the
    /// idle limit) from taking every QEMU.
    fn share(&self) -> f64 {
        let finished = self.started - self.running;
        let (avg, avg_secs) = if finished > 0 {
            let n = finished as f64;
            (self.count as f64 / n, self.busy_secs / n)
        } else {
            (0.0, 0.0)
        };
        let running = self.running as f64;
        let by_count = (self.count as f64 + running * avg) / self.target.max(1) as f64;
        let by_time = (self.busy_secs + running * avg_secs) / self.fair_secs.max(1.0);
        by_count.max(by_time)
    }
}

/// The campaign to run next: the furthest behind (ties: the one with fewer
/// units started, then the first), leaving out those with `max_failures`
/// failed units. `None` if every one is out.
pub fn choose(p: &[Progress], max_failures: usize) -> Option<usize> {
    (0..p.len())
        .filter(|&i| p[i].failures < max_failures)
        .min_by(|&a, &b| {
            p[a].share()
                .total_cmp(&p[b].share())
                .then(p[a].started.cmp(&p[b].started))
                .then(a.cmp(&b))
        })
}

/// `count` targets of 30 minutes scaled to `minutes` (at least 1).
pub fn scaled(target_30min: u64, minutes: f64) -> u64 {
    ((target_30min as f64 * minutes / 30.0).round() as u64).max(1)
}

/// A soak to run.
pub struct Plan<'a> {
    /// The repository.
    pub layout: &'a Layout,
    /// The campaigns.
    pub campaigns: &'a [Box<dyn Campaign>],
    /// The soak's seed.
    pub soak_seed: u64,
    /// When it started.
    pub start: Instant,
    /// No unit starts after this.
    pub deadline: Instant,
    /// Its length.
    pub minutes: f64,
    /// A campaign stops after this many failures.
    pub max_failures: usize,
    /// The system-call fuzzer steers clear of the known bugs.
    pub known: bool,
}

struct State {
    progress: Vec<Progress>,
    tallies: Vec<Tally>,
}

/// Runs the plan on `jobs` workers; returns the campaigns' books.
pub fn run(plan: &Plan<'_>, jobs: usize) -> Vec<Tally> {
    let tallies: Vec<Tally> = plan
        .campaigns
        .iter()
        .map(|c| Tally {
            name: c.name().into(),
            title: c.title().into(),
            counts: c.counts().into(),
            target: scaled(super::campaign_target(c.name()), plan.minutes),
            ..Tally::default()
        })
        .collect();
    let fair_secs = plan.minutes * 60.0 * jobs.max(1) as f64 / tallies.len().max(1) as f64;
    let progress = tallies
        .iter()
        .map(|t| Progress {
            target: t.target,
            fair_secs,
            ..Progress::default()
        })
        .collect();
    let state = Mutex::new(State { progress, tallies });
    std::thread::scope(|s| {
        for slot in 0..jobs.max(1) {
            let state = &state;
            s.spawn(move || worker(plan, slot, state));
        }
    });
    state
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .tallies
}

fn worker(plan: &Plan<'_>, slot: usize, state: &Mutex<State>) {
    let ctx = Ctx {
        layout: plan.layout,
        slot,
        known: plan.known,
    };
    loop {
        let (ci, index) = {
            let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
            if Instant::now() >= plan.deadline {
                return;
            }
            let Some(ci) = choose(&st.progress, plan.max_failures) else {
                return;
            };
            let p = &mut st.progress[ci];
            p.started += 1;
            p.running += 1;
            (ci, p.started - 1)
        };
        let c = &plan.campaigns[ci];
        let seed = c.seed(seeds::unit(plan.soak_seed, c.name(), index));
        let variant = c.variant(index, &ctx);
        let t0 = Instant::now();
        let began = std::time::SystemTime::now();
        let out = c.run(&ctx, variant, seed, None);
        let secs = t0.elapsed().as_secs_f64();
        let failures: Vec<FailureRecord> = out
            .failures
            .iter()
            .map(|f| {
                let token = Token {
                    campaign: c.name().into(),
                    variant: variant.into(),
                    seed,
                    detail: f.detail,
                };
                let dir = unit::failure_dir(plan.layout, &token.to_string());
                FailureRecord {
                    token: token.to_string(),
                    what: f.what.clone(),
                    replay: seeds::replay_command(&token),
                    kept: unit::keep(plan.layout, &ctx.name(c.name()), &f.keep, &dir, began),
                }
            })
            .collect();
        let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
        let p = &mut st.progress[ci];
        p.running -= 1;
        p.count += out.count;
        p.busy_secs += secs;
        p.failures += usize::from(!failures.is_empty());
        let t = &mut st.tallies[ci];
        t.units += 1;
        t.count += out.count;
        t.busy_secs += secs;
        *t.variants.entry(variant.into()).or_default() += out.count;
        for (k, v) in &out.extra {
            *t.extra.entry(k.clone()).or_default() += v;
        }
        let at = plan.start.elapsed().as_secs();
        let head = format!(
            "[{:3}:{:02}] {}/{variant} {seed:#x}: {} {}",
            at / 60,
            at % 60,
            c.name(),
            out.count,
            c.counts()
        );
        if failures.is_empty() {
            println!("{head} ({secs:.1}s)");
        }
        for f in failures {
            println!("{head}: FAILED ({secs:.1}s): {}", f.what);
            println!("    replay: {}\n    kept: {}", f.replay, f.kept);
            t.failures.push(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(started: u64, running: u64, count: u64, target: u64) -> Progress {
        Progress {
            started,
            running,
            count,
            failures: 0,
            target,
            busy_secs: 0.0,
            fair_secs: 600.0,
        }
    }

    #[test]
    fn the_furthest_behind_goes_next() {
        // At the start all are at 0: round robin by units started.
        let mut v = vec![p(0, 0, 0, 100), p(0, 0, 0, 10)];
        assert_eq!(choose(&v, 5), Some(0));
        v[0].started = 1;
        v[0].running = 1;
        assert_eq!(choose(&v, 5), Some(1));
        // 50 of 100 against 2 of 10.
        let v = vec![p(1, 0, 50, 100), p(1, 0, 2, 10)];
        assert_eq!(choose(&v, 5), Some(1));
        // A unit under way counts as an average one: 2 + 2 of 10 is 40%,
        // behind 50%.
        let v = vec![p(1, 0, 50, 100), p(2, 1, 2, 10)];
        assert_eq!(choose(&v, 5), Some(1));
        let v = vec![p(1, 0, 30, 100), p(2, 1, 2, 10)];
        assert_eq!(choose(&v, 5), Some(0));
    }

    #[test]
    fn a_campaign_that_counts_little_gets_its_time_only() {
        // Behind by count (0 of 100) but past its fair time: the other
        // one, at 50% of its target, goes first.
        let mut v = vec![p(5, 0, 0, 100), p(1, 0, 50, 100)];
        v[0].busy_secs = 700.0;
        assert_eq!(choose(&v, 5), Some(1));
        v[0].busy_secs = 200.0;
        assert_eq!(choose(&v, 5), Some(0));
    }

    #[test]
    fn a_campaign_that_failed_enough_stops() {
        let mut v = vec![p(3, 0, 0, 100), p(1, 0, 90, 100)];
        v[0].failures = 2;
        assert_eq!(choose(&v, 2), Some(1));
        v[1].failures = 2;
        assert_eq!(choose(&v, 2), None);
        assert_eq!(choose(&[], 2), None);
    }

    #[test]
    fn targets_scale_with_the_run() {
        assert_eq!(scaled(5_000_000, 30.0), 5_000_000);
        assert_eq!(scaled(300, 5.0), 50);
        assert_eq!(scaled(500, 0.01), 1);
    }
}
