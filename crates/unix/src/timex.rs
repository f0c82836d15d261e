//! `adjtimex` and `clock_adjtime(CLOCK_REALTIME)`: the kernel clock's NTP
//! parameters as Linux keeps them (`kernel/time/ntp.c`), their rules and
//! the `struct timex` they are read and set through. Stet keeps the
//! parameters and answers them exactly as Linux would; its clock is the
//! kernel's and is not slewed by them (an offset or frequency set is
//! reported back, not applied), and no leap second is ever inserted or
//! deleted, so the clock state stays `TIME_OK` or `TIME_ERROR` whatever
//! `STA_INS`/`STA_DEL` say. `ADJ_SETOFFSET` does step the clock (the
//! caller applies the step this returns).

use crate::sys::errno::{EINVAL, EPERM};

/// `struct timex`'s size (x86_64).
pub const SIZE: usize = 208;

/// `modes` bits.
#[allow(missing_docs)]
pub mod adj {
    pub const OFFSET: u32 = 0x0001;
    pub const FREQUENCY: u32 = 0x0002;
    pub const MAXERROR: u32 = 0x0004;
    pub const ESTERROR: u32 = 0x0008;
    pub const STATUS: u32 = 0x0010;
    pub const TIMECONST: u32 = 0x0020;
    pub const TAI: u32 = 0x0080;
    pub const SETOFFSET: u32 = 0x0100;
    pub const MICRO: u32 = 0x1000;
    pub const NANO: u32 = 0x2000;
    pub const TICK: u32 = 0x4000;
    /// `ADJ_ADJTIME`: the old `adjtime` interface.
    pub const ADJTIME: u32 = 0x8000;
    pub const OFFSET_SINGLESHOT: u32 = 0x8001;
    /// With `ADJ_OFFSET_SINGLESHOT`: only read (`ADJ_OFFSET_SS_READ`).
    pub const OFFSET_READONLY: u32 = 0x2000;
}

/// `status` bits.
#[allow(missing_docs)]
pub mod sta {
    pub const PLL: i32 = 0x0001;
    pub const PPSFREQ: i32 = 0x0002;
    pub const PPSTIME: i32 = 0x0004;
    pub const FLL: i32 = 0x0008;
    pub const INS: i32 = 0x0010;
    pub const DEL: i32 = 0x0020;
    pub const UNSYNC: i32 = 0x0040;
    pub const FREQHOLD: i32 = 0x0080;
    pub const PPSSIGNAL: i32 = 0x0100;
    pub const PPSJITTER: i32 = 0x0200;
    pub const PPSWANDER: i32 = 0x0400;
    pub const PPSERROR: i32 = 0x0800;
    pub const CLOCKERR: i32 = 0x1000;
    pub const NANO: i32 = 0x2000;
    pub const MODE: i32 = 0x4000;
    pub const CLK: i32 = 0x8000;
    /// The bits only the kernel sets.
    pub const RONLY: i32 =
        PPSSIGNAL | PPSJITTER | PPSWANDER | PPSERROR | CLOCKERR | NANO | MODE | CLK;
}

/// `TIME_OK` and `TIME_ERROR`, the clock states Stet's clock is ever in.
pub const TIME_OK: i64 = 0;
/// The clock is not synchronised (`STA_UNSYNC` or `STA_CLOCKERR`).
pub const TIME_ERROR: i64 = 5;

/// `USER_HZ`: the tick is 10,000 µs, 9,000–11,000 allowed.
const USER_HZ: i64 = 100;
/// `NTP_PHASE_LIMIT`: the maximum and estimated errors at start (µs).
const PHASE_LIMIT: i64 = 16_000_000;
/// `MAXPHASE` (ns): the largest offset taken.
const MAXPHASE: i64 = 500_000_000;
/// `MAXFREQ` (ns/s, 500 ppm) in `freq`'s unit (ppm << 16).
const MAXFREQ_SCALED: i64 = 500 << 16;
/// `MAXTC`, `MAX_TAI_OFFSET`.
const MAXTC: i64 = 10;
const MAX_TAI: i64 = 100_000;
/// `PPM_SCALE`'s range check on 64-bit: `freq * PPM_SCALE` must not
/// overflow (`PPM_SCALE` is `NSEC_PER_USEC << (NTP_SCALE_SHIFT - SHIFT_USEC)`
/// = 1000 << 16).
const PPM_SCALE: i64 = 1000 << 16;

