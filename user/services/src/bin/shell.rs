//! The native shell: `make run`'s console until a UNIX personality exists.
//! It reads the console through the user-mode console driver (`consoled`),
//! edits lines (`stet-shell`), and carries out commands through its keys:
//! the sysinfo key (domains, object cache), the checkpoint key, the
//! reincarnation service (services, fault injection), the metafactory
//! and demo programs (start), and the notes service. `help` lists them.
//!
//! Keys: 1 the console driver (its WRITE is the console key's, so
//! `println!` goes through it), 2 sleep, 3 discrim, 4 sysinfo, 5 checkpoint,
//! 6 the reincarnation service (client), 7 the data store (lookup), 8 a
//! bank, 9 the meter for demos, 10 the metafactory, 11 the notes service,
//! 12 the demo programs node (slot i holds the program key of
//! `DEMOS_LIST[i]`: `programs:hello:counter` in the image spec); 13–15
//! scratch.
#![no_std]
#![no_main]

use stet_rt::abi::order::{checkpoint as ck, sysinfo as si};
use stet_rt::abi::service::{blk, console as co, notes as no, rs as ro, store as so};
use stet_rt::abi::{
    code::{self, Code},
    order::node,
};
use stet_rt::key::{Msg, Slot};
use stet_rt::{bank, print, println};
use stet_shell::{Command, Edit, LineEditor, ParseError, COMMANDS};

const CONSOLE: Slot = 1;
const SYSINFO: Slot = 4;
const CHECKPOINT: Slot = 5;
const RS: Slot = 6;
const LOOKUP: Slot = 7;
const BANK: Slot = 8;
const METER: Slot = 9;
const META: Slot = 10;
const NOTES: Slot = 11;
const DEMOS: Slot = 12;
const T1: Slot = 13;
const T2: Slot = 14;
const T3: Slot = 15;

/// Demo programs the shell can start, in the order of the demo node.
const DEMOS_LIST: [&str; 2] = ["hello", "counter"];

fn write(b: &[u8]) {
    if !b.is_empty() {
        Msg::new(CONSOLE, co::WRITE).string(b).call();
    }
}

fn state_name(s: u64) -> &'static str {
    match s & 0xff {
        0 => "available",
        1 => "waiting",
        2 => "running",
        _ => "?",
    }
}

fn word(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))
}

fn ps() {
    println!("  ctx  domain                  oid  state      flags   ticks  meter left   keeper");
    let mut next = 0;
    let mut rec = [0u8; si::DOMAIN_RECORD];
    loop {
        let a = Msg::new(SYSINFO, si::DOMAINS).w0(next).call_into(&mut rec);
        if a.code != Code::Ok {
            break;
        }
        let st = word(&rec, 1);
        let name_len = rec[56..80].iter().position(|&b| b == 0).unwrap_or(24);
        let name = core::str::from_utf8(&rec[56..56 + name_len]).unwrap_or("?");
        let flags = match (st >> 8) & 0xff {
            0 => "",
            1 => "stopped",
            2 => "foreign",
            _ => "stop+for",
        };
        let left = word(&rec, 4);
        let keeper = word(&rec, 5);
        print!(
            "  {:>3}  {:<18} {:>8}  {:<9}  {:<7} {:>6}  ",
            a.w[0] - 1,
            name,
            word(&rec, 0),
            state_name(st),
            flags,
            word(&rec, 2)
        );
        if word(&rec, 3) == u64::MAX {
            print!("{:>10}", "-");
        } else if left == u64::MAX {
            print!("{:>10}", "unlimited");
        } else {
            print!("{left:>10}");
        }
        if keeper == u64::MAX {
            println!("   -");
        } else {
            println!("   oid {keeper} info {}", word(&rec, 6));
        }
        next = a.w[0];
    }
}

