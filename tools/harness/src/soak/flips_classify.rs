//! What a restart of a damaged disk did, in classes: the "restart → class"
//! half of the disk-damage campaign's interface. Each restart must be
//! consistent — exactly the state of one of the disk's committed
//! checkpoints, as a restart of the undamaged disk (the newest) or of the
//! disk with its newest root torn (the older) shows it — or refused with a
//! clear message: the whole disk (`KERNEL PANIC: store: …`), or the damaged
//! object (the store reports it and the checker finds it missing, never
//! wrong); anything else is a failure.

use serde::Serialize;

/// What ckptcheck reported after a restart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct State {
    /// The workload's epoch.
    pub epoch: u64,
    /// Its journaled counter.
    pub journal: u64,
    /// The generation the system restarted from.
    pub gen: u64,
}

/// What a restart's console said.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restart {
    /// `check: ok epoch=… journal=… gen=…`.
    pub ok: Option<State>,
    /// `check: FAILED …`.
    pub check_failed: Option<String>,
    /// `store: new store …`: the disk was taken for a new one.
    pub new_store: bool,
    /// `KERNEL PANIC: store: …`: the store refused the disk.
    pub store_panic: Option<String>,
    /// Any other panic, or a kernel fault.
    pub crash: Option<String>,
    /// A domain's fault (`fault: domain …`).
    pub domain_fault: Option<String>,
    /// A store line about damage (damaged, checksum, unusable, …).
    pub reported: Option<String>,
}

/// The class of a restart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Class {
    /// The newest checkpoint's state, exactly.
    Newest,
    /// The older checkpoint's state, exactly.
    Older,
    /// Refused, with the store's message.
    Refused,
    /// The store reported damage and refused the damaged object: the
    /// checker could not read (or run) what it needed, and said so — never
    /// a wrong value (docs/STORE.md, "Damage").
    Reported,
    /// A wrong state, or one the checker found broken.
    Wrong(String),
    /// The disk was taken for a new store: everything on it dropped.
    Fresh,
    /// A crash (not the store's refusal).
    Crash(String),
    /// Neither a check nor a refusal in time.
    Hang,
}

impl Class {
    /// Its name in the report.
    pub fn name(&self) -> &'static str {
        match self {
            Class::Newest => "consistent",
            Class::Older => "older checkpoint",
            Class::Refused => "refused",
            Class::Reported => "object refused",
            Class::Wrong(_) => "WRONG",
            Class::Fresh => "NEW STORE",
            Class::Crash(_) => "CRASH",
            Class::Hang => "HANG",
        }
    }

    /// Whether it is a failure.
    pub fn failed(&self) -> bool {
        !matches!(
            self,
            Class::Newest | Class::Older | Class::Refused | Class::Reported
        )
    }

    /// In words, for a failure report.
    pub fn describe(&self) -> String {
        match self {
            Class::Wrong(w) | Class::Crash(w) => format!("{}: {w}", self.name()),
            Class::Fresh => {
                "the damaged disk was taken for a new store (everything on it dropped, no word)"
                    .into()
            }
            Class::Hang => "no check line and no refusal: hung".into(),
            c => c.name().into(),
        }
    }
}

