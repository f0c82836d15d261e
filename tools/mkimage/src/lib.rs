//! Builds big bang images from domain specs and ELF programs (being written).

