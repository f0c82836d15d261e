/* Capabilities, host identity and the calls about the system as a whole,
 * as Linux's man pages describe them: capget/capset (dropping to a subset,
 * EPERM beyond it, the bounding set, set*id clearing them, privilege
 * checks honouring them), sethostname/setdomainname and uname, reboot's
 * magic numbers, ioprio_get/ioprio_set, sysfs, ustat, vhangup. Prints
 * exact lines and "sysmisc: all ok". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("sysmisc: FAILED line %d: ", __LINE__);                                         \
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

#define BAD ((void *)8)

/* <linux/capability.h>, which musl's headers do not have. */
#define _LINUX_CAPABILITY_VERSION_3 0x20080522
#define CAP_CHOWN 0
#define CAP_KILL 5
#define CAP_SETPCAP 8
#define CAP_NET_RAW 13
#ifndef PR_CAPBSET_READ
#define PR_CAPBSET_READ 23
#define PR_CAPBSET_DROP 24
#endif
struct __user_cap_header_struct {
    uint32_t version;
    int pid;
};
struct __user_cap_data_struct {
    uint32_t effective, permitted, inheritable;
};

static struct __user_cap_header_struct hdr;
static struct __user_cap_data_struct data[2];

static long capget_(int pid) {
    hdr.version = _LINUX_CAPABILITY_VERSION_3;
    hdr.pid = pid;
    memset(data, 0, sizeof data);
    return syscall(SYS_capget, &hdr, data);
}

static long capset_(uint64_t e, uint64_t p, uint64_t i) {
    hdr.version = _LINUX_CAPABILITY_VERSION_3;
    hdr.pid = 0;
    data[0].effective = (uint32_t)e;
    data[1].effective = (uint32_t)(e >> 32);
    data[0].permitted = (uint32_t)p;
    data[1].permitted = (uint32_t)(p >> 32);
    data[0].inheritable = (uint32_t)i;
    data[1].inheritable = (uint32_t)(i >> 32);
    return syscall(SYS_capset, &hdr, data);
}

static void print_caps(const char *what) {
    CHECK(capget_(0) == 0, "capget");
    printf("sysmisc: %s: effective %#x %#x permitted %#x %#x inheritable %#x\n", what,
           data[1].effective, data[0].effective, data[1].permitted, data[0].permitted,
           data[0].inheritable);
}

/* Runs f in a child; its exit status. */
static int in_child(void (*f)(void)) {
    pid_t c = fork();
    if (c == 0) {
        f();
        _exit(failures ? 1 : 0);
    }
    int st = -1;
    waitpid(c, &st, 0);
    return st;
}

#define CAP1 ((1ull << CAP_NET_RAW) | (1ull << CAP_CHOWN) | (1ull << CAP_SETPCAP))

