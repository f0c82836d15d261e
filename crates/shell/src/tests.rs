//! The line editor and the parser, exactly.

use super::*;
use proptest::prelude::*;

fn typed(ed: &mut LineEditor, s: &[u8]) -> (std::vec::Vec<u8>, std::vec::Vec<std::string::String>) {
    let mut echo = std::vec::Vec::new();
    let mut lines = std::vec::Vec::new();
    for &b in s {
        match ed.feed(b) {
            Edit::Echo(e, n) => echo.extend_from_slice(&e[..n]),
            Edit::Line => {
                echo.extend_from_slice(b"\r\n");
                lines.push(ed.line().into());
            }
            Edit::Cancel => echo.extend_from_slice(b"^C\r\n"),
            Edit::None => {}
        }
    }
    (echo, lines)
}

#[test]
fn editing() {
    let mut ed = LineEditor::new();
    let (echo, lines) = typed(&mut ed, b"psx\x7f\r\nhelp\rmem\n\x1b[Aok\x08\x08no\r");
    assert_eq!(lines, ["ps", "help", "mem", "no"]);
    assert_eq!(
        echo,
        b"psx\x08 \x08\r\nhelp\r\nmem\r\nok\x08 \x08\x08 \x08no\r\n"
    );
    let (echo, lines) = typed(&mut ed, b"abc\x03x\x15y\r\r");
    assert_eq!(lines, ["y", ""]);
    assert_eq!(echo, b"abc^C\r\nx\ry\r\n\r\n");
    // Backspace on an empty line and control bytes do nothing.
    assert_eq!(ed.feed(0x7f), Edit::None);
    assert_eq!(ed.feed(0x01), Edit::None);
    // A full line ignores more.
    for _ in 0..MAX_LINE + 5 {
        ed.feed(b'a');
    }
    assert_eq!(ed.pending().len(), MAX_LINE);
}

#[test]
fn clear_drops_the_pending_line() {
    let mut ed = LineEditor::new();
    typed(&mut ed, b"half a li\x1b[");
    ed.clear();
    assert_eq!(ed.pending(), b"");
    let (_, lines) = typed(&mut ed, b"Dps\r");
    assert_eq!(lines, ["Dps"], "no escape sequence left under way");
}

#[test]
fn parsing() {
    assert_eq!(parse("  ps "), Ok(Command::Ps));
    assert_eq!(parse(""), Ok(Command::Empty));
    assert_eq!(parse("period 250"), Ok(Command::Period(250)));
    assert_eq!(parse("period x"), Err(ParseError::Usage("period", "<ms>")));
    assert_eq!(parse("inject blk"), Ok(Command::Inject("blk", 0)));
    assert_eq!(parse("inject blk kill"), Ok(Command::Inject("blk", 1)));
    assert_eq!(
        parse("inject blk maim"),
        Err(ParseError::Usage("inject", "<service> [crash|kill]"))
    );
    assert_eq!(parse("start counter 3"), Ok(Command::Start("counter", 3)));
    assert_eq!(parse("read blk 7"), Ok(Command::Read("blk", 7)));
    assert_eq!(
        parse("read blk"),
        Err(ParseError::Usage("read", "<service> <block>"))
    );
    assert_eq!(
        parse("read blk seven"),
        Err(ParseError::Usage("read", "<service> <block>"))
    );
    assert_eq!(parse("note buy  milk"), Ok(Command::Note("buy  milk")));
    assert_eq!(parse("note"), Err(ParseError::Usage("note", "<text>")));
    assert_eq!(parse("echo hi there"), Ok(Command::Echo("hi there")));
    assert_eq!(parse("ps now"), Err(ParseError::Usage("ps", "")));
    assert_eq!(parse("frobnicate"), Err(ParseError::Unknown("frobnicate")));
    assert_eq!(parse("a b c d e f"), Err(ParseError::Unknown("a")));
    assert_eq!(parse("note a b c d e"), Ok(Command::Note("a b c d e")));
    assert_eq!(
        parse("inject a b c d"),
        Err(ParseError::Usage("inject", "<service> [crash|kill]"))
    );
}

#[test]
fn help_lists_every_command_the_parser_knows() {
    for (name, args, _) in COMMANDS {
        let line = std::format!("{name} {}", if args.is_empty() { "" } else { "x" });
        assert_ne!(parse(&line), Err(ParseError::Unknown(name)), "{name}");
    }
}

proptest! {
    #[test]
    fn any_bytes_keep_the_line_printable(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut ed = LineEditor::new();
        let (_, lines) = typed(&mut ed, &bytes);
        for l in lines {
            prop_assert!(l.len() <= MAX_LINE);
            prop_assert!(l.bytes().all(|b| (0x20..=0x7e).contains(&b)));
            let _ = parse(&l);
        }
        prop_assert!(ed.pending().len() <= MAX_LINE);
    }
}

#[test]
fn unix_takes_no_arguments() {
    assert_eq!(parse("unix"), Ok(Command::Unix));
    assert_eq!(parse("unix x"), Err(ParseError::Usage("unix", "")));
}
