/* Linux side of Stet's benchmark comparison. Runs as /bench inside an
 * initramfs under QEMU with -icount shift=0, where the guest's TSC advances
 * once per guest instruction, so every figure below is an instruction count
 * and, with run.sh's fixed -seed, repeats exactly between runs.
 *
 * Each row: warm up, time every operation separately with `lfence; rdtsc`,
 * report the median minus the cost of an empty rdtsc pair, in the line format
 * Stet's harness parses:
 *   BENCH name=<row> instructions=<n> iterations=<n> overhead=<n>
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 2000          /* syscall-sized rows */
#define N_FORK 200      /* fork/exec rows: ~100k+ instructions each */
#define N_ECHO 20       /* 1 MiB echo: ~ten million instructions each */
#define PAGE 4096
/* From <linux/futex.h>, which musl does not ship. */
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define ECHO_BYTES (1 << 20)
#define ECHO_CHUNK 1000
#define N_FILE 10       /* 1 MiB file: ~a million instructions each */
#define FILE_BYTES (1 << 20)
#define FILE_PATH "/tmp/linuxbench.dat"
#define N_THREAD 200    /* thread rows: tens of thousands of instructions */
#define N_WAITERS 8     /* futex_requeue: threads one broadcast wakes */
#define N_PY 10         /* python_startup: tens of millions each */

static uint64_t samples[N];
static uint64_t overhead;

/* lfence keeps rdtsc from running ahead of (or behind) the measured code. */
static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Same median as Stet's (element n/2 of the sorted samples). */
static uint64_t median(uint64_t *s, int n)
{
    qsort(s, n, sizeof *s, cmp_u64);
    return s[n / 2];
}

static void report(const char *name, int n)
{
    uint64_t m = median(samples, n);
    m = m > overhead ? m - overhead : 0;
    printf("BENCH name=%s instructions=%llu iterations=%d overhead=%llu\n",
           name, (unsigned long long)m, n, (unsigned long long)overhead);
    fflush(stdout);
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* The `syscall` instruction itself, without libc's errno wrapper, so the
 * row is the kernel's entry/exit path and little else. */
static inline long raw_syscall0(long nr)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr) : "rcx", "r11", "memory");
    return ret;
}

/* Sleeps until the next whole second of CLOCK_MONOTONIC, so that every row
 * starts at the same phase of the timer tick (and of PELT's periods, CFS's
 * bookkeeping, ...) however long the boot or the rows before it took: a
 * change elsewhere (a new row, a longer boot) then moves a row's numbers
 * little if at all (tested: 100k extra instructions before the first row
 * changed only linux_fork_exec_wait, by 65). The idle wait also lets
 * pending kernel work run before the row.
 * Under -icount with sleep=off the wait takes no real time. */
static void sync_clock(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += 1;
    t.tv_nsec = 0;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL))
        ;
}

/* Profile mode (`linuxbench ROW COUNT`): measure() runs op() this many
 * times, timing and printing nothing (see main). */
static long profile_count;

/* Times op() n times after n/10 warm-up calls. */
static void measure(const char *name, int n, void (*op)(void))
{
    if (profile_count) {
        for (long i = 0; i < profile_count; i++)
            op();
        return;
    }
    for (int i = 0; i < n / 10; i++)
        op();
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        op();
        uint64_t t1 = rdtsc();
        samples[i] = t1 - t0;
    }
    report(name, n);
}

/* --- syscalls ------------------------------------------------------------ */

static void op_null(void) { raw_syscall0(1000); /* no such syscall: -ENOSYS */ }
static void op_getpid(void) { raw_syscall0(SYS_getpid); }

/* --- futex round trip between two processes ------------------------------ */

/* Shared (not FUTEX_PRIVATE) futexes: the words live on a MAP_SHARED page
 * seen by two processes with different mms. `ping` counts the parent's
 * wake-ups, `pong` the child's answers. */
static volatile int *ping, *pong;

static long futex(volatile int *uaddr, int op, int val)
{
    return syscall(SYS_futex, uaddr, op, val, NULL, NULL, 0);
}

/* Sleeps until *w differs from old. */
static void futex_wait_change(volatile int *w, int old)
{
    while (__atomic_load_n(w, __ATOMIC_ACQUIRE) == old)
        futex(w, FUTEX_WAIT, old);
}

static void op_futex_rt(void)
{
    int v = *ping + 1;
    __atomic_store_n(ping, v, __ATOMIC_RELEASE);
    futex(ping, FUTEX_WAKE, 1);
    futex_wait_change(pong, v - 1);
}

