//! The promises the power-cut workload's console lines make, and the
//! judgement of what its checker reports after a restart. For a harness
//! that kills and reboots the system: feed it every console line in
//! order, and call [`Promises::boot`] at the start of every boot.
//!
//! Lines (see `user/tests/src/bin/ckptload.rs` and `ckptcheck.rs`):
//!
//! * `load: commit E=<e> G=<g>`: checkpoint `g` committed, and its snapshot
//!   was taken after the workload reached epoch `e`. Every later restart is
//!   from generation `g` or newer, with epoch `e` or later.
//! * `load: journal J=<j>`: the journal counter `j` is durable. Every later
//!   restart has the counter at `j` or more.
//! * `check: ok epoch=<e> journal=<j> gen=<g>`: after a restart from
//!   generation `g` the state passed the invariant. Every later restart is
//!   from `g` or newer.
//! * `check: fresh`: a new store; wrong once anything was promised.
//! * `check: FAILED <why>`: the invariant does not hold.
//!
//! Only promises made before a restart bind what is seen after it (the
//! workload may print new ones before the checker reports).

use core::fmt;

/// One line of the workload or its checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line {
    /// `load: commit E=.. G=..`
    Commit {
        /// Epoch at the call.
        epoch: u64,
        /// Generation committed.
        gen: u64,
    },
    /// `load: journal J=..`
    Journal {
        /// Counter made durable.
        counter: u64,
    },
    /// `load: done`
    Done,
    /// `check: fresh`
    Fresh,
    /// `check: ok epoch=.. journal=.. gen=..`
    Ok {
        /// Epoch found.
        epoch: u64,
        /// Journal counter found.
        journal: u64,
        /// Generation restarted from.
        gen: u64,
    },
    /// `check: FAILED ..`
    Failed,
}

/// The value of `name=<decimal>` among the space-separated words of `s`.
fn field(s: &str, name: &str) -> Option<u64> {
    s.split(' ')
        .find_map(|w| w.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
}

/// Parses a line (anything before `load: ` or `check: ` is ignored);
/// `None` for other lines and malformed ones.
pub fn parse(line: &str) -> Option<Line> {
    let line = line.trim_end();
    if let Some(i) = line.find("load: ") {
        let rest = &line[i + "load: ".len()..];
        if let Some(r) = rest.strip_prefix("commit ") {
            return Some(Line::Commit {
                epoch: field(r, "E")?,
                gen: field(r, "G")?,
            });
        }
        if let Some(r) = rest.strip_prefix("journal ") {
            return Some(Line::Journal {
                counter: field(r, "J")?,
            });
        }
        return (rest == "done").then_some(Line::Done);
    }
    let i = line.find("check: ")?;
    let rest = &line[i + "check: ".len()..];
    if rest == "fresh" {
        return Some(Line::Fresh);
    }
    if rest.starts_with("FAILED") {
        return Some(Line::Failed);
    }
    let r = rest.strip_prefix("ok ")?;
    Some(Line::Ok {
        epoch: field(r, "epoch")?,
        journal: field(r, "journal")?,
        gen: field(r, "gen")?,
    })
}

/// The least values a restart must show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Floor {
    /// Epoch.
    pub epoch: u64,
    /// Journal counter.
    pub journal: u64,
    /// Generation.
    pub gen: u64,
}

/// A promise broken (or the checker's own failure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Broken {
    /// The checker saw an epoch below a committed one.
    Epoch {
        /// Promised.
        promised: u64,
        /// Seen.
        found: u64,
    },
    /// The journal counter went back.
    Journal {
        /// Promised.
        promised: u64,
        /// Seen.
        found: u64,
    },
    /// The system restarted from an older generation.
    Gen {
        /// Promised.
        promised: u64,
        /// Seen.
        found: u64,
    },
    /// `check: fresh` after something was promised: the store was lost.
    Fresh,
    /// The checker reported `FAILED`.
    Checker,
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Broken::Epoch { promised, found } => {
                write!(f, "epoch {found} after a commit at epoch {promised}")
            }
            Broken::Journal { promised, found } => {
                write!(f, "journal counter {found} after {promised} was journaled")
            }
            Broken::Gen { promised, found } => write!(
                f,
                "restarted from generation {found} after generation {promised} committed"
            ),
            Broken::Fresh => write!(f, "a fresh store after checkpoints were promised"),
            Broken::Checker => write!(f, "the checker found the state inconsistent"),
        }
    }
}

/// Promises made so far, and those due at the current boot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Promises {
    made: Floor,
    due: Floor,
    promised: bool,
    due_any: bool,
}

impl Promises {
    /// A new boot begins: everything promised so far binds it.
    pub fn boot(&mut self) {
        self.due = self.made;
        self.due_any = self.promised;
    }

