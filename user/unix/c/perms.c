/* Users and permissions as Linux enforces them: the id calls, chown,
 * chmod, the mode bits on every path operation, the sticky /tmp, kill
 * between users, set-user-ID executables and AT_SECURE, access() with real
 * ids, and the errno of each refusal. Run as pid 1 (root); prints one line
 * per check and "perms: all ok" at the end. With "--ids" it only prints its
 * ids (the set-user-ID program). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("perms: FAILED line %d: ", __LINE__);                                           \
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

static void write_file(const char *p, const char *s, mode_t m) {
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, m);
    CHECK(fd >= 0, "create %s", p);
    CHECK(write(fd, s, strlen(s)) == (ssize_t)strlen(s), "write %s", p);
    close(fd);
}

static void copy_file(const char *from, const char *to) {
    char buf[4096];
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    CHECK(in >= 0 && out >= 0, "copy %s to %s", from, to);
    ssize_t n;
    while ((n = read(in, buf, sizeof buf)) > 0)
        CHECK(write(out, buf, n) == n, "copy write");
    close(in);
    close(out);
}

static int run(void (*fn)(void)) {
    pid_t c = fork();
    if (c == 0) {
        fn();
        fflush(stdout);
        _exit(failures ? 1 : 0);
    }
    int st;
    waitpid(c, &st, 0);
    return st;
}

static void become(uid_t u, gid_t g) {
    CHECK(setgroups(0, NULL) == 0, "setgroups(0)");
    CHECK(setgid(g) == 0, "setgid(%d)", g);
    CHECK(setuid(u) == 0, "setuid(%d)", u);
}

/* User 1000 tries what Linux refuses it. */
static void as_user(void) {
    become(1000, 1000);
    uid_t r, e, s;
    getresuid(&r, &e, &s);
    gid_t gr, ge, gs;
    getresgid(&gr, &ge, &gs);
    printf("perms: user ids %d %d %d %d, groups %d %d %d, uid again %d\n", getuid(), r, e, s, gr,
           ge, gs, getuid());
    REFUSED(setuid(0), EPERM);
    REFUSED(setgid(0), EPERM);
    REFUSED(setgroups(0, NULL), EPERM);
    REFUSED(open("/tmp/secret", O_RDONLY), EACCES);
    REFUSED(open("/etc/passwd", O_WRONLY), EACCES);
    REFUSED(open("/etc/new", O_WRONLY | O_CREAT, 0644), EACCES);
    REFUSED(mkdir("/etc/dir", 0755), EACCES);
    REFUSED(mkdir("/etc", 0755), EEXIST);
    REFUSED(unlink("/etc/passwd"), EACCES);
    REFUSED(rename("/etc/passwd", "/tmp/p"), EACCES);
    REFUSED(chmod("/etc/passwd", 0777), EPERM);
    REFUSED(chown("/etc/passwd", 1000, 1000), EPERM);
    REFUSED(truncate("/etc/passwd", 0), EACCES);
    REFUSED(utimensat(AT_FDCWD, "/etc/passwd", NULL, 0), EACCES);
    struct timespec ts[2] = {{1, 0}, {2, 0}};
    REFUSED(utimensat(AT_FDCWD, "/etc/passwd", ts, 0), EPERM);
    REFUSED(open("/tmp/private/f", O_RDONLY), EACCES);
    REFUSED(access("/tmp/secret", R_OK), EACCES);
    CHECK(access("/etc/passwd", R_OK) == 0, "access R /etc/passwd");
    REFUSED(access("/etc/passwd", W_OK), EACCES);
    REFUSED(kill(1, 0), EPERM);
    REFUSED(kill(1, SIGKILL), EPERM);
    /* The sticky /tmp: root's file stays. */
    REFUSED(unlink("/tmp/rootfile"), EPERM);
    REFUSED(rename("/tmp/rootfile", "/tmp/mine2"), EPERM);
    /* Its own files: made with its ids, and its to change. */
    write_file("/tmp/mine", "mine", 0600);
    struct stat st;
    CHECK(stat("/tmp/mine", &st) == 0, "stat /tmp/mine");
    printf("perms: /tmp/mine owner %d group %d mode %o\n", st.st_uid, st.st_gid, st.st_mode & 07777);
    CHECK(chmod("/tmp/mine", 0640) == 0, "chmod own file");
    REFUSED(chown("/tmp/mine", 0, -1), EPERM);
    REFUSED(chown("/tmp/mine", -1, 0), EPERM);
    CHECK(chown("/tmp/mine", -1, 1000) == 0, "chgrp to its own group");
    CHECK(utimensat(AT_FDCWD, "/tmp/mine", ts, 0) == 0, "utimensat own file");
    printf("perms: user refusals checked\n");
}

/* The set-user-ID program run by user 1000. */
static void run_setuid(void) {
    become(1000, 1000);
    execl("/tmp/idprog", "idprog", "--ids", (char *)NULL);
    printf("perms: FAILED exec idprog (errno %d)\n", errno);
    _exit(1);
}

