/* A process group killed from inside: a group leader forks many children
 * that sleep in FUTEX_WAIT on a shared word, then kill(0, SIGKILL)s its own
 * group (itself included) and pauses. Every member must die, the leader
 * too: its own SIGKILL is delivered while hundreds of others are being
 * torn down. The orphans go to pid 1, which reaps them all. Argument: the
 * number of children per round (default 250). Prints exact lines and
 * "killgroup: all ok". */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("killgroup: FAILED line %d: ", __LINE__);                                       \
            printf(__VA_ARGS__);                                                                   \
            printf(" (errno %d)\n", errno);                                                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* The leader: fork n waiters on *word, wait until all are asleep (each
 * counts itself in), then kill the whole group. */
static void leader(volatile uint32_t *word, volatile uint32_t *ready, int n, int wait) {
    for (int i = 0; i < n; i++) {
        pid_t c = fork();
        if (c < 0)
            _exit(2);
        if (c == 0) {
            __atomic_add_fetch(ready, 1, __ATOMIC_SEQ_CST);
            for (;;)
                syscall(SYS_futex, word, 0 /* FUTEX_WAIT */, 0, NULL, NULL, 0);
        }
    }
    while (wait && __atomic_load_n(ready, __ATOMIC_SEQ_CST) < (uint32_t)n)
        sched_yield();
    kill(0, SIGKILL);
    for (;;)
        pause();
}

static void on_alarm(int sig) { (void)sig; }

/* Who is left, when a wait takes too long: each process's name, state,
 * parent and pending signals (/proc/<pid>/status), for the log. */
static void show_left(void) {
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        char path[300], buf[2048];
        snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        printf("killgroup: left: pid %s", e->d_name);
        while (fgets(buf, sizeof buf, f))
            if (!strncmp(buf, "State", 5) || !strncmp(buf, "PPid", 4) || !strncmp(buf, "SigPnd", 6) ||
                !strncmp(buf, "ShdPnd", 6) || !strncmp(buf, "SigBlk", 6)) {
                buf[strcspn(buf, "\n")] = 0;
                printf(" | %s", buf);
            }
        printf("\n");
        fclose(f);
    }
    if (d)
        closedir(d);
}

/* waitpid, but after 60 s show who is left and wait on. */
static pid_t wait_or_show(pid_t pid, int *st) {
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    alarm(60);
    pid_t w = waitpid(pid, st, 0);
    if (w < 0 && errno == EINTR) {
        printf("killgroup: FAILED: waiting for %d 60 s\n", (int)pid);
        show_left();
        w = waitpid(pid, st, 0);
    }
    alarm(0);
    return w;
}

/* Reaps every child left (the orphans came to pid 1) → how many; *killed
 * counts those SIGKILL ended. */
static int reap_all(int *killed) {
    int reaped = 0;
    for (;;) {
        int s;
        pid_t p = wait_or_show(-1, &s);
        if (p < 0)
            return reaped;
        reaped++;
        if (WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL)
            (*killed)++;
    }
}

/* LTP's library's way (futex_cmp_requeue01 with 1,000 waiters): the
 * test process, in a group of its own, forks waiters until fork fails
 * (RLIMIT_NPROC) and exits; its parent reaps it and kills the group it
 * left behind, then exits. Returns how many forks succeeded. */
static int fork_until_refused(volatile uint32_t *word, volatile uint32_t *made) {
    pid_t t = fork();
    if (t == 0) {
        setpgid(0, 0);
        for (;;) {
            pid_t c = fork();
            if (c < 0)
                _exit(errno == EAGAIN ? 0 : 3);
            if (c == 0)
                for (;;)
                    syscall(SYS_futex, word, 0 /* FUTEX_WAIT */, 0, NULL, NULL, 0);
            __atomic_add_fetch(made, 1, __ATOMIC_SEQ_CST);
        }
    }
    int st = -1;
    pid_t w = waitpid(t, &st, 0);
    CHECK(w == t && WIFEXITED(st) && WEXITSTATUS(st) == 0, "the forking process: %d status %#x", (int)w, st);
    CHECK(kill(-t, SIGKILL) == 0, "kill(-%d, SIGKILL)", (int)t);
    return (int)*made;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 250;
    uint32_t *shared =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(shared != MAP_FAILED, "mmap");
    if (shared == MAP_FAILED)
        return 1;
    for (int round = 1; round <= 6; round++) {
        shared[0] = 0;
        shared[1] = 0;
        pid_t l = fork();
        CHECK(l >= 0, "fork leader");
        if (l == 0) {
            setpgid(0, 0);
            leader(&shared[0], &shared[1], n, round <= 3);
        }
        int st = 0;
        pid_t w = wait_or_show(l, &st);
        CHECK(w == l, "waitpid leader %d", (int)w);
        int killed = 0;
        int reaped = reap_all(&killed);
        CHECK(errno == ECHILD, "reaped until ECHILD");
        printf("killgroup: round %d: leader signalled %d signal %d, %d children killed\n", round,
               WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : 0, killed);
        CHECK(reaped == n && killed == n, "reaped %d killed %d", reaped, killed);
    }
    for (int round = 1; round <= 2; round++) {
        shared[0] = 0;
        shared[2] = 0;
        pid_t m = fork();
        if (m == 0) {
            setpgid(0, 0);
            _exit(fork_until_refused(&shared[0], &shared[2]) > 0 && failures == 0 ? 0 : 1);
        }
        int st = -1;
        pid_t w = wait_or_show(m, &st);
        int killed = 0;
        int reaped = reap_all(&killed);
        printf("killgroup: forks until EAGAIN, round %d: parent exited %d status %d, every waiter killed %s\n",
               round, w == m && WIFEXITED(st), WIFEXITED(st) ? WEXITSTATUS(st) : -1,
               killed == reaped && killed == (int)shared[2] ? "yes" : "no");
    }
    if (failures == 0)
        printf("killgroup: all ok\n");
    return failures != 0;
}
