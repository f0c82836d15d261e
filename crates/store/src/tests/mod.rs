//! Unit and property tests of the disk format, the scrub's plan (in
//! `scrub`), and (in `sim`) the crash-consistency simulation of the
//! kernel's write protocol.

mod ckpt;
mod format;
mod journal;
mod scrub;
mod sim;