fn mem() {
    let mut b = [0u8; 32];
    let a = Msg::new(SYSINFO, si::OBJECTS).call_into(&mut b);
    if a.code != Code::Ok {
        return println!("mem: code {}", a.code);
    }
    let hi = |w: u64| w >> 32;
    let lo = |w: u64| w & 0xffff_ffff;
    println!(
        "nodes: {} of {} cached, {} dirty",
        hi(a.w[0]),
        lo(a.w[0]),
        hi(a.w[2])
    );
    println!(
        "pages: {} of {} cached, {} dirty",
        hi(a.w[1]),
        lo(a.w[1]),
        lo(a.w[2])
    );
    println!("free frames: {}", a.w[3]);
    println!(
        "read from disk: {} nodes, {} pages; evicted: {} nodes, {} pages",
        word(&b, 0),
        word(&b, 1),
        word(&b, 2),
        word(&b, 3)
    );
}

fn store() {
    let s = Msg::new(CHECKPOINT, ck::STATS).call();
    let i = Msg::new(CHECKPOINT, ck::INFO).call();
    if s.code != Code::Ok || i.code != Code::Ok {
        return println!("store: no disk (code {})", s.code);
    }
    println!(
        "last checkpoint: generation {}, {} nodes and {} pages written",
        s.w[0],
        s.w[1] >> 32,
        s.w[1] & 0xffff_ffff
    );
    println!(
        "its pause: {} TSC ticks; to commit: {} ticks",
        s.w[2], s.w[3]
    );
    println!(
        "period: {} ms; restarts of this store: {} (last from generation {})",
        i.w[0], i.w[1], i.w[2]
    );
    let c = Msg::new(CHECKPOINT, ck::SCRUB).call();
    if c.code == Code::Ok {
        println!(
            "scrub: {} blocks checked, {} damaged found, {} repaired; {} passes done",
            c.w[0], c.w[1], c.w[2], c.w[3]
        );
    }
}

fn services() {
    let mut next = 0;
    let mut name = [0u8; 32];
    println!("  service          state     restarts  generation");
    loop {
        let a = Msg::new(RS, ro::STATUS).w0(next).call_into(&mut name);
        if a.code != Code::Ok {
            break;
        }
        let state = match a.w[0] {
            ro::state::RUNNING => "running",
            ro::state::BACKOFF => "backoff",
            _ => "held",
        };
        let n = core::str::from_utf8(&name[..a.len.min(32)]).unwrap_or("?");
        println!("  {n:<16} {state:<9} {:>8}  {:>10}", a.w[1], a.w[2]);
        next = a.w[3];
    }
}

fn start(demo: &str, arg: u64) {
    let Some(i) = DEMOS_LIST.iter().position(|d| *d == demo) else {
        return println!("start: no demo {demo:?} (demos: hello, counter)");
    };
    // A factory for the demo, its product holding the console, sleep,
    // discrim and the checkpoint key (what `counter` reads its restarts
    // from) in slots 1-4; the product's objects come from a sub-bank of
    // the shell's bank.
    let r = (|| {
        ok(Msg::new(DEMOS, node::FETCH)
            .w0(i as u64)
            .recv([T1, 0, 0, 0])
            .call()
            .code)?;
        let a = Msg::new(META, stet_rt::abi::service::factory::NEW_FACTORY)
            .keys([BANK, T1, 0, 0])
            .recv([T1, T2, 0, 0])
            .call();
        ok(a.code)?;
        for (component, key) in [(1, CONSOLE), (2, 2), (3, 3), (4, CHECKPOINT)] {
            ok(Msg::new(T1, stet_rt::abi::service::factory::INSTALL)
                .w0(component)
                .keys([key, 0, 0, 0])
                .call()
                .code)?;
        }
        ok(Msg::new(T1, stet_rt::abi::service::factory::SEAL)
            .call()
            .code)?;
        bank::create_sub(BANK, u64::MAX, u64::MAX, T3)?;
        let a = Msg::new(T2, stet_rt::abi::service::factory::CREATE)
            .w0(arg)
            .keys([T3, METER, 0, 0])
            .recv([T1, 0, 0, 0])
            .call();
        ok(a.code)
    })();
    match r {
        Ok(()) => println!("start: {demo} is running"),
        Err(c) => println!("start: {demo}: {} ({c})", code::name(c)),
    }
}