/// Classifies a restart, given the states of the disk's two checkpoints
/// (`older`: `None` when the disk has no older one to fall back to).
pub fn classify(r: &Restart, newest: &State, older: Option<&State>) -> Class {
    if let Some(c) = &r.crash {
        return Class::Crash(c.clone());
    }
    if r.store_panic.is_some() {
        return Class::Refused;
    }
    if r.new_store {
        return Class::Fresh;
    }
    // A domain that faults on an object the store refused (its stack
    // page, say) is that refusal; one that faults without a word from the
    // store ran on damage.
    // The checker may still pass after another domain (the workload)
    // faulted on a page it lost: then its state must be a checkpoint's.
    if let Some(f) = &r.domain_fault {
        return match (&r.reported, &r.ok) {
            (Some(_), None) => Class::Reported,
            (Some(_), Some(s)) if s == newest || Some(s) == older => Class::Reported,
            (Some(_), Some(_)) => Class::Wrong(format!(
                "{f}, and the check passed on a state of no checkpoint"
            )),
            _ => Class::Crash(f.clone()),
        };
    }
    if let Some(f) = &r.check_failed {
        // A broken invariant is a wrong state; a read or an order that
        // failed after the store reported damage is the object refused.
        let what = f.split_once("FAILED ").map_or("", |(_, w)| w);
        let invariant = ["data ", "journal ", "header "]
            .iter()
            .any(|w| what.starts_with(w));
        return match (&r.reported, invariant) {
            (Some(_), false) => Class::Reported,
            _ => Class::Wrong(f.clone()),
        };
    }
    // A damaged journal record refused, with the records after it: the
    // state of a checkpoint with fewer of its journal records, each an
    // earlier committed state, and said.
    let journal_cut =
        |s: &State, c: &State| s.epoch == c.epoch && s.gen == c.gen && s.journal < c.journal;
    let journal_report = r
        .reported
        .as_deref()
        .is_some_and(|l| l.contains("journal record"));
    match &r.ok {
        Some(s) if s == newest => Class::Newest,
        Some(s) if Some(s) == older => Class::Older,
        Some(s)
            if journal_report
                && (journal_cut(s, newest) || older.is_some_and(|o| journal_cut(s, o))) =>
        {
            Class::Reported
        }
        Some(s) => Class::Wrong(format!(
            "restarted to epoch={} journal={} gen={}, but the checkpoints hold epoch={} journal={} gen={}{}",
            s.epoch,
            s.journal,
            s.gen,
            newest.epoch,
            newest.journal,
            newest.gen,
            older.map_or(String::new(), |o| format!(
                " and epoch={} journal={} gen={}",
                o.epoch, o.journal, o.gen
            ))
        )),
        // No check: the checker could not run (its own objects damaged)
        // after the store said so, or a hang.
        None if r.reported.is_some() => Class::Reported,
        None => Class::Hang,
    }
}

