//! Typing into the guest's serial console: a spec's `[[input]]` steps.
//!
//! Each step waits for a console line matching its `after` regex (a line
//! after the one that triggered the previous step), then sends its `text`
//! to QEMU's standard input, which `-serial stdio` feeds to the guest's
//! UART. QEMU takes bytes only as fast as the UART's receive FIFO drains,
//! so nothing is lost however much is typed at once.
//!
//! [`Typist`] is the pure part (which line triggers which text);
//! [`Typing`] wraps another [`LineSink`] and hands the text to the runner's
//! stdin writer through a channel ([`Keyboard`]).

use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};

use regex::Regex;
use serde::Deserialize;

use crate::runner::LineSink;

/// One `[[input]]` table.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct InputStep {
    /// Regex a console line must match before the text is typed.
    pub after: String,
    /// What is typed (TOML escapes: `"\n"` is Enter).
    pub text: String,
}

/// Decides, line by line, when each step's text is typed.
#[derive(Debug)]
pub struct Typist {
    steps: Vec<(Regex, Vec<u8>)>,
    patterns: Vec<String>,
    next: usize,
}

impl Typist {
    /// Compiles the steps' regexes.
    pub fn new(steps: &[InputStep]) -> Result<Self, String> {
        let mut compiled = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            let re = Regex::new(&s.after)
                .map_err(|e| format!("input step {} has a bad regex {:?}: {e}", i + 1, s.after))?;
            compiled.push((re, s.text.as_bytes().to_vec()));
        }
        Ok(Typist {
            steps: compiled,
            patterns: steps.iter().map(|s| s.after.clone()).collect(),
            next: 0,
        })
    }

    /// The text to type after `line`, if it triggers the next step.
    pub fn line(&mut self, line: &str) -> Option<Vec<u8>> {
        let (re, text) = self.steps.get(self.next)?;
        if !re.is_match(line) {
            return None;
        }
        self.next += 1;
        Some(text.clone())
    }

    /// The first step never typed (1-based) and its pattern.
    pub fn untyped(&self) -> Option<(usize, &str)> {
        self.patterns
            .get(self.next)
            .map(|p| (self.next + 1, p.as_str()))
    }
}

/// The receiving end of what is to be typed, handed to the runner, which
/// writes it to the guest's standard input. Clones share the one receiver.
#[derive(Clone, Debug)]
pub struct Keyboard(Arc<Mutex<Option<Receiver<Vec<u8>>>>>);

impl Keyboard {
    /// Takes the receiver (the runner does, once).
    pub fn take(&self) -> Option<Receiver<Vec<u8>>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }
}

/// A [`LineSink`] that types into the guest and passes every line on.
pub struct Typing<S> {
    /// The sink that judges the console.
    pub inner: S,
    typist: Typist,
    tx: Sender<Vec<u8>>,
}

impl<S: LineSink> Typing<S> {
    /// Wraps `inner`; the [`Keyboard`] goes to the runner.
    pub fn new(inner: S, typist: Typist) -> (Self, Keyboard) {
        let (tx, rx) = mpsc::channel();
        let keyboard = Keyboard(Arc::new(Mutex::new(Some(rx))));
        (Typing { inner, typist, tx }, keyboard)
    }

    /// Why the run failed for lack of typing: the first step whose line
    /// never came.
    pub fn untyped(&self) -> Option<String> {
        self.typist
            .untyped()
            .map(|(i, p)| format!("input step {i} never typed: no line matched {p:?}"))
    }
}

impl<S: LineSink> LineSink for Typing<S> {
    fn line(&mut self, line: &str) {
        if let Some(text) = self.typist.line(line) {
            // The writer is gone only once the guest has exited.
            let _ = self.tx.send(text);
        }
        self.inner.line(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(after: &str, text: &str) -> InputStep {
        InputStep {
            after: after.into(),
            text: text.into(),
        }
    }

    #[test]
    fn steps_fire_in_order_once_each() {
        let mut t = Typist::new(&[step("ready", "a\n"), step("again", "b")]).unwrap();
        assert_eq!(t.untyped(), Some((1, "ready")));
        assert_eq!(t.line("again"), None, "step 2 waits for step 1");
        assert_eq!(t.line("not yet"), None);
        assert_eq!(t.line("x ready y"), Some(b"a\n".to_vec()));
        assert_eq!(t.line("ready"), None, "step 1 types once");
        assert_eq!(t.untyped(), Some((2, "again")));
        assert_eq!(t.line("again and again"), Some(b"b".to_vec()));
        assert_eq!(t.line("again"), None);
        assert_eq!(t.untyped(), None);
    }

    #[test]
    fn one_line_triggers_one_step() {
        let mut t = Typist::new(&[step("go", "1"), step("go", "2")]).unwrap();
        assert_eq!(t.line("go"), Some(b"1".to_vec()));
        assert_eq!(t.line("go"), Some(b"2".to_vec()));
        assert_eq!(t.line("go"), None);
    }

    #[test]
    fn bad_regex_is_a_spec_error() {
        let e = Typist::new(&[step("ok", ""), step("(", "x")]).unwrap_err();
        assert!(e.starts_with("input step 2 has a bad regex \"(\""), "{e}");
    }

    #[derive(Default)]
    struct Lines(Vec<String>);

    impl LineSink for Lines {
        fn line(&mut self, line: &str) {
            self.0.push(line.into());
        }
    }

    #[test]
    fn typing_sends_text_and_passes_lines_on() {
        let typist = Typist::new(&[step("^prompt>", "hello\n"), step("never", "x")]).unwrap();
        let (mut sink, keyboard) = Typing::new(Lines::default(), typist);
        let rx = keyboard.take().unwrap();
        assert!(keyboard.take().is_none(), "one receiver");
        sink.line("boot");
        sink.line("prompt> ");
        sink.line("prompt> ");
        assert_eq!(rx.try_recv().unwrap(), b"hello\n");
        assert!(rx.try_recv().is_err());
        assert_eq!(sink.inner.0, ["boot", "prompt> ", "prompt> "]);
        assert_eq!(
            sink.untyped().unwrap(),
            "input step 2 never typed: no line matched \"never\""
        );
    }
}
