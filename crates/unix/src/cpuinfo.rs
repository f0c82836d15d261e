//! `/proc/cpuinfo` from the processor's own `CPUID` answers: vendor,
//! family, model and stepping, the brand string, and the feature flags by
//! Linux's names, in Linux's order (by the kernel's feature words: leaf 1
//! `edx`, 0x8000_0001 `edx`, leaf 1 `ecx`, 0x8000_0001 `ecx`, leaf 7
//! `ebx`, leaf 0xd.1 `eax`, leaf 7 `ecx` and `edx`). Only bits whose
//! Linux name is listed here are shown; the kernel's own synthetic flags
//! (`constant_tsc`, `rep_good`, ...) are not, since nothing here measured
//! them. What needs a measurement (`cpu MHz`, `bogomips`) is left out.

use crate::procgen::Text;
use core::fmt::Write;

/// A `CPUID` answer: `eax`, `ebx`, `ecx`, `edx`.
pub type Regs = [u32; 4];

/// Names of bits of one register, by bit ("": not shown).
type Names = [&'static str; 32];

const LEAF1_EDX: Names = [
    "fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "cx8", "apic", "", "sep", "mtrr", "pge",
    "mca", "cmov", "pat", "pse36", "pn", "clflush", "", "dts", "acpi", "mmx", "fxsr", "sse",
    "sse2", "ss", "ht", "tm", "ia64", "pbe",
];

const EXT1_EDX: Names = [
    "", "", "", "", "", "", "", "", "", "", "", "syscall", "", "", "", "", "", "", "", "mp", "nx",
    "", "mmxext", "", "", "fxsr_opt", "pdpe1gb", "rdtscp", "", "lm", "3dnowext", "3dnow",
];

const LEAF1_ECX: Names = [
    "pni",
    "pclmulqdq",
    "dtes64",
    "monitor",
    "ds_cpl",
    "vmx",
    "smx",
    "est",
    "tm2",
    "ssse3",
    "cid",
    "sdbg",
    "fma",
    "cx16",
    "xtpr",
    "pdcm",
    "",
    "pcid",
    "dca",
    "sse4_1",
    "sse4_2",
    "x2apic",
    "movbe",
    "popcnt",
    "tsc_deadline_timer",
    "aes",
    "xsave",
    "",
    "avx",
    "f16c",
    "rdrand",
    "hypervisor",
];

const EXT1_ECX: Names = [
    "lahf_lm",
    "cmp_legacy",
    "svm",
    "extapic",
    "cr8_legacy",
    "abm",
    "sse4a",
    "misalignsse",
    "3dnowprefetch",
    "osvw",
    "ibs",
    "xop",
    "skinit",
    "wdt",
    "",
    "lwp",
    "fma4",
    "tce",
    "",
    "nodeid_msr",
    "",
    "tbm",
    "topoext",
    "perfctr_core",
    "perfctr_nb",
    "",
    "bpext",
    "ptsc",
    "perfctr_llc",
    "mwaitx",
    "",
    "",
];

const LEAF7_EBX: Names = [
    "fsgsbase",
    "tsc_adjust",
    "sgx",
    "bmi1",
    "hle",
    "avx2",
    "",
    "smep",
    "bmi2",
    "erms",
    "invpcid",
    "rtm",
    "cqm",
    "",
    "mpx",
    "rdt_a",
    "avx512f",
    "avx512dq",
    "rdseed",
    "adx",
    "smap",
    "avx512ifma",
    "",
    "clflushopt",
    "clwb",
    "intel_pt",
    "avx512pf",
    "avx512er",
    "avx512cd",
    "sha_ni",
    "avx512bw",
    "avx512vl",
];

const XSAVE_EAX: Names = [
    "xsaveopt", "xsavec", "xgetbv1", "xsaves", "", "", "", "", "", "", "", "", "", "", "", "", "",
    "", "", "", "", "", "", "", "", "", "", "", "", "", "", "",
];

const LEAF7_ECX: Names = [
    "",
    "avx512vbmi",
    "umip",
    "pku",
    "ospke",
    "waitpkg",
    "avx512_vbmi2",
    "",
    "gfni",
    "vaes",
    "vpclmulqdq",
    "avx512_vnni",
    "avx512_bitalg",
    "tme",
    "avx512_vpopcntdq",
    "",
    "la57",
    "",
    "",
    "",
    "",
    "",
    "rdpid",
    "",
    "",
    "cldemote",
    "",
    "movdiri",
    "movdir64b",
    "",
    "",
    "",
];

const LEAF7_EDX: Names = [
    "",
    "",
    "avx512_4vnniw",
    "avx512_4fmaps",
    "fsrm",
    "",
    "",
    "",
    "avx512_vp2intersect",
    "",
    "md_clear",
    "",
    "",
    "",
    "serialize",
    "",
    "tsxldtrk",
    "",
    "pconfig",
    "arch_lbr",
    "ibt",
    "",
    "amx_bf16",
    "avx512_fp16",
    "amx_tile",
    "amx_int8",
    "",
    "",
    "flush_l1d",
    "arch_capabilities",
    "",
    "",
];

/// The processor as `CPUID` describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cpu {
    /// The vendor string (`GenuineIntel`, `AuthenticAMD`, ...).
    pub vendor: [u8; 12],
    /// The highest basic leaf.
    pub max_leaf: u32,
    /// The family (with the extended family for family 15).
    pub family: u32,
    /// The model (with the extended model from family 6 up).
    pub model: u32,
    /// The stepping.
    pub stepping: u32,
    /// The brand string (48 bytes, NUL-padded; all NUL if there is none).
    pub brand: [u8; 48],
    /// The feature words in the order their flags are shown.
    pub words: [(u32, &'static Names); 8],
    /// `clflush` line size in bytes.
    pub clflush: u32,
    /// The initial APIC id.
    pub apic: u32,
    /// Physical address bits (0: unknown).
    pub phys_bits: u32,
    /// Virtual address bits.
    pub virt_bits: u32,
}

impl Cpu {
    /// Reads the processor through `cpuid(leaf, subleaf)`.
    pub fn read(cpuid: impl Fn(u32, u32) -> Regs) -> Cpu {
        let l0 = cpuid(0, 0);
        let max_leaf = l0[0];
        let mut vendor = [0u8; 12];
        for (i, r) in [l0[1], l0[3], l0[2]].iter().enumerate() {
            vendor[4 * i..4 * i + 4].copy_from_slice(&r.to_le_bytes());
        }
        let leaf = |l: u32, s: u32| if l <= max_leaf { cpuid(l, s) } else { [0; 4] };
        let l1 = leaf(1, 0);
        let l7 = leaf(7, 0);
        let xs = leaf(0xd, 1);
        let max_ext = cpuid(0x8000_0000, 0)[0];
        let ext = |l: u32| {
            if (0x8000_0001..=max_ext).contains(&l) && max_ext <= 0x8000_ffff {
                cpuid(l, 0)
            } else {
                [0; 4]
            }
        };
        let e1 = ext(0x8000_0001);
        let mut brand = [0u8; 48];
        for (i, l) in (0x8000_0002..=0x8000_0004).enumerate() {
            for (j, r) in ext(l).iter().enumerate() {
                brand[16 * i + 4 * j..16 * i + 4 * j + 4].copy_from_slice(&r.to_le_bytes());
            }
        }
        let sizes = ext(0x8000_0008);
        let base_family = (l1[0] >> 8) & 0xf;
        let family = if base_family == 0xf {
            base_family + ((l1[0] >> 20) & 0xff)
        } else {
            base_family
        };
        let mut model = (l1[0] >> 4) & 0xf;
        if family >= 6 {
            model += ((l1[0] >> 16) & 0xf) << 4;
        }
        Cpu {
            vendor,
            max_leaf,
            family,
            model,
            stepping: l1[0] & 0xf,
            brand,
            words: [
                (l1[3], &LEAF1_EDX),
                (e1[3], &EXT1_EDX),
                (l1[2], &LEAF1_ECX),
                (e1[2], &EXT1_ECX),
                (l7[1], &LEAF7_EBX),
                (xs[0], &XSAVE_EAX),
                (l7[2], &LEAF7_ECX),
                (l7[3], &LEAF7_EDX),
            ],
            clflush: ((l1[1] >> 8) & 0xff) * 8,
            apic: l1[1] >> 24,
            phys_bits: sizes[0] & 0xff,
            virt_bits: (sizes[0] >> 8) & 0xff,
        }
    }

    /// The flags, space-separated.
    pub fn flags(&self, t: &mut Text) {
        let mut first = true;
        for (bits, names) in self.words {
            for (bit, name) in names.iter().enumerate() {
                if bits & (1 << bit) != 0 && !name.is_empty() {
                    if !first {
                        t.bytes(b" ");
                    }
                    t.bytes(name.as_bytes());
                    first = false;
                }
            }
        }
    }

    /// One processor's block of `/proc/cpuinfo` (processor `n` of
    /// `count`), ending with its blank line.
    pub fn block(&self, t: &mut Text, n: u32, count: u32) {
        let vendor = text(&self.vendor);
        let end = self.brand.iter().position(|&b| b == 0).unwrap_or(48);
        let brand = text(&self.brand[..end]).trim();
        let brand = if brand.is_empty() { "unknown" } else { brand };
        let _ = write!(
            t,
            "processor\t: {n}\nvendor_id\t: {vendor}\ncpu family\t: {}\nmodel\t\t: {}\n\
             model name\t: {brand}\nstepping\t: {}\nphysical id\t: 0\nsiblings\t: {count}\n\
             core id\t\t: {n}\ncpu cores\t: {count}\napicid\t\t: {apic}\n\
             initial apicid\t: {apic}\nfpu\t\t: yes\nfpu_exception\t: yes\n\
             cpuid level\t: {}\nwp\t\t: yes\nflags\t\t: ",
            self.family,
            self.model,
            self.stepping,
            self.max_leaf,
            apic = self.apic + n,
        );
        self.flags(t);
        let _ = write!(
            t,
            "\nbugs\t\t:\nclflush size\t: {c}\ncache_alignment\t: {c}\n",
            c = self.clflush
        );
        if self.phys_bits != 0 {
            let _ = writeln!(
                t,
                "address sizes\t: {} bits physical, {} bits virtual",
                self.phys_bits, self.virt_bits
            );
        }
        let _ = t.write_str("power management:\n\n");
    }
}

/// Bytes as text (`?` for what is not UTF-8).
fn text(b: &[u8]) -> &str {
    core::str::from_utf8(b).unwrap_or("?")
}

/// `/proc/cpuinfo`: a block per processor.
pub fn cpuinfo(t: &mut Text, cpu: &Cpu, count: u32) {
    for n in 0..count.max(1) {
        cpu.block(t, n, count.max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QEMU's `qemu64` processor's answers (TCG).
    fn qemu64(leaf: u32, sub: u32) -> Regs {
        match (leaf, sub) {
            (0, _) => [0xd, 0x6874_7541, 0x444d_4163, 0x6974_6e65],
            (1, _) => [0x0000_0663, 0x0000_0800, 0x8000_2001, 0x078b_fbfd],
            (7, 0) => [0, 0, 0, 0],
            (0xd, 1) => [0, 0, 0, 0],
            (0x8000_0000, _) => [0x8000_000a, 0x6874_7541, 0x444d_4163, 0x6974_6e65],
            (0x8000_0001, _) => [0x0000_0663, 0, 0x0000_0025, 0x2191_abfd],
            (0x8000_0002, _) => [0x554d_4551, 0x7269_5620, 0x6c61_7574, 0x5550_4320],
            (0x8000_0003, _) => [0x7265_7620, 0x6e6f_6973, 0x352e_3220, 0x0000_002b],
            (0x8000_0004, _) => [0, 0, 0, 0],
            (0x8000_0008, _) => [0x0000_3028, 0, 0, 0],
            _ => [0; 4],
        }
    }

    #[test]
    fn qemu64_is_described_as_linux_describes_it() {
        let cpu = Cpu::read(qemu64);
        assert_eq!(&cpu.vendor, b"AuthenticAMD");
        assert_eq!((cpu.family, cpu.model, cpu.stepping), (6, 6, 3));
        let mut b = [0u8; 2048];
        let mut t = Text::new(&mut b);
        cpuinfo(&mut t, &cpu, 1);
        let n = t.len();
        let s = core::str::from_utf8(&b[..n]).unwrap();
        let want = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 6\nmodel\t\t: 6\n\
            model name\t: QEMU Virtual CPU version 2.5+\nstepping\t: 3\nphysical id\t: 0\n\
            siblings\t: 1\ncore id\t\t: 0\ncpu cores\t: 1\napicid\t\t: 0\ninitial apicid\t: 0\n\
            fpu\t\t: yes\nfpu_exception\t: yes\ncpuid level\t: 13\nwp\t\t: yes\n\
            flags\t\t: fpu de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 \
            clflush mmx fxsr sse sse2 syscall nx lm pni cx16 hypervisor lahf_lm svm abm\n\
            bugs\t\t:\nclflush size\t: 64\ncache_alignment\t: 64\n\
            address sizes\t: 40 bits physical, 48 bits virtual\npower management:\n\n";
        assert_eq!(s, want);
    }

    #[test]
    fn every_name_is_shown_once_and_only_for_its_bit() {
        let all = Cpu::read(|leaf, _| match leaf {
            0 => [0xd, 0, 0, 0],
            0x8000_0000 => [0x8000_0008, 0, 0, 0],
            _ => [u32::MAX; 4],
        });
        let mut b = [0u8; 4096];
        let mut t = Text::new(&mut b);
        all.flags(&mut t);
        let n = t.len();
        let s = std::string::String::from_utf8(b[..n].to_vec()).unwrap();
        let names: std::vec::Vec<&str> = s.split(' ').collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "a name twice in {s}");
        for w in [
            &LEAF1_EDX, &EXT1_EDX, &LEAF1_ECX, &EXT1_ECX, &LEAF7_EBX, &XSAVE_EAX, &LEAF7_ECX,
            &LEAF7_EDX,
        ] {
            for name in w.iter().filter(|n| !n.is_empty()) {
                assert!(names.contains(name), "{name} missing");
            }
        }
        // No feature bits: no flags, and no brand.
        let none = Cpu::read(|leaf, _| if leaf == 0 { [1, 0, 0, 0] } else { [0; 4] });
        let mut b = [0u8; 4096];
        let mut t = Text::new(&mut b);
        cpuinfo(&mut t, &none, 0);
        let n = t.len();
        let s = core::str::from_utf8(&b[..n]).unwrap();
        assert!(s.contains("flags\t\t: \n"), "{s}");
        assert!(s.contains("model name\t: unknown\n"), "{s}");
        assert!(!s.contains("address sizes"), "{s}");
    }

    #[test]
    fn family_15_adds_the_extended_family_and_model() {
        let c = Cpu::read(|leaf, _| match leaf {
            0 => [1, 0, 0, 0],
            // Family 0xf + 0x8, extended model 0x7, model 0x1, stepping 2.
            1 => [0x0087_0f12, 0, 0, 0],
            _ => [0; 4],
        });
        assert_eq!((c.family, c.model, c.stepping), (0x17, 0x71, 2));
    }
}