static void dropping(void) {
    CHECK(capset_(CAP1, CAP1, CAP1) == 0, "capset to a subset");
    print_caps("dropped to a subset");
    CHECK(prctl(PR_CAPBSET_DROP, CAP_KILL) == 0, "PR_CAPBSET_DROP");
    printf("sysmisc: bounding set: kill %d chown %d\n", (int)prctl(PR_CAPBSET_READ, CAP_KILL),
           (int)prctl(PR_CAPBSET_READ, CAP_CHOWN));
    REFUSED(prctl(PR_CAPBSET_READ, 41), EINVAL);
    REFUSED(prctl(PR_CAPBSET_DROP, -1), EINVAL);
    uint64_t kill = 1ull << CAP_KILL;
    REFUSED(capset_(CAP1 | kill, CAP1, CAP1), EPERM);  /* effective not in permitted */
    REFUSED(capset_(CAP1, CAP1 | kill, CAP1), EPERM);  /* permitted beyond the old */
    REFUSED(capset_(CAP1, CAP1, CAP1 | kill), EPERM);  /* inheritable beyond the bounding set */
    hdr.version = 0;
    REFUSED(syscall(SYS_capset, &hdr, data), EINVAL);
    printf("sysmisc: bad version answered %#x\n", hdr.version);
    hdr.version = _LINUX_CAPABILITY_VERSION_3;
    hdr.pid = 1;
    REFUSED(syscall(SYS_capset, &hdr, data), EPERM);
    hdr.pid = 0;
    REFUSED(syscall(SYS_capset, BAD, data), EFAULT);
    REFUSED(syscall(SYS_capset, &hdr, BAD), EFAULT);
    /* Still root, but without CAP_SYS_TIME, CAP_SYS_ADMIN, CAP_SYS_BOOT,
     * CAP_SYS_NICE, CAP_DAC_OVERRIDE: refused as Linux refuses them. */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    REFUSED(clock_settime(CLOCK_REALTIME, &now), EPERM);
    struct timeval tv = {now.tv_sec, 0};
    REFUSED(settimeofday(&tv, NULL), EPERM);
    REFUSED(sethostname("x", 1), EPERM);
    REFUSED(syscall(SYS_reboot, 0xfee1dead, 672274793, 0x89abcdef, 0), EPERM);
    REFUSED(syscall(SYS_ioprio_set, 1, 0, 1 << 13), EPERM);
    /* CAP_CHOWN was kept; CAP_DAC_OVERRIDE was not. */
    CHECK(chown("/tmp/sysmisc-owned", 1000, 1000) == 0, "chown with CAP_CHOWN");
    REFUSED(open("/tmp/sysmisc-owned", O_RDONLY), EACCES);
    /* Dropping the rest leaves nothing to raise again. */
    CHECK(capset_(0, 0, 0) == 0, "drop all");
    REFUSED(capset_(1, 1, 0), EPERM);
    REFUSED(chown("/tmp/sysmisc-owned", 0, 0), EPERM);
    print_caps("dropped all");
}

static void becoming_a_user(void) {
    CHECK(setresuid(0, 1000, 0) == 0, "setresuid");
    print_caps("effective user 1000");
    CHECK(setresuid(-1, 0, -1) == 0, "back to 0");
    print_caps("effective user 0 again");
    CHECK(setuid(1000) == 0, "setuid");
    print_caps("user 1000");
    REFUSED(capset_(1, 1, 0), EPERM);
    /* And the calls of this cluster refuse a user. */
    REFUSED(sethostname("x", 1), EPERM);
    REFUSED(setdomainname("x", 1), EPERM);
    REFUSED(syscall(SYS_reboot, 0xfee1dead, 672274793, 0, 0), EPERM);
    REFUSED(syscall(SYS_reboot, 0, 0, 0, 0), EPERM); /* EPERM before the magic */
    REFUSED(syscall(SYS_vhangup), EPERM);
    REFUSED(syscall(SYS_ioprio_set, 1, 0, (1 << 13) | 3), EPERM); /* real-time class */
    REFUSED(syscall(SYS_ioprio_set, 1, 1, (2 << 13) | 3), EPERM); /* pid 1 is root's */
    CHECK(syscall(SYS_ioprio_set, 1, 0, (3 << 13)) == 0, "idle class by a user");
    printf("sysmisc: user's own ioprio %ld\n", syscall(SYS_ioprio_get, 1, 0));
}

static void capabilities(void) {
    print_caps("root");
    hdr.version = 0x12345;
    REFUSED(syscall(SYS_capget, &hdr, data), EINVAL);
    printf("sysmisc: capget bad version answered %#x\n", hdr.version);
    hdr.version = 0x12345;
    CHECK(syscall(SYS_capget, &hdr, NULL) == 0, "capget with no data");
    hdr.version = _LINUX_CAPABILITY_VERSION_3;
    hdr.pid = -1;
    REFUSED(syscall(SYS_capget, &hdr, data), EINVAL);
    REFUSED(capget_(99999), ESRCH);
    REFUSED(syscall(SYS_capget, BAD, data), EFAULT);
    CHECK(capget_(1) == 0 && data[0].effective == 0xffffffff, "capget of pid 1");
    close(open("/tmp/sysmisc-owned", O_CREAT | O_WRONLY, 0600));
    printf("sysmisc: child that dropped: status %d\n", in_child(dropping));
    printf("sysmisc: child that became a user: status %d\n", in_child(becoming_a_user));
    print_caps("parent still");
    unlink("/tmp/sysmisc-owned");
}

