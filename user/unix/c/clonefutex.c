/* clone's process flags, futex requeue and EFAULT, prctl, personality,
 * getcpu, membarrier, unshare and kcmp, as Linux's man pages say: exact
 * values, and the errno of bad input. Prints exact lines and
 * "clonefutex: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("clonefutex: FAILED line %d: ", __LINE__);                                      \
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

#define BAD ((void *)8)

#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAKE_PRIVATE 129
#ifndef SYS_pidfd_open
#define SYS_pidfd_send_signal 424
#define SYS_pidfd_open 434
#define SYS_pidfd_getfd 438
#endif

static long futex(uint32_t *a, int op, uint32_t v, long t, uint32_t *a2, uint32_t v3) {
    return syscall(SYS_futex, a, op, v, t, a2, v3);
}

static void msleep(int ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, 0);
}

/* Waits until process `pid` is waiting in the system ('S' in its stat). */
static void wait_sleeping(pid_t pid) {
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    for (int i = 0; i < 500; i++) {
        int fd = open(path, O_RDONLY);
        if (fd >= 0) {
            int n = read(fd, buf, sizeof buf - 1);
            close(fd);
            if (n > 0) {
                buf[n] = 0;
                char *p = strrchr(buf, ')');
                if (p && p[1] == ' ' && p[2] == 'S')
                    return;
            }
        }
        msleep(10);
    }
}

