/* What describes the system: /proc's generated files (version,
 * filesystems, mounts and /etc/mtab, cpuinfo against the processor's own
 * CPUID, stat, uptime, loadavg, each process's status, /proc/sys), the
 * links /proc/self and /proc/mounts, statfs and fstatfs, the kernel log
 * through syslog(2), sysinfo and uname -- each checked exactly where the
 * value is fixed -- then busybox df, mount, uptime, dmesg, top and ps,
 * which must exit 0 (tests/system/unix_procfs.toml checks their lines).
 * Runs as pid 1. Each check prints nothing unless it fails; the last line
 * says whether all held. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("procfs: FAILED line %d: %s: ", __LINE__, #cond);           \
            printf(__VA_ARGS__);                                               \
            printf(" (errno %d)\n", errno);                                    \
            failures++;                                                        \
        }                                                                      \
    } while (0)
#define ERR(call, e) CHECK((call) == -1 && errno == (e), "wanted errno %d", e)

#define TMPFS 0x01021994
#define PROCFS 0x9fa0
#define PIPEFS 0x50495045

/* A whole file as a string (at most cap - 1 bytes). */
static char *slurp(const char *path, char *buf, size_t cap)
{
    size_t n = 0;
    int fd = open(path, O_RDONLY);
    buf[0] = 0;
    CHECK(fd >= 0, "open %s", path);
    if (fd < 0)
        return buf;
    for (;;) {
        ssize_t got = read(fd, buf + n, cap - 1 - n);
        CHECK(got >= 0, "read %s", path);
        if (got <= 0)
            break;
        n += got;
    }
    buf[n] = 0;
    close(fd);
    return buf;
}

static void same(const char *path, const char *want)
{
    char buf[8192];
    slurp(path, buf, sizeof buf);
    CHECK(strcmp(buf, want) == 0, "%s is \"%s\", want \"%s\"", path, buf, want);
}

static void link_is(const char *path, const char *want)
{
    char buf[256];
    ssize_t n = readlink(path, buf, sizeof buf - 1);
    buf[n < 0 ? 0 : n] = 0;
    CHECK(n >= 0 && strcmp(buf, want) == 0, "%s -> \"%s\", want \"%s\"", path, buf, want);
}

static void nap(long ms)
{
    struct timespec t = {ms / 1000, ms % 1000 * 1000000};
    nanosleep(&t, 0);
}

/* /proc/<pid>/status once its State line is `state` (waiting at most
 * 5 s: a child reaches a wait in its own time). */
static void status_when(pid_t pid, const char *state, char *buf, size_t cap)
{
    char path[64], want[64];
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    snprintf(want, sizeof want, "\nState:\t%s\n", state);
    for (int i = 0; i < 500; i++) {
        slurp(path, buf, cap);
        if (strstr(buf, want))
            return;
        nap(10);
    }
    CHECK(0, "%s never showed %s: %s", path, state, buf);
}

static const char *status_text(pid_t pid, pid_t ppid, const char *state, char *out)
{
    sprintf(out,
            "Name:\tprocfs\nState:\t%s\nTgid:\t%d\nNgid:\t0\nPid:\t%d\nPPid:\t%d\n"
            "TracerPid:\t0\nUid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\nFDSize:\t256\nGroups:\t\n"
            "NStgid:\t%d\nNSpid:\t%d\nNSpgid:\t1\nNSsid:\t1\nThreads:\t1\n"
            "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
            "Cpus_allowed:\t1\nCpus_allowed_list:\t0\n",
            state, pid, pid, ppid, pid, pid);
    return out;
}

/* A /proc/stat line's number ("name N"). */
static long long stat_field(const char *stat, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "\n%s ", name);
    const char *at = strstr(stat, key);
    CHECK(at, "no %s in /proc/stat", name);
    return at ? atoll(at + strlen(key)) : -1;
}

