//! A segment keeper that grows a domain's stack and heap on demand: each
//! invalid reference inside the stack or heap area gets a fresh zero page
//! (from the page range it holds) and the domain is restarted; anything
//! else is refused and the domain stays stopped.
//!
//! Keys: 1 console, 2 node key to the address-space root, 3 range of
//! nodes, 4 range of pages. Scratch slots 8–12.
#![no_std]
#![no_main]

mod grow;
use grow::{Grower, Slots};
use stet_rt::abi::fault;
use stet_rt::abi::layout::{HEAP_SIZE, HEAP_START, STACK_SIZE, STACK_TOP};
use stet_rt::key::{wait, Msg};
use stet_rt::println;

const SEGMENT: u8 = 11;
const RESUME: u8 = 12;

fn allowed(a: u64) -> bool {
    (HEAP_START..HEAP_START + HEAP_SIZE).contains(&a)
        || (STACK_TOP - STACK_SIZE..STACK_TOP).contains(&a)
}

fn main(_arg: u64) -> i64 {
    let mut g = Grower::new(Slots {
        root: 2,
        nodes: 3,
        pages: 4,
        cur: 8,
        leaf: 9,
        tmp: 10,
    });
    let mut a = wait([SEGMENT, 0, 0, 0], RESUME, &mut []);
    loop {
        let addr = a.w[0];
        if a.code == fault::code::SEGMENT && allowed(addr) {
            match g.grow(addr) {
                Ok(()) => {
                    a = Msg::new(RESUME, fault::RESUME)
                        .recv([SEGMENT, 0, 0, 0])
                        .resume_into(RESUME)
                        .ret();
                    continue;
                }
                Err(e) => println!("segkeeper: cannot grow at {addr:#x}: {e:?}"),
            }
        } else {
            println!(
                "segkeeper: refusing order {} at {:#x} (access {}, why {}) after {} pages",
                a.code,
                addr,
                a.w[1],
                a.w[2],
                g.pages_used()
            );
        }
        a = wait([SEGMENT, 0, 0, 0], RESUME, &mut []);
    }
}

stet_rt::main!(main);
