/* vfork and clone(CLONE_VM | CLONE_VFORK) as vfork(2) says: the child
 * shares the parent's memory and the parent waits until the child runs
 * execve or ends. What the child writes before then (a global, the
 * parent's stack, the heap, an execve error as posix_spawn and busybox
 * report it) is what the parent reads after; CLONE_VFORK without CLONE_VM
 * waits but copies; a fork after it is copy-on-write again. Prints exact
 * values and "vfork: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("vfork: FAILED line %d: ", __LINE__);                                           \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static volatile int global = 1;

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* What a posix_spawn child does: try to run a program, and on failure put
 * the error where the parent will look, then end. */
struct spawn {
    const char *path;
    volatile int err;
};

static int spawn_child(void *arg) {
    struct spawn *s = arg;
    char *argv[] = {(char *)s->path, "2", 0};
    execv(s->path, argv);
    s->err = errno;
    _exit(127);
}

static int sleepy_child(void *arg) {
    (void)arg;
    global = 77;
    usleep(200000);
    _exit(5);
}

static char stack[64 * 1024] __attribute__((aligned(16)));

int main(void) {
    /* 1. vfork: the child's writes to a global, the parent's stack and the
     * heap are the parent's; the child has ended when vfork returns. */
    volatile int local = 10;
    char *heap = malloc(64);
    strcpy(heap, "parent");
    long long t0 = now_ms();
    pid_t p = vfork();
    if (p == 0) {
        global = 2;
        local = 20;
        strcpy(heap, "child");
        usleep(200000);
        _exit(3);
    }
    long long waited = now_ms() - t0;
    int st = 0;
    pid_t r = waitpid(p, &st, WNOHANG);
    CHECK(r == p && WIFEXITED(st) && WEXITSTATUS(st) == 3, "child not ended: %d %#x", r, st);
    CHECK(waited >= 190, "vfork returned after %lld ms", waited);
    printf("vfork: the child's writes: global %d, stack %d, heap %s; it had ended: %d\n", global,
           local, heap, r == p);

    /* 2. busybox's spawn: the child records execve's error for the parent. */
    volatile int failed = 0;
    p = vfork();
    if (p == 0) {
        char *argv[] = {"/no/such/program", 0};
        execv(argv[0], argv);
        failed = errno;
        _exit(111);
    }
    waitpid(p, &st, 0);
    printf("vfork: execve error seen by the parent: %d (%s), status %d\n", failed,
           failed == ENOENT ? "ENOENT" : "?", WEXITSTATUS(st));

    /* 3. glibc's posix_spawn: clone(CLONE_VM | CLONE_VFORK) on a stack of
     * its own, the error in the parent's memory. */
    struct spawn s = {.path = "/no/such/program"};
    p = clone(spawn_child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &s);
    CHECK(p > 0, "clone: %d", errno);
    waitpid(p, &st, 0);
    printf("vfork: clone(CLONE_VM|CLONE_VFORK) error in the parent: %d, status %d\n", s.err,
           WEXITSTATUS(st));
    CHECK(s.err == ENOENT && WEXITSTATUS(st) == 127, "posix_spawn's error: %d", s.err);

    /* 4. A child that runs a program lets the parent go at once: it is
     * still running (sleep 2) when clone returns. */
    s.path = "/bin/sleep";
    s.err = 0;
    t0 = now_ms();
    p = clone(spawn_child, stack + sizeof stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &s);
    r = waitpid(p, &st, WNOHANG);
    waited = now_ms() - t0;
    CHECK(r == 0 && s.err == 0, "after execve: waitpid %d, err %d", r, s.err);
    CHECK(waited < 1900, "clone returned after %lld ms", waited);
    waitpid(p, &st, 0);
    printf("vfork: back at the child's execve, before it ended: %d, status %d\n",
           r == 0 && waited < 1900, WEXITSTATUS(st));

    /* 5. CLONE_VFORK alone: the parent waits, the memory is a copy. */
    global = 1;
    t0 = now_ms();
    p = clone(sleepy_child, stack + sizeof stack, CLONE_VFORK | SIGCHLD, 0);
    waited = now_ms() - t0;
    waitpid(p, &st, 0);
    CHECK(waited >= 190, "CLONE_VFORK returned after %lld ms", waited);
    printf("vfork: CLONE_VFORK without CLONE_VM: waited %d, global %d, status %d\n",
           waited >= 190, global, WEXITSTATUS(st));

    /* 6. fork after all that: copy-on-write again. */
    p = fork();
    if (p == 0) {
        global = 99;
        local = 99;
        strcpy(heap, "forked");
        _exit(0);
    }
    waitpid(p, &st, 0);
    printf("vfork: after fork: global %d, stack %d, heap %s\n", global, local, heap);

    CHECK(global == 1 && local == 20 && strcmp(heap, "child") == 0, "values");
    CHECK(failed == ENOENT && s.err == 0, "errors");
    if (failures == 0)
        printf("vfork: all ok\n");
    return failures != 0;
}