static void uname_and_links(void)
{
    struct utsname u;
    CHECK(uname(&u) == 0, "uname");
    CHECK(strcmp(u.sysname, "Linux") == 0 && strcmp(u.nodename, "stet") == 0 &&
              strcmp(u.release, "6.1.0-stet") == 0 && strcmp(u.version, "#1 Stet") == 0 &&
              strcmp(u.machine, "x86_64") == 0,
          "uname %s %s %s %s %s", u.sysname, u.nodename, u.release, u.version, u.machine);
    link_is("/proc/self", "1");
    link_is("/proc/mounts", "self/mounts");
    link_is("/etc/mtab", "../proc/self/mounts");
    struct stat st;
    CHECK(lstat("/proc/self", &st) == 0 && S_ISLNK(st.st_mode), "/proc/self is a link");
    CHECK(stat("/proc/self", &st) == 0 && S_ISDIR(st.st_mode), "and leads to a directory");
    /* Whatever unlink says (Linux: EPERM), the link is there after. */
    unlink("/proc/self");
    link_is("/proc/self", "1");
}

static void fixed_files(void)
{
    const char *mounts = "stet / tmpfs rw 0 0\nproc /proc proc rw,nosuid,nodev,noexec 0 0\n";
    same("/proc/version", "Linux version 6.1.0-stet (stet@stet) (rustc) #1 Stet\n");
    same("/proc/filesystems", "nodev\ttmpfs\nnodev\tproc\n");
    same("/proc/mounts", mounts);
    same("/proc/self/mounts", mounts);
    same("/proc/1/mounts", mounts);
    same("/etc/mtab", mounts);
    same("/proc/sys/kernel/pid_max", "32768\n");
    same("/proc/sys/kernel/tainted", "0\n");
    same("/proc/sys/kernel/hostname", "stet\n");
    same("/proc/sys/kernel/osrelease", "6.1.0-stet\n");
    same("/proc/sys/kernel/ostype", "Linux\n");
    same("/proc/sys/kernel/version", "#1 Stet\n");
    same("/proc/sys/kernel/ngroups_max", "32\n");
    same("/proc/sys/fs/pipe-max-size", "1048576\n");
    same("/proc/sys/kernel/printk", "4\t4\t1\t7\n");
    same("/proc/sys/kernel/domainname", "(none)\n");
    same("/proc/sys/fs/file-max", "262144\n");
    same("/proc/sys/fs/nr_open", "256\n");
    char want[1024];
    /* Its own file has the Vm and Rss lines its keeper sent (misc23
     * checks them): the rest is exact. */
    char got[8192], *o = got;
    slurp("/proc/self/status", got, sizeof got);
    int vm = 0;
    for (const char *l = got; *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l + 1) : strlen(l);
        if (strncmp(l, "Vm", 2) == 0 || strncmp(l, "Rss", 3) == 0)
            vm++;
        else {
            memmove(o, l, n);
            o += n;
        }
        l += n;
    }
    *o = 0;
    status_text(1, 0, "R (running)", want);
    CHECK(strcmp(got, want) == 0 && vm == 10, "/proc/self/status is \"%s\" (%d Vm lines)", got, vm);
}

