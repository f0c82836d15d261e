/* sysfuzz: a seeded fuzzer of the UNIX system-call interface, run by
 * `make soak` (docs/RELIABILITY.md, tools/harness/src/soak/sysfuzz.rs).
 *
 *   sysfuzz SEED [BATCHES [CALLS [FIRST [FLAGS]]]]
 *
 * runs BATCHES batches (default 20) numbered from FIRST (default 0). Each
 * batch is one forked child that makes CALLS (default 200) random system
 * calls and exits: numbers 0-460 and beyond (up to any 64-bit value), wild
 * pointers (NULL, kernel, non-canonical, unmapped, read-only, straddling a
 * guard page), wild lengths and descriptors (negative, huge, upper 32 bits
 * set), signals to itself with and without handlers, and `rt_sigreturn`
 * with forged frames. A batch's calls depend only on SEED and the batch
 * number, so `sysfuzz SEED 1 CALLS B` replays batch B alone (FLAGS `v`:
 * the child prints each call first). FLAGS `k` avoids the known bugs of
 * issue 22 (see steer_clear), to measure and to look for others.
 *
 * The parent only forks, reaps and checks. It reaps with a timeout: a
 * child still there after BATCH_MS is sent SIGKILL (a child may block for
 * good, legitimately: pause, a futex nobody wakes, a pipe it holds both
 * ends of), and one still there GRACE_MS after SIGKILL is a failure, as is
 * one killed so in a call that never waits (a memory or identity call) or
 * in a forged rt_sigreturn (Linux ends it with SIGSEGV). After
 * each batch it checks that the system still works: a pipeline of three
 * processes (a writer, a filter, the parent) moves a seeded pattern
 * exactly, a file makes a round trip (write, reopen, read, stat, unlink),
 * and every PIPELINE_EVERY batches busybox sh runs `seq | sort | head | tr`.
 * Before that it removes the System V IPC objects the batch left (they
 * outlive their maker, as its files do).
 *
 * What the child may not do (so the parent and the system go on; these are
 * the only exclusions):
 *  - signal anyone but itself: kill, tkill, tgkill, rt_sigqueueinfo,
 *    rt_tgsigqueueinfo, pidfd_send_signal, ptrace and prlimit64 get its own
 *    pid, its own group (it is a group leader), or a pid no process has,
 *    and setpgid cannot move it into another process's group;
 *  - reboot (it is skipped);
 *  - unmap, protect, move or advise its own text, data, stack or the report
 *    page: memory calls get addresses in a scratch area or wild ones;
 *  - name files outside its sandbox directory (/tmp/sf/b<batch>): path
 *    arguments are sandbox names, `/`, `.`, `/proc/self/...`, empty, too
 *    long, or wild pointers;
 *  - keep a child: fork, vfork, clone and clone3 are made so that a new
 *    process exits at once (in the same asm block, touching no memory).
 * Everything else is called as drawn, with any arguments.
 *
 * Lines: `sysfuzz: seed S; ...` at the start; `sysfuzz: batch B: N calls,
 * <how it ended>; check ok` per batch; `sysfuzz: done: ...` at the end; or
 * `sysfuzz: FAILED seed S batch B: <what>; last call #K: nr(args)` and exit
 * status 1. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef uint64_t u64;

#define BATCH_MS 3000     /* a batch's child is killed after this */
#define GRACE_MS 5000     /* and must be gone this long after SIGKILL */
#define SLEEP_LIMIT_MS 3000 /* a 2 ms nanosleep of the parent's may take this */
#define PIPELINE_EVERY 10 /* batches between busybox pipelines */
#define MAX_CALLS 100000
#define SCRATCH_PAGES 16
/* Scratch pages 0-8 hold what the child writes itself (page 6 a stack
 * for forged frames, 7 argument structures, 8 the frame); memory calls get
 * pages from MEM_FIRST on. */
#define MEM_FIRST 9
/* The child's sandbox: a fresh directory per batch (a batch may leave one
 * that cannot be removed: a mode it set, a name too long). */
static char box[64];

/* What the child is doing, written before each call; the parent reads it
 * for the failure report (a MAP_SHARED page stays shared across fork). */
struct report {
    u64 batch;
    u64 made; /* calls begun */
    u64 nr;
    u64 args[6];
    u64 what; /* 0 a plain call, 1 a forged rt_sigreturn, 2 fork-like */
    u64 finished; /* the child made all its calls */
};
static volatile struct report *rep;
/* The last call that sets a timer or waits with a time, over all batches
 * (a long one can stall other processes' sleeps); in the same page. */
struct timed {
    u64 batch, k, nr, args[3];
};
static volatile struct timed *timed;
static u64 seed;
/* FLAGS, the fifth argument: `v` the child prints each call before making
 * it (on a descriptor the calls seldom name), to see where a replay stops;
 * `k` it steers clear of the bugs issue 22 lists (see `known`). */
