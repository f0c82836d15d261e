//! The journal key (`stet_abi::order::journal`): commit one page to disk
//! now, so it survives a crash before the next checkpoint.

use crate::key::{Msg, Slot};
use stet_abi::{code::Code, order::journal as o};

/// Journals the page whose key is in `page` through the journal key in
/// `journal`; returns the record's sequence number once the page's
/// contents are durable. `Err(code)` is the kernel's result code
/// (`RESTARTED`: the system restarted meanwhile; ask again).
pub fn page(journal: Slot, page: Slot) -> Result<u64, u64> {
    let a = Msg::new(journal, o::PAGE).keys([page, 0, 0, 0]).call();
    if a.code == Code::Ok {
        Ok(a.w[0])
    } else {
        Err(a.code)
    }
}

/// Like [`page`], also returning what the record cost the kernel: `(seq,
/// ticks)` (TSC ticks the kernel spent on it, not counting waiting for the
/// disk).
pub fn page_cost(journal: Slot, page: Slot) -> Result<(u64, u64), u64> {
    let a = Msg::new(journal, o::PAGE).keys([page, 0, 0, 0]).call();
    if a.code == Code::Ok {
        Ok((a.w[0], a.w[1]))
    } else {
        Err(a.code)
    }
}

/// Like [`page`], asking again while the kernel answers `RESTARTED`.
pub fn page_retrying(journal: Slot, page_slot: Slot) -> Result<u64, u64> {
    loop {
        match page(journal, page_slot) {
            Err(c) if c == Code::Restarted => continue,
            r => return r,
        }
    }
}
