/* A plugin loaded with dlopen: it uses library B too, already loaded. */
int b_twice(int x);
int plugin_answer(void) { return b_twice(21); }
