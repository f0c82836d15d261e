//! The UNIX personality's pure logic, host-tested: the Linux x86_64
//! system-call ABI ([`sys`]) and every call's name ([`sysnames`]), the
//! process layout ([`layout`]), the loader's plan for an executable
//! ([`elf`]), the initial stack ([`stack`]), a
//! process's memory map ([`vm`]) and the keeper's shadow of its
//! address-space tree ([`shadow`]), a pipe's byte ring ([`ring`]), the
//! file system's shapes ([`fs`]), and what describes the system: `/proc`'s
//! generated text ([`procgen`], [`cpuinfo`], [`loadavg`]) and the kernel
//! log ([`klog`]). The UNIX keeper (`user/unix`,
//! `unixkeeper`) is a thin layer of invocations over these. Nothing here
//! allocates (every program of the personality links it, and only unixd
//! has a heap): unixd's growing tables are `stet-unixfs`.
#![no_std]

#[cfg(test)]
extern crate std;

pub mod clockid;
pub mod coredump;
pub mod cpio;
pub mod cpuinfo;
pub mod cred;
pub mod elf;
pub mod fs;
pub mod futexq;
pub mod keyctl;
pub mod klog;
pub mod layout;
pub mod loadavg;
pub mod maps;
pub mod procgen;
pub mod proto;
pub mod ptrace;
pub mod ring;
pub mod sched;
pub mod shadow;
pub mod stack;
pub mod sys;
pub mod sysnames;
pub mod sysv;
pub mod timex;
pub mod tty;
pub mod vm;
