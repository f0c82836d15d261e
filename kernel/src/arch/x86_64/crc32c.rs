//! CRC-32C of disk blocks with the SSE4.2 `crc32` instruction.
//!
//! Every page the store writes or reads back is checksummed, and the
//! table-driven CRC in `stet-store` costs about 3.9 instructions a byte
//! (15,900 per 4 KiB page: nearly all of a checkpoint's CPU time). The
//! `crc32` instruction folds 8 bytes at a time (about 0.3 instructions a
//! byte). It works on general registers only, so the kernel stays
//! soft-float; CPUs without SSE4.2 (QEMU's default model) use the table.

use core::sync::atomic::{AtomicBool, Ordering};

static HARDWARE: AtomicBool = AtomicBool::new(false);

/// Chooses the instruction when CPUID says SSE4.2 is present, after checking
/// it against the table on the standard test vector and on a buffer that
/// takes every path (blocks, words, bytes).
pub(in crate::arch) fn init(sse42: bool) {
    if !sse42 {
        return;
    }
    let mut buf = [0u8; 203];
    for (i, b) in buf.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(151).wrapping_add(7);
    }
    for check in [&b"123456789"[..], &buf[..], &buf[3..]] {
        if hardware(check) != stet_store::crc32c(check) {
            crate::fatal(format_args!(
                "the CPU's crc32 instruction disagrees with the CRC-32C table"
            ));
        }
    }
    HARDWARE.store(true, Ordering::Relaxed);
}

/// Whether blocks are checksummed with the `crc32` instruction.
pub fn is_hardware() -> bool {
    HARDWARE.load(Ordering::Relaxed)
}

/// CRC-32C (Castagnoli) of `bytes`, equal to `stet_store::crc32c`.
/// Inlined: the writer checksums every page it writes, and a call per
/// page showed in `ckpt_commit_16mib`.
#[inline(always)]
pub fn crc32c(bytes: &[u8]) -> u32 {
    if HARDWARE.load(Ordering::Relaxed) {
        hardware(bytes)
    } else {
        stet_store::crc32c(bytes)
    }
}

/// [`crc32c`] behind a call, for small buffers off the page path (a
/// journal header): an inlined copy there made LLVM stop inlining the
/// instruction loop into the writer's per-page checksum.
#[inline(never)]
pub fn crc32c_called(bytes: &[u8]) -> u32 {
    crc32c(bytes)
}

fn hardware(bytes: &[u8]) -> u32 {
    // CRC-32C starts from all ones and inverts the result; the instruction
    // does the reflected polynomial division in between. Whole 64-byte
    // blocks go through an unrolled loop of memory-operand `crc32`s (11
    // instructions per 64 bytes: 704 for a page), the tail a word at a time.
    let mut crc: u64 = 0xffff_ffff;
    let blocks = bytes.len() / 64;
    if blocks > 0 {
        let start = bytes.as_ptr();
        // SAFETY: only reached after `init` saw SSE4.2 in CPUID; the loop
        // reads `blocks * 64` bytes from `start`, all inside `bytes`, and
        // writes registers only.
        unsafe {
            core::arch::asm!(
                "2:",
                "crc32 {c}, qword ptr [{p}]",
                "crc32 {c}, qword ptr [{p} + 8]",
                "crc32 {c}, qword ptr [{p} + 16]",
                "crc32 {c}, qword ptr [{p} + 24]",
                "crc32 {c}, qword ptr [{p} + 32]",
                "crc32 {c}, qword ptr [{p} + 40]",
                "crc32 {c}, qword ptr [{p} + 48]",
                "crc32 {c}, qword ptr [{p} + 56]",
                "add {p}, 64",
                "cmp {p}, {end}",
                "jne 2b",
                c = inout(reg) crc,
                p = inout(reg) start => _,
                end = in(reg) start.wrapping_add(blocks * 64),
                options(pure, readonly, nostack),
            );
        }
    }
    let rest = &bytes[blocks * 64..];
    let mut words = rest.chunks_exact(8);
    for w in &mut words {
        let v = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        // SAFETY: as above; registers only.
        unsafe {
            core::arch::asm!("crc32 {c}, {v}", c = inout(reg) crc, v = in(reg) v,
                options(pure, nomem, nostack, preserves_flags));
        }
    }
    let mut c = crc as u32;
    for &b in words.remainder() {
        // SAFETY: as above.
        unsafe {
            core::arch::asm!("crc32 {c:e}, {b}", c = inout(reg) c, b = in(reg_byte) b,
                options(pure, nomem, nostack, preserves_flags));
        }
    }
    !c
}
