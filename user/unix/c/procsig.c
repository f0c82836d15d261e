/* Signals, waiting, scheduling and clocks where Linux has exact rules:
 * the sched_* family (policies, parameters, sched_setattr/getattr,
 * sched_rr_get_interval, permissions), clock ids (CPU-time clocks, bad
 * ids), POSIX timers' bad arguments and saturated overrun counts, a timer
 * following a change of the clock, SA_RESETHAND, sigpending,
 * rt_sigtimedwait, rt_sigqueueinfo's permission rule, wait4's INT_MIN,
 * setpgid's rules, core dumps. Written from the Linux man pages. Prints
 * exact lines and "procsig: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("procsig: FAILED line %d: ", __LINE__);                                         \
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

struct sched_attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
    uint32_t util_min, util_max;
};
#define SCHED_DEADLINE 6

static long sys(long n, long a, long b, long c, long d) { return syscall(n, a, b, c, d); }

/* A pid no process has. */
static int unused_pid(void) {
    for (int p = 30000; p < 32768; p++)
        if (kill(p, 0) == -1 && errno == ESRCH)
            return p;
    return 32767;
}

static void test_sched(void) {
    REFUSED(sched_get_priority_max(1000), EINVAL);
    REFUSED(sched_get_priority_min(1000), EINVAL);
    REFUSED(sched_get_priority_max(4), EINVAL);
    printf("procsig: priorities FIFO %d..%d, OTHER %d..%d, DEADLINE max %d\n",
           sched_get_priority_min(SCHED_FIFO), sched_get_priority_max(SCHED_FIFO),
           sched_get_priority_min(SCHED_OTHER), sched_get_priority_max(SCHED_OTHER),
           sched_get_priority_max(SCHED_DEADLINE));
    struct sched_param p = {.sched_priority = 0};
    REFUSED(sys(SYS_sched_getparam, -1, (long)&p, 0, 0), EINVAL);
    REFUSED(sys(SYS_sched_getparam, 0, 0, 0, 0), EINVAL);
    REFUSED(sys(SYS_sched_setparam, -1, (long)&p, 0, 0), EINVAL);
    REFUSED(sys(SYS_sched_getparam, unused_pid(), (long)&p, 0, 0), ESRCH);
    p.sched_priority = 1;
    REFUSED(sys(SYS_sched_setparam, 0, (long)&p, 0, 0), EINVAL); /* OTHER takes 0 only */
    p.sched_priority = 0;
    REFUSED(sys(SYS_sched_setscheduler, 0, SCHED_FIFO, (long)&p, 0), EINVAL);
    REFUSED(sys(SYS_sched_setscheduler, 0, 99999, (long)&p, 0), EINVAL);
    p.sched_priority = 30;
    CHECK(sys(SYS_sched_setscheduler, 0, SCHED_FIFO, (long)&p, 0) == 0, "setscheduler FIFO");
    struct timespec ts = {99, 99};
    CHECK(sys(SYS_sched_rr_get_interval, 0, (long)&ts, 0, 0) == 0, "rr_get_interval");
    printf("procsig: FIFO 30: policy %ld, interval %ld.%09ld\n",
           sys(SYS_sched_getscheduler, 0, 0, 0, 0), (long)ts.tv_sec, ts.tv_nsec);
    CHECK(sys(SYS_sched_setscheduler, 0, SCHED_RR, (long)&p, 0) == 0, "setscheduler RR");
    CHECK(sys(SYS_sched_rr_get_interval, 0, (long)&ts, 0, 0) == 0, "rr_get_interval");
    printf("procsig: RR interval %ld.%09ld\n", (long)ts.tv_sec, ts.tv_nsec);
    REFUSED(sys(SYS_sched_rr_get_interval, -1, (long)&ts, 0, 0), EINVAL);

    /* A child sets its parent's priority; then, as another user, may not. */
    pid_t c = fork();
    if (c == 0) {
        struct sched_param q = {.sched_priority = 5};
        if (sys(SYS_sched_setparam, getppid(), (long)&q, 0, 0) != 0)
            _exit(1);
        if (setuid(1000) != 0)
            _exit(2);
        q.sched_priority = 6;
        if (sys(SYS_sched_setparam, getppid(), (long)&q, 0, 0) != -1 || errno != EPERM)
            _exit(3);
        q.sched_priority = 1;
        /* Real-time without RLIMIT_RTPRIO: EPERM. */
        if (sys(SYS_sched_setscheduler, 0, SCHED_FIFO, (long)&q, 0) != -1 || errno != EPERM)
            _exit(4);
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child sched status %#x", st);
    p.sched_priority = 0;
    sys(SYS_sched_getparam, 0, (long)&p, 0, 0);
    printf("procsig: priority set by the child: %d; as another user EPERM ok %d\n",
           p.sched_priority, WEXITSTATUS(st) == 0);

    /* sched_setattr / sched_getattr. */
    struct sched_attr a = {.size = sizeof a, .policy = SCHED_DEADLINE,
                           .runtime = 10000000, .deadline = 30000000, .period = 30000000};
    CHECK(sys(SYS_sched_setattr, 0, (long)&a, 0, 0) == 0, "setattr deadline");
    struct sched_attr g;
    memset(&g, 0xff, sizeof g);
    CHECK(sys(SYS_sched_getattr, 0, (long)&g, sizeof g, 0) == 0, "getattr");
    printf("procsig: getattr size %u policy %u runtime %llu deadline %llu period %llu\n", g.size,
           g.policy, (unsigned long long)g.runtime, (unsigned long long)g.deadline,
           (unsigned long long)g.period);
    REFUSED(sys(SYS_sched_getattr, unused_pid(), (long)&g, sizeof g, 0), ESRCH);
    REFUSED(sys(SYS_sched_getattr, 0, 0, sizeof g, 0), EINVAL);
    REFUSED(sys(SYS_sched_getattr, 0, (long)&g, 47, 0), EINVAL);
    REFUSED(sys(SYS_sched_getattr, 0, (long)&g, sizeof g, 1000), EINVAL);
    REFUSED(sys(SYS_sched_setattr, 0, (long)&a, 1000, 0), EINVAL);
    REFUSED(sys(SYS_sched_setattr, 0, 0, 0, 0), EINVAL);
    REFUSED(sys(SYS_sched_setattr, unused_pid(), (long)&a, 0, 0), ESRCH);
    a.runtime = 40000000; /* runtime > deadline */
    REFUSED(sys(SYS_sched_setattr, 0, (long)&a, 0, 0), EINVAL);
    /* A bigger struct with a nonzero byte past what the kernel knows. */
    char big[72];
    memset(big, 0, sizeof big);
    struct sched_attr o = {.size = sizeof big, .policy = SCHED_OTHER, .nice = 3};
    memcpy(big, &o, sizeof o);
    big[70] = 1;
    REFUSED(sys(SYS_sched_setattr, 0, (long)big, 0, 0), E2BIG);
    uint32_t told;
    memcpy(&told, big, 4);
    big[70] = 0;
    CHECK(sys(SYS_sched_setattr, 0, (long)big, 0, 0) == 0, "setattr OTHER nice 3");
    CHECK(sys(SYS_sched_getattr, 0, (long)&g, sizeof g, 0) == 0, "getattr");
    printf("procsig: E2BIG told size %u; OTHER nice %d policy %ld getpriority %d\n", told, g.nice,
           sys(SYS_sched_getscheduler, 0, 0, 0, 0), getpriority(PRIO_PROCESS, 0));
    setpriority(PRIO_PROCESS, 0, 0);
}

static void test_clocks(void) {
    struct timespec t;
    REFUSED(clock_getres(-1, &t), EINVAL);
    REFUSED(clock_gettime(-1, &t), EINVAL);
    REFUSED(clock_gettime(10, &t), EINVAL);
    CHECK(clock_gettime(CLOCK_BOOTTIME_ALARM, &t) == 0, "BOOTTIME_ALARM");
    CHECK(clock_gettime(CLOCK_REALTIME_ALARM, &t) == 0, "REALTIME_ALARM");
    CHECK(clock_gettime(CLOCK_TAI, &t) == 0, "TAI");
    clockid_t cid;
    CHECK(clock_getcpuclockid(getppid() > 0 ? getpid() : 0, &cid) == 0, "getcpuclockid");
    CHECK(clock_gettime(cid, &t) == 0, "own process clock");
    /* Another process's CPU clock: one that exists, then one that does not. */
    pid_t c = fork();
    if (c == 0) {
        pause();
        _exit(0);
    }
    clockid_t other = (~(clockid_t)c << 3) | 2;
    CHECK(clock_gettime(other, &t) == 0, "child's process clock");
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    REFUSED(clock_gettime(other, &t), EINVAL);
    REFUSED(clock_getres(other, &t), EINVAL);
    struct timespec req = {0, 1000000};
    errno = 0;
    long r = sys(SYS_clock_nanosleep, CLOCK_THREAD_CPUTIME_ID, 0, (long)&req, 0);
    printf("procsig: clock_nanosleep THREAD_CPUTIME %ld errno EOPNOTSUPP %d\n", r,
           errno == EOPNOTSUPP);
    req.tv_nsec = -1;
    REFUSED(sys(SYS_clock_nanosleep, CLOCK_REALTIME, 0, (long)&req, 0), EINVAL);
    printf("procsig: clock ids ok\n");
}

static volatile int usr1_seen;
static void on_usr1(int s) {
    (void)s;
    usr1_seen++;
}

static void test_timers(void) {
    int id = -1;
    struct itimerspec its;
    struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGUSR1};
    CHECK(sys(SYS_timer_create, CLOCK_REALTIME, (long)&ev, (long)&id, 0) == 0, "timer_create");
    REFUSED(sys(SYS_timer_gettime, -1, (long)&its, 0, 0), EINVAL);
    REFUSED(sys(SYS_timer_gettime, id, 0, 0, 0), EFAULT);
    REFUSED(sys(SYS_timer_settime, id, 0, 0, (long)&its), EINVAL);
    REFUSED(sys(SYS_timer_settime, -1, 0, (long)&its, 0), EINVAL);
    REFUSED(sys(SYS_timer_create, 10, (long)&ev, (long)&id, 0), EINVAL);

    /* First expiry 2.5 s ago, every nanosecond: the count saturates at
     * DELAYTIMER_MAX (INT_MAX). */
    sigset_t s1;
    sigemptyset(&s1);
    sigaddset(&s1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &s1, NULL);
    clock_gettime(CLOCK_REALTIME, &its.it_value);
    its.it_value.tv_sec -= 3;
    its.it_value.tv_nsec = 500000000;
    its.it_interval.tv_sec = 0;
    its.it_interval.tv_nsec = 1;
    CHECK(sys(SYS_timer_settime, id, TIMER_ABSTIME, (long)&its, 0) == 0, "settime");
    siginfo_t si;
    struct timespec to = {2, 0};
    int sig = sigtimedwait(&s1, &si, &to);
    long over = sys(SYS_timer_getoverrun, id, 0, 0, 0);
    printf("procsig: overrun after a past start %s (signal %d)\n",
           over == INT_MAX ? "INT_MAX" : "wrong", sig);
    memset(&its, 0, sizeof its);
    sys(SYS_timer_settime, id, 0, (long)&its, 0);
    while (sigtimedwait(&s1, &si, &(struct timespec){0, 0}) > 0)
        ;
    CHECK(sys(SYS_timer_getoverrun, id, 0, 0, 0) == 0, "overrun after disarm");
    REFUSED(sys(SYS_timer_getoverrun, id + 1, 0, 0, 0), EINVAL);

    /* A timer at an absolute realtime 100 s ahead fires when the clock is
     * set past it (root). */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    its.it_value = now;
    its.it_value.tv_sec += 100;
    CHECK(sys(SYS_timer_settime, id, TIMER_ABSTIME, (long)&its, 0) == 0, "settime");
    struct timespec ahead = now;
    ahead.tv_sec += 99;
    ahead.tv_nsec = now.tv_nsec;
    CHECK(clock_settime(CLOCK_REALTIME, &ahead) == 0, "settime clock");
    to.tv_sec = 3;
    sig = sigtimedwait(&s1, &si, &to);
    struct timespec end;
    clock_gettime(CLOCK_REALTIME, &end);
    long late_ms = (end.tv_sec - ahead.tv_sec) * 1000 + (end.tv_nsec - ahead.tv_nsec) / 1000000;
    printf("procsig: timer after the clock was set: signal %d after 1 s: %d\n", sig,
           late_ms >= 990 && late_ms < 2500);
    end.tv_sec -= 100;
    clock_settime(CLOCK_REALTIME, &end);
    sys(SYS_timer_delete, id, 0, 0, 0);
    sigprocmask(SIG_UNBLOCK, &s1, NULL);
}

