//! The x86_64 port: boot, descriptor tables, entry and exit paths, paging,
//! interrupt controller, FPU state and the serial console.
//!
//! Reading order for a newcomer: `boot.rs` (first instruction to Rust),
//! `start.rs` (bring-up order), `entry.rs` (every way into and out of the
//! kernel), then `paging.rs`.
#![allow(unsafe_code)]

pub mod apic;
pub mod boot;
pub mod bootinfo;
pub mod cpu;
pub mod crc32c;
pub mod entry;
pub mod fpu;
pub mod gdt;
pub mod idt;
pub mod ioapic;
pub mod kcell;
pub mod paging;
pub(in crate::arch) mod pci;
pub mod percpu;
pub mod phys;
pub mod pic;
pub mod qemu;
pub mod rtc;
pub mod scratch;
#[cfg(feature = "testing")]
pub mod selftest;
pub mod serial;
pub mod start;
pub mod virtio_blk;
