/* One process hogging what all processes share — parked calls, descriptors,
 * pipes, processes, file space — gets the Linux error for its own call, and
 * every other process (pid 1, which runs this) keeps working. Every line is
 * checked by tests/system/unix_hog.toml. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("hogtest: FAILED line %d: %s: ", __LINE__, #cond);          \
            printf(__VA_ARGS__);                                               \
            printf(" (errno %d)\n", errno);                                    \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

/* Waits for every child; returns the sum of their exit statuses (-1000 for
 * each that did not exit normally). */
static int reap_all(int n)
{
    int sum = 0;
    for (int i = 0; i < n; i++) {
        int st;
        pid_t p = waitpid(-1, &st, 0);
        CHECK(p > 0, "waitpid returned %d", (int)p);
        if (p <= 0)
            return sum - 1000;
        sum += WIFEXITED(st) ? WEXITSTATUS(st) : -1000;
    }
    return sum;
}

/* Free memory and the UNIX system's nodes (/proc/meminfo), for the log. */
static void meminfo(const char *when)
{
    char buf[256];
    long nodes = -1, free_kb = -1;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return;
    while (fgets(buf, sizeof buf, f)) {
        sscanf(buf, "StetNodes: %ld", &nodes);
        sscanf(buf, "MemFree: %ld kB", &free_kb);
    }
    fclose(f);
    printf("hogtest: %s: %ld kB free, %ld nodes in use\n", when, free_kb, nodes);
}

/* A pipe round trip and a file round trip: the system still works. */
static int works(void)
{
    int p[2];
    char buf[8] = {0};
    if (pipe(p) != 0)
        return 0;
    int ok = write(p[1], "ping", 4) == 4 && read(p[0], buf, 4) == 4 &&
             memcmp(buf, "ping", 4) == 0;
    close(p[0]);
    close(p[1]);
    int fd = open("/tmp/works", O_CREAT | O_TRUNC | O_RDWR, 0600);
    if (fd < 0)
        return 0;
    ok = ok && write(fd, "file", 4) == 4 && pread(fd, buf, 4, 0) == 4 &&
         memcmp(buf, "file", 4) == 0;
    close(fd);
    unlink("/tmp/works");
    pid_t c = fork();
    if (c == 0)
        _exit(7);
    int st = 0;
    ok = ok && c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) &&
         WEXITSTATUS(st) == 7;
    return ok;
}

/* 1. Parked calls: more sleepers and pipe readers than the old table's 16,
 * all at once, while pid 1's own sleep still lasts as long as it asked. */
static void parked_calls(void)
{
    enum { SLEEPERS = 40, READERS = 30 };
    for (int i = 0; i < SLEEPERS; i++) {
        pid_t c = fork();
        if (c == 0) {
            nap_ms(300);
            _exit(i);
        }
        CHECK(c > 0, "fork of sleeper %d", i);
    }
    long t0 = now_ms();
    nap_ms(100);
    long slept = now_ms() - t0;
    CHECK(slept >= 100, "pid 1 slept %ld ms of 100", slept);
    printf("hogtest: %d sleeping children reaped, statuses add to %d\n",
           SLEEPERS, reap_all(SLEEPERS));

    int fds[READERS][2];
    for (int i = 0; i < READERS; i++) {
        CHECK(pipe(fds[i]) == 0, "pipe %d", i);
        pid_t c = fork();
        if (c == 0) {
            char b = 0;
            close(fds[i][1]);
            _exit(read(fds[i][0], &b, 1) == 1 ? b : 99);
        }
        close(fds[i][0]);
    }
    nap_ms(200); /* they are all parked in their reads now */
    for (int i = 0; i < READERS; i++) {
        char b = (char)(i + 1);
        CHECK(write(fds[i][1], &b, 1) == 1, "write to reader %d", i);
        close(fds[i][1]);
    }
    printf("hogtest: %d parked pipe readers answered, statuses add to %d\n",
           READERS, reap_all(READERS));
}

/* 2. Descriptors: twelve children each open /dev/null until EMFILE and
 * hold them all; pid 1 still opens files and pipes. */
