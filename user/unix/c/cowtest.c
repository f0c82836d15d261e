/* Copy-on-write fork, judged by the system's free memory (sysinfo, in
 * pages): forking a process with 4 MiB of its own memory copies none of
 * it; the child's writes copy exactly the pages written; when the child
 * ends every page comes back; a parent left as a page's only holder
 * writes it without a copy; a grandchild's writes are its own. Every
 * line is checked by tests/system/unix_cow.toml. */
#include <errno.h>
#include <stdio.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096
#define PAGES 1024
static char big[PAGES * PAGE] __attribute__((aligned(PAGE)));

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            printf("cowtest: FAILED line %d: %s: ", __LINE__, #cond);          \
            printf(__VA_ARGS__);                                               \
            printf(" (errno %d)\n", errno);                                    \
            failures++;                                                        \
        }                                                                      \
    } while (0)

/* Free pages of the whole system, once other domains have settled (an
 * ended child's keeper gives its objects back just after its parent's
 * wait returns). */
static long free_pages(void)
{
    struct timespec t = {0, 50 * 1000 * 1000};
    nanosleep(&t, NULL);
    struct sysinfo si;
    sysinfo(&si);
    return (long)si.freeram;
}

static int all(char v, int from, int n)
{
    for (int i = from; i < from + n; i++)
        if (big[(long)i * PAGE] != v || big[(long)i * PAGE + PAGE - 1] != v)
            return 0;
    return 1;
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    memset(big, 1, sizeof big);
    int p[2];
    CHECK(pipe(p) == 0, "pipe");
    /* A first fork warms up what the system makes once (a few pages the
     * first time a process forks); from then on every page counts. */
    pid_t w = fork();
    if (w == 0)
        _exit(0);
    waitpid(w, NULL, 0);
    /* Printing reaches deeper into the stack than the rest: once now, so
     * a page it first touches is not counted below. */
    printf("cowtest: 1024 own pages, forking\n");
    long before = free_pages();

    pid_t c = fork();
    if (c == 0) {
        long forked = free_pages();
        long r[2];
        r[0] = before - forked;
        int saw = all(1, 0, PAGES);
        memset(big, 2, PAGES / 2 * PAGE);
        r[1] = forked - free_pages();
        write(p[1], r, sizeof r);
        _exit(saw && all(2, 0, PAGES / 2) && all(1, PAGES / 2, PAGES / 2) ? 0 : 1);
    }
    long r[2] = {-1, -1};
    CHECK(read(p[0], r, sizeof r) == sizeof r, "read");
    int st;
    CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0, "child %#x", st);
    /* The child's keeper and process cost pages, but not a copy of the
     * parent's 1024. */
    CHECK(all(1, 0, PAGES), "the parent's memory is its own");
    long after = free_pages();
    CHECK(r[0] > 0 && r[0] < PAGES / 4, "fork took %ld pages", r[0]);
    printf("cowtest: forking a process of %d own pages took fewer than %d: %s\n", PAGES,
           PAGES / 4, r[0] > 0 && r[0] < PAGES / 4 ? "yes" : "no");
    printf("cowtest: the child's writes to %d pages copied %ld\n", PAGES / 2, r[1]);
    printf("cowtest: after the child, pages not given back: %ld\n", before - after);


    /* Every page is the parent's alone now: writing copies nothing. */
    memset(big, 3, sizeof big);
    printf("cowtest: the parent's writes as the only holder copied %ld\n",
           after - free_pages());

    /* A grandchild: three holders of each page. The child first writes
     * 100 pages (its own copies), which the grandchild shares in turn. */
    c = fork();
    if (c == 0) {
        memset(big + 100 * PAGE, 4, 100 * PAGE);
        pid_t g = fork();
        if (g == 0) {
            big[5 * PAGE] = 7;
            big[150 * PAGE] = 9;
            _exit(big[5 * PAGE] == 7 && big[6 * PAGE] == 3 && big[150 * PAGE] == 9 &&
                          all(4, 100, 50)
                      ? 0
                      : 1);
        }
        big[6 * PAGE] = 8;
        int gs;
        waitpid(g, &gs, 0);
        _exit(WIFEXITED(gs) && WEXITSTATUS(gs) == 0 && big[5 * PAGE] == 3 &&
                      big[6 * PAGE] == 8 && all(4, 100, 100)
                  ? 0
                  : 1);
    }
    CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0, "grandchild %#x", st);
    CHECK(all(3, 0, PAGES), "parent unchanged");
    printf("cowtest: child and grandchild wrote their own copies; pages not given back: %ld\n",
           after - free_pages());
    /* A child that shrinks below the copy threshold while its pages are
     * still shared, then forks: its child must be counted as a holder of
     * them, or its exit (and then the child's) frees pages the parent
     * still holds. */
    c = fork();
    if (c == 0) {
        munmap(big + 40 * PAGE, (PAGES - 40) * PAGE);
        pid_t g = fork();
        if (g == 0)
            _exit(all(3, 0, 40) ? 0 : 1);
        int gs;
        _exit(waitpid(g, &gs, 0) == g && WIFEXITED(gs) && WEXITSTATUS(gs) == 0 && all(3, 0, 40)
                  ? 0
                  : 1);
    }
    CHECK(waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0, "shrunk child %#x", st);
    CHECK(all(3, 0, PAGES), "parent unchanged after the shrunk child");
    printf("cowtest: a shrunk child's child shared its pages; the parent's are intact: %s\n",
           all(3, 0, PAGES) ? "yes" : "no");
    if (failures == 0)
        printf("cowtest: all ok\n");
    return failures != 0;
}