static void cpuinfo(void)
{
    static char buf[16384];
    char want[256];
    unsigned a, b, c, d, max, ext;
    slurp("/proc/cpuinfo", buf, sizeof buf);
    __cpuid(0, max, b, c, d);
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = 0;
    snprintf(want, sizeof want, "processor\t: 0\nvendor_id\t: %s\n", vendor);
    CHECK(strncmp(buf, want, strlen(want)) == 0, "starts %.40s", buf);
    CHECK(!strstr(buf, "processor\t: 1"), "one processor");
    unsigned edx1, ecx1;
    __cpuid(1, a, b, ecx1, edx1);
    unsigned fam = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
    if (fam == 0xf)
        fam += (a >> 20) & 0xff;
    if (fam >= 6)
        model += ((a >> 16) & 0xf) << 4;
    snprintf(want, sizeof want, "\ncpu family\t: %u\nmodel\t\t: %u\n", fam, model);
    CHECK(strstr(buf, want), "%s", want);
    snprintf(want, sizeof want, "\nstepping\t: %u\n", a & 0xf);
    CHECK(strstr(buf, want), "%s", want);
    snprintf(want, sizeof want, "\ncpuid level\t: %u\n", max);
    CHECK(strstr(buf, want), "%s", want);
    unsigned brand[12] = {0}, edx81 = 0;
    __cpuid(0x80000000, ext, b, c, d);
    if (ext >= 0x80000001)
        __cpuid(0x80000001, a, b, c, edx81);
    if (ext >= 0x80000004)
        for (int i = 0; i < 3; i++)
            __cpuid(0x80000002 + i, brand[4 * i], brand[4 * i + 1], brand[4 * i + 2],
                    brand[4 * i + 3]);
    char name[49];
    memcpy(name, brand, 48);
    name[48] = 0;
    char *n = name;
    while (*n == ' ')
        n++;
    for (char *e = n + strlen(n); e > n && e[-1] == ' ';)
        *--e = 0;
    snprintf(want, sizeof want, "\nmodel name\t: %s\n", *n ? n : "unknown");
    CHECK(strstr(buf, want), "%s", want);
    /* Flags as CPUID has them, each way. */
    char *flags = strstr(buf, "\nflags\t\t: ");
    CHECK(flags, "a flags line");
    if (!flags)
        return;
    char line[4096];
    sscanf(flags + 10, "%4095[^\n]", line);
    strcat(line, " ");
    struct {
        const char *name;
        int on;
    } f[] = {{"fpu", edx1 & 1},           {"tsc", edx1 >> 4 & 1},
             {"sse2", edx1 >> 26 & 1},    {"pni", ecx1 & 1},
             {"sse4_2", ecx1 >> 20 & 1},  {"hypervisor", ecx1 >> 31 & 1},
             {"syscall", edx81 >> 11 & 1}, {"lm", edx81 >> 29 & 1}};
    for (unsigned i = 0; i < sizeof f / sizeof f[0]; i++) {
        char word[32];
        snprintf(word, sizeof word, "%s ", f[i].name);
        int shown = strncmp(line, word, strlen(word)) == 0;
        snprintf(word, sizeof word, " %s ", f[i].name);
        shown |= strstr(line, word) != 0;
        CHECK(shown == !!f[i].on, "flag %s shown %d, cpuid %d", f[i].name, shown, !!f[i].on);
    }
}

/* /proc/stat, /proc/uptime, /proc/loadavg, sysinfo, and each process's
 * status through its life. */
