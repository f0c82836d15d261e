//! The build script of every program crate (`user/services`, `user/unix`,
//! `user/tests`, `user/bench` name it as their `build`): links each program
//! at 0x400000 with the runtime's linker script, `user/rt/link.ld`.
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let script = format!("{dir}/../rt/link.ld");
    println!("cargo:rustc-link-arg-bins=-T{script}");
    println!("cargo:rustc-link-arg-bins=-znoexecstack");
    println!("cargo:rerun-if-changed={script}");
}