static void show_ids(void) {
    uid_t r, e, s;
    getresuid(&r, &e, &s);
    printf("perms: setuid program ids %d %d %d secure %lu\n", r, e, s, getauxval(AT_SECURE));
    /* Back to the real user, and to the saved one again. */
    CHECK(setuid(r) == 0, "setuid(real)");
    CHECK(geteuid() == r, "geteuid real");
    CHECK(setuid(s) == 0, "setuid(saved)");
    CHECK(geteuid() == s, "geteuid saved");
    REFUSED(setuid(0), EPERM);
    /* Its file-system id follows the effective one: it may read the
     * owner's 0600 file. */
    int fd = open("/tmp/ownerfile", O_RDONLY);
    CHECK(fd >= 0, "setuid program reads its owner's file");
    close(fd);
    /* setreuid swaps real and effective; the saved id follows. */
    CHECK(setreuid(s, r) == 0, "setreuid swap");
    getresuid(&r, &e, &s);
    printf("perms: after setreuid %d %d %d\n", r, e, s);
    /* setfsuid answers the old id, even when it refuses. */
    int old = setfsuid(4321);
    printf("perms: setfsuid answered %d\n", old);
    fflush(stdout);
    exit(failures ? 1 : 0);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--ids") == 0) {
        show_ids();
    }
    setvbuf(stdout, NULL, _IONBF, 0);
    uid_t r, e, s;
    getresuid(&r, &e, &s);
    printf("perms: root ids %d %d %d %d\n", getuid(), r, e, s);

    /* Groups. */
    gid_t g[3] = {100, 200, 300};
    CHECK(setgroups(3, g) == 0, "setgroups");
    gid_t got[40];
    int n = getgroups(40, got);
    printf("perms: getgroups %d: %d %d %d; size 0 says %d\n", n, got[0], got[1], got[2],
           getgroups(0, NULL));
    REFUSED(getgroups(2, got), EINVAL);
    gid_t many[33] = {0};
    REFUSED(setgroups(33, many), EINVAL);
    REFUSED(setgroups(-1, many), EINVAL);
    gid_t *volatile wild = (gid_t *)8;
    REFUSED(getgroups(40, wild), EFAULT);

    /* Files for the user to fail on. */
    write_file("/tmp/secret", "s3cret", 0600);
    write_file("/tmp/rootfile", "root", 0644);
    CHECK(mkdir("/tmp/private", 0700) == 0, "mkdir private");
    write_file("/tmp/private/f", "f", 0644);
    CHECK(chown("/tmp/secret", 1234, 1234) == 0, "chown");
    CHECK(chown("/tmp/secret", 0, 0) == 0, "chown back");
    REFUSED(chown("/tmp/nonesuch", 0, 0), ENOENT);
    REFUSED(fchown(99, 0, 0), EBADF);
    REFUSED(fchownat(AT_FDCWD, "/tmp/secret", 0, 0, 0x4000), EINVAL);
    struct stat st;
    CHECK(stat("/tmp/secret", &st) == 0, "stat");
    printf("perms: /tmp/secret owner %d group %d mode %o\n", st.st_uid, st.st_gid,
           st.st_mode & 07777);
    int st_user = run(as_user);
    printf("perms: user child status %d\n", st_user);

    /* A set-user-ID program of user 1234: a copy of this one. */
    copy_file("/proc/self/exe", "/tmp/idprog");
    CHECK(chown("/tmp/idprog", 1234, 1234) == 0, "chown idprog");
    CHECK(chmod("/tmp/idprog", 04755) == 0, "chmod idprog");
    write_file("/tmp/ownerfile", "o", 0600);
    CHECK(chown("/tmp/ownerfile", 1234, 1234) == 0, "chown ownerfile");
    CHECK(stat("/tmp/idprog", &st) == 0, "stat idprog");
    printf("perms: idprog mode %o\n", st.st_mode & 07777);
    int st_suid = run(run_setuid);
    printf("perms: setuid child status %d\n", st_suid);
    /* chown by anyone clears set-user-ID. */
    CHECK(chown("/tmp/idprog", 1234, 1234) == 0, "chown again");
    CHECK(stat("/tmp/idprog", &st) == 0, "stat idprog");
    printf("perms: after chown idprog mode %o\n", st.st_mode & 07777);

    /* Root may signal anyone; a child of user 1000 is killed. */
    pid_t c = fork();
    if (c == 0) {
        become(1000, 1000);
        pause();
        _exit(0);
    }
    usleep(100000);
    CHECK(kill(c, SIGTERM) == 0, "root kills a user's process");
    int ws;
    waitpid(c, &ws, 0);
    printf("perms: user child ended by signal %d\n", WIFSIGNALED(ws) ? WTERMSIG(ws) : -1);

    printf(failures ? "perms: %d failures\n" : "perms: all ok\n", failures);
    return failures != 0;
}
