//! The wall clock: a battery clock's calendar fields (the PC's CMOS
//! real-time clock, read by the kernel at boot) as seconds since 1970, and
//! the decoding of the RTC's BCD fields. Pure, so the host tests check it.

/// Seconds since 1970-01-01 00:00:00 UTC of a proleptic Gregorian date and
/// time, `None` when a field is out of range (a clock not yet set, or
/// misread).
pub fn unix_seconds(year: u32, month: u32, day: u32, h: u32, m: u32, s: u32) -> Option<u64> {
    if !(1970..=9999).contains(&year)
        || !(1..=12).contains(&month)
        || day == 0
        || day > days_in(year, month)
        || h > 23
        || m > 59
        || s > 60
    {
        return None;
    }
    // Days from 1970-01-01 (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year } as i64;
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days as u64 * 86_400 + (h * 3600 + m * 60 + s) as u64)
}

fn leap(y: u32) -> bool {
    y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400))
}

fn days_in(y: u32, m: u32) -> u32 {
    match m {
        2 if leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// A CMOS field as a number: BCD unless the RTC says binary.
pub fn rtc_field(v: u8, binary: bool) -> u32 {
    if binary {
        v as u32
    } else {
        (v >> 4) as u32 * 10 + (v & 15) as u32
    }
}

/// The hour field: in 12-hour mode bit 7 means p.m.
pub fn rtc_hour(v: u8, binary: bool, h24: bool) -> u32 {
    if h24 {
        return rtc_field(v, binary);
    }
    let pm = v & 0x80 != 0;
    let h = rtc_field(v & 0x7f, binary) % 12;
    if pm {
        h + 12
    } else {
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(unix_seconds(1970, 1, 1, 0, 0, 0), Some(0));
        assert_eq!(unix_seconds(2024, 1, 1, 0, 0, 0), Some(1_704_067_200));
        assert_eq!(unix_seconds(2000, 2, 29, 12, 30, 15), Some(951_827_415));
        assert_eq!(unix_seconds(2026, 11, 28, 16, 0, 0), Some(1_795_881_600));
        assert_eq!(unix_seconds(2100, 3, 1, 0, 0, 0), Some(4_107_542_400));
    }

    #[test]
    fn bad_fields() {
        assert_eq!(unix_seconds(2023, 2, 29, 0, 0, 0), None);
        assert_eq!(unix_seconds(1969, 12, 31, 0, 0, 0), None);
        assert_eq!(unix_seconds(2024, 13, 1, 0, 0, 0), None);
        assert_eq!(unix_seconds(2024, 4, 31, 0, 0, 0), None);
        assert_eq!(unix_seconds(2024, 1, 1, 24, 0, 0), None);
    }

    #[test]
    fn rtc_fields() {
        assert_eq!(rtc_field(0x59, false), 59);
        assert_eq!(rtc_field(59, true), 59);
        assert_eq!(rtc_hour(0x12, false, false), 0, "12 a.m. is hour 0");
        assert_eq!(rtc_hour(0x92, false, false), 12, "12 p.m.");
        assert_eq!(rtc_hour(0x81, false, false), 13);
        assert_eq!(rtc_hour(0x23, false, true), 23);
    }
}