static void names(void) {
    struct utsname u;
    CHECK(sethostname("stet-test", 9) == 0, "sethostname");
    CHECK(setdomainname("example.org", 11) == 0, "setdomainname");
    uname(&u);
    printf("sysmisc: uname %s %s %s domain %s\n", u.sysname, u.nodename, u.machine,
           u.domainname);
    char b[80] = {0};
    int fd = open("/proc/sys/kernel/hostname", O_RDONLY);
    CHECK(fd >= 0 && read(fd, b, sizeof b - 1) > 0, "read hostname");
    close(fd);
    printf("sysmisc: /proc/sys/kernel/hostname %s", b);
    char name65[65];
    memset(name65, 'a', 65);
    REFUSED(sethostname(name65, 65), EINVAL);
    REFUSED(syscall(SYS_sethostname, "x", -1), EINVAL);
    REFUSED(sethostname(BAD, 4), EFAULT);
    REFUSED(setdomainname(name65, 65), EINVAL);
    CHECK(sethostname(name65, 64) == 0, "64 bytes");
    uname(&u);
    printf("sysmisc: 64-byte name kept: %d\n", (int)strlen(u.nodename));
    /* The empty name is a name. */
    CHECK(setdomainname("", 0) == 0, "empty domain");
    uname(&u);
    printf("sysmisc: empty domain [%s]\n", u.domainname);
    CHECK(sethostname("stet", 4) == 0 && setdomainname("(none)", 6) == 0, "restore");
}

static void reboot_(void) {
    REFUSED(syscall(SYS_reboot, 0xfee1dead, 1, 0x89abcdef, 0), EINVAL);
    REFUSED(syscall(SYS_reboot, 1, 672274793, 0x89abcdef, 0), EINVAL);
    REFUSED(syscall(SYS_reboot, 0xfee1dead, 672274793, 0x12345, 0), EINVAL);
    printf("sysmisc: reboot CAD_ON %ld CAD_OFF %ld\n",
           syscall(SYS_reboot, 0xfee1dead, 672274793, 0x89abcdef, 0),
           syscall(SYS_reboot, 0xfee1dead, 85072278, 0, 0));
    /* Stopping the machine is not the UNIX personality's to do. */
    REFUSED(syscall(SYS_reboot, 0xfee1dead, 672274793, 0x4321fedc, 0), EPERM);
}

static void ioprio_child(void) {
    printf("sysmisc: child inherits ioprio %ld\n", syscall(SYS_ioprio_get, 1, 0));
}

static void ioprio(void) {
    printf("sysmisc: ioprio at start %ld\n", syscall(SYS_ioprio_get, 1, 0));
    CHECK(syscall(SYS_ioprio_set, 1, 0, (2 << 13) | 4) == 0, "BE 4");
    REFUSED(syscall(SYS_ioprio_set, 1, 0, (2 << 13) | 8), EINVAL);
    REFUSED(syscall(SYS_ioprio_set, 1, 0, (0 << 13) | 1), EINVAL);
    REFUSED(syscall(SYS_ioprio_set, 1, 0, (4 << 13)), EINVAL);
    REFUSED(syscall(SYS_ioprio_set, 4, 0, (2 << 13)), EINVAL);
    REFUSED(syscall(SYS_ioprio_get, 0, 0), EINVAL);
    REFUSED(syscall(SYS_ioprio_get, 1, 99999), ESRCH);
    REFUSED(syscall(SYS_ioprio_set, 1, -1, (2 << 13)), ESRCH);
    printf("sysmisc: ioprio after BE 4 and bad ones %ld\n", syscall(SYS_ioprio_get, 1, 0));
    in_child(ioprio_child);
    printf("sysmisc: ioprio of the group %ld of the user %ld\n", syscall(SYS_ioprio_get, 2, 0),
           syscall(SYS_ioprio_get, 3, 0));
    CHECK(syscall(SYS_ioprio_set, 1, getpid(), (1 << 13) | 7) == 0, "RT 7 by root");
    printf("sysmisc: real-time %ld\n", syscall(SYS_ioprio_get, 1, getpid()));
    CHECK(syscall(SYS_ioprio_set, 1, 0, 0) == 0, "NONE");
}

