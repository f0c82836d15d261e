/* AF_UNIX sockets as Linux (man 7 unix, socket(2), ...): socketpair
 * streams, a stream server on a path and a client in another process
 * (fork) with ping-pong, SO_PEERCRED, getsockname/getpeername; datagrams
 * between named sockets with the sender's name; abstract names;
 * sequenced packets; non-blocking EAGAIN; EPIPE and SIGPIPE, MSG_NOSIGNAL;
 * shutdown; poll; socket options; sendmsg/recvmsg with iovecs and
 * MSG_TRUNC; the errors of bad arguments. Prints exact lines and
 * "unixsock: all ok" (the same lines on Linux). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int failures;
#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("unixsock: FAILED line %d: ", __LINE__);                                        \
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

static volatile int pipes_caught;
static void on_pipe(int s) {
    (void)s;
    pipes_caught++;
}

static volatile int alarms;
static void on_alarm(int s) {
    (void)s;
    alarms++;
}

static socklen_t name_of(struct sockaddr_un *a, const char *path) {
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    strcpy(a->sun_path, path);
    return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

static socklen_t abstract_of(struct sockaddr_un *a, const char *name) {
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    memcpy(a->sun_path + 1, name, strlen(name));
    return offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
}

static void pairs(void) {
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
    char b[64];
    CHECK(write(sv[0], "ping", 4) == 4, "write");
    CHECK(read(sv[1], b, sizeof b) == 4 && memcmp(b, "ping", 4) == 0, "read");
    CHECK(send(sv[1], "pong!", 5, 0) == 5, "send");
    ssize_t n = recv(sv[0], b, 3, MSG_PEEK);
    ssize_t m = recv(sv[0], b, sizeof b, 0);
    printf("unixsock: socketpair stream: peek %zd, then %zd '%.*s'\n", n, m, (int)m, b);
    struct stat st;
    CHECK(fstat(sv[0], &st) == 0, "fstat");
    int type = 0, dom = 0, acc = -1;
    socklen_t l = sizeof type;
    getsockopt(sv[0], SOL_SOCKET, SO_TYPE, &type, &l);
    l = sizeof dom;
    getsockopt(sv[0], SOL_SOCKET, SO_DOMAIN, &dom, &l);
    l = sizeof acc;
    getsockopt(sv[0], SOL_SOCKET, SO_ACCEPTCONN, &acc, &l);
    printf("unixsock: fstat S_ISSOCK %d, SO_TYPE %d SO_DOMAIN %d SO_ACCEPTCONN %d\n",
           S_ISSOCK(st.st_mode), type, dom, acc);
    struct ucred cr;
    l = sizeof cr;
    CHECK(getsockopt(sv[0], SOL_SOCKET, SO_PEERCRED, &cr, &l) == 0, "SO_PEERCRED");
    printf("unixsock: socketpair SO_PEERCRED pid is mine %d uid %u len %u\n", cr.pid == getpid(),
           cr.uid, l);
    /* Non-blocking: nothing to read. */
    int fl = fcntl(sv[0], F_GETFL);
    fcntl(sv[0], F_SETFL, fl | O_NONBLOCK);
    REFUSED(read(sv[0], b, 1), EAGAIN);
    REFUSED(recv(sv[1], b, 1, MSG_DONTWAIT), EAGAIN);
    /* A full buffer: a non-blocking writer stops, then EAGAIN. */
    static char big[65536];
    long total = 0;
    for (;;) {
        ssize_t k = send(sv[0], big, sizeof big, MSG_DONTWAIT);
        if (k < 0)
            break;
        total += k;
    }
    printf("unixsock: full stream: errno EAGAIN %d, some sent %d\n", errno == EAGAIN, total > 0);
    struct pollfd p = {.fd = sv[0], .events = POLLIN | POLLOUT};
    poll(&p, 1, 0);
    printf("unixsock: full writer polls %#x\n", p.revents);
    p.fd = sv[1];
    poll(&p, 1, 0);
    printf("unixsock: its reader polls %#x\n", p.revents);
    /* shutdown: the reader sees the bytes, then the end. */
    close(sv[0]);
    close(sv[1]);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) == 0, "pair");
    printf("unixsock: SOCK_CLOEXEC %d SOCK_NONBLOCK %d\n", fcntl(sv[0], F_GETFD) & FD_CLOEXEC,
           (fcntl(sv[1], F_GETFL) & O_NONBLOCK) != 0);
    send(sv[0], "bye", 3, 0);
    CHECK(shutdown(sv[0], SHUT_WR) == 0, "shutdown");
    n = read(sv[1], b, sizeof b);
    m = read(sv[1], b, sizeof b);
    printf("unixsock: after SHUT_WR the reader gets %zd then %zd\n", n, m);
    REFUSED(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
    p.fd = sv[1];
    p.events = POLLIN;
    poll(&p, 1, 0);
    printf("unixsock: shut-down peer polls %#x\n", p.revents);
    REFUSED(shutdown(sv[0], 7), EINVAL);
    /* EPIPE with SIGPIPE after the peer closed. */
    close(sv[1]);
    signal(SIGPIPE, on_pipe);
    REFUSED(write(sv[0], "x", 1), EPIPE);
    REFUSED(send(sv[0], "x", 1, MSG_NOSIGNAL), EPIPE);
    printf("unixsock: SIGPIPE caught %d\n", pipes_caught);
    close(sv[0]);
    /* Sequenced packets keep their boundaries. */
    CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0, "seqpacket");
    send(sv[0], "one", 3, 0);
    send(sv[0], "three", 5, 0);
    n = recv(sv[1], b, sizeof b, 0);
    m = recv(sv[1], b, 2, 0);
    printf("unixsock: seqpacket records %zd and %zd (truncated)\n", n, m);
    close(sv[0]);
    n = recv(sv[1], b, sizeof b, 0);
    printf("unixsock: seqpacket after the peer closed: %zd\n", n);
    close(sv[1]);
    /* A signal ends a waiting recv (no SA_RESTART): EINTR. */
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "pair");
    struct sigaction sa = {.sa_handler = on_alarm};
    sigaction(SIGALRM, &sa, NULL);
    ualarm(100000, 0);
    REFUSED(recv(sv[0], b, sizeof b, 0), EINTR);
    printf("unixsock: a waiting recv ended by SIGALRM: handled %d\n", alarms);
    close(sv[0]);
    close(sv[1]);
}