static volatile int alrm_seen;
static void on_alrm(int s) {
    (void)s;
    alrm_seen++;
}

static void test_itimers(void) {
    struct itimerval v = {{100, 5000}, {200, 0}}, g;
    for (int w = ITIMER_REAL; w <= ITIMER_PROF; w++) {
        CHECK(setitimer(w, &v, NULL) == 0, "setitimer %d", w);
        memset(&g, 0, sizeof g);
        CHECK(getitimer(w, &g) == 0, "getitimer %d", w);
        CHECK(g.it_interval.tv_sec == 100 && g.it_interval.tv_usec == 5000 &&
                  g.it_value.tv_sec <= 200 && g.it_value.tv_sec >= 199,
              "timer %d: %ld.%06ld / %ld.%06ld", w, (long)g.it_interval.tv_sec,
              (long)g.it_interval.tv_usec, (long)g.it_value.tv_sec, (long)g.it_value.tv_usec);
        struct itimerval z = {{0, 0}, {0, 0}};
        CHECK(setitimer(w, &z, &g) == 0 && g.it_interval.tv_sec == 100, "old value %d", w);
    }
    REFUSED(sys(SYS_getitimer, 3, (long)&g, 0, 0), EINVAL);
    REFUSED(sys(SYS_getitimer, -1, (long)&g, 0, 0), EINVAL);
    REFUSED(sys(SYS_getitimer, ITIMER_REAL, 0, 0, 0), EFAULT);
    REFUSED(sys(SYS_getitimer, ITIMER_VIRTUAL, -1, 0, 0), EFAULT);
    REFUSED(sys(SYS_setitimer, ITIMER_VIRTUAL, (long)&v, -1, 0), EFAULT);
    struct itimerval bad = {{0, 1000000}, {1, 0}};
    REFUSED(setitimer(ITIMER_REAL, &bad, NULL), EINVAL);
    /* A periodic ITIMER_REAL: 20 ms, then every 20 ms. */
    signal(SIGALRM, on_alrm);
    struct itimerval p = {{0, 20000}, {0, 20000}};
    setitimer(ITIMER_REAL, &p, NULL);
    struct timespec t = {0, 150000000};
    while (nanosleep(&t, &t) == -1 && errno == EINTR)
        ;
    struct itimerval z = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &z, NULL);
    signal(SIGALRM, SIG_DFL);
    printf("procsig: itimers keep intervals; periodic ITIMER_REAL rang 4+ times: %d\n",
           alrm_seen >= 4);
}

