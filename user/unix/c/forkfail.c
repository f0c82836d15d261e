/* Fork until the space bank runs out (issue 22): the fork that fails leaves
 * no child behind — every child made is reaped after a SIGKILL, then
 * waitpid says ECHILD, not 0 forever — and the system works again once
 * they are gone. Every line is checked by tests/system/unix_forkfail.toml,
 * whose space bank is small. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX 1000

static pid_t kids[MAX];

/* Forks until a fork fails → how many were made; *err its errno. */
static int fork_until_failure(int *err)
{
    int n = 0;
    while (n < MAX) {
        fflush(stdout);
        pid_t p = fork();
        if (p == 0) {
            for (;;)
                pause();
        }
        if (p < 0) {
            *err = errno;
            break;
        }
        kids[n++] = p;
    }
    return n;
}

static int round_trip(void)
{
    fflush(stdout);
    pid_t p = fork();
    if (p == 0)
        _exit(3);
    int st;
    return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 3;
}

int main(void)
{
    setvbuf(stdout, 0, _IOLBF, 0);
    struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
    setrlimit(RLIMIT_NPROC, &unlimited);
    int ok = 1;
    for (int round = 0; round < 2; round++) {
        int err = 0;
        int n = fork_until_failure(&err);
        printf("forkfail: round %d: %s children, then fork failed with %s\n", round,
               n >= 5 && n < MAX ? "some" : "wrong number of", err == ENOMEM ? "ENOMEM" : err == EAGAIN ? "EAGAIN" : strerror(err));
        for (int i = 0; i < n; i++)
            kill(kids[i], SIGKILL);
        int reaped = 0, killed = 0;
        for (;;) {
            int st;
            pid_t p = waitpid(-1, &st, 0);
            if (p <= 0)
                break;
            reaped++;
            killed += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
        }
        int e = errno;
        errno = 0;
        pid_t left = waitpid(-1, 0, WNOHANG);
        int e2 = errno;
        printf("forkfail: round %d: reaped all %s, each killed by SIGKILL: %s; then %s, and WNOHANG %d %s\n",
               round, reaped == n ? "it made" : "but some", killed == n ? "yes" : "no",
               e == ECHILD ? "ECHILD" : strerror(e), (int)left, e2 == ECHILD ? "ECHILD" : "?");
        if (reaped != n || killed != n)
            printf("forkfail: (made %d, reaped %d, killed %d)\n", n, reaped, killed);
        int works = round_trip();
        printf("forkfail: round %d: a fork works again: %s\n", round, works ? "yes" : "no");
        ok &= reaped == n && killed == n && works && e == ECHILD && e2 == ECHILD;
    }
    if (ok)
        printf("forkfail: all ok\n");
    return !ok;
}
