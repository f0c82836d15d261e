//! The stack read back the way a C runtime reads it at `_start`.

use super::*;
use proptest::prelude::*;
use std::vec::Vec;

const TOP: u64 = 0x7fff_ffff_f000;

/// What a C runtime finds: argc, argv, envp (as strings) and auxv.
#[derive(Debug, PartialEq, Eq)]
struct Found {
    argv: Vec<Vec<u8>>,
    envp: Vec<Vec<u8>>,
    auxv: Vec<(u64, u64)>,
}

fn word(mem: &[u8], top: u64, a: u64) -> u64 {
    let i = (a - (top - mem.len() as u64)) as usize;
    u64::from_le_bytes(mem[i..i + 8].try_into().unwrap())
}

fn cstr(mem: &[u8], top: u64, a: u64) -> Vec<u8> {
    let i = (a - (top - mem.len() as u64)) as usize;
    let n = mem[i..].iter().position(|&b| b == 0).unwrap();
    mem[i..i + n].to_vec()
}

fn read(mem: &[u8], top: u64, rsp: u64) -> Found {
    let argc = word(mem, top, rsp);
    let mut p = rsp + 8;
    let argv = (0..argc)
        .map(|i| cstr(mem, top, word(mem, top, p + 8 * i)))
        .collect();
    p += 8 * argc;
    assert_eq!(word(mem, top, p), 0, "argv ends in NULL");
    p += 8;
    let mut envp = Vec::new();
    while word(mem, top, p) != 0 {
        envp.push(cstr(mem, top, word(mem, top, p)));
        p += 8;
    }
    p += 8;
    let mut auxv = Vec::new();
    loop {
        let (t, v) = (word(mem, top, p), word(mem, top, p + 8));
        auxv.push((t, v));
        p += 16;
        if t == at::NULL {
            break;
        }
    }
    Found { argv, envp, auxv }
}

fn start<'a>(argv: &'a [&'a [u8]], envp: &'a [&'a [u8]]) -> Start<'a> {
    Start {
        argv,
        envp,
        execfn: b"/bin/busybox",
        loaded: Loaded {
            phdr: 0x400040,
            phent: 56,
            phnum: 9,
            entry: 0x401000,
            base: 0,
        },
        ids: [1000, 1001, 100, 101],
        secure: false,
        hwcap: [0x178b_fbff, 2],
        clktck: 100,
        random: *b"0123456789abcdef",
    }
}

#[test]
fn busybox_sh_finds_its_arguments_environment_and_auxv() {
    let argv: [&[u8]; 2] = [b"sh", b"-c"];
    let envp: [&[u8]; 2] = [b"HOME=/", b"PATH=/bin"];
    let s = start(&argv, &envp);
    let mut mem = [0xaau8; 4096];
    let rsp = build(&s, TOP, &mut mem).unwrap();
    assert_eq!(rsp % 16, 0, "rsp is 16-aligned at entry");
    let f = read(&mem, TOP, rsp);
    assert_eq!(f.argv, [b"sh".to_vec(), b"-c".to_vec()]);
    assert_eq!(f.envp, [b"HOME=/".to_vec(), b"PATH=/bin".to_vec()]);
    let aux = |t| {
        f.auxv
            .iter()
            .find(|(x, _)| *x == t)
            .map(|(_, v)| *v)
            .unwrap()
    };
    assert_eq!(f.auxv.len(), AUXV_ENTRIES);
    assert_eq!(f.auxv.last(), Some(&(at::NULL, 0)));
    assert_eq!(
        [
            aux(at::PHDR),
            aux(at::PHENT),
            aux(at::PHNUM),
            aux(at::ENTRY)
        ],
        [0x400040, 56, 9, 0x401000]
    );
    assert_eq!(
        [aux(at::PAGESZ), aux(at::CLKTCK), aux(at::BASE)],
        [4096, 100, 0]
    );
    assert_eq!(
        [aux(at::UID), aux(at::EUID), aux(at::GID), aux(at::EGID)],
        [1000, 1001, 100, 101]
    );
    assert_eq!([aux(at::HWCAP), aux(at::HWCAP2)], [0x178b_fbff, 2]);
    assert_eq!(cstr(&mem, TOP, aux(at::EXECFN)), b"/bin/busybox");
    assert_eq!(cstr(&mem, TOP, aux(at::PLATFORM)), b"x86_64");
    let r = aux(at::RANDOM);
    let i = (r - (TOP - 4096)) as usize;
    assert_eq!(&mem[i..i + 16], b"0123456789abcdef");
    // The end marker, and the strings in order just below it.
    assert_eq!(&mem[4088..], &[0; 8]);
    let strings = b"sh\0-c\0HOME=/\0PATH=/bin\0/bin/busybox\0";
    assert_eq!(&mem[4088 - strings.len()..4088], strings);
    // Nothing below rsp was touched.
    let below = (rsp - (TOP - 4096)) as usize;
    assert!(mem[..below].iter().all(|&b| b == 0xaa));
}

#[test]
fn refusals() {
    let mut mem = [0u8; 256];
    let big: [&[u8]; 1] = [&[b'x'; 300]];
    assert_eq!(build(&start(&big, &[]), TOP, &mut mem), Err(Error::TooBig));
    let nul: [&[u8]; 1] = [b"a\0b"];
    assert_eq!(build(&start(&[], &nul), TOP, &mut mem), Err(Error::Nul));
    assert_eq!(
        build(&start(&[], &[]), TOP - 8, &mut mem),
        Err(Error::Misaligned)
    );
    // A top too low for the stack, or for the buffer, is refused too.
    let mut page = [0u8; 4096];
    assert_eq!(build(&start(&[], &[]), 64, &mut page), Err(Error::TooBig));
}

proptest! {
    #[test]
    fn any_arguments_read_back_exactly(
        argv in proptest::collection::vec(proptest::collection::vec(1u8..=255, 0..40), 0..20),
        envp in proptest::collection::vec(proptest::collection::vec(1u8..=255, 0..40), 0..20),
        slack in 0u64..64,
    ) {
        let a: Vec<&[u8]> = argv.iter().map(|v| v.as_slice()).collect();
        let e: Vec<&[u8]> = envp.iter().map(|v| v.as_slice()).collect();
        let s = start(&a, &e);
        let top = TOP - 16 * slack;
        let mut mem = std::vec![0u8; 8192];
        let rsp = build(&s, top, &mut mem).unwrap();
        prop_assert_eq!(rsp % 16, 0);
        let f = read(&mem, top, rsp);
        prop_assert_eq!(&f.argv, &argv);
        prop_assert_eq!(&f.envp, &envp);
        // The tightest buffer that fits works, one byte less does not.
        let need = (top - rsp) as usize;
        let mut tight = std::vec![0u8; need];
        prop_assert_eq!(build(&s, top, &mut tight), Ok(rsp));
        let mut short = std::vec![0u8; need - 1];
        prop_assert_eq!(build(&s, top, &mut short), Err(Error::TooBig));
    }
}
