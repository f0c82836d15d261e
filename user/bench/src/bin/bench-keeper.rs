//! A domain keeper that emulates `ud2`: the faulting domain's `rax`
//! becomes `rax + 1000` and it resumes after the instruction, with one
//! reply carrying the new registers. It also answers a foreign domain's
//! `syscall` (as a Linux personality would): `rax` becomes `rax + 2000`,
//! through `RESUME_SYSCALL` for call numbers below 1000 and the whole
//! register block above. The first `ud2` is first answered
//! `RESUME_SYSCALL`, which is not for exceptions: the kernel must leave
//! the fault pending and deliver it again.
//! Any other fault is reported and the domain left stopped.
#![no_std]
#![no_main]

use stet_rt::abi::domain::{Reg, REGS_SIZE};
use stet_rt::abi::fault;
use stet_rt::key::{wait, Msg};
use stet_rt::println;

const DOMAIN: u8 = 4;
const RESUME: u8 = 5;

fn get(b: &[u8], r: Reg) -> u64 {
    let i = r as usize * 8;
    u64::from_le_bytes([
        b[i],
        b[i + 1],
        b[i + 2],
        b[i + 3],
        b[i + 4],
        b[i + 5],
        b[i + 6],
        b[i + 7],
    ])
}

fn put(b: &mut [u8], r: Reg, v: u64) {
    let i = r as usize * 8;
    b[i..i + 8].copy_from_slice(&v.to_le_bytes());
}

fn main(_arg: u64) -> i64 {
    let mut regs = [0u8; REGS_SIZE];
    let mut a = wait([DOMAIN, 0, 0, 0], RESUME, &mut regs);
    let mut tried_wrong_order = false;
    loop {
        if a.code == fault::code::EXCEPTION && a.w[0] == 6 && !tried_wrong_order {
            tried_wrong_order = true;
            a = Msg::new(RESUME, fault::RESUME_SYSCALL)
                .w0(1)
                .recv([DOMAIN, 0, 0, 0])
                .resume_into(RESUME)
                .ret_into(&mut regs);
            if a.code == fault::code::EXCEPTION && a.w[0] == 6 {
                println!("keeper: RESUME_SYSCALL left the exception pending; delivered again");
            }
            continue;
        }
        if a.code == fault::code::EXCEPTION && a.w[0] == 6 && a.len == REGS_SIZE {
            let rax = get(&regs, Reg::Rax);
            put(&mut regs, Reg::Rax, rax + 1000);
            let rip = get(&regs, Reg::Rip);
            put(&mut regs, Reg::Rip, rip + 2);
            let out = regs;
            a = Msg::new(RESUME, fault::RESUME_WITH_REGS)
                .string(&out)
                .recv([DOMAIN, 0, 0, 0])
                .resume_into(RESUME)
                .ret_into(&mut regs);
        } else if a.code == fault::code::SYSCALL && a.len == REGS_SIZE {
            // `rip` is already past the `syscall`.
            let rax = get(&regs, Reg::Rax);
            println!("keeper: foreign syscall {rax}");
            let mut out = regs;
            let m = if rax < 1000 {
                Msg::new(RESUME, fault::RESUME_SYSCALL).w0(rax + 2000)
            } else {
                put(&mut out, Reg::Rax, rax + 2000);
                Msg::new(RESUME, fault::RESUME_WITH_REGS).string(&out)
            };
            a = m
                .recv([DOMAIN, 0, 0, 0])
                .resume_into(RESUME)
                .ret_into(&mut regs);
        } else {
            println!(
                "keeper: fault {} (w0={} w1={:#x} w2={:#x} w3={:#x}); domain left stopped",
                a.code, a.w[0], a.w[1], a.w[2], a.w[3]
            );
            a = wait([DOMAIN, 0, 0, 0], RESUME, &mut regs);
        }
    }
}

stet_rt::main!(main);
