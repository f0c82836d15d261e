//! The kernel key retention service's numbers (`keyctl(2)`, `add_key(2)`,
//! `request_key(2)`, `keyrings(7)`): `keyctl`'s operations, the special
//! keyring ids, `KEY_REQKEY_DEFL_*`, the permission bits and the limits
//! Linux puts on types, descriptions and payloads. Shared by the keeper
//! (which checks and copies what the process passes) and unixd (which
//! keeps the keys, `stet_unixfs::keyrings`).

/// `keyctl`'s operations (`KEYCTL_*`).
#[allow(missing_docs)]
pub mod op {
    pub const GET_KEYRING_ID: u64 = 0;
    pub const JOIN_SESSION_KEYRING: u64 = 1;
    pub const UPDATE: u64 = 2;
    pub const REVOKE: u64 = 3;
    pub const CHOWN: u64 = 4;
    pub const SETPERM: u64 = 5;
    pub const DESCRIBE: u64 = 6;
    pub const CLEAR: u64 = 7;
    pub const LINK: u64 = 8;
    pub const UNLINK: u64 = 9;
    pub const SEARCH: u64 = 10;
    pub const READ: u64 = 11;
    pub const INSTANTIATE: u64 = 12;
    pub const NEGATE: u64 = 13;
    pub const SET_REQKEY_KEYRING: u64 = 14;
    pub const SET_TIMEOUT: u64 = 15;
    pub const ASSUME_AUTHORITY: u64 = 16;
    pub const GET_SECURITY: u64 = 17;
    pub const SESSION_TO_PARENT: u64 = 18;
    pub const REJECT: u64 = 19;
    pub const INSTANTIATE_IOV: u64 = 20;
    pub const INVALIDATE: u64 = 21;
    pub const GET_PERSISTENT: u64 = 22;
    /// Not a `keyctl` operation: `add_key` as an order to unixd.
    pub const ADD_KEY: u64 = 100;
    /// Not a `keyctl` operation: `request_key` as an order to unixd.
    pub const REQUEST_KEY: u64 = 101;
}

/// The special keyring ids (`KEY_SPEC_*`).
#[allow(missing_docs)]
pub mod spec {
    pub const THREAD_KEYRING: i32 = -1;
    pub const PROCESS_KEYRING: i32 = -2;
    pub const SESSION_KEYRING: i32 = -3;
    pub const USER_KEYRING: i32 = -4;
    pub const USER_SESSION_KEYRING: i32 = -5;
    pub const GROUP_KEYRING: i32 = -6;
    pub const REQKEY_AUTH_KEY: i32 = -7;
    pub const REQUESTOR_KEYRING: i32 = -8;
}

/// `KEYCTL_SET_REQKEY_KEYRING`'s settings (`KEY_REQKEY_DEFL_*`).
#[allow(missing_docs)]
pub mod reqkey {
    pub const NO_CHANGE: i32 = -1;
    pub const DEFAULT: i32 = 0;
    pub const THREAD_KEYRING: i32 = 1;
    pub const PROCESS_KEYRING: i32 = 2;
    pub const SESSION_KEYRING: i32 = 3;
    pub const USER_KEYRING: i32 = 4;
    pub const USER_SESSION_KEYRING: i32 = 5;
    pub const GROUP_KEYRING: i32 = 6;
    pub const REQUESTOR_KEYRING: i32 = 7;
}

/// Permission bits (`KEY_POS_*`, `KEY_USR_*`, `KEY_GRP_*`, `KEY_OTH_*`):
/// one byte each for the possessor (<< 24), the owner (<< 16), the group
/// (<< 8) and others.
#[allow(missing_docs)]
pub mod perm {
    pub const VIEW: u32 = 0x01;
    pub const READ: u32 = 0x02;
    pub const WRITE: u32 = 0x04;
    pub const SEARCH: u32 = 0x08;
    pub const LINK: u32 = 0x10;
    pub const SETATTR: u32 = 0x20;
    pub const ALL: u32 = 0x3f;
    pub const POS: u32 = 24;
    pub const USR: u32 = 16;
    pub const GRP: u32 = 8;
}

/// A type name's buffer, its NUL included (`key_get_type_from_user`).
pub const TYPE_MAX: usize = 32;
/// A description's most bytes, its NUL included (`KEY_MAX_DESC_SIZE`).
pub const DESC_MAX: usize = 4096;
/// `add_key`'s largest payload (1 MiB less a byte).
pub const ADD_PAYLOAD_MAX: usize = 1024 * 1024 - 1;
/// A `user` or `logon` key's largest payload.
pub const USER_PAYLOAD_MAX: usize = 32767;
/// `KEYCTL_UPDATE`'s largest payload (a page).
pub const UPDATE_PAYLOAD_MAX: usize = 4096;
/// How deep a search goes into nested keyrings
/// (`KEYRING_SEARCH_MAX_DEPTH`).
pub const SEARCH_DEPTH: usize = 6;
