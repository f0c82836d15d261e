/* Shared library A of the dynamic-linking test: calls into B, keeps a
 * counter in its data and a table in its bss. */
int b_twice(int x);
static int calls = 5;
static int table[1024];
int a_value(int x) {
    table[x & 1023] += x;
    return b_twice(x) + calls++ + table[x & 1023];
}
