//! The factory (KeyKOS's constructor), as pure logic.
//!
//! The factory server (`user/services/src/bin/factory.rs`) builds domains
//! of one kind — *products* — from a program template, a set of component
//! keys and storage and a meter the requester supplies, and tells anyone
//! whether its products are **discreet** (confined: unable to pass
//! anything to anyone but their requester). This crate holds everything
//! in it that is not a key invocation, so that it can be tested on the
//! host:
//!
//! * [`plan`]: the product's address space — which pages come from where
//!   (shared read-only text, copied data, fresh stack) and the smallest
//!   segment tree over them (the image builder's rule, docs/IMAGE.md), as a
//!   sequence of build steps; and the path to any page in a template built
//!   by the same rule.
//! * [`discreet`]: the discreetness rule — which keys are discreet, and a
//!   sealed factory's verdict from its components'.
//! * [`books`]: the server's records (one per factory) and its index from
//!   a requestor key's node to its factory, in an array of words (the
//!   server's heap, persistent like all memory); where each factory's
//!   nodes sit in the server's directory tree.
//!
//! The protocol is in docs/ABI.md, "User services"; order codes in
//! `stet_abi::service::factory`.
#![no_std]

#[cfg(test)]
extern crate std;

pub mod books;
pub mod discreet;
pub mod plan;

#[cfg(test)]
mod tests;
