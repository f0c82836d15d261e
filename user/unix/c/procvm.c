/* process_vm_readv and process_vm_writev as process_vm_readv(2) says: a
 * parent reading and writing a forked child's memory at known addresses
 * (the child's copies of this program's globals), many iovecs on both
 * sides, partial transfers up to the first page that fails, the caller's
 * own memory, and every error: EINVAL (flags, more than IOV_MAX iovecs, a
 * negative length), EFAULT (an unreadable iovec array, a local buffer
 * outside the user half or not writable, a remote page that is not
 * there), ESRCH (no such pid, a zombie, a reaped child), EPERM (another
 * user's process without CAP_SYS_PTRACE). Prints exact lines and
 * "procvm: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("procvm: FAILED line %d: ", __LINE__);                                          \
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

static long pvr(pid_t pid, const struct iovec *l, unsigned long ln, const struct iovec *r,
                unsigned long rn, unsigned long flags) {
    return syscall(SYS_process_vm_readv, pid, l, ln, r, rn, flags);
}
static long pvw(pid_t pid, const struct iovec *l, unsigned long ln, const struct iovec *r,
                unsigned long rn, unsigned long flags) {
    return syscall(SYS_process_vm_writev, pid, l, ln, r, rn, flags);
}

/* The child's memory: the same addresses in both after fork. */
static unsigned char shared_buf[3 * 4096] __attribute__((aligned(4096)));
static unsigned char *hole; /* child: 3 pages, the third PROT_NONE */
static unsigned char *ro;   /* child: a read-only page */
static unsigned char local[3 * 4096] __attribute__((aligned(4096)));
static struct iovec many[1025];

static int to_child[2], to_parent[2];

static void wait_byte(int fd) {
    char c;
    while (read(fd, &c, 1) < 0 && errno == EINTR) {
    }
}
static void send_byte(int fd) {
    char c = 1;
    (void)write(fd, &c, 1);
}

