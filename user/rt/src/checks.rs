//! What the user-level test programs share: an exact check that prints
//! `<program>: <what>: ok`, or `… WRONG (got …, want …)` and counts a
//! failure. The system test specs expect the `ok` lines and forbid
//! `WRONG`, so a test program needs no logic of its own for this.

use core::fmt::{Debug, Display};
use core::sync::atomic::{AtomicU32, Ordering};

use crate::println;

/// One program's checks (a `static`, so every function can check).
pub struct Checks {
    program: &'static str,
    fails: AtomicU32,
}

impl Checks {
    /// Checks printed under `program`'s name.
    pub const fn new(program: &'static str) -> Checks {
        Checks {
            program,
            fails: AtomicU32::new(0),
        }
    }

    /// Prints whether `got` is `want`; counts it if not. → whether it is.
    /// (`got` and `want` may differ in type: a delivered `u64` result code
    /// and the kernel's `Code`.)
    pub fn eq<G: PartialEq<W> + Debug, W: Debug>(
        &self,
        what: impl Display,
        got: G,
        want: W,
    ) -> bool {
        if got == want {
            println!("{}: {what}: ok", self.program);
            true
        } else {
            self.fail(format_args!("{what}: WRONG (got {got:?}, want {want:?})"));
            false
        }
    }

    /// Prints a failure found some other way, and counts it.
    pub fn fail(&self, why: impl Display) {
        self.fails.fetch_add(1, Ordering::Relaxed);
        println!("{}: {why}", self.program);
    }

    /// Failures so far.
    pub fn failures(&self) -> u32 {
        self.fails.load(Ordering::Relaxed)
    }
}