static void futexes(void) {
    /* Requeue between two words of shared memory: waiters in six
     * processes, two woken, three moved, one left. */
    uint32_t *w = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(w != MAP_FAILED, "mmap shared");
    w[0] = 0;
    w[1] = 0;
    pid_t kids[6];
    for (int i = 0; i < 6; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            long r = futex(&w[0], FUTEX_WAIT, 0, 0, 0, 0);
            _exit(r == 0 ? 0 : 1);
        }
    }
    for (int i = 0; i < 6; i++)
        wait_sleeping(kids[i]);
    w[0] = 1;
    long r = futex(&w[0], FUTEX_CMP_REQUEUE, 2, 3, &w[1], 1);
    REFUSED(futex(&w[0], FUTEX_CMP_REQUEUE, 2, 3, &w[1], 0), EAGAIN);
    long r2 = futex(&w[0], FUTEX_CMP_REQUEUE, 2, 3, &w[1], 1);
    msleep(50);
    long on1 = futex(&w[1], FUTEX_WAKE, 100, 0, 0, 0);
    long on0 = futex(&w[0], FUTEX_WAKE, 100, 0, 0, 0);
    int ok = 0;
    for (int i = 0; i < 6; i++) {
        int st;
        if (waitpid(kids[i], &st, 0) == kids[i] && WIFEXITED(st) && WEXITSTATUS(st) == 0)
            ok++;
    }
    printf("clonefutex: cmp_requeue woke+moved %ld then %ld; on the second word %ld, the first %ld; "
           "%d ended well\n",
           r, r2, on1, on0, ok);
    REFUSED(futex(&w[0], FUTEX_CMP_REQUEUE, -1, 3, &w[1], 1), EINVAL);
    REFUSED(futex(&w[0], FUTEX_CMP_REQUEUE, 1, 3, (uint32_t *)((char *)&w[1] + 1), 1), EINVAL);

    /* EFAULT: an address with nothing mapped, a PROT_NONE page, a word
     * past the end of its file; the private form does not look. */
    char *two = mmap(0, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(two + 4096, 4096);
    uint32_t *gone = (uint32_t *)(two + 4096);
    uint32_t *none = mmap(0, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REFUSED(futex(gone, FUTEX_WAKE, 1, 0, 0, 0), EFAULT);
    REFUSED(futex(none, FUTEX_WAKE, 1, 0, 0, 0), EFAULT);
    REFUSED(futex(&w[0], FUTEX_CMP_REQUEUE, 1, 1, gone, 1), EFAULT);
    REFUSED(futex(&w[0], FUTEX_CMP_REQUEUE, 1, 1, none, 1), EFAULT);
    REFUSED(futex(none, FUTEX_CMP_REQUEUE, 1, 1, &w[1], 1), EFAULT);
    long priv = futex(none, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
    int fd = open("/tmp/clonefutex.f", O_CREAT | O_RDWR | O_TRUNC, 0644);
    ftruncate(fd, 4096);
    uint32_t *cut = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    long before = futex(cut, FUTEX_WAKE, 1, 0, 0, 0);
    ftruncate(fd, 0);
    REFUSED(futex(cut, FUTEX_WAKE, 1, 0, 0, 0), EFAULT);
    close(fd);
    unlink("/tmp/clonefutex.f");
    printf("clonefutex: futex EFAULT for unmapped, PROT_NONE, truncated; private wake %ld, file "
           "wake %ld\n",
           priv, before);
    munmap(cut, 4096);
    munmap(none, 4096);
    munmap(two, 4096);
    munmap(w, 4096);
}

struct waitv {
    uint64_t val, uaddr;
    uint32_t flags, reserved;
};

static long waitv(struct waitv *w, unsigned n, unsigned flags, struct timespec *t, int clock) {
    return syscall(449, w, n, flags, t, clock);
}

static void waitvs(void) {
    static uint32_t words[3];
    struct waitv w[3];
    for (int i = 0; i < 3; i++)
        w[i] = (struct waitv){0, (uintptr_t)&words[i], 2 | 128, 0};
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += 1;
    REFUSED(waitv(w, 1, 1, &t, CLOCK_MONOTONIC), EINVAL);
    REFUSED(waitv(w, 0, 0, &t, CLOCK_MONOTONIC), EINVAL);
    REFUSED(waitv(w, 129, 0, &t, CLOCK_MONOTONIC), EINVAL);
    REFUSED(waitv(0, 1, 0, &t, CLOCK_MONOTONIC), EINVAL);
    REFUSED(waitv(w, 1, 0, &t, CLOCK_TAI), EINVAL);
    REFUSED(waitv(BAD, 1, 0, &t, CLOCK_MONOTONIC), EFAULT);
    w[0].flags = 128;
    REFUSED(waitv(w, 1, 0, &t, CLOCK_MONOTONIC), EINVAL);
    w[0].flags = 2 | 128;
    w[0].reserved = 1;
    REFUSED(waitv(w, 1, 0, &t, CLOCK_MONOTONIC), EINVAL);
    w[0].reserved = 0;
    w[0].uaddr = 1;
    REFUSED(waitv(w, 1, 0, &t, CLOCK_MONOTONIC), EINVAL);
    w[0].uaddr = (uintptr_t)&words[0];
    w[1].val = 1;
    REFUSED(waitv(w, 3, 0, &t, CLOCK_MONOTONIC), EAGAIN);
    w[1].val = 0;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += 20000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    REFUSED(waitv(w, 1, 0, &t, CLOCK_REALTIME), ETIMEDOUT);
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_nsec += 20000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    REFUSED(waitv(w, 3, 0, &t, CLOCK_MONOTONIC), ETIMEDOUT);

    /* One word of shared memory, woken by another process. */
    uint32_t *s = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    *s = 0;
    pid_t c = fork();
    if (c == 0) {
        msleep(50);
        futex(s, FUTEX_WAKE, 1, 0, 0, 0);
        _exit(0);
    }
    struct waitv one = {0, (uintptr_t)s, 2, 0};
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += 5;
    long r = waitv(&one, 1, 0, &t, CLOCK_MONOTONIC);
    waitpid(c, 0, 0);
    munmap(s, 4096);
    printf("clonefutex: futex_waitv woken by another process: %ld\n", r);
}

static volatile sig_atomic_t got_usr1;
static void on_usr1(int s) {
    (void)s;
    got_usr1 = 1;
}

static void deathsig(void) {
    int sig = -1;
    CHECK(prctl(PR_SET_PDEATHSIG, SIGUSR2) == 0, "set pdeathsig");
    CHECK(prctl(PR_GET_PDEATHSIG, &sig) == 0, "get pdeathsig");
    REFUSED(prctl(PR_SET_PDEATHSIG, 65), EINVAL);
    REFUSED(prctl(PR_GET_PDEATHSIG, BAD), EFAULT);
    int kid = -1;
    pid_t c = fork();
    if (c == 0) {
        /* Not inherited. */
        int v = -1;
        prctl(PR_GET_PDEATHSIG, &v);
        _exit(v == 0 ? 0 : 1);
    }
    int st;
    waitpid(c, &st, 0);
    kid = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    prctl(PR_SET_PDEATHSIG, 0);
    printf("clonefutex: pdeathsig %d, child's %s\n", sig, kid == 0 ? "0" : "not 0");

    /* A grandchild asks for SIGUSR1 at its parent's end and gets it. */
    int p[2];
    pipe(p);
    pid_t a = fork();
    if (a == 0) {
        int q[2];
        pipe(q);
        pid_t b = fork();
        if (b == 0) {
            signal(SIGUSR1, on_usr1);
            prctl(PR_SET_PDEATHSIG, SIGUSR1);
            write(q[1], "r", 1);
            for (int i = 0; i < 300 && !got_usr1; i++)
                msleep(10);
            char m = got_usr1 ? 'y' : 'n';
            write(p[1], &m, 1);
            _exit(0);
        }
        char x;
        read(q[0], &x, 1);
        _exit(0);
    }
    waitpid(a, &st, 0);
    char m = '?';
    read(p[0], &m, 1);
    close(p[0]);
    close(p[1]);
    /* The orphan came to pid 1 (this program): reaped here. */
    pid_t orphan = wait(&st);
    printf("clonefutex: the orphan got its death signal: %c; adopted and reaped %d\n", m,
           orphan > 0);
}

static void subreaper(void) {
    int v = -1;
    CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0, "set subreaper");
    CHECK(prctl(PR_GET_CHILD_SUBREAPER, &v) == 0, "get subreaper");
    REFUSED(prctl(PR_GET_CHILD_SUBREAPER, BAD), EFAULT);
    int p[2];
    pipe(p);
    pid_t me = getpid();
    pid_t a = fork();
    if (a == 0) {
        int q[2];
        pipe(q);
        pid_t b = fork();
        if (b == 0) {
            char x;
            close(q[1]);
            read(q[0], &x, 1); /* EOF: its parent has ended */
            for (int i = 0; i < 100 && getppid() != me; i++)
                msleep(10);
            char m = getppid() == me ? 'y' : 'n';
            write(p[1], &m, 1);
            _exit(7);
        }
        int c = -1;
        prctl(PR_GET_CHILD_SUBREAPER, &c);
        _exit(c == 0 ? 0 : 1);
    }
    int st;
    waitpid(a, &st, 0);
    int a_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    char m = '?';
    read(p[0], &m, 1);
    pid_t got = wait(&st);
    close(p[0]);
    close(p[1]);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    v = v == 1;
    printf("clonefutex: subreaper %d (child's 0: %d), orphan reparented %c, reaped with status %d "
           "(%d)\n",
           v, a_ok, m, WIFEXITED(st) ? WEXITSTATUS(st) : -1, got > 0);
}

static int read_file(const char *path, char *buf, int len) {
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    int n = read(fd, buf, len - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    return n;
}

static void names(void) {
    char got[32] = {0}, comm[32] = {0}, task[32] = {0}, path[64];
    CHECK(prctl(PR_SET_NAME, "clonefutex_name_too_long") == 0, "set name");
    CHECK(prctl(PR_GET_NAME, got) == 0, "get name");
    REFUSED(prctl(PR_SET_NAME, BAD), EFAULT);
    REFUSED(prctl(PR_GET_NAME, BAD), EFAULT);
    read_file("/proc/self/comm", comm, sizeof comm);
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)syscall(SYS_gettid));
    read_file(path, task, sizeof task);
    comm[strcspn(comm, "\n")] = 0;
    task[strcspn(task, "\n")] = 0;
    printf("clonefutex: name '%s', comm '%s', task comm '%s'\n", got, comm, task);
    prctl(PR_SET_NAME, "clonefutex");
}

