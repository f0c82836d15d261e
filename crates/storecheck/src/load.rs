//! The power-cut workload (`ckptload`) and its checker (`ckptcheck`).
//!
//! Memory: [`HEAP_PAGES`] pages from the workload's heap start. Page
//! [`HEADER_PAGE`] is the header, page [`JOURNAL_PAGE`] the journaled page,
//! pages [`FIRST_DATA_PAGE`].. hold [`DATA_PAGES`] data pages (1 MiB).
//!
//! The header's word [`DONE`] counts page fills completed since the
//! workload began; [`Progress::of`] turns it into (epoch `e`, page `k`):
//! `e = done / N + 1`, `k = done % N`. The workload fills data page `k`
//! with [`data_word`]`(e, k, w)` for every word `w`, then stores
//! `done + 1` (one aligned word: a stop at any instruction sees the old or
//! the new value, never a mix). So at every instant:
//!
//! * data pages `[0, k)` hold epoch `e` exactly;
//! * data page `k` holds, word by word, epoch `e` or epoch `e - 1` (a fill
//!   in progress; the order of its stores is not relied on);
//! * data pages `(k, N)` hold epoch `e - 1` exactly (epoch 0 is all zero).
//!
//! The journal page: word [`COUNTER`] is a counter the workload increments
//! with one atomic instruction once per epoch and then journals; words
//! `1..512` hold [`signature_word`], written once before the first
//! increment. The header's word [`JOURNALED`] is the counter value last
//! confirmed durable by the journal. A restart brings back a committed
//! checkpoint with, on top of it, journaled pages newer than it, so:
//! the counter is at least `JOURNALED`, and the signature is whole once the
//! counter is not zero. Every other header word is zero.
//!
//! [`check_header`], [`check_journal`] and [`check_data`] verify a state
//! (read with the workload stopped) against these rules.

use core::fmt;

use crate::{mix, WORDS};

/// Data pages: 256 pages, 1 MiB.
pub const DATA_PAGES: u64 = 256;
/// Heap page of the header.
pub const HEADER_PAGE: u64 = 0;
/// Heap page of the journaled page.
pub const JOURNAL_PAGE: u64 = 1;
/// Heap page of data page 0.
pub const FIRST_DATA_PAGE: u64 = 2;
/// Heap pages the workload needs (its domain's `heap_pages`).
pub const HEAP_PAGES: u64 = FIRST_DATA_PAGE + DATA_PAGES;

/// Header word: data-page fills completed since the workload began.
pub const DONE: usize = 0;
/// Header word: the journal counter last confirmed durable.
pub const JOURNALED: usize = 1;
/// Journal page word: the counter.
pub const COUNTER: usize = 0;

/// Distinguishes the journal signature from data words.
const SIGNATURE_SEED: u64 = 0x5157_0000_0000_0000;

/// Word `word` of data page `page` in epoch `epoch`: zero in epoch 0, else
/// a word distinct from every other (epoch, page, word) with
/// `epoch < 2^40`.
pub fn data_word(epoch: u64, page: u64, word: usize) -> u64 {
    if epoch == 0 {
        0
    } else {
        mix((epoch << 24) | (page << 9) | word as u64)
    }
}

/// Word `word` (1..512) of the journal page's signature; word 0 is the
/// counter, not signature (0 here).
pub fn signature_word(word: usize) -> u64 {
    if word == COUNTER {
        0
    } else {
        mix(SIGNATURE_SEED | word as u64)
    }
}

/// Where the workload is, from the header's [`DONE`] word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The epoch being written (1 at the start).
    pub epoch: u64,
    /// The data page being filled.
    pub page: u64,
}

impl Progress {
    /// The position after `done` completed fills.
    pub fn of(done: u64) -> Progress {
        Progress {
            epoch: done / DATA_PAGES + 1,
            page: done % DATA_PAGES,
        }
    }

    /// Whether `done` fills complete an epoch (the next fill starts one).
    pub fn epoch_complete(done: u64) -> bool {
        done != 0 && done.is_multiple_of(DATA_PAGES)
    }
}

