/* ut_mem: the one allocation indirection (xmalloc & co.) and the generic growable array macros. */
#ifndef UT_MEM_H
#define UT_MEM_H
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void *ut_malloc(size_t n);
void *ut_calloc(size_t n, size_t size);
void *ut_realloc(void *p, size_t n);
char *ut_strdup(const char *s);
char *ut_strndup(const char *s, size_t n);
#define ut_free free

/* A growable array: struct { T *items; size_t len, cap; } */
#define UT_VEC(T) struct { T *items; size_t len, cap; }
#define ut_vec_reserve(v, n)                                                          \
    do {                                                                              \
        if ((v)->len + (n) > (v)->cap) {                                              \
            size_t nc_ = (v)->cap ? (v)->cap * 2 : 8;                                 \
            while (nc_ < (v)->len + (n)) nc_ *= 2;                                    \
            (v)->items = ut_realloc((v)->items, nc_ * sizeof(*(v)->items));           \
            (v)->cap = nc_;                                                           \
        }                                                                             \
    } while (0)
#define ut_vec_push(v, x)                                                             \
    do {                                                                              \
        ut_vec_reserve((v), 1);                                                       \
        (v)->items[(v)->len++] = (x);                                                 \
    } while (0)
#define ut_vec_free(v)                                                                \
    do {                                                                              \
        ut_free((v)->items);                                                          \
        (v)->items = NULL;                                                            \
        (v)->len = (v)->cap = 0;                                                      \
    } while (0)

#endif
