//! What the UNIX personality's programs share: the key directory
//! (`keydir`), node keys kept in a tree of nodes from a bank, which both
//! `unixd` and every `unixkeeper` keep their keys in.
#![no_std]

pub mod keydir;
