/* ut_mem: allocation that never returns NULL (out of memory aborts with a message). */
#include "util/ut_mem.h"
#include "util/ut_thp.h"
#include <stdio.h>

static void oom(size_t n) {
    fprintf(stderr, "xpuify: fatal: out of memory (%zu bytes)\n", n);
    abort();
}

void *ut_malloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    ut_thp_note(p, n);
    return p;
}

void *ut_calloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom(n * size);
    ut_thp_note(p, n * size);
    return p;
}

void *ut_realloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    ut_thp_note(q, n);
    return q;
}

char *ut_strndup(const char *s, size_t n) {
    char *d = ut_malloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *ut_strdup(const char *s) { return s ? ut_strndup(s, strlen(s)) : NULL; }