/// A `struct timex`, the fields Linux reads and writes.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timex {
    pub modes: u32,
    pub offset: i64,
    pub freq: i64,
    pub maxerror: i64,
    pub esterror: i64,
    pub status: i32,
    pub constant: i64,
    pub precision: i64,
    pub tolerance: i64,
    /// `time.tv_sec`, `time.tv_usec` (ns with `STA_NANO`).
    pub sec: i64,
    pub usec: i64,
    pub tick: i64,
    pub tai: i32,
}

fn get(b: &[u8; SIZE], o: usize) -> i64 {
    i64::from_le_bytes(b[o..o + 8].try_into().unwrap_or_default())
}

fn get32(b: &[u8; SIZE], o: usize) -> i32 {
    i32::from_le_bytes(b[o..o + 4].try_into().unwrap_or_default())
}

impl Timex {
    /// From the caller's bytes.
    pub fn from_bytes(b: &[u8; SIZE]) -> Timex {
        Timex {
            modes: get32(b, 0) as u32,
            offset: get(b, 8),
            freq: get(b, 16),
            maxerror: get(b, 24),
            esterror: get(b, 32),
            status: get32(b, 40),
            constant: get(b, 48),
            precision: get(b, 56),
            tolerance: get(b, 64),
            sec: get(b, 72),
            usec: get(b, 80),
            tick: get(b, 88),
            tai: get32(b, 160),
        }
    }

    /// The bytes written back (the PPS fields 0, the padding 0).
    pub fn to_bytes(&self) -> [u8; SIZE] {
        let mut b = [0u8; SIZE];
        b[0..4].copy_from_slice(&self.modes.to_le_bytes());
        for (o, v) in [
            (8, self.offset),
            (16, self.freq),
            (24, self.maxerror),
            (32, self.esterror),
            (48, self.constant),
            (56, self.precision),
            (64, self.tolerance),
            (72, self.sec),
            (80, self.usec),
            (88, self.tick),
        ] {
            b[o..o + 8].copy_from_slice(&v.to_le_bytes());
        }
        b[40..44].copy_from_slice(&self.status.to_le_bytes());
        b[160..164].copy_from_slice(&self.tai.to_le_bytes());
        b
    }
}

/// The kernel clock's NTP parameters.
#[allow(missing_docs)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ntp {
    /// `time_status`.
    pub status: i32,
    /// `time_offset` (ns).
    pub offset: i64,
    /// `time_freq` in `freq`'s unit (ppm << 16).
    pub freq: i64,
    pub maxerror: i64,
    pub esterror: i64,
    pub constant: i64,
    /// `tick_usec`.
    pub tick: i64,
    pub tai: i32,
    /// `time_adjust` (µs): what the old `adjtime` asked for.
    pub adjust: i64,
}

impl Default for Ntp {
    fn default() -> Ntp {
        Ntp::new()
    }
}

impl Ntp {
    /// As at boot: not synchronised.
    pub const fn new() -> Ntp {
        Ntp {
            status: sta::UNSYNC,
            offset: 0,
            freq: 0,
            maxerror: PHASE_LIMIT,
            esterror: PHASE_LIMIT,
            constant: 2,
            tick: 1_000_000 / USER_HZ,
            tai: 0,
            adjust: 0,
        }
    }

