/* Shared library B: a function A needs (a dependency of a dependency). */
int b_twice(int x) { return 2 * x; }
