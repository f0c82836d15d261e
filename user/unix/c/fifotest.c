/* Named pipes and the calls around pipes, as Linux (the man pages of
 * mknod(2), fifo(7), pipe(7), fcntl(2), splice(2), tee(2), vmsplice(2),
 * sendfile(2), proc(5)): mkfifo/mknod and their errors, FIFO opens that
 * wait for the other end (between processes, O_NONBLOCK, O_RDWR, EINTR),
 * device nodes, pipe sizes, O_DIRECT packets, splice/tee/vmsplice,
 * sendfile's errors, /proc/self/fd, leases, owners and signals (O_ASYNC).
 * Prints exact lines and "fifo: all ok". */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("fifo: FAILED line %d: ", __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf(" (errno %d)\n", errno);                                                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)
#define REFUSED(call, e)                                                                           \
    do {                                                                                           \
        errno = 0;                                                                                 \
        long r_ = (long)(call);                                                                    \
        CHECK(r_ == -1 && errno == (e), "%s gave %ld errno %d, want errno %d", #call, r_, errno,   \
              (e));                                                                                \
    } while (0)

static volatile int sigs[65];
static void on_sig(int s) { sigs[s]++; }

static long msec_since(struct timespec a) {
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
}

static void msleep(int ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

static int child_status(pid_t p) {
    int st = -1;
    waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
}

static void nodes(void) {
    struct stat st;
    umask(022);
    CHECK(mkfifo("/tmp/ff", 0666) == 0, "mkfifo");
    CHECK(stat("/tmp/ff", &st) == 0, "stat");
    printf("fifo: mkfifo: fifo %d mode %o size %lld\n", S_ISFIFO(st.st_mode),
           st.st_mode & 07777, (long long)st.st_size);
    REFUSED(mkfifo("/tmp/ff", 0600), EEXIST);
    REFUSED(mknod("/tmp/nd", S_IFDIR | 0755, 0), EPERM);
    REFUSED(mknod("/tmp/nd", 0070000 | 0644, 0), EINVAL);
    REFUSED(mknod("/tmp/none/x", S_IFIFO | 0644, 0), ENOENT);
    REFUSED(mknodat(-5, "x", S_IFIFO | 0644, 0), EBADF);
    REFUSED(open("/tmp", O_RDONLY | O_CREAT, 0600), EISDIR);
    CHECK(mknod("/tmp/nreg", 0644, 0) == 0, "mknod type 0");
    CHECK(stat("/tmp/nreg", &st) == 0 && S_ISREG(st.st_mode), "regular");
    CHECK(mknod("/tmp/nsock", S_IFSOCK | 0644, 0) == 0, "mknod sock");
    CHECK(stat("/tmp/nsock", &st) == 0 && S_ISSOCK(st.st_mode), "socket");
    REFUSED(open("/tmp/nsock", O_RDONLY), ENXIO);
    CHECK(mknod("/tmp/nnull", S_IFCHR | 0666, makedev(1, 3)) == 0, "mknod chr");
    CHECK(stat("/tmp/nnull", &st) == 0 && S_ISCHR(st.st_mode), "chr");
    int fd = open("/tmp/nnull", O_RDWR);
    char b[8];
    printf("fifo: char 1:3 node: rdev %u:%u, write %zd, read %zd\n", major(st.st_rdev),
           minor(st.st_rdev), write(fd, "abc", 3), read(fd, b, 8));
    close(fd);
    CHECK(mknod("/tmp/nfull", S_IFCHR | 0666, makedev(240, 7)) == 0, "mknod 240:7");
    REFUSED(open("/tmp/nfull", O_RDONLY), ENXIO);
    CHECK(mknod("/tmp/nblk", S_IFBLK | 0600, makedev(8, 0)) == 0, "mknod blk");
    CHECK(stat("/tmp/nblk", &st) == 0 && S_ISBLK(st.st_mode), "blk");
    REFUSED(open("/tmp/nblk", O_RDONLY), ENXIO);
    pid_t p = fork();
    if (p == 0) {
        if (setuid(1000) != 0)
            _exit(9);
        errno = 0;
        int r1 = mknod("/tmp/ucdev", S_IFCHR | 0600, makedev(1, 3));
        int e1 = errno;
        int r2 = mknod("/tmp/nnull", S_IFCHR | 0600, makedev(1, 3));
        int e2 = errno;
        int r3 = mkfifo("/tmp/ufifo", 0600);
        _exit((r1 == -1 && e1 == EPERM) + 2 * (r2 == -1 && e2 == EEXIST) + 4 * (r3 == 0));
    }
    printf("fifo: as user 1000: device EPERM, existing EEXIST, fifo made: %d\n", child_status(p));
    unlink("/tmp/nreg");
    unlink("/tmp/nsock");
    unlink("/tmp/nnull");
    unlink("/tmp/nfull");
    unlink("/tmp/nblk");
    unlink("/tmp/ufifo");
}

static void opens(void) {
    char b[16];
    struct stat a, f;
    REFUSED(open("/tmp/ff", O_WRONLY | O_NONBLOCK), ENXIO);
    int r = open("/tmp/ff", O_RDONLY | O_NONBLOCK);
    CHECK(r >= 0, "nonblocking reader");
    printf("fifo: nonblocking reader, no writer: read %zd\n", read(r, b, 16));
    int w = open("/tmp/ff", O_WRONLY | O_NONBLOCK);
    CHECK(w >= 0, "nonblocking writer with a reader");
    CHECK(write(w, "abc", 3) == 3, "write");
    ssize_t n = read(r, b, 16);
    printf("fifo: through the fifo: %zd '%.*s'\n", n, (int)(n > 0 ? n : 0), b);
    REFUSED(read(r, b, 16), EAGAIN);
    CHECK(fstat(w, &f) == 0 && stat("/tmp/ff", &a) == 0, "fstat");
    printf("fifo: fstat: fifo %d, same inode %d\n", S_ISFIFO(f.st_mode), a.st_ino == f.st_ino);
    REFUSED(lseek(r, 0, SEEK_SET), ESPIPE);
    close(w);
    printf("fifo: writer gone: read %zd\n", read(r, b, 16));
    close(r);
    /* O_RDWR never waits; what is left when the last end closes goes. */
    int rw = open("/tmp/ff", O_RDWR);
    CHECK(rw >= 0, "O_RDWR");
    CHECK(write(rw, "zz", 2) == 2, "write rw");
    n = read(rw, b, 16);
    CHECK(write(rw, "left", 4) == 4, "write rw");
    close(rw);
    rw = open("/tmp/ff", O_RDWR | O_NONBLOCK);
    errno = 0;
    ssize_t m = read(rw, b, 16);
    printf("fifo: O_RDWR read %zd; after the last close: %zd errno %d\n", n, m, errno);
    close(rw);

    /* A blocking reader waits for a writer of another process. */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t p = fork();
    if (p == 0) {
        msleep(100);
        int w2 = open("/tmp/ff", O_WRONLY);
        ssize_t k = write(w2, "hello", 5);
        close(w2);
        _exit(k == 5 ? 0 : 1);
    }
    r = open("/tmp/ff", O_RDONLY);
    long waited = msec_since(t0);
    n = 0;
    ssize_t k;
    while ((k = read(r, b + n, sizeof b - n)) > 0)
        n += k;
    close(r);
    printf("fifo: reader waited for the writer: %d, read '%.*s', child %d\n", waited >= 80,
           (int)n, b, child_status(p));

    /* A blocking writer waits for a reader. */
    p = fork();
    if (p == 0) {
        struct timespec c0;
        clock_gettime(CLOCK_MONOTONIC, &c0);
        int w2 = open("/tmp/ff", O_WRONLY);
        long ms = msec_since(c0);
        ssize_t k2 = write(w2, "x", 1);
        close(w2);
        _exit(ms >= 80 && k2 == 1 ? 0 : 1);
    }
    msleep(100);
    r = open("/tmp/ff", O_RDONLY);
    n = read(r, b, 16);
    close(r);
    printf("fifo: writer waited for the reader: child %d, read %zd\n", child_status(p), n);

    /* A signal ends the wait: EINTR, nothing left open. */
    struct sigaction sa = {0};
    sa.sa_handler = on_sig;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 0}, {0, 50000}};
    setitimer(ITIMER_REAL, &it, NULL);
    errno = 0;
    r = open("/tmp/ff", O_RDONLY);
    printf("fifo: interrupted open: %d errno %d, SIGALRM %d\n", r, errno, sigs[SIGALRM]);
    int probe = open("/tmp/ff", O_WRONLY | O_NONBLOCK);
    printf("fifo: no reader left behind: %d errno %d\n", probe, errno);

    /* Unlinked while open, it goes on. */
    CHECK(mkfifo("/tmp/ff2", 0600) == 0, "mkfifo 2");
    rw = open("/tmp/ff2", O_RDWR);
    unlink("/tmp/ff2");
    CHECK(write(rw, "ok", 2) == 2, "write unlinked");
    n = read(rw, b, 16);
    CHECK(fstat(rw, &f) == 0, "fstat unlinked");
    printf("fifo: unlinked fifo: read %zd, links %lu\n", n, (unsigned long)f.st_nlink);
    close(rw);
}