static void slack(void) {
    long d = prctl(PR_GET_TIMERSLACK);
    prctl(PR_SET_TIMERSLACK, 1);
    long one = prctl(PR_GET_TIMERSLACK);
    prctl(PR_SET_TIMERSLACK, 0);
    long back = prctl(PR_GET_TIMERSLACK);
    prctl(PR_SET_TIMERSLACK, 70000);
    int p[2];
    pipe(p);
    if (fork() == 0) {
        long v[2];
        v[0] = prctl(PR_GET_TIMERSLACK);
        prctl(PR_SET_TIMERSLACK, 0);
        v[1] = prctl(PR_GET_TIMERSLACK);
        write(p[1], v, sizeof v);
        _exit(0);
    }
    long v[2] = {0, 0};
    read(p[0], v, sizeof v);
    wait(0);
    close(p[0]);
    close(p[1]);
    prctl(PR_SET_TIMERSLACK, 0);
    printf("clonefutex: timer slack %ld, set 1 %ld, reset %ld; child %ld, its reset %ld\n", d, one,
           back, v[0], v[1]);
    REFUSED(prctl(12345), EINVAL);
}

static void flags(void) {
    long d0 = prctl(PR_GET_DUMPABLE);
    prctl(PR_SET_DUMPABLE, 0);
    long d1 = prctl(PR_GET_DUMPABLE);
    REFUSED(prctl(PR_SET_DUMPABLE, 2), EINVAL);
    prctl(PR_SET_DUMPABLE, 1);
    long n0 = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
    REFUSED(prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0), EINVAL);
    REFUSED(prctl(PR_SET_NO_NEW_PRIVS, 1, 1, 0, 0), EINVAL);
    REFUSED(prctl(PR_GET_NO_NEW_PRIVS, 1, 0, 0, 0), EINVAL);
    int p[2];
    pipe(p);
    if (fork() == 0) {
        long r = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        long v[2] = {r, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)};
        if (fork() == 0) {
            long w = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
            write(p[1], &w, sizeof w);
            _exit(0);
        }
        wait(0);
        write(p[1], v, sizeof v);
        _exit(0);
    }
    long inherited = -1, v[2] = {-1, -1};
    read(p[0], &inherited, sizeof inherited);
    read(p[0], v, sizeof v);
    wait(0);
    close(p[0]);
    close(p[1]);
    long seccomp = prctl(PR_GET_SECCOMP);
    long cap = prctl(PR_CAPBSET_READ, 0);
    REFUSED(prctl(PR_CAPBSET_READ, 41), EINVAL);
    prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
    long thp = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
    prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
    int *tidp = (int *)1;
    long ta = prctl(PR_GET_TID_ADDRESS, &tidp);
    REFUSED(prctl(PR_GET_TID_ADDRESS, BAD), EFAULT);
    printf("clonefutex: dumpable %ld then %ld; no_new_privs %ld, set %ld get %ld, inherited %ld; "
           "seccomp %ld, capbset %ld, thp %ld, tid address %ld (%d)\n",
           d0, d1, n0, v[0], v[1], inherited, seccomp, cap, thp, ta, tidp != (int *)1);
}

