//! Writing images (feature `alloc`): collect objects in any order, then
//! [`Builder::build`] sorts them, computes the bounds and the checksum, and
//! checks the result with [`Image::parse`].

use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use stet_keys::{Key, Space, MAX_OID};

use crate::{
    checksum, Error, Header, Image, MAX_NAME, NAME_FIELD, NAME_RECORD, NODE_RECORD, OID_LIMIT,
    PAGE_RECORD, PAGE_SIZE, RUN_RECORD, SLOTS,
};

/// Why an image could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// Two nodes with the same oid.
    DuplicateNode(u64),
    /// Two pages with the same oid.
    DuplicatePage(u64),
    /// Two names for the same node.
    DuplicateName(u64),
    /// A name is empty, longer than [`MAX_NAME`] bytes or contains NUL.
    BadName(String),
    /// An oid, a key's referent or a bound is beyond 2^40.
    OidRange(u64),
    /// A run or name oid is not a node of the image.
    NotANode(u64),
    /// More than 2^32 - 1 records in a section.
    TooLarge,
    /// The result does not parse (a bug in the builder).
    Invalid(Error),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::DuplicateNode(o) => write!(f, "node {o} added twice"),
            BuildError::DuplicatePage(o) => write!(f, "page {o} added twice"),
            BuildError::DuplicateName(o) => write!(f, "node {o} named twice"),
            BuildError::BadName(n) => write!(
                f,
                "bad name {n:?}: must be 1..={MAX_NAME} bytes without NUL"
            ),
            BuildError::OidRange(o) => write!(f, "oid {o} is beyond 2^40"),
            BuildError::NotANode(o) => write!(f, "oid {o} is not a node of the image"),
            BuildError::TooLarge => write!(f, "more than 2^32 - 1 records in a section"),
            BuildError::Invalid(e) => write!(f, "built image does not parse: {e}"),
        }
    }
}

/// Collects the objects of an image.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    nodes: Vec<(u64, u32, [Key; SLOTS])>,
    pages: Vec<(u64, u32, Box<[u8; PAGE_SIZE]>)>,
    run: Vec<u64>,
    names: Vec<(u64, String)>,
    first_free_node: u64,
    first_free_page: u64,
}

impl Builder {
    /// An empty image.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds node `oid` at `version` holding `keys` (hints are dropped).
    pub fn node(&mut self, oid: u64, version: u32, keys: [Key; SLOTS]) -> &mut Self {
        self.nodes.push((oid, version, keys.map(Key::canonical)));
        self
    }

    /// Adds page `oid` at `version` holding `data`.
    pub fn page(&mut self, oid: u64, version: u32, data: &[u8; PAGE_SIZE]) -> &mut Self {
        self.pages.push((oid, version, Box::new(*data)));
        self
    }

    /// Starts domain root node `oid` running (adding it twice is harmless).
    pub fn run(&mut self, oid: u64) -> &mut Self {
        self.run.push(oid);
        self
    }

    /// Names domain root node `oid`.
    pub fn name(&mut self, oid: u64, name: &str) -> &mut Self {
        self.names.push((oid, name.into()));
        self
    }

    /// Raises `first_free_node` and `first_free_page` to at least these
    /// values (they are otherwise the object bounds the contents imply).
    pub fn reserve(&mut self, first_free_node: u64, first_free_page: u64) -> &mut Self {
        self.first_free_node = self.first_free_node.max(first_free_node);
        self.first_free_page = self.first_free_page.max(first_free_page);
        self
    }

    /// The object bounds `(object_nodes, object_pages)` the contents imply:
    /// one past the highest oid listed or referred to.
    fn bounds(&self) -> Result<(u64, u64), BuildError> {
        let mut bound = [0u64; 2];
        let mut cover = |space: Space, end: u64| {
            let b = &mut bound[space as usize];
            *b = (*b).max(end);
        };
        for (oid, _, keys) in &self.nodes {
            cover(Space::Node, oid.saturating_add(1));
            for k in keys {
                if let Some((space, first, count)) = k.range_parts() {
                    cover(space, first + count as u64);
                } else if let Some(space) = k.space() {
                    cover(space, k.oid() + 1);
                }
            }
        }
        for (oid, _, _) in &self.pages {
            cover(Space::Page, oid.saturating_add(1));
        }
        for b in bound {
            if b > OID_LIMIT {
                return Err(BuildError::OidRange(b - 1));
            }
        }
        Ok((bound[Space::Node as usize], bound[Space::Page as usize]))
    }

