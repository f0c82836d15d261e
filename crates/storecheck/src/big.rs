//! The larger-than-RAM test (`bigmem`): a word pattern over 256 MiB of a
//! domain's heap that differs at every word and from zero, so a page lost,
//! read back from the wrong place or never written shows.

use crate::mix;

/// Pages `bigmem` covers by default: 65536 pages, 256 MiB.
pub const DEFAULT_PAGES: u64 = 65536;

/// Sets the pattern apart from the other tests' patterns (and from zero).
const SEED: u64 = 0xb16e_0000_0000_0000;

/// Word `word` of heap page `page`: never zero for `page < 2^39`, and
/// distinct for distinct (page, word).
pub fn word(page: u64, word: usize) -> u64 {
    mix(SEED | (page << 9) | word as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WORDS;

    #[test]
    fn pattern() {
        assert_eq!(word(0, 0), mix(0xb16e_0000_0000_0000));
        assert_eq!(word(65535, 511), mix(0xb16e_0000_01ff_ffff));
        // Neighbouring pages and words differ, nothing is zero.
        for p in [0, 1, 4095, 65535] {
            for w in 0..WORDS {
                assert_ne!(word(p, w), 0);
                assert_ne!(word(p, w), word(p + 1, w));
                if w > 0 {
                    assert_ne!(word(p, w), word(p, w - 1));
                }
            }
        }
    }
}
