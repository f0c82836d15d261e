/* fork, exit, wait4 and execve across processes: exit statuses, a pipe
 * between parent and child (the reader parks in unixd until the writer
 * writes), memory copied at fork, WNOHANG and ECHILD, getppid. Every line
 * is checked by tests/system/unix_fork.toml. */
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("forktest: FAILED line %d: %s: ", __LINE__, #cond);         \
            printf(__VA_ARGS__);                                               \
            printf(" (errno %d)\n", errno);                                    \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static int shared_value = 100;
static char big[20000];

/* StetNodes (nodes the UNIX system uses) and MemFree from /proc/meminfo. */
static void meminfo(long *nodes, long *free_kb)
{
    char buf[1024];
    *nodes = *free_kb = -1;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return;
    while (fgets(buf, sizeof buf, f)) {
        sscanf(buf, "StetNodes: %ld", nodes);
        sscanf(buf, "MemFree: %ld kB", free_kb);
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    /* Run by its own exec'd child: says it runs, waits for a byte. */
    if (argc > 1 && strcmp(argv[1], "--hold") == 0) {
        char x = 'r';
        write(1, &x, 1);
        return read(0, &x, 1) == 1 ? 7 : 8;
    }
    int status;
    pid_t me = getpid();
    setvbuf(stdout, NULL, _IONBF, 0);

    /* An exit status. */
    pid_t c = fork();
    if (c == 0) {
        CHECK(getppid() == me, "ppid %d", getppid());
        _exit(42);
    }
    CHECK(c > me, "child pid %d", c);
    CHECK(waitpid(c, &status, 0) == c, "waitpid");
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 42, "status %#x", status);
    printf("forktest: child exited with %d\n", WEXITSTATUS(status));
    CHECK(waitpid(-1, &status, WNOHANG) == -1 && errno == ECHILD, "no children left");

    /* The child's own identity (the kernel answers these for it). */
    c = fork();
    if (c == 0)
        _exit(getpid() == syscall(SYS_gettid) ? getpid() % 128 : 0);
    CHECK(waitpid(c, &status, 0) == c && WEXITSTATUS(status) == c % 128, "child's getpid %#x", status);
    CHECK(getpid() == me && syscall(SYS_gettid) == me, "parent's getpid after fork");

    /* Each child sees the parent's memory and FPU state as they are at its
     * own fork, also when its process is the one kept from the last child
     * (whose own writes must not show) and only the bytes are new. */
    static volatile int counter;
    int seen = 0;
    for (int i = 0; i < 6; i++) {
        int local = 1000 + i;
        counter = i * 7 + 1;
        fesetround(i % 2 ? FE_UPWARD : FE_TONEAREST);
        c = fork();
        if (c == 0) {
            int ok = counter == i * 7 + 1 && local == 1000 + i &&
                     fegetround() == (i % 2 ? FE_UPWARD : FE_TONEAREST);
            counter = -1;
            local = -1;
            fesetround(FE_DOWNWARD);
            /* Its own pid, also from the kernel's answers (left at the
             * second call), never the last child's. */
            pid_t a = getpid(), b = getpid(), t = syscall(SYS_gettid);
            _exit(ok && a == b && b == getpid() && t == a ? 100 + a % 100 : 1);
        }
        CHECK(waitpid(c, &status, 0) == c, "waitpid");
        seen += WIFEXITED(status) && WEXITSTATUS(status) == 100 + c % 100;
        CHECK(counter == i * 7 + 1 && local == 1000 + i, "parent's memory after child %d", i);
    }
    fesetround(FE_TONEAREST);
    printf("forktest: 6 children in a row saw the memory, rounding and pid of their fork: %d\n", seen);

    /* Memory is the child's own after fork. */
    memset(big, 'p', sizeof big);
    c = fork();
    if (c == 0) {
        int ok = shared_value == 100 && big[0] == 'p' && big[19999] == 'p';
        shared_value = 5;
        memset(big, 'c', sizeof big);
        _exit(ok ? 3 : 4);
    }
    shared_value = 200;
    CHECK(wait(&status) == c && WEXITSTATUS(status) == 3, "child saw the parent's memory: %#x", status);
    CHECK(shared_value == 200 && big[0] == 'p' && big[19999] == 'p', "parent's memory kept");
    printf("forktest: memory copied at fork\n");

    /* A pipe: the parent reads before the child writes. */
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    c = fork();
    if (c == 0) {
        close(p[0]);
        struct timespec t = {0, 20 * 1000 * 1000};
        nanosleep(&t, NULL);
        const char *msg = "hello through a pipe";
        _exit(write(p[1], msg, strlen(msg)) == (ssize_t)strlen(msg) ? 0 : 1);
    }
    close(p[1]);
    char buf[64] = {0};
    ssize_t n = read(p[0], buf, sizeof buf - 1);
    CHECK(n == 20, "read %zd", n);
    printf("forktest: parent read \"%s\"\n", buf);
    CHECK(read(p[0], buf, sizeof buf) == 0, "end of file once the child is gone");
    CHECK(waitpid(c, &status, 0) == c && status == 0, "pipe child %#x", status);
    close(p[0]);

    /* WNOHANG while the child runs, then its end. */
    int q[2];
    pipe(q);
    c = fork();
    if (c == 0) {
        char x;
        read(q[0], &x, 1);
        _exit(9);
    }
    CHECK(waitpid(c, &status, WNOHANG) == 0, "WNOHANG");
    /* The running child's /proc directory, by any path that leads there
     * (unixd makes it only when a path goes through /proc). */
    char dir[64], exe[256], through[64];
    snprintf(dir, sizeof dir, "/proc/%d", c);
    snprintf(through, sizeof through, "/tmp/forktest-proc/%d/cmdline", c);
    unlink("/tmp/forktest-proc");
    CHECK(symlink("/proc", "/tmp/forktest-proc") == 0, "symlink");
    struct stat sb;
    ssize_t el = readlink(strcat(strcpy(exe, dir), "/exe"), exe, sizeof exe - 1);
    int seen_proc = access(dir, F_OK) == 0 && stat(through, &sb) == 0 && el > 0;
    exe[el > 0 ? el : 0] = 0;
    printf("forktest: a new child's /proc directory is there: %s, exe %s\n",
           seen_proc ? "yes" : "no", exe);
    unlink("/tmp/forktest-proc");
    write(q[1], "x", 1);
    CHECK(waitpid(c, &status, 0) == c && WEXITSTATUS(status) == 9, "after WNOHANG %#x", status);
    close(q[0]);
    close(q[1]);

    /* execve in a child. */
    c = fork();
    if (c == 0) {
        char pid[16];
        snprintf(pid, sizeof pid, "%d", me);
        char *argv[] = {"/bin/exitwith", "17", pid, NULL};
        char *envp[] = {"X=1", NULL};
        execve(argv[0], argv, envp);
        _exit(99);
    }
    CHECK(waitpid(c, &status, 0) == c && WEXITSTATUS(status) == 17, "exec child %#x", status);
    printf("forktest: exec'd child exited with %d\n", WEXITSTATUS(status));
    /* An exec'd child's /proc directory shows its new program (made only
     * when the parent looks, from what its execve said). */
    int to[2], from[2];
    CHECK(pipe(to) == 0 && pipe(from) == 0, "pipes");
    c = fork();
    if (c == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        char *argv2[] = {"/bin/forktest", "--hold", NULL};
        execve(argv2[0], argv2, NULL);
        _exit(99);
    }
    char r = 0, cmd[64] = {0}, ex[64] = {0};
    CHECK(read(from[0], &r, 1) == 1 && r == 'r', "the exec'd child runs");
    snprintf(dir, sizeof dir, "/proc/%d/cmdline", c);
    int cf = open(dir, O_RDONLY);
    ssize_t cl = cf >= 0 ? read(cf, cmd, sizeof cmd - 1) : -1;
    close(cf);
    for (ssize_t i = 0; i < cl; i++)
        if (cmd[i] == 0)
            cmd[i] = ' ';
    snprintf(dir, sizeof dir, "/proc/%d/exe", c);
    readlink(dir, ex, sizeof ex - 1);
    write(to[1], "x", 1);
    CHECK(waitpid(c, &status, 0) == c && WEXITSTATUS(status) == 7, "held child %#x", status);
    printf("forktest: an exec'd child's /proc: exe %s, cmdline %s\n", ex, cmd);
    close(to[0]);
    close(to[1]);
    close(from[0]);
    close(from[1]);

    /* fork then exec, again and again: each child's process is the copy
     * the last one put aside at its exec (only the bytes are new), and the
     * program it runs is loaded afresh; a plain child after them too. */
    int execs = 0;
    for (int i = 0; i < 4; i++) {
        counter = 500 + i;
        c = fork();
        if (c == 0) {
            char code[16], pid[16];
            snprintf(code, sizeof code, "%d", counter == 500 + i ? 20 + i : 1);
            snprintf(pid, sizeof pid, "%d", me);
            char *argv[] = {"/bin/exitwith", code, pid, NULL};
            execve(argv[0], argv, NULL);
            _exit(99);
        }
        execs += waitpid(c, &status, 0) == c && WIFEXITED(status) && WEXITSTATUS(status) == 20 + i;
    }
    counter = 77;
    c = fork();
    if (c == 0)
        _exit(counter == 77 && getpid() == syscall(SYS_gettid) ? 100 + getpid() % 100 : 1);
    execs += waitpid(c, &status, 0) == c && WEXITSTATUS(status) == 100 + c % 100;
    printf("forktest: 4 fork+exec children and a plain child after them: %d ok\n", execs);
    c = fork();
    if (c == 0) {
        char *argv[] = {"/bin/nonexistent", NULL};
        execve(argv[0], argv, NULL);
        _exit(errno == ENOENT ? 55 : 56);
    }
    CHECK(waitpid(c, &status, 0) == c && WEXITSTATUS(status) == 55, "failed exec %#x", status);
    /* More arguments and longer ones than execve's first, small buffers
     * hold: it loads the program with the big ones. */
    c = fork();
    if (c == 0) {
        static char *many[104];
        static char longarg[5001];
        char pid[16];
        snprintf(pid, sizeof pid, "%d", me);
        memset(longarg, 'y', 5000);
        many[0] = "/bin/exitwith";
        many[1] = "31";
        many[2] = pid;
        for (int i = 3; i < 102; i++)
            many[i] = "x";
        many[102] = longarg;
        execve(many[0], many, NULL);
        _exit(99);
    }
    CHECK(waitpid(c, &status, 0) == c && WEXITSTATUS(status) == 31, "many args %#x", status);

    /* Three children, any order. */
    int sum = 0;
    for (int i = 1; i <= 3; i++)
        if (fork() == 0)
            _exit(i * 10);
    for (int i = 0; i < 3; i++) {
        CHECK(wait(&status) > 0, "wait %d", i);
        sum += WEXITSTATUS(status);
    }
    printf("forktest: three children, statuses add to %d\n", sum);
    CHECK(wait(&status) == -1 && errno == ECHILD, "ECHILD");

    /* A small process's child gets copies of its pages (from the child's
     * own bank); grown past the copy-on-write threshold, that child forks
     * a grandchild and ends at once: the grandchild must still have its
     * memory (the copies it got are its own, not the ended child's). */
    int gp[2];
    CHECK(pipe(gp) == 0, "pipe");
    shared_value = 31;
    c = fork();
    if (c == 0) {
        char *more = malloc(100 * 4096);
        for (int i = 0; i < 100; i++)
            more[i * 4096] = (char)i;
        if (fork() == 0) {
            /* Until its parent has ended (its keeper gives the process's
             * bank back before it tells unixd, which makes this process
             * pid 1's). */
            struct timespec t = {0, 10 * 1000 * 1000};
            while (getppid() != 1)
                nanosleep(&t, NULL);
            int ok = shared_value == 31 && more[99 * 4096] == 99 && big[0] == 'p';
            write(gp[1], ok ? "ok" : "no", 2);
            _exit(0);
        }
        _exit(0);
    }
    CHECK(waitpid(c, &status, 0) == c, "waitpid");
    char gr[3] = {0};
    CHECK(read(gp[0], gr, 2) == 2, "read");
    printf("forktest: a grandchild outliving its parent has its memory: %s\n", gr);

    /* Nothing is lost: fork/exit/wait cycles leave the system's nodes
     * and pages as they were (each child's keeper, tree and forwarder go
     * back). Every child reaped first; one cycle to warm up. */
    while (wait(NULL) > 0)
        ;
    long nodes0, free0, nodes1, free1;
    for (int round = 0; round < 2; round++) {
        meminfo(&nodes0, &free0);
        for (int i = 0; i < (round ? 20 : 1); i++) {
            c = fork();
            if (c == 0)
                _exit(0);
            CHECK(waitpid(c, &status, 0) == c, "waitpid");
        }
        meminfo(&nodes1, &free1);
    }
    CHECK(nodes0 > 0 && free0 > 0, "meminfo %ld %ld", nodes0, free0);
    printf("forktest: 20 fork/exit/wait cycles lost %ld nodes and %ld kB\n", nodes1 - nodes0,
           free0 - free1);

    printf("forktest: %s\n", failures ? "FAILED" : "all ok");
    return failures ? 1 : 0;
}