static void stream_server(void) {
    const char *path = "/tmp/unixsock.srv";
    unlink(path);
    struct sockaddr_un a, got;
    socklen_t al = name_of(&a, path);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(s >= 0, "socket");
    struct sockaddr_un none;
    socklen_t nl = name_of(&none, "/tmp/unixsock.none");
    REFUSED(connect(s, (struct sockaddr *)&none, nl), ENOENT);
    REFUSED(listen(s, 5), EINVAL); /* unbound */
    close(s);
    s = socket(AF_UNIX, SOCK_STREAM, 0);
    CHECK(bind(s, (struct sockaddr *)&a, al) == 0, "bind");
    /* Linux makes the file first: the name is taken. */
    REFUSED(bind(s, (struct sockaddr *)&a, al), EADDRINUSE);
    struct sockaddr_un other;
    socklen_t ol = name_of(&other, "/tmp/unixsock.other");
    REFUSED(bind(s, (struct sockaddr *)&other, ol), EINVAL);
    REFUSED(unlink("/tmp/unixsock.other"), ENOENT);
    int s2 = socket(AF_UNIX, SOCK_STREAM, 0);
    REFUSED(bind(s2, (struct sockaddr *)&a, al), EADDRINUSE);
    /* Bound, not listening: refused. */
    REFUSED(connect(s2, (struct sockaddr *)&a, al), ECONNREFUSED);
    struct stat st;
    CHECK(stat(path, &st) == 0, "stat");
    printf("unixsock: the name is a socket file %d\n", S_ISSOCK(st.st_mode));
    REFUSED(open(path, O_RDONLY), ENXIO);
    CHECK(listen(s, 5) == 0, "listen");
    int acc = 0;
    socklen_t l = sizeof acc;
    getsockopt(s, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l);
    socklen_t gl = sizeof got;
    getsockname(s, (struct sockaddr *)&got, &gl);
    printf("unixsock: listening, SO_ACCEPTCONN %d, name '%s' length %u\n", acc, got.sun_path, gl);
    /* (musl's accept4 falls back to accept on EINVAL: the call itself.) */
    REFUSED(syscall(SYS_accept4, s, NULL, NULL, SOCK_NONBLOCK | 0x1000), EINVAL);
    int sfl = fcntl(s, F_GETFL);
    fcntl(s, F_SETFL, sfl | O_NONBLOCK);
    REFUSED(accept(s, NULL, NULL), EAGAIN);
    fcntl(s, F_SETFL, sfl);
    pid_t child = fork();
    if (child == 0) {
        int c = socket(AF_UNIX, SOCK_STREAM, 0);
        if (connect(c, (struct sockaddr *)&a, al) != 0)
            _exit(10);
        char b[32];
        for (int i = 0; i < 100; i++) {
            if (write(c, "ping", 4) != 4)
                _exit(11);
            if (read(c, b, sizeof b) != 4 || memcmp(b, "pong", 4) != 0)
                _exit(12);
        }
        /* A read that waits for the server. */
        ssize_t n = read(c, b, sizeof b);
        _exit(n == 3 && memcmp(b, "end", 3) == 0 ? 0 : 13);
    }
    struct sockaddr_un peer;
    socklen_t pl = sizeof peer;
    int c = accept(s, (struct sockaddr *)&peer, &pl);
    CHECK(c >= 0, "accept");
    printf("unixsock: accepted an unnamed peer: address length %u\n", pl);
    struct ucred cr;
    l = sizeof cr;
    getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cr, &l);
    printf("unixsock: SO_PEERCRED of the accepted is the child %d\n", cr.pid == child);
    gl = sizeof got;
    getsockname(c, (struct sockaddr *)&got, &gl);
    printf("unixsock: the accepted socket's name '%s'\n", got.sun_path);
    char b[32];
    int ok = 1;
    for (int i = 0; i < 100; i++) {
        if (read(c, b, sizeof b) != 4 || write(c, "pong", 4) != 4)
            ok = 0;
    }
    printf("unixsock: 100 round trips with another process %d\n", ok);
    usleep(50000);
    write(c, "end", 3);
    int status;
    waitpid(child, &status, 0);
    printf("unixsock: the client exited %d\n", WEXITSTATUS(status));
    ssize_t n = read(c, b, sizeof b);
    printf("unixsock: after the client's end the server reads %zd\n", n);
    close(c);
    close(s);
    close(s2);
    /* The name stays until unlinked; then nothing answers there. */
    s2 = socket(AF_UNIX, SOCK_STREAM, 0);
    REFUSED(connect(s2, (struct sockaddr *)&a, al), ECONNREFUSED);
    unlink(path);
    REFUSED(connect(s2, (struct sockaddr *)&a, al), ENOENT);
    close(s2);
}

