//! The user runtime every Stet program links: the `_start` entry point, key
//! invocation (`key`, over the raw `invoke`), typed wrappers for the
//! kernel's objects (`kernel`, `checkpoint`, `journal`), the heap as words
//! (`mem`), `print!`/`println!` through the console key, a panic handler,
//! cycle counting for benchmarks, and (for tests) deliberate faults.
//!
//! Drivers get port I/O (`port`), a 16550 UART (`uart`), their interrupt
//! (`irq`) and the console driver's client side (`consoled`).
//!
//! The `unsafe` code of user programs lives in the low-level modules here
//! (`invoke`, `start`, `fault`, `cpu`, `mem`, `alloc`, `port`, `uart`, `window`, `carry`,
//! `image`; docs/ARCHITECTURE.md says why each is sound); programs
//! themselves deny it.
#![no_std]

pub mod alloc;
pub mod bank;
pub mod bench;
pub mod carry;
pub mod checkpoint;
pub mod checks;
pub mod consoled;
pub mod cpu;
pub mod fault;
pub mod image;
pub mod invoke;
pub mod io;
pub mod irq;
pub mod journal;
pub mod kernel;
pub mod key;
pub mod mem;
pub mod port;
pub mod service;
pub mod start;
pub mod supervised;
pub mod uart;
pub mod window;

pub use stet_abi as abi;

/// Declares the program's `main(arg: u64) -> i64`. When it returns the
/// domain becomes available and stays idle (it has nothing more to do).
#[macro_export]
macro_rules! main {
    ($f:path) => {
        #[allow(unsafe_code)]
        #[unsafe(export_name = "__stet_main")]
        extern "C" fn __stet_main(arg: u64) -> i64 {
            $f(arg)
        }
    };
}
