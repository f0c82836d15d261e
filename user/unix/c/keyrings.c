/* The kernel key retention service as Linux (add_key(2), keyctl(2),
 * request_key(2), keyrings(7)): user and logon keys and keyrings, the
 * special keyrings made on demand, updates, revocation, expiry, links,
 * searches, permissions, ownership, quotas, the session keyring across
 * fork and the thread and process keyrings dropped at execve, and the
 * errors for bad arguments. Serial numbers vary, so the lines say how
 * they relate. Prints exact lines and "keyrings: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("keyrings: FAILED line %d: ", __LINE__);                                        \
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

#define THREAD -1
#define PROCESS -2
#define SESSION -3
#define USER -4
#define USER_SESSION -5

static long add_key(const char *t, const char *d, const void *p, size_t n, long ring) {
    return syscall(SYS_add_key, t, d, p, n, ring);
}
static long request_key(const char *t, const char *d, const char *c, long ring) {
    return syscall(SYS_request_key, t, d, c, ring);
}
static long keyctl(long op, long a, long b, long c, long d) {
    return syscall(SYS_keyctl, op, a, b, c, d);
}
static long id_of(long spec, int create) { return keyctl(0, spec, create, 0, 0); }

static char big[32768];

/* After execve (argv[1] "exec"): the thread and process keyrings are
 * gone, the session keyring is the same one. */
