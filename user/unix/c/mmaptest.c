/* Memory mappings and futexes: shared anonymous memory stays shared across
 * fork; private memory is each process's own after fork (writes on either
 * side are not seen by the other); a file mapped MAP_SHARED is the file
 * (stores are seen by read(), write() is seen through the mapping, and a
 * child's stores through the inherited mapping reach the file); MAP_PRIVATE
 * of a file sees the file until written and never writes it back; a page
 * wholly past the end of a file is SIGBUS; mprotect on a shared mapping;
 * /dev/zero mappings; futex wait and wake between two processes on a shared
 * page, EAGAIN when the word differs, ETIMEDOUT; the mmap errors (EINVAL,
 * EBADF, EACCES, ENODEV). Every line is checked by
 * tests/system/unix_mmap.toml. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("mmaptest: FAILED line %d: %s: ", __LINE__, #cond);         \
            printf(__VA_ARGS__);                                               \
            printf(" (errno %d)\n", errno);                                    \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static long futex(volatile int *w, int op, int val, const struct timespec *t)
{
    return syscall(SYS_futex, w, op, val, t, NULL, 0);
}

static int wait_child(pid_t c)
{
    int st;
    if (waitpid(c, &st, 0) != c)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A stack far past its first 64 KiB and a heap grown by 2 MiB: the keeper
 * makes a process's tree as shallow as it can (one node under the stack's
 * first 64 KiB, two above the program), and puts bigger nodes above when
 * pages past them are touched. Filled, then forked: the child's copy of
 * the tree must find every page where the parent's does. */
static void deep_and_wide(void)
{
    volatile unsigned char a[600 * 1024];
    /* (musl's sbrk only answers sbrk(0): brk itself.) */
    unsigned char *h = (unsigned char *)syscall(SYS_brk, 0);
    CHECK(syscall(SYS_brk, h + (2 << 20)) == (long)(h + (2 << 20)), "brk");
    long s = 0, hs = 0;
    for (size_t i = 0; i < sizeof a; i += PAGE)
        a[i] = (unsigned char)(i / PAGE + 1);
    for (size_t i = 0; i < (2u << 20); i += PAGE)
        h[i] = (unsigned char)(i / PAGE + 3);
    for (size_t i = 0; i < sizeof a; i += PAGE)
        s += a[i];
    for (size_t i = 0; i < (2u << 20); i += PAGE)
        hs += h[i];
    pid_t c = fork();
    if (c == 0) {
        long cs = 0, chs = 0;
        for (size_t i = 0; i < sizeof a; i += PAGE)
            cs += a[i];
        for (size_t i = 0; i < (2u << 20); i += PAGE)
            chs += h[i];
        _exit(cs == s && chs == hs ? 0 : 1);
    }
    int st = wait_child(c);
    printf("mmaptest: a 600 KiB stack %ld, a 2 MiB heap %ld, the child's copy %d\n", s, hs,
           st);
}

