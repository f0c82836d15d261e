use super::*;
use std::boxed::Box;
use std::vec::Vec;

fn fs() -> Box<Fs> {
    Box::new(Fs::new(5))
}

fn names(f: &Fs, dir: u32) -> Vec<std::string::String> {
    let mut buf = [0u8; 4096];
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        let (n, next) = f.getdents(dir, pos, &mut buf).unwrap();
        if n == 0 {
            break;
        }
        let mut at = 0;
        while at < n {
            let reclen = u16::from_le_bytes([buf[at + 16], buf[at + 17]]) as usize;
            let name = &buf[at + 19..at + reclen];
            let end = name.iter().position(|&b| b == 0).unwrap();
            out.push(std::string::String::from_utf8(name[..end].to_vec()).unwrap());
            at += reclen;
        }
        pos = next;
    }
    out.sort();
    out
}

#[test]
fn resolve_watching_reports_lookups_in_the_watched_directory() {
    let mut f = fs();
    let bin = f.create(ROOT, b"bin", mode::DIR | 0o755, 6).unwrap();
    let proc = f.create(ROOT, b"proc", mode::DIR | 0o555, 6).unwrap();
    let t = f.create(bin, b"true", mode::REG | 0o755, 6).unwrap();
    let one = f.create(proc, b"1", mode::DIR | 0o555, 6).unwrap();
    f.symlink(bin, b"p", b"/proc/1", 6).unwrap();
    f.symlink(bin, b"q", b"true", 6).unwrap();
    let w = |cwd, p: &[u8]| f.resolve_watching(cwd, p, true, proc);
    assert_eq!(w(ROOT, b"/bin/true"), (Ok(t), false));
    assert_eq!(w(bin, b"q"), (Ok(t), false));
    assert_eq!(w(ROOT, b"/proc/1"), (Ok(one), true));
    assert_eq!(w(ROOT, b"/proc/2"), (Err(ENOENT), true));
    // Through a symbolic link, and through "..".
    assert_eq!(w(ROOT, b"/bin/p"), (Ok(one), true));
    assert_eq!(w(one, b"../../bin/true"), (Ok(t), true));
    assert_eq!(w(one, b"."), (Ok(one), false));
    // The directory itself, named last, is not looked in.
    assert_eq!(w(ROOT, b"/proc"), (Ok(proc), false));
    assert_eq!(w(ROOT, b"/bin/nope"), (Err(ENOENT), false));
}

#[test]
fn create_lookup_resolve() {
    let mut f = fs();
    let etc = f.create(ROOT, b"etc", mode::DIR | 0o755, 6).unwrap();
    let pw = f.create(etc, b"passwd", mode::REG | 0o644, 7).unwrap();
    assert_eq!(f.resolve(ROOT, b"/etc/passwd", true), Ok(pw));
    assert_eq!(f.resolve(etc, b"passwd", true), Ok(pw));
    assert_eq!(f.resolve(etc, b"../etc/./passwd", true), Ok(pw));
    assert_eq!(f.resolve(ROOT, b"//etc//", true), Ok(etc));
    assert_eq!(f.resolve(ROOT, b"/etc/passwd/", true), Err(ENOTDIR));
    assert_eq!(f.resolve(ROOT, b"/etc/passwd/x", true), Err(ENOTDIR));
    assert_eq!(f.resolve(ROOT, b"/etc/nope", true), Err(ENOENT));
    assert_eq!(f.resolve(ROOT, b"", true), Err(ENOENT));
    assert_eq!(f.resolve(ROOT, b"/..", true), Ok(ROOT));
    assert_eq!(f.create(etc, b"passwd", mode::REG, 8), Err(EEXIST));
    assert_eq!(f.create(pw, b"x", mode::REG, 8), Err(ENOTDIR));
    assert_eq!(f.create(etc, &[b'a'; 256], mode::REG, 8), Err(ENAMETOOLONG));
    assert_eq!(f.inode(ROOT).unwrap().nlink, 3);
    assert_eq!(f.inode(etc).unwrap().nlink, 2);
    assert_eq!(f.inode(etc).unwrap().mtime, 7);
    let p = f.parent(ROOT, b"/etc/new/").unwrap();
    assert_eq!((p.dir, p.name), (etc, &b"new"[..]));
    let p = f.parent(etc, b"x").unwrap();
    assert_eq!((p.dir, p.name), (etc, &b"x"[..]));
    assert_eq!(f.parent(ROOT, b"/nope/x"), Err(ENOENT));
    assert_eq!(f.parent(ROOT, b"/etc/passwd/x"), Err(ENOTDIR));
}

