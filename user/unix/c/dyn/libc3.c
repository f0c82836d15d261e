/* Shared library C: thread-local storage in a shared object (the
 * initial-exec/global-dynamic TLS the loader must set up). */
static __thread int tls_counter = 40;
int c_tls(void) { return ++tls_counter; }
