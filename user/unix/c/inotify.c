/* inotify as Linux documents it (inotify(7), inotify_init1(2),
 * inotify_add_watch(2), inotify_rm_watch(2)): the events of a watched file
 * and of a watched directory's entries with their names, IN_MOVED_* with
 * one cookie, IN_ISDIR, coalescing of identical events, IN_ONESHOT,
 * IN_IGNORED, IN_DELETE_SELF, IN_MASK_ADD/IN_MASK_CREATE, IN_ONLYDIR,
 * IN_EXCL_UNLINK, IN_Q_OVERFLOW past max_queued_events, the per-user
 * limits of /proc/sys/fs/inotify, read's record layout and EINVAL for a
 * short buffer, FIONREAD, poll and epoll, a blocking read woken by another
 * process, and the errors of bad arguments. Prints exact lines and
 * "inotify: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("inotify: FAILED line %d: ", __LINE__);                                         \
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

static const char *names[] = {"ACCESS", "MODIFY", "ATTRIB", "CLOSE_WRITE", "CLOSE_NOWRITE",
                              "OPEN", "MOVED_FROM", "MOVED_TO", "CREATE", "DELETE",
                              "DELETE_SELF", "MOVE_SELF", "?", "UNMOUNT", "Q_OVERFLOW",
                              "IGNORED"};

static char line[4096];
static uint32_t cookies[64];
static int ncookies;

/* Reads every queued event of `fd` (non-blocking by poll) into `line`:
 * "wd:MASK[|ISDIR][:name]" separated by spaces. */
static const char *events(int fd) {
    char buf[4096] __attribute__((aligned(8)));
    line[0] = 0;
    ncookies = 0;
    struct pollfd p = {fd, POLLIN, 0};
    while (poll(&p, 1, 0) == 1) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n;) {
            struct inotify_event *e = (struct inotify_event *)(buf + i);
            char one[300];
            int k = 0;
            for (int b = 0; b < 16; b++)
                if (e->mask & (1u << b))
                    k += snprintf(one + k, sizeof one - k, "%s%s", k ? "|" : "", names[b]);
            if (e->mask & IN_ISDIR)
                k += snprintf(one + k, sizeof one - k, "|ISDIR");
            if (e->len)
                k += snprintf(one + k, sizeof one - k, ":%s", e->name);
            if (e->len % 16 != 0 || (e->len && strlen(e->name) >= e->len))
                k += snprintf(one + k, sizeof one - k, "(bad len %u)", e->len);
            if (ncookies < 64)
                cookies[ncookies++] = e->cookie;
            snprintf(line + strlen(line), sizeof line - strlen(line), "%s%d:%s",
                     line[0] ? " " : "", e->wd, one);
            i += sizeof *e + e->len;
        }
    }
    return line;
}

static void put(const char *path, const char *text) {
    int f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(f >= 0, "open %s", path);
    if (f >= 0) {
        CHECK(write(f, text, strlen(text)) == (ssize_t)strlen(text), "write %s", path);
        close(f);
    }
}

