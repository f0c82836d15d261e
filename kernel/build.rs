//! Links the kernel with its own linker script (higher-half layout, boot
//! section at 1 MiB, PVH note, Multiboot2 header) and generates the 256
//! interrupt entry stubs, which differ only in their vector number and in
//! whether the CPU pushes an error code.
use std::fmt::Write as _;

/// Exceptions for which the CPU pushes an error code.
const HAS_ERROR_CODE: [u32; 10] = [8, 10, 11, 12, 13, 14, 17, 21, 29, 30];

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    println!("cargo:rustc-link-arg-bins=-T{dir}/link.ld");
    println!("cargo:rerun-if-changed=link.ld");
    println!("cargo:rerun-if-changed=build.rs");

    let mut s = String::new();
    s.push_str(".section .text.isr, \"ax\"\n.balign 16\n");
    for v in 0..256u32 {
        writeln!(s, ".balign 16\nisr_stub_{v}:").unwrap();
        if !HAS_ERROR_CODE.contains(&v) {
            s.push_str("    push 0\n");
        }
        writeln!(s, "    push {v}\n    jmp isr_common").unwrap();
    }
    s.push_str(".section .rodata.isr, \"a\"\n.balign 8\n.global isr_stub_table\nisr_stub_table:\n");
    for v in 0..256u32 {
        writeln!(s, "    .quad isr_stub_{v}").unwrap();
    }
    std::fs::write(format!("{out}/isr_stubs.s"), s).expect("write isr_stubs.s");
}
