use super::*;
use crate::cred::Cred;

fn user(uid: u32, gid: u32) -> Cred {
    Cred::user(uid, gid)
}

#[test]
fn perms_follow_owner_group_others() {
    let owner = user(1000, 100);
    let p = Perm::new(42, &owner, IPC_CREAT | 0o640, 0);
    assert_eq!(
        (p.uid, p.gid, p.cuid, p.cgid, p.mode),
        (1000, 100, 1000, 100, 0o640)
    );
    // The owner reads and writes; its group reads; others nothing.
    assert!(p.allows(&owner, 0o600));
    assert!(p.allows(&user(2000, 100), 0o400));
    assert!(!p.allows(&user(2000, 100), 0o200));
    assert!(!p.allows(&user(2000, 200), 0o400));
    // Any class's bit asks: 0o004 is a read request too.
    assert!(!p.allows(&user(2000, 200), 0o004));
    // No bits asked: always.
    assert!(p.allows(&user(2000, 200), 0));
    // The superuser, always.
    assert!(p.allows(&Cred::ROOT, 0o666));
    assert_eq!(
        p.check(&user(2000, 200), 0o444),
        Err(crate::sys::errno::EACCES)
    );
    // A supplementary group counts.
    let mut g = user(2000, 200);
    g.groups[0] = 100;
    g.ngroups = 1;
    assert!(p.allows(&g, 0o400));
}

#[test]
fn creator_keeps_owner_rights_after_give_away() {
    let mut p = Perm::new(0, &user(1000, 100), 0o600, 0);
    let mut b = [0u8; size::PERM];
    b[off::UID..off::UID + 4].copy_from_slice(&3000u32.to_le_bytes());
    b[off::GID..off::GID + 4].copy_from_slice(&300u32.to_le_bytes());
    b[off::MODE..off::MODE + 4].copy_from_slice(&0o7644u32.to_le_bytes());
    p.mode |= SHM_LOCKED;
    p.set_from(&b);
    assert_eq!((p.uid, p.gid, p.mode), (3000, 300, SHM_LOCKED | 0o644));
    assert_eq!(p.owner(&user(1000, 1)), Ok(()));
    assert_eq!(p.owner(&user(3000, 1)), Ok(()));
    assert_eq!(p.owner(&user(4000, 100)), Err(crate::sys::errno::EPERM));
    assert_eq!(p.owner(&Cred::ROOT), Ok(()));
}

#[test]
fn ids_split_and_join() {
    assert_eq!(make_id(0, 0), 0);
    assert_eq!(make_id(1, 5), 32768 + 5);
    assert_eq!(split_id(32768 + 5), Some((1, 5)));
    assert_eq!(split_id(-1), None);
    assert_eq!(split_id(1 << 31), None);
    assert_eq!(make_id(SEQ_MAX, limit::IPCMNI - 1), i32::MAX);
}

#[test]
fn sembufs_parse() {
    let b = [1, 0, 0xff, 0xff, 0x00, 0x10, 2, 0, 3, 0, 0, 8, 9];
    let v: std::vec::Vec<_> = SemBuf::parse(&b).collect();
    assert_eq!(
        v,
        [
            SemBuf {
                num: 1,
                op: -1,
                flg: 0x1000
            },
            SemBuf {
                num: 2,
                op: 3,
                flg: 0x800
            }
        ]
    );
}

#[test]
fn layouts_put_fields_where_linux_reads_them() {
    let p = Perm {
        key: -2,
        uid: 1,
        gid: 2,
        cuid: 3,
        cgid: 4,
        mode: 0o1600,
        seq: 7,
    };
    let mut b = [0xaau8; 128];
    let s = ShmStat {
        segsz: 4097,
        atime: 10,
        dtime: 11,
        ctime: 12,
        cpid: 13,
        lpid: 14,
        nattch: 2,
    };
    write_shmid_ds(&mut b, &p, &s);
    assert_eq!(get32(&b, 0), (-2i32) as u32);
    assert_eq!(
        [
            get32(&b, 4),
            get32(&b, 8),
            get32(&b, 12),
            get32(&b, 16),
            get32(&b, 20)
        ],
        [1, 2, 3, 4, 0o1600]
    );
    assert_eq!(get32(&b, 24), 7);
    assert_eq!(
        [get64(&b, 48), get64(&b, 56), get64(&b, 64), get64(&b, 72)],
        [4097, 10, 11, 12]
    );
    assert_eq!([get32(&b, 80), get32(&b, 84)], [13, 14]);
    assert_eq!(get64(&b, 88), 2);
    assert_eq!(
        b[size::SHMID_DS],
        0xaa,
        "nothing written past the structure"
    );
    write_semid_ds(&mut b, &p, 20, 21, 3);
    assert_eq!(
        [get64(&b, 48), get64(&b, 56), get64(&b, 64), get64(&b, 80)],
        [20, 0, 21, 3]
    );
    let m = MsqStat {
        stime: 1,
        rtime: 2,
        ctime: 3,
        cbytes: 4,
        qnum: 5,
        qbytes: 6,
        lspid: 7,
        lrpid: 8,
    };
    write_msqid_ds(&mut b, &p, &m);
    assert_eq!(
        [
            get64(&b, 48),
            get64(&b, 56),
            get64(&b, 64),
            get64(&b, 72),
            get64(&b, 80),
            get64(&b, 88)
        ],
        [1, 2, 3, 4, 5, 6]
    );
    assert_eq!([get32(&b, 96), get32(&b, 100)], [7, 8]);
    assert_eq!(qbytes_of(&b), 6);
}

#[test]
fn info_structures_say_linux_limits() {
    let mut b = [0u8; 80];
    write_seminfo(&mut b, None);
    let w: std::vec::Vec<u32> = (0..10).map(|i| get32(&b, 4 * i)).collect();
    assert_eq!(
        w,
        [1024000000, 32000, 1024000000, 1024000000, 32000, 500, 500, 20, 32767, 32767]
    );
    write_seminfo(&mut b, Some((2, 7)));
    assert_eq!((get32(&b, 28), get32(&b, 36)), (2, 7));
    write_msginfo(&mut b, None);
    let w: std::vec::Vec<u32> = (0..7).map(|i| get32(&b, 4 * i)).collect();
    assert_eq!(w, [512000, 16384, 8192, 16384, 32000, 16, 16384]);
    assert_eq!(u16::from_le_bytes([b[28], b[29]]), 0xffff);
    write_shminfo(&mut b, &ShmLimits::LINUX);
    assert_eq!(get64(&b, 0), u64::MAX - (1 << 24));
    assert_eq!(
        [get64(&b, 8), get64(&b, 16), get64(&b, 24)],
        [1, 4096, 4096]
    );
    write_shm_info(&mut b, 3, 10, 4);
    assert_eq!((get32(&b, 0), get64(&b, 8), get64(&b, 16)), (3, 10, 4));
}

#[test]
fn only_sysv_waits_are_never_restarted() {
    assert!(never_restarted(nr::SEMOP) && never_restarted(nr::SEMTIMEDOP));
    assert!(never_restarted(nr::MSGSND) && never_restarted(nr::MSGRCV));
    assert!(!never_restarted(nr::SHMAT) && !never_restarted(0));
}

#[test]
fn getters_past_the_end_read_zero() {
    assert_eq!(get32(&[1, 2, 3], 0), 0);
    assert_eq!(get64(&[1; 8], 4), 0);
    assert_eq!(get64(&[1; 8], usize::MAX - 2), 0);
}
