//! The power-cut checker: after every restart, stops `ckptload`, reads its
//! header, journal page and 256 data pages through a segment key to its
//! address space, verifies them against the workload's invariant
//! (`stet_storecheck::load`), starts it again and reports.
//!
//! Keys: 1 console, 2 checkpoint, 3 a segment key to the workload's address
//! space (`space:ckptload`), 4 its domain key (`domain:ckptload`).
//!
//! Lines: `check: fresh` when it starts on a new store (then it checks the
//! running workload once, printing only a failure); after each restart
//! `check: ok epoch=<e> journal=<j> gen=<g>` (`g`: the generation the
//! system restarted from) or `check: FAILED <what>`.
#![no_std]
#![no_main]

use stet_rt::abi::layout::HEAP_START;
use stet_rt::abi::{
    code::{self, Code},
    order,
};
use stet_rt::key::{call, Msg};
use stet_rt::{checkpoint, println};
use stet_storecheck::load::{
    check_data, check_header, check_journal, Failure, Progress, DATA_PAGES, FIRST_DATA_PAGE,
    HEADER_PAGE, JOURNAL_PAGE,
};
use stet_storecheck::WORDS;

const CHECKPOINT: u8 = 2;
const SPACE: u8 = 3;
const LOAD: u8 = 4;

/// Why a check could not pass.
enum Problem {
    /// The state breaks the invariant.
    Bad(Failure),
    /// An invocation failed: what, the heap page it was about, the code.
    Order(&'static str, Option<u64>, u64),
    /// A segment read of a heap page returned this many bytes.
    Short(u64, usize),
}

/// What a passing check found.
struct Found {
    epoch: u64,
    journal: u64,
}

/// Reads heap page `p` of the workload.
fn read(p: u64, buf: &mut [u8; 4096]) -> Result<[u64; WORDS], Problem> {
    let addr = HEAP_START + p * 4096;
    let a = Msg::new(SPACE, order::segment::READ)
        .words([addr, 4096, 0, 0])
        .call_into(buf);
    if a.code != Code::Ok {
        return Err(Problem::Order("segment read", Some(p), a.code));
    }
    if a.len != 4096 {
        return Err(Problem::Short(p, a.len));
    }
    let mut words = [0u64; WORDS];
    for (w, c) in words.iter_mut().zip(buf.chunks_exact(8)) {
        let mut b = [0u8; 8];
        b.copy_from_slice(c);
        *w = u64::from_le_bytes(b);
    }
    Ok(words)
}

/// Verifies the workload's memory (it must be stopped).
fn verify() -> Result<Found, Problem> {
    let mut buf = [0u8; 4096];
    let header = check_header(&read(HEADER_PAGE, &mut buf)?).map_err(Problem::Bad)?;
    let journal =
        check_journal(header.journaled, &read(JOURNAL_PAGE, &mut buf)?).map_err(Problem::Bad)?;
    let at = Progress::of(header.done);
    for p in 0..DATA_PAGES {
        let words = read(FIRST_DATA_PAGE + p, &mut buf)?;
        check_data(at, p, &words).map_err(Problem::Bad)?;
    }
    Ok(Found {
        epoch: at.epoch,
        journal,
    })
}

/// Stops the workload, verifies it, starts it again.
fn check() -> Result<Found, Problem> {
    let c = call(LOAD, order::domain::STOP, [0; 4]).code;
    if c != Code::Ok {
        return Err(Problem::Order("domain stop", None, c));
    }
    let r = verify();
    let c = call(LOAD, order::domain::START, [0; 4]).code;
    if c != Code::Ok {
        return Err(Problem::Order("domain start", None, c));
    }
    r
}

fn report_failure(p: &Problem) {
    match p {
        Problem::Bad(f) => println!("check: FAILED {f}"),
        Problem::Order(what, Some(p), c) => {
            println!(
                "check: FAILED {what} of heap page {p}: {} ({c})",
                code::name(*c)
            )
        }
        Problem::Short(p, len) => {
            println!("check: FAILED segment read of heap page {p}: {len} bytes, not 4096")
        }
        Problem::Order(what, None, c) => {
            println!("check: FAILED {what}: {} ({c})", code::name(*c))
        }
    }
}

/// Checks and reports the latest restart; returns the restart count it
/// checked. A check the system restarted in the middle of saw a mix of two
/// boots' worlds (values read before the restart, pages journaled back
/// under it): it is done again.
fn check_restart() -> u64 {
    loop {
        let before = match checkpoint::info(CHECKPOINT) {
            Ok(i) => i.restarts,
            Err(c) => {
                report_failure(&Problem::Order("checkpoint info", None, c));
                return u64::MAX - 1;
            }
        };
        let r = check();
        match (r, checkpoint::info(CHECKPOINT)) {
            (_, Ok(i)) if i.restarts != before => continue,
            (Ok(f), Ok(i)) => {
                println!(
                    "check: ok epoch={} journal={} gen={}",
                    f.epoch, f.journal, i.restart_generation
                );
                return i.restarts;
            }
            (Err(p), Ok(i)) => {
                report_failure(&p);
                return i.restarts;
            }
            (_, Err(c)) => {
                report_failure(&Problem::Order("checkpoint info", None, c));
                return u64::MAX - 1;
            }
        }
    }
}

fn main(_arg: u64) -> i64 {
    let mut seen = match checkpoint::info(CHECKPOINT) {
        Ok(i) if i.restarts == 0 => {
            println!("check: fresh");
            if let Err(p) = check() {
                report_failure(&p);
            }
            0
        }
        // Started only now although the system has restarted: the
        // checkpoint was taken before this domain ran, so this restart is
        // unchecked.
        Ok(_) => check_restart(),
        Err(c) => {
            report_failure(&Problem::Order("checkpoint info", None, c));
            return 1;
        }
    };
    loop {
        let c = checkpoint::wait_restart_after(CHECKPOINT, seen);
        if c != Code::Restarted {
            report_failure(&Problem::Order("checkpoint wait_restart", None, c));
            return 1;
        }
        seen = check_restart();
    }
}

stet_rt::main!(main);
