/* epoll, signalfd and the signal masks of ppoll/pselect6/epoll_pwait, as
 * the Linux man pages describe them: level- and edge-triggered entries,
 * EPOLLONESHOT, nested epolls, an entry that goes with its open file
 * description, an epoll shared across fork, pipes, eventfd, timerfd, the
 * terminal and signalfd; timeouts, EINTR, and every bad-input errno.
 * Prints exact lines and "epoll: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("epoll: FAILED line %d: ", __LINE__);                                           \
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

static volatile int alarms, usr1s;
static void on_alrm(int s) {
    (void)s;
    alarms++;
}
static void on_usr1(int s) {
    (void)s;
    usr1s++;
}

static long msec_since(struct timespec a) {
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
}

static struct timespec now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t;
}

static int add(int ep, int fd, uint32_t events, uint64_t data) {
    struct epoll_event e = {.events = events, .data.u64 = data};
    return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
}

/* One look: how many events, the first one's events and data. */
static int look(int ep, int timeout, uint32_t *ev, uint64_t *data) {
    struct epoll_event e[8];
    memset(e, 0, sizeof e);
    int n = epoll_wait(ep, e, 8, timeout);
    if (ev)
        *ev = e[0].events;
    if (data)
        *data = e[0].data.u64;
    return n;
}

static void creating(void) {
    REFUSED(syscall(SYS_epoll_create, 0), EINVAL);
    REFUSED(syscall(SYS_epoll_create, -1), EINVAL);
    REFUSED(epoll_create1(1), EINVAL);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    CHECK(ep >= 0, "epoll_create1");
    int a = fcntl(ep, F_GETFD);
    int b = epoll_create(1);
    int c = fcntl(b, F_GETFD);
    printf("epoll: created, FD_CLOEXEC %d and %d\n", a, c);
    close(ep);
    close(b);
    FILE *f = fopen("/proc/sys/fs/epoll/max_user_watches", "r");
    long watches = 0;
    if (f) {
        if (fscanf(f, "%ld", &watches) != 1)
            watches = 0;
        fclose(f);
    }
    printf("epoll: max_user_watches at least 1024: %d\n", watches >= 1024);

    /* Descriptors exhausted: EMFILE. */
    struct rlimit old, lim;
    getrlimit(RLIMIT_NOFILE, &old);
    lim = old;
    lim.rlim_cur = 16;
    setrlimit(RLIMIT_NOFILE, &lim);
    int fds[16], n = 0;
    while (n < 16 && (fds[n] = dup(0)) >= 0)
        n++;
    REFUSED(epoll_create1(0), EMFILE);
    REFUSED(signalfd(-1, &(sigset_t){0}, 0), EMFILE);
    while (n > 0)
        close(fds[--n]);
    setrlimit(RLIMIT_NOFILE, &old);
}

static void triggering(void) {
    int p[2], q[2];
    pipe(p);
    pipe(q);
    int ep = epoll_create1(0);
    CHECK(add(ep, p[0], EPOLLIN, 11) == 0, "add LT");
    CHECK(add(ep, q[0], EPOLLIN | EPOLLET, 22) == 0, "add ET");
    int empty = look(ep, 0, 0, 0);
    write(p[1], "a", 1);
    write(q[1], "b", 1);
    uint32_t ev;
    uint64_t d;
    struct epoll_event e[2];
    int both = epoll_wait(ep, e, 2, 0);
    int lt = look(ep, 0, &ev, &d);
    printf("epoll: empty %d; both %d; then level-triggered only: %d events %x data %llu\n", empty,
           both, lt, ev, (unsigned long long)d);
    /* Edge-triggered: more data while still readable is a new edge. */
    char c;
    read(p[0], &c, 1);
    write(q[1], "c", 1);
    int again = look(ep, 0, &ev, &d);
    int quiet = look(ep, 0, 0, 0);
    printf("epoll: ET after a second write: %d data %llu, then %d\n", again,
           (unsigned long long)d, quiet);

    /* EPOLLONESHOT: once, then silent until EPOLL_CTL_MOD arms it again. */
    struct epoll_event m = {.events = EPOLLIN | EPOLLONESHOT, .data.u64 = 33};
    epoll_ctl(ep, EPOLL_CTL_MOD, q[0], &m);
    int one = look(ep, 0, 0, &d);
    int none = look(ep, 0, 0, 0);
    m.data.u64 = 44;
    epoll_ctl(ep, EPOLL_CTL_MOD, q[0], &m);
    int rearmed = look(ep, 0, 0, &d);
    printf("epoll: oneshot %d, then %d, re-armed %d data %llu\n", one, none, rearmed,
           (unsigned long long)d);

    /* The write end: EPOLLOUT; the reader gone: EPOLLERR. Writer gone:
     * EPOLLHUP (EPOLLRDHUP accepted). */
    int ep2 = epoll_create1(0);
    add(ep2, p[1], EPOLLOUT, 5);
    look(ep2, 0, &ev, 0);
    uint32_t out = ev;
    close(p[0]);
    look(ep2, 0, &ev, 0);
    uint32_t err = ev;
    int ep3 = epoll_create1(0);
    add(ep3, q[0], EPOLLIN | EPOLLRDHUP, 6);
    read(q[0], &c, 1);
    read(q[0], &c, 1);
    close(q[1]);
    look(ep3, 0, &ev, 0);
    printf("epoll: write end %x, reader gone %x, writer gone %x\n", out, err, ev);
    close(p[1]);
    close(q[0]);
    close(ep);
    close(ep2);
    close(ep3);
}

