/* The UNIX personality's first program: start-up (argv, envp, auxv), TLS,
 * stdio, brk and mmap memory, mprotect, uname, clocks, an unimplemented
 * call, and an exit status. Built twice: static (ET_EXEC) and static-PIE.
 * Every line is checked exactly by tests/system/unix_hello.toml. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static __thread int tls_counter = 41;
static int data_word = 0x5eed;
static char bss_buf[10000];

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("hello: FAILED %s: ", #cond);                               \
            printf(__VA_ARGS__);                                               \
            printf("\n");                                                      \
            failures++;                                                        \
        }                                                                      \
    } while (0)

int main(int argc, char **argv, char **envp) {
    printf("hello: argc=%d", argc);
    for (int i = 0; i < argc; i++)
        printf(" [%s]", argv[i]);
    printf("\n");
    int nenv = 0;
    while (envp[nenv])
        nenv++;
    printf("hello: %d env, HOME=%s\n", nenv, getenv("HOME") ? getenv("HOME") : "(none)");

    CHECK(getauxval(AT_PAGESZ) == 4096, "pagesz %lu", getauxval(AT_PAGESZ));
    CHECK(getauxval(AT_RANDOM) != 0, "no AT_RANDOM");
    CHECK(getauxval(AT_PHNUM) >= 2, "phnum %lu", getauxval(AT_PHNUM));
    CHECK(getauxval(AT_ENTRY) != 0, "no AT_ENTRY");
    CHECK(strcmp((char *)getauxval(AT_PLATFORM), "x86_64") == 0, "platform");

    /* TLS (fs base from arch_prctl) and the data and bss segments. */
    tls_counter++;
    CHECK(tls_counter == 42, "tls %d", tls_counter);
    CHECK(data_word == 0x5eed, "data %x", data_word);
    for (size_t i = 0; i < sizeof bss_buf; i++)
        CHECK(bss_buf[i] == 0, "bss byte %zu", i);
    memset(bss_buf, 0xab, sizeof bss_buf);

    /* Small allocations come from brk, big ones from mmap. */
    char *small = malloc(100);
    strcpy(small, "small");
    char *big = malloc(1 << 20);
    CHECK(big != NULL, "big malloc");
    for (int i = 0; i < (1 << 20); i += 4096)
        big[i] = (char)i;
    long sum = 0;
    for (int i = 0; i < (1 << 20); i += 4096)
        sum += (unsigned char)big[i];
    free(big);
    printf("hello: malloc %s, 1 MiB touched, sum %ld\n", small, sum);
    /* The break itself (musl's sbrk only reads it). */
    char *brk0 = (char *)syscall(SYS_brk, 0);
    CHECK((char *)syscall(SYS_brk, brk0 + 8192) == brk0 + 8192, "brk up");
    memset(brk0, 1, 8192);
    CHECK((char *)syscall(SYS_brk, brk0) == brk0, "brk down");
    CHECK((char *)syscall(SYS_brk, 4096) == brk0, "brk below the start is refused");

    /* mmap, mprotect, munmap. */
    char *m = mmap(0, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap");
    CHECK(m[0] == 0 && m[8191] == 0, "fresh zero");
    m[4096] = 'x';
    CHECK(mprotect(m, 4096, PROT_READ) == 0, "mprotect");
    CHECK(m[4096] == 'x', "kept");
    CHECK(munmap(m + 4096, 4096) == 0, "munmap middle");
    CHECK(munmap(m, 3 * 4096) == 0, "munmap all");
    CHECK(mmap(0, 4096, PROT_READ, MAP_SHARED | MAP_ANONYMOUS | 0x40000000, -1, 0) != NULL, "flags");
    errno = 0;
    CHECK(mmap((void *)1, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED && errno == EINVAL, "misaligned fixed: errno %d", errno);
    printf("hello: mmap, mprotect, munmap ok\n");

    struct utsname u;
    CHECK(uname(&u) == 0, "uname");
    printf("hello: %s %s %s\n", u.sysname, u.machine, u.release);

    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_MONOTONIC, &b);
    CHECK(b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec), "monotonic");
    struct timespec r;
    clock_gettime(CLOCK_REALTIME, &r);
    CHECK(r.tv_sec > 1700000000, "realtime %ld", (long)r.tv_sec);

    CHECK(getpid() == 1, "pid %d", getpid());
    CHECK(getppid() == 0, "ppid %d", getppid());
    CHECK(getuid() == 0 && geteuid() == 0 && getgid() == 0, "ids");

    errno = 0;
    long x = syscall(999, 1, 2, 3);
    CHECK(x == -1 && errno == ENOSYS, "syscall 999 gave %ld errno %d", x, errno);
    /* x32 numbers and the highest: ENOSYS too (answered by the kernel,
     * still counted). */
    CHECK(syscall(0x40000000 | SYS_getpid) == -1 && errno == ENOSYS, "x32 getpid");
    CHECK(syscall(-1L) == -1 && errno == ENOSYS, "syscall -1");
    CHECK(syscall(SYS_gettid) == 1, "tid");
    printf("hello: unimplemented call: %s\n", strerror(ENOSYS));

    /* Writes of every size through one descriptor. */
    CHECK(write(1, "hello: write(2)\n", 16) == 16, "write");
    CHECK(write(99, "x", 1) == -1 && errno == EBADF, "bad fd errno %d", errno);

    printf("hello: %s\n", failures ? "FAILED" : "all ok");
    fflush(stdout);
    return failures ? 1 : 7;
}
