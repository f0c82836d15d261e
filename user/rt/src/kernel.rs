//! Small wrappers for the kernel services every program uses, at the slots
//! the image builder's shorthand gives them: console in slot 1, sleep in
//! slot 2, discrim in slot 3 (a program given other keys can move the
//! console with [`set_console`]).

use crate::key::{call, wait, Msg, Slot};
use core::sync::atomic::{AtomicU8, Ordering};
use stet_abi::order;

/// Slot of the console key in the shorthand layout.
pub const CONSOLE: Slot = 1;
/// Slot of the sleep key in the shorthand layout.
pub const SLEEP: Slot = 2;
/// Slot of the discrim key in the shorthand layout.
pub const DISCRIM: Slot = 3;

static CONSOLE_SLOT: AtomicU8 = AtomicU8::new(CONSOLE);

/// Where `print!` finds the console key.
pub fn set_console(s: Slot) {
    CONSOLE_SLOT.store(s, Ordering::Relaxed);
}

/// Prints bytes through the console key.
pub fn console_write(b: &[u8]) {
    let s = CONSOLE_SLOT.load(Ordering::Relaxed);
    for chunk in b.chunks(stet_abi::MAX_STRING) {
        Msg::new(s, order::console::WRITE).string(chunk).call();
    }
}

/// Nanoseconds since boot.
pub fn now_ns() -> u64 {
    call(SLEEP, order::sleep::NOW, [0; 4]).w[0]
}

/// Waits until `t` (ns since boot).
pub fn sleep_until(t: u64) {
    call(SLEEP, order::sleep::UNTIL, [t, 0, 0, 0]);
}

/// Gives the rest of the time slice to other domains.
pub fn yield_now() {
    call(SLEEP, order::sleep::YIELD, [0; 4]);
}

/// The end of a program: it becomes available and ignores every message.
pub fn exit(_code: i64) -> ! {
    loop {
        wait([0; 4], 0, &mut []);
    }
}
