//! System V IPC's Linux values as `stet_unix::sysv` types them, checked
//! against `linux-raw-sys` (system call numbers, errno) and `libc` (the
//! flags, commands and the layouts of the structures, which linux-raw-sys
//! does not have): glibc's x86_64 `struct *id_ds` are the kernel's
//! `struct *id64_ds`.
#![cfg(all(target_arch = "x86_64", target_os = "linux"))]

use linux_raw_sys::{errno, general};
use std::mem::{offset_of, size_of};
use stet_unix::sysv::{self, limit, nr, off, size};

#[test]
fn system_call_numbers() {
    let rows = [
        (nr::SHMGET, general::__NR_shmget),
        (nr::SHMAT, general::__NR_shmat),
        (nr::SHMCTL, general::__NR_shmctl),
        (nr::SEMGET, general::__NR_semget),
        (nr::SEMOP, general::__NR_semop),
        (nr::SEMCTL, general::__NR_semctl),
        (nr::SHMDT, general::__NR_shmdt),
        (nr::MSGGET, general::__NR_msgget),
        (nr::MSGSND, general::__NR_msgsnd),
        (nr::MSGRCV, general::__NR_msgrcv),
        (nr::MSGCTL, general::__NR_msgctl),
        (nr::SEMTIMEDOP, general::__NR_semtimedop),
    ];
    for (ours, theirs) in rows {
        assert_eq!(ours, theirs as u64);
    }
    assert_eq!(sysv::errno::ENOMSG, errno::ENOMSG as i64);
    assert_eq!(sysv::errno::EIDRM, errno::EIDRM as i64);
}

#[test]
fn flags_and_commands() {
    let rows: [(u32, libc::c_int); 31] = [
        (sysv::IPC_CREAT, libc::IPC_CREAT),
        (sysv::IPC_EXCL, libc::IPC_EXCL),
        (sysv::IPC_NOWAIT, libc::IPC_NOWAIT),
        (sysv::IPC_RMID, libc::IPC_RMID),
        (sysv::IPC_SET, libc::IPC_SET),
        (sysv::IPC_STAT, libc::IPC_STAT),
        (sysv::IPC_INFO, libc::IPC_INFO),
        (sysv::SHM_RDONLY, libc::SHM_RDONLY),
        (sysv::SHM_RND, libc::SHM_RND),
        (sysv::SHM_REMAP, libc::SHM_REMAP),
        (sysv::SHM_EXEC, libc::SHM_EXEC),
        (sysv::SHM_HUGETLB, libc::SHM_HUGETLB),
        (sysv::SHM_NORESERVE, libc::SHM_NORESERVE),
        (sysv::SHM_LOCK, libc::SHM_LOCK),
        (sysv::SHM_UNLOCK, libc::SHM_UNLOCK),
        (sysv::SEM_UNDO, libc::SEM_UNDO),
        (sysv::GETPID, libc::GETPID),
        (sysv::GETVAL, libc::GETVAL),
        (sysv::GETALL, libc::GETALL),
        (sysv::GETNCNT, libc::GETNCNT),
        (sysv::GETZCNT, libc::GETZCNT),
        (sysv::SETVAL, libc::SETVAL),
        (sysv::SETALL, libc::SETALL),
        (sysv::SEM_STAT, libc::SEM_STAT),
        (sysv::SEM_INFO, libc::SEM_INFO),
        (sysv::SEM_STAT_ANY, libc::SEM_STAT_ANY),
        (sysv::MSG_STAT, libc::MSG_STAT),
        (sysv::MSG_INFO, libc::MSG_INFO),
        (sysv::MSG_NOERROR, libc::MSG_NOERROR),
        (sysv::MSG_EXCEPT, libc::MSG_EXCEPT),
        (sysv::MSG_COPY, libc::MSG_COPY),
    ];
    for (ours, theirs) in rows {
        assert_eq!(ours as i64, theirs as i64);
    }
    assert_eq!(sysv::IPC_PRIVATE, libc::IPC_PRIVATE);
    // Not in libc: the kernel's values (uapi/linux/shm.h, msg.h).
    assert_eq!(
        (sysv::SHM_STAT, sysv::SHM_INFO, sysv::SHM_STAT_ANY),
        (13, 14, 15)
    );
    assert_eq!(sysv::MSG_STAT_ANY, 13);
    assert_eq!((sysv::SHM_DEST, sysv::SHM_LOCKED), (0o1000, 0o2000));
    assert_eq!(sysv::SHMLBA, 4096);
}