static void datagrams(void) {
    const char *rp = "/tmp/unixsock.dgr";
    unlink(rp);
    struct sockaddr_un ra, sa, from;
    socklen_t rl = name_of(&ra, rp);
    socklen_t sl = abstract_of(&sa, "unixsock-sender");
    int r = socket(AF_UNIX, SOCK_DGRAM, 0);
    int s = socket(AF_UNIX, SOCK_DGRAM, 0);
    CHECK(bind(r, (struct sockaddr *)&ra, rl) == 0, "bind r");
    CHECK(bind(s, (struct sockaddr *)&sa, sl) == 0, "bind s");
    int s3 = socket(AF_UNIX, SOCK_DGRAM, 0);
    REFUSED(bind(s3, (struct sockaddr *)&sa, sl), EADDRINUSE);
    REFUSED(send(s, "x", 1, 0), ENOTCONN);
    CHECK(sendto(s, "hello", 5, 0, (struct sockaddr *)&ra, rl) == 5, "sendto");
    CHECK(sendto(s, "world!", 6, 0, (struct sockaddr *)&ra, rl) == 6, "sendto");
    char b[64];
    socklen_t fl = sizeof from;
    ssize_t n = recvfrom(r, b, sizeof b, 0, (struct sockaddr *)&from, &fl);
    printf("unixsock: datagram %zd '%.*s' from abstract '%s' length %u\n", n, (int)n, b,
           from.sun_path + 1, fl);
    n = recv(r, b, 2, MSG_TRUNC);
    printf("unixsock: MSG_TRUNC gives the whole length %zd\n", n);
    /* recvmsg into two iovecs, the message truncated. */
    sendto(s, "abcdefgh", 8, 0, (struct sockaddr *)&ra, rl);
    char x[3], y[3];
    struct iovec iov[2] = {{x, 3}, {y, 3}};
    struct msghdr m = {.msg_name = &from, .msg_namelen = sizeof from, .msg_iov = iov,
                       .msg_iovlen = 2};
    n = recvmsg(r, &m, 0);
    printf("unixsock: recvmsg %zd '%.3s%.3s' flags MSG_TRUNC %d namelen %u\n", n, x, y,
           (m.msg_flags & MSG_TRUNC) != 0, m.msg_namelen);
    /* sendmsg of three pieces: one message. */
    struct iovec out[3] = {{"ab", 2}, {"cd", 2}, {"e", 1}};
    struct msghdr om = {.msg_name = &ra, .msg_namelen = rl, .msg_iov = out, .msg_iovlen = 3};
    n = sendmsg(s, &om, 0);
    ssize_t k = recv(r, b, sizeof b, 0);
    printf("unixsock: sendmsg %zd, received %zd '%.*s'\n", n, k, (int)k, b);
    /* Connected: send without an address; others may not send to it. */
    CHECK(connect(s, (struct sockaddr *)&ra, rl) == 0, "connect dgram");
    CHECK(send(s, "via", 3, 0) == 3, "send connected");
    k = recv(r, b, sizeof b, 0);
    CHECK(k == 3, "recv connected");
    CHECK(connect(r, (struct sockaddr *)&sa, sl) == 0, "connect back");
    REFUSED(sendto(s3, "no", 2, 0, (struct sockaddr *)&ra, rl), EPERM);
    fcntl(r, F_SETFL, O_NONBLOCK);
    REFUSED(recv(r, b, sizeof b, 0), EAGAIN);
    /* The queue fills: EAGAIN. */
    int sent = 0;
    while (send(s, "q", 1, MSG_DONTWAIT) == 1 && sent < 1000)
        sent++;
    printf("unixsock: a datagram queue holds %d, then EAGAIN %d\n", sent, errno == EAGAIN);
    struct pollfd p = {.fd = r, .events = POLLIN};
    poll(&p, 1, 0);
    printf("unixsock: datagram reader polls %#x\n", p.revents);
    close(r);
    REFUSED(send(s, "x", 1, 0), ECONNREFUSED);
    unlink(rp);
    REFUSED(sendto(s3, "x", 1, 0, (struct sockaddr *)&ra, rl), ENOENT);
    close(s);
    close(s3);
    /* Stream and datagram do not meet. */
    int st = socket(AF_UNIX, SOCK_STREAM, 0);
    int dg = socket(AF_UNIX, SOCK_DGRAM, 0);
    struct sockaddr_un aa;
    socklen_t al = abstract_of(&aa, "unixsock-stream");
    bind(st, (struct sockaddr *)&aa, al);
    listen(st, 1);
    /* Abstract names are per type: a datagram socket finds none. */
    REFUSED(connect(dg, (struct sockaddr *)&aa, al), ECONNREFUSED);
    REFUSED(listen(dg, 1), EOPNOTSUPP);
    /* Autobind: a name of five hex digits after a NUL. */
    struct sockaddr_un fam = {.sun_family = AF_UNIX};
    CHECK(bind(dg, (struct sockaddr *)&fam, sizeof(sa_family_t)) == 0, "autobind");
    socklen_t gl = sizeof aa;
    getsockname(dg, (struct sockaddr *)&aa, &gl);
    printf("unixsock: autobind name length %u, first byte %d\n", gl, aa.sun_path[0]);
    close(st);
    close(dg);
}