static void sizes(void) {
    int p[2];
    char buf[8192];
    memset(buf, 'q', sizeof buf);
    CHECK(pipe2(p, O_NONBLOCK) == 0, "pipe2");
    printf("fifo: pipe size %d\n", fcntl(p[1], F_GETPIPE_SZ));
    int a = fcntl(p[0], F_SETPIPE_SZ, 0);
    int b = fcntl(p[1], F_SETPIPE_SZ, 5000);
    printf("fifo: set 0 -> %d, set 5000 -> %d, get %d\n", a, b, fcntl(p[0], F_GETPIPE_SZ));
    ssize_t w = write(p[1], buf, 8192);
    errno = 0;
    ssize_t w2 = write(p[1], "x", 1);
    printf("fifo: filled %zd, then %zd errno %d\n", w, w2, errno);
    REFUSED(fcntl(p[1], F_SETPIPE_SZ, 4096), EBUSY);
    REFUSED(fcntl(p[1], F_SETPIPE_SZ, (1U << 31) + 1), EINVAL);
    int f = open("/tmp/sz", O_CREAT | O_RDWR, 0600);
    REFUSED(fcntl(f, F_GETPIPE_SZ), EBADF);
    REFUSED(fcntl(f, F_SETPIPE_SZ, 4096), EBADF);
    close(f);
    unlink("/tmp/sz");
    printf("fifo: root sets 2 MiB: %d\n", fcntl(p[1], F_SETPIPE_SZ, 2 << 20));
    pid_t c = fork();
    if (c == 0) {
        if (setuid(1000) != 0)
            _exit(9);
        errno = 0;
        int r1 = fcntl(p[1], F_SETPIPE_SZ, 4 << 20);
        int e1 = errno;
        int r2 = fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
        _exit((r1 == -1 && e1 == EPERM) + 2 * (r2 == (1 << 20)));
    }
    printf("fifo: as user 1000: 4 MiB EPERM, 1 MiB allowed: %d\n", child_status(c));
    /* pipe-user-pages-soft: a user whose pipes hold more pages gets
     * 2-page pipes that cannot grow. */
    c = fork();
    if (c == 0) {
        if (setuid(1000) != 0)
            _exit(9);
        int q[2], ok = 0;
        for (int i = 0; i < 64; i++)
            ok += pipe(q) == 0 && fcntl(q[1], F_SETPIPE_SZ, 1 << 20) == (1 << 20);
        CHECK(pipe(q) == 0, "pipe past the soft limit");
        int sz = fcntl(q[1], F_GETPIPE_SZ);
        errno = 0;
        int grow = fcntl(q[1], F_SETPIPE_SZ, 16384);
        printf("fifo: as user 1000: 64 pipes of 1 MiB %d, then a pipe of %d, grown: %d errno %d\n",
               ok, sz, grow, errno);
        _exit(0);
    }
    child_status(c);
    char t[32] = {0};
    int mx = open("/proc/sys/fs/pipe-max-size", O_RDONLY);
    ssize_t n = read(mx, t, sizeof t - 1);
    close(mx);
    printf("fifo: pipe-max-size %.*s", (int)(n > 0 ? n : 0), t);
    mx = open("/proc/sys/fs/pipe-user-pages-soft", O_RDONLY);
    n = read(mx, t, sizeof t - 1);
    close(mx);
    printf("fifo: pipe-user-pages-soft %.*s", (int)(n > 0 ? n : 0), t);
    close(p[0]);
    close(p[1]);

    /* O_DIRECT: packets. */
    CHECK(pipe2(p, O_DIRECT) == 0, "pipe2 O_DIRECT");
    int fl = fcntl(p[1], F_GETFL);
    CHECK(write(p[1], "hello", 5) == 5 && write(p[1], "world!", 6) == 6, "packets");
    char r[100];
    ssize_t k1 = read(p[0], r, 3);
    ssize_t k2 = read(p[0], r + 3, 90);
    printf("fifo: O_DIRECT %d: reads %zd '%.3s' then %zd '%.6s'\n", (fl & O_DIRECT) != 0, k1, r,
           k2, r + 3);
    close(p[0]);
    close(p[1]);
    REFUSED(pipe2(p, O_APPEND), EINVAL);
    REFUSED(pipe2(p, O_DIRECT | O_SYNC), EINVAL);
}

