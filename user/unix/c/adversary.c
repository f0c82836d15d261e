/* A hostile program's tricks, each of which once hung, stalled or broke
 * another process or the program's own keeper (issue 22). Every line is
 * checked by tests/system/unix_adversary.toml, against what Linux does:
 *  - one process's far alarm or timer must not stall anyone's sleeps;
 *  - a descriptor with its register's upper half set is the C int below it;
 *  - a forged rt_sigreturn frame kills the process with SIGSEGV;
 *  - SIGKILL ends a process in every blocked state;
 *  - kill(zombie, 0), kill(-1, sig), mkdir("/");
 *  - a keeper that fails (fault injection) still ends its process, and the
 *    parent's wait and the process's pipe see it.
 * The failed-fork case needs a small space bank: forkfail.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("adversary: FAILED line %d: %s: ", __LINE__, #cond);        \
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

/* Forks a child running f; flushes first so the child prints nothing twice. */
static pid_t spawn(void (*f)(void))
{
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        f();
        _exit(0);
    }
    CHECK(p > 0, "fork %d", (int)p);
    return p;
}

/* How child p ended: "exit N", "signal N" or "none". */
static const char *how(pid_t p, char *buf)
{
    int st;
    pid_t r = waitpid(p, &st, 0);
    if (r != p)
        snprintf(buf, 32, "none (%d, errno %d)", (int)r, errno);
    else if (WIFEXITED(st))
        snprintf(buf, 32, "exit %d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st))
        snprintf(buf, 32, "signal %d", WTERMSIG(st));
    else
        snprintf(buf, 32, "status %#x", st);
    return buf;
}

/* ---- 1. far alarms and timers do not stall other sleeps ---- */

static void far_alarm(void)
{
    alarm(290);
    pause();
}

static void forever_alarm(void)
{
    alarm(0xffffffffu);
    pause();
}

static void huge_timer(void)
{
    struct itimerval t = {{0, 0}, {(time_t)1 << 40, 0}};
    setitimer(ITIMER_REAL, &t, 0);
    pause();
}

static void far_alarms(void)
{
    pid_t kids[3] = {spawn(far_alarm), spawn(forever_alarm), spawn(huge_timer)};
    nap_ms(100); /* every timer is set */
    /* pid 1's own far alarm too */
    alarm(1000);
    long t0 = now_ms();
    for (int i = 0; i < 12; i++)
        nap_ms(250);
    long took = now_ms() - t0;
    alarm(0);
    printf("adversary: 12 sleeps of 250 ms beside alarms of 290 s, 2^32-1 s and a 2^40 s timer took 3 s: %s\n",
           took >= 3000 && took < 4500 ? "yes" : "no");
    if (took < 3000 || took >= 4500)
        printf("adversary: (they took %ld ms)\n", took);
    /* Ever earlier deadlines from several processes at once: all four
     * forked first, then let go together through a pipe (a fork here
     * takes most of a second: the invariant walk at every kernel exit
     * grows with the objects the archive holds). */
    pid_t naps[4];
    int go[2];
    CHECK(pipe(go) == 0, "pipe");
    for (int i = 0; i < 4; i++) {
        fflush(stdout);
        naps[i] = fork();
        if (naps[i] == 0) {
            char c;
            close(go[1]);
            if (read(go[0], &c, 1) != 1)
                _exit(50);
            nap_ms(800 - 200 * i);
            _exit(i);
        }
    }
    close(go[0]);
    t0 = now_ms();
    CHECK(write(go[1], "gogo", 4) == 4, "write");
    close(go[1]);
    int sum = 0;
    for (int i = 0; i < 4; i++) {
        int st;
        waitpid(naps[i], &st, 0);
        sum += WIFEXITED(st) ? WEXITSTATUS(st) : 100;
    }
    took = now_ms() - t0;
    printf("adversary: sleeps of 800, 600, 400 and 200 ms begun together ended in 0.8 s: %s (statuses %d)\n",
           took >= 800 && took < 1500 ? "yes" : "no", sum);
    if (took < 800 || took >= 1500)
        printf("adversary: (they took %ld ms)\n", took);
    char b[32];
    for (int i = 0; i < 3; i++) {
        kill(kids[i], SIGKILL);
        printf("adversary: the timer child ended by %s\n", how(kids[i], b));
    }
}

/* ---- 3. descriptors with the upper half of the register set ---- */

static void wide_fds(void)
{
    int fd = open("/tmp/adv-wide", O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0, "open");
    long wide = (1L << 36) | fd;
    long d = syscall(SYS_dup, wide);
    long fl = syscall(SYS_fcntl, wide, F_GETFD, 0);
    long set = syscall(SYS_fcntl, wide, F_SETFD, FD_CLOEXEC);
    long fl2 = syscall(SYS_fcntl, wide, F_GETFD, 0);
    long d2 = syscall(SYS_dup2, wide, (1L << 40) | 20);
    long w = syscall(SYS_write, wide, "abc", 3);
    long c = syscall(SYS_close, wide);
    long c2 = syscall(SYS_close, wide);
    int e2 = errno;
    printf("adversary: dup %s, F_GETFD %ld, F_SETFD %ld, F_GETFD %ld, dup2 to 2^40+20 gives %ld, write %ld, close %ld, close again %ld %s\n",
           d == fd + 1 ? "next" : "wrong", fl, set, fl2, d2, w, c, c2,
           e2 == EBADF ? "EBADF" : "?");
    long big = syscall(SYS_close, 0x7fffffffffffffffL);
    int e3 = errno;
    printf("adversary: close(2^63-1) %ld %s; the keeper still answers: %s\n", big,
           e3 == EBADF ? "EBADF" : "?", getppid() == 0 ? "yes" : "no");
    close(d);
    close(20);
    unlink("/tmp/adv-wide");
}

/* ---- 4. forged rt_sigreturn frames ---- */

static int forge;
static void forger(int sig, siginfo_t *si, void *uc_)
{
    (void)sig;
    (void)si;
    ucontext_t *uc = uc_;
    switch (forge) {
    case 0: /* the upper half */
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)0xffff800000000000UL;
        break;
    case 1: /* not canonical */
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)0x0000900000000000UL;
        break;
    case 2: /* garbage everywhere, the FPU state's pointer too */
        for (int i = 0; i < NGREG; i++)
            uc->uc_mcontext.gregs[i] = (greg_t)(0x9e3779b97f4a7c15UL * (i + 1));
        uc->uc_mcontext.fpregs = (void *)0x123456789abcUL;
        break;
    }
}