#[test]
fn getdents_after_create_unlink_rename() {
    let mut f = fs();
    let d = f.create(ROOT, b"d", mode::DIR | 0o755, 1).unwrap();
    for n in ["a", "b", "c"] {
        f.create(d, n.as_bytes(), mode::REG | 0o644, 1).unwrap();
    }
    assert_eq!(names(&f, d), [".", "..", "a", "b", "c"]);
    f.unlink(d, b"b", 2).unwrap();
    f.rename(d, b"c", d, b"z", 3).unwrap();
    assert_eq!(names(&f, d), [".", "..", "a", "z"]);
    // Small buffers: one record at a time, same result.
    let mut buf = [0u8; 24];
    let (n, next) = f.getdents(d, 0, &mut buf).unwrap();
    assert_eq!((n, next), (24, 1));
    assert_eq!(f.getdents(d, 0, &mut [0u8; 10]), Err(EINVAL));
    assert_eq!(f.getdents(ROOT, 99, &mut buf), Ok((0, 99)));
}

#[test]
fn links_and_unlink_counts() {
    let mut f = fs();
    let a = f.create(ROOT, b"a", mode::REG | 0o644, 1).unwrap();
    f.link(ROOT, b"b", a, 2).unwrap();
    assert_eq!(f.inode(a).unwrap().nlink, 2);
    assert_eq!(f.link(ROOT, b"b", a, 2), Err(EEXIST));
    assert_eq!(f.link(ROOT, b"r", ROOT, 2), Err(EPERM));
    assert_eq!(f.unlink(ROOT, b"a", 3), Ok((a, false)));
    assert_eq!(f.unlink(ROOT, b"b", 3), Ok((a, true)));
    assert_eq!(f.unlink(ROOT, b"b", 3), Err(ENOENT));
    f.free(a);
    assert!(f.inode(a).is_none());
}

#[test]
fn rmdir_and_rename_rules() {
    let mut f = fs();
    let d = f.create(ROOT, b"d", mode::DIR | 0o755, 1).unwrap();
    let e = f.create(d, b"e", mode::DIR | 0o755, 1).unwrap();
    let x = f.create(ROOT, b"x", mode::REG, 1).unwrap();
    assert_eq!(f.rmdir(ROOT, b"d", 2), Err(ENOTEMPTY));
    assert_eq!(f.rmdir(ROOT, b"x", 2), Err(ENOTDIR));
    assert_eq!(f.unlink(ROOT, b"d", 2), Err(EISDIR));
    assert_eq!(
        f.rename(ROOT, b"d", e, b"dd", 2),
        Err(EINVAL),
        "into itself"
    );
    assert_eq!(f.rename(ROOT, b"x", d, b"e", 2), Err(EISDIR));
    assert_eq!(f.rename(d, b"e", ROOT, b"x", 2), Err(ENOTDIR));
    // A directory moves and its ".." follows.
    f.rename(d, b"e", ROOT, b"e2", 3).unwrap();
    assert_eq!(f.lookup(e, b".."), Some(ROOT));
    assert_eq!(f.inode(d).unwrap().nlink, 2);
    assert_eq!(f.inode(ROOT).unwrap().nlink, 4);
    // A file replaces a file: the old one is reported.
    let y = f.create(ROOT, b"y", mode::REG, 1).unwrap();
    assert_eq!(f.rename(ROOT, b"x", ROOT, b"y", 4), Ok(Some((y, true))));
    assert_eq!(f.resolve(ROOT, b"y", true), Ok(x));
    // A directory replaces an empty one.
    assert_eq!(f.rename(ROOT, b"e2", ROOT, b"d", 5), Ok(Some((d, true))));
    assert_eq!(f.resolve(ROOT, b"d", true), Ok(e));
    assert_eq!(f.inode(ROOT).unwrap().nlink, 3);
    assert_eq!(f.rmdir(ROOT, b"d", 5), Ok(e));
    assert_eq!(f.inode(ROOT).unwrap().nlink, 2);
}