static void futex_rt(void)
{
    volatile int *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        die("mmap");
    ping = page;
    pong = page + 16; /* another cache line; irrelevant to counts, but tidy */
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        /* Echo each ping; a negative ping means stop. */
        for (int seen = 0;;) {
            futex_wait_change(ping, seen);
            seen = *ping;
            if (seen < 0)
                _exit(0);
            __atomic_store_n(pong, seen, __ATOMIC_RELEASE);
            futex(pong, FUTEX_WAKE, 1);
        }
    }
    measure("linux_futex_rt", N, op_futex_rt);
    __atomic_store_n(ping, -1, __ATOMIC_RELEASE);
    futex(ping, FUTEX_WAKE, 1);
    waitpid(pid, NULL, 0);
    munmap((void *)page, PAGE);
}

/* --- pipes ---------------------------------------------------------------- */

static int to_child, from_child; /* parent's ends */

static void read_full(int fd, char *buf, size_t n)
{
    while (n > 0) {
        ssize_t r = read(fd, buf, n);
        if (r <= 0)
            die("read");
        buf += r;
        n -= (size_t)r;
    }
}

static void write_full(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t r = write(fd, buf, n);
        if (r <= 0)
            die("write");
        buf += r;
        n -= (size_t)r;
    }
}

/* Starts a child that echoes whatever arrives on one pipe back on the other
 * until end of file. */
static pid_t start_echo_child(void)
{
    int down[2], up[2];
    if (pipe(down) || pipe(up))
        die("pipe");
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        static char buf[ECHO_CHUNK];
        close(down[1]);
        close(up[0]);
        ssize_t r;
        while ((r = read(down[0], buf, sizeof buf)) > 0)
            write_full(up[1], buf, (size_t)r);
        _exit(0);
    }
    close(down[0]);
    close(up[1]);
    to_child = down[1];
    from_child = up[0];
    return pid;
}

static void stop_echo_child(pid_t pid)
{
    close(to_child);
    close(from_child);
    waitpid(pid, NULL, 0);
}

static void op_pipe_rt(void)
{
    char c = 'x';
    write_full(to_child, &c, 1);
    read_full(from_child, &c, 1);
}

/* 1 MiB down and back, a 1000-byte chunk at a time: each chunk is written
 * and its echo read back before the next, so neither pipe ever fills. */
static void op_pipe_1mb_echo(void)
{
    static char out[ECHO_CHUNK], in[ECHO_CHUNK];
    for (size_t done = 0; done < ECHO_BYTES; done += ECHO_CHUNK) {
        size_t n = ECHO_BYTES - done < ECHO_CHUNK ? ECHO_BYTES - done : ECHO_CHUNK;
        write_full(to_child, out, n);
        read_full(from_child, in, n);
    }
}

static void pipe_rows(void)
{
    pid_t pid = start_echo_child();
    measure("linux_pipe_rt", N, op_pipe_rt);
    stop_echo_child(pid);
}

static void pipe_1mb_row(void)
{
    pid_t pid = start_echo_child();
    measure("linux_pipe_1mb_echo", N_ECHO, op_pipe_1mb_echo);
    stop_echo_child(pid);
}

/* --- processes ------------------------------------------------------------- */

static void op_fork_exit_wait(void)
{
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
}

static void op_fork_exec_wait(void)
{
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        char *argv[] = {"/bin/true", NULL}, *envp[] = {NULL};
        execve(argv[0], argv, envp);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "linuxbench: /bin/true failed (status %#x)\n", st);
        exit(1);
    }
}

/* --- memory ---------------------------------------------------------------- */

/* One page per sample and per warm-up, all mapped before timing starts; only
 * the first write to each page is timed. */
static void minor_fault(void)
{
    int total = N / 10 + N;
    size_t len = (size_t)total * PAGE;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        die("mmap");
    /* A transparent huge page would make one fault in 512 costly and the
     * rest free; we want the 4 KiB path. */
    madvise(p, len, MADV_NOHUGEPAGE);
    for (int i = 0; i < N / 10; i++)
        p[(size_t)i * PAGE] = 1;
    char *q = p + (size_t)(N / 10) * PAGE;
    for (int i = 0; i < N; i++) {
        volatile char *t = q + (size_t)i * PAGE;
        uint64_t t0 = rdtsc();
        *t = 1;
        uint64_t t1 = rdtsc();
        samples[i] = t1 - t0;
    }
    report("linux_minor_fault", N);
    munmap(p, len); /* keep later forks from copying it */
}

