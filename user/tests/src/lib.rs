//! What several test domains share: the CPU-bound spinner that checks its
//! FPU state across preemption (`spin-a`, `spin-b`) and the deliberate
//! fault (`fault-*`).
#![no_std]

use stet_rt::{cpu, println};

/// Work per round of a spinner, in loop iterations.
const ROUND: u64 = 6_000_000;
/// Rounds a spinner runs.
pub const ROUNDS: u32 = 4;

/// A CPU-bound program: never yields, prints a line per round, and checks
/// after every chunk of work that its SSE registers still hold the values it
/// put there (so a kernel that forgot to save FPU state across preemption is
/// caught).
pub fn spin(name: &str, seed: u64) -> i64 {
    cpu::load_xmm(seed);
    let mut x = seed;
    for round in 1..=ROUNDS {
        for _ in 0..ROUND / 1000 {
            for i in 0..1000u64 {
                x = core::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
            if let Some(r) = cpu::check_xmm(seed) {
                println!("{name}: FPU STATE CORRUPTED in xmm{r}");
                return 1;
            }
        }
        println!("{name}: round {round}/{ROUNDS}");
    }
    println!("{name}: done, xmm0-15 intact ({:#x})", x & 0xf);
    0
}

/// Runs a deliberate fault, announcing where it will happen.
pub fn fault(name: &str, f: stet_rt::fault::Fault) -> i64 {
    match f.address() {
        Some(a) => println!(
            "{name}: expecting a fault at rip={:#x} addr={:#x}",
            f.rip(),
            a
        ),
        None => println!("{name}: expecting a fault at rip={:#x}", f.rip()),
    }
    f.trigger();
    println!("{name}: FAILED, the fault did not happen");
    1
}
