//! A domain keeper for the I/O-port tests: it reports every fault it hears
//! — the domain (the key info of its start key), the fault code, vector,
//! error code, `rip` and the port in `dx` — and, for a #GP (vector 13),
//! plays an absent device: `al` becomes 0xff and the domain resumes after
//! the one-byte `in al, dx` / `out dx, al`. Other faults leave the domain
//! stopped.
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
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

fn put(b: &mut [u8], r: Reg, v: u64) {
    let i = r as usize * 8;
    b[i..i + 8].copy_from_slice(&v.to_le_bytes());
}

fn main(_arg: u64) -> i64 {
    let mut regs = [0u8; REGS_SIZE];
    let mut a = wait([DOMAIN, 0, 0, 0], RESUME, &mut regs);
    loop {
        let gp = a.code == fault::code::EXCEPTION && a.w[0] == 13 && a.len == REGS_SIZE;
        println!(
            "portkeeper: domain {} fault {} vector {} error {:#x} rip={:#x} dx={:#x}; {}",
            a.info,
            a.code,
            a.w[0],
            a.w[1],
            a.w[2],
            get(&regs, Reg::Rdx) & 0xffff,
            if gp {
                "resumed past it"
            } else {
                "left stopped"
            }
        );
        if gp {
            let rax = get(&regs, Reg::Rax);
            put(&mut regs, Reg::Rax, rax | 0xff);
            let rip = get(&regs, Reg::Rip);
            put(&mut regs, Reg::Rip, rip + 1);
            let out = regs;
            a = Msg::new(RESUME, fault::RESUME_WITH_REGS)
                .string(&out)
                .recv([DOMAIN, 0, 0, 0])
                .resume_into(RESUME)
                .ret_into(&mut regs);
        } else {
            a = wait([DOMAIN, 0, 0, 0], RESUME, &mut regs);
        }
    }
}

stet_rt::main!(main);
