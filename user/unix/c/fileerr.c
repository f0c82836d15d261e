/* File and memory calls where Stet once differed from Linux, each rule
 * as the Linux man pages give it: an absolute path ignores the *at
 * calls' dirfd; pread/pwrite refuse negative offsets and pipes;
 * O_APPEND puts pwrite at the end; the umask on every create; dup3's and
 * getrandom's flags; fsync of a pipe or device; fallocate through a
 * read-only descriptor; RLIMIT_FSIZE on write, truncate and fallocate
 * (SIGXFSZ, EFBIG); mmap's EBADF and MAP_SHARED_VALIDATE; mlock making
 * pages resident (mincore); an empty argv; futimesat; close_range;
 * sync_file_range; and, as an unprivileged user, O_NOATIME, fchdir,
 * statfs and truncate refusals. Prints exact lines and "fileerr: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("fileerr: FAILED line %d: ", __LINE__);                                         \
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

#define D "/tmp/fe"

static off_t size_of(const char *p) {
    struct stat st;
    if (stat(p, &st) != 0)
        return -1;
    return st.st_size;
}

static unsigned mode_of(const char *p) {
    struct stat st;
    if (stat(p, &st) != 0)
        return 01000000;
    return st.st_mode & 07777;
}

static void dirfd_rules(void) {
    int dfd = open(D, O_DIRECTORY | O_RDONLY);
    int ffd = open(D "/f", O_RDWR | O_CREAT, 0644);
    CHECK(dfd >= 0 && ffd >= 0, "open");
    /* An absolute path ignores dirfd: a file's, or one not open. */
    CHECK(fchmodat(ffd, D "/f", 0600, 0) == 0, "fchmodat abs with a file's fd");
    CHECK(fchmodat(200, D "/f", 0640, 0) == 0, "fchmodat abs with a closed fd");
    CHECK(symlinkat("f", ffd, D "/l") == 0, "symlinkat abs");
    char b[16] = {0};
    CHECK(readlinkat(ffd, D "/l", b, sizeof b) == 1 && b[0] == 'f', "readlinkat abs");
    CHECK(unlinkat(ffd, D "/l", 0) == 0, "unlinkat abs");
    /* A relative path needs a directory there. */
    CHECK(symlinkat("f", dfd, "l2") == 0, "symlinkat rel");
    CHECK(readlinkat(dfd, "l2", b, sizeof b) == 1, "readlinkat rel");
    REFUSED(readlinkat(ffd, "l2", b, sizeof b), ENOTDIR);
    REFUSED(fchmodat(ffd, "f", 0600, 0), ENOTDIR);
    REFUSED(unlinkat(ffd, "l2", 0), ENOTDIR);
    REFUSED(unlinkat(200, "l2", 0), EBADF);
    REFUSED(unlinkat(dfd, "l2", 9999), EINVAL);
    CHECK(unlinkat(dfd, "l2", 0) == 0, "unlinkat rel");
    printf("fileerr: absolute paths ignore dirfd %o\n", mode_of(D "/f"));
    close(dfd);
    close(ffd);
}

