//! The argument words (`arg` in a domain spec, `rdi` at entry) of the store
//! test programs.
//!
//! `ckptload`: bits 0..32 the number of epochs to run, then print
//! `load: done` and sleep forever (0: run forever); bits 32..48 take a
//! checkpoint every that many epochs (0: every [`DEFAULT_TAKE_EVERY`]).
//! `bigmem`: the number of heap pages to write and verify (0:
//! [`crate::big::DEFAULT_PAGES`]).

use crate::big;

/// Epochs between checkpoints `ckptload` asks for, unless told otherwise.
pub const DEFAULT_TAKE_EVERY: u64 = 4;

/// What `ckptload` is asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadArgs {
    /// Epochs to run before `load: done` (0: forever).
    pub epochs: u64,
    /// Epochs between checkpoints (at least 1).
    pub take_every: u64,
}

impl LoadArgs {
    /// Decodes the argument word.
    pub fn decode(arg: u64) -> LoadArgs {
        let take_every = (arg >> 32) & 0xffff;
        LoadArgs {
            epochs: arg & 0xffff_ffff,
            take_every: if take_every == 0 {
                DEFAULT_TAKE_EVERY
            } else {
                take_every
            },
        }
    }

    /// The argument word that decodes to `self` (`epochs` below 2^32,
    /// `take_every` below 2^16).
    pub fn encode(&self) -> u64 {
        (self.take_every << 32) | self.epochs
    }
}

/// The pages `bigmem` writes and verifies.
pub fn big_pages(arg: u64) -> u64 {
    if arg == 0 {
        big::DEFAULT_PAGES
    } else {
        arg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn decodes() {
        assert_eq!(
            LoadArgs::decode(0),
            LoadArgs {
                epochs: 0,
                take_every: 4
            }
        );
        assert_eq!(
            LoadArgs::decode(0x0003_0000_0014),
            LoadArgs {
                epochs: 20,
                take_every: 3
            }
        );
        assert_eq!(big_pages(0), 65536);
        assert_eq!(big_pages(300), 300);
    }

    proptest! {
        #[test]
        fn round_trips(epochs in 0u64..1 << 32, take_every in 1u64..1 << 16) {
            let a = LoadArgs { epochs, take_every };
            prop_assert_eq!(LoadArgs::decode(a.encode()), a);
        }
    }
}