static void descriptors(void)
{
    enum { HOGS = 12 };
    int go[2], ready[2];
    CHECK(pipe(go) == 0 && pipe(ready) == 0, "pipes");
    for (int i = 0; i < HOGS; i++) {
        pid_t c = fork();
        if (c == 0) {
            close(go[1]);
            close(ready[0]);
            int n = 0, fd;
            while ((fd = open("/dev/null", O_RDONLY)) >= 0)
                n++;
            int e = errno;
            char r = (e == EMFILE) ? 1 : 0;
            write(ready[1], &r, 1);
            char b;
            read(go[0], &b, 1); /* hold them until pid 1 is done */
            _exit(n == 256 - 5 && e == EMFILE ? 0 : 1);
        }
    }
    close(ready[1]);
    int emfile = 0;
    for (int i = 0; i < HOGS; i++) {
        char r = 0;
        CHECK(read(ready[0], &r, 1) == 1, "ready %d", i);
        emfile += r;
    }
    printf("hogtest: %d children hold %d descriptors each, every one stopped by EMFILE: %s\n",
           HOGS, 256 - 5, emfile == HOGS ? "yes" : "no");
    printf("hogtest: pid 1 works meanwhile: %s\n", works() ? "yes" : "no");
    close(go[1]);
    close(go[0]);
    close(ready[0]);
    printf("hogtest: the descriptor hogs ended, statuses add to %d\n", reap_all(HOGS));
}

/* 3. Pipes: one child makes pipes until EMFILE and holds them. */
static void pipes(void)
{
    int go[2], ready[2];
    CHECK(pipe(go) == 0 && pipe(ready) == 0, "pipes");
    pid_t c = fork();
    if (c == 0) {
        close(go[1]);
        close(ready[0]);
        int n = 0, p[2];
        while (pipe(p) == 0)
            n++;
        int r = (errno == EMFILE) ? n : -1;
        write(ready[1], &r, sizeof r);
        char b;
        read(go[0], &b, 1);
        _exit(0);
    }
    close(go[0]);
    close(ready[1]);
    int r = 0;
    CHECK(read(ready[0], &r, sizeof r) == sizeof r, "ready");
    printf("hogtest: a child made %d pipes, then EMFILE\n", r);
    printf("hogtest: pid 1 works meanwhile: %s\n", works() ? "yes" : "no");
    close(go[1]);
    close(ready[0]);
    printf("hogtest: the pipe hog ended, status %d\n", reap_all(1));
}

/* 4. RLIMIT_NOFILE is enforced and kept. */
static void nofile(void)
{
    pid_t c = fork();
    if (c == 0) {
        struct rlimit l = {10, 10}, got;
        CHECK(setrlimit(RLIMIT_NOFILE, &l) == 0, "setrlimit");
        CHECK(getrlimit(RLIMIT_NOFILE, &got) == 0 && got.rlim_cur == 10 &&
                  got.rlim_max == 10,
              "getrlimit %ld %ld", (long)got.rlim_cur, (long)got.rlim_max);
        int n = 0;
        while (open("/dev/null", O_RDONLY) >= 0)
            n++;
        int e = errno;
        int d2 = dup2(0, 10), e2 = errno;
        int fd = fcntl(0, F_DUPFD, 10), e3 = errno;
        struct rlimit big = {20, 100000};
        int r = setrlimit(RLIMIT_NOFILE, &big), e4 = errno;
        struct rlimit bad = {20, 15};
        int r2 = setrlimit(RLIMIT_NOFILE, &bad), e5 = errno;
        printf("hogtest: RLIMIT_NOFILE 10: %d more opened, then %s; dup2 to 10 %d %s; F_DUPFD 10 %d %s\n",
               n, e == EMFILE ? "EMFILE" : "?", d2, e2 == EBADF ? "EBADF" : "?", fd,
               e3 == EINVAL ? "EINVAL" : "?");
        printf("hogtest: a hard limit past the table %d %s; soft above hard %d %s\n", r,
               e4 == EPERM ? "EPERM" : "?", r2, e5 == EINVAL ? "EINVAL" : "?");
        _exit(0);
    }
    reap_all(1);
}

/* 5. RLIMIT_NPROC: a fork bomb under its limit stops with EAGAIN; pid 1
 * (its own limit) still forks. */
static void nproc(void)
{
    int go[2], ready[2];
    CHECK(pipe(go) == 0 && pipe(ready) == 0, "pipes");
    pid_t bomb = fork();
    if (bomb == 0) {
        close(go[1]);
        close(ready[0]);
        struct rlimit l = {20, 20};
        CHECK(setrlimit(RLIMIT_NPROC, &l) == 0, "setrlimit NPROC");
        int n = 0;
        pid_t c;
        while ((c = fork()) > 0)
            n++;
        if (c == 0) {
            char b;
            read(go[0], &b, 1);
            _exit(0);
        }
        int r = errno == EAGAIN ? n : -errno;
        write(ready[1], &r, sizeof r);
        close(go[0]);
        for (int i = 0; i < n; i++)
            wait(NULL);
        _exit(0);
    }
    close(go[0]);
    close(ready[1]);
    int r = 0;
    CHECK(read(ready[0], &r, sizeof r) == sizeof r, "ready");
    /* pid 1, the bomb and its 18 children make 20. */
    printf("hogtest: a fork bomb under RLIMIT_NPROC 20 made %d children, then EAGAIN\n", r);
    printf("hogtest: pid 1 works meanwhile: %s\n", works() ? "yes" : "no");
    close(go[1]);
    close(ready[0]);
    printf("hogtest: the fork bomb ended, status %d\n", reap_all(1));
}