/// `unix`: unixd's key from the data store (it publishes itself), its
/// `STATUS`: processes, memory and the tally of unimplemented calls, by
/// name (`rseq ×2`; numbers from 511 up together as `other`).
fn unix() {
    let g = Msg::new(LOOKUP, so::GET)
        .string(stet_unix::proto::STORE_NAME)
        .recv([T1, 0, 0, 0])
        .call();
    if g.code != Code::Ok {
        return println!("unix: no UNIX personality in the data store");
    }
    let mut b = [0u8; 4096];
    let a = Msg::new(T1, stet_unix::proto::STATUS).call_into(&mut b);
    if a.code != Code::Ok {
        return println!("unix: {} ({})", code::name(a.code), a.code);
    }
    println!(
        "unix: processes {}, memory {} of {} KiB free",
        a.w[0],
        a.w[2] * 4,
        a.w[1] * 4
    );
    print!("unix: unimplemented calls:");
    let n = a.len.min(b.len());
    if n == 0 {
        print!(" none");
    }
    for c in b[..n].chunks_exact(6) {
        let t = stet_unix::sysnames::Tally::decode(c.try_into().unwrap_or(&[0; 6]));
        print!(" {t}");
    }
    println!();
}

/// `read <service> <block>`: the service's current key from the data
/// store, one READ, every byte checked against `blk::byte`.
fn read(name: &str, n: u64) {
    let g = Msg::new(LOOKUP, so::GET)
        .string(name.as_bytes())
        .recv([T1, 0, 0, 0])
        .call();
    if g.code != Code::Ok {
        return println!(
            "read: no service {name} in the data store ({})",
            code::name(g.code)
        );
    }
    let mut b = [0u8; 4096];
    let a = Msg::new(T1, blk::READ).w0(n).call_into(&mut b);
    if a.code != Code::Ok {
        return println!(
            "read: {name}: {} ({}); try again",
            code::name(a.code),
            a.code
        );
    }
    let bad = (0..b.len()).filter(|&i| b[i] != blk::byte(n, i)).count();
    if a.len == b.len() && bad == 0 {
        println!(
            "read: {name} block {n}: 4096 bytes ok (generation {})",
            g.w[0]
        );
    } else {
        println!("read: {name} block {n}: {} bytes, {bad} WRONG", a.len);
    }
}

fn ok(c: u64) -> Result<(), u64> {
    if c == Code::Ok {
        Ok(())
    } else {
        Err(c)
    }
}

fn run(c: Command<'_>) {
    match c {
        Command::Empty => {}
        Command::Help => {
            println!("commands:");
            for (n, a, what) in COMMANDS {
                println!("  {n:<10} {a:<22} {what}");
            }
        }
        Command::Ps => ps(),
        Command::Mem => mem(),
        Command::Store => store(),
        Command::Checkpoint => {
            let a = Msg::new(CHECKPOINT, ck::TAKE).call();
            if a.code == Code::Ok {
                println!("checkpoint {} committed", a.w[0]);
            } else {
                println!("checkpoint: {} ({})", code::name(a.code), a.code);
            }
        }
        Command::Period(ms) => {
            let a = Msg::new(CHECKPOINT, ck::SET_PERIOD).w0(ms).call();
            println!("period: {} ms ({})", ms, code::name(a.code));
        }
        Command::Services => services(),
        Command::Inject(name, kind) => {
            let a = Msg::new(RS, ro::INJECT)
                .string(name.as_bytes())
                .w0(kind)
                .call();
            match a.code {
                c if c == Code::Ok => {
                    println!("inject: {} {name}", ["crashed", "killed"][kind as usize])
                }
                c => println!("inject: {name}: {} ({c})", code::name(c)),
            }
        }
        Command::Restart(name) => {
            let a = Msg::new(RS, ro::RESTART).string(name.as_bytes()).call();
            println!("restart: {name}: {}", code::name(a.code));
        }
        Command::Read(name, n) => read(name, n),
        Command::Start(demo, arg) => start(demo, arg),
        Command::Note(text) => {
            let a = Msg::new(NOTES, no::ADD).string(text.as_bytes()).call();
            match a.code {
                c if c == Code::Ok => println!("note {} kept", a.w[0]),
                c => println!("note: {} ({c})", code::name(c)),
            }
        }
        Command::Notes => {
            let mut b = [0u8; no::MAX_NOTE];
            let mut i = 0;
            loop {
                let a = Msg::new(NOTES, no::GET).w0(i).call_into(&mut b);
                if a.code != Code::Ok {
                    break;
                }
                let t = core::str::from_utf8(&b[..a.len.min(b.len())]).unwrap_or("?");
                println!("  {}: {t}", i + 1);
                i += 1;
            }
            if i == 0 {
                println!("no notes yet (note <text> adds one)");
            }
        }
        Command::Unix => unix(),
        Command::Count => {
            let a = Msg::new(NOTES, no::COUNT).call();
            println!("count: {}", a.w[0]);
        }
        Command::Echo(t) => println!("{t}"),
    }
}

