/* POSIX message queues as Linux documents them (man 7 mq_overview, man 3
 * mq_open mq_send mq_receive mq_notify mq_getattr): attributes, priority
 * order, messages past one piece, full and empty queues with O_NONBLOCK
 * and with timeouts, a receiver and a sender woken by another process,
 * EINTR, notification by signal, unlinking, permissions for a user who is
 * not root and its limit, and each bad argument's errno. Run as pid 1
 * (root); prints one line per part and "mqueue: all ok" at the end. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("mqueue: FAILED line %d: ", __LINE__);                                          \
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

static pid_t spawn(void) {
    fflush(stdout);
    pid_t c = fork();
    if (c == 0)
        failures = 0;
    return c;
}

static int run(void (*fn)(void)) {
    pid_t c = spawn();
    if (c == 0) {
        fn();
        fflush(stdout);
        _exit(failures ? 1 : 0);
    }
    int st = -1;
    waitpid(c, &st, 0);
    return st;
}

static long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* An absolute CLOCK_REALTIME time `ms` from now. */
static struct timespec in_ms(long ms) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += (ms % 1000) * 1000000;
    t.tv_sec += ms / 1000 + t.tv_nsec / 1000000000;
    t.tv_nsec %= 1000000000;
    return t;
}

/* Waits until process `pid` has a call parked (its /proc state S). */
static int wait_parked(pid_t pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    for (int i = 0; i < 400; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = 0;
            char *s = strstr(buf, "State:\t");
            if (s && s[7] == 'S')
                return 1;
        }
        struct timespec t = {0, 5000000};
        nanosleep(&t, NULL);
    }
    return 0;
}

static void become(uid_t u) {
    CHECK(setgroups(0, NULL) == 0, "setgroups");
    CHECK(setgid(u) == 0, "setgid");
    CHECK(setuid(u) == 0, "setuid");
}

static char buf[8192];

static void bad_arguments(void) {
    struct mq_attr a = {0};
    REFUSED(mq_open("/", O_RDONLY), ENOENT);
    REFUSED(mq_open("/.", O_RDONLY), EACCES);
    REFUSED(mq_open("/a/b", O_RDWR | O_CREAT, 0600, NULL), EACCES);
    REFUSED(mq_open("/nope", O_RDONLY), ENOENT);
    a.mq_maxmsg = 0;
    a.mq_msgsize = 10;
    REFUSED(mq_open("/q", O_RDWR | O_CREAT, 0600, &a), EINVAL);
    a.mq_maxmsg = 10;
    a.mq_msgsize = -1;
    REFUSED(mq_open("/q", O_RDWR | O_CREAT, 0600, &a), EINVAL);
    char longname[300];
    longname[0] = '/';
    memset(longname + 1, 'x', 290);
    longname[291] = 0;
    REFUSED(mq_open(longname, O_RDWR | O_CREAT, 0600, NULL), ENAMETOOLONG);
    mqd_t q = mq_open("/q", O_RDWR | O_CREAT | O_EXCL, 0600, NULL);
    CHECK(q >= 0, "mq_open /q");
    REFUSED(mq_open("/q", O_RDWR | O_CREAT | O_EXCL, 0600, NULL), EEXIST);
    REFUSED(mq_open("/q", O_RDWR | O_WRONLY), EINVAL);
    mqd_t ro = mq_open("/q", O_RDONLY), wo = mq_open("/q", O_WRONLY);
    REFUSED(mq_send(ro, "x", 1, 0), EBADF);
    REFUSED(mq_receive(wo, buf, sizeof buf, NULL), EBADF);
    REFUSED(mq_send(12345, "x", 1, 0), EBADF);
    REFUSED(mq_send(1, "x", 1, 0), EBADF);
    REFUSED(mq_send(q, buf, 8193, 0), EMSGSIZE);
    REFUSED(mq_send(q, "x", 1, 32768), EINVAL);
    REFUSED(mq_receive(q, buf, 100, NULL), EMSGSIZE);
    struct timespec bad = {0, 2000000000};
    REFUSED(mq_timedsend(q, "x", 1, 0, &bad), EINVAL);
    REFUSED(mq_send(q, (char *)8, 1, 0), EFAULT);
    a.mq_flags = O_APPEND;
    REFUSED(mq_setattr(q, &a, NULL), EINVAL);
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = 65;
    REFUSED(mq_notify(q, &ev), EINVAL);
    REFUSED(mq_unlink("/nope"), ENOENT);
    mq_close(ro);
    mq_close(wo);
    mq_close(q);
    CHECK(mq_unlink("/q") == 0, "unlink /q");
    printf("mqueue: bad arguments checked\n");
}

