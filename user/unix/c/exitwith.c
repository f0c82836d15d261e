/* Exits with the status its first argument names, after saying who it is:
 * what forktest execs in a child. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int code = argc > 1 ? atoi(argv[1]) : 0;
    printf("exitwith: argc %d, parent is the forker: %s, exiting %d\n", argc,
           argc > 2 && getppid() == atoi(argv[2]) ? "yes" : "no", code);
    if (argc > 3) {
        size_t bytes = 0;
        for (int i = 3; i < argc; i++)
            bytes += strlen(argv[i]);
        printf("exitwith: %d arguments, %zu bytes past the third\n", argc, bytes);
    }
    return code;
}
