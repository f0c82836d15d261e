//! The segment keeper of a server's growing heap (`stet_rt::alloc`): each
//! first touch of a page in the heap's area gets fresh zero pages from the
//! server's space bank, sixteen at a time (one leaf node), and the server
//! runs on. So the server's tables take memory from its bank as they grow,
//! and only as much as they reach; the bank's limit is the server's. Any
//! other invalid reference is refused with a line, and the server stays
//! stopped, as it would without a keeper.
//!
//! The tree under root slot 1 is four levels of nodes (a short subtree of
//! size code 4: 65,536 pages, more than `HEAP_SIZE`); the keeper keeps a
//! node key to each node it made in a key directory (`keydir`), entry
//! numbers fixed by the node's place, so it needs no map.
//!
//! When the bank has no page left the server stays stopped on its touch and
//! the keeper says so: a server's bank must be one that its clients cannot
//! empty (docs/UNIX.md says which banks unixd and the processes use).
//!
//! Keys: 1 console, 2 node key to the server's address-space root, 3 the
//! bank, 4 the key directory's root (a fresh node). Slots 5–7 scratch, 11
//! the segment key of a fault, 12 its resume key.
#![no_std]
#![no_main]

use stet_rt::abi::code::Code;
use stet_rt::abi::fault;
use stet_rt::abi::layout::{HEAP_SIZE, HEAP_START};
use stet_rt::abi::order::node;
use stet_rt::bank;
use stet_rt::key::{wait, Msg, Slot};
use stet_rt::println;
use stet_unix_personality::keydir::{self, swap, KeyDir};

const ROOT: Slot = 2;
const BANK: Slot = 3;
const DIR: Slot = 4;
const SCRATCH: Slot = 5;
const CACHE: Slot = 6;
const T: Slot = 7;
const SEGMENT: Slot = 11;
const RESUME: Slot = 12;

/// The root slot the heap's area is (`HEAP_START >> 44`).
const HEAP_SLOT: u64 = HEAP_START >> 44;
/// Size code of the subtree in that slot.
const TOP_LSS: u8 = 4;
/// Pages of the heap's area.
const PAGES: u64 = HEAP_SIZE / 4096;
/// Nodes of each size code: 1 (leaves) to 4.
const COUNT: [u64; 5] = [
    0,
    PAGES.div_ceil(16),
    PAGES.div_ceil(256),
    PAGES.div_ceil(4096),
    1,
];

/// The key-directory entry of the size-`lss` node over heap page `page`.
fn entry(lss: u8, page: u64) -> u16 {
    let before: u64 = COUNT[1..lss as usize].iter().sum();
    (before + (page >> (4 * lss as u64))) as u16
}

const ENTRIES: usize = (COUNT[1] + COUNT[2] + COUNT[3] + COUNT[4]) as usize;
const _: () = assert!(ENTRIES <= keydir::CAPACITY && PAGES <= 1 << (4 * TOP_LSS as u64));

struct Keeper {
    dir: KeyDir,
    made: [bool; ENTRIES],
    pages: u64,
}

fn ok(c: u64) -> Result<(), u64> {
    if c == Code::Ok {
        Ok(())
    } else {
        Err(c)
    }
}

impl Keeper {
    /// Makes sure the nodes down to the leaf over `page` exist, and fills a
    /// new leaf with fresh pages.
    fn grow(&mut self, page: u64) -> Result<(), u64> {
        for lss in (1..=TOP_LSS).rev() {
            let e = entry(lss, page);
            if self.made[e as usize] {
                continue;
            }
            bank::alloc_node(BANK, T)?;
            self.dir.put(e, T)?;
            self.dir.get(e, T)?;
            ok(Msg::new(T, node::MAKE_SEGMENT)
                .words([lss as u64, 0, 0, 0])
                .recv([T, 0, 0, 0])
                .call()
                .code)?;
            if lss == TOP_LSS {
                swap(ROOT, HEAP_SLOT, T, 0)?;
            } else {
                let parent = self.dir.cached(entry(lss + 1, page))?;
                swap(parent, (page >> (4 * lss as u64)) & 15, T, 0)?;
            }
            self.made[e as usize] = true;
            if lss == 1 {
                let leaf = self.dir.cached(e)?;
                let n = 16.min(PAGES - (page & !15));
                bank::alloc_pages_into(BANK, leaf, 0, n)?;
                self.pages += n;
            }
        }
        Ok(())
    }
}

fn main(_arg: u64) -> i64 {
    let mut k = Keeper {
        dir: KeyDir::new(keydir::Slots {
            root: DIR,
            bank: BANK,
            scratch: SCRATCH,
            cache: CACHE,
        }),
        made: [false; ENTRIES],
        pages: 0,
    };
    let mut a = wait([SEGMENT, 0, 0, 0], RESUME, &mut []);
    loop {
        let addr = a.w[0];
        let page = addr.wrapping_sub(HEAP_START) / 4096;
        if a.code == fault::code::SEGMENT && addr >= HEAP_START && page < PAGES {
            match k.grow(page) {
                Ok(()) => {
                    a = Msg::new(RESUME, fault::RESUME)
                        .recv([SEGMENT, 0, 0, 0])
                        .resume_into(RESUME)
                        .ret();
                    continue;
                }
                Err(c) => println!(
                    "heapkeeper: no page for {addr:#x} after {} pages (code {c}); the server waits",
                    k.pages
                ),
            }
        } else {
            println!(
                "heapkeeper: refusing order {} at {addr:#x} (access {}, why {}, rip {:#x})",
                a.code, a.w[1], a.w[2], a.w[3]
            );
        }
        a = wait([SEGMENT, 0, 0, 0], RESUME, &mut []);
    }
}

stet_rt::main!(main);
