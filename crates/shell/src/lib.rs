//! The native shell's pure logic, host-tested: a line editor for a serial
//! terminal ([`LineEditor`]), splitting a command line into words
//! ([`words`]), and the command table with its help ([`COMMANDS`],
//! [`parse`]). The shell program (`user/services/src/bin/shell.rs`) feeds
//! it the bytes the console driver reads and carries out the commands
//! through its keys.
#![no_std]

#[cfg(test)]
extern crate std;

#[cfg(test)]
mod tests;

/// Longest line.
pub const MAX_LINE: usize = 200;

/// What a byte of input did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Nothing to show.
    None,
    /// Echo these bytes (at most 3: a character, or "\x08 \x08").
    Echo([u8; 3], usize),
    /// The line is complete (Enter): echo "\r\n" and take [`LineEditor::line`].
    Line,
    /// Ctrl-C: the line is dropped; echo "^C\r\n".
    Cancel,
}

/// A line being typed: printable ASCII is kept and echoed, backspace and
/// DEL erase the last character, Ctrl-U erases the line, Ctrl-C drops it,
/// CR or LF ends it (a CR LF pair ends one line). Other control bytes and
/// escape sequences (arrow keys) are ignored.
#[derive(Clone, Debug)]
pub struct LineEditor {
    buf: [u8; MAX_LINE],
    len: usize,
    /// Inside an escape sequence (ESC [ ... final byte).
    esc: u8,
    /// The last byte ended a line with CR (so a following LF is swallowed).
    after_cr: bool,
    /// Bytes of the completed line (valid after `Edit::Line`).
    done: usize,
}

impl Default for LineEditor {
    fn default() -> Self {
        LineEditor::new()
    }
}

impl LineEditor {
    /// An empty line.
    pub const fn new() -> LineEditor {
        LineEditor {
            buf: [0; MAX_LINE],
            len: 0,
            esc: 0,
            after_cr: false,
            done: 0,
        }
    }

    /// The line completed by the last `Edit::Line` (take it before feeding
    /// more bytes: the next line reuses the buffer).
    pub fn line(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.done]).unwrap_or("")
    }

    /// Drops what is typed so far (and any escape sequence under way).
    pub fn clear(&mut self) {
        self.len = 0;
        self.esc = 0;
        self.after_cr = false;
    }

    /// What is typed so far.
    pub fn pending(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Feeds one byte.
    pub fn feed(&mut self, b: u8) -> Edit {
        let after_cr = core::mem::replace(&mut self.after_cr, false);
        match self.esc {
            1 => {
                self.esc = if b == b'[' { 2 } else { 0 };
                return Edit::None;
            }
            2 => {
                // Parameters and intermediates until a final byte.
                if (0x40..=0x7e).contains(&b) {
                    self.esc = 0;
                }
                return Edit::None;
            }
            _ => {}
        }
        match b {
            b'\r' | b'\n' => {
                if b == b'\n' && after_cr {
                    return Edit::None;
                }
                self.after_cr = b == b'\r';
                self.done = self.len;
                self.len = 0;
                Edit::Line
            }
            0x08 | 0x7f => {
                if self.len == 0 {
                    return Edit::None;
                }
                self.len -= 1;
                Edit::Echo([0x08, b' ', 0x08], 3)
            }
            0x15 => {
                // Ctrl-U: erase the whole line on the screen.
                let n = self.len;
                self.len = 0;
                if n == 0 {
                    Edit::None
                } else {
                    Edit::Echo([b'\r', 0, 0], 1)
                }
            }
            0x03 => {
                self.len = 0;
                Edit::Cancel
            }
            0x1b => {
                self.esc = 1;
                Edit::None
            }
            0x20..=0x7e => {
                if self.len == MAX_LINE {
                    return Edit::None;
                }
                self.buf[self.len] = b;
                self.len += 1;
                Edit::Echo([b, 0, 0], 1)
            }
            _ => Edit::None,
        }
    }
}

/// Splits a line into at most `N` words separated by spaces; `None` if
/// there are more.
pub fn words<const N: usize>(line: &str) -> Option<([&str; N], usize)> {
    let mut out = [""; N];
    let mut n = 0;
    for w in line.split(' ').filter(|w| !w.is_empty()) {
        if n == N {
            return None;
        }
        out[n] = w;
        n += 1;
    }
    Some((out, n))
}