    /// `adjtimex` of `t` (its `modes`), by a caller that may set the
    /// clock (`CAP_SYS_TIME`) or not, at wall time `now_ns` → the clock
    /// state, `t` filled in as Linux fills it, and the step to apply to
    /// the wall clock (`ADJ_SETOFFSET`, ns).
    pub fn adjtimex(&mut self, t: &mut Timex, may: bool, now_ns: u64) -> Result<(i64, i64), i64> {
        let m = t.modes;
        // `timekeeping_validate_timex`.
        if m & adj::ADJTIME != 0 {
            if m & adj::OFFSET_SINGLESHOT != adj::OFFSET_SINGLESHOT {
                return Err(EINVAL);
            }
            if m & adj::OFFSET_READONLY == 0 && !may {
                return Err(EPERM);
            }
        } else {
            if m != 0 && !may {
                return Err(EPERM);
            }
            if m & adj::TICK != 0 && !(900_000 / USER_HZ..=1_100_000 / USER_HZ).contains(&t.tick) {
                return Err(EINVAL);
            }
        }
        let mut step = 0;
        if m & adj::SETOFFSET != 0 {
            if !may {
                return Err(EPERM);
            }
            let nano = m & adj::NANO != 0;
            let limit = if nano { 1_000_000_000 } else { 1_000_000 };
            if !(0..limit).contains(&t.usec) {
                return Err(EINVAL);
            }
            let frac = if nano { t.usec } else { t.usec * 1000 };
            step = t.sec.saturating_mul(1_000_000_000).saturating_add(frac);
        }
        if m & adj::FREQUENCY != 0
            && (t.freq < i64::MIN / PPM_SCALE || t.freq > i64::MAX / PPM_SCALE)
        {
            return Err(EINVAL);
        }
        // `__do_adjtimex`.
        if m & adj::ADJTIME != 0 {
            let old = self.adjust;
            if m & adj::OFFSET_READONLY == 0 {
                self.adjust = t.offset;
            }
            t.offset = old;
        } else {
            if m != 0 {
                self.modes(t);
            }
            t.offset = if self.status & sta::NANO != 0 {
                self.offset
            } else {
                self.offset / 1000
            };
        }
        let state = if self.status & (sta::UNSYNC | sta::CLOCKERR) != 0 {
            TIME_ERROR
        } else {
            TIME_OK
        };
        t.freq = self.freq;
        t.maxerror = self.maxerror;
        t.esterror = self.esterror;
        t.status = self.status;
        t.constant = self.constant;
        t.precision = 1;
        t.tolerance = MAXFREQ_SCALED;
        t.tick = self.tick;
        t.tai = self.tai;
        let now = now_ns.saturating_add_signed(step);
        t.sec = (now / 1_000_000_000) as i64;
        let ns = (now % 1_000_000_000) as i64;
        t.usec = if self.status & sta::NANO != 0 {
            ns
        } else {
            ns / 1000
        };
        Ok((state, step))
    }

