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
    assert_eq!(f.create(etc, &[b'a'; 60], mode::REG, 8), Err(ENAMETOOLONG));
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
    assert_eq!(f.symlink(ROOT, b"l", &[b'x'; 200], 2), Err(ENAMETOOLONG));
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
    let mut f = fs();
    let mut made = 0;
    for i in 0..MAX_INODES {
        let name = std::format!("f{i}");
        match f.create(ROOT, name.as_bytes(), mode::REG, 1) {
            Ok(_) => made += 1,
            Err(e) => {
                assert_eq!(e, ENOSPC);
                break;
            }
        }
    }
    assert_eq!(made, MAX_INODES - 2);
    for i in 0..made {
        let name = std::format!("f{i}");
        let (ino, gone) = f.unlink(ROOT, name.as_bytes(), 2).unwrap();
        assert!(gone);
        f.free(ino);
    }
    assert_eq!(names(&f, ROOT), [".", ".."]);
    // The hash table still finds new names after all those tombstones.
    let x = f.create(ROOT, b"again", mode::REG, 3).unwrap();
    assert_eq!(f.lookup(ROOT, b"again"), Some(x));
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