/* sbrk as glibc does it: the break is cached, so growing by a page is one
 * brk syscall (musl's sbrk asks for the current break first, a second). */
static uintptr_t brk_cur;

static void op_sbrk_touch(void)
{
    uintptr_t p = brk_cur;
    if ((uintptr_t)syscall(SYS_brk, p + PAGE) != p + PAGE)
        die("brk");
    brk_cur = p + PAGE;
    *(volatile char *)p = 1;
}

static void sbrk_touch(void)
{
    uintptr_t start = (uintptr_t)syscall(SYS_brk, 0);
    brk_cur = start;
    measure("linux_sbrk_touch", N, op_sbrk_touch);
    syscall(SYS_brk, start); /* give it back */
}

static void op_open_close(void)
{
    int fd = open("/etc/passwd", O_RDONLY);
    if (fd < 0)
        die("open /etc/passwd");
    close(fd);
}

/* --- files ------------------------------------------------------------------ */

/* A 1 MiB file written from empty and read back, a page per call: the
 * file system's data path (on Linux the page cache, on Stet the file
 * domain's segment pages). Ten samples. */
static void op_file_1mib(void)
{
    static char buf[PAGE];
    int fd = open(FILE_PATH, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("open " FILE_PATH);
    for (size_t done = 0; done < FILE_BYTES; done += PAGE)
        write_full(fd, buf, PAGE);
    if (lseek(fd, 0, SEEK_SET) != 0)
        die("lseek");
    for (size_t done = 0; done < FILE_BYTES; done += PAGE)
        read_full(fd, buf, PAGE);
    close(fd);
}

static void file_row(void)
{
    measure("linux_file_1mib_x10", N_FILE, op_file_1mib);
    unlink(FILE_PATH);
}

/* --- dynamic linking and a big program ------------------------------------ */

/* fork, execve(path, argv) with an empty environment, waitpid; the program
 * must exit 0. */
static void spawn_wait(char *const argv[])
{
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        char *envp[] = {NULL};
        execve(argv[0], argv, envp);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "linuxbench: %s failed (status %#x)\n", argv[0], st);
        exit(1);
    }
}

/* /bin/true-dyn: true.c linked dynamically against musl, so its execve
 * maps musl's loader (/lib/ld-musl-x86_64.so.1, which is also its libc) and
 * the loader relocates both before main. */
static void op_exec_dynamic(void)
{
    char *argv[] = {"/bin/true-dyn", NULL};
    spawn_wait(argv);
}

/* Debian 12's python3 (glibc, libz, libexpat, ..., and the modules of its
 * standard library that startup imports), from build/debs/root on both
 * sides. The warm-up's first run writes the __pycache__ files the later
 * ones read. */
static void op_python_startup(void)
{
    char *argv[] = {"/usr/bin/python3", "-c", "pass", NULL};
    spawn_wait(argv);
}

/* --- threads (musl's pthreads) ---------------------------------------------- */

static void check(int err, const char *what)
{
    if (err) {
        fprintf(stderr, "linuxbench: %s: %s\n", what, strerror(err));
        exit(1);
    }
}

static void *thread_return(void *arg) { return arg; }

/* A thread with musl's default attributes (its stack and guard page mapped
 * by pthread_create, unmapped by pthread_join) that returns at once. */
static void op_thread_create_join(void)
{
    pthread_t t;
    check(pthread_create(&t, NULL, thread_return, NULL), "pthread_create");
    check(pthread_join(t, NULL), "pthread_join");
}

/* Two threads, a mutex and a condition variable each way: the main thread
 * bumps `ping` under mx_ping and signals cv_ping, then waits on cv_pong
 * until the partner has copied it to `pong` under mx_pong. */
static pthread_mutex_t mx_ping = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mx_pong = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv_ping = PTHREAD_COND_INITIALIZER;
static pthread_cond_t cv_pong = PTHREAD_COND_INITIALIZER;
static int mp_ping, mp_pong;

static void *pingpong_partner(void *arg)
{
    for (int seen = 0;;) {
        pthread_mutex_lock(&mx_ping);
        while (mp_ping == seen)
            pthread_cond_wait(&cv_ping, &mx_ping);
        seen = mp_ping;
        pthread_mutex_unlock(&mx_ping);
        if (seen < 0)
            return arg;
        pthread_mutex_lock(&mx_pong);
        mp_pong = seen;
        pthread_cond_signal(&cv_pong);
        pthread_mutex_unlock(&mx_pong);
    }
}

