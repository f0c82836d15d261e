//! The keeper of `foreign-answers`: at its first system call it tries
//! `SET_ANSWERS` with every kind of bad argument (each must be refused and
//! change nothing), then leaves the kernel answers for calls 39 and 186
//! and a limit rule from 1000 up (`stet_abi::domain::answers`); later it
//! reads the limit rule's count, changes an answer through its node key,
//! and takes the answers away. Every call that reaches it is printed and
//! answered `rax + 2000`. Any check that fails prints `FAILED`.
#![no_std]
#![no_main]

use stet_rt::abi::code::Code;
use stet_rt::abi::domain::answers::{slot, NO_LIMIT};
use stet_rt::abi::domain::REGS_SIZE;
use stet_rt::abi::fault;
use stet_rt::abi::order::{domain, node};
use stet_rt::key::{wait, Answer, Msg, Slot};
use stet_rt::println;

const ANSWERS: Slot = 2;
const PAGE: Slot = 3;
const DOMAIN: Slot = 4;
const RESUME: Slot = 5;
const OWN_GENERAL: Slot = 6;
const T: Slot = 7;

const ENOSYS: u64 = (-38i64) as u64;

fn check(what: &str, a: &Answer, code: Code) {
    if a.code != code {
        println!(
            "keeper: FAILED: {what}: code {} (wanted {})",
            a.code, code as u64
        );
    }
}

fn write_number(n: Slot, s: usize, low: u64, high: u64) {
    let a = Msg::new(n, node::WRITE_NUMBER)
        .words([s as u64, low, high, 0])
        .call();
    check("WRITE_NUMBER", &a, Code::Ok);
}

/// `GET_ANSWERS`: the words, and whether key 0 (into `T`) is a node.
fn get_answers() -> [u64; 4] {
    let a = Msg::new(DOMAIN, domain::GET_ANSWERS)
        .recv([T, 0, 0, 0])
        .call();
    check("GET_ANSWERS", &a, Code::Ok);
    a.w
}

fn install() {
    let before = get_answers();
    if before[..3] != [NO_LIMIT, 0, 0] {
        println!("keeper: FAILED: a new domain has answers {before:?}");
    }
    let set = |key: Slot, limit: u64| {
        Msg::new(DOMAIN, domain::SET_ANSWERS)
            .keys([key, 0, 0, 0])
            .words([limit, ENOSYS, 0, 0])
            .call()
    };
    check("a page key", &set(PAGE, 1000), Code::WrongType);
    check("a limit of 2^32", &set(ANSWERS, 1 << 32), Code::BadValue);
    check(
        "another domain's part",
        &set(OWN_GENERAL, 1000),
        Code::BadState,
    );
    if get_answers()[..3] != [NO_LIMIT, 0, 0] {
        println!("keeper: FAILED: a refused SET_ANSWERS changed something");
    }
    write_number(ANSWERS, slot(39), 4242, 39);
    write_number(ANSWERS, slot(186), 7, 186);
    // In the wrong slots (0, not 7) or for another number: no answers.
    write_number(ANSWERS, 0, 5555, 39);
    write_number(ANSWERS, 1, 6666, 17);
    let a = set(ANSWERS, 1000);
    check("SET_ANSWERS", &a, Code::Ok);
    if a.w[0] != 0 {
        println!("keeper: FAILED: old count {}", a.w[0]);
    }
    let now = get_answers();
    if now[..3] != [1000, ENOSYS, 0] {
        println!("keeper: FAILED: answers now {now:?}");
    }
    println!("keeper: answers installed");
}

fn main(_arg: u64) -> i64 {
    let mut regs = [0u8; REGS_SIZE];
    let mut a = wait([DOMAIN, 0, 0, 0], RESUME, &mut regs);
    let mut installed = false;
    loop {
        if a.code != fault::code::SYSCALL {
            println!(
                "keeper: fault {} (w0={}); domain left stopped",
                a.code, a.w[0]
            );
            a = wait([DOMAIN, 0, 0, 0], RESUME, &mut regs);
            continue;
        }
        let rax = u64::from_le_bytes(regs[..8].try_into().unwrap_or_default());
        println!("keeper: foreign syscall {rax}");
        if rax == 39 && !installed {
            installed = true;
            install();
        } else if rax == 2 {
            let w = get_answers();
            println!("keeper: the limit rule answered {} calls", w[2]);
            // Through the node key: the kernel reloads the domain.
            write_number(ANSWERS, slot(39), 4343, 39);
        } else if rax == 3 {
            let a = Msg::new(DOMAIN, domain::SET_ANSWERS)
                .words([NO_LIMIT, 0, 0, 0])
                .recv([T, 0, 0, 0])
                .call();
            check("SET_ANSWERS void", &a, Code::Ok);
            let r = Msg::new(T, node::READ_NUMBER).w0(slot(39) as u64).call();
            println!(
                "keeper: answers removed (old count {}, old node's answer for 39: {})",
                a.w[0], r.w[0]
            );
            if get_answers()[..3] != [NO_LIMIT, 0, 0] {
                println!("keeper: FAILED: answers left after removal");
            }
        }
        a = Msg::new(RESUME, fault::RESUME_SYSCALL)
            .w0(rax.wrapping_add(2000))
            .recv([DOMAIN, 0, 0, 0])
            .resume_into(RESUME)
            .ret_into(&mut regs);
    }
}

stet_rt::main!(main);
