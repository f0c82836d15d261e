/* Threads (musl's pthreads over clone, futex, set_tid_address,
 * set_robust_list, tgkill): 64 threads created and joined, a mutex and
 * condition-variable ping-pong, a barrier, thread-local storage, a thread
 * blocked in a pipe read while the others go on, a sleeping thread, a
 * cancelled thread, a signal to one thread, fork in a threaded process,
 * futex requeue (a broadcast waking 8 waiters) and timed waits. Prints
 * exact values and "threads: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

/* <linux/futex.h>'s numbers (musl-gcc has no kernel headers). */
#define FUTEX_WAIT_PRIVATE 128
#define FUTEX_WAKE_PRIVATE 129
#define FUTEX_CMP_REQUEUE_PRIVATE (4 | 128)
#define FUTEX_WAIT_BITSET_PRIVATE (9 | 128)
#define FUTEX_BITSET_MATCH_ANY 0xffffffff

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("threads: FAILED line %d: ", __LINE__);                                         \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static __thread int tls_value = 7;
static atomic_int counter;

static void *add_one(void *arg) {
    tls_value += (int)(long)arg;
    atomic_fetch_add(&counter, 1);
    return (void *)(long)(tls_value * 2);
}

/* Ping-pong: two threads hand a token back and forth. */
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int turn, rounds_done;

static void *pong(void *arg) {
    (void)arg;
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&m);
        while (turn != 1)
            pthread_cond_wait(&cv, &m);
        turn = 0;
        rounds_done++;
        pthread_cond_signal(&cv);
        pthread_mutex_unlock(&m);
    }
    return NULL;
}

static pthread_barrier_t bar;
static atomic_int before_barrier, after_barrier_saw;

static void *barrier_worker(void *arg) {
    (void)arg;
    atomic_fetch_add(&before_barrier, 1);
    pthread_barrier_wait(&bar);
    atomic_fetch_add(&after_barrier_saw, atomic_load(&before_barrier));
    return NULL;
}

static int pipefd[2];
static void *reader(void *arg) {
    (void)arg;
    char c = 0;
    ssize_t n = read(pipefd[0], &c, 1);
    return (void *)(long)(n == 1 ? c : -1);
}

static void *faulter(void *arg) {
    (void)arg;
    usleep(20000);
    int *volatile wild = (int *)8;
    *wild = 1;
    return NULL;
}

static void *sleeper(void *arg) {
    (void)arg;
    struct timespec ts = {0, 200 * 1000 * 1000};
    nanosleep(&ts, NULL);
    return (void *)42L;
}

