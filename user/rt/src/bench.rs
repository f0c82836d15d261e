//! What every benchmark program shares: the median of samples, the cost of
//! reading the counter, and the `BENCH` line the harness collects into
//! `build/bench.json`. Under `-icount` RDTSC counts guest instructions, so
//! every figure is instructions.

use crate::cpu::rdtsc;
use crate::println;

/// The median (sorts `s`); 0 for no samples.
pub fn median(s: &mut [u64]) -> u64 {
    if s.is_empty() {
        return 0;
    }
    s.sort_unstable();
    s[s.len() / 2]
}

/// What one `rdtsc()` pair costs, the median of `n` (at most 2000) reads.
pub fn rdtsc_overhead(n: usize) -> u64 {
    let mut s = [0u64; 2000];
    let n = n.clamp(1, s.len());
    for v in s.iter_mut().take(n) {
        let t0 = rdtsc();
        let t1 = rdtsc();
        *v = t1 - t0;
    }
    median(&mut s[..n])
}

/// Prints row `name`: the median of `samples` minus `overhead`.
pub fn report(name: &str, samples: &mut [u64], overhead: u64) {
    let m = median(samples).saturating_sub(overhead);
    println!(
        "BENCH name={name} instructions={m} iterations={} overhead={overhead}",
        samples.len()
    );
}
