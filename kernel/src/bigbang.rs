//! The big bang: loading the primordial image (built on the host by
//! tools/mkimage, format in crates/bigbang and docs/IMAGE.md) into the
//! object cache, and starting the domains it lists as running.
//!
//! The image is only a list of initial objects; after this the kernel knows
//! them by identity like any other, and the store checkpoints them and
//! faults them back in from disk like any other.

use crate::arch::phys;
use crate::domain;
use crate::kernel::{Kernel, MAX_NAMES, NAME_LEN};
use crate::kprintln;
use stet_bigbang::Image;

/// Loads the image in `module` and readies its running domains.
pub fn load(k: &mut Kernel, module: &'static [u8]) {
    let image = match Image::parse(module) {
        Ok(i) => i,
        Err(e) => {
            kprintln!("boot: the big bang image is unusable: {e}");
            return;
        }
    };
    if k.store.persistent() {
        // A new store: the objects go straight home (the image may be
        // larger than memory); domains fault them in as they run.
        if !crate::store::install::install(k, &image) {
            crate::fatal(format_args!(
                "store: the big bang image could not be installed"
            ));
        }
        start(k, &image);
        return;
    }
    let (_, ncap, _, pcap) = k.objs.usage();
    let h = image.header();
    if h.object_nodes > ncap as u64 || h.object_pages > pcap as u64 {
        kprintln!(
            "boot: the big bang image needs {} nodes and {} pages; the cache holds {} and {}",
            h.object_nodes,
            h.object_pages,
            ncap,
            pcap
        );
        return;
    }
    for n in image.nodes() {
        let Ok(i) = k.node(n.oid) else {
            kprintln!("boot: object cache full loading node {}", n.oid);
            return;
        };
        let e = k.objs.node_mut(i);
        e.version = n.version;
        e.keys = n.keys;
    }
    for p in image.pages() {
        let Ok(i) = k.page(p.oid) else {
            kprintln!("boot: out of memory loading page {}", p.oid);
            return;
        };
        let Ok(f) = k.page_restore(i, p.version) else {
            kprintln!("boot: out of memory loading page {}", p.oid);
            return;
        };
        phys::write_frame(f, 0, p.data);
    }
    start(k, &image);
}

/// Names the image's domains and readies those it lists as running.
fn start(k: &mut Kernel, image: &Image<'_>) {
    for n in image.names().take(MAX_NAMES) {
        let mut b = [0u8; NAME_LEN];
        let len = n.name.len().min(NAME_LEN);
        b[..len].copy_from_slice(&n.name.as_bytes()[..len]);
        k.names[k.nnames] = (n.oid, b);
        k.nnames += 1;
    }
    let mut running = 0;
    for oid in image.run() {
        let Ok(root) = k.node(oid) else { continue };
        match domain::prepare(k, root) {
            Ok(ci) => {
                if domain::runnable(&k.ctxs[ci]) {
                    domain::ready_push(k, ci);
                    running += 1;
                }
            }
            Err(e) => kprintln!(
                "boot: domain '{}' cannot be prepared: {:?}",
                k.name_of(oid),
                e
            ),
        }
    }
    kprintln!(
        "bigbang: {} nodes, {} pages, {} domains running",
        image.node_count(),
        image.page_count(),
        running
    );
}
