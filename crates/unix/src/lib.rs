//! The UNIX personality's pure logic, host-tested (issue 7 builds the
//! personality on it): for now the Linux x86_64 process start-up ABI —
//! the initial stack a program finds at its entry point ([`stack`]).
#![no_std]
#![deny(unsafe_code)]

#[cfg(test)]
extern crate std;

pub mod stack;