/* Writes a setting of /proc/sys → 0 or the errno. */
static int set(const char *path, const char *text) {
    int f = open(path, O_WRONLY);
    if (f < 0)
        return errno;
    int r = write(f, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : errno;
    close(f);
    return r;
}

static long get(const char *path) {
    char b[32] = {0};
    int f = open(path, O_RDONLY);
    CHECK(f >= 0, "open %s", path);
    if (f < 0)
        return -1;
    CHECK(read(f, b, sizeof b - 1) > 0, "read %s", path);
    close(f);
    return atol(b);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    char buf[512];
    mkdir("/tmp/ino", 0755);
    CHECK(chdir("/tmp/ino") == 0, "chdir");
    put("f", "hello");

    /* Bad arguments. */
    REFUSED(inotify_init1(0x4), EINVAL);
    int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    CHECK(in >= 0, "inotify_init1");
    CHECK(fcntl(in, F_GETFD) == FD_CLOEXEC, "IN_CLOEXEC");
    CHECK(fcntl(in, F_GETFL) & O_NONBLOCK, "IN_NONBLOCK");
    REFUSED(inotify_add_watch(-1, "f", IN_MODIFY), EBADF);
    REFUSED(inotify_add_watch(in, "f", 0), EINVAL);
    REFUSED(inotify_add_watch(in, "f", IN_MODIFY | IN_MASK_ADD | IN_MASK_CREATE), EINVAL);
    REFUSED(inotify_add_watch(0, "f", IN_MODIFY), EINVAL);
    REFUSED(inotify_add_watch(in, "nothing", IN_MODIFY), ENOENT);
    REFUSED(inotify_add_watch(in, "f", IN_MODIFY | IN_ONLYDIR), ENOTDIR);
    REFUSED(inotify_add_watch(in, (char *)8, IN_MODIFY), EFAULT);
    REFUSED(inotify_rm_watch(in, 1), EINVAL);
    REFUSED(inotify_rm_watch(0, 1), EINVAL);
    REFUSED(read(in, buf, sizeof buf), EAGAIN);
    REFUSED(write(in, "x", 1), EBADF);
    CHECK(lseek(in, 0, SEEK_SET) == 0, "lseek");
    printf("inotify: bad arguments refused\n");

    /* A file's events. */
    int wf = inotify_add_watch(in, "f", IN_ALL_EVENTS);
    CHECK(wf == 1, "wd %d", wf);
    printf("inotify: same inode same wd %d, IN_MASK_CREATE %s\n",
           inotify_add_watch(in, "/tmp/ino/f", IN_ALL_EVENTS),
           inotify_add_watch(in, "f", IN_ALL_EVENTS | IN_MASK_CREATE) == -1 && errno == EEXIST
               ? "EEXIST"
               : "?");
    chmod("f", 0600);
    int f = open("f", O_RDONLY);
    CHECK(read(f, buf, 5) == 5, "read");
    CHECK(read(f, buf, 5) == 0, "read at end");
    close(f);
    f = open("f", O_RDWR);
    CHECK(write(f, "ab", 2) == 2 && write(f, "cd", 2) == 2, "write");
    close(f);
    truncate("f", 1);
    printf("inotify: file: %s\n", events(in));

    /* FIONREAD, poll, epoll, a short buffer. */
    int ep = epoll_create1(0);
    struct epoll_event ee = {.events = EPOLLIN, .data.u32 = 7}, got;
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, in, &ee) == 0, "epoll_ctl");
    int before = epoll_wait(ep, &got, 1, 0);
    f = open("f", O_RDONLY);
    int q = -1;
    CHECK(ioctl(in, FIONREAD, &q) == 0, "FIONREAD");
    int after = epoll_wait(ep, &got, 1, 0);
    REFUSED(read(in, buf, 15), EINVAL);
    printf("inotify: FIONREAD %d, epoll before %d after %d data %u\n", q, before, after,
           got.data.u32);
    close(f);
    printf("inotify: %s\n", events(in));
    close(ep);

    /* A directory's entries. */
    int wd = inotify_add_watch(in, ".", IN_ALL_EVENTS & ~(IN_OPEN | IN_CLOSE | IN_ACCESS));
    put("a", "1");
    rename("a", "long-name-of-twenty");
    mkdir("sub", 0700);
    chmod("sub", 0755);
    symlink("f", "ln");
    link("f", "f2");
    unlink("f2");
    unlink("ln");
    rmdir("sub");
    unlink("long-name-of-twenty");
    chmod(".", 0755);
    printf("inotify: dir %d: %s\n", wd, events(in));
    printf("inotify: moved cookies equal %d nonzero %d\n", cookies[2] == cookies[3],
           cookies[2] != 0);

    /* IN_MASK_ADD, IN_ONESHOT, inotify_rm_watch, IN_DELETE_SELF. */
    CHECK(inotify_add_watch(in, "f", IN_ATTRIB) == wf, "replace");
    CHECK(inotify_add_watch(in, "f", IN_DELETE_SELF | IN_MASK_ADD) == wf, "mask add");
    CHECK(inotify_rm_watch(in, wd) == 0, "rm_watch");
    put("g", "x");
    int wg = inotify_add_watch(in, "g", IN_MODIFY | IN_ONESHOT);
    put("g", "y");
    put("g", "z");
    f = open("f", O_RDONLY);
    unlink("f");
    chmod("g", 0600);
    printf("inotify: rm, oneshot, unlink while open: %s\n", events(in));
    close(f);
    printf("inotify: last close: %s\n", events(in));
    CHECK(wg == wf + 2, "wds given cyclically: %d", wg);

    /* IN_EXCL_UNLINK: a directory's child unlinked but open. */
    int d2 = inotify_add_watch(in, ".", IN_MODIFY);
    put("h", "1");
    f = open("h", O_WRONLY);
    printf("inotify: child: %s\n", events(in));
    unlink("h");
    CHECK(write(f, "2", 1) == 1, "write");
    printf("inotify: unlinked child still seen: %s\n", events(in));
    CHECK(inotify_add_watch(in, ".", IN_MODIFY | IN_EXCL_UNLINK) == d2, "same");
    CHECK(write(f, "3", 1) == 1, "write");
    printf("inotify: with IN_EXCL_UNLINK: [%s]\n", events(in));
    close(f);
    /* /proc/self/fdinfo: a line per watch. */
    char path[64], info[512] = {0};
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", in);
    int fi = open(path, O_RDONLY);
    CHECK(fi >= 0, "open %s", path);
    CHECK(read(fi, info, sizeof info - 1) > 0, "read fdinfo");
    close(fi);
    char *w = strstr(info, "inotify wd:");
    unsigned iwd = 0, imask = 0;
    CHECK(w && sscanf(w, "inotify wd:%x ino:%*x sdev:%*x mask:%x", &iwd, &imask) == 2, "fdinfo");
    printf("inotify: fdinfo wd %u mask %x, one watch %d\n", iwd, imask,
           w && !strstr(w + 1, "inotify wd:"));
    close(in);

    /* A directory's listing is IN_ACCESS|IN_ISDIR (itself, and in its
     * watched parent with its name). */
    in = inotify_init1(IN_NONBLOCK);
    mkdir("d", 0755);
    inotify_add_watch(in, ".", IN_ACCESS | IN_OPEN);
    inotify_add_watch(in, "d", IN_ACCESS);
    int dfd = open("d", O_RDONLY | O_DIRECTORY);
    char dents[256];
    CHECK(syscall(SYS_getdents64, dfd, dents, sizeof dents) > 0, "getdents64");
    close(dfd);
    printf("inotify: listing: %s\n", events(in));
    rmdir("d");
    close(in);

    /* A blocking read woken by another process. */
    in = inotify_init();
    inotify_add_watch(in, ".", IN_CREATE);
    pid_t c = fork();
    if (c == 0) {
        struct timespec t = {0, 100000000};
        nanosleep(&t, NULL);
        put("late", "");
        _exit(0);
    }
    char rb[64] __attribute__((aligned(8)));
    ssize_t n = read(in, rb, sizeof rb);
    struct inotify_event *e = (struct inotify_event *)rb;
    printf("inotify: blocking read %zd: mask %x name %s\n", n, e->mask, e->name);
    waitpid(c, NULL, 0);
    unlink("late");
    close(in);

    /* max_queued_events: one IN_Q_OVERFLOW past it. */
    long old_q = get("/proc/sys/fs/inotify/max_queued_events");
    long old_i = get("/proc/sys/fs/inotify/max_user_instances");
    long old_w = get("/proc/sys/fs/inotify/max_user_watches");
    printf("inotify: limits %ld %ld %d\n", old_q, old_i, old_w >= 8192);
    CHECK(set("/proc/sys/fs/inotify/max_queued_events", "3") == 0, "set");
    in = inotify_init1(IN_NONBLOCK);
    CHECK(set("/proc/sys/fs/inotify/max_queued_events", "16384") == 0, "set");
    put("q", "");
    inotify_add_watch(in, "q", IN_ACCESS | IN_MODIFY);
    f = open("q", O_RDWR);
    for (int i = 0; i < 5; i++) {
        CHECK(pwrite(f, "x", 1, 0) == 1, "pwrite");
        CHECK(pread(f, buf, 1, 0) == 1, "pread");
    }
    close(f);
    printf("inotify: overflow: %s\n", events(in));
    close(in);
    unlink("q");

    /* max_user_instances and max_user_watches (this process holds none). */
    CHECK(set("/proc/sys/fs/inotify/max_user_instances", "2") == 0, "set");
    int i1 = inotify_init(), i2 = inotify_init();
    REFUSED(inotify_init(), EMFILE);
    CHECK(set("/proc/sys/fs/inotify/max_user_instances", "128") == 0, "set");
    CHECK(set("/proc/sys/fs/inotify/max_user_watches", "1") == 0, "set");
    CHECK(inotify_add_watch(i1, ".", IN_CREATE) == 1, "first watch");
    REFUSED(inotify_add_watch(i2, "g", IN_CREATE), ENOSPC);
    CHECK(inotify_add_watch(i1, ".", IN_DELETE) == 1, "a watch changed is no new one");
    int neg = set("/proc/sys/fs/inotify/max_user_watches", "-1");
    printf("inotify: per-user limits: EMFILE, ENOSPC; -1 refused %s, kept %d\n",
           neg == EINVAL ? "EINVAL" : "?", get("/proc/sys/fs/inotify/max_user_watches") == 1);
    char v[24];
    snprintf(v, sizeof v, "%ld", old_w);
    CHECK(set("/proc/sys/fs/inotify/max_user_watches", v) == 0, "set");
    close(i1);
    close(i2);
    unlink("g");

    if (failures == 0)
        printf("inotify: all ok\n");
    return failures != 0;
}
