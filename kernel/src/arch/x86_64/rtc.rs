//! The PC's battery clock (the CMOS real-time clock, ports 0x70/0x71),
//! read once at boot for the wall clock (`sleep` `NOW`'s `w2`). QEMU's
//! follows the host's clock unless `-rtc base=` fixes it (the tests do).

use stet_abi::wallclock::{rtc_field, rtc_hour, unix_seconds};
use x86_64::instructions::port::Port;

fn cmos(reg: u8) -> u8 {
    // SAFETY: ports 0x70/0x71 are the CMOS index and data registers of
    // every PC; selecting a register (bit 7 kept clear: NMIs stay enabled)
    // and reading it has no other effect.
    unsafe {
        Port::<u8>::new(0x70).write(reg & 0x7f);
        Port::<u8>::new(0x71).read()
    }
}

/// Seconds since 1970 the clock says, `None` if it reads as nonsense.
pub fn read_seconds() -> Option<u64> {
    // Two equal reads outside an update: a consistent time.
    let read = || {
        for _ in 0..100_000 {
            if cmos(0x0a) & 0x80 == 0 {
                break;
            }
        }
        [
            cmos(0x00),
            cmos(0x02),
            cmos(0x04),
            cmos(0x07),
            cmos(0x08),
            cmos(0x09),
            cmos(0x32),
        ]
    };
    let mut a = read();
    for _ in 0..4 {
        let b = read();
        if a == b {
            break;
        }
        a = b;
    }
    let status_b = cmos(0x0b);
    let binary = status_b & 4 != 0;
    let h24 = status_b & 2 != 0;
    let [s, m, h, d, mo, y, c] = a;
    let century = match rtc_field(c, binary) {
        19..=99 => rtc_field(c, binary),
        _ => 20,
    };
    unix_seconds(
        century * 100 + rtc_field(y, binary),
        rtc_field(mo, binary),
        rtc_field(d, binary),
        rtc_hour(h, binary, h24),
        rtc_field(m, binary),
        rtc_field(s, binary),
    )
}