static mqd_t q;

static void receiver(void) {
    unsigned p;
    long n = mq_receive(q, buf, sizeof buf, &p);
    buf[n > 0 ? n : 0] = 0;
    printf("mqueue: blocked receive got %ld bytes \"%s\" prio %u\n", n, buf, p);
}

static void sender(void) {
    CHECK(mq_send(q, "late", 4, 1) == 0, "blocked sender");
}

static volatile int got_signal;
static void on_usr1(int s) {
    (void)s;
    got_signal++;
}

static void intr_receiver(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    errno = 0;
    long n = mq_receive(q, buf, sizeof buf, NULL);
    _exit(n == -1 && errno == EINTR && got_signal ? 0 : 1);
}

static void other_notifier(void) {
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR2;
    REFUSED(mq_notify(q, &ev), EBUSY);
}

static void queues(void) {
    struct mq_attr a;
    q = mq_open("/work", O_RDWR | O_CREAT, 0600, NULL);
    CHECK(q >= 0, "mq_open /work");
    mq_getattr(q, &a);
    printf("mqueue: defaults maxmsg %ld msgsize %ld curmsgs %ld flags %ld, cloexec %d\n",
           a.mq_maxmsg, a.mq_msgsize, a.mq_curmsgs, a.mq_flags, fcntl(q, F_GETFD) & FD_CLOEXEC);
    mq_send(q, "low", 3, 1);
    mq_send(q, "high", 4, 5);
    mq_send(q, "mid", 3, 3);
    mq_send(q, "high2", 5, 5);
    mq_getattr(q, &a);
    long cur = a.mq_curmsgs;
    printf("mqueue: %ld queued; received", cur);
    for (int i = 0; i < 4; i++) {
        unsigned p;
        long n = mq_receive(q, buf, sizeof buf, &p);
        buf[n > 0 ? n : 0] = 0;
        printf(" %u %s", p, buf);
    }
    printf("\n");
    /* Past one piece. */
    static char big[8192], back[8192];
    for (int i = 0; i < 8192; i++)
        big[i] = (char)(i * 13 + i / 256);
    CHECK(mq_send(q, big, 8192, 7) == 0, "send 8192");
    unsigned p;
    long n = mq_receive(q, back, sizeof back, &p);
    printf("mqueue: %ld-byte message same %d prio %u\n", n, memcmp(big, back, 8192) == 0, p);
    /* Full: a queue of two. */
    a.mq_maxmsg = 2;
    a.mq_msgsize = 16;
    mqd_t s = mq_open("/small", O_RDWR | O_CREAT | O_NONBLOCK, 0600, &a);
    mq_send(s, "a", 1, 0);
    mq_send(s, "b", 1, 0);
    REFUSED(mq_send(s, "c", 1, 0), EAGAIN);
    struct mq_attr blocking = {0};
    mq_setattr(s, &blocking, &a);
    long was = a.mq_flags;
    long t0 = now_ms();
    struct timespec t = in_ms(50);
    errno = 0;
    int r = mq_timedsend(s, "c", 1, 0, &t);
    long dt = now_ms() - t0;
    printf("mqueue: full: nonblocking flag was %ld, EAGAIN; timed send %s in time %d\n",
           was & O_NONBLOCK ? 1L : 0L, r == -1 && errno == ETIMEDOUT ? "ETIMEDOUT" : "no",
           dt >= 40 && dt < 5000);
    /* Empty. */
    mq_receive(s, buf, 16, NULL);
    mq_receive(s, buf, 16, NULL);
    t0 = now_ms();
    t = in_ms(50);
    errno = 0;
    r = mq_timedreceive(s, buf, 16, NULL, &t);
    int e = errno;
    dt = now_ms() - t0;
    struct mq_attr nb = {.mq_flags = O_NONBLOCK};
    mq_setattr(s, &nb, NULL);
    REFUSED(mq_receive(s, buf, 16, NULL), EAGAIN);
    printf("mqueue: empty: timed receive %s in time %d, EAGAIN nonblocking\n",
           r == -1 && e == ETIMEDOUT ? "ETIMEDOUT" : "no", dt >= 40 && dt < 5000);
    mq_close(s);
    mq_unlink("/small");
    /* A receiver woken by another process's send. */
    pid_t c = spawn();
    if (c == 0) {
        receiver();
        _exit(0);
    }
    int parked = wait_parked(c);
    mq_send(q, "wake", 4, 2);
    int st;
    waitpid(c, &st, 0);
    printf("mqueue: receiver parked %d, status %d\n", parked, st);
    /* A sender waiting for room. */
    a.mq_maxmsg = 1;
    a.mq_msgsize = 8;
    mqd_t one = mq_open("/one", O_RDWR | O_CREAT, 0600, &a);
    mqd_t saved = q;
    q = one;
    mq_send(one, "first", 5, 0);
    c = spawn();
    if (c == 0) {
        sender();
        _exit(failures ? 1 : 0);
    }
    parked = wait_parked(c);
    n = mq_receive(one, buf, 8, NULL);
    waitpid(c, &st, 0);
    mq_getattr(one, &a);
    printf("mqueue: sender parked %d, went on (status %d), curmsgs %ld\n", parked, st,
           a.mq_curmsgs);
    mq_close(one);
    mq_unlink("/one");
    q = saved;
    /* EINTR. */
    c = spawn();
    if (c == 0)
        intr_receiver();
    wait_parked(c);
    kill(c, SIGUSR1);
    waitpid(c, &st, 0);
    printf("mqueue: interrupted receive status %d\n", st);
    /* Notification: a signal when a message comes to the empty queue,
     * once; another process is refused meanwhile. */
    signal(SIGUSR1, on_usr1);
    got_signal = 0;
    struct sigevent ev = {0};
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGUSR1;
    CHECK(mq_notify(q, &ev) == 0, "mq_notify");
    int busy = run(other_notifier);
    mq_send(q, "n1", 2, 0);
    int first = got_signal;
    mq_receive(q, buf, sizeof buf, NULL);
    mq_send(q, "n2", 2, 0);
    mq_receive(q, buf, sizeof buf, NULL);
    printf("mqueue: notify: signals %d then %d, another refused (status %d)\n", first,
           got_signal, busy);
    /* Unlinked: gone by name, still there by descriptor. */
    CHECK(mq_unlink("/work") == 0, "unlink /work");
    REFUSED(mq_open("/work", O_RDWR), ENOENT);
    mq_send(q, "still", 5, 0);
    n = mq_receive(q, buf, sizeof buf, NULL);
    buf[n > 0 ? n : 0] = 0;
    printf("mqueue: unlinked, old descriptor: %s\n", buf);
    mq_close(q);
}

