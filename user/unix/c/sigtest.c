/* Signals: handlers (with musl's SA_RESTORER and rt_sigreturn), blocking and
 * sigpending, kill between processes, default actions (SIGTERM ends a
 * child, SIGPIPE ends a writer with no reader, SIGCHLD is ignored), EINTR
 * from a pipe read and from nanosleep, SA_RESTART, alarm and pause,
 * sigsuspend. Every line is checked by tests/system/unix_signals.toml. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("sigtest: FAILED line %d: %s: ", __LINE__, #cond);          \
            printf(__VA_ARGS__);                                               \
            printf(" (errno %d)\n", errno);                                    \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static volatile sig_atomic_t got_usr1, got_usr2, got_alrm, got_chld, last_sig;

static void on_signal(int sig)
{
    last_sig = sig;
    if (sig == SIGUSR1)
        got_usr1++;
    if (sig == SIGUSR2)
        got_usr2++;
    if (sig == SIGALRM)
        got_alrm++;
    if (sig == SIGCHLD)
        got_chld++;
}

static void handle(int sig, int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(sig, &sa, NULL) == 0, "sigaction %d", sig);
}

static void alarm_ms(int ms)
{
    struct itimerval it = {{0, 0}, {ms / 1000, (ms % 1000) * 1000}};
    CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0, "setitimer");
}

int main(void)
{
    int status;
    setvbuf(stdout, NULL, _IONBF, 0);

    /* A handler; registers and the FPU survive it. */
    handle(SIGUSR1, 0);
    volatile double x = 1.5;
    raise(SIGUSR1);
    CHECK(got_usr1 == 1 && x * 2 == 3.0, "handler ran once: %d", got_usr1);
    printf("sigtest: handler ran\n");

    /* Blocked: pending until unblocked. */
    handle(SIGUSR2, 0);
    sigset_t set, old;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    CHECK(sigprocmask(SIG_BLOCK, &set, &old) == 0, "block");
    kill(getpid(), SIGUSR2);
    CHECK(got_usr2 == 0, "blocked signal delivered");
    sigset_t pend;
    CHECK(sigpending(&pend) == 0 && sigismember(&pend, SIGUSR2), "pending");
    CHECK(sigprocmask(SIG_SETMASK, &old, NULL) == 0 && got_usr2 == 1, "delivered on unblock: %d", got_usr2);
    printf("sigtest: blocked signal waited\n");

    /* kill between processes: a child's handler, then SIGTERM's default. */
    int p[2];
    pipe(p);
    pid_t c = fork();
    if (c == 0) {
        /* `while (!got) pause();` would be racy here as on Linux: a
         * signal landing between the test and the pause is handled
         * before the call, which then waits forever. The signal is
         * blocked until sigsuspend atomically unblocks and waits. */
        sigset_t usr1, before;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        sigprocmask(SIG_BLOCK, &usr1, &before);
        handle(SIGUSR1, 0);
        got_usr1 = 0;
        write(p[1], "r", 1);
        while (!got_usr1)
            sigsuspend(&before);
        _exit(21);
    }
    char ch;
    read(p[0], &ch, 1);
    CHECK(kill(c, SIGUSR1) == 0, "kill");
    CHECK(waitpid(c, &status, 0) == c && WIFEXITED(status) && WEXITSTATUS(status) == 21, "child's handler: %#x", status);
    c = fork();
    if (c == 0) {
        for (;;)
            pause();
    }
    CHECK(kill(c, SIGTERM) == 0, "kill SIGTERM");
    CHECK(waitpid(c, &status, 0) == c && WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "SIGTERM: %#x", status);
    printf("sigtest: child ended by signal %d\n", WTERMSIG(status));
    CHECK(kill(99999, 0) == -1 && errno == ESRCH, "ESRCH");

    /* SIGPIPE: the default ends the writer; ignored, write says EPIPE. */
    int q[2];
    pipe(q);
    close(q[0]);
    c = fork();
    if (c == 0) {
        write(q[1], "x", 1);
        _exit(0);
    }
    CHECK(waitpid(c, &status, 0) == c && WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE, "SIGPIPE: %#x", status);
    signal(SIGPIPE, SIG_IGN);
    CHECK(write(q[1], "x", 1) == -1 && errno == EPIPE, "EPIPE");
    close(q[1]);
    printf("sigtest: SIGPIPE ends a writer\n");

    /* SIGCHLD with a handler. */
    handle(SIGCHLD, 0);
    c = fork();
    if (c == 0)
        _exit(0);
    CHECK(waitpid(c, &status, 0) == c, "wait");
    for (int i = 0; i < 100 && !got_chld; i++)
        usleep(1000);
    CHECK(got_chld == 1, "SIGCHLD: %d", got_chld);
    signal(SIGCHLD, SIG_DFL);

    /* EINTR: a read of an empty pipe, and nanosleep with the time left. */
    handle(SIGALRM, 0);
    int e[2];
    pipe(e);
    alarm_ms(30);
    CHECK(read(e[0], &ch, 1) == -1 && errno == EINTR && got_alrm == 1, "read EINTR, alarm %d", got_alrm);
    alarm_ms(30);
    struct timespec req = {5, 0}, rem = {0, 0};
    CHECK(nanosleep(&req, &rem) == -1 && errno == EINTR && rem.tv_sec >= 4 && rem.tv_sec <= 5, "nanosleep EINTR, rem %ld", (long)rem.tv_sec);
    printf("sigtest: interrupted calls say EINTR\n");

    /* SA_RESTART: the read goes on after the handler and gets the data. */
    handle(SIGALRM, SA_RESTART);
    c = fork();
    if (c == 0) {
        struct timespec t = {0, 80 * 1000 * 1000};
        nanosleep(&t, NULL);
        write(e[1], "y", 1);
        _exit(0);
    }
    got_alrm = 0;
    alarm_ms(20);
    CHECK(read(e[0], &ch, 1) == 1 && ch == 'y' && got_alrm == 1, "restarted read, alarm %d", got_alrm);
    waitpid(c, &status, 0);
    printf("sigtest: SA_RESTART restarts\n");

    /* alarm and pause; sigsuspend with the signal blocked around it. */
    got_alrm = 0;
    CHECK(alarm(1) == 0, "alarm");
    CHECK(pause() == -1 && errno == EINTR && got_alrm == 1, "pause");
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    sigprocmask(SIG_BLOCK, &set, &old);
    alarm_ms(10);
    sigset_t none;
    sigemptyset(&none);
    CHECK(sigsuspend(&none) == -1 && errno == EINTR && got_alrm == 2, "sigsuspend");
    sigset_t now;
    sigprocmask(SIG_SETMASK, NULL, &now);
    CHECK(sigismember(&now, SIGALRM), "mask restored after sigsuspend");
    printf("sigtest: alarm, pause and sigsuspend\n");

    /* A process that never makes a call: the signal reaches it through
     * its idle keeper, which stops it and acts. */
    pid_t spin = fork();
    if (spin == 0) {
        for (volatile unsigned long i = 0;; i++)
            ;
    }
    struct timespec tenth = {0, 100 * 1000 * 1000};
    nanosleep(&tenth, NULL); /* it is spinning by now */
    CHECK(kill(spin, SIGTERM) == 0, "kill spinner");
    int sst;
    CHECK(waitpid(spin, &sst, 0) == spin, "wait spinner");
    CHECK(WIFSIGNALED(sst) && WTERMSIG(sst) == SIGTERM, "spinner status %#x", sst);
    printf("sigtest: a spinning process is killed by signal %d\n", WTERMSIG(sst));

    printf("sigtest: %s\n", failures ? "FAILED" : "all ok");
    return failures ? 1 : 0;
}