static void splices(void) {
    char b[64];
    int f = open("/tmp/sp", O_CREAT | O_TRUNC | O_RDWR, 0600);
    CHECK(write(f, "0123456789", 10) == 10, "write file");
    int p[2], q[2];
    CHECK(pipe(p) == 0 && pipe(q) == 0, "pipes");
    loff_t off = 2;
    ssize_t n = splice(f, &off, p[1], NULL, 5, 0);
    ssize_t k = read(p[0], b, 64);
    printf("fifo: splice file@2 -> pipe: %zd, offset %lld, '%.*s', file offset %lld\n", n,
           (long long)off, (int)k, b, (long long)lseek(f, 0, SEEK_CUR));
    lseek(f, 1, SEEK_SET);
    n = splice(f, NULL, p[1], NULL, 3, 0);
    k = read(p[0], b, 64);
    printf("fifo: splice at the file offset: %zd '%.*s', offset now %lld\n", n, (int)k, b,
           (long long)lseek(f, 0, SEEK_CUR));
    CHECK(write(p[1], "ABC", 3) == 3, "write pipe");
    off = 8;
    n = splice(p[0], NULL, f, &off, 10, 0);
    k = pread(f, b, 64, 0);
    printf("fifo: splice pipe -> file@8: %zd, offset %lld, file '%.*s'\n", n, (long long)off,
           (int)k, b);
    CHECK(write(p[1], "xyz", 3) == 3, "write pipe");
    int avail = -1;
    CHECK(ioctl(p[0], FIONREAD, &avail) == 0 && avail == 3, "FIONREAD %d", avail);
    n = splice(p[0], NULL, q[1], NULL, 100, 0);
    k = read(q[0], b, 64);
    printf("fifo: splice pipe -> pipe: %zd '%.*s'\n", n, (int)k, b);
    CHECK(write(p[1], "tee!", 4) == 4, "write pipe");
    n = tee(p[0], q[1], 100, 0);
    k = read(q[0], b, 64);
    ssize_t k2 = read(p[0], b + 10, 54);
    printf("fifo: tee: %zd, copy '%.*s', left '%.*s'\n", n, (int)k, b, (int)k2, b + 10);
    REFUSED(splice(p[0], NULL, q[1], NULL, 10, SPLICE_F_NONBLOCK), EAGAIN);
    REFUSED(tee(p[0], q[1], 10, SPLICE_F_NONBLOCK), EAGAIN);
    printf("fifo: splice of 0 bytes: %zd\n", splice(-1, NULL, -1, NULL, 0, 0));
    /* Errors. */
    int wr = open("/tmp/sp", O_WRONLY), ap = open("/tmp/sp", O_WRONLY | O_APPEND);
    int rd = open("/tmp/sp", O_RDONLY);
    REFUSED(splice(-1, NULL, p[1], NULL, 10, 0), EBADF);
    REFUSED(splice(p[0], NULL, 99, NULL, 10, 0), EBADF);
    REFUSED(splice(wr, NULL, p[1], NULL, 10, 0), EBADF);
    REFUSED(splice(p[0], NULL, ap, NULL, 10, 0), EINVAL);
    REFUSED(splice(rd, NULL, wr, NULL, 10, 0), EINVAL);
    off = 0;
    REFUSED(splice(p[0], &off, wr, NULL, 10, 0), ESPIPE);
    REFUSED(splice(rd, NULL, p[1], &off, 10, 0), ESPIPE);
    REFUSED(splice(rd, NULL, p[1], NULL, 10, 0x100), EINVAL);
    off = -1;
    REFUSED(splice(rd, &off, p[1], NULL, 10, 0), EINVAL);
    REFUSED(tee(rd, q[1], 10, 0), EINVAL);
    REFUSED(tee(p[0], rd, 10, 0), EBADF);
    REFUSED(tee(p[0], p[1], 10, 0), EINVAL);
    REFUSED(tee(p[0], q[1], 10, 0x100), EINVAL);
    /* vmsplice, both ways. */
    struct iovec iv[2] = {{"ab", 2}, {"cd", 2}};
    n = vmsplice(p[1], iv, 2, 0);
    k = read(p[0], b, 64);
    printf("fifo: vmsplice into the pipe: %zd '%.*s'\n", n, (int)k, b);
    CHECK(write(p[1], "qq", 2) == 2, "write");
    struct iovec ov = {b, 10};
    n = vmsplice(p[0], &ov, 1, 0);
    printf("fifo: vmsplice out of the pipe: %zd '%.*s'\n", n, (int)(n > 0 ? n : 0), b);
    REFUSED(vmsplice(-1, iv, 1, 0), EBADF);
    REFUSED(vmsplice(rd, iv, 1, 0), EBADF);
    REFUSED(vmsplice(p[1], iv, 1025, 0), EINVAL);
    REFUSED(vmsplice(p[1], iv, 1, 0x100), EINVAL);
    REFUSED(vmsplice(p[0], &ov, 1, SPLICE_F_NONBLOCK), EAGAIN);
    /* sendfile's errors. */
    REFUSED(sendfile(rd, rd, NULL, 5), EBADF);
    REFUSED(sendfile(p[1], wr, NULL, 5), EBADF);
    REFUSED(sendfile(ap, rd, NULL, 5), EINVAL);
    off = 3;
    n = sendfile(p[1], rd, &off, 4);
    k = read(p[0], b, 64);
    printf("fifo: sendfile file@3 -> pipe: %zd '%.*s' offset %lld\n", n, (int)k, b,
           (long long)off);
    close(wr);
    close(ap);
    close(rd);
    close(f);
    close(p[0]);
    close(p[1]);
    close(q[0]);
    close(q[1]);
}

