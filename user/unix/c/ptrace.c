/* ptrace as Linux (from ptrace(2)): PTRACE_TRACEME and signal-delivery
 * stops reported to the tracer's waitpid, the signal the tracer gives at
 * PTRACE_CONT, syscall stops (PTRACE_SYSCALL, PTRACE_O_TRACESYSGOOD)
 * counting a child's calls, GETREGS/SETREGS changing a call's result and
 * skipping one, PEEKDATA/POKEDATA/PEEKUSER/POKEUSER, GETSIGINFO,
 * PTRACE_KILL, ATTACH/SEIZE/DETACH, a tracer's end (detach, EXITKILL),
 * execve's stop, TracerPid, and Linux's errnos. Prints exact lines and
 * "ptrace: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SELF_PATH
#define SELF_PATH "/bin/ptrace"
#endif

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("ptrace: FAILED line %d: ", __LINE__);                                          \
            printf(__VA_ARGS__);                                                                   \
            printf(" (errno %d)\n", errno);                                                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* The raw call: PEEK* store the word at `data`. */
static long pt(long req, pid_t pid, long addr, long data) {
    return syscall(SYS_ptrace, req, (long)pid, addr, data);
}

#define REFUSED(call, e)                                                                           \
    do {                                                                                           \
        errno = 0;                                                                                 \
        long r_ = (long)(call);                                                                    \
        CHECK(r_ == -1 && errno == (e), "%s gave %ld, want errno %d", #call, r_, (e));             \
    } while (0)

static volatile int usr1_seen;
static void on_usr1(int s) {
    (void)s;
    usr1_seen = 1;
}

static volatile long value = 0x1122334455667788L;

/* The State line of /proc/<pid>/status, its first letter. */
static char state_of(pid_t pid) {
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    char s = '?';
    while (fgets(buf, sizeof buf, f))
        if (sscanf(buf, "State: %c", &s) == 1)
            break;
    fclose(f);
    return s;
}

static int tracer_pid_of(pid_t pid) {
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int t = -1;
    while (fgets(buf, sizeof buf, f))
        if (sscanf(buf, "TracerPid: %d", &t) == 1)
            break;
    fclose(f);
    return t;
}

/* A child that asks to be traced and stops itself. */
static pid_t traced_child(void (*body)(void)) {
    pid_t c = fork();
    if (c == 0) {
        if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0)
            _exit(90);
        raise(SIGSTOP);
        body();
        _exit(0);
    }
    int st;
    CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP,
          "first stop: status %#x", st);
    return c;
}

static void usr1_body(void) {
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    _exit(usr1_seen ? 4 : 3);
}

static void signal_stops(void) {
    /* The stop for SIGUSR1, reported without WUNTRACED; CONT 0 drops it. */
    for (int give = 0; give < 2; give++) {
        pid_t c = traced_child(usr1_body);
        pt(PTRACE_CONT, c, 0, 0);
        int st;
        CHECK(waitpid(c, &st, 0) == c, "wait");
        if (give == 0) {
            printf("ptrace: SIGUSR1 stop: stopped %d sig %d\n", WIFSTOPPED(st), WSTOPSIG(st));
            siginfo_t si;
            memset(&si, 0, sizeof si);
            CHECK(pt(PTRACE_GETSIGINFO, c, 0, (long)&si) == 0, "GETSIGINFO");
            printf("ptrace: siginfo signo %d, TracerPid is the parent %d, state %c\n",
                   si.si_signo, tracer_pid_of(c) == getpid(), state_of(c));
        }
        CHECK(pt(PTRACE_CONT, c, 0, give ? SIGUSR1 : 0) == 0, "CONT");
        CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st), "exit %#x", st);
        printf("ptrace: CONT with signal %d: exit %d\n", give ? SIGUSR1 : 0, WEXITSTATUS(st));
    }
}

static void calls_body(void) {
    /* getpid three times first: from its second the kernel answers it
     * for the child; syscall stops must still see every later one. */
    for (int i = 0; i < 3; i++)
        syscall(SYS_getpid);
    raise(SIGSTOP);
    for (int i = 0; i < 5; i++)
        syscall(SYS_getppid);
    for (int i = 0; i < 3; i++)
        syscall(SYS_getpid);
    _exit(0);
}