/// The store's restart count (0 without a disk).
fn restarts() -> u64 {
    stet_rt::checkpoint::info(CHECKPOINT).map_or(0, |i| i.restarts)
}

fn main(_arg: u64) -> i64 {
    // Let the servers' start-up lines come first, so the prompt is the
    // last thing on the screen (typing early is safe: the console driver
    // buffers input).
    stet_rt::kernel::sleep_until(stet_rt::kernel::now_ns() + 300_000_000);
    println!("Stet shell: type help for the commands");
    let mut ed = LineEditor::new();
    let mut input = [0u8; 256];
    // A restart (from the last checkpoint) can come during any command;
    // then what was typed after it belongs to the old terminal session.
    let mut seen = restarts();
    write(b"stet> ");
    loop {
        let a = Msg::new(CONSOLE, co::READ)
            .w0(input.len() as u64)
            .call_into(&mut input);
        if a.code == Code::Restarted {
            // The system restarted while we waited: a fresh prompt.
            seen = restarts();
            ed.clear();
            write(b"\r\n(restarted)\r\nstet> ");
            continue;
        }
        if a.code != Code::Ok {
            stet_rt::kernel::sleep_until(stet_rt::kernel::now_ns() + 10_000_000);
            continue;
        }
        let mut echo = [0u8; 512];
        let mut e = 0;
        for &b in &input[..a.len.min(input.len())] {
            match ed.feed(b) {
                Edit::Echo(bytes, n) => {
                    echo[e..e + n].copy_from_slice(&bytes[..n]);
                    e += n;
                    if n == 1 && bytes[0] == b'\r' {
                        // Ctrl-U: clear the typed line on the screen.
                        echo[e..e + 8].copy_from_slice(b"\x1b[K    \r");
                        e += 8;
                        echo[e..e + 6].copy_from_slice(b"stet> ");
                        e += 6;
                    }
                }
                Edit::Cancel => {
                    echo[e..e + 4].copy_from_slice(b"^C\r\n");
                    e += 4;
                    write(&echo[..e]);
                    e = 0;
                    write(b"stet> ");
                }
                Edit::Line => {
                    echo[e..e + 2].copy_from_slice(b"\r\n");
                    e += 2;
                    write(&echo[..e]);
                    e = 0;
                    match stet_shell::parse(ed.line()) {
                        Ok(c) => run(c),
                        Err(ParseError::Unknown(c)) => {
                            println!("{c}: no such command (help lists them)")
                        }
                        Err(ParseError::Usage(n, args)) => println!("usage: {n} {args}"),
                    }
                    let now = restarts();
                    if now != seen {
                        // The command finished after a restart: drop the
                        // rest of the old session's input.
                        seen = now;
                        ed.clear();
                        write(b"(restarted)\r\nstet> ");
                        break;
                    }
                    write(b"stet> ");
                }
                Edit::None => {}
            }
            if e > echo.len() - 32 {
                write(&echo[..e]);
                e = 0;
            }
        }
        write(&echo[..e]);
    }
}

stet_rt::main!(main);