/* 6. File space: a child fills /tmp until ENOSPC; pid 1 still writes. */
static void disk(void)
{
    int ready[2];
    CHECK(pipe(ready) == 0, "pipe");
    pid_t c = fork();
    if (c == 0) {
        close(ready[0]);
        static char chunk[65536];
        memset(chunk, 'h', sizeof chunk);
        int fd = open("/tmp/hog", O_CREAT | O_TRUNC | O_WRONLY, 0600);
        long kib = 0;
        ssize_t w;
        while ((w = write(fd, chunk, sizeof chunk)) > 0)
            kib += w / 1024;
        long r = (w < 0 && errno == ENOSPC) ? kib : -errno;
        write(ready[1], &r, sizeof r);
        close(fd);
        _exit(0);
    }
    close(ready[1]);
    long r = 0;
    CHECK(read(ready[0], &r, sizeof r) == sizeof r, "ready");
    close(ready[0]);
    reap_all(1);
    printf("hogtest: a child filled /tmp with %ld KiB, then ENOSPC\n", r);
    static char buf[65536];
    memset(buf, 'o', sizeof buf);
    int fd = open("/tmp/ok", O_CREAT | O_TRUNC | O_RDWR, 0600);
    int ok = fd >= 0 && write(fd, buf, sizeof buf) == (ssize_t)sizeof buf;
    memset(buf, 0, sizeof buf);
    ok = ok && pread(fd, buf, sizeof buf, 0) == (ssize_t)sizeof buf && buf[0] == 'o' &&
         buf[sizeof buf - 1] == 'o';
    close(fd);
    unlink("/tmp/ok");
    printf("hogtest: pid 1 writes and reads 64 KiB while /tmp holds the hog's file: %s\n",
           ok ? "yes" : "no");
    printf("hogtest: pid 1 works meanwhile: %s\n", works() ? "yes" : "no");
    CHECK(unlink("/tmp/hog") == 0, "unlink");
}

/* 7. Memory: a child touching more than its RLIMIT_RSS is ended by
 * SIGBUS at its limit (Linux's out-of-memory end is SIGKILL); pid 1, whose
 * pages are its own, keeps working. */
static void memory(void)
{
    struct rlimit l;
    CHECK(getrlimit(RLIMIT_RSS, &l) == 0 && l.rlim_cur != RLIM_INFINITY, "RLIMIT_RSS");
    int ready[2];
    CHECK(pipe(ready) == 0, "pipe");
    pid_t c = fork();
    if (c == 0) {
        close(ready[0]);
        size_t len = (size_t)l.rlim_cur * 2;
        char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            _exit(2);
        for (size_t i = 0; i < len; i += 4096) {
            m[i] = 1;
            long kib = (long)(i / 1024) + 4;
            write(ready[1], &kib, sizeof kib);
        }
        _exit(0);
    }
    close(ready[1]);
    long kib = 0, k;
    while (read(ready[0], &k, sizeof k) == sizeof k)
        kib = k;
    close(ready[0]);
    int st = 0;
    CHECK(waitpid(c, &st, 0) == c, "waitpid");
    printf("hogtest: a child touching twice its RLIMIT_RSS ended by %s after %s of it\n",
           WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS ? "SIGBUS" : "?",
           kib <= (long)(l.rlim_cur / 1024) && kib > (long)(l.rlim_cur / 1024) - 1024
               ? "all but its own few pages"
               : "?");
    printf("hogtest: pid 1 works meanwhile: %s\n", works() ? "yes" : "no");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "descriptors") == 0) {
        descriptors();
        return failures != 0;
    }
    meminfo("at the start");
    parked_calls();
    meminfo("after parked calls");
    descriptors();
    meminfo("after descriptors");
    pipes();
    nofile();
    meminfo("before the fork bomb");
    nproc();
    meminfo("before the disk hog");
    disk();
    memory();
    meminfo("at the end");
    printf("hogtest: pid 1 works at the end: %s\n", works() ? "yes" : "no");
    printf(failures ? "hogtest: %d FAILED\n" : "hogtest: all ok\n", failures);
    return failures != 0;
}
