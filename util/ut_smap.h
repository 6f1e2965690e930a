/* ut_smap: a map from byte strings to a pointer and a number (open addressing, a word-at-a-time hash kept in each slot, grown at half full): the
 * in-memory tables of names the analyzer keeps per file or per run. Keys are copied; values are the caller's. */
#ifndef UT_SMAP_H
#define UT_SMAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char *key; /* NUL-terminated copy; NULL: an empty slot */
    size_t n;
    uint64_t h; /* the key's hash */
    void *val;
    int64_t num;
} ut_smap_slot;

typedef struct {
    ut_smap_slot *s;
    size_t cap, len;
} ut_smap;

/* the slot of key k[0..n), or NULL */
ut_smap_slot *ut_smap_find(const ut_smap *m, const char *k, size_t n);
/* the slot of key k[0..n), added (val NULL, num 0) if absent; *added says which when not NULL. A slot pointer is
 * valid until the next put. */
ut_smap_slot *ut_smap_put(ut_smap *m, const char *k, size_t n, bool *added);
/* frees the keys and the table; free_val (may be NULL) is called on each non-NULL val */
void ut_smap_free(ut_smap *m, void (*free_val)(void *));
#endif
