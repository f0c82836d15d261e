/* Extended attributes (setxattr(2), getxattr(2), listxattr(2),
 * removexattr(2), xattr(7)): the path, link and descriptor forms; flags;
 * lengths; namespaces (user., trusted., security.; others EOPNOTSUPP);
 * who may read and write them; special files; bad pointers. Every
 * refusal is Linux's errno. Prints exact lines and "xattrs: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("xattrs: FAILED line %d: ", __LINE__);                                          \
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
#define OK(call) CHECK((call) == 0, "%s", #call)

/* The NUL-separated list as one printable string ("a,b,"). */
static const char *names(const char *l, long n) {
    static char out[512];
    long i;
    for (i = 0; i < n && i < 511; i++)
        out[i] = l[i] ? l[i] : ',';
    out[i] = 0;
    return out;
}

int main(void) {
    char v[8192];
    char l[512];
    int f = open("/tmp/xf", O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(f >= 0, "open");

    /* Set, get, the length alone, a short buffer. */
    REFUSED(getxattr("/tmp/xf", "user.a", v, sizeof v), ENODATA);
    OK(setxattr("/tmp/xf", "user.a", "hello", 5, 0));
    long n = getxattr("/tmp/xf", "user.a", NULL, 0);
    REFUSED(getxattr("/tmp/xf", "user.a", v, 4), ERANGE);
    memset(v, 0, sizeof v);
    long m = getxattr("/tmp/xf", "user.a", v, sizeof v);
    printf("xattrs: user.a length %ld, value %ld '%s'\n", n, m, v);

    /* Flags. */
    REFUSED(setxattr("/tmp/xf", "user.a", "x", 1, XATTR_CREATE), EEXIST);
    REFUSED(setxattr("/tmp/xf", "user.b", "x", 1, XATTR_REPLACE), ENODATA);
    REFUSED(setxattr("/tmp/xf", "user.b", "x", 1, 4), EINVAL);
    OK(setxattr("/tmp/xf", "user.a", "bye", 3, XATTR_REPLACE));
    OK(setxattr("/tmp/xf", "user.b", "", 0, XATTR_CREATE));
    memset(v, 0, sizeof v);
    m = getxattr("/tmp/xf", "user.a", v, sizeof v);
    printf("xattrs: replaced: %ld '%s'; empty user.b %ld\n", m, v,
           (long)getxattr("/tmp/xf", "user.b", v, sizeof v));

    /* Lists. */
    n = listxattr("/tmp/xf", NULL, 0);
    REFUSED(listxattr("/tmp/xf", l, 5), ERANGE);
    m = listxattr("/tmp/xf", l, sizeof l);
    printf("xattrs: list length %ld, %ld '%s'\n", n, m, names(l, m));

    /* The descriptor forms. */
    OK(fsetxattr(f, "user.c", "fd", 2, 0));
    memset(v, 0, sizeof v);
    m = fgetxattr(f, "user.c", v, sizeof v);
    OK(fremovexattr(f, "user.b"));
    REFUSED(fremovexattr(f, "user.b"), ENODATA);
    long k = flistxattr(f, l, sizeof l);
    printf("xattrs: fgetxattr %ld '%s', flistxattr %ld '%s'\n", m, v, k, names(l, k));
    REFUSED(fgetxattr(9999, "user.c", v, sizeof v), EBADF);

    /* Symbolic links: the path forms follow, the l* forms do not (and a
       link takes no user. attributes). */
    unlink("/tmp/xl");
    OK(symlink("/tmp/xf", "/tmp/xl"));
    memset(v, 0, sizeof v);
    m = getxattr("/tmp/xl", "user.c", v, sizeof v);
    printf("xattrs: through the link %ld '%s'\n", m, v);
    REFUSED(lgetxattr("/tmp/xl", "user.c", v, sizeof v), ENODATA);
    REFUSED(lsetxattr("/tmp/xl", "user.c", "x", 1, 0), EPERM);
    printf("xattrs: link's own list %ld\n", (long)llistxattr("/tmp/xl", l, sizeof l));

    /* Names and namespaces. */
    REFUSED(setxattr("/tmp/xf", "foo.x", "x", 1, 0), EOPNOTSUPP);
    REFUSED(setxattr("/tmp/xf", "system.posix_acl_access", "x", 1, 0), EOPNOTSUPP);
    REFUSED(setxattr("/tmp/xf", "user.", "x", 1, 0), EINVAL);
    REFUSED(setxattr("/tmp/xf", "", "x", 1, 0), ERANGE);
    char longname[300];
    memset(longname, 'n', sizeof longname);
    memcpy(longname, "user.", 5);
    longname[256] = 0;
    REFUSED(setxattr("/tmp/xf", longname, "x", 1, 0), ERANGE);
    longname[255] = 0;
    OK(setxattr("/tmp/xf", longname, "x", 1, 0));
    OK(removexattr("/tmp/xf", longname));
    OK(setxattr("/tmp/xf", "security.test", "s", 1, 0));
    OK(setxattr("/tmp/xf", "trusted.t", "t", 1, 0));

    /* Sizes: over 64 KiB E2BIG; a file holds 4 KiB of names and values. */
    int g = open("/tmp/xbig", O_RDWR | O_CREAT | O_TRUNC, 0644);
    memset(v, 'v', sizeof v);
    REFUSED(setxattr("/tmp/xbig", "user.big", v, 65537, 0), E2BIG);
    REFUSED(setxattr("/tmp/xbig", "user.big", v, 4088, 0), ENOSPC);
    OK(setxattr("/tmp/xbig", "user.big", v, 4087, 0));
    REFUSED(setxattr("/tmp/xbig", "user.c", "", 0, 0), ENOSPC);
    printf("xattrs: 4087 bytes kept: %ld\n", (long)getxattr("/tmp/xbig", "user.big", v, 65536));
    close(g);

    /* Directories take them; special files do not. */
    mkdir("/tmp/xd", 0755);
    OK(setxattr("/tmp/xd", "user.d", "dir", 3, 0));
    printf("xattrs: directory %ld\n", (long)getxattr("/tmp/xd", "user.d", v, sizeof v));
    REFUSED(setxattr("/dev/null", "user.x", "x", 1, 0), EPERM);
    REFUSED(getxattr("/dev/null", "user.x", v, sizeof v), ENODATA);
    int p[2];
    OK(pipe(p));
    REFUSED(fsetxattr(p[0], "user.x", "x", 1, 0), EPERM);
    REFUSED(fgetxattr(p[0], "user.x", v, sizeof v), ENODATA);
    printf("xattrs: pipe list %ld\n", (long)flistxattr(p[0], l, sizeof l));

    /* Bad pointers. */
    REFUSED(getxattr("/tmp/xf", "user.a", (void *)1, 10), EFAULT);
    REFUSED(getxattr("/tmp/xf", (char *)1, v, 10), EFAULT);
    REFUSED(getxattr((char *)1, "user.a", v, 10), EFAULT);
    REFUSED(setxattr("/tmp/xf", "user.a", (void *)1, 10, 0), EFAULT);
    REFUSED(listxattr("/tmp/xf", (char *)1, 100), EFAULT);
    REFUSED(getxattr("/tmp/nonesuch", "user.a", v, 10), ENOENT);

    /* Another user: trusted. is invisible and closed; user. follows the
       mode bits (0644: read yes, write EACCES; 0600: read EACCES). */
    int s0 = open("/tmp/xsecret", O_RDWR | O_CREAT | O_TRUNC, 0600);
    OK(fsetxattr(s0, "user.s", "s", 1, 0));
    close(s0);
    pid_t c = fork();
    if (c == 0) {
        if (setuid(1000) != 0)
            _exit(9);
        int ok = 1;
        char b[64];
        errno = 0;
        ok &= getxattr("/tmp/xf", "trusted.t", b, sizeof b) == -1 && errno == ENODATA;
        errno = 0;
        ok &= setxattr("/tmp/xf", "trusted.u", "t", 1, 0) == -1 && errno == EPERM;
        ok &= getxattr("/tmp/xf", "user.a", b, sizeof b) == 3;
        errno = 0;
        ok &= setxattr("/tmp/xf", "user.a", "u", 1, 0) == -1 && errno == EACCES;
        errno = 0;
        ok &= getxattr("/tmp/xsecret", "user.s", b, sizeof b) == -1 && errno == EACCES;
        char ul[256];
        long un = listxattr("/tmp/xf", ul, sizeof ul);
        printf("xattrs: a user sees %ld '%s'\n", un, names(ul, un));
        _exit(ok ? 0 : 1);
    }
    int st;
    waitpid(c, &st, 0);
    printf("xattrs: a user's refusals right: %d\n", WIFEXITED(st) && WEXITSTATUS(st) == 0);
    m = listxattr("/tmp/xf", l, sizeof l);
    printf("xattrs: root sees %ld '%s'\n", m, names(l, m));

    /* A file's attributes go with it: a new file has none. */
    close(f);
    OK(unlink("/tmp/xf"));
    OK(unlink("/tmp/xbig"));
    f = open("/tmp/xf2", O_RDWR | O_CREAT | O_TRUNC, 0644);
    int f3 = open("/tmp/xf3", O_RDWR | O_CREAT | O_TRUNC, 0644);
    printf("xattrs: new files' lists %ld %ld\n", (long)flistxattr(f, l, sizeof l),
           (long)flistxattr(f3, l, sizeof l));

    if (failures == 0)
        printf("xattrs: all ok\n");
    return failures != 0;
}
