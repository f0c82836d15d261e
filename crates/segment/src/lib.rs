//! Segment trees: walking a tree of nodes and pages to translate an address (being written).
#![no_std]