/// Reads one console line into `r`.
pub fn feed(r: &mut Restart, line: &str) {
    let num = |key: &str| -> Option<u64> {
        let at = line.find(key)? + key.len();
        let digits: String = line[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    };
    if line.starts_with("check: ok ") {
        if let (Some(epoch), Some(journal), Some(gen)) =
            (num("epoch="), num("journal="), num("gen="))
        {
            r.ok.get_or_insert(State {
                epoch,
                journal,
                gen,
            });
        }
    } else if line.starts_with("check: FAILED") || line.starts_with("load: FAILED") {
        r.check_failed.get_or_insert_with(|| line.to_string());
    } else if line.starts_with("store: new store") {
        r.new_store = true;
    } else if line.starts_with("KERNEL PANIC: store:") {
        r.store_panic.get_or_insert_with(|| line.to_string());
    } else if line.contains("KERNEL PANIC")
        || line.contains("KERNEL FAULT")
        || line.contains("panicked at")
    {
        r.crash.get_or_insert_with(|| line.to_string());
    } else if line.starts_with("fault:") {
        r.domain_fault.get_or_insert_with(|| line.to_string());
    }
    if line.starts_with("store:") && is_report(line) {
        r.reported.get_or_insert_with(|| line.to_string());
    }
}

/// Whether a store line speaks of damage.
fn is_report(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    [
        "damage",
        "checksum",
        "unusable",
        "cannot be read",
        "cannot be used",
        "no valid copy",
        "not used",
        "refus",
        "corrupt",
    ]
    .iter()
    .any(|w| l.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NEW: State = State {
        epoch: 12,
        journal: 40,
        gen: 9,
    };
    const OLD: State = State {
        epoch: 8,
        journal: 30,
        gen: 8,
    };

    fn restart(lines: &[&str]) -> Restart {
        let mut r = Restart::default();
        for l in lines {
            feed(&mut r, l);
        }
        r
    }

    #[test]
    fn consistent_restarts() {
        let r = restart(&[
            "store: restarted from gen=9 (restart 1)",
            "check: ok epoch=12 journal=40 gen=9",
        ]);
        assert_eq!(classify(&r, &NEW, Some(&OLD)), Class::Newest);
        assert_eq!(r.reported, None);
        let r = restart(&[
            "store: root 0 is unusable (Checksum); using root 1",
            "check: ok epoch=8 journal=30 gen=8",
        ]);
        assert_eq!(classify(&r, &NEW, Some(&OLD)), Class::Older);
        assert!(r.reported.as_deref().unwrap().contains("unusable"));
        assert!(!Class::Older.failed());
    }

    #[test]
    fn refusals_are_not_failures_but_crashes_are() {
        let r = restart(&[
            "store: directory block 0 of checkpoint 9 is damaged",
            "KERNEL PANIC: store: checkpoint 9 cannot be read from the log (see above); refusing to use the disk",
        ]);
        assert_eq!(classify(&r, &NEW, None), Class::Refused);
        assert!(!Class::Refused.failed());
        let r = restart(&["KERNEL PANIC: index out of bounds"]);
        assert!(matches!(classify(&r, &NEW, None), Class::Crash(_)));
        let r = restart(&["fault: domain 3 page fault"]);
        assert!(classify(&r, &NEW, None).failed());
        // After the store refused its page, the same fault is the refusal.
        let r = restart(&[
            "store: page 304 in checkpoint 15 fails its checksum; not used",
            "fault: domain 1 'ckptload' page fault at rip=0x400cd0: write access to 0x7ffffffefeb8 (not present)",
        ]);
        assert_eq!(classify(&r, &NEW, None), Class::Reported);
        // The workload lost its stack page, and the checker still found
        // the newest checkpoint's state (soak flips/migrating 0xb1ac…).
        let r = restart(&[
            "store: page 304 in checkpoint 57 fails its checksum; not used",
            "fault: domain 1 'ckptload' page fault at rip=0x4009f0: write access to 0x7ffffffefeb8 (not present); no keeper, domain stopped",
            "check: ok epoch=12 journal=40 gen=9",
        ]);
        assert_eq!(classify(&r, &NEW, Some(&OLD)), Class::Reported);
        let r = restart(&[
            "store: page 304 in checkpoint 57 fails its checksum; not used",
            "fault: domain 1 'ckptload' page fault",
            "check: ok epoch=12 journal=41 gen=9",
        ]);
        assert!(classify(&r, &NEW, Some(&OLD)).failed());
    }

    #[test]
    fn a_damaged_object_refused_is_not_a_failure() {
        let r = restart(&[
            "store: page 279 in checkpoint 11 fails its checksum; not used",
            "check: FAILED segment read of heap page 248: invalid address (13)",
        ]);
        assert_eq!(classify(&r, &NEW, Some(&OLD)), Class::Reported);
        assert!(!Class::Reported.failed());
        // Unless the checker found a wrong value, or the store said nothing.
        let r = restart(&[
            "store: page 279 in checkpoint 11 fails its checksum; not used",
            "check: FAILED data page 3 word 4: expected 0x1 (epoch 2), found 0x3",
        ]);
        assert!(classify(&r, &NEW, Some(&OLD)).failed());
        let r = restart(&["check: FAILED domain stop: void (1)"]);
        assert!(classify(&r, &NEW, Some(&OLD)).failed());
        // No check at all, after a report: the checker could not run.
        let r = restart(&["store: node 5 is damaged (no valid copy); not used"]);
        assert_eq!(classify(&r, &NEW, None), Class::Reported);
    }

    #[test]
    fn a_damaged_journal_record_refused_is_said_and_not_a_failure() {
        // soak flips/migrating 0x32f6…: the last record's page flipped.
        let r = restart(&[
            "store: journal record 4 fails its data checksum; it and any after it are not applied (damage, or a write the power failure cut short)",
            "check: ok epoch=12 journal=38 gen=9",
        ]);
        assert_eq!(classify(&r, &NEW, Some(&OLD)), Class::Reported);
        // Silently, it is wrong; and a cut journal is no excuse for
        // another epoch.
        let r = restart(&["check: ok epoch=12 journal=38 gen=9"]);
        assert!(classify(&r, &NEW, Some(&OLD)).failed());
        let r = restart(&[
            "store: journal record 4 fails its data checksum; it and any after it are not applied (damage, or a write the power failure cut short)",
            "check: ok epoch=11 journal=38 gen=9",
        ]);
        assert!(classify(&r, &NEW, Some(&OLD)).failed());
    }

    #[test]
    fn wrong_states_and_silence_fail() {
        let r = restart(&["check: FAILED data page 3 holds epoch 13's word"]);
        assert!(matches!(classify(&r, &NEW, Some(&OLD)), Class::Wrong(w) if w.contains("page 3")));
        // The right epoch but a journal value from later.
        let r = restart(&["check: ok epoch=8 journal=34 gen=8"]);
        let c = classify(&r, &NEW, Some(&OLD));
        assert!(c.failed());
        assert!(c.describe().contains("journal=34"), "{}", c.describe());
        // The older state when there is no older checkpoint.
        let r = restart(&["check: ok epoch=8 journal=30 gen=8"]);
        assert!(classify(&r, &NEW, None).failed());
        assert_eq!(
            classify(&restart(&["store: new store on a disk"]), &NEW, None),
            Class::Fresh
        );
        assert_eq!(classify(&restart(&[]), &NEW, None), Class::Hang);
        assert!(Class::Hang.failed());
    }
}
