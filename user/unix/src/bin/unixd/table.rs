//! unixd's tables grow from its bank: each is a `Vec` in the heap
//! (`stet_rt::alloc`, pages bought by `heapkeeper` as it grows), so their
//! size follows the number of processes, files and waits, not a constant.
//! What bounds them is per process: its descriptors (`RLIMIT_NOFILE`), its
//! one call at a time, and the number of processes (`RLIMIT_NPROC`).

use alloc::vec::Vec;

/// The index of an entry that `free` says is free, or of a new one set to
/// `empty` at the end; `None` when the heap has no room for one more.
pub(crate) fn take<T>(v: &mut Vec<T>, free: impl Fn(&T) -> bool, empty: T) -> Option<usize> {
    if let Some(i) = v.iter().position(free) {
        return Some(i);
    }
    v.try_reserve(1).ok()?;
    v.push(empty);
    Some(v.len() - 1)
}