static void forged_return(void)
{
    struct sigaction sa = {0};
    sa.sa_sigaction = forger;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, 0);
    raise(SIGUSR1);
    _exit(7); /* not reached */
}

static void forged_frames(void)
{
    const char *what[3] = {"rip in the upper half", "a rip not canonical", "garbage"};
    char b[32];
    for (forge = 0; forge < 3; forge++) {
        pid_t p = spawn(forged_return);
        printf("adversary: rt_sigreturn with %s: %s\n", what[forge], how(p, b));
    }
}

/* ---- 6. SIGKILL ends every blocked state ---- */

static int pfd[2];
static uint32_t futex_word;

static void in_futex(void)
{
    syscall(SYS_futex, &futex_word, 128 /* FUTEX_WAIT_PRIVATE */, 0, 0, 0, 0);
}
static void in_shared_futex(void)
{
    syscall(SYS_futex, &futex_word, 0 /* FUTEX_WAIT */, 0, 0, 0, 0);
}
static void in_read(void)
{
    char c;
    read(pfd[0], &c, 1);
}
static void in_write(void)
{
    static char big[65536];
    for (;;)
        write(pfd[1], big, sizeof big);
}
static void in_sleep(void)
{
    sleep(1000);
}
static void in_pause(void)
{
    pause();
}
static void in_sigsuspend(void)
{
    sigset_t s;
    sigfillset(&s);
    sigsuspend(&s);
}
static void in_poll(void)
{
    struct pollfd p = {pfd[0], POLLIN, 0};
    poll(&p, 1, -1);
}
static void in_select(void)
{
    fd_set r;
    FD_ZERO(&r);
    FD_SET(pfd[0], &r);
    select(pfd[0] + 1, &r, 0, 0, 0);
}
static void in_wait(void)
{
    fflush(stdout);
    if (fork() == 0) {
        nap_ms(400); /* orphaned by the SIGKILL, then reaped by pid 1 */
        _exit(9);
    }
    wait(0);
}
static void in_spin(void)
{
    for (volatile unsigned long i = 0;; i++)
        ;
}
static void in_blocked_read(void)
{
    sigset_t s;
    sigfillset(&s);
    sigprocmask(SIG_BLOCK, &s, 0);
    in_read();
}
static void in_tty_read(void)
{
    char c;
    read(0, &c, 1);
}

