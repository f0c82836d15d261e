/* Assorted Linux behaviour (issue 23): System V IPC's system-wide limits
 * reachable by one user and *_STAT_ANY given an id; prctl's securebits and
 * speculation-control errnos; linkat's flags and EXDEV out of /proc;
 * /proc/sys/kernel/pid_max written within Linux's bounds; opening
 * /proc/self/fd/N with O_TRUNC empties the file (seals hold). Prints exact
 * lines and "misc23: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MSG_STAT_ANY
#define MSG_STAT_ANY 13
#endif
#ifndef SEM_STAT_ANY
#define SEM_STAT_ANY 20
#endif
#ifndef SHM_STAT_ANY
#define SHM_STAT_ANY 15
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_KEEP_SIZE 1
#define FALLOC_FL_PUNCH_HOLE 2
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_SEAL_SHRINK 0x0002
#endif

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("misc23: FAILED line %d: ", __LINE__);                                          \
            printf(__VA_ARGS__);                                                                   \
            printf(" (errno %d)\n", errno);                                                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)
#define REFUSED(call, e)                                                                           \
    do {                                                                                           \
        errno = 0;                                                                                 \
        long r_ = (long)(call);                                                                    \
        CHECK(r_ == -1 && errno == (e), "%s gave %ld, want errno %d", #call, r_, (e));             \
    } while (0)

#define MANY 300

static void sysv(void) {
    static int ids[MANY];
    int n = 0;
    /* More than the 128 a user once could hold, of each kind. */
    for (int i = 0; i < MANY; i++) {
        ids[i] = semget(IPC_PRIVATE, 10, IPC_CREAT | 0600);
        n += ids[i] >= 0;
    }
    for (int i = 0; i < MANY; i++)
        semctl(ids[i], 0, IPC_RMID);
    printf("misc23: %d sets of 10 semaphores\n", n);
    n = 0;
    for (int i = 0; i < MANY; i++) {
        ids[i] = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
        n += ids[i] >= 0;
    }
    for (int i = 0; i < MANY; i++)
        msgctl(ids[i], IPC_RMID, NULL);
    printf("misc23: %d queues\n", n);
    n = 0;
    for (int i = 0; i < MANY; i++) {
        ids[i] = shmget(IPC_PRIVATE, 2048, IPC_CREAT | 0600);
        n += ids[i] >= 0;
    }
    for (int i = 0; i < MANY; i++)
        shmctl(ids[i], IPC_RMID, NULL);
    printf("misc23: %d segments\n", n);

    /* *_STAT and *_STAT_ANY take an index; an id's low bits are its own. */
    int q = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    int s = semget(IPC_PRIVATE, 2, IPC_CREAT | 0600);
    int m = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    CHECK(q >= 0 && s >= 0 && m >= 0, "objects %d %d %d", q, s, m);
    pid_t c = fork();
    if (c == 0) {
        /* Another user: no read permission, which *_STAT_ANY skips. */
        if (setuid(65534) != 0)
            _exit(9);
        struct msqid_ds mq;
        struct semid_ds sd;
        struct shmid_ds sh;
        int r = 0;
        errno = 0;
        r |= !(msgctl(q, MSG_STAT, &mq) == -1 && errno == EACCES) << 0;
        r |= !(msgctl(q, MSG_STAT_ANY, &mq) == q && mq.msg_perm.mode == 0600) << 1;
        errno = 0;
        r |= !(semctl(s, 0, SEM_STAT, &sd) == -1 && errno == EACCES) << 2;
        r |= !(semctl(s, 0, SEM_STAT_ANY, &sd) == s && sd.sem_nsems == 2) << 3;
        errno = 0;
        r |= !(shmctl(m, SHM_STAT, &sh) == -1 && errno == EACCES) << 4;
        r |= !(shmctl(m, SHM_STAT_ANY, &sh) == m && sh.shm_segsz == 4096) << 5;
        errno = 0;
        r |= !(msgctl(-1, MSG_STAT_ANY, &mq) == -1 && errno == EINVAL) << 6;
        _exit(r);
    }
    int st = -1;
    waitpid(c, &st, 0);
    printf("misc23: STAT_ANY as another user: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    msgctl(q, IPC_RMID, NULL);
    semctl(s, 0, IPC_RMID);
    shmctl(m, IPC_RMID, NULL);
}

