/* clone flag sets and waits as Linux: a pipe's write end is writable
 * (poll, epoll, and an edge-triggered epoll's event) only while a whole
 * page of it is free; a child made with CLONE_VM | CLONE_VFORK writes the
 * memory its parent reads after, even memory the parent shares
 * copy-on-write with its own parent. Prints exact lines and
 * "clonewait: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("clonewait: FAILED line %d: ", __LINE__);                                       \
            printf(__VA_ARGS__);                                                                   \
            printf(" (errno %d)\n", errno);                                                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* A pipe one page big, filled, then read half and all: poll's POLLOUT and
 * an edge-triggered epoll of both ends. */
static void pipe_pages(void) {
    int p[2];
    CHECK(pipe2(p, O_NONBLOCK) == 0, "pipe2");
    CHECK(fcntl(p[1], F_SETPIPE_SZ, 4096) == 4096, "F_SETPIPE_SZ");
    int ep = epoll_create1(0);
    struct epoll_event e = {.events = EPOLLIN | EPOLLET, .data.fd = p[0]};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &e) == 0, "add read end");
    e = (struct epoll_event){.events = EPOLLOUT | EPOLLET, .data.fd = p[1]};
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, p[1], &e) == 0, "add write end");
    char buf[4096];
    memset(buf, 'a', sizeof buf);
    long w = write(p[1], buf, sizeof buf);
    errno = 0;
    long w2 = write(p[1], buf, sizeof buf);
    printf("clonewait: pipe filled %ld, then %ld errno %d\n", w, w2, errno);
    struct epoll_event got[2];
    int n = epoll_wait(ep, got, 2, 0);
    printf("clonewait: full: %d event, read end %d, EPOLLIN %d\n", n, n == 1 && got[0].data.fd == p[0],
           n == 1 && (got[0].events & EPOLLIN) != 0);
    long r = read(p[0], buf, 2048);
    struct pollfd pf = {.fd = p[1], .events = POLLOUT};
    int pn = poll(&pf, 1, 0);
    n = epoll_wait(ep, got, 2, 0);
    printf("clonewait: half read %ld: poll %d revents %d, epoll %d\n", r, pn, pf.revents, n);
    r = read(p[0], buf, 2048);
    errno = 0;
    long r2 = read(p[0], buf, 1);
    pn = poll(&pf, 1, 0);
    n = epoll_wait(ep, got, 2, 0);
    printf("clonewait: all read %ld then %ld errno %d: poll %d revents %d, epoll %d write end %d "
           "EPOLLOUT %d\n",
           r, r2, errno, pn, pf.revents, n, n == 1 && got[0].data.fd == p[1],
           n == 1 && (got[0].events & EPOLLOUT) != 0);
    close(ep);
    close(p[0]);
    close(p[1]);
}

static volatile int written;
static char big[1 << 20];
static char vstack[16384] __attribute__((aligned(16)));

static int vchild(void *arg) {
    (void)arg;
    for (int i = 0; i < 3; i++)
        sched_yield();
    written = 1;
    _exit(0);
}

/* clone(CLONE_VM | CLONE_VFORK) in a process forked from this one (its
 * memory shared copy-on-write with its parent): the child's write is the
 * parent's. */
static void vfork_shares(void) {
    written = 0;
    pid_t outer = fork();
    if (outer == 0) {
        pid_t c = clone(vchild, vstack + sizeof vstack, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
        int st = -1;
        pid_t w = waitpid(c, &st, 0);
        printf("clonewait: vfork child %d reaped %d status %d, its write seen %d\n", c > 0, w == c,
               st, written);
        fflush(stdout);
        _exit(written == 1 ? 0 : 1);
    }
    int st;
    CHECK(waitpid(outer, &st, 0) == outer && st == 0, "outer status %d", st);
    printf("clonewait: the forking parent's copy still %d\n", written);
}


/* A MAP_GROWSDOWN range one page long at the top of 300 free pages: a
 * write 8 pages below it grows it (the child ends 0); with a plain page
 * mapped 20 pages below, the same write would leave less than Linux's
 * 256-page guard gap: SIGSEGV. */
static int grows(int blocker) {
    long pg = 4096;
    char *base = mmap(NULL, 300 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(base != MAP_FAILED, "reserve");
    munmap(base, 300 * pg);
    char *top = base + 300 * pg;
    char *s = mmap(top - pg, pg, PROT_READ | PROT_WRITE,
                   MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN, -1, 0);
    CHECK(s == top - pg, "growsdown map %p", (void *)s);
    if (blocker)
        CHECK(mmap(top - 20 * pg, pg, PROT_READ | PROT_WRITE,
                   MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == top - 20 * pg,
              "blocker");
    pid_t c = fork();
    if (c == 0) {
        volatile char *p = top - 8 * pg - 100;
        *p = 7;
        _exit(*p == 7 ? 0 : 1);
    }
    int st = 0;
    waitpid(c, &st, 0);
    munmap(base, 300 * pg);
    return st;
}

static volatile pid_t usr1_from = -1;
static volatile int usr1_code = -1, usr1_uid = -1;
static void on_usr1(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    usr1_from = si->si_pid;
    usr1_code = si->si_code;
    usr1_uid = si->si_uid;
}

/* kill's siginfo: an SA_SIGINFO handler and sigwaitinfo learn the
 * sender's pid and real uid, si_code SI_USER. */
static void sender(void) {
    struct sigaction sa = {.sa_sigaction = on_usr1, .sa_flags = SA_SIGINFO};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t both, old;
    sigemptyset(&both);
    sigaddset(&both, SIGUSR1);
    sigaddset(&both, SIGUSR2);
    sigprocmask(SIG_BLOCK, &both, &old);
    pid_t c = fork();
    if (c == 0) {
        kill(getppid(), SIGUSR1);
        kill(getppid(), SIGUSR2);
        _exit(0);
    }
    waitpid(c, NULL, 0);
    siginfo_t si;
    sigset_t two;
    sigemptyset(&two);
    sigaddset(&two, SIGUSR2);
    int s = sigwaitinfo(&two, &si);
    printf("clonewait: sigwaitinfo %d from the child %d, code %d, uid %d\n", s, si.si_pid == c,
           si.si_code, (int)si.si_uid);
    sigprocmask(SIG_SETMASK, &old, NULL);
    printf("clonewait: SA_SIGINFO handler: from the child %d, code %d, uid %d\n", usr1_from == c,
           usr1_code, usr1_uid);
    kill(getpid(), SIGUSR1);
    printf("clonewait: from itself %d, code %d\n", usr1_from == getpid(), usr1_code);
    signal(SIGUSR1, SIG_DFL);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    pipe_pages();
    /* Small: the forked process's pages are copies in its own bank. */
    vfork_shares();
    /* Big: they are shared copy-on-write with this one. */
    memset(big, 1, sizeof big);
    vfork_shares();
    int st = grows(0);
    printf("clonewait: growsdown grew: exited %d status %d\n", WIFEXITED(st), WEXITSTATUS(st));
    st = grows(1);
    printf("clonewait: growsdown into the guard gap: signalled %d signal %d\n", WIFSIGNALED(st),
           WTERMSIG(st));
    sender();
    if (failures == 0)
        printf("clonewait: all ok\n");
    return failures != 0;
}
