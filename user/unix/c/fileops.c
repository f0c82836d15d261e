/* File operations and their errors, and getdents64 after create, unlink and
 * rename: everything goes through the UNIX keeper to the file-system domain.
 * Each check prints nothing unless it fails; the last line says whether all
 * held (tests/system/unix_fileops.toml checks every printed line). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("fileops: FAILED line %d: %s: ", __LINE__, #cond);          \
            printf(__VA_ARGS__);                                               \
            printf(" (errno %d)\n", errno);                                    \
            failures++;                                                        \
        }                                                                      \
    } while (0)
#define ERR(call, e) CHECK((call) == -1 && errno == (e), "wanted errno %d", e)

/* The names in a directory, sorted, joined by spaces. */
static void listing(const char *dir, char *out, size_t cap)
{
    char buf[1024], *names[64];
    int n = 0, fd = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK(fd >= 0, "open %s", dir);
    for (;;) {
        long got = syscall(SYS_getdents64, fd, buf, sizeof buf);
        CHECK(got >= 0, "getdents64");
        if (got <= 0)
            break;
        for (long at = 0; at < got;) {
            unsigned short reclen = *(unsigned short *)(buf + at + 16);
            if (n < 64)
                names[n++] = strdup(buf + at + 19);
            at += reclen;
        }
    }
    close(fd);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(names[i], names[j]) > 0) {
                char *t = names[i];
                names[i] = names[j];
                names[j] = t;
            }
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        strncat(out, names[i], cap - strlen(out) - 2);
        if (i + 1 < n)
            strcat(out, " ");
        free(names[i]);
    }
}