static void prctls(void) {
    CHECK(prctl(PR_GET_SECUREBITS) == 0, "PR_GET_SECUREBITS");
    CHECK(prctl(PR_SET_SECUREBITS, 0) == 0, "PR_SET_SECUREBITS 0 as root");
    REFUSED(prctl(PR_SET_SECUREBITS, 0x100), EPERM);
    REFUSED(prctl(PR_SET_SECUREBITS, 1), EINVAL);
    CHECK(prctl(PR_GET_SPECULATION_CTRL, 0, 0, 0, 0) == 2, "store bypass");
    CHECK(prctl(PR_GET_SPECULATION_CTRL, 2, 0, 0, 0) == 2, "l1d flush");
    REFUSED(prctl(PR_GET_SPECULATION_CTRL, 3, 0, 0, 0), ENODEV);
    REFUSED(prctl(PR_GET_SPECULATION_CTRL, 0, 1, 0, 0), EINVAL);
    REFUSED(prctl(PR_SET_SPECULATION_CTRL, 0, 4, 0, 0), ENXIO);
    REFUSED(prctl(PR_SET_SPECULATION_CTRL, 0, 4, 1, 0), EINVAL);
    pid_t c = fork();
    if (c == 0) {
        if (setuid(65534) != 0)
            _exit(9);
        errno = 0;
        int r = !(prctl(PR_SET_SECUREBITS, 0) == -1 && errno == EPERM);
        errno = 0;
        r |= !(prctl(PR_CAPBSET_DROP, 1) == -1 && errno == EPERM) << 1;
        _exit(r);
    }
    int st = -1;
    waitpid(c, &st, 0);
    printf("misc23: prctl as another user: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void links(void) {
    mkdir("/tmp/m23", 0755);
    int fd = open("/tmp/m23/f", O_CREAT | O_WRONLY, 0644);
    CHECK(fd >= 0, "create");
    close(fd);
    symlink("/tmp/m23/f", "/tmp/m23/sl");
    REFUSED(syscall(SYS_linkat, AT_FDCWD, "/tmp/m23/f", AT_FDCWD, "/tmp/m23/g", 1), EINVAL);
    REFUSED(syscall(SYS_linkat, AT_FDCWD, "/tmp/m23/f", AT_FDCWD, "/tmp/m23/g", 0x100), EINVAL);
    REFUSED(linkat(AT_FDCWD, "/proc/cpuinfo", AT_FDCWD, "/tmp/m23/c", 0), EXDEV);
    REFUSED(linkat(AT_FDCWD, "/tmp/m23/f", AT_FDCWD, "/proc/sys/kernel/f", 0), EXDEV);
    /* AT_SYMLINK_FOLLOW links the file the link names; without, the link. */
    CHECK(linkat(AT_FDCWD, "/tmp/m23/sl", AT_FDCWD, "/tmp/m23/h", AT_SYMLINK_FOLLOW) == 0, "follow");
    CHECK(linkat(AT_FDCWD, "/tmp/m23/sl", AT_FDCWD, "/tmp/m23/k", 0) == 0, "nofollow");
    struct stat a, b;
    lstat("/tmp/m23/h", &a);
    lstat("/tmp/m23/k", &b);
    printf("misc23: linkat follow: regular %d nlink %d; not: link %d\n", S_ISREG(a.st_mode),
           (int)a.st_nlink, S_ISLNK(b.st_mode));
    unlink("/tmp/m23/h");
    unlink("/tmp/m23/k");
    unlink("/tmp/m23/sl");
    unlink("/tmp/m23/f");
    rmdir("/tmp/m23");
}

static long read_long(const char *path) {
    char b[64] = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -errno;
    long n = read(fd, b, sizeof b - 1);
    close(fd);
    return n > 0 ? strtol(b, NULL, 10) : -1;
}

static int write_str(const char *path, const char *v) {
    int fd = open(path, O_WRONLY);
    if (fd < 0)
        return -errno;
    long n = write(fd, v, strlen(v));
    int e = errno;
    close(fd);
    return n == (long)strlen(v) ? 0 : -e;
}

static void pid_max(void) {
    const char *p = "/proc/sys/kernel/pid_max";
    long before = read_long(p);
    int small = write_str(p, "300");
    int big = write_str(p, "4194305");
    int ok = write_str(p, "4194304");
    long after = read_long(p);
    int ok2 = write_str(p, "301");
    long low = read_long(p);
    /* Forks still find pids, below 301 now. */
    pid_t c = fork();
    if (c == 0)
        _exit(0);
    int below = c > 0 && c < 301;
    waitpid(c, NULL, 0);
    write_str(p, "32768");
    printf("misc23: pid_max %ld; 300 %d, 4194305 %d, 4194304 %d -> %ld, 301 %d -> %ld; "
           "child below 301: %d\n",
           before, small, big, ok, after, ok2, low, below);
    printf("misc23: pid_max back %ld\n", read_long(p));
}

static void memfd_trunc(void) {
    int fd = memfd_create("m23", MFD_ALLOW_SEALING);
    CHECK(fd >= 0, "memfd_create");
    CHECK(ftruncate(fd, 8192) == 0, "ftruncate");
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int f2 = open(path, O_RDWR | O_TRUNC);
    struct stat st;
    fstat(fd, &st);
    long size = st.st_size;
    close(f2);
    ftruncate(fd, 4096);
    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK);
    errno = 0;
    int f3 = open(path, O_RDWR | O_TRUNC);
    int e = errno;
    fstat(fd, &st);
    printf("misc23: memfd reopened with O_TRUNC: size %ld; sealed: %d errno %d size %ld\n", size,
           f3, e, (long)st.st_size);
    close(fd);

    /* A hole punched (with KEEP_SIZE, as Linux requires): zeros, the
     * size kept; past the end nothing; under a write seal EPERM. */
    fd = memfd_create("m23p", MFD_ALLOW_SEALING);
    char b[8192];
    memset(b, 'a', sizeof b);
    CHECK(write(fd, b, sizeof b) == (long)sizeof b, "write");
    CHECK(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 4096, 8192) == 0, "punch");
    REFUSED(fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096), EOPNOTSUPP);
    fstat(fd, &st);
    char c0 = 0, c1 = 1;
    pread(fd, &c0, 1, 4095);
    pread(fd, &c1, 1, 4096);
    fcntl(fd, F_ADD_SEALS, 0x0008 /* F_SEAL_WRITE */);
    REFUSED(fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096), EPERM);
    printf("misc23: punched: size %ld, bytes %c %d\n", (long)st.st_size, c0, c1);
    close(fd);

    /* F_SEAL_WRITE while this process maps the file shared and writable:
     * EBUSY; other seals may be added; a private mapping does not stop it. */
    fd = memfd_create("m23s", MFD_ALLOW_SEALING);
    CHECK(ftruncate(fd, 8192) == 0, "ftruncate");
    void *w = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    REFUSED(fcntl(fd, F_ADD_SEALS, 0x0008), EBUSY);
    CHECK(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) == 0, "shrink seal");
    munmap(w, 8192);
    void *r = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(fcntl(fd, F_ADD_SEALS, 0x0008) == 0, "write seal with a private mapping");
    printf("misc23: seals %d\n", fcntl(fd, 1034 /* F_GET_SEALS */));
    munmap(r, 8192);
    close(fd);
}

