//! Tests build small ELF files by hand, so each rule is checked against a
//! file that breaks exactly that rule.
use super::*;
use proptest::prelude::*;

struct Ph {
    flags: u32,
    offset: u64,
    vaddr: u64,
    filesz: u64,
    memsz: u64,
}

fn elf(e_type: u16, machine: u16, entry: u64, phs: &[Ph], file_len: usize) -> Vec<u8> {
    let mut f = vec![0u8; file_len.max(64 + 56 * phs.len())];
    f[..4].copy_from_slice(b"\x7fELF");
    f[4] = 2; // ELFCLASS64
    f[5] = 1; // little endian
    f[6] = 1; // version
    f[16..18].copy_from_slice(&e_type.to_le_bytes());
    f[18..20].copy_from_slice(&machine.to_le_bytes());
    f[20..24].copy_from_slice(&1u32.to_le_bytes());
    f[24..32].copy_from_slice(&entry.to_le_bytes());
    f[32..40].copy_from_slice(&64u64.to_le_bytes()); // phoff
    f[52..54].copy_from_slice(&64u16.to_le_bytes()); // ehsize
    f[54..56].copy_from_slice(&56u16.to_le_bytes()); // phentsize
    f[56..58].copy_from_slice(&(phs.len() as u16).to_le_bytes());
    f[58..60].copy_from_slice(&64u16.to_le_bytes()); // shentsize
    for (i, p) in phs.iter().enumerate() {
        let o = 64 + 56 * i;
        f[o..o + 4].copy_from_slice(&PT_LOAD.to_le_bytes());
        f[o + 4..o + 8].copy_from_slice(&p.flags.to_le_bytes());
        f[o + 8..o + 16].copy_from_slice(&p.offset.to_le_bytes());
        f[o + 16..o + 24].copy_from_slice(&p.vaddr.to_le_bytes());
        f[o + 24..o + 32].copy_from_slice(&p.vaddr.to_le_bytes());
        f[o + 32..o + 40].copy_from_slice(&p.filesz.to_le_bytes());
        f[o + 40..o + 48].copy_from_slice(&p.memsz.to_le_bytes());
        f[o + 48..o + 56].copy_from_slice(&4096u64.to_le_bytes());
    }
    f
}

fn text(vaddr: u64) -> Ph {
    Ph {
        flags: PF_R | PF_X,
        offset: 0,
        vaddr,
        filesz: 0x200,
        memsz: 0x200,
    }
}

#[test]
fn accepts_a_plain_program() {
    let data = Ph {
        flags: PF_R | PF_W,
        offset: 0x1000,
        vaddr: 0x401000,
        filesz: 0x10,
        memsz: 0x3000,
    };
    let f = elf(
        ET_EXEC,
        EM_X86_64,
        0x400100,
        &[text(0x400000), data],
        0x1010,
    );
    let p = parse(&f).unwrap();
    assert_eq!(p.entry, 0x400100);
    assert_eq!(p.segments().len(), 2);
    assert_eq!(p.segments()[1].page_span(), (0x401000, 0x404000));
    assert_eq!(
        p.segments()[1].perm,
        Perm {
            read: true,
            write: true,
            exec: false
        }
    );
}

#[test]
fn rejects_each_broken_rule() {
    let ok = |phs: &[Ph], entry| parse(&elf(ET_EXEC, EM_X86_64, entry, phs, 0x2000));
    assert_eq!(
        parse(&elf(3, EM_X86_64, 0x400000, &[text(0x400000)], 0x1000)),
        Err(Error::WrongKind)
    );
    assert_eq!(
        parse(&elf(ET_EXEC, 3, 0x400000, &[text(0x400000)], 0x1000)),
        Err(Error::WrongKind)
    );
    assert_eq!(ok(&[], 0x400000), Err(Error::SegmentCount));
    assert_eq!(ok(&[text(0)], 0), Err(Error::BadAddress));
    assert_eq!(
        ok(&[text(USER_END - 0x100)], USER_END - 0x100),
        Err(Error::BadAddress)
    );
    assert_eq!(
        ok(&[text(0xffff_ffff_8000_0000)], 0xffff_ffff_8000_0000),
        Err(Error::BadAddress)
    );
    let big = Ph {
        flags: PF_R,
        offset: 0x1000,
        vaddr: 0x500000,
        filesz: 0x5000,
        memsz: 0x5000,
    };
    assert_eq!(
        ok(&[text(0x400000), big], 0x400000),
        Err(Error::BadFileRange)
    );
    let mis = Ph {
        flags: PF_R,
        offset: 0x10,
        vaddr: 0x500000,
        filesz: 0x10,
        memsz: 0x10,
    };
    assert_eq!(ok(&[text(0x400000), mis], 0x400000), Err(Error::Misaligned));
    assert_eq!(
        ok(&[text(0x400000), text(0x400000)], 0x400000),
        Err(Error::Overlap)
    );
    let wx = Ph {
        flags: PF_R | PF_W | PF_X,
        offset: 0,
        vaddr: 0x400000,
        filesz: 0x10,
        memsz: 0x10,
    };
    assert_eq!(ok(&[wx], 0x400000), Err(Error::WriteExecute));
    assert_eq!(ok(&[text(0x400000)], 0x900000), Err(Error::BadEntry));
    assert_eq!(parse(b"\x7fELF"), Err(Error::Malformed));
}

proptest! {
    #[test]
    fn never_panics_on_garbage(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn never_panics_on_mutated_programs(at in 0usize..0x200, v in any::<u8>()) {
        let mut f = elf(ET_EXEC, EM_X86_64, 0x400100, &[text(0x400000)], 0x400);
        f[at] = v;
        if let Ok(p) = parse(&f) {
            for s in p.segments() {
                prop_assert!(s.file_offset + s.file_len <= f.len() as u64);
                prop_assert!(s.vaddr >= USER_MIN && s.vaddr + s.mem_len <= USER_END);
            }
        }
    }
}