/* An address no program may use (a pointer the compiler cannot see through). */
static void *volatile bad_ptr = (void *)1;

/* Sends descriptors `fds` (n of them) with one byte. */
static ssize_t send_fds(int s, const int *fds, int n) {
    char byte = 'F';
    struct iovec iov = {&byte, 1};
    char ctl[CMSG_SPACE(sizeof(int) * 4)];
    memset(ctl, 0, sizeof ctl);
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                       .msg_controllen = CMSG_SPACE(sizeof(int) * n)};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * n);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
    return sendmsg(s, &m, 0);
}

/* Receives one byte and up to 4 descriptors into `fds` (room for
 * `room` of them in the control buffer) → how many came; *flags gets
 * msg_flags. */
static int recv_fds(int s, int *fds, int room, int *flags) {
    char byte;
    struct iovec iov = {&byte, 1};
    char ctl[CMSG_SPACE(sizeof(int) * 4)];
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                       .msg_controllen = room ? CMSG_SPACE(sizeof(int) * room) : 0};
    if (recvmsg(s, &m, 0) != 1)
        return -1;
    *flags = m.msg_flags;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    if (!c || c->cmsg_type != SCM_RIGHTS)
        return 0;
    int n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    memcpy(fds, CMSG_DATA(c), sizeof(int) * n);
    return n;
}