static void persona(void) {
    struct utsname u;
    long first = syscall(SYS_personality, 0xffffffffUL);
    long old = syscall(SYS_personality, 0x0020000UL);
    uname(&u);
    long now = syscall(SYS_personality, 0xffffffffUL);
    syscall(SYS_personality, 0UL);
    struct utsname v;
    uname(&v);
    printf("clonefutex: personality %ld, then %ld and %#lx; UNAME26 release %s, after %s\n", first,
           old, now, u.release, v.release);
}

static void cpus(void) {
    unsigned cpu = 7, node = 7;
    long r = syscall(SYS_getcpu, &cpu, &node, 0);
    long r2 = syscall(SYS_getcpu, 0, 0, 0);
    REFUSED(syscall(SYS_getcpu, BAD, 0, 0), EFAULT);
    REFUSED(syscall(SYS_getcpu, 0, BAD, 0), EFAULT);
    printf("clonefutex: getcpu %ld cpu %u node %u; with none %ld\n", r, cpu, node, r2);

    long q = syscall(SYS_membarrier, 0, 0);
    REFUSED(syscall(SYS_membarrier, 0, 1), EINVAL);
    REFUSED(syscall(SYS_membarrier, 8, 0), EPERM);
    REFUSED(syscall(SYS_membarrier, 32, 0), EPERM);
    REFUSED(syscall(SYS_membarrier, 128, 0), EINVAL);
    REFUSED(syscall(SYS_membarrier, -1, 0), EINVAL);
    long g = syscall(SYS_membarrier, 1, 0);
    long reg = syscall(SYS_membarrier, 16, 0);
    long pe = syscall(SYS_membarrier, 8, 0);
    long ge = syscall(SYS_membarrier, 2, 0);
    printf("clonefutex: membarrier query %ld, global %ld, register %ld, private %ld, global "
           "expedited %ld\n",
           q, g, reg, pe, ge);
}

