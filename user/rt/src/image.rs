//! Where this program's image is: its entry point, the end of its
//! read-only pages and the page-aligned range of its writable pages (data and bss), from symbols the linker
//! script (`user/rt/link.ld`) defines. A UNIX keeper uses them to
//! build a copy of itself: text shared, writable pages copied.
#![allow(unsafe_code)]

unsafe extern "C" {
    fn _start();
    static __stet_ro_end: u8;
    static __stet_data: u8;
    static __stet_end: u8;
}

/// The entry point (`_start`).
pub fn entry() -> u64 {
    _start as *const () as u64
}

/// The end of the read-only pages (text and rodata from `0x400000`;
/// page-aligned). Between it and the writable pages there is nothing.
pub fn read_only_end() -> u64 {
    // Taking the address of the linker's symbol reads nothing.
    (&raw const __stet_ro_end) as u64
}

/// `[start, end)` of the writable pages (page-aligned).
pub fn writable() -> (u64, u64) {
    // Taking the addresses of the linker's symbols reads nothing.
    (
        (&raw const __stet_data) as u64,
        (&raw const __stet_end) as u64,
    )
}

/// The address of the guard `carry` keeps in this program's data: a copy
/// of the data made for a new domain must have it cleared there.
pub fn carry_guard() -> u64 {
    crate::carry::guard_addr()
}
