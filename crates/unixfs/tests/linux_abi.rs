//! `getdents64`'s records as Linux lays out `linux_dirent64`, checked
//! against `linux-raw-sys` (generated from the kernel's uapi headers), as
//! `stet-unix`'s tests/linux_abi.rs checks the rest.
//!
//! linux-raw-sys gives the layouts of the architecture it is built for, and
//! Stet's are x86_64's: on another host this file holds no test.
#![cfg(all(target_arch = "x86_64", target_os = "linux"))]

use linux_raw_sys::general;
use std::mem::{offset_of, size_of};
use stet_unixfs::fs::{mode, Fs, ROOT};

/// The size of a field of `T`, without a value of `T`.
fn field_size<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

/// A little-endian field of `b`.
fn get(b: &[u8], off: usize, len: usize) -> u64 {
    let mut w = [0u8; 8];
    w[..len].copy_from_slice(&b[off..off + len]);
    u64::from_le_bytes(w)
}

#[test]
fn getdents_writes_linux_dirent64() {
    use general::linux_dirent64 as d;
    let mut f = Box::new(Fs::new(1));
    let dir = f.create(ROOT, b"d", mode::DIR | 0o755, 1).unwrap();
    let file = f.create(dir, b"name", mode::REG | 0o644, 1).unwrap();
    let mut out = [0u8; 4096];
    let (n, _) = f.getdents(dir, 0, &mut out).unwrap();
    // ".", "..", "name": the third record.
    let mut at = 0;
    for _ in 0..2 {
        at += get(
            &out,
            at + offset_of!(d, d_reclen),
            field_size(|x: &d| &x.d_reclen),
        ) as usize;
    }
    let r = &out[at..n];
    assert_eq!(
        get(r, offset_of!(d, d_ino), field_size(|x: &d| &x.d_ino)),
        file as u64
    );
    assert_eq!(
        get(r, offset_of!(d, d_off), field_size(|x: &d| &x.d_off)),
        3
    );
    assert_eq!(
        get(r, offset_of!(d, d_reclen), field_size(|x: &d| &x.d_reclen)) as usize,
        r.len()
    );
    assert_eq!(
        get(r, offset_of!(d, d_type), field_size(|x: &d| &x.d_type)),
        general::DT_REG as u64
    );
    assert_eq!(&r[offset_of!(d, d_name)..][..5], b"name\0");
    assert_eq!(
        out[offset_of!(d, d_type)],
        general::DT_DIR as u8,
        "\".\" is a directory"
    );
}