#[test]
fn limits_are_linux_defaults() {
    assert_eq!(limit::SHMMAX, u64::MAX - (1 << 24));
    assert_eq!(limit::SHMMNI, 4096);
    assert_eq!(
        (limit::SEMMSL, limit::SEMMNI, limit::SEMOPM),
        (32000, 32000, 500)
    );
    assert_eq!((limit::SEMVMX, limit::SEMAEM), (32767, 32767));
    assert_eq!(
        (limit::MSGMAX, limit::MSGMNB, limit::MSGMNI),
        (8192, 16384, 32000)
    );
}

#[test]
fn layouts() {
    use libc::{ipc_perm, msqid_ds, semid_ds, shmid_ds};
    assert_eq!(size_of::<ipc_perm>(), size::PERM);
    assert_eq!(size_of::<shmid_ds>(), size::SHMID_DS);
    assert_eq!(size_of::<semid_ds>(), size::SEMID_DS);
    assert_eq!(size_of::<msqid_ds>(), size::MSQID_DS);
    assert_eq!(size_of::<libc::sembuf>(), size::SEMBUF);
    assert_eq!(offset_of!(ipc_perm, __key), off::KEY);
    assert_eq!(offset_of!(ipc_perm, uid), off::UID);
    assert_eq!(offset_of!(ipc_perm, gid), off::GID);
    assert_eq!(offset_of!(ipc_perm, cuid), off::CUID);
    assert_eq!(offset_of!(ipc_perm, cgid), off::CGID);
    assert_eq!(offset_of!(ipc_perm, mode), off::MODE);
    assert_eq!(offset_of!(ipc_perm, __seq), off::SEQ);
    assert_eq!(offset_of!(shmid_ds, shm_segsz), off::SHM_SEGSZ);
    assert_eq!(offset_of!(shmid_ds, shm_atime), off::SHM_ATIME);
    assert_eq!(offset_of!(shmid_ds, shm_dtime), off::SHM_DTIME);
    assert_eq!(offset_of!(shmid_ds, shm_ctime), off::SHM_CTIME);
    assert_eq!(offset_of!(shmid_ds, shm_cpid), off::SHM_CPID);
    assert_eq!(offset_of!(shmid_ds, shm_lpid), off::SHM_LPID);
    assert_eq!(offset_of!(shmid_ds, shm_nattch), off::SHM_NATTCH);
    assert_eq!(offset_of!(semid_ds, sem_otime), off::SEM_OTIME);
    assert_eq!(offset_of!(semid_ds, sem_ctime), off::SEM_CTIME);
    assert_eq!(offset_of!(semid_ds, sem_nsems), off::SEM_NSEMS);
    assert_eq!(offset_of!(msqid_ds, msg_stime), off::MSG_STIME);
    assert_eq!(offset_of!(msqid_ds, msg_rtime), off::MSG_RTIME);
    assert_eq!(offset_of!(msqid_ds, msg_ctime), off::MSG_CTIME);
    assert_eq!(offset_of!(msqid_ds, __msg_cbytes), off::MSG_CBYTES);
    assert_eq!(offset_of!(msqid_ds, msg_qnum), off::MSG_QNUM);
    assert_eq!(offset_of!(msqid_ds, msg_qbytes), off::MSG_QBYTES);
    assert_eq!(offset_of!(msqid_ds, msg_lspid), off::MSG_LSPID);
    assert_eq!(offset_of!(msqid_ds, msg_lrpid), off::MSG_LRPID);
    assert_eq!(size_of::<libc::seminfo>(), size::SEMINFO);
    assert_eq!(size_of::<libc::msginfo>(), size::MSGINFO);
    // Not in libc: struct shminfo64 is nine words, struct shm_info an
    // int and five words.
    assert_eq!((size::SHMINFO, size::SHM_INFO), (9 * 8, 6 * 8));
}
