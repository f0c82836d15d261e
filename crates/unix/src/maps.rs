//! `/proc/<pid>/maps`: one line per mapped range in Linux's format
//! (`show_map_vma`): `start-end perms offset major:minor inode`, then the
//! name padded to column 73 — `[heap]`, `[stack]`, a file's name, or none.
//! The keeper knows the ranges ([`crate::vm::Map`]); this only formats.

use crate::elf::prot;
use crate::procgen::Text;
use crate::vm::Vma;
use core::fmt::Write;

/// Where a line's name starts (Linux pads to `25 + 6 * sizeof(void *)`
/// bytes, less one).
const NAME_COLUMN: usize = 73;

/// What a range shows besides its addresses and protection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Source<'a> {
    /// The file offset of its first byte (0 for anonymous memory).
    pub offset: u64,
    /// The file's device (`st_dev`: major << 8 | minor), 0 for none.
    pub dev: u64,
    /// The file's inode, 0 for none.
    pub ino: u64,
    /// The name shown last (empty: none).
    pub name: &'a [u8],
}

/// Formats `v`'s line (with its newline) into `out` → its length.
pub fn line(out: &mut [u8], v: &Vma, s: &Source) -> usize {
    let mut t = Text::new(out);
    let flag = |b: u8, c: char| if v.prot & b != 0 { c } else { '-' };
    let _ = write!(
        t,
        "{:08x}-{:08x} {}{}{}{} {:08x} {:02x}:{:02x} {}",
        v.start,
        v.end,
        flag(prot::READ, 'r'),
        flag(prot::WRITE, 'w'),
        flag(prot::EXEC, 'x'),
        if v.shared { 's' } else { 'p' },
        s.offset,
        (s.dev >> 8) & 0xfff,
        s.dev & 0xff,
        s.ino,
    );
    if !s.name.is_empty() {
        let pad = NAME_COLUMN.saturating_sub(t.len()).max(1);
        for _ in 0..pad {
            t.bytes(b" ");
        }
        t.bytes(s.name);
    }
    t.end_line()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::Backing;

    fn vma(start: u64, end: u64, prot: u8, shared: bool) -> Vma {
        Vma {
            start,
            end,
            prot,
            shared,
            grows_down: false,
            locked: false,
            backing: Backing::Anon,
        }
    }

    #[test]
    fn anonymous_lines_have_no_name() {
        let mut b = [0u8; 128];
        let n = line(
            &mut b,
            &vma(0x1000, 0x3000, prot::READ | prot::WRITE, false),
            &Source::default(),
        );
        assert_eq!(&b[..n], b"00001000-00003000 rw-p 00000000 00:00 0\n");
        let n = line(
            &mut b,
            &vma(0x7f00_0000_0000, 0x7f00_0000_1000, 0, true),
            &Source::default(),
        );
        assert_eq!(
            &b[..n],
            b"7f0000000000-7f0000001000 ---s 00000000 00:00 0\n"
        );
    }

    #[test]
    fn names_start_at_column_73() {
        let mut b = [0u8; 160];
        let s = Source {
            offset: 0x2000,
            dev: 0x801,
            ino: 1234,
            name: b"/bin/prog",
        };
        let n = line(
            &mut b,
            &vma(0x40_0000, 0x40_1000, prot::READ | prot::EXEC, false),
            &s,
        );
        let text = core::str::from_utf8(&b[..n]).unwrap();
        assert!(text.starts_with("00400000-00401000 r-xp 00002000 08:01 1234 "));
        assert_eq!(text.find("/bin/prog"), Some(73));
        assert!(text.ends_with("/bin/prog\n"));
    }

    #[test]
    fn a_small_buffer_cuts_the_line_but_ends_it() {
        let mut b = [0u8; 10];
        let n = line(
            &mut b,
            &vma(0x1000, 0x2000, prot::READ, false),
            &Source::default(),
        );
        assert_eq!(n, 10);
        assert_eq!(b[9], b'\n');
    }
}
