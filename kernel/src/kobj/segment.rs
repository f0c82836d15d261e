//! Segment keys: reading and writing a segment's memory by offset (what a
//! file system or a loader needs without mapping it), its size, weaker
//! keys, its slots (always diminished) and the page at an offset. No keeper is invoked from
//! here: an invalid offset is the invoker's error (`INVALID_ADDRESS`).

use super::{node, Reply};
use crate::arch::phys;
use crate::invoke::message::Msg;
use crate::kernel::Kernel;
use crate::memory;
use crate::obj::SLOTS;
use stet_abi::code::Code;
use stet_abi::order::segment as o;
use stet_keys::{rights, Key};
use stet_segment::Access;

const PAGE: u64 = 4096;

/// Carries out a segment order.
pub fn order(k: &mut Kernel, key: Key, m: &Msg, s: &[u8], r: &mut Reply, out: &mut [u8; 4096]) {
    if let Err(c) = run(k, key, m, s, r, out) {
        r.fail(c);
    }
}

fn run(
    k: &mut Kernel,
    key: Key,
    m: &Msg,
    s: &[u8],
    r: &mut Reply,
    out: &mut [u8; 4096],
) -> Result<(), Code> {
    if k.node_of(key).is_err() {
        return Err(Code::Void);
    }
    match m.order {
        o::READ => {
            let (off, len) = (m.w[0], m.w[1] as usize);
            if len > PAGE as usize {
                return Err(Code::BadValue);
            }
            copy(k, key, off, Data::Into(&mut out[..len]))?;
            r.len = len;
        }
        o::WRITE => {
            if key.is_ro() {
                return Err(Code::NoRights);
            }
            copy(k, key, m.w[0], Data::From(s))?;
        }
        o::INFO => {
            let lss = key.lss() as u64;
            r.w = [
                lss,
                stet_segment::size_bytes(key.lss()).unwrap_or(0),
                key.rights() as u64,
                0,
            ];
        }
        o::RESTRICT => {
            let add = m.w[0] as u8 & (rights::RO | rights::WEAK | rights::NOCALL);
            if m.w[0] > 0xff {
                return Err(Code::BadValue);
            }
            r.keys[0] = key.canonical().restrict(add);
        }
        o::PROBE => match memory::segment_frame(k, key, m.w[0], Access::Read) {
            Ok((_, w)) => r.w = [1, w as u64, 0, 0],
            Err(_) => r.w = [0, 0, 0, 0],
        },
        o::FETCH => {
            if m.w[0] >= SLOTS as u64 {
                return Err(Code::SlotRange);
            }
            let i = k.node_of(key).map_err(|_| Code::Void)?;
            node::before_read(k, i);
            // Always diminished, whatever the key's rights: a segment key
            // conveys reading its memory, and a diminished key conveys no
            // more (the keeper in a red node's slot 15 becomes void).
            r.keys[0] = k.objs.node_entry(i).keys[m.w[0] as usize]
                .canonical()
                .diminish();
        }
        o::PAGE_KEY => {
            let found = memory::segment_walk(k, key, m.w[0], Access::Read)
                .map_err(|_| Code::InvalidAddress)?;
            // Read-only, as FETCH's diminished keys down the tree give it.
            r.keys[0] = found.page.canonical().diminish();
        }
        _ => return Err(Code::NoSuchOrder),
    }
    Ok(())
}

/// Which way [`copy`] moves bytes.
enum Data<'a> {
    /// Read the segment into this buffer.
    Into(&'a mut [u8]),
    /// Write these bytes into the segment.
    From(&'a [u8]),
}

/// Reads or writes at offset `off` of the segment. Checks every page
/// before writing any (atomic).
fn copy(k: &mut Kernel, key: Key, off: u64, mut data: Data<'_>) -> Result<(), Code> {
    let (write, total) = match &data {
        Data::Into(b) => (false, b.len()),
        Data::From(b) => (true, b.len()),
    };
    let access = if write { Access::Write } else { Access::Read };
    let mut frames = [(0usize, 0usize, None); 2];
    let mut done = 0;
    let mut n = 0;
    while done < total {
        let a = off.checked_add(done as u64).ok_or(Code::InvalidAddress)?;
        let (f, _) = memory::segment_frame(k, key, a, access).map_err(|_| Code::InvalidAddress)?;
        let po = (a % PAGE) as usize;
        let len = (PAGE as usize - po).min(total - done);
        frames[n] = (po, len, Some(f));
        n += 1;
        done += len;
    }
    let mut at = 0;
    for (po, len, f) in frames.iter().take(n) {
        let f = f.ok_or(Code::InvalidAddress)?;
        match &mut data {
            Data::From(b) => phys::write_frame(f, *po, &b[at..at + len]),
            Data::Into(b) => phys::read_frame(f, *po, &mut b[at..at + len]),
        }
        at += len;
    }
    Ok(())
}
