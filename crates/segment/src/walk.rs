//! The walk: from an entry key and a byte address down to a page, or to the
//! reason there is none and the keeper to tell.
//!
//! Order of checks at each key, so that every reference has one answer:
//!
//! 1. The key's type and size, from the key alone: void is
//!    [`why::NOT_PRESENT`]; a page key covers one page and a segment key
//!    16^`lss` pages, and an address beyond that is [`why::OUT_OF_RANGE`]
//!    whatever the key designates (no lookup is made); a segment key too big
//!    for its slot, or any other type, is [`why::MALFORMED`].
//! 2. The object: a node or page that no longer exists is
//!    [`why::NOT_PRESENT`], like a void slot.
//! 3. For a node: `visit` is called, the node becomes a keeper candidate if
//!    it is red, and in a red node slot 15 is [`why::OUT_OF_RANGE`].
//! 4. For a page: the access against the accumulated rights
//!    ([`why::PROTECTION`]).
//!
//! A failure is reported to the keeper of the innermost eligible red node
//! *entered* (step 3). A key whose range is too small, or whose object is
//! gone, is therefore reported to the keeper of the segment that holds the
//! key, not to a keeper inside it: that is the segment that can fix it.

use crate::{
    size_pages, Access, Found, Invalid, Keeper, Leaf, Store, MAX_DEPTH, MAX_STEPS, PAGE_SHIFT,
};
use stet_abi::fault::why;
use stet_keys::{rights, Key, KeyType, MAX_LSS};

/// The slot of a red node that holds its keeper.
const KEEPER_SLOT: usize = 15;

/// A red node whose keeper is eligible by rights (no `NOCALL` on the path
/// down to it).
#[derive(Clone, Copy)]
struct Red {
    /// The key that designated the node.
    segment: Key,
    /// The address relative to that segment, in bytes.
    offset: u64,
}

/// The red nodes entered so far whose keepers are eligible by rights,
/// outermost first.
struct Reds {
    list: [Red; MAX_DEPTH as usize],
    len: usize,
}

impl Reds {
    fn new() -> Reds {
        Reds {
            list: [Red {
                segment: Key::VOID,
                offset: 0,
            }; MAX_DEPTH as usize],
            len: 0,
        }
    }

    fn push(&mut self, red: Red) {
        if let Some(place) = self.list.get_mut(self.len) {
            *place = red;
            self.len += 1;
        }
    }

    /// The innermost candidate whose slot 15 holds a start key.
    fn keeper<S: Store>(&self, store: &mut S) -> Option<Keeper> {
        self.list[..self.len].iter().rev().find_map(|red| {
            let start = store.slot(red.segment, KEEPER_SLOT)?;
            (start.key_type() == KeyType::Start).then_some(Keeper {
                start,
                segment: red.segment,
                offset: red.offset,
            })
        })
    }

    fn fail<S: Store>(&self, store: &mut S, why: u64, depth: u8) -> Invalid {
        Invalid {
            why,
            keeper: self.keeper(store),
            depth,
        }
    }
}

/// Step 1 for `key`, standing where segment keys may have size code at most
/// `max_lss`, at address `rel` relative to its start: `Err(why)` if the
/// reference cannot go through it.
fn admit(key: Key, rel: u64, max_lss: u8) -> Result<(), u64> {
    let page = rel >> PAGE_SHIFT;
    match key.key_type() {
        KeyType::Void => Err(why::NOT_PRESENT),
        KeyType::Page if page == 0 => Ok(()),
        KeyType::Page => Err(why::OUT_OF_RANGE),
        KeyType::Segment => {
            let lss = key.lss();
            if lss == 0 || lss > max_lss {
                Err(why::MALFORMED)
            } else if page >= size_pages(lss) {
                Err(why::OUT_OF_RANGE)
            } else {
                Ok(())
            }
        }
        _ => Err(why::MALFORMED),
    }
}

/// Whether `access` is allowed to a page reached with the path's rights.
/// Writable pages are mapped non-executable, read-only pages executable.
fn allowed(access: Access, writable: bool) -> bool {
    match access {
        Access::Read => true,
        Access::Write => writable,
        Access::Execute => !writable,
    }
}

/// Translates byte address `addr` through the segment or page key `entry`
/// for `access`. `visit` is called with the key designating each node the
/// walk passes through, root first, whether or not the walk then succeeds
/// (the kernel marks those nodes as used by a hardware mapping). At most
/// [`MAX_DEPTH`] nodes are visited; the walk is a loop, without recursion
/// or allocation. On failure the walk also reads slot 15 of red nodes it
/// visited, innermost first, to find the keeper.
///
/// On success the page may be mapped writable (and then non-executable) if
/// no key on the path is read-only, else read-only and executable; an
/// instruction fetch from a page reached read-write is a
/// [`why::PROTECTION`] fault, like a write to a read-only one.
pub fn walk<S: Store>(
    store: &mut S,
    entry: Key,
    addr: u64,
    access: Access,
    visit: &mut impl FnMut(Key),
) -> Result<Found, Invalid> {
    let mut reds = Reds::new();
    let mut depth = 0u8;
    let mut key = entry;
    let mut rel = addr;
    let mut max_lss = MAX_LSS;
    let mut ro = false;
    let mut nocall = false;
    let mut leaf = None;
    // Each node lowers `max_lss` by at least one, from at most MAX_LSS; with
    // `max_lss` 0 only a page key is admitted, and a page ends the walk.
    for _ in 0..MAX_STEPS {
        if let Err(why) = admit(key, rel, max_lss) {
            return Err(reds.fail(store, why, depth));
        }
        ro |= key.is_ro();
        nocall |= key.rights() & rights::NOCALL != 0;
        if key.key_type() == KeyType::Page {
            if !store.page_exists(key) {
                return Err(reds.fail(store, why::NOT_PRESENT, depth));
            }
            if !allowed(access, !ro) {
                return Err(reds.fail(store, why::PROTECTION, depth));
            }
            return Ok(Found {
                page: key,
                writable: !ro,
                executable: ro,
                depth,
                leaf,
            });
        }
        // An admitted segment key: 1 <= lss <= max_lss, and `rel` is below
        // 16^lss pages, so the slot index is below 16.
        let lss = key.lss();
        let shift = 4 * (lss as u32 - 1) + PAGE_SHIFT;
        let slot = (rel >> shift) as usize;
        let Some(child) = store.slot(key, slot) else {
            return Err(reds.fail(store, why::NOT_PRESENT, depth));
        };
        visit(key);
        depth += 1;
        let red = key.rights() & rights::KEEPER != 0;
        if red && !nocall {
            reds.push(Red {
                segment: key,
                offset: rel,
            });
        }
        if red && slot == KEEPER_SLOT {
            return Err(reds.fail(store, why::OUT_OF_RANGE, depth));
        }
        if lss == 1 {
            leaf = Some(Leaf { node: key, ro, red });
        }
        key = child;
        rel &= (1 << shift) - 1;
        max_lss = lss - 1;
    }
    // Not reached (see above); answer as for a tree that cannot be a segment.
    Err(reds.fail(store, why::MALFORMED, depth))
}