/// What a checker found wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// An unused header word is not zero.
    Header {
        /// The word.
        word: usize,
        /// Its value.
        found: u64,
    },
    /// A data word is not what the header says it must be.
    Data {
        /// Data page (0..256).
        page: u64,
        /// Word in the page.
        word: usize,
        /// The epoch it must hold.
        epoch: u64,
        /// Whether epoch `epoch - 1` is allowed too (the page being filled).
        or_previous: bool,
        /// Its value.
        found: u64,
    },
    /// A journal-page word is not the signature (or, before the first
    /// increment, zero).
    Signature {
        /// The word.
        word: usize,
        /// The counter the page holds.
        counter: u64,
        /// Its value.
        found: u64,
    },
    /// The journal counter is below a value the journal confirmed durable.
    JournalBehind {
        /// The counter the page holds.
        counter: u64,
        /// The header's [`JOURNALED`] word.
        journaled: u64,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Failure::Header { word, found } => {
                write!(f, "header word {word}: expected 0x0, found {found:#x}")
            }
            Failure::Data {
                page,
                word,
                epoch,
                or_previous,
                found,
            } => {
                write!(
                    f,
                    "data page {page} word {word}: expected {:#x} (epoch {epoch})",
                    data_word(epoch, page, word)
                )?;
                if or_previous {
                    write!(
                        f,
                        " or {:#x} (epoch {})",
                        data_word(epoch - 1, page, word),
                        epoch - 1
                    )?;
                }
                write!(f, ", found {found:#x}")
            }
            Failure::Signature {
                word,
                counter,
                found,
            } => {
                write!(
                    f,
                    "journal page word {word} (counter {counter}): expected {:#x}",
                    signature_word(word)
                )?;
                if counter == 0 {
                    write!(f, " or 0x0")?;
                }
                write!(f, ", found {found:#x}")
            }
            Failure::JournalBehind { counter, journaled } => write!(
                f,
                "journal counter {counter} is behind {journaled}, confirmed durable"
            ),
        }
    }
}

/// What a header holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Completed fills ([`DONE`]).
    pub done: u64,
    /// The counter last confirmed durable ([`JOURNALED`]).
    pub journaled: u64,
}

/// Checks the header page (unused words zero) and decodes it.
pub fn check_header(words: &[u64; WORDS]) -> Result<Header, Failure> {
    for (word, &found) in words.iter().enumerate().skip(JOURNALED + 1) {
        if found != 0 {
            return Err(Failure::Header { word, found });
        }
    }
    Ok(Header {
        done: words[DONE],
        journaled: words[JOURNALED],
    })
}

/// Checks the journal page against the header's [`JOURNALED`] word;
/// returns the counter.
pub fn check_journal(journaled: u64, words: &[u64; WORDS]) -> Result<u64, Failure> {
    let counter = words[COUNTER];
    for (word, &found) in words.iter().enumerate().skip(1) {
        let sig = signature_word(word);
        if found != sig && !(counter == 0 && found == 0) {
            return Err(Failure::Signature {
                word,
                counter,
                found,
            });
        }
    }
    if counter < journaled {
        return Err(Failure::JournalBehind { counter, journaled });
    }
    Ok(counter)
}