static void syscall_stops(void) {
    pid_t c = traced_child(calls_body);
    int st;
    pt(PTRACE_CONT, c, 0, 0);
    CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP, "second stop");
    CHECK(pt(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACESYSGOOD) == 0, "SETOPTIONS");
    int entries = 0, exits = 0, pids = 0, good = 1;
    for (;;) {
        CHECK(pt(PTRACE_SYSCALL, c, 0, 0) == 0, "SYSCALL");
        if (waitpid(c, &st, 0) != c || !WIFSTOPPED(st))
            break;
        if (WSTOPSIG(st) != (SIGTRAP | 0x80))
            good = 0;
        struct user_regs_struct r;
        CHECK(pt(PTRACE_GETREGS, c, 0, (long)&r) == 0, "GETREGS");
        if (r.orig_rax == SYS_getppid) {
            if ((long)r.rax == -ENOSYS)
                entries++;
            else if ((long)r.rax == getpid())
                exits++;
        }
        if (r.orig_rax == SYS_getpid && (long)r.rax == -ENOSYS)
            pids++;
    }
    printf("ptrace: syscall stops: getppid %d entries %d exits, getpid %d, all 0x85 %d\n",
           entries, exits, pids, good);
    printf("ptrace: traced child exited %d status %d\n", WIFEXITED(st), WEXITSTATUS(st));
}

/* Runs tracee c to the entry of its next system call `nr`. */
static void to_entry(pid_t c, long nr) {
    for (int i = 0; i < 100; i++) {
        int st;
        struct user_regs_struct r;
        if (pt(PTRACE_SYSCALL, c, 0, 0) != 0 || waitpid(c, &st, 0) != c || !WIFSTOPPED(st))
            break;
        if (pt(PTRACE_GETREGS, c, 0, (long)&r) == 0 && (long)r.orig_rax == nr &&
            (long)r.rax == -ENOSYS)
            return;
    }
    CHECK(0, "no entry of call %ld", nr);
}

static void result_body(void) {
    long r = syscall(SYS_getppid);
    errno = 0;
    long s = syscall(SYS_getppid);
    printf("ptrace: child's getppid gave %ld, the skipped one %ld errno %d\n", r, s, errno);
    _exit(0);
}

static void change_result(void) {
    pid_t c = traced_child(result_body);
    int st;
    struct user_regs_struct r;
    /* getppid's entry (raise's own calls come first), then its exit:
     * rax changed. */
    to_entry(c, SYS_getppid);
    pt(PTRACE_SYSCALL, c, 0, 0);
    waitpid(c, &st, 0);
    CHECK(pt(PTRACE_GETREGS, c, 0, (long)&r) == 0, "GETREGS");
    CHECK(r.orig_rax == SYS_getppid && (long)r.rax == getpid(), "exit regs %lld %lld",
          (long long)r.orig_rax, (long long)r.rax);
    r.rax = 4242;
    CHECK(pt(PTRACE_SETREGS, c, 0, (long)&r) == 0, "SETREGS");
    /* The next getppid's entry: skipped (orig_rax -1). */
    to_entry(c, SYS_getppid);
    CHECK(pt(PTRACE_POKEUSER, c, offsetof(struct user_regs_struct, orig_rax), -1) == 0,
          "POKEUSER orig_rax");
    pt(PTRACE_SYSCALL, c, 0, 0);
    waitpid(c, &st, 0);
    CHECK(pt(PTRACE_CONT, c, 0, 0) == 0, "CONT");
    CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st), "exit");
}

static void value_body(void) { _exit(value == 0x55 ? 0 : 1); }

