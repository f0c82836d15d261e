/* Calls programs expect of Linux: getrlimit/setrlimit (enforced, hard
 * limits raised only by root), capget/capset, posix_fadvise, mlock,
 * clock_getres, getrusage, times, sigaltstack (a handler on the alternate
 * stack), mremap (shrink, grow in place, move), getpriority/setpriority.
 * Each refusal is Linux's errno. Prints exact lines and "misc: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/wait.h>
#include <sys/file.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("misc: FAILED line %d: ", __LINE__);                                            \
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

struct cap_header {
    uint32_t version;
    int pid;
};
struct cap_data {
    uint32_t effective, permitted, inheritable;
};

static char altstack[16384];
static volatile uintptr_t handler_sp;
static volatile int handler_ss_flags;
static void on_usr1(int s) {
    (void)s;
    int here;
    handler_sp = (uintptr_t)&here;
    stack_t cur;
    sigaltstack(NULL, &cur);
    handler_ss_flags = cur.ss_flags;
    stack_t other = {.ss_sp = altstack, .ss_size = sizeof altstack};
    errno = 0;
    if (sigaltstack(&other, NULL) == -1 && errno == EPERM)
        handler_ss_flags |= 0x100;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);

    /* Limits: RLIMIT_NOFILE is enforced; a user cannot raise a hard one. */
    struct rlimit rl;
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0, "getrlimit");
    printf("misc: nofile %lu %lu\n", (unsigned long)rl.rlim_cur, (unsigned long)rl.rlim_max);
    struct rlimit small = {8, rl.rlim_max};
    CHECK(setrlimit(RLIMIT_NOFILE, &small) == 0, "setrlimit");
    int fds = 0, fd;
    while ((fd = open("/dev/null", O_RDONLY)) >= 0)
        fds++;
    printf("misc: with a limit of 8, %d more opened, then errno %s\n", fds,
           errno == EMFILE ? "EMFILE" : "?");
    for (int i = 3; i < 8; i++)
        close(i);
    CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit back");
    struct rlimit bad = {10, 5};
    REFUSED(setrlimit(RLIMIT_NOFILE, &bad), EINVAL);
    REFUSED(setrlimit(99, &rl), EINVAL);

    /* Capabilities: root holds all 41. */
    struct cap_header h = {0x20080522, 0};
    struct cap_data d[2];
    CHECK(syscall(SYS_capget, &h, d) == 0, "capget");
    printf("misc: caps %08x %08x %08x %08x\n", d[0].effective, d[1].effective, d[0].permitted,
           d[1].inheritable);
    CHECK(syscall(SYS_capset, &h, d) == 0, "capset same");
    /* Another process's sets are not the caller's to set. */
    h.pid = 99999;
    REFUSED(syscall(SYS_capset, &h, d), EPERM);
    h.pid = 0;
    struct cap_header old = {0x12345678, 0};
    REFUSED(syscall(SYS_capget, &old, d), EINVAL);
    printf("misc: bad version answered with %08x\n", old.version);

    /* fadvise: a pipe is ESPIPE, bad advice EINVAL. */
    int p[2];
    pipe(p);
    printf("misc: fadvise file %d pipe %d advice %d fd %d\n",
           posix_fadvise(open("/etc/passwd", O_RDONLY), 0, 0, POSIX_FADV_WILLNEED),
           posix_fadvise(p[0], 0, 0, POSIX_FADV_NORMAL), posix_fadvise(0, 0, 0, 77),
           posix_fadvise(99, 0, 0, 0));

    /* mlock: mapped is fine, a hole ENOMEM; mlockall(0) EINVAL. */
    long pg = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(mlock(m, 4 * pg) == 0 && munlock(m, 4 * pg) == 0, "mlock");
    munmap(m + 2 * pg, pg);
    REFUSED(mlock(m, 4 * pg), ENOMEM);
    REFUSED(mlockall(0), EINVAL);

    /* Clock resolutions. */
    struct timespec r1, r2;
    clock_getres(CLOCK_MONOTONIC, &r1);
    clock_getres(CLOCK_REALTIME_COARSE, &r2);
    printf("misc: clock_getres %ld ns, coarse %ld ns\n", r1.tv_nsec, r2.tv_nsec);
    REFUSED(clock_getres(99, &r1), EINVAL);

    /* getrusage and times. */
    struct rusage ru;
    CHECK(getrusage(RUSAGE_SELF, &ru) == 0, "getrusage");
    printf("misc: maxrss over 0: %d\n", ru.ru_maxrss > 0);
    REFUSED(getrusage(5, &ru), EINVAL);
    struct tms tm;
    printf("misc: times over 0: %d\n", times(&tm) > 0);

    /* An alternate signal stack. */
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    CHECK(sigaltstack(&ss, NULL) == 0, "sigaltstack");
    stack_t tiny = {.ss_sp = altstack, .ss_size = 100};
    REFUSED(sigaltstack(&tiny, NULL), ENOMEM);
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
    printf("misc: handler on the alternate stack %d, it said SS_ONSTACK %d, change EPERM %d\n",
           handler_sp > (uintptr_t)altstack && handler_sp < (uintptr_t)altstack + sizeof altstack,
           handler_ss_flags & SS_ONSTACK, (handler_ss_flags & 0x100) != 0);
    stack_t now;
    sigaltstack(NULL, &now);
    printf("misc: after the handler flags %d size %zu\n", now.ss_flags, now.ss_size);

    /* mremap. */
    char *a = mmap(NULL, 8 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(a + 4 * pg, 4 * pg);
    memset(a, 'q', 4 * pg);
    char *b = mremap(a, 4 * pg, 6 * pg, 0);
    printf("misc: mremap grew in place %d\n", b == a);
    b[5 * pg] = 'z';
    char *blocker = mmap(a + 6 * pg, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    CHECK(blocker == a + 6 * pg, "blocker");
    errno = 0;
    void *nomove = mremap(a, 6 * pg, 10 * pg, 0);
    printf("misc: blocked without MAYMOVE: %s\n",
           nomove == MAP_FAILED && errno == ENOMEM ? "ENOMEM" : "?");
    char *c = mremap(a, 6 * pg, 10 * pg, MREMAP_MAYMOVE);
    printf("misc: moved %d, bytes kept %c%c%c\n", c != a, c[0], c[4 * pg - 1], c[5 * pg]);
    char *d2 = mremap(c, 10 * pg, 2 * pg, 0);
    printf("misc: shrank in place %d\n", d2 == c);
    errno = 0;
    void *bad2 = mremap(c + 1, pg, pg, 0);
    printf("misc: unaligned %s\n", bad2 == MAP_FAILED && errno == EINVAL ? "EINVAL" : "?");

    /* Priorities: nice 5 then back is root's; a user may not lower it. */
    CHECK(setpriority(PRIO_PROCESS, 0, 5) == 0, "setpriority");
    errno = 0;
    printf("misc: nice %d\n", getpriority(PRIO_PROCESS, 0));
    REFUSED(getpriority(PRIO_PROCESS, 99999), ESRCH);
    REFUSED(getpriority(7, 0), EINVAL);
    pid_t k = fork();
    if (k == 0) {
        setgid(1000);
        setuid(1000);
        int ok = setpriority(PRIO_PROCESS, 0, 10) == 0;
        errno = 0;
        int lower = setpriority(PRIO_PROCESS, 0, 0) == -1 && errno == EACCES;
        errno = 0;
        int others = setpriority(PRIO_PROCESS, 1, 19) == -1 && errno == EPERM;
        struct rlimit up = {100, 100000};
        errno = 0;
        int hard = setrlimit(RLIMIT_NOFILE, &up) == -1 && errno == EPERM;
        _exit(ok && lower && others && hard ? 0 : 1);
    }
    int st;
    waitpid(k, &st, 0);
    printf("misc: user child: nice up yes, down EACCES, others EPERM, hard limit EPERM: %d\n",
           WEXITSTATUS(st) == 0);
    CHECK(setpriority(PRIO_PROCESS, 0, 0) == 0, "setpriority back");

    /* The wall clock: the battery clock's (the tests fix it at
     * 2024-01-01); root sets it for everyone, a user may not. */
    time_t t0 = time(NULL);
    printf("misc: the clock starts on 2024-01-01: %d\n", t0 >= 1704067200 && t0 < 1704067200 + 3600);
    struct timespec to = {1893456000, 0}; /* 2030-01-01 */
    CHECK(clock_settime(CLOCK_REALTIME, &to) == 0, "clock_settime");
    time_t t1 = time(NULL);
    REFUSED(clock_settime(CLOCK_MONOTONIC, &to), EINVAL);
    struct timespec badts = {0, 1000000000};
    REFUSED(clock_settime(CLOCK_REALTIME, &badts), EINVAL);
    pid_t u = fork();
    if (u == 0) {
        setuid(1000);
        errno = 0;
        int refused = clock_settime(CLOCK_REALTIME, &to) == -1 && errno == EPERM;
        _exit(refused && time(NULL) >= 1893456000 ? 0 : 1);
    }
    waitpid(u, &st, 0);
    printf("misc: set to 2030: %d; a user sees it and may not set it: %d\n",
           t1 >= 1893456000 && t1 < 1893456000 + 60, WEXITSTATUS(st) == 0);

    /* RLIMIT_NPROC counts the user's own processes. */
    pid_t q = fork();
    if (q == 0) {
        setgid(1001);
        setuid(1001);
        struct rlimit np = {3, 3};
        setrlimit(RLIMIT_NPROC, &np);
        int made = 0;
        pid_t kids[8];
        for (;;) {
            pid_t x = fork();
            if (x == 0) {
                pause();
                _exit(0);
            }
            if (x < 0)
                break;
            kids[made++] = x;
            if (made == 8)
                break;
        }
        int again = errno == EAGAIN;
        for (int i = 0; i < made; i++)
            kill(kids[i], SIGKILL);
        while (wait(NULL) > 0)
            ;
        _exit(made * 10 + again);
    }
    waitpid(q, &st, 0);
    printf("misc: a user with RLIMIT_NPROC 3 made %d more, then EAGAIN %d\n",
           WEXITSTATUS(st) / 10, WEXITSTATUS(st) % 10);

    /* Record locks and flock between two processes. */
    int lf = open("/tmp/lockfile", O_RDWR | O_CREAT, 0644);
    write(lf, "0123456789", 10);
    struct flock wl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 2, .l_len = 4};
    CHECK(fcntl(lf, F_SETLK, &wl) == 0, "F_SETLK");
    int pipefd[2];
    pipe(pipefd);
    pid_t lc = fork();
    if (lc == 0) {
        int f2 = open("/tmp/lockfile", O_RDWR);
        struct flock t = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 3};
        errno = 0;
        int busy = fcntl(f2, F_SETLK, &t) == -1 && (errno == EAGAIN || errno == EACCES);
        struct flock g = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
        fcntl(f2, F_GETLK, &g);
        int shows = g.l_type == F_WRLCK && g.l_start == 2 && g.l_len == 4 && g.l_pid == getppid();
        struct flock free6 = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 6, .l_len = 2};
        int beside = fcntl(f2, F_SETLK, &free6) == 0;
        write(pipefd[1], "r", 1);
        /* Waits until the parent unlocks. */
        int waited = fcntl(f2, F_SETLKW, &t) == 0;
        _exit(busy * 1 + shows * 2 + beside * 4 + waited * 8);
    }
    char ch;
    read(pipefd[0], &ch, 1);
    usleep(50000);
    struct flock ul = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    CHECK(fcntl(lf, F_SETLK, &ul) == 0, "unlock");
    waitpid(lc, &st, 0);
    printf("misc: record locks: busy %d, F_GETLK shows the holder %d, beside it %d, F_SETLKW waited %d\n",
           WEXITSTATUS(st) & 1, (WEXITSTATUS(st) >> 1) & 1, (WEXITSTATUS(st) >> 2) & 1,
           (WEXITSTATUS(st) >> 3) & 1);
    struct flock badl = {.l_type = 9};
    REFUSED(fcntl(lf, F_SETLK, &badl), EINVAL);
    CHECK(flock(lf, LOCK_EX) == 0, "flock");
    lc = fork();
    if (lc == 0) {
        int f3 = open("/tmp/lockfile", O_RDONLY);
        errno = 0;
        int nb = flock(f3, LOCK_SH | LOCK_NB) == -1 && errno == EWOULDBLOCK;
        _exit(nb);
    }
    waitpid(lc, &st, 0);
    printf("misc: flock held: another description's LOCK_NB gets EWOULDBLOCK %d\n", WEXITSTATUS(st));
    REFUSED(flock(lf, 99), EINVAL);

    /* fallocate, copy_file_range, xattrs. */
    CHECK(fallocate(lf, 0, 0, 100000) == 0, "fallocate");
    struct stat fs2;
    fstat(lf, &fs2);
    int cf = open("/tmp/copy", O_RDWR | O_CREAT | O_TRUNC, 0644);
    loff_t oin = 2, oout = 0;
    long cp = copy_file_range(lf, &oin, cf, &oout, 5, 0);
    char cb[8] = {0};
    pread(cf, cb, 5, 0);
    printf("misc: fallocate size %ld; copy_file_range %ld bytes '%s', offsets %ld %ld\n",
           (long)fs2.st_size, cp, cb, (long)oin, (long)oout);
    char xv[16];
    REFUSED(getxattr("/tmp/copy", "user.x", xv, sizeof xv), ENODATA);
    REFUSED(getxattr("/tmp/nonesuch", "user.x", xv, sizeof xv), ENOENT);
    printf("misc: listxattr %ld\n", (long)listxattr("/tmp/copy", xv, sizeof xv));

    /* preadv/pwritev at an offset (the file's own stays), mincore. */
    char v1[3] = {0}, v2[4] = {0};
    struct iovec iv[2] = {{v1, 2}, {v2, 3}};
    off_t before_off = lseek(lf, 0, SEEK_CUR);
    long pv = preadv(lf, iv, 2, 3);
    struct iovec ow[1] = {{"XY", 2}};
    long pw = pwritev(lf, ow, 1, 0);
    char head[4] = {0};
    pread(lf, head, 3, 0);
    printf("misc: preadv %ld '%s' '%s', pwritev %ld '%s', offset kept %d\n", pv, v1, v2, pw, head,
           lseek(lf, 0, SEEK_CUR) == before_off);
    char *mc = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mc[0] = 1;
    mc[2 * pg] = 1;
    unsigned char vec[4];
    CHECK(mincore(mc, 4 * pg, vec) == 0, "mincore");
    printf("misc: mincore %d%d%d%d\n", vec[0], vec[1], vec[2], vec[3]);
    REFUSED(mincore(mc + 1, pg, vec), EINVAL);

    printf(failures ? "misc: %d failures\n" : "misc: all ok\n", failures);
    return failures != 0;
}