    /// Serialises the image.
    pub fn build(&self) -> Result<alloc::vec::Vec<u8>, BuildError> {
        let mut nodes: Vec<_> = self.nodes.iter().collect();
        nodes.sort_by_key(|n| n.0);
        if let Some(w) = nodes.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(BuildError::DuplicateNode(w[0].0));
        }
        let mut pages: Vec<_> = self.pages.iter().collect();
        pages.sort_by_key(|p| p.0);
        if let Some(w) = pages.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(BuildError::DuplicatePage(w[0].0));
        }
        let listed = nodes.iter().map(|n| n.0).chain(pages.iter().map(|p| p.0));
        if let Some(oid) = listed.into_iter().find(|&o| o > MAX_OID) {
            return Err(BuildError::OidRange(oid));
        }
        let is_node = |oid: u64| nodes.binary_search_by_key(&oid, |n| n.0).is_ok();
        let mut run = self.run.clone();
        run.sort_unstable();
        run.dedup();
        if let Some(&oid) = run.iter().find(|&&o| !is_node(o)) {
            return Err(BuildError::NotANode(oid));
        }
        let mut names: Vec<_> = self.names.iter().collect();
        names.sort_by_key(|n| n.0);
        if let Some(w) = names.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(BuildError::DuplicateName(w[0].0));
        }
        for (oid, name) in &names {
            if name.is_empty() || name.len() > MAX_NAME || name.contains('\0') {
                return Err(BuildError::BadName(name.clone()));
            }
            if !is_node(*oid) {
                return Err(BuildError::NotANode(*oid));
            }
        }
        let (object_nodes, object_pages) = self.bounds()?;
        let count = |n: usize| u32::try_from(n).map_err(|_| BuildError::TooLarge);
        let mut header = Header {
            node_count: count(nodes.len())?,
            page_count: count(pages.len())?,
            run_count: count(run.len())?,
            name_count: count(names.len())?,
            first_free_node: self.first_free_node.max(object_nodes),
            first_free_page: self.first_free_page.max(object_pages),
            object_nodes,
            object_pages,
            ..Header::default()
        };
        for first_free in [header.first_free_node, header.first_free_page] {
            if first_free > OID_LIMIT {
                return Err(BuildError::OidRange(first_free));
            }
        }
        header.total_len = header.expected_len();
        let mut out = Vec::with_capacity(header.total_len as usize);
        out.extend_from_slice(&[0; crate::HEADER_LEN]);
        for (oid, version, keys) in &nodes {
            let start = out.len();
            out.extend_from_slice(&oid.to_le_bytes());
            out.extend_from_slice(&version.to_le_bytes());
            out.extend_from_slice(&0u32.to_le_bytes());
            for k in keys {
                out.extend_from_slice(&k.to_bytes());
            }
            debug_assert_eq!(out.len() - start, NODE_RECORD);
        }
        for (oid, version, data) in &pages {
            let start = out.len();
            out.extend_from_slice(&oid.to_le_bytes());
            out.extend_from_slice(&version.to_le_bytes());
            out.extend_from_slice(&0u32.to_le_bytes());
            out.extend_from_slice(&data[..]);
            debug_assert_eq!(out.len() - start, PAGE_RECORD);
        }
        for oid in &run {
            out.extend_from_slice(&oid.to_le_bytes());
        }
        debug_assert_eq!(RUN_RECORD, 8);
        for (oid, name) in &names {
            let mut field = [0u8; NAME_FIELD];
            field[..name.len()].copy_from_slice(name.as_bytes());
            out.extend_from_slice(&oid.to_le_bytes());
            out.extend_from_slice(&field);
        }
        debug_assert_eq!(NAME_RECORD, 8 + NAME_FIELD);
        debug_assert_eq!(out.len() as u64, header.total_len);
        header.crc32c = checksum(&out[crate::HEADER_LEN..]);
        out[..crate::HEADER_LEN].copy_from_slice(&header.to_bytes());
        Image::parse(&out).map_err(BuildError::Invalid)?;
        Ok(out)
    }
}