static void kill_blocked(void)
{
    struct {
        const char *what;
        void (*f)(void);
    } cases[] = {
        {"a private FUTEX_WAIT", in_futex},
        {"a shared FUTEX_WAIT", in_shared_futex},
        {"a pipe read", in_read},
        {"a full pipe's write", in_write},
        {"sleep", in_sleep},
        {"pause", in_pause},
        {"sigsuspend", in_sigsuspend},
        {"poll", in_poll},
        {"select", in_select},
        {"wait", in_wait},
        {"a loop without calls", in_spin},
        {"a read with every signal blocked", in_blocked_read},
        {"a terminal read", in_tty_read},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pipe(pfd);
        pid_t p = spawn(cases[i].f);
        nap_ms(150);
        kill(p, SIGKILL);
        char b[32];
        printf("adversary: SIGKILL in %s: %s\n", cases[i].what, how(p, b));
        close(pfd[0]);
        close(pfd[1]);
    }
    /* wait's grandchild, orphaned, comes to pid 1. */
    int st;
    pid_t g = waitpid(-1, &st, 0);
    printf("adversary: the orphaned grandchild came to pid 1: %s, status %d\n",
           g > 0 ? "yes" : "no", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

/* ---- 7. kill and mkdir details ---- */

static volatile int usr1;
static void on_usr1(int s)
{
    (void)s;
    usr1++;
}
static void wait_usr1(void)
{
    signal(SIGUSR1, on_usr1);
    while (!usr1)
        pause();
    _exit(42);
}

static void kill_details(void)
{
    pid_t z = spawn(in_pause);
    kill(z, SIGTERM);
    nap_ms(100); /* a zombie now */
    int r0 = kill(z, 0);
    int r1 = kill(z, SIGTERM);
    char b[32];
    printf("adversary: kill(zombie, 0) %d, kill(zombie, SIGTERM) %d; it ended by %s\n", r0, r1,
           how(z, b));
    errno = 0;
    int r2 = kill(z, 0);
    printf("adversary: kill(reaped, 0) %d %s\n", r2, errno == ESRCH ? "ESRCH" : "?");

    signal(SIGUSR1, on_usr1);
    pid_t k[2] = {spawn(wait_usr1), spawn(wait_usr1)};
    nap_ms(100);
    int r3 = kill(-1, SIGUSR1);
    nap_ms(100);
    printf("adversary: kill(-1, SIGUSR1) %d: the caller got it %d times; its children ended by %s and ",
           r3, usr1, how(k[0], b));
    printf("%s\n", how(k[1], b));
    signal(SIGUSR1, SIG_DFL);

    errno = 0;
    int m1 = mkdir("/", 0755);
    int e1 = errno;
    int m2 = mkdir("/tmp/", 0755);
    int e2 = errno;
    int m3 = mkdir("/tmp/adv-d", 0755);
    int m4 = mkdir("/tmp/adv-d/.", 0755);
    int e4 = errno;
    int m5 = mkdir("/tmp/adv-d/..", 0755);
    int e5 = errno;
    rmdir("/tmp/adv-d");
    printf("adversary: mkdir / %d %s, /tmp/ %d %s, a new one %d, its . %d %s, its .. %d %s\n", m1,
           e1 == EEXIST ? "EEXIST" : "?", m2, e2 == EEXIST ? "EEXIST" : "?", m3, m4,
           e4 == EEXIST ? "EEXIST" : "?", m5, e5 == EEXIST ? "EEXIST" : "?");
}

/* ---- 3b. a keeper that fails still ends its process ---- */

#define PANIC_KEEPER 0x53540001L
#define FAULT_KEEPER 0x53540002L

static void keeper_panics(void)
{
    close(pfd[0]);
    write(pfd[1], "x", 1);
    syscall(PANIC_KEEPER);
    _exit(5); /* not reached: the keeper is gone */
}

static void keeper_faults(void)
{
    close(pfd[0]);
    write(pfd[1], "x", 1);
    syscall(FAULT_KEEPER);
    _exit(6); /* not reached */
}

static void failing_keepers(void)
{
    for (int round = 0; round < 6; round++) {
        pipe(pfd);
        pid_t p = spawn(round < 3 ? keeper_panics : keeper_faults);
        close(pfd[1]);
        char buf[4];
        long n1 = read(pfd[0], buf, sizeof buf);
        long n2 = read(pfd[0], buf, sizeof buf); /* EOF once the process is gone */
        close(pfd[0]);
        char b[32];
        printf("adversary: a child whose keeper %s ended by %s; its pipe read %ld then %ld\n",
               round < 3 ? "panicked" : "faulted", how(p, b), n1, n2);
    }
    /* A fork after that still works. */
    pid_t p = spawn(in_pause);
    kill(p, SIGKILL);
    char b[32];
    printf("adversary: a fork after them ended by %s\n", how(p, b));
}

int main(void)
{
    setvbuf(stdout, 0, _IOLBF, 0);
    wide_fds();
    kill_details();
    forged_frames();
    kill_blocked();
    failing_keepers(); /* the keeper's argument has its testing bit */
    far_alarms();
    errno = 0;
    int st;
    pid_t left = waitpid(-1, &st, WNOHANG);
    printf("adversary: children left: %d %s\n", (int)left, errno == ECHILD ? "ECHILD" : "?");
    if (failures == 0)
        printf("adversary: all ok\n");
    return failures != 0;
}
