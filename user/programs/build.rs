//! Links every program at 0x400000 with the user linker script.
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    println!("cargo:rustc-link-arg-bins=-T{dir}/link.ld");
    println!("cargo:rustc-link-arg-bins=-znoexecstack");
    println!("cargo:rerun-if-changed=link.ld");
}