/// A shell command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command<'a> {
    /// `help`
    Help,
    /// `ps`: the domains the kernel has ready (the context cache).
    Ps,
    /// `mem`: object cache statistics.
    Mem,
    /// `store`: the store and its last checkpoint.
    Store,
    /// `checkpoint`: take one now and wait for it to commit.
    Checkpoint,
    /// `period <ms>`: the checkpoint period.
    Period(u64),
    /// `services`: what the reincarnation service supervises.
    Services,
    /// `inject <service> [crash|kill]`.
    Inject(&'a str, u64),
    /// `restart <service>`: start a held service again.
    Restart(&'a str),
    /// `read <service> <block>`: ask a block service (looked up in the
    /// data store) for a block and check its bytes.
    Read(&'a str, u64),
    /// `start <demo> [arg]`: build a demo program from its factory.
    Start(&'a str, u64),
    /// `note <text>`: add a note.
    Note(&'a str),
    /// `notes`: list the notes.
    Notes,
    /// `count`: the persistent counter, one more.
    Count,
    /// `unix`: the UNIX personality's processes, memory and the system
    /// calls its programs asked for that are not implemented.
    Unix,
    /// `echo <text>`.
    Echo(&'a str),
    /// An empty line.
    Empty,
}

/// Every command: (name, arguments, what it does) — `help` prints these.
pub const COMMANDS: [(&str, &str, &str); 16] = [
    ("help", "", "list the commands"),
    (
        "ps",
        "",
        "domains the kernel has ready: state, meter, keeper",
    ),
    (
        "mem",
        "",
        "object cache: nodes, pages, dirty, free frames, disk reads",
    ),
    (
        "store",
        "",
        "the store: last checkpoint, pause, objects written, restarts, scrub",
    ),
    (
        "checkpoint",
        "",
        "take a checkpoint now and wait for it to commit",
    ),
    (
        "period",
        "<ms>",
        "set the checkpoint period (0: only on demand)",
    ),
    (
        "services",
        "",
        "supervised services: state, restarts, generation",
    ),
    (
        "inject",
        "<service> [crash|kill]",
        "inject a fault into a service (it comes back)",
    ),
    ("restart", "<service>", "start a held service again"),
    (
        "read",
        "<service> <block>",
        "read a block from a block service and check it",
    ),
    (
        "start",
        "<demo> [arg]",
        "start a demo program (hello, counter)",
    ),
    ("note", "<text>", "add a note (notes survive killing QEMU)"),
    ("notes", "", "list the notes"),
    (
        "count",
        "",
        "a counter that survives killing QEMU: one more",
    ),
    (
        "unix",
        "",
        "UNIX processes, memory, unimplemented calls by name",
    ),
    ("echo", "<text>", "print the text"),
];

/// Why a line is not a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError<'a> {
    /// No such command.
    Unknown(&'a str),
    /// The command's arguments are wrong; the usage.
    Usage(&'static str, &'static str),
}

fn usage(cmd: &str) -> ParseError<'static> {
    let (n, a, _) = COMMANDS
        .iter()
        .find(|(n, _, _)| *n == cmd)
        .copied()
        .unwrap_or(("?", "", ""));
    ParseError::Usage(n, a)
}

fn number(s: &str) -> Option<u64> {
    s.parse().ok()
}

/// Parses a command line. `echo` and `note` keep the rest of the line.
pub fn parse(line: &str) -> Result<Command<'_>, ParseError<'_>> {
    let line = line.trim_matches(' ');
    let (cmd, rest) = match line.split_once(' ') {
        Some((c, r)) => (c, r.trim_matches(' ')),
        None => (line, ""),
    };
    match cmd {
        "note" if !rest.is_empty() => return Ok(Command::Note(rest)),
        "echo" => return Ok(Command::Echo(rest)),
        _ => {}
    }
    let known = COMMANDS.iter().any(|(n, _, _)| *n == cmd);
    let Some((w, n)) = words::<3>(rest) else {
        return Err(if known {
            usage(cmd)
        } else {
            ParseError::Unknown(cmd)
        });
    };
    let c = match (cmd, n) {
        ("", _) => Command::Empty,
        ("help", 0) => Command::Help,
        ("ps", 0) => Command::Ps,
        ("mem", 0) => Command::Mem,
        ("store", 0) => Command::Store,
        ("checkpoint", 0) => Command::Checkpoint,
        ("period", 1) => Command::Period(number(w[0]).ok_or(usage(cmd))?),
        ("services", 0) => Command::Services,
        ("inject", 1) => Command::Inject(w[0], 0),
        ("inject", 2) => match w[1] {
            "crash" => Command::Inject(w[0], 0),
            "kill" => Command::Inject(w[0], 1),
            _ => return Err(usage(cmd)),
        },
        ("restart", 1) => Command::Restart(w[0]),
        ("read", 2) => Command::Read(w[0], number(w[1]).ok_or(usage(cmd))?),
        ("start", 1) => Command::Start(w[0], 0),
        ("start", 2) => Command::Start(w[0], number(w[1]).ok_or(usage(cmd))?),
        ("notes", 0) => Command::Notes,
        ("count", 0) => Command::Count,
        ("unix", 0) => Command::Unix,
        (c, _) if known => return Err(usage(c)),
        (c, _) => return Err(ParseError::Unknown(c)),
    };
    Ok(c)
}
