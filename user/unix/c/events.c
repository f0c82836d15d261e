/* eventfd, timerfd and waitid as Linux: counters and semaphores, a read
 * that waits for another process's write, non-blocking EAGAIN; a periodic
 * timer's expirations, absolute times, timerfd_gettime, poll; waitid with
 * WNOWAIT, WNOHANG, CLD_EXITED and CLD_KILLED. Prints exact lines and
 * "events: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("events: FAILED line %d: ", __LINE__);                                          \
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

static volatile int usr2_count;
static void on_usr2(int s) {
    (void)s;
    usr2_count++;
}

static long msec_since(struct timespec a) {
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    uint64_t v;

    /* eventfd: counter, semaphore, limits. */
    int e = eventfd(3, 0);
    CHECK(e >= 0, "eventfd");
    v = 4;
    CHECK(write(e, &v, 8) == 8, "write");
    CHECK(read(e, &v, 8) == 8, "read");
    printf("events: eventfd read %llu\n", (unsigned long long)v);
    int s = eventfd(2, EFD_SEMAPHORE | EFD_NONBLOCK);
    uint64_t a1 = 0, a2 = 0;
    read(s, &a1, 8);
    read(s, &a2, 8);
    errno = 0;
    long third = read(s, &v, 8);
    printf("events: semaphore reads %llu %llu, then %ld %s\n", (unsigned long long)a1,
           (unsigned long long)a2, third, errno == EAGAIN ? "EAGAIN" : "?");
    REFUSED(read(s, &v, 4), EINVAL);
    v = UINT64_MAX;
    REFUSED(write(s, &v, 8), EINVAL);
    REFUSED(eventfd(0, 0x40), EINVAL);
    REFUSED(lseek(e, 0, SEEK_SET), ESPIPE);

    /* A read that waits for another process's write. */
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t c = fork();
    if (c == 0) {
        usleep(100000);
        uint64_t one = 7;
        write(e, &one, 8);
        _exit(0);
    }
    CHECK(read(e, &v, 8) == 8, "blocking read");
    long waited = msec_since(t0);
    printf("events: the child's write woke the read: %llu after 100 ms: %d\n",
           (unsigned long long)v, waited >= 90 && waited < 2000);
    waitpid(c, NULL, 0);
    struct pollfd pf = {.fd = e, .events = POLLIN | POLLOUT};
    poll(&pf, 1, 0);
    printf("events: empty eventfd polls %s\n", pf.revents == POLLOUT ? "POLLOUT" : "?");

    /* timerfd: periodic, then absolute. */
    int t = timerfd_create(CLOCK_MONOTONIC, 0);
    CHECK(t >= 0, "timerfd_create");
    struct itimerspec its = {.it_interval = {0, 50000000}, .it_value = {0, 50000000}};
    CHECK(timerfd_settime(t, 0, &its, NULL) == 0, "settime");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK(read(t, &v, 8) == 8, "timer read");
    long first = msec_since(t0);
    usleep(120000);
    CHECK(read(t, &v, 8) == 8, "timer read 2");
    printf("events: first expiry after 50 ms: %d; 120 ms later %llu more\n",
           first >= 40 && first < 1000, (unsigned long long)v);
    struct itimerspec cur;
    timerfd_gettime(t, &cur);
    printf("events: gettime interval %ld ns, value under 50 ms: %d\n", cur.it_interval.tv_nsec,
           cur.it_value.tv_nsec <= 50000000 && cur.it_value.tv_sec == 0);
    struct itimerspec off = {0};
    struct itimerspec was;
    timerfd_settime(t, 0, &off, &was);
    int tn = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK);
    REFUSED(read(tn, &v, 8), EAGAIN);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct itimerspec absit = {.it_value = {now.tv_sec, now.tv_nsec}};
    absit.it_value.tv_nsec += 30000000;
    if (absit.it_value.tv_nsec >= 1000000000) {
        absit.it_value.tv_sec++;
        absit.it_value.tv_nsec -= 1000000000;
    }
    CHECK(timerfd_settime(tn, TFD_TIMER_ABSTIME, &absit, NULL) == 0, "abs settime");
    struct pollfd tp = {.fd = tn, .events = POLLIN};
    int pr = poll(&tp, 1, 2000);
    CHECK(read(tn, &v, 8) == 8, "abs read");
    printf("events: absolute realtime timer polled %d, read %llu\n", pr, (unsigned long long)v);
    REFUSED(timerfd_create(42, 0), EINVAL);
    REFUSED(timerfd_settime(tn, 8, &absit, NULL), EINVAL);
    struct itimerspec badns = {.it_value = {0, 2000000000}};
    REFUSED(timerfd_settime(tn, 0, &badns, NULL), EINVAL);

    /* waitid. */
    pid_t k = fork();
    if (k == 0)
        _exit(42);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    CHECK(waitid(P_PID, k, &si, WEXITED | WNOWAIT) == 0, "waitid nowait");
    printf("events: waitid WNOWAIT pid ok %d code %d status %d\n", si.si_pid == k,
           si.si_code, si.si_status);
    memset(&si, 0, sizeof si);
    CHECK(waitid(P_ALL, 0, &si, WEXITED) == 0, "waitid");
    printf("events: then reaped: pid ok %d status %d\n", si.si_pid == k, si.si_status);
    pid_t sl = fork();
    if (sl == 0) {
        pause();
        _exit(0);
    }
    memset(&si, 0xff, sizeof si);
    CHECK(waitid(P_PID, sl, &si, WEXITED | WNOHANG) == 0, "waitid nohang");
    printf("events: WNOHANG with none ended: si_pid %d\n", si.si_pid);
    kill(sl, SIGTERM);
    CHECK(waitid(P_PID, sl, &si, WEXITED) == 0, "waitid killed");
    printf("events: killed child: code %s status %d\n", si.si_code == CLD_KILLED ? "CLD_KILLED" : "?",
           si.si_status);
    REFUSED(waitid(P_ALL, 0, &si, 0), EINVAL);
    REFUSED(waitid(7, 0, &si, WEXITED), EINVAL);
    REFUSED(waitid(P_ALL, 0, &si, WEXITED), ECHILD);

    /* POSIX timers. */
    signal(SIGUSR2, on_usr2);
    struct sigevent sev = {0};
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGUSR2;
    timer_t tid;
    CHECK(timer_create(CLOCK_MONOTONIC, &sev, &tid) == 0, "timer_create");
    struct itimerspec pit = {.it_interval = {0, 20000000}, .it_value = {0, 20000000}};
    CHECK(timer_settime(tid, 0, &pit, NULL) == 0, "timer_settime");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (msec_since(t0) < 110)
        pause();
    struct itimerspec pg;
    timer_gettime(tid, &pg);
    printf("events: a 20 ms timer signalled at least 4 times in 110 ms: %d; interval %ld\n",
           usr2_count >= 4, pg.it_interval.tv_nsec);
    sigset_t blk;
    sigemptyset(&blk);
    sigaddset(&blk, SIGUSR2);
    sigprocmask(SIG_BLOCK, &blk, NULL);
    usleep(120000);
    int before = usr2_count;
    sigprocmask(SIG_UNBLOCK, &blk, NULL);
    int ov = timer_getoverrun(tid);
    printf("events: blocked 120 ms: one delivery %d, overrun count valid %d\n",
           usr2_count == before + 1, ov >= 0);
    CHECK(timer_delete(tid) == 0, "timer_delete");
    REFUSED(timer_gettime(tid, &pg), EINVAL);
    timer_t bad;
    REFUSED(timer_create(77, &sev, &bad), EINVAL);
    struct sigevent none = {0};
    none.sigev_notify = SIGEV_NONE;
    timer_t quiet;
    CHECK(timer_create(CLOCK_REALTIME, &none, &quiet) == 0, "timer SIGEV_NONE");
    struct itimerspec one = {.it_value = {5, 0}};
    timer_settime(quiet, 0, &one, NULL);
    timer_gettime(quiet, &pg);
    printf("events: SIGEV_NONE timer has %ld s left\n", (long)pg.it_value.tv_sec);

    printf(failures ? "events: %d failures\n" : "events: all ok\n", failures);
    return failures != 0;
}
