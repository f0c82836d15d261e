/* The file system sized by memory, not by constants: more files than the
 * old fixed tables held (2,048 inodes, 4,096 names, 4,096 nodes of file
 * trees), names of 255 bytes (and ENAMETOOLONG at 256), a symbolic link
 * with a 3,000-byte target, directories deeper than 64 for getcwd — and
 * everything given back when the files go. Each check prints nothing
 * unless it fails; tests/system/unix_fsgrow.toml checks the printed lines. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("fsgrow: FAILED line %d: %s: ", __LINE__, #cond);           \
            printf(__VA_ARGS__);                                               \
            printf(" (errno %d)\n", errno);                                    \
            if (++failures > 20)                                               \
                exit(1);                                                       \
        }                                                                      \
    } while (0)
#define ERR(call, e) CHECK((call) == -1 && errno == (e), "wanted errno %d", e)

/* More than the old 2,048 inodes and 4,096 names, empty. */
#define N_EMPTY 3000
/* More than the old 4,096 file-tree nodes: a node each. */
#define N_DATA 4200

/* Entries of a directory, "." and ".." included. */
static long count(const char *dir)
{
    char buf[4096];
    long n = 0;
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK(fd >= 0, "open %s", dir);
    for (;;) {
        long got = syscall(SYS_getdents64, fd, buf, sizeof buf);
        CHECK(got >= 0, "getdents64");
        if (got <= 0)
            break;
        for (long at = 0; at < got; at += *(unsigned short *)(buf + at + 16))
            n++;
    }
    close(fd);
    return n;
}