static void on_info(int s, siginfo_t *i, void *u) {
    (void)i;
    (void)u;
    (void)s;
    usr1_seen++;
}

static void test_signals(void) {
    /* SA_RESETHAND keeps SA_SIGINFO (only the handler goes back). */
    struct sigaction sa = {.sa_sigaction = on_info, .sa_flags = SA_SIGINFO | SA_RESETHAND};
    sigaction(SIGUSR2, &sa, NULL);
    raise(SIGUSR2);
    struct sigaction old;
    sigaction(SIGUSR2, NULL, &old);
    printf("procsig: after SA_RESETHAND: SIG_DFL %d SA_SIGINFO kept %d\n",
           old.sa_handler == SIG_DFL, (old.sa_flags & SA_SIGINFO) != 0);

    /* sigpending: exactly the raised, blocked signals. */
    sigset_t b, p;
    sigemptyset(&b);
    sigaddset(&b, SIGUSR1);
    sigaddset(&b, SIGUSR2);
    sigprocmask(SIG_BLOCK, &b, NULL);
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    sigpending(&p);
    int n = 0;
    for (int s = 1; s < 65; s++)
        n += sigismember(&p, s) == 1;
    printf("procsig: sigpending after raise: USR1 %d, %d in all\n", sigismember(&p, SIGUSR1), n);

    /* sigwaitinfo takes it without the handler. */
    siginfo_t si;
    usr1_seen = 0;
    int s = sigwaitinfo(&b, &si);
    printf("procsig: sigwaitinfo %d si_signo %d handler ran %d\n", s, si.si_signo, usr1_seen);
    struct timespec to = {0, 50000000};
    REFUSED(sigtimedwait(&b, &si, &to), EAGAIN);
    to.tv_nsec = 1000000000;
    REFUSED(sigtimedwait(&b, &si, &to), EINVAL);
    REFUSED(sys(SYS_rt_sigtimedwait, (long)&b, 0, 0, 4), EINVAL);
    /* Another process's signal ends the wait. */
    pid_t c = fork();
    if (c == 0) {
        usleep(50000);
        kill(getppid(), SIGUSR2);
        _exit(0);
    }
    to.tv_sec = 5;
    to.tv_nsec = 0;
    s = sigtimedwait(&b, &si, &to);
    waitpid(c, NULL, 0);
    printf("procsig: sigtimedwait woken by the child: %d\n", s);

    /* rt_sigqueueinfo: a positive si_code only to oneself. */
    c = fork();
    if (c == 0) {
        pause();
        _exit(0);
    }
    siginfo_t q;
    memset(&q, 0, sizeof q);
    q.si_signo = SIGUSR1;
    q.si_code = SI_USER;
    REFUSED(sys(SYS_rt_sigqueueinfo, c, SIGUSR1, (long)&q, 0), EPERM);
    q.si_code = SI_QUEUE;
    REFUSED(sys(SYS_rt_sigqueueinfo, -1, SIGUSR1, (long)&q, 0), ESRCH);
    REFUSED(sys(SYS_rt_sigqueueinfo, 0, SIGUSR1, (long)&q, 0), ESRCH);
    REFUSED(sys(SYS_rt_tgsigqueueinfo, -1, 1, SIGUSR1, (long)&q), EINVAL);
    REFUSED(sys(SYS_rt_sigqueueinfo, c, SIGUSR1, 0, 0), EFAULT);
    q.si_code = SI_USER;
    q.si_code = SI_TKILL;
    REFUSED(sys(SYS_rt_sigqueueinfo, c, SIGUSR1, (long)&q, 0), EPERM);
    q.si_code = SI_QUEUE;
    REFUSED(sys(SYS_rt_sigqueueinfo, -1, SIGUSR1, (long)&q, 0), ESRCH);
    REFUSED(sys(SYS_rt_sigqueueinfo, 0, SIGUSR1, (long)&q, 0), ESRCH);
    REFUSED(sys(SYS_rt_tgsigqueueinfo, -1, 1, SIGUSR1, (long)&q), EINVAL);
    REFUSED(sys(SYS_rt_sigqueueinfo, c, SIGUSR1, 0, 0), EFAULT);
    q.si_code = SI_USER;
    CHECK(sys(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, (long)&q, 0) == 0, "to oneself");
    CHECK(sigqueue(c, SIGTERM, (union sigval){.sival_int = 7}) == 0, "sigqueue");
    int st;
    waitpid(c, &st, 0);
    s = sigwaitinfo(&b, &si);
    printf("procsig: sigqueue ended the child: signal %d; own queued %d\n",
           WIFSIGNALED(st) ? WTERMSIG(st) : 0, s);
    /* What the sender said comes with a signal queued to oneself. */
    siginfo_t v;
    memset(&v, 0, sizeof v);
    v.si_signo = SIGUSR2;
    v.si_code = SI_QUEUE;
    v.si_pid = 4242;
    v.si_value.sival_int = 77;
    CHECK(sys(SYS_rt_sigqueueinfo, getpid(), SIGUSR2, (long)&v, 0) == 0, "queued to oneself");
    memset(&si, 0, sizeof si);
    s = sigwaitinfo(&b, &si);
    printf("procsig: own queued signal %d code SI_QUEUE %d pid %d value %d\n", s,
           si.si_code == SI_QUEUE, si.si_pid, si.si_value.sival_int);
    sigprocmask(SIG_UNBLOCK, &b, NULL);
    signal(SIGUSR1, SIG_DFL);
}