/// Checks data page `page` against the position the header gives.
pub fn check_data(at: Progress, page: u64, words: &[u64; WORDS]) -> Result<(), Failure> {
    let e = at.epoch;
    let (epoch, or_previous) = match page.cmp(&at.page) {
        core::cmp::Ordering::Less => (e, false),
        core::cmp::Ordering::Equal => (e, true),
        core::cmp::Ordering::Greater => (e - 1, false),
    };
    for (word, &found) in words.iter().enumerate() {
        let ok = found == data_word(epoch, page, word)
            || (or_previous && found == data_word(epoch - 1, page, word));
        if !ok {
            return Err(Failure::Data {
                page,
                word,
                epoch,
                or_previous,
                found,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::format;
    use std::vec::Vec;

    type Page = [u64; WORDS];

    /// The data pages after `done` fills and a fill of page `k` that has
    /// stored the words in `written` (any subset: store order is not
    /// relied on).
    fn model(done: u64, written: &[bool; WORDS]) -> Vec<Page> {
        let at = Progress::of(done);
        (0..DATA_PAGES)
            .map(|p| {
                let mut page = [0u64; WORDS];
                for (w, v) in page.iter_mut().enumerate() {
                    let e = if p < at.page || (p == at.page && written[w]) {
                        at.epoch
                    } else {
                        at.epoch - 1
                    };
                    *v = data_word(e, p, w);
                }
                page
            })
            .collect()
    }

    fn check_all(done: u64, pages: &[Page]) -> Result<(), Failure> {
        let at = Progress::of(done);
        for (p, page) in pages.iter().enumerate() {
            check_data(at, p as u64, page)?;
        }
        Ok(())
    }

    fn signed(counter: u64) -> Page {
        let mut page = [0u64; WORDS];
        for (w, v) in page.iter_mut().enumerate() {
            *v = signature_word(w);
        }
        page[COUNTER] = counter;
        page
    }

    #[test]
    fn progress() {
        assert_eq!(Progress::of(0), Progress { epoch: 1, page: 0 });
        assert_eq!(
            Progress::of(255),
            Progress {
                epoch: 1,
                page: 255
            }
        );
        assert_eq!(Progress::of(256), Progress { epoch: 2, page: 0 });
        assert_eq!(
            Progress::of(1000),
            Progress {
                epoch: 4,
                page: 232
            }
        );
        assert!(!Progress::epoch_complete(0));
        assert!(!Progress::epoch_complete(255));
        assert!(Progress::epoch_complete(256));
        assert!(Progress::epoch_complete(512));
        assert_eq!(HEAP_PAGES, 258);
    }

    #[test]
    fn patterns() {
        assert_eq!(data_word(0, 17, 5), 0);
        assert_eq!(data_word(1, 0, 0), mix(1 << 24));
        assert_eq!(data_word(3, 2, 7), mix((3 << 24) | (2 << 9) | 7));
        assert_ne!(data_word(2, 0, 0), data_word(1, 0, 0));
        assert_eq!(signature_word(0), 0);
        assert_eq!(signature_word(9), mix(0x5157_0000_0000_0009));
        assert!((1..WORDS).all(|w| signature_word(w) != 0));
    }

    #[test]
    fn fresh_state_passes() {
        let zero = [0u64; WORDS];
        let h = check_header(&zero).unwrap();
        assert_eq!(
            h,
            Header {
                done: 0,
                journaled: 0
            }
        );
        assert_eq!(check_journal(0, &zero), Ok(0));
        for p in 0..DATA_PAGES {
            assert_eq!(check_data(Progress::of(0), p, &zero), Ok(()));
        }
    }

    #[test]
    fn header_garbage_fails() {
        let mut h = [0u64; WORDS];
        h[DONE] = 12345;
        h[JOURNALED] = 7;
        assert_eq!(
            check_header(&h),
            Ok(Header {
                done: 12345,
                journaled: 7
            })
        );
        h[300] = 9;
        let e = check_header(&h).unwrap_err();
        assert_eq!(
            e,
            Failure::Header {
                word: 300,
                found: 9
            }
        );
        assert_eq!(format!("{e}"), "header word 300: expected 0x0, found 0x9");
    }

    #[test]
    fn journal_rules() {
        // Before the first increment the signature may be partly written.
        let mut page = [0u64; WORDS];
        page[1] = signature_word(1);
        assert_eq!(check_journal(0, &page), Ok(0));
        // Once the counter moved the signature must be whole.
        page[COUNTER] = 1;
        let e = check_journal(0, &page).unwrap_err();
        assert_eq!(
            e,
            Failure::Signature {
                word: 2,
                counter: 1,
                found: 0
            }
        );
        assert_eq!(
            format!("{e}"),
            format!(
                "journal page word 2 (counter 1): expected {:#x}, found 0x0",
                signature_word(2)
            )
        );
        let page = signed(41);
        assert_eq!(check_journal(41, &page), Ok(41));
        assert_eq!(check_journal(3, &page), Ok(41));
        let e = check_journal(42, &page).unwrap_err();
        assert_eq!(
            e,
            Failure::JournalBehind {
                counter: 41,
                journaled: 42
            }
        );
        assert_eq!(
            format!("{e}"),
            "journal counter 41 is behind 42, confirmed durable"
        );
    }

    #[test]
    fn stale_page_fails_at_its_first_word() {
        // Epoch 3, page 10 in progress: page 12 still at epoch 1 (two behind).
        let done = 2 * DATA_PAGES + 10;
        let mut pages = model(done, &[false; WORDS]);
        for (w, v) in pages[12].iter_mut().enumerate() {
            *v = data_word(1, 12, w);
        }
        let e = check_all(done, &pages).unwrap_err();
        assert_eq!(
            e,
            Failure::Data {
                page: 12,
                word: 0,
                epoch: 2,
                or_previous: false,
                found: data_word(1, 12, 0)
            }
        );
        assert_eq!(
            format!("{e}"),
            format!(
                "data page 12 word 0: expected {:#x} (epoch 2), found {:#x}",
                data_word(2, 12, 0),
                data_word(1, 12, 0)
            )
        );
    }

    #[test]
    fn header_behind_the_data_fails() {
        // Pages 0..6 of epoch 2 are written but the header says page 3 is
        // being filled (as if header stores were lost): page 3 may hold
        // either epoch, page 4 must still hold epoch 1.
        let written = model(DATA_PAGES + 6, &[false; WORDS]);
        let e = check_all(DATA_PAGES + 3, &written).unwrap_err();
        assert_eq!(
            e,
            Failure::Data {
                page: 4,
                word: 0,
                epoch: 1,
                or_previous: false,
                found: data_word(2, 4, 0)
            }
        );
        // The in-progress page names both epochs.
        let mut pages = model(DATA_PAGES + 3, &[true; WORDS]);
        pages[3][8] = 1;
        let e = check_all(DATA_PAGES + 3, &pages).unwrap_err();
        assert_eq!(
            format!("{e}"),
            format!(
                "data page 3 word 8: expected {:#x} (epoch 2) or {:#x} (epoch 1), found 0x1",
                data_word(2, 3, 8),
                data_word(1, 3, 8)
            )
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Every state the workload can be stopped in passes.
        #[test]
        fn reachable_states_pass(
            done in 0u64..20 * DATA_PAGES,
            written in proptest::array::uniform32(any::<u16>()),
        ) {
            let mut w = [false; WORDS];
            for (i, b) in w.iter_mut().enumerate() {
                *b = written[i / 16] & (1 << (i % 16)) != 0;
            }
            let pages = model(done, &w);
            prop_assert_eq!(check_all(done, &pages), Ok(()));
        }

        /// Changing any one data word to a value its page may not hold is
        /// reported at exactly that page and word.
        #[test]
        fn one_bad_word_is_found(
            done in 0u64..20 * DATA_PAGES,
            page in 0u64..DATA_PAGES,
            word in 0usize..WORDS,
            value: u64,
        ) {
            let at = Progress::of(done);
            let mut pages = model(done, &[false; WORDS]);
            let allowed = [
                data_word(at.epoch, page, word),
                data_word(at.epoch.saturating_sub(1), page, word),
            ];
            prop_assume!(!allowed.contains(&value));
            pages[page as usize][word] = value;
            match check_all(done, &pages) {
                Err(Failure::Data { page: p, word: w, found, .. }) => {
                    prop_assert_eq!((p, w, found), (page, word, value));
                }
                other => prop_assert!(false, "got {:?}", other),
            }
        }

        /// A torn journal page (a signature word wrong) fails; a whole one
        /// passes whenever its counter is at least the confirmed value.
        #[test]
        fn journal_page(counter in 1u64..1000, journaled in 0u64..1000, word in 1usize..WORDS, value: u64) {
            let page = signed(counter);
            let want = if counter >= journaled {
                Ok(counter)
            } else {
                Err(Failure::JournalBehind { counter, journaled })
            };
            prop_assert_eq!(check_journal(journaled, &page), want);
            prop_assume!(value != signature_word(word));
            let mut torn = page;
            torn[word] = value;
            prop_assert_eq!(
                check_journal(0, &torn),
                Err(Failure::Signature { word, counter, found: value })
            );
        }
    }
}
