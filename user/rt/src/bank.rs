//! A client of the space bank (`stet_abi::service::bank`): allocate and
//! free pages and nodes, make and destroy sub-banks. Errors are result
//! codes; `LIMIT` means the bank (or one above it) is used up.

use crate::key::{Msg, Slot};
use stet_abi::{code::Code, service::bank as o};

fn ok(code: u64) -> Result<(), u64> {
    if code == Code::Ok {
        Ok(())
    } else {
        Err(code)
    }
}

/// A fresh read-write page key into slot `into`.
pub fn alloc_page(bank: Slot, into: Slot) -> Result<(), u64> {
    ok(Msg::new(bank, o::ALLOC_PAGE)
        .recv([into, 0, 0, 0])
        .call()
        .code)
}

/// A fresh full node key into slot `into`.
pub fn alloc_node(bank: Slot, into: Slot) -> Result<(), u64> {
    ok(Msg::new(bank, o::ALLOC_NODE)
        .recv([into, 0, 0, 0])
        .call()
        .code)
}

/// `count` (1 to 16) fresh read-write page keys into slots `first..` of
/// the node whose key is in `node`: all or none.
pub fn alloc_pages_into(bank: Slot, node: Slot, first: u64, count: u64) -> Result<(), u64> {
    ok(Msg::new(bank, o::ALLOC_PAGES_INTO)
        .words([first, count, 0, 0])
        .keys([node, 0, 0, 0])
        .call()
        .code)
}

/// Destroys the object the key in `obj` designates (the bank must own it).
pub fn free(bank: Slot, obj: Slot) -> Result<(), u64> {
    ok(Msg::new(bank, o::FREE).keys([obj, 0, 0, 0]).call().code)
}

/// A new sub-bank with these limits (`u64::MAX`: none) into slot `into`.
pub fn create_sub(bank: Slot, pages: u64, nodes: u64, into: Slot) -> Result<(), u64> {
    let a = Msg::new(bank, o::CREATE_SUB)
        .words([pages, nodes, 0, 0])
        .recv([into, 0, 0, 0])
        .call();
    ok(a.code)
}

/// Destroys the bank, its sub-banks and all they allocated.
pub fn destroy(bank: Slot) -> Result<(), u64> {
    ok(Msg::new(bank, o::DESTROY).call().code)
}

/// A bank's accounts: (pages used, nodes used, page limit, node limit).
pub fn info(bank: Slot) -> Result<[u64; 4], u64> {
    let a = Msg::new(bank, o::INFO).call();
    ok(a.code).map(|_| a.w)
}

/// The space bank's size: (pages, nodes it can hand out; pages, nodes
/// allocated now).
pub fn capacity(bank: Slot) -> Result<[u64; 4], u64> {
    let a = Msg::new(bank, o::CAPACITY).call();
    ok(a.code).map(|_| a.w)
}

/// Sets the limits of the sub-bank in `sub`.
pub fn set_limits(bank: Slot, sub: Slot, pages: u64, nodes: u64) -> Result<(), u64> {
    let a = Msg::new(bank, o::SET_LIMITS)
        .words([pages, nodes, 0, 0])
        .keys([sub, 0, 0, 0])
        .call();
    ok(a.code)
}

/// Whether the key in `key` is a live bank key of the bank service.
pub fn verify(bank: Slot, key: Slot) -> Result<bool, u64> {
    let a = Msg::new(bank, o::VERIFY).keys([key, 0, 0, 0]).call();
    ok(a.code).map(|_| a.w[0] == 1)
}

/// The identity of the page or node in `key` (allocated through `bank` or
/// a sub-bank) → its index; a full key to it lands in `into`.
pub fn identify(bank: Slot, key: Slot, into: Slot) -> Result<u64, u64> {
    let a = Msg::new(bank, o::IDENTIFY)
        .keys([key, 0, 0, 0])
        .recv([into, 0, 0, 0])
        .call();
    ok(a.code).map(|_| a.w[0])
}