static void *cancelled(void *arg) {
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static volatile sig_atomic_t got_usr1;
static volatile pid_t usr1_tid;
static void on_usr1(int s) {
    (void)s;
    got_usr1 = 1;
    usr1_tid = gettid();
}
static atomic_int target_ready;
static volatile pid_t target_tid;
static void *signal_target(void *arg) {
    (void)arg;
    target_tid = gettid();
    atomic_store(&target_ready, 1);
    while (!got_usr1) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* Futex requeue: 8 waiters on a word, one FUTEX_CMP_REQUEUE moves them. */
static atomic_int fword, fword2, woken_count, waiting_count;
static atomic_int fwaiter_tid;
static void *fwaiter(void *arg) {
    (void)arg;
    atomic_store(&fwaiter_tid, (int)syscall(SYS_gettid));
    atomic_fetch_add(&waiting_count, 1);
    while (atomic_load(&fword) == 0)
        syscall(SYS_futex, &fword, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    atomic_fetch_add(&woken_count, 1);
    return NULL;
}

/* The state letter of a /proc stat file ('?' if it cannot be read). */
static char stat_state(const char *path) {
    char buf[512];
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

static long msec(struct timespec a, struct timespec b) {
    return (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    printf("threads: main tid %d is pid %d: %d\n", gettid(), getpid(), gettid() == getpid());

    /* 64 threads at once, then joined. */
    pthread_t t[64];
    for (long i = 0; i < 64; i++)
        CHECK(pthread_create(&t[i], NULL, add_one, (void *)i) == 0, "create %ld", i);
    long sum = 0;
    for (int i = 0; i < 64; i++) {
        void *r;
        CHECK(pthread_join(t[i], &r) == 0, "join %d", i);
        sum += (long)r;
    }
    printf("threads: 64 joined, counter %d, sum %ld, main tls %d\n", atomic_load(&counter), sum,
           tls_value);

    /* Mutex and condition variable ping-pong. */
    pthread_t p;
    pthread_create(&p, NULL, pong, NULL);
    for (int i = 0; i < 500; i++) {
        pthread_mutex_lock(&m);
        turn = 1;
        pthread_cond_signal(&cv);
        while (turn != 0)
            pthread_cond_wait(&cv, &m);
        pthread_mutex_unlock(&m);
    }
    pthread_join(p, NULL);
    printf("threads: ping-pong rounds %d\n", rounds_done);

    /* A barrier of 8. */
    pthread_barrier_init(&bar, NULL, 8);
    pthread_t b[7];
    for (int i = 0; i < 7; i++)
        pthread_create(&b[i], NULL, barrier_worker, NULL);
    atomic_fetch_add(&before_barrier, 1);
    pthread_barrier_wait(&bar);
    atomic_fetch_add(&after_barrier_saw, atomic_load(&before_barrier));
    for (int i = 0; i < 7; i++)
        pthread_join(b[i], NULL);
    printf("threads: barrier: every thread saw %d\n", atomic_load(&after_barrier_saw) / 8);

    /* A thread blocked in read does not stop the others: one sleeps and
     * ends meanwhile. */
    pipe(pipefd);
    pthread_t rd, sl;
    pthread_create(&rd, NULL, reader, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pthread_create(&sl, NULL, sleeper, NULL);
    void *sr;
    pthread_join(sl, &sr);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long slept = msec(t0, t1);
    printf("threads: sleeper returned %ld while the reader waited; slept 200 ms: %d\n", (long)sr,
           slept >= 190 && slept < 1500);
    write(pipefd[1], "x", 1);
    void *rr;
    pthread_join(rd, &rr);
    printf("threads: reader got '%c'\n", (char)(long)rr);

    /* Cancellation of a thread in pause(). */
    pthread_t c;
    pthread_create(&c, NULL, cancelled, NULL);
    usleep(20000);
    CHECK(pthread_cancel(c) == 0, "cancel");
    void *cr;
    pthread_join(c, &cr);
    printf("threads: cancelled thread joined: %d\n", cr == PTHREAD_CANCELED);

    /* A signal to one thread (tgkill). */
    signal(SIGUSR1, on_usr1);
    pthread_t st;
    pthread_create(&st, NULL, signal_target, NULL);
    while (!atomic_load(&target_ready))
        usleep(1000);
    CHECK(pthread_kill(st, SIGUSR1) == 0, "pthread_kill");
    pthread_join(st, NULL);
    printf("threads: SIGUSR1 handled by the target thread: %d\n", usr1_tid == target_tid);

    /* Requeue: 8 waiters, a CMP_REQUEUE waking 1 and moving 7 to another
     * word, then a wake of that word. */
    pthread_t fw[8];
    for (int i = 0; i < 8; i++)
        pthread_create(&fw[i], NULL, fwaiter, NULL);
    while (atomic_load(&waiting_count) < 8)
        usleep(1000);
    usleep(20000);
    /* /proc/self/task and Threads: with 8 waiters and main. */
    int entries = 0;
    DIR *td = opendir("/proc/self/task");
    struct dirent *de;
    while (td && (de = readdir(td)))
        if (de->d_name[0] != '.')
            entries++;
    if (td)
        closedir(td);
    char line[256];
    int nthreads = -1;
    FILE *sf = fopen("/proc/self/status", "r");
    while (sf && fgets(line, sizeof line, sf))
        sscanf(line, "Threads: %d", &nthreads);
    if (sf)
        fclose(sf);
    printf("threads: /proc/self/task has %d, status says %d\n", entries, nthreads);
    /* A thread waiting on a private futex sleeps (its keeper's status
     * page says so: no call of its is parked in unixd). */
    char tpath[64];
    snprintf(tpath, sizeof tpath, "/proc/self/task/%d/stat", atomic_load(&fwaiter_tid));
    char waiter_state = stat_state(tpath);
    atomic_store(&fword, 1);
    long moved = syscall(SYS_futex, &fword, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)(long)INT_MAX,
                         &fword2, 1);
    long woke2 = syscall(SYS_futex, &fword2, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    for (int i = 0; i < 8; i++)
        pthread_join(fw[i], NULL);
    printf("threads: requeue said %ld, the second word woke %ld, %d ran on\n", moved, woke2,
           atomic_load(&woken_count));
    printf("threads: a futex waiter's state %c; the process's after the wakes %c\n",
           waiter_state, stat_state("/proc/self/stat"));
    /* The joined threads' entries are gone; the one left is main's. */
    entries = 0;
    int main_seen = 0;
    td = opendir("/proc/self/task");
    while (td && (de = readdir(td)))
        if (de->d_name[0] != '.') {
            entries++;
            main_seen |= atoi(de->d_name) == getpid();
        }
    if (td)
        closedir(td);
    printf("threads: after the joins /proc/self/task has %d (main's %d)\n", entries, main_seen);

    /* Timed waits: relative FUTEX_WAIT, absolute WAIT_BITSET, a
     * condition variable timing out. */
    int zero = 0;
    struct timespec rel = {0, 100 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long r1 = syscall(SYS_futex, &zero, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
    int e1 = errno;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long w1 = msec(t0, t1);
    struct timespec abs;
    clock_gettime(CLOCK_MONOTONIC, &abs);
    abs.tv_nsec += 100 * 1000 * 1000;
    if (abs.tv_nsec >= 1000000000) {
        abs.tv_sec++;
        abs.tv_nsec -= 1000000000;
    }
    long r2 = syscall(SYS_futex, &zero, FUTEX_WAIT_BITSET_PRIVATE, 0, &abs, NULL,
                      FUTEX_BITSET_MATCH_ANY);
    int e2 = errno;
    printf("threads: timed waits %ld/%s %d, %ld/%s\n", r1, e1 == ETIMEDOUT ? "ETIMEDOUT" : "?",
           w1 >= 95 && w1 < 1000, r2, e2 == ETIMEDOUT ? "ETIMEDOUT" : "?");
    long r3 = syscall(SYS_futex, &zero, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
    printf("threads: wait on a changed word: %ld/%s\n", r3, errno == EAGAIN ? "EAGAIN" : "?");

    /* fork in a threaded process: the child has one thread. */
    pthread_t keep;
    pthread_create(&keep, NULL, sleeper, NULL);
    pid_t child = fork();
    if (child == 0) {
        pthread_t ct;
        int ok = pthread_create(&ct, NULL, add_one, (void *)1L) == 0 && pthread_join(ct, NULL) == 0;
        _exit(ok ? 5 : 6);
    }
    int ws;
    waitpid(child, &ws, 0);
    pthread_join(keep, NULL);
    printf("threads: forked child (one thread, then two) exited %d\n", WEXITSTATUS(ws));

    /* A thread that faults takes its process down by SIGSEGV, and only it;
     * bad arguments get Linux's errors. */
    pid_t fc = fork();
    if (fc == 0) {
        pthread_t ft, other;
        pthread_create(&other, NULL, cancelled, NULL);
        pthread_create(&ft, NULL, faulter, NULL);
        pthread_join(ft, NULL);
        _exit(0);
    }
    int fs;
    waitpid(fc, &fs, 0);
    printf("threads: a faulting thread's process ended by signal %d\n", WIFSIGNALED(fs) ? WTERMSIG(fs) : -1);
    errno = 0;
    long bad = syscall(SYS_futex, (int *)8, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    printf("threads: futex on a wild address: %ld %s\n", bad, errno == EFAULT ? "EFAULT" : "?");
    errno = 0;
    long badop = syscall(SYS_futex, &zero, 99, 0, NULL, NULL, 0);
    printf("threads: futex op 99: %ld %s\n", badop, errno == ENOSYS ? "ENOSYS" : "?");
    errno = 0;
    long badclone = syscall(SYS_clone, 0x10000 /* CLONE_THREAD alone */, 0, 0, 0, 0);
    printf("threads: CLONE_THREAD without CLONE_SIGHAND: %ld %s\n", badclone, errno == EINVAL ? "EINVAL" : "?");
    errno = 0;
    long badtg = syscall(SYS_tgkill, getpid(), 99999, SIGUSR1);
    printf("threads: tgkill of no such thread: %ld %s\n", badtg, errno == ESRCH ? "ESRCH" : "?");
    errno = 0;
    long badrob = syscall(SYS_set_robust_list, NULL, 7);
    printf("threads: set_robust_list of a bad length: %ld %s\n", badrob, errno == EINVAL ? "EINVAL" : "?");

    printf(failures ? "threads: %d failures\n" : "threads: all ok\n", failures);
    return failures != 0;
}
