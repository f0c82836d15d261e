/* A process group killed from inside: a group leader forks many children
 * that sleep in FUTEX_WAIT on a shared word, then kill(0, SIGKILL)s its own
 * group (itself included) and pauses. Every member must die, the leader
 * too: its own SIGKILL is delivered while hundreds of others are being
 * torn down. The orphans go to pid 1, which reaps them all. Argument: the
 * number of children per round (default 250). Prints exact lines and
 * "killgroup: all ok". */
#define _GNU_SOURCE
#include <errno.h>
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
        pid_t w = waitpid(l, &st, 0);
        CHECK(w == l, "waitpid leader %d", (int)w);
        int reaped = 0, killed = 0;
        for (;;) {
            int s;
            pid_t p = waitpid(-1, &s, 0);
            if (p < 0)
                break;
            reaped++;
            if (WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL)
                killed++;
        }
        CHECK(errno == ECHILD, "reaped until ECHILD");
        printf("killgroup: round %d: leader signalled %d signal %d, %d children killed\n", round,
               WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : 0, killed);
        CHECK(reaped == n && killed == n, "reaped %d killed %d", reaped, killed);
    }
    if (failures == 0)
        printf("killgroup: all ok\n");
    return failures != 0;
}