static int by_num(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static void procfd(void) {
    int f = open("/tmp/sp", O_RDONLY);
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL, "opendir /proc/self/fd");
    int fds[64], n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 64) {
        if (e->d_name[0] != '.')
            fds[n++] = atoi(e->d_name);
    }
    qsort(fds, n, sizeof fds[0], by_num);
    printf("fifo: /proc/self/fd lists");
    for (int i = 0; i < n; i++)
        printf(" %d", fds[i]);
    printf(" (the directory is %d)\n", d ? dirfd(d) : -1);
    if (d)
        closedir(d);
    char t[64], path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", f);
    ssize_t k = readlink(path, t, sizeof t);
    printf("fifo: readlink %d: '%.*s'\n", f, (int)(k > 0 ? k : 0), t);
    snprintf(path, sizeof path, "/proc/%d/fd/%d", getpid(), p[0]);
    k = readlink(path, t, sizeof t);
    printf("fifo: pipe link is pipe:[...]: %d\n", k > 6 && memcmp(t, "pipe:[", 6) == 0);
    close(f);
    close(p[0]);
    close(p[1]);
}

static int lease_fd = -1;
static void on_break(int s) {
    sigs[s]++;
    fcntl(lease_fd, F_SETLEASE, F_UNLCK); /* give the lease up: the opener goes on */
}

