//! The primordial (big bang) image format: the initial nodes, pages and running domains (being written).
#![no_std]
