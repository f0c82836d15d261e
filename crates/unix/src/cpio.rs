//! Reads a `newc` cpio archive (what `cpio -H newc` writes): the initial
//! file system's contents, built on the host from a directory and read once
//! by the file-system domain when it first starts.
//!
//! The reader is given the archive's bytes through a function (the domain
//! reads them from a file segment mapped in its window) and hands out one
//! header at a time; file data is left where it is, at [`Entry::data`].

/// One archive member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Inode number in the archive (hard links share it).
    pub ino: u32,
    /// `st_mode`: type and permission bits.
    pub mode: u32,
    /// Modification time (seconds).
    pub mtime: u32,
    /// Links to this inode in the archive.
    pub nlink: u32,
    /// Bytes of data.
    pub size: u32,
    /// Device number (`major << 8 | minor`) of a device node.
    pub rdev: u32,
    /// Offset of the data in the archive.
    pub data: u64,
    /// Bytes of the name (without the NUL) in the caller's buffer.
    pub name_len: usize,
}

/// Why the archive cannot be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Not a newc header at this offset.
    BadMagic(u64),
    /// A field is not hexadecimal.
    BadField(u64),
    /// A name longer than the caller's buffer, or empty.
    BadName(u64),
    /// The archive ends inside a member.
    Truncated(u64),
}

const HEADER: usize = 110;

/// Walks an archive of `len` bytes.
pub struct Reader {
    at: u64,
    len: u64,
    done: bool,
}

fn hex(b: &[u8]) -> Option<u32> {
    let s = core::str::from_utf8(b).ok()?;
    u32::from_str_radix(s, 16).ok()
}

impl Reader {
    /// A reader of an archive of `len` bytes.
    pub fn new(len: u64) -> Reader {
        Reader {
            at: 0,
            len,
            done: false,
        }
    }

    /// The next member, its name in `name`; `None` after the trailer.
    /// `read(offset, buf)` fills `buf` from the archive.
    pub fn next(
        &mut self,
        read: &mut impl FnMut(u64, &mut [u8]),
        name: &mut [u8],
    ) -> Option<Result<Entry, Error>> {
        if self.done {
            return None;
        }
        let r = self.step(read, name);
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }

    fn step(
        &mut self,
        read: &mut impl FnMut(u64, &mut [u8]),
        name: &mut [u8],
    ) -> Option<Result<Entry, Error>> {
        let at = self.at;
        if at + HEADER as u64 > self.len {
            return Some(Err(Error::Truncated(at)));
        }
        let mut h = [0u8; HEADER];
        read(at, &mut h);
        if &h[..6] != b"070701" && &h[..6] != b"070702" {
            return Some(Err(Error::BadMagic(at)));
        }
        let mut f = [0u32; 13];
        for (i, v) in f.iter_mut().enumerate() {
            match hex(&h[6 + 8 * i..14 + 8 * i]) {
                Some(x) => *v = x,
                None => return Some(Err(Error::BadField(at))),
            }
        }
        let [ino, mode, _uid, _gid, nlink, mtime, size, _maj, _min, rmaj, rmin, namesize, _check] =
            f;
        let namesize = namesize as usize;
        if namesize == 0 || namesize - 1 > name.len() {
            return Some(Err(Error::BadName(at)));
        }
        let name_at = at + HEADER as u64;
        let data = (name_at + namesize as u64).next_multiple_of(4);
        let end = data + size as u64;
        if end > self.len {
            return Some(Err(Error::Truncated(at)));
        }
        read(name_at, &mut name[..namesize - 1]);
        if &name[..namesize - 1] == b"TRAILER!!!" {
            return None;
        }
        self.at = end.next_multiple_of(4);
        Some(Ok(Entry {
            ino,
            mode,
            mtime,
            nlink,
            size,
            rdev: rmaj << 8 | rmin,
            data,
            name_len: namesize - 1,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec::Vec;

    fn member(out: &mut Vec<u8>, ino: u32, mode: u32, name: &str, data: &[u8]) {
        let fields = [
            ino,
            mode,
            0,
            0,
            1,
            1_700_000_000,
            data.len() as u32,
            0,
            0,
            0,
            0,
            name.len() as u32 + 1,
            0,
        ];
        out.extend_from_slice(b"070701");
        for f in fields {
            out.extend_from_slice(std::format!("{f:08X}").as_bytes());
        }
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
        out.extend_from_slice(data);
        while !out.len().is_multiple_of(4) {
            out.push(0);
        }
    }

    #[test]
    fn reads_members_and_stops_at_the_trailer() {
        let mut a = Vec::new();
        member(&mut a, 1, 0o040755, ".", b"");
        member(
            &mut a,
            2,
            0o100644,
            "etc/passwd",
            b"root:x:0:0::/:/bin/sh\n",
        );
        member(&mut a, 3, 0o120777, "bin/sh", b"busybox");
        member(&mut a, 0, 0, "TRAILER!!!", b"");
        let mut r = Reader::new(a.len() as u64);
        let mut read = |off: u64, buf: &mut [u8]| {
            buf.copy_from_slice(&a[off as usize..off as usize + buf.len()])
        };
        let mut name = [0u8; 64];
        let mut got = Vec::new();
        while let Some(e) = r.next(&mut read, &mut name) {
            let e = e.unwrap();
            let mut d = std::vec![0u8; e.size as usize];
            read(e.data, &mut d);
            got.push((
                std::string::String::from_utf8(name[..e.name_len].to_vec()).unwrap(),
                e.mode,
                d,
            ));
        }
        assert_eq!(got.len(), 3);
        assert_eq!(got[1].0, "etc/passwd");
        assert_eq!(got[1].2, b"root:x:0:0::/:/bin/sh\n");
        assert_eq!(got[2], ("bin/sh".into(), 0o120777, b"busybox".to_vec()));
        assert!(r.next(&mut read, &mut name).is_none());
    }

    #[test]
    fn damage_is_reported_not_panicked() {
        let mut a = Vec::new();
        member(&mut a, 2, 0o100644, "f", b"data");
        let mut name = [0u8; 64];
        for cut in 0..a.len() {
            let b = &a[..cut];
            let mut r = Reader::new(b.len() as u64);
            let mut read = |off: u64, buf: &mut [u8]| {
                buf.copy_from_slice(&b[off as usize..off as usize + buf.len()])
            };
            assert!(
                matches!(r.next(&mut read, &mut name), Some(Err(_))),
                "cut at {cut}"
            );
        }
        let mut b = a.clone();
        b[0] = b'x';
        let mut r = Reader::new(b.len() as u64);
        let mut read = |off: u64, buf: &mut [u8]| {
            buf.copy_from_slice(&b[off as usize..off as usize + buf.len()])
        };
        assert_eq!(r.next(&mut read, &mut name), Some(Err(Error::BadMagic(0))));
        let mut small = [0u8; 0];
        let mut r = Reader::new(a.len() as u64);
        let mut read = |off: u64, buf: &mut [u8]| {
            buf.copy_from_slice(&a[off as usize..off as usize + buf.len()])
        };
        assert_eq!(r.next(&mut read, &mut small), Some(Err(Error::BadName(0))));
    }
}
