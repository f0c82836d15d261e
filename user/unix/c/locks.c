/* fcntl's record locks (F_SETLK, F_SETLKW, F_GETLK) between processes, as
 * fcntl(2) says Linux keeps them: conflicts and what F_GETLK reports,
 * ranges from SEEK_CUR and SEEK_END and negative lengths, a lock split by
 * another type and joined again, a waiter woken when the holder unlocks,
 * a deadlock refused (EDEADLK), a wait ended by a signal (EINTR), locks
 * going when their process closes any descriptor of the file (not when a
 * mapping of it goes) and when it ends, and Linux's errno for bad
 * arguments. Prints exact values and "locks: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("locks: FAILED line %d: ", __LINE__);                                           \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#define PATH "/tmp/locks.dat"

static int lk(int fd, int cmd, int type, int whence, off_t start, off_t len) {
    struct flock f = {.l_type = type, .l_whence = whence, .l_start = start, .l_len = len};
    return fcntl(fd, cmd, &f) == 0 ? 0 : -errno;
}

/* F_GETLK for a write (or read) lock of [start, start+len): what blocks it. */
static struct flock test(int fd, int type, off_t start, off_t len) {
    struct flock f = {.l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len};
    if (fcntl(fd, F_GETLK, &f) != 0)
        f.l_type = -errno;
    return f;
}

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* Runs f(fd) in a child (which opens the file itself) → its exit status. */
static int in_child(int (*f)(int)) {
    pid_t p = fork();
    if (p == 0) {
        int fd = open(PATH, O_RDWR);
        _exit(fd < 0 ? 99 : f(fd));
    }
    int st = -1;
    waitpid(p, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 200 + WTERMSIG(st);
}

static pid_t parent;

/* The child's view while the parent holds a write lock on [10, 20). */
static int sees_parent_lock(int fd) {
    int bad = 0;
    bad |= lk(fd, F_SETLK, F_RDLCK, SEEK_SET, 15, 1) != -EAGAIN;
    bad |= lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 0) != -EAGAIN;
    struct flock f = test(fd, F_WRLCK, 0, 0);
    bad |= (f.l_type != F_WRLCK || f.l_whence != SEEK_SET || f.l_start != 10 || f.l_len != 10 ||
            f.l_pid != parent) << 1;
    /* No conflict: F_UNLCK, the rest as given. */
    f = test(fd, F_WRLCK, 20, 5);
    bad |= (f.l_type != F_UNLCK || f.l_start != 20 || f.l_len != 5) << 2;
    /* Next to it is free; ending frees what the child took. */
    bad |= (lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 20, 10) != 0) << 3;
    return bad;
}

static int takes_20_30(int fd) { return lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 20, 10) != 0; }
static int takes_0_1(int fd) { return lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 1) != 0; }
static int refused_0_1(int fd) { return lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 1) != -EAGAIN; }

/* The parent holds read [0,40), write [40,60), read [60,100). */
static int sees_split(int fd) {
    int bad = 0;
    struct flock f = test(fd, F_RDLCK, 45, 1);
    bad |= f.l_type != F_WRLCK || f.l_start != 40 || f.l_len != 20;
    f = test(fd, F_RDLCK, 0, 40);
    bad |= (f.l_type != F_UNLCK) << 1;
    f = test(fd, F_WRLCK, 70, 1);
    bad |= (f.l_type != F_RDLCK || f.l_start != 60 || f.l_len != 40) << 2;
    return bad;
}

/* The parent holds read [0,100) again: one lock. */
static int sees_joined(int fd) {
    struct flock f = test(fd, F_WRLCK, 99, 1);
    return f.l_type != F_RDLCK || f.l_start != 0 || f.l_len != 100;
}

/* The parent locked [90, 100) as SEEK_END -10 and [50, 60) as -10 bytes
 * before SEEK_CUR 60. */