static void processes(void)
{
    static char stat[4096], buf[4096], want[1024];
    slurp("/proc/stat", stat, sizeof stat);
    unsigned long long f[10], g[10];
    int k = sscanf(stat, "cpu  %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1],
                   &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9]);
    CHECK(k == 10, "cpu line: %.60s", stat);
    char *cpu0 = strstr(stat, "\ncpu0 ");
    CHECK(cpu0 && sscanf(cpu0, "\ncpu0 %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &g[0],
                         &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7], &g[8], &g[9]) == 10 &&
              memcmp(f, g, sizeof f) == 0,
          "cpu0 as cpu");
    CHECK(f[0] > 0 && f[1] == 0 && f[2] == 0 && f[4] + f[5] + f[6] + f[7] + f[8] + f[9] == 0,
          "busy time is user time: %llu %llu %llu", f[0], f[1], f[2]);
    double up, idle;
    slurp("/proc/uptime", buf, sizeof buf);
    CHECK(sscanf(buf, "%lf %lf", &up, &idle) == 2 && idle <= up, "uptime %s", buf);
    double jiffies = (f[0] + f[3]) / 100.0;
    CHECK(jiffies <= up + 0.02 && jiffies > up - 1, "cpu time %f, uptime %f", jiffies, up);
    CHECK(stat_field(stat, "btime") == 1704067200, "btime");
    CHECK(stat_field(stat, "procs_running") == 1, "running: this one");
    CHECK(stat_field(stat, "procs_blocked") == 0, "blocked");
    CHECK(stat_field(stat, "intr") == 0 && stat_field(stat, "ctxt") == 0, "not counted");
    long long forks = stat_field(stat, "processes");

    /* Three children, each ended and reaped. */
    pid_t last = 0;
    for (int i = 0; i < 3; i++) {
        last = fork();
        if (last == 0)
            _exit(0);
        CHECK(waitpid(last, 0, 0) == last, "wait");
    }
    slurp("/proc/stat", stat, sizeof stat);
    CHECK(stat_field(stat, "processes") == forks + 3, "three forks more");
    slurp("/proc/loadavg", buf, sizeof buf);
    unsigned l[6], running, total, lastpid;
    k = sscanf(buf, "%u.%2u %u.%2u %u.%2u %u/%u %u\n", &l[0], &l[1], &l[2], &l[3], &l[4], &l[5],
               &running, &total, &lastpid);
    CHECK(k == 9 && running == 1 && total == 1 && lastpid == (unsigned)last,
          "loadavg %s (last pid %d)", buf, last);
    CHECK(l[0] * 100 + l[1] <= 100 && l[2] * 100 + l[3] <= 100 && l[4] * 100 + l[5] <= 100,
          "at most 1.00 on one processor: %s", buf);
    struct sysinfo si;
    CHECK(sysinfo(&si) == 0 && si.procs == 1 && si.mem_unit == 4096 && si.totalram > 0 &&
              si.freeram > 0 && si.freeram < si.totalram && si.loads[0] <= 65536 &&
              si.loads[1] <= 65536 && si.loads[2] <= 65536 && si.uptime >= (long)up - 1,
          "sysinfo procs %d unit %u ram %lu/%lu loads %lu", si.procs, si.mem_unit, si.freeram,
          si.totalram, si.loads[0]);
    ERR(syscall(SYS_sysinfo, (void *)8), EFAULT);

    /* A child waiting, then a zombie. */
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    pid_t c = fork();
    if (c == 0) {
        char x;
        read(p[0], &x, 1);
        _exit(7);
    }
    char path[64];
    status_when(c, "S (sleeping)", buf, sizeof buf);
    CHECK(strcmp(buf, status_text(c, 1, "S (sleeping)", want)) == 0, "waiting child: %s", buf);
    snprintf(path, sizeof path, "/proc/%d/mounts", c);
    same(path, "stet / tmpfs rw 0 0\nproc /proc proc rw,nosuid,nodev,noexec 0 0\n");
    slurp("/proc/stat", stat, sizeof stat);
    CHECK(stat_field(stat, "procs_running") == 1, "the waiting child is not running");
    slurp("/proc/loadavg", buf, sizeof buf);
    CHECK(strstr(buf, " 1/2 "), "loadavg %s", buf);
    CHECK(sysinfo(&si) == 0 && si.procs == 2, "sysinfo procs %d", si.procs);
    write(p[1], "x", 1);
    status_when(c, "Z (zombie)", buf, sizeof buf);
    CHECK(strcmp(buf, status_text(c, 1, "Z (zombie)", want)) == 0, "zombie: %s", buf);
    int ws;
    CHECK(waitpid(c, &ws, 0) == c && WIFEXITED(ws) && WEXITSTATUS(ws) == 7, "reaped");
    snprintf(path, sizeof path, "/proc/%d/status", c);
    ERR(open(path, O_RDONLY), ENOENT);
    close(p[0]);
    close(p[1]);
}