static void child(void) {
    for (int i = 0; i < (int)sizeof shared_buf; i++)
        shared_buf[i] = (unsigned char)(i * 7 + 3);
    hole = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(hole, 'h', 2 * 4096);
    mprotect(hole + 2 * 4096, 4096, PROT_NONE);
    ro = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(ro, 'r', 4096);
    mprotect(ro, 4096, PROT_READ);
    /* Tell the parent where they are (their addresses differ from its). */
    uintptr_t where[2] = {(uintptr_t)hole, (uintptr_t)ro};
    (void)write(to_parent[1], where, sizeof where);
    wait_byte(to_child[0]);
    /* What the parent wrote. */
    int ok = 1;
    for (int i = 0; i < 100; i++)
        ok &= shared_buf[i] == (unsigned char)('A' + i % 26);
    for (int i = 100; i < 4096 + 50; i++)
        ok &= shared_buf[i] == (unsigned char)(i * 7 + 3);
    for (int i = 4096 + 50; i < 4096 + 350; i++)
        ok &= shared_buf[i] == (unsigned char)('a' + (i - 4146) % 26);
    printf("procvm: child sees the parent's writes: %d\n", ok);
    int hole_ok = 1;
    for (int i = 0; i < 2 * 4096; i++)
        hole_ok &= hole[i] == (i >= 2 * 4096 - 10 ? 'W' : 'h');
    printf("procvm: child's partial write landed up to the hole: %d\n", hole_ok);
    printf("procvm: child's read-only page unchanged: %d\n", ro[0] == 'r' && ro[4095] == 'r');
    send_byte(to_parent[1]);
    wait_byte(to_child[0]);
    _exit(0);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    long r;

    /* The caller's own memory: three local iovecs from two remote ones. */
    static char src[64] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!?";
    char a[10], b[20], c[34];
    struct iovec l3[3] = {{a, 10}, {b, 20}, {c, 34}};
    struct iovec r2[2] = {{src, 40}, {src + 40, 24}};
    r = pvr(getpid(), l3, 3, r2, 2, 0);
    printf("procvm: own readv %ld: %.10s %.20s %.4s\n", r, a, b, c);
    /* And writev into its own untouched page (made as a fault would). */
    static char fresh[8192];
    struct iovec lw = {src, 16}, rw = {fresh + 4096 - 8, 16};
    r = pvw(getpid(), &lw, 1, &rw, 1, 0);
    printf("procvm: own writev across a page %ld: %.16s\n", r, fresh + 4096 - 8);

    /* Nothing to move: 0 before the pid is looked at. */
    printf("procvm: no local bytes %ld, no remote bytes %ld\n", pvr(-1, NULL, 0, r2, 2, 0),
           pvr(-1, l3, 3, (struct iovec[]){{src, 0}}, 1, 0));

    pipe(to_child);
    pipe(to_parent);
    pid_t kid = fork();
    if (kid == 0)
        child();
    uintptr_t where[2];
    CHECK(read(to_parent[0], where, sizeof where) == sizeof where, "where");
    unsigned char *khole = (unsigned char *)where[0], *kro = (unsigned char *)where[1];

    /* The child's buffer differs from ours (ours is still zero). */
    memset(local, 0, sizeof local);
    struct iovec one = {local, sizeof shared_buf}, rone = {shared_buf, sizeof shared_buf};
    r = pvr(kid, &one, 1, &rone, 1, 0);
    int same = 1;
    for (int i = 0; i < (int)sizeof shared_buf; i++)
        same &= local[i] == (unsigned char)(i * 7 + 3);
    printf("procvm: read the child's 3 pages: %ld, bytes right %d\n", r, same);

    /* Many iovecs both sides: remote pieces 5, 4091, 100, local pieces
     * 1000 and the rest, across page boundaries on both sides. */
    memset(local, 0, sizeof local);
    struct iovec rv[3] = {{shared_buf + 4091, 5}, {shared_buf + 5, 4091}, {shared_buf + 8000, 100}};
    struct iovec lv[2] = {{local + 4000, 1000}, {local + 100, 4096}};
    r = pvr(kid, lv, 2, rv, 3, 0);
    int m = 1;
    for (int i = 0; i < 5; i++)
        m &= local[4000 + i] == (unsigned char)((4091 + i) * 7 + 3);
    for (int i = 0; i < 995; i++)
        m &= local[4005 + i] == (unsigned char)((5 + i) * 7 + 3);
    for (int i = 0; i < 3096; i++)
        m &= local[100 + i] == (unsigned char)((1000 + i) * 7 + 3);
    for (int i = 0; i < 100; i++)
        m &= local[3196 + i] == (unsigned char)((8000 + i) * 7 + 3);
    printf("procvm: 3 remote and 2 local iovecs: %ld, bytes right %d, after untouched %d\n", r, m,
           local[3296] == 0);

    /* IOV_MAX local iovecs of one byte each. */
    for (int i = 0; i < 1024; i++)
        many[i] = (struct iovec){local + 5 * i, 1};
    r = pvr(kid, many, 1024, &rone, 1, 0);
    printf("procvm: 1024 local iovecs: %ld, last byte right %d\n", r,
           local[5 * 1023] == (unsigned char)(1023 * 7 + 3));
    for (int i = 0; i < 1024; i++)
        many[i] = (struct iovec){shared_buf + 3 * i, 1};
    r = pvr(kid, &one, 1, many, 1024, 0);
    printf("procvm: 1024 remote iovecs: %ld, last byte right %d\n", r,
           local[1023] == (unsigned char)(3 * 1023 * 7 + 3));

    /* Partial: a remote iovec running into the hole stops at its page;
     * then an iovec after a failing one is not reached. */
    struct iovec rh = {khole + 100, 3 * 4096};
    r = pvr(kid, &one, 1, &rh, 1, 0);
    printf("procvm: read into the hole: %ld (%c)\n", r, local[0]);
    struct iovec rh2[3] = {{shared_buf, 100}, {khole + 2 * 4096, 10}, {shared_buf, 100}};
    r = pvr(kid, &one, 1, rh2, 3, 0);
    printf("procvm: good, hole, good: %ld\n", r);
    /* The local side short: a read-only local page after 50 bytes. */
    unsigned char *lro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct iovec lshort[2] = {{local, 50}, {lro, 100}};
    r = pvr(kid, lshort, 2, &rone, 1, 0);
    printf("procvm: local read-only after 50: %ld\n", r);

    /* Writes: two local pieces into two remote ones. */
    char up[100], lo[300];
    for (int i = 0; i < 100; i++)
        up[i] = 'A' + i % 26;
    for (int i = 0; i < 300; i++)
        lo[i] = 'a' + i % 26;
    struct iovec wl[2] = {{up, 100}, {lo, 300}};
    struct iovec wr[2] = {{shared_buf, 100}, {shared_buf + 4096 + 50, 300}};
    r = pvw(kid, wl, 2, wr, 2, 0);
    printf("procvm: writev 2 to 2: %ld\n", r);
    /* A write running into the hole: the bytes before it land. */
    char w10[20];
    memset(w10, 'W', sizeof w10);
    struct iovec wl1 = {w10, 20}, wrh = {khole + 2 * 4096 - 10, 20};
    r = pvw(kid, &wl1, 1, &wrh, 1, 0);
    printf("procvm: writev into the hole: %ld\n", r);
    struct iovec wro = {kro, 10};
    REFUSED(pvw(kid, &wl1, 1, &wro, 1, 0), EFAULT);
    struct iovec wtext = {(void *)main, 10};
    REFUSED(pvw(kid, &wl1, 1, &wtext, 1, 0), EFAULT);
    struct iovec rgone = {khole + 2 * 4096, 10};
    REFUSED(pvr(kid, &one, 1, &rgone, 1, 0), EFAULT);
    REFUSED(pvw(kid, &wl1, 1, &rgone, 1, 0), EFAULT);
    struct iovec rwild = {(void *)-1, 10};
    REFUSED(pvr(kid, &one, 1, &rwild, 1, 0), EFAULT);

    /* Bad arguments, in Linux's order. */
    REFUSED(pvr(kid, &one, 1, &rone, 1, 1), EINVAL);
    REFUSED(pvw(kid, &one, 1, &rone, 1, ~0UL), EINVAL);
    REFUSED(pvr(kid, many, 1025, &rone, 1, 0), EINVAL);
    REFUSED(pvr(kid, &one, 1, many, 1025, 0), EINVAL);
    struct iovec neg = {local, (size_t)-1};
    REFUSED(pvr(kid, &neg, 1, &rone, 1, 0), EINVAL);
    REFUSED(pvr(kid, &one, 1, &neg, 1, 0), EINVAL);
    REFUSED(pvr(kid, (struct iovec *)-1, 1, &rone, 1, 0), EFAULT);
    REFUSED(pvr(kid, &one, 1, (struct iovec *)-1, 1, 0), EFAULT);
    struct iovec lwild = {(void *)-1, 10};
    REFUSED(pvr(kid, &lwild, 1, &rone, 1, 0), EFAULT);
    struct iovec lro1 = {lro, 10};
    REFUSED(pvr(kid, &lro1, 1, &rone, 1, 0), EFAULT);
    REFUSED(pvr(-1, &one, 1, &rone, 1, 0), ESRCH);
    REFUSED(pvr(0, &one, 1, &rone, 1, 0), ESRCH);
    REFUSED(pvr(32766, &one, 1, &rone, 1, 0), ESRCH);

    send_byte(to_child[1]);
    wait_byte(to_parent[0]);

    /* A zombie has no memory; a reaped child is nobody. */
    send_byte(to_child[1]);
    siginfo_t si;
    waitid(P_PID, kid, &si, WEXITED | WNOWAIT);
    REFUSED(pvr(kid, &one, 1, &rone, 1, 0), ESRCH);
    waitpid(kid, NULL, 0);
    REFUSED(pvr(kid, &one, 1, &rone, 1, 0), ESRCH);

    /* Permission: a root target from another user is EPERM; a target of
     * the same user is not; root reaches another user's process. */
    int gate[2], back[2];
    pipe(gate);
    pipe(back);
    shared_buf[0] = 'T';
    pid_t t = fork();
    if (t == 0) {
        wait_byte(gate[0]);
        _exit(0);
    }
    pid_t u = fork();
    if (u == 0) {
        if (setgid(65534) || setuid(65534))
            _exit(2);
        unsigned char got[4] = {0};
        struct iovec g = {got, 1}, rg = {shared_buf, 1};
        errno = 0;
        long e1 = pvr(t, &g, 1, &rg, 1, 0);
        int err1 = errno;
        errno = 0;
        long e2 = pvw(t, &g, 1, &rg, 1, 0);
        int err2 = errno;
        long own = pvr(getpid(), &g, 1, &rg, 1, 0);
        printf("procvm: nobody reads root's: %ld %s, writes: %ld %s, reads its own %ld (%c)\n", e1,
               err1 == EPERM ? "EPERM" : "?", e2, err2 == EPERM ? "EPERM" : "?", own, got[0]);
        /* A process of the same user, until it may not be dumped. */
        int p1[2], p2[2];
        pipe(p1);
        pipe(p2);
        pid_t w = fork();
        if (w == 0) {
            send_byte(p1[1]);
            wait_byte(p2[0]);
            prctl(PR_SET_DUMPABLE, 0);
            send_byte(p1[1]);
            wait_byte(p2[0]);
            _exit(0);
        }
        wait_byte(p1[0]);
        long d1 = pvr(w, &g, 1, &rg, 1, 0);
        send_byte(p2[1]);
        wait_byte(p1[0]);
        errno = 0;
        long d2 = pvr(w, &g, 1, &rg, 1, 0);
        int err3 = errno;
        printf("procvm: nobody reads nobody's: %ld, once it is not dumpable: %ld %s\n", d1, d2,
               err3 == EPERM ? "EPERM" : "?");
        send_byte(p2[1]);
        waitpid(w, NULL, 0);
        /* Root may still (CAP_SYS_PTRACE). */
        prctl(PR_SET_DUMPABLE, 0);
        send_byte(back[1]);
        wait_byte(gate[0]);
        _exit(0);
    }
    wait_byte(back[0]);
    unsigned char got = 0;
    struct iovec g = {&got, 1}, rg = {shared_buf, 1};
    r = pvr(u, &g, 1, &rg, 1, 0);
    printf("procvm: root reads nobody's undumpable: %ld (%c)\n", r, got);
    send_byte(gate[1]);
    send_byte(gate[1]);
    waitpid(t, NULL, 0);
    waitpid(u, NULL, 0);

    /* A child read at once after fork (its keeper may not have told unixd
     * where its memory is yet). */
    shared_buf[1] = 'Q';
    pid_t f = fork();
    if (f == 0) {
        pause();
        _exit(0);
    }
    got = 0;
    struct iovec rq = {shared_buf + 1, 1};
    r = pvr(f, &g, 1, &rq, 1, 0);
    printf("procvm: a new child read at once: %ld (%c)\n", r, got);
    kill(f, SIGKILL);
    waitpid(f, NULL, 0);

    if (failures == 0)
        printf("procvm: all ok\n");
    return failures != 0;
}