#[test]
fn symlinks() {
    let mut f = fs();
    let bin = f.create(ROOT, b"bin", mode::DIR | 0o755, 1).unwrap();
    let bb = f.create(bin, b"busybox", mode::REG | 0o755, 1).unwrap();
    let sh = f.symlink(bin, b"sh", b"busybox", 2).unwrap();
    f.symlink(ROOT, b"abs", b"/bin/sh", 2).unwrap();
    f.symlink(ROOT, b"loop", b"/loop", 2).unwrap();
    f.symlink(ROOT, b"b", b"bin", 2).unwrap();
    assert_eq!(f.resolve(ROOT, b"/bin/sh", true), Ok(bb));
    assert_eq!(f.resolve(ROOT, b"/bin/sh", false), Ok(sh));
    assert_eq!(f.resolve(ROOT, b"/abs", true), Ok(bb));
    assert_eq!(f.resolve(ROOT, b"/b/busybox", false), Ok(bb));
    assert_eq!(f.resolve(ROOT, b"/loop", true), Err(ELOOP));
    assert_eq!(f.link_target(sh), Some(&b"busybox"[..]));
    assert_eq!(f.inode(sh).unwrap().size, 7);
    assert_eq!(
        f.symlink(ROOT, b"l", &[b'x'; MAX_PATH + 1], 2),
        Err(ENAMETOOLONG)
    );
}

#[test]
fn paths_and_stat() {
    let mut f = fs();
    let a = f.create(ROOT, b"a", mode::DIR | 0o755, 1).unwrap();
    let b = f.create(a, b"b", mode::DIR | 0o700, 1).unwrap();
    let mut out = [0u8; 64];
    let n = f.path_of(b, &mut out).unwrap();
    assert_eq!(&out[..n], b"/a/b");
    let n = f.path_of(ROOT, &mut out).unwrap();
    assert_eq!(&out[..n], b"/");
    assert_eq!(f.path_of(b, &mut [0u8; 3]), Err(ERANGE));
    // Any inode's path: a file's through its directory's.
    let c = f.create(b, b"c", mode::REG | 0o600, 1).unwrap();
    let r = f.create(ROOT, b"r", mode::FIFO | 0o600, 1).unwrap();
    let n = f.any_path(c, &mut out).unwrap();
    assert_eq!(&out[..n], b"/a/b/c");
    let n = f.any_path(r, &mut out).unwrap();
    assert_eq!(&out[..n], b"/r");
    let n = f.any_path(a, &mut out).unwrap();
    assert_eq!(&out[..n], b"/a");
    assert_eq!(f.any_path(c, &mut [0u8; 5]), Err(ERANGE));
    f.unlink(b, b"c", 2).unwrap();
    assert_eq!(f.any_path(c, &mut out), Err(ENOENT));
    let s = f.stat(b).unwrap();
    assert_eq!(u64::from_le_bytes(s[8..16].try_into().unwrap()), b as u64);
    assert_eq!(
        u32::from_le_bytes(s[24..28].try_into().unwrap()),
        mode::DIR | 0o700
    );
    assert_eq!(u64::from_le_bytes(s[16..24].try_into().unwrap()), 2);
}

#[test]
fn many_names_fill_and_free() {
    // Far past the old fixed tables (2,048 inodes, 4,096 names).
    let mut f = fs();
    let n = 5000;
    let mut inos = Vec::new();
    for i in 0..n {
        let name = std::format!("f{i}");
        inos.push(f.create(ROOT, name.as_bytes(), mode::REG, 1).unwrap());
    }
    assert_eq!(f.inode(ROOT).unwrap().entries, n);
    for (i, &ino) in inos.iter().enumerate() {
        let name = std::format!("f{i}");
        assert_eq!(f.lookup(ROOT, name.as_bytes()), Some(ino));
    }
    assert_eq!(names(&f, ROOT).len(), n as usize + 2);
    let bytes = f.bytes();
    for i in 0..n {
        let name = std::format!("f{i}");
        let (ino, gone) = f.unlink(ROOT, name.as_bytes(), 2).unwrap();
        assert!(gone);
        f.free(ino);
    }
    assert_eq!(names(&f, ROOT), [".", ".."]);
    let x = f.create(ROOT, b"again", mode::REG, 3).unwrap();
    assert_eq!(f.lookup(ROOT, b"again"), Some(x));
    // The same again reuses what was freed: the tables do not grow.
    for i in 0..n {
        let name = std::format!("g{i}");
        f.create(ROOT, name.as_bytes(), mode::REG, 1).unwrap();
    }
    assert_eq!(f.bytes(), bytes);
}

