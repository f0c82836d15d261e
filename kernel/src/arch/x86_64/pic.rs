//! The legacy 8259 interrupt controllers: remapped away from the exception
//! vectors and masked, because Stet uses the local APIC.

use x86_64::instructions::port::Port;

/// Remaps both PICs to vectors 0x20–0x2f and masks every line.
pub fn disable() {
    let w = |port: u16, v: u8| {
        // SAFETY: ports 0x20/0x21/0xa0/0xa1 are the PICs on every PC; this is
        // the standard initialisation sequence.
        unsafe { Port::<u8>::new(port).write(v) }
    };
    w(0x20, 0x11);
    w(0xa0, 0x11);
    w(0x21, 0x20);
    w(0xa1, 0x28);
    w(0x21, 4);
    w(0xa1, 2);
    w(0x21, 1);
    w(0xa1, 1);
    w(0x21, 0xff);
    w(0xa1, 0xff);
}
