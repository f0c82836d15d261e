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

/// The data store (`datastore`): names → keys and small blobs. A start
/// key with key info 1 may publish and delete; key info 0 may only look up.
pub mod store {
    /// Key info of a start key that may publish.
    pub const PUBLISHER: u8 = 1;
    /// Longest name in bytes.
    pub const MAX_NAME: usize = 32;
    /// Longest blob in bytes.
    pub const MAX_BLOB: usize = 128;
    /// Entries the store holds.
    pub const MAX_ENTRIES: usize = 128;
    /// String: name, a zero byte, the blob; key 0: the key to publish (may
    /// be void) → `w0` the entry's generation (1 for a new name, one more
    /// on each publish). Publishers only (`NO_RIGHTS`).
    pub const PUT: u64 = 1;
    /// String: name → key 0 the key, string the blob, `w0` generation.
    /// `BAD_VALUE` if there is no such name.
    pub const GET: u64 = 2;
    /// String: name → removed. Publishers only.
    pub const DELETE: u64 = 3;
    /// `w0` index → string the name of the index-th entry (in table order),
    /// `w0` its generation, `w1` the next index to ask for; `BAD_VALUE` past
    /// the end.
    pub const LIST: u64 = 4;
}