/* A "Name:   N kB" line of /proc/self/status (-1: none). */
static long status_kb(const char *name) {
    char b[4096];
    int fd = open("/proc/self/status", O_RDONLY);
    if (fd < 0)
        return -1;
    long n = read(fd, b, sizeof b - 1);
    close(fd);
    if (n <= 0)
        return -1;
    b[n] = 0;
    char *at = strstr(b, name);
    if (!at || at[strlen(name)] != ':')
        return -1;
    return strtol(at + strlen(name) + 1, NULL, 10);
}

static void locks(void) {
    long pg = sysconf(_SC_PAGESIZE);
    char *a = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(a != MAP_FAILED, "mmap");
    long before = status_kb("VmLck");
    /* MLOCK_ONFAULT (1): locked, its pages made at their first touch. */
    CHECK(syscall(SYS_mlock2, a, pg, 1) == 0, "mlock2 ONFAULT");
    long one = status_kb("VmLck");
    CHECK(mlock(a, pg) == 0, "mlock again");
    long again = status_kb("VmLck");
    CHECK(mlock(a + 2 * pg, 2 * pg) == 0, "mlock two more");
    long three = status_kb("VmLck");
    CHECK(munlock(a, 4 * pg) == 0, "munlock");
    long none = status_kb("VmLck");
    REFUSED(syscall(SYS_mlock2, a, pg, 2), EINVAL);
    printf("misc23: VmLck +%ld kB, again +%ld kB, two more +%ld kB, unlocked +%ld kB\n",
           one - before, again - before, three - before, none - before);
    long size = status_kb("VmSize"), rss = status_kb("VmRSS"), peak = status_kb("VmPeak");
    printf("misc23: VmSize, VmRSS, VmPeak, VmPin there: %d %d %d %ld\n", size > 16, rss > 0,
           peak >= size, status_kb("VmPin"));
    /* A child has no locks of its parent's. */
    CHECK(mlock(a, pg) == 0, "mlock");
    pid_t c = fork();
    if (c == 0)
        _exit(status_kb("VmLck") == 0 ? 0 : 1);
    int st = -1;
    waitpid(c, &st, 0);
    printf("misc23: child VmLck 0: %d\n", WIFEXITED(st) && WEXITSTATUS(st) == 0);
    munmap(a, 4 * pg);

    /* msync: EBUSY to invalidate locked pages, EINVAL unaligned or bad
     * flags, ENOMEM past the mapping. */
    int fd = open("/tmp/m23sync", O_CREAT | O_RDWR | O_TRUNC, 0600);
    CHECK(ftruncate(fd, pg) == 0, "ftruncate");
    char *m = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, fd, 0);
    CHECK(m != MAP_FAILED, "mmap locked");
    REFUSED(msync(m, pg, MS_INVALIDATE), EBUSY);
    REFUSED(msync(m, pg, MS_ASYNC | MS_SYNC), EINVAL);
    REFUSED(msync(m, pg, -1), EINVAL);
    REFUSED(msync(m + 1, pg, MS_SYNC), EINVAL);
    REFUSED(msync(m + 64 * pg, pg, MS_SYNC), ENOMEM);
    CHECK(msync(m, pg, MS_SYNC) == 0, "MS_SYNC");
    CHECK(munlock(m, pg) == 0, "munlock");
    CHECK(msync(m, pg, MS_INVALIDATE) == 0, "MS_INVALIDATE unlocked");
    CHECK(mlockall(MCL_CURRENT) == 0, "mlockall");
    REFUSED(msync(m, pg, MS_INVALIDATE), EBUSY);
    CHECK(munlockall() == 0, "munlockall");
    long after = status_kb("VmLck");
    printf("misc23: msync checked; VmLck after munlockall %ld\n", after);
    munmap(m, pg);
    close(fd);
    unlink("/tmp/m23sync");
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    sysv();
    prctls();
    links();
    pid_max();
    memfd_trunc();
    locks();
    if (failures == 0)
        printf("misc23: all ok\n");
    return failures != 0;
}
