/* The terminal through a pseudo input (the test harness types at the
 * console): canonical lines with erase, raw mode byte by byte without echo,
 * end of file from ^D, the window size, the foreground group, and ^C as
 * SIGINT to a blocked reader. Every line is checked by
 * tests/system/unix_tty.toml. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

static volatile sig_atomic_t got_int;
static void on_int(int sig) { (void)sig; got_int++; }
static void on_alarm(int sig) { (void)sig; }

int main(void)
{
    char buf[128];
    setvbuf(stdout, NULL, _IONBF, 0);
    struct winsize ws;
    if (ioctl(0, TIOCGWINSZ, &ws) == 0)
        printf("tty: window %dx%d, foreground group %d\n", ws.ws_col, ws.ws_row, (int)tcgetpgrp(0));

    printf("tty: type a line\n");
    ssize_t n = read(0, buf, sizeof buf);
    printf("tty: canonical read %zd bytes: [%.*s]\n", n, (int)(n > 0 ? n - 1 : 0), buf);

    struct termios t, raw;
    tcgetattr(0, &t);
    raw = t;
    raw.c_lflag &= ~(ICANON | ECHO);
    raw.c_cc[VMIN] = 1;
    tcsetattr(0, TCSANOW, &raw);
    printf("tty: raw mode, type three keys\n");
    char keys[3];
    for (int i = 0; i < 3; i++)
        if (read(0, &keys[i], 1) != 1)
            keys[i] = '?';
    printf("tty: raw keys %c %c %c\n", keys[0], keys[1], keys[2]);
    tcsetattr(0, TCSANOW, &t);

    printf("tty: press ^D\n");
    n = read(0, buf, sizeof buf);
    printf("tty: end of file: read gave %zd\n", n);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_int;
    sigaction(SIGINT, &sa, NULL);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    printf("tty: press ^C\n");
    /* The ^C may come while the read waits (then it ends with EINTR), or
     * before the loop tests got_int (then the handler has run and the loop
     * ends), or between that test and the read's system call: then, as on
     * Linux, the handler runs before the read starts, and the read would
     * wait for good. The timer's SIGALRM ends such a read a second later. */
    struct itimerval every = {{1, 0}, {1, 0}};
    setitimer(ITIMER_REAL, &every, NULL);
    int eintr = 0;
    while (!got_int) {
        n = read(0, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            eintr = 1;
    }
    printf("tty: ^C: SIGINT %d, %s\n", got_int, eintr || got_int ? "the reader went on" : "stuck");
    return 0;
}
