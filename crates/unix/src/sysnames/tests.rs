use super::*;
use std::format;
use std::vec::Vec;

/// The numbers and names of `linux_raw_sys::general`'s `__NR_*`
/// constants named here (a name Linux does not have does not compile).
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
macro_rules! linux {
    ($($n:ident,)*) => {
        [$((
            linux_raw_sys::general::$n as u64,
            stringify!($n).strip_prefix("__NR_").unwrap(),
        ),)*]
    };
}

/// Every x86_64 call linux-raw-sys 0.12 has: the table has each under its
/// number, and no others.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[test]
fn every_name_and_number_is_linuxs() {
    let linux = linux! {
        __NR_read, __NR_write, __NR_open, __NR_close, __NR_stat, __NR_fstat, __NR_lstat,
        __NR_poll, __NR_lseek, __NR_mmap, __NR_mprotect, __NR_munmap, __NR_brk,
        __NR_rt_sigaction, __NR_rt_sigprocmask, __NR_rt_sigreturn, __NR_ioctl, __NR_pread64,
        __NR_pwrite64, __NR_readv, __NR_writev, __NR_access, __NR_pipe, __NR_select,
        __NR_sched_yield, __NR_mremap, __NR_msync, __NR_mincore, __NR_madvise, __NR_shmget,
        __NR_shmat, __NR_shmctl, __NR_dup, __NR_dup2, __NR_pause, __NR_nanosleep,
        __NR_getitimer, __NR_alarm, __NR_setitimer, __NR_getpid, __NR_sendfile, __NR_socket,
        __NR_connect, __NR_accept, __NR_sendto, __NR_recvfrom, __NR_sendmsg, __NR_recvmsg,
        __NR_shutdown, __NR_bind, __NR_listen, __NR_getsockname, __NR_getpeername,
        __NR_socketpair, __NR_setsockopt, __NR_getsockopt, __NR_clone, __NR_fork, __NR_vfork,
        __NR_execve, __NR_exit, __NR_wait4, __NR_kill, __NR_uname, __NR_semget, __NR_semop,
        __NR_semctl, __NR_shmdt, __NR_msgget, __NR_msgsnd, __NR_msgrcv, __NR_msgctl, __NR_fcntl,
        __NR_flock, __NR_fsync, __NR_fdatasync, __NR_truncate, __NR_ftruncate, __NR_getdents,
        __NR_getcwd, __NR_chdir, __NR_fchdir, __NR_rename, __NR_mkdir, __NR_rmdir, __NR_creat,
        __NR_link, __NR_unlink, __NR_symlink, __NR_readlink, __NR_chmod, __NR_fchmod,
        __NR_chown, __NR_fchown, __NR_lchown, __NR_umask, __NR_gettimeofday, __NR_getrlimit,
        __NR_getrusage, __NR_sysinfo, __NR_times, __NR_ptrace, __NR_getuid, __NR_syslog,
        __NR_getgid, __NR_setuid, __NR_setgid, __NR_geteuid, __NR_getegid, __NR_setpgid,
        __NR_getppid, __NR_getpgrp, __NR_setsid, __NR_setreuid, __NR_setregid, __NR_getgroups,
        __NR_setgroups, __NR_setresuid, __NR_getresuid, __NR_setresgid, __NR_getresgid,
        __NR_getpgid, __NR_setfsuid, __NR_setfsgid, __NR_getsid, __NR_capget, __NR_capset,
        __NR_rt_sigpending, __NR_rt_sigtimedwait, __NR_rt_sigqueueinfo, __NR_rt_sigsuspend,
        __NR_sigaltstack, __NR_utime, __NR_mknod, __NR_uselib, __NR_personality, __NR_ustat,
        __NR_statfs, __NR_fstatfs, __NR_sysfs, __NR_getpriority, __NR_setpriority,
        __NR_sched_setparam, __NR_sched_getparam, __NR_sched_setscheduler,
        __NR_sched_getscheduler, __NR_sched_get_priority_max, __NR_sched_get_priority_min,
        __NR_sched_rr_get_interval, __NR_mlock, __NR_munlock, __NR_mlockall, __NR_munlockall,
        __NR_vhangup, __NR_modify_ldt, __NR_pivot_root, __NR__sysctl, __NR_prctl,
        __NR_arch_prctl, __NR_adjtimex, __NR_setrlimit, __NR_chroot, __NR_sync, __NR_acct,
        __NR_settimeofday, __NR_mount, __NR_umount2, __NR_swapon, __NR_swapoff, __NR_reboot,
        __NR_sethostname, __NR_setdomainname, __NR_iopl, __NR_ioperm, __NR_create_module,
        __NR_init_module, __NR_delete_module, __NR_get_kernel_syms, __NR_query_module,
        __NR_quotactl, __NR_nfsservctl, __NR_getpmsg, __NR_putpmsg, __NR_afs_syscall,
        __NR_tuxcall, __NR_security, __NR_gettid, __NR_readahead, __NR_setxattr, __NR_lsetxattr,
        __NR_fsetxattr, __NR_getxattr, __NR_lgetxattr, __NR_fgetxattr, __NR_listxattr,
        __NR_llistxattr, __NR_flistxattr, __NR_removexattr, __NR_lremovexattr,
        __NR_fremovexattr, __NR_tkill, __NR_time, __NR_futex, __NR_sched_setaffinity,
        __NR_sched_getaffinity, __NR_set_thread_area, __NR_io_setup, __NR_io_destroy,
        __NR_io_getevents, __NR_io_submit, __NR_io_cancel, __NR_get_thread_area,
        __NR_lookup_dcookie, __NR_epoll_create, __NR_epoll_ctl_old, __NR_epoll_wait_old,
        __NR_remap_file_pages, __NR_getdents64, __NR_set_tid_address, __NR_restart_syscall,
        __NR_semtimedop, __NR_fadvise64, __NR_timer_create, __NR_timer_settime,
        __NR_timer_gettime, __NR_timer_getoverrun, __NR_timer_delete, __NR_clock_settime,
        __NR_clock_gettime, __NR_clock_getres, __NR_clock_nanosleep, __NR_exit_group,
        __NR_epoll_wait, __NR_epoll_ctl, __NR_tgkill, __NR_utimes, __NR_vserver, __NR_mbind,
        __NR_set_mempolicy, __NR_get_mempolicy, __NR_mq_open, __NR_mq_unlink, __NR_mq_timedsend,
        __NR_mq_timedreceive, __NR_mq_notify, __NR_mq_getsetattr, __NR_kexec_load, __NR_waitid,
        __NR_add_key, __NR_request_key, __NR_keyctl, __NR_ioprio_set, __NR_ioprio_get,
        __NR_inotify_init, __NR_inotify_add_watch, __NR_inotify_rm_watch, __NR_migrate_pages,
        __NR_openat, __NR_mkdirat, __NR_mknodat, __NR_fchownat, __NR_futimesat, __NR_newfstatat,
        __NR_unlinkat, __NR_renameat, __NR_linkat, __NR_symlinkat, __NR_readlinkat,
        __NR_fchmodat, __NR_faccessat, __NR_pselect6, __NR_ppoll, __NR_unshare,
        __NR_set_robust_list, __NR_get_robust_list, __NR_splice, __NR_tee, __NR_sync_file_range,
        __NR_vmsplice, __NR_move_pages, __NR_utimensat, __NR_epoll_pwait, __NR_signalfd,
        __NR_timerfd_create, __NR_eventfd, __NR_fallocate, __NR_timerfd_settime,
        __NR_timerfd_gettime, __NR_accept4, __NR_signalfd4, __NR_eventfd2, __NR_epoll_create1,
        __NR_dup3, __NR_pipe2, __NR_inotify_init1, __NR_preadv, __NR_pwritev,
        __NR_rt_tgsigqueueinfo, __NR_perf_event_open, __NR_recvmmsg, __NR_fanotify_init,
        __NR_fanotify_mark, __NR_prlimit64, __NR_name_to_handle_at, __NR_open_by_handle_at,
        __NR_clock_adjtime, __NR_syncfs, __NR_sendmmsg, __NR_setns, __NR_getcpu,
        __NR_process_vm_readv, __NR_process_vm_writev, __NR_kcmp, __NR_finit_module,
        __NR_sched_setattr, __NR_sched_getattr, __NR_renameat2, __NR_seccomp, __NR_getrandom,
        __NR_memfd_create, __NR_kexec_file_load, __NR_bpf, __NR_execveat, __NR_userfaultfd,
        __NR_membarrier, __NR_mlock2, __NR_copy_file_range, __NR_preadv2, __NR_pwritev2,
        __NR_pkey_mprotect, __NR_pkey_alloc, __NR_pkey_free, __NR_statx, __NR_io_pgetevents,
        __NR_rseq, __NR_uretprobe, __NR_pidfd_send_signal, __NR_io_uring_setup,
        __NR_io_uring_enter, __NR_io_uring_register, __NR_open_tree, __NR_move_mount,
        __NR_fsopen, __NR_fsconfig, __NR_fsmount, __NR_fspick, __NR_pidfd_open, __NR_clone3,
        __NR_close_range, __NR_openat2, __NR_pidfd_getfd, __NR_faccessat2, __NR_process_madvise,
        __NR_epoll_pwait2, __NR_mount_setattr, __NR_quotactl_fd, __NR_landlock_create_ruleset,
        __NR_landlock_add_rule, __NR_landlock_restrict_self, __NR_memfd_secret,
        __NR_process_mrelease, __NR_futex_waitv, __NR_set_mempolicy_home_node, __NR_cachestat,
        __NR_fchmodat2, __NR_map_shadow_stack, __NR_futex_wake, __NR_futex_wait,
        __NR_futex_requeue, __NR_statmount, __NR_listmount, __NR_lsm_get_self_attr,
        __NR_lsm_set_self_attr, __NR_lsm_list_modules, __NR_mseal, __NR_setxattrat,
        __NR_getxattrat, __NR_listxattrat, __NR_removexattrat, __NR_open_tree_attr,
        __NR_file_getattr, __NR_file_setattr,
    };
    for &(nr, n) in &linux {
        assert_eq!(name(nr), Some(n), "call {nr}");
        assert_eq!(number(n), Some(nr), "call {n}");
    }
    let ours: Vec<_> = all().collect();
    let mut theirs = linux.to_vec();
    theirs.sort();
    assert_eq!(ours, theirs);
    assert_eq!(ours.len(), COUNT);
    assert_eq!(COUNT, 382);
}

#[test]
fn numbers_no_call_has() {
    for nr in [
        LOW_END + 1,
        400,
        HIGH_START - 1,
        LAST + 1,
        510,
        511,
        1 << 40,
    ] {
        assert_eq!(name(nr), None, "{nr}");
    }
    assert_eq!(number("nonesuch"), None);
    assert_eq!(number(""), None);
}

#[test]
fn tally_entries_print_by_name() {
    let t = |nr, count| format!("{}", Tally { nr, count });
    assert_eq!(t(334, 1), "rseq ×1");
    assert_eq!(t(0, 70000), "read ×70000");
    assert_eq!(t(469, 2), "file_setattr ×2");
    assert_eq!(t(400, 5), "400 ×5");
    assert_eq!(t(510, 1), "510 ×1");
    assert_eq!(t(OTHER, 3), "other ×3");
    assert_eq!(t(u16::MAX, 3), "other ×3");
    assert_eq!(
        Tally::decode(&[0x4e, 0x01, 2, 0, 0, 0]),
        Tally { nr: 334, count: 2 }
    );
}