static int after_exec(long session) {
    errno = 0;
    long p = id_of(PROCESS, 0);
    int gone = p == -1 && errno == ENOKEY;
    errno = 0;
    long t = id_of(THREAD, 0);
    gone = gone && t == -1 && errno == ENOKEY;
    printf("keyrings: after execve process and thread keyrings gone %d, same session %d\n", gone,
           id_of(SESSION, 0) == session);
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc == 3 && strcmp(argv[1], "exec") == 0)
        return after_exec(atol(argv[2]));
    char buf[256];

    /* A user key: added, read, described, updated. */
    long k = add_key("user", "k1", "hello", 5, THREAD);
    CHECK(k > 2, "add_key user %ld", k);
    memset(buf, 0, sizeof buf);
    long n = keyctl(11, k, (long)buf, sizeof buf, 0);
    printf("keyrings: read %ld bytes '%s'\n", n, buf);
    n = keyctl(6, k, (long)buf, sizeof buf, 0);
    printf("keyrings: describe %ld '%s'\n", n, buf);
    long k2 = add_key("user", "k1", "bye", 3, THREAD);
    memset(buf, 0, sizeof buf);
    keyctl(11, k, (long)buf, sizeof buf, 0);
    printf("keyrings: same description updates the same key %d: '%s'\n", k2 == k, buf);
    CHECK(keyctl(2, k, (long)"again", 5, 0) == 0, "update");
    memset(buf, 0, sizeof buf);
    n = keyctl(11, k, (long)buf, 2, 0);
    printf("keyrings: short buffer: %ld, untouched %d\n", n, buf[0] == 0);
    n = keyctl(11, k, (long)buf, sizeof buf, 0);
    printf("keyrings: after update %ld '%s'\n", n, buf);
    REFUSED(keyctl(11, k, 1, 100, 0), EFAULT);

    /* /proc/keys shows it; /proc/key-users counts root's keys. */
    char want[16], line[256], shown[256] = "";
    snprintf(want, sizeof want, "%08lx ", k);
    FILE *pf = fopen("/proc/keys", "r");
    CHECK(pf != NULL, "/proc/keys");
    while (pf && fgets(line, sizeof line, pf))
        if (strncmp(line, want, 9) == 0) {
            line[strcspn(line, "\n")] = 0;
            strcpy(shown, line + 9);
        }
    if (pf)
        fclose(pf);
    printf("keyrings: /proc/keys '%s'\n", shown);
    FILE *ku = fopen("/proc/key-users", "r");
    int root_line = 0;
    while (ku && fgets(line, sizeof line, ku))
        root_line |= strncmp(line, "    0: ", 7) == 0;
    if (ku)
        fclose(ku);
    printf("keyrings: /proc/key-users has root %d\n", root_line);
    REFUSED(keyctl(2, k, (long)"x", 0, 0), EINVAL);
    REFUSED(keyctl(2, k, (long)big, 4097, 0), EINVAL);

    /* The thread keyring lists it; a keyring cannot be updated. */
    int32_t ids[8];
    n = keyctl(11, THREAD, (long)ids, sizeof ids, 0);
    printf("keyrings: thread keyring holds %ld bytes, the key %d\n", n, ids[0] == k);
    REFUSED(keyctl(2, THREAD, (long)"x", 1, 0), EOPNOTSUPP);

    /* Payload limits, a logon key. */
    memset(big, 'b', sizeof big);
    long bk = add_key("user", "big", big, 32767, PROCESS);
    CHECK(bk > 0, "32767 bytes");
    static char back[32768];
    n = keyctl(11, bk, (long)back, sizeof back, 0);
    printf("keyrings: 32767-byte payload read back %ld, same %d\n", n, memcmp(back, big, 32767) == 0);
    REFUSED(add_key("user", "big2", big, 32768, PROCESS), EINVAL);
    REFUSED(add_key("logon", "s:big2", big, 32768, PROCESS), EINVAL);
    long lg = add_key("logon", "svc:name", "secret", 6, PROCESS);
    CHECK(lg > 0, "logon");
    REFUSED(keyctl(11, lg, (long)buf, sizeof buf, 0), EOPNOTSUPP);
    n = keyctl(6, lg, (long)buf, sizeof buf, 0);
    printf("keyrings: logon key described '%s', unreadable\n", buf);

    /* Bad arguments, in Linux's order. */
    REFUSED(add_key(NULL, "d", "p", 1, THREAD), EFAULT);
    REFUSED(add_key("", "d", "p", 1, THREAD), EINVAL);
    REFUSED(add_key("abcdefghijklmnopqrstuvwxyz789012", "d", "p", 1, THREAD), EINVAL);
    REFUSED(add_key(".user", "d", "p", 1, THREAD), EPERM);
    REFUSED(add_key("user", (char *)1, "p", 1, THREAD), EFAULT);
    REFUSED(add_key("keyring", ".dot", NULL, 0, THREAD), EPERM);
    REFUSED(add_key("user", "d", "p", 1 << 20, THREAD), EINVAL);
    REFUSED(add_key("user", "d", NULL, 64, THREAD), EFAULT);
    REFUSED(add_key("asymmetric", "d", NULL, 64, THREAD), EFAULT);
    REFUSED(add_key("nosuch", "d", "p", 1, THREAD), ENODEV);
    REFUSED(add_key("big_key", "d", "p", 1, THREAD), ENODEV);
    REFUSED(add_key("user", "d", "p", 0, THREAD), EINVAL);
    REFUSED(add_key("user", NULL, "p", 1, THREAD), EINVAL);
    REFUSED(add_key("user", "", "p", 1, THREAD), EINVAL);
    REFUSED(add_key("keyring", "d", "p", 1, THREAD), EINVAL);
    REFUSED(add_key("logon", "nocolon", "p", 1, THREAD), EINVAL);
    REFUSED(add_key("user", "d", "p", 1, 0), EINVAL);
    REFUSED(add_key("user", "d", "p", 1, -6), EINVAL);
    REFUSED(add_key("user", "d", "p", 1, -7), ENOKEY);
    REFUSED(add_key("user", "d", "p", 1, 1), ENOKEY);
    REFUSED(add_key("user", "d", "p", 1, k), ENOTDIR);
    REFUSED(keyctl(11, INT32_MAX, (long)buf, sizeof buf, 0), ENOKEY);
    REFUSED(keyctl(3, INT32_MAX, 0, 0, 0), ENOKEY);
    REFUSED(keyctl(5, k, 0x40000000, 0, 0), EINVAL);
    REFUSED(keyctl(12, k, (long)"x", 1, 0), EPERM);
    REFUSED(keyctl(13, k, 10, 0, 0), EPERM);
    REFUSED(keyctl(16, -1, 0, 0, 0), EINVAL);
    CHECK(keyctl(16, 0, 0, 0, 0) == 0, "assume authority 0");
    REFUSED(keyctl(22, -1, THREAD, 0, 0), EOPNOTSUPP);
    REFUSED(keyctl(99, 0, 0, 0, 0), EOPNOTSUPP);
    REFUSED(id_of(-6, 1), EINVAL);
    printf("keyrings: bad arguments refused\n");

    /* Keyrings, links, searches, cycles. */
    long a = add_key("keyring", "ringA", NULL, 0, PROCESS);
    long b = add_key("keyring", "ringB", NULL, 0, a);
    CHECK(a > 0 && b > 0, "keyrings");
    CHECK(keyctl(8, k, a, 0, 0) == 0, "link");
    n = keyctl(11, a, (long)ids, sizeof ids, 0);
    printf("keyrings: ringA holds %ld bytes\n", n);
    REFUSED(keyctl(8, a, b, 0, 0), EDEADLK);
    REFUSED(keyctl(8, a, a, 0, 0), EDEADLK);
    REFUSED(keyctl(8, b, k, 0, 0), ENOTDIR);
    long found = keyctl(10, PROCESS, (long)"keyring", (long)"ringB", 0);
    printf("keyrings: search found ringB %d\n", found == b);
    found = keyctl(10, a, (long)"user", (long)"k1", b);
    n = keyctl(11, b, (long)ids, sizeof ids, 0);
    printf("keyrings: search found k1 %d and linked it into ringB: %ld bytes\n", found == k, n);
    REFUSED(keyctl(10, a, (long)"user", (long)"nosuch", 0), ENOKEY);
    REFUSED(keyctl(10, a, (long)"nosuchtype", (long)"k1", 0), ENOKEY);
    REFUSED(keyctl(10, a, (long)".user", (long)"k1", 0), EPERM);
    CHECK(keyctl(9, k, b, 0, 0) == 0, "unlink");
    REFUSED(keyctl(9, k, b, 0, 0), ENOENT);
    CHECK(keyctl(7, a, 0, 0, 0) == 0, "clear");
    n = keyctl(11, a, (long)ids, sizeof ids, 0);
    errno = 0;
    long gone = keyctl(6, b, (long)buf, sizeof buf, 0);
    printf("keyrings: cleared ringA holds %ld bytes; ringB gone with its last link %d\n", n,
           gone == -1 && errno == ENOKEY);

    /* request_key. */
    long rk = add_key("keyring", "ltp", NULL, 0, THREAD);
    printf("keyrings: request_key finds the keyring %d\n", request_key("keyring", "ltp", NULL, 0) == rk);
    REFUSED(request_key("keyring", "absent", NULL, 0), ENOKEY);
    REFUSED(request_key("user", "absent", "callout", 0), ENOKEY);
    /* Nothing constructs it: a negative key is left in the keyring it
     * would have gone to, and found as ENOKEY. */
    n = keyctl(11, THREAD, (long)ids, sizeof ids, 0);
    long neg = -1;
    for (int i = 0; i < n / 4 && i < 8; i++) {
        char d[64];
        if (keyctl(6, ids[i], (long)d, sizeof d, 0) > 0 && strcmp(d, "user;0;0;3f010000;absent") == 0)
            neg = ids[i];
    }
    printf("keyrings: the callout left a negative key %d\n", neg > 0);
    REFUSED(keyctl(11, neg, (long)buf, sizeof buf, 0), ENOKEY);
    REFUSED(request_key("user", "absent", NULL, 0), ENOKEY);
    REFUSED(keyctl(10, THREAD, (long)"user", (long)"absent", 0), ENOKEY);
    REFUSED(request_key("nosuchtype", "absent", NULL, 0), ENOKEY);
    REFUSED(request_key((char *)-1, "d", NULL, PROCESS), EFAULT);
    REFUSED(request_key("user", (char *)-1, NULL, PROCESS), EFAULT);
    REFUSED(request_key("user", "d", (char *)-1, PROCESS), EFAULT);
    REFUSED(request_key(".user", "d", NULL, PROCESS), EPERM);

    /* Revocation and expiry. */
    long rv = add_key("keyring", "revoked", NULL, 0, THREAD);
    CHECK(keyctl(3, rv, 0, 0, 0) == 0, "revoke");
    CHECK(keyctl(3, rv, 0, 0, 0) == 0, "revoke again");
    REFUSED(keyctl(11, rv, (long)buf, sizeof buf, 0), EKEYREVOKED);
    REFUSED(keyctl(6, rv, (long)buf, sizeof buf, 0), EKEYREVOKED);
    REFUSED(request_key("keyring", "revoked", NULL, 0), EKEYREVOKED);
    REFUSED(request_key("keyring", "x", NULL, rv), EKEYREVOKED);
    long ex = add_key("keyring", "expiring", NULL, 0, THREAD);
    CHECK(keyctl(15, ex, 1, 0, 0) == 0, "set_timeout");
    CHECK(keyctl(6, ex, (long)buf, sizeof buf, 0) > 0, "not yet expired");
    sleep(2);
    REFUSED(keyctl(6, ex, (long)buf, sizeof buf, 0), EKEYEXPIRED);
    REFUSED(request_key("keyring", "expiring", NULL, 0), EKEYEXPIRED);
    printf("keyrings: revoked and expired keys refused\n");

    /* Permissions and ownership. */
    long pk = add_key("user", "perm", "x", 1, THREAD);
    CHECK(keyctl(5, pk, 0x29000000, 0, 0) == 0, "setperm");
    n = keyctl(11, pk, (long)buf, sizeof buf, 0);
    printf("keyrings: possessed and searchable without read permission: read %ld\n", n);
    CHECK(keyctl(5, pk, 0x21000000, 0, 0) == 0, "setperm");
    REFUSED(keyctl(11, pk, (long)buf, sizeof buf, 0), EACCES);
    REFUSED(keyctl(6, pk, (long)buf, sizeof buf, 0), EACCES);
    long ck = add_key("user", "owned", "x", 1, THREAD);
    CHECK(keyctl(4, ck, 1000, 100, 0) == 0, "chown");
    n = keyctl(6, ck, (long)buf, sizeof buf, 0);
    printf("keyrings: chowned: '%s'\n", buf);
    n = keyctl(17, ck, (long)buf, sizeof buf, 0);
    printf("keyrings: security label length %ld, empty %d\n", n, buf[0] == 0);
    CHECK(keyctl(21, ck, 0, 0, 0) == 0, "invalidate");
    REFUSED(keyctl(6, ck, (long)buf, sizeof buf, 0), ENOKEY);

    /* The user keyrings. */
    long u = id_of(USER, 0), us = id_of(USER_SESSION, 0);
    CHECK(u > 0 && us > 0 && u != us, "user keyrings");
    keyctl(6, u, (long)buf, sizeof buf, 0);
    printf("keyrings: user keyring '%s'\n", buf);
    n = keyctl(11, us, (long)ids, sizeof ids, 0);
    printf("keyrings: user session keyring links the user keyring: %ld %d\n", n, ids[0] == u);

    /* The session keyring: joined, kept across fork and execve. */
    errno = 0;
    printf("keyrings: reqkey default %ld\n", keyctl(14, -1, 0, 0, 0));
    CHECK(keyctl(14, 3, 0, 0, 0) == 0, "set reqkey");
    printf("keyrings: reqkey now %ld\n", keyctl(14, -1, 0, 0, 0));
    REFUSED(keyctl(14, 6, 0, 0, 0), EINVAL);
    long ses = keyctl(1, 0, 0, 0, 0);
    CHECK(ses > 0 && id_of(SESSION, 0) == ses, "join anonymous");
    keyctl(6, ses, (long)buf, sizeof buf, 0);
    printf("keyrings: new session keyring '%s'\n", buf);
    REFUSED(keyctl(1, (long)".builtin_trusted_keys", 0, 0, 0), EPERM);
    long named = keyctl(1, (long)"mysession", 0, 0, 0);
    CHECK(named > 0 && named != ses && id_of(SESSION, 0) == named, "join named");
    /* With no write permission on the keyring a key would go to, a
     * request with a callout is EACCES, and nothing is added. */
    CHECK(keyctl(5, SESSION, 0x0b000000 | 0x20000000, 0, 0) == 0, "setperm session");
    REFUSED(request_key("user", "desc", "callout", 0), EACCES);
    n = keyctl(11, SESSION, (long)ids, sizeof ids, 0);
    printf("keyrings: request_key without write permission: session keyring %ld bytes\n", n);
    CHECK(keyctl(5, SESSION, 0x3f010000, 0, 0) == 0, "setperm session back");
    long pr = id_of(PROCESS, 0);
    pid_t c = fork();
    if (c == 0) {
        errno = 0;
        long cp = id_of(PROCESS, 0);
        int none = cp == -1 && errno == ENOKEY;
        printf("keyrings: child shares the session %d, has no process keyring %d\n",
               id_of(SESSION, 0) == named, none);
        /* Quotas: 20000 bytes for an ordinary user. */
        if (setuid(1000) != 0)
            _exit(3);
        long q1 = add_key("user", "q1", big, 10000, THREAD);
        errno = 0;
        long q2 = add_key("user", "q2", big, 10000, THREAD);
        printf("keyrings: user 1000: first 10000 bytes %d, second %ld errno EDQUOT %d\n", q1 > 0,
               q2, errno == EDQUOT);
        REFUSED(keyctl(4, q1, 0, -1, 0), EACCES);
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %x", st);
    CHECK(pr > 0, "process keyring");

    /* The quotas are /proc/sys/kernel/keys/'s. */
    const char *qf[] = {"maxkeys", "maxbytes", "root_maxkeys", "root_maxbytes"};
    printf("keyrings: quotas");
    for (int i = 0; i < 4; i++) {
        char path[64], v[32] = {0};
        snprintf(path, sizeof path, "/proc/sys/kernel/keys/%s", qf[i]);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(v, sizeof v, f))
                v[strcspn(v, "\n")] = 0;
            fclose(f);
        }
        printf(" %s=%s", qf[i], v);
    }
    printf("\n");
    FILE *mb = fopen("/proc/sys/kernel/keys/maxbytes", "w");
    CHECK(mb != NULL, "open maxbytes");
    if (mb) {
        setvbuf(mb, NULL, _IONBF, 0);
        errno = 0;
        int bad = fputs("0\n", mb) == EOF && errno == EINVAL;
        int good = fputs("30000\n", mb) != EOF;
        printf("keyrings: maxbytes 0 refused %d, 30000 taken %d\n", bad, good);
        fclose(mb);
    }
    c = fork();
    if (c == 0) {
        if (setuid(1001) != 0)
            _exit(3);
        long q1 = add_key("user", "q1", big, 10000, PROCESS);
        long q2 = add_key("user", "q2", big, 10000, PROCESS);
        errno = 0;
        long q3 = add_key("user", "q3", big, 10000, PROCESS);
        printf("keyrings: with maxbytes 30000: two keys %d, a third EDQUOT %d\n", q1 > 0 && q2 > 0,
               q3 == -1 && errno == EDQUOT);
        _exit(0);
    }
    waitpid(c, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "quota child status %x", st);
    c = fork();
    if (c == 0) {
        char arg[24];
        snprintf(arg, sizeof arg, "%ld", named);
        /* Made here, so that execve has something to drop. */
        id_of(PROCESS, 1);
        id_of(THREAD, 1);
        execl("/bin/keyrings", "keyrings", "exec", arg, (char *)NULL);
        _exit(4);
    }
    waitpid(c, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec child status %x", st);

    if (failures == 0)
        printf("keyrings: all ok\n");
    return failures != 0;
}