    /// What the current boot must show.
    pub fn due(&self) -> Floor {
        self.due
    }

    /// Takes one console line: records its promise, or judges a check.
    /// Returns what the line was (`None` for other lines).
    pub fn observe(&mut self, line: &str) -> Result<Option<Line>, Broken> {
        let Some(l) = parse(line) else {
            return Ok(None);
        };
        let m = &mut self.made;
        match l {
            Line::Commit { epoch, gen } => {
                m.epoch = m.epoch.max(epoch);
                m.gen = m.gen.max(gen);
                self.promised = true;
            }
            Line::Journal { counter } => {
                m.journal = m.journal.max(counter);
                self.promised = true;
            }
            Line::Ok {
                epoch,
                journal,
                gen,
            } => {
                let d = self.due;
                if gen < d.gen {
                    return Err(Broken::Gen {
                        promised: d.gen,
                        found: gen,
                    });
                }
                if epoch < d.epoch {
                    return Err(Broken::Epoch {
                        promised: d.epoch,
                        found: epoch,
                    });
                }
                if journal < d.journal {
                    return Err(Broken::Journal {
                        promised: d.journal,
                        found: journal,
                    });
                }
                m.gen = m.gen.max(gen);
                self.promised = true;
            }
            Line::Fresh if self.due_any => return Err(Broken::Fresh),
            Line::Failed => return Err(Broken::Checker),
            Line::Fresh | Line::Done => {}
        }
        Ok(Some(l))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::format;

    #[test]
    fn parses() {
        assert_eq!(
            parse("load: commit E=12 G=3"),
            Some(Line::Commit { epoch: 12, gen: 3 })
        );
        assert_eq!(
            parse("[1.5] load: journal J=40\r"),
            Some(Line::Journal { counter: 40 })
        );
        assert_eq!(parse("load: done"), Some(Line::Done));
        assert_eq!(parse("check: fresh"), Some(Line::Fresh));
        assert_eq!(
            parse("check: ok epoch=9 journal=8 gen=2"),
            Some(Line::Ok {
                epoch: 9,
                journal: 8,
                gen: 2
            })
        );
        assert_eq!(
            parse("check: FAILED data page 1 word 2: ..."),
            Some(Line::Failed)
        );
        assert_eq!(parse("load: commit E=x G=3"), None);
        assert_eq!(parse("check: ok epoch=9 gen=2"), None);
        assert_eq!(parse("kernel: checkpoint 3 committed"), None);
    }

    #[test]
    fn promises_bind_later_boots() {
        let mut p = Promises::default();
        p.boot();
        assert_eq!(p.observe("check: fresh"), Ok(Some(Line::Fresh)));
        p.observe("load: journal J=1").unwrap();
        p.observe("load: journal J=2").unwrap();
        p.observe("load: commit E=5 G=1").unwrap();
        p.observe("load: journal J=3").unwrap();
        p.observe("unrelated").unwrap();
        // Killed; the next boot must show gen >= 1, epoch >= 5, journal >= 3.
        p.boot();
        assert_eq!(
            p.due(),
            Floor {
                epoch: 5,
                journal: 3,
                gen: 1
            }
        );
        // The workload runs ahead and promises more before the checker speaks.
        p.observe("load: commit E=9 G=2").unwrap();
        assert_eq!(
            p.observe("check: ok epoch=6 journal=3 gen=1"),
            Ok(Some(Line::Ok {
                epoch: 6,
                journal: 3,
                gen: 1
            }))
        );
        p.boot();
        assert_eq!(
            p.observe("check: ok epoch=8 journal=4 gen=2"),
            Err(Broken::Epoch {
                promised: 9,
                found: 8
            })
        );
        assert_eq!(
            p.observe("check: ok epoch=9 journal=2 gen=2"),
            Err(Broken::Journal {
                promised: 3,
                found: 2
            })
        );
        let e = p.observe("check: ok epoch=9 journal=3 gen=1").unwrap_err();
        assert_eq!(
            e,
            Broken::Gen {
                promised: 2,
                found: 1
            }
        );
        assert_eq!(
            format!("{e}"),
            "restarted from generation 1 after generation 2 committed"
        );
        assert_eq!(p.observe("check: fresh"), Err(Broken::Fresh));
        assert_eq!(p.observe("check: FAILED x"), Err(Broken::Checker));
    }

    #[test]
    fn a_check_promises_its_generation() {
        let mut p = Promises::default();
        p.boot();
        p.observe("check: ok epoch=1 journal=0 gen=4").unwrap();
        p.boot();
        assert_eq!(
            p.due(),
            Floor {
                epoch: 0,
                journal: 0,
                gen: 4
            }
        );
        assert_eq!(p.observe("check: fresh"), Err(Broken::Fresh));
    }
}
