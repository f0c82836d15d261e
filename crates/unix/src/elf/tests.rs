use super::*;
use std::vec;
use std::vec::Vec;

/// (type, flags, offset, vaddr, filesz, memsz)
type Ph = (u32, u32, u64, u64, u64, u64);

fn elf(etype: u16, machine: u16, entry: u64, phs: &[Ph]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, 0]);
    b.extend_from_slice(&[0; 8]);
    b.extend_from_slice(&etype.to_le_bytes());
    b.extend_from_slice(&machine.to_le_bytes());
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&entry.to_le_bytes());
    b.extend_from_slice(&64u64.to_le_bytes()); // phoff
    b.extend_from_slice(&0u64.to_le_bytes()); // shoff
    b.extend_from_slice(&0u32.to_le_bytes()); // flags
    b.extend_from_slice(&64u16.to_le_bytes()); // ehsize
    b.extend_from_slice(&56u16.to_le_bytes());
    b.extend_from_slice(&(phs.len() as u16).to_le_bytes());
    b.extend_from_slice(&64u16.to_le_bytes()); // shentsize
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&0u16.to_le_bytes());
    for &(t, f, off, va, fs, ms) in phs {
        b.extend_from_slice(&t.to_le_bytes());
        b.extend_from_slice(&f.to_le_bytes());
        b.extend_from_slice(&off.to_le_bytes());
        b.extend_from_slice(&va.to_le_bytes());
        b.extend_from_slice(&va.to_le_bytes());
        b.extend_from_slice(&fs.to_le_bytes());
        b.extend_from_slice(&ms.to_le_bytes());
        b.extend_from_slice(&0x1000u64.to_le_bytes());
    }
    b
}

const RX: u32 = PF_R | PF_X;
const RW: u32 = PF_R | PF_W;

/// A musl-like static executable: headers+text at 0x400000, data+bss.
fn musl_exec() -> Vec<(u32, u32, u64, u64, u64, u64)> {
    vec![
        (PT_PHDR, PF_R, 64, 0x400040, 4 * 56, 4 * 56),
        (PT_LOAD, RX, 0, 0x400000, 0x2345, 0x2345),
        (PT_LOAD, RW, 0x2f00, 0x403f00, 0x120, 0x1230),
        (PT_GNU_STACK, RW, 0, 0, 0, 0),
    ]
}

#[test]
fn static_exec_plan() {
    let b = elf(ET_EXEC, EM_X86_64, 0x401000, &musl_exec());
    let p = plan(&b, 0x3100).unwrap();
    assert!(!p.pie);
    assert_eq!(p.bias, 0);
    assert_eq!(p.entry, 0x401000);
    assert_eq!(p.phdr, 0x400040);
    assert_eq!(p.phnum, 4);
    assert_eq!(p.nloads, 2);
    assert_eq!(p.loads()[0].span(), (0x400000, 0x403000));
    assert_eq!(p.loads()[0].prot, prot::READ | prot::EXEC);
    assert_eq!(p.loads()[1].span(), (0x403000, 0x406000));
    assert_eq!(p.loads()[1].page_offset(), 0x2000);
    assert_eq!(p.loads()[1].file_end(), 0x404020);
    assert_eq!(p.brk, 0x406000);
    assert!(!p.exec_stack);
}

#[test]
fn static_pie_is_biased() {
    let phs: Vec<Ph> = musl_exec()
        .into_iter()
        .map(|(t, f, o, v, fs, ms)| (t, f, o, v.saturating_sub(0x400000), fs, ms))
        .collect();
    let b = elf(ET_DYN, EM_X86_64, 0x1000, &phs);
    let p = plan(&b, 0x3100).unwrap();
    assert!(p.pie);
    assert_eq!(p.bias, PIE_BASE);
    assert_eq!(p.entry, PIE_BASE + 0x1000);
    assert_eq!(p.phdr, PIE_BASE + 0x40);
    assert_eq!(p.loads()[0].vaddr, PIE_BASE);
    assert_eq!(p.brk, PIE_BASE + 0x6000);
}

