/* unit_files: reading a fixture file whole, for the unit tests that run over fixtures. */
#ifndef UNIT_FILES_H
#define UNIT_FILES_H
#include <stdio.h>
#include <stdlib.h>

/* The file's bytes, NUL-terminated, *n their count; NULL when it cannot be opened. The caller frees. */
static inline char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)sz + 1);
    *n = fread(b, 1, (size_t)sz, f);
    b[*n] = 0;
    fclose(f);
    return b;
}
#endif