static void statfs_checks(void)
{
    struct statfs s, t;
    CHECK(statfs("/", &s) == 0, "statfs /");
    CHECK(s.f_type == TMPFS && s.f_bsize == 4096 && s.f_namelen == 255 && s.f_frsize == 4096 &&
              s.f_flags == 0x20,
          "/: type %lx bsize %ld namelen %ld frsize %ld flags %lx", (long)s.f_type,
          (long)s.f_bsize, (long)s.f_namelen, (long)s.f_frsize, (long)s.f_flags);
    CHECK(s.f_blocks > 1000 && s.f_bfree <= s.f_blocks && s.f_bfree > 100 &&
              s.f_bavail <= s.f_bfree && s.f_bavail > 0 && s.f_files > s.f_ffree &&
              s.f_ffree > 1000,
          "/: blocks %lu free %lu avail %lu files %lu ffree %lu", (long)s.f_blocks,
          (long)s.f_bfree, (long)s.f_bavail, (long)s.f_files, (long)s.f_ffree);
    /* 64 KiB written take 16 blocks; unlinked, they are back. */
    static char data[65536];
    memset(data, 'x', sizeof data);
    int fd = open("/tmp/statfs.data", O_CREAT | O_WRONLY | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, data, sizeof data) == sizeof data, "write");
    CHECK(fstatfs(fd, &t) == 0 && t.f_type == TMPFS, "fstatfs of a file");
    CHECK(t.f_bfree == s.f_bfree - 16 && t.f_bavail == s.f_bavail - 16 && t.f_blocks == s.f_blocks,
          "16 blocks fewer: %lu -> %lu, %lu -> %lu", (long)s.f_bfree, (long)t.f_bfree,
          (long)s.f_bavail, (long)t.f_bavail);
    close(fd);
    CHECK(unlink("/tmp/statfs.data") == 0, "unlink");
    CHECK(statfs("/tmp", &t) == 0 && t.f_type == TMPFS && t.f_bfree == s.f_bfree, "and back");
    CHECK(statfs("/dev/null", &t) == 0 && t.f_type == TMPFS, "/dev/null");
    const char *in_proc[] = {"/proc", "/proc/", "/proc/self/status", "/proc/1", "/proc/sys/kernel",
                             "/proc/sys/fs/nr_open", "/etc/mtab", "/proc/1/cmdline"};
    for (unsigned i = 0; i < sizeof in_proc / sizeof in_proc[0]; i++) {
        CHECK(statfs(in_proc[i], &t) == 0 && t.f_type == PROCFS && t.f_blocks == 0 &&
                  t.f_bsize == 4096 && t.f_namelen == 255 && t.f_flags == (0x20 | 2 | 4 | 8),
              "%s: type %lx", in_proc[i], (long)t.f_type);
    }
    fd = open("/proc/1/stat", O_RDONLY);
    CHECK(fstatfs(fd, &t) == 0 && t.f_type == PROCFS, "fstatfs /proc/1/stat");
    close(fd);
    fd = open("/proc", O_RDONLY | O_DIRECTORY);
    CHECK(fstatfs(fd, &t) == 0 && t.f_type == PROCFS, "fstatfs /proc");
    close(fd);
    int p[2];
    CHECK(pipe(p) == 0 && fstatfs(p[0], &t) == 0 && t.f_type == PIPEFS && t.f_bsize == 4096,
          "a pipe: %lx", (long)t.f_type);
    close(p[0]);
    close(p[1]);
    CHECK(fstatfs(0, &t) == 0 && t.f_type == TMPFS, "the terminal");
    ERR(statfs("/nonexistent", &t), ENOENT);
    ERR(statfs("", &t), ENOENT);
    ERR(syscall(SYS_statfs, "/", (void *)0), EFAULT);
    ERR(syscall(SYS_statfs, (void *)8, &t), EFAULT);
    ERR(syscall(SYS_statfs, "/", (void *)-4096L), EFAULT);
    ERR(fstatfs(99, &t), EBADF);
    ERR(syscall(SYS_fstatfs, -1, &t), EBADF);
    ERR(syscall(SYS_fstatfs, 0, (void *)8), EFAULT);
}

