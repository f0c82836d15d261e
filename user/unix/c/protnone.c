/* mprotect(PROT_NONE) on pages that exist: a touch gives SIGSEGV with
 * si_code SEGV_ACCERR and the exact si_addr; the bytes are still there when
 * access comes back; it holds across fork in parent and child; munmap of a
 * range of such pages frees them; a touch where nothing is mapped is
 * SEGV_MAPERR. Prints exact values and "protnone: all ok". */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static sigjmp_buf back;
static volatile unsigned long fault_addr;
static volatile int fault_code, faults;

static void on_segv(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    fault_addr = (unsigned long)si->si_addr;
    fault_code = si->si_code;
    faults++;
    siglongjmp(back, 1);
}

/* Reads (write = 0) or writes one byte at p → 1 if it faulted. */
static int touch(volatile char *p, int write) {
    if (sigsetjmp(back, 1))
        return 1;
    if (write)
        *p = 'w';
    else
        (void)*p;
    return 0;
}

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("protnone: FAILED line %d: ", __LINE__);                                        \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    struct sigaction sa = {0};
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);

    long pg = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < 4; i++)
        memset(m + i * pg, 'a' + i, pg);

    CHECK(mprotect(m + pg, 2 * pg, PROT_NONE) == 0, "mprotect none");
    int f = touch(m + pg + 123, 0);
    printf("protnone: read faulted %d, si_addr offset %ld, si_code %d\n", f,
           (long)(fault_addr - (unsigned long)m), fault_code);
    f = touch(m + 2 * pg + 7, 1);
    printf("protnone: write faulted %d, si_addr offset %ld, si_code %d\n", f,
           (long)(fault_addr - (unsigned long)m), fault_code);
    CHECK(!touch(m, 0) && !touch(m + 3 * pg, 0), "neighbours stay");
    printf("protnone: neighbours %c %c\n", m[0], m[3 * pg]);

    /* Read access back: the bytes are there; a write still faults. */
    CHECK(mprotect(m + pg, pg, PROT_READ) == 0, "mprotect read");
    printf("protnone: after PROT_READ %c, write faults %d\n", m[pg + 5], touch(m + pg, 1));
    CHECK(mprotect(m + pg, pg, PROT_READ | PROT_WRITE) == 0, "mprotect rw");
    m[pg] = 'X';
    printf("protnone: after PROT_READ|PROT_WRITE %c%c\n", m[pg], m[pg + 1]);

    /* Across fork: both sides fault, both get the bytes back. */
    pid_t c = fork();
    if (c == 0) {
        int cf = touch(m + 2 * pg, 0);
        mprotect(m + 2 * pg, pg, PROT_READ);
        printf("protnone: child faulted %d, then reads %c\n", cf, m[2 * pg + 1]);
        _exit(cf == 1 && m[2 * pg + 1] == 'c' ? 0 : 1);
    }
    int st;
    waitpid(c, &st, 0);
    printf("protnone: child status %d; parent faults %d\n", WEXITSTATUS(st), touch(m + 2 * pg, 0));
    mprotect(m + 2 * pg, pg, PROT_READ);
    printf("protnone: parent reads %c\n", m[2 * pg + 9]);

    /* Many pages out at once, then unmapped while out. */
    int n = 300;
    char *big = mmap(NULL, n * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < n; i++)
        big[i * pg] = (char)i;
    CHECK(mprotect(big, n * pg, PROT_NONE) == 0, "mprotect 300 pages");
    printf("protnone: 300 pages out, last faults %d\n", touch(big + (n - 1) * pg, 0));
    CHECK(munmap(big, n * pg) == 0, "munmap");
    char *again = mmap(NULL, n * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    long sum = 0;
    for (int i = 0; i < n; i++)
        sum += again[i * pg];
    printf("protnone: fresh mapping sums to %ld\n", sum);

    /* Nothing mapped: SEGV_MAPERR. */
    munmap(m + 3 * pg, pg);
    f = touch(m + 3 * pg + 8, 0);
    printf("protnone: unmapped faulted %d, si_code %d, offset %ld\n", f, fault_code,
           (long)(fault_addr - (unsigned long)m));
    printf("protnone: %d faults\n", faults);
    printf(failures ? "protnone: %d failures\n" : "protnone: all ok\n", failures);
    return failures != 0;
}