/* A value of /proc/meminfo ("StetNodes", "StetHeap"). */
static long meminfo(const char *key)
{
    char buf[1024];
    int fd = open("/proc/meminfo", O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    close(fd);
    CHECK(n > 0, "read /proc/meminfo");
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *at = strstr(buf, key);
    CHECK(at != NULL, "%s in /proc/meminfo", key);
    return at ? atol(at + strlen(key) + 1) : -1;
}

static int cmp_ino(const void *a, const void *b)
{
    ino_t x = *(const ino_t *)a, y = *(const ino_t *)b;
    return x < y ? -1 : x > y;
}

static void many_empty_files(void)
{
    static ino_t inos[N_EMPTY];
    char name[32];
    struct stat st;
    CHECK(mkdir("/tmp/g", 0755) == 0, "mkdir /tmp/g");
    for (int i = 0; i < N_EMPTY; i++) {
        snprintf(name, sizeof name, "/tmp/g/f%d", i);
        int fd = open(name, O_CREAT | O_EXCL | O_WRONLY, 0644);
        CHECK(fd >= 0, "create %s", name);
        close(fd);
    }
    for (int i = 0; i < N_EMPTY; i++) {
        snprintf(name, sizeof name, "/tmp/g/f%d", i);
        CHECK(stat(name, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0, "stat %s", name);
        inos[i] = st.st_ino;
    }
    qsort(inos, N_EMPTY, sizeof inos[0], cmp_ino);
    for (int i = 1; i < N_EMPTY; i++)
        CHECK(inos[i] != inos[i - 1], "inode %ld twice", (long)inos[i]);
    CHECK(count("/tmp/g") == N_EMPTY + 2, "listing %ld", count("/tmp/g"));
    /* Everyone else can still make files meanwhile. */
    CHECK(mkdir("/tmp/other", 0755) == 0 && rmdir("/tmp/other") == 0, "mkdir beside them");
    for (int i = 0; i < N_EMPTY; i++) {
        snprintf(name, sizeof name, "/tmp/g/f%d", i);
        CHECK(unlink(name) == 0, "unlink %s", name);
    }
    CHECK(count("/tmp/g") == 2, "emptied");
    CHECK(rmdir("/tmp/g") == 0, "rmdir /tmp/g");
    printf("fsgrow: %d empty files made, checked and removed\n", N_EMPTY);
}

static void long_names(void)
{
    char n255[256], m255[256], n256[257], path[4096];
    struct stat st;
    memset(n255, 'a', 255);
    n255[255] = 0;
    memset(m255, 'b', 255);
    m255[255] = 0;
    memset(n256, 'c', 256);
    n256[256] = 0;
    CHECK(mkdir("/tmp/n", 0755) == 0 && chdir("/tmp/n") == 0, "mkdir /tmp/n");
    int fd = open(n255, O_CREAT | O_EXCL | O_WRONLY, 0644);
    CHECK(fd >= 0, "create a 255-byte name");
    CHECK(write(fd, "x", 1) == 1, "write");
    close(fd);
    CHECK(stat(n255, &st) == 0 && st.st_size == 1, "stat a 255-byte name");
    CHECK(rename(n255, m255) == 0 && stat(m255, &st) == 0, "rename to a 255-byte name");
    ERR(stat(n255, &st), ENOENT);
    CHECK(mkdir(n255, 0755) == 0, "mkdir a 255-byte name");
    CHECK(count(".") == 4, "listing");
    ERR(open(n256, O_CREAT | O_WRONLY, 0644), ENAMETOOLONG);
    ERR(mkdir(n256, 0755), ENAMETOOLONG);
    ERR(stat(n256, &st), ENAMETOOLONG);
    ERR(rename(m255, n256), ENAMETOOLONG);
    ERR(symlink("x", n256), ENAMETOOLONG);
    ERR(link(m255, n256), ENAMETOOLONG);
    CHECK(stat(m255, &st) == 0, "still there after the refusals");

    /* A 3,000-byte target (the old limit was 127): "/./././.../tmp/n/"
     * and the 255-byte name, read back whole and followed. */
    char target[3001];
    size_t t = 0;
    target[t++] = '/';
    for (int i = 0; i < 1369; i++)
        target[t++] = '.', target[t++] = '/';
    memcpy(target + t, "tmp/n/", 6);
    t += 6;
    memcpy(target + t, m255, 255);
    t += 255;
    target[t] = 0;
    CHECK(t == 3000, "target length %zu", t);
    CHECK(symlink(target, "far") == 0, "symlink with a 3,000-byte target");
    CHECK(stat("far", &st) == 0 && st.st_size == 1, "followed");
    char back[4096];
    CHECK(readlink("far", back, sizeof back) == 3000 && memcmp(back, target, 3000) == 0,
          "readlink gives it back");
    CHECK(unlink("far") == 0, "unlink the symlink");

    /* A directory 100 deep (the old getcwd stopped at 64). */
    for (int i = 0; i < 100; i++)
        CHECK(mkdir("d", 0755) == 0 && chdir("d") == 0, "depth %d", i);
    CHECK(getcwd(path, sizeof path) != NULL && strlen(path) == 6 + 200, "getcwd %zu",
          strlen(path));
    for (int i = 0; i < 100; i++)
        CHECK(chdir("..") == 0 && rmdir("d") == 0, "back up %d", i);
    CHECK(rmdir(n255) == 0 && unlink(m255) == 0, "remove the long names");
    CHECK(chdir("/") == 0 && rmdir("/tmp/n") == 0, "rmdir /tmp/n");
    printf("fsgrow: 255-byte names work, 256 is ENAMETOOLONG\n");
}

static void many_files_with_bytes(void)
{
    char name[32];
    long nodes = meminfo("StetNodes:");
    CHECK(mkdir("/tmp/h", 0755) == 0, "mkdir /tmp/h");
    for (int i = 0; i < N_DATA; i++) {
        snprintf(name, sizeof name, "/tmp/h/f%d", i);
        int fd = open(name, O_CREAT | O_EXCL | O_WRONLY, 0644);
        char c = (char)i;
        CHECK(fd >= 0 && write(fd, &c, 1) == 1, "create and write %s", name);
        close(fd);
    }
    long full = meminfo("StetNodes:");
    CHECK(full - nodes >= N_DATA, "a node per file: %ld", full - nodes);
    printf("fsgrow: %d one-byte files made; unixd's heap %ld kB\n", N_DATA,
           meminfo("StetHeap:"));
    for (int i = 0; i < N_DATA; i++) {
        snprintf(name, sizeof name, "/tmp/h/f%d", i);
        int fd = open(name, O_RDONLY);
        char c = 0;
        CHECK(fd >= 0 && read(fd, &c, 1) == 1 && c == (char)i, "read back %s", name);
        close(fd);
    }
    for (int i = 0; i < N_DATA; i++) {
        snprintf(name, sizeof name, "/tmp/h/f%d", i);
        CHECK(unlink(name) == 0, "unlink %s", name);
    }
    CHECK(rmdir("/tmp/h") == 0, "rmdir /tmp/h");
    /* Every file's node went back to the bank; what stays is the key
     * directory's own nodes (one per 16 entries) and the heap's tree (one
     * per 16 pages of unixd's grown tables). */
    long after = meminfo("StetNodes:");
    CHECK(after - nodes <= N_DATA / 16 + 64, "nodes kept: %ld", after - nodes);
    printf("fsgrow: %d one-byte files read back and removed\n", N_DATA);
}

int main(void)
{
    printf("fsgrow: unixd's heap %ld kB at the start\n", meminfo("StetHeap:"));
    many_empty_files();
    long_names();
    many_files_with_bytes();
    printf("fsgrow: unixd's heap %ld kB at the end\n", meminfo("StetHeap:"));
    printf("fsgrow: %s\n", failures ? "FAILED" : "all ok");
    return failures != 0;
}