#[test]
fn unnamed_files_have_no_name_and_free_like_unlinked_ones() {
    let mut f = fs();
    let before = names(&f, ROOT);
    let ino = f.create_unnamed(3 * 4096, 9).unwrap();
    let i = *f.inode(ino).unwrap();
    assert_eq!(
        (i.mode, i.nlink, i.size, i.mtime),
        (mode::REG | 0o600, 0, 12288, 9)
    );
    assert_eq!(names(&f, ROOT), before);
    let other = f.create(ROOT, b"x", mode::REG, 10).unwrap();
    assert_ne!(other, ino);
    f.free(ino);
    assert!(f.inode(ino).is_none());
    assert_eq!(f.create_unnamed(0, 11), Ok(ino));
}

#[test]
fn names_up_to_255_bytes() {
    let mut f = fs();
    let long = [b'n'; MAX_NAME];
    let d = f.create(ROOT, &long, mode::DIR | 0o755, 1).unwrap();
    assert_eq!(f.lookup(ROOT, &long), Some(d));
    let mut path = std::vec![b'/'];
    path.extend_from_slice(&long);
    assert_eq!(f.resolve(ROOT, &path, true), Ok(d));
    // A long name inside it, found by path, listed, renamed, removed.
    let mut other = long;
    other[0] = b'o';
    let x = f.create(d, &other, mode::REG, 1).unwrap();
    path.push(b'/');
    path.extend_from_slice(&other);
    assert_eq!(f.resolve(ROOT, &path, true), Ok(x));
    let listed = names(&f, d);
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[2].len(), MAX_NAME);
    let mut third = long;
    third[1] = b'3';
    f.rename(d, &other, d, &third, 2).unwrap();
    assert_eq!(f.lookup(d, &third), Some(x));
    assert_eq!(f.lookup(d, &other), None);
    assert_eq!(f.unlink(d, &third, 3), Ok((x, true)));
    f.free(x);
    let mut out = [0u8; 300];
    assert_eq!(f.path_of(d, &mut out), Ok(256));
    assert_eq!(&out[1..256], &long[..]);
    // 256 bytes: ENAMETOOLONG, for every way in.
    let too = [b't'; MAX_NAME + 1];
    assert_eq!(f.create(ROOT, &too, mode::REG, 1), Err(ENAMETOOLONG));
    assert_eq!(f.resolve(ROOT, &too, true), Err(ENAMETOOLONG));
    assert_eq!(f.parent(ROOT, &too), Err(ENAMETOOLONG));
    assert_eq!(f.symlink(ROOT, &too, b"x", 1), Err(ENAMETOOLONG));
    assert_eq!(f.rename(ROOT, &long, ROOT, &too, 1), Err(ENAMETOOLONG));
    // Long names are allocations of their own, given back with the name.
    let before = f.bytes();
    assert_eq!(f.rmdir(ROOT, &long, 4), Ok(d));
    assert_eq!(f.bytes(), before - MAX_NAME);
}

#[test]
fn many_symlinks_with_long_targets() {
    let mut f = fs();
    let d = f.create(ROOT, b"l", mode::DIR | 0o755, 1).unwrap();
    let t = f.create(ROOT, b"t", mode::REG, 1).unwrap();
    let n = 3000;
    for i in 0..n {
        // "/t" behind up to 1,000 bytes of "./".
        let mut target = std::vec::Vec::new();
        target.push(b'/');
        for _ in 0..(i % 500) {
            target.extend_from_slice(b"./");
        }
        target.push(b't');
        let name = std::format!("s{i}");
        let s = f.symlink(d, name.as_bytes(), &target, 2).unwrap();
        assert_eq!(f.link_target(s), Some(&target[..]));
    }
    for i in (0..n).step_by(7) {
        let path = std::format!("/l/s{i}");
        assert_eq!(f.resolve(ROOT, path.as_bytes(), true), Ok(t));
    }
    let target = [b'/'; MAX_LINK];
    let s = f.symlink(d, b"longest", &target, 3).unwrap();
    assert_eq!(f.link_target(s).map(|t| t.len()), Some(MAX_LINK));
    assert_eq!(f.resolve(ROOT, b"/l/longest", true), Ok(ROOT));
    for i in 0..n {
        let name = std::format!("s{i}");
        let (ino, gone) = f.unlink(d, name.as_bytes(), 4).unwrap();
        assert!(gone);
        f.free(ino);
    }
    // Freed links are reused.
    let bytes = f.bytes();
    for i in 0..n {
        let name = std::format!("r{i}");
        f.symlink(d, name.as_bytes(), b"/t", 5).unwrap();
    }
    assert!(f.bytes() <= bytes + n * 2);
}

