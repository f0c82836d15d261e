//! Segment sizes: a size code `lss` means 16^`lss` pages. Computed with
//! shifts, saturating or refusing where the result would not fit in a u64.

/// log2 of the page size.
pub const PAGE_SHIFT: u32 = 12;
/// Bytes in a page.
pub const PAGE_SIZE: u64 = 1 << PAGE_SHIFT;

/// Pages covered by a segment of size code `lss`: 16^`lss`. Saturates at
/// `u64::MAX` for `lss` ≥ 16 (never a valid size code; the largest is
/// [`stet_keys::MAX_LSS`]).
pub fn size_pages(lss: u8) -> u64 {
    if lss >= 16 {
        u64::MAX
    } else {
        1 << (4 * lss as u32)
    }
}

/// Bytes covered by a segment of size code `lss`: 16^`lss` · 4096, or `None`
/// if that does not fit in a u64 (`lss` ≥ 13). The largest valid size code,
/// 10, covers 2^52 bytes.
pub fn size_bytes(lss: u8) -> Option<u64> {
    let shift = 4 * lss as u32 + PAGE_SHIFT;
    (shift < 64).then(|| 1 << shift)
}

/// Pages covered by one slot of a node whose designating key has size code
/// `lss`: 16^(`lss`-1). No node has size code 0; `slot_span(0)` is 0.
pub fn slot_span(lss: u8) -> u64 {
    match lss {
        0 => 0,
        l => size_pages(l - 1),
    }
}

/// The smallest size code ≥ 1 whose segment covers `pages` pages. The
/// result exceeds [`stet_keys::MAX_LSS`] when `pages` > 16^10; builders must
/// check it (it is at most 16).
pub fn min_lss_for(pages: u64) -> u8 {
    let mut lss = 1;
    while size_pages(lss) < pages {
        lss += 1;
    }
    lss
}