static void as_user(void) {
    become(1000);
    REFUSED(mq_open("/rootq", O_RDONLY), EACCES);
    REFUSED(mq_open("/rootq", O_WRONLY), EACCES);
    REFUSED(mq_unlink("/rootq"), EACCES);
    struct mq_attr a = {.mq_maxmsg = 11, .mq_msgsize = 8};
    REFUSED(mq_open("/big", O_RDWR | O_CREAT, 0600, &a), EINVAL);
    mqd_t r = mq_open("/readable", O_RDONLY);
    CHECK(r >= 0, "open a 0644 queue to read");
    REFUSED(mq_open("/readable", O_RDWR), EACCES);
    mqd_t m = mq_open("/mine", O_RDWR | O_CREAT, 0600, NULL);
    CHECK(m >= 0 && mq_send(m, "x", 1, 0) == 0, "its own queue");
    CHECK(mq_unlink("/mine") == 0, "unlink its own");
    printf("mqueue: user refusals checked\n");
}

static void cap(void) {
    become(2000);
    char name[32];
    int n = 0;
    for (; n < 50; n++) {
        snprintf(name, sizeof name, "/cap%d", n);
        if (mq_open(name, O_RDWR | O_CREAT, 0600, NULL) < 0)
            break;
    }
    int e = errno;
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "/cap%d", i);
        mq_unlink(name);
    }
    printf("mqueue: user cap: %d queues, then errno %d\n", n, e);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    bad_arguments();
    queues();
    mqd_t rq = mq_open("/rootq", O_RDWR | O_CREAT, 0600, NULL);
    mqd_t rd = mq_open("/readable", O_RDWR | O_CREAT, 0644, NULL);
    int st = run(as_user);
    printf("mqueue: user child status %d\n", st);
    st = run(cap);
    printf("mqueue: cap child status %d\n", st);
    mq_close(rq);
    mq_close(rd);
    mq_unlink("/rootq");
    mq_unlink("/readable");
    if (failures == 0)
        printf("mqueue: all ok\n");
    return failures ? 1 : 0;
}