#[test]
fn deep_directories_have_paths() {
    let mut f = fs();
    let mut d = ROOT;
    for _ in 0..200 {
        d = f.create(d, b"dd", mode::DIR | 0o755, 1).unwrap();
    }
    let mut out = [0u8; 4096];
    assert_eq!(f.path_of(d, &mut out), Ok(600));
    assert_eq!(&out[..6], b"/dd/dd");
    assert_eq!(f.path_of(d, &mut out[..599]), Err(ERANGE));
}

/// Makes names until the limit says no → how many.
fn fill(f: &mut Fs, dir: u32, prefix: &str, len: usize) -> usize {
    for i in 0.. {
        let mut name = std::format!("{prefix}{i}").into_bytes();
        name.resize(len.max(name.len()), b'x');
        match f.create(dir, &name, mode::REG, 1) {
            Ok(_) => {}
            Err(e) => {
                assert_eq!(e, ENOSPC);
                return i;
            }
        }
    }
    unreachable!()
}

#[test]
fn a_full_heap_is_enospc_and_changes_nothing() {
    let mut f = Box::new(Fs::with_limit(1, 64 * 1024));
    let d = f.create(ROOT, b"d", mode::DIR | 0o755, 1).unwrap();
    let made = fill(&mut f, d, "f", 1);
    assert!(made > 100, "{made}");
    // The inode table was what filled; names may still fit: hard links
    // take the rest.
    let some = f.lookup(d, b"f0").unwrap();
    let mut links = 0;
    while f
        .link(ROOT, std::format!("h{links}").as_bytes(), some, 2)
        .is_ok()
    {
        links += 1;
    }
    assert!(f.bytes() <= 64 * 1024);
    let nlink = f.inode(some).unwrap().nlink;
    let before = names(&f, d);
    let bytes = f.bytes();
    // Every kind of call that needs more says so, and nothing changed.
    assert_eq!(f.create(d, b"one-more", mode::REG, 2), Err(ENOSPC));
    assert_eq!(f.create(ROOT, b"dir", mode::DIR, 2), Err(ENOSPC));
    assert_eq!(f.symlink(d, b"sym", b"/d", 2), Err(ENOSPC));
    assert_eq!(f.link(d, b"hard", some, 2), Err(ENOSPC));
    assert_eq!(names(&f, d), before);
    // (A table may have grown for a call that then failed; it stays.)
    assert!(f.bytes() >= bytes && f.bytes() <= 64 * 1024);
    assert_eq!(f.inode(some).unwrap().nlink, nlink);
    // A rename to a long name needs memory of its own: refused whole.
    let long = [b'L'; 200];
    f.unlink(d, b"f1", 3).unwrap();
    let room = f.bytes();
    let mut g = f.clone();
    g.limit = room + 100;
    assert_eq!(g.rename(d, b"f0", d, &long, 3), Err(ENOSPC));
    assert_eq!(g.lookup(d, b"f0"), Some(some));
    assert_eq!(g.lookup(d, &long), None);
    // A rename over an existing name needs none.
    assert_eq!(
        g.rename(d, b"f0", d, b"f2", 3).map(|r| r.is_some()),
        Ok(true)
    );
    assert_eq!(g.lookup(d, b"f2"), Some(some));
    // Room again once names go.
    for i in 3..made {
        let name = std::format!("f{i}");
        let (ino, _) = f.unlink(d, name.as_bytes(), 4).unwrap();
        f.free(ino);
    }
    f.create(d, b"one-more", mode::REG, 5).unwrap();
    f.symlink(d, b"sym", b"/d", 5).unwrap();
}

#[test]
fn no_room_even_for_the_root() {
    let mut f = Fs::with_limit(1, 10);
    assert_eq!(f.resolve(ROOT, b"/", true), Err(ENOENT));
    assert_eq!(f.create(ROOT, b"x", mode::REG, 1), Err(ENOTDIR));
    assert_eq!(f.create_unnamed(0, 1), Err(ENOSPC));
}