    /// `process_adjtimex_modes`.
    fn modes(&mut self, t: &Timex) {
        let m = t.modes;
        if m & adj::STATUS != 0 {
            if self.status & sta::PLL != 0 && t.status & sta::PLL == 0 {
                self.status = sta::UNSYNC;
            }
            self.status &= sta::RONLY;
            self.status |= t.status & !sta::RONLY;
        }
        if m & adj::NANO != 0 {
            self.status |= sta::NANO;
        }
        if m & adj::MICRO != 0 {
            self.status &= !sta::NANO;
        }
        if m & adj::FREQUENCY != 0 {
            self.freq = t.freq.clamp(-MAXFREQ_SCALED, MAXFREQ_SCALED);
        }
        if m & adj::MAXERROR != 0 {
            self.maxerror = t.maxerror;
        }
        if m & adj::ESTERROR != 0 {
            self.esterror = t.esterror;
        }
        if m & adj::TIMECONST != 0 {
            let c = if self.status & sta::NANO == 0 {
                t.constant.saturating_add(4)
            } else {
                t.constant
            };
            self.constant = c.clamp(0, MAXTC);
        }
        if m & adj::TAI != 0 && (0..=MAX_TAI).contains(&t.constant) {
            self.tai = t.constant as i32;
        }
        // `ntp_update_offset`: only with the PLL on, the offset within
        // ±MAXPHASE.
        if m & adj::OFFSET != 0 && self.status & sta::PLL != 0 {
            let ns = if self.status & sta::NANO != 0 {
                t.offset
            } else {
                t.offset.saturating_mul(1000)
            };
            self.offset = ns.clamp(-MAXPHASE, MAXPHASE);
        }
        if m & adj::TICK != 0 {
            self.tick = t.tick;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_at_boot_is_unsynchronised() {
        let mut n = Ntp::new();
        let mut t = Timex::default();
        let (state, step) = n.adjtimex(&mut t, false, 1_500_000_000).unwrap();
        assert_eq!((state, step), (TIME_ERROR, 0));
        assert_eq!(t.status, sta::UNSYNC);
        assert_eq!((t.tick, t.constant, t.maxerror), (10_000, 2, PHASE_LIMIT));
        assert_eq!((t.sec, t.usec, t.tolerance), (1, 500_000, 500 << 16));
    }

    #[test]
    fn rules() {
        let mut n = Ntp::new();
        let mut t = Timex {
            modes: adj::FREQUENCY,
            freq: 1,
            ..Timex::default()
        };
        assert_eq!(n.adjtimex(&mut t, false, 0), Err(EPERM));
        t.modes = adj::ADJTIME;
        assert_eq!(n.adjtimex(&mut t, true, 0), Err(EINVAL));
        t.modes = adj::OFFSET_SINGLESHOT | adj::OFFSET_READONLY;
        assert!(
            n.adjtimex(&mut t, false, 0).is_ok(),
            "reading adjtime is anyone's"
        );
        t.modes = adj::TICK;
        t.tick = 8999;
        assert_eq!(n.adjtimex(&mut t, true, 0), Err(EINVAL));
        t.tick = 11001;
        assert_eq!(n.adjtimex(&mut t, true, 0), Err(EINVAL));
        t.tick = 11000;
        n.adjtimex(&mut t, true, 0).unwrap();
        assert_eq!(n.tick, 11000);
        t.modes = adj::FREQUENCY;
        t.freq = i64::MAX / PPM_SCALE + 1;
        assert_eq!(n.adjtimex(&mut t, true, 0), Err(EINVAL));
        t.freq = 600 << 16;
        n.adjtimex(&mut t, true, 0).unwrap();
        assert_eq!(t.freq, 500 << 16, "clamped to MAXFREQ");
    }

    #[test]
    fn status_offset_and_constant() {
        let mut n = Ntp::new();
        let mut t = Timex {
            modes: adj::STATUS | adj::OFFSET | adj::TIMECONST,
            status: sta::PLL | sta::INS | sta::CLOCKERR,
            offset: 250,
            constant: 3,
            ..Timex::default()
        };
        let (state, _) = n.adjtimex(&mut t, true, 0).unwrap();
        // CLOCKERR is the kernel's; UNSYNC was cleared by the caller.
        assert_eq!(t.status, sta::PLL | sta::INS);
        assert_eq!(state, TIME_OK);
        assert_eq!((t.offset, t.constant), (250, 7));
        // Status is what the caller says (Linux's `process_adj_status`:
        // turning the PLL off resets, then the new bits replace).
        t.modes = adj::STATUS;
        t.status = sta::UNSYNC;
        let (state, _) = n.adjtimex(&mut t, true, 0).unwrap();
        assert_eq!((state, t.status), (TIME_ERROR, sta::UNSYNC));
        // Without the PLL an offset is not taken.
        t.modes = adj::OFFSET;
        t.offset = 999;
        n.adjtimex(&mut t, true, 0).unwrap();
        assert_eq!(t.offset, 250);
    }

    #[test]
    fn setoffset_steps() {
        let mut n = Ntp::new();
        let mut t = Timex {
            modes: adj::SETOFFSET,
            sec: 2,
            usec: 5,
            ..Timex::default()
        };
        assert_eq!(n.adjtimex(&mut t, true, 0).unwrap().1, 2_000_005_000);
        t.modes = adj::SETOFFSET;
        t.usec = 1_000_000;
        assert_eq!(n.adjtimex(&mut t, true, 0), Err(EINVAL));
        t.modes = adj::SETOFFSET | adj::NANO;
        t.sec = -1;
        t.usec = 999_999_999;
        assert_eq!(n.adjtimex(&mut t, true, 0).unwrap().1, -1);
    }

    #[test]
    fn bytes_round_trip() {
        let t = Timex {
            modes: 3,
            offset: -4,
            freq: 5,
            status: 0x41,
            sec: 7,
            usec: 8,
            tick: 10_000,
            tai: 37,
            ..Timex::default()
        };
        assert_eq!(Timex::from_bytes(&t.to_bytes()), t);
    }
}
