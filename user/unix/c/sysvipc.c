/* System V IPC as Linux documents it (man 2 shmget shmat shmctl semget
 * semop semtimedop semctl msgget msgsnd msgrcv msgctl): segments shared
 * by processes and across fork, dropped at exec; semaphores between
 * processes (a ping-pong, a blocked semop woken by another, SEM_UNDO at
 * exit, EIDRM, EINTR, a timeout); messages chosen by type; permissions
 * for a user who is not root; each bad argument's errno. Run as pid 1
 * (root); prints one line per part and "sysvipc: all ok" at the end. With
 * "--after-exec ID" it prints segment ID's attach count (the exec test). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Not in musl's headers (the kernel's uapi). */
#ifndef MSG_COPY
#define MSG_COPY 040000
#endif
#ifndef MSG_EXCEPT
#define MSG_EXCEPT 020000
#endif

union semun {
    int val;
    struct semid_ds *buf;
    unsigned short *array;
    struct seminfo *__buf;
};

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("sysvipc: FAILED line %d: ", __LINE__);                                         \
            printf(__VA_ARGS__);                                                                   \
            printf(" (errno %d)\n", errno);                                                        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* The call fails with exactly `e`. */
#define REFUSED(call, e)                                                                           \
    do {                                                                                           \
        errno = 0;                                                                                 \
        long r_ = (long)(call);                                                                    \
        CHECK(r_ == -1 && errno == (e), "%s gave %ld, want errno %d", #call, r_, (e));             \
    } while (0)

/* fork, the child counting its own failures. */
static pid_t spawn(void) {
    fflush(stdout);
    pid_t c = fork();
    if (c == 0)
        failures = 0;
    return c;
}

static int run(void (*fn)(void)) {
    pid_t c = spawn();
    if (c == 0) {
        fn();
        fflush(stdout);
        _exit(failures ? 1 : 0);
    }
    int st = -1;
    waitpid(c, &st, 0);
    return st;
}

static void nap_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

static long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits until process `pid` has a call parked in unixd (/proc's "S"). */
static int wait_parked(pid_t pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    for (int i = 0; i < 400; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            fclose(f);
            buf[n] = 0;
            char *s = strstr(buf, "State:\t");
            if (s && s[7] == 'S')
                return 1;
        }
        nap_ms(5);
    }
    return 0;
}

/* Waits until `n` operations wait on semaphore `num` (GETNCNT). */
static int wait_ncnt(int id, int num, int n) {
    for (int i = 0; i < 400; i++) {
        if (semctl(id, num, GETNCNT) == n)
            return 1;
        nap_ms(5);
    }
    return 0;
}

static int sem1(int id, int num, int op, int flg) {
    struct sembuf b = {num, op, flg};
    return semop(id, &b, 1);
}

static void become(uid_t u) {
    CHECK(setgroups(0, NULL) == 0, "setgroups(0)");
    CHECK(setgid(u) == 0, "setgid(%d)", u);
    CHECK(setuid(u) == 0, "setuid(%d)", u);
}

struct msg {
    long mtype;
    char mtext[8192];
};

static struct msg m;

static int msend(int q, long type, const char *s, int flg) {
    m.mtype = type;
    size_t n = strlen(s);
    memcpy(m.mtext, s, n);
    return msgsnd(q, &m, n, flg);
}

/* Receives into `m` → its text, NUL-terminated, in `out`. */
static long mrecv(int q, long type, int flg, char *out) {
    memset(&m, 0, sizeof m);
    long n = msgrcv(q, &m, sizeof m.mtext, type, flg);
    if (n >= 0 && out) {
        memcpy(out, m.mtext, n);
        out[n] = 0;
    }
    return n;
}

static void limits(void) {
    struct shminfo si;
    struct seminfo se;
    struct msginfo mi;
    CHECK(shmctl(0, IPC_INFO, (struct shmid_ds *)&si) >= 0, "shm IPC_INFO");
    CHECK(semctl(0, 0, IPC_INFO, (union semun){.__buf = &se}) >= 0, "sem IPC_INFO");
    CHECK(msgctl(0, IPC_INFO, (struct msqid_ds *)&mi) >= 0, "msg IPC_INFO");
    printf("sysvipc: limits shmmax %lu shmmni %lu semmsl %d semopm %d semvmx %d msgmax %d "
           "msgmnb %d\n",
           si.shmmax, si.shmmni, se.semmsl, se.semopm, se.semvmx, mi.msgmax, mi.msgmnb);
}

static void bad_arguments(void) {
    struct shmid_ds ds;
    REFUSED(shmget(IPC_PRIVATE, 0, 0600), EINVAL);
    REFUSED(shmget(IPC_PRIVATE, (size_t)-1, 0600), EINVAL);
    REFUSED(shmget(0x53560000, 4096, 0600), ENOENT);
    /* Past the memory there is (here: the file space). */
    REFUSED(shmget(IPC_PRIVATE, 1UL << 40, 0600), ENOMEM);
    int id = shmget(IPC_PRIVATE, 4096, 0600);
    CHECK(id >= 0, "shmget");
    REFUSED(shmctl(-1, IPC_STAT, &ds), EINVAL);
    REFUSED(shmctl(id, 999, &ds), EINVAL);
    REFUSED(shmctl(id, IPC_STAT | 0x100, &ds), EINVAL);
    REFUSED(shmctl(id, IPC_STAT, (struct shmid_ds *)8), EFAULT);
    REFUSED(shmctl(id + 1, IPC_STAT, &ds), EINVAL);
    REFUSED((long)shmat(-1, 0, 0), EINVAL);
    REFUSED((long)shmat(id, (void *)0x12345, 0), EINVAL);
    REFUSED((long)shmat(id, 0, SHM_REMAP), EINVAL);
    REFUSED(shmdt((void *)0x10000), EINVAL);
    REFUSED(shmdt((void *)0x10001), EINVAL);
    CHECK(shmctl(id, IPC_RMID, 0) == 0, "rmid");
    REFUSED((long)shmat(id, 0, 0), EINVAL);

    REFUSED(semget(IPC_PRIVATE, -1, 0600), EINVAL);
    REFUSED(semget(IPC_PRIVATE, 0, 0600), EINVAL);
    REFUSED(semget(IPC_PRIVATE, 32001, 0600), EINVAL);
    int s = semget(IPC_PRIVATE, 2, 0600);
    CHECK(s >= 0, "semget");
    struct sembuf ops[501] = {{0, 0, 0}};
    REFUSED(semop(s, ops, 0), EINVAL);
    REFUSED(semop(s, ops, 501), E2BIG);
    REFUSED(semop(-1, ops, 1), EINVAL);
    REFUSED(semop(s, NULL, 1), EFAULT);
    struct sembuf far = {5, 1, 0};
    REFUSED(semop(s, &far, 1), EFBIG);
    struct sembuf over = {0, 32767, 0};
    CHECK(semop(s, &over, 1) == 0, "semop to SEMVMX");
    REFUSED(semop(s, &over, 1), ERANGE);
    struct timespec bad = {0, 2000000000};
    REFUSED(semtimedop(s, &far, 1, &bad), EINVAL);
    REFUSED(semctl(s, 0, SETVAL, (union semun){.val = 40000}), ERANGE);
    REFUSED(semctl(s, 0, SETVAL, (union semun){.val = -1}), ERANGE);
    REFUSED(semctl(s, 7, GETVAL), EINVAL);
    REFUSED(semctl(s, 0, 99), EINVAL);
    REFUSED(semctl(s, 0, GETALL, (union semun){.array = (unsigned short *)8}), EFAULT);
    CHECK(semctl(s, 0, IPC_RMID) == 0, "sem rmid");
    REFUSED(semctl(s, 0, GETVAL), EINVAL);

    int q = msgget(0x53560001, IPC_CREAT | 0600);
    CHECK(q >= 0, "msgget");
    REFUSED(msgget(0x53560001, IPC_CREAT | IPC_EXCL | 0600), EEXIST);
    CHECK(msgget(0x53560001, 0) == q, "msgget finds the key");
    REFUSED(msend(q, 0, "x", 0), EINVAL);
    REFUSED(msgsnd(q, &m, 8193, 0), EINVAL);
    REFUSED(msgsnd(q, (void *)8, 1, 0), EFAULT);
    REFUSED(msgrcv(q, &m, 10, 0, IPC_NOWAIT), ENOMSG);
    REFUSED(msgrcv(q, &m, -1, 0, IPC_NOWAIT), EINVAL);
    REFUSED(msgrcv(q, &m, 10, 0, MSG_COPY), EINVAL);
    REFUSED(msgctl(q, 99, 0), EINVAL);
    CHECK(msgctl(q, IPC_RMID, 0) == 0, "msg rmid");
    REFUSED(msend(q, 1, "x", 0), EINVAL);
    printf("sysvipc: bad arguments checked\n");
}

/* The shared segment of the shm tests (key 0x53560002). */
static int seg;
static char *p;

static void shm_child(void) {
    struct shmid_ds ds;
    shmctl(seg, IPC_STAT, &ds);
    unsigned long n1 = ds.shm_nattch;
    char *q = shmat(seg, 0, 0);
    CHECK(q != (void *)-1, "child shmat");
    shmctl(seg, IPC_STAT, &ds);
    unsigned long n2 = ds.shm_nattch;
    q[100] = 'B';
    p[200] = 'C';
    CHECK(shmdt(q) == 0, "child shmdt");
    shmctl(seg, IPC_STAT, &ds);
    printf("sysvipc: child saw %c, nattch %lu then %lu then %lu\n", p[0], n1, n2,
           ds.shm_nattch);
}

/* Not forked from an attached process: finds the segment by its key. */
static void stranger(void) {
    CHECK(shmdt(p) == 0, "stranger drops the inherited attach");
    int id = shmget(0x53560002, 0, 0600);
    char *want = (char *)0x900000000UL;
    char *q = shmat(id, want + 123, SHM_RND);
    REFUSED((long)shmat(id, want, 0), EINVAL);
    char *r = shmat(id, want, SHM_REMAP);
    q[300] = 42;
    printf("sysvipc: stranger attached at %p wrote %d; remap at %p\n", q, r[300], r);
    /* Split in three by mprotect, detached whole. */
    CHECK(mprotect(r + 4096, 4096, PROT_READ) == 0, "split the attach");
    struct shmid_ds ds;
    CHECK(shmdt(r) == 0, "stranger shmdt");
    shmctl(id, IPC_STAT, &ds);
    int gone = 1;
    for (int i = 0; i < 3; i++)
        gone &= msync(r + 4096 * i, 4096, MS_ASYNC) == -1 && errno == ENOMEM;
    /* (Before the shmdt, Linux counts each piece as an attach.) */
    printf("sysvipc: split attach detached whole %d, nattch then %lu\n", gone, ds.shm_nattch);
}

static void writer(void) {
    p[0] = 1;
    _exit(0);
}

static void read_only(void) {
    CHECK(shmdt(p) == 0, "drop rw attach");
    char *q = shmat(seg, 0, SHM_RDONLY);
    CHECK(q != (void *)-1, "SHM_RDONLY attach");
    p = q;
    REFUSED(mprotect(q, 4096, PROT_READ | PROT_WRITE), EACCES);
    /* The same for a file opened read-only and mapped shared; a private
     * mapping of it may be written. */
    int fd = open("/etc/passwd", O_RDONLY);
    char *f = mmap(0, 4096, PROT_READ, MAP_SHARED, fd, 0);
    REFUSED(mprotect(f, 4096, PROT_READ | PROT_WRITE), EACCES);
    char *g = mmap(0, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    CHECK(mprotect(g, 4096, PROT_READ | PROT_WRITE) == 0, "mprotect of a private mapping");
    close(fd);
    int st = run(writer);
    printf("sysvipc: read-only attach: read %d, write %s %d\n", q[300],
           WIFSIGNALED(st) ? "killed by signal" : "exited", WIFSIGNALED(st) ? WTERMSIG(st) : st);
}

static void exec_child(void) {
    CHECK(shmat(seg, 0, 0) != (void *)-1, "attach before exec");
    char arg[16];
    snprintf(arg, sizeof arg, "%d", seg);
    fflush(stdout);
    execl("/bin/sysvipc", "sysvipc", "--after-exec", arg, (char *)NULL);
    CHECK(0, "exec");
}

static void shared_memory(void) {
    struct shmid_ds ds;
    seg = shmget(0x53560002, 10000, IPC_CREAT | 0600);
    CHECK(seg >= 0, "shmget key");
    CHECK(shmget(0x53560002, 0, 0) == seg, "found by key");
    REFUSED(shmget(0x53560002, 10001, 0), EINVAL);
    p = shmat(seg, 0, 0);
    CHECK(p != (void *)-1, "shmat");
    p[0] = 'A';
    p[9999] = 'Z';
    shmctl(seg, IPC_STAT, &ds);
    printf("sysvipc: segment size %zu nattch %lu cpid self %d lpid self %d mode %o\n",
           ds.shm_segsz, ds.shm_nattch, ds.shm_cpid == getpid(), ds.shm_lpid == getpid(),
           ds.shm_perm.mode);
    /* Past the segment's last page: SIGBUS (its page is whole). */
    pid_t c = spawn();
    if (c == 0) {
        pid_t cc = spawn();
        if (cc == 0) {
            volatile char *x = p + 12288;
            *x = 1;
            _exit(0);
        }
        int st;
        waitpid(cc, &st, 0);
        printf("sysvipc: in the last page %c, past it signal %d\n", p[12287] == 0 ? 'y' : 'n',
               WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        _exit(0);
    }
    waitpid(c, NULL, 0);
    c = spawn();
    if (c == 0) {
        shm_child();
        fflush(stdout);
        _exit(failures ? 1 : 0);
    }
    int st;
    waitpid(c, &st, 0);
    CHECK(st == 0, "shm child status %d", st);
    shmctl(seg, IPC_STAT, &ds);
    printf("sysvipc: parent sees %c %c, nattch %lu, lpid is child %d\n", p[100], p[200],
           ds.shm_nattch, ds.shm_lpid == c);
    CHECK(run(stranger) == 0, "stranger");
    CHECK(run(read_only) == 0, "read-only");
    CHECK(run(exec_child) == 0, "exec child");
    /* Lock and unlock, by index too. */
    CHECK(shmctl(seg, SHM_LOCK, 0) == 0, "SHM_LOCK");
    shmctl(seg, IPC_STAT, &ds);
    unsigned locked = ds.shm_perm.mode;
    CHECK(shmctl(seg, SHM_UNLOCK, 0) == 0, "SHM_UNLOCK");
    struct shm_info info;
    int max = shmctl(0, SHM_INFO, (struct shmid_ds *)&info);
    int found = 0;
    for (int i = 0; i <= max; i++)
        if (shmctl(i, SHM_STAT, &ds) == seg)
            found = ds.shm_segsz == 10000;
    printf("sysvipc: lock mode %o, unlock mode %o, SHM_STAT finds it %d, used %d\n", locked,
           ds.shm_perm.mode, found, info.used_ids);
    /* Removed while attached: marked, keyless, still usable; gone with
     * the last detach. */
    CHECK(shmctl(seg, IPC_RMID, 0) == 0, "rmid attached");
    shmctl(seg, IPC_STAT, &ds);
    printf("sysvipc: removed while attached: mode %o key %d, by key %d\n", ds.shm_perm.mode,
           ds.shm_perm.__key, shmget(0x53560002, 0, 0) == -1 && errno == ENOENT);
    p[5] = 'x';
    CHECK(shmdt(p) == 0, "last shmdt");
    REFUSED(shmctl(seg, IPC_STAT, &ds), EINVAL);
}

static void after_exec(int id) {
    struct shmid_ds ds;
    CHECK(shmctl(id, IPC_STAT, &ds) == 0, "stat after exec");
    printf("sysvipc: after exec nattch %lu\n", ds.shm_nattch);
    fflush(stdout);
    exit(failures ? 1 : 0);
}

/* Semaphores. */
static int sem;
static char *log_;

static void pong(void) {
    for (int i = 0; i < 5; i++) {
        CHECK(sem1(sem, 0, -1, 0) == 0, "pong wait");
        strcat(log_, "C");
        CHECK(sem1(sem, 1, 1, 0) == 0, "pong post");
    }
}

static void taker(void) {
    CHECK(sem1(sem, 0, -2, 0) == 0, "blocked taker");
}

static void zero_waiter(void) {
    CHECK(sem1(sem, 1, 0, 0) == 0, "wait for zero");
}

static void undoer(void) {
    CHECK(sem1(sem, 0, 3, SEM_UNDO) == 0, "undo +3");
    CHECK(sem1(sem, 1, -1, SEM_UNDO) == 0, "undo -1");
}

static void undo_then_wait(void) {
    CHECK(sem1(sem, 0, 5, SEM_UNDO) == 0, "undo +5");
    pause();
}

static void idrm_semop(void) {
    errno = 0;
    int r = sem1(sem, 0, -1, 0);
    _exit(r == -1 && errno == EIDRM ? 0 : 1);
}

static volatile int handled;
static void on_usr1(int s) {
    (void)s;
    handled = 1;
}

static void catch_usr1(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
}

static void intr_semop(void) {
    catch_usr1();
    errno = 0;
    int r = sem1(sem, 0, -1, 0);
    _exit(r == -1 && errno == EINTR && handled ? 0 : 1);
}

static void semaphores(void) {
    int shm = shmget(IPC_PRIVATE, 4096, 0600);
    log_ = shmat(shm, 0, 0);
    shmctl(shm, IPC_RMID, 0);
    sem = semget(0x53560003, 2, IPC_CREAT | 0600);
    CHECK(sem >= 0, "semget");
    /* Ping-pong: the parent posts 0, the child posts 1. */
    pid_t c = spawn();
    if (c == 0) {
        pong();
        _exit(failures ? 1 : 0);
    }
    for (int i = 0; i < 5; i++) {
        strcat(log_, "P");
        CHECK(sem1(sem, 0, 1, 0) == 0, "ping post");
        CHECK(sem1(sem, 1, -1, 0) == 0, "ping wait");
    }
    int st;
    waitpid(c, &st, 0);
    printf("sysvipc: ping-pong %s, child status %d\n", log_, st);

    /* A blocked semop woken by another process. */
    c = spawn();
    if (c == 0) {
        taker();
        _exit(failures ? 1 : 0);
    }
    int waited = wait_ncnt(sem, 0, 1);
    int ncnt = semctl(sem, 0, GETNCNT), zcnt = semctl(sem, 0, GETZCNT);
    CHECK(sem1(sem, 0, 1, 0) == 0, "post 1");
    nap_ms(20);
    int still = semctl(sem, 0, GETNCNT);
    CHECK(sem1(sem, 0, 1, 0) == 0, "post 2");
    waitpid(c, &st, 0);
    printf("sysvipc: blocked semop: waited %d ncnt %d zcnt %d, after one %d, woken status %d, "
           "value %d, pid is child %d\n",
           waited, ncnt, zcnt, still, st, semctl(sem, 0, GETVAL), semctl(sem, 0, GETPID) == c);

    /* Waiting for zero. */
    semctl(sem, 1, SETVAL, (union semun){.val = 2});
    c = spawn();
    if (c == 0) {
        zero_waiter();
        _exit(failures ? 1 : 0);
    }
    for (int i = 0; i < 400 && semctl(sem, 1, GETZCNT) != 1; i++)
        nap_ms(5);
    int z = semctl(sem, 1, GETZCNT);
    CHECK(sem1(sem, 1, -2, 0) == 0, "to zero");
    waitpid(c, &st, 0);
    printf("sysvipc: wait for zero: zcnt %d, woken status %d\n", z, st);

    /* SEM_UNDO at exit, and at a kill. */
    semctl(sem, 1, SETVAL, (union semun){.val = 1});
    c = run(undoer);
    int v0 = semctl(sem, 0, GETVAL), v1 = semctl(sem, 1, GETVAL);
    c = spawn();
    if (c == 0) {
        undo_then_wait();
        _exit(1);
    }
    wait_parked(c);
    int during = semctl(sem, 0, GETVAL);
    kill(c, SIGKILL);
    waitpid(c, &st, 0);
    printf("sysvipc: undo at exit: %d %d; during %d, after kill %d\n", v0, v1, during,
           semctl(sem, 0, GETVAL));

    /* A timeout. */
    long t0 = now_ms();
    struct timespec t = {0, 50000000};
    struct sembuf take = {0, -1, 0};
    errno = 0;
    int r = semtimedop(sem, &take, 1, &t);
    long dt = now_ms() - t0;
    printf("sysvipc: semtimedop timed out: %s, in time %d\n", r == -1 && errno == EAGAIN ? "EAGAIN" : "no",
           dt >= 50 && dt < 5000);
    REFUSED(sem1(sem, 0, -1, IPC_NOWAIT), EAGAIN);

    /* SETALL and GETALL of a set bigger than one message. */
    int big = semget(IPC_PRIVATE, 3000, 0600);
    static unsigned short vals[3000], back[3000];
    for (int i = 0; i < 3000; i++)
        vals[i] = i % 1000;
    CHECK(semctl(big, 0, SETALL, (union semun){.array = vals}) == 0, "SETALL");
    CHECK(semctl(big, 0, GETALL, (union semun){.array = back}) == 0, "GETALL");
    struct semid_ds sd;
    semctl(big, 0, IPC_STAT, (union semun){.buf = &sd});
    printf("sysvipc: setall/getall of %d: same %d, value 2999 is %d\n", (int)sd.sem_nsems,
           memcmp(vals, back, sizeof vals) == 0, semctl(big, 2999, GETVAL));
    struct seminfo si;
    semctl(0, 0, SEM_INFO, (union semun){.__buf = &si});
    printf("sysvipc: SEM_INFO sets %d semaphores %d\n", si.semusz, si.semaem);
    semctl(big, 0, IPC_RMID);

    /* Removed while waiting: EIDRM; a signal: EINTR, not restarted. */
    c = spawn();
    if (c == 0)
        idrm_semop();
    wait_ncnt(sem, 0, 1);
    semctl(sem, 0, IPC_RMID);
    int idrm;
    waitpid(c, &idrm, 0);
    sem = semget(IPC_PRIVATE, 1, 0600);
    c = spawn();
    if (c == 0)
        intr_semop();
    wait_ncnt(sem, 0, 1);
    kill(c, SIGUSR1);
    int intr;
    waitpid(c, &intr, 0);
    printf("sysvipc: semop removed: status %d; interrupted: status %d, ncnt %d\n", idrm, intr,
           semctl(sem, 0, GETNCNT));
    semctl(sem, 0, IPC_RMID);
    shmdt(log_);
}

/* Messages. */
static int q;

static void rcv7(void) {
    char t[64];
    long n = mrecv(q, 7, 0, t);
    printf("sysvipc: blocked msgrcv got %ld bytes of type %ld: %s\n", n, m.mtype, t);
}

static void full_sender(void) {
    CHECK(msend(q, 9, "8 bytes!", 0) == 0, "blocked sender");
}

static void idrm_msgrcv(void) {
    errno = 0;
    long r = msgrcv(q, &m, 10, 0, 0);
    _exit(r == -1 && errno == EIDRM ? 0 : 1);
}

static void intr_msgrcv(void) {
    catch_usr1();
    errno = 0;
    long r = msgrcv(q, &m, 10, 0, 0);
    _exit(r == -1 && errno == EINTR && handled ? 0 : 1);
}

static void messages(void) {
    q = msgget(0x53560004, IPC_CREAT | 0600);
    CHECK(q >= 0, "msgget");
    msend(q, 3, "three", 0);
    msend(q, 1, "one", 0);
    msend(q, 2, "two", 0);
    msend(q, 1, "uno", 0);
    msend(q, 5, "five", 0);
    struct msqid_ds ds;
    msgctl(q, IPC_STAT, &ds);
    printf("sysvipc: queue qnum %lu cbytes %lu qbytes %lu lspid self %d\n", ds.msg_qnum,
           ds.msg_cbytes, ds.msg_qbytes, ds.msg_lspid == getpid());
    char a[5][16];
    long ty[5];
    mrecv(q, 0, 0, a[0]);
    ty[0] = m.mtype;
    mrecv(q, 1, 0, a[1]);
    ty[1] = m.mtype;
    mrecv(q, 1, MSG_EXCEPT, a[2]);
    ty[2] = m.mtype;
    mrecv(q, -3, 0, a[3]);
    ty[3] = m.mtype;
    /* A copy by index leaves it there. */
    long cn = msgrcv(q, &m, 100, 0, MSG_COPY | IPC_NOWAIT);
    mrecv(q, 0, 0, a[4]);
    ty[4] = m.mtype;
    msgctl(q, IPC_STAT, &ds);
    printf("sysvipc: received %ld %s, %ld %s, %ld %s, %ld %s, %ld %s; copy %ld; qnum %lu cbytes %lu\n",
           ty[0], a[0], ty[1], a[1], ty[2], a[2], ty[3], a[3], ty[4], a[4], cn, ds.msg_qnum,
           ds.msg_cbytes);
    /* Too long: E2BIG and it stays; MSG_NOERROR cuts it. */
    msend(q, 4, "0123456789abcdef", 0);
    REFUSED(msgrcv(q, &m, 10, 0, IPC_NOWAIT), E2BIG);
    long cut = msgrcv(q, &m, 10, 0, IPC_NOWAIT | MSG_NOERROR);
    printf("sysvipc: E2BIG kept it; MSG_NOERROR gave %ld: %.10s\n", cut, m.mtext);
    /* A message of MSGMAX bytes. */
    static struct msg big, got;
    big.mtype = 8;
    for (int i = 0; i < 8192; i++)
        big.mtext[i] = (char)(i * 7 + i / 256);
    CHECK(msgsnd(q, &big, 8192, 0) == 0, "send 8192");
    long n = msgrcv(q, &got, 8192, 8, 0);
    printf("sysvipc: %ld-byte message, same %d\n", n, memcmp(big.mtext, got.mtext, 8192) == 0);
    /* A receiver waiting for type 7 gets it, not the 6 before it. */
    pid_t c = spawn();
    if (c == 0) {
        rcv7();
        fflush(stdout);
        _exit(0);
    }
    wait_parked(c);
    msend(q, 6, "six", 0);
    msend(q, 7, "seven", 0);
    int st;
    waitpid(c, &st, 0);
    char t6[16];
    long n6 = mrecv(q, 0, IPC_NOWAIT, t6);
    printf("sysvipc: left in the queue: %ld bytes of type %ld\n", n6, m.mtype);
    /* A full queue: EAGAIN, or a sender waits for room. */
    msgctl(q, IPC_STAT, &ds);
    ds.msg_qbytes = 16;
    CHECK(msgctl(q, IPC_SET, &ds) == 0, "IPC_SET qbytes");
    msend(q, 1, "sixteen bytes!!!", 0);
    REFUSED(msend(q, 1, "x", IPC_NOWAIT), EAGAIN);
    c = spawn();
    if (c == 0) {
        full_sender();
        _exit(failures ? 1 : 0);
    }
    int parked = wait_parked(c);
    msgctl(q, IPC_STAT, &ds);
    unsigned long qn = ds.msg_qnum;
    char t16[32], t8[32];
    mrecv(q, 0, 0, t16);
    waitpid(c, &st, 0);
    mrecv(q, 0, 0, t8);
    printf("sysvipc: full queue: sender parked %d, qnum %lu; then %s, %s (status %d)\n", parked,
           qn, t16, t8, st);
    /* Removed while waiting: EIDRM; a signal: EINTR. */
    c = spawn();
    if (c == 0)
        idrm_msgrcv();
    wait_parked(c);
    msgctl(q, IPC_RMID, 0);
    int idrm;
    waitpid(c, &idrm, 0);
    q = msgget(IPC_PRIVATE, 0600);
    c = spawn();
    if (c == 0)
        intr_msgrcv();
    wait_parked(c);
    kill(c, SIGUSR1);
    int intr;
    waitpid(c, &intr, 0);
    printf("sysvipc: msgrcv removed: status %d; interrupted: status %d\n", idrm, intr);
    msgctl(q, IPC_RMID, 0);
}

/* Root's objects the user tries. */
static int rs, rs644, rsem, rq, given;

static void as_user(void) {
    become(1000);
    struct shmid_ds ds;
    REFUSED(shmget(0x53560005, 0, 0600), EACCES);
    int id = shmget(0x53560005, 0, 0);
    CHECK(id == rs, "shmget with no mode asked");
    REFUSED((long)shmat(rs, 0, 0), EACCES);
    REFUSED((long)shmat(rs, 0, SHM_RDONLY), EACCES);
    REFUSED((long)shmat(rs644, 0, 0), EACCES);
    char *r = shmat(rs644, 0, SHM_RDONLY);
    CHECK(r != (void *)-1 && r[0] == 'R', "read-only attach of a 0644 segment");
    REFUSED(shmctl(rs, IPC_STAT, &ds), EACCES);
    CHECK(shmctl(rs644, IPC_STAT, &ds) == 0, "stat 0644");
    REFUSED(shmctl(rs644, IPC_SET, &ds), EPERM);
    REFUSED(shmctl(rs644, IPC_RMID, 0), EPERM);
    REFUSED(shmctl(rs644, SHM_LOCK, 0), EPERM);
    REFUSED(sem1(rsem, 0, 1, 0), EACCES);
    REFUSED(sem1(rsem, 0, 0, IPC_NOWAIT), EACCES);
    REFUSED(semctl(rsem, 0, GETVAL), EACCES);
    REFUSED(semctl(rsem, 0, SETVAL, (union semun){.val = 1}), EACCES);
    REFUSED(semctl(rsem, 0, IPC_RMID), EPERM);
    REFUSED(msend(rq, 1, "x", IPC_NOWAIT), EACCES);
    REFUSED(msgrcv(rq, &m, 10, 0, IPC_NOWAIT), EACCES);
    REFUSED(msgctl(rq, IPC_RMID, 0), EPERM);
    struct msqid_ds qd;
    memset(&qd, 0, sizeof qd);
    REFUSED(msgctl(rq, IPC_SET, &qd), EPERM);
    /* Its own queue: raising qbytes past MSGMNB is root's. */
    int mine = msgget(IPC_PRIVATE, 0600);
    msgctl(mine, IPC_STAT, &qd);
    qd.msg_qbytes = 20000;
    REFUSED(msgctl(mine, IPC_SET, &qd), EPERM);
    qd.msg_qbytes = 100;
    CHECK(msgctl(mine, IPC_SET, &qd) == 0, "lower qbytes");
    CHECK(msgctl(mine, IPC_RMID, 0) == 0, "remove own queue");
    /* A set root gave it: its owner's now. */
    CHECK(semctl(given, 0, SETVAL, (union semun){.val = 3}) == 0, "set of its own");
    CHECK(semctl(given, 0, IPC_RMID) == 0, "remove the set it was given");
    printf("sysvipc: user refusals checked\n");
}

/* A user may hold as many as the system-wide limits (MSGMNI): more than
 * the 128 it once was capped at. */
static void cap(void) {
    become(2000);
    static int ids[200];
    int n = 0;
    while (n < 200 && (ids[n] = msgget(IPC_PRIVATE, 0600)) >= 0)
        n++;
    for (int i = 0; i < n; i++)
        msgctl(ids[i], IPC_RMID, 0);
    printf("sysvipc: user made %d queues\n", n);
}

static void permissions(void) {
    rs = shmget(0x53560005, 4096, IPC_CREAT | 0600);
    rs644 = shmget(IPC_PRIVATE, 4096, 0644);
    char *w = shmat(rs644, 0, 0);
    w[0] = 'R';
    shmdt(w);
    rsem = semget(IPC_PRIVATE, 1, 0600);
    rq = msgget(IPC_PRIVATE, 0600);
    given = semget(IPC_PRIVATE, 1, 0600);
    struct semid_ds sd;
    semctl(given, 0, IPC_STAT, (union semun){.buf = &sd});
    sd.sem_perm.uid = 1000;
    sd.sem_perm.mode = 0600;
    CHECK(semctl(given, 0, IPC_SET, (union semun){.buf = &sd}) == 0, "give the set away");
    int st = run(as_user);
    printf("sysvipc: user child status %d\n", st);
    st = run(cap);
    printf("sysvipc: cap child status %d\n", st);
    shmctl(rs, IPC_RMID, 0);
    shmctl(rs644, IPC_RMID, 0);
    semctl(rsem, 0, IPC_RMID);
    msgctl(rq, IPC_RMID, 0);
    /* Nothing left. */
    struct shm_info si;
    struct seminfo se;
    struct msginfo mi;
    shmctl(0, SHM_INFO, (struct shmid_ds *)&si);
    semctl(0, 0, SEM_INFO, (union semun){.__buf = &se});
    msgctl(0, MSG_INFO, (struct msqid_ds *)&mi);
    printf("sysvipc: left: %d segments, %d sets, %d queues\n", si.used_ids, se.semusz,
           mi.msgpool);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--after-exec") == 0)
        after_exec(atoi(argv[2]));
    setvbuf(stdout, NULL, _IONBF, 0);
    limits();
    bad_arguments();
    shared_memory();
    semaphores();
    messages();
    permissions();
    if (failures == 0)
        printf("sysvipc: all ok\n");
    return failures ? 1 : 0;
}