int main(void)
{
    char buf[8192], list[512];

    /* Reading a file of the image. */
    int fd = open("/etc/passwd", O_RDONLY);
    CHECK(fd == 3, "first free descriptor is 3, got %d", fd);
    ssize_t n = read(fd, buf, sizeof buf);
    CHECK(n == 153 && memcmp(buf, "root:x:0:0:root:/root:/bin/sh\n", 30) == 0, "passwd %zd", n);
    CHECK(read(fd, buf, 10) == 0, "end of file");
    CHECK(lseek(fd, 5, SEEK_SET) == 5 && read(fd, buf, 1) == 1 && buf[0] == 'x', "lseek");
    CHECK(pread(fd, buf, 4, 0) == 4 && memcmp(buf, "root", 4) == 0, "pread");
    CHECK(lseek(fd, 0, SEEK_CUR) == 6, "pread keeps the offset");
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && st.st_size == 153 && S_ISREG(st.st_mode), "fstat");
    CHECK(close(fd) == 0, "close");
    ERR(close(fd), EBADF);
    ERR(read(fd, buf, 1), EBADF);
    ERR(write(99, buf, 1), EBADF);

    /* Errors of names. */
    ERR(open("/nonexistent", O_RDONLY), ENOENT);
    ERR(open("/etc/passwd/x", O_RDONLY), ENOTDIR);
    ERR(mkdir("/etc", 0755), EEXIST);
    ERR(open("/tmp", O_WRONLY), EISDIR);
    ERR(open("/etc/passwd", O_RDONLY | O_DIRECTORY), ENOTDIR);
    ERR(rmdir("/etc"), ENOTEMPTY);
    ERR(unlink("/etc"), EISDIR);
    ERR(stat("/no/such", &st), ENOENT);

    /* Creating, writing, reading back, appending, truncating. */
    CHECK(mkdir("/tmp/d", 0700) == 0, "mkdir");
    CHECK(chdir("/tmp/d") == 0, "chdir");
    CHECK(getcwd(buf, sizeof buf) && strcmp(buf, "/tmp/d") == 0, "getcwd %s", buf);
    fd = open("a", O_CREAT | O_EXCL | O_RDWR, 0644);
    CHECK(fd >= 0, "create");
    ERR(open("a", O_CREAT | O_EXCL | O_RDWR, 0644), EEXIST);
    for (int i = 0; i < 8192; i++)
        buf[i] = (char)(i * 7);
    CHECK(write(fd, buf, 8192) == 8192, "write 8 KiB");
    CHECK(lseek(fd, 10000, SEEK_SET) == 10000 && write(fd, "end", 3) == 3, "write past a hole");
    CHECK(fstat(fd, &st) == 0 && st.st_size == 10003, "size %ld", (long)st.st_size);
    char back[10003];
    CHECK(pread(fd, back, sizeof back, 0) == 10003, "read back");
    int same = 1;
    for (int i = 0; i < 8192; i++)
        same &= back[i] == (char)(i * 7);
    for (int i = 8192; i < 10000; i++)
        same &= back[i] == 0;
    CHECK(same && memcmp(back + 10000, "end", 3) == 0, "contents");
    CHECK(ftruncate(fd, 100) == 0 && fstat(fd, &st) == 0 && st.st_size == 100, "ftruncate");
    CHECK(pwrite(fd, "xyz", 3, 4096 + 5) == 3, "pwrite");
    CHECK(pread(fd, back, 3, 4096) == 3 && back[0] == 0 && back[1] == 0, "truncation zeroed");
    close(fd);
    fd = open("a", O_WRONLY | O_APPEND);
    CHECK(write(fd, "!", 1) == 1 && fstat(fd, &st) == 0 && st.st_size == 4096 + 9, "append");
    close(fd);
    CHECK(truncate("a", 0) == 0 && stat("a", &st) == 0 && st.st_size == 0, "truncate");

    /* getdents64 after create, unlink, rename. */
    close(open("b", O_CREAT | O_WRONLY, 0644));
    close(open("c", O_CREAT | O_WRONLY, 0644));
    listing(".", list, sizeof list);
    printf("fileops: created: %s\n", list);
    CHECK(unlink("b") == 0, "unlink");
    ERR(unlink("b"), ENOENT);
    CHECK(rename("c", "z") == 0, "rename");
    CHECK(mkdir("sub", 0755) == 0 && rename("a", "sub/a2") == 0, "rename into a directory");
    listing(".", list, sizeof list);
    printf("fileops: after unlink and rename: %s\n", list);
    listing("sub", list, sizeof list);
    printf("fileops: sub: %s\n", list);

    /* Links. */
    CHECK(link("z", "z2") == 0 && stat("z", &st) == 0 && st.st_nlink == 2, "link");
    CHECK(symlink("z", "s") == 0, "symlink");
    n = readlink("s", buf, sizeof buf);
    CHECK(n == 1 && buf[0] == 'z', "readlink %zd", n);
    CHECK(lstat("s", &st) == 0 && S_ISLNK(st.st_mode), "lstat");
    CHECK(stat("s", &st) == 0 && S_ISREG(st.st_mode), "stat follows");
    ERR(readlink("z", buf, sizeof buf), EINVAL);
    CHECK(access("z", R_OK) == 0, "access");
    ERR(access("nope", F_OK), ENOENT);
    CHECK(chmod("z", 0600) == 0 && stat("z", &st) == 0 && (st.st_mode & 0777) == 0600, "chmod");

    /* Descriptors: dup, dup2, fcntl, a pipe, the devices. */
    fd = open("z", O_RDWR);
    int d = dup(fd);
    CHECK(d == fd + 1, "dup %d", d);
    CHECK(write(fd, "12", 2) == 2 && lseek(d, 0, SEEK_CUR) == 2, "dup shares the offset");
    CHECK(dup2(fd, 10) == 10 && fcntl(10, F_GETFD) == 0, "dup2");
    CHECK(fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 && fcntl(fd, F_GETFD) == FD_CLOEXEC, "cloexec");
    CHECK(fcntl(fd, F_DUPFD, 20) == 20, "F_DUPFD");
    CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR, "F_GETFL");
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    CHECK(write(p[1], "through", 7) == 7 && read(p[0], buf, 100) == 7 && memcmp(buf, "through", 7) == 0, "pipe");
    CHECK(close(p[1]) == 0 && read(p[0], buf, 100) == 0, "end of pipe");
    ERR(lseek(p[0], 0, SEEK_SET), ESPIPE);
    int z = open("/dev/zero", O_RDONLY), nl = open("/dev/null", O_WRONLY);
    CHECK(read(z, buf, 100) == 100 && buf[0] == 0 && buf[99] == 0, "/dev/zero");
    CHECK(write(nl, buf, 100) == 100, "/dev/null");
    CHECK(isatty(1) && !isatty(nl), "isatty");
    ERR(ioctl(fd, 0x5413, buf), ENOTTY);
    CHECK(chdir("/") == 0 && getcwd(buf, sizeof buf) && strcmp(buf, "/") == 0, "back to /");
    ERR(chdir("/etc/passwd"), ENOTDIR);
    CHECK(rmdir("/tmp/d/sub") == -1 && errno == ENOTEMPTY, "not empty");

    printf("fileops: %s\n", failures ? "FAILED" : "all ok");
    return failures ? 1 : 0;
}
