//! An in-memory object store for tests: nodes and pages with versions, as
//! the kernel's object cache would hold them. Object `oid` is index `oid`;
//! a key designates its object only while its version matches.

use crate::{walk, Access, Found, Invalid, Store};
use std::vec::Vec;
use stet_keys::{Key, KeyType};

/// A node: its version and its 16 slots.
#[derive(Clone, Debug)]
pub struct Node {
    pub version: u32,
    pub slots: [Key; 16],
}

/// Nodes and pages, by oid.
#[derive(Clone, Debug, Default)]
pub struct Model {
    pub nodes: Vec<Node>,
    pub pages: Vec<u32>,
}

impl Model {
    pub fn new() -> Model {
        Model::default()
    }

    /// A new node, all slots void; its oid.
    pub fn node(&mut self) -> u64 {
        self.nodes.push(Node {
            version: 0,
            slots: [Key::VOID; 16],
        });
        self.nodes.len() as u64 - 1
    }

    /// A new page; its oid.
    pub fn page(&mut self) -> u64 {
        self.pages.push(0);
        self.pages.len() as u64 - 1
    }

    /// A segment key to node `oid` at its current version.
    pub fn seg(&self, oid: u64, lss: u8, rights: u8) -> Key {
        Key::segment(oid, self.nodes[oid as usize].version, lss, rights)
    }

    /// A page key to page `oid` at its current version.
    pub fn page_key(&self, oid: u64, ro: bool) -> Key {
        Key::page(oid, self.pages[oid as usize], ro)
    }

    /// Puts `key` in slot `slot` of node `oid`.
    pub fn set(&mut self, oid: u64, slot: usize, key: Key) {
        self.nodes[oid as usize].slots[slot] = key;
    }

    /// Destroys node `oid`: every existing key to it stops working.
    pub fn destroy_node(&mut self, oid: u64) {
        self.nodes[oid as usize].version += 1;
    }

    /// Destroys page `oid`.
    pub fn destroy_page(&mut self, oid: u64) {
        self.pages[oid as usize] += 1;
    }

    /// The slots of the node `key` designates, if it still exists.
    pub fn contents(&self, key: Key) -> Option<&[Key; 16]> {
        let node = self.nodes.get(key.oid() as usize)?;
        (key.key_type() == KeyType::Segment && node.version == key.version()).then_some(&node.slots)
    }

    /// Whether the page `key` designates exists.
    pub fn page_live(&self, key: Key) -> bool {
        key.key_type() == KeyType::Page
            && self.pages.get(key.oid() as usize) == Some(&key.version())
    }

    /// Walks and records the nodes visited.
    pub fn run(
        &mut self,
        entry: Key,
        addr: u64,
        access: Access,
    ) -> (Result<Found, Invalid>, Vec<Key>) {
        let mut seen = Vec::new();
        let r = walk(self, entry, addr, access, &mut |k| seen.push(k));
        (r, seen)
    }
}

impl Store for Model {
    fn slot(&mut self, node: Key, slot: usize) -> Option<Key> {
        self.contents(node).map(|s| s[slot])
    }

    fn page_exists(&mut self, page: Key) -> bool {
        self.page_live(page)
    }
}