mod model {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;
    use std::vec::Vec;

    #[derive(Debug, Clone)]
    enum Op {
        Create(u8, u16),
        Unlink(u8, u16),
        Rename(u8, u16, u8, u16),
    }

    /// Name `n`: short or long (past the entry's inline bytes), and many
    /// colliding in few buckets by sheer number.
    fn name(n: u16) -> Vec<u8> {
        let mut v = std::format!("n{n}").into_bytes();
        if n.is_multiple_of(3) {
            v.resize(40 + n as usize % 200, b'z');
        }
        v
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (0u8..3, 0u16..300).prop_map(|(d, n)| Op::Create(d, n)),
            2 => (0u8..3, 0u16..300).prop_map(|(d, n)| Op::Unlink(d, n)),
            1 => (0u8..3, 0u16..300, 0u8..3, 0u16..300).prop_map(|(a, b, c, d)| Op::Rename(a, b, c, d)),
        ]
    }

    proptest! {
        #[test]
        fn agrees_with_a_map(ops in proptest::collection::vec(op(), 0..600)) {
            let mut f = fs();
            let dirs: Vec<u32> = (0..3)
                .map(|i| f.create(ROOT, &[b'D', b'0' + i], mode::DIR | 0o755, 1).unwrap())
                .collect();
            let mut m: BTreeMap<(u8, u16), u32> = BTreeMap::new();
            for o in ops {
                match o {
                    Op::Create(d, n) => {
                        let r = f.create(dirs[d as usize], &name(n), mode::REG, 1);
                        match m.entry((d, n)) {
                            std::collections::btree_map::Entry::Occupied(_) => {
                                prop_assert_eq!(r, Err(EEXIST));
                            }
                            std::collections::btree_map::Entry::Vacant(v) => {
                                v.insert(r.unwrap());
                            }
                        }
                    }
                    Op::Unlink(d, n) => {
                        let r = f.unlink(dirs[d as usize], &name(n), 1);
                        match m.remove(&(d, n)) {
                            Some(ino) => {
                                prop_assert_eq!(r, Ok((ino, true)));
                                f.free(ino);
                            }
                            None => prop_assert_eq!(r, Err(ENOENT)),
                        }
                    }
                    Op::Rename(a, b, c, d) => {
                        let r = f.rename(dirs[a as usize], &name(b), dirs[c as usize], &name(d), 1);
                        match m.get(&(a, b)).copied() {
                            None => prop_assert_eq!(r, Err(ENOENT)),
                            Some(_) if (a, b) == (c, d) => prop_assert_eq!(r, Ok(None)),
                            Some(src) => {
                                let old = m.insert((c, d), src);
                                m.remove(&(a, b));
                                prop_assert_eq!(r, Ok(old.map(|o| (o, true))));
                                if let Some(o) = old {
                                    f.free(o);
                                }
                            }
                        }
                    }
                }
            }
            for (i, &dir) in dirs.iter().enumerate() {
                let mut want: Vec<std::string::String> = m
                    .keys()
                    .filter(|k| k.0 == i as u8)
                    .map(|k| std::string::String::from_utf8(name(k.1)).unwrap())
                    .collect();
                want.push(".".into());
                want.push("..".into());
                want.sort();
                prop_assert_eq!(names(&f, dir), want);
                prop_assert_eq!(f.inode(dir).unwrap().entries as usize, m.keys().filter(|k| k.0 == i as u8).count());
            }
            for (&(d, n), &ino) in &m {
                prop_assert_eq!(f.lookup(dirs[d as usize], &name(n)), Some(ino));
            }
        }
    }
}