static void test_wait_pgid(const char *self) {
    REFUSED(wait4(INT_MIN, NULL, 0, NULL), ESRCH);
    REFUSED(waitpid(INT_MIN, NULL, 0), ESRCH);
    REFUSED(waitpid(1 + unused_pid(), NULL, 0), ECHILD);
    REFUSED(setpgid(0, -1), EINVAL);
    /* A child in a session of its own. */
    int fds[2];
    pipe(fds);
    pid_t c = fork();
    if (c == 0) {
        setsid();
        write(fds[1], "x", 1);
        pause();
        _exit(0);
    }
    char x;
    read(fds[0], &x, 1);
    REFUSED(setpgid(c, getpgrp()), EPERM);
    REFUSED(setpgid(0, c), EPERM);
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    /* A child that has run execve. */
    c = fork();
    if (c == 0) {
        execl(self, "procsig", "pause", (char *)0);
        _exit(9);
    }
    /* Wait until the child is the new program (its /proc cmdline). */
    char path[64], buf[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", c);
    for (int i = 0; i < 200; i++) {
        int f = open(path, O_RDONLY);
        ssize_t k = f >= 0 ? read(f, buf, sizeof buf) : -1;
        if (f >= 0)
            close(f);
        if (k > 8 && memcmp(buf + 8, "pause", 5) == 0)
            break;
        usleep(10000);
    }
    REFUSED(setpgid(c, c), EACCES);
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    printf("procsig: wait4 and setpgid rules ok\n");
}

static void test_jobs(void) {
    pid_t c = fork();
    if (c == 0) {
        kill(getpid(), SIGSTOP);
        _exit(7);
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    CHECK(waitid(P_PID, c, &si, WSTOPPED | WNOWAIT) == 0, "waitid WSTOPPED");
    printf("procsig: waitid stopped: pid ok %d code CLD_STOPPED %d status %d signo %d\n",
           si.si_pid == c, si.si_code == CLD_STOPPED, si.si_status, si.si_signo);
    int st = 0;
    CHECK(waitpid(c, &st, WUNTRACED) == c, "waitpid WUNTRACED");
    printf("procsig: wait4 WUNTRACED: stopped %d by %d\n", WIFSTOPPED(st), WSTOPSIG(st));
    CHECK(waitpid(c, &st, WUNTRACED | WNOHANG) == 0, "stop reported once");
    kill(c, SIGCONT);
    memset(&si, 0, sizeof si);
    CHECK(waitid(P_PID, c, &si, WCONTINUED) == 0, "waitid WCONTINUED");
    printf("procsig: waitid continued: code CLD_CONTINUED %d status %d\n",
           si.si_code == CLD_CONTINUED, si.si_status);
    CHECK(waitpid(c, &st, 0) == c, "waitpid");
    printf("procsig: then it exits %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    /* WCONTINUED through wait4, and SIGKILL ends a stopped child. */
    c = fork();
    if (c == 0) {
        raise(SIGSTOP);
        /* Time for the parent's wait to see it continued before it exits
         * (an exit first is reported instead, as on Linux). */
        usleep(200000);
        _exit(8);
    }
    waitpid(c, &st, WUNTRACED);
    kill(c, SIGCONT);
    CHECK(waitpid(c, &st, WCONTINUED) == c && WIFCONTINUED(st), "WIFCONTINUED %#x", st);
    waitpid(c, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 8, "exit 8");
    c = fork();
    if (c == 0) {
        raise(SIGSTOP);
        _exit(9);
    }
    waitpid(c, &st, WUNTRACED);
    kill(c, SIGKILL);
    waitpid(c, &st, 0);
    printf("procsig: a stopped child killed: signal %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* A shared futex's wait in a threaded process ends at another thread's
 * FUTEX_WAKE though the word still holds the value (LTP's checkpoints). */
static volatile uint32_t *fword;
static void *waker(void *a) {
    (void)a;
    usleep(50000);
    long r;
    int tries = 0;
    do {
        r = syscall(SYS_futex, fword, 1 /* FUTEX_WAKE */, 1, 0, 0, 0);
        if (r != 1)
            usleep(1000);
    } while (r != 1 && ++tries < 2000);
    return (void *)r;
}

static void test_futex(void) {
    int fd = open("/tmp/procsig-futex", O_RDWR | O_CREAT, 0600);
    ftruncate(fd, 4096);
    fword = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    pthread_t t;
    pthread_create(&t, 0, waker, 0);
    struct timespec to = {5, 0};
    long r = syscall(SYS_futex, fword, 0 /* FUTEX_WAIT */, *fword, &to, 0, 0);
    void *woke;
    pthread_join(t, &woke);
    printf("procsig: shared futex woken by a thread: wait %ld wake %ld\n", r, (long)woke);
    munmap((void *)fword, 4096);
    close(fd);
    unlink("/tmp/procsig-futex");
}

static void test_core(void) {
    mkdir("/tmp/cores", 0777);
    unlink("/tmp/cores/core");
    pid_t c = fork();
    if (c == 0) {
        struct rlimit rl = {1 << 20, 1 << 20};
        setrlimit(RLIMIT_CORE, &rl);
        chdir("/tmp/cores");
        abort();
    }
    int st;
    waitpid(c, &st, 0);
    unsigned char h[20] = {0};
    int f = open("/tmp/cores/core", O_RDONLY);
    ssize_t k = f >= 0 ? read(f, h, sizeof h) : -1;
    if (f >= 0)
        close(f);
    printf("procsig: abort: signal %d core bit %d, file ELF %d type %d\n", WTERMSIG(st),
           WCOREDUMP(st) != 0, k == 20 && memcmp(h, "\177ELF", 4) == 0, h[16]);
    /* Without the limit raised: no core. SIGTERM never dumps. */
    c = fork();
    if (c == 0) {
        chdir("/tmp/cores");
        unlink("core");
        raise(SIGQUIT);
        _exit(0);
    }
    waitpid(c, &st, 0);
    int none = access("/tmp/cores/core", F_OK) != 0;
    c = fork();
    if (c == 0) {
        struct rlimit rl = {1 << 20, 1 << 20};
        setrlimit(RLIMIT_CORE, &rl);
        chdir("/tmp/cores");
        raise(SIGTERM);
        _exit(0);
    }
    int st2;
    waitpid(c, &st2, 0);
    printf("procsig: RLIMIT_CORE 0 SIGQUIT: signal %d core bit %d, no file %d; SIGTERM core bit "
           "%d\n",
           WTERMSIG(st), WCOREDUMP(st) != 0, none, WCOREDUMP(st2) != 0);
    struct rlimit rl;
    getrlimit(RLIMIT_CORE, &rl);
    printf("procsig: default RLIMIT_CORE %llu\n", (unsigned long long)rl.rlim_cur);
}

int main(int argc, char **argv) {
    (void)argv;
    if (argc > 1 && strcmp(argv[1], "pause") == 0) {
        pause();
        return 0;
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    test_sched();
    test_clocks();
    test_timers();
    test_signals();
    test_itimers();
    test_wait_pgid("/bin/procsig");
    test_jobs();
    test_core();
    test_futex();
    if (failures == 0)
        printf("procsig: all ok\n");
    return failures != 0;
}