static void op_mutex_pingpong_rt(void)
{
    pthread_mutex_lock(&mx_ping);
    int v = ++mp_ping;
    pthread_cond_signal(&cv_ping);
    pthread_mutex_unlock(&mx_ping);
    pthread_mutex_lock(&mx_pong);
    while (mp_pong != v)
        pthread_cond_wait(&cv_pong, &mx_pong);
    pthread_mutex_unlock(&mx_pong);
}

static void mutex_pingpong_rt(void)
{
    pthread_t t;
    check(pthread_create(&t, NULL, pingpong_partner, NULL), "pthread_create");
    measure("linux_mutex_pingpong_rt", N, op_mutex_pingpong_rt);
    pthread_mutex_lock(&mx_ping);
    mp_ping = -1;
    pthread_cond_signal(&cv_ping);
    pthread_mutex_unlock(&mx_ping);
    check(pthread_join(t, NULL), "pthread_join");
}

/* One pthread_cond_broadcast waking N_WAITERS threads that wait on bc_go
 * with bc_mx, until the last of them has taken the mutex and told the main
 * thread (bc_done). musl's broadcast wakes the first waiter and has each
 * woken waiter move the next onto the mutex's futex with FUTEX_REQUEUE, so
 * each is woken by the unlock before it. A waiter counts itself in bc_ready
 * and waits again without letting go of the mutex in between, so when the
 * main thread sees all N_WAITERS, every one is waiting again. */
static pthread_mutex_t bc_mx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bc_go = PTHREAD_COND_INITIALIZER;
static pthread_cond_t bc_done = PTHREAD_COND_INITIALIZER;
static int bc_gen, bc_ready;

static void *broadcast_waiter(void *arg)
{
    pthread_mutex_lock(&bc_mx);
    for (int seen = 0;;) {
        if (++bc_ready == N_WAITERS)
            pthread_cond_signal(&bc_done);
        while (bc_gen == seen)
            pthread_cond_wait(&bc_go, &bc_mx);
        seen = bc_gen;
        if (seen < 0)
            break;
    }
    pthread_mutex_unlock(&bc_mx);
    return arg;
}

/* Waits (holding bc_mx) until every waiter has counted itself. */
static void broadcast_wait_ready(void)
{
    while (bc_ready < N_WAITERS)
        pthread_cond_wait(&bc_done, &bc_mx);
}

static void op_futex_requeue(void)
{
    pthread_mutex_lock(&bc_mx);
    bc_gen++;
    bc_ready = 0;
    pthread_cond_broadcast(&bc_go);
    broadcast_wait_ready();
    pthread_mutex_unlock(&bc_mx);
}

static void futex_requeue(void)
{
    pthread_t t[N_WAITERS];
    for (int i = 0; i < N_WAITERS; i++)
        check(pthread_create(&t[i], NULL, broadcast_waiter, NULL), "pthread_create");
    pthread_mutex_lock(&bc_mx);
    broadcast_wait_ready();
    pthread_mutex_unlock(&bc_mx);
    measure("linux_futex_requeue", N_THREAD, op_futex_requeue);
    pthread_mutex_lock(&bc_mx);
    bc_gen = -1;
    pthread_cond_broadcast(&bc_go);
    pthread_mutex_unlock(&bc_mx);
    for (int i = 0; i < N_WAITERS; i++)
        check(pthread_join(t[i], NULL), "pthread_join");
}

/* --------------------------------------------------------------------------- */

static void row_null(void) { measure("linux_null_syscall", N, op_null); }
static void row_getpid(void) { measure("linux_getpid", N, op_getpid); }
static void row_fork_exit(void) { measure("linux_fork_exit_wait", N_FORK, op_fork_exit_wait); }
static void row_fork_exec(void) { measure("linux_fork_exec_wait", N_FORK, op_fork_exec_wait); }
static void row_open_close(void) { measure("linux_open_close", N, op_open_close); }
static void row_exec_dynamic(void) { measure("linux_exec_dynamic", N_FORK, op_exec_dynamic); }
static void row_python_startup(void) { measure("linux_python_startup", N_PY, op_python_startup); }
static void row_thread_create_join(void)
{
    measure("linux_thread_create_join", N_THREAD, op_thread_create_join);
}

