//! The first start: the file system from the cpio archive the image gives
//! (`make` builds it from `build/rootfs/`), then the device nodes, `/tmp`
//! and `/proc`.

use crate::slots::{ARCHIVE, SELF_SPACE, T};
use crate::Unixd;
use stet_rt::abi::order::node;
use stet_rt::key::Msg;
use stet_rt::window::Window;
use stet_unix::cpio::Reader;
use stet_unix::fs::{mode, MAX_LINK, MAX_PATH, ROOT};
use stet_unix_personality::keydir::{fetch, swap};

/// Root slot of this domain's space where the archive is seen.
const ARCHIVE_SLOT: u64 = 2;

/// What the archive held.
#[derive(Default)]
pub struct Stats {
    pub files: u32,
    pub dirs: u32,
    pub links: u32,
    pub bytes: u64,
}

/// Device nodes every system has: name, `major << 8 | minor`.
const DEVICES: [(&[u8], u32); 6] = [
    (b"null", 0x103),
    (b"zero", 0x105),
    (b"random", 0x108),
    (b"urandom", 0x109),
    (b"tty", 0x500),
    (b"console", 0x501),
];

/// Builds the file system.
pub fn build(d: &mut Unixd<'_>) -> Result<Stats, &'static str> {
    let now = d.time();
    if let Some(r) = d.fs.inode_mut(ROOT) {
        r.mtime = now;
        r.ctime = now;
        r.atime = now;
    }
    let mut st = Stats::default();
    let archive = load(d, &mut st);
    // What every system has, whatever the archive held.
    let dev = match d.fs.lookup(ROOT, b"dev") {
        Some(i) => i,
        None => {
            d.fs.create(ROOT, b"dev", mode::DIR | 0o755, now)
                .map_err(|_| "no /dev")?
        }
    };
    for (name, rdev) in DEVICES {
        if d.fs.lookup(dev, name).is_none() {
            let ino =
                d.fs.create(dev, name, mode::CHR | 0o666, now)
                    .map_err(|_| "no device")?;
            if let Some(i) = d.fs.inode_mut(ino) {
                i.rdev = rdev;
            }
        }
    }
    for (name, perm) in [(&b"tmp"[..], 0o1777), (b"proc", 0o555)] {
        if d.fs.lookup(ROOT, name).is_none() {
            d.fs.create(ROOT, name, mode::DIR | perm, now)
                .map_err(|_| "no /tmp")?;
        }
    }
    archive.map(|()| st)
}

fn load(d: &mut Unixd<'_>, st: &mut Stats) -> Result<(), &'static str> {
    let len = Msg::new(ARCHIVE, node::READ_NUMBER).w0(1).call();
    if !len.ok() {
        return Err("no archive");
    }
    let len = len.w[0];
    fetch(ARCHIVE, 0, T).map_err(|_| "no archive")?;
    swap(SELF_SPACE, ARCHIVE_SLOT, T, 0).map_err(|_| "cannot map the archive")?;
    let win = Window::new(ARCHIVE_SLOT, len).ok_or("archive too big")?;
    let mut read = |off: u64, buf: &mut [u8]| win.read(off, buf);
    let mut r = Reader::new(len);
    let mut name = [0u8; MAX_PATH];
    // Hard links: the archive's inode → ours.
    let mut seen = [(0u32, 0u32); 256];
    let mut nseen = 0;
    let now = d.time();
    while let Some(e) = r.next(&mut read, &mut name) {
        let e = e.map_err(|_| "the archive is damaged")?;
        let full = &name[..e.name_len];
        let path = full.strip_prefix(b"./").unwrap_or(full);
        if path.is_empty() || path == b"." {
            continue;
        }
        let par =
            d.fs.parent(ROOT, path)
                .map_err(|_| "a member's directory is missing")?;
        let t = e.mtime as u64 * 1_000_000_000;
        let fmt = e.mode & mode::FMT;
        let ino = if fmt == mode::LNK {
            let mut target = [0u8; MAX_LINK];
            let n = e.size as usize;
            if n > target.len() {
                return Err("a symlink's target is too long");
            }
            win.read(e.data, &mut target[..n]);
            st.links += 1;
            d.fs.symlink(par.dir, par.name, &target[..n], t)
                .map_err(|_| "symlink")?
        } else if let Some(&(_, ours)) = seen[..nseen].iter().find(|s| s.0 == e.ino && e.nlink > 1)
        {
            d.fs.link(par.dir, par.name, ours, t).map_err(|_| "link")?;
            ours
        } else {
            let ino =
                d.fs.create(par.dir, par.name, e.mode, t)
                    .map_err(|_| "create")?;
            if fmt == mode::DIR {
                st.dirs += 1;
            } else {
                st.files += 1;
            }
            if e.nlink > 1 && nseen < seen.len() {
                seen[nseen] = (e.ino, ino);
                nseen += 1;
            }
            ino
        };
        if fmt == mode::REG && e.size > 0 {
            d.content
                .write_from(ino, 0, win.addr(e.data), e.size as u64)
                .map_err(|_| "out of space for file data")?;
            st.bytes += e.size as u64;
            if let Some(i) = d.fs.inode_mut(ino) {
                i.size = e.size as u64;
            }
        }
        if let Some(i) = d.fs.inode_mut(ino) {
            i.mtime = t;
            i.ctime = t;
            i.atime = t;
        }
    }
    let _ = now;
    // The archive is no longer needed in the window.
    let _ = Msg::new(SELF_SPACE, node::SWAP).w0(ARCHIVE_SLOT).call();
    Ok(())
}
