//! docs/UNIX.md's "Every system call" stays complete and true to the
//! keeper: every Linux x86_64 call (`stet_unix::sysnames`) has exactly one
//! row, under its number and name, with a state (**works**, **partial**
//! with what is missing, **ENOSYS**); the summary's counts are the rows';
//! and the calls the keeper's sources name (`nr::…`) are the ones the table
//! says are implemented (but for those it answers `nr::X => Err(ENOSYS)`,
//! which say why) — a call added to the keeper without its row changed
//! fails here, as does a row claiming a call the keeper never names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use stet_unix::sysnames;

const SECTION: &str = "## Every system call";

/// A row's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum State {
    Works,
    Partial,
    Enosys,
}

/// One row: number, name, state, note.
type Row = (u64, String, State, String);

fn read(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The section's lines: from its heading to the next `## `.
fn section(doc: &str) -> Vec<&str> {
    let mut lines = doc.lines().skip_while(|l| *l != SECTION);
    assert_eq!(
        lines.next(),
        Some(SECTION),
        "docs/UNIX.md has no {SECTION:?}"
    );
    lines.take_while(|l| !l.starts_with("## ")).collect()
}

/// A table line's cells, trimmed (the last one keeps any `\|` inside it).
fn cells(line: &str, n: usize) -> Option<Vec<&str>> {
    let inner = line.strip_prefix('|')?.strip_suffix('|')?;
    let c: Vec<&str> = inner.splitn(n, '|').map(str::trim).collect();
    (c.len() == n).then_some(c)
}

fn state(s: &str) -> Option<State> {
    match s {
        "**works**" => Some(State::Works),
        "**partial**" => Some(State::Partial),
        "**ENOSYS**" => Some(State::Enosys),
        _ => None,
    }
}

/// The call rows (first cell a number) and the summary rows (first cell
/// a state) of the section.
fn parse(doc: &str) -> (Vec<Row>, BTreeMap<State, usize>) {
    let mut rows = Vec::new();
    let mut summary = BTreeMap::new();
    for line in section(doc).into_iter().filter(|l| l.starts_with('|')) {
        if let Some(c) = cells(line, 4).filter(|c| c[0].parse::<u64>().is_ok()) {
            let nr = c[0].parse().unwrap();
            let name = c[1]
                .strip_prefix('`')
                .and_then(|n| n.strip_suffix('`'))
                .unwrap_or_else(|| panic!("call {nr}: the name is not in backquotes: {line}"));
            let st = state(c[2]).unwrap_or_else(|| panic!("call {nr}: no state: {line}"));
            rows.push((nr, name.to_string(), st, c[3].to_string()));
        } else if let Some(st) = cells(line, 2).and_then(|c| Some((state(c[0])?, c[1]))) {
            let n =
                st.1.parse()
                    .unwrap_or_else(|_| panic!("not a count: {line}"));
            assert!(summary.insert(st.0, n).is_none(), "counted twice: {line}");
        }
    }
    (rows, summary)
}

#[test]
fn every_call_once_with_its_name() {
    let (rows, _) = parse(&read("docs/UNIX.md"));
    let mut seen = BTreeMap::new();
    for (nr, name, _, _) in &rows {
        assert_eq!(
            sysnames::name(*nr),
            Some(name.as_str()),
            "docs/UNIX.md: call {nr} is `{}`, not `{name}`",
            sysnames::name(*nr).unwrap_or("no call")
        );
        assert!(
            seen.insert(*nr, name).is_none(),
            "docs/UNIX.md: call {nr} listed twice"
        );
    }
    let missing: Vec<_> = sysnames::all()
        .filter(|(nr, _)| !seen.contains_key(nr))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/UNIX.md: calls with no row: {missing:?}"
    );
    // In order of number, as a reader looks them up.
    assert!(
        rows.windows(2).all(|w| w[0].0 < w[1].0),
        "rows out of order"
    );
}

#[test]
fn partial_says_what_and_counts_add_up() {
    let (rows, summary) = parse(&read("docs/UNIX.md"));
    for (nr, name, st, note) in &rows {
        if *st == State::Partial {
            assert!(
                !note.is_empty(),
                "{name} ({nr}) is partial: say what is missing"
            );
        }
    }
    let mut counted = BTreeMap::new();
    for (_, _, st, _) in &rows {
        *counted.entry(*st).or_insert(0) += 1;
    }
    assert_eq!(summary, counted, "docs/UNIX.md: the summary's counts");
    assert_eq!(counted.values().sum::<usize>(), sysnames::COUNT);
}

/// The calls the keeper's sources name as `nr::NAME`, by Linux name, and
/// those among them it answers `ENOSYS` on purpose (`nr::NAME =>
/// Err(ENOSYS)`).
fn keeper_calls() -> (BTreeSet<String>, BTreeSet<String>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../user/unix/src/bin/unixkeeper");
    let (mut calls, mut refused) = (BTreeSet::new(), BTreeSet::new());
    let mut files = 0;
    for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "rs") {
            files += 1;
            let src = std::fs::read_to_string(&p).unwrap();
            for (i, _) in src.match_indices("nr::") {
                let name: String = src[i + 4..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if name.is_empty() {
                    continue;
                }
                let after = src[i + 4 + name.len()..].trim_start();
                if after.starts_with("=> Err(ENOSYS)") {
                    refused.insert(name.to_ascii_lowercase());
                }
                calls.insert(name.to_ascii_lowercase());
            }
        }
    }
    assert!(files > 5 && calls.contains("read") && calls.contains("getpid"));
    (calls, refused)
}

#[test]
fn implemented_calls_are_the_keepers() {
    let (rows, _) = parse(&read("docs/UNIX.md"));
    let (keeper, refused) = keeper_calls();
    for name in &keeper {
        assert!(
            sysnames::number(name).is_some(),
            "the keeper names nr::{}, no Linux call",
            name.to_ascii_uppercase()
        );
    }
    assert!(refused.contains("clone3"), "the scan missed nr::CLONE3");
    for (nr, name, st, note) in &rows {
        let up = name.to_ascii_uppercase();
        match st {
            State::Works | State::Partial => assert!(
                keeper.contains(name) && !refused.contains(name),
                "docs/UNIX.md: {name} ({nr}) is {st:?}, but the keeper does not carry out nr::{up}"
            ),
            State::Enosys => assert!(
                !keeper.contains(name) || refused.contains(name),
                "docs/UNIX.md: {name} ({nr}) is ENOSYS, but the keeper carries out nr::{up}: \
                 update its row"
            ),
        }
        if refused.contains(name) {
            assert!(
                !note.is_empty(),
                "docs/UNIX.md: {name} ({nr}): the keeper refuses it on purpose: say why"
            );
        }
    }
}