static int verbose, known;
#define TRACE_FD 200
static unsigned long calls_per_batch = 200;

/* ---- numbers ---- */

static u64 mix(u64 z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* SplitMix64: one state word, the same draws on every machine. */
static u64 next(u64 *s)
{
    *s += 0x9e3779b97f4a7c15ull;
    return mix(*s);
}

static u64 below(u64 *s, u64 n) { return next(s) % n; }
static int chance(u64 *s, unsigned pct) { return below(s, 100) < pct; }

static u64 batch_seed(u64 b) { return mix(seed ^ mix(b + 1)); }

static long now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* ---- raw calls (the child uses no libc after its set-up) ---- */

static long sys6(u64 n, u64 a, u64 b, u64 c, u64 d, u64 e, u64 f)
{
    register u64 r10 __asm__("r10") = d;
    register u64 r8 __asm__("r8") = e;
    register u64 r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

/* fork, vfork, clone, clone3: a new process (rax 0) exits at once, on
 * whatever stack it got, touching no memory. */
static long sys_forklike(u64 n, u64 a, u64 b, u64 c, u64 d, u64 e, u64 f)
{
    register u64 r10 __asm__("r10") = d;
    register u64 r8 __asm__("r8") = e;
    register u64 r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall\n\t"
                     "test %%rax, %%rax\n\t"
                     "jnz 1f\n\t"
                     "mov $60, %%eax\n\t"
                     "xor %%edi, %%edi\n\t"
                     "syscall\n\t"
                     "1:"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

/* Where a forged frame's rip may send the child: it exits with 77. */
static void __attribute__((noreturn, used)) resumed(void)
{
    sys6(60, 77, 0, 0, 0, 0, 0);
    for (;;)
        ;
}

/* The signal handler and its restorer (raw rt_sigaction needs one). */
static volatile u64 handled;
static void on_signal(int sig) { handled += (u64)sig; }
extern void sysfuzz_restorer(void);
__asm__(".text\n"
        "sysfuzz_restorer:\n\t"
        "mov $15, %eax\n\t"
        "syscall\n\t"
        "hlt\n");

/* ---- the child's pools ---- */

static char *scratch;      /* SCRATCH_PAGES read-write pages, then a guard page */
static const char rodata[64] = "read-only bytes";
static const char *paths[] = {
    "f0", "f1", "f2", "d0", "d0/f0", "d1/d2/f3", "/tmp/sf/none/f1", "/tmp/sf/b0", "/", ".",
    "", "/proc/self/status", "/proc/self/fd/0", "/proc/self/maps", "/dev/zero",
    "/tmp/sf/box/d0/../f2", "f0/", "//f1", "a-very-long-name-that-goes-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on-and-on",
};
#define NPATHS (sizeof paths / sizeof paths[0])
static char longpath[5000];
static int me; /* the child's pid */

/* A wild or valid pointer. */
static u64 any_ptr(u64 *s)
{
    switch (below(s, 14)) {
    case 0: return 0;
    case 1: return 1 + below(s, 4096);
    case 2: return 0xffff800000000000ull + below(s, 1ull << 40);  /* kernel */
    case 3: return 0x0000800000000000ull + below(s, 1ull << 46);  /* non-canonical */
    case 4: return (u64)rodata;                                      /* read-only */
    case 5: return (u64)scratch + SCRATCH_PAGES * 4096 - below(s, 64); /* into the guard page */
    case 6: return next(s);
    case 7: return 0x7fff00000000ull + below(s, 1ull << 32);         /* unmapped, probably */
    case 8: return (u64)resumed;                                      /* text */
    default: return (u64)scratch + below(s, SCRATCH_PAGES * 4096 - 256); /* valid */
    }
}

static u64 any_int(u64 *s)
{
    switch (below(s, 12)) {
    case 0: return 0;
    case 1: return 1;
    case 2: return below(s, 16);
    case 3: return below(s, 65536);
    case 4: return (u64)-1;
    case 5: return 0x7fffffff;
    case 6: return 0xffffffff;
    case 7: return 1ull << (below(s, 64));
    case 8: return 4096 * below(s, 64);
    case 9: return (u64)-(long)below(s, 4096);
    default: return next(s);
    }
}

static u64 any_fd(u64 *s)
{
    switch (below(s, 10)) {
    case 0: return (u64)-1;
    case 1: return 1023 + below(s, 3);
    case 2: return 0x1000000000ull + below(s, 256); /* upper bits set */
    case 3: return next(s);
    case 4: return (u64)(int)0x80000000;
    case 5: return 65535;
    default: return below(s, 12);
    }
}

static u64 any_path(u64 *s)
{
    if (chance(s, 10))
        return any_ptr(s);
    if (chance(s, 5))
        return (u64)longpath;
    return (u64)paths[below(s, NPATHS)];
}

static u64 any_arg(u64 *s)
{
    switch (below(s, 7)) {
    case 0: case 1: return any_ptr(s);
    case 2: case 3: return any_int(s);
    case 4: return any_fd(s);
    case 5: return any_path(s);
    default: return below(s, 8) ? any_int(s) : next(s);
    }
}

/* A memory address for mmap-like calls: the scratch area or wild. */
static u64 mem_addr(u64 *s)
{
    if (chance(s, 60))
        return (u64)scratch + 4096 * (MEM_FIRST + below(s, SCRATCH_PAGES - MEM_FIRST));
    switch (below(s, 4)) {
    case 0: return 0;
    case 1: return 0xffff800000000000ull;
    case 2: return 0x0000800000000000ull - 4096;
    default: return 0x500000000000ull + 4096 * below(s, 1 << 20);
    }
}

/* A pid the child may signal: itself, its group, or nobody. */
static u64 own_pid(u64 *s)
{
    switch (below(s, 4)) {
    case 0: return 0; /* its own group: it is the leader */
    case 1: return (u64)(long)-me;
    case 2: return 0x3fff0000 + below(s, 0xffff); /* no such process */
    default: return (u64)me;
    }
}

/* A signal number: SIGKILL and the stopping signals are rare (the child
 * handles or ignores most others, see child()). */
static u64 any_signal(u64 *s)
{
    u64 sig = below(s, 65);
    if ((sig == SIGKILL || sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) &&
        !chance(s, 10))
        sig = SIGUSR1;
    return sig;
}

/* A bounded time: {0, up to 20 ms}, or wild. */
static u64 short_time(u64 *s, char *at)
{
    if (chance(s, 20))
        return any_ptr(s);
    struct timespec t = {0, (long)below(s, 20) * 1000000};
    memcpy(at, &t, sizeof t);
    return (u64)at;
}

/* A forged rt_sigreturn frame: the ucontext the kernel reads at rsp
 * (uc_flags, uc_link, uc_stack, then gregs r8..r15, rdi, rsi, rbp, rbx,
 * rdx, rax, rcx, rsp, rip, eflags, csgsfs, err, trapno, oldmask, cr2, the
 * fpstate pointer, reserved, then the signal mask). */
static void __attribute__((noreturn)) forged_sigreturn(u64 *s)
{
    u64 *f = (u64 *)(scratch + 8 * 4096);
    for (int i = 0; i < 64; i++)
        f[i] = below(s, 3) ? 0 : next(s);
    u64 *g = f + 5; /* gregs */
    g[15] = (u64)scratch + 6 * 4096;  /* rsp */
    switch (known ? 5 : below(s, 6)) {
    case 0: for (int i = 0; i < 64; i++) f[i] = next(s); break;       /* garbage */
    case 1: g[16] = 0x0000800000000000ull | below(s, 1ull << 40); break; /* non-canonical rip */
    case 2: g[16] = 0xffff800000000000ull; break;                       /* kernel rip */
    case 3: g[16] = (u64)resumed; g[23] = any_ptr(s); break;       /* wild fpstate */
    case 4: g[16] = (u64)resumed; g[18] = next(s); g[17] = next(s); break; /* selectors, flags */
    default: g[16] = (u64)resumed; g[17] = 0x202; g[18] = 0x33; g[23] = 0; break; /* sound */
    }
    rep->what = 1;
    rep->nr = 15;
    rep->args[0] = g[16];
    rep->args[1] = g[15];
    rep->args[2] = g[17];
    rep->args[3] = g[18];
    rep->args[4] = g[23];
    rep->args[5] = (u64)f;
    __asm__ volatile("mov %0, %%rsp\n\t"
                     "mov $15, %%eax\n\t"
                     "syscall\n\t"
                     /* Linux never comes back here; if it does, say so. */
                     "mov $60, %%eax\n\t"
                     "mov $99, %%edi\n\t"
                     "syscall\n\t"
                     "hlt"
                     :
                     : "r"(f)
                     : "memory");
    __builtin_unreachable();
}

/* Which arguments of a call are descriptors (bit i: argument i). */
static unsigned fd_args(u64 nr)
{
    switch (nr) {
    case 0: case 1: case 3: case 5: case 8: case 16: case 17: case 18: case 19: case 20:
    case 32: case 72: case 73: case 74: case 75: case 77: case 78: case 81: case 91:
    case 93: case 138: case 217: case 221: case 257: case 258: case 259: case 260:
    case 261: case 262: case 263: case 267: case 268: case 269: case 280: case 295:
    case 296: case 306: case 332: case 439: case 285: case 277: case 190: case 193:
    case 196: case 199: case 187:
        return 1;
    case 33: case 292: case 40: case 264: case 265: case 316: case 326: case 436:
        return 5; /* two descriptors: arguments 0 and 2 (dup2, dup3: 0 and 1) */
    case 266:
        return 2;
    case 9:
        return 16;
    }
    return 0;
}

/* FLAGS `k`: the arguments that reach the bugs issue 22 lists, which
 * other branches fix, are changed so that the rest can be soaked:
 * descriptors with upper bits set (a keeper panics), alarm and setitimer
 * of a second or more and any long wait (every sleep stalls), untimed
 * FUTEX_WAIT (SIGKILL cannot end it), forged rt_sigreturn frames (see
 * forged_sigreturn). */
static void steer_clear(u64 *s, u64 nr, u64 a[6], char *tmp)
{
    unsigned m = fd_args(nr);
    if (nr == 33 || nr == 292)
        m = 3;
    for (int i = 0; i < 6; i++)
        if (m & (1u << i))
            a[i] &= 0xffffffff;
    if (nr == 37) /* alarm */
        a[0] %= 2;
    if (nr == 38 || nr == 223) { /* setitimer, timer_settime */
        struct timeval it[2] = {{0, 0}, {0, (long)below(s, 1000000)}};
        memcpy(tmp, it, sizeof it);
        a[1] = (u64)tmp;
    }
    /* Every wait with a time: a short one (a long sleep of one process
     * stalls the others' sleeps). */
    struct timespec t = {0, (long)below(s, 20) * 1000000};
    memcpy(tmp + 64, &t, sizeof t);
    struct timeval tv = {0, (long)below(s, 20) * 1000};
    memcpy(tmp + 96, &tv, sizeof tv);
    switch (nr) {
    case 202: a[3] = (u64)(tmp + 64); break;             /* futex */
    case 35: a[0] = (u64)(tmp + 64); break;              /* nanosleep */
    case 230: a[1] &= 1; a[2] = (u64)(tmp + 64); break;  /* clock_nanosleep */
    case 7: a[2] = below(s, 20); break;                  /* poll */
    case 271: a[2] = (u64)(tmp + 64); break;             /* ppoll */
    case 23: a[4] = (u64)(tmp + 96); break;              /* select */
    case 270: a[4] = (u64)(tmp + 64); break;             /* pselect6 */
    case 128: a[2] = (u64)(tmp + 64); break;             /* rt_sigtimedwait */
    case 232: case 281: a[3] = below(s, 20); break;      /* epoll_wait, epoll_pwait */
    }
}

/* Draws call number and arguments, taming the few the child may not make
 * as drawn (see the top of the file). Returns 0 to skip the call. */
static int draw(u64 *s, u64 *nr, u64 a[6])
{
    switch (below(s, 20)) {
    case 0: *nr = 335 + below(s, 700); break;   /* beyond: ENOSYS, "other" */
    case 1: *nr = next(s); break;               /* any 64-bit number */
    case 2: *nr = 424 + below(s, 40); break;    /* the newest calls */
    default: *nr = below(s, 335); break;
    }
    for (int i = 0; i < 6; i++)
        a[i] = any_arg(s);
    char *tmp = scratch + 7 * 4096 + 8 * below(s, 64);
    switch (*nr) {
    case 169: /* reboot */
        return 0;
    case 60: /* exit */
    case 231: /* exit_group: both end the batch; rarely */
    case 34: /* pause */
    case 130: /* rt_sigsuspend */
    case 128: /* rt_sigtimedwait: these three wait for a signal, often for good */
        return chance(s, 5);
    case 62: /* kill */
    case 200: /* tkill */
    case 101: /* ptrace */
    case 302: /* prlimit64 */
    case 129: /* rt_sigqueueinfo */
        a[0] = own_pid(s);
        if (*nr != 101 && *nr != 302)
            a[1] = chance(s, 90) ? any_signal(s) : a[1];
        break;
    case 109: /* setpgid: joining another group (pid 1's) would make "its
               * own group" someone else's */
        a[0] = chance(s, 50) ? 0 : (u64)me;
        a[1] = chance(s, 50) ? 0 : own_pid(s);
        break;
    case 234: /* tgkill */
    case 297: /* rt_tgsigqueueinfo */
        a[0] = own_pid(s);
        a[1] = chance(s, 50) ? (u64)me : own_pid(s);
        a[2] = chance(s, 90) ? any_signal(s) : a[2];
        break;
    case 424: /* pidfd_send_signal: a pidfd is a descriptor; any will do */
        break;
    case 9: /* mmap */
        a[0] = mem_addr(s);
        a[1] = chance(s, 70) ? 4096 * (1 + below(s, 4)) : a[1];
        a[3] = chance(s, 50) ? (0x22 | (chance(s, 50) ? 0x10 : 0)) : a[3]; /* private anon, fixed */
        break;
    case 30: /* shmat: where it chooses, or the scratch area (SHM_REMAP
              * may replace what is mapped there) */
        a[1] = chance(s, 50) ? 0 : mem_addr(s);
        break;
    case 67: /* shmdt */
        a[0] = mem_addr(s);
        break;
    case 10: case 11: case 25: case 26: case 27: case 28: /* mprotect munmap mremap msync mincore madvise */
    case 149: case 150: case 151: case 152: case 325: case 329: case 330: /* mlock.. pkey_mprotect */
        a[0] = mem_addr(s);
        if (*nr == 25) /* mremap's new address */
            a[4] = mem_addr(s);
        if (chance(s, 60))
            a[1] = 4096 * (1 + below(s, 4));
        break;
    case 12: /* brk */
        a[0] = chance(s, 50) ? 0 : a[0];
        break;
    case 56: case 57: case 58: case 435: /* clone fork vfork clone3 */
        break;
    case 35: /* nanosleep */
        a[0] = short_time(s, tmp);
        break;
    case 230: /* clock_nanosleep */
        a[2] = short_time(s, tmp);
        a[1] &= 1; /* never TIMER_ABSTIME with a small time: that is "now" */
        break;
    case 7: /* poll */
        a[2] = chance(s, 80) ? below(s, 20) : a[2];
        break;
    case 23: /* select: a timeval of up to 20 ms */
        if (chance(s, 80)) {
            struct timeval tv = {0, (long)below(s, 20) * 1000};
            memcpy(tmp, &tv, sizeof tv);
            a[4] = (u64)tmp;
        }
        break;
    case 202: /* futex */
        a[0] = chance(s, 70) ? (u64)scratch + 4 * below(s, 64) : a[0];
        a[3] = chance(s, 70) ? short_time(s, tmp + 16) : a[3];
        break;
    case 13: /* rt_sigaction: a real handler now and then */
        a[0] = chance(s, 80) ? below(s, 65) : a[0];
        if (chance(s, 50)) {
            u64 *sa = (u64 *)tmp;
            sa[0] = below(s, 4) ? (u64)on_signal : below(s, 2); /* SIG_DFL, SIG_IGN */
            sa[1] = 0x04000000 | (chance(s, 30) ? next(s) & 0xfc000000ull : 0); /* SA_RESTORER */
            sa[2] = (u64)sysfuzz_restorer;
            sa[3] = chance(s, 50) ? 0 : next(s);
            a[1] = (u64)sa;
            a[3] = 8;
        }
        break;
    case 15: /* rt_sigreturn: a forged frame, see forged_sigreturn; it
              * ends the batch, so a quarter of the draws */
        return chance(s, 25);
    }
    for (int i = 0; i < 6; i++)
        if (a[i] == (u64)longpath && longpath[0] == 0)
            memset(longpath, 'x', sizeof longpath - 1);
    if (known)
        steer_clear(s, *nr, a, tmp + 32);
    return 1;
}

static void __attribute__((noreturn)) child(u64 b)
{
    u64 s = batch_seed(b);
    me = getpid();
    setpgid(0, 0);
    if (verbose)
        dup2(1, TRACE_FD);
    int nul = open("/dev/null", O_RDWR);
    if (nul >= 0) {
        dup2(nul, 0);
        dup2(nul, 1);
        dup2(nul, 2);
        if (nul > 2)
            close(nul);
    }
    if (chdir(box) != 0)
        _exit(3);
    scratch = mmap(NULL, (SCRATCH_PAGES + 1) * 4096, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (scratch == MAP_FAILED)
        _exit(4);
    mprotect(scratch + SCRATCH_PAGES * 4096, 4096, PROT_NONE);
    for (int i = 0; i < SCRATCH_PAGES * 4096 / 8; i++)
        ((u64 *)scratch)[i] = below(&s, 4) ? next(&s) : 0;
    /* A few real descriptors to play with (the pipe does not block: the
     * child holds both ends). */
    open("f0", O_RDWR | O_CREAT, 0644);
    int p[2];
    pipe2(p, O_NONBLOCK);
    /* Most signals are handled or ignored, so a random one seldom ends
     * the batch; the calls change this as they like. */
    for (int sig = 1; sig < 65; sig++) {
        /* A handler that returns from a fault would fault again for ever. */
        if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE)
            continue;
        u64 sa[4] = {below(&s, 4) ? (u64)on_signal : 1, 0x04000000 | 0x10000000 /* SA_RESTART */,
                     (u64)sysfuzz_restorer, 0};
        sys6(13, (u64)sig, (u64)sa, 0, 8, 0, 0);
    }
    for (u64 k = 0; k < calls_per_batch; k++) {
        u64 nr, a[6];
        if (!draw(&s, &nr, a))
            continue;
        rep->what = 0;
        rep->nr = nr;
        for (int i = 0; i < 6; i++)
            rep->args[i] = a[i];
        rep->made = k + 1;
        if (verbose) {
            char line[200];
            int n = snprintf(line, sizeof line,
                             "sysfuzz: #%llu %llu(%#llx, %#llx, %#llx, %#llx, %#llx, %#llx)\n",
                             (unsigned long long)k + 1, (unsigned long long)nr,
                             (unsigned long long)a[0], (unsigned long long)a[1],
                             (unsigned long long)a[2], (unsigned long long)a[3],
                             (unsigned long long)a[4], (unsigned long long)a[5]);
            sys6(1, TRACE_FD, (u64)line, (u64)n, 0, 0, 0);
        }
        switch (nr) {
        case 7: case 23: case 35: case 37: case 38: case 128: case 202: case 223:
        case 230: case 232: case 270: case 271: case 281: case 286:
            timed->batch = rep->batch;
            timed->k = k + 1;
            timed->nr = nr;
            for (int i = 0; i < 3; i++)
                timed->args[i] = a[i];
        }
        if (nr == 15)
            forged_sigreturn(&s);
        if (nr == 56 || nr == 57 || nr == 58 || nr == 435) {
            rep->what = 2;
            sys_forklike(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
        } else {
            sys6(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
        }
    }
    rep->finished = 1;
    sys6(60, 0, 0, 0, 0, 0, 0);
    for (;;)
        ;
}

/* ---- the parent ---- */

static unsigned long batch_now;
/* The failure is about time (a sleep that took too long). */
static int timing;

static const char *what_name(u64 w)
{
    return w == 1 ? " (forged rt_sigreturn: rip, rsp, eflags, csgsfs, fpstate, frame)"
         : w == 2 ? " (fork-like)"
                  : "";
}

static void __attribute__((noreturn)) failed(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    printf("sysfuzz: FAILED seed %#llx batch %lu: %s; last call #%llu: %llu(%#llx, %#llx, %#llx, %#llx, %#llx, %#llx)%s\n",
           (unsigned long long)seed, batch_now, buf, (unsigned long long)rep->made,
           (unsigned long long)rep->nr, (unsigned long long)rep->args[0],
           (unsigned long long)rep->args[1], (unsigned long long)rep->args[2],
           (unsigned long long)rep->args[3], (unsigned long long)rep->args[4],
           (unsigned long long)rep->args[5], what_name(rep->what));
    if (timing && timed->nr)
        printf("sysfuzz:   the last call with a time: batch %llu #%llu: %llu(%#llx, %#llx, %#llx)\n",
               (unsigned long long)timed->batch, (unsigned long long)timed->k,
               (unsigned long long)timed->nr, (unsigned long long)timed->args[0],
               (unsigned long long)timed->args[1], (unsigned long long)timed->args[2]);
    printf("sysfuzz: replay: sysfuzz %#llx 1 %lu %lu\n", (unsigned long long)seed,
           calls_per_batch, batch_now);
    exit(1);
}

/* Sleeps 2 ms, and fails if that took far longer (another process's
 * timers must not stall this one's sleeps). */
static void nap(void)
{
    long t0 = now_ms();
    struct timespec t = {0, 2000000};
    nanosleep(&t, NULL);
    long took = now_ms() - t0;
    if (took > SLEEP_LIMIT_MS) {
        timing = 1;
        failed("a 2 ms nanosleep of the parent's took %ld ms", took);
    }
}

static unsigned long orphans;

/* Calls that never wait on Linux: a child killed by the time limit in one
 * of them hung where it must not (the memory calls, the identity and clock
 * calls). */
static int never_waits(u64 nr)
{
    switch (nr) {
    case 9: case 10: case 11: case 12: case 25: case 28: /* mmap .. madvise */
    case 39: case 63: case 96: case 102: case 104: case 107: case 108: case 110:
    case 186: case 201: case 228: /* getpid uname gettimeofday ids gettid time clock_gettime */
        return 1;
    }
    return 0;
}

/* System V IPC objects outlive the batch that made them, as its files
 * do: each is removed, found by index (IPC_INFO answers the highest,
 * SHM_STAT/SEM_STAT/MSG_STAT an index's id). */
static void ipc_sweep(void)
{
    static const long ctl[3] = {31, 66, 71};  /* shmctl semctl msgctl */
    static const long stat[3] = {13, 18, 11}; /* SHM_STAT SEM_STAT MSG_STAT */
    static char buf[256];
    for (int k = 0; k < 3; k++) {
        int sem = k == 1; /* semctl has semnum before cmd */
        long max = sem ? syscall(ctl[k], 0, 0, 3, buf) : syscall(ctl[k], 0, 3, buf);
        for (long i = 0; i <= max; i++) {
            long id = sem ? syscall(ctl[k], i, 0, stat[k], buf) : syscall(ctl[k], i, stat[k], buf);
            if (id >= 0) {
                if (sem)
                    syscall(ctl[k], id, 0, 0, 0);
                else
                    syscall(ctl[k], id, 0, 0);
            }
        }
    }
}

/* Reaps whatever has ended of the batch child's children (they exit at
 * once and come to this process, pid 1, when the batch child ends). */
static void reap_orphans(void)
{
    int st;
    while (waitpid(-1, &st, WNOHANG) > 0)
        orphans++;
}

/* Waits for `pid`, killing it after `limit_ms`; returns its status and
 * whether it was killed. */
static int reap(pid_t pid, long limit_ms, int *killed, const char *what)
{
    long t0 = now_ms(), tk = 0;
    *killed = 0;
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return st;
        if (r < 0 && errno != EINTR)
            failed("%s: waitpid(%d): errno %d", what, pid, errno);
        long now = now_ms();
        if (!*killed && now - t0 > limit_ms) {
            if (kill(pid, SIGKILL) != 0)
                failed("%s: kill(%d, SIGKILL): errno %d", what, pid, errno);
            *killed = 1;
            tk = now;
        }
        if (*killed && now - tk > GRACE_MS)
            failed("%s: pid %d still there %d ms after SIGKILL", what, pid, GRACE_MS);
        nap();
    }
}

static void remove_tree(const char *path, int depth)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode) && depth < 16) {
        chmod(path, 0700);
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            char sub[4200];
            while ((e = readdir(d))) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                remove_tree(sub, depth + 1);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Checks: a pipeline of three processes moves a pattern exactly, and a
 * file round trip. */
static void check(u64 b)
{
    unsigned char want[8192], got[8192];
    u64 s = batch_seed(b) ^ 0x5eed;
    for (size_t i = 0; i < sizeof want; i++)
        want[i] = (unsigned char)next(&s);

    /* writer | filter (xor 0x5a) | parent */
    int a[2], c[2], killed;
    if (pipe(a) != 0 || pipe(c) != 0)
        failed("check: pipe: errno %d", errno);
    pid_t w = fork();
    if (w < 0)
        failed("check: fork: errno %d", errno);
    if (w == 0) {
        close(a[0]);
        close(c[0]);
        close(c[1]);
        size_t off = 0;
        while (off < sizeof want) {
            ssize_t n = write(a[1], want + off, sizeof want - off < 1000 ? sizeof want - off : 1000);
            if (n <= 0)
                _exit(1);
            off += (size_t)n;
        }
        _exit(0);
    }
    pid_t f = fork();
    if (f < 0)
        failed("check: fork: errno %d", errno);
    if (f == 0) {
        close(a[1]);
        close(c[0]);
        unsigned char buf[700];
        ssize_t n;
        while ((n = read(a[0], buf, sizeof buf)) > 0) {
            for (ssize_t i = 0; i < n; i++)
                buf[i] ^= 0x5a;
            if (write(c[1], buf, (size_t)n) != n)
                _exit(1);
        }
        _exit(n == 0 ? 0 : 2);
    }
    close(a[0]);
    close(a[1]);
    close(c[1]);
    size_t off = 0;
    ssize_t n;
    while (off < sizeof got && (n = read(c[0], got + off, sizeof got - off)) > 0)
        off += (size_t)n;
    unsigned char extra;
    ssize_t more = read(c[0], &extra, 1);
    close(c[0]);
    int sw = reap(w, 10000, &killed, "check: the pipeline's writer");
    if (killed || sw != 0)
        failed("check: the pipeline's writer ended with %#x%s", sw, killed ? " (killed)" : "");
    int sf = reap(f, 10000, &killed, "check: the pipeline's filter");
    if (killed || sf != 0)
        failed("check: the pipeline's filter ended with %#x%s", sf, killed ? " (killed)" : "");
    if (off != sizeof got || more != 0)
        failed("check: the pipeline gave %zu bytes, then %zd", off, more);
    for (size_t i = 0; i < sizeof got; i++)
        if ((got[i] ^ 0x5a) != want[i])
            failed("check: the pipeline's byte %zu is %#x, not %#x", i, got[i] ^ 0x5a, want[i]);

    /* A file round trip. */
    const char *path = "/tmp/sf/check";
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        failed("check: open for writing: errno %d", errno);
    if (write(fd, want, 5000) != 5000 || write(fd, want + 5000, sizeof want - 5000) != (ssize_t)(sizeof want - 5000))
        failed("check: write: errno %d", errno);
    if (close(fd) != 0)
        failed("check: close: errno %d", errno);
    struct stat st;
    if (stat(path, &st) != 0 || st.st_size != (off_t)sizeof want)
        failed("check: stat: errno %d, size %lld", errno, (long long)st.st_size);
    fd = open(path, O_RDONLY);
    if (fd < 0)
        failed("check: open for reading: errno %d", errno);
    memset(got, 0, sizeof got);
    off = 0;
    while (off < sizeof got && (n = read(fd, got + off, sizeof got - off)) > 0)
        off += (size_t)n;
    close(fd);
    if (off != sizeof got || memcmp(got, want, sizeof got) != 0)
        failed("check: the file read back %zu bytes, %s", off,
               memcmp(got, want, sizeof got) ? "different" : "the same");
    if (unlink(path) != 0)
        failed("check: unlink: errno %d", errno);
}

/* busybox sh runs a pipeline of four programs. */
static void check_shell(void)
{
    int p[2], killed;
    if (pipe(p) != 0)
        failed("shell check: pipe: errno %d", errno);
    pid_t c = fork();
    if (c < 0)
        failed("shell check: fork: errno %d", errno);
    if (c == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        execl("/bin/sh", "sh", "-c", "seq 1 300 | sort -rn | head -3 | tr '\\n' ,", (char *)0);
        _exit(127);
    }
    close(p[1]);
    char buf[64] = {0};
    size_t off = 0;
    ssize_t n;
    while (off < sizeof buf - 1 && (n = read(p[0], buf + off, sizeof buf - 1 - off)) > 0)
        off += (size_t)n;
    close(p[0]);
    int st = reap(c, 20000, &killed, "shell check");
    if (killed || st != 0 || strcmp(buf, "300,299,298,") != 0)
        failed("shell check: printed \"%s\", status %#x%s", buf, st, killed ? " (killed)" : "");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        printf("usage: sysfuzz SEED [BATCHES [CALLS [FIRST]]]\n");
        return 2;
    }
    seed = strtoull(argv[1], 0, 0);
    unsigned long batches = argc > 2 ? strtoul(argv[2], 0, 0) : 20;
    calls_per_batch = argc > 3 ? strtoul(argv[3], 0, 0) : 200;
    unsigned long first = argc > 4 ? strtoul(argv[4], 0, 0) : 0;
    verbose = argc > 5 && strchr(argv[5], 'v') != NULL;
    known = argc > 5 && strchr(argv[5], 'k') != NULL;
    if (calls_per_batch == 0 || calls_per_batch > MAX_CALLS)
        calls_per_batch = 200;
    rep = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (rep == MAP_FAILED) {
        printf("sysfuzz: FAILED seed %#llx: no shared page (errno %d)\n", (unsigned long long)seed, errno);
        return 1;
    }
    timed = (volatile struct timed *)((volatile char *)rep + 2048);
    signal(SIGPIPE, SIG_IGN);
    mkdir("/tmp", 0777);
    mkdir("/tmp/sf", 0777);
    printf("sysfuzz: seed %#llx; %lu batches from %lu, %lu calls each\n",
           (unsigned long long)seed, batches, first, calls_per_batch);
    u64 total = 0, by_signal = 0, by_kill = 0, exited = 0;
    long t0 = now_ms();
    for (unsigned long b = first; b < first + batches; b++) {
        batch_now = b;
        snprintf(box, sizeof box, "/tmp/sf/b%lu", b);
        remove_tree(box, 0);
        if (mkdir(box, 0777) != 0)
            failed("mkdir %s: errno %d", box, errno);
        memset((void *)rep, 0, sizeof *rep);
        rep->batch = b;
        pid_t c = fork();
        if (c < 0)
            failed("fork: errno %d", errno);
        if (c == 0)
            child(b);
        int killed;
        int st = reap(c, BATCH_MS, &killed, "the batch's child");
        reap_orphans();
        if (killed && rep->what == 1)
            failed("a forged rt_sigreturn frame left the child hung until SIGKILL after %d ms "
                   "(Linux ends it with SIGSEGV)", BATCH_MS);
        if (killed && rep->what == 0 && never_waits(rep->nr))
            failed("call %llu never returned: the child was still in it after %d ms (it never waits)",
                   (unsigned long long)rep->nr, BATCH_MS);
        u64 made = rep->made;
        total += made;
        char how[64];
        if (killed) {
            by_kill++;
            snprintf(how, sizeof how, "killed after %d ms", BATCH_MS);
        } else if (WIFSIGNALED(st)) {
            by_signal++;
            snprintf(how, sizeof how, "signal %d", WTERMSIG(st));
        } else {
            exited++;
            snprintf(how, sizeof how, "exit %d", WEXITSTATUS(st));
        }
        if (!rep->finished || killed || WIFSIGNALED(st))
            snprintf(how + strlen(how), sizeof how - strlen(how), " at #%llu (%llu)",
                     (unsigned long long)made, (unsigned long long)rep->nr);
        remove_tree(box, 0);
        ipc_sweep();
        check(b);
        if ((b + 1) % PIPELINE_EVERY == 0)
            check_shell();
        printf("sysfuzz: batch %lu: %llu calls, %s; check ok\n", b, (unsigned long long)made, how);
    }
    printf("sysfuzz: done: %lu batches, %llu calls (%llu children exited, %llu ended by a signal, %llu killed after %d ms), %lu orphans reaped, %ld ms, seed %#llx\n",
           batches, (unsigned long long)total, (unsigned long long)exited,
           (unsigned long long)by_signal, (unsigned long long)by_kill, BATCH_MS, orphans,
           now_ms() - t0, (unsigned long long)seed);
    return 0;
}
