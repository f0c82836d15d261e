//! Order codes of the user-level services built from keys (issue 5): the
//! space bank. Their protocols are in docs/ABI.md, "User services".

/// A bank key (a forwarder to the space bank labelled with the bank).
pub mod bank {
    /// → key 0: a read-write key to a fresh zero page.
    pub const ALLOC_PAGE: u64 = 1;
    /// → key 0: a full key to a fresh node of void keys.
    pub const ALLOC_NODE: u64 = 2;
    /// Key 0: a key to an object this bank handed out → destroyed (every
    /// key to it becomes void). `BAD_VALUE` if the bank does not own it.
    pub const FREE: u64 = 3;
    /// `w0` page limit, `w1` node limit (`u64::MAX`: none) → key 0: a key
    /// to a new sub-bank. Its forwarder node counts against this bank.
    pub const CREATE_SUB: u64 = 4;
    /// Destroys this bank, its sub-banks and everything allocated through
    /// them; every key to them becomes void. The prime bank: `BAD_STATE`.
    pub const DESTROY: u64 = 5;
    /// → `w0` pages and `w1` nodes allocated through this bank and its
    /// sub-banks, `w2` page limit, `w3` node limit.
    pub const INFO: u64 = 6;
    /// Key 0: a key to a sub-bank (any depth) of this bank, `w0` page
    /// limit, `w1` node limit → set.
    pub const SET_LIMITS: u64 = 7;
    /// Key 0: any key → `w0` 1 if it is a live bank key of this space bank.
    pub const VERIFY: u64 = 8;
}