static void fs_types(void) {
    char b[32] = {0};
    long n = syscall(SYS_sysfs, 3);
    long p = syscall(SYS_sysfs, 1, "proc");
    long t = syscall(SYS_sysfs, 1, "tmpfs");
    CHECK(syscall(SYS_sysfs, 2, 1, b) == 0, "sysfs 2");
    printf("sysmisc: sysfs %ld types, proc %ld, tmpfs %ld, index 1 %s\n", n, p, t, b);
    REFUSED(syscall(SYS_sysfs, 1, "ext0"), EINVAL);
    REFUSED(syscall(SYS_sysfs, 4, 0, b), EINVAL);
    REFUSED(syscall(SYS_sysfs, 1, BAD), EFAULT);
    REFUSED(syscall(SYS_sysfs, 2, 1000, b), EINVAL);
    REFUSED(syscall(SYS_sysfs, 2, 0, BAD), EFAULT);
    struct stat st;
    stat("/", &st);
    struct {
        int tfree;
        unsigned long tinode;
        char fname[6], fpack[6];
    } u;
    CHECK(syscall(SYS_ustat, (unsigned)st.st_dev, &u) == 0, "ustat");
    printf("sysmisc: ustat of / ok: free blocks > 0 %d, free inodes > 0 %d\n", u.tfree > 0,
           u.tinode > 0);
    REFUSED(syscall(SYS_ustat, (unsigned)-1, &u), EINVAL);
    REFUSED(syscall(SYS_ustat, (unsigned)st.st_dev, BAD), EFAULT);
}

static void show(const char *path) {
    char b[160] = {0};
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0, "open %s", path);
    CHECK(read(fd, b, sizeof b - 1) > 0, "read %s", path);
    close(fd);
    printf("sysmisc: %s: %s", path, b);
}

static long put(const char *path, const char *v) {
    int fd = open(path, O_WRONLY | O_TRUNC);
    if (fd < 0)
        return -1;
    long n = write(fd, v, strlen(v));
    int e = errno;
    close(fd);
    errno = e;
    return n;
}

static void sysctl_user(void) {
    CHECK(setuid(1000) == 0, "setuid");
    printf("sysmisc: user: syslog SIZE_BUFFER %ld\n", syscall(SYS_syslog, 10, NULL, 0));
    char b[16];
    REFUSED(syscall(SYS_syslog, 4, b, 16), EPERM); /* READ_CLEAR is root's */
    REFUSED(syscall(SYS_syslog, 100, b, 16), EPERM); /* before EINVAL */
    REFUSED(put("/proc/sys/kernel/core_pattern", "x"), EACCES);
    int fd = open("/dev/urandom", O_RDONLY);
    int n = 0;
    CHECK(ioctl(fd, 0x80045200, &n) == 0, "RNDGETENTCNT by a user");
    REFUSED(ioctl(fd, 0x5204), EPERM); /* RNDZAPENTCNT */
    close(fd);
}

static void sysctl_user_restricted(void) {
    CHECK(setuid(1000) == 0, "setuid");
    char b[16];
    REFUSED(syscall(SYS_syslog, 10, NULL, 0), EPERM);
    REFUSED(syscall(SYS_syslog, 3, b, 16), EPERM);
}