static void memory(void) {
    pid_t c = traced_child(value_body);
    long w = 0;
    CHECK(pt(PTRACE_PEEKDATA, c, (long)&value, (long)&w) == 0, "PEEKDATA");
    printf("ptrace: PEEKDATA %#lx\n", w);
    CHECK(pt(PTRACE_POKEDATA, c, (long)&value, 0x55) == 0, "POKEDATA");
    CHECK(pt(PTRACE_PEEKTEXT, c, (long)&value, (long)&w) == 0, "PEEKTEXT");
    printf("ptrace: after POKEDATA %#lx, ours still %#lx\n", w, value);
    REFUSED(pt(PTRACE_PEEKDATA, c, 0, (long)&w), EIO);
    REFUSED(pt(PTRACE_POKEDATA, c, -8, 1), EIO);
    REFUSED(pt(PTRACE_PEEKDATA, c, (long)&value, 0), EFAULT);
    REFUSED(pt(PTRACE_PEEKUSER, c, 1, (long)&w), EIO);
    REFUSED(pt(PTRACE_PEEKUSER, c, sizeof(struct user) + 8, (long)&w), EIO);
    REFUSED(pt(PTRACE_POKEUSER, c, -8, 0), EIO);
    REFUSED(pt(PTRACE_GETREGS, c, 0, 0), EFAULT);
    REFUSED(pt(PTRACE_SETREGS, c, 0, 8), EFAULT);
    REFUSED(pt(PTRACE_GETSIGINFO, c, 0, 1), EFAULT);
    REFUSED(pt(PTRACE_SETOPTIONS, c, 0, 0x8000000), EINVAL);
    REFUSED(pt(PTRACE_CONT, c, 0, 65), EIO);
    REFUSED(pt(12345, c, 0, 0), EIO);
    struct user_regs_struct r;
    CHECK(pt(PTRACE_GETREGS, c, 0, (long)&r) == 0, "GETREGS");
    CHECK(pt(PTRACE_PEEKUSER, c, offsetof(struct user_regs_struct, rip), (long)&w) == 0 &&
              w == (long)r.rip,
          "PEEKUSER rip %#lx %#llx", w, (unsigned long long)r.rip);
    struct user_regs_struct bad = r;
    bad.cs = 0x10;
    REFUSED(pt(PTRACE_SETREGS, c, 0, (long)&bad), EIO);
    long dr0 = offsetof(struct user, u_debugreg[0]);
    CHECK(pt(PTRACE_POKEUSER, c, dr0, 0x1000) == 0, "POKEUSER dr0");
    CHECK(pt(PTRACE_PEEKUSER, c, dr0, (long)&w) == 0, "PEEKUSER dr0");
    printf("ptrace: u_debugreg[0] %#lx\n", w);
    REFUSED(pt(PTRACE_POKEUSER, c, offsetof(struct user, u_debugreg[4]), 1), EIO);
    CHECK(pt(PTRACE_CONT, c, 0, 0) == 0, "CONT");
    int st;
    CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st), "exit");
    printf("ptrace: the child saw the poked word: exit %d\n", WEXITSTATUS(st));
}

static void spin_body(void) {
    for (;;)
        pause();
}

static void kill_and_errnos(void) {
    pid_t c = traced_child(spin_body);
    CHECK(pt(PTRACE_KILL, c, 0, 0) == 0, "KILL");
    int st;
    CHECK(waitpid(c, &st, 0) == c, "wait");
    printf("ptrace: PTRACE_KILL: signalled %d by %d\n", WIFSIGNALED(st), WTERMSIG(st));

    REFUSED(ptrace(PTRACE_ATTACH, getpid(), 0, 0), EPERM);
    REFUSED(ptrace(PTRACE_ATTACH, 1, 0, 0), EPERM);
    REFUSED(ptrace(PTRACE_ATTACH, 30000, 0, 0), ESRCH);
    REFUSED(ptrace(PTRACE_ATTACH, -1, 0, 0), ESRCH);
    REFUSED(ptrace(PTRACE_SEIZE, 30000, 0, 0), ESRCH);
    pid_t p = fork();
    if (p == 0)
        spin_body();
    /* Not traced by us: ESRCH. */
    REFUSED(ptrace(PTRACE_CONT, p, 0, 0), ESRCH);
    REFUSED(ptrace(PTRACE_SEIZE, p, 8, 0), EIO);
    REFUSED(ptrace(PTRACE_SEIZE, p, 0, 0x40000000), EIO);
    /* Another user's: EPERM. */
    pid_t u = fork();
    if (u == 0) {
        if (setuid(65534) != 0)
            _exit(2);
        errno = 0;
        long r = ptrace(PTRACE_ATTACH, p, 0, 0);
        _exit(r == -1 && errno == EPERM ? 0 : 1);
    }
    CHECK(waitpid(u, &st, 0) == u && WIFEXITED(st) && WEXITSTATUS(st) == 0, "nobody %#x", st);
    CHECK(ptrace(PTRACE_ATTACH, p, 0, 0) == 0, "ATTACH");
    CHECK(waitpid(p, &st, 0) == p && WIFSTOPPED(st), "attach stop %#x", st);
    printf("ptrace: ATTACH stop sig %d, TracerPid is us %d\n", WSTOPSIG(st),
           tracer_pid_of(p) == getpid());
    /* Already traced: a second attach is EPERM; a running tracee ESRCH. */
    REFUSED(ptrace(PTRACE_ATTACH, p, 0, 0), EPERM);
    CHECK(ptrace(PTRACE_CONT, p, 0, 0) == 0, "CONT");
    REFUSED(pt(PTRACE_GETREGS, p, 0, (long)&st), ESRCH);
    kill(p, SIGUSR2);
    CHECK(waitpid(p, &st, 0) == p && WIFSTOPPED(st), "usr2 stop %#x", st);
    printf("ptrace: running tracee's SIGUSR2 stop sig %d\n", WSTOPSIG(st));
    CHECK(ptrace(PTRACE_DETACH, p, 0, 0) == 0, "DETACH");
    printf("ptrace: after DETACH TracerPid %d\n", tracer_pid_of(p));
    kill(p, SIGKILL);
    waitpid(p, &st, 0);
}