#[test]
fn phdr_without_pt_phdr_comes_from_the_load_segment() {
    let phs: Vec<Ph> = musl_exec().into_iter().skip(1).collect();
    let b = elf(ET_EXEC, EM_X86_64, 0x401000, &phs);
    assert_eq!(plan(&b, 0x3100).unwrap().phdr, 0x400040);
}

#[test]
fn refusals() {
    let good = musl_exec();
    let b = elf(ET_EXEC, 3, 0x401000, &good);
    assert_eq!(plan(&b, 0x3100), Err(Error::NotElf));
    let b = elf(1, EM_X86_64, 0x401000, &good);
    assert_eq!(plan(&b, 0x3100), Err(Error::NotElf));
    assert_eq!(plan(b"\x7fELF", 4), Err(Error::NotElf));
    assert_eq!(plan(b"#!/bin/sh\n", 10), Err(Error::NotElf));
    // An interpreter path that does not fit the file, or two of them.
    let mut d = good.clone();
    d.push((PT_INTERP, PF_R, 0x3000, 0x403000, 0x200, 0x200));
    assert_eq!(
        plan(&elf(ET_EXEC, EM_X86_64, 0x401000, &d), 0x3100),
        Err(Error::Dynamic)
    );
    let mut d = good.clone();
    d.push((PT_INTERP, PF_R, 0x200, 0x400200, 28, 28));
    d.push((PT_INTERP, PF_R, 0x200, 0x400200, 28, 28));
    assert_eq!(
        plan(&elf(ET_EXEC, EM_X86_64, 0x401000, &d), 0x3100),
        Err(Error::Dynamic)
    );
    // File shorter than a segment.
    let b = elf(ET_EXEC, EM_X86_64, 0x401000, &good);
    assert_eq!(plan(&b, 0x3000), Err(Error::BadSegment));
    // Program headers past the bytes given.
    assert_eq!(plan(&b[..100], 0x3100), Err(Error::Malformed));
    // Entry outside the text.
    let b = elf(ET_EXEC, EM_X86_64, 0x404000, &good);
    assert_eq!(plan(&b, 0x3100), Err(Error::BadSegment));
    // Not page-congruent.
    let mut c = good.clone();
    c[2].3 = 0x403f08;
    assert_eq!(
        plan(&elf(ET_EXEC, EM_X86_64, 0x401000, &c), 0x3100),
        Err(Error::BadSegment)
    );
    // Overlapping pages.
    let mut c = good.clone();
    c[2].3 = 0x402f00;
    assert_eq!(
        plan(&elf(ET_EXEC, EM_X86_64, 0x401000, &c), 0x3100),
        Err(Error::BadSegment)
    );
    // Outside the space (and below USER_MIN).
    let mut c = good.clone();
    c[2].3 = USER_END - 0x100;
    assert_eq!(
        plan(&elf(ET_EXEC, EM_X86_64, 0x401000, &c), 0x3100),
        Err(Error::BadSegment)
    );
    let mut c = good.clone();
    c[1].3 = 0;
    c[0].3 = 0x40;
    assert_eq!(
        plan(&elf(ET_EXEC, EM_X86_64, 0x1000, &c), 0x3100),
        Err(Error::BadSegment)
    );
    // filesz > memsz; address overflow.
    let mut c = good.clone();
    c[2].4 = 0x2000;
    assert_eq!(
        plan(&elf(ET_EXEC, EM_X86_64, 0x401000, &c), 0x5000),
        Err(Error::BadSegment)
    );
    let mut c = good.clone();
    c[2].5 = u64::MAX;
    assert_eq!(
        plan(&elf(ET_EXEC, EM_X86_64, 0x401000, &c), 0x3100),
        Err(Error::BadSegment)
    );
    // Too many loads, none at all.
    let mut c = good.clone();
    for i in 0..MAX_LOADS as u64 {
        c.push((PT_LOAD, PF_R, 0, 0x1000_0000 + i * 0x10000, 0x10, 0x10));
    }
    assert_eq!(
        plan(&elf(ET_EXEC, EM_X86_64, 0x401000, &c), 0x3100),
        Err(Error::TooManySegments)
    );
    let c: Vec<Ph> = vec![(PT_GNU_STACK, RW, 0, 0, 0, 0)];
    assert_eq!(
        plan(&elf(ET_EXEC, EM_X86_64, 0x401000, &c), 0x3100),
        Err(Error::Malformed)
    );
}