static void offsets(void) {
    char b[2048];
    memset(b, 'a', sizeof b);
    int fd = open(D "/p", O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(pwrite(fd, b, 2048, 0) == 2048, "pwrite");
    REFUSED(pread(fd, b, 10, -1), EINVAL);
    REFUSED(pwrite(fd, b, 10, -1), EINVAL);
    REFUSED(syscall(SYS_pread64, 999, b, 10, -1L), EINVAL);
    close(fd);
    /* O_APPEND: pwrite goes to the end, the offset stays. */
    fd = open(D "/p", O_RDWR | O_APPEND);
    CHECK(lseek(fd, 1024, SEEK_SET) == 1024, "lseek");
    CHECK(pwrite(fd, b, 1024, 0) == 1024, "pwrite append");
    long off = lseek(fd, 0, SEEK_CUR);
    printf("fileerr: O_APPEND pwrite: size %ld offset %ld\n", (long)size_of(D "/p"), off);
    close(fd);
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    REFUSED(pread(p[0], b, 1, 0), ESPIPE);
    REFUSED(pwrite(p[1], b, 1, 0), ESPIPE);
    REFUSED(pwrite(p[0], b, 1, 0), ESPIPE); /* before the access mode */
    REFUSED(fsync(p[0]), EINVAL);
    REFUSED(fdatasync(p[1]), EINVAL);
    close(p[0]);
    close(p[1]);
    int n = open("/dev/null", O_RDONLY);
    REFUSED(fdatasync(n), EINVAL);
    REFUSED(syscall(SYS_sync_file_range, n, 0L, 1L, 4), ESPIPE);
    close(n);
    fd = open(D "/p", O_RDONLY);
    REFUSED(fallocate(fd, 0, 0, 1024), EBADF);
    REFUSED(syscall(SYS_sync_file_range, fd, -1L, 1L, 1), EINVAL);
    REFUSED(syscall(SYS_sync_file_range, fd, 0L, -1L, 2), EINVAL);
    REFUSED(syscall(SYS_sync_file_range, fd, 0L, 1L, 8), EINVAL);
    REFUSED(syscall(SYS_sync_file_range, 200, 0L, 1L, 2), EBADF);
    CHECK(syscall(SYS_sync_file_range, fd, 0L, 0L, 2) == 0, "sync_file_range");
    CHECK(fsync(fd) == 0, "fsync file");
    close(fd);
    REFUSED(truncate(D "/p", -1), EINVAL);
    REFUSED(truncate(D, 0), EISDIR);
    printf("fileerr: offsets, pipes and syncs refused\n");
}

static void masks(void) {
    mode_t old = umask(022);
    int fd = creat(D "/m1", 0777);
    close(fd);
    CHECK(mkdir(D "/md1", 0777) == 0, "mkdir");
    umask(0);
    fd = open(D "/m2", O_CREAT | O_WRONLY, 0777);
    close(fd);
    umask(077);
    CHECK(mkdirat(AT_FDCWD, D "/md2", 0777) == 0, "mkdirat");
    unsigned back = umask(old);
    printf("fileerr: umask: %o %o %o %o, umask was %o\n", mode_of(D "/m1"), mode_of(D "/md1"),
           mode_of(D "/m2"), mode_of(D "/md2"), back);
    REFUSED(dup3(0, 5, -1), EINVAL);
    REFUSED(dup3(0, 0, O_CLOEXEC), EINVAL);
    CHECK(dup3(0, 5, O_CLOEXEC) == 5 && fcntl(5, F_GETFD) == FD_CLOEXEC, "dup3");
    close(5);
    char r[8];
    REFUSED(getrandom(r, 8, -1), EINVAL);
    REFUSED(getrandom(r, 8, GRND_RANDOM | 4), EINVAL);
    CHECK(getrandom(r, 8, GRND_NONBLOCK) == 8, "getrandom");
    printf("fileerr: dup3 and getrandom flags checked\n");
}

static volatile int xfsz;
static void on_xfsz(int s) {
    (void)s;
    xfsz++;
}

static void fsize(void) {
    pid_t pid = fork();
    if (pid == 0) {
        failures = 0;
        signal(SIGXFSZ, on_xfsz);
        struct rlimit rl = {10, 10};
        CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0, "setrlimit");
        int fd = creat(D "/big", 0644);
        char b[26];
        memset(b, 'z', sizeof b);
        long n = write(fd, b, 26);
        int before = xfsz;
        errno = 0;
        long n2 = write(fd, b, 1);
        int e2 = errno;
        errno = 0;
        long n3 = pwrite(fd, b, 5, 8);
        REFUSED(pwrite(fd, b, 5, 10), EFBIG);
        REFUSED(ftruncate(fd, 11), EFBIG);
        REFUSED(truncate(D "/big", 100), EFBIG);
        REFUSED(fallocate(fd, 0, 0, 4096), EFBIG);
        CHECK(ftruncate(fd, 4) == 0, "ftruncate under the limit");
        printf("fileerr: RLIMIT_FSIZE 10: write %ld, then %ld errno %d, pwrite at 8 %ld, size %ld, "
               "SIGXFSZ %d then %d\n",
               n, n2, e2, n3, (long)size_of(D "/big"), before, xfsz);
        close(fd);
        _exit(failures);
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fsize child %x", st);
    /* Without a handler SIGXFSZ ends the process (with a core). */
    pid = fork();
    if (pid == 0) {
        failures = 0;
        struct rlimit rl = {0, 0};
        setrlimit(RLIMIT_FSIZE, &rl);
        int fd = creat(D "/big2", 0644);
        write(fd, "x", 1);
        _exit(0);
    }
    waitpid(pid, &st, 0);
    printf("fileerr: unhandled SIGXFSZ: signalled %d signal %d\n", WIFSIGNALED(st),
           WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void memory(void) {
    int fd = open(D "/mm", O_RDWR | O_CREAT, 0644);
    ftruncate(fd, 4096);
    close(fd);
    /* The closed descriptor is looked at before the length. */
    errno = 0;
    void *m = mmap(NULL, 0, PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(m == MAP_FAILED && errno == EBADF, "mmap closed fd: %p", m);
    fd = open(D "/mm", O_RDWR);
    errno = 0;
    m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE | (1 << 10), fd, 0);
    CHECK(m == MAP_FAILED && errno == EOPNOTSUPP, "MAP_SHARED_VALIDATE unknown flag: %p", m);
    m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE, fd, 0);
    CHECK(m != MAP_FAILED, "MAP_SHARED_VALIDATE");
    if (m != MAP_FAILED) {
        strcpy(m, "shared");
        munmap(m, 4096);
    }
    char b[8] = {0};
    pread(fd, b, 6, 0);
    close(fd);
    unsigned char vec[4];
    char *a = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int before = 0, after = 0;
    mincore(a, 4 * 4096, vec);
    for (int i = 0; i < 4; i++)
        before += vec[i] & 1;
    CHECK(mlock(a, 4 * 4096) == 0, "mlock");
    mincore(a, 4 * 4096, vec);
    for (int i = 0; i < 4; i++)
        after += vec[i] & 1;
    munlock(a, 4 * 4096);
    munmap(a, 4 * 4096);
    a = mmap(NULL, 2 * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    int pop = 0;
    mincore(a, 2 * 4096, vec);
    for (int i = 0; i < 2; i++)
        pop += vec[i] & 1;
    munmap(a, 2 * 4096);
    printf("fileerr: mmap: file reads '%s'; resident before mlock %d, after %d; populated %d\n", b,
           before, after, pop);
}

/* The line of /proc/self/maps that starts at `a`: its permissions. */
static void maps(void) {
    char *a = mmap(NULL, 3 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *b = mmap(a + 4096, 4096, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED,
                   -1, 0);
    /* The break moved a page past where it is (musl's sbrk only reads it). */
    long cur = syscall(SYS_brk, 0);
    CHECK(syscall(SYS_brk, cur + 4096) == cur + 4096, "brk");
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL, "fopen maps");
    char line[256], want[32], perms[8] = "?";
    int stack = 0, heap = 0, lines = 0;
    snprintf(want, sizeof want, "%08lx-%08lx ", (unsigned long)b, (unsigned long)(b + 4096));
    while (f && fgets(line, sizeof line, f)) {
        lines++;
        if (!strncmp(line, want, strlen(want)))
            sscanf(line + strlen(want), "%4s", perms);
        stack += strstr(line, "[stack]") != NULL;
        heap += strstr(line, "[heap]") != NULL;
    }
    if (f)
        fclose(f);
    munmap(a, 3 * 4096);
    printf("fileerr: maps: %s for a shared r-x page; [stack] %d [heap] %d, lines > 3 %d\n", perms,
           stack, heap > 0, lines > 3);
}

static void times_and_ranges(void) {
    struct timeval tv[2] = {{1000, 500000}, {2000, 250}};
    int dfd = open(D, O_DIRECTORY | O_RDONLY);
    CHECK(syscall(SYS_futimesat, dfd, "f", tv) == 0, "futimesat");
    struct stat st;
    stat(D "/f", &st);
    printf("fileerr: futimesat: atime %ld.%09ld mtime %ld.%09ld\n", (long)st.st_atim.tv_sec,
           st.st_atim.tv_nsec, (long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    tv[0].tv_usec = 1000000;
    REFUSED(syscall(SYS_futimesat, dfd, "f", tv), EINVAL);
    tv[0].tv_usec = -1;
    REFUSED(syscall(SYS_futimesat, dfd, "f", tv), EINVAL);
    CHECK(syscall(SYS_futimesat, AT_FDCWD, D "/f", NULL) == 0, "futimesat now");
    close(dfd);

    for (int i = 10; i <= 12; i++)
        dup2(0, i);
    CHECK(syscall(SYS_close_range, 10, 11, 4 /* CLOEXEC */) == 0, "close_range cloexec");
    int c10 = fcntl(10, F_GETFD), c11 = fcntl(11, F_GETFD), c12 = fcntl(12, F_GETFD);
    CHECK(syscall(SYS_close_range, 11, ~0U, 0) == 0, "close_range");
    int o10 = fcntl(10, F_GETFD) >= 0, o11 = fcntl(11, F_GETFD) >= 0, o12 = fcntl(12, F_GETFD) >= 0;
    REFUSED(syscall(SYS_close_range, 4, 3, 0), EINVAL);
    REFUSED(syscall(SYS_close_range, 3, ~0U, ~0U), EINVAL);
    CHECK(syscall(SYS_close_range, ~0U, ~0U, 0) == 0, "close_range of none");
    close(10);
    printf("fileerr: close_range: cloexec %d %d %d, open after %d %d %d\n", c10, c11, c12, o10, o11,
           o12);
}

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#define RENAME_EXCHANGE 2
#endif
static long rn2(int d1, const char *a, int d2, const char *b, unsigned flags) {
    return syscall(SYS_renameat2, d1, a, d2, b, flags);
}

static void renames_and_seeks(void) {
    mkdir(D "/ra", 0755);
    mkdir(D "/rb", 0755);
    int fd = creat(D "/ra/file", 0644);
    write(fd, "content", 7);
    close(fd);
    mkdir(D "/rb/dir", 0755);
    CHECK(rn2(AT_FDCWD, D "/ra/file", AT_FDCWD, D "/rb/dir", RENAME_EXCHANGE) == 0,
          "RENAME_EXCHANGE");
    struct stat a, b, dd;
    stat(D "/ra/file", &a);
    stat(D "/rb/dir", &b);
    stat(D "/ra/file/..", &dd);
    struct stat ra;
    stat(D "/ra", &ra);
    REFUSED(rn2(AT_FDCWD, D "/ra/file", AT_FDCWD, D "/rb/dir", RENAME_NOREPLACE), EEXIST);
    REFUSED(rn2(AT_FDCWD, D "/ra/file", AT_FDCWD, D "/rb/dir", 3), EINVAL);
    REFUSED(rn2(AT_FDCWD, D "/ra/file", AT_FDCWD, D "/rb/none", RENAME_EXCHANGE), ENOENT);
    REFUSED(rn2(AT_FDCWD, D "/ra", AT_FDCWD, D "/ra/file/x", RENAME_EXCHANGE), ENOENT);
    REFUSED(rn2(AT_FDCWD, D "/ra", AT_FDCWD, D "/ra/file", RENAME_EXCHANGE), EINVAL);
    printf("fileerr: RENAME_EXCHANGE: dir at ra %d, file at rb %d size %ld, .. is ra %d, ra "
           "nlink %ld\n",
           S_ISDIR(a.st_mode), S_ISREG(b.st_mode), (long)b.st_size, dd.st_ino == ra.st_ino,
           (long)ra.st_nlink);
    fd = open(D "/rb/dir", O_RDONLY);
    long d0 = lseek(fd, 0, SEEK_DATA), d3 = lseek(fd, 3, SEEK_DATA);
    long h0 = lseek(fd, 0, SEEK_HOLE);
    REFUSED(lseek(fd, 7, SEEK_DATA), ENXIO);
    REFUSED(lseek(fd, 9, SEEK_HOLE), ENXIO);
    close(fd);
    printf("fileerr: SEEK_DATA 0 -> %ld, 3 -> %ld; SEEK_HOLE 0 -> %ld\n", d0, d3, h0);
    /* A file with a hole of two pages before its data. */
    fd = open(D "/sparse", O_RDWR | O_CREAT | O_TRUNC, 0644);
    pwrite(fd, "data", 4, 8192);
    long sd = lseek(fd, 0, SEEK_DATA), sh = lseek(fd, 0, SEEK_HOLE);
    long sd2 = lseek(fd, 8193, SEEK_DATA), sh2 = lseek(fd, 8192, SEEK_HOLE);
    /* Its pages as another process's mapping sees them after one wrote. */
    char *m = mmap(NULL, 3 * 4096, PROT_READ, MAP_SHARED, fd, 0);
    unsigned char vec[3] = {9, 9, 9};
    mincore(m, 3 * 4096, vec);
    munmap(m, 3 * 4096);
    close(fd);
    printf("fileerr: sparse: SEEK_DATA 0 -> %ld, 8193 -> %ld; SEEK_HOLE 0 -> %ld, 8192 -> %ld; "
           "resident %d%d%d\n",
           sd, sd2, sh, sh2, vec[0], vec[1], vec[2]);
}

static void unprivileged(void) {
    /* Made by root: a file and a directory the user may not search. */
    int fd = creat(D "/rootfile", 0644);
    close(fd);
    mkdir(D "/nosearch", 0444);
    mkdir(D "/nosearch/sub", 0755);
    mkdir(D "/user", 0777);
    chmod(D "/user", 0777);
    pid_t pid = fork();
    if (pid == 0) {
        failures = 0;
        CHECK(seteuid(65534) == 0, "seteuid");
        REFUSED(open(D "/rootfile", O_RDONLY | O_NOATIME), EPERM);
        int own = open(D "/user/mine", O_RDWR | O_CREAT | O_NOATIME, 0444);
        CHECK(own >= 0, "O_NOATIME on the user's own file");
        close(own);
        /* The owner, but mode 0444: truncate is refused. */
        REFUSED(truncate(D "/user/mine", 0), EACCES);
        CHECK(mkdir(D "/user/d", 0400) == 0, "mkdir");
        int d = open(D "/user/d", O_RDONLY);
        CHECK(d >= 0, "open dir");
        REFUSED(fchdir(d), EACCES);
        REFUSED(chdir(D "/user/d"), EACCES);
        close(d);
        int f = open(D "/rootfile", O_RDONLY);
        REFUSED(fchdir(f), ENOTDIR);
        close(f);
        struct statfs sf;
        REFUSED(statfs(D "/nosearch/sub", &sf), EACCES);
        REFUSED(statfs(D "/rootfile/x", &sf), ENOTDIR);
        REFUSED(chroot(D "/user"), EPERM);
        struct {
            unsigned bytes;
            int type;
            unsigned char h[8];
        } fh = {8, 1, {0}};
        REFUSED(syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY), EPERM);
        REFUSED(chroot(D "/nonexistent"), ENOENT);
        REFUSED(chroot(D "/nosearch/sub"), EACCES);
        printf("fileerr: unprivileged refusals checked\n");
        _exit(failures);
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "unprivileged child %x", st);
}

static void memfds(void) {
    int a = memfd_create("plain", 0);
    CHECK(a >= 0, "memfd_create");
    int s0 = fcntl(a, F_GET_SEALS);
    REFUSED(fcntl(a, F_ADD_SEALS, F_SEAL_WRITE), EPERM);
    close(a);
    int m = memfd_create("sealable", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    struct stat st;
    fstat(m, &st);
    int cloexec = fcntl(m, F_GETFD);
    CHECK(write(m, "0123456789", 10) == 10, "memfd write");
    CHECK(fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0, "add seals");
    REFUSED(ftruncate(m, 5), EPERM);
    REFUSED(ftruncate(m, 20), EPERM);
    REFUSED(write(m, "x", 1), EPERM); /* at the end: it would grow */
    CHECK(pwrite(m, "ab", 2, 0) == 2, "pwrite inside");
    CHECK(fcntl(m, F_ADD_SEALS, F_SEAL_WRITE) == 0, "seal writes");
    REFUSED(pwrite(m, "ab", 2, 0), EPERM);
    errno = 0;
    void *w = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
    CHECK(w == MAP_FAILED && errno == EPERM, "shared writable map of a sealed memfd %p", w);
    char *r = mmap(NULL, 4096, PROT_READ, MAP_SHARED, m, 0);
    CHECK(r != MAP_FAILED, "read-only map");
    char head[3] = {0};
    /* Linux took away the mapping's right to be writable (EACCES). */
    REFUSED(mprotect(r, 4096, PROT_READ | PROT_WRITE), EACCES);
    if (r != MAP_FAILED) {
        memcpy(head, r, 2);
        munmap(r, 4096);
    }
    CHECK(fcntl(m, F_ADD_SEALS, F_SEAL_SEAL) == 0, "seal the seals");
    REFUSED(fcntl(m, F_ADD_SEALS, F_SEAL_GROW), EPERM);
    int all = fcntl(m, F_GET_SEALS);
    close(m);
    char longname[300];
    memset(longname, 'n', sizeof longname);
    longname[250] = 0;
    REFUSED(memfd_create(longname, 0), EINVAL);
    longname[249] = 0;
    int ok = memfd_create(longname, 0);
    CHECK(ok >= 0, "a 249-byte name");
    close(ok);
    REFUSED(memfd_create("x", 0x100), EINVAL);
    REFUSED(syscall(SYS_memfd_create, NULL, 0), EFAULT);
    int f = open(D "/f", O_RDWR);
    REFUSED(fcntl(f, F_GET_SEALS), EINVAL);
    close(f);
    printf("fileerr: memfd: seals %d without sealing; mode %o regular %d cloexec %d; reads '%s'; "
           "seals then %#x\n",
           s0, st.st_mode & 07777, S_ISREG(st.st_mode), cloexec, head, all);
}

struct how {
    unsigned long long flags, mode, resolve;
};
static long oa2(int dfd, const char *p, unsigned long long flags, unsigned long long mode,
                unsigned long long resolve, size_t size) {
    struct how h[2] = {{flags, mode, resolve}, {0, 0, 0}};
    return syscall(SYS_openat2, dfd, p, h, size);
}

static void openat2s(void) {
    mkdir(D "/o2", 0755);
    mkdir(D "/o2/sub", 0755);
    close(creat(D "/o2/sub/f", 0644));
    symlink("sub/f", D "/o2/rel");
    symlink(D "/o2/sub/f", D "/o2/abs");
    int b = open(D "/o2", O_DIRECTORY | O_RDONLY);
    long fd = oa2(b, "sub/f", O_RDWR, 0, 0x08 /* BENEATH */, 24);
    CHECK(fd >= 0, "openat2 beneath");
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) & 0xff7fff : -1; /* without O_LARGEFILE */
    close(fd);
    REFUSED(oa2(b, "../o2/sub/f", O_RDONLY, 0, 0x08, 24), EXDEV);
    REFUSED(oa2(b, D "/o2/sub/f", O_RDONLY, 0, 0x08, 24), EXDEV);
    REFUSED(oa2(b, "abs", O_RDONLY, 0, 0x08, 24), EXDEV);
    REFUSED(oa2(b, "rel", O_RDONLY, 0, 0x04 /* NO_SYMLINKS */, 24), ELOOP);
    REFUSED(oa2(AT_FDCWD, "/proc/version", O_RDONLY, 0, 0x01 /* NO_XDEV */, 24), EXDEV);
    REFUSED(oa2(AT_FDCWD, "/proc/self/exe", O_RDONLY, 0, 0x02 /* NO_MAGICLINKS */, 24), ELOOP);
    /* IN_ROOT: "/sub/f" is the base's, ".." stays in it. */
    fd = oa2(b, "/sub/../../sub/f", O_RDONLY, 0, 0x10 /* IN_ROOT */, 24);
    CHECK(fd >= 0, "openat2 in root");
    close(fd);
    REFUSED(oa2(b, "/proc/version", O_RDONLY, 0, 0x10, 24), ENOENT);
    REFUSED(oa2(b, "sub/f", O_RDONLY, 0, 0x18, 24), EINVAL);
    REFUSED(oa2(b, "sub/f", O_RDONLY, 0, 0x40, 24), EINVAL);
    REFUSED(oa2(b, "sub/f", O_RDONLY, 0600, 0, 24), EINVAL);
    REFUSED(oa2(b, "sub/f", O_RDWR | O_CREAT, ~0ULL, 0, 24), EINVAL);
    REFUSED(oa2(b, "sub/f", O_RDONLY, 0, 0, 23), EINVAL);
    REFUSED(oa2(b, "sub/f", O_RDONLY, 0, 0, 5000), E2BIG);
    fd = oa2(b, "sub/f", O_RDONLY, 0, 0, 32);
    CHECK(fd >= 0, "openat2 with zero padding");
    close(fd);
    REFUSED(oa2(-1, "sub/f", O_RDONLY, 0, 0, 24), EBADF);
    REFUSED(syscall(SYS_openat2, b, "sub/f", NULL, 24), EFAULT);
    /* readlinkat of an O_PATH descriptor of the link itself. */
    int l = open(D "/o2/rel", O_PATH | O_NOFOLLOW);
    char t[16] = {0};
    long n = readlinkat(l, "", t, sizeof t);
    close(l);
    /* A directory removed while open has no names. */
    mkdir(D "/o2/gone", 0755);
    int g = open(D "/o2/gone", O_DIRECTORY | O_RDONLY);
    rmdir(D "/o2/gone");
    /* New files do not take its inode while it is open. */
    symlink("x", D "/o2/l1");
    close(creat(D "/o2/f1", 0644));
    REFUSED(openat(g, "x", O_RDWR | O_CREAT, 0644), ENOENT);
    REFUSED(symlinkat("t", g, "y"), ENOENT);
    close(g);
    close(b);
    printf("fileerr: openat2: flags %#x; readlinkat of the link itself %ld '%s'\n", fl, n, t);
}

static void remaps(void) {
    int fd = open(D "/rf", O_RDWR | O_CREAT | O_TRUNC, 0644);
    char page[4096];
    for (int k = 0; k < 4; k++) {
        memset(page, k, sizeof page);
        write(fd, page, sizeof page);
    }
    char *m = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char *pv = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(syscall(SYS_remap_file_pages, m, 2 * 4096, 0, 2, 0) == 0, "remap_file_pages");
    int a = m[0], b = m[4096], c = m[2 * 4096], d = m[3 * 4096];
    REFUSED(syscall(SYS_remap_file_pages, m, 4096, PROT_READ, 0, 0), EINVAL);
    REFUSED(syscall(SYS_remap_file_pages, pv, 4096, 0, 1, 0), EINVAL);
    REFUSED(syscall(SYS_remap_file_pages, m + 3 * 4096, 2 * 4096, 0, 0, 0), EINVAL);
    REFUSED(syscall(SYS_remap_file_pages, m, 0, 0, 0, 0), EINVAL);
    munmap(m, 4 * 4096);
    munmap(pv, 4096);
    close(fd);
    printf("fileerr: remap_file_pages: pages show %d %d %d %d\n", a, b, c, d);
}

static void handles(void) {
    int fd = creat(D "/h", 0644);
    write(fd, "handled", 7);
    close(fd);
    struct {
        unsigned bytes;
        int type;
        unsigned char h[128];
    } fh = {0, 0, {0}};
    int mnt = -1;
    REFUSED(syscall(SYS_name_to_handle_at, AT_FDCWD, D "/h", &fh, &mnt, 0), EOVERFLOW);
    unsigned need = fh.bytes;
    struct stat cw, dot;
    CHECK(fstatat(AT_FDCWD, "", &cw, AT_EMPTY_PATH) == 0, "fstatat of the working directory");
    stat(".", &dot);
    CHECK(cw.st_ino == dot.st_ino, "AT_FDCWD with AT_EMPTY_PATH is the working directory");
    CHECK(syscall(SYS_name_to_handle_at, AT_FDCWD, "", &fh, &mnt, AT_EMPTY_PATH) == 0,
          "name_to_handle_at of the working directory");
    CHECK(syscall(SYS_name_to_handle_at, AT_FDCWD, D "/h", &fh, &mnt, 0) == 0, "name_to_handle_at");
    REFUSED(syscall(SYS_name_to_handle_at, AT_FDCWD, D "/h", &fh, &mnt, 0x40000), EINVAL);
    int h = syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY);
    CHECK(h >= 0, "open_by_handle_at");
    char b[8] = {0};
    read(h, b, 7);
    close(h);
    REFUSED(syscall(SYS_open_by_handle_at, 0, &fh, O_RDONLY), ESTALE); /* the terminal's */
    REFUSED(syscall(SYS_open_by_handle_at, 200, &fh, O_RDONLY), EBADF);
    unsigned keep = fh.bytes;
    fh.bytes = 0;
    REFUSED(syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY), EINVAL);
    fh.bytes = 129;
    REFUSED(syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY), EINVAL);
    REFUSED(syscall(SYS_name_to_handle_at, AT_FDCWD, D "/h", &fh, &mnt, 0), EINVAL);
    fh.bytes = keep;
    unlink(D "/h");
    REFUSED(syscall(SYS_open_by_handle_at, AT_FDCWD, &fh, O_RDONLY), ESTALE);
    printf("fileerr: handles: size needed > 0 %d, the file reads '%s'\n", need > 0, b);
}

static void jail(void) {
    mkdir(D "/jail", 0755);
    mkdir(D "/jail/etc", 0755);
    int fd = creat(D "/jail/etc/hi", 0644);
    write(fd, "jailed", 6);
    close(fd);
    symlink("/etc/hi", D "/jail/etc/abs");
    pid_t pid = fork();
    if (pid == 0) {
        failures = 0;
        CHECK(chdir(D) == 0, "chdir");
        CHECK(chroot("jail") == 0, "chroot");
        char cwd[128] = {0};
        long n = syscall(SYS_getcwd, cwd, sizeof cwd);
        printf("fileerr: chroot: getcwd outside the root %ld '%s'\n", n, cwd);
        char b[8] = {0};
        fd = open("/etc/hi", O_RDONLY);
        read(fd, b, 6);
        close(fd);
        struct stat r, up, via;
        stat("/", &r);
        stat("/../../..", &up);
        CHECK(stat("/etc/abs", &via) == 0, "absolute link inside the root");
        CHECK(chdir("/etc") == 0, "chdir in the root");
        n = syscall(SYS_getcwd, cwd, sizeof cwd);
        pid_t g = fork();
        if (g == 0)
            _exit(access("/etc/hi", R_OK) == 0 ? 7 : 8);
        int gs;
        waitpid(g, &gs, 0);
        REFUSED(chroot("/nonexistent"), ENOENT);
        REFUSED(chroot("/etc/hi"), ENOTDIR);
        printf("fileerr: chroot: /etc/hi reads '%s', /.. is / %d, getcwd %ld '%s', child sees it %d\n",
               b, r.st_ino == up.st_ino, n, cwd, WEXITSTATUS(gs) == 7);
        _exit(failures);
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "chroot child %x", st);
    CHECK(access("/tmp", F_OK) == 0, "the parent's root is its own");
}

static void empty_argv(const char *self) {
    pid_t pid = fork();
    if (pid == 0) {
        failures = 0;
        char *argv[] = {NULL};
        char *envp[] = {"FILEERR_CHILD=1", NULL};
        execve(self, argv, envp);
        _exit(99);
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "empty argv child %x", st);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (getenv("FILEERR_CHILD")) {
        printf("fileerr: empty argv: argc %d, argv[0] '%s', argv[1] %s\n", argc,
               argc > 0 && argv[0] ? argv[0] : "(null)", argc > 0 && !argv[1] ? "NULL" : "?");
        return 0;
    }
    mkdir(D, 0777);
    chmod(D, 0777);
    dirfd_rules();
    offsets();
    masks();
    fsize();
    memory();
    maps();
    times_and_ranges();
    renames_and_seeks();
    unprivileged();
    memfds();
    openat2s();
    remaps();
    handles();
    jail();
    empty_argv("/bin/fileerr");
    if (failures == 0)
        printf("fileerr: all ok\n");
    return failures != 0;
}
