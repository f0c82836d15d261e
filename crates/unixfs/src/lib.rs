//! The UNIX file-system domain's (`unixd`'s) tables, which grow from its
//! heap as files, names and shared pages do — sized by memory, not by
//! constants: names and inodes ([`fs`]), the shapes of regular files'
//! segment trees ([`forest`]), pages shared copy-on-write after `fork`
//! ([`share`]), record locks ([`locks`]), extended attributes ([`xattrs`]),
//! AF_UNIX sockets ([`sock`]), inotify's watches and queues ([`inotify`]), epoll's interest lists ([`epoll`]) and
//! pipes' buffers ([`pipe`]). Every growth is `try_reserve`d, so a full heap is an error
//! value (`ENOSPC`, or a page copied instead of shared), never a panic.
//!
//! A crate of its own because it needs `alloc`: every program that links
//! `alloc` must have a global allocator, and of the UNIX personality's
//! programs only unixd has one (`stet_rt::global_heap!`). The shapes the
//! keepers share (file types, limits, `struct stat`) stay in
//! `stet_unix::fs`.
#![no_std]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod epoll;
pub mod flocks;
pub mod forest;
pub mod fs;
pub mod inotify;
pub mod ipc;
pub mod keyrings;
pub mod locks;
pub mod pipe;
pub mod share;
pub mod sock;
pub mod xattrs;