#[test]
fn executable_stack_is_reported() {
    let mut c = musl_exec();
    c[3].1 = RW | PF_X;
    let p = plan(&elf(ET_EXEC, EM_X86_64, 0x401000, &c), 0x3100).unwrap();
    assert!(p.exec_stack);
}

/// The real thing, when the host has musl-gcc's output built (`make`
/// puts the test programs in build/unix).
#[test]
fn real_binaries_if_built() {
    for name in ["unix-hello", "unix-hello-pie"] {
        let path = std::format!("{}/../../build/user/{name}", env!("CARGO_MANIFEST_DIR"));
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let p = plan(&bytes[..4096.min(bytes.len())], bytes.len() as u64).unwrap();
        assert_eq!(p.pie, name.ends_with("pie"), "{name}");
        assert!(p.nloads >= 2, "{name}");
    }
}

proptest::proptest! {
    /// Any bytes, and any corruption of a good header, give a plan or an
    /// error, never a panic; a plan's segments are always inside the space.
    #[test]
    fn never_panics(junk in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400),
                    flips in proptest::collection::vec((0usize..288, proptest::prelude::any::<u8>()), 0..6),
                    len in 0u64..0x10000) {
        let _ = plan(&junk, len);
        let mut b = elf(ET_EXEC, EM_X86_64, 0x401000, &musl_exec());
        for (i, v) in flips {
            if i < b.len() { b[i] = v; }
        }
        if let Ok(p) = plan(&b, len) {
            for l in p.loads() {
                proptest::prop_assert!(l.vaddr >= USER_MIN && l.vaddr + l.mem_len <= USER_END);
                proptest::prop_assert!(l.offset + l.file_len <= len);
            }
        }
    }
}

#[test]
fn dynamic_program_names_its_interpreter() {
    let mut d = musl_exec();
    d.push((PT_INTERP, PF_R, 0x200, 0x400200, 28, 28));
    let p = plan(&elf(ET_EXEC, EM_X86_64, 0x401000, &d), 0x3100).unwrap();
    assert_eq!(p.interp, Some((0x200, 28)));
    assert_eq!(
        interp_path(b"/lib/ld-musl-x86_64.so.1\0\0"),
        Ok(&b"/lib/ld-musl-x86_64.so.1"[..])
    );
    assert_eq!(interp_path(b"no nul"), Err(Error::Dynamic));
    assert_eq!(interp_path(b"\0"), Err(Error::Dynamic));
}

#[test]
fn interpreter_is_placed_where_asked() {
    // An ld.so: ET_DYN from 0, text then data and bss.
    let phs: Vec<Ph> = vec![
        (PT_LOAD, PF_R, 0, 0, 0x1000, 0x1000),
        (PT_LOAD, RX, 0x1000, 0x1000, 0x5000, 0x5000),
        (PT_LOAD, RW, 0x6f00, 0x7f00, 0x200, 0x1300),
    ];
    let b = elf(ET_DYN, EM_X86_64, 0x1100, &phs);
    let p = plan_at(&b, 0x7100, 0x7_0000_0000).unwrap();
    assert_eq!(p.extent(), (0x7_0000_0000, 0x7_0000_a000));
    assert_eq!(p.entry, 0x7_0000_1100);
    assert_eq!(p.loads()[2].file_end(), 0x7_0000_8100);
    assert_eq!(p.interp, None);
    // At PIE_BASE by default, as a static PIE.
    assert_eq!(plan(&b, 0x7100).unwrap().extent().0, PIE_BASE);
}