static void sysctl_files(void) {
    show("/proc/sys/kernel/shmmax");
    show("/proc/sys/kernel/shmall");
    show("/proc/sys/kernel/shmmni");
    show("/proc/sys/kernel/msgmax");
    show("/proc/sys/kernel/msgmnb");
    show("/proc/sys/kernel/msgmni");
    show("/proc/sys/kernel/sem");
    show("/proc/sys/kernel/core_pattern");
    show("/proc/sys/kernel/dmesg_restrict");
    show("/proc/sys/kernel/random/entropy_avail");
    CHECK(put("/proc/sys/kernel/core_pattern", "|/bin/false %p\n") == 15, "core_pattern");
    show("/proc/sys/kernel/core_pattern");
    CHECK(put("/proc/sys/kernel/hostname", "viaproc\n") == 8, "hostname");
    struct utsname u;
    uname(&u);
    printf("sysmisc: uname after writing the file: %s\n", u.nodename);
    REFUSED(put("/proc/sys/kernel/dmesg_restrict", "2"), EINVAL);
    REFUSED(put("/proc/sys/kernel/dmesg_restrict", "x"), EINVAL);
    REFUSED(put("/proc/sys/kernel/msgmax", "1"), EACCES);
    /* The shared-memory limits, as root sets them. */
    CHECK(put("/proc/sys/kernel/shmmax", "8192\n") == 5, "shmmax");
    struct shminfo si;
    CHECK(shmctl(0, IPC_INFO, (struct shmid_ds *)&si) >= 0, "IPC_INFO");
    int r = shmget(IPC_PRIVATE, 8193, 0600);
    printf("sysmisc: shmmax 8192: IPC_INFO %lu, shmget of 8193 %d errno %d\n", si.shmmax, r,
           errno);
    CHECK(put("/proc/sys/kernel/shmall", "1") == 1, "shmall");
    r = shmget(IPC_PRIVATE, 8192, 0600);
    printf("sysmisc: shmall 1: shmget of 2 pages %d errno %d\n", r, errno);
    CHECK(put("/proc/sys/kernel/shmmni", "0") == 1, "shmmni");
    r = shmget(IPC_PRIVATE, 1, 0600);
    printf("sysmisc: shmmni 0: shmget %d errno %d\n", r, errno);
    REFUSED(put("/proc/sys/kernel/shmmni", "32769"), EINVAL);
    REFUSED(put("/proc/sys/kernel/shmmax", "-1"), EINVAL);
    CHECK(put("/proc/sys/kernel/shmmax", "18446744073692774399") == 20, "shmmax back");
    CHECK(put("/proc/sys/kernel/shmall", "18446744073692774399") == 20, "shmall back");
    CHECK(put("/proc/sys/kernel/shmmni", "4096") == 4, "shmmni back");
    show("/proc/sys/kernel/shmmax");
    CHECK(put("/proc/sys/kernel/dmesg_restrict", "0\n") == 2, "dmesg_restrict 0");
    show("/proc/sys/kernel/dmesg_restrict");
    printf("sysmisc: user child %d\n", in_child(sysctl_user));
    CHECK(put("/proc/sys/kernel/dmesg_restrict", "1") == 1, "dmesg_restrict 1");
    printf("sysmisc: restricted user child %d\n", in_child(sysctl_user_restricted));
    printf("sysmisc: root: syslog SIZE_BUFFER %ld\n", syscall(SYS_syslog, 10, NULL, 0));
    int fd = open("/dev/random", O_RDONLY);
    int n = 0;
    CHECK(ioctl(fd, 0x80045200, &n) == 0, "RNDGETENTCNT");
    printf("sysmisc: RNDGETENTCNT %d, RNDZAPENTCNT by root %d\n", n, ioctl(fd, 0x5204));
    REFUSED(ioctl(fd, 0x80045200, BAD), EFAULT);
    close(fd);
    fd = open("/dev/null", O_RDONLY);
    REFUSED(ioctl(fd, 0x80045200, &n), ENOTTY);
    close(fd);
    CHECK(put("/proc/sys/kernel/core_pattern", "core") == 4, "restore");
    CHECK(sethostname("stet", 4) == 0, "restore");
}

static long adj(struct timex *t) { return syscall(SYS_adjtimex, t); }

static void adjtimex_user(void) {
    CHECK(setuid(1000) == 0, "setuid");
    struct timex t = {0};
    printf("sysmisc: user reads adjtimex: %ld\n", adj(&t));
    t.modes = ADJ_OFFSET_SS_READ;
    CHECK(adj(&t) >= 0, "ADJ_OFFSET_SS_READ by a user");
    t.modes = ADJ_MAXERROR;
    REFUSED(adj(&t), EPERM);
    t.modes = ADJ_OFFSET_SINGLESHOT;
    REFUSED(adj(&t), EPERM);
}