static void errors(void) {
    int p[2];
    pipe(p);
    int ep = epoll_create1(0);
    struct epoll_event e = {.events = EPOLLIN};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e) == 0, "add");
    REFUSED(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e), EEXIST);
    REFUSED(epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &e), ENOENT);
    REFUSED(epoll_ctl(ep, EPOLL_CTL_DEL, p[1], &e), ENOENT);
    REFUSED(epoll_ctl(ep, 7, p[1], &e), EINVAL);
    REFUSED(epoll_ctl(ep, EPOLL_CTL_ADD, ep, &e), EINVAL);
    REFUSED(epoll_ctl(p[0], EPOLL_CTL_ADD, p[1], &e), EINVAL);
    REFUSED(epoll_ctl(ep, EPOLL_CTL_ADD, 99, &e), EBADF);
    REFUSED(epoll_ctl(99, EPOLL_CTL_ADD, p[1], &e), EBADF);
    REFUSED(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], (void *)8), EFAULT);
    int f = open("/tmp/epoll-file", O_CREAT | O_RDWR, 0600);
    REFUSED(epoll_ctl(ep, EPOLL_CTL_ADD, f, &e), EPERM);
    int d = open("/tmp", O_RDONLY);
    REFUSED(epoll_ctl(ep, EPOLL_CTL_ADD, d, &e), EPERM);
    /* EPOLLEXCLUSIVE: with ADD only, not with ONESHOT, not on an epoll. */
    struct epoll_event x = {.events = EPOLLIN | EPOLLEXCLUSIVE};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &x) == 0, "exclusive");
    REFUSED(epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &x), EINVAL);
    REFUSED(epoll_ctl(ep, EPOLL_CTL_MOD, p[1], &e), EINVAL);
    x.events |= EPOLLONESHOT;
    REFUSED(epoll_ctl(ep, EPOLL_CTL_ADD, d, &x), EPERM);
    int ep2 = epoll_create1(0);
    REFUSED(epoll_ctl(ep2, EPOLL_CTL_ADD, p[0], &x), EINVAL);
    x.events = EPOLLIN | EPOLLEXCLUSIVE;
    REFUSED(epoll_ctl(ep2, EPOLL_CTL_ADD, ep, &x), EINVAL);

    struct epoll_event evs[4];
    REFUSED(epoll_wait(ep, evs, 0, 0), EINVAL);
    REFUSED(epoll_wait(ep, evs, -1, 0), EINVAL);
    REFUSED(epoll_wait(99, evs, 1, 0), EBADF);
    REFUSED(epoll_wait(p[0], evs, 1, 0), EINVAL);
    void *ro = mmap(0, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REFUSED(epoll_wait(ep, ro, 1, 0), EFAULT);
    REFUSED(epoll_wait(ep, (void *)16, 1, 0), EFAULT);
    REFUSED(syscall(SYS_epoll_pwait, ep, evs, 1, 0, &(sigset_t){0}, 4), EINVAL);
    REFUSED(syscall(SYS_epoll_pwait2, ep, evs, 1, &(struct timespec){0, 2000000000}, 0, 8),
            EINVAL);
    REFUSED(syscall(SYS_epoll_pwait2, ep, evs, 1, &(struct timespec){-1, 0}, 0, 8), EINVAL);
    REFUSED(syscall(SYS_ppoll, 0, 0, &(struct timespec){0, 0}, &(sigset_t){0}, 4), EINVAL);
    printf("epoll: bad arguments refused\n");
    close(f);
    close(d);
    unlink("/tmp/epoll-file");
    close(p[0]);
    close(p[1]);
    close(ep);
    close(ep2);
}

