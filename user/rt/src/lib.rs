//! The user runtime every Stet program links: the `_start` entry point, the
//! system-call stubs, `print!`/`println!`, a panic handler, cycle counting
//! for benchmarks, and (for tests) deliberate faults.
//!
//! The `unsafe` code of user programs lives in the low-level modules here
//! (`sys`, `start`, `fault`, `cpu`); programs themselves deny it.
#![no_std]
#![deny(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod cpu;
pub mod fault;
pub mod io;
mod start;
pub mod sys;

pub use stet_abi as abi;

/// Declares the program's `main(arg: u64) -> i64`; its return value becomes
/// the exit code.
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