static void adjtime_(void) {
    struct timex t = {0};
    long r = adj(&t);
    printf("sysmisc: adjtimex read %ld status %#x tick %ld constant %ld maxerror %ld tolerance %ld "
           "precision %ld\n",
           r, t.status, t.tick, t.constant, t.maxerror, t.tolerance, t.precision);
    memset(&t, 0, sizeof t);
    t.modes = 0x8000;
    REFUSED(adj(&t), EINVAL);
    t.modes = ADJ_TICK;
    t.tick = 8999;
    REFUSED(adj(&t), EINVAL);
    t.tick = 11001;
    REFUSED(adj(&t), EINVAL);
    REFUSED(adj(BAD), EFAULT);
    t.modes = ADJ_STATUS | ADJ_OFFSET | ADJ_FREQUENCY | ADJ_TIMECONST;
    t.status = STA_PLL;
    t.offset = 100;
    t.freq = 3 << 16;
    t.constant = 1;
    r = adj(&t);
    memset(&t, 0, sizeof t);
    adj(&t);
    printf("sysmisc: after setting: %ld status %#x offset %ld freq %ld constant %ld\n", r, t.status,
           t.offset, t.freq, t.constant);
    t.modes = ADJ_OFFSET_SINGLESHOT;
    t.offset = 250;
    adj(&t);
    t.modes = ADJ_OFFSET_SS_READ;
    adj(&t);
    printf("sysmisc: adjtime offset %ld\n", t.offset);
    t.modes = ADJ_OFFSET_SINGLESHOT;
    t.offset = 0;
    adj(&t);
    t.modes = ADJ_STATUS | ADJ_FREQUENCY;
    t.status = STA_UNSYNC;
    t.freq = 0;
    printf("sysmisc: back to unsynchronised %ld\n", adj(&t));
    printf("sysmisc: adjtimex user child %d\n", in_child(adjtimex_user));
    REFUSED(syscall(SYS_clock_adjtime, CLOCK_MONOTONIC, &t), EOPNOTSUPP);
    REFUSED(syscall(SYS_clock_adjtime, 10, &t), EINVAL);
    REFUSED(syscall(SYS_clock_adjtime, CLOCK_REALTIME, BAD), EFAULT);
    t.modes = 0;
    printf("sysmisc: clock_adjtime read %ld\n", syscall(SYS_clock_adjtime, CLOCK_REALTIME, &t));
}

/* The line of /proc/sysvipc/<kind> whose key is key, and the header. */
static void sysvipc_line(const char *kind, int key, char *header, char *line) {
    char path[64], b[256];
    snprintf(path, sizeof path, "/proc/sysvipc/%s", kind);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "fopen %s", path);
    if (!f)
        return;
    line[0] = 0;
    CHECK(fgets(header, 256, f) != NULL, "header");
    while (fgets(b, sizeof b, f)) {
        int k;
        if (sscanf(b, "%d", &k) == 1 && k == key)
            strcpy(line, b);
    }
    fclose(f);
}