/* The kernel log: what unixd wrote, read all at once or bit by bit. */
static void kernel_log(void)
{
    static char all[70000], part[256];
    CHECK(klogctl(10, 0, 0) == 65536, "SIZE_BUFFER");
    int n = klogctl(3, all, sizeof all);
    CHECK(n > 100 && all[n - 1] == '\n', "READ_ALL %d", n);
    all[n < 0 ? 0 : n] = 0;
    unsigned s, us;
    char text[128];
    CHECK(sscanf(all, "<5>[%5u.%6u] %127[^\n]", &s, &us, text) == 3 &&
              strcmp(text, "Linux version 6.1.0-stet (stet@stet) (rustc) #1 Stet") == 0 &&
              all[3] == '[' && all[9] == '.' && all[16] == ']',
          "first line %.80s", all);
    CHECK(strstr(all, "\n<6>[") && strstr(all, "] unixd: ") && strstr(all, " KiB of file data\n"),
          "the boot line");
    CHECK(klogctl(9, 0, 0) == n, "nothing read yet: SIZE_UNREAD %d", klogctl(9, 0, 0));
    /* READ takes bytes in order. */
    CHECK(klogctl(2, part, 10) == 10 && memcmp(part, all, 10) == 0, "READ");
    CHECK(klogctl(9, 0, 0) == n - 10, "10 read");
    /* A small buffer: only the newest whole lines that fit. */
    int m = klogctl(3, part, 100);
    CHECK(m >= 0 && m <= 100 && (m == 0 || (part[m - 1] == '\n' && part[0] == '<')) &&
              memcmp(part, all + n - m, m) == 0,
          "READ_ALL of 100: %d", m);
    CHECK(klogctl(3, all, 0) == 0 && klogctl(2, all, 0) == 0, "zero lengths");
    ERR(klogctl(3, 0, 10), EINVAL);
    ERR(klogctl(3, all, -1), EINVAL);
    ERR(klogctl(2, 0, 10), EINVAL);
    ERR(klogctl(3, (char *)8, 100), EFAULT);
    ERR(klogctl(11, 0, 0), EINVAL);
    ERR(klogctl(-1, 0, 0), EINVAL);
    ERR(klogctl(8, 0, 0), EINVAL);
    ERR(klogctl(8, 0, 9), EINVAL);
    CHECK(klogctl(8, 0, 7) == 0 && klogctl(6, 0, 0) == 0 && klogctl(7, 0, 0) == 0 &&
              klogctl(8, 0, 4) == 0 && klogctl(0, 0, 0) == 0 && klogctl(1, 0, 0) == 0,
          "console actions");
    /* A process a signal ends is logged. */
    pid_t c = fork();
    if (c == 0) {
        kill(getpid(), SIGKILL);
        _exit(0);
    }
    int ws;
    CHECK(waitpid(c, &ws, 0) == c && WIFSIGNALED(ws) && WTERMSIG(ws) == 9, "killed");
    n = klogctl(3, all, sizeof all);
    all[n < 0 ? 0 : n] = 0;
    char want[64];
    snprintf(want, sizeof want, "] pid %d (procfs) ended by signal 9\n", c);
    CHECK(strstr(all, want) && strstr(all, "\n<6>["), "%s logged", want);
    /* After CLEAR, READ_ALL has only what comes next; READ still has the
     * rest. */
    CHECK(klogctl(5, 0, 0) == 0 && klogctl(3, all, sizeof all) == 0, "CLEAR");
    int unread = klogctl(9, 0, 0);
    CHECK(unread == n - 10, "unread %d", unread);
    static char rest[70000];
    CHECK(klogctl(2, rest, sizeof rest) == unread && unread > 0 &&
              memcmp(rest, all + 10, unread) == 0 && klogctl(9, 0, 0) == 0,
          "READ the rest");
    /* READ waits for the next line. */
    c = fork();
    if (c == 0) {
        nap(100);
        kill(getpid(), SIGKILL);
        _exit(0);
    }
    n = klogctl(2, rest, sizeof rest);
    rest[n < 0 ? 0 : n] = 0;
    snprintf(want, sizeof want, "] pid %d (procfs) ended by signal 9\n", c);
    CHECK(n > 0 && strncmp(rest, "<6>[", 4) == 0 && strstr(rest, want), "waited for %s", rest);
    CHECK(waitpid(c, &ws, 0) == c, "reaped");
    n = klogctl(4, all, sizeof all);
    all[n < 0 ? 0 : n] = 0;
    CHECK(n > 0 && strstr(all, want) && klogctl(3, all, sizeof all) == 0, "READ_CLEAR");
}

/* Runs busybox with these arguments → its exit status. */
static int busybox(char *const argv[])
{
    printf("procfs: running");
    for (int i = 0; argv[i]; i++)
        printf(" %s", argv[i]);
    printf("\n");
    fflush(stdout);
    pid_t c = fork();
    if (c == 0) {
        execv("/bin/busybox", argv);
        _exit(127);
    }
    int ws = -1;
    waitpid(c, &ws, 0);
    CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "%s exit status %#x", argv[1], ws);
    return ws;
}

int main(void)
{
    setvbuf(stdout, 0, _IONBF, 0);
    uname_and_links();
    fixed_files();
    cpuinfo();
    processes();
    statfs_checks();
    busybox((char *[]){"busybox", "mount", 0});
    busybox((char *[]){"busybox", "df", 0});
    busybox((char *[]){"busybox", "uptime", 0});
    busybox((char *[]){"busybox", "dmesg", 0});
    busybox((char *[]){"busybox", "top", "-n", "1", "-b", 0});
    busybox((char *[]){"busybox", "ps", "aux", 0});
    kernel_log();
    if (failures)
        printf("procfs: %d FAILED\n", failures);
    else
        printf("procfs: all ok\n");
    return failures != 0;
}
