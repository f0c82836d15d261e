/* Dynamic linking: a program the dynamic loader (musl's ld.so, started by
 * the keeper from PT_INTERP) links with three shared libraries (A needs B;
 * C has thread-local storage), then a plugin loaded with dlopen. Prints
 * exact values and "dyntest: ok". */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

int a_value(int x);
int c_tls(void);

int main(int argc, char **argv) {
    int fails = 0;
    int a = a_value(3);
    int c1 = c_tls(), c2 = c_tls();
    printf("dyntest: a_value(3) = %d, c_tls = %d %d\n", a, c1, c2);
    fails += a != 6 + 5 + 3 || c1 != 41 || c2 != 42;
    unsigned long base = getauxval(AT_BASE), entry = getauxval(AT_ENTRY);
    printf("dyntest: AT_BASE set %d, AT_ENTRY set %d\n", base != 0, entry != 0);
    fails += base == 0 || entry == 0;
    void *h = dlopen("libstet-plugin.so", RTLD_NOW);
    if (!h) {
        printf("dyntest: dlopen failed: %s\n", dlerror());
        return 1;
    }
    int (*answer)(void) = (int (*)(void))dlsym(h, "plugin_answer");
    printf("dyntest: plugin_answer() = %d\n", answer ? answer() : -1);
    fails += !answer || answer() != 42;
    printf("dyntest: dlsym of a missing symbol: %s\n", dlsym(h, "nonesuch") ? "found" : "null");
    fails += dlclose(h) != 0;
    printf("dyntest: argv[0] %s, %d args\n", argv[0], argc);
    printf(fails ? "dyntest: FAILED %d\n" : "dyntest: ok\n", fails);
    return fails != 0;
}