static void nesting(void) {
    int p[2];
    pipe(p);
    int inner = epoll_create1(0), outer = epoll_create1(0);
    add(inner, p[0], EPOLLIN, 1);
    add(outer, inner, EPOLLIN, 2);
    int before = look(outer, 0, 0, 0);
    write(p[1], "x", 1);
    uint32_t ev;
    uint64_t d;
    int after = look(outer, 0, &ev, &d);
    struct pollfd pf = {.fd = inner, .events = POLLIN};
    int polled = poll(&pf, 1, 0);
    printf("epoll: nested: %d, then %d events %x data %llu; poll on it %d revents %x\n", before,
           after, ev, (unsigned long long)d, polled, pf.revents);
    /* A loop: ELOOP; too deep a chain: ELOOP. */
    REFUSED(add(inner, outer, EPOLLIN, 0), ELOOP);
    int chain[6];
    chain[0] = epoll_create1(0);
    add(chain[0], p[0], EPOLLIN, 0);
    int ok = 0;
    for (int i = 1; i < 5; i++) {
        chain[i] = epoll_create1(0);
        ok += add(chain[i], chain[i - 1], EPOLLIN, 0) == 0;
    }
    chain[5] = epoll_create1(0);
    REFUSED(add(chain[5], chain[4], EPOLLIN, 0), ELOOP);
    int deep = look(chain[4], 0, 0, 0);
    printf("epoll: chain of 5 built %d, its top ready %d\n", ok, deep);
    for (int i = 0; i < 6; i++)
        close(chain[i]);
    close(inner);
    close(outer);
    close(p[0]);
    close(p[1]);
}