static void tracer_ends(int exitkill) {
    pid_t c = fork();
    if (c == 0)
        spin_body();
    pid_t t = fork();
    if (t == 0) {
        int st;
        if (exitkill) {
            if (ptrace(PTRACE_SEIZE, c, 0, PTRACE_O_EXITKILL) != 0)
                _exit(1);
        } else {
            if (ptrace(PTRACE_ATTACH, c, 0, 0) != 0 || waitpid(c, &st, 0) != c)
                _exit(1);
        }
        _exit(0);
    }
    int st;
    CHECK(waitpid(t, &st, 0) == t && WIFEXITED(st) && WEXITSTATUS(st) == 0, "tracer %#x", st);
    int tracer = tracer_pid_of(c);
    if (!exitkill)
        kill(c, SIGTERM);
    CHECK(waitpid(c, &st, 0) == c, "wait");
    printf("ptrace: tracer gone%s: TracerPid %d, child signalled by %d\n",
           exitkill ? " with EXITKILL" : "", tracer, WTERMSIG(st));
}

static void int3_body(void) {
    __asm__ volatile("int3");
    _exit(5);
}

/* An int3 is SIGTRAP: a stop the tracer may drop, the child going on. */
static void breakpoint(void) {
    pid_t c = traced_child(int3_body);
    int st;
    pt(PTRACE_CONT, c, 0, 0);
    CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st), "int3 stop %#x", st);
    printf("ptrace: int3 stop sig %d\n", WSTOPSIG(st));
    pt(PTRACE_CONT, c, 0, 0);
    CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st), "exit %#x", st);
    printf("ptrace: after the dropped SIGTRAP: exit %d\n", WEXITSTATUS(st));
}

static void exec_stop(void) {
    pid_t c = fork();
    if (c == 0) {
        ptrace(PTRACE_TRACEME, 0, 0, 0);
        raise(SIGSTOP);
        execl(SELF_PATH, "ptrace", "exec-child", (char *)0);
        _exit(99);
    }
    int st;
    waitpid(c, &st, 0);
    CHECK(pt(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACEEXEC) == 0, "SETOPTIONS");
    pt(PTRACE_CONT, c, 0, 0);
    CHECK(waitpid(c, &st, 0) == c && WIFSTOPPED(st), "exec stop %#x", st);
    long msg = 0;
    CHECK(pt(PTRACE_GETEVENTMSG, c, 0, (long)&msg) == 0, "GETEVENTMSG");
    printf("ptrace: execve stop sig %d event %d, message is its pid %d\n", WSTOPSIG(st),
           st >> 16, msg == c);
    pt(PTRACE_CONT, c, 0, 0);
    CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st), "exit %#x", st);
    printf("ptrace: the new program exited %d\n", WEXITSTATUS(st));
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "exec-child") == 0) {
        printf("ptrace: exec child runs\n");
        return 7;
    }
    setvbuf(stdout, 0, _IONBF, 0);
    signal_stops();
    syscall_stops();
    change_result();
    memory();
    kill_and_errnos();
    tracer_ends(0);
    tracer_ends(1);
    exec_stop();
    breakpoint();
    if (failures == 0)
        printf("ptrace: all ok\n");
    return failures != 0;
}