static void passing(void) {
    int sv[2], pp[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "pair");
    CHECK(pipe(pp) == 0, "pipe");
    /* The child gets the pipe's write end over the socket and writes. */
    pid_t child = fork();
    if (child == 0) {
        close(pp[1]);
        int got[4], fl = 0;
        int n = recv_fds(sv[1], got, 4, &fl);
        if (n != 1)
            _exit(20);
        _exit(write(got[0], "via fd", 6) == 6 ? 0 : 21);
    }
    CHECK(send_fds(sv[0], &pp[1], 1) == 1, "sendmsg SCM_RIGHTS");
    close(pp[1]);
    char b[16];
    ssize_t n = read(pp[0], b, sizeof b);
    int status;
    waitpid(child, &status, 0);
    ssize_t end = read(pp[0], b, sizeof b);
    printf("unixsock: a pipe passed to a child: read %zd '%.6s', exit %d, then end %zd\n", n, b,
           WEXITSTATUS(status), end);
    close(pp[0]);
    /* Two at once; a control buffer with room for one: MSG_CTRUNC. */
    int two[2];
    CHECK(pipe(two) == 0, "pipe");
    CHECK(send_fds(sv[0], two, 2) == 1, "send two");
    int got[4], fl = 0;
    int k = recv_fds(sv[1], got, 2, &fl);
    printf("unixsock: two descriptors came: %d, new ones %d, MSG_CTRUNC %d\n", k,
           k == 2 && got[0] != two[0] && got[1] != two[1], (fl & MSG_CTRUNC) != 0);
    /* The passed write end is the same pipe. */
    write(got[1], "x", 1);
    printf("unixsock: through the passed end: %zd\n", read(two[0], b, sizeof b));
    close(got[0]);
    close(got[1]);
    int three_fds[3] = {two[0], two[1], two[0]};
    CHECK(send_fds(sv[0], three_fds, 3) == 1, "send three");
    k = recv_fds(sv[1], got, 1, &fl);
    /* CMSG_SPACE of one int holds two (its padding). */
    printf("unixsock: room for one of three: %d came, MSG_CTRUNC %d\n", k,
           (fl & MSG_CTRUNC) != 0);
    for (int i = 0; i < k; i++)
        close(got[i]);
    CHECK(send_fds(sv[0], two, 1) == 1, "send one");
    k = recv_fds(sv[1], got, 0, &fl);
    printf("unixsock: no control buffer: %d came, MSG_CTRUNC %d\n", k, (fl & MSG_CTRUNC) != 0);
    /* In flight when the socket goes: the reference goes with it, and the
     * pipe's reader sees the end. */
    close(two[1]);
    int three[2];
    pipe(three);
    send_fds(sv[0], &three[1], 1);
    close(three[1]);
    close(sv[1]);
    printf("unixsock: a write end lost in flight: the reader reads %zd\n", read(three[0], b, 1));
    close(three[0]);
    close(two[0]);
    close(sv[0]);
    /* A datagram's descriptors; a bad descriptor is EBADF. */
    CHECK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0, "dgram pair");
    int devnull = open("/dev/null", O_WRONLY);
    CHECK(send_fds(sv[0], &devnull, 1) == 1, "dgram fd");
    k = recv_fds(sv[1], got, 4, &fl);
    struct stat a1, a2;
    fstat(devnull, &a1);
    fstat(got[0], &a2);
    printf("unixsock: a datagram's descriptor: %d, the same file %d\n", k,
           a1.st_rdev == a2.st_rdev && S_ISCHR(a2.st_mode));
    int bad = 999;
    REFUSED(send_fds(sv[0], &bad, 1), EBADF);
    close(got[0]);
    close(devnull);
    close(sv[0]);
    close(sv[1]);
}