static void descriptions(void) {
    int p[2];
    pipe(p);
    int ep = epoll_create1(0);
    add(ep, p[0], EPOLLIN, 7);
    int dupd = dup(p[0]);
    close(p[0]); /* the description lives on in dupd: the entry stays */
    write(p[1], "y", 1);
    uint64_t d;
    int still = look(ep, 0, 0, &d);
    close(dupd); /* its last reference: the entry goes */
    int gone = look(ep, 0, 0, 0);
    printf("epoll: entry kept while the description lives: %d data %llu; gone with it: %d\n",
           still, (unsigned long long)d, gone);

    /* fork: the child shares the epoll (an open file description). */
    int q[2];
    pipe(q);
    pid_t c = fork();
    if (c == 0) {
        add(ep, q[0], EPOLLIN, 99);
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    write(q[1], "z", 1);
    int seen = look(ep, 0, 0, &d);
    errno = 0;
    int again = add(ep, q[0], EPOLLIN, 1);
    printf("epoll: the child's entry is the parent's: %d data %llu, add again %d errno %d\n", seen,
           (unsigned long long)d, again, errno);
    close(q[0]);
    close(q[1]);
    close(p[1]);
    close(ep);
}

/* EPOLLEXCLUSIVE: of two processes waiting on one pipe, each in its own
 * epoll, one write wakes one. */
static void exclusive(void) {
    int p[2], st[2];
    pipe(p);
    pipe(st);
    pid_t c[2];
    for (int i = 0; i < 2; i++) {
        c[i] = fork();
        if (c[i] == 0) {
            int ep = epoll_create1(0);
            add(ep, p[0], EPOLLIN | EPOLLET | EPOLLEXCLUSIVE, 0);
            write(st[1], "r", 1);
            _exit(look(ep, 500, 0, 0));
        }
    }
    char b[2];
    read(st[0], b, 1);
    read(st[0], b, 1);
    usleep(50000);
    write(p[1], "x", 1);
    int woke = 0;
    for (int i = 0; i < 2; i++) {
        int status;
        waitpid(c[i], &status, 0);
        woke += WEXITSTATUS(status);
    }
    printf("epoll: exclusive: one write woke %d of 2\n", woke);
    close(p[0]);
    close(p[1]);
    close(st[0]);
    close(st[1]);
}

static void kinds(void) {
    int ep = epoll_create1(0);
    int efd = eventfd(0, EFD_NONBLOCK);
    add(ep, efd, EPOLLIN, 1);
    int e0 = look(ep, 0, 0, 0);
    uint64_t v = 3;
    write(efd, &v, 8);
    int e1 = look(ep, 0, 0, 0);
    read(efd, &v, 8);
    int e2 = look(ep, 0, 0, 0);
    epoll_ctl(ep, EPOLL_CTL_DEL, efd, 0);
    printf("epoll: eventfd %d %d %d\n", e0, e1, e2);

    int t = timerfd_create(CLOCK_MONOTONIC, 0);
    add(ep, t, EPOLLIN, 2);
    struct itimerspec its = {.it_value = {0, 40000000}};
    /* Timed from before the timer is set: it expires no earlier than 40 ms
     * after `timerfd_settime`, which may be a clock tick before a reading
     * taken after it (a host that pauses QEMU between the two calls). */
    struct timespec t0 = now();
    timerfd_settime(t, 0, &its, 0);
    uint64_t d;
    int tn = look(ep, -1, 0, &d);
    long ms = msec_since(t0);
    CHECK(ms >= 35 && ms < 3000, "timerfd wait took %ld ms", ms);
    printf("epoll: timerfd woke the wait after 40 ms: %d data %llu (%d)\n", tn,
           (unsigned long long)d, ms >= 35 && ms < 3000);
    epoll_ctl(ep, EPOLL_CTL_DEL, t, 0);

    /* The terminal is writable. */
    add(ep, 1, EPOLLOUT, 3);
    uint32_t ev;
    int tty = look(ep, 0, &ev, &d);
    printf("epoll: terminal %d events %x data %llu\n", tty, ev, (unsigned long long)d);
    close(t);
    close(efd);
    close(ep);
}

static void waits(void) {
    int ep = epoll_create1(0);
    int p[2];
    pipe(p);
    add(ep, p[0], EPOLLIN, 1);
    struct timespec t0 = now();
    int n = look(ep, 60, 0, 0);
    long ms = msec_since(t0);
    t0 = now();
    struct epoll_event e;
    int n2 = syscall(SYS_epoll_pwait2, ep, &e, 1, &(struct timespec){0, 40000000}, 0, 8);
    long ms2 = msec_since(t0);
    printf("epoll: timeouts: %d after 60 ms (%d), pwait2 %d after 40 ms (%d)\n", n,
           ms >= 55 && ms < 3000, n2, ms2 >= 35 && ms2 < 3000);

    /* A handled signal ends a wait: EINTR. */
    signal(SIGALRM, on_alrm);
    struct itimerval it = {.it_value = {0, 30000}};
    setitimer(ITIMER_REAL, &it, 0);
    errno = 0;
    n = look(ep, -1, 0, 0);
    printf("epoll: a signal ends the wait: %d errno %d alarms %d\n", n, errno, alarms);

    /* epoll_pwait's mask blocks SIGALRM for the wait only: no EINTR, the
     * signal is handled once the wait is over. */
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGALRM);
    setitimer(ITIMER_REAL, &it, 0);
    n = epoll_pwait(ep, &e, 1, 80, &block);
    /* (Delivered as the call returns, its mask gone.) */
    printf("epoll: pwait with SIGALRM blocked: %d, alarms after it %d\n", n, alarms);

    /* Blocked in the process, unblocked by the wait's mask: EINTR
     * (ppoll, pselect6 and epoll_pwait alike). */
    signal(SIGUSR1, on_usr1);
    sigset_t usr1, none;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigemptyset(&none);
    sigprocmask(SIG_BLOCK, &usr1, 0);
    pid_t parent = getpid();
    int results[3] = {0, 0, 0}, errs[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        pid_t c = fork();
        if (c == 0) {
            usleep(50000);
            kill(parent, SIGUSR1);
            _exit(0);
        }
        struct timespec ts = {5, 0};
        errno = 0;
        if (k == 0) {
            struct pollfd pf = {.fd = p[0], .events = POLLIN};
            results[k] = ppoll(&pf, 1, &ts, &none);
        } else if (k == 1) {
            fd_set r;
            FD_ZERO(&r);
            FD_SET(p[0], &r);
            results[k] = pselect(p[0] + 1, &r, 0, 0, &ts, &none);
        } else {
            results[k] = epoll_pwait(ep, &e, 1, 5000, &none);
        }
        errs[k] = errno;
        waitpid(c, 0, 0);
    }
    sigset_t cur;
    sigprocmask(SIG_BLOCK, 0, &cur);
    sigprocmask(SIG_UNBLOCK, &usr1, 0);
    printf("epoll: mask unblocks SIGUSR1: ppoll %d/%d pselect %d/%d pwait %d/%d, handled %d, "
           "still blocked after %d\n",
           results[0], errs[0], results[1], errs[1], results[2], errs[2], usr1s,
           sigismember(&cur, SIGUSR1));
    close(p[0]);
    close(p[1]);
    close(ep);
}