static sigjmp_buf bus_jump;
static void on_bus(int sig)
{
    siglongjmp(bus_jump, sig);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);

    /* Shared anonymous memory: the child's stores are the parent's. */
    volatile int *sh = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(sh != MAP_FAILED, "mmap shared");
    CHECK(sh[0] == 0 && sh[PAGE / 4] == 0, "zero-filled");
    sh[0] = 7; /* touched before the fork */
    /* Private memory, touched before the fork. */
    int *pv = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(pv != MAP_FAILED, "mmap private");
    pv[0] = 1;
    pid_t c = fork();
    if (c == 0) {
        int ok = sh[0] == 7 && pv[0] == 1;
        sh[0] = 8;           /* a page that existed at fork */
        sh[PAGE / 4 + 1] = 9; /* a page made after it */
        pv[0] = 2;
        _exit(ok ? 0 : 1);
    }
    CHECK(wait_child(c) == 0, "child saw the memory at fork");
    CHECK(sh[0] == 8 && sh[PAGE / 4 + 1] == 9, "shared %d %d", sh[0], sh[PAGE / 4 + 1]);
    CHECK(pv[0] == 1, "private %d", pv[0]);
    printf("mmaptest: shared across fork %d %d, private stays %d\n", sh[0],
           sh[PAGE / 4 + 1], pv[0]);
    /* And the parent's stores after the fork are not the child's. */
    c = fork();
    if (c == 0) {
        struct timespec t = {0, 20 * 1000 * 1000};
        nanosleep(&t, NULL);
        _exit(pv[0] == 1 && sh[0] == 10 ? 0 : 1);
    }
    pv[0] = 3;
    sh[0] = 10;
    CHECK(wait_child(c) == 0, "child after parent stores");
    printf("mmaptest: after fork, the parent's private store is its own\n");
    CHECK(munmap((void *)sh, 2 * PAGE) == 0, "munmap shared");
    CHECK(munmap(pv, PAGE) == 0, "munmap private");

    /* A file mapped shared is the file. */
    int fd = open("/tmp/mapped", O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0, "open");
    char buf[3 * PAGE];
    memset(buf, 'a', sizeof buf);
    CHECK(write(fd, buf, 2 * PAGE + 100) == 2 * PAGE + 100, "write");
    char *f = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(f != MAP_FAILED, "mmap file");
    CHECK(f[0] == 'a' && f[2 * PAGE + 99] == 'a' && f[2 * PAGE + 100] == 0,
          "contents %c %c %d", f[0], f[2 * PAGE + 99], f[2 * PAGE + 100]);
    memcpy(f + 10, "MAPPED", 6);
    char r[16] = {0};
    CHECK(pread(fd, r, 6, 10) == 6 && memcmp(r, "MAPPED", 6) == 0, "read sees %s", r);
    CHECK(pwrite(fd, "WRITTEN", 7, PAGE + 5) == 7, "pwrite");
    CHECK(memcmp(f + PAGE + 5, "WRITTEN", 7) == 0, "mapping sees write");
    CHECK(close(fd) == 0, "close with the mapping kept");
    c = fork();
    if (c == 0) {
        memcpy(f + 2 * PAGE, "CHILD", 5);
        _exit(0);
    }
    CHECK(wait_child(c) == 0, "child");
    fd = open("/tmp/mapped", O_RDONLY);
    memset(r, 0, sizeof r);
    CHECK(pread(fd, r, 5, 2 * PAGE) == 5 && memcmp(r, "CHILD", 5) == 0, "child's store %s", r);
    printf("mmaptest: shared file mapping: %.6s %.7s %.5s\n", f + 10, f + PAGE + 5, f + 2 * PAGE);

    /* A page wholly past the end of the file: SIGBUS. */
    signal(SIGBUS, on_bus);
    int sig = sigsetjmp(bus_jump, 1);
    if (sig == 0) {
        volatile char x = f[3 * PAGE];
        (void)x;
        CHECK(0, "no SIGBUS");
    }
    CHECK(sig == SIGBUS, "signal %d", sig);
    printf("mmaptest: past the end of the file: signal %d\n", sig);

    /* mprotect read-only and back on the shared mapping. */
    CHECK(mprotect(f, PAGE, PROT_READ) == 0, "mprotect ro");
    CHECK(f[10] == 'M', "still readable");
    CHECK(mprotect(f, PAGE, PROT_READ | PROT_WRITE) == 0, "mprotect rw");
    f[11] = 'E';
    memset(r, 0, sizeof r);
    CHECK(pread(fd, r, 6, 10) == 6 && memcmp(r, "MEPPED", 6) == 0, "after mprotect %s", r);
    CHECK(munmap(f, 4 * PAGE) == 0, "munmap file");

    /* A private file mapping: the file until written, never written back. */
    char *q = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, PAGE);
    CHECK(q != MAP_FAILED, "mmap private file (read-only descriptor)");
    CHECK(memcmp(q + 5, "WRITTEN", 7) == 0, "private sees file");
    memcpy(q + 5, "changed", 7);
    memset(r, 0, sizeof r);
    CHECK(pread(fd, r, 7, PAGE + 5) == 7 && memcmp(r, "WRITTEN", 7) == 0, "file kept %s", r);
    printf("mmaptest: private file mapping: mine %.7s, the file's %.7s\n", q + 5, r);
    CHECK(munmap(q, PAGE) == 0, "munmap");

    /* Errors. */
    errno = 0;
    CHECK(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) == MAP_FAILED &&
              errno == EACCES, "shared writable of a read-only descriptor");
    errno = 0;
    CHECK(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, fd, 100) == MAP_FAILED && errno == EINVAL,
          "unaligned offset");
    errno = 0;
    CHECK(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, 99, 0) == MAP_FAILED && errno == EBADF,
          "bad descriptor");
    int p2[2];
    CHECK(pipe(p2) == 0, "pipe");
    errno = 0;
    CHECK(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, p2[0], 0) == MAP_FAILED && errno == ENODEV,
          "a pipe");
    errno = 0;
    CHECK(mmap(NULL, 0, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED &&
              errno == EINVAL, "length 0");
    close(fd);
    printf("mmaptest: errors EACCES EINVAL EBADF ENODEV EINVAL\n");

    /* /dev/zero: private is anonymous memory, shared is shared. */
    int z = open("/dev/zero", O_RDWR);
    volatile int *zs = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, z, 0);
    CHECK(zs != MAP_FAILED && zs[5] == 0, "dev zero shared");
    close(z);
    c = fork();
    if (c == 0) {
        zs[5] = 55;
        _exit(0);
    }
    CHECK(wait_child(c) == 0, "child");
    CHECK(zs[5] == 55, "dev zero shared %d", zs[5]);
    printf("mmaptest: /dev/zero shared across fork %d\n", zs[5]);

    /* Futexes between processes on a shared page. */
    volatile int *w = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
                           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    errno = 0;
    CHECK(futex(w, FUTEX_WAIT, 1, NULL) == -1 && errno == EAGAIN, "value differs");
    printf("mmaptest: futex EAGAIN\n");
    struct timespec t = {0, 30 * 1000 * 1000};
    errno = 0;
    CHECK(futex(w, FUTEX_WAIT, 0, &t) == -1 && errno == ETIMEDOUT, "timeout");
    errno = 0;
    CHECK(futex(w, 0x7f, 0, NULL) == -1 && errno == ENOSYS, "unknown op");
    c = fork();
    if (c == 0) {
        /* One wait: 0 when the parent's wake ends it. */
        long r = futex(w, FUTEX_WAIT, 0, NULL);
        w[1] = r == 0 ? 1 : 2;
        futex(w + 1, FUTEX_WAKE, 1, NULL);
        _exit(0);
    }
    /* Wake until the wake finds the child parked. */
    int woke = 0, tries = 0;
    struct timespec ms = {0, 1000 * 1000};
    while ((woke = (int)futex(w, FUTEX_WAKE, 1, NULL)) == 0 && tries++ < 1000)
        nanosleep(&ms, NULL);
    while (w[1] == 0)
        futex(w + 1, FUTEX_WAIT, 0, NULL);
    CHECK(wait_child(c) == 0, "futex child");
    printf("mmaptest: futex ping-pong woke %d, answer %d\n", woke, w[1]);

    /* sysinfo, sched, select. */
    struct sysinfo si;
    CHECK(sysinfo(&si) == 0 && si.mem_unit == 4096 && si.totalram > si.freeram &&
              si.procs >= 1, "sysinfo");
    struct sched_param sp = {.sched_priority = 1};
    CHECK(syscall(SYS_sched_setscheduler, 0, SCHED_FIFO, &sp) == 0, "setscheduler");
    CHECK(sched_get_priority_max(SCHED_FIFO) == 99, "prio max");
    CHECK(sysconf(_SC_NPROCESSORS_ONLN) == 1, "one cpu");
    int sp2[2];
    CHECK(pipe(sp2) == 0, "pipe");
    fd_set rd, wr;
    FD_ZERO(&rd);
    FD_ZERO(&wr);
    FD_SET(sp2[0], &rd);
    FD_SET(sp2[1], &wr);
    CHECK(select(sp2[1] + 1, &rd, &wr, NULL, NULL) == 1, "select");
    CHECK(!FD_ISSET(sp2[0], &rd) && FD_ISSET(sp2[1], &wr), "write end ready");
    CHECK(write(sp2[1], "x", 1) == 1, "write");
    FD_ZERO(&rd);
    FD_SET(sp2[0], &rd);
    struct timeval tv = {1, 0};
    CHECK(select(sp2[0] + 1, &rd, NULL, NULL, &tv) == 1 && FD_ISSET(sp2[0], &rd), "readable");
    char cc;
    CHECK(read(sp2[0], &cc, 1) == 1, "read");
    FD_ZERO(&rd);
    FD_SET(sp2[0], &rd);
    tv.tv_sec = 0;
    tv.tv_usec = 20000;
    CHECK(select(sp2[0] + 1, &rd, NULL, NULL, &tv) == 0, "select times out");
    printf("mmaptest: sysinfo, sched and select\n");

    /* /proc of this process (an exec'd program: its own name). */
    char link[64] = {0};
    CHECK(readlink("/proc/self/exe", link, sizeof link - 1) > 0, "readlink");
    char cmd[64] = {0};
    int cf = open("/proc/self/cmdline", O_RDONLY);
    ssize_t cn = read(cf, cmd, sizeof cmd);
    close(cf);
    char st[256] = {0}, want[64];
    snprintf(want, sizeof want, "/proc/%d/stat", getpid());
    int sf = open(want, O_RDONLY);
    CHECK(read(sf, st, sizeof st - 1) > 0, "stat");
    close(sf);
    snprintf(want, sizeof want, "%d (mmaptest) R 0 1 1 ", getpid());
    CHECK(strncmp(st, want, strlen(want)) == 0, "stat %s", st);
    printf("mmaptest: /proc/self/exe %s, cmdline %zd bytes %s, stat %.20s\n", link, cn, cmd, st);

    deep_and_wide();

    if (failures == 0)
        printf("mmaptest: all ok\n");
    return failures != 0;
}
