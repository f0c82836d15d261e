use super::*;
use crate::loadavg::FIXED_1;

fn text(f: impl FnOnce(&mut Text)) -> std::string::String {
    let mut b = [0u8; 4096];
    let mut t = Text::new(&mut b);
    f(&mut t);
    let n = t.len();
    std::string::String::from_utf8(b[..n].to_vec()).unwrap()
}

#[test]
fn fixed_files_say_what_stet_is() {
    assert_eq!(
        text(version),
        "Linux version 6.1.0-stet (stet@stet) (rustc) #1 Stet\n"
    );
    assert_eq!(text(filesystems), "nodev\ttmpfs\nnodev\tproc\n");
    assert_eq!(
        text(mounts),
        "stet / tmpfs rw 0 0\nproc /proc proc rw,nosuid,nodev,noexec 0 0\n"
    );
}

#[test]
fn stat_has_linux_s_lines() {
    let s = KStat {
        cpus: 1,
        busy: 120,
        idle: 880,
        btime: 1_704_067_200,
        processes: 42,
        running: 2,
        blocked: 0,
    };
    assert_eq!(
        text(|t| kstat(t, &s)),
        "cpu  120 0 0 880 0 0 0 0 0 0\ncpu0 120 0 0 880 0 0 0 0 0 0\nintr 0\nctxt 0\n\
         btime 1704067200\nprocesses 42\nprocs_running 2\nprocs_blocked 0\n\
         softirq 0 0 0 0 0 0 0 0 0 0 0\n"
    );
    let two = KStat { cpus: 2, ..s };
    assert!(text(|t| kstat(t, &two)).contains("\ncpu1 60 0 0 440 0 0 0 0 0 0\n"));
}

#[test]
fn uptime_and_loadavg_are_to_hundredths() {
    assert_eq!(
        text(|t| uptime(t, 12_345_678_901, 9_990_000_000)),
        "12.34 9.99\n"
    );
    assert_eq!(text(|t| uptime(t, 0, 0)), "0.00 0.00\n");
    assert_eq!(
        text(|t| loadavg(t, [FIXED_1, FIXED_1 / 2, 0], 1, 3, 77)),
        "1.00 0.50 0.00 1/3 77\n"
    );
}

#[test]
fn status_has_linux_s_fields_in_linux_s_order() {
    let s = Status {
        name: b"sh",
        state: b'S',
        pid: 5,
        ppid: 1,
        pgid: 5,
        sid: 1,
        uids: [0, 0, 0, 0],
        gids: [0, 0, 0, 0],
        groups: &[],
        fdsize: 256,
        pending: 1 << 16,
        threads: 1,
        vm: [0; 5],
        tracer: 0,
    };
    assert_eq!(
        text(|t| status(t, &s)),
        "Name:\tsh\nState:\tS (sleeping)\nTgid:\t5\nNgid:\t0\nPid:\t5\nPPid:\t1\n\
         TracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t256\nGroups:\t\n\
         NStgid:\t5\nNSpid:\t5\nNSpgid:\t5\nNSsid:\t1\nThreads:\t1\n\
         SigPnd:\t0000000000010000\nShdPnd:\t0000000000010000\nCpus_allowed:\t1\n\
         Cpus_allowed_list:\t0\n"
    );
    let odd = Status {
        name: b"a\nb\\\x01",
        state: b'Z',
        uids: [1000, 1001, 1002, 1003],
        groups: &[4, 24],
        tracer: 7,
        ..s
    };
    let got = text(|t| status(t, &odd));
    assert!(
        got.starts_with("Name:\ta\\nb\\\\?\nState:\tZ (zombie)\n"),
        "{got}"
    );
    assert!(got.contains("\nUid:\t1000\t1001\t1002\t1003\n"), "{got}");
    assert!(got.contains("\nGroups:\t4 24\n"), "{got}");
    assert!(got.contains("\nTracerPid:\t7\n"), "{got}");
    let traced = Status { state: b't', ..s };
    assert!(text(|t| status(t, &traced)).contains("\nState:\tt (tracing stop)\n"));
    // The keeper's figures, as Linux formats them, after `NSsid`.
    let mem = Status {
        vm: [8 << 20, 4096, 300, 400, 9 << 20],
        ..s
    };
    let got = text(|t| status(t, &mem));
    assert!(
        got.contains(
            "NSsid:\t1\nVmPeak:\t    9216 kB\nVmSize:\t    8192 kB\n\
             VmLck:\t       4 kB\nVmPin:\t       0 kB\nVmHWM:\t    1600 kB\n\
             VmRSS:\t    1200 kB\nRssAnon:\t    1200 kB\nRssFile:\t       0 kB\n\
             RssShmem:\t       0 kB\nVmSwap:\t       0 kB\nThreads:\t1\n"
        ),
        "{got}"
    );
}

#[test]
fn a_full_text_is_cut_and_ends_a_line() {
    let mut b = [0u8; 10];
    let mut t = Text::new(&mut b);
    t.bytes(b"0123456789abc");
    assert_eq!(t.end_line(), 10);
    assert_eq!(&b, b"012345678\n");
    let mut b = [0u8; 0];
    let mut t = Text::new(&mut b);
    assert!(t.is_empty());
    assert_eq!(t.end_line(), 0);
}

#[test]
fn statfs_figures_stay_within_each_other() {
    let r = Statfs::root(100, 150, 200, 10, 20);
    assert_eq!(
        (r.blocks, r.bfree, r.bavail, r.files, r.ffree),
        (100, 100, 100, 10, 10)
    );
    let r = Statfs::root(100, 60, 30, 10, 2);
    assert_eq!((r.bfree, r.bavail, r.ffree), (60, 30, 2));
    let b = Statfs::proc().bytes();
    let word = |i: usize| u64::from_le_bytes(b[8 * i..8 * i + 8].try_into().unwrap());
    assert_eq!(word(0), 0x9fa0);
    assert_eq!(word(1), 4096);
    assert_eq!(word(2), 0);
    assert_eq!(word(8), 255);
    assert_eq!(word(9), 4096);
    assert_eq!(word(10), 0x2e);
}