static void unsharing(void) {
    REFUSED(unshare(-1), EINVAL);
    REFUSED(unshare(CLONE_NEWPID), EINVAL);
    REFUSED(unshare(CLONE_NEWUSER), EINVAL);
    long f = unshare(CLONE_FILES), s = unshare(CLONE_FS), n = unshare(CLONE_NEWNS);
    long v = unshare(CLONE_SIGHAND | CLONE_VM);
    pid_t c = fork();
    if (c == 0) {
        setuid(65534);
        errno = 0;
        int r = unshare(CLONE_NEWNS);
        _exit(r == -1 && errno == EPERM ? 0 : 1);
    }
    int st;
    waitpid(c, &st, 0);
    printf("clonefutex: unshare files %ld fs %ld newns %ld vm %ld; unprivileged newns EPERM %d\n",
           f, s, n, v, WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void compare(void) {
    int a = open("/tmp", O_RDONLY), b = dup(a), c = open("/", O_RDONLY);
    pid_t me = getpid();
    long same = syscall(SYS_kcmp, me, me, 0, a, b);
    long diff = syscall(SYS_kcmp, me, me, 0, a, c);
    long rev = syscall(SYS_kcmp, me, me, 0, c, a);
    long vm = syscall(SYS_kcmp, me, me, 1, 0, 0);
    REFUSED(syscall(SYS_kcmp, me, 30000, 0, a, b), ESRCH);
    REFUSED(syscall(SYS_kcmp, me, -1, 0, a, b), ESRCH);
    REFUSED(syscall(SYS_kcmp, me, me, 8, a, b), EINVAL);
    REFUSED(syscall(SYS_kcmp, me, me, -1, a, b), EINVAL);
    REFUSED(syscall(SYS_kcmp, me, me, 0, a, 999), EBADF);
    printf("clonefutex: kcmp same file %ld, different ones ordered %d, same vm %ld\n", same,
           (diff == 1 && rev == 2) || (diff == 2 && rev == 1), vm);
    close(a);
    close(b);
    close(c);
}

static void clones(void) {
    /* pid 1 has no parent to give. */
    REFUSED(syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0), EINVAL);
    REFUSED(syscall(SYS_clone, CLONE_SIGHAND | SIGCHLD, 0, 0, 0, 0), EINVAL);
    REFUSED(syscall(SYS_clone, CLONE_THREAD | SIGCHLD, 0, 0, 0, 0), EINVAL);
    /* The tid words: the parent's copy, and the child's own. */
    pid_t ptid = 0, ctid = 0;
    long c = syscall(SYS_clone, CLONE_PARENT_SETTID | CLONE_CHILD_SETTID | SIGCHLD, 0, &ptid,
                     &ctid, 0);
    if (c == 0)
        _exit(ctid == syscall(SYS_getpid) ? 0 : 1);
    int st;
    waitpid(c, &st, 0);
    int child_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    printf("clonefutex: clone settid: parent's %d, child's %d, in parent ctid %d\n", ptid == c,
           child_ok, ctid);

    /* CLONE_PARENT from a child: its clone is our child, not its. */
    int p[2], p2[2];
    pipe(p);
    pipe(p2);
    pid_t me = getpid();
    pid_t a = fork();
    if (a == 0) {
        long s = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, 0, 0, 0);
        if (s == 0) {
            char m = getppid() == me ? 'y' : 'n';
            write(p[1], &m, 1);
            _exit(5);
        }
        int e = waitpid(s, 0, 0) == -1 && errno == ECHILD;
        write(p2[1], &s, sizeof s);
        _exit(e ? 0 : 1);
    }
    char m = '?';
    long sib = 0;
    read(p[0], &m, 1);
    waitpid(a, &st, 0);
    int a_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    read(p2[0], &sib, sizeof sib);
    pid_t got = waitpid(sib, &st, 0);
    close(p[0]);
    close(p[1]);
    close(p2[0]);
    close(p2[1]);
    printf("clonefutex: CLONE_PARENT: the sibling's parent is ours %c, its maker has no such "
           "child %d, we reaped it %d status %d\n",
           m, a_ok, got == sib, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static void pidfds(void) {
    int me = syscall(SYS_pidfd_open, getpid(), 0);
    int fdflags = fcntl(me, F_GETFD);
    REFUSED(syscall(SYS_pidfd_open, -1, 0), EINVAL);
    REFUSED(syscall(SYS_pidfd_open, 0, 0), EINVAL);
    REFUSED(syscall(SYS_pidfd_open, getpid(), 1), EINVAL);
    REFUSED(syscall(SYS_pidfd_open, 30000, 0), ESRCH);
    char b[8];
    REFUSED(read(me, b, 8), EINVAL);
    int copy = syscall(SYS_pidfd_getfd, me, 1, 0);
    int copy_cloexec = fcntl(copy, F_GETFD) & FD_CLOEXEC;
    REFUSED(syscall(SYS_pidfd_getfd, me, 1, 1), EINVAL);
    REFUSED(syscall(SYS_pidfd_getfd, 1, 1, 0), EBADF);
    REFUSED(syscall(SYS_pidfd_getfd, me, 999, 0), EBADF);
    REFUSED(syscall(SYS_pidfd_send_signal, me, 0, 0, 1), EINVAL);
    REFUSED(syscall(SYS_pidfd_send_signal, 1, 0, 0, 0), EBADF);
    long self_sig = syscall(SYS_pidfd_send_signal, me, 0, 0, 0);
    printf("clonefutex: pidfd of self: close-on-exec %d, getfd close-on-exec %d, signal 0 %ld\n",
           fdflags == FD_CLOEXEC, copy_cloexec == FD_CLOEXEC, self_sig);
    close(copy);
    close(me);

    /* A child: not readable while it runs, readable once it has ended;
     * waitid through a nonblocking pidfd. */
    int p[2];
    pipe(p);
    pid_t c = fork();
    if (c == 0) {
        char x;
        read(p[0], &x, 1);
        _exit(3);
    }
    int fd = syscall(SYS_pidfd_open, c, O_NONBLOCK);
    int nb = (fcntl(fd, F_GETFL) & O_NONBLOCK) != 0;
    struct pollfd pf = {fd, POLLIN, 0};
    int before = poll(&pf, 1, 0);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    REFUSED(waitid(3, fd, &si, WEXITED), EAGAIN);
    write(p[1], "x", 1);
    pf.revents = 0;
    int after = poll(&pf, 1, 3000);
    int in = pf.revents == POLLIN;
    memset(&si, 0, sizeof si);
    long w = waitid(3, fd, &si, WEXITED);
    printf("clonefutex: pidfd of a child: nonblocking %d, polled %d then %d (POLLIN %d), waitid %ld "
           "pid ok %d status %d\n",
           nb, before, after, in, w, si.si_pid == c, si.si_status);
    REFUSED(syscall(SYS_pidfd_send_signal, fd, SIGTERM, 0, 0), ESRCH);
    close(fd);

    /* A signal through a pidfd. */
    c = fork();
    if (c == 0) {
        for (;;)
            pause();
    }
    fd = syscall(SYS_pidfd_open, c, 0);
    long k = syscall(SYS_pidfd_send_signal, fd, SIGTERM, 0, 0);
    int st;
    waitpid(c, &st, 0);
    printf("clonefutex: pidfd_send_signal %ld: ended by signal %d\n", k,
           WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    close(fd);
    close(p[0]);
    close(p[1]);
}

static void robust(void) {
    void *head;
    size_t len;
    REFUSED(syscall(SYS_get_robust_list, 30000, &head, &len), ESRCH);
    REFUSED(syscall(SYS_get_robust_list, 0, BAD, &len), EFAULT);
    long own = syscall(SYS_get_robust_list, 0, &head, &len);
    pid_t c = fork();
    if (c == 0) {
        setuid(1);
        errno = 0;
        long r = syscall(SYS_get_robust_list, 1, &head, &len);
        _exit(r == -1 && errno == EPERM ? 0 : 1);
    }
    int st;
    waitpid(c, &st, 0);
    printf("clonefutex: get_robust_list own %ld len %zu; of pid 1 when not root EPERM %d\n", own,
           len, WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

#define NS_GET_USERNS 0xb701
#define NS_GET_PARENT 0xb702
#define NS_GET_NSTYPE 0xb703
#define NS_GET_OWNER_UID 0xb704

static void namespaces(void) {
    int user = open("/proc/self/ns/user", O_RDONLY);
    int pid = open("/proc/self/ns/pid", O_RDONLY);
    int mnt = open("/proc/self/ns/mnt", O_RDONLY);
    CHECK(user >= 0 && pid >= 0 && mnt >= 0, "open ns");
    REFUSED(ioctl(user, NS_GET_USERNS), EPERM);
    REFUSED(ioctl(user, NS_GET_PARENT), EPERM);
    REFUSED(ioctl(pid, NS_GET_PARENT), EPERM);
    REFUSED(ioctl(mnt, NS_GET_PARENT), EINVAL);
    REFUSED(ioctl(pid, NS_GET_OWNER_UID, BAD), EINVAL);
    REFUSED(ioctl(user, NS_GET_OWNER_UID, BAD), EFAULT);
    REFUSED(ioctl(1, NS_GET_NSTYPE), ENOTTY);
    long type = ioctl(pid, NS_GET_NSTYPE);
    unsigned uid = 7;
    long own = ioctl(user, NS_GET_OWNER_UID, &uid);
    int owner = ioctl(pid, NS_GET_USERNS);
    struct stat a, b, c, d;
    fstat(user, &a);
    fstat(owner, &b);
    int same_owner = a.st_ino == b.st_ino && (fcntl(owner, F_GETFD) & FD_CLOEXEC);
    /* Another process is in the same namespaces. */
    int p[2];
    pipe(p);
    pid_t k = fork();
    if (k == 0) {
        char x;
        read(p[0], &x, 1);
        _exit(0);
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/pid", k);
    stat(path, &c);
    fstat(pid, &d);
    snprintf(path, sizeof path, "/proc/%d/ns/pid_for_children", k);
    struct stat e;
    stat(path, &e);
    write(p[1], "x", 1);
    waitpid(k, 0, 0);
    close(p[0]);
    close(p[1]);
    printf("clonefutex: ns pid type %#lx, user owner uid %ld %u, a pid ns's owner is the user ns "
           "%d, a child's pid ns is ours %d (for children %d)\n",
           type, own, uid, same_owner, c.st_ino == d.st_ino, e.st_ino == d.st_ino);
    close(owner);
    close(user);
    close(pid);
    close(mnt);
}

/* Any 64-bit value in any argument: an errno, never a keeper's fault. */
static void garbage(void) {
    const long v[] = {-1L, 0x7fffffffffffffffL, (long)0x8000000000000000UL, 0xffffffffL, 4095,
                      -4096};
    const long calls[] = {SYS_prctl,          SYS_personality,       SYS_getcpu,
                          SYS_membarrier,     SYS_unshare,           SYS_kcmp,
                          SYS_pidfd_open,     SYS_pidfd_send_signal, SYS_pidfd_getfd,
                          SYS_get_robust_list, 449,                  SYS_futex};
    int n = 0;
    for (unsigned c = 0; c < sizeof calls / sizeof calls[0]; c++)
        for (unsigned i = 0; i < sizeof v / sizeof v[0]; i++) {
            long a = v[i], b = v[(i + 1) % 6], d = v[(i + 2) % 6];
            if (calls[c] == SYS_personality)
                continue; /* would change the persona: checked above */
            if (calls[c] == SYS_unshare && (a & 0x400) == 0)
                a |= 0; /* unshare of anything is harmless here */
            long r = syscall(calls[c], a, b, d, a, b, d);
            n += r == -1;
        }
    printf("clonefutex: bad arguments refused, the keeper still serves: %d\n", n > 0);
}

int main(void) {
    setvbuf(stdout, 0, _IONBF, 0);
    futexes();
    waitvs();
    deathsig();
    subreaper();
    names();
    slack();
    flags();
    persona();
    cpus();
    unsharing();
    compare();
    clones();
    pidfds();
    robust();
    namespaces();
    garbage();
    if (failures == 0)
        printf("clonefutex: all ok\n");
    return failures != 0;
}