static int sees_relative(int fd) {
    struct flock f = test(fd, F_WRLCK, 95, 1);
    int bad = f.l_type != F_WRLCK || f.l_start != 90 || f.l_len != 10;
    f = test(fd, F_WRLCK, 55, 1);
    bad |= (f.l_type != F_WRLCK || f.l_start != 50 || f.l_len != 10) << 1;
    return bad;
}

static void on_alarm(int s) { (void)s; }

/* A wait for the parent's [0,1) ended by SIGALRM without SA_RESTART. */
static int interrupted(int fd) {
    struct sigaction sa = {.sa_handler = on_alarm};
    sigaction(SIGALRM, &sa, 0);
    alarm(1);
    int r = lk(fd, F_SETLKW, F_WRLCK, SEEK_SET, 0, 1);
    return r != -EINTR;
}

int main(void) {
    parent = getpid();
    int fd = open(PATH, O_RDWR | O_CREAT | O_TRUNC, 0644);
    char buf[100];
    memset(buf, 'x', sizeof buf);
    CHECK(write(fd, buf, 100) == 100, "write");

    /* Conflicts and F_GETLK. */
    CHECK(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 10, 10) == 0, "first lock");
    int r = in_child(sees_parent_lock);
    CHECK(r == 0, "child's view: %d", r);
    printf("locks: conflict, F_GETLK and a child's own lock: %d\n", r);
    r = in_child(takes_20_30);
    CHECK(r == 0, "the first child's lock outlived it: %d", r);
    printf("locks: gone with their process: %d\n", r);

    /* A waiter woken by the unlock. */
    int ready[2];
    pipe(ready);
    pid_t w = fork();
    if (w == 0) {
        int f2 = open(PATH, O_RDWR);
        long long t0 = now_ms();
        write(ready[1], "r", 1);
        int got = lk(f2, F_SETLKW, F_WRLCK, SEEK_SET, 12, 1);
        long long waited = now_ms() - t0;
        _exit(got != 0 ? 1 : waited < 150 ? 2 : 0);
    }
    char c;
    read(ready[0], &c, 1);
    usleep(300000);
    CHECK(lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 0) == 0, "unlock");
    int st;
    waitpid(w, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "waiter: %#x", st);
    printf("locks: F_SETLKW waited for the unlock: %d\n", WEXITSTATUS(st));

    /* A deadlock: the parent waits for the child's byte 1, the child then
     * asks for the parent's byte 0. */
    CHECK(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 1) == 0, "byte 0");
    int go[2];
    pipe(go);
    w = fork();
    if (w == 0) {
        int f2 = open(PATH, O_RDWR);
        int ok = lk(f2, F_SETLK, F_WRLCK, SEEK_SET, 1, 1) == 0;
        write(go[1], "g", 1);
        usleep(300000); /* the parent is waiting by now */
        int d = lk(f2, F_SETLKW, F_WRLCK, SEEK_SET, 0, 1);
        _exit(!ok ? 1 : d == -EDEADLK ? 0 : 2);
    }
    read(go[0], &c, 1);
    r = lk(fd, F_SETLKW, F_WRLCK, SEEK_SET, 1, 1);
    CHECK(r == 0, "the parent's wait: %d", r);
    waitpid(w, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "deadlock child: %#x", st);
    printf("locks: deadlock refused with EDEADLK: %d\n", WEXITSTATUS(st));

    /* A signal ends a wait. */
    r = in_child(interrupted);
    CHECK(r == 0, "interrupted: %d", r);
    printf("locks: a signal ends F_SETLKW with EINTR: %d\n", r);

    /* Closing any descriptor of the file drops the process's locks; a
     * mapping going does not, nor does closing a dup'd one of another file. */
    CHECK(lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 0) == 0, "unlock all");
    CHECK(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 0, 1) == 0, "byte 0 again");
    void *m = mmap(0, 100, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(m != MAP_FAILED, "mmap");
    munmap(m, 100);
    int other = open("/tmp/locks.other", O_RDWR | O_CREAT, 0644);
    close(dup(other));
    close(other);
    r = in_child(refused_0_1);
    CHECK(r == 0, "lock lost without a close: %d", r);
    int fd3 = open(PATH, O_RDONLY);
    close(fd3);
    r = in_child(takes_0_1);
    CHECK(r == 0, "lock kept after a close: %d", r);
    printf("locks: kept through munmap and other files' closes, gone with a close: %d\n", r);

    /* Split by another type, joined again. */
    CHECK(lk(fd, F_SETLK, F_RDLCK, SEEK_SET, 0, 100) == 0, "read 100");
    CHECK(lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 40, 20) == 0, "write 40..60");
    r = in_child(sees_split);
    CHECK(r == 0, "split: %d", r);
    CHECK(lk(fd, F_SETLK, F_RDLCK, SEEK_SET, 40, 20) == 0, "read 40..60");
    r |= in_child(sees_joined) << 4;
    CHECK(r == 0, "joined: %d", r);
    printf("locks: split and joined: %d\n", r);

    /* SEEK_END and SEEK_CUR with a negative length. */
    CHECK(lk(fd, F_SETLK, F_UNLCK, SEEK_SET, 0, 0) == 0, "unlock all");
    CHECK(lk(fd, F_SETLK, F_WRLCK, SEEK_END, -10, 10) == 0, "SEEK_END");
    lseek(fd, 60, SEEK_SET);
    CHECK(lk(fd, F_SETLK, F_WRLCK, SEEK_CUR, 0, -10) == 0, "SEEK_CUR");
    r = in_child(sees_relative);
    CHECK(r == 0, "relative: %d", r);
    printf("locks: SEEK_END and SEEK_CUR with a negative length: %d\n", r);

    /* Linux's errno for bad arguments. */
    int ro = open(PATH, O_RDONLY), wo = open(PATH, O_WRONLY);
    int e1 = lk(fd, F_SETLK, 7, SEEK_SET, 0, 1);
    int e2 = lk(fd, F_SETLK, F_WRLCK, 9, 0, 1);
    int e3 = lk(fd, F_SETLK, F_WRLCK, SEEK_SET, -1, 1);
    int e4 = lk(fd, F_SETLK, F_WRLCK, SEEK_SET, 5, -6);
    int e5 = lk(fd, F_SETLK, F_WRLCK, SEEK_CUR, LLONG_MAX, 1);
    int e6 = lk(fd, F_SETLK, F_WRLCK, SEEK_SET, LLONG_MAX, 2);
    int e7 = lk(ro, F_SETLK, F_WRLCK, SEEK_SET, 0, 1);
    int e8 = lk(wo, F_SETLK, F_RDLCK, SEEK_SET, 0, 1);
    struct flock un = {.l_type = F_UNLCK};
    int e9 = fcntl(fd, F_GETLK, &un) == 0 ? 0 : -errno;
    int e10 = fcntl(fd, F_SETLK, (void *)8) == 0 ? 0 : -errno;
    int e11 = lk(999, F_SETLK, F_WRLCK, SEEK_SET, 0, 1);
    int e12 = lk(ro, F_SETLK, F_UNLCK, SEEK_SET, 0, 0);
    printf("locks: errors %d %d %d %d %d %d %d %d %d %d %d %d\n", e1, e2, e3, e4, e5, e6, e7, e8,
           e9, e10, e11, e12);
    CHECK(e1 == -EINVAL && e2 == -EINVAL && e3 == -EINVAL && e4 == -EINVAL && e5 == -EOVERFLOW &&
              e6 == -EOVERFLOW && e7 == -EBADF && e8 == -EBADF && e9 == -EINVAL &&
              e10 == -EFAULT && e11 == -EBADF && e12 == 0,
          "errors");
    unlink(PATH);
    unlink("/tmp/locks.other");
    if (failures == 0)
        printf("locks: all ok\n");
    return failures != 0;
}