static void bad_inputs(void) {
    int f = open("/dev/null", O_RDONLY);
    struct sockaddr_un a;
    socklen_t al = name_of(&a, "/tmp/x");
    char b[8];
    int v = 1;
    socklen_t l = sizeof v;
    REFUSED(socket(AF_INET + 1000, SOCK_STREAM, 0), EAFNOSUPPORT);
    REFUSED(socket(AF_UNIX, 75, 0), EINVAL);
    REFUSED(socket(AF_UNIX, SOCK_STREAM, 7), EPROTONOSUPPORT);
    REFUSED(socket(AF_UNIX, 4, 0), ESOCKTNOSUPPORT);
    REFUSED(socketpair(AF_UNIX, SOCK_STREAM, 0, (int *)bad_ptr), EFAULT);
    REFUSED(accept(f, NULL, NULL), ENOTSOCK);
    REFUSED(bind(f, (struct sockaddr *)&a, al), ENOTSOCK);
    REFUSED(connect(f, (struct sockaddr *)&a, al), ENOTSOCK);
    REFUSED(listen(f, 1), ENOTSOCK);
    REFUSED(send(f, b, 1, 0), ENOTSOCK);
    REFUSED(recv(f, b, 1, 0), ENOTSOCK);
    REFUSED(shutdown(f, SHUT_RD), ENOTSOCK);
    REFUSED(getsockname(f, (struct sockaddr *)&a, &al), ENOTSOCK);
    REFUSED(getsockopt(f, SOL_SOCKET, SO_TYPE, &v, &l), ENOTSOCK);
    REFUSED(setsockopt(f, SOL_SOCKET, SO_REUSEADDR, &v, sizeof v), ENOTSOCK);
    close(f);
    REFUSED(accept(f, NULL, NULL), EBADF);
    REFUSED(getpeername(f, (struct sockaddr *)&a, &al), EBADF);
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    REFUSED(bind(s, (struct sockaddr *)bad_ptr, al), EFAULT);
    REFUSED(bind(s, (struct sockaddr *)&a, 1), EINVAL);
    REFUSED(bind(s, (struct sockaddr *)&a, -1), EINVAL);
    REFUSED(bind(s, (struct sockaddr *)&a, sizeof a + 1), EINVAL);
    REFUSED(connect(s, (struct sockaddr *)&a, 2), EINVAL);
    a.sun_family = AF_INET;
    REFUSED(connect(s, (struct sockaddr *)&a, al), EINVAL);
    REFUSED(getpeername(s, (struct sockaddr *)&a, &al), ENOTCONN);
    REFUSED(getsockname(s, (struct sockaddr *)&a, (socklen_t *)bad_ptr), EFAULT);
    REFUSED(send(s, b, 1, 0), ENOTCONN);
    REFUSED(recv(s, b, 1, 0), EINVAL);
    CHECK(shutdown(s, SHUT_RDWR) == 0, "shutdown of an unconnected socket");
    REFUSED(getsockopt(s, SOL_SOCKET, 9999, &v, &l), ENOPROTOOPT);
    REFUSED(getsockopt(s, SOL_SOCKET, SO_TYPE, &v, (socklen_t *)bad_ptr), EFAULT);
    REFUSED(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &v, 2), EINVAL);
    REFUSED(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, NULL, sizeof v), EFAULT);
    REFUSED(setsockopt(s, SOL_SOCKET, SO_TYPE, &v, sizeof v), ENOPROTOOPT);
    CHECK(setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &v, sizeof v) == 0, "SO_REUSEADDR");
    v = 0;
    l = sizeof v;
    getsockopt(s, SOL_SOCKET, SO_REUSEADDR, &v, &l);
    int rb = 10000, got = 0;
    setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rb, sizeof rb);
    l = sizeof got;
    getsockopt(s, SOL_SOCKET, SO_RCVBUF, &got, &l);
    int err = -1;
    l = sizeof err;
    getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &l);
    printf("unixsock: SO_REUSEADDR %d, SO_RCVBUF 10000 reads %d, SO_ERROR %d\n", v, got, err);
    struct ucred cr;
    l = sizeof cr;
    getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &l);
    printf("unixsock: unconnected SO_PEERCRED pid %d uid %d\n", cr.pid, (int)cr.uid);
    struct pollfd p = {.fd = s, .events = POLLIN | POLLOUT};
    poll(&p, 1, 0);
    printf("unixsock: an unconnected stream socket polls %#x\n", p.revents);
    close(s);
    /* musl asks nscd (a socket at /var/run/nscd/socket) for a group that
     * is not in /etc/group: with none there the lookup says "none". */
    errno = 0;
    struct group *g = getgrgid(54321);
    printf("unixsock: getgrgid of an unknown group: %s, errno %d\n", g ? "found" : "none", errno);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0);
    pairs();
    stream_server();
    datagrams();
    passing();
    bad_inputs();
    if (failures == 0)
        printf("unixsock: all ok\n");
    return failures != 0;
}