static void sysvipc(void) {
    char h[256], l[256];
    int shm = shmget(0x5353, 10000, IPC_CREAT | 0640);
    void *at = shmat(shm, NULL, 0);
    sysvipc_line("shm", 0x5353, h, l);
    printf("sysmisc: %s", h);
    int key, id, cpid, lpid;
    unsigned perms, uid, gid, cuid, cgid;
    unsigned long size, nattch;
    CHECK(sscanf(l, "%d %d %o %lu %d %d %lu %u %u %u %u", &key, &id, &perms, &size, &cpid, &lpid,
                 &nattch, &uid, &gid, &cuid, &cgid) == 11,
          "shm line [%s]", l);
    printf("sysmisc: shm id ok %d perms %o size %lu cpid ok %d lpid ok %d nattch %lu uid %u gid %u\n",
           id == shm, perms, size, cpid == getpid(), lpid == getpid(), nattch, uid, gid);
    shmdt(at);
    shmctl(shm, IPC_RMID, NULL);
    int sem = semget(0x5354, 3, IPC_CREAT | 0600);
    sysvipc_line("sem", 0x5354, h, l);
    printf("sysmisc: %s", h);
    unsigned nsems;
    CHECK(sscanf(l, "%d %d %o %u %u %u", &key, &id, &perms, &nsems, &uid, &gid) == 6, "sem line");
    printf("sysmisc: sem id ok %d perms %o nsems %u\n", id == sem, perms, nsems);
    semctl(sem, 0, IPC_RMID);
    int q = msgget(0x5355, IPC_CREAT | 0620);
    struct {
        long type;
        char text[5];
    } m = {1, "abcd"};
    msgsnd(q, &m, 5, 0);
    msgsnd(q, &m, 3, 0);
    sysvipc_line("msg", 0x5355, h, l);
    printf("sysmisc: %s", h);
    unsigned long cbytes, qnum;
    int lspid;
    CHECK(sscanf(l, "%d %d %o %lu %lu %d", &key, &id, &perms, &cbytes, &qnum, &lspid) == 6,
          "msg line");
    printf("sysmisc: msg id ok %d perms %o cbytes %lu qnum %lu lspid ok %d\n", id == q, perms,
           cbytes, qnum, lspid == getpid());
    msgctl(q, IPC_RMID, NULL);
    sysvipc_line("msg", 0x5355, h, l);
    printf("sysmisc: removed queue listed: %d\n", l[0] != 0);
}

/* A POSIX message queue's absolute deadline after the wall clock was set
 * a year on: measured from the clock as it is, not as it was at boot. */
static void mq_deadline_after_clock_change(void) {
    struct timespec now, later, m0, m1, d;
    clock_gettime(CLOCK_REALTIME, &now);
    later = now;
    later.tv_sec += 365 * 86400;
    CHECK(clock_settime(CLOCK_REALTIME, &later) == 0, "clock_settime");
    mqd_t q = mq_open("/sysmisc", O_CREAT | O_RDWR, 0600, NULL);
    CHECK(q != (mqd_t)-1, "mq_open");
    clock_gettime(CLOCK_REALTIME, &d);
    d.tv_nsec += 50000000;
    if (d.tv_nsec >= 1000000000) {
        d.tv_sec++;
        d.tv_nsec -= 1000000000;
    }
    clock_gettime(CLOCK_MONOTONIC, &m0);
    char buf[8192];
    REFUSED(mq_timedreceive(q, buf, sizeof buf, NULL, &d), ETIMEDOUT);
    clock_gettime(CLOCK_MONOTONIC, &m1);
    long ms = (m1.tv_sec - m0.tv_sec) * 1000 + (m1.tv_nsec - m0.tv_nsec) / 1000000;
    printf("sysmisc: mq_timedreceive 50 ms after the clock moved a year: within 1 s %d\n",
           ms >= 40 && ms < 1000);
    mq_close(q);
    mq_unlink("/sysmisc");
    clock_gettime(CLOCK_REALTIME, &now);
    now.tv_sec -= 365 * 86400;
    clock_settime(CLOCK_REALTIME, &now);
}

static volatile int hups;
static void on_hup(int s) {
    (void)s;
    hups++;
}

static void hangup_no_tty(void) {
    CHECK(setsid() > 0, "setsid");
    printf("sysmisc: vhangup without a terminal %ld\n", syscall(SYS_vhangup));
}

static void hangup_tty(void) {
    signal(SIGHUP, on_hup);
    signal(SIGTTOU, SIG_IGN);
    pid_t old = tcgetpgrp(0);
    CHECK(setpgid(0, 0) == 0, "setpgid");
    CHECK(tcsetpgrp(0, getpid()) == 0, "tcsetpgrp");
    long r = syscall(SYS_vhangup);
    printf("sysmisc: vhangup of the terminal %ld, SIGHUP %d\n", r, hups);
    tcsetpgrp(0, old);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    capabilities();
    names();
    reboot_();
    ioprio();
    fs_types();
    sysctl_files();
    adjtime_();
    sysvipc();
    mq_deadline_after_clock_change();
    printf("sysmisc: vhangup child %d\n", in_child(hangup_no_tty));
    in_child(hangup_tty);
    if (failures == 0)
        printf("sysmisc: all ok\n");
    return failures != 0;
}