/* Every row, in the order run. Process rows come early, while this process
 * is small (fork copies its page tables, so its cost grows with the
 * parent); the rows added later go at the end, so that the earlier rows'
 * numbers stay comparable, and the thread rows last of all (after the
 * first thread, musl takes its locks for good). `profile`: the row can run
 * in profile mode (its operation alone, for a tool that counts where each
 * instruction goes: tools/insnprof). */
static const struct {
    const char *name;
    void (*row)(void);
    int profile;
} rows[] = {
    {"null_syscall", row_null, 1},
    {"getpid", row_getpid, 1},
    {"futex_rt", futex_rt, 1},
    {"pipe_rt", pipe_rows, 1},
    {"fork_exit_wait", row_fork_exit, 1},
    {"fork_exec_wait", row_fork_exec, 1},
    {"minor_fault", minor_fault, 0},
    {"sbrk_touch", sbrk_touch, 0},
    {"open_close", row_open_close, 1},
    {"pipe_1mb_echo", pipe_1mb_row, 1},
    {"file_1mib_x10", file_row, 0},
    {"exec_dynamic", row_exec_dynamic, 1},
    {"python_startup", row_python_startup, 1},
    {"thread_create_join", row_thread_create_join, 1},
    {"mutex_pingpong_rt", mutex_pingpong_rt, 1},
    {"futex_requeue", futex_requeue, 1},
};
#define NROWS (sizeof rows / sizeof rows[0])

static int usage(void)
{
    fprintf(stderr, "linuxbench: usage: linuxbench [ROW COUNT | --only ROW,... | --skip ROW,...]\n");
    return 2;
}

/* Whether `name` is an element of the comma-separated `list`. */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchrnul(p, ',');
        if ((size_t)(end - p) == n && strncmp(p, name, n) == 0)
            return 1;
        p = *end ? end + 1 : end;
    }
    return 0;
}

/* Every name of the comma-separated `list` is a row's. */
static int rows_known(const char *list)
{
    for (const char *p = list; *p;) {
        const char *end = strchrnul(p, ',');
        size_t i = 0;
        while (i < NROWS && !((size_t)(end - p) == strlen(rows[i].name) &&
                              strncmp(p, rows[i].name, (size_t)(end - p)) == 0))
            i++;
        if (i == NROWS)
            return 0;
        p = *end ? end + 1 : end;
    }
    return 1;
}

/* `linuxbench`: every row. `linuxbench --only ROW,...` / `--skip ROW,...`:
 * those rows / all but those (Stet's UNIX benchmark runs python_startup
 * apart, in a system whose file system has python3). `linuxbench ROW COUNT`:
 * profile mode. */
int main(int argc, char **argv)
{
    const char *only = NULL, *skip = NULL;
    if (argc == 3 && strcmp(argv[1], "--only") == 0 && rows_known(argv[2])) {
        only = argv[2];
    } else if (argc == 3 && strcmp(argv[1], "--skip") == 0 && rows_known(argv[2])) {
        skip = argv[2];
    } else if (argc == 3) {
        profile_count = atol(argv[2]);
        for (size_t i = 0; i < NROWS; i++) {
            if (strcmp(argv[1], rows[i].name) == 0 && rows[i].profile && profile_count > 0) {
                rows[i].row();
                printf("linuxbench: ran %s %ld times\n", argv[1], profile_count);
                return 0;
            }
        }
        return usage();
    } else if (argc != 1) {
        return usage();
    }
    /* SCHED_FIFO (inherited by the children): a wake-up never preempts the
     * waker, so each round trip takes one path. Under CFS the woken process
     * preempts the waker in about half the round trips, depending on
     * vruntime, and linux_pipe_rt's samples split into two modes ~2,400
     * instructions apart with the median falling between them. Raw syscall:
     * musl's sched_setscheduler() always fails with ENOSYS. */
    struct sched_param sp = {.sched_priority = 1};
    if (syscall(SYS_sched_setscheduler, 0, SCHED_FIFO, &sp))
        die("sched_setscheduler");

    /* The cost of an empty pair, subtracted from every row. */
    for (int i = 0; i < N; i++) {
        uint64_t t0 = rdtsc();
        uint64_t t1 = rdtsc();
        samples[i] = t1 - t0;
    }
    overhead = median(samples, N);

    /* Each row starts at a whole second (see sync_clock), before any setup
     * such as forking its partner process. */
    for (size_t i = 0; i < NROWS; i++) {
        if ((only && !listed(only, rows[i].name)) || (skip && listed(skip, rows[i].name)))
            continue;
        sync_clock();
        rows[i].row();
    }
    printf("linuxbench: done\n");
    return 0;
}
