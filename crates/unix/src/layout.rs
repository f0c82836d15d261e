//! Where things are in a UNIX process's address space, and where its
//! keeper sees that space in its own.
//!
//! A process's space is a segment of size code [`SPACE_LSS`] (16^6 pages,
//! 64 GiB): every Linux program we run fits, and the tree under it is six
//! nodes deep, not nine. Its keeper holds the same segment in a slot of its
//! own address-space root, at [`WINDOW`], so it reads and writes the
//! process's memory with plain loads and stores (KeyNIX: "maps the segment
//! into the keeper address space") rather than one invocation per copy.

/// Page size.
pub const PAGE: u64 = 4096;
/// Size code of a process's address-space segment.
pub const SPACE_LSS: u8 = 6;
/// One past the highest process address.
pub const USER_END: u64 = 1 << (12 + 4 * SPACE_LSS as u64);
/// Lowest address a program may use (Linux's default `mmap_min_addr`).
pub const USER_MIN: u64 = 0x1_0000;
/// Where a static-PIE program's address 0 is placed: the start of a root
/// slot, so a small program's pages hang under one node (`shadow`).
pub const PIE_BASE: u64 = 0x5_0000_0000;
/// Top of the initial stack (16-aligned): 64 KiB into root slot 15, so a
/// stack of up to 64 KiB is one node right under the root (`shadow`
/// places a node at the start of a slot's span; a deeper stack grows into
/// the top of slot 14).
pub const STACK_TOP: u64 = 0xf_0001_0000;
/// How far the stack may grow (Linux's default `RLIMIT_STACK`, 8 MiB).
pub const STACK_MAX: u64 = 8 << 20;
/// The gap a `MAP_GROWSDOWN` range keeps above the range below it when it
/// grows (Linux's default `stack_guard_gap`, 256 pages).
pub const STACK_GUARD_GAP: u64 = 256 * PAGE;
/// `mmap` places mappings top-down from here (well below the lowest
/// stack).
pub const MMAP_TOP: u64 = 0xe_0000_0000;

/// In the keeper's space: root slot 2 holds the process's space.
pub const WINDOW_SLOT: u64 = 2;
/// The process's address 0 as the keeper sees it.
pub const WINDOW: u64 = WINDOW_SLOT << 44;
/// In the keeper's space: root slot 3 holds the file being executed.
pub const EXEC_SLOT: u64 = 3;
/// Byte 0 of the file being executed as the keeper sees it.
pub const EXEC_WINDOW: u64 = EXEC_SLOT << 44;
/// In the keeper's space: root slot 4 holds the page the keeper writes
/// its process's sleepers in (`proto::STATUS_PAGE`), once it has threads.
pub const STATUS_SLOT: u64 = 4;
/// In the keeper's space: root slot 5 holds discrim, which `fork` needs
/// to walk the keeper's own tree; general slot 3, where the image puts it,
/// takes resume keys (`unixkeeper`'s `slots::RESUME2`).
pub const DISCRIM_SLOT: u64 = 5;
/// Size code of a file's segment (16^7 pages: files up to 1 TiB).
pub const FILE_LSS: u8 = 7;