/* Another process opens /tmp/sp with `flags`; the lease's holder (this
 * process) is signalled and gives the lease up. */
static int broken_by(int flags, int sig) {
    int s0 = sigs[sig];
    pid_t c = fork();
    if (c == 0) {
        int x = open("/tmp/sp", flags);
        _exit(x >= 0 ? 0 : 1);
    }
    int st = -1;
    while (waitpid(c, &st, 0) == -1 && errno == EINTR)
        ;
    return (sigs[sig] - s0) * 10 + (WIFEXITED(st) ? WEXITSTATUS(st) : 9);
}

static void leases(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_break;
    sigaction(SIGIO, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_sig;
    sigaction(SIGUSR2, &sa, NULL);
    int r = open("/tmp/sp", O_RDONLY);
    lease_fd = r;
    printf("fifo: no lease: %d\n", fcntl(r, F_GETLEASE));
    int w = open("/tmp/sp", O_WRONLY);
    REFUSED(fcntl(r, F_SETLEASE, F_RDLCK), EAGAIN);
    close(w);
    int r2 = open("/tmp/sp", O_RDONLY);
    REFUSED(fcntl(r, F_SETLEASE, F_WRLCK), EAGAIN);
    CHECK(fcntl(r, F_SETLEASE, F_RDLCK) == 0, "read lease");
    int l1 = fcntl(r, F_GETLEASE);
    close(r2);
    r2 = open("/tmp/sp", O_RDONLY); /* a reader does not break a read lease */
    int l2 = fcntl(r, F_GETLEASE);
    close(r2);
    int how = broken_by(O_RDWR, SIGIO); /* a writer does */
    printf("fifo: read lease %d, kept by a reader %d; a writer broke it: signals*10+status %d, "
           "lease %d\n",
           l1, l2, how, fcntl(r, F_GETLEASE));
    close(r);
    /* A write lease: the only open of the file; its break signal. */
    w = open("/tmp/sp", O_RDONLY);
    lease_fd = w;
    CHECK(fcntl(w, F_SETSIG, SIGUSR1) == 0, "F_SETSIG");
    CHECK(fcntl(w, F_SETLEASE, F_WRLCK) == 0, "write lease");
    int lw = fcntl(w, F_GETLEASE);
    how = broken_by(O_RDONLY, SIGUSR1);
    printf("fifo: write lease %d; a reader broke it: signals*10+status %d, lease %d\n", lw, how,
           fcntl(w, F_GETLEASE));
    REFUSED(fcntl(w, F_SETLEASE, 7), EINVAL);
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    REFUSED(fcntl(p[0], F_SETLEASE, F_RDLCK), EINVAL);
    close(w);

    /* Owners and signals, per open file description. */
    printf("fifo: owner %d, signal %d\n", fcntl(p[0], F_GETOWN), fcntl(p[0], F_GETSIG));
    CHECK(fcntl(p[0], F_SETOWN, getpid()) == 0, "F_SETOWN");
    struct f_owner_ex ox;
    fcntl(p[0], F_GETOWN_EX, &ox);
    int dup_fd = dup(p[0]);
    printf("fifo: F_SETOWN pid: get %d, ex type %d pid %d, dup's %d\n",
           fcntl(p[0], F_GETOWN) == getpid(), ox.type, ox.pid == getpid(),
           fcntl(dup_fd, F_GETOWN) == getpid());
    close(dup_fd);
    CHECK(fcntl(p[0], F_SETOWN, -getpgrp()) == 0, "F_SETOWN pgrp");
    fcntl(p[0], F_GETOWN_EX, &ox);
    printf("fifo: F_SETOWN -pgrp: get %d, ex type %d\n", fcntl(p[0], F_GETOWN) == -getpgrp(),
           ox.type);
    REFUSED(fcntl(p[0], F_SETOWN, 30000), ESRCH);
    ox.type = 7;
    ox.pid = getpid();
    REFUSED(fcntl(p[0], F_SETOWN_EX, &ox), EINVAL);
    REFUSED(fcntl(p[0], F_SETOWN_EX, (void *)8), EFAULT);
    REFUSED(fcntl(p[0], F_SETSIG, 65), EINVAL);
    ox.type = F_OWNER_TID;
    ox.pid = getpid();
    CHECK(fcntl(p[0], F_SETOWN_EX, &ox) == 0, "F_SETOWN_EX");
    CHECK(fcntl(p[0], F_SETSIG, SIGUSR2) == 0, "F_SETSIG");
    CHECK(fcntl(p[0], F_SETFL, O_ASYNC) == 0, "O_ASYNC");
    int fl = fcntl(p[0], F_GETFL);
    int s0 = sigs[SIGUSR2];
    CHECK(write(p[1], "!", 1) == 1, "write");
    printf("fifo: O_ASYNC %d: input signalled SIGUSR2 %d; F_GETSIG %d\n", (fl & O_ASYNC) != 0,
           sigs[SIGUSR2] - s0, fcntl(p[0], F_GETSIG));
    close(p[0]);
    close(p[1]);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    nodes();
    opens();
    sizes();
    splices();
    procfd();
    leases();
    unlink("/tmp/ff");
    unlink("/tmp/sp");
    if (failures == 0)
        printf("fifo: all ok\n");
    return failures != 0;
}