#[test]
fn permissions_on_every_path_operation() {
    use stet_unix::cred::Cred;
    let mut f = fs();
    let tmp = f.create(ROOT, b"tmp", mode::DIR | 0o1777, 6).unwrap();
    let etc = f.create(ROOT, b"etc", mode::DIR | 0o755, 6).unwrap();
    let secret = f.create(ROOT, b"secret", mode::DIR | 0o700, 6).unwrap();
    f.create(secret, b"key", mode::REG | 0o644, 6).unwrap();
    f.create(etc, b"passwd", mode::REG | 0o644, 6).unwrap();
    let alice = Cred::user(1000, 1000);
    let bob = Cred::user(1001, 1001);

    f.who = alice;
    // Search permission on each directory of the path.
    assert_eq!(f.resolve(ROOT, b"/secret/key", true), Err(EACCES));
    assert!(f.resolve(ROOT, b"/etc/passwd", true).is_ok());
    // Write on the parent to make, link or remove a name.
    assert_eq!(f.create(etc, b"x", mode::REG | 0o644, 7), Err(EACCES));
    assert_eq!(f.unlink(etc, b"passwd", 7), Err(EACCES));
    assert_eq!(
        f.create(etc, b"passwd", mode::REG, 7),
        Err(EEXIST),
        "EEXIST first"
    );
    let mine = f.create(tmp, b"alice", mode::REG | 0o644, 7).unwrap();
    let st = f.inode(mine).unwrap();
    assert_eq!((st.uid, st.gid), (1000, 1000));
    let p = f.resolve(ROOT, b"/etc/passwd", true).unwrap();
    assert_eq!(f.link(etc, b"p2", p, 7), Err(EACCES));
    // The sticky /tmp: bob cannot remove or rename over alice's file.
    f.who = bob;
    assert_eq!(f.unlink(tmp, b"alice", 8), Err(EPERM));
    f.create(tmp, b"bob", mode::REG | 0o644, 8).unwrap();
    assert_eq!(f.rename(tmp, b"bob", tmp, b"alice", 8), Err(EPERM));
    assert_eq!(f.rename(tmp, b"alice", tmp, b"x", 8), Err(EPERM));
    f.who = alice;
    assert!(f.rename(tmp, b"alice", tmp, b"a2", 8).is_ok());
    let d = f.create(tmp, b"dir", mode::DIR | 0o555, 8).unwrap();
    let sub = f.create(tmp, b"sub", mode::DIR | 0o755, 8).unwrap();
    assert_eq!(
        f.rename(tmp, b"sub", d, b"s", 8),
        Err(EACCES),
        "no write on the new parent"
    );
    assert_eq!(f.rmdir(tmp, b"dir", 8), Ok(d));
    let _ = sub;
    f.who = Cred::ROOT;
    assert!(f.unlink(tmp, b"bob", 9).is_ok());
    assert!(f.resolve(ROOT, b"/secret/key", true).is_ok());
}

#[test]
fn exchange_trades_a_file_and_a_directory_across_directories() {
    let mut f = fs();
    let a = f.create(ROOT, b"a", mode::DIR | 0o755, 6).unwrap();
    let b = f.create(ROOT, b"b", mode::DIR | 0o755, 6).unwrap();
    let file = f.create(a, b"x", mode::REG | 0o644, 6).unwrap();
    let dir = f.create(b, b"y", mode::DIR | 0o755, 6).unwrap();
    let (na, nb) = (f.inode(a).unwrap().nlink, f.inode(b).unwrap().nlink);
    f.exchange(a, b"x", b, b"y", 9).unwrap();
    assert_eq!(f.lookup(a, b"x"), Some(dir));
    assert_eq!(f.lookup(b, b"y"), Some(file));
    // The directory's ".." and the parents' link counts moved with it.
    assert_eq!(f.lookup(dir, b".."), Some(a));
    assert_eq!(f.inode(a).unwrap().nlink, na + 1);
    assert_eq!(f.inode(b).unwrap().nlink, nb - 1);
    assert_eq!(names(&f, a), [".", "..", "x"]);
    assert_eq!(f.exchange(a, b"x", b, b"none", 9), Err(ENOENT));
    // Not a directory into itself.
    assert_eq!(f.exchange(ROOT, b"a", a, b"x", 9), Err(EINVAL));
    assert_eq!(f.exchange(a, b"..", b, b"y", 9), Err(EBUSY));
}

