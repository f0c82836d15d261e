//! Installing the big bang image on a new store: its objects are written
//! straight to their homes (both copies of each node block and version
//! block), not through the object cache, so an image may be larger than
//! memory. If the machine stops before checkpoint 1 commits, the next boot
//! finds a store with no checkpoint and installs the image again (the same
//! bytes to the same places).

use crate::arch::phys;
use crate::arch::phys::FrameNumber;
use crate::kernel::Kernel;
use crate::kprintln;
use stet_bigbang::Image;
use stet_store::geometry::{NODES_PER_BLOCK, NODE_RECORD};
use stet_store::node::{self, NodeImage};
use stet_store::versions::{self, Entry};

/// A block being filled: which one (relative to its area) and its frame.
struct Pending {
    block: Option<u64>,
    frame: FrameNumber,
}

/// Writes every object of `image` home. False (reported) on an I/O error
/// or an object outside the disk.
pub fn install(k: &mut Kernel, image: &Image<'_>) -> bool {
    let g = k.store.geo;
    let Some((s0, s1)) = k.store.scratch else {
        kprintln!("store: no frames to install the image with");
        return false;
    };
    let mut nodes = Pending {
        block: None,
        frame: s0,
    };
    for n in image.nodes() {
        if n.oid >= g.nodes {
            kprintln!(
                "store: image node {} is beyond the disk's {} nodes",
                n.oid,
                g.nodes
            );
            return false;
        }
        let b = n.oid / NODES_PER_BLOCK;
        if nodes.block != Some(b) && !switch(k, &mut nodes, b, Area::Nodes) {
            return false;
        }
        let img = NodeImage {
            oid: n.oid,
            version: n.version,
            calls: 0,
            keys: super::image_keys(&n.keys),
        };
        let at = (n.oid % NODES_PER_BLOCK) as usize * NODE_RECORD;
        phys::with_frame_mut(nodes.frame, |f| {
            node::encode(&img, &mut f[at..at + NODE_RECORD])
        });
    }
    if !flush_block(k, &nodes, Area::Nodes) {
        return false;
    }
    let mut vers = Pending {
        block: None,
        frame: s0,
    };
    let data = s1;
    for p in image.pages() {
        let Some(home) = g.page_home(p.oid) else {
            kprintln!(
                "store: image page {} is beyond the disk's {} pages",
                p.oid,
                g.pages
            );
            return false;
        };
        phys::write_frame(data, 0, p.data);
        if !write(k, home, data) {
            return false;
        }
        // The entry carries the home's checksum (reads check it).
        let entry = Entry::new(p.version, phys::frame_crc32c_called(data));
        let (vb, idx) = versions::version_block_of(p.oid);
        if vers.block != Some(vb) && !switch(k, &mut vers, vb, Area::Versions) {
            return false;
        }
        phys::with_frame_mut(vers.frame, |f| versions::set_entry(&mut f[..], idx, entry));
    }
    if !flush_block(k, &vers, Area::Versions) {
        return false;
    }
    matches!(k.store.disk.as_mut().map(|d| d.flush_sync()), Some(Ok(())))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Area {
    Nodes,
    Versions,
}

/// Block `b` of `area`, copy `c`.
fn place(k: &Kernel, area: Area, b: u64, c: u8) -> u64 {
    let g = k.store.geo;
    match area {
        Area::Nodes => g.node_area + c as u64 * g.node_blocks + b,
        Area::Versions => g.version_area + c as u64 * g.version_blocks + b,
    }
}

/// Writes the block being filled (both copies) and starts filling block
/// `b` from what the disk holds (blank on a new store; an earlier attempt's
/// bytes after a crash during the install).
fn switch(k: &mut Kernel, p: &mut Pending, b: u64, area: Area) -> bool {
    if !flush_block(k, p, area) {
        return false;
    }
    let at = place(k, area, b, 0);
    let ok = matches!(
        k.store.disk.as_mut().map(|d| d.read_sync(at, p.frame)),
        Some(Ok(()))
    );
    if !ok {
        kprintln!("store: cannot read block {at} installing the image");
        return false;
    }
    if area == Area::Versions
        && phys::with_frame(p.frame, |f| versions::classify(&f[..])) != versions::Kind::Valid
    {
        // Blank (or torn by a crash during an earlier install): start over.
        phys::with_frame_mut(p.frame, |f| {
            versions::encode_entries(
                &[Entry::NEVER; stet_store::geometry::VERSIONS_PER_BLOCK as usize],
                f,
            )
        });
    }
    p.block = Some(b);
    true
}

fn flush_block(k: &mut Kernel, p: &Pending, area: Area) -> bool {
    let Some(b) = p.block else { return true };
    if area == Area::Versions {
        k.store.set_blank(b, false);
    }
    (0..2).all(|c| {
        let at = place(k, area, b, c);
        write(k, at, p.frame)
    })
}

fn write(k: &mut Kernel, block: u64, f: FrameNumber) -> bool {
    let ok = matches!(
        k.store.disk.as_mut().map(|d| d.write_sync(block, f)),
        Some(Ok(()))
    );
    if !ok {
        kprintln!("store: cannot write block {block} installing the image");
    }
    ok
}