static void signalfds(void) {
    sigset_t m;
    sigemptyset(&m);
    sigaddset(&m, SIGUSR1);
    sigprocmask(SIG_BLOCK, &m, 0);
    REFUSED(signalfd(-1, &m, 0x40), EINVAL);
    REFUSED(syscall(SYS_signalfd4, -1, &m, 4, 0), EINVAL);
    REFUSED(syscall(SYS_signalfd4, -1, (void *)8, 8, 0), EFAULT);
    REFUSED(signalfd(77, &m, 0), EBADF);
    int p[2];
    pipe(p);
    REFUSED(signalfd(p[0], &m, 0), EINVAL);
    int s = signalfd(-1, &m, SFD_NONBLOCK | SFD_CLOEXEC);
    CHECK(s >= 0, "signalfd");
    struct signalfd_siginfo si[2];
    REFUSED(read(s, si, sizeof si), EAGAIN);
    REFUSED(read(s, si, 100), EINVAL);
    int ep = epoll_create1(0);
    add(ep, s, EPOLLIN, 5);
    int before = look(ep, 0, 0, 0);
    kill(getpid(), SIGUSR1);
    struct pollfd pf = {.fd = s, .events = POLLIN};
    int polled = poll(&pf, 1, 0);
    int ready = look(ep, 0, 0, 0);
    memset(si, 0, sizeof si);
    long got = read(s, si, sizeof si);
    printf("epoll: signalfd: before %d, poll %d, epoll %d, read %ld signo %u code %d, cloexec %d\n",
           before, polled, ready, got, si[0].ssi_signo, si[0].ssi_code, fcntl(s, F_GETFD));
    REFUSED(read(s, si, sizeof si), EAGAIN);

    /* A new mask for the same descriptor. */
    sigaddset(&m, SIGUSR2);
    sigprocmask(SIG_BLOCK, &m, 0);
    sigset_t m2;
    sigemptyset(&m2);
    sigaddset(&m2, SIGUSR2);
    int same = signalfd(s, &m2, 0);
    kill(getpid(), SIGUSR1);
    kill(getpid(), SIGUSR2);
    got = read(s, si, sizeof si);
    sigset_t pend;
    sigpending(&pend);
    printf("epoll: new mask: same fd %d, read %ld signo %u, SIGUSR1 still pending %d\n", same == s,
           got, si[0].ssi_signo, sigismember(&pend, SIGUSR1));
    /* Take the pending SIGUSR1 with a blocking signalfd. */
    int b = signalfd(-1, &m, 0);
    got = read(b, si, sizeof si);
    /* A blocking read waits for another process's signal. */
    pid_t parent = getpid();
    pid_t c = fork();
    if (c == 0) {
        usleep(50000);
        kill(parent, SIGUSR2);
        _exit(0);
    }
    struct timespec t0 = now();
    long got2 = read(b, si, sizeof si);
    long ms = msec_since(t0);
    waitpid(c, 0, 0);
    printf("epoll: blocking signalfd: %ld then %ld signo %u after the child's kill (%d)\n", got,
           got2, si[0].ssi_signo, ms >= 40 && ms < 2000);
    close(b);
    close(s);
    close(ep);
    close(p[0]);
    close(p[1]);
    sigprocmask(SIG_UNBLOCK, &m, 0);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    creating();
    triggering();
    errors();
    nesting();
    descriptions();
    exclusive();
    kinds();
    waits();
    signalfds();
    if (failures == 0)
        printf("epoll: all ok\n");
    return failures != 0;
}