#[test]
fn a_root_of_its_own_bounds_absolute_paths_and_dotdot() {
    let mut f = fs();
    let jail = f.create(ROOT, b"jail", mode::DIR | 0o755, 6).unwrap();
    let inner = f.create(jail, b"etc", mode::DIR | 0o755, 6).unwrap();
    let outside = f.create(ROOT, b"etc", mode::DIR | 0o755, 6).unwrap();
    f.symlink(inner, b"up", b"/etc", 6).unwrap();
    f.root = jail;
    assert_eq!(f.resolve(ROOT, b"/etc", true), Ok(inner));
    assert_eq!(f.resolve(inner, b"../../..", true), Ok(jail));
    assert_eq!(f.resolve(inner, b"up", true), Ok(inner));
    let mut out = [0u8; 64];
    let n = f.path_of(inner, &mut out).unwrap();
    assert_eq!(&out[..n], b"/etc");
    let n = f.path_of(jail, &mut out).unwrap();
    assert_eq!(&out[..n], b"/");
    // A directory outside the root is "(unreachable)".
    let n = f.path_of(outside, &mut out).unwrap();
    assert_eq!(&out[..n], b"(unreachable)/etc");
    let n = f.path_of(ROOT, &mut out).unwrap();
    assert_eq!(&out[..n], b"(unreachable)/");
    f.root = ROOT;
    assert_eq!(f.resolve(ROOT, b"/etc", true), Ok(outside));
}

#[test]
fn openat2_limits_bound_the_walk() {
    let mut f = fs();
    let base = f.create(ROOT, b"base", mode::DIR | 0o755, 6).unwrap();
    let sub = f.create(base, b"sub", mode::DIR | 0o755, 6).unwrap();
    let file = f.create(sub, b"f", mode::REG | 0o644, 6).unwrap();
    let proc = f.create(ROOT, b"proc", mode::DIR | 0o555, 6).unwrap();
    let pid = f.create(proc, b"7", mode::DIR | 0o555, 6).unwrap();
    f.symlink(pid, b"exe", b"/base/sub/f", 6).unwrap();
    f.symlink(base, b"rel", b"sub/f", 6).unwrap();
    f.symlink(base, b"abs", b"/base/sub/f", 6).unwrap();
    f.resolve = Resolve {
        beneath: base,
        ..Resolve::NONE
    };
    assert_eq!(f.resolve(base, b"sub/../sub/f", true), Ok(file));
    assert_eq!(f.resolve(base, b"rel", true), Ok(file));
    assert_eq!(f.resolve(base, b"..", true), Err(EXDEV));
    assert_eq!(f.resolve(base, b"sub/../..", true), Err(EXDEV));
    assert_eq!(f.resolve(base, b"/base", true), Err(EXDEV));
    assert_eq!(f.resolve(base, b"abs", true), Err(EXDEV));
    f.resolve = Resolve {
        no_symlinks: true,
        ..Resolve::NONE
    };
    assert_eq!(f.resolve(base, b"rel", true), Err(ELOOP));
    assert!(f.resolve(base, b"rel", false).is_ok());
    f.resolve = Resolve {
        magic: proc,
        mount: NONE,
        ..Resolve::NONE
    };
    assert_eq!(f.resolve(ROOT, b"/proc/7/exe", true), Err(ELOOP));
    assert_eq!(f.resolve(base, b"abs", true), Ok(file));
    f.resolve = Resolve {
        mount: proc,
        ..Resolve::NONE
    };
    assert_eq!(f.resolve(ROOT, b"/proc/7", true), Err(EXDEV));
    assert_eq!(f.resolve(pid, b"../..", true), Err(EXDEV));
    assert_eq!(f.resolve(pid, b".", true), Ok(pid));
    assert_eq!(f.resolve(ROOT, b"/base/sub/f", true), Ok(file));
    f.resolve = Resolve::NONE;
    assert_eq!(f.resolve(ROOT, b"/proc/7/exe", true), Ok(file));
}

#[test]
fn a_removed_directory_kept_open_keeps_its_inode() {
    let mut f = fs();
    let d = f.create(ROOT, b"d", mode::DIR | 0o755, 6).unwrap();
    let n = f.inode(ROOT).unwrap().nlink;
    assert_eq!(f.rmdir_keep(ROOT, b"d", 7), Ok(d));
    assert_eq!(f.lookup(ROOT, b"d"), None);
    assert_eq!(f.inode(ROOT).unwrap().nlink, n - 1);
    // Still a directory, with no links: a new file gets another inode.
    assert!(f.is_dir(d));
    assert_eq!(f.inode(d).unwrap().nlink, 0);
    let x = f.create(ROOT, b"x", mode::REG | 0o644, 8).unwrap();
    assert_ne!(x, d);
    f.free(d);
    let y = f.create(ROOT, b"y", mode::REG | 0o644, 8).unwrap();
    assert_eq!(y, d);
}
